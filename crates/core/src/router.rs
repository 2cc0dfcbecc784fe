//! Building a router from a [`RouterSpec`], checking it, and running it.
//!
//! Installation follows Click's stages: instantiate every element; check
//! port counts against connections; configure (in configure-phase order);
//! resolve push and pull and check every connection (the paper's Figure 4
//! errors); initialize. Every error of a stage is reported, as
//! `file:line: message`, and nothing runs if any stage failed.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rclick_lang::{Diagnostic, Landmark, RouterSpec};

use crate::batch::Batch;
use crate::ctx::{Ctx, Dispatcher, InitCtx};
use crate::element::{Element, HandlerSpec, Registry};
use crate::packet::Packet;
use crate::ports::{FlowCode, Mode, PortCount, Processing};
use crate::sched::{
    NotifierSignal, Scheduler, SignalId, SignalState, TaskId, Timers, DEFAULT_TICKETS,
};
use crate::time::{Clock, Timestamp};

const NONE: u32 = u32::MAX;

/// Longest the idle driver blocks in one `poll`, so the stop flag (raised
/// by a signal handler) is noticed promptly.
const IDLE_POLL_MS: i32 = 20;

/// Connections in the forms the runtime needs: a flat table of push
/// targets and pull sources for the hot path, adjacency lists for context
/// searches and the `ports` handler.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    out_base: Vec<usize>,
    push_target: Vec<(u32, u32)>,
    in_base: Vec<usize>,
    pull_source: Vec<(u32, u32)>,
    /// outs[e][port] = connected (element, input port) pairs.
    pub outs: Vec<Vec<Vec<(usize, usize)>>>,
    /// ins[e][port] = connected (element, output port) pairs.
    pub ins: Vec<Vec<Vec<(usize, usize)>>>,
}

impl Graph {
    /// The one input a push output feeds. `out_base` has a sentinel entry
    /// past the last element, so this is two loads and a compare.
    #[inline]
    pub fn push_target(&self, elem: usize, port: usize) -> Option<(usize, usize)> {
        let (&base, &next) = (self.out_base.get(elem)?, self.out_base.get(elem + 1)?);
        if port >= next - base {
            return None;
        }
        let (d, p) = self.push_target[base + port];
        (d != NONE).then_some((d as usize, p as usize))
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
}

/// Names that AddressInfo gives to addresses.
#[derive(Clone, Debug, Default)]
pub struct AddressEntry {
    pub ipv4: Option<Ipv4Addr>,
    pub ipv4_prefix: Option<(Ipv4Addr, u8)>,
    pub ipv6: Option<Ipv6Addr>,
    pub ipv6_prefix: Option<(Ipv6Addr, u8)>,
    pub ether: Option<[u8; 6]>,
}

/// Router-wide runtime state: clock, scheduler, timers, signals, run count.
pub struct Runtime {
    pub clock: Clock,
    pub(crate) sched: RefCell<Scheduler>,
    pub(crate) timers: RefCell<Timers>,
    signals: RefCell<Vec<SignalState>>,
    pub(crate) runcount: Cell<i32>,
    pub(crate) schedule_info: RefCell<Vec<(String, f64)>>,
    pub(crate) driver_manager: Cell<Option<usize>>,
    pub(crate) address_info: RefCell<HashMap<String, AddressEntry>>,
    pub(crate) selects: RefCell<crate::select::Selects>,
    /// When set, chatter is collected here instead of printed (tests).
    captured: RefCell<Option<Vec<String>>>,
}

impl Runtime {
    fn new(clock: Clock) -> Self {
        Runtime {
            clock,
            sched: RefCell::new(Scheduler::default()),
            timers: RefCell::new(Timers::default()),
            signals: RefCell::new(Vec::new()),
            runcount: Cell::new(1),
            schedule_info: RefCell::new(Vec::new()),
            driver_manager: Cell::new(None),
            address_info: RefCell::new(HashMap::new()),
            selects: RefCell::new(crate::select::Selects::default()),
            captured: RefCell::new(None),
        }
    }

    pub(crate) fn new_signal(&self, active: bool) -> SignalId {
        let mut s = self.signals.borrow_mut();
        s.push(SignalState {
            active,
            listeners: Vec::new(),
        });
        SignalId(s.len() as u32 - 1)
    }

    pub(crate) fn add_listener(&self, s: SignalId, t: TaskId) {
        if let Some(st) = self.signals.borrow_mut().get_mut(s.0 as usize) {
            if !st.listeners.contains(&t) {
                st.listeners.push(t);
            }
        }
    }

    pub(crate) fn set_signal(&self, s: SignalId, active: bool) {
        let mut sigs = self.signals.borrow_mut();
        let Some(st) = sigs.get_mut(s.0 as usize) else {
            return;
        };
        let rising = active && !st.active;
        st.active = active;
        if rising {
            let mut sched = self.sched.borrow_mut();
            for t in &st.listeners {
                sched.schedule(*t);
            }
        }
    }

    pub(crate) fn signal_active(&self, sig: &NotifierSignal) -> bool {
        match sig {
            NotifierSignal::Idle => false,
            NotifierSignal::Busy => true,
            NotifierSignal::Signals(ids) => {
                let sigs = self.signals.borrow();
                ids.iter()
                    .any(|i| sigs.get(i.0 as usize).is_some_and(|s| s.active))
            }
        }
    }

    pub(crate) fn adjust_runcount(&self, delta: i32) {
        self.runcount.set(self.runcount.get().saturating_add(delta));
    }

    /// Tickets for a task of `elem`: ScheduleInfo parameters apply to the
    /// named element and to everything inside a compound of that name.
    pub(crate) fn tickets_for(&self, elem: &str) -> u32 {
        let info = self.schedule_info.borrow();
        let mut best: Option<(usize, f64)> = None;
        for (name, param) in info.iter() {
            let matches = elem == name
                || (elem.starts_with(name.as_str()) && elem[name.len()..].starts_with('/'));
            if matches && best.is_none_or(|(len, _)| name.len() >= len) {
                best = Some((name.len(), *param));
            }
        }
        match best {
            Some((_, p)) => {
                ((p * DEFAULT_TICKETS as f64).round() as i64).clamp(1, i64::from(u32::MAX)) as u32
            }
            None => DEFAULT_TICKETS,
        }
    }

