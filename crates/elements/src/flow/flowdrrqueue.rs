//! # FlowDRRQueue
//!
//! A queue per flow, served by Deficit Round Robin (the Router Plugins
//! per-flow fair queueing scheduler).
//!
//! ## Synopsis
//! `FlowDRRQueue([QUANTUM, CAPACITY, TOTAL, TABLE])`
//!
//! ## Ports and processing
//! One push input, one pull output.
//!
//! ## Description
//! Keeps a FIFO queue for each flow with packets waiting, and serves the
//! flows by Deficit Round Robin (Shreedhar and Varghese): each flow with
//! packets gets QUANTUM bytes of credit per round and sends packets while
//! its credit covers the next one, so backlogged flows share the output
//! equally in bytes whatever their packet sizes and arrival rates. New
//! flows join the end of the round.
//!
//! Flows are the records of a [FlowTable](#flowtable) (the nearest one
//! upstream, or TABLE): the flow's queue is bound to its record through a
//! state slot, so a packet marked by the table or a gate upstream finds
//! its queue without hashing. A queue is released when it empties and is
//! reused by the next flow needing one; queues keep their storage, so in
//! steady state nothing is allocated per packet. If a flow's record is
//! recycled or expires while its queue still holds packets, the flow's
//! next packet (with a new record) joins that queue, found by the flow's
//! six-tuple, so a flow never has two queues: its packets keep their
//! order and it gets one flow's share.
//!
//! A packet arriving when its flow already holds CAPACITY packets, or when
//! TOTAL packets wait in all, is dropped (`drops`). Packets that are not
//! IPv4 (or are truncated before their ports) are dropped and counted
//! (`bad`).
//!
//! The element is a Storage element with an empty notifier, like
//! [Queue](#queue): pulling tasks downstream sleep while it is empty.
//!
//! ## Keywords
//! - **QUANTUM** (bytes): credit per flow per round. Default 1500.
//! - **CAPACITY** (unsigned): the most packets per flow. Default 64.
//! - **TOTAL** (unsigned): the most packets in all. Default 1000.
//! - **TABLE** (element name): the FlowTable. Default: the nearest one
//!   upstream; there must be one.
//!
//! ## Handlers
//! - `length` (read): packets waiting; `capacity` (read): TOTAL.
//! - `active_flows` (read): flows with packets waiting.
//! - `highwater_active_flows` (read): the most flows waiting at once.
//! - `drops`, `bad` (read): packets dropped as above.
//! - `queues` (read): one waiting flow a line, in round order:
//!   `SRC DST PROTO SPORT DPORT IIF LENGTH DEFICIT`.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ft :: FlowTable
//!   -> FlowDRRQueue(QUANTUM 1500) -> Unstrip(14) -> ToDevice(eth1);
//! ```

use std::collections::{HashMap, VecDeque};

use rclick_core::conf::Args;
use rclick_core::sched::SignalId;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::flowtable::find_table;
use super::sixtuple::Key;
use super::table::SharedTable;
use crate::ip::ipcommon::AddrHashBuilder;

struct FlowQueue {
    packets: VecDeque<Packet>,
    /// The record (index, stamp) this queue belongs to; stamp 0: free.
    owner: (u32, u32),
    key: Key,
    deficit: u64,
}

pub struct FlowDRRQueue {
    quantum: u64,
    capacity: usize,
    total: usize,
    table_name: Option<String>,
    table: Option<(SharedTable, usize)>,
    queues: Vec<FlowQueue>,
    free: Vec<u32>,
    /// Queues with packets, in round order; the front one is served.
    active: VecDeque<u32>,
    /// The queue with packets of each flow, by six-tuple: where a flow
    /// whose record was recycled while it had packets waiting finds its
    /// queue again.
    by_key: HashMap<Key, u32, AddrHashBuilder>,
    /// Whether the front queue has had its quantum for this turn.
    in_turn: bool,
    length: usize,
    highwater_active: usize,
    drops: u64,
    bad: u64,
    nonempty: Option<SignalId>,
}

impl Default for FlowDRRQueue {
    fn default() -> Self {
        FlowDRRQueue {
            quantum: 1500,
            capacity: 64,
            total: 1000,
            table_name: None,
            table: None,
            queues: Vec::new(),
            free: Vec::new(),
            active: VecDeque::new(),
            by_key: HashMap::with_hasher(AddrHashBuilder::default()),
            in_turn: false,
            length: 0,
            highwater_active: 0,
            drops: 0,
            bad: 0,
            nonempty: None,
        }
    }
}

impl FlowDRRQueue {
    /// One packet by DRR.
    fn dequeue(&mut self) -> Option<Packet> {
        loop {
            let q = *self.active.front()?;
            let fq = &mut self.queues[q as usize];
            if !self.in_turn {
                fq.deficit += self.quantum;
                self.in_turn = true;
            }
            let len = fq.packets.front().map_or(0, |p| p.len() as u64);
            if fq.deficit >= len {
                let p = fq.packets.pop_front();
                fq.deficit -= len;
                self.length -= 1;
                if fq.packets.is_empty() {
                    fq.deficit = 0;
                    fq.owner = (0, 0);
                    self.by_key.remove(&fq.key);
                    self.active.pop_front();
                    self.in_turn = false;
                    self.free.push(q);
                }
                if p.is_some() {
                    return p;
                }
            } else {
                self.active.pop_front();
                self.active.push_back(q);
                self.in_turn = false;
            }
        }
    }

