//! Shared machinery of the IPv6 route-lookup elements (LookupIP6Route,
//! RadixIP6Lookup): route syntax, the route store, next-hop interning, the
//! longest-prefix-match trie, and [`RouteLookup6`], the element both
//! classes are (dispatch kind, with `table`, `lookup`, `add`, `set`,
//! `remove`, `ctrl` and `flush` handlers).
//!
//! [`Trie6`] is the IPv6 form of the IPv4 tables' stride trie
//! (`ip::routetable::StrideTrie`): a 65536-entry root indexed by the top 16
//! address bits, then nodes of 16 entries consuming 4 bits each, made only
//! under prefixes longer than /16. Prefixes are expanded into every entry
//! they cover, so a lookup reads one entry per level: two for a /20, nine
//! for a /48, at most 29 for a /128. Each 32-bit entry is a child
//! reference or a leaf holding a next-hop id and the length of the prefix
//! that set it; the lengths let an update skip more specific entries and
//! let a removal restore the covering route. Nodes whose entries become
//! identical are folded back into their parent and recycled. A full IPv6
//! Internet table (about 200,000 prefixes, most of them /48 to /32) takes
//! under 100 MB (67 MB for 200,000 random prefixes of those lengths;
//! real tables, whose prefixes cluster, take less) and loads in a fifth of
//! a second.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv6Addr;

use rclick_core::conf::{parse_i32, split_args, split_words, uncomment, Ipv6Prefix};
use rclick_core::element::Dispatch;
use rclick_core::{ConfigResult, Ctx, Element, Errors, Handler, InitCtx, Packet};

use super::common::{fmt_ip6, fmt_prefix6, parse_ipv6_prefix_arg};

/// The mask of a prefix length (0..=128).
#[inline]
pub fn mask6(len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len.min(128))
    }
}

/// One route: destinations matching `addr/len` leave on `port`, with the
/// destination annotation set to `gw` unless it is `::`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route6 {
    /// Network address (host bits cleared).
    pub addr: u128,
    /// Prefix length.
    pub len: u8,
    /// Gateway; 0 for none.
    pub gw: u128,
    /// Output port; -1 in a `remove` request means any.
    pub port: i32,
}

impl Route6 {
    /// Click's `table` line: `PREFIX\tGW\tOUT`.
    pub fn unparse(&self) -> String {
        format!(
            "{}\t{}\t{}",
            fmt_prefix6(
                Ipv6Addr::from(self.addr),
                Ipv6Addr::from(mask6(self.len.into()))
            ),
            fmt_ip6(Ipv6Addr::from(self.gw)),
            self.port
        )
    }
}

/// Parses `ADDR/MASK [GW] OUT` (or, with `remove`, `ADDR/MASK [GW OUT]`);
/// masks must be contiguous (as Click's IP6PrefixArg requires).
pub fn parse_route6(text: &str, remove: bool, ctx: Option<&InitCtx>) -> Option<Route6> {
    let words = split_words(&uncomment(text));
    let prefix = |w: &str| -> Option<Ipv6Prefix> {
        match ctx {
            Some(c) => parse_ipv6_prefix_arg(w, c).ok(),
            None => rclick_core::conf::parse_ipv6_addr_or_prefix(w).ok(),
        }
    };
    let addr = |w: &str| -> Option<u128> {
        let a = match ctx {
            Some(c) => super::common::parse_ipv6_arg(w, c).ok()?,
            None => rclick_core::conf::parse_ipv6(w).ok()?,
        };
        Some(u128::from(a))
    };
    let (p, gw, port) = match words.as_slice() {
        [p] if remove => (prefix(p)?, 0, -1),
        [p, o] => (prefix(p)?, 0, parse_i32(o).ok()?),
        [p, g, o] => (prefix(p)?, addr(g)?, parse_i32(o).ok()?),
        _ => return None,
    };
    let len = p.prefix_len()?;
    Some(Route6 {
        addr: u128::from(p.addr) & mask6(len.into()),
        len,
        gw,
        port,
    })
}

// ---------------------------------------------------------------- the trie

const CHILD: u32 = 1 << 31;
const PLEN_SHIFT: u32 = 23;
const HOP_MASK: u32 = (1 << PLEN_SHIFT) - 1;
/// Most next hops a table can hold (hop ids are 23 bits; 0 is no route).
pub const MAX_HOPS: usize = HOP_MASK as usize;
const ROOT: u32 = 16;
const STRIDE: u32 = 4;
const NODE: usize = 1 << STRIDE;

