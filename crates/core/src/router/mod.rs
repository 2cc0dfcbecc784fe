//! Building a router from a [`RouterSpec`], checking it, and running it.
//!
//! Installation follows Click's stages: instantiate every element; check
//! port counts against connections; configure (in configure-phase order);
//! resolve push and pull and check every connection (the paper's Figure 4
//! errors); initialize. Every error of a stage is reported, as
//! `file:line: message`, and nothing runs if any stage failed.
//!
//! This module holds the router's types and its accessors; the work is in
//! the submodules:
//!
//! - `install`: [`Router::new`], the installation stages;
//! - `processing`: push/pull resolution and the connection checks;
//! - `graph`: adjacency lists and the dispatcher's flat port tables;
//! - `runtime`: clock, scheduler, timers, signals, run count, chatter;
//! - `handlers`: standard, global and element handlers;
//! - `context`: flow-based router context and notifier searches;
//! - `hotswap`: building and installing the next router;
//! - `run`: the driver loop and calls into elements from outside.

mod context;
mod graph;
pub(crate) mod handlers;
mod hotswap;
mod install;
mod plugins;
mod processing;
mod run;
mod runtime;
#[cfg(test)]
mod tests;
mod threads;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rclick_lang::{Diagnostic, Landmark, RouterSpec};

use crate::ctx::Dispatcher;
use crate::element::{Element, Registry};
use crate::ports::Mode;
use crate::sched::TaskId;
use crate::time::{Clock, Timestamp};

pub(crate) use graph::Graph;
pub use hotswap::{InstallStats, WriteStart};
pub use runtime::{AddressEntry, Runtime};
pub(crate) use threads::{current_thread, set_current_thread, SHARED_BIT, WAKE_ELEM};

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

/// An element's per-thread copies, indexed by thread (`None` for its home
/// thread and threads that do not reach it).
pub(crate) type ThreadCopies = Box<[Option<ElementCell>]>;

/// An element in its `RefCell`, alone on its cache line, beside where its
/// output 0 leads when it chains. The borrow flag is written on every
/// push, and elements that different threads run sit side by side in the
/// router's table: sharing a line, they would bounce it between the cores
/// on every handoff. The chain target shares the line too, so that a
/// handoff down a chain reads one table entry with one bounds check.
#[repr(align(64))]
pub(crate) struct ElementCell {
    element: RefCell<Box<dyn Element>>,
    /// When the element [chains](Element::chains) and its output 0 pushes
    /// somewhere, that output's `(element, input port)`; `NO_CHAIN`
    /// otherwise (per-thread copies never chain: they run through
    /// `Ctx::push_shared`). A shared or copied target carries `SHARED_BIT`,
    /// as in the graph's tables. Kept as `usize`, the width the dispatcher
    /// indexes with, so a hop down a chain loads it without widening.
    chain_next: (usize, usize),
    /// Where output 0 pushes, `(element, input port)`, chaining or not;
    /// `NO_CHAIN` when it pushes nowhere. Flagged as `chain_next` is. A
    /// source's emission reads it here, beside the borrow flag the run
    /// just wrote, rather than through the graph's two tables.
    out0: (usize, usize),
    /// A chaining element that, run in a chain, only looks at the batch
    /// ([`Element::chain_quiet`]): the dispatcher moves the batch straight
    /// on, without testing for other output or an emptied batch.
    chain_quiet: bool,
}

/// Flags every reference to element `elem` in the dispatcher's tables (the
/// graph's and the chain targets in `elements`) with `flag`: the dispatcher
/// then finds it out of range and takes the shared-element path. The
/// tables are passed apart so a caller may hold other parts of the core.
pub(crate) fn mark_shared(graph: &mut Graph, elements: &mut [ElementCell], elem: usize, flag: u32) {
    graph.mark_shared(elem, flag);
    for cell in elements {
        if cell.chain_next.0 == elem {
            cell.chain_next.0 |= flag as usize;
        }
        if cell.out0.0 == elem {
            cell.out0.0 |= flag as usize;
        }
    }
}

/// Marks an element that does not chain (see [`ElementCell`]).
pub(crate) const NO_CHAIN: usize = usize::MAX;

impl ElementCell {
    pub(crate) fn new(e: Box<dyn Element>) -> Self {
        ElementCell {
            element: RefCell::new(e),
            chain_next: (NO_CHAIN, NO_CHAIN),
            out0: (NO_CHAIN, NO_CHAIN),
            chain_quiet: false,
        }
    }

    pub(crate) fn into_inner(self) -> Box<dyn Element> {
        self.element.into_inner()
    }

    /// Where a chaining element's output 0 leads, as `(element, port)`
    /// with `NO_CHAIN` for none: the dispatcher then runs the element
    /// with [`push_in_chain`](Element::push_in_chain) and moves on without
    /// a batch handoff.
    #[inline(always)]
    pub(crate) fn chain_next(&self) -> (usize, usize) {
        self.chain_next
    }

    /// Whether the element chains and is [quiet](Element::chain_quiet) in
    /// a chain.
    #[inline(always)]
    pub(crate) fn chain_quiet(&self) -> bool {
        self.chain_quiet
    }

