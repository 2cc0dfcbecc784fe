//! # AggregateIPFlows
//!
//! Sets the aggregate annotation from the packet's TCP or UDP flow.
//!
//! ## Synopsis
//! `AggregateIPFlows([*keywords* TCP_TIMEOUT, TCP_DONE_TIMEOUT, UDP_TIMEOUT,
//! FRAGMENT_TIMEOUT, REAP, ICMP, FRAGMENTS, TRACEINFO, SOURCE])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, optional push output 1.
//!
//! ## Description
//! Follows TCP and UDP flows, told apart by source and destination address
//! and port, and sets each packet's aggregate annotation to its flow's
//! number and its paint annotation to its direction: 0 for the direction
//! of the flow's first packet, 1 for replies. Flow numbers count up from
//! one. Packets that are not TCP or UDP, are too short for their ports, or
//! have source and destination 0.0.0.0 leave on output 1 (dropped when it
//! is not connected).
//!
//! A flow dies when it has been idle longer than its timeout (UDP_TIMEOUT
//! for UDP; for TCP, TCP_DONE_TIMEOUT once an RST or a FIN in each
//! direction was seen, else TCP_TIMEOUT); a later packet with the same
//! addresses and ports starts a new flow with a new number, as does a SYN
//! on a completed TCP flow. Idleness counts in whole seconds of packet
//! timestamps; a packet without a timestamp gets the current time (with a
//! one-time warning). Dead flows are forgotten every REAP seconds of
//! packet time, and so are host pairs left with no flow (Click keeps those
//! until the router stops).
//!
//! With FRAGMENTS (the default when the input is push), fragments get the
//! annotations of their datagram's first fragment: once a fragment of a
//! host pair is seen, that pair's packets are held, in order, until the
//! head of the line is no fragment or FRAGMENT_TIMEOUT old; a fragment
//! leaves with the annotations of a held fragment of the same IP ID that
//! has them, and is dropped when none has. Output 0 is then pushed from
//! inside the element, so FRAGMENTS true needs a push input.
//!
//! With ICMP true, ICMP errors (unreachable, time exceeded, parameter
//! problem, source quench, redirect) are given the flow of the packet
//! they quote, with paint 2 or 3 for its direction.
//!
//! TRACEINFO names a file (`-`: standard output) where each flow is
//! described, as XML, when it is forgotten and when the router stops:
//! aggregate, addresses, ports, begin time and duration, packets in each
//! direction, and (with SOURCE, an element with `filename` and
//! `packet_filepos` read handlers, such as FromDump) the trace file and
//! the position of the flow's first packet in it.
//!
//! Differences from Click: a flow whose first packet is a held fragment
//! has, in Click, no time of last use until that fragment leaves, so a
//! reply arriving meanwhile (more than the smallest timeout after time 0)
//! finds it "expired" and renumbers it, and Click then aborts on an
//! assertion when it sends the held fragment on (Click 2.1 crashes on three
//! such packets). rclick counts a flow as used when it is made. When a flow is replaced by a new one (timed
//! out, or a SYN after an RST), Click keeps the old flow's packet counts
//! in the new flow's TRACEINFO record; rclick counts the new flow's
//! packets only. Click lists the flows at the end in the order of its
//! hash table; rclick lists them by host pair, oldest first, and within a
//! host pair most recently used first, as Click does.
//!
//! ## Keywords
//! - **TCP_TIMEOUT** (time): idle lifetime of an active TCP flow. Default
//!   24 hours.
//! - **TCP_DONE_TIMEOUT** (time): of a completed TCP flow. Default 30 s.
//! - **UDP_TIMEOUT** (time): of a UDP flow. Default 60 s.
//! - **FRAGMENT_TIMEOUT** (time): how long fragments are held. Default 30 s.
//! - **REAP** (time): interval between sweeps for dead flows. Default 20
//!   minutes.
//! - **ICMP** (boolean): annotate ICMP errors. Default false.
//! - **FRAGMENTS** (boolean): annotate fragments. Default true when the
//!   input is push.
//! - **TRACEINFO** (filename): flow descriptions.
//! - **SOURCE** (element): the trace source for TRACEINFO.
//!
//! ## Handlers
//! - `clear` (write): forgets every flow (describing it in TRACEINFO) and
//!   sends on the held fragments.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap, STOP true, FORCE_IP true)
//!     -> AggregateIPFlows
//!     -> ToIPSummaryDump(flows.txt, FIELDS aggregate link src dst);
//! ```

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_seconds, Args};
use rclick_core::packet::anno;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const TH_FIN: u8 = 0x01;
const TH_SYN: u8 = 0x02;
const TH_RST: u8 = 0x04;

