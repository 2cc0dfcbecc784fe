//! Push and pull: resolving agnostic ports and checking every connection
//! (the paper's Figure 4).

use std::collections::{HashMap, HashSet, VecDeque};

use rclick_lang::{Connection, Diagnostic};

use super::{diag, elem_desc, ElementInfo, RouterCore};
use crate::ports::{FlowCode, Mode, Processing};

/// Resolves agnostic ports and checks every connection (the paper's Figure
/// 4). Click's algorithm: propagate modes across connections and through
/// agnostic elements' flow codes until nothing changes; leftovers are push.
/// The resolved modes are stored in `core.info` even when there are
/// errors.
///
/// Propagation is a worklist: a port that takes a mode revisits only its
/// own connections and element, so resolution is linear in the ports and
/// connections (a pass-until-nothing-changes loop is quadratic on a long
/// chain of agnostic elements).
pub(super) fn resolve_processing(core: &mut RouterCore) -> Result<(), Vec<Diagnostic>> {
    let (procs, flows) = parse_codes(core)?;
    let mut modes = PortModes::new(&core.info, &procs);
    let conns = core.spec.connections.clone();
    let links = PortLinks::new(&core.info, &conns);
    let mut work: VecDeque<Work> = (0..conns.len())
        .map(Work::Across)
        .chain((0..core.info.len()).map(Work::Through))
        .collect();
    let mut mixed_errors = Vec::new();
    let mut prop = Propagation {
        conns: &conns,
        links: &links,
        flows: &flows,
        info: &core.info,
        errors: &mut mixed_errors,
    };
    modes.propagate(&mut work, &mut prop);
    // Leftover agnostic ports become push, one at a time, each followed
    // by propagation so linked ports agree. Ports never become agnostic
    // again, so the search resumes where it stopped.
    let mut cursor = 0;
    while let Some((i, is_input, p)) = modes.next_agnostic(&mut cursor) {
        if is_input {
            modes.inputs[i][p] = Mode::Push;
        } else {
            modes.outputs[i][p] = Mode::Push;
        }
        links.revisit(i, is_input, p, &mut work);
        modes.propagate(&mut work, &mut prop);
    }
    // One report per element, in element order whatever order the
    // worklist found them in.
    mixed_errors.sort_by_key(|(i, _)| *i);
    let mut errors: Vec<Diagnostic> = mixed_errors.into_iter().map(|(_, d)| d).collect();
    // Like Click: conflicts on real connections first, then agnostic
    // elements in mixed context (Click checks those through fake
    // connections placed after the real ones), and port reuse only when
    // push and pull agree everywhere.
    let agnostic_errors = std::mem::take(&mut errors);
    let mut reuse_errors = Vec::new();
    check_connections(core, &conns, &modes, &mut errors, &mut reuse_errors);
    errors.extend(agnostic_errors);
    if errors.is_empty() {
        errors = reuse_errors;
    }
    modes.store(&mut core.info);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every element's processing and flow codes; an error for each that does
/// not parse.
fn parse_codes(core: &RouterCore) -> Result<(Vec<Processing>, Vec<FlowCode>), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut procs = Vec::with_capacity(core.info.len());
    let mut flows = Vec::with_capacity(core.info.len());
    for (i, info) in core.info.iter().enumerate() {
        let e = core.elements[i].borrow();
        let p = Processing::parse(e.processing());
        let f = FlowCode::parse(e.flow_code());
        if p.is_none() {
            errors.push(diag(
                &info.landmark,
                format!("{}: bad processing code", elem_desc(info)),
            ));
        }
        if f.is_none() {
            errors.push(diag(
                &info.landmark,
                format!("{}: bad flow code", elem_desc(info)),
            ));
        }
        procs.push(p);
        flows.push(f);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok((
        procs.into_iter().flatten().collect(),
        flows.into_iter().flatten().collect(),
    ))
}

/// A step of propagation: look across a connection, or through an
/// element's flow code.
#[derive(Clone, Copy)]
enum Work {
    Across(usize),
    Through(usize),
}

/// The connections at each port, so that a port that takes a mode revisits
/// only what it touches.
struct PortLinks {
    /// at_output[e][port], at_input[e][port]: connection indices.
    at_output: Vec<Vec<Vec<usize>>>,
    at_input: Vec<Vec<Vec<usize>>>,
}

impl PortLinks {
    fn new(info: &[ElementInfo], conns: &[Connection]) -> Self {
        let mut at_output: Vec<Vec<Vec<usize>>> =
            info.iter().map(|x| vec![Vec::new(); x.noutputs]).collect();
        let mut at_input: Vec<Vec<Vec<usize>>> =
            info.iter().map(|x| vec![Vec::new(); x.ninputs]).collect();
        for (ci, c) in conns.iter().enumerate() {
            if let Some(v) = at_output
                .get_mut(c.from)
                .and_then(|e| e.get_mut(c.from_port))
            {
                v.push(ci);
            }
            if let Some(v) = at_input.get_mut(c.to).and_then(|e| e.get_mut(c.to_port)) {
                v.push(ci);
            }
        }
        PortLinks {
            at_output,
            at_input,
        }
    }

    /// Queues what a port of element `e` that just took a mode affects:
    /// its connections and its element.
    fn revisit(&self, e: usize, is_input: bool, port: usize, work: &mut VecDeque<Work>) {
        let side = if is_input {
            &self.at_input
        } else {
            &self.at_output
        };
        if let Some(cs) = side.get(e).and_then(|ports| ports.get(port)) {
            work.extend(cs.iter().map(|&c| Work::Across(c)));
        }
        work.push_back(Work::Through(e));
    }
}

/// What propagation reads, and where it reports agnostic elements in mixed
/// context (with the element's index, to sort them).
struct Propagation<'a> {
    conns: &'a [Connection],
    links: &'a PortLinks,
    flows: &'a [FlowCode],
    info: &'a [ElementInfo],
    errors: &'a mut Vec<(usize, Diagnostic)>,
}

