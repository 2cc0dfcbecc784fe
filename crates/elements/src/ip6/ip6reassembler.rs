//! # IP6Reassembler
//!
//! Reassembles fragmented IPv6 packets.
//!
//! ## Synopsis
//! `IP6Reassembler([*keywords* HIMEM, TIMEOUT])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for whole packets; optional push
//! output 1 for the first fragments of datagrams that timed out. Processing
//! `a/ah`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set. Packets without a
//! fragment header (looked for after any hop-by-hop, destination options
//! and routing headers) pass through unchanged. Fragments are held, keyed
//! by source, destination and identification (RFC 8200 section 4.5),
//! until the whole datagram has arrived, in any order. The reassembled
//! packet, emitted on output 0, has the link header, the unfragmentable
//! part and the annotations of the fragment at offset 0, the fragment
//! header removed (the header before it naming the fragment header's next
//! header), the payload length of the whole datagram, and the timestamp of
//! the completing fragment.
//!
//! An atomic fragment (offset 0, M clear) is a whole packet (RFC 6946): its
//! fragment header is removed and it leaves at once, whatever else is
//! being reassembled.
//!
//! Dropped and counted in `drops` (never held): a packet whose headers are
//! truncated; a fragment with M set whose data is not a multiple of 8 bytes
//! or is empty; one that would make the reassembled payload exceed 65535
//! bytes (RFC 8200 section 4.5: headers before the fragment header and
//! data; the fragment header is gone); a first
//! fragment that does not hold the whole header chain up to the upper-layer
//! header (RFC 7112); a fragment inconsistent with a last fragment already
//! received. Overlapping fragments (RFC 5722) make the whole datagram be
//! discarded, silently, including fragments of it that arrive later (until
//! TIMEOUT from its first fragment); an exact duplicate of a fragment
//! already held is dropped and the datagram kept (RFC 8200 section 4.5
//! allows either).
//!
//! A datagram not completed within TIMEOUT of its first fragment is given
//! up; if its first fragment (offset 0) had arrived, that fragment is
//! pushed to output 1 (connect `ICMP6Error(ADDR, 3, 1)`, Time Exceeded,
//! fragment reassembly time exceeded, RFC 8200 section 4.5), else it
//! leaves silently. The router clock drives expiry. Memory is bounded:
//! when the held bytes (plus 64 per datagram) exceed HIMEM, the oldest
//! datagrams are discarded silently until 3/4 HIMEM is held.
//!
//! Click 2.1 has no IPv6 reassembler; the IPv6 elements report names it.
//!
//! ## Keywords
//! - **HIMEM** (unsigned): memory bound in bytes. Default 262144.
//! - **TIMEOUT** (time): how long an incomplete datagram is kept. Default
//!   60 seconds (RFC 8200).
//!
//! ## Handlers
//! - `dump` (read): counts, then the datagrams being reassembled, one per
//!   line as `SRC > DST ID` followed by the `(off,end)` ranges received.
//! - `mem_used` (read): bytes held.
//! - `drops` (read): fragments dropped (malformed, overlapping, duplicate,
//!   or belonging to a discarded datagram).
//!
//! ## Example
//! ```click
//! reasm :: IP6Reassembler;
//! CheckIP6Header -> reasm -> ToHost;
//! reasm[1] -> ICMP6Error(2001:db8::1, 3, 1) -> rt;
//! ```

use std::collections::{HashMap, VecDeque};
use std::net::Ipv6Addr;
use std::time::Duration;

use rclick_core::conf::{parse_seconds, parse_u32, Args};
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ESP, PROTO_NONE};
use rclick_core::wire::ipv6ext::{upper_layer, FRAG_HEADER_LEN};
use rclick_core::wire::{Ipv6FragHeader, Ipv6Header};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};
use rclick_core::{TimerId, Timestamp};

use super::common::{find_frag_header, fmt_ip6, upper_header_min};
use crate::ip::ipcommon::net_off;

/// Bytes counted per datagram besides its data.
const PER_DATAGRAM: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Key {
    src: Ipv6Addr,
    dst: Ipv6Addr,
    id: u32,
}

