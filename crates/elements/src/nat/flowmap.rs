//! The rewriters' lookup map: [`FlowId`] to a 32-bit map entry (flow
//! index and direction), open addressing with linear probing.
//!
//! A rewritten packet makes one lookup here, so it is built for that:
//! a slot is 16 bytes holding the whole key and the value (four to a
//! cache line), the key is compared as two words, and the first probe is
//! where the key's hash puts it, so that a hit with a table larger than
//! the caches costs one miss here (a general map with a separate control
//! array costs two). The table stays at most three-quarters full; removal
//! shifts the following entries back (no tombstones), so a lookup stops
//! at the first empty slot.

use super::rewriter_base::{FlowHashBuilder, FlowId};

/// A slot: the key as two words (see [`Slot::key_words`]) and the value;
/// [`EMPTY`] as the value marks a free slot.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot {
    addrs: u64,
    ports: u32,
    value: u32,
}

/// The value of a free slot. No map entry takes it: an entry is a flow
/// index times two plus a direction, and the flow slab of a table never
/// reaches 2^31 entries (each takes more than 64 bytes).
const EMPTY: u32 = u32::MAX;

const FREE: Slot = Slot {
    addrs: 0,
    ports: 0,
    value: EMPTY,
};

impl Slot {
    /// A key's words: the addresses, then the ports (as its hash reads
    /// them).
    #[inline(always)]
    fn key_words(key: &FlowId) -> (u64, u32) {
        (
            (u64::from(key.saddr) << 32) | u64::from(key.daddr),
            (u32::from(key.sport) << 16) | u32::from(key.dport),
        )
    }
}

/// A lookup begun by [`FlowMap::start`]: the key's words and its home
/// slot.
#[derive(Clone, Copy)]
pub struct Probe {
    addrs: u64,
    ports: u32,
    home: usize,
}

/// Asks the CPU to bring the cache line at `p` in, without waiting for it.
#[inline(always)]
pub fn prefetch_line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it does not fault, whatever the
    // address, and reads nothing into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The slots a new map starts with (grown on the first insertion).
const MIN_SLOTS: usize = 16;

/// Flow id to map entry (see the module's documentation).
pub struct FlowMap {
    slots: Vec<Slot>,
    /// `slots.len() - 1` (a power of two less one); 0 before the first
    /// insertion, when `slots` is empty.
    mask: usize,
    /// Right shift of a hash to a slot index: its top bits. 63 (slot 0
    /// or 1, never read) before the first insertion: every reader checks
    /// for no slots first.
    shift: u32,
    len: usize,
    hasher: FlowHashBuilder,
}

impl Default for FlowMap {
    fn default() -> Self {
        FlowMap {
            slots: Vec::new(),
            mask: 0,
            shift: 63,
            len: 0,
            hasher: FlowHashBuilder::default(),
        }
    }
}

impl FlowMap {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where `key`'s probe sequence starts.
    #[inline(always)]
    fn home(&self, addrs: u64, ports: u32) -> usize {
        (self.hasher.hash_words(addrs, ports) >> self.shift) as usize
    }

    /// The slot holding `key`, or the free slot where its probe stopped.
    #[inline(always)]
    fn find(&self, addrs: u64, ports: u32) -> (usize, bool) {
        self.find_from(self.home(addrs, ports), addrs, ports)
    }

