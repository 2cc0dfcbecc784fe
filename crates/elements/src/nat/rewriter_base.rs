//! The machinery shared by the IPRewriter family (not an element class):
//! flow identifiers, rewrite patterns, input specifications, the mapping
//! table with its expiry heaps and capacity, and incremental checksum
//! updates (RFC 1624).
//!
//! A [`Table`] holds the flows of every rewriter sharing one capacity
//! (Click's `MAPPING_CAPACITY OTHER-ELEMENT`), their lookup maps and two
//! expiry heaps (guaranteed and best-effort flows), as Click's
//! `IPRewriterHeap`. Rewriters reach it through an `Arc<Mutex<..>>` locked
//! once per batch of packets; flows live in a slab (a `Vec` with a free
//! list), so a packet of an existing flow allocates nothing.

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};

use rclick_core::conf::split_args;
use rclick_core::wire::{Ipv4Header, TcpHeader, UdpHeader};
use rclick_core::{Ctx, Element, InitCtx, Packet};

use super::bindings::{Bindings, Inside};
use super::flowmap::{FlowMap, Probe};

/// Milliseconds of the router clock (Click's jiffies at user level).
pub type Jiffies = i64;

/// The router clock in jiffies.
pub fn jiffies(ctx: &Ctx) -> Jiffies {
    ctx.now().nanos().div_euclid(1_000_000)
}

/// The router clock in jiffies as of the driver's latest clock read (no
/// system call): see [`Ctx::recent`].
#[inline]
pub fn recent_jiffies(ctx: &Ctx) -> Jiffies {
    ctx.recent().nanos().div_euclid(1_000_000)
}

/// A flow: source and destination address and port (or ICMP identifier).
/// Addresses and ports are in host order. Hashed as one 96-bit word (see
/// [`FlowHashBuilder`]).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct FlowId {
    pub saddr: u32,
    pub daddr: u32,
    pub sport: u16,
    pub dport: u16,
}

impl FlowId {
    pub fn new(saddr: u32, sport: u16, daddr: u32, dport: u16) -> Self {
        FlowId {
            saddr,
            daddr,
            sport,
            dport,
        }
    }

    /// The flow of the replies.
    pub fn reverse(&self) -> Self {
        FlowId::new(self.daddr, self.dport, self.saddr, self.sport)
    }

    /// The 16-bit words of the addresses (IP checksum) and of the ports.
    fn addr_words(&self) -> [u16; 4] {
        [
            (self.saddr >> 16) as u16,
            self.saddr as u16,
            (self.daddr >> 16) as u16,
            self.daddr as u16,
        ]
    }
}

impl std::hash::Hash for FlowId {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let addrs = (u64::from(self.saddr) << 32) | u64::from(self.daddr);
        let ports = (u32::from(self.sport) << 16) | u32::from(self.dport);
        state.write_u128((u128::from(ports) << 64) | u128::from(addrs));
    }
}

/// The hasher of the flow maps: a folded multiply (the 128-bit product's
/// halves xored, as foldhash and ahash do) of the 96 bits of a [`FlowId`]
/// against two secret 64-bit keys drawn for each map, and a second one to
/// finish, so that flows crafted to collide need the keys (a fixed hash
/// lets a sender who knows it aim every flow at one bucket: each lookup
/// then walks them all).
#[derive(Clone)]
pub struct FlowHashBuilder {
    k0: u64,
    k1: u64,
}

impl Default for FlowHashBuilder {
    fn default() -> Self {
        use std::hash::BuildHasher;
        let seeds = std::collections::hash_map::RandomState::new();
        FlowHashBuilder {
            k0: seeds.hash_one(0x6e61_7430_u64),
            k1: seeds.hash_one(0x6e61_7431_u64),
        }
    }
}

impl FlowHashBuilder {
    /// The hash of a flow given as its two words (the addresses, the
    /// ports), as [`FlowHasher`] computes it.
    #[inline(always)]
    pub fn hash_words(&self, addrs: u64, ports: u32) -> u64 {
        folded_multiply(
            folded_multiply(addrs ^ self.k0, u64::from(ports) ^ self.k1),
            FINISH_KEY,
        )
    }
}

/// The constant of [`FlowHasher::finish`]'s multiply.
const FINISH_KEY: u64 = 0x9e37_79b9_7f4a_7c15;

impl std::hash::BuildHasher for FlowHashBuilder {
    type Hasher = FlowHasher;

    #[inline]
    fn build_hasher(&self) -> FlowHasher {
        FlowHasher {
            acc: 0,
            k0: self.k0,
            k1: self.k1,
        }
    }
}

/// The hasher of [`FlowHashBuilder`]: each 128-bit word written is folded
/// into the state by one multiply (a `FlowId` is one word).
pub struct FlowHasher {
    acc: u64,
    k0: u64,
    k1: u64,
}

#[inline]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let m = u128::from(a) * u128::from(b);
    (m as u64) ^ ((m >> 64) as u64)
}

impl std::hash::Hasher for FlowHasher {
    #[inline]
    fn write_u128(&mut self, n: u128) {
        let (lo, hi) = (n as u64, (n >> 64) as u64);
        self.acc = folded_multiply(lo ^ self.k0 ^ self.acc, hi ^ self.k1);
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(16) {
            let mut w = [0u8; 16];
            w[..c.len()].copy_from_slice(c);
            self.write_u128(u128::from_le_bytes(w));
        }
    }

    /// A second folded multiply, by a constant: one alone leaves flows
    /// that differ only in the low bits of a port with nearly the same
    /// top bits (a product grows little with a small change of one
    /// factor), and hashbrown keeps the top seven bits as its tags, so
    /// such flows would all share a few tags.
    #[inline]
    fn finish(&self) -> u64 {
        folded_multiply(self.acc, FINISH_KEY)
    }
}

impl fmt::Display for FlowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, {}, {})",
            Ipv4Addr::from(self.saddr),
            self.sport,
            Ipv4Addr::from(self.daddr),
            self.dport
        )
    }
}

/// One's-complement sum of `~old + new` over word pairs, folded: the
/// checksum delta of RFC 1624 eqn. 3 for a change from `old` to `new`.
pub fn csum_delta(old: &[u16], new: &[u16]) -> u16 {
    let mut s: u32 = 0;
    for (o, n) in old.iter().zip(new) {
        s += (!*o as u32 & 0xffff) + *n as u32;
    }
    fold(s)
}

/// Folds a 32-bit one's-complement sum to 16 bits: two folds always
/// suffice (the first leaves at most 0x1fffe, the second at most 0xffff),
/// without the loop's branches.
#[inline]
fn fold(s: u32) -> u16 {
    let s = (s & 0xffff) + (s >> 16);
    ((s & 0xffff) + (s >> 16)) as u16
}

/// Applies a delta from [`csum_delta`] to a checksum: HC' = ~(~HC + delta).
/// `reverse` applies the opposite change (new back to old).
pub fn apply_delta(csum: u16, delta: u16, reverse: bool) -> u16 {
    let d = if reverse { !delta } else { delta };
    !fold((!csum as u32 & 0xffff) + d as u32)
}

/// Adds a delta from [`csum_delta`] (or its complement, for the opposite
/// change) to a checksum: HC' = ~(~HC + delta), RFC 1624 eqn. 3.
#[inline(always)]
pub fn add_checksum_delta(csum: u16, delta: u16) -> u16 {
    // One's-complement addition of two 16-bit words: the carry out of
    // the top goes back in at the bottom, and cannot carry again (the
    // sum without it is at most 0xfffe when there is one).
    let (s, carry) = (!csum).overflowing_add(delta);
    !(s + u16::from(carry))
}

/// Updates a UDP checksum: 0 (no checksum) stays 0, and an update that
/// comes out 0 is sent as 0xffff (RFC 768: a computed zero is transmitted
/// as all ones; 0 would tell the receiver there is no checksum). Click
/// sends the 0.
pub fn apply_udp_delta(csum: u16, delta: u16, reverse: bool) -> u16 {
    if csum == 0 {
        return 0;
    }
    match apply_delta(csum, delta, reverse) {
        0 => 0xffff,
        c => c,
    }
}

/// Adds `a + b` with one's-complement carries (two deltas in one).
pub fn add_delta(a: u16, b: u16) -> u16 {
    fold(a as u32 + b as u32)
}

// ---------------------------------------------------------------------
// Patterns

/// A rewrite pattern (`SADDR SPORT DADDR DPORT`, Click's
/// IPRewriterPattern), with its port or address range and the rover for
/// sequential allocation. Shared between rewriters through
/// IPRewriterPatterns, so held as `Arc<Mutex<Pattern>>`; it is locked only
/// when a new flow is made.
#[derive(Clone, Debug)]
pub struct Pattern {
    saddr: u32,
    sport: u16,
    daddr: u32,
    dport: u16,
    variation_top: u32,
    next_variation: u32,
    is_napt: bool,
    sequential: bool,
    same_first: bool,
}

pub type SharedPattern = Arc<Mutex<Pattern>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn parse_int(s: &str) -> Option<i64> {
    rclick_core::conf::parse_i32(s).ok().map(|v| v as i64)
}

fn parse_addr(s: &str, ctx: &InitCtx) -> Option<u32> {
    crate::ip::address::parse_ipv4_arg(s, ctx)
        .ok()
        .map(u32::from)
}

/// Strips a `#` (sequential) or `?` (random, no port preservation) suffix.
fn variation_suffix<'a>(s: &'a str, sequential: &mut bool, same_first: &mut bool) -> &'a str {
    if let Some(r) = s.strip_suffix('#') {
        *sequential = true;
        *same_first = false;
        r
    } else if let Some(r) = s.strip_suffix('?') {
        *same_first = false;
        r
    } else {
        s
    }
}

impl Pattern {
    /// Parses the words of a pattern (1 to 4); one word names a pattern of
    /// an IPRewriterPatterns element, found with `named`.
    pub fn parse(
        words: &[String],
        ctx: &InitCtx,
        named: &dyn Fn(&str) -> Option<SharedPattern>,
    ) -> Result<SharedPattern, String> {
        if words.is_empty() || words.len() > 4 {
            return Err("syntax error".into());
        }
        if words.len() == 1 {
            return named(&words[0]).ok_or_else(|| format!("no such pattern '{}'", words[0]));
        }
        let mut p = Pattern {
            saddr: 0,
            sport: 0,
            daddr: 0,
            dport: 0,
            variation_top: 0,
            next_variation: 0,
            is_napt: words.len() >= 3,
            sequential: false,
            same_first: true,
        };
        let mut variation: u32 = 0;
        // source address
        let w = words[0].as_str();
        if w != "-" {
            if let Some(a) = parse_addr(w, ctx) {
                p.saddr = a;
            } else {
                let (mut seq, mut same) = (p.sequential, p.same_first);
                let body = variation_suffix(w, &mut seq, &mut same);
                let v = if let Some((a, b)) = body.split_once('-') {
                    match (parse_addr(a, ctx), parse_addr(b, ctx)) {
                        (Some(a), Some(b)) if b >= a => Some((a, b - a)),
                        _ => None,
                    }
                } else {
                    match rclick_core::conf::parse_ipv4_addr_or_prefix(body) {
                        Ok(pre) => {
                            let addr = u32::from(pre.addr);
                            let mask = u32::from(pre.mask);
                            if addr == 0 || mask == 0 || pre.prefix_len().is_none() {
                                None
                            } else if mask == 0xffff_ffff {
                                Some((addr, 0))
                            } else if mask == 0xffff_fffe {
                                Some((addr & mask, 1))
                            } else {
                                Some(((addr & mask) | 1, (!mask).wrapping_sub(2)))
                            }
                        }
                        Err(_) => None,
                    }
                };
                match v {
                    Some((a, var)) => {
                        p.saddr = a;
                        variation = var;
                        p.sequential = seq;
                        p.same_first = same;
                    }
                    None => return Err("bad source address".into()),
                }
            }
        }
        let mut i = 0;
        if words.len() >= 3 {
            i = if words.len() == 3 { 2 } else { 1 };
            let w = words[i].as_str();
            if w != "-" {
                match parse_int(w) {
                    Some(v) if v > 0 && v < 65536 => p.sport = v as u16,
                    _ => {
                        let (mut seq, mut same) = (p.sequential, p.same_first);
                        let body = variation_suffix(w, &mut seq, &mut same);
                        let (a, b) = body.split_once('-').unwrap_or((body, ""));
                        match (parse_int(a), parse_int(b)) {
                            (Some(a), Some(b)) if a >= 0 && b >= a && b < 65536 => {
                                p.sport = a as u16;
                                variation = (b - a) as u32;
                                p.sequential = seq;
                                p.same_first = same;
                            }
                            _ => return Err("bad source port".into()),
                        }
                    }
                }
            }
            i = if words.len() == 3 { 0 } else { 1 };
        }
        i += 1;
        let w = words[i].as_str();
        if w != "-" {
            p.daddr = parse_addr(w, ctx).ok_or("bad destination address")?;
        }
        if words.len() == 4 {
            let w = words[3].as_str();
            if w != "-" {
                match parse_int(w) {
                    Some(v) if v > 0 && v < 65536 => p.dport = v as u16,
                    _ => return Err("bad destination port".into()),
                }
            }
        }
        p.variation_top = variation;
        Ok(Arc::new(Mutex::new(p)))
    }