/// Every port's mode while resolution runs.
struct PortModes {
    /// inputs[e][port], outputs[e][port]: the mode so far.
    inputs: Vec<Vec<Mode>>,
    outputs: Vec<Vec<Mode>>,
    /// Whether each port was agnostic to begin with.
    input_agnostic: Vec<Vec<bool>>,
    output_agnostic: Vec<Vec<bool>>,
    /// Elements already reported as agnostic in mixed context (once each).
    mixed: HashSet<usize>,
}

impl PortModes {
    /// The modes the elements' processing codes declare.
    fn new(info: &[ElementInfo], procs: &[Processing]) -> Self {
        let inputs: Vec<Vec<Mode>> = info
            .iter()
            .zip(procs)
            .map(|(x, proc_)| (0..x.ninputs).map(|p| proc_.input(p)).collect())
            .collect();
        let outputs: Vec<Vec<Mode>> = info
            .iter()
            .zip(procs)
            .map(|(x, proc_)| (0..x.noutputs).map(|p| proc_.output(p)).collect())
            .collect();
        let agnostic = |modes: &Vec<Vec<Mode>>| -> Vec<Vec<bool>> {
            modes
                .iter()
                .map(|v| v.iter().map(|m| *m == Mode::Agnostic).collect())
                .collect()
        };
        PortModes {
            input_agnostic: agnostic(&inputs),
            output_agnostic: agnostic(&outputs),
            inputs,
            outputs,
            mixed: HashSet::new(),
        }
    }

    /// The modes at the two ends of `c`, if both ports exist.
    fn ends(&self, c: &Connection) -> Option<(Mode, Mode)> {
        let o = *self.outputs.get(c.from)?.get(c.from_port)?;
        let i = *self.inputs.get(c.to)?.get(c.to_port)?;
        Some((o, i))
    }

    /// Runs the worklist until it is empty: an agnostic end of a
    /// connection takes the mode of a decided other end, and inside an
    /// element agnostic ports linked by its flow code share a mode. Every
    /// port that takes a mode queues what it touches.
    fn propagate(&mut self, work: &mut VecDeque<Work>, prop: &mut Propagation) {
        while let Some(w) = work.pop_front() {
            match w {
                Work::Across(ci) => {
                    let c = &prop.conns[ci];
                    let Some((o, i)) = self.ends(c) else {
                        continue;
                    };
                    if o == Mode::Agnostic && i != Mode::Agnostic {
                        self.outputs[c.from][c.from_port] = i;
                        prop.links.revisit(c.from, false, c.from_port, work);
                    } else if i == Mode::Agnostic && o != Mode::Agnostic {
                        self.inputs[c.to][c.to_port] = o;
                        prop.links.revisit(c.to, true, c.to_port, work);
                    }
                }
                Work::Through(e) => self.through_element(e, work, prop),
            }
        }
    }

