//! The rewriter element shared by IPRewriter, TCPRewriter, UDPRewriter,
//! IPAddrRewriter, IPAddrPairRewriter and ICMPPingRewriter (not an element
//! class itself: each class's file documents and registers it with its
//! [`RwKind`]). Configuration, handlers, the reaping timer and the
//! per-packet path live here; flows and patterns in
//! [`rewriter_base`](super::rewriter_base).

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::conf::{parse_bool, parse_seconds, parse_u32, Args};
use rclick_core::element::hflags;
use rclick_core::element::kinds::dispatch_push;
use rclick_core::element::HandlerSpec;
use rclick_core::wire::{IcmpHeader, Ipv4Header, UdpHeader};
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet, TimerId, Timestamp};

use super::flowmap::prefetch_line;
use super::rewriter_base::*;
use crate::standard::paint::parse_anno;

/// Which class a [`Rewriter`] is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RwKind {
    Ip,
    Tcp,
    Udp,
    IpAddr,
    IpAddrPair,
    IcmpPing,
}

/// A rewriter element (see the class files for the documentation).
pub struct Rewriter {
    pub kind: RwKind,
    pub table: SharedTable,
    pub owner: usize,
    /// The main map, and IPRewriter's UDP map.
    pub maps: [usize; 2],
    /// The maps of [`Rewriter::fast_path`]'s UDP and TCP packets (in
    /// this order), [`NO_MAP`] for a protocol it leaves to `process`;
    /// set with `maps` (see [`Rewriter::set_maps`]).
    fast_maps: [usize; 2],
    /// The guarantees of the flows of `fast_maps` (by the same index),
    /// from the owner's timeouts, for [`Table::hit`].
    fast_guarantees: [Jiffies; 2],
    pub specs: Vec<InputSpec>,
    /// `ENDPOINT_INDEPENDENT` and `PORT_PARITY` (IPRewriter, TCPRewriter,
    /// UDPRewriter).
    mapping: MappingBehaviour,
    noutputs: usize,
    dst_anno: bool,
    reply_anno: Option<usize>,
    pub capacity_ref: Option<String>,
    reap_interval: Jiffies,
    timer: Option<TimerId>,
    /// Packets this element dropped itself (malformed, unhandled protocol
    /// without a `pass` spec, no mapping, table full).
    pub drops: u64,
    /// Fragmented datagrams of mapped flows, by their first fragment.
    /// In a cell: `process` takes `&self`, so that `push` can hold the
    /// table's guard while it runs.
    frags: std::cell::RefCell<Fragments>,
    /// Whether established flows take [`Rewriter::fast_path`] (always,
    /// but for tests comparing it with the general path: see
    /// [`Rewriter::set_fast_path`]).
    fast: std::sync::atomic::AtomicBool,
}

/// The datagrams whose first fragment was rewritten, so that their later
/// fragments are rewritten too (RFC 4787 REQ-14; Click drops them).
/// Bounded: FRAG_CAPACITY entries of FRAG_TIMEOUT.
struct Fragments {
    map: std::collections::HashMap<FragKey, FragEntry, crate::ip::ipcommon::AddrHashBuilder>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct FragKey {
    saddr: u32,
    daddr: u32,
    ident: u16,
    proto: u8,
}

#[derive(Clone, Copy)]
struct FragEntry {
    flow: usize,
    dir: usize,
    /// The flow's key in that direction, to notice a reused slot.
    key: FlowId,
    expiry: Jiffies,
}

const FRAG_CAPACITY: usize = 1024;
const FRAG_TIMEOUT: Jiffies = 30_000;

impl Default for Fragments {
    fn default() -> Self {
        Fragments {
            map: std::collections::HashMap::with_capacity_and_hasher(
                FRAG_CAPACITY,
                Default::default(),
            ),
        }
    }
}

impl Fragments {
    fn key(info: &IpInfo) -> FragKey {
        FragKey {
            saddr: info.saddr,
            daddr: info.daddr,
            ident: info.ident,
            proto: info.proto,
        }
    }

    fn remember(&mut self, info: &IpInfo, e: FragEntry, now: Jiffies) {
        if self.map.len() >= FRAG_CAPACITY {
            self.map.retain(|_, v| v.expiry > now);
            if self.map.len() >= FRAG_CAPACITY {
                return;
            }
        }
        self.map.insert(Self::key(info), e);
    }

