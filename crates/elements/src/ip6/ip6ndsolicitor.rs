//! # IP6NDSolicitor
//!
//! Encapsulates IPv6 packets in Ethernet headers found by neighbour
//! discovery (the IPv6 twin of ARPQuerier).
//!
//! ## Synopsis
//! `IP6NDSolicitor(IP, ETH [, keywords RETRANS_TIMER, REACHABLE_TIME, DELAY_FIRST_PROBE_TIME, MAX_MULTICAST_SOLICIT, MAX_UNICAST_SOLICIT, TIMEOUT, ENTRY_CAPACITY])`
//!
//! ## Ports and processing
//! Two push inputs: IPv6 packets on input 0, neighbour advertisements
//! (and solicitations) with their Ethernet header on input 1. Push output
//! 0 for Ethernet frames; with a second output, solicitations leave on
//! output 1, otherwise on output 0. Flow code `xy/x`.
//!
//! ## Description
//! IP is this interface's IPv6 address (the source of its solicitations),
//! ETH its Ethernet address. Packets on input 0 need their destination
//! IPv6 annotation set (GetIP6Address, LookupIP6Route). When the Ethernet
//! address for it is known, the packet gets an Ethernet header (type
//! 0x86dd, source ETH) and leaves on output 0. Otherwise the packet is
//! held (one per neighbour, as in Click: a newer packet replaces the held
//! one, which is counted as killed) and a neighbour solicitation is sent
//! to the target's solicited-node multicast address, with a source
//! link-layer address option. Packets to multicast destinations go to
//! 33-33 and the address's low 32 bits (RFC 2464) without discovery;
//! packets whose annotation is `::` are dropped and counted.
//!
//! Every frame on input 1 is validated as RFC 4861 section 7.1 asks (hop
//! limit 255, checksum, code, length, options, target; see
//! IP6NDAdvertiser); invalid ones are counted in `drops`. A valid
//! advertisement for a neighbour in the cache updates it as section 7.2.5
//! says, and sends the held packet. A valid solicitation for IP from a
//! neighbour that gives its link-layer address records that address as
//! stale (section 7.2.3), so that answering that neighbour needs no
//! discovery; to use it, send solicitations to input 1 as well as to the
//! IP6NDAdvertiser (through a Tee).
//!
//! The neighbour cache follows RFC 4861 section 7.3.2 where Click's is
//! simpler (Click has "ok" entries that it re-solicits after 60 seconds
//! and forgets after 120, sends a solicitation for every packet while a
//! neighbour is unresolved, never retransmits, and takes any frame on
//! input 1 that looks like an advertisement, checksum unchecked):
//! - INCOMPLETE: solicited; the solicitation is retransmitted every
//!   RETRANS_TIMER, MAX_MULTICAST_SOLICIT times in all (at most one per
//!   RETRANS_TIMER whatever the traffic, as section 7.2.2 requires), then
//!   the entry and its packet are dropped.
//! - REACHABLE: confirmed by a solicited advertisement; after
//!   REACHABLE_TIME it becomes STALE (fixed, not randomised).
//! - STALE: address known but unconfirmed; still used. The first packet
//!   sent makes it DELAY. A stale entry unused for TIMEOUT is removed.
//! - DELAY: after DELAY_FIRST_PROBE_TIME without confirmation, PROBE.
//! - PROBE: unicast solicitations to the known address every
//!   RETRANS_TIMER, MAX_UNICAST_SOLICIT in all, then the entry is removed
//!   (neighbour unreachability detection).
//!
//! ## Keywords
//! - **RETRANS_TIMER** (time): default 1 s.
//! - **REACHABLE_TIME** (time): default 30 s.
//! - **DELAY_FIRST_PROBE_TIME** (time): default 5 s.
//! - **MAX_MULTICAST_SOLICIT**, **MAX_UNICAST_SOLICIT** (unsigned):
//!   default 3 each.
//! - **TIMEOUT** (time): how long an unused stale entry stays. Default
//!   120 s (Click's entry lifetime).
//! - **ENTRY_CAPACITY** (unsigned): most entries; a new neighbour beyond
//!   it is not solicited and its packet dropped. Default 65536.
//!
//! ## Handlers
//! - `table` (read): Click's format, one `IP OK ETH` line per entry (OK 1
//!   when the address is known), in Click's hash-bucket order.
//! - `stats` (read): `N packets killed` and `N ND Solicitation Message
//!   sent` lines.
//! - `neighbors` (read): `IP STATE ETH` lines with the RFC 4861 state
//!   (rclick extension).
//! - `drops` (read): invalid frames on input 1 and undeliverable packets
//!   (rclick extension).
//!
//! Hot swap: a new IP6NDSolicitor with the same IP and ETH takes the old
//! one's neighbour cache, held packets and timers.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd);
//! nds :: IP6NDSolicitor(fe80::2a0:c9ff:fe9c:fd9e, 00:a0:c9:9c:fd:9e);
//! c[1] -> [1]nds;
//! c[2] -> Strip(14) -> CheckIP6Header -> GetIP6Address(24) -> rt :: LookupIP6Route(...);
//! rt[1] -> DecIP6HLIM -> [0]nds;
//! nds -> Queue -> ToDevice(eth0);
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::net::Ipv6Addr;

