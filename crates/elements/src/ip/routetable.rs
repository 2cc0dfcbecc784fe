//! Shared machinery of the IPv4 route-lookup elements (Click's
//! `IPRouteTable` interface): route syntax, the cleartext route store,
//! next-hop interning, the longest-prefix-match structures, and
//! [`RouteLookup`], the one element implementation of every route-lookup
//! class (the dispatch kind, with the `table`, `lookup`, `add`, `set`,
//! `remove`, `ctrl` and `flush` handlers); a class file names its lookup
//! structure and how the class differs with a [`TableClass`].
//!
//! A [`RouteTable`] keeps three things:
//! - the routes themselves, in slots (dump order; freed slots are reused, as
//!   in Click's RadixIPLookup) with a hash index on `(addr, mask)`;
//! - [`NextHops`]: each distinct `(gateway, output)` pair interned once and
//!   reference counted (Click's DirectIPLookup "virtual ports"), so the
//!   lookup structures store small next-hop ids and the final step of a
//!   lookup reads a table that stays in cache;
//! - an [`Lpm`] structure mapping an address to a next-hop id: [`LinearLpm`]
//!   (ordered scan, any mask) or [`StrideTrie`] (multibit trie with prefix
//!   expansion; `StrideTrie<24, 8>` is DIR-24-8, `StrideTrie<16, 4>` is the
//!   RadixIPLookup trie).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rclick_core::conf::{
    parse_i32, parse_ipv4, parse_ipv4_addr_or_prefix, split_args, split_words, uncomment,
};
use rclick_core::element::{hflags, Dispatch};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Errors, Handler, InitCtx, Packet};

// ------------------------------------------------------------------ routes

/// One route: packets whose destination matches `addr/mask` go to output
/// `port`, with the destination annotation set to `gw` when it is nonzero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Network address (host bits cleared), host byte order.
    pub addr: u32,
    /// Mask, host byte order; need not be contiguous for LinearIPLookup.
    pub mask: u32,
    /// Gateway; 0 for none.
    pub gw: u32,
    /// Output port; -1 in a `remove` request means "any gateway and port".
    pub port: i32,
}

/// The mask of a prefix length (0..=32).
#[inline]
pub fn len_mask(len: u32) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    }
}

/// Whether `mask` is a contiguous prefix mask.
#[inline]
pub fn is_contiguous(mask: u32) -> bool {
    len_mask(mask.leading_ones()) == mask
}

impl Route {
    /// A route for `addr/len` (host bits are cleared).
    pub fn new(addr: Ipv4Addr, len: u8, gw: Ipv4Addr, port: i32) -> Route {
        let mask = len_mask(u32::from(len));
        Route {
            addr: u32::from(addr) & mask,
            mask,
            gw: u32::from(gw),
            port,
        }
    }

    /// The prefix length, or `None` for a non-contiguous mask.
    pub fn prefix_len(&self) -> Option<u8> {
        is_contiguous(self.mask).then(|| self.mask.leading_ones() as u8)
    }

    /// Whether `a` matches the route's prefix.
    #[inline]
    pub fn contains(&self, a: u32) -> bool {
        a & self.mask == self.addr
    }

    /// `addr/len`, or `addr/mask` for a non-contiguous mask (Click's
    /// `unparse_with_mask`).
    pub fn prefix_string(&self) -> String {
        match self.prefix_len() {
            Some(l) => format!("{}/{}", Ipv4Addr::from(self.addr), l),
            None => format!(
                "{}/{}",
                Ipv4Addr::from(self.addr),
                Ipv4Addr::from(self.mask)
            ),
        }
    }

    /// Click's `IPRoute::unparse`: `PREFIX GW PORT` with `-` for no gateway,
    /// separated by spaces, or by tabs padded into columns when `tabs`.
    pub fn unparse_into(&self, out: &mut String, tabs: bool) {
        let sep = if tabs { '\t' } else { ' ' };
        let start = out.len();
        out.push_str(&self.prefix_string());
        out.push(sep);
        if tabs && out.len() < start + 17 {
            out.push('\t');
        }
        let start = out.len();
        if self.gw != 0 {
            let _ = write!(out, "{}", Ipv4Addr::from(self.gw));
        } else {
            out.push('-');
        }
        out.push(sep);
        if tabs && out.len() < start + 9 {
            out.push('\t');
        }
        let _ = write!(out, "{}", self.port);
    }

    /// The route as Click prints it in messages (spaces).
    pub fn unparse(&self) -> String {
        let mut s = String::new();
        self.unparse_into(&mut s, false);
        s
    }
}

/// Resolves an address: dotted quad, else a name through `names`
/// (AddressInfo).
fn parse_addr(w: &str, names: &dyn Fn(&str) -> Option<Ipv4Addr>) -> Option<Ipv4Addr> {
    parse_ipv4(w).ok().or_else(|| names(w))
}

/// Resolves a prefix: `a.b.c.d/len`, `a.b.c.d/mask`, a bare address
/// (`/32`), or an AddressInfo name with or without `/len`.
fn parse_prefix(w: &str, names: &dyn Fn(&str) -> Option<Ipv4Addr>) -> Option<(u32, u32)> {
    if let Ok(p) = parse_ipv4_addr_or_prefix(w) {
        return Some((u32::from(p.addr), u32::from(p.mask)));
    }
    match w.rsplit_once('/') {
        Some((name, len)) => {
            let a = names(name)?;
            let mask = match len.parse::<u32>() {
                Ok(l) if l <= 32 => len_mask(l),
                _ => u32::from(parse_ipv4(len).ok()?),
            };
            Some((u32::from(a), mask))
        }
        None => names(w).map(|a| (u32::from(a), u32::MAX)),
    }
}

