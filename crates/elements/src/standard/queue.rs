//! # Queue
//!
//! Stores packets in a FIFO queue.
//!
//! ## Synopsis
//! `Queue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 that
//! receives packets dropped because the queue was full.
//!
//! ## Description
//! Packets pushed in are appended; pulls take from the front. When the queue
//! holds CAPACITY packets, new arrivals are dropped (sent to output 1 if it is
//! connected) and counted; the first drop is reported on standard error as
//! `NAME :: Queue: overflow`, as in Click. Queue is a notifier both ways: pulling elements
//! downstream sleep while it is empty and are woken when a packet arrives,
//! so an idle pull path costs nothing; and sources upstream (InfiniteSource,
//! RatedSource) sleep while it is full and are woken when room appears. It implements the Storage interface that
//! elements such as RED find through flow-based router context.
//!
//! Unlike Click's, whose empty signal goes down only at the tenth pull in a
//! row that finds the queue empty (its "sleepiness"; QuickNoteQueue's at
//! once), rclick's goes down as soon as a pull leaves the queue empty: the
//! puller behind it sleeps sooner. Click's way is kept out because it costs
//! the schedulers (StrideSched, HFSCSched) a failed pull of each emptied
//! queue they visit, up to 10% more instructions per packet at BURST 32.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length. Default 1000.
//!
//! ## Handlers
//! - `length` (read): current number of packets.
//! - `highwater_length` (read): maximum length seen.
//! - `capacity` (read/write): the capacity. Writing it discards queued
//!   packets beyond the new capacity (the head stays, the newest go,
//!   uncounted) and sets CAPACITY in `config`, as Click's keyword
//!   handler does (a positional capacity is replaced in place). A live
//!   reconfiguration (writing `config`) discards them the same way.
//! - `drops` (read): packets dropped because the queue was full.
//! - `reset_counts` (write): zeroes `drops` and `highwater_length`.
//! - `reset` (write): drops every queued packet.
//!
//! Hot swap: a new Queue takes the old one's packets, in order, up to its
//! capacity, and its counters.
//!
//! ## Example
//! ```click
//! FromDump(in.pcap) -> q :: Queue(200) -> ToDump(out.pcap);
//! ```

use rclick_core::ring::PacketRing;

use rclick_core::conf::{parse_usize, Args};
use rclick_core::element::hflags;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SignalId};

/// Which Click queue class this instance stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// `SimpleQueue`: no notification.
    Simple,
    /// `NotifierQueue`: raises an empty-notifier signal.
    Notifier,
    /// `Queue`, `FullNoteQueue`: raises an empty-notifier signal, and a
    /// full-notifier signal that sources upstream sleep on.
    Full,
}

pub struct Queue {
    kind: QueueKind,
    packets: PacketRing,
    capacity: usize,
    highwater: usize,
    drops: u64,
    nonempty: Option<SignalId>,
    /// Raised while there is room: sources upstream sleep while it is down.
    nonfull: Option<SignalId>,
    /// The emptied buffer of the last batch pushed in, for the next pull
    /// to fill: at one packet per push and pull, a batch buffer goes
    /// round through the queue instead of through the thread's pool.
    spare: Option<Batch>,
    /// Lowering the capacity keeps the newest packets (FrontDropQueue),
    /// not the head.
    trim_keeps_newest: bool,
}

impl Queue {
    pub fn new(kind: QueueKind) -> Self {
        Queue {
            kind,
            packets: PacketRing::new(),
            capacity: 1000,
            highwater: 0,
            drops: 0,
            nonempty: None,
            nonfull: None,
            spare: None,
            trim_keeps_newest: false,
        }
    }

    /// Makes a lowered capacity keep the newest packets rather than the
    /// head (Click's FrontDropQueue).
    pub fn trim_keeping_newest(mut self) -> Self {
        self.trim_keeps_newest = true;
        self
    }

