//! # ARPQuerier
//!
//! Encapsulates IP packets in Ethernet headers found by ARP.
//!
//! ## Synopsis
//! `ARPQuerier(IP, ETH [, *keywords*])`
//! `ARPQuerier(NAME [, *keywords*])`
//!
//! ## Ports and processing
//! Two push inputs: IP packets on input 0, ARP replies (with Ethernet
//! header) on input 1. Push output 0 for Ethernet frames; if there is a
//! second output, ARP queries leave on output 1, otherwise on output 0.
//! Flow code `xy/x`.
//!
//! ## Description
//! IP is this interface's address (optionally with a prefix, which gives
//! the default broadcast address), ETH its Ethernet address; NAME may be an
//! AddressInfo name giving both.
//!
//! Packets on input 0 need their destination IP annotation set. If the
//! Ethernet address for it is known, the packet gets an Ethernet header
//! (type 0x0800, source ETH) and leaves on output 0. Otherwise it is held
//! in the entry for that address and an ARP query is broadcast. Packets for
//! 255.255.255.255 or the BROADCAST address go to FF-FF-FF-FF-FF-FF;
//! multicast destinations to 01-00-5E plus the low 23 bits (RFC 1112);
//! packets for 0.0.0.0 are dropped (with a one-time warning).
//!
//! An ARP reply on input 1 records the sender's addresses (unless the
//! sender Ethernet address is a group address) and sends the packets held
//! for it, in arrival order.
//!
//! Queries for one address are rate-limited as in Click: at most one per
//! 100 ms, and after 10 unanswered queries one per 2 seconds. When a known
//! entry is older than POLL_TIMEOUT, each use may send a renewal query
//! (unicast to the known address, or broadcast with BROADCAST_POLL).
//! Entries expire TIMEOUT after their last update; an expired entry's held
//! packets are dropped. CAPACITY bounds the packets held in total: beyond
//! it, the oldest entries' packets are dropped until 1/CAPACITY_SLIM_FACTOR
//! of the room is free. ENTRY_PACKET_CAPACITY bounds the packets held per
//! entry (further packets are dropped), ENTRY_CAPACITY the number of
//! entries (the oldest go). Every such drop is counted. Times use the
//! router clock.
//!
//! ## Keywords
//! - **CAPACITY** (unsigned): held packets in total; 0 unlimited. Default
//!   2048.
//! - **ENTRY_CAPACITY** (unsigned): entries; 0 unlimited. Default 65536
//!   (Click's default is 0: then traffic to a million unresolved
//!   addresses holds a million entries, about 340 MB, for TIMEOUT; a
//!   bound is what Linux keeps on its neighbour table too, `gc_thresh3`).
//! - **ENTRY_PACKET_CAPACITY** (unsigned): held packets per entry; 0
//!   unlimited. Default 0.
//! - **CAPACITY_SLIM_FACTOR** (unsigned, not 0): default 2.
//! - **TIMEOUT** (time): entry lifetime; 0 never expires. Default 300 s.
//! - **POLL_TIMEOUT** (time): age after which renewals are polled; 0 never.
//!   Default 60 s.
//! - **BROADCAST** (IP address): the local broadcast address.
//! - **BROADCAST_POLL** (boolean): broadcast renewal polls. Default false.
//! - **TABLE** (element): an ARPTable whose table this querier uses (and
//!   shares) instead of its own; the table's limits are then the
//!   ARPTable's, and this element's CAPACITY, ENTRY_CAPACITY,
//!   ENTRY_PACKET_CAPACITY, CAPACITY_SLIM_FACTOR and TIMEOUT do not apply.
//!   The table is locked once per batch of packets.
//!
//! ## Handlers
//! - `table` (read): one line per entry, oldest first: `IP VALID ETH AGE`.
//! - `stats` (read): `N packets killed` and `N ARP queries sent` lines.
//! - `count` (read): entries; `length` (read): held packets.
//! - `queries`, `responses`, `drops` (read): counters.
//! - `ipaddr`, `broadcast` (read/write): the addresses.
//! - `insert` (write): `IP ETH` adds an entry.
//! - `delete` (write): `IP` invalidates an entry.
//! - `clear` (write): empties the table and zeroes the counters.
//!
//! Hot swap: a new ARPQuerier of the same name, with the same IP and
//! Ethernet addresses, takes the old one's ARP table (entries, their ages,
//! and packets waiting for a reply); a table shared through TABLE goes
//! over with its ARPTable element instead.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/0806 20/0002, 12/0800, -);
//! a :: ARPQuerier(18.26.4.24, 00:00:C0:AE:67:EF);
//! c[0] -> [1]a;
//! c[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> [0]a;
//! a -> Queue -> ToDevice(eth0);
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rclick_core::conf::{parse_bool, parse_ipv4, parse_seconds, parse_u32, split_words, Args};
use rclick_core::element::processing;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::arp::{ARPHRD_ETHER, ARPOP_REPLY, ARPOP_REQUEST, ARP_LEN};
use rclick_core::wire::ether::{ETHERTYPE_ARP, ETHERTYPE_IP, HEADER_LEN};
use rclick_core::wire::{ArpPacket, ArpRepr, EtherAddr, EtherFrame, EthernetRepr};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp,
};