/// Rewrites a route's first word when it is an AddressInfo name with a
/// suffix (`name:ipnet`, `name:bcast`, `name:ip`, `name:gw`, ...) into the
/// address or prefix it stands for; other routes are returned unchanged.
fn resolve_suffixed_prefix(arg: &str, ctx: &InitCtx) -> String {
    let words = split_words(arg);
    let Some(first) = words.first() else {
        return arg.to_string();
    };
    if !first.contains(':') || parse_ipv4_addr_or_prefix(first).is_ok() {
        return arg.to_string();
    }
    let resolved = if let Ok(p) = super::address::parse_ipv4_prefix_arg(first, ctx) {
        format!("{}/{}", p.addr, p.mask)
    } else if let Ok(a) = super::address::parse_ipv4_arg(first, ctx) {
        a.to_string()
    } else {
        return arg.to_string();
    };
    std::iter::once(resolved)
        .chain(words[1..].iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a route, `ADDR/MASK [GW] OUT` (Click's `cp_ip_route`). The
/// gateway may be `-` for none. With `remove`, the output may be omitted
/// (the route then has port -1, matching any gateway and output). Returns
/// `None` on a syntax error.
pub fn parse_route(
    s: &str,
    remove: bool,
    names: &dyn Fn(&str) -> Option<Ipv4Addr>,
) -> Option<Route> {
    let words = split_words(s);
    let mut it = words.iter().map(String::as_str);
    let (addr, mask) = parse_prefix(it.next()?, names)?;
    let mut r = Route {
        addr: addr & mask,
        mask,
        gw: 0,
        port: -1,
    };
    let mut word = it.next();
    if let Some(w) = word {
        if w == "-" {
            word = it.next();
        } else if let Some(gw) = parse_addr(w, names) {
            r.gw = u32::from(gw);
            word = it.next();
        }
    }
    match word {
        Some(w) => r.port = parse_i32(w).ok()?,
        None if remove => {}
        None => return None,
    }
    it.next().is_none().then_some(r)
}

// --------------------------------------------------------------- next hops

/// A next hop: gateway (0 for none) and output port (-1: no route).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub gw: u32,
    pub port: i32,
}

/// The "no route" next hop, id 0.
pub const NO_ROUTE: Hop = Hop { gw: 0, port: -1 };

/// Largest next-hop id the lookup structures can store (25 bits).
pub const MAX_HOP_ID: u32 = (1 << 25) - 1;

/// Interned `(gateway, port)` pairs, reference counted. Id 0 is the
/// permanent "no route" hop.
#[derive(Clone, Debug)]
pub struct NextHops {
    hops: Vec<Hop>,
    refs: Vec<u32>,
    index: HashMap<(u32, i32), u32>,
    free: Vec<u32>,
}

impl Default for NextHops {
    fn default() -> Self {
        NextHops {
            hops: vec![NO_ROUTE],
            refs: vec![1],
            index: HashMap::new(),
            free: Vec::new(),
        }
    }
}

impl NextHops {
    /// The hop with id `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Hop {
        // Ids come from this table; an out-of-range id means no route.
        self.hops.get(id as usize).copied().unwrap_or(NO_ROUTE)
    }

    /// Takes a reference to the hop `(gw, port)`, interning it if new.
    fn acquire(&mut self, gw: u32, port: i32) -> Option<u32> {
        if let Some(&id) = self.index.get(&(gw, port)) {
            self.refs[id as usize] += 1;
            return Some(id);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let id = self.hops.len() as u32;
                if id > MAX_HOP_ID {
                    return None;
                }
                self.hops.push(NO_ROUTE);
                self.refs.push(0);
                id
            }
        };
        self.hops[id as usize] = Hop { gw, port };
        self.refs[id as usize] = 1;
        self.index.insert((gw, port), id);
        Some(id)
    }

    /// Drops a reference taken by `acquire`.
    fn release(&mut self, id: u32) {
        if id == 0 {
            return;
        }
        let r = &mut self.refs[id as usize];
        *r -= 1;
        if *r == 0 {
            let h = self.hops[id as usize];
            self.index.remove(&(h.gw, h.port));
            self.hops[id as usize] = NO_ROUTE;
            self.free.push(id);
        }
    }

    /// Distinct next hops in use.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    fn memory(&self) -> usize {
        self.hops.capacity() * std::mem::size_of::<Hop>()
            + self.refs.capacity() * 4
            + self.free.capacity() * 4
            + self.index.capacity() * (std::mem::size_of::<((u32, i32), u32)>() + 1)
    }
}

// ------------------------------------------------------ lookup structures

/// The lookup structure could not allocate memory for a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoMemory;