#[inline]
fn leaf(plen: u32, hop: u32) -> u32 {
    (plen << PLEN_SHIFT) | hop
}

#[inline]
fn plen_of(e: u32) -> u32 {
    (e >> PLEN_SHIFT) & 0xff
}

#[derive(Clone, Copy)]
enum Where {
    Root,
    Node(u32),
}

/// The IPv6 longest-prefix-match trie (see the module docs).
pub struct Trie6 {
    root: Vec<u32>,
    nodes: Vec<u32>,
    free: Vec<u32>,
}

impl Default for Trie6 {
    fn default() -> Self {
        Trie6 {
            root: vec![0; 1 << ROOT],
            nodes: Vec::new(),
            free: Vec::new(),
        }
    }
}

/// The trie could not allocate a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoMemory;

impl Trie6 {
    #[inline]
    fn get(&self, w: Where, i: usize) -> u32 {
        match w {
            Where::Root => self.root[i],
            Where::Node(n) => self.nodes[n as usize * NODE + i],
        }
    }

    #[inline]
    fn set(&mut self, w: Where, i: usize, e: u32) {
        match w {
            Where::Root => self.root[i] = e,
            Where::Node(n) => self.nodes[n as usize * NODE + i] = e,
        }
    }

    fn alloc_node(&mut self, fill: u32) -> Result<u32, NoMemory> {
        if let Some(n) = self.free.pop() {
            let b = n as usize * NODE;
            self.nodes[b..b + NODE].fill(fill);
            return Ok(n);
        }
        let n = self.nodes.len() / NODE;
        if n >= CHILD as usize {
            return Err(NoMemory);
        }
        self.nodes.try_reserve(NODE).map_err(|_| NoMemory)?;
        self.nodes.resize(self.nodes.len() + NODE, fill);
        Ok(n as u32)
    }

    /// Folds node `n` (index starting after `depth` bits) into one leaf
    /// when all its entries are the same leaf set by a prefix no longer
    /// than `depth`.
    fn try_fold(&mut self, n: u32, depth: u32) -> Option<u32> {
        let b = n as usize * NODE;
        let node = &self.nodes[b..b + NODE];
        let first = node[0];
        if first & CHILD != 0 || plen_of(first) > depth || node.iter().any(|&e| e != first) {
            return None;
        }
        self.free.push(n);
        Some(first)
    }

    /// Applies `f` to every leaf under entry `e` (in a table ending
    /// `depth` bits in); returns the new entry.
    fn apply(&mut self, e: u32, depth: u32, f: &dyn Fn(u32) -> u32) -> u32 {
        if e & CHILD == 0 {
            return f(e);
        }
        let n = e & !CHILD;
        for i in 0..NODE {
            let c = self.get(Where::Node(n), i);
            let c2 = self.apply(c, depth + STRIDE, f);
            if c2 != c {
                self.set(Where::Node(n), i, c2);
            }
        }
        self.try_fold(n, depth).unwrap_or(e)
    }

    /// Applies `f` to every leaf covered by `addr/len` below table `w`,
    /// whose index covers bits `base..base + width`.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &mut self,
        w: Where,
        base: u32,
        width: u32,
        addr: u128,
        len: u32,
        create: bool,
        f: &dyn Fn(u32) -> u32,
    ) -> Result<(), NoMemory> {
        let end = base + width;
        let idx = ((addr << base) >> (128 - width)) as usize;
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

    /// Points `addr/len` (host bits clear) at `hop`, under any longer
    /// prefixes already present.
    pub fn insert(&mut self, addr: u128, len: u32, hop: u32) -> Result<(), NoMemory> {
        let val = leaf(len, hop);
        let f = move |e: u32| if plen_of(e) <= len { val } else { e };
        self.change(Where::Root, 0, ROOT, addr, len, true, &f)
    }

    /// Removes `addr/len`, restoring `cover` (`(hop, len)` of the longest
    /// shorter prefix containing it; `(0, 0)` for none).
    pub fn remove(&mut self, addr: u128, len: u32, cover: (u32, u32)) {
        let val = leaf(cover.1, cover.0);
        let f = move |e: u32| if plen_of(e) == len { val } else { e };
        let _ = self.change(Where::Root, 0, ROOT, addr, len, false, &f);
    }

    /// The hop id of the longest prefix matching `addr`; 0 for none.
    #[inline]
    pub fn lookup(&self, addr: u128) -> u32 {
        let mut e = self.root[(addr >> (128 - ROOT)) as usize];
        let mut shift = 128 - ROOT;
        while e & CHILD != 0 {
            shift = shift.wrapping_sub(STRIDE) & 127;
            let i = ((e & !CHILD) as usize) << STRIDE | ((addr >> shift) as usize & (NODE - 1));
            e = match self.nodes.get(i) {
                Some(&e) => e,
                None => return 0,
            };
        }
        e & HOP_MASK
    }

    /// Empties the trie.
    pub fn clear(&mut self) {
        self.root.fill(0);
        self.nodes = Vec::new();
        self.free = Vec::new();
    }

    /// Live nodes.
    pub fn nodes(&self) -> usize {
        self.nodes.len() / NODE - self.free.len()
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        (self.root.capacity() + self.nodes.capacity() + self.free.capacity()) * 4
    }
}