    /// The rewritten flow for `flow`, choosing a free port (or address)
    /// of the range: one whose reply flow `free` does not know, in Click's
    /// order (the flow's own port first if the pattern keeps it, then from
    /// a random or the sequential start, upwards with wrap-around). `None`
    /// when every value of the range is taken.
    #[inline]
    pub fn rewrite(&mut self, flow: &FlowId, free: &mut impl FreeValues) -> Option<FlowId> {
        let mut r = self.fixed_fields(flow);
        if self.variation_top == 0 {
            return Some(r);
        }
        let top = self.variation_top;
        let mut lookup = r.reverse();
        let (base, varied) = if self.is_napt {
            (self.sport as u32, Varied::Port)
        } else {
            (self.saddr, Varied::Addr)
        };
        let mut found = None;
        if self.same_first {
            let val = (flow.sport as u32).wrapping_sub(base);
            if val <= top {
                lookup.dport = flow.sport;
                if !free.taken(&lookup) {
                    found = Some(val);
                }
            }
        }
        let val = match found {
            Some(v) => v,
            None => {
                let start = self.search_start(top);
                let v = free.first_free(lookup, varied, base, top, start)?;
                varied.set(&mut lookup, base.wrapping_add(v));
                v
            }
        };
        if self.is_napt {
            r.sport = lookup.dport;
        } else {
            r.saddr = lookup.daddr;
        }
        self.next_variation = val.wrapping_add(1);
        Some(r)
    }

    /// Whether `flow`'s source endpoint holds an endpoint-independent
    /// binding on this pattern's outside address.
    fn binds(&self, flow: &FlowId, free: &impl FreeValues) -> bool {
        let inside = Inside {
            map: free.map_index(),
            addr: flow.saddr,
            port: flow.sport,
            outside_addr: self.fixed_fields(flow).saddr,
        };
        self.is_napt && self.variation_top != 0 && free.bindings().port_of(&inside).is_some()
    }

    /// Where a search for a free value of `0..=top` starts: after the
    /// last value chosen (sequential, `#`), else at random.
    fn search_start(&mut self, top: u32) -> u32 {
        if self.sequential {
            if self.next_variation > top {
                0
            } else {
                self.next_variation
            }
        } else {
            crate::standard::clickrandom::click_random_range(0, top)
        }
    }

    /// `flow` with the pattern's fixed fields (a range's first value).
    fn fixed_fields(&self, flow: &FlowId) -> FlowId {
        let mut r = *flow;
        if self.saddr != 0 {
            r.saddr = self.saddr;
        }
        if self.sport != 0 {
            r.sport = self.sport;
        }
        if self.daddr != 0 {
            r.daddr = self.daddr;
        }
        if self.dport != 0 {
            r.dport = self.dport;
        }
        r
    }

    /// [`Pattern::rewrite`] with an endpoint-independent mapping (see
    /// [`super::bindings`]), for a pattern with a port range: the port
    /// `flow`'s source endpoint is bound to on the pattern's address, if
    /// it has one; else its own
    /// port if the pattern keeps ports and no binding holds it; else a
    /// port no binding holds, from a random or the sequential start, free
    /// towards the destination, and with the source port's parity if
    /// `parity` and such a port is left (RFC 4787 section 4.2.2, "port
    /// parity preservation"; else of the other parity). Also whether the
    /// new flow is to hold the binding: a pattern without a port range
    /// rewrites as `rewrite`, with none. `None`: the bound port is in use
    /// towards this destination by a flow that holds no binding (a mapping
    /// added by hand, or carried over a hot swap from a rewriter without
    /// ENDPOINT_INDEPENDENT), or no port is free.
    pub fn rewrite_endpoint_independent(
        &mut self,
        flow: &FlowId,
        free: &mut impl FreeValues,
        parity: bool,
    ) -> Option<(FlowId, bool)> {
        if !self.is_napt || self.variation_top == 0 {
            return self.rewrite(flow, free).map(|r| (r, false));
        }
        let mut r = self.fixed_fields(flow);
        let map = free.map_index();
        let outside_addr = r.saddr;
        let inside = Inside {
            map,
            addr: flow.saddr,
            port: flow.sport,
            outside_addr,
        };
        let reply_key = r.reverse();
        let mut reply_free = |free: &mut dyn FreeValues, port: u16| {
            r.sport = port;
            !free.taken(&r.reverse())
        };
        if let Some(port) = free.bindings().port_of(&inside) {
            return reply_free(free, port).then_some((r, true));
        }
        let lo = self.sport;
        // An address range's variation (Click varies the port by it) can
        // reach past 2^32 from the port.
        let hi =
            u16::try_from(u32::from(lo).saturating_add(self.variation_top)).unwrap_or(u16::MAX);
        let top = u32::from(hi - lo);
        let kept = flow.sport;
        if self.same_first
            && (lo..=hi).contains(&kept)
            && !free.bindings().is_held(map, outside_addr, kept)
            && reply_free(free, kept)
        {
            self.next_variation = u32::from(kept - lo) + 1;
            return Some((r, true));
        }
        let start = self.search_start(top);
        // The inside port's parity first, if asked for; when no port of
        // it is left, any port (RFC 4787 recommends keeping the parity,
        // not refusing a flow for it).
        let parities = if parity {
            [Some(kept % 2), None]
        } else {
            [None, None]
        };
        // Ports held by bindings and ports in use towards the destination
        // (flows holding none) each have a bitmap: the searches take
        // turns, each from where the other stopped, once round the range
        // at most. `at` is the search's offset in the range, `walked` how
        // far it is from `start`.
        let lap = top + 1;
        let offset = |port: u16| u32::from(port - lo);
        for (i, parity) in parities.into_iter().enumerate() {
            if i == 1 && parities[0].is_none() {
                break;
            }
            let (mut at, mut walked) = (start, 0u32);
            loop {
                let from = lo + at as u16;
                let Some(port) =
                    free.bindings()
                        .first_free(map, outside_addr, (lo, hi), from, parity)
                else {
                    break;
                };
                walked += (offset(port) + lap - at) % lap;
                if walked >= lap {
                    break;
                }
                if reply_free(free, port) {
                    self.next_variation = offset(port) + 1;
                    return Some((r, true));
                }
                at = (offset(port) + 1) % lap;
                walked += 1;
                if walked >= lap {
                    break;
                }
                let Some(v) = free.first_free(reply_key, Varied::Port, u32::from(lo), top, at)
                else {
                    break;
                };
                walked += (v + lap - at) % lap;
                if walked >= lap {
                    break;
                }
                at = v;
            }
        }
        None
    }

    /// Click's unparse: `SADDR SPORT DADDR DPORT` with ranges.
    pub fn unparse(&self) -> String {
        let mut s = String::new();
        if !self.is_napt && self.variation_top != 0 {
            s += &format!(
                "{}-{}",
                Ipv4Addr::from(self.saddr),
                Ipv4Addr::from(self.saddr.wrapping_add(self.variation_top))
            );
        } else if self.saddr != 0 {
            s += &Ipv4Addr::from(self.saddr).to_string();
        } else {
            s.push('-');
        }
        if self.is_napt {
            if self.sport == 0 {
                s += " -";
            } else if self.variation_top != 0 {
                s += &format!(" {}-{}", self.sport, self.sport as u32 + self.variation_top);
            } else {
                s += &format!(" {}", self.sport);
            }
        }
        if self.daddr != 0 {
            s += &format!(" {}", Ipv4Addr::from(self.daddr));
        } else {
            s += " -";
        }
        if self.is_napt {
            if self.dport == 0 {
                s += " -";
            } else {
                s += &format!(" {}", self.dport);
            }
        }
        s
    }
}

/// Splits on spaces (Click's `cp_spacevec`).
pub fn space_words(s: &str) -> Vec<String> {
    rclick_core::conf::split_words(s)
}

/// The patterns of the IPRewriterPatterns elements of the router, by
/// name, for one-word patterns.
pub fn named_pattern(ctx: &InitCtx, name: &str) -> Option<SharedPattern> {
    let mut i = 0;
    while let Some(class) = ctx.element_class_of(i) {
        i += 1;
        if class != "IPRewriterPatterns" {
            continue;
        }
        let i = i - 1;
        let found = ctx
            .with_element(i, |e| {
                e.as_any()
                    .downcast_ref::<super::iprewriterpatterns::IPRewriterPatterns>()
                    .and_then(|p| p.get(name))
            })
            .flatten();
        if found.is_some() {
            return found;
        }
    }
    None
}

// ---------------------------------------------------------------------
// Mappers

/// What a mapper element (RoundRobinIPMapper, SourceIPHashMapper) does
/// for a new flow: picks one of its patterns.
pub struct Mapper {
    pub patterns: Vec<(SharedPattern, usize, usize)>,
    pub kind: MapperKind,
}

pub enum MapperKind {
    RoundRobin {
        next: usize,
    },
    /// A ring of (hash point, pattern index), sorted.
    SourceHash {
        ring: Vec<(u32, usize)>,
    },
}

pub type SharedMapper = Arc<Mutex<Mapper>>;

impl Mapper {
    /// The pattern for a new flow, with its output ports.
    fn choose(&mut self, flow: &FlowId) -> Option<(SharedPattern, usize, usize)> {
        if self.patterns.is_empty() {
            return None;
        }
        let i = match &mut self.kind {
            MapperKind::RoundRobin { next } => {
                let i = *next % self.patterns.len();
                *next = (i + 1) % self.patterns.len();
                i
            }
            MapperKind::SourceHash { ring } => {
                let h = hash32(flow.saddr);
                let pos = ring.partition_point(|(p, _)| *p < h);
                ring.get(pos).or(ring.first()).map_or(0, |(_, i)| *i)
            }
        };
        self.patterns.get(i).cloned()
    }

    /// The pattern on whose outside address `flow`'s source endpoint holds
    /// an endpoint-independent binding, if any: its new flows take that
    /// pattern again, whichever [`Mapper::choose`] would pick, for the
    /// same outside endpoint towards every destination (RFC 4787 REQ-1).
    fn bound_choice(
        &self,
        flow: &FlowId,
        free: &impl FreeValues,
    ) -> Option<(SharedPattern, usize, usize)> {
        if free.bindings().is_empty() {
            return None;
        }
        self.patterns
            .iter()
            .find(|(p, _, _)| lock(p).binds(flow, free))
            .cloned()
    }
}