use super::address::{parse_ether_arg, parse_ipv4_addr_or_prefix_arg};
use super::ipcommon::AddrHashBuilder;

const HZ_NS: i64 = 1_000_000_000;

pub(crate) struct Entry {
    eth: EtherAddr,
    known: bool,
    live_at: Timestamp,
    polled_at: Timestamp,
    polls_since_reply: u8,
    queue: VecDeque<Packet>,
    /// Key in the age index.
    age: (i64, u64),
}

impl Entry {
    fn expired(&self, now: Timestamp, timeout: i64) -> bool {
        timeout != 0 && self.live_at.nanos() + timeout < now.nanos()
    }

    fn is_known(&self, now: Timestamp, timeout: i64) -> bool {
        self.known && !self.expired(now, timeout)
    }

    fn allow_poll(&self, now: Timestamp) -> bool {
        let gap = if self.polls_since_reply >= 10 {
            2 * HZ_NS
        } else {
            HZ_NS / 10
        };
        now.nanos() >= self.polled_at.nanos() + gap
    }

    fn mark_poll(&mut self, now: Timestamp) {
        self.polled_at = now;
        self.polls_since_reply = self.polls_since_reply.saturating_add(1);
    }
}

/// Where the two sequence counters of [`Table`] start.
const SEQ_BASE: u64 = 1 << 63;

/// The ARP table (Click's ARPTable): owned by the querier, or shared with
/// an ARPTable element (TABLE).
/// An ARP table shared between an ARPTable element and its queriers.
pub(crate) type SharedArpTable = Arc<Mutex<Table>>;

pub(crate) fn lock_table(t: &SharedArpTable) -> MutexGuard<'_, Table> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

/// ENTRY_CAPACITY's default (see the element doc).
const DEFAULT_ENTRY_CAPACITY: usize = 65536;

pub(crate) struct Table {
    map: HashMap<Ipv4Addr, Entry, AddrHashBuilder>,
    /// (live_at, sequence) -> address, oldest first.
    ages: BTreeMap<(i64, u64), Ipv4Addr>,
    /// The ages of the entries holding packets, oldest first: slimming
    /// walks these instead of every entry (walking every entry per queued
    /// packet made traffic to many unresolved hosts quadratic).
    queued: BTreeSet<(i64, u64)>,
    /// Sequence numbers ordering entries of equal age: `seq` counts up
    /// from `SEQ_BASE` for entries placed after their equals, `front_seq`
    /// down from it for those placed before.
    seq: u64,
    front_seq: u64,
    packet_count: usize,
    drops: u64,
    capacity: usize,
    entry_capacity: usize,
    entry_packet_capacity: usize,
    slim_factor: usize,
    timeout: i64,
    /// The entry a querier last found known with no poll due, so that the
    /// next packets for that next hop (the next batches too: at BURST 1,
    /// every packet) need no hash lookup. Every change to an entry's
    /// address, validity or age, and to the limits, forgets it.
    hot: Option<HotEntry>,
}

/// A known entry's addresses and the last time (router clock, ns) at which
/// it is still known and needs no renewal poll: until then a packet for
/// `ip` gets `eth` with nothing else to do, as the full lookup would give.
#[derive(Clone, Copy)]
pub(crate) struct HotEntry {
    ip: Ipv4Addr,
    eth: EtherAddr,
    until: i64,
    /// The POLL_TIMEOUT `until` was reckoned with: queriers sharing a
    /// table (TABLE) may poll at different ages.
    poll_timeout: i64,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            map: HashMap::default(),
            ages: BTreeMap::new(),
            queued: BTreeSet::new(),
            seq: SEQ_BASE,
            front_seq: SEQ_BASE,
            packet_count: 0,
            drops: 0,
            capacity: 0,
            entry_capacity: 0,
            entry_packet_capacity: 0,
            slim_factor: 0,
            timeout: 0,
            hot: None,
        }
    }
}

impl Table {
    pub(crate) fn set_live(&mut self, ip: Ipv4Addr, live_at: Timestamp) {
        self.hot = None;
        let Some(e) = self.map.get_mut(&ip) else {
            return;
        };
        self.ages.remove(&e.age);
        let held = self.queued.remove(&e.age);
        self.seq += 1;
        e.live_at = live_at;
        e.age = (live_at.nanos(), self.seq);
        self.ages.insert(e.age, ip);
        if held {
            self.queued.insert(e.age);
        }
    }

