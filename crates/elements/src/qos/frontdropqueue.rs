//! # FrontDropQueue
//!
//! Stores packets in a FIFO queue that drops from the front when full.
//!
//! ## Synopsis
//! `FrontDropQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 that
//! receives the dropped packets.
//!
//! ## Description
//! A [NotifierQueue](#notifierqueue) whose overflow policy is to drop the
//! packet at the head, the oldest, rather than the arriving one: when a
//! packet arrives and the queue already holds CAPACITY packets, the head is
//! removed (sent to output 1 if it is connected, else freed) and counted as
//! a drop, and the new packet is appended. The first drop is reported as
//! `NAME :: FrontDropQueue: overflow`, as in Click. Lowering the capacity
//! keeps the newest packets. Front drop signals congestion to a TCP sender
//! a whole queue's delay sooner than tail drop (the Click paper, Figure 11).
//!
//! FrontDropQueue implements the Storage interface, so RED finds it through
//! flow-based router context; it has an empty notifier and no full
//! notifier.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length. Default 1000.
//!
//! ## Handlers
//! `length`, `highwater_length`, `capacity`, `drops`, `reset_counts`,
//! `reset`, as for Queue.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 20) -> RED(5, 50, 0.02) -> FrontDropQueue(10) -> Discard;
//! ```

use rclick_core::{Batch, ConfigResult, Ctx, Element, HandlerSpec, InitCtx, SignalId};

use crate::standard::queue::{Queue, QueueKind};

/// How a queue variant inserts, and what it drops when full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// FrontDropQueue: append; when full, drop the head.
    FrontDrop,
    /// MixedQueue: input 0 appends and drops the new packet when full;
    /// input 1 inserts at the head and drops the tail when full.
    Mixed,
}

/// A Click queue variant: a [`Queue`] (NotifierQueue behaviour) with its
/// own insertion and overflow policy.
pub struct VariantQueue {
    q: Queue,
    variant: Variant,
}

impl VariantQueue {
    pub fn new(variant: Variant) -> Self {
        let q = Queue::new(QueueKind::Notifier);
        VariantQueue {
            // A lowered capacity keeps FrontDropQueue's newest packets and
            // MixedQueue's head, as Click's.
            q: if variant == Variant::FrontDrop {
                q.trim_keeping_newest()
            } else {
                q
            },
            variant,
        }
    }

    pub fn queue(&self) -> &Queue {
        &self.q
    }

    /// Drops `p`: to output 1 if connected.
    fn drop_packet(&mut self, p: rclick_core::Packet, ctx: &mut Ctx) {
        self.q.count_drop(ctx);
        if ctx.noutputs() > 1 {
            ctx.emit(1, p);
        }
    }
}

rclick_core::element_class!("FrontDropQueue" => VariantQueue::new(Variant::FrontDrop));

impl Element for VariantQueue {
    fn handlers(&self) -> Vec<HandlerSpec> {
        self.q.handlers()
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        self.q.read_handler(name, param, ctx)
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.q.write_handler(name, value, ctx)
    }

    fn port_count(&self) -> &'static str {
        match self.variant {
            Variant::FrontDrop => "1/1-2",
            Variant::Mixed => "2/1-2",
        }
    }

    fn processing(&self) -> &'static str {
        "h/lh"
    }

    fn flow_code(&self) -> &'static str {
        self.q.flow_code()
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.q.configure(conf, ctx)
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn has_interface(&self, name: &str) -> bool {
        self.q.has_interface(name)
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.q.empty_notifier()
    }

    fn storage(&self) -> Option<(usize, usize)> {
        self.q.storage()
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        let cap = self.q.capacity();
        for p in batch {
            let packets = self.q.packets_mut();
            match (self.variant, port) {
                (Variant::FrontDrop, _) => {
                    if cap == 0 {
                        self.drop_packet(p, ctx);
                        continue;
                    }
                    packets.push_back(p);
                    while self.q.packets_mut().len() > cap {
                        if let Some(old) = self.q.packets_mut().pop_front() {
                            self.drop_packet(old, ctx);
                        }
                    }
                }
                (Variant::Mixed, 0) => {
                    if packets.len() >= cap {
                        self.drop_packet(p, ctx);
                    } else {
                        packets.push_back(p);
                    }
                }
                (Variant::Mixed, _) => {
                    if cap == 0 {
                        self.drop_packet(p, ctx);
                        continue;
                    }
                    packets.push_front(p);
                    while self.q.packets_mut().len() > cap {
                        if let Some(old) = self.q.packets_mut().pop_back() {
                            self.drop_packet(old, ctx);
                        }
                    }
                }
            }
        }
        self.q.inserted(ctx);
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.q.pull(port, max, ctx)
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        if let Some(o) = old.as_any_mut().downcast_mut::<VariantQueue>() {
            return self.q.take_state(&mut o.q, ctx);
        }
        self.q.take_state(old, ctx)
    }
}