    pub(crate) fn chatter(&self, msg: &str) {
        if let Some(buf) = self.captured.borrow_mut().as_mut() {
            buf.push(msg.to_string());
            return;
        }
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{msg}");
    }
}

/// Per-element bookkeeping the runtime keeps beside the element itself.
pub(crate) struct ElementInfo {
    pub name: String,
    pub class: String,
    pub config: RefCell<String>,
    pub landmark: Landmark,
    pub ninputs: usize,
    pub noutputs: usize,
    pub input_modes: Vec<Mode>,
    pub output_modes: Vec<Mode>,
    pub input_agnostic: Vec<bool>,
    pub output_agnostic: Vec<bool>,
    pub tasks: RefCell<Vec<TaskId>>,
}

/// Everything a running router is made of except the dispatcher's buffers.
pub struct RouterCore {
    pub(crate) elements: Vec<RefCell<Box<dyn Element>>>,
    pub(crate) info: Vec<ElementInfo>,
    pub(crate) graph: Graph,
    pub(crate) rt: Runtime,
    pub(crate) spec: RouterSpec,
    config_text: String,
    class_names: Vec<String>,
    hotswap: bool,
    by_name: HashMap<String, usize>,
    /// What built this router, kept so `hotconfig` can build the next one.
    registry: Registry,
    options: RouterOptions,
    /// A new router built by `hotconfig`, installed at the next safe point.
    pending_swap: RefCell<Option<Box<Router>>>,
}

/// Options for building a router.
#[derive(Clone, Debug, Default)]
pub struct RouterOptions {
    /// Simulated time starting here (`--simtime`).
    pub simtime: Option<Timestamp>,
    /// Allow hot reconfiguration (`-R`): adds the `hotconfig` handler.
    pub hotswap: bool,
    /// Collect chatter in memory instead of printing it (tests).
    pub capture_chatter: bool,
    /// Variables and library path used to parse `hotconfig` text.
    pub parse: rclick_lang::ParseOptions,
    /// Set by hot swap when it builds a router to replace a running one;
    /// leave false otherwise.
    pub successor: bool,
    /// Elements the driver adds to every configuration (`-p`, `-u` control
    /// sockets): `hotconfig` appends them to the new configuration too,
    /// unless it declares an element of the same name.
    pub extra_elements: Vec<rclick_lang::ElementDecl>,
}

fn elem_desc(info: &ElementInfo) -> String {
    format!("'{} :: {}'", info.name, info.class)
}

fn diag(landmark: &Landmark, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(landmark.clone(), msg)
}

/// Configure-phase order: information elements (ScheduleInfo,
/// AddressInfo) before everything else, as in Click.
fn configure_phase(class: &str) -> u8 {
    match class {
        "AddressInfo" | "ScheduleInfo" | "PortInfo" | "AlignmentInfo" | "ScheduleLinux" => 0,
        _ => 1,
    }
}

impl RouterCore {
    pub(crate) fn find_element(&self, name: &str, context: Option<&str>) -> Option<usize> {
        if let Some(ctx) = context {
            // Names inside a compound resolve relative to it first.
            let mut prefix = ctx;
            while let Some(pos) = prefix.rfind('/') {
                prefix = &prefix[..pos];
                if let Some(&i) = self.by_name.get(&format!("{prefix}/{name}")) {
                    return Some(i);
                }
            }
        }
        if let Some(&i) = self.by_name.get(name) {
            return Some(i);
        }
        // Click also accepts 1-based element numbers.
        match name.parse::<usize>() {
            Ok(n) if n >= 1 && n <= self.info.len() => Some(n - 1),
            _ => None,
        }
    }

    /// Splits `elem.handler` (or a global `handler`) and finds the element.
    pub(crate) fn resolve_handler(
        &self,
        path: &str,
        context: Option<&str>,
    ) -> Result<(Option<usize>, String), String> {
        let path = path.trim();
        match path.split_once('.') {
            None => Ok((None, path.to_string())),
            Some(("", h)) | Some(("0", h)) => Ok((None, h.to_string())),
            Some((e, h)) => match self.find_element(e, context) {
                Some(i) => Ok((Some(i), h.to_string())),
                None => Err(format!("no element named '{e}'")),
            },
        }
    }

    /// Every handler of element `e`, standard ones first.
    pub(crate) fn element_handlers(&self, e: usize) -> Vec<HandlerSpec> {
        let mut v = vec![
            HandlerSpec::read("name"),
            HandlerSpec::read("class"),
            HandlerSpec::read("config"),
            HandlerSpec::read("ports"),
            HandlerSpec::read("handlers"),
        ];
        if let Ok(el) = self.elements[e].try_borrow() {
            if el.can_live_reconfigure() {
                v[2] = HandlerSpec::read_write("config");
            }
            v.extend(el.handlers());
        }
        if !self.info[e].tasks.borrow().is_empty() {
            v.push(HandlerSpec::read("scheduled"));
            v.push(HandlerSpec::read_write("tickets"));
            v.push(HandlerSpec::read("home_thread"));
        }
        v
    }

    pub(crate) fn global_handlers(&self) -> Vec<HandlerSpec> {
        let mut v: Vec<HandlerSpec> = [
            "version",
            "driver",
            "config",
            "flatconfig",
            "list",
            "classes",
            "requirements",
            "handlers",
            "runcount",
        ]
        .iter()
        .map(|n| HandlerSpec::read(n))
        .collect();
        v.push(HandlerSpec::write("stop"));
        if self.hotswap {
            v.push(HandlerSpec::write("hotconfig"));
        }
        if self.rt.clock.is_simulated() {
            v.push(HandlerSpec::write("timewarp"));
        }
        v
    }

    fn ports_text(&self, e: usize) -> String {
        let info = &self.info[e];
        let plural = |n: usize, w: &str| format!("{n} {w}{}\n", if n == 1 { "" } else { "s" });
        let mut s = plural(info.ninputs, "input");
        for p in 0..info.ninputs {
            s.push_str(info.input_modes.get(p).map_or("push", |m| m.name()));
            if info.input_agnostic.get(p).copied().unwrap_or(false) {
                s.push('~');
            }
            s.push_str("\t-\t");
            let peers: Vec<String> = self.graph.ins[e][p]
                .iter()
                .map(|&(src, sp)| format!("{} [{sp}]", self.info[src].name))
                .collect();
            s.push_str(&peers.join(", "));
            s.push('\n');
        }
        s.push_str(&plural(info.noutputs, "output"));
        for p in 0..info.noutputs {
            s.push_str(info.output_modes.get(p).map_or("push", |m| m.name()));
            if info.output_agnostic.get(p).copied().unwrap_or(false) {
                s.push('~');
            }
            s.push_str("\t-\t");
            let peers: Vec<String> = self.graph.outs[e][p]
                .iter()
                .map(|&(dst, dp)| format!("[{dp}] {}", self.info[dst].name))
                .collect();
            s.push_str(&peers.join(", "));
            s.push('\n');
        }
        s
    }