    /// Moves an entry back in age to `live_at`, ahead of the entries that
    /// already have that age (Click walks its age list forward only past
    /// younger-looking entries, so the moved entry stops before equals).
    pub(crate) fn set_live_first(&mut self, ip: Ipv4Addr, live_at: Timestamp) {
        self.hot = None;
        let Some(e) = self.map.get_mut(&ip) else {
            return;
        };
        self.ages.remove(&e.age);
        let held = self.queued.remove(&e.age);
        self.front_seq -= 1;
        e.live_at = live_at;
        e.age = (live_at.nanos(), self.front_seq);
        self.ages.insert(e.age, ip);
        if held {
            self.queued.insert(e.age);
        }
    }

    pub(crate) fn remove(&mut self, ip: Ipv4Addr) {
        self.hot = None;
        if let Some(e) = self.map.remove(&ip) {
            self.ages.remove(&e.age);
            self.queued.remove(&e.age);
            self.packet_count -= e.queue.len();
            self.drops += e.queue.len() as u64;
        }
    }

    /// Click's `slim`: drop expired (or excess) entries, then packets of
    /// the oldest entries while over capacity.
    pub(crate) fn slim(&mut self, now: Timestamp) {
        while let Some((&key, &ip)) = self.ages.iter().next() {
            let old = match self.map.get(&ip) {
                Some(e) => e.expired(now, self.timeout),
                None => {
                    self.ages.remove(&key);
                    continue;
                }
            };
            if !old && (self.entry_capacity == 0 || self.map.len() <= self.entry_capacity) {
                break;
            }
            self.remove(ip);
        }
        if self.capacity != 0 && self.packet_count > self.capacity {
            let slim_to = (self.capacity - self.capacity / self.slim_factor.max(1)).max(1);
            // The oldest entries' packets go first, as Click's walk of its
            // age list drops them.
            while self.packet_count > slim_to {
                let Some(&age) = self.queued.first() else {
                    break;
                };
                let entry = self.ages.get(&age).and_then(|ip| self.map.get_mut(ip));
                if let Some(e) = entry {
                    while self.packet_count > slim_to && e.queue.pop_front().is_some() {
                        self.packet_count -= 1;
                        self.drops += 1;
                    }
                    if !e.queue.is_empty() {
                        break;
                    }
                }
                self.queued.remove(&age);
            }
        }
    }

    /// Finds or creates the entry for `ip`.
    pub(crate) fn ensure(&mut self, ip: Ipv4Addr, now: Timestamp) {
        if self.map.contains_key(&ip) {
            return;
        }
        if self.entry_capacity != 0 && self.map.len() + 1 > self.entry_capacity {
            // Make room: the oldest entries go first.
            while self.map.len() + 1 > self.entry_capacity {
                let Some((_, &oldest)) = self.ages.iter().next() else {
                    break;
                };
                self.remove(oldest);
            }
        }
        self.seq += 1;
        let age = (now.nanos(), self.seq);
        self.map.insert(
            ip,
            Entry {
                eth: EtherAddr::BROADCAST,
                known: false,
                live_at: now,
                polled_at: Timestamp(now.nanos() - HZ_NS),
                polls_since_reply: 0,
                queue: VecDeque::new(),
                age,
            },
        );
        self.ages.insert(age, ip);
    }

    /// Records `ip` at `eth` (the broadcast address: unresolved), made
    /// live now; the packets it holds stay held (Click's `insert` without
    /// a packet list, as its `insert` and `delete` handlers call it).
    pub(crate) fn update(&mut self, ip: Ipv4Addr, eth: EtherAddr, now: Timestamp) {
        self.hot = None;
        self.ensure(ip, now);
        self.set_live(ip, now);
        if let Some(e) = self.map.get_mut(&ip) {
            e.eth = eth;
            e.known = !eth.is_broadcast();
            e.polls_since_reply = 0;
            e.polled_at = Timestamp(now.nanos() - HZ_NS);
        }
    }

    /// Records `ip` at `eth`; returns the packets held for it.
    pub(crate) fn insert(
        &mut self,
        ip: Ipv4Addr,
        eth: EtherAddr,
        now: Timestamp,
    ) -> VecDeque<Packet> {
        self.update(ip, eth, now);
        let Some(e) = self.map.get_mut(&ip) else {
            return VecDeque::new();
        };
        let q = std::mem::take(&mut e.queue);
        self.queued.remove(&e.age);
        self.packet_count -= q.len();
        q
    }

    /// The `table` handler's text: one line per entry, oldest first.
    pub(crate) fn text(&self, now: Timestamp) -> String {
        let mut s = String::new();
        for ip in self.ages.values() {
            if let Some(e) = self.map.get(ip) {
                let ok = e.is_known(now, self.timeout) as u8;
                s.push_str(&format!("{ip} {ok} {} {}\n", e.eth, now - e.live_at));
            }
        }
        s
    }