/// A 32-bit mix of an address (SourceIPHashMapper's ring).
pub fn hash32(x: u32) -> u32 {
    let mut h = x.wrapping_mul(0x9e37_79b9);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The mapper state of a mapper element, if `e` is one.
pub fn mapper_of(e: &dyn Element) -> Option<SharedMapper> {
    if let Some(m) = e
        .as_any()
        .downcast_ref::<super::roundrobinipmapper::RoundRobinIPMapper>()
    {
        return Some(m.mapper.clone());
    }
    e.as_any()
        .downcast_ref::<super::sourceiphashmapper::SourceIPHashMapper>()
        .map(|m| m.mapper.clone())
}

// ---------------------------------------------------------------------
// Input specifications

#[derive(Clone)]
pub enum SpecKind {
    Drop,
    NoChange,
    Keep,
    Pattern(SharedPattern),
    Mapper(SharedMapper),
}

/// One input's specification (Click's IPRewriterInput).
#[derive(Clone)]
pub struct InputSpec {
    pub kind: SpecKind,
    pub foutput: usize,
    pub routput: usize,
}

/// How a rewriter's patterns map inside endpoints to outside ones.
#[derive(Clone, Copy, Default, Debug)]
pub struct MappingBehaviour {
    /// `ENDPOINT_INDEPENDENT`: one outside port per inside endpoint, for
    /// every destination (see [`super::bindings`]). Click's rewriters
    /// choose a port per flow.
    pub endpoint_independent: bool,
    /// `PORT_PARITY`: a chosen port has the parity of the inside one
    /// while such a port is left.
    pub port_parity: bool,
}

/// What an input spec says about a packet of an unknown flow.
pub enum Decision {
    /// Leave it unchanged, to this output.
    Output(usize),
    Drop,
    /// Make a flow rewriting to this flow id, with these outputs; whether
    /// it holds its inside endpoint's binding (see [`super::bindings`]).
    Add(FlowId, usize, usize, bool),
    /// The pattern found no free port or address.
    Failed,
}

impl InputSpec {
    /// Parses input spec `n` (`pass`, `drop`, `keep F R`, `pattern ... F R`,
    /// a mapper element name). Errors are prefixed as in Click.
    pub fn parse(text: &str, n: usize, noutputs: usize, ctx: &InitCtx) -> Result<Self, String> {
        Self::parse_inner(text, noutputs, ctx).map_err(|e| format!("input spec {n}: {e}"))
    }

    fn parse_inner(text: &str, noutputs: usize, ctx: &InitCtx) -> Result<Self, String> {
        let text = text.trim();
        let (word, rest) = match text.find(|c: char| c.is_ascii_whitespace()) {
            Some(i) => (&text[..i], text[i..].trim()),
            None => (text, ""),
        };
        if word.is_empty() {
            return Err("empty argument".into());
        }
        let mut spec = InputSpec {
            kind: SpecKind::Drop,
            foutput: 0,
            routput: 0,
        };
        let ports = |words: &[String]| -> Result<(usize, usize), String> {
            let f = match words {
                [f, _] => parse_int(f),
                _ => None,
            }
            .ok_or("bad forward port")?;
            let r = parse_int(&words[1]).ok_or("bad reply port")?;
            if f < 0 || f as usize >= noutputs || r < 0 || r as usize >= noutputs {
                return Err("output port out of range".to_string());
            }
            Ok((f as usize, r as usize))
        };
        match word {
            "pass" | "passthrough" | "nochange" => {
                let out = if rest.is_empty() {
                    0
                } else {
                    parse_int(rest).ok_or("syntax error, expected 'nochange [OUTPUT]'")?
                };
                if out < 0 || out as usize >= noutputs {
                    return Err("output port out of range".into());
                }
                spec.kind = SpecKind::NoChange;
                spec.foutput = out as usize;
            }
            "keep" => {
                (spec.foutput, spec.routput) = ports(&space_words(rest))?;
                spec.kind = SpecKind::Keep;
            }
            "drop" | "discard" => {
                if !rest.is_empty() {
                    return Err(format!("syntax error, expected '{word}'"));
                }
            }
            "pattern" | "xpattern" => {
                let mut words = space_words(rest);
                if words.len() <= 2 {
                    return Err("syntax error".into());
                }
                let port_words = words.split_off(words.len() - 2);
                let named = |name: &str| named_pattern(ctx, name);
                let pat = Pattern::parse(&words, ctx, &named)?;
                (spec.foutput, spec.routput) = ports(&port_words)?;
                spec.kind = SpecKind::Pattern(pat);
            }
            _ => {
                let Some(idx) = ctx.find_element(word) else {
                    return Err("unknown specification".into());
                };
                if !rest.is_empty() {
                    return Err("syntax error, expected element name".into());
                }
                let m = ctx.with_element(idx, mapper_of).flatten();
                match m {
                    Some(m) => {
                        for (_, f, r) in &lock(&m).patterns {
                            if *f >= noutputs || *r >= noutputs {
                                return Err("output port out of range".into());
                            }
                        }
                        spec.kind = SpecKind::Mapper(m)
                    }
                    None => return Err("element is not an IPMapper".into()),
                }
            }
        }
        Ok(spec)
    }

    /// Click's `patterns` line for this spec (without the count).
    pub fn unparse(&self) -> String {
        match &self.kind {
            SpecKind::Drop => "<drop>".into(),
            SpecKind::NoChange => "<nochange>".into(),
            SpecKind::Keep => "<keep>".into(),
            SpecKind::Pattern(p) => lock(p).unparse(),
            SpecKind::Mapper(_) => "<mapper>".into(),
        }
    }

    /// Decides for a packet of flow `flow` that no mapping knows, with
    /// Click's per-flow mappings or endpoint-independent ones.
    pub fn decide(
        &self,
        flow: &FlowId,
        free: &mut impl FreeValues,
        mapping: MappingBehaviour,
    ) -> Decision {
        let rewrite = |p: &SharedPattern, free: &mut _| -> Option<(FlowId, bool)> {
            let mut p = lock(p);
            if mapping.endpoint_independent {
                p.rewrite_endpoint_independent(flow, free, mapping.port_parity)
            } else {
                p.rewrite(flow, free).map(|r| (r, false))
            }
        };
        match &self.kind {
            SpecKind::Drop => Decision::Drop,
            SpecKind::NoChange => Decision::Output(self.foutput),
            SpecKind::Keep => Decision::Add(*flow, self.foutput, self.routput, false),
            SpecKind::Pattern(p) => match rewrite(p, free) {
                Some((r, bound)) => Decision::Add(r, self.foutput, self.routput, bound),
                None => Decision::Failed,
            },
            SpecKind::Mapper(m) => {
                let chosen = {
                    let mut m = lock(m);
                    let bound = if mapping.endpoint_independent {
                        m.bound_choice(flow, free)
                    } else {
                        None
                    };
                    bound.or_else(|| m.choose(flow))
                };
                match chosen {
                    Some((p, f, r)) => match rewrite(&p, free) {
                        Some((rw, bound)) => Decision::Add(rw, f, r, bound),
                        None => Decision::Failed,
                    },
                    None => Decision::Failed,
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Free ports and addresses

/// Which field of a reply key a pattern's range varies: the destination
/// port (a NAPT pattern's source port) or the destination address (an
/// address range's source address).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Varied {
    Port,
    Addr,
}

impl Varied {
    fn set(self, key: &mut FlowId, v: u32) {
        match self {
            Varied::Port => key.dport = v as u16,
            Varied::Addr => key.daddr = v,
        }
    }

    /// The key of value `x` of the block `block` (see [`Varied::block`]).
    fn at(self, block: &FlowId, x: u32) -> FlowId {
        let mut k = *block;
        match self {
            Varied::Port => k.dport = x as u16,
            Varied::Addr => k.daddr |= x,
        }
        k
    }

    /// The key of the block of 65,536 values `key` belongs to, and its
    /// index there.
    fn block(self, key: &FlowId) -> (FlowId, u16) {
        let mut k = *key;
        match self {
            Varied::Port => {
                k.dport = 0;
                (k, key.dport)
            }
            Varied::Addr => {
                k.daddr &= !0xffff;
                (k, key.daddr as u16)
            }
        }
    }
}

/// What a pattern asks of a lookup map when it chooses a port or address.
pub trait FreeValues {
    /// The map's index in its table.
    fn map_index(&self) -> u32;
    /// The table's endpoint-independent bindings.
    fn bindings(&self) -> &Bindings;
    /// Whether the map knows `key`.
    fn taken(&mut self, key: &FlowId) -> bool;
    /// The first `val` in `start..=top`, then `0..start`, for which `key`
    /// with its `varied` field set to `base + val` is not taken.
    fn first_free(
        &mut self,
        key: FlowId,
        varied: Varied,
        base: u32,
        top: u32,
        start: u32,
    ) -> Option<u32>;
}

/// Values probed one by one before a block of 65,536 gets a bitmap.
const PROBES_BEFORE_BITMAP: u32 = 64;

/// A block's bitmap goes when fewer of its values are known taken: it
/// then costs more memory per flow than it saves.
const BITMAP_MIN_TAKEN: u32 = 32;

/// Which values of a block of 65,536 (ports of one remote endpoint and
/// NAT address, or addresses of one /16) are taken in one lookup map, as
/// far as known: made when a search for a free value meets many taken
/// ones, so that an exhausted or nearly full range is searched in a
/// bounded number of steps instead of one lookup per value. A value not
/// known is looked up in the map once and remembered; a map insertion or
/// removal of a key in the block updates its bit (see [`Table::map_insert`]).
struct ValueBitmap {
    known: [u64; 1024],
    taken: [u64; 1024],
    /// Bit `w`: word `w` is full (every value known and taken).
    full: [u64; 16],
    taken_count: u32,
}

impl ValueBitmap {
    fn new() -> Box<Self> {
        Box::new(ValueBitmap {
            known: [0; 1024],
            taken: [0; 1024],
            full: [0; 16],
            taken_count: 0,
        })
    }

    fn mark(&mut self, i: u16, taken: bool) {
        let (w, b) = (i as usize / 64, 1u64 << (i % 64));
        let was = self.known[w] & self.taken[w] & b != 0;
        self.known[w] |= b;
        if taken {
            self.taken[w] |= b;
        } else {
            self.taken[w] &= !b;
        }
        self.taken_count = self.taken_count + taken as u32 - was as u32;
        let fb = 1u64 << (w % 64);
        if self.known[w] & self.taken[w] == !0 {
            self.full[w / 64] |= fb;
        } else {
            self.full[w / 64] &= !fb;
        }
    }

    /// The first word at or after `w` that is not full, if below `end`.
    fn next_open_word(&self, w: usize, end: usize) -> Option<usize> {
        let mut s = w / 64;
        let mut open = !self.full[s] & (!0u64 << (w % 64));
        loop {
            if open != 0 {
                let found = s * 64 + open.trailing_zeros() as usize;
                return (found < end).then_some(found);
            }
            s += 1;
            if s * 64 >= end {
                return None;
            }
            open = !self.full[s];
        }
    }

    /// The first value in `lo..hi` that is not taken, looking up (and
    /// remembering) the values not known. Each step either ends, skips
    /// full words through `full`, or learns a value: a bounded search
    /// once every key of the block has been learnt.
    fn first_free(
        &mut self,
        lo: u32,
        hi: u32,
        probes: &mut u64,
        taken: &mut dyn FnMut(u16) -> bool,
    ) -> Option<u32> {
        let end_word = (hi as usize).div_ceil(64);
        let mut i = lo;
        while i < hi {
            let w = self.next_open_word(i as usize / 64, end_word)?;
            let from = (w * 64) as u32;
            let shift = i.saturating_sub(from);
            let open = !(self.known[w] & self.taken[w]) & (!0u64 << shift);
            if open == 0 {
                i = from + 64;
                continue;
            }
            let j = from + open.trailing_zeros();
            if j >= hi {
                return None;
            }
            if self.known[w] & (1u64 << (j % 64)) != 0 {
                return Some(j);
            }
            *probes += 1;
            let t = taken(j as u16);
            self.mark(j as u16, t);
            if !t {
                return Some(j);
            }
            i = j + 1;
        }
        None
    }
}

type BitmapKey = (u32, Varied, FlowId);

/// A lookup map with the bitmaps of its nearly full blocks: what
/// [`Table::free_values`] lends a pattern choosing a value.
pub struct MapFreeValues<'a> {
    map_index: u32,
    map: &'a FlowMap,
    bindings: &'a Bindings,
    bitmaps: &'a mut HashMap<BitmapKey, Box<ValueBitmap>>,
    probes: &'a mut u64,
}

impl MapFreeValues<'_> {
    /// The first free value of `lo..hi` in the block `block`.
    fn first_free_in_block(
        &mut self,
        block: FlowId,
        varied: Varied,
        lo: u32,
        hi: u32,
    ) -> Option<u32> {
        let map = self.map;
        let id = (self.map_index, varied, block);
        let mut from = lo;
        if !self.bitmaps.contains_key(&id) {
            let probed_end = hi.min(lo + PROBES_BEFORE_BITMAP);
            for x in lo..probed_end {
                *self.probes += 1;
                if !map.contains_key(&varied.at(&block, x)) {
                    return Some(x);
                }
            }
            if probed_end == hi {
                return None;
            }
            let mut b = ValueBitmap::new();
            for x in lo..probed_end {
                b.mark(x as u16, true);
            }
            self.bitmaps.insert(id, b);
            from = probed_end;
        }
        let bitmap = self.bitmaps.get_mut(&id)?;
        bitmap.first_free(from, hi, self.probes, &mut |x| {
            map.contains_key(&varied.at(&block, x as u32))
        })
    }
}

impl FreeValues for MapFreeValues<'_> {
    fn map_index(&self) -> u32 {
        self.map_index
    }

    fn bindings(&self) -> &Bindings {
        self.bindings
    }

    #[inline]
    fn taken(&mut self, key: &FlowId) -> bool {
        *self.probes += 1;
        self.map.contains_key(key)
    }

    /// The start itself, inline: in a table far from full, usually free.
    #[inline]
    fn first_free(
        &mut self,
        key: FlowId,
        varied: Varied,
        base: u32,
        top: u32,
        start: u32,
    ) -> Option<u32> {
        let mut k = key;
        varied.set(&mut k, base.wrapping_add(start));
        if !self.taken(&k) {
            return Some(start);
        }
        self.first_free_from(key, varied, base, top, start)
    }
}

impl MapFreeValues<'_> {
    /// [`FreeValues::first_free`] past a taken start.
    #[inline(never)]
    fn first_free_from(
        &mut self,
        key: FlowId,
        varied: Varied,
        base: u32,
        top: u32,
        start: u32,
    ) -> Option<u32> {
        // Click's order, block by block: start..=top, then 0..start.
        let mut val = u64::from(start);
        let mut left = u64::from(top) + 1;
        while left > 0 {
            let mut k = key;
            varied.set(&mut k, base.wrapping_add(val as u32));
            let (block, lo) = varied.block(&k);
            let lo = u32::from(lo);
            let seg = left
                .min(65536 - u64::from(lo))
                .min(u64::from(top) + 1 - val);
            if let Some(x) = self.first_free_in_block(block, varied, lo, lo + seg as u32) {
                return Some((val + u64::from(x - lo)) as u32);
            }
            left -= seg;
            val += seg;
            if val > u64::from(top) {
                val = 0;
            }
        }
        None
    }
}

// ---------------------------------------------------------------------
// Timeouts

/// How a flow's lifetime is computed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlowClass {
    /// TIMEOUT and GUARANTEE (UDPRewriter, IPAddrRewriter, ...).
    Plain,
    /// TCP: no-data, data and done timeouts, TCP_GUARANTEE.
    Tcp,
    /// UDP flows (IPRewriter's, and all of UDPRewriter's): UDP_TIMEOUT,
    /// UDP_STREAMING_TIMEOUT, UDP_GUARANTEE.
    Udp,
}

/// An owner's timeouts, in jiffies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timeouts {
    pub timeout: Jiffies,
    pub guarantee: Jiffies,
    pub tcp_data: Jiffies,
    pub tcp_done: Jiffies,
    pub udp_timeout: Jiffies,
    pub udp_guarantee: Jiffies,
    pub udp_streaming: Jiffies,
}

/// Whether a UDP flow is streaming: a reply seen, and three packets.
pub fn udp_streaming(tflags: u8) -> bool {
    tflags & 1 != 0 && tflags >> 1 >= 3
}