/// A flow of one host pair.
struct Flow {
    /// Ports in the host pair's direction: source port << 16 | destination.
    ports: u32,
    aggregate: u32,
    /// The flow's first packet went from the pair's second host.
    reverse: bool,
    /// Bit 0/1: a FIN seen in direction 0/1; 3: done (RST or both FINs).
    over: u8,
    first: Timestamp,
    last: Timestamp,
    packets: [u32; 2],
    filepos: Option<u32>,
}

#[derive(Default)]
struct HostPairInfo {
    /// Most recently used first.
    flows: Vec<Flow>,
    /// Held packets (fragments and what follows them), oldest first.
    held: VecDeque<Packet>,
}

/// A host pair, lower address first.
type HostPair = (u32, u32);

#[derive(Default)]
struct FlowMap {
    pairs: HashMap<HostPair, HostPairInfo>,
    /// Host pairs in order of creation (for a stable TRACEINFO order).
    order: Vec<HostPair>,
}

/// The IP header the flow comes from: the packet's own, or the one an ICMP
/// error quotes. Offsets are into the packet's data.
#[derive(Clone, Copy)]
struct FlowHeader {
    /// Offset of the (possibly quoted) IP header.
    ip: usize,
    proto: u8,
    src: u32,
    dst: u32,
    id: u16,
    frag: u16,
    hl: usize,
}

impl FlowHeader {
    fn parse(data: &[u8], at: usize) -> Option<FlowHeader> {
        let h = data.get(at..at + 20)?;
        let hl = usize::from(h[0] & 0x0F) * 4;
        if hl < 20 {
            return None;
        }
        Some(FlowHeader {
            ip: at,
            proto: h[9],
            src: u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
            dst: u32::from_be_bytes([h[16], h[17], h[18], h[19]]),
            id: u16::from_be_bytes([h[4], h[5]]),
            frag: u16::from_be_bytes([h[6], h[7]]),
            hl,
        })
    }

    fn is_frag(&self) -> bool {
        self.frag & 0x3FFF != 0
    }

    fn first_frag(&self) -> bool {
        self.frag & 0x1FFF == 0
    }
}

/// The offset of the packet's IP header in its data.
fn ip_offset(p: &Packet) -> Option<usize> {
    let off = p.network_offset()?;
    usize::try_from(off).ok()
}

/// The header deciding `p`'s flow, as when it was first handled (`icmp`:
/// ICMP errors quote their flow).
fn good_header(p: &Packet, icmp: bool) -> Option<FlowHeader> {
    let data = p.data();
    let h = FlowHeader::parse(data, ip_offset(p)?)?;
    if icmp && h.proto == PROTO_ICMP && h.first_frag() {
        let icmp_at = h.ip + h.hl;
        let t = *data.get(icmp_at)?;
        // unreachable, source quench, redirect, time exceeded, parameter
        // problem
        if !matches!(t, 3 | 4 | 5 | 11 | 12) {
            return None;
        }
        let q = FlowHeader::parse(data, icmp_at + 8)?;
        // Click: the ICMP part must hold the quoted header.
        if data.len() < icmp_at + 8 + q.hl {
            return None;
        }
        return Some(q);
    }
    Some(h)
}

fn set_aggregate(p: &mut Packet, agg: u32) {
    p.set_anno_bytes(anno::AGGREGATE, &agg.to_ne_bytes());
}

fn aggregate_of(p: &Packet) -> u32 {
    u32::from_ne_bytes(p.anno_bytes::<4>(anno::AGGREGATE))
}