struct Datagram {
    /// The fragment at offset 0, whole, once it arrived.
    first: Option<Packet>,
    /// Data bytes after the fragment header, indexed by fragment offset.
    data: Vec<u8>,
    /// Received ranges, sorted and disjoint.
    ranges: Vec<(usize, usize)>,
    /// The data length, once the last fragment arrived.
    total: Option<usize>,
    created: Timestamp,
    /// Overlap seen: every fragment is dropped until the timeout.
    poisoned: bool,
}

impl Datagram {
    fn mem(&self) -> usize {
        PER_DATAGRAM + self.data.len() + self.first.as_ref().map_or(0, |p| p.len())
    }

    /// Whether [a, b) overlaps a held range; `Some(true)` for an exact
    /// duplicate.
    fn overlap(&self, a: usize, b: usize) -> Option<bool> {
        let i = self.ranges.partition_point(|&(_, e)| e <= a);
        match self.ranges.get(i) {
            Some(&(s, e)) if s < b => Some(s == a && e == b),
            _ => None,
        }
    }

    fn insert(&mut self, a: usize, b: usize) {
        let i = self.ranges.partition_point(|&(_, e)| e <= a);
        self.ranges.insert(i, (a, b));
    }

    fn complete(&self) -> bool {
        let Some(t) = self.total else { return false };
        let mut at = 0;
        for &(a, b) in &self.ranges {
            if a != at {
                return false;
            }
            at = b;
        }
        at == t
    }
}

pub struct IP6Reassembler {
    himem: usize,
    timeout: Timestamp,
    map: HashMap<Key, Datagram>,
    /// The datagrams by age (creation time, key), oldest first; an entry
    /// whose datagram is gone (or was made again later) is stale and
    /// skipped. Expiry, eviction and the timer look at the front only.
    ages: VecDeque<(Timestamp, Key)>,
    mem_used: usize,
    frags_seen: u64,
    good: u64,
    failed: u64,
    drops: u64,
    timer: Option<TimerId>,
    has_output1: bool,
}

impl Default for IP6Reassembler {
    fn default() -> Self {
        IP6Reassembler {
            himem: 256 * 1024,
            timeout: Timestamp::from_sec_nsec(60, 0),
            map: HashMap::new(),
            ages: VecDeque::new(),
            mem_used: 0,
            frags_seen: 0,
            good: 0,
            failed: 0,
            drops: 0,
            timer: None,
            has_output1: false,
        }
    }
}

/// A fragment's facts, read from its headers.
struct Frag {
    key: Key,
    /// Offset of the fixed header in the packet.
    off: usize,
    /// Offset of the fragment header in the IPv6 payload.
    frag_at: usize,
    /// The header whose next-header byte names the fragment header.
    field: Option<usize>,
    next_header: u8,
    start: usize,
    end: usize,
    more: bool,
}

/// Removes the fragment header at `frag_at` (in the payload) from a packet
/// whose IPv6 header is at `off`, keeping `dlen` data bytes after it:
/// builds the whole packet into a new buffer.
fn rebuild(head: &Packet, f: &Frag, data: &[u8]) -> Option<Packet> {
    let unfrag_end = f.off + HEADER_LEN + f.frag_at;
    let total = unfrag_end + data.len();
    let plen = total - f.off - HEADER_LEN;
    if plen > 0xffff {
        return None;
    }
    let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], total);
    {
        let b = q.put(total)?;
        b[..unfrag_end].copy_from_slice(head.data().get(..unfrag_end)?);
        b[unfrag_end..].copy_from_slice(data);
        match f.field {
            Some(at) => b[f.off + HEADER_LEN + at] = f.next_header,
            None => b[f.off + 6] = f.next_header,
        }
        Ipv6Header::new_checked(&mut b[f.off..])
            .ok()?
            .set_payload_len(plen as u16);
    }
    q.copy_annotations(head);
    q.set_network_header(f.off, HEADER_LEN);
    Some(q)
}

impl IP6Reassembler {
    fn parse(&self, p: &Packet) -> Result<Option<Frag>, ()> {
        let off = net_off(p).ok_or(())?;
        let h = Ipv6Header::new_checked(&p.data()[off..]).map_err(|_| ())?;
        let payload = h.payload();
        let Some((field, frag_at)) = find_frag_header(h.next_header(), payload).map_err(|_| ())?
        else {
            return Ok(None);
        };
        let fh = Ipv6FragHeader::new_checked(&payload[frag_at..]).map_err(|_| ())?;
        // Data up to the payload length; a packet shorter than it says is
        // truncated.
        if p.len() - off < HEADER_LEN + h.payload_len() as usize {
            return Err(());
        }
        let dlen = fh.payload().len();
        let start = fh.frag_offset();
        Ok(Some(Frag {
            key: Key {
                src: h.src(),
                dst: h.dst(),
                id: fh.ident(),
            },
            off,
            frag_at,
            field,
            next_header: fh.next_header(),
            start,
            end: start + dlen,
            more: fh.more_frags(),
        }))
    }

