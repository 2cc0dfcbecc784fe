//! Endpoint-independent mappings (RFC 4787 REQ-1 for UDP, RFC 5382 REQ-1
//! for TCP): a rewriter with `ENDPOINT_INDEPENDENT true` gives an inside
//! endpoint (address and port) one outside port for every destination,
//! and never gives that port to another inside endpoint while the mapping
//! lives. Click's rewriters choose a port per flow instead: a host that
//! cannot keep its port gets another one for each server it talks to, and
//! an outside port is shared by flows of several hosts to different
//! servers.
//!
//! A binding lives while a flow of its table uses it: each flow made
//! through it holds it, and the flow's removal (expiry, eviction, `clear`)
//! lets it go. So its lifetime is that of the longest of its flows, each
//! refreshed by its own traffic (RFC 4787 REQ-5/REQ-6: UDP_TIMEOUT).
//!
//! Everything here is on the path of a new flow only; an established
//! flow's packet never looks at it.

use std::collections::HashMap;

use crate::ip::ipcommon::AddrHashBuilder;

/// Keyed, seeded and fast (a multiply per word, where the default hasher
/// costs a new flow a thousand instructions more).
type FastMap<K, V> = HashMap<K, V, AddrHashBuilder>;

/// An inside endpoint, in one lookup map (one protocol), towards one
/// outside address (a pattern's source address).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Inside {
    pub map: u32,
    pub addr: u32,
    pub port: u16,
    pub outside_addr: u32,
}

struct Binding {
    outside_port: u16,
    /// Live flows holding the binding.
    flows: u32,
}

/// Words of a [`PortSet`] kept in a map before it takes the whole
/// bitmap.
const SPARSE_MAX_WORDS: usize = 32;

/// The outside ports of one outside address that bindings hold, one bit
/// each, in words of 64 ports. Sparse while few words hold a port: a
/// pattern that keeps the source address (`-`) has one set per inside
/// address, usually holding one or two ports, and a whole bitmap each
/// (8 KiB) would let spoofed sources cost 8 KiB a flow.
struct PortSet {
    held: u32,
    words: Words,
}

enum Words {
    /// The words that are not zero, by index.
    Sparse(FastMap<u16, u64>),
    Dense(Box<[u64; 1024]>),
}

impl PortSet {
    fn new() -> PortSet {
        PortSet {
            held: 0,
            words: Words::Sparse(FastMap::default()),
        }
    }

    fn word(&self, w: usize) -> u64 {
        match &self.words {
            Words::Sparse(m) => m.get(&(w as u16)).copied().unwrap_or(0),
            Words::Dense(a) => a[w],
        }
    }

    fn contains(&self, port: u16) -> bool {
        self.word(usize::from(port / 64)) & (1 << (port % 64)) != 0
    }

    fn is_empty(&self) -> bool {
        self.held == 0
    }

    fn set(&mut self, port: u16, held: bool) {
        if self.contains(port) == held {
            return;
        }
        let (w, b) = (port / 64, 1u64 << (port % 64));
        if held {
            self.held += 1;
        } else {
            self.held -= 1;
        }
        match &mut self.words {
            Words::Dense(a) => a[usize::from(w)] ^= b,
            Words::Sparse(m) => {
                let word = m.entry(w).or_insert(0);
                *word ^= b;
                if *word == 0 {
                    m.remove(&w);
                }
                if m.len() > SPARSE_MAX_WORDS {
                    let mut a = Box::new([0u64; 1024]);
                    for (&i, &v) in m.iter() {
                        a[usize::from(i)] = v;
                    }
                    self.words = Words::Dense(a);
                }
            }
        }
    }

    /// The first port of `from..=hi` not held, with `parity` (0 or 1) if
    /// given: a word at a time.
    fn first_free(&self, from: u16, hi: u16, parity: Option<u16>) -> Option<u16> {
        // Bit i of the mask: port 64w + i has the wanted parity.
        let parity_mask = match parity {
            Some(0) => 0x5555_5555_5555_5555u64,
            Some(_) => 0xaaaa_aaaa_aaaa_aaaau64,
            None => !0,
        };
        let (mut w, last) = (usize::from(from / 64), usize::from(hi / 64));
        let mut open = !self.word(w) & parity_mask & (!0u64 << (from % 64));
        loop {
            if open != 0 {
                let port = w * 64 + open.trailing_zeros() as usize;
                return (port <= usize::from(hi)).then_some(port as u16);
            }
            w += 1;
            if w > last {
                return None;
            }
            open = !self.word(w) & parity_mask;
        }
    }
}

/// The endpoint-independent bindings of one table.
#[derive(Default)]
pub struct Bindings {
    by_inside: FastMap<Inside, Binding>,
    /// Held outside ports, by (map, outside address).
    held: FastMap<(u32, u32), PortSet>,
    /// The binding each bound flow holds, by flow index.
    of_flow: FastMap<usize, Inside>,
}