    fn find(&mut self, info: &IpInfo, t: &Table, now: Jiffies) -> Option<(usize, usize)> {
        let k = Self::key(info);
        let e = *self.map.get(&k)?;
        let ok = e.expiry > now && t.live_flow(e.flow).is_some_and(|f| f.key[e.dir] == e.key);
        if !ok {
            self.map.remove(&k);
            return None;
        }
        if !info.more_frags {
            self.map.remove(&k);
        }
        Some((e.flow, e.dir))
    }
}

impl Rewriter {
    pub fn new(kind: RwKind) -> Self {
        Rewriter {
            kind,
            table: Arc::new(Mutex::new(Table::default())),
            owner: 0,
            maps: [0, 0],
            fast_maps: [NO_MAP; 2],
            fast_guarantees: [0; 2],
            specs: Vec::new(),
            mapping: MappingBehaviour::default(),
            noutputs: 1,
            dst_anno: true,
            reply_anno: None,
            capacity_ref: None,
            reap_interval: 15 * 60 * 1000,
            timer: None,
            drops: 0,
            frags: std::cell::RefCell::new(Fragments::default()),
            fast: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Turns the fast path for established flows off (or on again), so
    /// that a test can check its output against the general path's
    /// (through `Router::with_element`). Read once per batch.
    #[doc(hidden)]
    pub fn set_fast_path(&self, on: bool) {
        self.fast.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn set_maps(&mut self, maps: [usize; 2]) {
        self.maps = maps;
        self.fast_maps = match self.kind {
            RwKind::Ip => [maps[1], maps[0]],
            RwKind::Tcp => [NO_MAP, maps[0]],
            RwKind::Udp => [maps[0], NO_MAP],
            _ => [NO_MAP; 2],
        };
    }

    fn has_tcp_table(&self) -> bool {
        matches!(self.kind, RwKind::Ip | RwKind::Tcp)
    }
}

fn secs(s: &str) -> Result<Jiffies, String> {
    let d = parse_seconds(s)?;
    let ms = d.as_millis();
    // Click reads these as whole seconds.
    Ok(((ms + 500) / 1000).min(u32::MAX as u128) as Jiffies * 1000)
}

/// The rewriter that `name` names, as (its table, its capacity reference).
fn rewriter_at(ctx: &InitCtx, name: &str) -> Option<(SharedTable, Option<String>)> {
    let idx = ctx.find_element(name)?;
    ctx.with_element(idx, |e| {
        e.as_any()
            .downcast_ref::<Rewriter>()
            .map(|r| (r.table.clone(), r.capacity_ref.clone()))
    })
    .flatten()
}

impl Element for Rewriter {
    fn port_count(&self) -> &'static str {
        "1-/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::DEFAULT
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let mut t = Timeouts {
            timeout: 300_000,
            guarantee: 5_000,
            tcp_data: 86_400_000,
            tcp_done: 240_000,
            udp_timeout: 300_000,
            udp_guarantee: 5_000,
            udp_streaming: 0,
        };
        let mut dst_anno = true;
        let mut reply_anno = None;
        let mut udp_streaming = None;
        let mut mapping = MappingBehaviour::default();
        if matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) {
            if let Some(v) = args.read_with("ENDPOINT_INDEPENDENT", parse_bool) {
                mapping.endpoint_independent = v;
            }
            if let Some(v) = args.read_with("PORT_PARITY", parse_bool) {
                mapping.port_parity = v;
            }
        }
        match self.kind {
            RwKind::Ip | RwKind::Tcp => {
                if self.kind == RwKind::Ip {
                    if let Some(v) = args.read_with("UDP_TIMEOUT", secs) {
                        t.udp_timeout = v;
                    }
                    udp_streaming = args.read_with("UDP_STREAMING_TIMEOUT", secs);
                    if let Some(v) = args.read_with("UDP_GUARANTEE", secs) {
                        t.udp_guarantee = v;
                    }
                }
                if let Some(v) = args.read_with("TCP_NODATA_TIMEOUT", secs) {
                    t.timeout = v;
                }
                if let Some(v) = args.read_with("TCP_GUARANTEE", secs) {
                    t.guarantee = v;
                }
                if let Some(v) = args.read_with("TIMEOUT", secs) {
                    t.tcp_data = v;
                }
                if let Some(v) = args.read_with("TCP_TIMEOUT", secs) {
                    t.tcp_data = v;
                }
                if let Some(v) = args.read_with("TCP_DONE_TIMEOUT", secs) {
                    t.tcp_done = v;
                }
                if let Some(v) = args.read_with("DST_ANNO", parse_bool) {
                    dst_anno = v;
                }
                reply_anno = args.read_with("REPLY_ANNO", |s| parse_anno(s, 1));
            }
            RwKind::Udp => {
                if let Some(v) = args.read_with("DST_ANNO", parse_bool) {
                    dst_anno = v;
                }
                reply_anno = args.read_with("REPLY_ANNO", |s| parse_anno(s, 1));
                if let Some(v) = args.read_with("UDP_TIMEOUT", secs) {
                    t.timeout = v;
                }
                udp_streaming = args.read_with("UDP_STREAMING_TIMEOUT", secs);
                if let Some(v) = args.read_with("STREAMING_TIMEOUT", secs) {
                    udp_streaming = Some(v);
                }
                if let Some(v) = args.read_with("UDP_GUARANTEE", secs) {
                    t.guarantee = v;
                }
            }
            RwKind::IcmpPing => {
                if let Some(v) = args.read_with("DST_ANNO", parse_bool) {
                    dst_anno = v;
                }
            }
            RwKind::IpAddr | RwKind::IpAddrPair => {}
        }

        let capacity_word: Option<String> = args.read("CAPACITY");
        let capacity_word = args.read::<String>("MAPPING_CAPACITY").or(capacity_word);
        if let Some(v) = args.read_with("TIMEOUT", secs) {
            t.timeout = v;
        }
        if let Some(v) = args.read_with("GUARANTEE", secs) {
            t.guarantee = v;
        }
        if self.kind == RwKind::Udp {
            // UDPRewriter's flows are all UDP flows, timed by the base
            // TIMEOUT and GUARANTEE.
            t.udp_timeout = t.timeout;
            t.udp_guarantee = t.guarantee;
        }
        t.udp_streaming = udp_streaming.unwrap_or(t.udp_timeout);
        let mut reap = self.reap_interval;
        if let Some(v) = args.read_with("REAP_INTERVAL", secs) {
            reap = v;
        }
        if let Some(v) = args.read_with("REAP_TIME", secs) {
            reap = v;
        }
        let rest = args.consume()?;
        let mut errors: Vec<String> = Vec::new();
        let mut capacity = None;
        let mut capacity_ref = None;
        if let Some(w) = capacity_word {
            if let Ok(c) = rclick_core::conf::parse_i32(&w) {
                capacity = Some(c.max(0) as u32);
            } else if rewriter_at(ictx, &w).is_some() {
                capacity_ref = Some(w);
            } else {
                errors.push("bad MAPPING_CAPACITY".into());
            }
        }
        let ninputs = ictx.ninputs();
        self.noutputs = ictx.noutputs();
        if self.noutputs > MAX_OUTPUTS {
            // Reported with the other errors: the specs are still checked.
            errors.push(format!("too many outputs (at most {MAX_OUTPUTS})"));
        }
        if mapping.port_parity && !mapping.endpoint_independent {
            errors.push("PORT_PARITY needs ENDPOINT_INDEPENDENT true".into());
        }
        if rest.len() != ninputs {
            errors.push(format!("need {ninputs} arguments, one per input port"));
            return Err(errors.into());
        }
        let mut specs = Vec::new();
        for (i, s) in rest.iter().enumerate() {
            match InputSpec::parse(s, i, self.noutputs, ictx) {
                Ok(spec) => specs.push(spec),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(errors.into());
        }
        // Commit.
        let mut table = Table::default();
        if let Some(c) = capacity {
            table.capacity = c;
        }
        self.owner = table.new_owner(ictx.element_name(), ninputs);
        table.owners[self.owner].timeouts = t;
        // The classes of the fast maps' flows (see `map_of`): UDP flows
        // in the first, TCP-class ones in the second, for every class
        // that has the map.
        self.fast_guarantees = [t.guarantee(FlowClass::Udp), t.guarantee(FlowClass::Tcp)];
        let m0 = table.new_map();
        let m1 = if self.kind == RwKind::Ip {
            table.new_map()
        } else {
            m0
        };
        self.set_maps([m0, m1]);
        self.table = Arc::new(Mutex::new(table));
        self.specs = specs;
        self.mapping = mapping;
        self.dst_anno = dst_anno;
        self.reply_anno = reply_anno;
        self.capacity_ref = capacity_ref;
        self.reap_interval = reap;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        // Join the table of the rewriter whose capacity this one shares.
        if let Some(name) = self.capacity_ref.clone() {
            let mut cur = name;
            let mut root = None;
            for _ in 0..64 {
                match rewriter_at(ctx, &cur) {
                    Some((t, None)) => {
                        root = Some(t);
                        break;
                    }
                    Some((t, Some(next))) => {
                        root = Some(t);
                        cur = next;
                    }
                    None => break,
                }
            }
            if let Some(root) = root {
                if !Arc::ptr_eq(&root, &self.table) {
                    let (t, name, ninputs) = {
                        let old = lock_table(&self.table);
                        let o = &old.owners[self.owner];
                        (o.timeouts, o.name.clone(), o.counts.len())
                    };
                    let mut r = lock_table(&root);
                    self.owner = r.new_owner(&name, ninputs);
                    r.owners[self.owner].timeouts = t;
                    let m0 = r.new_map();
                    let m1 = if self.kind == RwKind::Ip {
                        r.new_map()
                    } else {
                        m0
                    };
                    self.set_maps([m0, m1]);
                    drop(r);
                    self.table = root;
                }
            }
        }
        let timer = ctx.new_timer();
        self.timer = Some(timer);
        if self.reap_interval > 0 {
            ctx.schedule_timer_at(
                timer,
                ctx.now() + Timestamp::from_sec_nsec(0, self.reap_interval * 1_000_000),
            );
        }
        Ok(())
    }

    /// Hot swap: the mappings of the rewriter of the same name and class
    /// carry over (spec-made, dynamic and pinned ones alike), so that a
    /// new configuration does not cut the connections through the NAT; a
    /// mapping whose output or input is gone stays behind. An rclick
    /// addition (Click's rewriters start empty).
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<Rewriter>() else {
            return false;
        };
        if o.kind != self.kind || Arc::ptr_eq(&o.table, &self.table) {
            return false;
        }
        let maps = [(o.maps[0], self.maps[0]), (o.maps[1], self.maps[1])];
        let old_t = lock_table(&o.table);
        let mut t = lock_table(&self.table);
        t.adopt(&old_t, o.owner, self.owner, &maps, self.noutputs);
        self.drops = o.drops;
        true
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        let now = jiffies(ctx);
        lock_table(&self.table).shrink(false, now);
        if self.reap_interval > 0 {
            ctx.schedule_timer_after(
                timer,
                Timestamp::from_sec_nsec(0, self.reap_interval * 1_000_000),
            );
        }
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        // The driver's latest clock read, as Click's jiffies (its
        // `Timestamp::recent()`, brought up to date when timers run): no
        // clock read per batch.
        let now = recent_jiffies(ctx);
        let this = &*self;
        let mut t = lock_table(&this.table);
        let fast = this.fast.load(std::sync::atomic::Ordering::Relaxed);
        if batch.len() == 1 {
            // One packet (BURST 1): no dispatch set-up; the batch goes on
            // with the packet in it.
            let Some(p) = batch.pop() else { return };
            match this.process(port, p, &mut t, now, fast) {
                Some((out, p)) => {
                    drop(t);
                    batch.push(p);
                    ctx.emit_batch(out, batch);
                }
                None => {
                    drop(t);
                    self.drops += 1;
                }
            }
            return;
        }
        if fast
            && t.size() >= LOOK_AHEAD_MIN_FLOWS
            && matches!(this.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp)
        {
            let mut found = [NO_HINT; BATCH_CAPACITY];
            this.look_ahead(&batch, &t, &mut found);
            // Each packet takes the entry found for it while the maps'
            // entries stay as they were found. The general path may add
            // flows (their keys were not found: no entry to go stale) and
            // remove or replace them (a removed flow's slot can go to a
            // new flow at once): after that, lookups are made afresh.
            let found_at = t.entries_changed();
            let mut next = 0;
            let mut dropped = 0;
            dispatch_push(batch, ctx, |mut p, _| {
                // `next` is past the batch (no hint) once the hints are
                // given up.
                let hint = found.get(next).copied().unwrap_or(NO_HINT);
                next += 1;
                let known_miss = match this.fast_path_inner(&mut p, &mut t, now, hint) {
                    Some(Fast::Done(out)) => return Some((out, p)),
                    Some(Fast::Miss) => true,
                    _ => false,
                };
                let r = this.process_general(port, p, &mut t, now, known_miss);
                if t.entries_changed() != found_at {
                    next = BATCH_CAPACITY;
                }
                dropped += r.is_none() as u64;
                r
            });
            drop(t);
            self.drops += dropped;
            return;
        }
        // The batch is rewritten in place; it leaves whole when every
        // packet takes the same output, else packet by packet in arrival
        // order (Click's order where two outputs meet again downstream).
        let mut dropped = 0;
        dispatch_push(batch, ctx, |p, _| {
            let r = this.process(port, p, &mut t, now, fast);
            dropped += r.is_none() as u64;
            r
        });
        drop(t);
        self.drops += dropped;
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut v = Vec::new();
        match self.kind {
            RwKind::Ip => {
                v.push(HandlerSpec::read("tcp_table"));
                v.push(HandlerSpec::read("udp_table"));
                v.push(HandlerSpec::read("tcp_mappings").with(hflags::DEPRECATED));
                v.push(HandlerSpec::read("udp_mappings").with(hflags::DEPRECATED));
                v.push(HandlerSpec::read_param("tcp_lookup"));
            }
            RwKind::Tcp => {
                v.push(HandlerSpec::read("table"));
                v.push(HandlerSpec::read("mappings").with(hflags::DEPRECATED));
                v.push(HandlerSpec::read_param("lookup"));
            }
            _ => {
                v.push(HandlerSpec::read("table"));
                v.push(HandlerSpec::read("mappings").with(hflags::DEPRECATED));
            }
        }
        v.push(HandlerSpec::read("table_size"));
        v.push(HandlerSpec::read("nmappings").with(hflags::DEPRECATED));
        v.push(HandlerSpec::read("mapping_failures"));
        v.push(HandlerSpec::read("patterns"));
        v.push(HandlerSpec::read("size"));
        v.push(HandlerSpec::read_write("capacity"));
        v.push(HandlerSpec::write("clear"));
        for i in 0..self.specs.len() {
            v.push(HandlerSpec::read_write(&format!("pattern{i}")));
        }
        // rclick's own, listed after Click's.
        if matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) {
            v.insert(0, HandlerSpec::write("remove_mapping"));
            v.insert(0, HandlerSpec::write("add_mapping"));
            v.insert(0, HandlerSpec::read("bindings"));
        }
        v.insert(0, HandlerSpec::read("timeouts"));
        v.insert(0, HandlerSpec::read("mapping_count"));
        v.insert(0, HandlerSpec::read("drops"));
        v
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        let now = jiffies(ctx);
        let t = lock_table(&self.table);
        let owner = &t.owners[self.owner];
        let tcpish = self.has_tcp_table();
        let s = match name {
            "drops" => format!("{}", self.drops),
            "bindings" => format!("{}", t.binding_count()),
            "tcp_table" | "tcp_mappings" if self.kind == RwKind::Ip => {
                t.unparse_map(self.maps[0], now)
            }
            "udp_table" | "udp_mappings" if self.kind == RwKind::Ip => {
                t.unparse_map(self.maps[1], now)
            }
            "table" | "mappings" if self.kind != RwKind::Ip => t.unparse_map(self.maps[0], now),
            "tcp_lookup" | "lookup"
                if tcpish && ((name == "tcp_lookup") == (self.kind == RwKind::Ip)) =>
            {
                let words = space_words(param.unwrap_or(""));
                let [sa, sp, da, dp] = words.as_slice() else {
                    return Err("expected SADDR SPORT DADDR DPORT".into());
                };
                let addr = |s: &str| {
                    rclick_core::conf::parse_ipv4(s)
                        .map(u32::from)
                        .map_err(|_| format!("expected IP address, got '{s}'"))
                };
                let port = |s: &str| {
                    rclick_core::conf::parse_u16(s).map_err(|_| format!("expected port, got '{s}'"))
                };
                let key = FlowId::new(addr(sa)?, port(sp)?, addr(da)?, port(dp)?);
                match t.lookup(self.maps[0], &key) {
                    Some((f, d)) => {
                        let r = t.flow(f).rewritten(d);
                        format!(
                            "{} {} {} {}",
                            Ipv4Addr::from(r.saddr),
                            r.sport,
                            Ipv4Addr::from(r.daddr),
                            r.dport
                        )
                    }
                    None => String::new(),
                }
            }
            "table_size" | "mapping_count" => format!("{}", t.size()),
            "timeouts" => self.timeouts_text(&owner.timeouts),
            "nmappings" => format!("{}", owner.counts.iter().map(|&c| c as u64).sum::<u64>()),
            "mapping_failures" => {
                format!("{}", owner.failures.iter().map(|&c| c as u64).sum::<u64>())
            }
            "size" => format!("{}", t.size()),
            "capacity" => format!("{}", t.capacity),
            "patterns" => {
                let mut s = String::new();
                for i in 0..self.specs.len() {
                    s += &self.pattern_line(i, owner);
                }
                s
            }
            _ => {
                let i = name
                    .strip_prefix("pattern")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&i| i < self.specs.len())
                    .ok_or_else(|| rclick_core::element::no_handler(name))?;
                self.pattern_line(i, owner)
            }
        };
        Ok(s)
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let now = jiffies(ctx);
        match name {
            "capacity" => {
                let c = parse_u32(value.trim()).map_err(|e| format!("CAPACITY: {e}"))?;
                let mut t = lock_table(&self.table);
                t.capacity = c.min(DEFAULT_CAPACITY);
                t.shrink(false, now);
                Ok(())
            }
            "clear" => {
                lock_table(&self.table).shrink(true, now);
                Ok(())
            }
            "add_mapping" if matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) => {
                let (left, right) = value
                    .split_once("=>")
                    .ok_or("expected 'PROTO SADDR SPORT DADDR DPORT => NEWSADDR NEWSPORT NEWDADDR NEWDPORT [FOUTPUT ROUTPUT] [dynamic]'")?;
                let (proto, flow) = self.parse_flow(left)?;
                let mut words = space_words(right);
                let pinned = match words.last().map(|w| w.to_ascii_lowercase()) {
                    Some(w) if w == "dynamic" => {
                        words.pop();
                        false
                    }
                    Some(w) if w == "pinned" => {
                        words.pop();
                        true
                    }
                    _ => true,
                };
                if words.len() != 4 && words.len() != 6 {
                    return Err("expected 'NEWSADDR NEWSPORT NEWDADDR NEWDPORT [FOUTPUT ROUTPUT] [dynamic]' after '=>'".into());
                }
                let rw = parse_flow_words(&words[..4])?;
                let out = if words.len() == 6 {
                    let mut o = [0usize; 2];
                    for (i, w) in words[4..].iter().enumerate() {
                        o[i] = w
                            .parse::<usize>()
                            .ok()
                            .filter(|&v| v < self.noutputs)
                            .ok_or_else(|| format!("output port out of range: '{w}'"))?;
                    }
                    o
                } else {
                    self.default_outputs()
                };
                let (map, class) = self.map_of(proto);
                let mut t = lock_table(&self.table);
                t.add_manual(pinned, self.owner, map, proto, class, flow, rw, out, now)
                    .map(|_| ())
                    .ok_or_else(|| "mapping table full".to_string())
            }
            "remove_mapping" if matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) => {
                let (proto, flow) = self.parse_flow(value)?;
                let (map, _) = self.map_of(proto);
                if lock_table(&self.table).remove_key(map, &flow) {
                    Ok(())
                } else {
                    Err(format!("no mapping for {flow}"))
                }
            }
            _ => {
                let i = name
                    .strip_prefix("pattern")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&i| i < self.specs.len())
                    .ok_or_else(|| rclick_core::element::no_handler(name))?;
                let ictx = ctx.init_ctx();
                let spec = InputSpec::parse(value, i, self.noutputs, &ictx)?;
                lock_table(&self.table).destroy_input(self.owner, i);
                self.specs[i] = spec;
                Ok(())
            }
        }
    }
}

