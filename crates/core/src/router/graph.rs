//! The connection graph: adjacency lists, and the flat tables the
//! dispatcher reads on every packet.

use rclick_lang::Connection;

use super::ElementInfo;
use crate::ports::Mode;

/// Marks a push output or pull input with nothing on the other end.
const NONE: u32 = u32::MAX;

/// Connections in the forms the runtime needs: a flat table of push
/// targets and pull sources for the hot path, adjacency lists for context
/// searches and the `ports` handler.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Per element, where its outputs start in `push_target` and how many
    /// it has: one 8-byte load finds both.
    out_span: Vec<(u32, u32)>,
    push_target: Vec<(u32, u32)>,
    in_base: Vec<usize>,
    pull_source: Vec<(u32, u32)>,
    /// Elements whose class may answer pulls by forwarding them
    /// ([`Element::forwards_pulls`](crate::element::Element::forwards_pulls)).
    pull_forwarders: Vec<bool>,
    /// outs[e][port] = connected (element, input port) pairs.
    pub outs: Vec<Vec<Vec<(usize, usize)>>>,
    /// ins[e][port] = connected (element, output port) pairs.
    pub ins: Vec<Vec<Vec<(usize, usize)>>>,
}

impl Graph {
    /// Adjacency lists of `connections` between the ports `info` gives
    /// each element; connections to ports an element does not have are
    /// left out, and a connection given twice is listed once. The flat
    /// tables stay empty until [`Graph::build_tables`].
    pub fn new(connections: &[Connection], info: &[ElementInfo]) -> Self {
        let mut outs: Vec<Vec<Vec<(usize, usize)>>> =
            info.iter().map(|x| vec![Vec::new(); x.noutputs]).collect();
        let mut ins: Vec<Vec<Vec<(usize, usize)>>> =
            info.iter().map(|x| vec![Vec::new(); x.ninputs]).collect();
        // Repeats found by a set: a list search per connection would make
        // many connections into one port quadratic.
        let mut seen = std::collections::HashSet::with_capacity(connections.len());
        for c in connections {
            if c.from_port < info[c.from].noutputs
                && c.to_port < info[c.to].ninputs
                && seen.insert((c.from, c.from_port, c.to, c.to_port))
            {
                outs[c.from][c.from_port].push((c.to, c.to_port));
                ins[c.to][c.to_port].push((c.from, c.from_port));
            }
        }
        Graph {
            outs,
            ins,
            ..Graph::default()
        }
    }

    /// The one input a push output feeds.
    #[inline(always)]
    pub fn push_target(&self, elem: usize, port: usize) -> Option<(usize, usize)> {
        let &(base, count) = self.out_span.get(elem)?;
        if port >= count as usize {
            return None;
        }
        let &(d, p) = self.push_target.get(base as usize + port)?;
        (d != NONE).then_some((d as usize, p as usize))
    }

    /// Whether element `elem` may forward pulls (unknown elements may).
    #[inline(always)]
    pub fn forwards_pulls(&self, elem: usize) -> bool {
        self.pull_forwarders.get(elem).copied().unwrap_or(true)
    }

    /// Records which elements may forward pulls.
    pub fn set_pull_forwarders(&mut self, forwarders: Vec<bool>) {
        self.pull_forwarders = forwarders;
    }

    /// The one output a pull input pulls from.
    #[inline]
    pub fn pull_source(&self, elem: usize, port: usize) -> Option<(usize, usize)> {
        let (&base, &next) = (self.in_base.get(elem)?, self.in_base.get(elem + 1)?);
        if port >= next - base {
            return None;
        }
        let (s, p) = self.pull_source[base + port];
        (s != NONE).then_some((s as usize, p as usize))
    }

    /// Rewrites the flat tables' references to element `elem` with `flag`
    /// set: the dispatcher then finds it out of range and takes the
    /// shared-element path.
    pub fn mark_shared(&mut self, elem: usize, flag: u32) {
        for t in self
            .push_target
            .iter_mut()
            .chain(self.pull_source.iter_mut())
        {
            if t.0 == elem as u32 {
                t.0 |= flag;
            }
        }
    }