impl Bindings {
    /// Whether no flow holds a binding (the usual case of a Click
    /// configuration): the flows' removal then skips this altogether.
    pub fn is_empty(&self) -> bool {
        self.of_flow.is_empty()
    }

    /// How many bindings there are.
    pub fn len(&self) -> usize {
        self.by_inside.len()
    }

    /// The outside port `inside` is bound to, if any.
    pub fn port_of(&self, inside: &Inside) -> Option<u16> {
        self.by_inside.get(inside).map(|b| b.outside_port)
    }

    /// Whether a binding holds `port` of `outside_addr` in `map`.
    pub fn is_held(&self, map: u32, outside_addr: u32, port: u16) -> bool {
        self.held
            .get(&(map, outside_addr))
            .is_some_and(|s| s.contains(port))
    }

    /// The first port no binding holds in `from..=hi`, then `lo..from`,
    /// with `parity` if given.
    pub fn first_free(
        &self,
        map: u32,
        outside_addr: u32,
        (lo, hi): (u16, u16),
        from: u16,
        parity: Option<u16>,
    ) -> Option<u16> {
        if lo > hi {
            return None;
        }
        let from = from.clamp(lo, hi);
        let Some(set) = self.held.get(&(map, outside_addr)) else {
            // Nothing held: the first port with the parity.
            let wanted = |p: u16| parity.is_none_or(|q| p % 2 == q);
            return [from, from.saturating_add(1), lo, lo.saturating_add(1)]
                .into_iter()
                .find(|&p| (lo..=hi).contains(&p) && wanted(p));
        };
        set.first_free(from, hi, parity).or_else(|| {
            // The wrap-around: `lo..from` (`from - 1` may be below `lo`).
            let end = from.checked_sub(1).filter(|&e| e >= lo)?;
            set.first_free(lo, end, parity)
        })
    }

    /// Flow `f` holds the binding of `inside` to `outside_port`, made now
    /// if there is none.
    pub fn bind(&mut self, f: usize, inside: Inside, outside_port: u16) {
        let b = self.by_inside.entry(inside).or_insert(Binding {
            outside_port,
            flows: 0,
        });
        debug_assert_eq!(b.outside_port, outside_port);
        b.flows += 1;
        self.held
            .entry((inside.map, inside.outside_addr))
            .or_insert_with(PortSet::new)
            .set(b.outside_port, true);
        if let Some(old) = self.of_flow.insert(f, inside) {
            // A flow index is reused only after its flow was removed,
            // which released it: not reached.
            debug_assert!(false, "flow {f} bound twice");
            self.unhold(old);
        }
    }

    /// Flow `f` is removed: the binding it held (if any) loses a flow,
    /// and goes with its last one.
    pub fn release(&mut self, f: usize) {
        if let Some(inside) = self.of_flow.remove(&f) {
            self.unhold(inside);
        }
    }

    fn unhold(&mut self, inside: Inside) {
        let Some(b) = self.by_inside.get_mut(&inside) else {
            return;
        };
        b.flows -= 1;
        if b.flows > 0 {
            return;
        }
        let port = b.outside_port;
        self.by_inside.remove(&inside);
        let key = (inside.map, inside.outside_addr);
        if let Some(set) = self.held.get_mut(&key) {
            set.set(port, false);
            if set.is_empty() {
                self.held.remove(&key);
            }
        }
    }