/// `SADDR SPORT DADDR DPORT` as a flow.
fn parse_flow_words(words: &[String]) -> Result<FlowId, String> {
    let [sa, sp, da, dp] = words else {
        return Err("expected SADDR SPORT DADDR DPORT".into());
    };
    let addr = |s: &str| {
        rclick_core::conf::parse_ipv4(s)
            .map(u32::from)
            .map_err(|_| format!("expected IP address, got '{s}'"))
    };
    let port =
        |s: &str| rclick_core::conf::parse_u16(s).map_err(|_| format!("expected port, got '{s}'"));
    Ok(FlowId::new(addr(sa)?, port(sp)?, addr(da)?, port(dp)?))
}

/// No map: see [`Rewriter::fast_maps`].
const NO_MAP: usize = usize::MAX;

/// What [`Rewriter::fast_path`] did with a packet.
enum Fast {
    /// Rewritten; leaves by this output.
    Done(usize),
    /// Untouched: its flow (an unfragmented TCP or UDP packet's) has no
    /// mapping.
    Miss,
    /// Untouched, for the general path.
    Other,
}

/// Tables of at least this many live flows (about 1 MB of flows and
/// maps, a core's second-level cache) have a batch's lookups made ahead,
/// see [`Rewriter::look_ahead`]. Below, they mostly hit the cache, and
/// the extra pass costs more than it saves.
const LOOK_AHEAD_MIN_FLOWS: usize = 1 << 12;