use rclick_core::conf::{parse_seconds, parse_u32, Args};
use rclick_core::element::processing;
use rclick_core::wire::ether::{ETHERTYPE_IP6, HEADER_LEN as ETHER_LEN};
use rclick_core::wire::icmpv6::{
    multicast_ether, ND_NA_FLAG_OVERRIDE, ND_NA_FLAG_SOLICITED, ND_NEIGHBOR_ADVERT,
};
use rclick_core::wire::{EtherAddr, EtherFrame, EthernetRepr};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp,
};

use super::common::{fmt_ip6, parse_ipv6_arg};
use super::nd::{parse_nd, solicitation, NdMessage};
use crate::ip::address::parse_ether_arg;

/// Neighbour cache states (RFC 4861 section 7.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdState {
    Incomplete,
    Reachable,
    Stale,
    Delay,
    Probe,
}

impl NdState {
    fn name(self) -> &'static str {
        match self {
            NdState::Incomplete => "INCOMPLETE",
            NdState::Reachable => "REACHABLE",
            NdState::Stale => "STALE",
            NdState::Delay => "DELAY",
            NdState::Probe => "PROBE",
        }
    }
}

struct Entry {
    state: NdState,
    eth: EtherAddr,
    held: Option<Packet>,
    /// When the state's timer runs out (nanoseconds); the key in `dues`.
    due: i64,
    /// Solicitations sent in this state.
    probes: u32,
    /// Insertion order, for Click's table order.
    seq: u64,
}

pub struct IP6NDSolicitor {
    my_ip: Ipv6Addr,
    my_eth: EtherAddr,
    retrans: i64,
    reachable: i64,
    delay: i64,
    max_mcast: u32,
    max_ucast: u32,
    timeout: i64,
    capacity: usize,
    map: HashMap<u128, Entry>,
    dues: BTreeSet<(i64, u128)>,
    seq: u64,
    timer: Option<TimerId>,
    scheduled: Option<i64>,
    queries: u64,
    killed: u64,
    drops: u64,
}

impl Default for IP6NDSolicitor {
    fn default() -> Self {
        const S: i64 = 1_000_000_000;
        IP6NDSolicitor {
            my_ip: Ipv6Addr::UNSPECIFIED,
            my_eth: EtherAddr::default(),
            retrans: S,
            reachable: 30 * S,
            delay: 5 * S,
            max_mcast: 3,
            max_ucast: 3,
            timeout: 120 * S,
            capacity: 65536,
            map: HashMap::new(),
            dues: BTreeSet::new(),
            seq: 0,
            timer: None,
            scheduled: None,
            queries: 0,
            killed: 0,
            drops: 0,
        }
    }
}