// --------------------------------------------------------------- the table

/// A next hop: output port and gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop6 {
    /// Output port; -1 for no route.
    pub port: i32,
    /// Gateway; 0 for none.
    pub gw: u128,
}

const NO_HOP: Hop6 = Hop6 { port: -1, gw: 0 };

/// Routes, next hops and the trie.
pub struct RouteTable6 {
    slots: Vec<Option<Route6>>,
    /// Free slots; the lowest is reused first, as in Click.
    free_slots: std::collections::BTreeSet<usize>,
    index: HashMap<(u128, u8), usize>,
    hops: Vec<(Hop6, u32)>,
    hop_ids: HashMap<(i32, u128), u32>,
    free_hops: Vec<u32>,
    trie: Trie6,
    count: usize,
}

impl Default for RouteTable6 {
    fn default() -> Self {
        RouteTable6 {
            slots: Vec::new(),
            free_slots: Default::default(),
            index: HashMap::new(),
            hops: vec![(NO_HOP, 0)],
            hop_ids: HashMap::new(),
            free_hops: Vec::new(),
            trie: Trie6::default(),
            count: 0,
        }
    }
}

impl RouteTable6 {
    /// Number of routes.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no routes.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The next hop for `addr` (port -1: no route).
    #[inline]
    pub fn lookup(&self, addr: u128) -> Hop6 {
        let id = self.trie.lookup(addr) as usize;
        self.hops.get(id).map_or(NO_HOP, |h| h.0)
    }

    fn acquire(&mut self, port: i32, gw: u128) -> Result<u32, String> {
        if let Some(&id) = self.hop_ids.get(&(port, gw)) {
            self.hops[id as usize].1 += 1;
            return Ok(id);
        }
        let id = match self.free_hops.pop() {
            Some(id) => id,
            None if self.hops.len() < MAX_HOPS => {
                self.hops.push((NO_HOP, 0));
                (self.hops.len() - 1) as u32
            }
            None => return Err("too many next hops".into()),
        };
        self.hops[id as usize] = (Hop6 { port, gw }, 1);
        self.hop_ids.insert((port, gw), id);
        Ok(id)
    }

    fn release(&mut self, id: u32) {
        let h = &mut self.hops[id as usize];
        h.1 -= 1;
        if h.1 == 0 {
            let k = (h.0.port, h.0.gw);
            h.0 = NO_HOP;
            self.hop_ids.remove(&k);
            self.free_hops.push(id);
        }
    }

    fn hop_id(&self, r: &Route6) -> u32 {
        self.hop_ids.get(&(r.port, r.gw)).copied().unwrap_or(0)
    }

    /// The route for exactly `addr/len`.
    pub fn get(&self, addr: u128, len: u8) -> Option<Route6> {
        self.index.get(&(addr, len)).and_then(|&s| self.slots[s])
    }

    /// Adds `r`; an existing route for the prefix is replaced when
    /// `replace`, else it is an error. Returns the replaced route.
    pub fn add(&mut self, r: Route6, replace: bool) -> Result<Option<Route6>, String> {
        let key = (r.addr, r.len);
        if let Some(&slot) = self.index.get(&key) {
            let old = self.slots[slot].unwrap_or(r);
            if !replace {
                return Err(format!(
                    "conflict with existing route '{}'",
                    old.unparse().replace('\t', " ")
                ));
            }
            let id = self.acquire(r.port, r.gw)?;
            if let Err(e) = self.trie.insert(r.addr, r.len.into(), id) {
                self.release(id);
                return Err(format!("{e:?}"));
            }
            let old_id = self.hop_id(&old);
            self.release(old_id);
            self.slots[slot] = Some(r);
            return Ok(Some(old));
        }
        let id = self.acquire(r.port, r.gw)?;
        if self.trie.insert(r.addr, r.len.into(), id).is_err() {
            self.release(id);
            return Err("out of memory".into());
        }
        let slot = match self.free_slots.pop_first() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.slots[slot] = Some(r);
        self.index.insert(key, slot);
        self.count += 1;
        Ok(None)
    }