/// No map entry found ahead (see [`Rewriter::look_ahead`]): no entry
/// takes this value (it is a flow map's free-slot mark).
const NO_HINT: u32 = u32::MAX;

impl Rewriter {
    /// With a table larger than the caches, an established flow's packet
    /// waits for memory twice in a row: for the map slot of its key (where
    /// a hash puts it, which no hardware prefetcher guesses), then for its
    /// flow (named by the slot). Done packet by packet, a batch pays these
    /// waits one after another. Here every packet's lookup is made before
    /// the batch is processed, in two rounds: first each packet's first
    /// map slot is asked for (a hash and a hint, no wait), then each
    /// packet's lookup is finished (its slot arrived meanwhile) and its
    /// flow asked for. The waits of a batch so overlap. `found` gets the
    /// map entries, [`NO_HINT`] where the fast path will find none.
    fn look_ahead(&self, batch: &Batch, t: &Table, found: &mut [u32; BATCH_CAPACITY]) {
        let packets = batch.packets();
        let mut begun = [None; BATCH_CAPACITY];
        for (p, b) in packets.iter().zip(begun.iter_mut()) {
            *b = self
                .fast_key(p)
                .and_then(|(map, key)| t.start_lookup(map, &key));
        }
        for (b, e) in begun[..packets.len()].iter().zip(found.iter_mut()) {
            *e = match b.as_ref().and_then(|(m, probe)| m.finish(probe)) {
                Some(v) => {
                    prefetch_line(t.flow(entry_of(v).0) as *const Flow);
                    v
                }
                None => NO_HINT,
            };
        }
    }