pub struct AggregateIPFlows {
    tcp_timeout: i64,
    tcp_done_timeout: i64,
    udp_timeout: i64,
    fragment_timeout: i64,
    smallest_timeout: i64,
    gc_interval: i64,
    icmp: bool,
    /// None: decided by the input's processing at initialization.
    fragments: Option<bool>,
    frag_on: bool,
    traceinfo_name: Option<String>,
    traceinfo: Option<Box<dyn Write + Send>>,
    /// The `<trace>` line is written (it needs SOURCE's handlers, read
    /// with the first packet).
    header_done: bool,
    source: Option<String>,
    has_filepos: bool,
    maps: [FlowMap; 2],
    next: u32,
    active_sec: i64,
    gc_sec: i64,
    timestamp_warned: bool,
}

impl Default for AggregateIPFlows {
    fn default() -> Self {
        AggregateIPFlows {
            tcp_timeout: 24 * 60 * 60,
            tcp_done_timeout: 30,
            udp_timeout: 60,
            fragment_timeout: 30,
            smallest_timeout: 30,
            gc_interval: 20 * 60,
            icmp: false,
            fragments: None,
            frag_on: true,
            traceinfo_name: None,
            traceinfo: None,
            header_done: false,
            source: None,
            has_filepos: false,
            maps: [FlowMap::default(), FlowMap::default()],
            next: 1,
            active_sec: 0,
            gc_sec: 0,
            timestamp_warned: false,
        }
    }
}

enum Action {
    Emit,
    Drop,
    Held,
}

/// `a` is older than `b`, comparing seconds circularly as Click does.
fn sec_older(a: i64, b: i64) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

impl AggregateIPFlows {
    fn stats(&self) -> bool {
        self.traceinfo.is_some()
    }

    /// Writes TRACEINFO's opening lines, naming SOURCE's file.
    fn write_header(&mut self, ctx: Option<&Ctx>) {
        if self.header_done || self.traceinfo.is_none() {
            return;
        }
        self.header_done = true;
        let mut file = String::new();
        if let (Some(src), Some(ctx)) = (&self.source, ctx) {
            if let Ok(f) = ctx.call_read(&format!("{src}.filename"), None) {
                if !f.trim().is_empty() {
                    file = format!(" file='{}'", f.trim());
                }
            }
            self.has_filepos = ctx
                .call_read(&format!("{src}.packet_filepos"), None)
                .is_ok();
        }
        if let Some(out) = self.traceinfo.as_mut() {
            let _ = write!(
                out,
                "<?xml version='1.0' standalone='yes'?>\n<trace{file}>\n"
            );
        }
    }

    fn describe(&mut self, hp: HostPair, f: &Flow) {
        let Some(out) = self.traceinfo.as_mut() else {
            return;
        };
        let (src, dst) = if f.reverse {
            (hp.1, hp.0)
        } else {
            (hp.0, hp.1)
        };
        let (sport, dport) = if f.reverse {
            (f.ports & 0xFFFF, f.ports >> 16)
        } else {
            (f.ports >> 16, f.ports & 0xFFFF)
        };
        let duration = Timestamp(f.last.nanos() - f.first.nanos());
        let _ = write!(
            out,
            "<flow aggregate='{}' src='{}' sport='{sport}' dst='{}' dport='{dport}' begin='{:#}' duration='{:#}'",
            f.aggregate,
            Ipv4Addr::from(src),
            Ipv4Addr::from(dst),
            f.first,
            duration
        );
        if let Some(pos) = f.filepos.filter(|&n| n != 0) {
            let _ = write!(out, " filepos='{pos}'");
        }
        let _ = write!(
            out,
            ">\n  <stream dir='0' packets='{}' /><stream dir='1' packets='{}' />\n</flow>\n",
            f.packets[0], f.packets[1]
        );
    }

    fn new_flow_stats(&self, f: &mut Flow, p: &Packet, ctx: &Ctx) {
        f.first = p.timestamp_anno();
        f.packets = [0, 0];
        f.filepos = None;
        if self.has_filepos {
            if let Some(src) = &self.source {
                f.filepos = ctx
                    .call_read(&format!("{src}.packet_filepos"), None)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
            }
        }
    }