    /// Removes the route for `r`'s prefix (and, when `r.port` is not -1,
    /// with `r`'s gateway and port). Returns it.
    pub fn remove(&mut self, r: &Route6) -> Result<Route6, String> {
        let key = (r.addr, r.len);
        let Some(&slot) = self.index.get(&key) else {
            return Err("no such route".into());
        };
        let Some(old) = self.slots[slot] else {
            return Err("no such route".into());
        };
        if r.port >= 0 && (old.port != r.port || old.gw != r.gw) {
            return Err("no such route".into());
        }
        let cover = (0..r.len)
            .rev()
            .find_map(|l| {
                let a = r.addr & mask6(l.into());
                self.get(a, l).map(|c| (self.hop_id(&c), l as u32))
            })
            .unwrap_or((0, 0));
        self.trie.remove(r.addr, r.len.into(), cover);
        let id = self.hop_id(&old);
        self.release(id);
        self.slots[slot] = None;
        self.free_slots.insert(slot);
        self.index.remove(&key);
        self.count -= 1;
        Ok(old)
    }

    /// Removes every route.
    pub fn flush(&mut self) {
        *self = RouteTable6::default();
    }

    /// The routes in table order.
    pub fn routes(&self) -> impl Iterator<Item = Route6> + '_ {
        self.slots.iter().flatten().copied()
    }

    /// Click's `table` text: `# Active routes` and one line per route;
    /// empty without routes.
    pub fn dump(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut s = String::from("# Active routes\n");
        for r in self.routes() {
            s.push_str(&r.unparse());
            s.push('\n');
        }
        s
    }

    /// The trie.
    pub fn trie(&self) -> &Trie6 {
        &self.trie
    }
}

// ------------------------------------------------------------- the element

/// What distinguishes one IPv6 route-lookup class from another.
pub trait Class6: Send + 'static {
    /// The class name.
    const NAME: &'static str;
    /// `add` replaces an existing route for the prefix and `remove` of a
    /// missing route succeeds (Click's LookupIP6Route); otherwise `add`
    /// refuses and `set` replaces (the IPv4 tables' rules).
    const CLICK_RULES: bool;
}

enum Undo {
    Remove(Route6),
    Restore(Route6),
    Readd(Route6),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Command {
    Add,
    Set,
    Remove,
}

/// An IPv6 route-lookup element.
pub struct RouteLookup6<C: Class6> {
    table: RouteTable6,
    noutputs: usize,
    drops: u64,
    last: Option<(u128, Hop6)>,
    _class: std::marker::PhantomData<C>,
}

impl<C: Class6> Default for RouteLookup6<C> {
    fn default() -> Self {
        RouteLookup6 {
            table: RouteTable6::default(),
            noutputs: 0,
            drops: 0,
            last: None,
            _class: std::marker::PhantomData,
        }
    }
}

impl<C: Class6> RouteLookup6<C> {
    /// The route table.
    pub fn table(&self) -> &RouteTable6 {
        &self.table
    }

    const TABLE: Handler<Self> = Handler::read("table", |e, _| e.table.dump());
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

    /// Click's LookupIP6Route adds `add`, `remove`, `ctrl`, `table` (listed
    /// newest first); rclick's own come first so that they list last.
    const HANDLERS: &'static [Handler<Self>] = &[
        Self::DROPS,
        Self::MEMORY,
        Self::FLUSH,
        Self::SET,
        Self::LOOKUP,
        Self::ADD,
        Self::REMOVE,
        Self::CTRL,
        Self::TABLE,
    ];

    fn lookup_handler(&self, param: Option<&str>) -> Result<String, String> {
        let a = param
            .map(uncomment)
            .and_then(|p| rclick_core::conf::parse_ipv6(p.trim()).ok())
            .ok_or_else(|| "expected IPv6 address".to_string())?;
        let hop = self.table.lookup(u128::from(a));
        Ok(if hop.gw != 0 {
            format!("{} {}", hop.port, fmt_ip6(Ipv6Addr::from(hop.gw)))
        } else {
            hop.port.to_string()
        })
    }

    fn memory_handler(&self) -> String {
        format!(
            "routes {}\nnexthops {}\nlookup_bytes {}\nstructure 16-bit root, {} nodes of 16 entries\n",
            self.table.len(),
            self.table.hop_ids.len(),
            self.table.trie().memory(),
            self.table.trie().nodes()
        )
    }