impl IP6NDSolicitor {
    /// Sends a solicitation for `target` (multicast, or unicast to
    /// `unicast`).
    fn solicit(&mut self, target: u128, unicast: Option<EtherAddr>, ctx: &mut Ctx) {
        let q = solicitation(self.my_eth, self.my_ip, Ipv6Addr::from(target), unicast);
        self.queries += 1;
        let out = ctx.noutputs().saturating_sub(1);
        ctx.emit(out, q);
    }

    /// Prepends the Ethernet header to `dst` and sends `p` on output 0.
    fn send(&mut self, mut p: Packet, dst: EtherAddr, ctx: &mut Ctx) {
        let Some(b) = p.push(ETHER_LEN) else {
            self.drops += 1;
            return;
        };
        EthernetRepr {
            src: self.my_eth,
            dst,
            ethertype: ETHERTYPE_IP6,
        }
        .emit(&mut EtherFrame::new_unchecked(b));
        ctx.emit(0, p);
    }

    /// Sets entry `ip`'s state and due time, keeping the index.
    fn set_state(&mut self, ip: u128, state: NdState, due: i64) {
        if let Some(e) = self.map.get_mut(&ip) {
            self.dues.remove(&(e.due, ip));
            e.state = state;
            e.due = due;
            e.probes = 0;
            self.dues.insert((due, ip));
        }
    }

    fn remove(&mut self, ip: u128) {
        if let Some(e) = self.map.remove(&ip) {
            self.dues.remove(&(e.due, ip));
            if e.held.is_some() {
                self.killed += 1;
            }
        }
    }

    /// Keeps the timer set for the earliest due entry.
    fn reschedule(&mut self, ctx: &mut Ctx) {
        let next = self.dues.first().map(|&(d, _)| d);
        if next != self.scheduled {
            if let Some(t) = self.timer {
                match next {
                    Some(d) => ctx.schedule_timer_at(t, Timestamp(d)),
                    None => ctx.unschedule_timer(t),
                }
            }
            self.scheduled = next;
        }
    }

    fn handle_ip(&mut self, p: Packet, now: i64, ctx: &mut Ctx) {
        let dst = p.dst_ip6_anno();
        if dst.is_multicast() {
            self.send(p, multicast_ether(dst), ctx);
            return;
        }
        if dst.is_unspecified() {
            self.drops += 1;
            return;
        }
        let ip = u128::from(dst);
        let Some(e) = self.map.get_mut(&ip) else {
            if self.map.len() >= self.capacity {
                self.drops += 1;
                return;
            }
            self.seq += 1;
            let due = now.saturating_add(self.retrans);
            self.map.insert(
                ip,
                Entry {
                    state: NdState::Incomplete,
                    eth: EtherAddr::default(),
                    held: Some(p),
                    due,
                    probes: 1,
                    seq: self.seq,
                },
            );
            self.dues.insert((due, ip));
            self.solicit(ip, None, ctx);
            self.reschedule(ctx);
            return;
        };
        match e.state {
            NdState::Incomplete => {
                if e.held.replace(p).is_some() {
                    self.killed += 1;
                }
            }
            NdState::Stale => {
                let eth = e.eth;
                self.set_state(ip, NdState::Delay, now.saturating_add(self.delay));
                self.send(p, eth, ctx);
                self.reschedule(ctx);
            }
            NdState::Reachable | NdState::Delay | NdState::Probe => {
                let eth = e.eth;
                self.send(p, eth, ctx);
            }
        }
    }