    /// Click's packet emit hook: timestamps, TCP completion, counts.
    fn emit_hook(f: &mut Flow, p: &Packet, h: &FlowHeader, stats: bool) {
        f.last = p.timestamp_anno();
        let paint = p.paint_anno();
        if h.proto == PROTO_TCP && h.first_frag() && paint < 2 {
            let data = p.data();
            let t = h.ip + h.hl;
            // Only the flags need be there (NLANR traces cut TCP headers).
            if data.len() >= t + 14 {
                let flags = data[t + 13];
                if flags & TH_RST != 0 {
                    f.over = 3;
                } else if flags & TH_FIN != 0 {
                    f.over |= 1 << paint;
                } else if flags & TH_SYN != 0 {
                    f.over = 0;
                }
            }
        }
        if stats && paint < 2 {
            f.packets[usize::from(paint)] += 1;
        }
    }

    /// Handles `p`; its aggregate and paint annotations are set when it is
    /// emitted or held.
    fn handle(&mut self, p: &mut Packet, ctx: &mut Ctx) -> Action {
        if p.timestamp_anno().nanos() == 0 {
            if !self.timestamp_warned {
                ctx.chatter(&format!(
                    "{}: warning: packet received without timestamp",
                    ctx.element_name()
                ));
                self.timestamp_warned = true;
            }
            p.set_timestamp_anno(ctx.now());
        }
        let data = p.data();
        let Some(outer) = ip_offset(p).and_then(|o| FlowHeader::parse(data, o)) else {
            return Action::Drop;
        };
        let mut paint: u8 = 0;
        let h = if outer.proto == PROTO_ICMP && outer.first_frag() && self.icmp {
            paint = 2;
            match good_header(p, true) {
                Some(h) => h,
                None => return Action::Drop,
            }
        } else {
            outer
        };
        if (h.proto != PROTO_TCP && h.proto != PROTO_UDP) || (h.src == 0 && h.dst == 0) {
            return Action::Drop;
        }
        let udp = h.proto == PROTO_UDP;
        let hp = (h.src.min(h.dst), h.src.max(h.dst));
        if hp.0 != h.src {
            paint ^= 1;
        }
        let mut agg = 0;
        let mut found = false;
        if h.first_frag() {
            let t = h.ip + h.hl;
            let Some(pb) = data.get(t..t + 4) else {
                return Action::Drop;
            };
            let (sport, dport) = (
                u32::from(u16::from_be_bytes([pb[0], pb[1]])),
                u32::from(u16::from_be_bytes([pb[2], pb[3]])),
            );
            if hp.0 == hp.1 && sport > dport {
                paint ^= 1;
            }
            let ports = if paint & 1 != 0 {
                (dport << 16) | sport
            } else {
                (sport << 16) | dport
            };
            let syn = outer.proto == PROTO_TCP && {
                let t = outer.ip + outer.hl;
                data.get(t + 13).is_some_and(|f| f & TH_SYN != 0)
            };
            let reverse = self.find_flow(udp, hp, ports, paint & 1 != 0, syn, p, ctx);
            if reverse {
                paint ^= 1;
            }
            agg = self.flow_aggregate(udp, hp);
            found = true;
        }
        set_aggregate(p, agg);
        p.set_paint_anno(paint);
        let holding = self.maps[usize::from(udp)]
            .pairs
            .get(&hp)
            .is_some_and(|i| !i.held.is_empty());
        if (self.frag_on && h.is_frag()) || holding {
            return Action::Held;
        }
        if !found {
            return Action::Drop;
        }
        self.active_sec = p.timestamp_anno().sec();
        let stats = self.stats();
        if let Some(f) = self.maps[usize::from(udp)]
            .pairs
            .get_mut(&hp)
            .and_then(|i| i.flows.first_mut())
        {
            Self::emit_hook(f, p, &h, stats);
        }
        Action::Emit
    }

    /// The aggregate of the host pair's most recently used flow.
    fn flow_aggregate(&self, udp: bool, hp: HostPair) -> u32 {
        self.maps[usize::from(udp)]
            .pairs
            .get(&hp)
            .and_then(|i| i.flows.first())
            .map_or(0, |f| f.aggregate)
    }

