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
//! ring of whole batches: a push or a pull takes no lock, and a batch
//! crosses threads with one ring operation (a pull that wants fewer
//! packets than a batch holds leaves the rest for its thread's next pull,
//! so the order is kept).
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

use std::cell::UnsafeCell;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};
use std::sync::atomic::{AtomicU64, AtomicUsize};

use crossbeam_queue::ArrayQueue;
use rclick_core::conf::{parse_usize, Args};
use rclick_core::element::hflags;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SharedElement, SignalId,
};

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

/// The rest of a batch a puller took more of than it asked for: the next
/// pull on the same thread starts with it.
#[derive(Default)]
struct Stash(UnsafeCell<Option<Batch>>);

// SAFETY: stash `k` is touched only by router thread `k` while threads run
// (the element indexes it by the calling thread), and otherwise only with
// `&mut self`.
unsafe impl Sync for Stash {}

pub struct ThreadSafeQueue {
    /// Whole batches, as they were pushed: one ring operation moves up to
    /// a batch of packets across threads.
    ring: ArrayQueue<Batch>,
    /// Packets in the ring and the stashes: what CAPACITY bounds.
    len: AtomicUsize,
    stash: Box<[Stash]>,
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
            len: AtomicUsize::new(0),
            stash: vec![Stash::default()].into_boxed_slice(),
            capacity: 1000,
            highwater: AtomicUsize::new(0),
            drops: AtomicU64::new(0),
            nonempty: None,
            nonfull: None,
        }
    }
}

impl ThreadSafeQueue {
    /// Every queued packet, oldest first (with the world stopped or one
    /// thread: `&mut self`).
    fn take_all(&mut self) -> Vec<Packet> {
        let mut out = Vec::new();
        for s in self.stash.iter_mut() {
            if let Some(mut b) = s.0.get_mut().take() {
                out.extend(b.drain());
            }
        }
        while let Some(mut b) = self.ring.pop() {
            out.extend(b.drain());
        }
        self.len.store(0, Relaxed);
        out
    }

    /// Replaces the ring with one of `capacity` (and a stash per thread),
    /// keeping the packets that fit, oldest first.
    fn resize(&mut self, capacity: usize, nthreads: usize) {
        let old = self.take_all();
        self.ring = ArrayQueue::new(capacity.max(1));
        self.stash = (0..nthreads.max(1)).map(|_| Stash::default()).collect();
        self.capacity = capacity;
        self.fill(old);
    }

    /// Queues `packets` (into an empty queue), oldest first, as many as
    /// fit; returns how many did not.
    fn fill(&mut self, packets: Vec<Packet>) -> u64 {
        let mut batch = Batch::new();
        let mut kept = 0;
        let mut lost = 0;
        for p in packets {
            if kept >= self.capacity {
                lost += 1;
                continue;
            }
            if batch.is_full() {
                let _ = self.ring.push(std::mem::take(&mut batch));
            }
            batch.push(p);
            kept += 1;
        }
        if !batch.is_empty() {
            let _ = self.ring.push(batch);
        }
        self.len.store(kept, Relaxed);
        lost
    }

    /// Reserves room for up to `n` packets; returns how many fit.
    fn reserve(&self, n: usize) -> (usize, usize) {
        let mut cur = self.len.load(Relaxed);
        loop {
            let take = n.min(self.capacity.saturating_sub(cur));
            if take == 0 {
                return (0, cur);
            }
            match self
                .len
                .compare_exchange_weak(cur, cur + take, AcqRel, Relaxed)
            {
                Ok(_) => return (take, cur + take),
                Err(c) => cur = c,
            }
        }
    }