/// Counts a UDP packet in a flow's flags (see [`udp_streaming`]).
pub fn track_udp(fl: &mut Flow, dir: usize) {
    if dir == 1 {
        fl.tflags |= 1;
    }
    if fl.tflags >> 1 < 3 {
        fl.tflags += 2;
    }
}

/// TCP state flags of a flow.
pub const S_FORWARD_DONE: u8 = 1;
pub const S_BOTH_DONE: u8 = 3;
pub const S_FORWARD_DATA: u8 = 4;
pub const S_BOTH_DATA: u8 = 12;

impl Timeouts {
    fn flow_timeout(&self, f: &Flow) -> Jiffies {
        match f.class {
            FlowClass::Plain => self.timeout,
            FlowClass::Tcp => {
                if f.tflags & S_BOTH_DONE == S_BOTH_DONE {
                    self.tcp_done
                } else if f.tflags & S_BOTH_DATA == S_BOTH_DATA {
                    self.tcp_data
                } else {
                    self.timeout
                }
            }
            FlowClass::Udp => {
                if udp_streaming(f.tflags) {
                    self.udp_streaming
                } else {
                    self.udp_timeout
                }
            }
        }
    }

    pub fn guarantee(&self, class: FlowClass) -> Jiffies {
        match class {
            FlowClass::Udp => self.udp_guarantee,
            _ => self.guarantee,
        }
    }
}

// ---------------------------------------------------------------------
// The table

/// A mapping: a flow and its rewritten form, in both directions.
///
/// One cache line (64 bytes, aligned to 64): with a table larger than the
/// caches an established flow's packet misses on its map slot and on its
/// flow, and a flow spread over two lines would be two misses. So the
/// output ports are u16 (a rewriter has at most [`MAX_OUTPUTS`]), and the
/// sequence-number deltas, which few flows have, are kept in the table by
/// flow index ([`Flow::has_seq`] says whether there are any).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Flow {
    /// `key[0]`: the original flow; `key[1]`: the reply flow (the
    /// rewritten flow reversed). Map keys of the two directions.
    pub key: [FlowId; 2],
    pub expiry: Jiffies,
    pub out: [u16; 2],
    pub owner: u32,
    pub input: u32,
    pub map: u32,
    place: u32,
    pub ip_delta: u16,
    pub l4_delta: u16,
    pub proto: u8,
    pub class: FlowClass,
    pub tflags: u8,
    pub guaranteed: bool,
    pub reply_anno: u8,
    live: bool,
    /// Installed by a write handler (`add_mapping`): never expires, is
    /// never replaced to make room, and is left alone when a pattern is
    /// rewritten; only `remove_mapping` and `clear` remove it.
    pub pinned: bool,
    /// Whether the table holds sequence-number deltas for this flow (a
    /// TCP flow FTPPortMapper changed): see [`Table::seq_deltas`].
    pub has_seq: bool,
}

/// The most output ports a rewriter may have: a flow keeps its outputs as
/// u16 (see [`Flow`]).
pub const MAX_OUTPUTS: usize = 1 << 16;

// The flow entry is the cache line an established flow's packet misses
// on: exactly one.
const _: () = assert!(std::mem::size_of::<Flow>() == 64);
const _: () = assert!(std::mem::align_of::<Flow>() == 64);

impl Flow {
    /// Whether the flow is in the table (not removed).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The flow as packets of direction `dir` leave: `key[!dir]` reversed.
    pub fn rewritten(&self, dir: usize) -> FlowId {
        self.key[1 - dir].reverse()
    }
}

/// The bookkeeping of one rewriter sharing the table.
#[derive(Default)]
pub struct Owner {
    pub name: String,
    pub timeouts: Timeouts,
    pub counts: Vec<u32>,
    pub failures: Vec<u32>,
}

/// The flows of the rewriters sharing one capacity.
pub struct Table {
    flows: Vec<Flow>,
    free: Vec<usize>,
    /// Heap entries: (key, flow). A key is at most the flow's expiry:
    /// an expiry that grows (every packet of a flow) leaves the key
    /// behind, and the entry is sifted down only when it reaches the top
    /// ([`Table::settle_top`]); one that shrinks is sifted up at once.
    heaps: [Vec<(Jiffies, usize)>; 2],
    pub capacity: u32,
    /// Lookup maps: flow id to [`map_entry`] (16-byte entries).
    /// Private: every insertion and removal goes through
    /// [`Table::map_insert`] and [`Table::map_remove`], which keep the
    /// bitmaps in step.
    maps: Vec<FlowMap>,
    /// Bitmaps of the nearly full blocks of values, by map and block (see
    /// [`ValueBitmap`]); usually empty.
    bitmaps: HashMap<BitmapKey, Box<ValueBitmap>>,
    /// Map lookups made choosing free values (a cost bound tests check).
    pub alloc_probes: u64,
    pub owners: Vec<Owner>,
    /// Sequence-number deltas by flow index, for the flows with
    /// [`Flow::has_seq`] (out of [`Flow`], to keep it one cache line).
    seqs: HashMap<usize, Box<super::tcp_seq::SeqDeltas>>,
    /// See [`Table::entries_changed`].
    entries_changed: u64,
    /// Endpoint-independent mappings (`ENDPOINT_INDEPENDENT`); empty for
    /// Click's per-flow ones.
    bindings: Bindings,
}

pub type SharedTable = Arc<Mutex<Table>>;

/// Locks a table (once per batch).
pub fn lock_table(t: &SharedTable) -> MutexGuard<'_, Table> {
    lock(t)
}

pub const DEFAULT_CAPACITY: u32 = 0x7fff_ffff;

/// The `input` of mappings installed by `add_mapping` (no input made them;
/// shown as `i-`).
pub const MANUAL_INPUT: usize = u32::MAX as usize;

/// The expiry of pinned mappings: never (far beyond any clock).
const PINNED_EXPIRY: Jiffies = Jiffies::MAX / 4;

impl Default for Table {
    fn default() -> Self {
        Table {
            flows: Vec::new(),
            free: Vec::new(),
            heaps: [Vec::new(), Vec::new()],
            capacity: DEFAULT_CAPACITY,
            maps: Vec::new(),
            bitmaps: HashMap::new(),
            alloc_probes: 0,
            owners: Vec::new(),
            seqs: HashMap::new(),
            entries_changed: 0,
            bindings: Bindings::default(),
        }
    }
}

/// A map entry: flow index and direction.
#[inline]
pub fn entry_of(v: u32) -> (usize, usize) {
    ((v >> 1) as usize, (v & 1) as usize)
}

/// The map entry of flow `f`, direction `dir`. Flow indices stay below
/// 2^31: the slab never holds more than the capacity (at most
/// 0x7fffffff) plus the one flow being added.
#[inline]
fn map_entry(f: usize, dir: u32) -> u32 {
    ((f as u32) << 1) | dir
}