    /// Reads a handler. `elem == None` means a global handler.
    pub(crate) fn read_handler(
        &self,
        elem: Option<usize>,
        name: &str,
        param: Option<&str>,
        ctx: &Ctx,
    ) -> Result<String, String> {
        let Some(e) = elem else {
            return self.read_global(name);
        };
        let info = &self.info[e];
        let specs = self.element_handlers(e);
        let Some(spec) = specs.iter().find(|h| h.name == name) else {
            return Err(format!("no '{}.{name}' handler", info.name));
        };
        if !spec.is_read() {
            return Err(format!("'{}.{name}' is a write handler", info.name));
        }
        let tasks = info.tasks.borrow();
        match name {
            "name" => return Ok(info.name.clone()),
            "class" => return Ok(info.class.clone()),
            "config" => return Ok(info.config.borrow().clone()),
            "ports" => return Ok(self.ports_text(e)),
            "handlers" => {
                let mut s = String::new();
                for h in &specs {
                    if h.flags & crate::element::hflags::PRIVATE == 0 {
                        s.push_str(&format!("{}\t{}\n", h.name, h.flag_string()));
                    }
                }
                return Ok(s);
            }
            "scheduled" if !tasks.is_empty() => {
                let sched = self.rt.sched.borrow();
                return Ok(tasks.iter().any(|t| sched.is_scheduled(*t)).to_string());
            }
            "tickets" if !tasks.is_empty() => {
                return Ok(self.rt.sched.borrow().tasks[tasks[0].0 as usize]
                    .tickets
                    .to_string());
            }
            "home_thread" if !tasks.is_empty() => {
                return Ok(self.rt.sched.borrow().tasks[tasks[0].0 as usize]
                    .home_thread
                    .to_string());
            }
            _ => {}
        }
        drop(tasks);
        let el = self.elements[e]
            .try_borrow()
            .map_err(|_| format!("'{}.{name}': element is busy", info.name))?;
        el.read_handler(name, param, ctx)
    }

    fn read_global(&self, name: &str) -> Result<String, String> {
        Ok(match name {
            "version" => crate::VERSION.to_string(),
            "driver" => "userlevel".to_string(),
            "config" => {
                if self.spec.requirements.iter().any(|r| r == "compact_config") {
                    rclick_lang::flatten(&self.spec)
                } else {
                    self.config_text.clone()
                }
            }
            "flatconfig" => rclick_lang::flatten(&self.spec),
            "list" => {
                let mut s = format!("{}\n", self.info.len());
                for i in &self.info {
                    s.push_str(&i.name);
                    s.push('\n');
                }
                s
            }
            "classes" => self.class_names.iter().map(|c| format!("{c}\n")).collect(),
            "requirements" => self
                .spec
                .requirements
                .iter()
                .map(|c| format!("{c}\n"))
                .collect(),
            "handlers" => self
                .global_handlers()
                .iter()
                .map(|h| format!("{}\t{}\n", h.name, h.flag_string()))
                .collect(),
            "runcount" => self.rt.runcount.get().to_string(),
            "stop" | "hotconfig" | "timewarp" => {
                return Err(format!("'{name}' is a write handler"))
            }
            _ => return Err(format!("no '{name}' handler")),
        })
    }

    /// Writes a handler. `elem == None` means a global handler.
    pub(crate) fn write_handler(
        &self,
        elem: Option<usize>,
        name: &str,
        value: &str,
        ctx: &mut Ctx,
    ) -> Result<(), String> {
        let Some(e) = elem else {
            return self.write_global(name, value);
        };
        let info = &self.info[e];
        let specs = self.element_handlers(e);
        let Some(spec) = specs.iter().find(|h| h.name == name) else {
            return Err(format!("no '{}.{name}' handler", info.name));
        };
        if !spec.is_write() {
            return Err(format!("'{}.{name}' is a read handler", info.name));
        }
        if name == "tickets" {
            let n: u32 = value
                .trim()
                .parse()
                .map_err(|_| "expected integer".to_string())?;
            for t in info.tasks.borrow().iter() {
                self.rt.sched.borrow_mut().set_tickets(*t, n);
            }
            return Ok(());
        }
        let mut el = self.elements[e]
            .try_borrow_mut()
            .map_err(|_| format!("'{}.{name}': element is busy", info.name))?;
        if name == "config" {
            let mut ictx = InitCtx::new(self, e);
            el.configure(value, &mut ictx)
                .map_err(|errs| errs.to_string())?;
            *info.config.borrow_mut() = value.to_string();
            return Ok(());
        }
        let saved = ctx.enter(e);
        let r = el.write_handler(name, value, ctx);
        drop(el);
        ctx.finish_frame();
        ctx.leave(saved);
        r
    }

    fn write_global(&self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "stop" => {
                let n = if value.trim().is_empty() {
                    1
                } else {
                    value
                        .trim()
                        .parse::<i32>()
                        .map_err(|_| "expected integer")?
                };
                self.rt.adjust_runcount(-n);
                Ok(())
            }
            "timewarp" if self.rt.clock.is_simulated() => {
                let secs: f64 = value.trim().parse().map_err(|_| "expected time")?;
                self.rt.clock.warp(Timestamp::from_secs_f64(secs));
                Ok(())
            }
            "hotconfig" if self.hotswap => {
                let new = self.build_successor(value).map_err(|d| {
                    d.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join("\n")
                })?;
                *self.pending_swap.borrow_mut() = Some(Box::new(new));
                Ok(())
            }
            _ if self.read_global(name).is_ok() => Err(format!("'{name}' is a read handler")),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    pub(crate) fn is_successor(&self) -> bool {
        self.options.successor
    }

    /// Parses and initializes `text` as the next configuration, with this
    /// router's registry and options; simulated time continues from now.
    pub(crate) fn build_successor(&self, text: &str) -> Result<Router, Vec<Diagnostic>> {
        let outcome =
            rclick_lang::parse_router(text, "hotconfig", &self.registry, &self.options.parse);
        if outcome.has_errors() {
            return Err(outcome
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .collect());
        }
        let mut spec = outcome.spec.ok_or_else(Vec::new)?;
        for extra in &self.options.extra_elements {
            if !spec.elements.iter().any(|e| e.name == extra.name) {
                spec.elements.push(extra.clone());
            }
        }
        let mut opts = self.options.clone();
        opts.successor = true;
        if self.rt.clock.is_simulated() {
            opts.simtime = Some(self.rt.clock.now());
        }
        Router::new(spec, text, &self.registry, &opts)
    }

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

/// A runnable router.
pub struct Router {
    core: RouterCore,
    disp: Dispatcher,
    ready: Vec<(std::os::fd::RawFd, usize, bool, bool)>,
    stop_flag: Arc<AtomicBool>,
    cleaned_up: bool,
}

/// Why [`Router::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The run count fell to zero (a `STOP true` source, a Script `stop`,
    /// the `stop` handler) and no DriverManager objected.
    Stopped,
    /// Nothing could ever happen again: no scheduled task, no timer.
    Quiescent,
    /// The external stop flag was raised (a signal).
    Signalled,
    /// The iteration limit given to [`Router::run_limited`] was reached.
    Limit,
}

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
        let mut errors: Vec<Diagnostic> = Vec::new();
        let n = spec.elements.len();

