//! Building a router from a [`RouterSpec`]: Click's installation stages,
//! each reporting every error it finds before installation stops.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rclick_lang::{Diagnostic, ElementDecl, Landmark, RouterSpec, Severity};

use super::graph::Graph;
use super::processing::resolve_processing;
use super::runtime::Runtime;
use super::{diag, elem_desc, ElementCell, ElementInfo, Router, RouterCore, RouterOptions};
use crate::ctx::{Dispatcher, InitCtx};
use crate::element::{Errors, Registry};
use crate::ports::PortCount;
use crate::time::Clock;

impl Router {
    /// Builds and initializes a router. On failure returns every
    /// diagnostic, ending with `Router could not be initialized!` when
    /// elements failed to configure or initialize.
    pub fn new(
        spec: RouterSpec,
        config_text: &str,
        registry: &Registry,
        opts: &RouterOptions,
    ) -> Result<Router, Vec<Diagnostic>> {
        let n = spec.elements.len();

        // 1. Instantiate.
        let elements = instantiate(&spec, registry)?;

        // 2. Port counts.
        let mut errors: Vec<Diagnostic> = Vec::new();
        let (info, port_ok) = count_ports(&spec, &elements, &mut errors);
        let graph = Graph::new(&spec.connections, &info);
        // Like Click, unused ports are checked only once every connection
        // names ports that exist.
        if errors.is_empty() {
            check_unused_ports(&spec, &info, &port_ok, &graph, &mut errors);
        }
        if !errors.is_empty() {
            return Err(could_not_initialize(errors));
        }
        let mut core = RouterCore::new(elements, info, graph, spec, config_text, registry, opts);

        // 3. Configure, information elements first.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| core.elements[i].borrow().configure_phase());
        let mut failed = !configure_all(&core, &order, &mut errors);

        // 4. Push and pull.
        if let Err(mut errs) = resolve_processing(&mut core) {
            errors.append(&mut errs);
            failed = true;
        }
        core.graph.build_tables(&core.info);
        let forwarders = core
            .elements
            .iter()
            .map(|e| e.borrow().forwards_pulls())
            .collect();
        core.graph.set_pull_forwarders(forwarders);
        for (e, info) in core.elements.iter().zip(&core.info) {
            let pull: Vec<bool> = info
                .input_modes
                .iter()
                .map(|m| *m == crate::ports::Mode::Pull)
                .collect();
            e.borrow_mut().inputs_resolved(&pull);
        }
        let chains: Vec<(bool, bool)> = core
            .elements
            .iter()
            .map(|e| {
                let e = e.borrow();
                (e.chains(), e.chain_quiet())
            })
            .collect();
        core.set_chaining(&chains);
        if failed {
            return Err(could_not_initialize(errors));
        }

        // 5. Initialize.
        if !initialize_all(&core, &order, &mut errors) {
            for e in &core.elements {
                e.borrow_mut().cleanup();
            }
            return Err(could_not_initialize(errors));
        }

        // 6. Threads: home threads, and the proof that no element that is
        // not thread-safe is reached from two.
        let thread_errors = super::threads::assign_threads(&mut core, opts.threads);
        if !thread_errors.is_empty() {
            for e in &core.elements {
                e.borrow_mut().cleanup();
            }
            return Err(could_not_initialize(thread_errors));
        }

        Ok(Router {
            core,
            disp: Dispatcher::new(),
            ready: Vec::new(),
            stop_flag: Arc::new(AtomicBool::new(false)),
            cleaned_up: false,
            install_stats: Default::default(),
            // Nothing failed, so what was reported is warnings.
            warnings: errors,
        })
    }
}

/// `errors`, closed by Click's final message.
fn could_not_initialize(mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    rclick_lang::cap_repeated(&mut errors);
    errors.push(Diagnostic::error(
        Landmark::new("", 0),
        "Router could not be initialized!",
    ));
    errors
}

/// Stage 1: an element of each declared class. Every unknown class is an
/// error.
fn instantiate(
    spec: &RouterSpec,
    registry: &Registry,
) -> Result<Vec<ElementCell>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut elements: Vec<ElementCell> = Vec::with_capacity(spec.elements.len());
    for decl in &spec.elements {
        match registry.get(&decl.class) {
            Some(class) => elements.push(ElementCell::new((class.create)())),
            None => {
                errors.push(diag(
                    &decl.landmark,
                    format!("unknown element class '{}'", decl.class),
                ));
                elements.push(ElementCell::new(Box::new(crate::Placeholder)));
            }
        }
    }
    if errors.is_empty() {
        Ok(elements)
    } else {
        Err(errors)
    }
}