/// A longest-prefix-match structure from addresses to next-hop ids (0 = no
/// route). [`RouteTable`] guarantees that `insert` is called for a prefix
/// not yet present or to replace the id of one that is, and that `remove`
/// is called for a present prefix with the id and length of the longest
/// shorter prefix covering it (`(0, 0)` if none).
pub trait Lpm: Default + Send + 'static {
    /// Whether non-contiguous masks are supported.
    const ANY_MASK: bool = false;
    /// Adds `addr/mask` -> `hop`, or replaces the hop of that prefix.
    fn insert(&mut self, addr: u32, mask: u32, hop: u32) -> Result<(), NoMemory>;
    /// Removes `addr/mask`; `cover` is the covering route's hop and length.
    fn remove(&mut self, addr: u32, mask: u32, cover: (u32, u32));
    /// The hop id for `addr`, 0 if no route matches.
    fn lookup(&self, addr: u32) -> u32;
    /// Removes every route.
    fn clear(&mut self);
    /// Bytes of memory held.
    fn memory(&self) -> usize;
    /// A short description of the structure's shape, for statistics.
    fn describe(&self) -> String {
        String::new()
    }
}

/// Ordered linear scan: entries sorted most specific mask first, so the
/// first match is the longest. Accepts non-contiguous masks (the mask with
/// more one bits is tried first). O(routes) per lookup, as in Click's
/// LinearIPLookup.
#[derive(Default, Clone, Debug)]
pub struct LinearLpm {
    /// `(mask, addr, hop)`.
    v: Vec<(u32, u32, u32)>,
}

impl LinearLpm {
    fn order(mask: u32) -> (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>) {
        (
            std::cmp::Reverse(mask.count_ones()),
            std::cmp::Reverse(mask),
        )
    }
}

impl Lpm for LinearLpm {
    const ANY_MASK: bool = true;

    fn insert(&mut self, addr: u32, mask: u32, hop: u32) -> Result<(), NoMemory> {
        if let Some(e) = self.v.iter_mut().find(|e| e.0 == mask && e.1 == addr) {
            e.2 = hop;
            return Ok(());
        }
        let key = Self::order(mask);
        let at = self.v.partition_point(|e| Self::order(e.0) <= key);
        self.v.try_reserve(1).map_err(|_| NoMemory)?;
        self.v.insert(at, (mask, addr, hop));
        Ok(())
    }

    fn remove(&mut self, addr: u32, mask: u32, _cover: (u32, u32)) {
        self.v.retain(|e| !(e.0 == mask && e.1 == addr));
    }

    #[inline]
    fn lookup(&self, addr: u32) -> u32 {
        self.v.iter().find(|e| addr & e.0 == e.1).map_or(0, |e| e.2)
    }

    fn clear(&mut self) {
        self.v.clear();
    }

    fn memory(&self) -> usize {
        self.v.capacity() * 12
    }

    fn describe(&self) -> String {
        format!("linear, {} entries", self.v.len())
    }
}

/// Entry flag: the low 31 bits index a child node.
const CHILD: u32 = 1 << 31;
const PLEN_SHIFT: u32 = 25;
const HOP_MASK: u32 = (1 << PLEN_SHIFT) - 1;

#[inline]
fn leaf(plen: u32, hop: u32) -> u32 {
    (plen << PLEN_SHIFT) | hop
}

#[inline]
fn plen_of(e: u32) -> u32 {
    (e >> PLEN_SHIFT) & 63
}

#[derive(Clone, Copy)]
enum Where {
    Root,
    Node(u32),
}

/// A multibit trie with prefix expansion: a root table indexed by the top
/// `ROOT` bits of the address, then child nodes of `2^STRIDE` entries
/// indexed by the next `STRIDE` bits each, allocated only where a longer
/// prefix needs them. `StrideTrie<24, 8>` is DIR-24-8-BASIC (Gupta, Lin and
/// McKeown): one memory access for prefixes up to /24, two beyond.
///
/// Each 32-bit entry is either a child reference (`CHILD | node`) or a leaf
/// holding the hop id (25 bits) and the length of the prefix that set it (6
/// bits). The stored lengths let updates skip more specific entries and let
/// removal restore the covering route, so neither needs the route list.
/// Child nodes whose entries become identical are folded back into their
/// parent entry and recycled.
#[derive(Clone, Debug)]
pub struct StrideTrie<const ROOT: u32, const STRIDE: u32> {
    root: Vec<u32>,
    nodes: Vec<u32>,
    free: Vec<u32>,
}