    /// [`FlowMap::find`] from the key's home slot `i`, known.
    #[inline(always)]
    fn find_from(&self, mut i: usize, addrs: u64, ports: u32) -> (usize, bool) {
        debug_assert!(!self.slots.is_empty());
        debug_assert_eq!(i, self.home(addrs, ports));
        loop {
            // SAFETY: `i` is a hash's top bits, as many as index the
            // slots (`shift` is 64 less their count's log2), or a probe's
            // home that `finish` checked against their count, or the index
            // after a slot masked by `mask` (their count less one), so it
            // is below the count; and the callers come with slots (`get`
            // and `remove` return first without, `insert` grows first,
            // `finish` checks).
            let s = unsafe { self.slots.get_unchecked(i) };
            if s.value == EMPTY {
                return (i, false);
            }
            if s.addrs == addrs && s.ports == ports {
                return (i, true);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// A lookup of `key` begun: its hash taken and its first slot asked
    /// of the memory, to be finished by [`FlowMap::finish`] once the
    /// slot has had time to arrive (with no change to the map between).
    /// `None` when the map has no slots yet (nothing to find).
    #[inline(always)]
    pub fn start(&self, key: &FlowId) -> Option<Probe> {
        let (addrs, ports) = Slot::key_words(key);
        let home = self.home(addrs, ports);
        prefetch_line(self.slots.get(home)?);
        Some(Probe { addrs, ports, home })
    }

    /// The value of the key `probe` began to look up, as [`FlowMap::get`]
    /// gives it. The map must not have changed since [`FlowMap::start`]
    /// (nor be another map): else the answer may be wrong, but reads stay
    /// in bounds.
    #[inline(always)]
    pub fn finish(&self, probe: &Probe) -> Option<u32> {
        // `find_from` reads its first slot unchecked, and a safe function
        // cannot rely on its caller for that: a probe of a larger map, or
        // of this one before it was emptied, would read past the slots.
        // One compare, on the way to a slot read anyway.
        let (i, found) = if probe.home < self.slots.len() {
            self.find_from(probe.home, probe.addrs, probe.ports)
        } else if self.slots.is_empty() {
            return None;
        } else {
            self.find(probe.addrs, probe.ports)
        };
        found.then(|| self.slots[i].value)
    }

    #[inline(always)]
    pub fn get(&self, key: &FlowId) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (addrs, ports) = Slot::key_words(key);
        match self.find(addrs, ports) {
            (i, true) => Some(self.slots[i].value),
            _ => None,
        }
    }

    pub fn contains_key(&self, key: &FlowId) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`'s value; returns the value it replaced.
    pub fn insert(&mut self, key: FlowId, value: u32) -> Option<u32> {
        debug_assert_ne!(value, EMPTY);
        // At most three-quarters full after this insertion.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let (addrs, ports) = Slot::key_words(&key);
        let (i, found) = self.find(addrs, ports);
        let slot = &mut self.slots[i];
        if found {
            return Some(std::mem::replace(&mut slot.value, value));
        }
        *slot = Slot {
            addrs,
            ports,
            value,
        };
        self.len += 1;
        None
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &FlowId) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (addrs, ports) = Slot::key_words(key);
        let (mut hole, found) = self.find(addrs, ports);
        if !found {
            return None;
        }
        let value = self.slots[hole].value;
        // Backward shift: an entry after the hole moves into it when the
        // hole lies on its probe path (between its home and its slot,
        // cyclically), so that no lookup meets a free slot before its key.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slots[j];
            if s.value == EMPTY {
                break;
            }
            let home = self.home(s.addrs, s.ports);
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = FREE;
        self.len -= 1;
        Some(value)
    }

    /// The values, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|s| s.value != EMPTY)
            .map(|s| s.value)
    }

    /// Doubles the slots (or makes the first ones) and places every entry
    /// again.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
        self.mask = n - 1;
        self.shift = 64 - n.trailing_zeros();
        for s in old.into_iter().filter(|s| s.value != EMPTY) {
            let (i, _) = self.find(s.addrs, s.ports);
            self.slots[i] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts and removals (keys from a small space, so that they
    /// collide and get removed while others sit on their probe paths)
    /// against std's map.
    #[test]
    fn flow_map_agrees_with_a_hash_map() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut m = FlowMap::default();
        let mut reference: HashMap<(u32, u16, u32, u16), u32> = HashMap::new();
        for round in 0..200_000u32 {
            let r = next();
            let k = (
                (r % 7) as u32,
                (r >> 8) as u16 % 61,
                (r >> 24) as u32 % 5,
                (r >> 40) as u16 % 3,
            );
            let key = FlowId::new(k.0, k.1, k.2, k.3);
            // Inserting more often than removing early, then less, so the
            // map grows and then empties again.
            let insert = (r >> 60) as u32 % 8 < if round < 100_000 { 5 } else { 3 };
            if insert {
                let v = round;
                assert_eq!(m.insert(key, v), reference.insert(k, v));
            } else {
                assert_eq!(m.remove(&key), reference.remove(&k));
            }
            assert_eq!(m.len(), reference.len());
            // A lookup begun and finished later finds what `get` finds.
            let begun = m.start(&key);
            assert_eq!(begun.is_none(), m.slots.is_empty());
            assert_eq!(begun.and_then(|b| m.finish(&b)), m.get(&key));
            if round % 997 == 0 {
                for (rk, rv) in &reference {
                    assert_eq!(m.get(&FlowId::new(rk.0, rk.1, rk.2, rk.3)), Some(*rv));
                }
                let mut a: Vec<u32> = m.values().collect();
                let mut b: Vec<u32> = reference.values().copied().collect();
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b);
            }
        }
        assert!(m.get(&FlowId::new(99, 0, 0, 0)).is_none());
        assert!(FlowMap::default().get(&FlowId::default()).is_none());
        assert!(FlowMap::default().remove(&FlowId::default()).is_none());
        assert!(FlowMap::default().start(&FlowId::default()).is_none());
    }

    /// A cluster that wraps past the last slot: keys whose probe starts
    /// at the last slot sit at the end and at the start of the table, a
    /// key starting at slot 0 before them there; removing each in turn
    /// must shift the rest back across the wrap so that all stay found
    /// (and the one starting at slot 0 must not move before its start).
    #[test]
    fn backward_shift_across_the_end_of_the_table() {
        let mut m = FlowMap::default();
        m.insert(FlowId::new(0, 0, 0, 1), 0);
        let last = m.mask;
        let home_of = |m: &FlowMap, k: &FlowId| {
            let (a, p) = Slot::key_words(k);
            m.home(a, p)
        };
        let candidates = (1..u16::MAX).map(|p| FlowId::new(7, p, 9, 80));
        let at_end: Vec<FlowId> = candidates
            .clone()
            .filter(|k| home_of(&m, k) == last)
            .take(3)
            .collect();
        let at_zero: Vec<FlowId> = candidates.filter(|k| home_of(&m, k) == 0).take(1).collect();
        assert_eq!((at_end.len(), at_zero.len()), (3, 1));
        // Slot 0 is taken first by the key starting there, so the
        // wrapped ones go to the last slot, then 1 and 2.
        let keys: Vec<FlowId> = at_zero.iter().chain(&at_end).copied().collect();
        for victim in 0..keys.len() {
            let mut m = FlowMap {
                slots: vec![FREE; m.slots.len()],
                mask: m.mask,
                shift: m.shift,
                len: 0,
                hasher: m.hasher.clone(),
            };
            for (v, k) in keys.iter().enumerate() {
                assert_eq!(m.insert(*k, v as u32), None);
            }
            assert_eq!(m.slots.len(), last + 1, "no growth");
            assert_eq!(m.remove(&keys[victim]), Some(victim as u32));
            for (v, k) in keys.iter().enumerate() {
                let want = (v != victim).then_some(v as u32);
                assert_eq!(m.get(k), want, "victim {victim}, key {v}");
            }
            if victim != 0 {
                let (a, p) = Slot::key_words(&keys[0]);
                assert_eq!(m.find(a, p), (0, true), "the key starting at slot 0 moved");
            }
            assert_eq!(m.len(), keys.len() - 1);
            let used = m.slots.iter().filter(|s| s.value != EMPTY).count();
            assert_eq!(used, keys.len() - 1);
        }
    }

    /// `finish` is safe, so a probe finished on a map it was not begun on
    /// (an empty one, a smaller one) must not read past that map's slots
    /// (`find_from` reads unchecked): without the check in `finish`, a
    /// debug build stops at `find_from`'s assertion of the home, a release
    /// build reads out of bounds.
    #[test]
    fn a_probe_finished_on_another_map_reads_in_bounds() {
        let mut big = FlowMap::default();
        for i in 0..100u32 {
            big.insert(FlowId::new(i, 1, 2, 3), i);
        }
        // A key whose home in the large map lies past the slots of a
        // small map (most do); the small map holds it too.
        let (key, probe) = (0..100u32)
            .map(|i| FlowId::new(i, 1, 2, 3))
            .find_map(|k| {
                let p = big.start(&k)?;
                (p.home >= MIN_SLOTS).then_some((k, p))
            })
            .expect("a key with a far home");
        let mut small = FlowMap::default();
        small.insert(key, 1000);
        small.insert(FlowId::new(7, 7, 7, 7), 9);
        assert_eq!(small.slots.len(), MIN_SLOTS);
        assert_eq!(big.finish(&probe), big.get(&key));
        assert!(big.finish(&probe).is_some());
        assert_eq!(small.finish(&probe), Some(1000));
        assert_eq!(FlowMap::default().finish(&probe), None);
    }
}