impl Table {
    /// Map `map` as a pattern choosing a free value sees it.
    pub fn free_values(&mut self, map: usize) -> MapFreeValues<'_> {
        MapFreeValues {
            map_index: map as u32,
            map: &self.maps[map],
            bindings: &self.bindings,
            bitmaps: &mut self.bitmaps,
            probes: &mut self.alloc_probes,
        }
    }

    /// Keeps the bitmaps of the blocks `key` belongs to in step with map
    /// `map`, which now knows `key` (`taken`) or not.
    #[cold]
    fn note_in_bitmaps(&mut self, map: usize, key: &FlowId, taken: bool) {
        for varied in [Varied::Port, Varied::Addr] {
            let (block, i) = varied.block(key);
            let id = (map as u32, varied, block);
            if let Some(b) = self.bitmaps.get_mut(&id) {
                b.mark(i, taken);
                if b.taken_count < BITMAP_MIN_TAKEN {
                    self.bitmaps.remove(&id);
                }
            }
        }
    }

    fn map_insert(&mut self, map: usize, key: FlowId, entry: u32) -> Option<u32> {
        let old = self.maps[map].insert(key, entry);
        if old.is_some() {
            self.entries_changed += 1;
        } else if !self.bitmaps.is_empty() {
            self.note_in_bitmaps(map, &key, true);
        }
        old
    }

    fn map_remove(&mut self, map: usize, key: &FlowId) {
        if self.maps[map].remove(key).is_some() {
            self.entries_changed += 1;
            if !self.bitmaps.is_empty() {
                self.note_in_bitmaps(map, key, false);
            }
        }
    }

    /// How many times a map entry was replaced or removed: while this
    /// stays the same, every entry a lookup found is still the entry of
    /// its key, and its flow the same flow (a flow's slab slot is reused
    /// only after the flow is destroyed, which removes its entries).
    pub fn entries_changed(&self) -> u64 {
        self.entries_changed
    }

    pub fn new_map(&mut self) -> usize {
        self.maps.push(FlowMap::default());
        self.maps.len() - 1
    }

    pub fn new_owner(&mut self, name: &str, ninputs: usize) -> usize {
        self.owners.push(Owner {
            name: name.to_string(),
            timeouts: Timeouts::default(),
            counts: vec![0; ninputs],
            failures: vec![0; ninputs],
        });
        self.owners.len() - 1
    }

    pub fn size(&self) -> usize {
        self.heaps[0].len() + self.heaps[1].len()
    }

    pub fn flow(&self, i: usize) -> &Flow {
        &self.flows[i]
    }

    /// Flow `i` if it exists and is live.
    pub fn live_flow(&self, i: usize) -> Option<&Flow> {
        self.flows.get(i).filter(|f| f.live)
    }

    pub fn flow_mut(&mut self, i: usize) -> &mut Flow {
        &mut self.flows[i]
    }

    /// Whether every flow slot with sequence-number deltas kept holds a
    /// live flow marked as having them: deltas written for a flow after
    /// it was removed would be kept for nothing (a consistency check).
    pub fn seq_deltas_all_live(&self) -> bool {
        self.seqs
            .keys()
            .all(|&f| self.flows.get(f).is_some_and(|fl| fl.live && fl.has_seq))
    }

    /// Flow `f`'s sequence-number deltas, if it has any.
    pub fn seq_deltas(&self, f: usize) -> Option<&super::tcp_seq::SeqDeltas> {
        if !self.flows.get(f)?.has_seq {
            return None;
        }
        self.seqs.get(&f).map(|s| &**s)
    }

    /// Flow `f`'s sequence-number deltas, mutable, if it has any.
    pub fn seq_deltas_mut(&mut self, f: usize) -> Option<&mut super::tcp_seq::SeqDeltas> {
        if !self.flows.get(f)?.has_seq {
            return None;
        }
        self.seqs.get_mut(&f).map(|s| &mut **s)
    }

    /// Flow `f`'s sequence-number deltas, made (none yet) if it has none.
    pub fn seq_deltas_or_new(&mut self, f: usize) -> &mut super::tcp_seq::SeqDeltas {
        // A slot whose deltas were left by a flow that is gone (its
        // slot since reused) starts afresh.
        if !std::mem::replace(&mut self.flows[f].has_seq, true) {
            self.seqs.insert(f, Box::default());
        }
        self.seqs.entry(f).or_default()
    }

    /// Looks a flow up in map `map`: (flow index, direction).
    #[inline(always)]
    pub fn lookup(&self, map: usize, key: &FlowId) -> Option<(usize, usize)> {
        self.maps.get(map)?.get(key).map(entry_of)
    }

    /// A lookup of `key` in map `map` begun (see [`FlowMap::start`]), to
    /// be finished on the map returned with it.
    #[inline(always)]
    pub fn start_lookup(&self, map: usize, key: &FlowId) -> Option<(&FlowMap, Probe)> {
        let m = self.maps.get(map)?;
        Some((m, m.start(key)?))
    }

    // -- heaps (binary min-heaps of (key, flow), with places in the flows)

    fn set_at(&mut self, h: usize, i: usize, e: (Jiffies, usize)) {
        self.heaps[h][i] = e;
        self.flows[e.1].place = i as u32;
    }

    fn sift_up(&mut self, h: usize, mut i: usize) -> usize {
        let e = self.heaps[h][i];
        while i > 0 {
            let parent = (i - 1) / 2;
            let pe = self.heaps[h][parent];
            if e.0 >= pe.0 {
                break;
            }
            self.set_at(h, i, pe);
            i = parent;
        }
        self.set_at(h, i, e);
        i
    }

    fn sift_down(&mut self, h: usize, mut i: usize) {
        let heap = &self.heaps[h];
        let e = heap[i];
        let n = heap.len();
        loop {
            let mut c = 2 * i + 1;
            if c >= n {
                break;
            }
            let heap = &self.heaps[h];
            if c + 1 < n && heap[c + 1].0 < heap[c].0 {
                c += 1;
            }
            let ce = heap[c];
            if ce.0 >= e.0 {
                break;
            }
            self.set_at(h, i, ce);
            i = c;
        }
        self.set_at(h, i, e);
    }

    fn heap_push(&mut self, h: usize, f: usize) {
        self.heaps[h].push((self.flows[f].expiry, f));
        let i = self.heaps[h].len() - 1;
        self.flows[f].place = i as u32;
        self.sift_up(h, i);
    }

    fn heap_remove(&mut self, f: usize) {
        let h = self.flows[f].guaranteed as usize;
        let i = self.flows[f].place as usize;
        let last = self.heaps[h].len() - 1;
        if i != last {
            let le = self.heaps[h][last];
            self.set_at(h, i, le);
            self.heaps[h].pop();
            let j = self.sift_up(h, i);
            if j == i {
                self.sift_down(h, i);
            }
        } else {
            self.heaps[h].pop();
        }
    }

    /// Brings the keys at the top of heap `h` up to date, so that its top
    /// is the flow closest to expiry; returns that flow.
    fn settle_top(&mut self, h: usize) -> Option<usize> {
        loop {
            let &(key, f) = self.heaps[h].first()?;
            let expiry = self.flows[f].expiry;
            if key >= expiry {
                return Some(f);
            }
            self.heaps[h][0].0 = expiry;
            self.sift_down(h, 0);
        }
    }

    #[cold]
    #[inline(never)]
    fn change_expiry_cold(&mut self, f: usize, guaranteed: bool, expiry: Jiffies) {
        self.change_expiry(f, guaranteed, expiry);
    }

    #[cold]
    #[inline(never)]
    fn sift_up_cold(&mut self, h: usize, i: usize) {
        self.sift_up(h, i);
    }

    /// Moves flow `f` to `expiry` in the guaranteed or best-effort heap.
    pub fn change_expiry(&mut self, f: usize, guaranteed: bool, expiry: Jiffies) {
        if self.flows[f].guaranteed != guaranteed {
            self.heap_remove(f);
            self.flows[f].guaranteed = guaranteed;
            self.flows[f].expiry = expiry;
            self.heap_push(guaranteed as usize, f);
        } else {
            self.flows[f].expiry = expiry;
            let h = guaranteed as usize;
            let i = self.flows[f].place as usize;
            if expiry < self.heaps[h][i].0 {
                self.heaps[h][i].0 = expiry;
                self.sift_up(h, i);
            }
        }
    }

    /// After a packet of flow `f`: its guarantee or timeout starts again.
    #[inline(always)]
    pub fn refresh(&mut self, f: usize, now: Jiffies) {
        self.refresh_flow(f, now);
    }

    /// An established flow's packet of direction `dir`, rewritten by a
    /// rewriter's fast path: the flow's state (TCP flags and whether the
    /// segment carries payload, for a TCP packet; UDP flows count
    /// packets), then its expiry, with one look at the flow.
    ///
    /// `tcp` is `Some` for a TCP packet of a TCP-class flow, `None` for a
    /// UDP packet of a UDP-class flow (the fast maps hold no others).
    /// `guarantee` is the flow's guarantee as its owner's timeouts give it
    /// for its class (the caller knows both from the map it found the flow
    /// in: a map's flows are all one owner's, of one class). A guaranteed
    /// flow with a guarantee, the common case, is refreshed from it alone,
    /// without a look at the owner; anything else as [`Table::refresh`].
    #[inline(always)]
    pub fn hit(
        &mut self,
        f: usize,
        dir: usize,
        tcp: Option<(u8, bool)>,
        guarantee: Jiffies,
        now: Jiffies,
    ) {
        let Some(fl) = self.flows.get_mut(f) else {
            return;
        };
        debug_assert_eq!(
            guarantee,
            self.owners[fl.owner as usize].timeouts.guarantee(fl.class)
        );
        // The class follows from the map too: a TCP packet's fast map
        // holds TCP-class flows, a UDP packet's UDP ones.
        debug_assert_eq!(
            fl.class,
            if tcp.is_some() {
                FlowClass::Tcp
            } else {
                FlowClass::Udp
            }
        );
        match tcp {
            Some((flags, payload)) => track_tcp(fl, dir, flags, payload),
            None => track_udp(fl, dir),
        }
        if guarantee != 0 && fl.guaranteed && !fl.pinned {
            // As `refresh_flow` for this case: same heap, expiry `now +
            // guarantee`.
            let old = fl.expiry;
            let expiry = now + guarantee;
            fl.expiry = expiry;
            if expiry < old {
                self.lower_heap_key_cold(f);
            }
            return;
        }
        self.refresh_flow(f, now);
    }

    /// After flow `f`'s expiry went down in its heap: its heap key
    /// follows (see `refresh_flow`).
    #[cold]
    #[inline(never)]
    fn lower_heap_key_cold(&mut self, f: usize) {
        let fl = &self.flows[f];
        let (h, i, expiry) = (fl.guaranteed as usize, fl.place as usize, fl.expiry);
        if let Some(e) = self.heaps[h].get_mut(i) {
            if expiry < e.0 {
                e.0 = expiry;
                self.sift_up(h, i);
            }
        }
    }

    /// [`Table::refresh`] of a flow known to exist.
    #[inline(always)]
    fn refresh_flow(&mut self, f: usize, now: Jiffies) {
        let Table {
            flows,
            owners,
            heaps,
            ..
        } = self;
        let Some(fl) = flows.get_mut(f) else {
            return;
        };
        if fl.pinned {
            return;
        }
        let Some(owner) = owners.get(fl.owner as usize) else {
            return;
        };
        let t = &owner.timeouts;
        let g = t.guarantee(fl.class);
        let (guaranteed, expiry) = if g != 0 {
            (true, now + g)
        } else {
            (false, now + t.flow_timeout(fl))
        };
        if fl.guaranteed != guaranteed {
            return self.change_expiry_cold(f, guaranteed, expiry);
        }
        // The common case, inline: same heap, and an expiry that grows
        // leaves the heap key behind (settled lazily, see `heaps`). A
        // heap key is never above its flow's expiry (it is set to the
        // expiry, or lowered with it), so an expiry that does not go down
        // needs no look at the heap: with a million flows, that look is
        // a cache miss.
        let old = fl.expiry;
        fl.expiry = expiry;
        if expiry >= old {
            return;
        }
        let (h, i) = (guaranteed as usize, fl.place as usize);
        if let Some(e) = heaps[h].get_mut(i) {
            if expiry < e.0 {
                e.0 = expiry;
                self.sift_up_cold(h, i);
            }
        }
    }

    /// When a guaranteed flow's guarantee ends, its best-effort expiry.
    pub fn best_effort_expiry(&self, f: usize) -> Jiffies {
        let fl = &self.flows[f];
        let t = &self.owners[fl.owner as usize].timeouts;
        fl.expiry + t.flow_timeout(fl) - t.guarantee(fl.class)
    }

    fn shift_best_effort(&mut self, now: Jiffies) {
        while let Some(f) = self.settle_top(1) {
            if self.flows[f].expiry > now {
                break;
            }
            let e = self.best_effort_expiry(f);
            self.change_expiry(f, false, e);
        }
    }

    /// Flow `f` (just added by a pattern that chose its outside port
    /// endpoint-independently) holds the binding of its inside endpoint.
    pub fn bind(&mut self, f: usize) {
        let fl = &self.flows[f];
        let (k0, k1) = (fl.key[0], fl.key[1]);
        let inside = Inside {
            map: fl.map,
            addr: k0.saddr,
            port: k0.sport,
            outside_addr: k1.daddr,
        };
        self.bindings.bind(f, inside, k1.dport);
    }

    /// How many endpoint-independent bindings the table holds.
    pub fn binding_count(&self) -> usize {
        self.bindings.len()
    }

    /// Removes a flow: from its heap, its maps and its owner's count.
    pub fn destroy(&mut self, f: usize) {
        if !self.flows[f].live {
            return;
        }
        self.heap_remove(f);
        let fl = &self.flows[f];
        let (map, k0, k1, owner, input) = (
            fl.map as usize,
            fl.key[0],
            fl.key[1],
            fl.owner as usize,
            fl.input as usize,
        );
        if let Some(c) = self.owners[owner].counts.get_mut(input) {
            *c = c.saturating_sub(1);
        }
        if self.maps[map].get(&k0) == Some(map_entry(f, 0)) {
            self.map_remove(map, &k0);
        }
        if self.maps[map].get(&k1) == Some(map_entry(f, 1)) {
            self.map_remove(map, &k1);
        }
        if self.flows[f].has_seq {
            self.seqs.remove(&f);
        }
        if !self.bindings.is_empty() {
            self.bindings.release(f);
        }
        self.flows[f].live = false;
        self.flows[f].has_seq = false;
        self.free.push(f);
    }

    /// Adds a flow from `flow` to `rewritten` (Click's store_flow): maps
    /// both directions, enters the heap and enforces the capacity, which
    /// may refuse the new flow (counted as a failure of its input).
    #[allow(clippy::too_many_arguments)]
    pub fn add_flow(
        &mut self,
        owner: usize,
        input: usize,
        map: usize,
        proto: u8,
        class: FlowClass,
        flow: FlowId,
        rewritten: FlowId,
        out: [usize; 2],
        now: Jiffies,
    ) -> Option<usize> {
        // A reply key held by a pinned mapping (a rewrite without a range
        // to choose from) is not taken over: the new flow is refused.
        if let Some(old) = self.maps[map].get(&rewritten.reverse()) {
            let (of, _) = entry_of(old);
            if self.flows[of].live && self.flows[of].pinned {
                if let Some(c) = self.owners[owner].failures.get_mut(input) {
                    *c += 1;
                }
                return None;
            }
        }
        let t = self.owners[owner].timeouts;
        let g = t.guarantee(class);
        let mut fl = Flow {
            key: [flow, rewritten.reverse()],
            out: [out[0] as u16, out[1] as u16],
            owner: owner as u32,
            input: input as u32,
            map: map as u32,
            proto,
            class,
            tflags: 0,
            guaranteed: g != 0,
            expiry: 0,
            place: 0,
            ip_delta: 0,
            l4_delta: 0,
            reply_anno: 0,
            live: true,
            pinned: false,
            has_seq: false,
        };
        fl.expiry = now + if g != 0 { g } else { t.flow_timeout(&fl) };
        let (ow, nw) = (flow.addr_words(), rewritten.addr_words());
        fl.ip_delta = csum_delta(&ow, &nw);
        fl.l4_delta = add_delta(
            fl.ip_delta,
            csum_delta(
                &[flow.sport, flow.dport],
                &[rewritten.sport, rewritten.dport],
            ),
        );
        let f = match self.free.pop() {
            Some(f) => {
                self.flows[f] = fl;
                f
            }
            None => {
                self.flows.push(fl);
                self.flows.len() - 1
            }
        };
        let k1 = self.flows[f].key[1];
        self.map_insert(map, flow, map_entry(f, 0));
        if let Some(old) = self.map_insert(map, k1, map_entry(f, 1)) {
            let (of, _) = entry_of(old);
            if of != f {
                self.destroy(of);
            }
        }
        let h = self.flows[f].guaranteed as usize;
        self.heap_push(h, f);
        if let Some(c) = self.owners[owner].counts.get_mut(input) {
            *c += 1;
        }
        if self.size() > self.capacity as usize {
            self.shift_best_effort(now);
            let dead = self.settle_top(0).unwrap_or(f);
            self.destroy(dead);
            if dead == f {
                if let Some(c) = self.owners[owner].failures.get_mut(input) {
                    *c += 1;
                }
                return None;
            }
        }
        Some(f)
    }

    /// Installs a mapping from outside (the `add_mapping` handler): `flow`
    /// is rewritten to `rewritten`, its replies back. A mapping already
    /// holding either direction's key is removed first. With `pinned` the
    /// new mapping is pinned (see [`Flow::pinned`]); otherwise it expires
    /// as a spec-made one. `None` when the table is full of guaranteed
    /// mappings.
    #[allow(clippy::too_many_arguments)]
    pub fn add_manual(
        &mut self,
        pinned: bool,
        owner: usize,
        map: usize,
        proto: u8,
        class: FlowClass,
        flow: FlowId,
        rewritten: FlowId,
        out: [usize; 2],
        now: Jiffies,
    ) -> Option<usize> {
        for k in [flow, rewritten.reverse()] {
            if let Some((f, _)) = self.lookup(map, &k) {
                self.destroy(f);
            }
        }
        let f = self.add_flow(
            owner,
            MANUAL_INPUT,
            map,
            proto,
            class,
            flow,
            rewritten,
            out,
            now,
        )?;
        if pinned {
            self.change_expiry(f, true, PINNED_EXPIRY);
            self.flows[f].pinned = true;
        }
        Some(f)
    }

    /// Removes the mapping whose original or reply flow is `key` (the
    /// `remove_mapping` handler); whether there was one.
    pub fn remove_key(&mut self, map: usize, key: &FlowId) -> bool {
        match self.lookup(map, key) {
            Some((f, _)) => {
                self.destroy(f);
                true
            }
            None => false,
        }
    }

    /// Hot swap: copies the live flows `old_owner` of `old` owned into
    /// this table as `owner`'s, with `maps` giving the new map of each old
    /// one (`(old map, new map)` pairs). A flow is left behind when its
    /// map has no counterpart, an output or its input no longer exists,
    /// either of its keys is taken already, or the table is full (pinned
    /// flows are copied first). Expiries, TCP state, sequence-number
    /// deltas and pinning carry over. Returns how many were copied.
    pub fn adopt(
        &mut self,
        old: &Table,
        old_owner: usize,
        owner: usize,
        maps: &[(usize, usize)],
        noutputs: usize,
    ) -> usize {
        let ninputs = self.owners.get(owner).map_or(0, |o| o.counts.len());
        let mut order: Vec<usize> = (0..old.flows.len())
            .filter(|&f| {
                let fl = &old.flows[f];
                fl.live && fl.owner as usize == old_owner
            })
            .collect();
        order.sort_by_key(|&f| !old.flows[f].pinned);
        let mut n = 0;
        for f in order {
            let fl = &old.flows[f];
            let Some(&(_, map)) = maps.iter().find(|m| m.0 == fl.map as usize) else {
                continue;
            };
            let input = fl.input as usize;
            if fl.out.iter().any(|&o| o as usize >= noutputs)
                || (input != MANUAL_INPUT && input >= ninputs)
                || self.maps[map].contains_key(&fl.key[0])
                || self.maps[map].contains_key(&fl.key[1])
            {
                continue;
            }
            if self.size() >= self.capacity as usize && !fl.pinned {
                continue;
            }
            let mut nf = fl.clone();
            nf.owner = owner as u32;
            nf.map = map as u32;
            let i = match self.free.pop() {
                Some(i) => {
                    self.flows[i] = nf;
                    i
                }
                None => {
                    self.flows.push(nf);
                    self.flows.len() - 1
                }
            };
            if let Some(s) = old.seq_deltas(f) {
                self.seqs.insert(i, Box::new(s.clone()));
            }
            if let Some((inside, port)) = old.bindings.of_flow(f) {
                let inside = Inside {
                    map: map as u32,
                    ..inside
                };
                // A binding of the old table another inside endpoint now
                // holds here (adopted first) is not taken over: the flow
                // keeps its mapping, unbound.
                let free = match self.bindings.port_of(&inside) {
                    // Another flow of the same binding came first.
                    Some(p) => p == port,
                    None => !self.bindings.is_held(map as u32, inside.outside_addr, port),
                };
                if free {
                    self.bindings.bind(i, inside, port);
                }
            }
            let (k0, k1) = (self.flows[i].key[0], self.flows[i].key[1]);
            self.map_insert(map, k0, map_entry(i, 0));
            self.map_insert(map, k1, map_entry(i, 1));
            self.heap_push(self.flows[i].guaranteed as usize, i);
            if let Some(c) = self.owners[owner].counts.get_mut(input) {
                *c += 1;
            }
            n += 1;
        }
        n
    }

    /// Removes expired flows, then flows beyond the capacity (Click's
    /// shrink_heap); `clear_all` removes every flow.
    pub fn shrink(&mut self, clear_all: bool, now: Jiffies) {
        self.shift_best_effort(now);
        while let Some(f) = self.settle_top(0) {
            if self.flows[f].expiry > now {
                break;
            }
            self.destroy(f);
        }
        let cap = if clear_all { 0 } else { self.capacity as usize };
        while self.size() > cap {
            let h = if self.heaps[0].is_empty() { 1 } else { 0 };
            let Some(f) = self.settle_top(h) else { break };
            // Pinned mappings (at the bottom of the guaranteed heap: their
            // expiry is the latest) are never evicted to make room, even
            // when the capacity is lowered; only `clear` removes them.
            if self.flows[f].pinned && !clear_all {
                break;
            }
            self.destroy(f);
        }
    }

    /// Removes the flows one input of one owner made (a pattern changed).
    pub fn destroy_input(&mut self, owner: usize, input: usize) {
        let victims: Vec<usize> = (0..self.flows.len())
            .filter(|&f| {
                let fl = &self.flows[f];
                fl.live && fl.owner as usize == owner && fl.input as usize == input
            })
            .collect();
        for f in victims {
            self.destroy(f);
        }
    }

    /// Click's table line for map entry (flow `f`, direction `dir`).
    pub fn unparse_entry(&self, f: usize, dir: usize, now: Jiffies) -> String {
        let fl = &self.flows[f];
        let mut expiry = fl.expiry;
        if fl.pinned {
            return format!(
                "{} => {} [{}{} {}{}] pinned",
                fl.key[dir],
                fl.rewritten(dir),
                if dir == 0 { "*" } else { "" },
                fl.out[0],
                if dir == 1 { "*" } else { "" },
                fl.out[1],
            );
        }
        if fl.guaranteed {
            expiry = self.best_effort_expiry(f);
        }
        let secs = (expiry + 500 - now).div_euclid(1000);
        let seq = match self.seq_deltas(f).map(|s| s.shown(dir)) {
            Some(d) if d > 0 => format!(" seq +{d}"),
            Some(d) if d < 0 => format!(" seq {d}"),
            _ => String::new(),
        };
        let input = if fl.input as usize == MANUAL_INPUT {
            "-".to_string()
        } else {
            fl.input.to_string()
        };
        format!(
            "{} => {}{} [{}{} {}{}] i{} exp{}",
            fl.key[dir],
            fl.rewritten(dir),
            seq,
            if dir == 0 { "*" } else { "" },
            fl.out[0],
            if dir == 1 { "*" } else { "" },
            fl.out[1],
            input,
            secs
        )
    }

    /// Every entry of map `map`, one line each.
    pub fn unparse_map(&self, map: usize, now: Jiffies) -> String {
        let mut lines: Vec<String> = self.maps[map]
            .values()
            .map(|v| {
                let (f, d) = entry_of(v);
                self.unparse_entry(f, d, now)
            })
            .collect();
        lines.sort();
        let mut s = String::new();
        for l in lines {
            s += &l;
            s.push('\n');
        }
        s
    }
}