impl<const ROOT: u32, const STRIDE: u32> Default for StrideTrie<ROOT, STRIDE> {
    fn default() -> Self {
        const {
            assert!(ROOT >= 1 && ROOT <= 24 && STRIDE >= 1 && STRIDE <= 16);
            assert!((32 - ROOT).is_multiple_of(STRIDE));
        }
        StrideTrie {
            // Zeroed memory: the kernel hands it out lazily, so an empty
            // DIR-24-8 table costs nothing until routes are added.
            root: vec![0; 1 << ROOT],
            nodes: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<const ROOT: u32, const STRIDE: u32> StrideTrie<ROOT, STRIDE> {
    const NODE: usize = 1 << STRIDE;

    #[inline]
    fn get(&self, w: Where, i: usize) -> u32 {
        match w {
            Where::Root => self.root[i],
            Where::Node(n) => self.nodes[n as usize * Self::NODE + i],
        }
    }

    #[inline]
    fn set(&mut self, w: Where, i: usize, e: u32) {
        match w {
            Where::Root => self.root[i] = e,
            Where::Node(n) => self.nodes[n as usize * Self::NODE + i] = e,
        }
    }

    /// A new child node with every entry `fill`.
    fn alloc_node(&mut self, fill: u32) -> Result<u32, NoMemory> {
        if let Some(n) = self.free.pop() {
            let b = n as usize * Self::NODE;
            self.nodes[b..b + Self::NODE].fill(fill);
            return Ok(n);
        }
        let n = self.nodes.len() / Self::NODE;
        if n >= CHILD as usize {
            return Err(NoMemory);
        }
        self.nodes.try_reserve(Self::NODE).map_err(|_| NoMemory)?;
        self.nodes.resize(self.nodes.len() + Self::NODE, fill);
        Ok(n as u32)
    }

    /// If every entry of node `n`, whose index starts after `depth` address
    /// bits, is the same leaf set by a prefix no longer than `depth`, frees
    /// the node and returns that leaf for its parent entry. (Two sibling
    /// /25s with one next hop are uniform too, but must keep their node so
    /// that each can be removed.)
    fn try_fold(&mut self, n: u32, depth: u32) -> Option<u32> {
        let b = n as usize * Self::NODE;
        let node = &self.nodes[b..b + Self::NODE];
        let first = node[0];
        if first & CHILD != 0 || plen_of(first) > depth || node.iter().any(|&e| e != first) {
            return None;
        }
        self.free.push(n);
        Some(first)
    }

    /// Applies `f` to every leaf under entry `e`, which sits in a table
    /// ending `depth` address bits in; returns the new entry.
    fn apply(&mut self, e: u32, depth: u32, f: &dyn Fn(u32) -> u32) -> u32 {
        if e & CHILD == 0 {
            return f(e);
        }
        let n = e & !CHILD;
        for i in 0..Self::NODE {
            let c = self.get(Where::Node(n), i);
            let c2 = self.apply(c, depth + STRIDE, f);
            if c2 != c {
                self.set(Where::Node(n), i, c2);
            }
        }
        self.try_fold(n, depth).unwrap_or(e)
    }

    /// Applies `f` to every leaf covered by `addr/len`, descending from
    /// table `w`, whose index starts after `base` address bits and is
    /// `width` bits wide. With `create`, missing child nodes on the way are
    /// made; without, a missing node means nothing to change.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &mut self,
        w: Where,
        base: u32,
        width: u32,
        addr: u32,
        len: u32,
        create: bool,
        f: &dyn Fn(u32) -> u32,
    ) -> Result<(), NoMemory> {
        let end = base + width;
        let idx = ((addr << base) >> (32 - width)) as usize;
        if len <= end {
            let span = 1usize << (end - len);
            let start = idx & !(span - 1);
            for i in start..start + span {
                let e = self.get(w, i);
                let e2 = self.apply(e, end, f);
                if e2 != e {
                    self.set(w, i, e2);
                }
            }
            return Ok(());
        }
        let e = self.get(w, idx);
        let child = if e & CHILD != 0 {
            e & !CHILD
        } else if create {
            let n = self.alloc_node(e)?;
            self.set(w, idx, CHILD | n);
            n
        } else {
            return Ok(());
        };
        let r = self.change(Where::Node(child), end, STRIDE, addr, len, create, f);
        if let Some(folded) = self.try_fold(child, end) {
            self.set(w, idx, folded);
        }
        r
    }

    /// Live child nodes.
    pub fn nodes(&self) -> usize {
        self.nodes.len() / Self::NODE - self.free.len()
    }
}

impl<const ROOT: u32, const STRIDE: u32> Lpm for StrideTrie<ROOT, STRIDE> {
    fn insert(&mut self, addr: u32, mask: u32, hop: u32) -> Result<(), NoMemory> {
        let len = mask.leading_ones();
        let val = leaf(len, hop);
        let f = move |e: u32| if plen_of(e) <= len { val } else { e };
        self.change(Where::Root, 0, ROOT, addr, len, true, &f)
    }

    fn remove(&mut self, addr: u32, mask: u32, cover: (u32, u32)) {
        let len = mask.leading_ones();
        let val = leaf(cover.1, cover.0);
        let f = move |e: u32| if plen_of(e) == len { val } else { e };
        // Without `create` no allocation happens, so this cannot fail.
        let _ = self.change(Where::Root, 0, ROOT, addr, len, false, &f);
    }

    #[inline]
    fn lookup(&self, addr: u32) -> u32 {
        let mut e = self.root[(addr >> (32 - ROOT)) as usize];
        let mut shift = 32 - ROOT;
        while e & CHILD != 0 {
            shift = shift.wrapping_sub(STRIDE) & 31;
            let i =
                ((e & !CHILD) as usize) << STRIDE | ((addr >> shift) as usize & (Self::NODE - 1));
            e = match self.nodes.get(i) {
                Some(&e) => e,
                None => return 0,
            };
        }
        e & HOP_MASK
    }

    fn clear(&mut self) {
        self.root.fill(0);
        self.nodes = Vec::new();
        self.free = Vec::new();
    }

    fn memory(&self) -> usize {
        (self.root.capacity() + self.nodes.capacity() + self.free.capacity()) * 4
    }

    fn describe(&self) -> String {
        format!(
            "{}-bit root, {} nodes of {} entries",
            ROOT,
            self.nodes(),
            Self::NODE
        )
    }
}

/// DIR-24-8: DirectIPLookup's structure.
pub type Dir24_8 = StrideTrie<24, 8>;
/// 16-bit root, then 4-bit strides: RadixIPLookup's structure.
pub type Radix16_4 = StrideTrie<16, 4>;

// ------------------------------------------------------------- the table

/// Why a route could not be added or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableError {
    /// A route for the prefix exists (and `set` was not given).
    Exists(Route),
    /// No matching route.
    NotFound(Route),
    /// Out of memory or out of next-hop ids.
    NoMemory(Route),
    /// The mask is not contiguous and this structure needs prefixes.
    BadMask(Route),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::Exists(r) => write!(f, "conflict with existing route '{}'", r.unparse()),
            TableError::NotFound(r) => write!(f, "route '{}' not found", r.unparse()),
            TableError::NoMemory(r) => write!(f, "no memory to store route '{}'", r.unparse()),
            TableError::BadMask(r) => write!(
                f,
                "route '{}': non-contiguous mask (this table needs ADDR/LEN prefixes)",
                r.unparse()
            ),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Stored {
    route: Route,
    hop: u32,
}

/// Memory held by a table, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The lookup structure and next-hop table (what packets touch).
    pub lookup: usize,
    /// The route list and its index (updates and `table` only).
    pub control: usize,
}

/// A route table with Click's IPRouteTable semantics over lookup structure
/// `L`.
#[derive(Default)]
pub struct RouteTable<L: Lpm> {
    lpm: L,
    hops: NextHops,
    slots: Vec<Option<Stored>>,
    free_slots: Vec<u32>,
    index: HashMap<(u32, u32), u32>,
}

impl<L: Lpm> RouteTable<L> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Distinct next hops.
    pub fn hop_count(&self) -> usize {
        self.hops.len()
    }