    /// Sets the limits from configuration values (None: unchanged).
    pub(crate) fn set_limits(
        &mut self,
        capacity: Option<u32>,
        entry_capacity: Option<u32>,
        entry_packet_capacity: Option<u32>,
        slim: Option<u32>,
        timeout: Option<Duration>,
    ) {
        self.hot = None;
        if let Some(c) = capacity {
            self.capacity = c as usize;
        }
        if let Some(c) = entry_capacity {
            self.entry_capacity = c as usize;
        }
        if let Some(c) = entry_packet_capacity {
            self.entry_packet_capacity = c as usize;
        }
        if let Some(s) = slim {
            self.slim_factor = s as usize;
        }
        if let Some(t) = timeout {
            self.timeout = nanos(t);
        }
    }

    /// Takes `old`'s entries, held packets and counts (hot swap).
    pub(crate) fn take_from(&mut self, old: &mut Table) {
        let t = std::mem::take(old);
        self.hot = None;
        self.map = t.map;
        self.ages = t.ages;
        self.queued = t.queued;
        self.seq = t.seq;
        self.front_seq = t.front_seq;
        self.packet_count = t.packet_count;
        self.drops = t.drops;
    }

    /// Table with the querier's defaults.
    pub(crate) fn with_defaults() -> Table {
        Table {
            capacity: 2048,
            entry_capacity: DEFAULT_ENTRY_CAPACITY,
            slim_factor: 2,
            timeout: 300 * HZ_NS,
            ..Table::default()
        }
    }

    pub(crate) fn timeout(&self) -> i64 {
        self.timeout
    }

    pub(crate) fn count(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn length(&self) -> usize {
        self.packet_count
    }

    pub(crate) fn drops(&self) -> u64 {
        self.drops
    }

    /// `delete`: the entry stays, invalid, with its held packets (as Click,
    /// whose handler inserts the broadcast address).
    pub(crate) fn invalidate(&mut self, ip: Ipv4Addr, now: Timestamp) {
        self.update(ip, EtherAddr::BROADCAST, now);
    }

    pub(crate) fn clear(&mut self) {
        for e in self.map.values() {
            self.drops += e.queue.len() as u64;
        }
        self.map.clear();
        self.ages.clear();
        self.queued.clear();
        self.packet_count = 0;
        self.hot = None;
    }

    /// The hot entry's addresses, if it still holds at `now`.
    #[inline]
    fn hot_at(&self, now: Timestamp, poll_timeout: i64) -> Option<(Ipv4Addr, EtherAddr)> {
        self.hot
            .filter(|h| now.nanos() <= h.until && h.poll_timeout == poll_timeout)
            .map(|h| (h.ip, h.eth))
    }
}

pub struct ARPQuerier {
    my_ip: Ipv4Addr,
    my_eth: EtherAddr,
    bcast: Ipv4Addr,
    poll_timeout: i64,
    broadcast_poll: bool,
    table: Table,
    /// TABLE: the ARPTable element's table, swapped into `table` while a
    /// batch, timer or handler uses it.
    shared: Option<SharedArpTable>,
    table_name: Option<String>,
    queries: u64,
    responses: u64,
    drops: u64,
    zero_warned: bool,
    timer: Option<TimerId>,
}

impl Default for ARPQuerier {
    fn default() -> Self {
        ARPQuerier {
            my_ip: Ipv4Addr::UNSPECIFIED,
            my_eth: EtherAddr::default(),
            bcast: Ipv4Addr::BROADCAST,
            poll_timeout: 60 * HZ_NS,
            broadcast_poll: false,
            table: Table::with_defaults(),
            shared: None,
            table_name: None,
            queries: 0,
            responses: 0,
            drops: 0,
            zero_warned: false,
            timer: None,
        }
    }
}

/// A timeout of at most 2^31-1 seconds, as in Click (larger ones overflowed
/// the expiry arithmetic); beyond that Click's message, `parse error`.
fn parse_timeout(s: &str) -> Result<Duration, String> {
    match parse_seconds(s)? {
        d if d.as_secs() > i32::MAX as u64 => Err("expected time in seconds".into()),
        d => Ok(d),
    }
}

fn nanos(d: Duration) -> i64 {
    d.as_nanos().min(i64::MAX as u128) as i64
}

impl ARPQuerier {
    /// Emits an ARP query for `want`, to `dst` (broadcast unless polling a
    /// known entry).
    fn send_query(&mut self, want: Ipv4Addr, dst: EtherAddr, like: &Packet, ctx: &mut Ctx) {
        let ether = EthernetRepr {
            src: self.my_eth,
            dst,
            ethertype: ETHERTYPE_ARP,
        };
        let arp = ArpRepr {
            op: ARPOP_REQUEST,
            sha: self.my_eth,
            spa: self.my_ip,
            tha: EtherAddr::default(),
            tpa: want,
        };
        let mut b = [0u8; HEADER_LEN + ARP_LEN];
        let (eh, ab) = b.split_at_mut(HEADER_LEN);
        ether.emit(&mut EtherFrame::new_unchecked(eh));
        arp.emit(&mut ArpPacket::new_unchecked(ab));
        let mut q = Packet::with_room(DEFAULT_HEADROOM - HEADER_LEN, &b, 0);
        q.set_timestamp_anno(like.timestamp_anno());
        let vlan = like.anno_bytes::<2>(rclick_core::packet::anno::VLAN_TCI);
        q.set_anno_bytes(rclick_core::packet::anno::VLAN_TCI, &vlan);
        self.queries += 1;
        let out = ctx.noutputs().saturating_sub(1);
        ctx.emit(out, q);
    }