    /// Fills the flat hot-path tables from the resolved port modes in
    /// `info`: each push output's one target, each pull input's one source.
    pub fn build_tables(&mut self, info: &[ElementInfo]) {
        self.out_span.clear();
        self.in_base.clear();
        self.push_target.clear();
        self.pull_source.clear();
        for (i, x) in info.iter().enumerate() {
            self.out_span
                .push((self.push_target.len() as u32, x.noutputs as u32));
            for p in 0..x.noutputs {
                let t = if x.output_modes.get(p) == Some(&Mode::Push) {
                    self.outs[i][p]
                        .first()
                        .map(|&(d, dp)| (d as u32, dp as u32))
                        .unwrap_or((NONE, NONE))
                } else {
                    (NONE, NONE)
                };
                self.push_target.push(t);
            }
            self.in_base.push(self.pull_source.len());
            for p in 0..x.ninputs {
                let s = if x.input_modes.get(p) == Some(&Mode::Pull) {
                    self.ins[i][p]
                        .first()
                        .map(|&(s, sp)| (s as u32, sp as u32))
                        .unwrap_or((NONE, NONE))
                } else {
                    (NONE, NONE)
                };
                self.pull_source.push(s);
            }
        }
        self.in_base.push(self.pull_source.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rclick_lang::{ElementDecl, Landmark};

    fn info(ninputs: usize, noutputs: usize) -> ElementInfo {
        let decl = ElementDecl {
            name: String::new(),
            class: String::new(),
            config: String::new(),
            landmark: Landmark::new("test", 1),
        };
        crate::router::install::new_info(&decl, ninputs, noutputs)
    }

    /// The lists as a search of each port's list for a repeat makes them:
    /// connections to ports an element lacks left out, a repeat left out
    /// where it repeats, the rest in the order given.
    type Lists = Vec<Vec<Vec<(usize, usize)>>>;
    fn lists_by_search(connections: &[Connection], info: &[ElementInfo]) -> (Lists, Lists) {
        let mut outs: Lists = info.iter().map(|x| vec![Vec::new(); x.noutputs]).collect();
        let mut ins: Lists = info.iter().map(|x| vec![Vec::new(); x.ninputs]).collect();
        for c in connections {
            if c.from_port < info[c.from].noutputs && c.to_port < info[c.to].ninputs {
                if !outs[c.from][c.from_port].contains(&(c.to, c.to_port)) {
                    outs[c.from][c.from_port].push((c.to, c.to_port));
                }
                if !ins[c.to][c.to_port].contains(&(c.from, c.from_port)) {
                    ins[c.to][c.to_port].push((c.from, c.from_port));
                }
            }
        }
        (outs, ins)
    }

    /// Unsorted connection lists with many repeats (a few elements of up
    /// to three ports each, ports up to four: some missing) give the
    /// lists a search of each port's list gives, in the same order. The
    /// parser hands over its connections sorted and without repeats;
    /// these are the lists for any other order.
    #[test]
    fn repeats_are_left_out_and_the_order_kept() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as usize
        };
        for round in 0..500 {
            let elements: Vec<ElementInfo> =
                (0..1 + next(5)).map(|_| info(next(4), next(4))).collect();
            let n = elements.len() as u64;
            let connections: Vec<Connection> = (0..next(40))
                .map(|_| Connection {
                    from: next(n),
                    from_port: next(5),
                    to: next(n),
                    to_port: next(5),
                })
                .collect();
            let g = Graph::new(&connections, &elements);
            let (outs, ins) = lists_by_search(&connections, &elements);
            assert_eq!(g.outs, outs, "round {round}: {connections:?}");
            assert_eq!(g.ins, ins, "round {round}: {connections:?}");
        }
    }
}
