//! The filter table of a gate (not an element class): the Router Plugins
//! DAG of per-field best matches over six-tuple filters.
//!
//! One level per field, in the order of the most-specific ranking
//! (`sixtuple.rs`): source prefix, destination prefix, protocol, source
//! port range, destination port range, incoming interface. A node holds
//! the distinct values its filters have in its field, each leading to the
//! node built from those filters. A lookup tries a node's matching values
//! from the most specific (the longest prefix, the given protocol, the
//! narrowest range, the given interface) to the least, descending into
//! each and backtracking to the next when nothing below matches; because
//! the ranking is field by field, the first complete match found under the
//! most specific value is the answer, except among port ranges of equal
//! width, which are all tried and compared. Address levels with more than
//! a few values look each prefix length up in a hash map (one probe per
//! distinct length) instead of scanning.
//!
//! Unlike the paper's set-pruning DAG, filters are not copied into the
//! more specific branches (set pruning's memory grows with the product of
//! the fields' overlaps, which on ClassBench firewall sets explodes); the
//! lookup backtracks instead. The table is rebuilt from the filter list on
//! every change (a handler write, never on the packet path); building 10k
//! ClassBench filters takes milliseconds. Benchmarks: docs/benchmarks.md.

use std::collections::HashMap;

use super::sixtuple::{beats, mask, Key, Spec};
use crate::ip::ipcommon::AddrHashBuilder;

/// A DAG over a list of filters; lookups return the index of the winning
/// filter in that list (equal filters: the lower index wins).
pub struct BestMatch {
    filters: Vec<Spec>,
    root: Option<Src>,
}

type Leaf = IifNode;
type Dp = RangeNode<Leaf, false>;
type Sp = RangeNode<Dp, true>;
type Pr = ProtoNode<Sp>;
type Dst = AddrNode<Pr, false>;
type Src = AddrNode<Dst, true>;

trait Level: Sized {
    fn build(filters: &[Spec], ids: Vec<u32>) -> Self;
    fn best(&self, k: &Key, filters: &[Spec]) -> Option<u32>;
}

/// Addresses: values sorted by prefix length, longest first; a hash map
/// per length when there are many.
struct AddrNode<C, const SRC: bool> {
    entries: Vec<(u32, u8, C)>,
    /// Distinct lengths, longest first, and (value, length) -> entry.
    lens: Vec<u8>,
    map: Option<HashMap<(u32, u8), u32, AddrHashBuilder>>,
}

const SCAN_LIMIT: usize = 6;

impl<C: Level, const SRC: bool> Level for AddrNode<C, SRC> {
    fn build(filters: &[Spec], ids: Vec<u32>) -> Self {
        let mut groups: HashMap<(u32, u8), Vec<u32>> = HashMap::new();
        for id in ids {
            let f = &filters[id as usize];
            let key = if SRC {
                (f.src, f.src_len)
            } else {
                (f.dst, f.dst_len)
            };
            groups.entry(key).or_default().push(id);
        }
        let mut keys: Vec<(u32, u8)> = groups.keys().copied().collect();
        keys.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let entries: Vec<(u32, u8, C)> = keys
            .iter()
            .map(|&(v, l)| {
                let ids = groups.remove(&(v, l)).unwrap_or_default();
                (v, l, C::build(filters, ids))
            })
            .collect();
        let mut lens: Vec<u8> = entries.iter().map(|e| e.1).collect();
        lens.dedup();
        let map = (entries.len() > SCAN_LIMIT).then(|| {
            let mut m =
                HashMap::with_capacity_and_hasher(entries.len(), AddrHashBuilder::default());
            for (i, e) in entries.iter().enumerate() {
                m.insert((e.0, e.1), i as u32);
            }
            m
        });
        AddrNode { entries, lens, map }
    }

    #[inline]
    fn best(&self, k: &Key, filters: &[Spec]) -> Option<u32> {
        let a = if SRC { k.src } else { k.dst };
        match &self.map {
            None => {
                for (v, l, c) in &self.entries {
                    if (a ^ v) & mask(*l) == 0 {
                        if let Some(r) = c.best(k, filters) {
                            return Some(r);
                        }
                    }
                }
            }
            Some(m) => {
                for &l in &self.lens {
                    if let Some(&i) = m.get(&(a & mask(l), l)) {
                        if let Some(r) = self.entries[i as usize].2.best(k, filters) {
                            return Some(r);
                        }
                    }
                }
            }
        }
        None
    }
}

/// Protocol: the exact value first, then the wildcard.
struct ProtoNode<C> {
    exact: Vec<(u8, C)>,
    wild: Option<C>,
}