    /// Inside element `i`, agnostic ports linked by its flow code share a
    /// mode; linked ports decided differently are an error (reported once
    /// per element). Each port that takes a mode is revisited.
    fn through_element(&mut self, i: usize, work: &mut VecDeque<Work>, prop: &mut Propagation) {
        let flow = &prop.flows[i];
        for ip in 0..self.inputs[i].len() {
            if !self.input_agnostic[i][ip] {
                continue;
            }
            for op in 0..self.outputs[i].len() {
                if !self.output_agnostic[i][op] || !flow.flows(ip, op) {
                    continue;
                }
                let (a, b) = (self.inputs[i][ip], self.outputs[i][op]);
                if a == b {
                    continue;
                }
                if a == Mode::Agnostic {
                    self.inputs[i][ip] = b;
                    prop.links.revisit(i, true, ip, work);
                } else if b == Mode::Agnostic {
                    self.outputs[i][op] = a;
                    prop.links.revisit(i, false, op, work);
                } else if self.mixed.insert(i) {
                    let info = &prop.info[i];
                    // Click names no landmark here; the rich form does.
                    prop.errors.push((
                        i,
                        diag(
                            &info.landmark,
                            format!(
                                "agnostic {} in mixed context: {} input {ip}, {} output {op}",
                                elem_desc(info),
                                a.name(),
                                b.name()
                            ),
                        )
                        .without_plain_landmark(),
                    ));
                }
            }
        }
    }

    /// The next port still agnostic at or after element `*cursor`, in
    /// element order, inputs before outputs: `(element, is_input, port)`.
    fn next_agnostic(&self, cursor: &mut usize) -> Option<(usize, bool, usize)> {
        while *cursor < self.inputs.len() {
            let i = *cursor;
            if let Some(p) = self.inputs[i].iter().position(|m| *m == Mode::Agnostic) {
                return Some((i, true, p));
            }
            if let Some(p) = self.outputs[i].iter().position(|m| *m == Mode::Agnostic) {
                return Some((i, false, p));
            }
            *cursor += 1;
        }
        None
    }

    /// Records the resolved modes, and which ports were agnostic, in `info`.
    fn store(self, info: &mut [ElementInfo]) {
        let ports = self
            .inputs
            .into_iter()
            .zip(self.outputs)
            .zip(self.input_agnostic.into_iter().zip(self.output_agnostic));
        for (x, ((inputs, outputs), (in_ag, out_ag))) in info.iter_mut().zip(ports) {
            x.input_modes = inputs;
            x.output_modes = outputs;
            x.input_agnostic = in_ag;
            x.output_agnostic = out_ag;
        }
    }
}

/// The connection checks, once modes are resolved: both ends of a
/// connection must agree (unless an end is an agnostic element already
/// reported in mixed context), a push output may feed only one input, and
/// a pull input may pull from only one output.
fn check_connections(
    core: &RouterCore,
    conns: &[Connection],
    modes: &PortModes,
    errors: &mut Vec<Diagnostic>,
    reuse_errors: &mut Vec<Diagnostic>,
) {
    let info = &core.info;
    let mut push_out_uses: HashMap<(usize, usize), usize> = HashMap::new();
    let mut pull_in_uses: HashMap<(usize, usize), usize> = HashMap::new();
    for (k, c) in conns.iter().enumerate() {
        let Some((o, i)) = modes.ends(c) else {
            continue;
        };
        if o != i {
            if !modes.mixed.contains(&c.from) && !modes.mixed.contains(&c.to) {
                let lm = core
                    .spec
                    .connection_landmarks
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| info[c.from].landmark.clone());
                // Click names no landmark here; the rich form does.
                errors.push(
                    diag(
                        &lm,
                        format!(
                            "{} {} output {} connected to {} {} input {}",
                            elem_desc(&info[c.from]),
                            o.name(),
                            c.from_port,
                            elem_desc(&info[c.to]),
                            i.name(),
                            c.to_port
                        ),
                    )
                    .without_plain_landmark(),
                );
            }
            continue;
        }
        if o == Mode::Push {
            *push_out_uses.entry((c.from, c.from_port)).or_insert(0) += 1;
        } else {
            *pull_in_uses.entry((c.to, c.to_port)).or_insert(0) += 1;
        }
    }
    // Like Click: reused pull inputs, then reused push outputs, each in
    // element and port order, at the element's declaration.
    let mut ins: Vec<_> = pull_in_uses.into_iter().filter(|x| x.1 > 1).collect();
    ins.sort();
    for ((e, p), _) in ins {
        reuse_errors.push(diag(
            &info[e].landmark,
            format!("illegal reuse of {} pull input {p}", elem_desc(&info[e])),
        ));
    }
    let mut outs: Vec<_> = push_out_uses.into_iter().filter(|x| x.1 > 1).collect();
    outs.sort();
    for ((e, p), _) in outs {
        reuse_errors.push(diag(
            &info[e].landmark,
            format!("illegal reuse of {} push output {p}", elem_desc(&info[e])),
        ));
    }
}