    fn give_up(&mut self, key: Key, ctx: &mut Ctx, report: bool) {
        if let Some(d) = self.map.remove(&key) {
            self.mem_used -= d.mem();
            if d.poisoned {
                return;
            }
            self.failed += 1;
            if let (true, true, Some(first)) = (report, self.has_output1, d.first) {
                ctx.emit(1, first);
            }
        }
    }

    /// Whether an age entry is its datagram's.
    fn live(&self, t: Timestamp, k: &Key) -> bool {
        self.map.get(k).is_some_and(|d| d.created == t)
    }

    /// Drops stale entries from the front of the age queue, and compacts it
    /// when stale entries (of completed datagrams) outnumber live ones, so
    /// that it stays within twice the datagrams held.
    fn tidy_ages(&mut self) {
        while let Some(&(t, k)) = self.ages.front() {
            if self.live(t, &k) {
                break;
            }
            self.ages.pop_front();
        }
        if self.ages.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.ages
                .retain(|(t, k)| map.get(k).is_some_and(|d| d.created == *t));
        }
    }

    fn reap(&mut self, now: Timestamp, ctx: &mut Ctx) {
        while let Some(&(t, k)) = self.ages.front() {
            if !self.live(t, &k) {
                self.ages.pop_front();
            } else if t + self.timeout <= now {
                self.ages.pop_front();
                self.give_up(k, ctx, true);
            } else {
                break;
            }
        }
    }

    fn reap_overfull(&mut self, ctx: &mut Ctx) {
        let low = self.himem / 4 * 3;
        while self.mem_used > low {
            let Some((t, k)) = self.ages.pop_front() else {
                break;
            };
            if self.live(t, &k) {
                self.give_up(k, ctx, false);
            }
        }
    }

    fn schedule(&mut self, ctx: &mut Ctx) {
        self.tidy_ages();
        if let Some(t) = self.timer {
            match self.ages.front() {
                Some(&(first, _)) => ctx.schedule_timer_at(t, first + self.timeout),
                None => ctx.unschedule_timer(t),
            }
        }
    }

    fn drop_frag(&mut self) -> Option<Packet> {
        self.drops += 1;
        None
    }

    fn handle(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let f = match self.parse(&p) {
            Ok(Some(f)) => f,
            Ok(None) => return Some(p),
            Err(()) => return self.drop_frag(),
        };
        self.frags_seen += 1;
        let data_at = f.off + HEADER_LEN + f.frag_at + FRAG_HEADER_LEN;
        if f.start == 0 && !f.more {
            // An atomic fragment: a whole packet (RFC 6946).
            let q = rebuild(&p, &f, &p.data()[data_at..data_at + (f.end - f.start)]);
            return match q {
                Some(mut q) => {
                    q.set_timestamp_anno(p.timestamp_anno());
                    self.good += 1;
                    Some(q)
                }
                None => self.drop_frag(),
            };
        }
        let unfrag = f.frag_at;
        if f.end == f.start
            || (f.more && (f.end - f.start) % 8 != 0)
            // The reassembled packet has no fragment header: its payload is
            // the unfragmentable extension headers and the data.
            || unfrag + f.end > 0xffff
        {
            return self.drop_frag();
        }
        if f.start == 0 {
            // RFC 7112: the first fragment holds the whole header chain.
            let rest = &p.data()[data_at..data_at + f.end];
            let whole = match upper_layer(f.next_header, rest) {
                Ok((PROTO_NONE | PROTO_ESP, _)) => true,
                Ok((nh, at)) => at + upper_header_min(nh) <= rest.len(),
                Err(_) => false,
            };
            if !whole {
                return self.drop_frag();
            }
        }
        let now = ctx.now();
        self.reap(now, ctx);
        if self.mem_used > self.himem {
            self.reap_overfull(ctx);
        }
        let key = f.key;
        let is_new = !self.map.contains_key(&key);
        let d = self.map.entry(key).or_insert_with(|| Datagram {
            first: None,
            data: Vec::new(),
            ranges: Vec::new(),
            total: None,
            created: now,
            poisoned: false,
        });
        if is_new {
            self.mem_used += d.mem();
            self.ages.push_back((now, key));
        }
        if d.poisoned {
            self.drops += 1;
            self.schedule(ctx);
            return None;
        }
        let inconsistent = match d.total {
            Some(t) => f.end > t || (!f.more && f.end != t),
            None => !f.more && d.ranges.last().is_some_and(|r| r.1 > f.end),
        };
        if inconsistent {
            self.drops += 1;
            return None;
        }
        match d.overlap(f.start, f.end) {
            Some(true) => {
                // An exact duplicate.
                self.drops += 1;
                return None;
            }
            Some(false) => {
                // RFC 5722: discard the datagram and all its fragments.
                self.drops += 1;
                let before = d.mem();
                d.poisoned = true;
                d.data = Vec::new();
                d.ranges.clear();
                d.first = None;
                self.mem_used = self.mem_used - before + d.mem();
                self.schedule(ctx);
                return None;
            }
            None => {}
        }
        let before = d.mem();
        if f.end > d.data.len() {
            d.data.resize(f.end, 0);
        }
        d.data[f.start..f.end].copy_from_slice(&p.data()[data_at..data_at + (f.end - f.start)]);
        d.insert(f.start, f.end);
        if !f.more {
            d.total = Some(f.end);
        }
        if f.start == 0 {
            // Keep the first fragment, for its headers and for the error.
            d.first = Some(p.clone());
        }
        self.mem_used = self.mem_used - before + d.mem();
        if d.complete() {
            let d = self.map.remove(&key)?;
            self.mem_used -= d.mem();
            let first = d.first.as_ref()?;
            let hf = self.parse(first).ok().flatten()?;
            let q = rebuild(first, &hf, &d.data[..d.total.unwrap_or(0)]);
            self.schedule(ctx);
            return match q {
                Some(mut q) => {
                    q.set_timestamp_anno(p.timestamp_anno());
                    self.good += 1;
                    Some(q)
                }
                None => self.drop_frag(),
            };
        }
        if self.mem_used > self.himem {
            self.reap_overfull(ctx);
        }
        self.schedule(ctx);
        None
    }

    fn dump(&self) -> String {
        let mut s = format!(
            "frags seen total:    {}\ngood reassemblies:   {}\nfailed reassemblies: {}\nbad fragments seen:  {}\ncached chunk data:\n",
            self.frags_seen, self.good, self.failed, self.drops
        );
        let mut keys: Vec<&Key> = self.map.keys().collect();
        keys.sort_by_key(|k| (u128::from(k.src), u128::from(k.dst), k.id));
        for k in keys {
            let d = &self.map[k];
            s.push_str(&format!(
                " {} > {} {}",
                fmt_ip6(k.src),
                fmt_ip6(k.dst),
                k.id
            ));
            if d.poisoned {
                s.push_str(" discarded");
            }
            for (a, b) in &d.ranges {
                s.push_str(&format!(" ({a},{b})"));
            }
            s.push('\n');
        }
        s
    }
}

impl SimpleAction for IP6Reassembler {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        self.handle(p, ctx)
    }
}

const HANDLERS: &[Handler<IP6Reassembler>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("mem_used", |e| &e.mem_used),
    Handler::read("dump", |e, _| e.dump()),
];

rclick_core::element_class!(IP6Reassembler);

impl Element for IP6Reassembler {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let himem = args.read_or_with("HIMEM", parse_u32, 256 * 1024);
        let timeout: Duration =
            args.read_or_with("TIMEOUT", parse_seconds, Duration::from_secs(60));
        args.complete()?;
        self.himem = himem as usize;
        self.timeout = Timestamp::from_duration(timeout);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.timer = Some(ctx.new_timer());
        self.has_output1 = ctx.noutputs() > 1;
        Ok(())
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        let now = ctx.now();
        self.reap(now, ctx);
        self.schedule(ctx);
    }

    rclick_core::handlers!(HANDLERS);
    rclick_core::element_kind!(action);
}
