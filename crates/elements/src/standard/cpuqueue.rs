//! # CPUQueue
//!
//! Stores packets in FIFO queues, one per thread.
//!
//! ## Synopsis
//! `CPUQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input, one pull output.
//!
//! ## Description
//! Click's per-CPU queue, per router thread here (`-j N`): a packet pushed
//! on thread K joins thread K's queue, so pushing threads never share a
//! queue; a pull takes from the queues in turn, starting after the one
//! that gave the last packet. Each queue holds up to CAPACITY packets;
//! arrivals that find their queue full are dropped and counted, silently.
//! The queues are bounded lock-free rings, so the router lets several
//! threads reach a CPUQueue. Like Click's, it raises no notifier signals.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length of each thread's queue, at most
//!   1048576. Default 128.
//!
//! ## Handlers
//! - `capacity` (read): the capacity of each queue.
//! - `drops` (read): packets dropped because their queue was full.
//!
//! ## Example
//! ```click
//! a :: InfiniteSource -> q :: CPUQueue(256) -> Unqueue -> Discard;
//! b :: InfiniteSource -> q;
//! StaticThreadSched(a 0, b 1);
//! ```

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use crossbeam_queue::ArrayQueue;
use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SharedElement};

/// The largest CAPACITY: each thread's ring is reserved whole.
const MAX_CAPACITY: usize = 1 << 20;

pub struct CPUQueue {
    queues: Vec<ArrayQueue<Packet>>,
    capacity: usize,
    /// The queue a pull looks at first.
    next: AtomicUsize,
    drops: AtomicU64,
}

impl Default for CPUQueue {
    fn default() -> Self {
        CPUQueue {
            queues: Vec::new(),
            capacity: 128,
            next: AtomicUsize::new(0),
            drops: AtomicU64::new(0),
        }
    }
}

impl CPUQueue {
    fn enqueue(&self, batch: Batch, ctx: &Ctx) {
        let q = self.queues.get(ctx.thread_index()).or(self.queues.first());
        for p in batch {
            let kept = self.capacity > 0 && q.is_some_and(|q| q.push(p).is_ok());
            if !kept {
                self.drops.fetch_add(1, Relaxed);
            }
        }
    }

    fn dequeue(&self, max: usize) -> Option<Batch> {
        let n = self.queues.len();
        let mut batch = Batch::new();
        let mut at = self.next.load(Relaxed);
        let mut empty_in_a_row = 0;
        while batch.len() < max.min(rclick_core::batch::BATCH_CAPACITY) && empty_in_a_row < n {
            let q = &self.queues[at % n];
            at = (at + 1) % n;
            match q.pop() {
                Some(p) => {
                    batch.push(p);
                    empty_in_a_row = 0;
                }
                None => empty_in_a_row += 1,
            }
        }
        self.next.store(at, Relaxed);
        (!batch.is_empty()).then_some(batch)
    }
}

const HANDLERS: &[Handler<CPUQueue>] = &[
    Handler::read("capacity", |e, _| e.capacity.to_string()),
    Handler::read("drops", |e, _| e.drops.load(Relaxed).to_string()),
];

rclick_core::element_class!(CPUQueue);

impl SharedElement for CPUQueue {
    fn push(&self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.enqueue(batch, ctx);
    }

    fn pull(&self, _port: usize, max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max)
    }
}

impl Element for CPUQueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "h/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity = args.read_p_or("CAPACITY", 128usize);
        args.complete()?;
        if capacity > MAX_CAPACITY {
            return Err(format!(
                "CAPACITY {capacity} is too large (at most {MAX_CAPACITY} per thread)"
            )
            .into());
        }
        self.capacity = capacity;
        self.queues = (0..ctx.nthreads())
            .map(|_| ArrayQueue::new(capacity.max(1)))
            .collect();
        Ok(())
    }

    fn shared(&self) -> Option<&dyn SharedElement> {
        Some(self)
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.enqueue(batch, ctx);
    }

    fn pull(&mut self, _port: usize, max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max)
    }
}