// ---------------------------------------------------------------------
// Packets

/// The parts of an IPv4 packet a rewriter looks at.
#[derive(Clone, Copy, Debug)]
pub struct IpInfo {
    /// Offset of the IP header in the data.
    pub ip_off: usize,
    /// Offset of the transport header (after the IP header).
    pub l4_off: usize,
    pub proto: u8,
    pub saddr: u32,
    pub daddr: u32,
    pub first_frag: bool,
    /// More fragments follow (MF).
    pub more_frags: bool,
    pub ident: u16,
    /// Bytes from the transport header to the end of the data.
    pub l4_len: usize,
}

/// Parses the IPv4 header at the network header; `None` for anything that
/// is not a structurally valid IPv4 header.
pub fn ip_info(p: &Packet) -> Option<IpInfo> {
    let off = usize::try_from(p.network_offset()?).ok()?;
    let ip = Ipv4Header::new_checked(p.data().get(off..)?).ok()?;
    let l4_off = off + ip.header_len();
    Some(IpInfo {
        ip_off: off,
        l4_off,
        proto: ip.protocol(),
        saddr: u32::from(ip.src()),
        daddr: u32::from(ip.dst()),
        first_frag: ip.frag_offset() == 0,
        more_frags: ip.more_frags(),
        ident: ip.ident(),
        l4_len: p.len().saturating_sub(l4_off),
    })
}

/// The two ports (first four transport bytes), if present.
pub fn ports(p: &Packet, info: &IpInfo) -> Option<(u16, u16)> {
    let u = UdpHeader::new_checked(p.data().get(info.l4_off..)?).ok()?;
    Some((u.src_port(), u.dst_port()))
}

pub const IP_PROTO_ICMP: u8 = 1;
pub const IP_PROTO_TCP: u8 = 6;
pub const IP_PROTO_UDP: u8 = 17;
pub const IP_PROTO_DCCP: u8 = 33;

/// Rewrites a packet of flow `fl` travelling in direction `dir`: the
/// addresses with the IP checksum, and for first fragments the ports with
/// the TCP or UDP checksum (Click's IPRewriterFlow::apply). Sets the
/// destination annotation when `dst_anno`; the reply annotation byte when
/// `reply_anno` is set and the packet is a reply. Returns whether a TCP
/// header was rewritten, with its flags and whether it carries payload.
#[inline]
pub fn apply_flow(
    p: &mut Packet,
    info: &IpInfo,
    fl: &Flow,
    dir: usize,
    dst_anno: bool,
    reply_anno: Option<usize>,
) -> Option<(u8, bool)> {
    let to = fl.rewritten(dir);
    if dst_anno {
        p.set_dst_ip_anno(Ipv4Addr::from(to.daddr));
    }
    if dir == 1 {
        if let Some(a) = reply_anno {
            if let Some(b) = p.anno_mut().get_mut(a) {
                *b = fl.reply_anno;
            }
        }
    }
    let reverse = dir == 1;
    let data = p.writable();
    let mut total_len = 0usize;
    // `info` came from `ip_info`, which checked this header (version,
    // header length within the data): the fixed fields are addressed
    // directly rather than through a second check.
    if let Some(ip) = data.get_mut(info.ip_off..info.ip_off + 20) {
        ip[12..16].copy_from_slice(&to.saddr.to_be_bytes());
        ip[16..20].copy_from_slice(&to.daddr.to_be_bytes());
        let c = apply_delta(u16::from_be_bytes([ip[10], ip[11]]), fl.ip_delta, reverse);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        total_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    }
    if !info.first_frag {
        return None;
    }
    let l4 = data.get_mut(info.l4_off..)?;
    if info.proto == IP_PROTO_TCP {
        // Raw offsets, not a checked TcpHeader: a header too short for
        // its checksum (a tiny first fragment) or with a data offset that
        // does not fit still gets its ports translated (Click: the ports
        // and checksum of 18 bytes or more, whatever the data offset;
        // nothing below 18, leaking the inside port with the outside
        // address).
        if l4.len() < 4 {
            return None;
        }
        l4[0..2].copy_from_slice(&to.sport.to_be_bytes());
        l4[2..4].copy_from_slice(&to.dport.to_be_bytes());
        if l4.len() < 18 {
            return None;
        }
        let c = u16::from_be_bytes([l4[16], l4[17]]);
        l4[16..18].copy_from_slice(&apply_delta(c, fl.l4_delta, reverse).to_be_bytes());
        let hl = info.l4_off - info.ip_off + usize::from(l4[12] >> 4) * 4;
        Some((l4[13], hl < total_len))
    } else if info.proto == IP_PROTO_UDP {
        let u = l4.get_mut(..8)?;
        u[0..2].copy_from_slice(&to.sport.to_be_bytes());
        u[2..4].copy_from_slice(&to.dport.to_be_bytes());
        let c = apply_udp_delta(u16::from_be_bytes([u[6], u[7]]), fl.l4_delta, reverse);
        u[6..8].copy_from_slice(&c.to_be_bytes());
        None
    } else {
        let mut u = UdpHeader::new_checked(l4).ok()?;
        u.set_src_port(to.sport);
        u.set_dst_port(to.dport);
        if info.proto == IP_PROTO_DCCP {
            // DCCP's checksum (bytes 6-7, always present) covers the
            // pseudo-header and the ports as TCP's does (RFC 4340 9.1).
            let c = u.checksum();
            u.set_checksum(apply_delta(c, fl.l4_delta, reverse));
        }
        None
    }
}

/// Applies a TCP flow's sequence-number deltas to a packet of direction
/// `dir` (after [`apply_flow`]), when the segment's header is complete.
pub fn apply_seq(p: &mut Packet, info: &IpInfo, seq: &mut super::tcp_seq::SeqDeltas, dir: usize) {
    if !info.first_frag || info.proto != IP_PROTO_TCP {
        return;
    }
    if let Some(Ok(mut t)) = p
        .writable()
        .get_mut(info.l4_off..)
        .map(TcpHeader::new_checked)
    {
        seq.apply(&mut t, dir);
    }
}

/// TCP state tracking after a packet (Click's TCPFlow::apply).
pub fn track_tcp(fl: &mut Flow, dir: usize, flags: u8, payload: bool) {
    const FIN: u8 = 1;
    const SYN: u8 = 2;
    const RST: u8 = 4;
    if flags & RST != 0 {
        fl.tflags |= S_BOTH_DONE;
    } else if flags & FIN != 0 {
        fl.tflags |= S_FORWARD_DONE << dir;
    } else if flags & SYN != 0 || payload {
        fl.tflags &= !(S_FORWARD_DONE << dir);
    }
    if payload {
        fl.tflags |= S_FORWARD_DATA << dir;
    }
}