        // 1. Instantiate.
        let mut elements: Vec<RefCell<Box<dyn Element>>> = Vec::with_capacity(n);
        for decl in &spec.elements {
            match registry.get(&decl.class) {
                Some(class) => elements.push(RefCell::new((class.create)())),
                None => {
                    errors.push(diag(
                        &decl.landmark,
                        format!("unknown element class '{}'", decl.class),
                    ));
                    elements.push(RefCell::new(Box::new(crate::Placeholder)));
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }

        // 2. Port counts.
        let mut used_in = vec![0usize; n];
        let mut used_out = vec![0usize; n];
        for c in &spec.connections {
            used_out[c.from] = used_out[c.from].max(c.from_port + 1);
            used_in[c.to] = used_in[c.to].max(c.to_port + 1);
        }
        let mut info: Vec<ElementInfo> = Vec::with_capacity(n);
        for (i, decl) in spec.elements.iter().enumerate() {
            info.push(ElementInfo {
                name: decl.name.clone(),
                class: decl.class.clone(),
                config: RefCell::new(decl.config.clone()),
                landmark: decl.landmark.clone(),
                ninputs: used_in[i],
                noutputs: used_out[i],
                input_modes: Vec::new(),
                output_modes: Vec::new(),
                input_agnostic: Vec::new(),
                output_agnostic: Vec::new(),
                tasks: RefCell::new(Vec::new()),
            });
        }
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
            for (k, c) in spec.connections.iter().enumerate() {
                let lm = &spec
                    .connection_landmarks
                    .get(k)
                    .unwrap_or(&info[i].landmark)
                    .clone();
                if c.to == i && c.to_port >= info[i].ninputs {
                    errors.push(diag(
                        lm,
                        format!("{} has no input {}", elem_desc(&info[i]), c.to_port),
                    ));
                    port_ok[i] = false;
                }
                if c.from == i && c.from_port >= info[i].noutputs {
                    errors.push(diag(
                        lm,
                        format!("{} has no output {}", elem_desc(&info[i]), c.from_port),
                    ));
                    port_ok[i] = false;
                }
            }
        }
        // Adjacency, then "unused" checks.
        let mut outs: Vec<Vec<Vec<(usize, usize)>>> =
            info.iter().map(|x| vec![Vec::new(); x.noutputs]).collect();
        let mut ins: Vec<Vec<Vec<(usize, usize)>>> =
            info.iter().map(|x| vec![Vec::new(); x.ninputs]).collect();
        for c in &spec.connections {
            if c.from_port < info[c.from].noutputs && c.to_port < info[c.to].ninputs {
                if !outs[c.from][c.from_port].contains(&(c.to, c.to_port)) {
                    outs[c.from][c.from_port].push((c.to, c.to_port));
                }
                if !ins[c.to][c.to_port].contains(&(c.from, c.from_port)) {
                    ins[c.to][c.to_port].push((c.from, c.from_port));
                }
            }
        }
        // A port named by any connection counts as used, even when the other
        // end was invalid, so one bad connection yields one error.
        let mut named_in: HashSet<(usize, usize)> = HashSet::new();
        let mut named_out: HashSet<(usize, usize)> = HashSet::new();
        for c in &spec.connections {
            named_out.insert((c.from, c.from_port));
            named_in.insert((c.to, c.to_port));
        }
        for i in 0..n {
            if !port_ok[i] {
                continue;
            }
            for (p, peers) in ins[i].iter().enumerate() {
                if peers.is_empty() && !named_in.contains(&(i, p)) {
                    errors.push(diag(
                        &info[i].landmark,
                        format!("{} input {p} unused", elem_desc(&info[i])),
                    ));
                }
            }
            for (p, peers) in outs[i].iter().enumerate() {
                if peers.is_empty() && !named_out.contains(&(i, p)) {
                    errors.push(diag(
                        &info[i].landmark,
                        format!("{} output {p} unused", elem_desc(&info[i])),
                    ));
                }
            }
        }

        let clock = match opts.simtime {
            Some(t) => Clock::simulated(t),
            None => Clock::real(),
        };
        let rt = Runtime::new(clock);
        if opts.capture_chatter {
            *rt.captured.borrow_mut() = Some(Vec::new());
        }
        let by_name = info
            .iter()
            .enumerate()
            .map(|(i, x)| (x.name.clone(), i))
            .collect();
        let mut core = RouterCore {
            elements,
            info,
            graph: Graph {
                outs,
                ins,
                ..Graph::default()
            },
            rt,
            spec,
            config_text: config_text.to_string(),
            class_names: registry.names().map(str::to_string).collect(),
            hotswap: opts.hotswap,
            by_name,
            registry: registry.clone(),
            options: opts.clone(),
            pending_swap: RefCell::new(None),
        };
        if !errors.is_empty() {
            errors.push(Diagnostic::error(
                Landmark::new("", 0),
                "Router could not be initialized!",
            ));
            return Err(errors);
        }

        // 3. Configure, information elements first.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| configure_phase(&core.info[i].class));
        let mut failed = false;
        for &i in &order {
            let conf = core.info[i].config.borrow().clone();
            let mut ictx = InitCtx::new(&core, i);
            let r = core.elements[i].borrow_mut().configure(&conf, &mut ictx);
            if let Err(errs) = r {
                failed = true;
                errors.push(diag(
                    &core.info[i].landmark,
                    format!("While configuring {}:", elem_desc(&core.info[i])),
                ));
                for m in errs.0 {
                    errors.push(Diagnostic::error(Landmark::new("", 0), format!("  {m}")));
                }
            }
        }

        // 4. Push and pull.
        if let Err(mut errs) = resolve_processing(&mut core) {
            errors.append(&mut errs);
            failed = true;
        }
        build_tables(&mut core);

        if failed {
            errors.push(Diagnostic::error(
                Landmark::new("", 0),
                "Router could not be initialized!",
            ));
            return Err(errors);
        }

        // 5. Initialize.
        for &i in &order {
            let mut ictx = InitCtx::new(&core, i);
            let r = core.elements[i].borrow_mut().initialize(&mut ictx);
            if let Err(errs) = r {
                failed = true;
                errors.push(diag(
                    &core.info[i].landmark,
                    format!("While initializing {}:", elem_desc(&core.info[i])),
                ));
                for m in errs.0 {
                    errors.push(Diagnostic::error(Landmark::new("", 0), format!("  {m}")));
                }
            }
        }
        if failed {
            for e in &core.elements {
                e.borrow_mut().cleanup();
            }
            errors.push(Diagnostic::error(
                Landmark::new("", 0),
                "Router could not be initialized!",
            ));
            return Err(errors);
        }

        Ok(Router {
            core,
            disp: Dispatcher::new(),
            ready: Vec::new(),
            stop_flag: Arc::new(AtomicBool::new(false)),
            cleaned_up: false,
        })
    }

    /// Replaces the running configuration with `text` (hot swap). The new
    /// router is parsed and initialized first; on any error the messages
    /// are returned and this router is untouched. On success, elements of
    /// the new router take state from same-named elements of this one
    /// (`Element::take_state`), then the new router replaces this one.
    pub fn hotswap(&mut self, text: &str) -> Result<(), Vec<Diagnostic>> {
        let new = self.core.build_successor(text)?;
        self.install(new);
        Ok(())
    }