    /// The lookup structure.
    pub fn lpm(&self) -> &L {
        &self.lpm
    }

    /// Looks up `addr`: the next hop of the longest matching prefix, or
    /// [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u32) -> Hop {
        self.hops.get(self.lpm.lookup(addr))
    }

    /// The route stored for exactly `addr/mask`.
    pub fn get(&self, addr: u32, mask: u32) -> Option<Route> {
        let &s = self.index.get(&(addr & mask, mask))?;
        self.slots[s as usize].map(|st| st.route)
    }

    /// Adds `r`. If a route for the same prefix exists, fails with
    /// [`TableError::Exists`] unless `set`, in which case it is replaced and
    /// returned.
    pub fn add(&mut self, mut r: Route, set: bool) -> Result<Option<Route>, TableError> {
        r.addr &= r.mask;
        if !L::ANY_MASK && !is_contiguous(r.mask) {
            return Err(TableError::BadMask(r));
        }
        if let Some(&slot) = self.index.get(&(r.addr, r.mask)) {
            let old = self.slots[slot as usize].ok_or(TableError::NoMemory(r))?;
            if !set {
                return Err(TableError::Exists(old.route));
            }
            if old.route == r {
                return Ok(Some(old.route));
            }
            let hop = self.insert_hop(&r)?;
            self.hops.release(old.hop);
            self.slots[slot as usize] = Some(Stored { route: r, hop });
            return Ok(Some(old.route));
        }
        let hop = self.insert_hop(&r)?;
        let st = Some(Stored { route: r, hop });
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.slots[s as usize] = st;
                s
            }
            None => {
                self.slots.push(st);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert((r.addr, r.mask), slot);
        Ok(None)
    }

    /// Points `r`'s prefix in the lookup structure at the hop of `r`,
    /// interning it; returns the hop id. On failure nothing changes.
    fn insert_hop(&mut self, r: &Route) -> Result<u32, TableError> {
        let hop = self
            .hops
            .acquire(r.gw, r.port)
            .ok_or(TableError::NoMemory(*r))?;
        if self.lpm.insert(r.addr, r.mask, hop).is_err() {
            self.hops.release(hop);
            return Err(TableError::NoMemory(*r));
        }
        Ok(hop)
    }

    /// Removes the route for `r`'s prefix. When `r.port >= 0` its gateway
    /// and port must match too. Returns the removed route.
    pub fn remove(&mut self, r: &Route) -> Result<Route, TableError> {
        let key = (r.addr & r.mask, r.mask);
        let Some(&slot) = self.index.get(&key) else {
            return Err(TableError::NotFound(*r));
        };
        let Some(old) = self.slots[slot as usize] else {
            return Err(TableError::NotFound(*r));
        };
        if r.port >= 0 && (old.route.gw != r.gw || old.route.port != r.port) {
            return Err(TableError::NotFound(*r));
        }
        self.index.remove(&key);
        self.slots[slot as usize] = None;
        self.free_slots.push(slot);
        let mut cover = (0, 0);
        if is_contiguous(key.1) {
            let len = key.1.leading_ones();
            for l in (0..len).rev() {
                let m = len_mask(l);
                if let Some(&s) = self.index.get(&(key.0 & m, m)) {
                    if let Some(st) = self.slots[s as usize] {
                        cover = (st.hop, l);
                        break;
                    }
                }
            }
        }
        self.lpm.remove(key.0, key.1, cover);
        self.hops.release(old.hop);
        Ok(old.route)
    }

    /// Removes every route.
    pub fn flush(&mut self) {
        self.lpm.clear();
        self.hops = NextHops::default();
        self.slots = Vec::new();
        self.free_slots = Vec::new();
        self.index = HashMap::new();
    }

    /// The routes, in slot order.
    pub fn routes(&self) -> impl Iterator<Item = Route> + '_ {
        self.slots.iter().flatten().map(|s| s.route)
    }

    /// Click's `table` handler text: one route per line.
    pub fn dump(&self, tabs: bool) -> String {
        let mut out = String::new();
        for r in self.routes() {
            r.unparse_into(&mut out, tabs);
            out.push('\n');
        }
        out
    }

    /// Memory held, in bytes.
    pub fn memory(&self) -> Memory {
        Memory {
            lookup: self.lpm.memory() + self.hops.memory(),
            control: self.slots.capacity() * std::mem::size_of::<Option<Stored>>()
                + self.free_slots.capacity() * 4
                + self.index.capacity() * (std::mem::size_of::<((u32, u32), u32)>() + 1),
        }
    }
}