/// Splits a configuration into arguments (for rewriters that read
/// keywords, then one spec per remaining argument).
pub fn split_config(conf: &str) -> Vec<String> {
    split_args(conf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Flows that differ in one field only (a NAT's many ports behind one
    /// address pair, many sources to one server) must spread over the
    /// low bits hashbrown picks buckets with and the top seven bits it
    /// keeps as tags, whatever the keys.
    #[test]
    fn flow_hash_spreads_in_every_field() {
        for _ in 0..32 {
            let b = FlowHashBuilder::default();
            let variants: [fn(u32) -> FlowId; 4] = [
                |i| FlowId::new(0x0a00_0001 + i, 1234, 0xac10_0001, 80),
                |i| FlowId::new(0x0a00_0001, 1024 + i as u16, 0xac10_0001, 80),
                |i| FlowId::new(0x0a00_0001, 1234, 0xac10_0001 ^ (i << 20), 80),
                |i| FlowId::new(0x0a00_0001, 1234, 0xac10_0001, i as u16),
            ];
            for (n, flow) in variants.iter().enumerate() {
                let hashes: Vec<u64> = (0..4096u32).map(|i| b.hash_one(flow(i))).collect();
                let mut low: Vec<u64> = hashes.iter().map(|h| h & 0xffff).collect();
                low.sort_unstable();
                low.dedup();
                assert!(
                    low.len() > 3800,
                    "field {n}: {} distinct low words",
                    low.len()
                );
                let mut top = [0u32; 128];
                for h in &hashes {
                    top[(h >> 57) as usize] += 1;
                }
                // 32 expected per tag.
                assert!(top.iter().all(|&c| c < 80), "field {n}: tags {top:?}");
            }
        }
    }

    /// The heaps' invariants: one entry per live flow, its place
    /// recorded, each key at most its flow's expiry (keys left behind by
    /// growing expiries), and the heap order on keys.
    fn check_heaps(t: &Table) {
        let live = t.flows.iter().filter(|f| f.live).count();
        assert_eq!(t.size(), live, "one heap entry per live flow");
        for (h, heap) in t.heaps.iter().enumerate() {
            for (i, &(key, f)) in heap.iter().enumerate() {
                let fl = &t.flows[f];
                assert!(fl.live, "heap {h} holds dead flow {f}");
                assert_eq!(fl.place as usize, i, "flow {f}'s place");
                assert_eq!(fl.guaranteed as usize, h, "flow {f}'s heap");
                assert!(
                    key <= fl.expiry,
                    "flow {f}: key {key} above expiry {}",
                    fl.expiry
                );
                if i > 0 {
                    assert!(heap[(i - 1) / 2].0 <= key, "heap {h} order at {i}");
                }
            }
        }
    }

    /// When flow `f` dies if nothing refreshes it, seen at `now`: a
    /// guaranteed flow whose guarantee is over by then moves on to its
    /// best-effort expiry; `None` while its guarantee lasts.
    fn effective_expiry(t: &Table, f: usize, now: Jiffies) -> Option<Jiffies> {
        let fl = &t.flows[f];
        match (fl.guaranteed, fl.expiry <= now) {
            (false, _) => Some(fl.expiry),
            (true, true) => Some(t.best_effort_expiry(f)),
            (true, false) => None,
        }
    }

    /// The tests' pseudo-random numbers (xorshift64): repeatable runs.
    pub(super) fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// Flows refreshed at random times (expiries that grow, leaving stale
    /// heap keys behind, and TCP flows whose FIN/RST shortens them),
    /// under a capacity: a new flow over the capacity evicts the flow
    /// closest to expiry (never one still guaranteed), the reap removes
    /// exactly the expired flows, and the heaps hold one entry per flow
    /// whatever the refreshes.
    #[test]
    fn stale_heap_keys_keep_eviction_and_expiry_right() {
        let mut seed = 0x1234_5678_9abc_def1_u64;
        let mut rnd = |n: u64| xorshift(&mut seed) % n;
        for round in 0..40 {
            let mut t = Table::default();
            let map = t.new_map();
            let owner = t.new_owner("rw", 1);
            t.owners[owner].timeouts = Timeouts {
                timeout: 30_000,
                guarantee: if round % 2 == 0 { 0 } else { 5_000 },
                tcp_data: 60_000,
                tcp_done: 4_000,
                udp_timeout: 20_000,
                udp_guarantee: if round % 3 == 0 { 2_000 } else { 0 },
                udp_streaming: 90_000,
            };
            t.capacity = 8 + (round % 5);
            let mut now: Jiffies = 1_000_000;
            let mut next_port = 1u16;
            for _ in 0..600 {
                now += rnd(3_000) as Jiffies;
                let live: Vec<usize> = (0..t.flows.len()).filter(|&f| t.flows[f].live).collect();
                match rnd(10) {
                    0..=3 if !live.is_empty() => {
                        // A packet of a live flow.
                        let f = live[rnd(live.len() as u64) as usize];
                        let dir = rnd(2) as usize;
                        let fl = t.flow_mut(f);
                        match fl.class {
                            FlowClass::Tcp => {
                                let flags = [0x10, 0x18, 0x11, 0x04, 0x02][rnd(5) as usize];
                                track_tcp(fl, dir, flags, rnd(2) == 0);
                            }
                            FlowClass::Udp => track_udp(fl, dir),
                            FlowClass::Plain => {}
                        }
                        t.refresh(f, now);
                    }
                    4 => {
                        // The reap: exactly the flows expired by now go.
                        let before: Vec<(usize, Option<Jiffies>)> = live
                            .iter()
                            .map(|&f| (f, effective_expiry(&t, f, now)))
                            .collect();
                        t.shrink(false, now);
                        for (f, e) in before {
                            let expired = e.is_some_and(|e| e <= now);
                            assert_eq!(
                                !t.flows[f].live, expired,
                                "reap of flow {f} (expiry {e:?}, now {now})"
                            );
                        }
                    }
                    _ => {
                        // A new flow.
                        let class = if rnd(2) == 0 {
                            FlowClass::Tcp
                        } else {
                            FlowClass::Udp
                        };
                        let key = FlowId::new(0x0a00_0001, next_port, 0x1200_0001, 80);
                        let rw = FlowId::new(0x0100_0001, next_port, 0x1200_0001, 80);
                        next_port += 1;
                        // Who should go if the table overflows: the
                        // closest to expiry among the flows not guaranteed
                        // (the new one included).
                        let full = t.size() >= t.capacity as usize;
                        let to = t.owners[owner].timeouts;
                        // A fresh flow (no TCP state, no UDP packet yet).
                        let new_e = match (to.guarantee(class), class) {
                            (0, FlowClass::Tcp) => Some(now + to.timeout),
                            (0, _) => Some(now + to.udp_timeout),
                            _ => None,
                        };
                        let best = live
                            .iter()
                            .filter_map(|&f| effective_expiry(&t, f, now))
                            .chain(new_e)
                            .min();
                        let expiries: Vec<(usize, Option<Jiffies>)> = live
                            .iter()
                            .map(|&f| (f, effective_expiry(&t, f, now)))
                            .collect();
                        let added = t.add_flow(owner, 0, map, 17, class, key, rw, [0, 1], now);
                        if full {
                            let gone: Vec<(usize, Option<Jiffies>)> = expiries
                                .iter()
                                .copied()
                                .filter(|&(f, _)| !t.flows[f].live)
                                .collect();
                            match (added, gone.as_slice()) {
                                (Some(_), [(f, e)]) => {
                                    assert_eq!(
                                        *e, best,
                                        "evicted flow {f} is not the closest to expiry"
                                    );
                                }
                                (None, []) => {
                                    assert_eq!(
                                        new_e, best,
                                        "new flow refused while a flow closer to expiry could go"
                                    );
                                }
                                other => panic!("overflow: {other:?}"),
                            }
                        }
                    }
                }
                check_heaps(&t);
            }
        }
    }

    /// The fast path's checksum update (the delta, or its complement for
    /// a reply) is the general path's, on every checksum including the
    /// one's-complement zeros 0x0000 and 0xffff, for the deltas at the
    /// edges and a spread of others.
    #[test]
    fn add_checksum_delta_is_apply_delta() {
        let mut deltas = vec![0u16, 1, 0x7fff, 0x8000, 0xfffe, 0xffff];
        deltas.extend((0..64u16).map(|i| i.wrapping_mul(0x9e37) ^ 0x5a5a));
        for csum in 0..=u16::MAX {
            for &d in &deltas {
                assert_eq!(add_checksum_delta(csum, d), apply_delta(csum, d, false));
                assert_eq!(add_checksum_delta(csum, !d), apply_delta(csum, d, true));
            }
        }
    }

    /// Each map draws its own keys: a flow set crafted against one
    /// table's hash does not carry over to another's.
    #[test]
    fn flow_hash_keys_differ_between_maps() {
        let (a, b) = (FlowHashBuilder::default(), FlowHashBuilder::default());
        let f = FlowId::new(0x0a00_0001, 1234, 0xac10_0001, 80);
        assert_ne!(a.hash_one(f), b.hash_one(f));
    }

    /// A small deterministic generator (no dependency for the tests).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) as u32
        }
        fn below(&mut self, n: u32) -> u32 {
            self.next() % n
        }
    }

    /// Click's search, one lookup per value.
    fn click_first_free(
        map: &FlowMap,
        key: FlowId,
        varied: Varied,
        base: u32,
        top: u32,
        start: u32,
    ) -> Option<u32> {
        let mut val = start;
        for _ in 0..=u64::from(top) {
            let mut k = key;
            varied.set(&mut k, base.wrapping_add(val));
            if !map.contains_key(&k) {
                return Some(val);
            }
            val = if val == top { 0 } else { val + 1 };
        }
        None
    }

    /// The bitmap search finds the value Click's search does, whatever
    /// is taken, as keys come and go (bitmaps made, kept in step with
    /// the map, dropped), for port ranges and for an address range
    /// across a /16 boundary.
    #[test]
    fn free_value_search_matches_clicks_order() {
        let remote = FlowId::new(0x1212_0101, 80, 0x0100_0001, 0);
        let cases = [
            (Varied::Port, 1024u32, 64511u32),
            (Varied::Port, 5000, 300),
            (Varied::Addr, 0x0a00_ff00, 1000),
        ];
        for (n, &(varied, base, top)) in cases.iter().enumerate() {
            let mut rng = Lcg(n as u64 + 7);
            let mut t = Table::default();
            let map = t.new_map();
            let mut held: Vec<FlowId> = Vec::new();
            for round in 0..400 {
                // Fill a stretch (a run of taken values, as a sequential
                // allocator leaves), then free a few at random.
                let from = rng.below(top + 1);
                let len = rng.below(if round % 7 == 0 { top + 1 } else { 200 });
                for v in 0..len {
                    let mut k = remote;
                    varied.set(&mut k, base.wrapping_add((from + v) % (top + 1)));
                    if t.map_insert(map, k, 0).is_none() {
                        held.push(k);
                    }
                }
                for _ in 0..rng.below(20) {
                    if held.is_empty() {
                        break;
                    }
                    let k = held.swap_remove(rng.below(held.len() as u32) as usize);
                    t.map_remove(map, &k);
                }
                for _ in 0..8 {
                    let start = rng.below(top + 1);
                    let want = click_first_free(&t.maps[map], remote, varied, base, top, start);
                    let got = t
                        .free_values(map)
                        .first_free(remote, varied, base, top, start);
                    assert_eq!(got, want, "case {n} round {round} start {start}");
                }
            }
        }
    }

    fn udp_table() -> Table {
        let mut t = Table::default();
        t.new_map();
        t.new_owner("x", 1);
        t.owners[0].timeouts.udp_timeout = 300_000;
        t
    }

    fn napt_pattern(first: u16, last: u16) -> Pattern {
        Pattern {
            saddr: 0x0100_0001,
            sport: first,
            daddr: 0,
            dport: 0,
            variation_top: u32::from(last - first),
            next_variation: 0,
            is_napt: true,
            sequential: false,
            same_first: true,
        }
    }

    /// New flows from inside to one server, each from its own port.
    fn new_flow(i: u32) -> FlowId {
        FlowId::new(
            0x0a00_0001 + (i >> 14),
            (i & 0x3fff) as u16 + 1,
            0x1212_0101,
            53,
        )
    }

    /// Makes the flow as the rewriter does: `None` when refused.
    fn make(t: &mut Table, p: &mut Pattern, flow: FlowId, now: Jiffies) -> Option<u16> {
        let r = p.rewrite(&flow, &mut t.free_values(0))?;
        t.add_flow(0, 0, 0, 17, FlowClass::Udp, flow, r, [0, 1], now)?;
        Some(r.sport)
    }

    /// An exhausted port range (every port of 1024-65535 mapped towards
    /// one server) refuses each further new flow in a bounded number of
    /// lookups, not a scan of the range; a port freed by expiry is found
    /// and reused.
    #[test]
    fn an_exhausted_port_range_refuses_in_bounded_steps() {
        let mut t = udp_table();
        let mut p = napt_pattern(1024, 65535);
        let mut used = vec![false; 65536];
        let n = 65535 - 1024 + 1;
        for i in 0..n {
            // The first flow earlier than the rest: it expires first.
            let now = if i == 0 { 0 } else { 5000 };
            let port = make(&mut t, &mut p, new_flow(i), now).expect("a free port");
            assert!(!used[port as usize], "port {port} given twice");
            used[port as usize] = true;
        }
        let filling = t.alloc_probes;
        // Filling took a bounded number of lookups per flow, not the
        // quadratic count of a scan per flow through taken ports.
        assert!(filling < 8 * n as u64, "{filling} lookups to fill");
        assert!(make(&mut t, &mut p, new_flow(n), 5000).is_none());
        for i in n + 1..n + 2001 {
            let before = t.alloc_probes;
            assert!(make(&mut t, &mut p, new_flow(i), 5000).is_none());
            assert!(
                t.alloc_probes - before <= 2,
                "a refusal took {} lookups",
                t.alloc_probes - before
            );
        }
        assert_eq!(t.size(), n as usize);
        // The first flow expires; its port goes to the next new flow.
        let first_port = t.flow(0).key[1].dport;
        t.shrink(false, 300_001);
        assert_eq!(t.size(), n as usize - 1);
        let before = t.alloc_probes;
        assert_eq!(
            make(&mut t, &mut p, new_flow(n + 3000), 6000),
            Some(first_port)
        );
        assert!(t.alloc_probes - before <= 2);
        assert!(make(&mut t, &mut p, new_flow(n + 3001), 6000).is_none());
    }

    /// A small range: the flow's own port while free (port preservation),
    /// then the others, then refusals.
    #[test]
    fn a_small_range_keeps_ports_then_refuses() {
        let mut t = udp_table();
        let mut p = napt_pattern(1024, 1030);
        let own = FlowId::new(0x0a00_0001, 1027, 0x1212_0101, 53);
        assert_eq!(make(&mut t, &mut p, own, 0), Some(1027));
        let mut ports = vec![1027];
        for i in 0..6 {
            ports.push(make(&mut t, &mut p, new_flow(i), 0).expect("a free port"));
        }
        ports.sort_unstable();
        assert_eq!(ports, (1024..=1030).collect::<Vec<_>>());
        for i in 6..100 {
            assert!(make(&mut t, &mut p, new_flow(i), 0).is_none());
        }
    }

    /// An endpoint-independent choice skips both the ports bindings hold
    /// (anywhere) and the ports flows holding none use towards the
    /// destination, however they interleave and wherever the search
    /// starts: it finds the one port that is neither, with the parity
    /// asked, and refuses when there is none.
    #[test]
    fn an_endpoint_independent_choice_finds_the_last_usable_port() {
        let (first, last) = (2000u16, 2255u16);
        for (usable, parity) in [(2255u16, false), (2001, false), (2128, true), (2129, true)] {
            for start in [0u32, 1, 127, 128, 254, 255] {
                let mut t = udp_table();
                let server = |sport: u16| FlowId::new(0x1212_0101, 53, 0x0100_0001, sport);
                for (i, port) in (first..=last).filter(|&q| q != usable).enumerate() {
                    let i = i as u32;
                    if port % 3 == 0 {
                        // Bound, towards another server.
                        let flow = FlowId::new(0x0a00_0100 + i, 7, 0x1212_0202, 53);
                        let rw = FlowId::new(0x0100_0001, port, 0x1212_0202, 53);
                        let f = t
                            .add_flow(0, 0, 0, 17, FlowClass::Udp, flow, rw, [0, 1], 0)
                            .unwrap();
                        t.bind(f);
                    } else {
                        // Unbound, towards the destination.
                        let flow = FlowId::new(0x0b00_0100 + i, 7, 0x1212_0101, 53);
                        let rw = server(port).reverse();
                        t.add_flow(0, 0, 0, 17, FlowClass::Udp, flow, rw, [0, 1], 0)
                            .unwrap();
                    }
                }
                let mut p = napt_pattern(first, last);
                p.sequential = true;
                p.same_first = false;
                p.next_variation = start;
                // The inside port's parity is the usable port's.
                let flow = FlowId::new(0x0a00_0001, 4000 + usable % 2, 0x1212_0101, 53);
                let got = p.rewrite_endpoint_independent(&flow, &mut t.free_values(0), parity);
                assert_eq!(
                    got.map(|(r, bound)| (r.sport, bound)),
                    Some((usable, true)),
                    "usable {usable} start {start}"
                );
                // An inside port of the other parity, which has no port
                // left: the usable port all the same (parity is
                // preferred, not required). With that port taken too,
                // nothing is left.
                let odd = FlowId::new(0x0a00_0002, 4001 - usable % 2, 0x1212_0101, 53);
                if parity {
                    let other = p.rewrite_endpoint_independent(&odd, &mut t.free_values(0), true);
                    assert_eq!(
                        other.map(|(r, bound)| (r.sport, bound)),
                        Some((usable, true)),
                        "other parity, usable {usable} start {start}"
                    );
                }
                let rw = server(usable).reverse();
                let taker = FlowId::new(0x0c00_0001, 7, 0x1212_0101, 53);
                t.add_flow(0, 0, 0, 17, FlowClass::Udp, taker, rw, [0, 1], 0)
                    .unwrap();
                assert!(p
                    .rewrite_endpoint_independent(&flow, &mut t.free_values(0), parity)
                    .is_none());
            }
        }
    }
}