    /// Installs a router built by `hotconfig`, if one is waiting. The
    /// driver calls this between iterations, when no element is running.
    fn apply_pending_swap(&mut self) -> bool {
        let pending = self.core.pending_swap.borrow_mut().take();
        match pending {
            Some(new) => {
                self.install(*new);
                true
            }
            None => false,
        }
    }

    fn install(&mut self, mut new: Router) {
        for i in 0..new.core.info.len() {
            let Some(&old_idx) = self.core.by_name.get(&new.core.info[i].name) else {
                continue;
            };
            let (Ok(mut ne), Ok(mut oe)) = (
                new.core.elements[i].try_borrow_mut(),
                self.core.elements[old_idx].try_borrow_mut(),
            ) else {
                continue;
            };
            let mut ictx = InitCtx::new(&new.core, i);
            ne.take_state(&mut **oe, &mut ictx);
        }
        new.stop_flag = self.stop_flag.clone();
        std::mem::swap(self, &mut new);
        // `new` is now the old router: dropping it runs its cleanup.
        drop(new);
    }

    /// A flag that, when raised from anywhere (a signal handler), makes
    /// [`Router::run`] return soon.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop_flag.clone()
    }

    pub fn nelements(&self) -> usize {
        self.core.info.len()
    }

    pub fn element_name(&self, i: usize) -> Option<&str> {
        self.core.info.get(i).map(|x| x.name.as_str())
    }

    pub fn element_class(&self, i: usize) -> Option<&str> {
        self.core.info.get(i).map(|x| x.class.as_str())
    }

    pub fn find_element(&self, name: &str) -> Option<usize> {
        self.core.find_element(name, None)
    }

    /// Resolved modes of element `i`'s inputs and outputs.
    pub fn port_modes(&self, i: usize) -> (Vec<Mode>, Vec<Mode>) {
        self.core
            .info
            .get(i)
            .map(|x| (x.input_modes.clone(), x.output_modes.clone()))
            .unwrap_or_default()
    }

    pub fn spec(&self) -> &RouterSpec {
        &self.core.spec
    }

    pub fn clock(&self) -> &Clock {
        &self.core.rt.clock
    }

    /// Handlers of element `i` (standard ones included).
    pub fn element_handlers(&self, i: usize) -> Vec<HandlerSpec> {
        self.core.element_handlers(i)
    }

    pub fn global_handlers(&self) -> Vec<HandlerSpec> {
        self.core.global_handlers()
    }