// ------------------------------------------------------------ the element

/// What an element prints when a packet has no route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoRouteMessage {
    /// LinearIPLookup: `LinearIPLookup: no gw for HEX`.
    Linear,
    /// IPRouteTable's push: `IPRouteTable: no route for ADDR`.
    Table,
    /// DirectIPLookup drops silently.
    Silent,
}

/// A route-lookup class: its name, its lookup structure and how it
/// differs from the others. The defaults are those of the tries
/// (RadixIPLookup). The class's element is [`RouteLookup<Self>`].
pub trait TableClass: Send + 'static {
    /// The class name, for the `Linear` no-route message.
    const CLASS: &'static str;
    type Lpm: Lpm;
    /// Has `add`, `set`, `remove`, `ctrl` and `flush`, and takes the old
    /// table on hot swap (a static table's configuration is all of it).
    const DYNAMIC: bool = true;
    /// Click's class has `flush` (LinearIPLookup's does not: rclick's
    /// `flush` is then an addition, listed with the other additions).
    const CLICK_FLUSH: bool = true;
    /// `table` separates columns with tabs (the tries) or spaces.
    const TABS: bool = true;
    const NO_ROUTE: NoRouteMessage = NoRouteMessage::Table;
}

/// Messages printed about packets without a route, per element.
const MAX_COMPLAINTS: u32 = 5;

/// An undo record of a `ctrl` transaction.
enum Undo {
    /// The route was added: remove it.
    Remove(Route),
    /// The route replaced this one: set it back.
    Restore(Route),
    /// The route was removed: add it back.
    Readd(Route),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Command {
    Add,
    Set,
    Remove,
}

/// The route-lookup element of class `C` (RadixIPLookup, DirectIPLookup,
/// LinearIPLookup, StaticIPLookup, LookupIPRoute): the dispatch kind over a
/// [`RouteTable`].
pub struct RouteLookup<C: TableClass> {
    table: RouteTable<C::Lpm>,
    noutputs: usize,
    drops: u64,
    complaints: u32,
    /// The last destination looked up and its hop: runs of packets for one
    /// destination (a flow, or traffic through one gateway) cost one lookup
    /// (Click's LinearIPLookup keeps a similar cache). Cleared whenever the
    /// table changes.
    last: Option<(Ipv4Addr, Hop)>,
    /// Counts changes made through the handlers and by hot swap, for
    /// elements that cache lookups ([`changes_of`]).
    changes: Arc<AtomicU64>,
}

impl<C: TableClass> Default for RouteLookup<C> {
    fn default() -> Self {
        RouteLookup {
            table: RouteTable::new(),
            noutputs: 0,
            drops: 0,
            complaints: 0,
            last: None,
            changes: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl<C: TableClass> RouteLookup<C> {
    /// The route table.
    pub fn table(&self) -> &RouteTable<C::Lpm> {
        &self.table
    }

    /// The table's change counter: it goes up whenever the routes may have
    /// changed after configuration (a write handler, a hot swap).
    pub fn changes(&self) -> Arc<AtomicU64> {
        self.changes.clone()
    }

    fn changed(&mut self) {
        self.last = None;
        self.changes.fetch_add(1, Ordering::Release);
    }

    // The handlers, one constant each for the tables below.
    const TABLE: Handler<Self> = Handler::read("table", |e, _| e.table.dump(C::TABS));
    const LOOKUP: Handler<Self> =
        Handler::read_param("lookup", |e, param, _| e.lookup_handler(param));
    const MEMORY: Handler<Self> = Handler::read("memory", |e, _| e.memory_handler());
    const DROPS: Handler<Self> = Handler::data("drops", |e| &e.drops);
    const ADD: Handler<Self> = Handler::write("add", |e, v, _| e.command(Command::Add, v));
    const SET: Handler<Self> = Handler::write("set", |e, v, _| e.command(Command::Set, v));
    const REMOVE: Handler<Self> = Handler::write("remove", |e, v, _| e.command(Command::Remove, v));
    const CTRL: Handler<Self> = Handler::write("ctrl", |e, v, _| e.edit(|e| e.ctrl(v)));
    const FLUSH: Handler<Self> = Handler::button("flush", |e, _, _| {
        e.edit(|e| {
            e.table.flush();
            Ok(())
        })
    });

    // Click's handlers in Click's order (listed newest first); rclick's
    // own (`drops`, `memory`, and `flush` where Click lacks it) come first
    // in the table, so that they are listed last, just before the standard
    // handlers, and Click's keep their places.
    const DYNAMIC_HANDLERS: &'static [Handler<Self>] = &[
        Self::DROPS,
        Self::MEMORY,
        Self::ADD,
        Self::SET,
        Self::REMOVE,
        Self::CTRL,
        Handler::flagged(hflags::EXPENSIVE, Self::TABLE),
        Self::LOOKUP,
        Self::FLUSH,
    ];
    const DYNAMIC_NO_FLUSH_HANDLERS: &'static [Handler<Self>] = &[
        Self::DROPS,
        Self::MEMORY,
        Self::FLUSH,
        Self::ADD,
        Self::SET,
        Self::REMOVE,
        Self::CTRL,
        Handler::flagged(hflags::EXPENSIVE, Self::TABLE),
        Self::LOOKUP,
    ];
    const STATIC_HANDLERS: &'static [Handler<Self>] =
        &[Self::DROPS, Self::MEMORY, Self::TABLE, Self::LOOKUP];

    const HANDLERS: &'static [Handler<Self>] = match (C::DYNAMIC, C::CLICK_FLUSH) {
        (false, _) => Self::STATIC_HANDLERS,
        (true, true) => Self::DYNAMIC_HANDLERS,
        (true, false) => Self::DYNAMIC_NO_FLUSH_HANDLERS,
    };