    /// The Click class this instance stands for.
    fn class_name(&self) -> &'static str {
        match self.kind {
            QueueKind::Simple => "SimpleQueue",
            QueueKind::Notifier => "NotifierQueue",
            QueueKind::Full => "Queue",
        }
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// The queued packets, head first, for queue variants that insert at
    /// either end or drop from the front (FrontDropQueue, MixedQueue);
    /// call [`Queue::inserted`] after inserting.
    pub fn packets_mut(&mut self) -> &mut PacketRing {
        &mut self.packets
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Counts a packet dropped because the queue was full, reporting the
    /// first overflow on standard error as Click does.
    pub fn count_drop(&mut self, ctx: &Ctx) {
        if self.drops == 0 && self.capacity > 0 {
            ctx.chatter(&format!(
                "{} :: {}: overflow",
                ctx.element_name(),
                ctx.element_class_at(ctx.element_index())
                    .unwrap_or(self.class_name())
            ));
        }
        self.drops += 1;
    }

    /// After packets were inserted through [`Queue::packets_mut`]: the
    /// high-water mark and the notifier signals.
    pub fn inserted(&mut self, ctx: &Ctx) {
        self.highwater = self.highwater.max(self.packets.len());
        if let (Some(s), false) = (self.nonempty, self.packets.is_empty()) {
            ctx.wake_signal(s);
        }
        if let (Some(s), true) = (self.nonfull, self.packets.len() >= self.capacity) {
            ctx.sleep_signal(s);
        }
    }

    /// After packets left other than by a pull: the notifier signals.
    fn removed(&self, ctx: &Ctx) {
        if let (Some(s), true) = (self.nonempty, self.packets.is_empty()) {
            ctx.sleep_signal(s);
        }
        if let (Some(s), true) = (self.nonfull, self.packets.len() < self.capacity) {
            ctx.wake_signal(s);
        }
    }

    /// Appends a packet as a push would (Click's `enq`), without counting
    /// a drop: gives it back if the queue is full.
    pub fn enq(&mut self, p: Packet, ctx: &Ctx) -> Result<(), Packet> {
        if self.packets.len() >= self.capacity {
            return Err(p);
        }
        self.packets.push_back(p);
        self.highwater = self.highwater.max(self.packets.len());
        if let Some(s) = self.nonempty {
            ctx.wake_signal(s);
        }
        if let (Some(s), true) = (self.nonfull, self.packets.len() >= self.capacity) {
            ctx.sleep_signal(s);
        }
        Ok(())
    }

    /// Takes the packet at the head (Click's `deq`).
    pub fn deq(&mut self, ctx: &Ctx) -> Option<Packet> {
        let p = self.packets.pop_front();
        self.removed(ctx);
        p
    }

    /// Removes and returns the first packet, from the head, for which
    /// `pred` holds (Click's `yank1`).
    pub fn yank1(&mut self, mut pred: impl FnMut(&Packet) -> bool, ctx: &Ctx) -> Option<Packet> {
        let i = self.packets.iter().position(&mut pred)?;
        let p = self.packets.remove(i);
        self.removed(ctx);
        p
    }

    /// Removes every packet for which `pred` holds, appending them to
    /// `out` from the tail towards the head (Click's `yank`); the others
    /// keep their order. Returns how many were removed.
    pub fn yank(
        &mut self,
        mut pred: impl FnMut(&Packet) -> bool,
        out: &mut Vec<Packet>,
        ctx: &Ctx,
    ) -> usize {
        let before = out.len();
        let mut i = self.packets.len();
        while i > 0 {
            i -= 1;
            if pred(&self.packets[i]) {
                if let Some(p) = self.packets.remove(i) {
                    out.push(p);
                }
            }
        }
        self.removed(ctx);
        out.len() - before
    }

    fn enqueue(&mut self, p: Packet, ctx: &mut Ctx) {
        if self.packets.len() >= self.capacity {
            // As Click: the first overflow is reported once.
            self.count_drop(ctx);
            if ctx.noutputs() > 1 {
                ctx.emit(1, p);
            }
            return;
        }
        self.packets.push_back(p);
    }

    /// [`Element::push`] of a batch, or of one packet to a full queue or
    /// with a spare buffer kept already. Inline: a call of its own costs
    /// a batch of 32 packets more than it saves.
    #[inline(always)]
    fn push_batch(&mut self, mut batch: Batch, ctx: &mut Ctx) {
        let was_empty = self.packets.is_empty();
        if batch.len() == 1 && self.packets.len() < self.capacity {
            if let Some(p) = batch.pop() {
                self.packets.push_back(p);
            }
        } else if self.packets.len() + batch.len() <= self.capacity {
            // Room for the whole batch (the usual case): one block move.
            self.packets.push_batch(&mut batch);
        } else {
            for p in batch.drain() {
                self.enqueue(p, ctx);
            }
        }
        // Keep the emptied buffer for the next pull (one is enough).
        if self.spare.is_none() {
            self.spare = Some(batch);
        }
        self.highwater = self.highwater.max(self.packets.len());
        if was_empty && !self.packets.is_empty() {
            if let Some(s) = self.nonempty {
                ctx.wake_signal_inline(s);
            }
        }
        if self.packets.len() >= self.capacity {
            if let Some(s) = self.nonfull {
                ctx.sleep_signal(s);
            }
        }
    }

    /// [`Element::pull`] of a non-empty queue, when it is more (or less)
    /// than one packet, or no spare buffer was kept. Inline, as
    /// `push_batch`.
    #[inline(always)]
    fn pull_batch(&mut self, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        // The full signal is down only while the queue is full.
        let was_full = self.packets.len() >= self.capacity;
        let n = max
            .min(rclick_core::batch::BATCH_CAPACITY)
            .min(self.packets.len());
        let mut batch = self.spare.take().unwrap_or_default();
        // pop_front, not drain: a Drain's setup and drop cost more than
        // the one packet a BURST 1 pull takes; and that one packet needs
        // no loop.
        if n == 1 {
            if let Some(p) = self.packets.pop_front() {
                batch.push(p);
            }
        } else {
            self.packets.pop_into(&mut batch, n);
        }
        if let (Some(s), true) = (self.nonfull, was_full) {
            ctx.wake_signal(s);
        }
        if self.packets.is_empty() {
            if let Some(s) = self.nonempty {
                ctx.sleep_signal(s);
            }
        }
        Some(batch)
    }

    fn set_capacity(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.capacity = parse_usize(value.trim())?;
        // As in Click (a live reconfiguration): packets beyond the new
        // capacity are discarded, and the configuration string reports
        // the new capacity.
        self.trim_to_capacity();
        // Click's keyword handler: a positional CAPACITY is replaced in
        // place, else `CAPACITY N` is appended.
        let old = ctx
            .element_config_at(ctx.element_index())
            .unwrap_or_default();
        ctx.set_config(&rclick_core::element::handlers::config_with_keyword(
            &old,
            "CAPACITY",
            Some(0),
            &self.capacity.to_string(),
        ));
        if let Some(s) = self.nonfull {
            if self.packets.len() < self.capacity {
                ctx.wake_signal(s);
            } else {
                ctx.sleep_signal(s);
            }
        }
        Ok(())
    }

    /// Discards the packets beyond the capacity, uncounted: the head
    /// stays and the newest go (Click's SimpleQueue::live_reconfigure),
    /// or the other way round for FrontDropQueue.
    fn trim_to_capacity(&mut self) {
        if self.trim_keeps_newest {
            let extra = self.packets.len().saturating_sub(self.capacity);
            self.packets.drop_front(extra);
        } else {
            self.packets.truncate(self.capacity);
        }
    }

    fn reset(&mut self, _value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.packets.clear();
        if let Some(s) = self.nonempty {
            ctx.sleep_signal(s);
        }
        if let Some(s) = self.nonfull {
            ctx.wake_signal(s);
        }
        Ok(())
    }
}

const HANDLERS: &[Handler<Queue>] = &[
    Handler::read("length", |e, _| e.packets.len().to_string()),
    Handler::data("highwater_length", |e| &e.highwater),
    Handler::flagged(
        hflags::CALM,
        Handler::data_write("capacity", |e| &e.capacity, Queue::set_capacity),
    ),
    Handler::data("drops", |e| &e.drops),
    Handler::button("reset_counts", |e, _, _| {
        e.drops = 0;
        e.highwater = e.packets.len();
        Ok(())
    }),
    Handler::button("reset", Queue::reset),
];

rclick_core::element_class!("Queue" => Queue::new(QueueKind::Full));

impl Element for Queue {
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
        // Only now: a live reconfiguration that fails changes nothing.
        self.capacity = capacity;
        // Reserve once so enqueueing never reallocates.
        let want = self.capacity.min(1 << 16);
        if self.packets.capacity() < want {
            self.packets.reserve(want - self.packets.len());
        }
        if self.kind != QueueKind::Simple && self.nonempty.is_none() {
            self.nonempty = Some(ctx.new_signal(false));
        }
        // A live reconfiguration keeps the packets that fit.
        self.trim_to_capacity();
        if self.kind == QueueKind::Full {
            match self.nonfull {
                None => self.nonfull = Some(ctx.new_signal(true)),
                // A live reconfiguration that leaves room wakes the sources
                // asleep on a full queue, as Click's: a pull raises the
                // signal only when it takes from a full queue.
                Some(s) if self.packets.len() < self.capacity => ctx.set_signal(s, true),
                Some(_) => {}
            }
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
        Some((self.packets.len(), self.capacity))
    }