    /// An advertisement (section 7.2.5) or a solicitation (7.2.3).
    fn handle_nd(&mut self, m: &NdMessage, now: i64, ctx: &mut Ctx) {
        if m.msg_type == ND_NEIGHBOR_ADVERT {
            let ip = u128::from(m.target);
            let Some(e) = self.map.get_mut(&ip) else {
                return;
            };
            let solicited = m.flags & ND_NA_FLAG_SOLICITED != 0;
            let over = m.flags & ND_NA_FLAG_OVERRIDE != 0;
            if e.state == NdState::Incomplete {
                let Some(ll) = m.lladdr else {
                    return;
                };
                e.eth = ll;
                let held = e.held.take();
                if solicited {
                    self.set_state(ip, NdState::Reachable, now.saturating_add(self.reachable));
                } else {
                    self.set_state(ip, NdState::Stale, now.saturating_add(self.timeout));
                }
                if let Some(p) = held {
                    self.send(p, ll, ctx);
                }
            } else {
                let differ = m.lladdr.is_some_and(|l| l != e.eth);
                if !over && differ {
                    if e.state == NdState::Reachable {
                        self.set_state(ip, NdState::Stale, now.saturating_add(self.timeout));
                    }
                } else {
                    if let Some(l) = m.lladdr {
                        e.eth = l;
                    }
                    if solicited {
                        self.set_state(ip, NdState::Reachable, now.saturating_add(self.reachable));
                    } else if differ {
                        self.set_state(ip, NdState::Stale, now.saturating_add(self.timeout));
                    }
                }
            }
        } else {
            // A solicitation for us from a neighbour that says where it is.
            let (Some(ll), false) = (m.lladdr, m.src.is_unspecified()) else {
                return;
            };
            if m.target != self.my_ip {
                return;
            }
            let ip = u128::from(m.src);
            match self.map.get_mut(&ip) {
                None => {
                    if self.map.len() >= self.capacity {
                        return;
                    }
                    self.seq += 1;
                    let due = now.saturating_add(self.timeout);
                    self.map.insert(
                        ip,
                        Entry {
                            state: NdState::Stale,
                            eth: ll,
                            held: None,
                            due,
                            probes: 0,
                            seq: self.seq,
                        },
                    );
                    self.dues.insert((due, ip));
                }
                Some(e) => {
                    if e.state == NdState::Incomplete || e.eth != ll {
                        e.eth = ll;
                        let held = e.held.take();
                        self.set_state(ip, NdState::Stale, now.saturating_add(self.timeout));
                        if let Some(p) = held {
                            // Sending makes a stale entry DELAY.
                            self.set_state(ip, NdState::Delay, now.saturating_add(self.delay));
                            self.send(p, ll, ctx);
                        }
                    }
                }
            }
        }
        self.reschedule(ctx);
    }

    /// Runs the timers of every entry due by `now`.
    fn expire(&mut self, now: i64, ctx: &mut Ctx) {
        while let Some(&(due, ip)) = self.dues.first() {
            if due > now {
                break;
            }
            let Some(e) = self.map.get_mut(&ip) else {
                self.dues.remove(&(due, ip));
                continue;
            };
            match e.state {
                NdState::Incomplete | NdState::Probe => {
                    let (max, unicast) = if e.state == NdState::Incomplete {
                        (self.max_mcast, None)
                    } else {
                        (self.max_ucast, Some(e.eth))
                    };
                    if e.probes >= max {
                        self.remove(ip);
                    } else {
                        let probes = e.probes + 1;
                        let state = e.state;
                        self.set_state(ip, state, now.saturating_add(self.retrans));
                        if let Some(e) = self.map.get_mut(&ip) {
                            e.probes = probes;
                        }
                        self.solicit(ip, unicast, ctx);
                    }
                }
                NdState::Reachable => {
                    self.set_state(ip, NdState::Stale, now.saturating_add(self.timeout))
                }
                NdState::Stale => self.remove(ip),
                NdState::Delay => {
                    let eth = e.eth;
                    self.set_state(ip, NdState::Probe, now.saturating_add(self.retrans));
                    if let Some(e) = self.map.get_mut(&ip) {
                        e.probes = 1;
                    }
                    self.solicit(ip, Some(eth), ctx);
                }
            }
        }
    }

    /// Entries in Click's table order: by hash bucket, newest first.
    fn ordered(&self) -> Vec<(&u128, &Entry)> {
        let mut v: Vec<_> = self.map.iter().collect();
        v.sort_by_key(|(ip, e)| {
            let o = ip.to_be_bytes();
            (
                (o[0] as usize + o[15] as usize) % 256,
                std::cmp::Reverse(e.seq),
            )
        });
        v
    }

    fn table(&self) -> String {
        let mut s = String::new();
        for (ip, e) in self.ordered() {
            let ok = e.state != NdState::Incomplete;
            let _ = writeln!(s, "{} {} {}", fmt_ip6(Ipv6Addr::from(*ip)), ok as u8, e.eth);
        }
        s
    }