    /// Handles an IP packet (`held`: it was held and already has its
    /// Ethernet header).
    fn handle_ip(&mut self, p: Packet, held: bool, ctx: &mut Ctx) {
        let now = ctx.now();
        self.handle_ip_at(p, held, now, ctx);
    }

    /// Writes the Ethernet header of `p` to `dst_eth`, from this
    /// interface's address: prepended, or over the one pushed when `p` was
    /// held.
    #[inline]
    fn address(&self, p: &mut Packet, held: bool, dst_eth: EtherAddr) -> Option<()> {
        let frame = if held {
            &mut p.writable()[..HEADER_LEN]
        } else {
            p.push(HEADER_LEN)?
        };
        self.emit_header(frame, dst_eth);
        Some(())
    }

    /// Writes this interface's Ethernet header to `dst_eth` into `frame`.
    #[inline(always)]
    fn emit_header(&self, frame: &mut [u8], dst_eth: EtherAddr) {
        let header = EthernetRepr {
            src: self.my_eth,
            dst: dst_eth,
            ethertype: ETHERTYPE_IP,
        };
        header.emit(&mut EtherFrame::new_unchecked(frame));
    }

    /// `resolve_ip_at`, then sends a resolved packet on output 0.
    fn handle_ip_at(&mut self, p: Packet, held: bool, now: Timestamp, ctx: &mut Ctx) {
        if let Some((p, _)) = self.resolve_ip_at(p, held, now, ctx) {
            ctx.emit(0, p);
        }
    }

    /// Gives `p` its Ethernet header at time `now`. Returns the packet and
    /// its destination Ethernet address if it can go out at once (a known
    /// entry, broadcast or multicast), so that the batch loop can address
    /// further packets for the same next hop without another lookup;
    /// otherwise the packet is held for an ARP reply, or dropped.
    fn resolve_ip_at(
        &mut self,
        mut p: Packet,
        held: bool,
        now: Timestamp,
        ctx: &mut Ctx,
    ) -> Option<(Packet, EtherAddr)> {
        if self.my_ip.is_unspecified() {
            self.drops += 1;
            return None;
        }
        let dst_ip = p.dst_ip_anno();
        let timeout = self.table.timeout;
        let mut dst_eth = None;
        let mut poll = None;
        if let Some(e) = self.table.map.get_mut(&dst_ip) {
            if e.is_known(now, timeout) {
                dst_eth = Some(e.eth);
                let poll_at = e.live_at.nanos().saturating_add(self.poll_timeout);
                if self.poll_timeout != 0 && now.nanos() >= poll_at && e.allow_poll(now) {
                    e.mark_poll(now);
                    poll = Some(e.eth);
                } else if self.poll_timeout == 0 || now.nanos() < poll_at {
                    // Known until it expires, unpolled until the poll is
                    // due: whichever comes first ends the shortcut.
                    let expires = if timeout == 0 {
                        i64::MAX
                    } else {
                        e.live_at.nanos().saturating_add(timeout)
                    };
                    let polls = if self.poll_timeout == 0 {
                        i64::MAX
                    } else {
                        poll_at - 1
                    };
                    self.table.hot = Some(HotEntry {
                        ip: dst_ip,
                        eth: e.eth,
                        until: expires.min(polls),
                        poll_timeout: self.poll_timeout,
                    });
                }
            }
        }
        let dst_eth = if let Some(eth) = dst_eth {
            if let Some(to) = poll {
                let to = if self.broadcast_poll {
                    EtherAddr::BROADCAST
                } else {
                    to
                };
                self.send_query(dst_ip, to, &p, ctx);
            }
            eth
        } else if dst_ip == Ipv4Addr::BROADCAST || dst_ip == self.bcast {
            EtherAddr::BROADCAST
        } else if dst_ip.is_multicast() {
            let o = dst_ip.octets();
            EtherAddr([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]])
        } else if dst_ip.is_unspecified() {
            if !self.zero_warned {
                ctx.chatter(&format!(
                    "{}: would query for 0.0.0.0; missing dest IP addr annotation?",
                    ctx.element_name()
                ));
                self.zero_warned = true;
            }
            self.drops += 1;
            return None;
        } else {
            // A held packet keeps room for its header, written once the
            // reply comes.
            if !held && p.push(HEADER_LEN).is_none() {
                self.drops += 1;
                return None;
            }
            self.append_query(dst_ip, p, now, ctx);
            return None;
        };
        if self.address(&mut p, held, dst_eth).is_none() {
            self.drops += 1;
            return None;
        }
        Some((p, dst_eth))
    }

