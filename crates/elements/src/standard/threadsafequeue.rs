//! # ThreadSafeQueue
//!
//! Stores packets in a FIFO queue that several threads may push to and
//! pull from at once.
//!
//! ## Synopsis
//! `ThreadSafeQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 that
//! receives packets dropped because the queue was full.
//!
//! ## Description
//! Like Queue, but safe across router threads (`-j N`): it is the boundary
//! where packets move from one thread to another, as in a pipeline split
//! (`FromDevice -> ... -> ThreadSafeQueue -> Unqueue -> ...` with the two
//! sides on different threads through StaticThreadSched), or where several
//! threads' traffic meets one output. The queue is a bounded lock-free
//! ring: a push or a pull takes no lock, and a whole batch moves with one
//! pass over it.
//!
//! It is a notifier both ways, as Queue is: pullers sleep while it is
//! empty and are woken (on their own thread) when a packet arrives;
//! sources upstream sleep while it is full. The router refuses a plain
//! Queue reached from two threads and names this class as the fix.
//!
//! With one thread it behaves as Queue does.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length, at most 4194304 (Click has no
//!   limit; a bigger one is refused rather than reserved). Default 1000.
//!
//! ## Handlers
//! - `length` (read): current number of packets.
//! - `highwater_length` (read): maximum length seen.
//! - `capacity` (read/write): the capacity. Writing it (with the other
//!   threads stopped) keeps the packets that fit, oldest first, and sets
//!   `config` to the new capacity. At most 4194304: the ring is reserved
//!   whole when configured.
//! - `drops` (read): packets dropped because the queue was full.
//! - `reset_counts` (write): zeroes `drops` and `highwater_length`.
//! - `reset` (write): drops every queued packet.
//!
//! ## Example
//! ```click
//! FromDump(in.pcap) -> q :: ThreadSafeQueue(200) -> Unqueue -> Discard;
//! StaticThreadSched(q 0);
//! ```

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use crossbeam_queue::ArrayQueue;
use rclick_core::conf::{parse_usize, Args};
use rclick_core::element::hflags;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, SharedElement, SignalId};

/// The largest CAPACITY: the ring (16 bytes a slot) is reserved whole.
const MAX_CAPACITY: usize = 1 << 22;

fn checked_capacity(n: usize) -> Result<usize, String> {
    if n > MAX_CAPACITY {
        Err(format!(
            "CAPACITY {n} is too large (at most {MAX_CAPACITY}: the ring is reserved whole)"
        ))
    } else {
        Ok(n)
    }
}

pub struct ThreadSafeQueue {
    ring: ArrayQueue<rclick_core::Packet>,
    capacity: usize,
    highwater: AtomicUsize,
    drops: AtomicU64,
    nonempty: Option<SignalId>,
    /// Raised while there is room: sources upstream sleep while it is down.
    nonfull: Option<SignalId>,
}

impl Default for ThreadSafeQueue {
    fn default() -> Self {
        ThreadSafeQueue {
            ring: ArrayQueue::new(1),
            capacity: 1000,
            highwater: AtomicUsize::new(0),
            drops: AtomicU64::new(0),
            nonempty: None,
            nonfull: None,
        }
    }
}

impl ThreadSafeQueue {
    /// Replaces the ring with one of `capacity`, keeping the packets that
    /// fit, oldest first.
    fn resize(&mut self, capacity: usize) {
        let ring = ArrayQueue::new(capacity.max(1));
        while let Some(p) = self.ring.pop() {
            if ring.len() < capacity {
                let _ = ring.push(p);
            }
        }
        self.ring = ring;
        self.capacity = capacity;
    }

    fn enqueue(&self, batch: Batch, ctx: &mut Ctx) {
        let mut added = false;
        for p in batch {
            if self.capacity == 0 {
                self.drop_packet(p, ctx);
                continue;
            }
            match self.ring.push(p) {
                Ok(()) => added = true,
                Err(p) => self.drop_packet(p, ctx),
            }
        }
        self.highwater.fetch_max(self.ring.len(), Relaxed);
        if added {
            if let Some(s) = self.nonempty {
                ctx.wake_signal(s);
            }
        }
        if let Some(s) = self.nonfull {
            if self.ring.is_full() {
                ctx.sleep_signal(s);
                // A puller on another thread may have made room since:
                // raise the signal again rather than strand the source.
                if !self.ring.is_full() {
                    ctx.wake_signal(s);
                }
            }
        }
    }