    fn queues_listing(&self) -> String {
        let mut s = String::new();
        for &q in &self.active {
            let fq = &self.queues[q as usize];
            s.push_str(&format!("{} {} {}\n", fq.key, fq.packets.len(), fq.deficit));
        }
        s
    }
}

const HANDLERS: &[Handler<FlowDRRQueue>] = &[
    Handler::read("queues", |e, _| e.queues_listing()),
    Handler::data("bad", |e| &e.bad),
    Handler::data("drops", |e| &e.drops),
    Handler::data("highwater_active_flows", |e| &e.highwater_active),
    Handler::read("active_flows", |e, _| e.active.len().to_string()),
    Handler::data("capacity", |e| &e.total),
    Handler::data("length", |e| &e.length),
];

rclick_core::element_class!(FlowDRRQueue);

impl Element for FlowDRRQueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "h/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let quantum: u32 = args.read_p_or("QUANTUM", 1500u32);
        let capacity: usize = args.read_p_or("CAPACITY", 64usize);
        let total: usize = args.read_p_or("TOTAL", 1000usize);
        let table: Option<String> = args.read_p("TABLE");
        args.complete()?;
        if quantum == 0 {
            return Err("QUANTUM: must be positive".into());
        }
        if capacity == 0 || total == 0 || capacity > 1 << 20 || total > 1 << 24 {
            return Err("CAPACITY and TOTAL must be between 1 and 2^20 (2^24 for TOTAL)".into());
        }
        self.quantum = u64::from(quantum);
        self.capacity = capacity;
        self.total = total;
        self.table_name = table;
        // Room for every packet in its own flow, reserved once.
        self.active.reserve(total);
        // The flow map up to 64k flows at once (about 1.6 MB); a larger
        // TOTAL grows it only when that many flows first wait together.
        self.by_key.reserve(total.min(1 << 16));
        if self.nonempty.is_none() {
            self.nonempty = Some(ctx.new_signal(false));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let Some(t) = find_table(ctx, self.table_name.as_deref())? else {
            return Err("no FlowTable upstream (name one with TABLE)".into());
        };
        let slot = t.lock().register_slots(1);
        self.table = Some((t, slot));
        Ok(())
    }

    fn has_interface(&self, name: &str) -> bool {
        name == "Storage"
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.nonempty
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some((self.length, self.total))
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let Some((table, slot)) = self.table.clone() else {
            self.drops += batch.len() as u64;
            return;
        };
        let was_empty = self.length == 0;
        let now = ctx.recent().nanos();
        let mut t = table.lock();
        for mut p in batch {
            let Ok(idx) = t.lookup(&mut p, now) else {
                self.bad += 1;
                continue;
            };
            let stamp = t.record(idx).stamp;
            let s = t.slot(idx, slot);
            let bound = (s as u32).checked_sub(1).filter(|&q| {
                self.queues
                    .get(q as usize)
                    .is_some_and(|fq| fq.owner == (idx, stamp))
            });
            let key = t.record(idx).key;
            let q = match bound {
                Some(q) => q,
                None if let Some(&q) = self.by_key.get(&key) => {
                    // The flow's record was recycled (or expired) while
                    // its packets waited: the new record takes the queue.
                    self.queues[q as usize].owner = (idx, stamp);
                    *t.slot_mut(idx, slot) = u64::from(q) + 1;
                    q
                }
                None => {
                    if self.length >= self.total {
                        self.drops += 1;
                        continue;
                    }
                    let q = match self.free.pop() {
                        Some(q) => q,
                        None => {
                            self.queues.push(FlowQueue {
                                packets: VecDeque::new(),
                                owner: (0, 0),
                                key: Key::default(),
                                deficit: 0,
                            });
                            (self.queues.len() - 1) as u32
                        }
                    };
                    let fq = &mut self.queues[q as usize];
                    fq.owner = (idx, stamp);
                    fq.key = key;
                    fq.deficit = 0;
                    *t.slot_mut(idx, slot) = u64::from(q) + 1;
                    self.by_key.insert(key, q);
                    self.active.push_back(q);
                    self.highwater_active = self.highwater_active.max(self.active.len());
                    q
                }
            };
            let fq = &mut self.queues[q as usize];
            if fq.packets.len() >= self.capacity || self.length >= self.total {
                self.drops += 1;
                continue;
            }
            fq.packets.push_back(p);
            self.length += 1;
        }
        drop(t);
        if was_empty && self.length > 0 {
            if let Some(s) = self.nonempty {
                ctx.wake_signal(s);
            }
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let n = max.min(rclick_core::batch::BATCH_CAPACITY);
        let mut batch = Batch::new();
        while batch.len() < n {
            match self.dequeue() {
                Some(p) => batch.push(p),
                None => break,
            }
        }
        if self.length == 0 {
            if let Some(s) = self.nonempty {
                ctx.sleep_signal(s);
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}