impl<C: Level> Level for ProtoNode<C> {
    fn build(filters: &[Spec], ids: Vec<u32>) -> Self {
        let mut groups: Vec<(Option<u8>, Vec<u32>)> = Vec::new();
        for id in ids {
            let p = filters[id as usize].proto;
            match groups.iter_mut().find(|g| g.0 == p) {
                Some(g) => g.1.push(id),
                None => groups.push((p, vec![id])),
            }
        }
        let mut exact = Vec::new();
        let mut wild = None;
        for (p, ids) in groups {
            let c = C::build(filters, ids);
            match p {
                Some(p) => exact.push((p, c)),
                None => wild = Some(c),
            }
        }
        exact.sort_by_key(|e| e.0);
        ProtoNode { exact, wild }
    }

    #[inline]
    fn best(&self, k: &Key, filters: &[Spec]) -> Option<u32> {
        if let Ok(i) = self.exact.binary_search_by_key(&k.proto, |e| e.0) {
            if let Some(r) = self.exact[i].1.best(k, filters) {
                return Some(r);
            }
        }
        self.wild.as_ref().and_then(|c| c.best(k, filters))
    }
}

/// Port ranges, narrowest first; ranges of equal width are all tried and
/// their answers compared.
struct RangeNode<C, const SPORT: bool> {
    entries: Vec<(u16, u16, C)>,
}

impl<C: Level, const SPORT: bool> Level for RangeNode<C, SPORT> {
    fn build(filters: &[Spec], ids: Vec<u32>) -> Self {
        let mut groups: Vec<((u16, u16), Vec<u32>)> = Vec::new();
        for id in ids {
            let f = &filters[id as usize];
            let r = if SPORT { f.sport } else { f.dport };
            match groups.iter_mut().find(|g| g.0 == r) {
                Some(g) => g.1.push(id),
                None => groups.push((r, vec![id])),
            }
        }
        groups.sort_by_key(|g| (g.0 .1 - g.0 .0, g.0 .0));
        RangeNode {
            entries: groups
                .into_iter()
                .map(|((lo, hi), ids)| (lo, hi, C::build(filters, ids)))
                .collect(),
        }
    }

    #[inline]
    fn best(&self, k: &Key, filters: &[Spec]) -> Option<u32> {
        let port = if SPORT { k.sport } else { k.dport };
        let mut best: Option<u32> = None;
        let mut width = 0u16;
        for (lo, hi, c) in &self.entries {
            if best.is_some() && hi - lo != width {
                break;
            }
            if (*lo..=*hi).contains(&port) {
                if let Some(r) = c.best(k, filters) {
                    width = hi - lo;
                    best = match best {
                        Some(b) if !beats(&filters[r as usize], r, &filters[b as usize], b) => {
                            Some(b)
                        }
                        _ => Some(r),
                    };
                }
            }
        }
        best
    }
}

/// Interface: the exact value, then the wildcard. Filters are distinct, so
/// each value holds one filter.
struct IifNode {
    exact: Vec<(u8, u32)>,
    wild: Option<u32>,
}

impl Level for IifNode {
    fn build(filters: &[Spec], ids: Vec<u32>) -> Self {
        let mut exact: Vec<(u8, u32)> = Vec::new();
        let mut wild: Option<u32> = None;
        // Equal filters cannot be installed, but keep the lowest index if
        // they were.
        for id in ids {
            match filters[id as usize].iif {
                Some(i) => {
                    if !exact.iter().any(|e| e.0 == i) {
                        exact.push((i, id));
                    }
                }
                None => {
                    wild.get_or_insert(id);
                }
            }
        }
        exact.sort_by_key(|e| e.0);
        IifNode { exact, wild }
    }

    #[inline]
    fn best(&self, k: &Key, _filters: &[Spec]) -> Option<u32> {
        match self.exact.binary_search_by_key(&k.iif, |e| e.0) {
            Ok(i) => Some(self.exact[i].1),
            Err(_) => self.wild,
        }
    }
}

impl BestMatch {
    /// The DAG over `filters` (their order breaks ties).
    pub fn new(filters: Vec<Spec>) -> BestMatch {
        let root = (!filters.is_empty())
            .then(|| Src::build(&filters, (0..filters.len() as u32).collect()));
        BestMatch { filters, root }
    }

    /// The filters, in their order.
    pub fn filters(&self) -> &[Spec] {
        &self.filters
    }

    /// The index of the most specific filter matching `k`.
    #[inline]
    pub fn lookup(&self, k: &Key) -> Option<usize> {
        self.root
            .as_ref()
            .and_then(|r| r.best(k, &self.filters))
            .map(|i| i as usize)
    }
}

impl Default for BestMatch {
    fn default() -> Self {
        BestMatch::new(Vec::new())
    }
}