    /// The flow key and fast map of a packet [`Rewriter::fast_path`]
    /// would look up (the same checks of the same header bytes, read
    /// only), for [`Rewriter::look_ahead`].
    #[inline(always)]
    fn fast_key(&self, p: &Packet) -> Option<(usize, FlowId)> {
        let off = usize::try_from(p.network_offset()?).ok()?;
        let h = p.data().get(off..)?.first_chunk::<24>()?;
        let (_, map) = self.fast_map_of(h)?;
        Some((map, header_key(h)))
    }

    /// The fast path's test of a packet's first 24 header bytes (IP
    /// header and ports): version 4 with a 20-byte header (a header with
    /// options takes the general path), no fragment offset and no
    /// more-fragments flag, TCP or UDP with a fast map. Whether it is TCP,
    /// and the map.
    #[inline(always)]
    fn fast_map_of(&self, h: &[u8; 24]) -> Option<(bool, usize)> {
        if h[0] != 0x45 || (h[6] & 0x3f) | h[7] != 0 {
            return None;
        }
        let tcp = match h[9] {
            IP_PROTO_UDP => false,
            IP_PROTO_TCP => true,
            _ => return None,
        };
        let map = self.fast_maps[usize::from(tcp)];
        (map != NO_MAP).then_some((tcp, map))
    }
}

/// The flow key of an IP header with its ports (`h`: the 20-byte header
/// and the first 4 transport bytes).
#[inline(always)]
fn header_key(h: &[u8; 24]) -> FlowId {
    FlowId::new(
        u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
        u16::from_be_bytes([h[20], h[21]]),
        u32::from_be_bytes([h[16], h[17], h[18], h[19]]),
        u16::from_be_bytes([h[22], h[23]]),
    )
}

impl Rewriter {
    /// `PROTO SADDR SPORT DADDR DPORT` (PROTO `tcp`, `udp`, or a number)
    /// for the mapping handlers, checked against the class.
    fn parse_flow(&self, text: &str) -> Result<(u8, FlowId), String> {
        let words = space_words(text);
        let Some((p, rest)) = words.split_first() else {
            return Err("expected PROTO SADDR SPORT DADDR DPORT".into());
        };
        let proto = match p.to_ascii_lowercase().as_str() {
            "tcp" => IP_PROTO_TCP,
            "udp" => IP_PROTO_UDP,
            "dccp" => IP_PROTO_DCCP,
            w => w
                .parse::<u8>()
                .map_err(|_| format!("expected 'tcp' or 'udp', got '{p}'"))?,
        };
        let ok = match self.kind {
            RwKind::Ip => matches!(proto, IP_PROTO_TCP | IP_PROTO_UDP),
            RwKind::Tcp => proto == IP_PROTO_TCP,
            _ => matches!(proto, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_DCCP),
        };
        if !ok {
            return Err(format!("protocol '{p}' is not rewritten by this element"));
        }
        Ok((proto, parse_flow_words(rest)?))
    }

    /// The `timeouts` handler: the timeout keywords of this class with
    /// their values in seconds, one per line, as they can be written in
    /// its configuration.
    fn timeouts_text(&self, t: &Timeouts) -> String {
        // Whole seconds: the keywords are read as such (see `secs`).
        let secs = |j: Jiffies| j / 1000;
        let words: &[(&str, Jiffies)] = match self.kind {
            RwKind::Ip => &[
                ("TCP_TIMEOUT", t.tcp_data),
                ("TCP_DONE_TIMEOUT", t.tcp_done),
                ("TCP_NODATA_TIMEOUT", t.timeout),
                ("TCP_GUARANTEE", t.guarantee),
                ("UDP_TIMEOUT", t.udp_timeout),
                ("UDP_STREAMING_TIMEOUT", t.udp_streaming),
                ("UDP_GUARANTEE", t.udp_guarantee),
            ],
            RwKind::Tcp => &[
                ("TCP_TIMEOUT", t.tcp_data),
                ("TCP_DONE_TIMEOUT", t.tcp_done),
                ("TCP_NODATA_TIMEOUT", t.timeout),
                ("TCP_GUARANTEE", t.guarantee),
            ],
            RwKind::Udp => &[
                ("TIMEOUT", t.udp_timeout),
                ("STREAMING_TIMEOUT", t.udp_streaming),
                ("GUARANTEE", t.udp_guarantee),
            ],
            _ => &[("TIMEOUT", t.timeout), ("GUARANTEE", t.guarantee)],
        };
        let mut out = String::new();
        for (k, v) in words.iter().chain(&[("REAP_INTERVAL", self.reap_interval)]) {
            out += &format!("{k} {}\n", secs(*v));
        }
        out
    }

