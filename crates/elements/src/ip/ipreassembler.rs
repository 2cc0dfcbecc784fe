//! # IPReassembler
//!
//! Reassembles fragmented IP packets.
//!
//! ## Synopsis
//! `IPReassembler([*keywords* HIMEM, MAX_MTU_ANNO, TIMEOUT])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for whole packets; optional push
//! output 1 for incomplete datagrams given up on. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set. Packets that are not
//! fragments pass through unchanged. Fragments are held, keyed by source,
//! destination, protocol and IP ID, until every byte of the datagram has
//! arrived, in any order; overlapping and duplicate fragments are accepted
//! (later data overwrites earlier). The reassembled packet is emitted on
//! output 0: it has the link header, IP header and annotations of the
//! fragment at offset 0, the timestamp of the completing fragment, MF and
//! the fragment offset cleared, the IP length of the whole datagram and a
//! correct header checksum.
//!
//! Invalid fragments are dropped and counted: a datagram end beyond 65535,
//! an empty fragment, a fragment with MF whose end is not a multiple of 8,
//! a fragment shorter than its IP length says, data beyond the end that a
//! last fragment fixed, or a last fragment ending before data already
//! received.
//!
//! A datagram not completed within TIMEOUT of its first fragment is given
//! up: if output 1 exists, a packet with the data received so far at
//! their proper offsets (holes zeroed) is pushed there (attach
//! `ICMPError(ADDR, timeexceeded, reassembly)`), else it is dropped. The
//! router clock drives expiry. Memory is bounded: when the held data (plus
//! 40 bytes per datagram) exceeds HIMEM, the oldest datagrams are given up
//! until it falls to 3/4 HIMEM. Per-datagram state is at most 64 KB of data
//! and one interval per hole.
//!
//! ## Keywords
//! - **HIMEM** (unsigned): memory bound in bytes. Default 256K.
//!   `MAX_MEMORY` is accepted as a synonym.
//! - **MAX_MTU_ANNO** (annotation name or offset, 2 bytes): set on
//!   reassembled packets to the largest fragment's network length.
//! - **TIMEOUT** (time): how long an incomplete datagram is kept. Default
//!   30 seconds.
//!
//! ## Handlers
//! - `dump` (read): statistics and the datagrams being reassembled, one per
//!   line as `SRC > DST PROTO ID` followed by the `(off,lastoff)` ranges
//!   received.
//! - `mem_used` (read): bytes held (an rclick addition, listed after
//!   Click's handlers).
//!
//! ## Example
//! ```click
//! reasm :: IPReassembler(HIMEM 1048576);
//! CheckIPHeader -> reasm -> ToHost;
//! reasm[1] -> ICMPError(18.26.4.24, timeexceeded, reassembly) -> rt;
//! ```

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use rclick_core::conf::{parse_seconds, parse_u32, parse_usize, Args};
use rclick_core::packet::{anno, ANNO_SIZE, DEFAULT_HEADROOM};
use rclick_core::wire::ipv4::{IP_MF, IP_OFFMASK};
use rclick_core::wire::Ipv4Header;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};
use rclick_core::{TimerId, Timestamp};

use super::ipcommon::{ip_hdr, net_off};

const IPH_MEM_USED: usize = 40;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Key {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    id: u16,
}

struct Datagram {
    /// The fragment at offset 0 once seen (its headers and annotations are
    /// the output's), else the first fragment that arrived.
    head: Packet,
    /// Data bytes, indexed by fragment offset.
    data: Vec<u8>,
    /// Received byte ranges, sorted, disjoint and non-adjacent.
    ranges: Vec<(usize, usize)>,
    /// The datagram's data length, once the last fragment arrived.
    total: Option<usize>,
    created: Timestamp,
    max_frag: usize,
}

impl Datagram {
    fn mem(&self) -> usize {
        IPH_MEM_USED + self.data.len() + self.head.len()
    }

    fn add_range(&mut self, a: usize, b: usize) {
        // Merge [a, b) with every range it overlaps or touches.
        let i = self.ranges.partition_point(|&(_, e)| e < a);
        let mut j = i;
        let (mut lo, mut hi) = (a, b);
        while j < self.ranges.len() && self.ranges[j].0 <= b {
            lo = lo.min(self.ranges[j].0);
            hi = hi.max(self.ranges[j].1);
            j += 1;
        }
        self.ranges.splice(i..j, std::iter::once((lo, hi)));
    }