    /// Where output 0 pushes, as `(element, port)`, with `NO_CHAIN` for
    /// nowhere (read by `Ctx::emit_out0`).
    #[inline(always)]
    pub(crate) fn out0(&self) -> (usize, usize) {
        self.out0
    }
}

impl std::ops::Deref for ElementCell {
    type Target = RefCell<Box<dyn Element>>;

    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.element
    }
}

impl std::ops::DerefMut for ElementCell {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.element
    }
}

/// Everything a running router is made of except the dispatcher's buffers.
pub struct RouterCore {
    pub(crate) elements: Vec<ElementCell>,
    /// Each element's home thread (all 0 with one thread).
    pub(crate) home: Box<[std::sync::atomic::AtomicU32]>,
    /// Which elements several threads share (through their `&self`
    /// interface).
    pub(crate) shared_elems: Vec<bool>,
    /// Elements that run as one copy per thread ([`Element::per_thread_copy`]):
    /// for each such element, the copy of each thread that reaches it
    /// other than its home thread (which runs `elements[e]` itself); empty
    /// for every other element. A copy is touched only by its thread, or
    /// with the world stopped, as the home copy is.
    pub(crate) thread_copies: Vec<ThreadCopies>,
    pub(crate) info: Vec<ElementInfo>,
    pub(crate) graph: Graph,
    pub(crate) rt: Runtime,
    pub(crate) spec: RouterSpec,
    config_text: String,
    /// Instances registered for flows through `register_instance`
    /// (the plugin control path): carried from router to router.
    pub(crate) bindings: RefCell<Vec<plugins::Binding>>,
    hotswap: bool,
    by_name: HashMap<String, usize>,
    /// What built this router, kept so `hotconfig` can build the next one.
    registry: Registry,
    options: RouterOptions,
    /// A new router built by `hotconfig`, installed at the next safe point.
    pending_swap: RefCell<Option<Box<Router>>>,
    /// A new router being built on another thread for a `hotconfig`
    /// written through [`Ctx::write_handler_start`](crate::Ctx).
    swap_job: RefCell<Option<hotswap::SwapJob>>,
    /// Numbers the deferred handler writes.
    next_write_token: std::cell::Cell<u64>,
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
    /// Router threads (`-j N`); 0 and 1 both mean one.
    pub threads: usize,
    /// Pin thread `k` to CPU `k` (`-a`).
    pub affinity: bool,
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

impl RouterCore {
    /// Records, in each element's cell, where its output 0 leads, and for
    /// a chaining element its chain target and whether it is quiet in a
    /// chain (after the graph's tables are built). `chains` holds each
    /// element's `(chains, chain_quiet)`.
    pub(crate) fn set_chaining(&mut self, chains: &[(bool, bool)]) {
        for (e, (cell, &(chains, quiet))) in self.elements.iter_mut().zip(chains).enumerate() {
            let out0 = self.graph.push_target(e, 0);
            cell.out0 = out0.unwrap_or((NO_CHAIN, NO_CHAIN));
            cell.chain_next = match out0 {
                Some((d, p)) if chains => (d, p),
                _ => (NO_CHAIN, NO_CHAIN),
            };
            cell.chain_quiet = chains && quiet && cell.chain_next.0 != NO_CHAIN;
        }
    }

    /// The element named `name`, looked up first inside the compounds
    /// enclosing element `context` (innermost first), then at top level,
    /// then as a 1-based element number.
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
}

/// A runnable router.
pub struct Router {
    core: RouterCore,
    disp: Dispatcher,
    ready: Vec<(std::os::fd::RawFd, usize, bool, bool)>,
    stop_flag: Arc<AtomicBool>,
    cleaned_up: bool,
    /// How long hot swaps' final exchanges (state transfer and switch)
    /// took; carried from router to router.
    install_stats: hotswap::InstallStats,
    /// Configuration warnings, each element's under its context line,
    /// until the driver takes them to print.
    warnings: Vec<Diagnostic>,
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
    /// A flag that, when raised from anywhere (a signal handler), makes
    /// [`Router::run`] return soon.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop_flag.clone()
    }

    pub fn nelements(&self) -> usize {
        self.core.info.len()
    }

    /// The configuration's warnings (each element's under its `While
    /// configuring` line), for the driver to print; empty afterwards.
    pub fn take_warnings(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.warnings)
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

    /// How long the final exchange (state transfer and switch) of the most
    /// recent hot swaps (up to 64) into this router took, oldest first: the
    /// only time a hot swap holds up packet processing when it is prepared
    /// off the packet path. [`Router::hotswap_install_stats`] has the
    /// totals.
    pub fn hotswap_install_times(&self) -> &[std::time::Duration] {
        &self.install_stats.recent
    }

    /// Count, longest and total time of the hot swaps' final exchanges,
    /// and the most recent ones.
    pub fn hotswap_install_stats(&self) -> &InstallStats {
        &self.install_stats
    }

    /// Chatter collected when built with `capture_chatter`.
    pub fn take_chatter(&self) -> Vec<String> {
        self.core.rt.take_chatter()
    }
}