    fn enqueue(&self, mut batch: Batch, ctx: &mut Ctx) {
        let n = batch.len();
        if n == 0 {
            return;
        }
        let (take, now) = self.reserve(n);
        if take < n {
            let rest = batch.split_off(take);
            for p in rest {
                self.drop_packet(p, ctx);
            }
        }
        if take > 0 {
            // The ring has a slot per packet of CAPACITY, and every batch
            // in it holds at least one reserved packet: it cannot be full.
            if let Err(b) = self.ring.push(batch) {
                self.len.fetch_sub(b.len(), Relaxed);
                for p in b {
                    self.drop_packet(p, ctx);
                }
            }
            self.highwater.fetch_max(now, Relaxed);
            if let Some(s) = self.nonempty {
                ctx.wake_signal(s);
            }
        }
        if let Some(s) = self.nonfull {
            if self.len.load(Relaxed) >= self.capacity {
                ctx.sleep_signal(s);
                // A puller on another thread may have made room since:
                // raise the signal again rather than strand the source.
                if self.len.load(Relaxed) < self.capacity {
                    ctx.wake_signal(s);
                }
            }
        }
    }

    fn drop_packet(&self, p: Packet, ctx: &mut Ctx) {
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
        let max = max.clamp(1, rclick_core::batch::BATCH_CAPACITY);
        let k = ctx.thread_index().min(self.stash.len() - 1);
        // SAFETY: stash `k` belongs to this thread (see `Stash`).
        let stash = unsafe { &mut *self.stash[k].0.get() };
        let mut out = stash.take().or_else(|| self.ring.pop());
        if let Some(b) = out.as_mut() {
            // Top a short batch up from the next ones, up to `max`.
            while b.len() < max {
                let Some(mut next) = self.ring.pop() else {
                    break;
                };
                let room = max - b.len();
                if next.len() > room {
                    *stash = Some(next.split_off(room));
                }
                if let Err(back) = b.append(next) {
                    *stash = Some(back);
                    break;
                }
                if stash.is_some() {
                    break;
                }
            }
            if b.len() > max {
                *stash = Some(b.split_off(max));
            }
            self.len.fetch_sub(b.len(), Relaxed);
        }
        if self.len.load(Relaxed) == 0 {
            if let Some(s) = self.nonempty {
                ctx.sleep_signal(s);
                // A pusher on another thread may have added a packet after
                // the pops and before the signal fell.
                if self.len.load(Relaxed) != 0 {
                    ctx.wake_signal(s);
                }
            }
        }
        let b = out?;
        if let Some(s) = self.nonfull {
            ctx.wake_signal(s);
        }
        Some(b)
    }

    fn set_capacity(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let capacity = checked_capacity(parse_usize(value.trim())?)?;
        let nthreads = self.stash.len();
        self.resize(capacity, nthreads);
        // Click's ThreadSafeQueue writes the bare number (Queue writes
        // `CAPACITY N`).
        ctx.set_config(&capacity.to_string());
        let len = self.len.load(Relaxed);
        if let Some(s) = self.nonfull {
            if len < self.capacity {
                ctx.wake_signal(s);
            } else {
                ctx.sleep_signal(s);
            }
        }
        if let (Some(s), 0) = (self.nonempty, len) {
            ctx.sleep_signal(s);
        }
        Ok(())
    }

    fn reset(&mut self, _value: &str, ctx: &mut Ctx) -> Result<(), String> {
        drop(self.take_all());
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
    Handler::read("length", |e, _| e.len.load(Relaxed).to_string()),
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
        e.highwater.store(e.len.load(Relaxed), Relaxed);
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
        self.resize(capacity, ctx.nthreads());
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
        Some((self.len.load(Relaxed), self.capacity))
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
        let lost = self.fill(o.take_all());
        let kept = self.len.load(Relaxed);
        self.drops.store(o.drops.load(Relaxed) + lost, Relaxed);
        self.highwater
            .store(o.highwater.load(Relaxed).max(kept), Relaxed);
        if let (Some(s), true) = (self.nonempty, kept > 0) {
            ctx.set_signal(s, true);
        }
        if let Some(s) = self.nonfull {
            ctx.set_signal(s, kept < self.capacity);
        }
        true
    }
}