#[cfg(test)]
mod seq_delta_tests {
    use super::*;

    fn tcp_table() -> Table {
        let mut t = Table::default();
        t.new_map();
        t.new_owner("x", 1);
        t.owners[0].timeouts.timeout = 300_000;
        t
    }

    fn add(t: &mut Table, i: u16) -> usize {
        let flow = FlowId::new(0x0a00_0001, i, 0xac10_0001, 80);
        let rw = FlowId::new(0x0100_0001, i, 0xac10_0001, 80);
        t.add_flow(0, 0, 0, IP_PROTO_TCP, FlowClass::Tcp, flow, rw, [0, 1], 0)
            .expect("room")
    }

    /// Sequence-number deltas live beside the flows, by index: a flow
    /// slot reused after its flow is destroyed starts without any (the
    /// old ones must not come back with the new flow, in lookups or in
    /// the table), and a hot swap carries them to the flow's new index.
    #[test]
    fn sequence_deltas_follow_their_flow() {
        let mut t = tcp_table();
        let a = add(&mut t, 1000);
        let b = add(&mut t, 1001);
        assert!(t.seq_deltas(a).is_none());
        assert!(t.seq_deltas_or_new(a).update(0, 100, 7));
        assert!(t.flow(a).has_seq);
        assert_eq!(t.seq_deltas(a).map(|s| s.shown(0)), Some(7));
        assert!(t.unparse_entry(a, 0, 0).contains("seq +7"));
        assert!(t.seq_deltas(b).is_none());

        // Adopted by a new table (b first, so a lands at another index).
        let mut n = tcp_table();
        let c = add(&mut n, 2000);
        assert_eq!(n.adopt(&t, 0, 0, &[(0, 0)], 2), 2);
        let (na, _) = n.lookup(0, &t.flow(a).key[0]).expect("adopted");
        assert_ne!(na, a);
        assert!(n.flow(na).has_seq);
        assert_eq!(n.seq_deltas(na).map(|s| s.shown(0)), Some(7));
        assert!(n.seq_deltas(c).is_none());

        // Destroyed, its slot reused: no deltas.
        t.destroy(a);
        let d = add(&mut t, 1002);
        assert_eq!(d, a, "the slab reuses the slot");
        assert!(!t.flow(d).has_seq);
        assert!(t.seq_deltas(d).is_none());
        assert!(!t.unparse_entry(d, 0, 0).contains("seq"));
        // New deltas start from nothing.
        assert!(t.seq_deltas_or_new(d).update(0, 50, -3));
        assert_eq!(t.seq_deltas(d).map(|s| s.shown(0)), Some(-3));
    }

    /// Every way a flow leaves the table drops its deltas with it: a
    /// destroyed flow's deltas left behind cost nothing the lookups see
    /// (a reused slot starts afresh), so only `seq_deltas_all_live`
    /// notices them, and it must notice both kinds of leftover: on a
    /// free slot, and on a slot a new flow took since.
    #[test]
    fn removed_flows_keep_no_deltas_and_the_check_sees_leftovers() {
        let mut t = tcp_table();
        let flows: Vec<usize> = (0..3).map(|i| add(&mut t, 3000 + i)).collect();
        for &f in &flows {
            t.seq_deltas_or_new(f).update(0, 100, 5);
        }
        t.destroy(flows[0]);
        assert!(t.seq_deltas_all_live(), "destroy");
        let reply = t.flow(flows[1]).key[1];
        assert!(t.remove_key(0, &reply));
        assert!(t.seq_deltas_all_live(), "remove_mapping");
        t.shrink(true, 0);
        assert_eq!(t.size(), 0);
        assert!(t.seq_deltas_all_live(), "clear");

        // Deltas written to a removed flow's slot (what FTPPortMapper did
        // with a control connection the data mapping evicted).
        let mut t = tcp_table();
        let a = add(&mut t, 4000);
        t.destroy(a);
        t.seq_deltas_or_new(a).update(0, 100, 5);
        assert!(!t.seq_deltas_all_live(), "on a free slot");
        let b = add(&mut t, 4001);
        assert_eq!(b, a, "the slab reuses the slot");
        assert!(!t.seq_deltas_all_live(), "on a slot a new flow took");
    }
}

#[cfg(test)]
mod bitmap_sync_tests {
    use super::tests::xorshift;
    use super::*;

    /// Every bitmap agrees with its map on every value it knows, and its
    /// count and full-word summary agree with its bits.
    fn check_bitmaps(t: &Table) {
        for (&(map, varied, block), b) in &t.bitmaps {
            let mut count = 0;
            for w in 0..1024 {
                let kt = b.known[w] & b.taken[w];
                count += kt.count_ones();
                assert_eq!(
                    b.full[w / 64] >> (w % 64) & 1 == 1,
                    kt == !0,
                    "full word {w}"
                );
                for bit in 0..64 {
                    if b.known[w] >> bit & 1 == 1 {
                        let k = varied.at(&block, (w * 64 + bit) as u32);
                        assert_eq!(
                            t.maps[map as usize].contains_key(&k),
                            b.taken[w] >> bit & 1 == 1,
                            "bitmap {varied:?} disagrees with map {map} on {k}"
                        );
                    }
                }
            }
            assert_eq!(count, b.taken_count);
            assert!(b.taken_count >= BITMAP_MIN_TAKEN);
        }
    }

    /// Whether some value of the range is free in the map.
    fn any_free(t: &Table, map: usize, key: FlowId, varied: Varied, base: u32, top: u32) -> bool {
        (0..=top).any(|v| {
            let mut k = key;
            varied.set(&mut k, base + v);
            !t.maps[map].contains_key(&k)
        })
    }

    /// Bitmaps stay in step with the maps through every way a mapping
    /// comes and goes: pattern-made flows, capacity evictions, expiry,
    /// `add_mapping` (pinned or not, replacing what it meets),
    /// `remove_mapping`, a pattern change, `clear`, and a hot swap's
    /// copy; a pattern never gets a taken port and is refused only when
    /// the range is full.
    #[test]
    fn bitmaps_stay_in_step_with_the_maps() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut rnd = |n: u64| xorshift(&mut seed) % n;
        let server = FlowId::new(0x1212_0101, 53, 0, 0);
        let mut rounds_with_bitmaps = 0;
        for round in 0..6 {
            let mut had_bitmaps = false;
            let mut t = Table::default();
            let map = t.new_map();
            let owner = t.new_owner("rw", 2);
            t.owners[owner].timeouts.udp_timeout = 20_000;
            t.owners[owner].timeouts.udp_guarantee = if round % 2 == 0 { 0 } else { 3_000 };
            t.capacity = [100_000, 290, 1000][round % 3];
            let (first, last) = (1024u16, 1024 + 299);
            let mut p = Pattern {
                saddr: 0x0100_0001,
                sport: first,
                daddr: 0,
                dport: 0,
                variation_top: u32::from(last - first),
                next_variation: 0,
                is_napt: true,
                sequential: round % 2 == 1,
                same_first: true,
            };
            let reply = |sport: u16| FlowId::new(0x1212_0101, 53, 0x0100_0001, sport);
            let mut now: Jiffies = 1_000_000;
            let mut inside = 0u32;
            for _ in 0..6000 {
                now += rnd(40) as Jiffies;
                match rnd(200) {
                    0..=169 => {
                        inside += 1;
                        let flow = FlowId::new(
                            0x0a00_0000 + inside,
                            first + (rnd(400) as u16),
                            server.saddr,
                            server.sport,
                        );
                        let input = rnd(2) as usize;
                        match p.rewrite(&flow, &mut t.free_values(map)) {
                            Some(r) => {
                                assert!(
                                    !t.maps[map].contains_key(&r.reverse()),
                                    "port {} given twice",
                                    r.sport
                                );
                                t.add_flow(
                                    owner,
                                    input,
                                    map,
                                    17,
                                    FlowClass::Udp,
                                    flow,
                                    r,
                                    [0, 1],
                                    now,
                                );
                            }
                            None => assert!(
                                !any_free(
                                    &t,
                                    map,
                                    reply(0),
                                    Varied::Port,
                                    first.into(),
                                    p.variation_top
                                ),
                                "a free port refused"
                            ),
                        }
                    }
                    170..=179 => t.shrink(false, now),
                    180..=185 => {
                        // add_mapping onto a port of the range, maybe held.
                        let port = first + rnd(300) as u16;
                        let flow = FlowId::new(
                            0x0b00_0001,
                            rnd(60_000) as u16 + 1,
                            server.saddr,
                            server.sport,
                        );
                        let rw = FlowId::new(0x0100_0001, port, server.saddr, server.sport);
                        t.add_manual(
                            rnd(4) == 0,
                            owner,
                            map,
                            17,
                            FlowClass::Udp,
                            flow,
                            rw,
                            [0, 1],
                            now,
                        );
                    }
                    186..=191 => {
                        let port = first + rnd(300) as u16;
                        t.remove_key(map, &reply(port));
                    }
                    192 => t.destroy_input(owner, rnd(2) as usize),
                    193 => t.shrink(true, now),
                    194 => {
                        // Capacity lowered, then raised again.
                        let cap = t.capacity;
                        t.capacity = t.size() as u32 / 2;
                        t.shrink(false, now);
                        t.capacity = cap;
                    }
                    _ => {
                        // Hot swap: the flows move to a fresh table.
                        let mut n = Table::default();
                        let nmap = n.new_map();
                        let nowner = n.new_owner("rw", 2);
                        n.owners[nowner].timeouts = t.owners[owner].timeouts;
                        n.capacity = t.capacity;
                        n.adopt(&t, owner, nowner, &[(map, nmap)], 2);
                        assert_eq!(n.size(), t.size());
                        t = n;
                    }
                }
                check_bitmaps(&t);
                had_bitmaps |= !t.bitmaps.is_empty();
            }
            rounds_with_bitmaps += had_bitmaps as u32;
        }
        assert!(
            rounds_with_bitmaps >= 3,
            "{rounds_with_bitmaps} rounds made bitmaps"
        );
    }
}