    fn complete(&self) -> bool {
        matches!(self.total, Some(t) if self.ranges.len() == 1 && self.ranges[0] == (0, t))
    }
}

pub struct IPReassembler {
    himem: usize,
    timeout: Timestamp,
    mtu_anno: Option<usize>,
    map: HashMap<Key, Datagram>,
    mem_used: usize,
    frags_seen: u64,
    good: u64,
    failed: u64,
    bad: u64,
    timer: Option<TimerId>,
    has_output1: bool,
}

impl Default for IPReassembler {
    fn default() -> Self {
        IPReassembler {
            himem: 256 * 1024,
            timeout: Timestamp::from_sec_nsec(30, 0),
            mtu_anno: None,
            map: HashMap::new(),
            mem_used: 0,
            frags_seen: 0,
            good: 0,
            failed: 0,
            bad: 0,
            timer: None,
            has_output1: false,
        }
    }
}

fn parse_anno2(s: &str) -> Result<usize, String> {
    if let Some((off, size)) = anno::by_name(s) {
        return if size >= 2 {
            Ok(off)
        } else {
            Err(format!("annotation '{s}' is too small"))
        };
    }
    match parse_usize(s) {
        Ok(off) if off <= ANNO_SIZE - 2 => Ok(off),
        _ => Err("expected annotation".to_string()),
    }
}

