//! # MSQueue
//!
//! Stores packets in a FIFO queue that many threads push to and one pulls
//! from.
//!
//! ## Synopsis
//! `MSQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input, one pull output.
//!
//! ## Description
//! Click's multiple-producer, single-consumer queue (from SMP Click):
//! packets pushed from any thread are appended, the puller takes them from
//! the front, and arrivals that find CAPACITY packets queued are dropped
//! and counted, silently. The queue is a bounded lock-free ring, so the
//! router lets several threads reach it (`-j N`). Like Click's, it raises
//! no notifier signals: a puller such as Unqueue polls it.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length, at most 4194304 (the ring is
//!   reserved whole). Default 1000.
//!
//! ## Handlers
//! - `length` (read): current number of packets.
//! - `capacity` (read): the capacity.
//! - `drops` (read): packets dropped because the queue was full.
//!
//! ## Example
//! ```click
//! a :: InfiniteSource -> q :: MSQueue(256) -> Unqueue -> Discard;
//! b :: InfiniteSource -> q;
//! StaticThreadSched(a 0, b 1);
//! ```

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use crossbeam_queue::ArrayQueue;
use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SharedElement};

/// The largest CAPACITY: the ring (16 bytes a slot) is reserved whole.
const MAX_CAPACITY: usize = 1 << 22;

pub struct MSQueue {
    ring: ArrayQueue<Packet>,
    capacity: usize,
    drops: AtomicU64,
}

impl Default for MSQueue {
    fn default() -> Self {
        MSQueue {
            ring: ArrayQueue::new(1000),
            capacity: 1000,
            drops: AtomicU64::new(0),
        }
    }
}

impl MSQueue {
    fn enqueue(&self, batch: Batch) {
        for p in batch {
            if self.capacity == 0 || self.ring.push(p).is_err() {
                self.drops.fetch_add(1, Relaxed);
            }
        }
    }

    fn dequeue(&self, max: usize) -> Option<Batch> {
        let mut batch = Batch::new();
        for _ in 0..max.min(rclick_core::batch::BATCH_CAPACITY) {
            match self.ring.pop() {
                Some(p) => batch.push(p),
                None => break,
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}

const HANDLERS: &[Handler<MSQueue>] = &[
    Handler::read("length", |e, _| e.ring.len().to_string()),
    Handler::read("capacity", |e, _| e.capacity.to_string()),
    Handler::read("drops", |e, _| e.drops.load(Relaxed).to_string()),
];

rclick_core::element_class!(MSQueue);

impl SharedElement for MSQueue {
    fn push(&self, _port: usize, batch: Batch, _ctx: &mut Ctx) {
        self.enqueue(batch);
    }

    fn pull(&self, _port: usize, max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max)
    }
}

impl Element for MSQueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "h/l"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity = args.read_p_or("CAPACITY", 1000usize);
        args.complete()?;
        if capacity > MAX_CAPACITY {
            return Err(format!(
                "CAPACITY {capacity} is too large (at most {MAX_CAPACITY}: the ring is reserved whole)"
            )
            .into());
        }
        self.capacity = capacity;
        self.ring = ArrayQueue::new(capacity.max(1));
        Ok(())
    }

    fn shared(&self) -> Option<&dyn SharedElement> {
        Some(self)
    }

    fn push(&mut self, _port: usize, batch: Batch, _ctx: &mut Ctx) {
        self.enqueue(batch);
    }

    fn pull(&mut self, _port: usize, max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max)
    }
}