    fn append_query(&mut self, ip: Ipv4Addr, p: Packet, now: Timestamp, ctx: &mut Ctx) {
        let t = &mut self.table;
        t.ensure(ip, now);
        // Keep a wanted entry just this side of expiring.
        if t.timeout != 0 {
            let min_live = Timestamp(now.nanos() - t.timeout);
            if t.map.get(&ip).is_some_and(|e| e.live_at < min_live) {
                t.set_live_first(ip, min_live);
            }
        }
        let full = t.entry_packet_capacity != 0
            && t.map
                .get(&ip)
                .is_some_and(|e| e.queue.len() >= t.entry_packet_capacity);
        if full {
            t.drops += 1;
            return;
        }
        t.packet_count += 1;
        if t.capacity != 0 && t.packet_count > t.capacity {
            t.slim(now);
        }
        let Some(e) = t.map.get_mut(&ip) else {
            t.packet_count -= 1;
            t.drops += 1;
            return;
        };
        let like_ts = p.timestamp_anno();
        let like_vlan = p.anno_bytes::<2>(rclick_core::packet::anno::VLAN_TCI);
        if e.queue.is_empty() {
            t.queued.insert(e.age);
        }
        e.queue.push_back(p);
        if e.allow_poll(now) {
            e.mark_poll(now);
            let mut like = Packet::with_room(0, &[], 0);
            like.set_timestamp_anno(like_ts);
            like.set_anno_bytes(rclick_core::packet::anno::VLAN_TCI, &like_vlan);
            self.send_query(ip, EtherAddr::BROADCAST, &like, ctx);
        }
    }

    fn handle_response(&mut self, p: &Packet, ctx: &mut Ctx) {
        if p.len() < HEADER_LEN + ARP_LEN {
            return;
        }
        self.responses += 1;
        let Ok(eh) = EtherFrame::new_checked(p.data()) else {
            return;
        };
        let Ok(a) = ArpPacket::new_checked(eh.payload()) else {
            return;
        };
        if eh.ethertype() != ETHERTYPE_ARP
            || a.hardware() != ARPHRD_ETHER
            || a.protocol() != ETHERTYPE_IP
            || a.op() != ARPOP_REPLY
            || a.sha().is_group()
        {
            return;
        }
        let now = ctx.now();
        let held = self.table.insert(a.spa(), a.sha(), now);
        for q in held {
            self.handle_ip(q, true, ctx);
        }
    }

    fn configure_args(&mut self, conf: &str, ctx: &InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity = args.read_with("CAPACITY", parse_u32);
        let entry_capacity = args.read_with("ENTRY_CAPACITY", parse_u32);
        let entry_packet_capacity = args.read_with("ENTRY_PACKET_CAPACITY", parse_u32);
        let slim = args.read_with("CAPACITY_SLIM_FACTOR", parse_u32);
        let timeout = args.read_with("TIMEOUT", parse_timeout);
        let bcast = args.read_with("BROADCAST", |s| super::address::parse_ipv4_arg(s, ctx));
        let poll_timeout =
            args.read_or_with("POLL_TIMEOUT", parse_seconds, Duration::from_secs(60));
        let broadcast_poll = args.read_or_with("BROADCAST_POLL", parse_bool, false);
        let table_name = args.read::<String>("TABLE");
        let mut rest = args.consume()?;
        if rest.len() == 1 {
            rest.push(rest[0].clone());
        }
        let mut args = Args::from_vec(rest);
        let prefix = args.read_mp_with("IP", |s| parse_ipv4_addr_or_prefix_arg(s, ctx).map(Some));
        let eth = args.read_mp_with("ETH", |s| parse_ether_arg(s, ctx));
        args.complete()?;
        if slim == Some(0) {
            return Err("CAPACITY_SLIM_FACTOR cannot be zero".into());
        }
        let Some(prefix) = prefix else {
            return Err("IP: required argument missing".into());
        };
        self.my_ip = prefix.addr;
        self.my_eth = eth;
        self.bcast = match bcast {
            Some(b) => b,
            None => {
                let b = Ipv4Addr::from(u32::from(prefix.addr) | !u32::from(prefix.mask));
                if b == prefix.addr {
                    Ipv4Addr::BROADCAST
                } else {
                    b
                }
            }
        };
        self.table.set_limits(
            capacity,
            entry_capacity,
            entry_packet_capacity,
            slim,
            timeout,
        );
        if let Some(name) = &table_name {
            let found = ctx.find_element(name).and_then(|i| {
                ctx.with_element(i, |e| {
                    e.as_any()
                        .downcast_ref::<crate::ethernet::arptable::ARPTable>()
                        .map(|t| t.shared())
                })
                .flatten()
            });
            match found {
                Some(t) => self.shared = Some(t),
                None => return Err(format!("TABLE: '{name}' is not an ARPTable element").into()),
            }
        }
        self.table_name = table_name;
        self.poll_timeout = nanos(poll_timeout);
        self.broadcast_poll = broadcast_poll;
        Ok(())
    }