impl IPReassembler {
    /// A packet holding what `d` received: its head's headers and the data
    /// at their offsets, IP length fixed and checksum recomputed.
    fn assemble(d: &Datagram, dlen: usize, clear_mf: bool) -> Option<Packet> {
        let off = net_off(&d.head)?;
        let hl = ip_hdr(&d.head)?.header_len();
        let hdr_end = off + hl;
        let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], hdr_end + dlen);
        {
            let b = q.put(hdr_end + dlen)?;
            b[..hdr_end].copy_from_slice(&d.head.data()[..hdr_end]);
            let n = dlen.min(d.data.len());
            b[hdr_end..hdr_end + n].copy_from_slice(&d.data[..n]);
            b[hdr_end + n..].fill(0);
            let mut h = Ipv4Header::new_checked(&mut b[off..]).ok()?;
            let mut word = h.frag_word() & !IP_OFFMASK;
            if clear_mf {
                word &= !IP_MF;
            }
            h.set_frag_word(word);
            h.set_total_len((hl + dlen).min(65535) as u16);
            h.fill_checksum();
        }
        q.copy_annotations(&d.head);
        q.set_network_header(off, hl);
        Some(q)
    }

    fn give_up(&mut self, key: Key, ctx: &mut Ctx) {
        if let Some(d) = self.map.remove(&key) {
            self.mem_used -= d.mem();
            self.failed += 1;
            if self.has_output1 {
                let end = d.ranges.last().map_or(0, |r| r.1);
                if let Some(q) = Self::assemble(&d, end, false) {
                    ctx.emit(1, q);
                }
            }
        }
    }

    fn reap(&mut self, now: Timestamp, ctx: &mut Ctx) {
        let expired: Vec<Key> = self
            .map
            .iter()
            .filter(|(_, d)| d.created + self.timeout <= now)
            .map(|(k, _)| *k)
            .collect();
        for k in expired {
            self.give_up(k, ctx);
        }
    }

    fn reap_overfull(&mut self, ctx: &mut Ctx) {
        let low = self.himem / 4 * 3;
        let mut by_age: Vec<(Timestamp, Key)> =
            self.map.iter().map(|(k, d)| (d.created, *k)).collect();
        by_age.sort_by_key(|&(t, k)| (t, u32::from(k.src), u32::from(k.dst), k.id, k.proto));
        for (_, k) in by_age {
            if self.mem_used <= low {
                break;
            }
            self.give_up(k, ctx);
        }
    }

    fn schedule(&self, ctx: &mut Ctx) {
        if let Some(t) = self.timer {
            if let Some(first) = self.map.values().map(|d| d.created).min() {
                ctx.schedule_timer_at(t, first + self.timeout);
            } else {
                ctx.unschedule_timer(t);
            }
        }
    }

    fn handle(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let off = net_off(&p)?;
        let Ok(h) = Ipv4Header::new_checked(&p.data()[off..]) else {
            // Not a valid IP header: cannot be a fragment we understand.
            self.bad += 1;
            return None;
        };
        if !h.is_fragment() {
            return Some(p);
        }
        self.frags_seen += 1;
        let now = ctx.now();
        self.reap(now, ctx);

        let hl = h.header_len();
        let p_off = h.frag_offset();
        let ip_len = h.total_len() as usize;
        let mf = h.more_frags();
        let key = Key {
            src: h.src(),
            dst: h.dst(),
            proto: h.protocol(),
            id: h.ident(),
        };
        let avail = p.len() - off - hl;
        let p_last = p_off + ip_len.saturating_sub(hl);
        if ip_len < hl
            || p_last > 0xffff
            || p_last <= p_off
            || (mf && p_last % 8 != 0)
            || avail < p_last - p_off
        {
            self.bad += 1;
            return None;
        }
        let net_len = off + hl + (p_last - p_off) - off;

        if self.mem_used > self.himem {
            self.reap_overfull(ctx);
        }

        // Only the headers of a fragment are kept as the datagram's head.
        let head_of = |p: &Packet| {
            let mut h = p.clone();
            h.take(h.len() - (off + hl));
            h
        };
        if !self.map.contains_key(&key) {
            let d = Datagram {
                head: head_of(&p),
                data: Vec::new(),
                ranges: Vec::new(),
                total: None,
                created: now,
                max_frag: 0,
            };
            self.mem_used += d.mem();
            self.map.insert(key, d);
        }
        let d = self.map.get_mut(&key)?;
        let mem_before = d.mem();
        // Consistency with a known end.
        if let Some(t) = d.total {
            if p_last > t || (!mf && p_last != t) {
                self.bad += 1;
                return None;
            }
        } else if !mf && d.ranges.last().is_some_and(|r| r.1 > p_last) {
            self.bad += 1;
            return None;
        }
        if p_last > d.data.len() {
            d.data.resize(p_last, 0);
        }
        d.data[p_off..p_last].copy_from_slice(&p.data()[off + hl..off + hl + (p_last - p_off)]);
        d.add_range(p_off, p_last);
        d.max_frag = d.max_frag.max(net_len);
        if !mf {
            d.total = Some(p_last);
        }
        if p_off == 0 {
            d.head = head_of(&p);
        }
        self.mem_used = self.mem_used - mem_before + d.mem();
        let done = d.complete();
        if done {
            let d = self.map.remove(&key)?;
            self.mem_used -= d.mem();
            self.good += 1;
            let total = d.total.unwrap_or(0);
            let mut q = Self::assemble(&d, total, true)?;
            q.set_timestamp_anno(p.timestamp_anno());
            if let Some(a) = self.mtu_anno {
                q.set_anno_bytes(a, &(d.max_frag.min(65535) as u16).to_be_bytes());
            }
            self.schedule(ctx);
            return Some(q);
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
            self.frags_seen, self.good, self.failed, self.bad
        );
        let mut keys: Vec<&Key> = self.map.keys().collect();
        keys.sort_by_key(|k| (u32::from(k.src), u32::from(k.dst), k.proto, k.id));
        for k in keys {
            let d = &self.map[k];
            s.push_str(&format!(" {} > {} {} {}", k.src, k.dst, k.proto, k.id));
            for (a, b) in &d.ranges {
                s.push_str(&format!(" ({a},{b})"));
            }
            s.push('\n');
        }
        s
    }
}

impl SimpleAction for IPReassembler {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        self.handle(p, ctx)
    }
}

// rclick's `mem_used` first, so that Click's `dump` keeps its place in
// the listing (newest first).
const HANDLERS: &[Handler<IPReassembler>] = &[
    Handler::data("mem_used", |e| &e.mem_used),
    Handler::read("dump", |e, _| e.dump()),
];

rclick_core::element_class!(IPReassembler);

impl Element for IPReassembler {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let himem = args.read_with("HIMEM", parse_u32);
        let maxmem = args.read_with("MAX_MEMORY", parse_u32);
        let mtu_anno = args.read_with("MAX_MTU_ANNO", parse_anno2);
        let timeout: Duration =
            args.read_or_with("TIMEOUT", parse_seconds, Duration::from_secs(30));
        args.complete()?;
        self.himem = himem.or(maxmem).unwrap_or(256 * 1024) as usize;
        self.mtu_anno = mtu_anno;
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
