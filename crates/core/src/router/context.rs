//! Flow-based router context: searches along connections through
//! elements' flow codes, for `InitCtx::upstream`/`downstream` and for
//! notifier signals (Click's `Notifier::upstream_empty_signal` and
//! `downstream_full_signal`). Each search keeps a visited set, so it ends
//! on cyclic graphs.

use std::collections::{HashSet, VecDeque};

use super::RouterCore;
use crate::element::Element;
use crate::ports::{FlowCode, Mode};
use crate::sched::{NotifierSignal, SignalId};

impl RouterCore {
    /// Flow-based router context: elements matching `filter` reachable from
    /// `start`'s output `port` (downstream) or input `port` (upstream),
    /// stopping at the first match on each path.
    pub(crate) fn context_search(
        &self,
        start: usize,
        port: Option<usize>,
        downstream: bool,
        filter: &dyn Fn(&dyn Element) -> bool,
    ) -> Vec<usize> {
        let mut found = Vec::new();
        // Visited (element, port on the entry side).
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        let mut queue: VecDeque<(usize, usize)> = VecDeque::new();
        let start_ports: Vec<usize> = match port {
            Some(p) => vec![p],
            None => (0..if downstream {
                self.info[start].noutputs
            } else {
                self.info[start].ninputs
            })
                .collect(),
        };
        let adj = if downstream {
            &self.graph.outs
        } else {
            &self.graph.ins
        };
        for p in start_ports {
            if let Some(peers) = adj[start].get(p) {
                queue.extend(peers.iter().copied());
            }
        }
        while let Some((e, entry)) = queue.pop_front() {
            if !seen.insert((e, entry)) {
                continue;
            }
            let matched = match self.elements[e].try_borrow() {
                Ok(el) => filter(&**el),
                Err(_) => false,
            };
            if matched {
                if !found.contains(&e) {
                    found.push(e);
                }
                continue;
            }
            let flow = self.elements[e]
                .try_borrow()
                .ok()
                .and_then(|el| FlowCode::parse(el.flow_code()));
            let Some(flow) = flow else { continue };
            for (q, peers) in adj[e].iter().enumerate() {
                let flows = if downstream {
                    flow.flows(entry, q)
                } else {
                    flow.flows(q, entry)
                };
                if flows {
                    queue.extend(peers.iter().copied());
                }
            }
        }
        found
    }

    /// Click's `Notifier::upstream_empty_signal`: the signals of the
    /// empty-notifiers found upstream on pull paths; busy if some path ends
    /// at an element that produces packets without a notifier, idle if no
    /// path produces packets at all.
    pub(crate) fn upstream_empty_signal(&self, start: usize, port: usize) -> NotifierSignal {
        let (ids, busy) = self.notifier_search(start, port, false);
        if busy {
            NotifierSignal::Busy
        } else if ids.is_empty() {
            NotifierSignal::Idle
        } else {
            NotifierSignal::Signals(ids)
        }
    }

    /// Click's `Notifier::downstream_full_signal`: active while some queue
    /// reachable downstream on push paths has room. Busy (always active) if
    /// some path ends at an element that takes packets without a full
    /// notifier (Discard, a queue without notification).
    pub(crate) fn downstream_full_signal(&self, start: usize, port: usize) -> NotifierSignal {
        let (ids, busy) = self.notifier_search(start, port, true);
        if busy || ids.is_empty() {
            NotifierSignal::Busy
        } else {
            NotifierSignal::Signals(ids)
        }
    }

    /// Follows pull paths upstream from input `port` (or push paths
    /// downstream from output `port`), through elements' flow codes,
    /// stopping at notifiers. Returns the notifier signals found, and
    /// whether some path ended at an element without one.
    fn notifier_search(
        &self,
        start: usize,
        port: usize,
        downstream: bool,
    ) -> (Vec<SignalId>, bool) {
        let adj = if downstream {
            &self.graph.outs
        } else {
            &self.graph.ins
        };
        let mode = if downstream { Mode::Push } else { Mode::Pull };
        let mut ids: Vec<SignalId> = Vec::new();
        let mut busy = false;
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        let mut queue: VecDeque<(usize, usize)> = adj[start]
            .get(port)
            .into_iter()
            .flatten()
            .copied()
            .collect();
        while let Some((e, entry)) = queue.pop_front() {
            if !seen.insert((e, entry)) {
                continue;
            }
            let Ok(el) = self.elements[e].try_borrow() else {
                busy = true;
                continue;
            };
            let notifier = if downstream {
                el.full_notifier()
            } else {
                el.empty_notifier()
            };
            if let Some(sig) = notifier {
                if !ids.contains(&sig) {
                    ids.push(sig);
                }
                continue;
            }
            let Some(flow) = FlowCode::parse(el.flow_code()) else {
                busy = true;
                continue;
            };
            let info = &self.info[e];
            let modes = if downstream {
                &info.output_modes
            } else {
                &info.input_modes
            };
            let mut passes = false;
            for (q, m) in modes.iter().enumerate() {
                let flows = if downstream {
                    flow.flows(entry, q)
                } else {
                    flow.flows(q, entry)
                };
                if *m == mode && flows {
                    passes = true;
                    queue.extend(adj[e][q].iter().copied());
                }
            }
            if !passes {
                // Upstream: a packet source with no notifier (pullers must
                // poll). Downstream: a sink, or storage without a notifier
                // (always room).
                busy = true;
            }
        }
        (ids, busy)
    }
}