    fn edit(&mut self, f: impl FnOnce(&mut Self) -> Result<(), String>) -> Result<(), String> {
        let r = f(self);
        self.last = None;
        r
    }

    fn command(&mut self, cmd: Command, text: &str) -> Result<(), String> {
        self.edit(|e| e.run(cmd, text).map(drop))
    }

    fn run(&mut self, cmd: Command, text: &str) -> Result<Option<Undo>, String> {
        let remove = cmd == Command::Remove;
        let r = parse_route6(text, remove, None).ok_or_else(|| {
            if remove {
                "expected 'ADDR/MASK [GATEWAY OUTPUT]'".to_string()
            } else {
                "expected 'ADDR/MASK [GATEWAY] OUTPUT'".to_string()
            }
        })?;
        if r.port < if remove { -1 } else { 0 } || (r.port >= 0 && r.port as usize >= self.noutputs)
        {
            return Err("port number out of range".into());
        }
        let replace = cmd == Command::Set || (cmd == Command::Add && C::CLICK_RULES);
        match cmd {
            Command::Add | Command::Set => self.table.add(r, replace).map(|old| {
                Some(match old {
                    Some(old) => Undo::Restore(old),
                    None => Undo::Remove(r),
                })
            }),
            Command::Remove => match self.table.remove(&r) {
                Ok(old) => Ok(Some(Undo::Readd(old))),
                Err(_) if C::CLICK_RULES => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    /// `ctrl`: `add`/`set`/`remove` lines applied as one operation.
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
                Ok(u) => undo.extend(u),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            for u in undo.into_iter().rev() {
                let _ = match u {
                    Undo::Remove(r) => self.table.remove(&Route6 { port: -1, ..r }).map(drop),
                    Undo::Restore(r) => self.table.add(r, true).map(drop),
                    Undo::Readd(r) => self.table.add(r, false).map(drop),
                };
            }
        }
        result
    }
}

impl<C: Class6> Dispatch for RouteLookup6<C> {
    /// Routes a packet by its destination IPv6 annotation, which becomes
    /// the route's gateway when it has one.
    #[inline]
    fn dispatch(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<(usize, Packet)> {
        let dst = u128::from(p.dst_ip6_anno());
        let hop = match self.last {
            Some((a, h)) if a == dst => h,
            _ => {
                let h = self.table.lookup(dst);
                self.last = Some((dst, h));
                h
            }
        };
        if hop.port < 0 {
            self.drops += 1;
            return None;
        }
        if hop.gw != 0 {
            p.set_dst_ip6_anno(Ipv6Addr::from(hop.gw));
        }
        Some((hop.port as usize, p))
    }
}

impl<C: Class6> Element for RouteLookup6<C> {
    rclick_core::element_kind!(dispatch);
    rclick_core::handlers!(Self::HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.noutputs = ctx.noutputs();
        let mut errors = Errors::new();
        let mut maxout = -1;
        let mut routes = Vec::new();
        for (i, arg) in split_args(conf).iter().enumerate() {
            match parse_route6(arg, false, Some(ctx)) {
                Some(r) if r.port >= 0 => {
                    maxout = maxout.max(r.port);
                    routes.push(r);
                }
                _ => errors.push(format!(
                    "argument {} should be DADDR/MASK [GW] OUTPUT",
                    i + 1
                )),
            }
        }
        errors.into_result()?;
        if maxout < 0 {
            ctx.warning("no routes");
        } else if maxout as usize >= self.noutputs {
            return Err(format!("need {} or more output ports", maxout + 1).into());
        }
        for r in routes {
            // Click's table keeps the last route given for a prefix.
            if let Err(e) = self.table.add(r, true) {
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Hot swap: takes the old element's table (with every change made
    /// through the handlers), dropping routes to missing outputs.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<Self>() else {
            return false;
        };
        std::mem::swap(&mut self.table, &mut old.table);
        self.last = None;
        self.drops = old.drops;
        let bad: Vec<Route6> = self
            .table
            .routes()
            .filter(|r| r.port as usize >= self.noutputs)
            .collect();
        for r in &bad {
            let _ = self.table.remove(r);
        }
        true
    }
}

/// A route list in `table` form, for tests and tools.
pub fn dump_routes(routes: &[Route6]) -> String {
    let mut s = String::new();
    for r in routes {
        let _ = writeln!(s, "{}", r.unparse());
    }
    s
}