    fn neighbors(&self) -> String {
        let mut s = String::new();
        for (ip, e) in self.ordered() {
            let _ = writeln!(
                s,
                "{} {} {}",
                fmt_ip6(Ipv6Addr::from(*ip)),
                e.state.name(),
                e.eth
            );
        }
        s
    }

    /// The state of the entry for `ip`, for tests.
    pub fn state_of(&self, ip: Ipv6Addr) -> Option<NdState> {
        self.map.get(&u128::from(ip)).map(|e| e.state)
    }
}

const HANDLERS: &[Handler<IP6NDSolicitor>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::read("neighbors", |e, _| e.neighbors()),
    Handler::read("table", |e, _| e.table()),
    Handler::read("stats", |e, _| {
        format!(
            "{} packets killed\n{} ND Solicitation Message sent\n",
            e.killed, e.queries
        )
    }),
];

rclick_core::element_class!(IP6NDSolicitor);

fn nanos(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

impl Element for IP6NDSolicitor {
    fn port_count(&self) -> &'static str {
        "2/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn flow_code(&self) -> &'static str {
        "xy/x"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let ip = args.read_mp_with("IP", |s| parse_ipv6_arg(s, ictx));
        let eth = args.read_mp_with("ETH", |s| parse_ether_arg(s, ictx));
        let d = Self::default();
        let retrans = args.read_or_with(
            "RETRANS_TIMER",
            parse_seconds,
            std::time::Duration::from_secs(1),
        );
        let reachable = args.read_or_with(
            "REACHABLE_TIME",
            parse_seconds,
            std::time::Duration::from_secs(30),
        );
        let delay = args.read_or_with(
            "DELAY_FIRST_PROBE_TIME",
            parse_seconds,
            std::time::Duration::from_secs(5),
        );
        let max_mcast = args.read_or_with("MAX_MULTICAST_SOLICIT", parse_u32, d.max_mcast);
        let max_ucast = args.read_or_with("MAX_UNICAST_SOLICIT", parse_u32, d.max_ucast);
        let timeout = args.read_or_with(
            "TIMEOUT",
            parse_seconds,
            std::time::Duration::from_secs(120),
        );
        let capacity = args.read_or_with("ENTRY_CAPACITY", parse_u32, 65536);
        args.complete()?;
        if retrans.is_zero() {
            return Err("RETRANS_TIMER must be positive".into());
        }
        self.my_ip = ip;
        self.my_eth = eth;
        self.retrans = nanos(retrans);
        self.reachable = nanos(reachable).max(1);
        self.delay = nanos(delay).max(1);
        self.max_mcast = max_mcast.max(1);
        self.max_ucast = max_ucast.max(1);
        self.timeout = nanos(timeout).max(1);
        self.capacity = capacity as usize;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        let now = ctx.now().nanos();
        if port != 0 {
            for p in batch {
                match parse_nd(p.data()) {
                    Ok(m) => self.handle_nd(&m, now, ctx),
                    Err(_) => self.drops += 1,
                }
            }
            return;
        }
        for p in batch {
            self.handle_ip(p, now, ctx);
        }
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        let now = ctx.now().nanos();
        self.scheduled = None;
        self.expire(now, ctx);
        self.reschedule(ctx);
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<IP6NDSolicitor>() else {
            return false;
        };
        if old.my_ip != self.my_ip || old.my_eth != self.my_eth {
            return false;
        }
        self.map = std::mem::take(&mut old.map);
        self.dues = std::mem::take(&mut old.dues);
        self.seq = old.seq;
        self.queries = old.queries;
        self.killed = old.killed;
        self.drops = old.drops;
        // The taken entries' timers run on this element's timer.
        if let (Some(t), Some(&(due, _))) = (self.timer, self.dues.first()) {
            ctx.schedule_timer_at(t, Timestamp(due));
            self.scheduled = Some(due);
        }
        true
    }

    rclick_core::handlers!(HANDLERS);
}