    /// Finds or makes the flow and moves it to the front of its pair's
    /// list. Returns whether the flow's first packet went the other way.
    #[allow(clippy::too_many_arguments)]
    fn find_flow(
        &mut self,
        udp: bool,
        hp: HostPair,
        ports: u32,
        flipped: bool,
        syn: bool,
        p: &Packet,
        ctx: &Ctx,
    ) -> bool {
        let now_sec = p.timestamp_anno().sec();
        let map = &mut self.maps[usize::from(udp)];
        if !map.pairs.contains_key(&hp) {
            map.order.push(hp);
        }
        let info = map.pairs.entry(hp).or_default();
        if let Some(i) = info.flows.iter().position(|f| f.ports == ports) {
            let f = info.flows.remove(i);
            info.flows.insert(0, f);
            let (age, over) = {
                let f = &info.flows[0];
                (now_sec - f.last.sec(), f.over)
            };
            let timeout = if udp {
                self.udp_timeout
            } else if over == 3 {
                self.tcp_done_timeout
            } else {
                self.tcp_timeout
            };
            if (age > self.smallest_timeout && age > timeout) || (over == 3 && syn) {
                // The old flow died: describe it, and start a new one.
                let fresh = self.fresh_flow(ports, flipped, p.timestamp_anno());
                let old = self.maps[usize::from(udp)]
                    .pairs
                    .get_mut(&hp)
                    .map(|i| std::mem::replace(&mut i.flows[0], fresh));
                if let Some(old) = old {
                    self.describe(hp, &old);
                }
                self.next = self.next.wrapping_add(1);
                self.stat_hook_front(udp, hp, p, ctx);
            }
            return self.maps[usize::from(udp)]
                .pairs
                .get(&hp)
                .and_then(|i| i.flows.first())
                .is_some_and(|f| f.reverse);
        }
        let f = self.fresh_flow(ports, flipped, p.timestamp_anno());
        if let Some(info) = self.maps[usize::from(udp)].pairs.get_mut(&hp) {
            info.flows.insert(0, f);
        }
        self.next = self.next.wrapping_add(1);
        self.stat_hook_front(udp, hp, p, ctx);
        flipped
    }

    /// A new flow, last seen at `now` (see the element doc: Click leaves
    /// the time unset until a packet of the flow leaves).
    fn fresh_flow(&self, ports: u32, reverse: bool, now: Timestamp) -> Flow {
        Flow {
            ports,
            aggregate: self.next,
            reverse,
            over: 0,
            first: now,
            last: now,
            packets: [0, 0],
            filepos: None,
        }
    }

    fn stat_hook_front(&mut self, udp: bool, hp: HostPair, p: &Packet, ctx: &Ctx) {
        if !self.stats() {
            return;
        }
        let mut f = self.fresh_flow(0, false, Timestamp(0));
        self.new_flow_stats(&mut f, p, ctx);
        if let Some(front) = self.maps[usize::from(udp)]
            .pairs
            .get_mut(&hp)
            .and_then(|i| i.flows.first_mut())
        {
            front.first = f.first;
            front.packets = f.packets;
            front.filepos = f.filepos;
        }
    }

    /// Sends on the first held packet of a pair: a fragment without
    /// annotations takes those of a held fragment of the same IP ID, or is
    /// dropped.
    fn emit_head(&mut self, udp: bool, hp: HostPair, ctx: &mut Ctx) {
        let icmp = self.icmp;
        let stats = self.stats();
        let Some(info) = self.maps[usize::from(udp)].pairs.get_mut(&hp) else {
            return;
        };
        let Some(mut head) = info.held.pop_front() else {
            return;
        };
        let Some(h) = good_header(&head, icmp) else {
            return;
        };
        let agg = aggregate_of(&head);
        if agg != 0 {
            for q in info.held.iter_mut() {
                if good_header(q, icmp).is_some_and(|x| x.id == h.id) {
                    set_aggregate(q, agg);
                    q.set_paint_anno(head.paint_anno());
                }
            }
        } else {
            let donor = info.held.iter().find(|q| {
                aggregate_of(q) != 0 && good_header(q, icmp).is_some_and(|x| x.id == h.id)
            });
            match donor {
                Some(q) => {
                    let (a, paint) = (aggregate_of(q), q.paint_anno());
                    set_aggregate(&mut head, a);
                    head.set_paint_anno(paint);
                }
                None => return,
            }
        }
        let agg = aggregate_of(&head);
        if let Some(i) = info.flows.iter().position(|f| f.aggregate == agg) {
            let f = info.flows.remove(i);
            info.flows.insert(0, f);
            Self::emit_hook(&mut info.flows[0], &head, &h, stats);
        }
        ctx.emit(0, head);
    }