    fn push(&mut self, _port: usize, mut batch: Batch, ctx: &mut Ctx) {
        // One packet (every push at BURST 1) with room for it, and no
        // spare buffer kept (the last pull took it): the whole push here,
        // with no drain iterator to set up and drop, and none of the
        // general path's length tests.
        let n = self.packets.len();
        if batch.len() == 1 && n < self.capacity && self.spare.is_none() {
            if let Some(p) = batch.pop() {
                self.packets.push_back(p);
            }
            self.spare = Some(batch);
            self.highwater = self.highwater.max(n + 1);
            if n == 0 {
                if let Some(s) = self.nonempty {
                    ctx.wake_signal_inline(s);
                }
            }
            if n + 1 >= self.capacity {
                if let Some(s) = self.nonfull {
                    ctx.sleep_signal(s);
                }
            }
            return;
        }
        self.push_batch(batch, ctx);
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let n = self.packets.len();
        if n == 0 {
            if let Some(s) = self.nonempty {
                ctx.sleep_signal(s);
            }
            return None;
        }
        // One packet to take (every pull at BURST 1) into the spare buffer
        // the last push left (empty): the whole pull here, without the
        // general path's length arithmetic.
        if max == 1 || (n == 1 && max != 0) {
            if let Some(mut batch) = self.spare.take() {
                if let Some(p) = self.packets.pop_front() {
                    batch.push(p);
                }
                // The full signal is down only while the queue is full.
                if let (Some(s), true) = (self.nonfull, n >= self.capacity) {
                    ctx.wake_signal(s);
                }
                if n == 1 {
                    if let Some(s) = self.nonempty {
                        ctx.sleep_signal(s);
                    }
                }
                return Some(batch);
            }
        }
        self.pull_batch(max, ctx)
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<Queue>() else {
            return false;
        };
        while self.packets.len() < self.capacity {
            match o.packets.pop_front() {
                Some(p) => self.packets.push_back(p),
                None => break,
            }
        }
        self.drops = o.drops + o.packets.len() as u64;
        o.packets.clear();
        self.highwater = o.highwater.max(self.packets.len());
        if let (Some(s), false) = (self.nonempty, self.packets.is_empty()) {
            ctx.set_signal(s, true);
        }
        if let Some(s) = self.nonfull {
            ctx.set_signal(s, self.packets.len() < self.capacity);
        }
        true
    }
}