    fn schedule_expiry(&self, ctx: &Ctx) {
        if let (Some(t), true) = (self.timer, self.table.timeout != 0) {
            ctx.schedule_timer_after(t, Timestamp(self.table.timeout + HZ_NS));
        }
    }
}

impl ARPQuerier {
    /// Runs `f` with the table in `self.table`: the shared one (TABLE),
    /// locked and swapped in for the call, or the querier's own.
    fn with_table<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let Some(shared) = self.shared.take() else {
            return f(self);
        };
        let r = {
            let mut g = lock_table(&shared);
            std::mem::swap(&mut self.table, &mut *g);
            let r = f(self);
            std::mem::swap(&mut self.table, &mut *g);
            r
        };
        self.shared = Some(shared);
        r
    }

    /// Reads the table (shared or own).
    fn read_table<R>(&self, f: impl FnOnce(&Table) -> R) -> R {
        match &self.shared {
            Some(t) => f(&lock_table(t)),
            None => f(&self.table),
        }
    }

    fn dropped(&self) -> u64 {
        self.drops + self.read_table(|t| t.drops())
    }

    fn write_insert(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let words = split_words(value);
        if words.len() != 2 {
            return Err("expected 'IP ETH'".into());
        }
        let ip = parse_ipv4(&words[0]).map_err(|e| format!("IP: {e}"))?;
        let eth = rclick_core::conf::parse_ether(&words[1]).map_err(|e| format!("ETH: {e}"))?;
        self.with_table(|me| {
            let held = me.table.insert(ip, eth, ctx.now());
            for q in held {
                me.handle_ip(q, true, ctx);
            }
        });
        Ok(())
    }

    fn write_delete(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let words = split_words(value);
        if words.len() != 1 {
            return Err("expected IP address".into());
        }
        let ip = parse_ipv4(&words[0]).map_err(|e| format!("IP: {e}"))?;
        let now = ctx.now();
        // As Click: the entry stays, invalid, with its held packets.
        self.with_table(|me| me.table.invalidate(ip, now));
        Ok(())
    }

    fn write_clear(&mut self, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        self.queries = 0;
        self.drops = 0;
        self.responses = 0;
        self.with_table(|me| me.table.clear());
        Ok(())
    }
}

const HANDLERS: &[Handler<ARPQuerier>] = &[
    Handler::read("table", |e, ctx| e.read_table(|t| t.text(ctx.now()))),
    Handler::read("stats", |e, _| {
        format!(
            "{} packets killed\n{} ARP queries sent\n",
            e.dropped(),
            e.queries
        )
    }),
    Handler::read("count", |e, _| e.read_table(|t| t.count()).to_string()),
    Handler::read("length", |e, _| e.read_table(|t| t.length()).to_string()),
    Handler::data("queries", |e| &e.queries),
    Handler::data("responses", |e| &e.responses),
    Handler::read("drops", |e, _| e.dropped().to_string()),
    Handler::data_rw("ipaddr", |e| &e.my_ip, |e| &mut e.my_ip),
    Handler::data_rw("broadcast", |e| &e.bcast, |e| &mut e.bcast),
    Handler::write("insert", ARPQuerier::write_insert),
    Handler::write("delete", ARPQuerier::write_delete),
    Handler::write("clear", ARPQuerier::write_clear),
];

rclick_core::element_class!(ARPQuerier);