    /// Runs `f` with a concrete element, for tests and state transfer.
    pub fn with_element<T: Element + 'static, R>(
        &self,
        name: &str,
        f: impl FnOnce(&T) -> R,
    ) -> Option<R> {
        let i = self.find_element(name)?;
        let e = self.core.elements[i].try_borrow().ok()?;
        e.as_any().downcast_ref::<T>().map(f)
    }

    /// Chatter collected when built with `capture_chatter`.
    pub fn take_chatter(&self) -> Vec<String> {
        self.core
            .rt
            .captured
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Reads a handler given as `elem.name` or a global `name`.
    pub fn read_handler(&mut self, path: &str, param: Option<&str>) -> Result<String, String> {
        let (elem, name) = self.core.resolve_handler(path, None)?;
        let ctx = Ctx::new(&self.core, &mut self.disp, elem.unwrap_or(0));
        self.core.read_handler(elem, &name, param, &ctx)
    }

    /// Writes a handler given as `elem.name` or a global `name`.
    pub fn write_handler(&mut self, path: &str, value: &str) -> Result<(), String> {
        let (elem, name) = self.core.resolve_handler(path, None)?;
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem.unwrap_or(0));
        let r = self.core.write_handler(elem, &name, value, &mut ctx);
        ctx.run_deferred();
        self.apply_pending_swap();
        r
    }

    /// Pushes a packet into input `port` of element `elem` and runs
    /// everything that follows (tests, benchmarks, I/O glue).
    pub fn inject(&mut self, elem: usize, port: usize, batch: Batch) {
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
        let saved = ctx.enter(elem);
        if let Ok(mut e) = self.core.elements[elem].try_borrow_mut() {
            e.push(port, batch, &mut ctx);
        }
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
    }

    /// Convenience for [`Router::inject`] with one packet.
    pub fn inject_packet(&mut self, elem: usize, port: usize, p: Packet) {
        self.inject(elem, port, Batch::single(p));
    }

    /// Pulls from output `port` of element `elem` (tests).
    pub fn pull_from(&mut self, elem: usize, port: usize, max: usize) -> Option<Batch> {
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
        let saved = ctx.enter(elem);
        let r = match self.core.elements[elem].try_borrow_mut() {
            Ok(mut e) => e.pull(port, max, &mut ctx),
            Err(_) => None,
        };
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
        r
    }

    fn run_task(&mut self, t: TaskId) {
        let elem = self.core.rt.sched.borrow().tasks[t.0 as usize].elem;
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
        ctx.set_current_task(Some(t));
        let saved = ctx.enter(elem);
        if let Ok(mut e) = self.core.elements[elem].try_borrow_mut() {
            e.run_task(t, &mut ctx);
        }
        let again = ctx.take_reschedule();
        ctx.set_current_task(None);
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
        if again {
            self.core.rt.sched.borrow_mut().schedule(t);
        }
    }

    fn run_timers(&mut self) -> usize {
        let now = self.core.rt.clock.now();
        let mut fired = 0;
        // Bound the loop so a timer rescheduling itself at `now` cannot
        // starve tasks.
        let limit = self.core.rt.timers.borrow().timers.len() * 2 + 8;
        while fired < limit {
            let Some(id) = self.core.rt.timers.borrow_mut().pop_expired(now) else {
                break;
            };
            let elem = self.core.rt.timers.borrow().timers[id.0 as usize].elem;
            let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
            let saved = ctx.enter(elem);
            if let Ok(mut e) = self.core.elements[elem].try_borrow_mut() {
                e.run_timer(id, &mut ctx);
            }
            ctx.finish_frame();
            ctx.leave(saved);
            ctx.run_deferred();
            fired += 1;
        }
        fired
    }

    /// Whether the driver should stop now; consults the DriverManager.
    fn check_stop(&mut self) -> bool {
        if self.core.rt.runcount.get() > 0 {
            return false;
        }
        let Some(dm) = self.core.rt.driver_manager.get() else {
            return true;
        };
        let mut ctx = Ctx::new(&self.core, &mut self.disp, dm);
        let saved = ctx.enter(dm);
        let stop = match self.core.elements[dm].try_borrow_mut() {
            Ok(mut e) => e.driver_stop_event(&mut ctx),
            Err(_) => true,
        };
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
        stop && self.core.rt.runcount.get() <= 0
    }

    /// Runs until the run count falls to zero, nothing can happen any more,
    /// or the stop flag is raised.
    pub fn run(&mut self) -> StopReason {
        self.run_limited(u64::MAX)
    }

    /// Like [`Router::run`], but gives up after `max_iterations` driver
    /// iterations.
    pub fn run_limited(&mut self, max_iterations: u64) -> StopReason {
        const TASKS_PER_ITERATION: usize = 64;
        let mut iter = 0u64;
        loop {
            if self.stop_flag.load(Ordering::Relaxed) {
                return StopReason::Signalled;
            }
            if iter >= max_iterations {
                return StopReason::Limit;
            }
            iter += 1;
            let mut ran = 0;
            while ran < TASKS_PER_ITERATION {
                let next = self.core.rt.sched.borrow_mut().pop();
                let Some(t) = next else { break };
                self.run_task(t);
                ran += 1;
                if self.core.rt.runcount.get() <= 0 {
                    break;
                }
            }
            self.run_timers();
            self.apply_pending_swap();
            if self.check_stop() {
                return StopReason::Stopped;
            }
            let busy = self.core.rt.sched.borrow().any_scheduled();
            if busy {
                // Look at descriptors now and then without blocking.
                if iter & 7 == 0 {
                    self.run_selects(0);
                }
                continue;
            }
            // Idle: wait for the next timer or a ready descriptor.
            let next = self.core.rt.timers.borrow_mut().next_expiry();
            let has_selects = !self.core.rt.selects.borrow().is_empty();
            match next {
                None if !has_selects => return StopReason::Quiescent,
                None => self.run_selects(IDLE_POLL_MS),
                Some(t) if self.core.rt.clock.is_simulated() => {
                    if has_selects {
                        self.run_selects(0);
                    }
                    self.core.rt.clock.advance_to(t);
                }
                Some(t) => {
                    let now = self.core.rt.clock.now();
                    let wait_ms = if t > now {
                        ((t - now).nanos() / 1_000_000 + 1).min(IDLE_POLL_MS as i64) as i32
                    } else {
                        0
                    };
                    self.run_selects(wait_ms);
                }
            }
        }
    }

    /// Polls the registered descriptors (blocking up to `timeout_ms`) and
    /// calls each ready element's `selected`.
    fn run_selects(&mut self, timeout_ms: i32) {
        let mut ready = std::mem::take(&mut self.ready);
        self.core
            .rt
            .selects
            .borrow_mut()
            .poll(timeout_ms, &mut ready);
        for &(fd, elem, r, w) in &ready {
            let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
            let saved = ctx.enter(elem);
            if let Ok(mut e) = self.core.elements[elem].try_borrow_mut() {
                e.selected(fd, r, w, &mut ctx);
            }
            ctx.finish_frame();
            ctx.leave(saved);
            ctx.run_deferred();
        }
        self.ready = ready;
        self.apply_pending_swap();
    }

    /// Tears the router down, calling every element's `cleanup` once.
    pub fn cleanup(&mut self) {
        if self.cleaned_up {
            return;
        }
        self.cleaned_up = true;
        for e in &self.core.elements {
            if let Ok(mut e) = e.try_borrow_mut() {
                e.cleanup();
            }
        }
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// Resolves agnostic ports and checks every connection (the paper's Figure
/// 4). Click's algorithm: propagate modes across connections and through
/// agnostic elements' flow codes until nothing changes; leftovers are push.
fn resolve_processing(core: &mut RouterCore) -> Result<(), Vec<Diagnostic>> {
    let n = core.info.len();
    let mut errors = Vec::new();
    let mut procs: Vec<Option<Processing>> = Vec::with_capacity(n);
    let mut flows: Vec<Option<FlowCode>> = Vec::with_capacity(n);
    for i in 0..n {
        let e = core.elements[i].borrow();
        let p = Processing::parse(e.processing());
        let f = FlowCode::parse(e.flow_code());
        if p.is_none() {
            errors.push(diag(
                &core.info[i].landmark,
                format!("{}: bad processing code", elem_desc(&core.info[i])),
            ));
        }
        if f.is_none() {
            errors.push(diag(
                &core.info[i].landmark,
                format!("{}: bad flow code", elem_desc(&core.info[i])),
            ));
        }
        procs.push(p);
        flows.push(f);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let procs: Vec<Processing> = procs
        .into_iter()
        .map(|p| p.unwrap_or_else(|| Processing::parse("a/a").expect("valid")))
        .collect();
    let flows: Vec<FlowCode> = flows
        .into_iter()
        .map(|f| f.unwrap_or_else(|| FlowCode::parse("x/x").expect("valid")))
        .collect();

    let mut inm: Vec<Vec<Mode>> = (0..n)
        .map(|i| {
            (0..core.info[i].ninputs)
                .map(|p| procs[i].input(p))
                .collect()
        })
        .collect();
    let mut outm: Vec<Vec<Mode>> = (0..n)
        .map(|i| {
            (0..core.info[i].noutputs)
                .map(|p| procs[i].output(p))
                .collect()
        })
        .collect();
    let in_ag: Vec<Vec<bool>> = inm
        .iter()
        .map(|v| v.iter().map(|m| *m == Mode::Agnostic).collect())
        .collect();
    let out_ag: Vec<Vec<bool>> = outm
        .iter()
        .map(|v| v.iter().map(|m| *m == Mode::Agnostic).collect())
        .collect();
    let mut mixed: HashSet<usize> = HashSet::new();

    // Inside element i, agnostic ports linked by the flow code share a mode.
    let spread = |i: usize,
                  inm: &mut Vec<Vec<Mode>>,
                  outm: &mut Vec<Vec<Mode>>,
                  mixed: &mut HashSet<usize>,
                  errors: &mut Vec<Diagnostic>|
     -> bool {
        let mut changed = false;
        for ip in 0..inm[i].len() {
            if !in_ag[i][ip] {
                continue;
            }
            for op in 0..outm[i].len() {
                if !out_ag[i][op] || !flows[i].flows(ip, op) {
                    continue;
                }
                let (a, b) = (inm[i][ip], outm[i][op]);
                if a == b {
                    continue;
                }
                if a == Mode::Agnostic {
                    inm[i][ip] = b;
                    changed = true;
                } else if b == Mode::Agnostic {
                    outm[i][op] = a;
                    changed = true;
                } else if mixed.insert(i) {
                    errors.push(diag(
                        &core.info[i].landmark,
                        format!(
                            "agnostic {} in mixed context: {} input {ip}, {} output {op}",
                            elem_desc(&core.info[i]),
                            a.name(),
                            b.name()
                        ),
                    ));
                }
            }
        }
        changed
    };

    let conns = core.spec.connections.clone();
    loop {
        let mut changed = false;
        for c in &conns {
            if c.from_port >= outm[c.from].len() || c.to_port >= inm[c.to].len() {
                continue;
            }
            let (o, i) = (outm[c.from][c.from_port], inm[c.to][c.to_port]);
            if o == Mode::Agnostic && i != Mode::Agnostic {
                outm[c.from][c.from_port] = i;
                changed = true;
            } else if i == Mode::Agnostic && o != Mode::Agnostic {
                inm[c.to][c.to_port] = o;
                changed = true;
            }
        }
        for i in 0..n {
            changed |= spread(i, &mut inm, &mut outm, &mut mixed, &mut errors);
        }
        if !changed {
            break;
        }
        // Nothing fixed left to propagate but agnostic groups remain:
        // default one port to push and continue, as Click does.
    }
    // Leftover agnostic ports become push; spread again so linked ports
    // agree.
    loop {
        let pick = (0..n).find_map(|i| {
            inm[i]
                .iter()
                .position(|m| *m == Mode::Agnostic)
                .map(|p| (i, true, p))
                .or_else(|| {
                    outm[i]
                        .iter()
                        .position(|m| *m == Mode::Agnostic)
                        .map(|p| (i, false, p))
                })
        });
        let Some((i, is_in, p)) = pick else { break };
        if is_in {
            inm[i][p] = Mode::Push;
        } else {
            outm[i][p] = Mode::Push;
        }
        loop {
            let mut changed = false;
            for c in &conns {
                if c.from_port >= outm[c.from].len() || c.to_port >= inm[c.to].len() {
                    continue;
                }
                let (o, ii) = (outm[c.from][c.from_port], inm[c.to][c.to_port]);
                if o == Mode::Agnostic && ii != Mode::Agnostic {
                    outm[c.from][c.from_port] = ii;
                    changed = true;
                } else if ii == Mode::Agnostic && o != Mode::Agnostic {
                    inm[c.to][c.to_port] = o;
                    changed = true;
                }
            }
            for k in 0..n {
                changed |= spread(k, &mut inm, &mut outm, &mut mixed, &mut errors);
            }
            if !changed {
                break;
            }
        }
    }

    // Connection checks.
    let mut push_out_uses: HashMap<(usize, usize), usize> = HashMap::new();
    let mut pull_in_uses: HashMap<(usize, usize), usize> = HashMap::new();
    for (k, c) in conns.iter().enumerate() {
        if c.from_port >= outm[c.from].len() || c.to_port >= inm[c.to].len() {
            continue;
        }
        let lm = core
            .spec
            .connection_landmarks
            .get(k)
            .cloned()
            .unwrap_or_else(|| core.info[c.from].landmark.clone());
        let (o, i) = (outm[c.from][c.from_port], inm[c.to][c.to_port]);
        if o != i {
            if !mixed.contains(&c.from) && !mixed.contains(&c.to) {
                errors.push(diag(
                    &lm,
                    format!(
                        "{} {} output {} connected to {} {} input {}",
                        elem_desc(&core.info[c.from]),
                        o.name(),
                        c.from_port,
                        elem_desc(&core.info[c.to]),
                        i.name(),
                        c.to_port
                    ),
                ));
            }
            continue;
        }
        if o == Mode::Push {
            let u = push_out_uses.entry((c.from, c.from_port)).or_insert(0);
            *u += 1;
            if *u == 2 {
                // Like Click, report port reuse at the element's declaration.
                errors.push(diag(
                    &core.info[c.from].landmark,
                    format!(
                        "illegal reuse of {} push output {}",
                        elem_desc(&core.info[c.from]),
                        c.from_port
                    ),
                ));
            }
        } else {
            let u = pull_in_uses.entry((c.to, c.to_port)).or_insert(0);
            *u += 1;
            if *u == 2 {
                errors.push(diag(
                    &core.info[c.to].landmark,
                    format!(
                        "illegal reuse of {} pull input {}",
                        elem_desc(&core.info[c.to]),
                        c.to_port
                    ),
                ));
            }
        }
    }

    for i in 0..n {
        core.info[i].input_modes = std::mem::take(&mut inm[i]);
        core.info[i].output_modes = std::mem::take(&mut outm[i]);
        core.info[i].input_agnostic = in_ag[i].clone();
        core.info[i].output_agnostic = out_ag[i].clone();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Flat hot-path tables: each push output's one target, each pull input's
/// one source.
fn build_tables(core: &mut RouterCore) {
    let n = core.info.len();
    let g = &mut core.graph;
    g.out_base.clear();
    g.in_base.clear();
    g.push_target.clear();
    g.pull_source.clear();
    for i in 0..n {
        g.out_base.push(g.push_target.len());
        for p in 0..core.info[i].noutputs {
            let t = if core.info[i].output_modes.get(p) == Some(&Mode::Push) {
                g.outs[i][p]
                    .first()
                    .map(|&(d, dp)| (d as u32, dp as u32))
                    .unwrap_or((NONE, NONE))
            } else {
                (NONE, NONE)
            };
            g.push_target.push(t);
        }
        g.in_base.push(g.pull_source.len());
        for p in 0..core.info[i].ninputs {
            let s = if core.info[i].input_modes.get(p) == Some(&Mode::Pull) {
                g.ins[i][p]
                    .first()
                    .map(|&(s, sp)| (s as u32, sp as u32))
                    .unwrap_or((NONE, NONE))
            } else {
                (NONE, NONE)
            };
            g.pull_source.push(s);
        }
    }
    g.out_base.push(g.push_target.len());
    g.in_base.push(g.pull_source.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::ConfigResult;

    /// Test elements: a push source, a 2-in merge, a pass-through, a
    /// 1-to-2 splitter, a Storage, and a sink. `found` records what a
    /// context search from `initialize` returned.
    struct T {
        ports: &'static str,
        proc_: &'static str,
        storage: bool,
        search: Option<(bool, usize)>,
    }

    thread_local! {
        static FOUND: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    impl Element for T {
        fn port_count(&self) -> &'static str {
            self.ports
        }
        fn processing(&self) -> &'static str {
            self.proc_
        }
        fn has_interface(&self, name: &str) -> bool {
            self.storage && name == "Storage"
        }
        fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
            if let Some((down, port)) = self.search {
                let f = |e: &dyn Element| e.has_interface("Storage");
                let r = if down {
                    ctx.downstream(Some(port), &f)
                } else {
                    ctx.upstream(Some(port), &f)
                };
                FOUND.with(|x| x.borrow_mut().extend(r));
            }
            Ok(())
        }
    }

    fn registry() -> Registry {
        let mut r = Registry::new();
        r.add("Src", || {
            Box::new(T {
                ports: "0/1",
                proc_: "h/h",
                storage: false,
                search: Some((true, 0)),
            })
        });
        r.add("Merge", || {
            Box::new(T {
                ports: "2/1",
                proc_: "h/h",
                storage: false,
                search: None,
            })
        });
        r.add("Pass", || {
            Box::new(T {
                ports: "1/1",
                proc_: "a/a",
                storage: false,
                search: None,
            })
        });
        r.add("Split", || {
            Box::new(T {
                ports: "1/2",
                proc_: "h/h",
                storage: false,
                search: None,
            })
        });
        r.add("Store", || {
            Box::new(T {
                ports: "1/1",
                proc_: "h/l",
                storage: true,
                search: None,
            })
        });
        r.add("Sink", || {
            Box::new(T {
                ports: "1/0",
                proc_: "l/l",
                storage: false,
                search: Some((false, 0)),
            })
        });
        r
    }

    #[test]
    fn context_search_stops_at_first_match_and_survives_cycles() {
        let names = [
            ("src", "Src", ""),
            ("m", "Merge", ""),
            ("p", "Pass", ""),
            ("t", "Split", ""),
            ("s", "Store", ""),
            ("k", "Sink", ""),
            ("s2", "Store", ""),
            ("k2", "Sink", ""),
            ("src2", "Src", ""),
        ];
        // src -> m -> p -> t; t[0] -> [1] m (a cycle); t[1] -> s -> k.
        // src2 -> s2 -> k2 is unreachable from src.
        let conns = [
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (2, 0, 3, 0),
            (3, 0, 1, 1),
            (3, 1, 4, 0),
            (4, 0, 5, 0),
            (6, 0, 7, 0),
            (8, 0, 6, 0),
        ];
        let spec = RouterSpec::from_lists("t", &names, &conns);
        FOUND.with(|x| x.borrow_mut().clear());
        let r = Router::new(spec, "", &registry(), &RouterOptions::default());
        assert!(
            r.is_ok(),
            "{:?}",
            r.err()
                .map(|d| d.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        );
        let mut found = FOUND.with(|x| x.borrow().clone());
        found.sort();
        // src finds s downstream (through the cycle, once); k finds s
        // upstream; src2 finds s2; k2 finds s2.
        assert_eq!(found, vec![4, 4, 6, 6]);
    }

    thread_local! {
        static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// Logs each packet it sees as `name:byte0`, then: a Loop element
    /// decrements byte 0 and sends the packet to output 0 while it is
    /// positive, else to output 1; a Fan element sends clones to outputs 0
    /// and 1 in that order; a Log element forwards to output 0 if it has one.
    struct Act {
        kind: &'static str,
    }

    impl Element for Act {
        fn port_count(&self) -> &'static str {
            match self.kind {
                "Loop" => "1/2",
                "Fan" => "0-1/2",
                _ => "0-1/0-1",
            }
        }
        fn processing(&self) -> &'static str {
            "h/h"
        }
        fn push(&mut self, _port: usize, batch: crate::Batch, ctx: &mut Ctx) {
            for mut p in batch {
                let name = ctx.element_name().to_string();
                LOG.with(|l| l.borrow_mut().push(format!("{name}:{}", p.data()[0])));
                match self.kind {
                    "Loop" => {
                        let v = p.data()[0];
                        if v > 0 {
                            p.writable()[0] = v - 1;
                            ctx.emit(0, p);
                        } else {
                            ctx.emit(1, p);
                        }
                    }
                    "Fan" => {
                        ctx.emit(0, p.clone());
                        ctx.emit(1, p);
                    }
                    _ => {
                        if ctx.noutputs() > 0 {
                            ctx.emit(0, p);
                        }
                    }
                }
            }
        }
    }

    fn act_router(names: &[(&str, &str)], conns: &[(usize, usize, usize, usize)]) -> Router {
        let mut reg = Registry::new();
        reg.add("Loop", || Box::new(Act { kind: "Loop" }));
        reg.add("Fan", || Box::new(Act { kind: "Fan" }));
        reg.add("Log", || Box::new(Act { kind: "Log" }));
        let names: Vec<(&str, &str, &str)> = names.iter().map(|(n, c)| (*n, *c, "")).collect();
        let spec = RouterSpec::from_lists("t", &names, conns);
        match Router::new(spec, "", &reg, &RouterOptions::default()) {
            Ok(r) => r,
            Err(d) => panic!("{:?}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
        }
    }

    #[test]
    fn push_cycles_run_without_reentry() {
        // in -> l :: Loop; l[0] -> back :: Log -> l (a cycle); l[1] -> out.
        let mut r = act_router(
            &[
                ("in", "Log"),
                ("l", "Loop"),
                ("back", "Log"),
                ("out", "Log"),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 1, 0), (1, 1, 3, 0)],
        );
        LOG.with(|l| l.borrow_mut().clear());
        r.inject_packet(0, 0, Packet::from_slice(&[3]));
        let log = LOG.with(|l| l.borrow().clone());
        assert_eq!(
            log,
            ["in:3", "l:3", "back:2", "l:2", "back:1", "l:1", "back:0", "l:0", "out:0"]
        );
    }

    #[test]
    fn one_packet_sees_clicks_depth_first_order() {
        // f :: Fan; f[0] -> a :: Fan; a[0] -> a0; a[1] -> a1; f[1] -> b.
        // Click: f, a, a0, a1, b (output 0's whole subtree before output 1).
        let mut r = act_router(
            &[
                ("f", "Fan"),
                ("a", "Fan"),
                ("a0", "Log"),
                ("a1", "Log"),
                ("b", "Log"),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0), (0, 1, 4, 0)],
        );
        LOG.with(|l| l.borrow_mut().clear());
        r.inject_packet(0, 0, Packet::from_slice(&[9]));
        let log = LOG.with(|l| l.borrow().clone());
        assert_eq!(log, ["f:9", "a:9", "a0:9", "a1:9", "b:9"]);
    }

    thread_local! {
        static SELECT_FD: std::cell::Cell<i32> = const { std::cell::Cell::new(-1) };
        static SELECTED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    /// Registers the descriptor in SELECT_FD; when it is readable, reads
    /// it, records the bytes and stops the driver.
    struct Sel;

    impl Element for Sel {
        fn port_count(&self) -> &'static str {
            "0/0"
        }
        fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
            ctx.add_select(SELECT_FD.with(|f| f.get()), crate::select::Interest::READ);
            Ok(())
        }
        fn selected(&mut self, fd: std::os::fd::RawFd, readable: bool, _w: bool, ctx: &mut Ctx) {
            assert!(readable);
            let mut buf = [0u8; 16];
            // SAFETY: reading into a valid buffer from a descriptor the test owns.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            SELECTED.with(|s| s.borrow_mut().extend_from_slice(&buf[..n.max(0) as usize]));
            ctx.please_stop();
        }
    }

    #[test]
    fn idle_router_wakes_on_ready_descriptor() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        SELECT_FD.with(|f| f.set(b.as_raw_fd()));
        let mut reg = Registry::new();
        reg.add("Sel", || Box::new(Sel));
        let spec = RouterSpec::from_lists("t", &[("s", "Sel", "")], &[]);
        let mut r = Router::new(spec, "", &reg, &RouterOptions::default())
            .unwrap_or_else(|_| panic!("router"));
        // Nothing is ready: the router waits (it is not quiescent while a
        // descriptor is registered) until the iteration limit.
        assert_eq!(r.run_limited(3), StopReason::Limit);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            a.write_all(b"hi").expect("write");
            a
        });
        let started = std::time::Instant::now();
        assert_eq!(r.run(), StopReason::Stopped);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        drop(writer.join());
        assert_eq!(SELECTED.with(|s| s.borrow().clone()), b"hi");
    }

    #[test]
    fn flow_codes_limit_the_search() {
        let f = FlowCode::parse("xy/x").expect("valid");
        assert!(f.flows(0, 0) && !f.flows(1, 0));
    }
}