    /// The map and flow class of a protocol's flows.
    fn map_of(&self, proto: u8) -> (usize, FlowClass) {
        match (self.kind, proto) {
            (RwKind::Ip, IP_PROTO_UDP) => (self.maps[1], FlowClass::Udp),
            (RwKind::Udp, _) => (self.maps[0], FlowClass::Udp),
            _ => (self.maps[0], FlowClass::Tcp),
        }
    }

    /// The outputs of an added mapping without FOUTPUT ROUTPUT: those of
    /// the first input spec that has them, else 0 and 1 (0 and 0 with a
    /// single output).
    fn default_outputs(&self) -> [usize; 2] {
        for s in &self.specs {
            if matches!(s.kind, SpecKind::Keep | SpecKind::Pattern(_)) {
                return [s.foutput, s.routput];
            }
        }
        [0, 1.min(self.noutputs.saturating_sub(1))]
    }

    fn pattern_line(&self, i: usize, owner: &Owner) -> String {
        let mut s = self.specs[i].unparse();
        let c = owner.counts.get(i).copied().unwrap_or(0);
        if c != 0 {
            s += &format!(" [{c}]");
        }
        s.push('\n');
        s
    }

    /// Sends a packet the rewriter does not rewrite to its input's `pass`
    /// output, or drops it.
    fn unhandled(&self, port: usize, p: Packet) -> Option<(usize, Packet)> {
        let spec = self.specs.get(port)?;
        match spec.kind {
            SpecKind::NoChange => Some((spec.foutput, p)),
            _ => None,
        }
    }

    /// The path of most packets: an unfragmented TCP or UDP packet of a
    /// flow with a mapping, rewritten from the header bytes in place with
    /// one lookup. Anything else is left untouched for
    /// [`Rewriter::process`] to handle in full: other protocols,
    /// fragments, short or odd headers, a table miss ([`Fast::Miss`]: the
    /// key is known not to be in the table), a TCP header without its
    /// checksum or a flow with sequence number deltas. Does what `process`
    /// does for such a packet, byte for byte.
    #[inline(always)]
    fn fast_path(&self, p: &mut Packet, t: &mut Table, now: Jiffies) -> Fast {
        self.fast_path_inner(p, t, now, NO_HINT)
            .unwrap_or(Fast::Other)
    }

    /// `hint`: the packet's map entry as [`Rewriter::look_ahead`] found
    /// it (the table unchanged since), or [`NO_HINT`] to look it up.
    #[inline(always)]
    fn fast_path_inner(
        &self,
        p: &mut Packet,
        t: &mut Table,
        now: Jiffies,
        hint: u32,
    ) -> Option<Fast> {
        let off = usize::try_from(p.network_offset()?).ok()?;
        // The packet is made writable first, so that its headers are
        // found once for reading and writing (a shared buffer is copied
        // even when the packet then takes the general path: a copy no one
        // can tell from the original).
        let w = p.writable().get_mut(off..)?;
        // The IP header and the ports, as one array: the fields below are
        // read and written at fixed offsets, without a bounds check each.
        let (h, l4) = w.split_first_chunk_mut::<24>()?;
        // Version 4 with a 20-byte header (a header with options takes
        // the general path), no fragment offset and no more-fragments
        // flag. (The test `fast_map_of` makes, written out again: as a
        // call, even inlined, it cost 19 instructions a lap at BURST 1.)
        if h[0] != 0x45 || (h[6] & 0x3f) | h[7] != 0 {
            return None;
        }
        let tcp = match h[9] {
            IP_PROTO_UDP => false,
            IP_PROTO_TCP => true,
            _ => return None,
        };
        let map = self.fast_maps[usize::from(tcp)];
        // The transport checksum (TCP's at transport bytes 16-17, UDP's
        // at 6-7), `l4` starting at transport byte 4.
        let sum_at = if tcp { 12 } else { 2 };
        if map == NO_MAP || l4.len() < sum_at + 2 {
            return None;
        }
        let key = || header_key(h);
        let (f, dir) = if hint != NO_HINT {
            debug_assert_eq!(t.lookup(map, &key()), Some(entry_of(hint)));
            entry_of(hint)
        } else {
            let Some(e) = t.lookup(map, &key()) else {
                return Some(Fast::Miss);
            };
            e
        };
        let fl = t.flow(f);
        if fl.has_seq {
            return None;
        }
        let out = fl.out[dir] as usize;
        // The flow as it leaves: the other direction's key reversed.
        let back = fl.key[dir ^ 1];
        // A reply applies the opposite change: the deltas' complements.
        let flip = 0u16.wrapping_sub(dir as u16);
        let (ip_delta, l4_delta) = (fl.ip_delta ^ flip, fl.l4_delta ^ flip);
        let reply_anno = fl.reply_anno;
        h[12..16].copy_from_slice(&back.daddr.to_be_bytes());
        h[16..20].copy_from_slice(&back.saddr.to_be_bytes());
        let c = add_checksum_delta(u16::from_be_bytes([h[10], h[11]]), ip_delta);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h[20..24].copy_from_slice(
            &((u32::from(back.dport) << 16) | u32::from(back.sport)).to_be_bytes(),
        );
        // As `process`: a TCP packet's flags and payload, for the flow's
        // state, in a TCP-class flow; a UDP-class flow counts packets.
        let total_len = usize::from(u16::from_be_bytes([h[2], h[3]]));
        let sum = &mut l4[sum_at..sum_at + 2];
        let c = u16::from_be_bytes([sum[0], sum[1]]);
        let tcp_state = if tcp {
            sum.copy_from_slice(&add_checksum_delta(c, l4_delta).to_be_bytes());
            let (doff, flags) = (l4[8], l4[9]);
            Some((flags, 20 + usize::from(doff >> 4) * 4 < total_len))
        } else {
            // RFC 768: 0 is "no checksum" and stays; a computed 0 is sent
            // as 0xffff (see `apply_udp_delta`).
            let c = if c == 0 {
                0
            } else {
                match add_checksum_delta(c, l4_delta) {
                    0 => 0xffff,
                    c => c,
                }
            };
            sum.copy_from_slice(&c.to_be_bytes());
            None
        };
        if self.dst_anno {
            p.set_dst_ip_anno(Ipv4Addr::from(back.saddr));
        }
        if dir == 1 {
            if let Some(a) = self.reply_anno {
                if let Some(b) = p.anno_mut().get_mut(a) {
                    *b = reply_anno;
                }
            }
        }
        t.hit(
            f,
            dir,
            tcp_state,
            self.fast_guarantees[usize::from(tcp)],
            now,
        );
        Some(Fast::Done(out))
    }