    /// Emits held packets at the head of a pair's line that are no
    /// fragment or have waited too long.
    fn drain(&mut self, udp: bool, hp: HostPair, ctx: &mut Ctx) {
        let frag_timeout = self.active_sec - self.fragment_timeout;
        let icmp = self.icmp;
        loop {
            let go = self.maps[usize::from(udp)]
                .pairs
                .get(&hp)
                .and_then(|i| i.held.front())
                .is_some_and(|head| {
                    head.timestamp_anno().sec() < frag_timeout
                        || !good_header(head, icmp).is_some_and(|h| h.is_frag())
                });
            if !go {
                break;
            }
            self.emit_head(udp, hp, ctx);
        }
    }

    fn hold(&mut self, p: Packet, ctx: &mut Ctx) {
        let Some(h) = good_header(&p, self.icmp) else {
            return;
        };
        let udp = h.proto == PROTO_UDP;
        let hp = (h.src.min(h.dst), h.src.max(h.dst));
        self.active_sec = p.timestamp_anno().sec();
        let map = &mut self.maps[usize::from(udp)];
        if !map.pairs.contains_key(&hp) {
            map.order.push(hp);
        }
        map.pairs.entry(hp).or_default().held.push_back(p);
        self.drain(udp, hp, ctx);
    }

    fn reap_map(&mut self, udp: bool, timeout: i64, done_timeout: i64, ctx: &mut Ctx) {
        let timeout = self.active_sec.wrapping_sub(timeout);
        let done_timeout = self.active_sec.wrapping_sub(done_timeout);
        let mut order = std::mem::take(&mut self.maps[usize::from(udp)].order);
        for &hp in &order {
            self.drain(udp, hp, ctx);
            let Some(info) = self.maps[usize::from(udp)].pairs.get_mut(&hp) else {
                continue;
            };
            if !info.held.is_empty() {
                continue;
            }
            let flows = std::mem::take(&mut info.flows);
            let mut keep = Vec::with_capacity(flows.len());
            let mut dead = Vec::new();
            for f in flows {
                let limit = if f.over == 3 { done_timeout } else { timeout };
                if sec_older(f.last.sec(), limit) {
                    dead.push(f);
                } else {
                    keep.push(f);
                }
            }
            if let Some(info) = self.maps[usize::from(udp)].pairs.get_mut(&hp) {
                info.flows = keep;
            }
            for f in &dead {
                self.describe(hp, f);
            }
        }
        // A host pair with no flow and nothing held is forgotten too (Click
        // keeps every host pair it has seen until the router stops, so a
        // long trace's table only grows).
        let map = &mut self.maps[usize::from(udp)];
        map.pairs
            .retain(|_, i| !i.flows.is_empty() || !i.held.is_empty());
        order.retain(|hp| map.pairs.contains_key(hp));
        map.order = order;
    }

    fn reap(&mut self, ctx: &mut Ctx) {
        if self.gc_sec != 0 {
            let (t, d, u) = (self.tcp_timeout, self.tcp_done_timeout, self.udp_timeout);
            self.reap_map(false, t, d, ctx);
            self.reap_map(true, u, u, ctx);
        }
        self.gc_sec = self.active_sec + self.gc_interval;
    }

    fn write_clear(&mut self, _v: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.write_header(Some(ctx));
        let (a, g) = (self.active_sec, self.gc_sec);
        self.active_sec = i64::from(i32::MAX);
        self.gc_sec = i64::from(i32::MAX);
        self.reap(ctx);
        self.active_sec = a;
        self.gc_sec = g;
        if let Some(out) = self.traceinfo.as_mut() {
            let _ = out.flush();
        }
        Ok(())
    }