/// Stage 2: each element's record, with its port counts: the ports its
/// connections use (highest connected + 1), clamped into the range its
/// class allows; an error for each connection to a port it cannot have.
/// Also returns, per element, whether its ports are sound (a parsable
/// port count and no such error).
fn count_ports(
    spec: &RouterSpec,
    elements: &[ElementCell],
    errors: &mut Vec<Diagnostic>,
) -> (Vec<ElementInfo>, Vec<bool>) {
    let n = spec.elements.len();
    let mut used_in = vec![0usize; n];
    let mut used_out = vec![0usize; n];
    for c in &spec.connections {
        used_out[c.from] = used_out[c.from].max(c.from_port + 1);
        used_in[c.to] = used_in[c.to].max(c.to_port + 1);
    }
    let mut info: Vec<ElementInfo> = spec
        .elements
        .iter()
        .enumerate()
        .map(|(i, decl)| new_info(decl, used_in[i], used_out[i]))
        .collect();
    let mut port_ok = vec![true; n];
    for i in 0..n {
        let pc_str = elements[i].borrow().port_count();
        let Some(pc) = PortCount::parse(pc_str) else {
            errors.push(diag(
                &info[i].landmark,
                format!("{}: bad port count", elem_desc(&info[i])),
            ));
            port_ok[i] = false;
            continue;
        };
        let nin = used_in[i].clamp(pc.inputs.lo, pc.inputs.hi.max(pc.inputs.lo));
        info[i].ninputs = nin;
        let orange = pc.output_range(nin);
        info[i].noutputs = used_out[i].clamp(orange.lo, orange.hi.max(orange.lo));
    }
    check_connected_ports(spec, &info, &mut port_ok, errors);
    (info, port_ok)
}

/// The record of a new element with `ninputs` and `noutputs` ports, modes
/// not yet resolved.
pub(super) fn new_info(decl: &ElementDecl, ninputs: usize, noutputs: usize) -> ElementInfo {
    ElementInfo {
        name: decl.name.clone(),
        class: decl.class.clone(),
        config: RefCell::new(decl.config.clone()),
        landmark: decl.landmark.clone(),
        ninputs,
        noutputs,
        input_modes: Vec::new(),
        output_modes: Vec::new(),
        input_agnostic: Vec::new(),
        output_agnostic: Vec::new(),
        tasks: RefCell::new(Vec::new()),
    }
}

/// Reports each connection to an input or output its element does not
/// have (`has no input N`), as Click does: connection by connection, the
/// input end before the output end, at the element's landmark (not the
/// connection's). Marks the elements concerned as unsound in `port_ok`.
fn check_connected_ports(
    spec: &RouterSpec,
    info: &[ElementInfo],
    port_ok: &mut [bool],
    errors: &mut Vec<Diagnostic>,
) {
    for c in &spec.connections {
        let to = &info[c.to];
        if c.to_port >= to.ninputs {
            errors.push(diag(
                &to.landmark,
                format!("{} has no input {}", elem_desc(to), c.to_port),
            ));
            port_ok[c.to] = false;
        }
        let from = &info[c.from];
        if c.from_port >= from.noutputs {
            errors.push(diag(
                &from.landmark,
                format!("{} has no output {}", elem_desc(from), c.from_port),
            ));
            port_ok[c.from] = false;
        }
    }
}

/// Reports each port no connection names (`input N unused`), for elements
/// whose ports are otherwise sound. A port named by any connection counts
/// as used, even when the other end was invalid, so one bad connection
/// yields one error.
fn check_unused_ports(
    spec: &RouterSpec,
    info: &[ElementInfo],
    port_ok: &[bool],
    graph: &Graph,
    errors: &mut Vec<Diagnostic>,
) {
    let mut named_in: HashSet<(usize, usize)> = HashSet::new();
    let mut named_out: HashSet<(usize, usize)> = HashSet::new();
    for c in &spec.connections {
        named_out.insert((c.from, c.from_port));
        named_in.insert((c.to, c.to_port));
    }
    // Like Click: every unused input (in element order) before any
    // unused output.
    for (i, x) in info.iter().enumerate() {
        if !port_ok[i] {
            continue;
        }
        for (p, peers) in graph.ins[i].iter().enumerate() {
            if peers.is_empty() && !named_in.contains(&(i, p)) {
                errors.push(diag(
                    &x.landmark,
                    format!("{} input {p} unused", elem_desc(x)),
                ));
            }
        }
    }
    for (i, x) in info.iter().enumerate() {
        if !port_ok[i] {
            continue;
        }
        for (p, peers) in graph.outs[i].iter().enumerate() {
            if peers.is_empty() && !named_out.contains(&(i, p)) {
                errors.push(diag(
                    &x.landmark,
                    format!("{} output {p} unused", elem_desc(x)),
                ));
            }
        }
    }
}