    /// One packet: its output, or `None` when it is dropped. `fast`:
    /// try [`Rewriter::fast_path`] first. The fast path is inline in
    /// both of `push`'s paths; the rest is out of line, so that the
    /// packet loop around the fast path stays small enough to keep its
    /// values in registers.
    #[inline(always)]
    fn process(
        &self,
        port: usize,
        mut p: Packet,
        t: &mut Table,
        now: Jiffies,
        fast: bool,
    ) -> Option<(usize, Packet)> {
        let known_miss = if fast {
            match self.fast_path(&mut p, t, now) {
                Fast::Done(out) => return Some((out, p)),
                Fast::Miss => true,
                Fast::Other => false,
            }
        } else {
            false
        };
        self.process_general(port, p, t, now, known_miss)
    }

    /// [`Rewriter::process`] past the fast path: `known_miss` says the
    /// fast path found the packet's flow key absent.
    #[inline(never)]
    fn process_general(
        &self,
        port: usize,
        mut p: Packet,
        t: &mut Table,
        now: Jiffies,
        known_miss: bool,
    ) -> Option<(usize, Packet)> {
        let info = ip_info(&p)?;
        // The flow key and map of the packet, or the unhandled path.
        let (key, map, class, alt) = match self.kind {
            RwKind::Ip | RwKind::Tcp | RwKind::Udp => {
                let ok = match self.kind {
                    RwKind::Ip => info.proto == IP_PROTO_TCP || info.proto == IP_PROTO_UDP,
                    RwKind::Tcp => info.proto == IP_PROTO_TCP,
                    _ => matches!(info.proto, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_DCCP),
                };
                if ok && !info.first_frag {
                    // A later fragment of a datagram whose first fragment
                    // was rewritten: the addresses only.
                    if let Some((f, dir)) = self.frags.borrow_mut().find(&info, t, now) {
                        let fl = t.flow(f);
                        let out = fl.out[dir] as usize;
                        apply_flow(&mut p, &info, fl, dir, self.dst_anno, None);
                        return Some((out, p));
                    }
                }
                if !ok || !info.first_frag || info.l4_len < 8 {
                    return self.unhandled(port, p);
                }
                let (sp, dp) = ports(&p, &info)?;
                let key = FlowId::new(info.saddr, sp, info.daddr, dp);
                let (map, class) = match (self.kind, info.proto) {
                    (RwKind::Ip, IP_PROTO_UDP) => (self.maps[1], FlowClass::Udp),
                    (RwKind::Udp, _) => (self.maps[0], FlowClass::Udp),
                    _ => (self.maps[0], FlowClass::Tcp),
                };
                (key, map, class, None)
            }
            RwKind::IpAddr => {
                let key = FlowId::new(info.saddr, 0, 0, 0);
                let alt = FlowId::new(0, 0, info.daddr, 0);
                (key, self.maps[0], FlowClass::Plain, Some(alt))
            }
            RwKind::IpAddrPair => {
                let key = FlowId::new(info.saddr, 0, info.daddr, 0);
                (key, self.maps[0], FlowClass::Plain, None)
            }
            RwKind::IcmpPing => {
                if info.proto != IP_PROTO_ICMP || !info.first_frag {
                    return self.unhandled(port, p);
                }
                let Some(Ok(icmp)) = p.data().get(info.l4_off..).map(IcmpHeader::new_checked)
                else {
                    return self.unhandled(port, p);
                };
                if icmp.icmp_type() != 8 && icmp.icmp_type() != 0 {
                    return self.unhandled(port, p);
                }
                // Requests carry the identifier as the source "port",
                // replies as the destination one, so a reply matches the
                // reverse of its request's rewritten flow.
                let id = icmp.ident();
                let key = if icmp.icmp_type() == 8 {
                    FlowId::new(info.saddr, id, info.daddr, 0)
                } else {
                    FlowId::new(info.saddr, 0, info.daddr, id)
                };
                (key, self.maps[0], FlowClass::Plain, None)
            }
        };
        let mut found = if known_miss {
            None
        } else {
            t.lookup(map, &key)
        };
        if found.is_none() {
            if let Some(alt) = alt {
                found = t.lookup(map, &alt);
            }
        }
        let (f, dir) = match found {
            Some(x) => x,
            None => {
                let spec = self.specs.get(port)?;
                let decision = spec.decide(&key, &mut t.free_values(map), self.mapping);
                match decision {
                    Decision::Output(o) => return Some((o, p)),
                    Decision::Drop => return None,
                    Decision::Failed => {
                        if let Some(c) = t.owners[self.owner].failures.get_mut(port) {
                            *c += 1;
                        }
                        return None;
                    }
                    Decision::Add(rw, fo, ro, bound) => {
                        let f = t.add_flow(
                            self.owner,
                            port,
                            map,
                            info.proto,
                            class,
                            key,
                            rw,
                            [fo, ro],
                            now,
                        )?;
                        if bound {
                            t.bind(f);
                        }
                        if let Some(a) = self.reply_anno {
                            t.flow_mut(f).reply_anno = p.anno().get(a).copied().unwrap_or(0);
                        }
                        (f, 0)
                    }
                }
            }
        };
        let reply_anno = if matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) {
            self.reply_anno
        } else {
            None
        };
        let fl = t.flow(f);
        let out = fl.out[dir] as usize;
        match self.kind {
            RwKind::IpAddr | RwKind::IpAddrPair => apply_addrs(
                &mut p,
                &info,
                fl,
                dir,
                self.kind == RwKind::IpAddr,
                self.dst_anno,
            ),
            RwKind::IcmpPing => apply_ping(&mut p, &info, fl, dir, self.dst_anno),
            _ => {
                let r = apply_flow(&mut p, &info, fl, dir, self.dst_anno, reply_anno);
                let fl = t.flow_mut(f);
                match fl.class {
                    FlowClass::Tcp => {
                        if let Some((flags, payload)) = r {
                            track_tcp(fl, dir, flags, payload);
                            if let Some(seq) = t.seq_deltas_mut(f) {
                                apply_seq(&mut p, &info, seq, dir);
                            }
                        }
                    }
                    FlowClass::Udp => track_udp(fl, dir),
                    FlowClass::Plain => {}
                }
            }
        }
        if info.more_frags && matches!(self.kind, RwKind::Ip | RwKind::Tcp | RwKind::Udp) {
            let key = t.flow(f).key[dir];
            let e = FragEntry {
                flow: f,
                dir,
                key,
                expiry: now + FRAG_TIMEOUT,
            };
            self.frags.borrow_mut().remember(&info, e, now);
        }
        t.refresh(f, now);
        Some((out, p))
    }
}