    /// The binding flow `f` holds: its inside endpoint and outside port.
    pub fn of_flow(&self, f: usize) -> Option<(Inside, u16)> {
        let inside = *self.of_flow.get(&f)?;
        Some((inside, self.port_of(&inside)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(addr: u32, port: u16) -> Inside {
        Inside {
            map: 0,
            addr,
            port,
            outside_addr: 7,
        }
    }

    #[test]
    fn a_binding_lives_while_a_flow_holds_it() {
        let mut b = Bindings::default();
        b.bind(1, inside(10, 5000), 6000);
        b.bind(2, inside(10, 5000), 6000);
        assert_eq!(b.port_of(&inside(10, 5000)), Some(6000));
        assert!(b.is_held(0, 7, 6000));
        b.release(1);
        assert!(b.is_held(0, 7, 6000));
        assert_eq!(b.of_flow(2), Some((inside(10, 5000), 6000)));
        b.release(2);
        assert!(!b.is_held(0, 7, 6000));
        assert_eq!(b.port_of(&inside(10, 5000)), None);
        assert!(b.is_empty());
        // Releasing a flow that holds nothing changes nothing.
        b.release(3);
        assert_eq!(b.len(), 0);
    }

    #[test]
    fn free_ports_skip_held_ones_keep_parity_and_wrap() {
        let mut b = Bindings::default();
        assert_eq!(b.first_free(0, 7, (1024, 65535), 2000, Some(1)), Some(2001));
        assert_eq!(b.first_free(0, 7, (1024, 65535), 2000, Some(0)), Some(2000));
        for (f, p) in [2000u16, 2001, 2002, 2003].into_iter().enumerate() {
            b.bind(f, inside(10, p), p);
        }
        assert_eq!(b.first_free(0, 7, (1024, 65535), 2000, None), Some(2004));
        assert_eq!(b.first_free(0, 7, (1024, 65535), 2000, Some(1)), Some(2005));
        // Another outside address, or another map, holds nothing.
        assert_eq!(b.first_free(0, 8, (1024, 65535), 2000, None), Some(2000));
        assert_eq!(b.first_free(1, 7, (1024, 65535), 2000, None), Some(2000));
        // A range held from `from` to its end wraps to its start.
        assert_eq!(b.first_free(0, 7, (1990, 2003), 2000, None), Some(1990));
        assert_eq!(b.first_free(0, 7, (2000, 2003), 2001, None), None);
        assert_eq!(b.first_free(0, 7, (2000, 2004), 2001, Some(1)), None);
        assert_eq!(b.first_free(0, 7, (2000, 2004), 2001, Some(0)), Some(2004));
    }

    /// Random binds and releases against a model: the held ports are
    /// exactly the live bindings' ports, and `first_free` agrees with a
    /// plain scan (`from..=hi`, then `lo..from`) for every kind of range:
    /// at either end of the port space, one port wide, `from` outside it,
    /// with and without parity.
    #[test]
    fn held_ports_and_free_port_search_match_a_model() {
        let mut seed = 0x853c_49e6_748f_ea9b_u64;
        let mut rnd = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(n)) as u32
        };
        let mut b = Bindings::default();
        // Port -> (inside, holding flows) in the model.
        let mut model: HashMap<u16, (Inside, Vec<usize>)> = HashMap::new();
        let mut next_flow = 0usize;
        // Ports near the edges and a middle word boundary, densely (a
        // few words: the sparse set); from step 10,000 on also anywhere
        // (more words: the set turns into the whole bitmap).
        let pick = |r: u32, wide: bool| -> u16 {
            match r % 4 {
                0 => (r / 4 % 200) as u16,
                1 => 65535 - (r / 4 % 200) as u16,
                3 if wide => (r / 4) as u16,
                _ => 32700 + (r / 4 % 140) as u16,
            }
        };
        for step in 0..20_000 {
            let wide = step >= 10_000;
            if step == 9_999 {
                let set = &b.held[&(0, 7)];
                assert!(
                    matches!(set.words, Words::Sparse(_)),
                    "a few words stay sparse"
                );
            }
            if rnd(2) == 0 {
                let port = pick(rnd(1 << 20), wide);
                let holder = model.get(&port).map(|m| m.0);
                let inside = holder.unwrap_or(inside(10, port));
                b.bind(next_flow, inside, port);
                model
                    .entry(port)
                    .or_insert((inside, Vec::new()))
                    .1
                    .push(next_flow);
                next_flow += 1;
            } else if let Some(&port) = model.keys().nth(rnd(model.len() as u32 + 1) as usize) {
                let flows = &mut model.get_mut(&port).unwrap().1;
                let f = flows.swap_remove(rnd(flows.len() as u32) as usize);
                b.release(f);
                if flows.is_empty() {
                    model.remove(&port);
                }
            }
            assert_eq!(b.len(), model.len(), "step {step}");
            let lo = pick(rnd(1 << 20), wide);
            let hi = pick(rnd(1 << 20), wide);
            let from = pick(rnd(1 << 20), wide);
            let parity = [None, Some(0), Some(1)][rnd(3) as usize];
            let want = if lo > hi {
                None
            } else {
                let from = from.clamp(lo, hi);
                (from..=hi)
                    .chain(lo..from)
                    .find(|p| !model.contains_key(p) && parity.is_none_or(|q| p % 2 == q))
            };
            assert_eq!(
                b.first_free(0, 7, (lo, hi), from, parity),
                want,
                "step {step}: {lo}-{hi} from {from} parity {parity:?}"
            );
            let port = pick(rnd(1 << 20), wide);
            assert_eq!(b.is_held(0, 7, port), model.contains_key(&port));
        }
        assert!(
            matches!(b.held[&(0, 7)].words, Words::Dense(_)),
            "ports over many words take the whole bitmap"
        );
        for (_, (_, flows)) in model.drain() {
            for f in flows {
                b.release(f);
            }
        }
        assert!(b.is_empty() && b.held.is_empty() && b.by_inside.is_empty());
    }

    #[test]
    fn the_whole_port_space_can_be_held() {
        let mut b = Bindings::default();
        for p in 0..=u16::MAX {
            b.bind(usize::from(p), inside(10, p), p);
        }
        assert_eq!(b.first_free(0, 7, (0, 65535), 0, None), None);
        assert_eq!(b.first_free(0, 7, (0, 65535), 65535, Some(1)), None);
        b.release(65535);
        assert_eq!(b.first_free(0, 7, (0, 65535), 0, None), Some(65535));
        assert_eq!(b.first_free(0, 7, (0, 65535), 0, Some(0)), None);
    }
}