    fn lookup_handler(&self, param: Option<&str>) -> Result<String, String> {
        let a = param
            .map(uncomment)
            .and_then(|p| parse_ipv4(p.trim()).ok())
            .ok_or_else(|| "expected IP address".to_string())?;
        let hop = self.table.lookup(u32::from(a));
        Ok(if hop.gw != 0 {
            format!("{} {}", hop.port, Ipv4Addr::from(hop.gw))
        } else {
            hop.port.to_string()
        })
    }

    fn memory_handler(&self) -> String {
        let m = self.table.memory();
        format!(
            "routes {}\nnexthops {}\nlookup_bytes {}\ncontrol_bytes {}\nstructure {}\n",
            self.table.len(),
            self.table.hop_count(),
            m.lookup,
            m.control,
            self.table.lpm().describe()
        )
    }

    /// A write handler's change: counted as a change whether it succeeds
    /// or not, since a failed `ctrl` may have touched the table.
    fn edit(&mut self, f: impl FnOnce(&mut Self) -> Result<(), String>) -> Result<(), String> {
        let r = f(self);
        self.changed();
        r
    }

    /// The `add`, `set` and `remove` handlers.
    fn command(&mut self, cmd: Command, text: &str) -> Result<(), String> {
        self.edit(|e| e.run(cmd, text).map(drop))
    }

    /// One add/set/remove command; returns how to undo it.
    fn run(&mut self, cmd: Command, text: &str) -> Result<Undo, String> {
        let remove = cmd == Command::Remove;
        let r = parse_route(text, remove, &|_| None).ok_or_else(|| {
            if remove {
                "expected 'ADDR/MASK [GATEWAY OUTPUT]'".to_string()
            } else {
                "expected 'ADDR/MASK [GATEWAY] OUTPUT'".to_string()
            }
        })?;
        if r.port < if remove { -1 } else { 0 } || (r.port >= 0 && r.port as usize >= self.noutputs)
        {
            return Err("bad OUTPUT".into());
        }
        match cmd {
            Command::Add => self.table.add(r, false).map(|_| Undo::Remove(r)),
            Command::Set => self.table.add(r, true).map(|old| match old {
                Some(old) => Undo::Restore(old),
                None => Undo::Remove(r),
            }),
            Command::Remove => self.table.remove(&r).map(Undo::Readd),
        }
        .map_err(|e| e.to_string())
    }