/// IPAddrRewriter and IPAddrPairRewriter: the addresses only (one of them
/// for IPAddrRewriter), with the IP and transport checksums.
fn apply_addrs(p: &mut Packet, info: &IpInfo, fl: &Flow, dir: usize, one: bool, dst_anno: bool) {
    let to = fl.rewritten(dir);
    let data = p.writable();
    let reverse = dir == 1;
    if let Some(Ok(mut ip)) = data.get_mut(info.ip_off..).map(Ipv4Header::new_checked) {
        if !one || dir == 0 {
            ip.set_src(Ipv4Addr::from(to.saddr));
        }
        if !one || dir == 1 {
            ip.set_dst(Ipv4Addr::from(to.daddr));
        }
        let c = apply_delta(ip.checksum(), fl.ip_delta, reverse);
        ip.set_checksum(c);
    }
    if info.first_frag {
        if let Some(l4) = data.get_mut(info.l4_off..) {
            if info.proto == IP_PROTO_TCP && info.l4_len >= 18 {
                let c = u16::from_be_bytes([l4[16], l4[17]]);
                let c = apply_delta(c, fl.ip_delta, reverse);
                l4[16..18].copy_from_slice(&c.to_be_bytes());
            } else if info.proto == IP_PROTO_DCCP && info.l4_len >= 8 {
                // DCCP's checksum covers the pseudo-header (RFC 4340 9.1).
                let c = u16::from_be_bytes([l4[6], l4[7]]);
                let c = apply_delta(c, fl.ip_delta, reverse);
                l4[6..8].copy_from_slice(&c.to_be_bytes());
            } else if info.proto == IP_PROTO_UDP {
                if let Ok(mut u) = UdpHeader::new_checked(l4) {
                    let c = apply_udp_delta(u.checksum(), fl.ip_delta, reverse);
                    u.set_checksum(c);
                }
            }
        }
    }
    if dst_anno {
        let d = Ipv4Header::new_checked(&p.data()[info.ip_off..]).map(|ip| ip.dst());
        if let Ok(d) = d {
            p.set_dst_ip_anno(d);
        }
    }
}

/// ICMPPingRewriter: addresses and the echo identifier.
fn apply_ping(p: &mut Packet, info: &IpInfo, fl: &Flow, dir: usize, dst_anno: bool) {
    let to = fl.rewritten(dir);
    let from = fl.key[dir];
    if dst_anno {
        p.set_dst_ip_anno(Ipv4Addr::from(to.daddr));
    }
    let data = p.writable();
    if let Some(Ok(mut ip)) = data.get_mut(info.ip_off..).map(Ipv4Header::new_checked) {
        ip.set_src(Ipv4Addr::from(to.saddr));
        ip.set_dst(Ipv4Addr::from(to.daddr));
        let c = apply_delta(ip.checksum(), fl.ip_delta, dir == 1);
        ip.set_checksum(c);
    }
    if let Some(Ok(mut icmp)) = data.get_mut(info.l4_off..).map(IcmpHeader::new_checked) {
        let (old_id, new_id) = if icmp.icmp_type() == 8 {
            (from.sport, to.sport)
        } else {
            (from.dport, to.dport)
        };
        let d = csum_delta(&[old_id], &[new_id]);
        icmp.set_ident(new_id);
        let c = apply_delta(icmp.checksum(), d, false);
        icmp.set_checksum(c);
        // As Click: an incremental update yields 0x0000 where the message
        // sums to zero and its checksum must be 0xffff.
        if c == 0 {
            if let Some(msg) = data.get_mut(info.l4_off..) {
                if rclick_core::wire::checksum::sum(msg, 0) == 0 {
                    if let Ok(mut icmp) = IcmpHeader::new_checked(msg) {
                        icmp.set_checksum(0xffff);
                    }
                }
            }
        }
    }
}

/// What ICMPRewriter needs of a rewriter: its class, table and maps.
#[derive(Clone)]
pub struct RewriterRef {
    pub kind: RwKind,
    pub table: SharedTable,
    pub maps: [usize; 2],
}

impl Rewriter {
    pub fn reference(&self) -> RewriterRef {
        RewriterRef {
            kind: self.kind,
            table: self.table.clone(),
            maps: self.maps,
        }
    }
}

impl Rewriter {
    /// The TCP mapping of `key` (flow index, direction, rewritten flow);
    /// with `create`, made by that input's spec when absent (Click's
    /// get_entry). For FTPPortMapper.
    pub fn tcp_entry(
        &self,
        key: &FlowId,
        create: Option<usize>,
        now: Jiffies,
    ) -> Option<(usize, usize, FlowId)> {
        if !self.has_tcp_table() {
            return None;
        }
        let mut t = lock_table(&self.table);
        let map = self.maps[0];
        if let Some((f, d)) = t.lookup(map, key) {
            return Some((f, d, t.flow(f).rewritten(d)));
        }
        let input = create?;
        let spec = self.specs.get(input)?;
        let decision = spec.decide(key, &mut t.free_values(map), self.mapping);
        match decision {
            Decision::Add(rw, fo, ro, bound) => {
                let f = t.add_flow(
                    self.owner,
                    input,
                    map,
                    IP_PROTO_TCP,
                    FlowClass::Tcp,
                    *key,
                    rw,
                    [fo, ro],
                    now,
                )?;
                if bound {
                    t.bind(f);
                }
                Some((f, 0, t.flow(f).rewritten(0)))
            }
            Decision::Failed => {
                if let Some(c) = t.owners[self.owner].failures.get_mut(input) {
                    *c += 1;
                }
                None
            }
            _ => None,
        }
    }

    /// See [`Table::seq_deltas_all_live`].
    pub fn seq_deltas_all_live(&self) -> bool {
        lock_table(&self.table).seq_deltas_all_live()
    }

    /// Moves the sequence numbers of flow `f`'s direction `dir` by `delta`
    /// from `trigger` on.
    pub fn update_seqno_delta(&self, f: usize, dir: usize, trigger: u32, delta: i32) -> bool {
        lock_table(&self.table)
            .seq_deltas_or_new(f)
            .update(dir, trigger, delta)
    }
}
