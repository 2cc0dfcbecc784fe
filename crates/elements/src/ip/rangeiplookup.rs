//! # RangeIPLookup
//!
//! IP lookup using range search over a 16-bit direct table.
//!
//! ## Synopsis
//! `RangeIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//!
//! ## Description
//! Expects a destination IP address annotation with each packet. Looks up
//! that address using longest-prefix match, sets the destination annotation
//! to the route's gateway (if specified), and emits the packet on the
//! route's output. Packets without a route are dropped and counted; the
//! first five print `IPRouteTable: no route for ADDR`.
//!
//! Each argument is a route, `ADDR/MASK [GW] OUT` (`-` for no gateway).
//! Masks must be contiguous. If a prefix occurs twice, the first route is
//! kept and a warning printed.
//!
//! The lookup structure is small: a 65536-entry table indexed by the top
//! 16 address bits holds the answer for every /16 that no longer prefix
//! splits; a /16 that longer prefixes split points to a sorted list of
//! ranges of its low 16 bits (the elementary intervals between those
//! prefixes' ends, adjacent intervals with the same answer merged), found
//! by binary search. A lookup reads the table entry and, for a split /16,
//! searches at most twice as many ranges as it has long prefixes. The
//! structure is rebuilt, one /16 at a time, from a routing trie kept beside
//! it, so routes can be added and removed at any time; a change to a
//! prefix of length 16 or less visits every /16 it covers.
//!
//! Hot swap: the new element takes the old table, with every change made
//! through the handlers, in place of its configured routes.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): the routes, one per line, tab-separated `PREFIX GW OUT`
//!   columns as Click prints them (`-` for no gateway), in insertion order
//!   (Click lists them in hash order).
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1` if no
//!   route matches (Click's RangeIPLookup may answer `-1 GW` with the
//!   gateway of a removed route; rclick answers `-1`, as Click's other
//!   tables do).
//! - `add` (write): `ADDR/MASK [GW] OUT`; fails if a route for the prefix
//!   exists.
//! - `set` (write): adds or replaces a route.
//! - `remove` (write): `ADDR/MASK [GW OUT]`.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied as
//!   one atomic operation.
//! - `flush` (write): removes every route.
//! - `memory` (read): route and next-hop counts and bytes held (rclick
//!   extension).
//! - `drops` (read): packets dropped for lack of a route (rclick extension).
//!
//! ## Example
//! ```click
//! rt :: RangeIPLookup(0.0.0.0/0 10.0.0.1 0, 18.26.0.0/16 1, 18.26.4.0/24 2);
//! ```

use std::collections::BTreeSet;

use super::routetable::{len_mask, Lpm, NoMemory, Radix16_4, RouteLookup, TableClass};

pub type RangeIPLookup = RouteLookup<RangeIPLookupClass>;

rclick_core::element_class!(RangeIPLookup);

pub enum RangeIPLookupClass {}

impl TableClass for RangeIPLookupClass {
    const CLASS: &'static str = "RangeIPLookup";
    type Lpm = RangeLpm;
}

/// Top-level entry flag: the low bits index `sets`.
const SPLIT: u32 = 1 << 31;
const BUCKETS: usize = 1 << 16;

/// The range-search structure (see the element documentation).
pub struct RangeLpm {
    /// The routing truth the ranges are built from.
    helper: Radix16_4,
    /// Prefixes longer than /16, as `(addr, mask)`, ordered by address so
    /// that one /16's are contiguous.
    long: BTreeSet<(u32, u32)>,
    /// Per /16: a hop id, or `SPLIT | index` into `sets`.
    first: Vec<u32>,
    /// Range lists: `(low 16 bits where the range starts, hop id)`, sorted,
    /// the first starting at 0.
    sets: Vec<Vec<(u16, u32)>>,
    /// Unused indexes of `sets`.
    free: Vec<u32>,
}