impl RouterCore {
    /// A router core around checked elements, with a fresh runtime.
    fn new(
        elements: Vec<ElementCell>,
        info: Vec<ElementInfo>,
        graph: Graph,
        spec: RouterSpec,
        config_text: &str,
        registry: &Registry,
        opts: &RouterOptions,
    ) -> Self {
        let clock = match opts.simtime {
            Some(t) => Clock::simulated(t),
            None => Clock::real(),
        };
        let by_name = info
            .iter()
            .enumerate()
            .map(|(i, x)| (x.name.clone(), i))
            .collect();
        RouterCore {
            elements,
            home: Box::new([]),
            shared_elems: Vec::new(),
            thread_copies: Vec::new(),
            info,
            graph,
            rt: Runtime::new(clock, opts.capture_chatter),
            spec,
            config_text: config_text.to_string(),
            bindings: RefCell::new(Vec::new()),
            hotswap: opts.hotswap,
            by_name,
            registry: registry.clone(),
            options: opts.clone(),
            pending_swap: RefCell::new(None),
            swap_job: RefCell::new(None),
            next_write_token: std::cell::Cell::new(1),
        }
    }
}

/// Stage 3: configures the elements in `order`. Returns whether every one
/// succeeded; failures go to `errors`.
fn configure_all(core: &RouterCore, order: &[usize], errors: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    for &i in order {
        let conf = core.info[i].config.borrow().clone();
        let mut ictx = InitCtx::new(core, i);
        let r = core.elements[i].borrow_mut().configure(&conf, &mut ictx);
        let warned = report_warnings(&core.info[i], "configuring", &mut ictx, r.is_ok(), errors);
        if let Err(errs) = r {
            ok = false;
            report_failure(&core.info[i], "configuring", errs, warned, errors);
            // Click passes an undefined `$N`/`$var` through literally, so
            // the element sees a stray word; rclick's rich form names it.
            if let (Some(var), Some(head)) = (
                undefined_variable(&conf),
                errors
                    .iter_mut()
                    .rev()
                    .find(|d| d.message.starts_with("While configuring")),
            ) {
                head.hint = Some(format!(
                    "'{var}' is not defined here, so the element received it literally"
                ));
            }
        }
    }
    ok
}

/// The first `$N` or `$name` left in a configuration string after
/// expansion (outside quotes).
fn undefined_variable(conf: &str) -> Option<String> {
    let b = conf.as_bytes();
    let mut quoted = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => quoted = !quoted,
            b'\\' => i += 1,
            b'$' if !quoted => {
                let end = (i + 1..b.len())
                    .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                    .unwrap_or(b.len());
                if end > i + 1 {
                    return Some(conf[i..end].to_string());
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Stage 5: initializes the elements in `order`, stopping at the first
/// failure (as Click does). Returns whether every one succeeded; the
/// failure goes to `errors`.
fn initialize_all(core: &RouterCore, order: &[usize], errors: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    for &i in order {
        let mut ictx = InitCtx::new(core, i);
        let r = core.elements[i].borrow_mut().initialize(&mut ictx);
        let warned = report_warnings(&core.info[i], "initializing", &mut ictx, r.is_ok(), errors);
        if let Err(errs) = r {
            ok = false;
            report_failure(&core.info[i], "initializing", errs, warned, errors);
            // Like Click: initialization stops at the first failure.
            break;
        }
    }
    ok
}

/// The bare lines an element said during a stage (`doing`), then its
/// warnings, under its
/// context line as Click prints them: `file:line: While configuring 'e ::
/// C':` then each, indented. The line is an error's only when the stage
/// failed. Returns whether there were any.
fn report_warnings(
    info: &ElementInfo,
    doing: &str,
    ictx: &mut InitCtx,
    succeeded: bool,
    errors: &mut Vec<Diagnostic>,
) -> bool {
    for line in ictx.take_bare() {
        let mut d = Diagnostic::error(Landmark::new("", 0), line);
        d.severity = Severity::Context;
        errors.push(d);
    }
    let warnings = ictx.take_warnings();
    if warnings.is_empty() {
        return false;
    }
    let mut head = diag(
        &info.landmark,
        format!("While {doing} {}:", elem_desc(info)),
    );
    if succeeded {
        head.severity = Severity::Context;
    }
    errors.push(head);
    for w in warnings {
        errors.push(Diagnostic::warning(Landmark::new("", 0), format!("  {w}")));
    }
    true
}

/// Click's shape for an element that failed a stage: `file:line: While
/// configuring 'e :: C':` then each message, indented. The context line
/// is left out when the element's warnings already put it there.
fn report_failure(
    info: &ElementInfo,
    doing: &str,
    errs: Errors,
    context_given: bool,
    errors: &mut Vec<Diagnostic>,
) {
    // Click prints the context line only above a message: a failure
    // without one (the Error element) shows nothing but the final line.
    if errs.0.is_empty() {
        return;
    }
    if !context_given {
        errors.push(diag(
            &info.landmark,
            format!("While {doing} {}:", elem_desc(info)),
        ));
    }
    for m in errs.0 {
        errors.push(Diagnostic::error(Landmark::new("", 0), format!("  {m}")));
    }
}