    fn drop_packet(&self, p: rclick_core::Packet, ctx: &mut Ctx) {
        // As Click: the first overflow is reported once.
        if self.drops.fetch_add(1, Relaxed) == 0 && self.capacity > 0 {
            ctx.chatter(&format!(
                "{} :: ThreadSafeQueue: overflow",
                ctx.element_name()
            ));
        }
        if ctx.noutputs() > 1 {
            ctx.emit(1, p);
        }
    }

    fn dequeue(&self, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let n = max.min(rclick_core::batch::BATCH_CAPACITY);
        let mut batch = Batch::new();
        for _ in 0..n {
            match self.ring.pop() {
                Some(p) => batch.push(p),
                None => break,
            }
        }
        if self.ring.is_empty() {
            if let Some(s) = self.nonempty {
                ctx.sleep_signal(s);
                // A pusher on another thread may have added a packet after
                // the pops and before the signal fell.
                if !self.ring.is_empty() {
                    ctx.wake_signal(s);
                }
            }
        }
        if batch.is_empty() {
            return None;
        }
        if let Some(s) = self.nonfull {
            ctx.wake_signal(s);
        }
        Some(batch)
    }

    fn set_capacity(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let capacity = checked_capacity(parse_usize(value.trim())?)?;
        self.resize(capacity);
        // Click's ThreadSafeQueue writes the bare number (Queue writes
        // `CAPACITY N`).
        ctx.set_config(&capacity.to_string());
        if let Some(s) = self.nonfull {
            if self.ring.len() < self.capacity {
                ctx.wake_signal(s);
            } else {
                ctx.sleep_signal(s);
            }
        }
        Ok(())
    }

    fn reset(&mut self, _value: &str, ctx: &mut Ctx) -> Result<(), String> {
        while self.ring.pop().is_some() {}
        if let Some(s) = self.nonempty {
            ctx.sleep_signal(s);
        }
        if let Some(s) = self.nonfull {
            ctx.wake_signal(s);
        }
        Ok(())
    }
}

const HANDLERS: &[Handler<ThreadSafeQueue>] = &[
    Handler::read("length", |e, _| e.ring.len().to_string()),
    Handler::read("highwater_length", |e, _| {
        e.highwater.load(Relaxed).to_string()
    }),
    Handler::flagged(
        hflags::CALM,
        Handler::data_write("capacity", |e| &e.capacity, ThreadSafeQueue::set_capacity),
    ),
    Handler::read("drops", |e, _| e.drops.load(Relaxed).to_string()),
    Handler::button("reset_counts", |e, _, _| {
        e.drops.store(0, Relaxed);
        e.highwater.store(e.ring.len(), Relaxed);
        Ok(())
    }),
    Handler::button("reset", ThreadSafeQueue::reset),
];

rclick_core::element_class!(ThreadSafeQueue);

impl SharedElement for ThreadSafeQueue {
    fn push(&self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.enqueue(batch, ctx);
    }

    fn pull(&self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max, ctx)
    }
}

impl Element for ThreadSafeQueue {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "h/lh"
    }

    fn flow_code(&self) -> &'static str {
        "x/x"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity = args.read_p_or("CAPACITY", 1000usize);
        args.complete()?;
        let capacity = checked_capacity(capacity).map_err(|e| vec![e])?;
        self.resize(capacity);
        if self.nonempty.is_none() {
            self.nonempty = Some(ctx.new_signal(false));
        }
        if self.nonfull.is_none() {
            self.nonfull = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn has_interface(&self, name: &str) -> bool {
        name == "Storage"
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.nonempty
    }

    fn full_notifier(&self) -> Option<SignalId> {
        self.nonfull
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some((self.ring.len(), self.capacity))
    }

    fn shared(&self) -> Option<&dyn SharedElement> {
        Some(self)
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.enqueue(batch, ctx);
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.dequeue(max, ctx)
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<ThreadSafeQueue>() else {
            return false;
        };
        let mut lost = 0;
        while let Some(p) = o.ring.pop() {
            if self.ring.push(p).is_err() {
                lost += 1;
            }
        }
        self.drops.store(o.drops.load(Relaxed) + lost, Relaxed);
        self.highwater
            .store(o.highwater.load(Relaxed).max(self.ring.len()), Relaxed);
        if let (Some(s), false) = (self.nonempty, self.ring.is_empty()) {
            ctx.set_signal(s, true);
        }
        if let Some(s) = self.nonfull {
            ctx.set_signal(s, self.ring.len() < self.capacity);
        }
        true
    }
}