impl Element for ARPQuerier {
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
        self.configure_args(conf, ctx)
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if self.shared.is_some() {
            // The ARPTable expires its entries.
            return Ok(());
        }
        let t = ctx.new_timer();
        self.timer = Some(t);
        if self.table.timeout != 0 {
            let when = ctx.now() + Timestamp(self.table.timeout);
            ctx.schedule_timer_at(t, when);
        }
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        // One packet for the hot entry (at BURST 1, nearly every packet):
        // addressed and sent on with no table work at all.
        if port == 0 && batch.len() == 1 && self.shared.is_none() && !self.my_ip.is_unspecified() {
            if let Some((ip, eth)) = self.table.hot_at(ctx.recent(), self.poll_timeout) {
                let p = &mut batch.packets_mut()[0];
                // Addressed here only where the header goes in with no
                // copy (a shared packet, or one with no headroom, takes
                // the general path, which copies): no call, so no
                // registers kept across one.
                if p.dst_ip_anno() == ip {
                    if let Some(frame) = p.push_in_place(HEADER_LEN) {
                        self.emit_header(frame, eth);
                        ctx.emit_batch(0, batch);
                        return;
                    }
                }
            }
        }
        self.push_slow(port, batch, ctx);
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        self.with_table(|me| {
            let now = ctx.now();
            me.table.slim(now);
            me.schedule_expiry(ctx);
        });
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        self.take_old(old)
    }

    rclick_core::handlers!(HANDLERS);
}

impl ARPQuerier {
    /// Every batch but one packet for the hot entry: kept out of line so
    /// that the hot entry's path in `push` saves few registers.
    #[inline(never)]
    fn push_slow(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        self.with_table(|me| me.push_batch(port, batch, ctx));
    }

    fn push_batch(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if port != 0 {
            for p in batch {
                self.handle_response(&p, ctx);
            }
            return;
        }
        // The driver's latest clock reading (no clock read per batch: at
        // BURST 1 that was one per packet; entries live for minutes and
        // polls are 100 ms apart, and the reading is at most one driver
        // round old), and one table lookup per run of packets for the
        // same next hop: within a batch the time does not move, so an
        // entry that was known and did not need a poll for the first
        // packet is known and needs none for the next ones (a poll, once
        // sent, is not due again at the same time).
        let now = ctx.recent();
        // The hot entry stands for a lookup (across batches: it was made by
        // an earlier one), except when this interface has no address,
        // when every packet is dropped.
        let mut last: Option<(Ipv4Addr, EtherAddr)> = if self.my_ip.is_unspecified() {
            None
        } else {
            self.table.hot_at(now, self.poll_timeout)
        };
        // The common batch: every packet to one next hop. Then a query
        // (for a held packet, or a poll) can only be sent before the first
        // packet is addressed, since from then on the cached entry serves
        // the rest; so the batch is addressed in place and leaves whole.
        let (uniform, first_ip) = match batch.packets() {
            [first, rest @ ..] => {
                let ip = first.dst_ip_anno();
                (rest.iter().all(|p| p.dst_ip_anno() == ip), ip)
            }
            [] => return,
        };
        if uniform {
            last = last.filter(|(ip, _)| *ip == first_ip);
            let mut batch = batch;
            batch.retain_map(|mut p| {
                if let Some((_, eth)) = last {
                    if self.address(&mut p, false, eth).is_some() {
                        return Some(p);
                    }
                    self.drops += 1;
                    return None;
                }
                let dst_ip = p.dst_ip_anno();
                let (p, eth) = self.resolve_ip_at(p, false, now, ctx)?;
                last = Some((dst_ip, eth));
                Some(p)
            });
            if !batch.is_empty() {
                ctx.emit_batch(0, batch);
            }
            return;
        }
        // Addressed packets collect in `out` and leave as one batch; a
        // packet that needs the table may send a query on output 0 first,
        // so the packets before it leave before that query, as in Click.
        let mut out = Batch::new();
        for mut p in batch {
            let dst_ip = p.dst_ip_anno();
            if let Some((_, eth)) = last.filter(|(ip, _)| *ip == dst_ip) {
                if self.address(&mut p, false, eth).is_some() {
                    out.push(p);
                } else {
                    self.drops += 1;
                }
                continue;
            }
            if !out.is_empty() {
                ctx.emit_batch(0, std::mem::take(&mut out));
            }
            // Holding a packet or adding an entry can evict the cached one.
            last = None;
            if let Some((p, eth)) = self.resolve_ip_at(p, false, now, ctx) {
                last = Some((dst_ip, eth));
                out.push(p);
            }
        }
        ctx.emit_batch(0, out);
    }

    fn take_old(&mut self, old: &mut dyn Element) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<ARPQuerier>() else {
            return false;
        };
        if old.my_ip != self.my_ip || old.my_eth != self.my_eth || old.bcast != self.bcast {
            return false;
        }
        // A table shared with an ARPTable goes over with that element.
        if self.shared.is_none() && old.shared.is_none() {
            self.table.take_from(&mut old.table);
        }
        self.queries = old.queries;
        self.responses = old.responses;
        self.drops = old.drops;
        true
    }
}