impl Default for RangeLpm {
    fn default() -> Self {
        RangeLpm {
            helper: Radix16_4::default(),
            long: BTreeSet::new(),
            first: vec![0; BUCKETS],
            sets: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl RangeLpm {
    /// Recomputes the entry of the /16 `b` from the helper trie.
    fn rebuild(&mut self, b: u32) -> Result<(), NoMemory> {
        let base = b << 16;
        let old = self.first[b as usize];
        let mut starts: Vec<u32> = vec![0];
        for &(addr, mask) in self.long.range((base, 0)..=(base | 0xffff, u32::MAX)) {
            starts.push(addr & 0xffff);
            let end = (addr | !mask) & 0xffff;
            if end < 0xffff {
                starts.push(end + 1);
            }
        }
        let entry = if starts.len() == 1 {
            self.helper.lookup(base)
        } else {
            starts.sort_unstable();
            starts.dedup();
            let mut ranges: Vec<(u16, u32)> = Vec::new();
            ranges.try_reserve(starts.len()).map_err(|_| NoMemory)?;
            for s in starts {
                let hop = self.helper.lookup(base | s);
                if ranges.last().is_none_or(|r| r.1 != hop) {
                    ranges.push((s as u16, hop));
                }
            }
            if ranges.len() == 1 {
                ranges[0].1
            } else {
                let i = if old & SPLIT != 0 {
                    old & !SPLIT
                } else if let Some(i) = self.free.pop() {
                    i
                } else {
                    self.sets.try_reserve(1).map_err(|_| NoMemory)?;
                    self.sets.push(Vec::new());
                    (self.sets.len() - 1) as u32
                };
                self.sets[i as usize] = ranges;
                self.first[b as usize] = SPLIT | i;
                return Ok(());
            }
        };
        if old & SPLIT != 0 {
            let i = old & !SPLIT;
            self.sets[i as usize] = Vec::new();
            self.free.push(i);
        }
        self.first[b as usize] = entry;
        Ok(())
    }

    /// Rebuilds every /16 that `addr/mask` touches.
    fn rebuild_prefix(&mut self, addr: u32, mask: u32) -> Result<(), NoMemory> {
        let lo = (addr & mask) >> 16;
        let hi = (addr | !mask) >> 16;
        for b in lo..=hi {
            self.rebuild(b)?;
        }
        Ok(())
    }
}

impl Lpm for RangeLpm {
    fn insert(&mut self, addr: u32, mask: u32, hop: u32) -> Result<(), NoMemory> {
        self.helper.insert(addr, mask, hop)?;
        if mask > len_mask(16) {
            self.long.insert((addr & mask, mask));
        }
        self.rebuild_prefix(addr, mask)
    }

    fn remove(&mut self, addr: u32, mask: u32, cover: (u32, u32)) {
        self.helper.remove(addr, mask, cover);
        self.long.remove(&(addr & mask, mask));
        // Rebuilding after a removal only shrinks or reuses the lists.
        let _ = self.rebuild_prefix(addr, mask);
    }

    #[inline]
    fn lookup(&self, addr: u32) -> u32 {
        let e = self.first.get((addr >> 16) as usize).copied().unwrap_or(0);
        if e & SPLIT == 0 {
            return e;
        }
        let Some(set) = self.sets.get((e & !SPLIT) as usize) else {
            return 0;
        };
        let lo = addr as u16;
        let i = set.partition_point(|r| r.0 <= lo);
        set.get(i.wrapping_sub(1)).map_or(0, |r| r.1)
    }

    fn clear(&mut self) {
        *self = RangeLpm::default();
    }

    fn memory(&self) -> usize {
        self.helper.memory()
            + self.first.capacity() * 4
            + self.long.len() * 8
            + self
                .sets
                .iter()
                .map(|s| s.capacity() * std::mem::size_of::<(u16, u32)>())
                .sum::<usize>()
    }

    fn describe(&self) -> String {
        format!(
            "range search, {} split /16s of {} ranges",
            self.sets.len() - self.free.len(),
            self.sets.iter().map(Vec::len).sum::<usize>()
        )
    }
}