    /// Click's `ctrl`: `add`/`set`/`remove` lines applied atomically.
    fn ctrl(&mut self, text: &str) -> Result<(), String> {
        let text = uncomment(text);
        let mut undo = Vec::new();
        let mut result = Ok(());
        for line in text.lines() {
            let line = line.trim_start();
            let (cmd, rest) = line
                .split_once(|c: char| c.is_ascii_whitespace())
                .unwrap_or((line, ""));
            let cmd = match cmd {
                "" => continue,
                "add" => Command::Add,
                "set" => Command::Set,
                "remove" => Command::Remove,
                other => {
                    result = Err(format!("bad command '{other}'"));
                    break;
                }
            };
            match self.run(cmd, rest) {
                Ok(u) => undo.push(u),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            for u in undo.into_iter().rev() {
                // Undoing frees what the command took, so it cannot fail.
                let _ = match u {
                    Undo::Remove(r) => self.table.remove(&Route { port: -1, ..r }).map(drop),
                    Undo::Restore(r) => self.table.add(r, true).map(drop),
                    Undo::Readd(r) => self.table.add(r, false).map(drop),
                };
            }
        }
        result
    }

    /// Counts a packet without a route and complains about the first few.
    #[cold]
    fn no_route(&mut self, dst: Ipv4Addr, ctx: &mut Ctx) {
        self.drops += 1;
        if self.complaints >= MAX_COMPLAINTS || C::NO_ROUTE == NoRouteMessage::Silent {
            return;
        }
        self.complaints += 1;
        let msg = match C::NO_ROUTE {
            // Click prints the address word as stored on a little-endian
            // host.
            NoRouteMessage::Linear => format!(
                "{}: no gw for {:x}",
                C::CLASS,
                u32::from_le_bytes(dst.octets())
            ),
            _ => format!("IPRouteTable: no route for {dst}"),
        };
        ctx.chatter(&msg);
    }
}

impl<C: TableClass> RouteLookup<C> {
    /// Routes a packet in place by its destination annotation, which
    /// becomes the route's gateway when it has one: its output, or `None`
    /// (counted and reported) when no route matches.
    #[inline(always)]
    fn route(&mut self, p: &mut Packet, ctx: &mut Ctx) -> Option<usize> {
        let dst = p.dst_ip_anno();
        let hop = match self.last {
            Some((a, h)) if a == dst => h,
            _ => {
                let h = self.table.lookup(u32::from(dst));
                self.last = Some((dst, h));
                h
            }
        };
        if hop.port < 0 {
            self.no_route(dst, ctx);
            return None;
        }
        if hop.gw != 0 {
            p.set_dst_ip_anno(Ipv4Addr::from(hop.gw));
        }
        Some(hop.port as usize)
    }
}

impl<C: TableClass> RouteLookup<C> {
    /// The dispatch kind's push, out of line so that the one-packet path
    /// in `push` saves no registers for it.
    #[inline(never)]
    fn push_batch(&mut self, batch: Batch, ctx: &mut Ctx) {
        rclick_core::element::kinds::dispatch_push(batch, ctx, |p, ctx| self.dispatch(p, ctx))
    }
}

impl<C: TableClass> Dispatch for RouteLookup<C> {
    #[inline]
    fn dispatch(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<(usize, Packet)> {
        let port = self.route(&mut p, ctx)?;
        Some((port, p))
    }
}

impl<C: TableClass> Element for RouteLookup<C> {
    /// A batch of one packet (BURST 1) is routed in place and moves on as
    /// it is, without the per-batch output bookkeeping of
    /// [`dispatch_push`](rclick_core::element::kinds::dispatch_push).
    fn push(&mut self, _port: usize, mut batch: Batch, ctx: &mut Ctx) {
        if let [p] = batch.packets_mut() {
            if let Some(port) = self.route(p, ctx) {
                ctx.emit_batch(port, batch);
            }
            return;
        }
        self.push_batch(batch, ctx);
    }
    rclick_core::handlers!(Self::HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.noutputs = ctx.noutputs();
        let names = |n: &str| ctx.lookup_ipv4(n);
        let mut errors = Errors::new();
        let mut dups = 0;
        for (i, arg) in split_args(conf).iter().enumerate() {
            let arg = resolve_suffixed_prefix(arg, ctx);
            let Some(r) = parse_route(&arg, false, &names) else {
                errors.push(format!(
                    "argument {} should be 'ADDR/MASK [GATEWAY] OUTPUT'",
                    i + 1
                ));
                continue;
            };
            if r.port < 0 || r.port as usize >= self.noutputs {
                errors.push(format!("argument {} bad OUTPUT", i + 1));
                continue;
            }
            match self.table.add(r, false) {
                Ok(_) => {}
                Err(TableError::Exists(_)) => dups += 1,
                Err(e) => errors.push(format!("argument {}: {e}", i + 1)),
            }
        }
        if dups > 0 {
            // Click says "N routes replaced by later versions", yet routes
            // as the first one listed, as rclick does: the words say what
            // happens.
            ctx.warning(format_args!(
                "{dups} duplicate {} ignored (the first route for a prefix is kept)",
                if dups > 1 { "routes" } else { "route" }
            ));
        }
        errors.into_result()
    }

    /// Hot swap, for dynamic tables: takes the old element's table (with
    /// every change made through the handlers) in place of the configured
    /// routes. Routes to outputs this element lacks are dropped with a
    /// message.
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        if !C::DYNAMIC {
            return false;
        }
        let Some(old) = old.as_any_mut().downcast_mut::<Self>() else {
            return false;
        };
        std::mem::swap(&mut self.table, &mut old.table);
        self.changed();
        self.drops = old.drops;
        let bad: Vec<Route> = self
            .table
            .routes()
            .filter(|r| r.port as usize >= self.noutputs)
            .collect();
        for r in &bad {
            let _ = self.table.remove(r);
        }
        if !bad.is_empty() {
            ctx.chatter(&format!(
                "{}: hot swap dropped {} route(s) to missing outputs",
                ctx.element_name(),
                bad.len()
            ));
        }
        true
    }
}

/// The change counter of a route-lookup element (RadixIPLookup,
/// DirectIPLookup, LinearIPLookup, StaticIPLookup, LookupIPRoute): an
/// element that caches what the table's `lookup` handler answers (Socket's
/// ALLOW and DENY) may keep its answers while the counter stays the same.
/// `None` for any other element.
pub fn changes_of(e: &dyn Element) -> Option<Arc<AtomicU64>> {
    use crate::ip::{
        directiplookup::DirectIPLookup, lineariplookup::LinearIPLookup,
        lookupiproute::LookupIPRoute, radixiplookup::RadixIPLookup, staticiplookup::StaticIPLookup,
    };
    let any = e.as_any();
    any.downcast_ref::<RadixIPLookup>()
        .map(|t| t.changes())
        .or_else(|| any.downcast_ref::<DirectIPLookup>().map(|t| t.changes()))
        .or_else(|| any.downcast_ref::<LinearIPLookup>().map(|t| t.changes()))
        .or_else(|| any.downcast_ref::<StaticIPLookup>().map(|t| t.changes()))
        .or_else(|| any.downcast_ref::<LookupIPRoute>().map(|t| t.changes()))
}