    fn process(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        self.write_header(Some(ctx));
        let action = self.handle(&mut p, ctx);
        let out = match action {
            Action::Emit => Some(p),
            Action::Drop => {
                if ctx.noutputs() > 1 {
                    ctx.emit(1, p);
                }
                None
            }
            Action::Held => {
                self.hold(p, ctx);
                None
            }
        };
        if self.active_sec >= self.gc_sec {
            self.reap(ctx);
        }
        out
    }
}

const HANDLERS: &[Handler<AggregateIPFlows>] =
    &[Handler::write("clear", AggregateIPFlows::write_clear)];

rclick_core::element_class!(AggregateIPFlows);

fn seconds(s: &str) -> Result<i64, String> {
    let d = parse_seconds(s)?;
    Ok(i64::try_from(d.as_secs())
        .unwrap_or(i64::MAX)
        .min(u32::MAX as i64))
}

impl Element for AggregateIPFlows {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "a/ah"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let tcp = args.read_or_with("TCP_TIMEOUT", seconds, 24 * 60 * 60);
        let done = args.read_or_with("TCP_DONE_TIMEOUT", seconds, 30);
        let udp = args.read_or_with("UDP_TIMEOUT", seconds, 60);
        let frag = args.read_or_with("FRAGMENT_TIMEOUT", seconds, 30);
        let reap = args.read_or_with("REAP", seconds, 20 * 60);
        let icmp = args.read_or_with("ICMP", parse_bool, false);
        let traceinfo = args.read::<String>("TRACEINFO");
        let source = args.read::<String>("SOURCE");
        let fragments = args.read_with("FRAGMENTS", parse_bool);
        args.complete()?;
        if let Some(s) = &source {
            if ctx.find_element(s).is_none() {
                return Err(format!("SOURCE: no element named '{s}'").into());
            }
        }
        self.tcp_timeout = tcp;
        self.tcp_done_timeout = done;
        self.udp_timeout = udp;
        self.fragment_timeout = frag;
        self.gc_interval = reap;
        self.smallest_timeout = tcp.min(done).min(udp);
        self.icmp = icmp;
        self.fragments = fragments;
        self.traceinfo_name = traceinfo;
        self.source = source;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.next = 1;
        self.active_sec = 0;
        self.gc_sec = 0;
        let pull = ctx.input_is_pull(0);
        self.frag_on = match self.fragments {
            None => !pull,
            Some(true) if pull => return Err(
                "'FRAGMENTS true' is incompatible with pull; run this element in a push context"
                    .into(),
            ),
            Some(f) => f,
        };
        if let Some(name) = self.traceinfo_name.clone() {
            let out: Box<dyn Write + Send> = if name == "-" {
                Box::new(std::io::stdout())
            } else {
                let f = File::create(&name).map_err(|e| format!("{name}: {e}"))?;
                Box::new(BufWriter::new(f))
            };
            self.traceinfo = Some(out);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        for p in batch {
            if let Some(p) = self.process(p, ctx) {
                ctx.emit(0, p);
            }
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let batch = ctx.pull(0, max)?;
        let mut out = Batch::new();
        for p in batch {
            if let Some(p) = self.process(p, ctx) {
                out.push(p);
            }
        }
        (!out.is_empty()).then_some(out)
    }

    fn cleanup(&mut self) {
        self.write_header(None);
        // Held packets are dropped; every remaining flow is described.
        for udp in [false, true] {
            let order = std::mem::take(&mut self.maps[usize::from(udp)].order);
            for hp in order {
                if let Some(mut info) = self.maps[usize::from(udp)].pairs.remove(&hp) {
                    info.held.clear();
                    for f in &info.flows {
                        self.describe(hp, f);
                    }
                }
            }
        }
        let to_stdout = self.traceinfo_name.as_deref() == Some("-");
        if let Some(mut out) = self.traceinfo.take() {
            if !to_stdout {
                let _ = out.write_all(b"</trace>\n");
            }
            let _ = out.flush();
        }
    }
}
