//! Hot swap: building the next router beside the running one and
//! installing it between driver iterations.
//!
//! A `hotconfig` written by a ControlSocket or HTTP client (through
//! [`Ctx::write_handler_start`]) is parsed and initialized on a thread of
//! its own while the running router goes on forwarding; the driver polls
//! for the result at its safe points, tells the element that asked (which
//! answers its client), and installs the new router. Only the final
//! exchange (state transfer and switch) holds up packet processing. Other
//! writers (`Router::write_handler`, Script, `Router::hotswap`) build on
//! the router's own thread and get their answer at once, as before.
//!
//! One hot swap is prepared at a time: a `hotconfig` written while another
//! is being built is refused with an error (it is not queued: the client
//! would otherwise be told about a configuration built against a router
//! that is about to be replaced).
//!
//! A panic while building (in an element's `configure` or `initialize`)
//! is caught, on either path, and answered as an error carrying the panic
//! message; the running router goes on. If the router stops (is cleaned
//! up) while a successor is being built, the client is told so, and the
//! build is waited for (a few seconds at most) so that the successor is
//! cleaned up before the router is gone.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

use rclick_lang::{Diagnostic, Landmark};

use super::{Router, RouterCore, RouterOptions};
use crate::ctx::{Ctx, InitCtx};
use crate::element::Registry;
use crate::time::Timestamp;

/// The error for a `hotconfig` written while another is being prepared.
pub(crate) const SWAP_IN_PROGRESS: &str =
    "a hot swap is already being prepared; write 'hotconfig' again once it is answered";

/// The answer to a `hotconfig` still being built when the router stops.
pub(crate) const STOPPED_BEFORE_READY: &str = "router stopped before the hot swap was ready";

/// How long a stopping router waits for a successor still being built,
/// so that the successor is cleaned up before the router is gone.
const ABANDON_WAIT: Duration = Duration::from_secs(5);

/// How many recent install times [`InstallStats`] keeps.
const RECENT_INSTALLS: usize = 64;

/// How long the final exchanges (state transfer and switch) of the hot
/// swaps into a router took: totals over every swap, and the most recent
/// ones (at most 64), so that a router swapped again and again does not
/// grow a record without bound. Carried from router to router.
#[derive(Clone, Debug, Default)]
pub struct InstallStats {
    /// Hot swaps installed.
    pub count: u64,
    /// The longest exchange.
    pub max: Duration,
    /// All exchanges together.
    pub total: Duration,
    /// The most recent exchanges, oldest first.
    pub recent: Vec<Duration>,
}

impl InstallStats {
    fn record(&mut self, d: Duration) {
        self.count += 1;
        self.max = self.max.max(d);
        self.total += d;
        if self.recent.len() >= RECENT_INSTALLS {
            self.recent.remove(0);
        }
        self.recent.push(d);
    }
}

/// What [`Ctx::write_handler_start`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteStart {
    /// The write is done, with this result.
    Done(Result<(), String>),
    /// The write goes on off the packet path (a `hotconfig` being built);
    /// the element's [`Element::write_finished`](crate::Element) is called
    /// with this token and the result, at a safe point, when it is done.
    Pending(u64),
}

/// A successor being built on another thread.
pub(crate) struct SwapJob {
    token: u64,
    /// The element to tell when the build is done.
    requester: usize,
    result: Receiver<Result<Router, Vec<Diagnostic>>>,
    /// The thread building it (none under simulated time).
    thread: Option<JoinHandle<()>>,
    /// The result, once taken from `result` by [`RouterCore::swap_ready`].
    arrived: Option<Result<Box<Router>, Vec<Diagnostic>>>,
}

/// `build_router`, with a panic in it (an element's `configure` or
/// `initialize`) turned into an error carrying the panic's message.
fn build_router_caught(
    text: &str,
    registry: &Registry,
    options: &RouterOptions,
    simtime: Option<Timestamp>,
) -> Result<Router, Vec<Diagnostic>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        build_router(text, registry, options, simtime)
    }))
    .unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_string());
        Err(vec![Diagnostic::error(
            Landmark::new("hotconfig", 0),
            format!("preparing the hot swap panicked: {msg}"),
        )])
    })
}

/// Parses and initializes `text` as a router replacing one built with
/// `registry` and `options`; simulated time, if any, starts at `simtime`.
fn build_router(
    text: &str,
    registry: &Registry,
    options: &RouterOptions,
    simtime: Option<Timestamp>,
) -> Result<Router, Vec<Diagnostic>> {
    let outcome = rclick_lang::parse_router(text, "hotconfig", registry, &options.parse);
    if outcome.has_errors() {
        return Err(outcome
            .diagnostics
            .into_iter()
            .filter(|d| d.is_error())
            .collect());
    }
    let mut spec = outcome.spec.ok_or_else(Vec::new)?;
    for extra in &options.extra_elements {
        if !spec.elements.iter().any(|e| e.name == extra.name) {
            spec.elements.push(extra.clone());
        }
    }
    let mut opts = options.clone();
    opts.successor = true;
    if simtime.is_some() {
        opts.simtime = simtime;
    }
    Router::new(spec, text, registry, &opts)
}

/// The messages of a failed build, one per line, as a write handler's
/// error.
fn error_text(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

impl RouterCore {
    pub(crate) fn is_successor(&self) -> bool {
        self.options.successor
    }

    /// Whether a successor waits to be installed: built by `hotconfig`,
    /// or done building on another thread.
    pub(crate) fn swap_ready(&self) -> bool {
        if self.pending_swap.borrow().is_some() {
            return true;
        }
        let mut job = self.swap_job.borrow_mut();
        let Some(job) = job.as_mut() else {
            return false;
        };
        if job.arrived.is_none() {
            match job.result.try_recv() {
                Ok(r) => job.arrived = Some(r.map(Box::new)),
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => {
                    job.arrived = Some(Err(vec![Diagnostic::error(
                        Landmark::new("", 0),
                        "preparing the hot swap failed unexpectedly",
                    )]))
                }
            }
        }
        true
    }

    /// Whether a successor is being built on another thread.
    pub(crate) fn swap_in_progress(&self) -> bool {
        self.swap_job.borrow().is_some()
    }

    /// Parses and initializes `text` as the next configuration, with this
    /// router's registry and options, on this thread; simulated time
    /// continues from now.
    pub(crate) fn build_successor(&self, text: &str) -> Result<Router, Vec<Diagnostic>> {
        if self.swap_in_progress() {
            return Err(vec![Diagnostic::error(
                Landmark::new("", 0),
                SWAP_IN_PROGRESS,
            )]);
        }
        let simtime = self.rt.clock.is_simulated().then(|| self.rt.clock.now());
        build_router_caught(text, &self.registry, &self.options, simtime)
    }

    /// Initializes `spec` (an edited copy of this router's) as the next
    /// configuration, on this thread, and leaves it to be installed at
    /// the next safe point (the plugin control path's hot swaps).
    pub(crate) fn swap_to_spec(&self, spec: rclick_lang::RouterSpec) -> Result<(), String> {
        if self.swap_in_progress() || self.pending_swap.borrow().is_some() {
            return Err(SWAP_IN_PROGRESS.to_string());
        }
        let text = rclick_lang::flatten(&spec);
        let mut opts = self.options.clone();
        opts.successor = true;
        if self.rt.clock.is_simulated() {
            opts.simtime = Some(self.rt.clock.now());
        }
        let registry = &self.registry;
        let built = std::panic::catch_unwind(AssertUnwindSafe(|| {
            Router::new(spec, &text, registry, &opts)
        }))
        .unwrap_or_else(|_| {
            Err(vec![Diagnostic::error(
                Landmark::new("", 0),
                "building the new router panicked",
            )])
        });
        let new = built.map_err(|d| error_text(&d))?;
        *self.pending_swap.borrow_mut() = Some(Box::new(new));
        Ok(())
    }

    /// The `hotconfig` write handler, answered at once: builds the
    /// successor here and leaves it to be installed at the next safe
    /// point.
    pub(crate) fn write_hotconfig(&self, text: &str) -> Result<(), String> {
        let new = self.build_successor(text).map_err(|d| error_text(&d))?;
        *self.pending_swap.borrow_mut() = Some(Box::new(new));
        Ok(())
    }

    /// The `hotconfig` write handler for element `requester`, answered
    /// later: starts building the successor on another thread. Under
    /// simulated time the build stays on this thread (time does not pass
    /// while it runs) and the answer still comes through `write_finished`.
    pub(crate) fn start_hotconfig(&self, text: &str, requester: usize) -> WriteStart {
        if self.swap_in_progress() || self.pending_swap.borrow().is_some() {
            return WriteStart::Done(Err(SWAP_IN_PROGRESS.to_string()));
        }
        let token = self.next_write_token.get();
        self.next_write_token.set(token + 1);
        let (tx, rx) = mpsc::sync_channel(1);
        let mut thread = None;
        if self.rt.clock.is_simulated() {
            let _ = tx.send(build_router_caught(
                text,
                &self.registry,
                &self.options,
                Some(self.rt.clock.now()),
            ));
        } else {
            let text = text.to_string();
            let registry = self.registry.clone();
            let options = self.options.clone();
            let spawned = std::thread::Builder::new()
                .name("rclick-hotswap".into())
                .spawn(move || {
                    // The receiver is gone if the router stopped and gave
                    // up waiting: the new router is then dropped (cleaned
                    // up) here.
                    let _ = tx.send(build_router_caught(&text, &registry, &options, None));
                });
            match spawned {
                Ok(t) => thread = Some(t),
                Err(e) => {
                    return WriteStart::Done(Err(format!(
                        "cannot start preparing the hot swap: {e}"
                    )))
                }
            }
        }
        *self.swap_job.borrow_mut() = Some(SwapJob {
            arrived: None,
            token,
            requester,
            result: rx,
            thread,
        });
        WriteStart::Pending(token)
    }
}

impl Router {
    /// Replaces the running configuration with `text` (hot swap). The new
    /// router is parsed and initialized first; on any error the messages
    /// are returned and this router is untouched. On success, elements of
    /// the new router take state from same-named elements of this one
    /// (`Element::take_state`), then the new router replaces this one.
    ///
    /// The build runs on this thread. It fails (with the "already being
    /// prepared" error) while a `hotconfig` written by a ControlSocket or
    /// HTTP client is being built on another thread; a panic while
    /// building is caught and returned as an error.
    pub fn hotswap(&mut self, text: &str) -> Result<(), Vec<Diagnostic>> {
        let new = self.core.build_successor(text)?;
        self.install(new);
        Ok(())
    }

    /// Installs a router built by `hotconfig`, if one is ready. The driver
    /// calls this between iterations, when no element is running.
    pub(super) fn apply_pending_swap(&mut self) -> bool {
        if self.core.swap_in_progress() && self.finish_swap_job() {
            return true;
        }
        let pending = self.core.pending_swap.borrow_mut().take();
        match pending {
            Some(new) => {
                self.install(*new);
                true
            }
            None => false,
        }
    }

    /// If the successor being built elsewhere is ready: tells the element
    /// that asked for it, then installs it (or, if it failed, keeps this
    /// router). Returns whether a new router was installed.
    fn finish_swap_job(&mut self) -> bool {
        let outcome = {
            let mut job = self.core.swap_job.borrow_mut();
            let Some(job) = job.as_mut() else {
                return false;
            };
            if let Some(r) = job.arrived.take() {
                r.map(|b| *b)
            } else {
                match job.result.try_recv() {
                    Ok(r) => r,
                    Err(TryRecvError::Empty) => return false,
                    Err(TryRecvError::Disconnected) => Err(vec![Diagnostic::error(
                        Landmark::new("", 0),
                        "preparing the hot swap failed unexpectedly",
                    )]),
                }
            }
        };
        let Some(job) = self.core.swap_job.borrow_mut().take() else {
            return false;
        };
        let (answer, new) = match outcome {
            Ok(new) => (Ok(()), Some(new)),
            Err(d) => (Err(error_text(&d)), None),
        };
        // The requester answers first (its reply is queued, and goes with
        // its connections to its successor), then the switch.
        self.call_element(job.requester, |e, ctx| {
            e.write_finished(job.token, answer, ctx)
        });
        match new {
            Some(new) => {
                self.install(new);
                true
            }
            None => false,
        }
    }

    /// Swaps in `new`: its elements take state from same-named elements
    /// of this router, it inherits the stop flag, and this router is
    /// dropped (cleaned up).
    fn install(&mut self, mut new: Router) {
        let t0 = std::time::Instant::now();
        // Per-thread copies hand on their counts through their element.
        self.core.fold_thread_copies();
        // Whether each new element took state from its predecessor.
        let took: Vec<bool> = (0..new.core.info.len())
            .map(|i| {
                let Some(&old_idx) = self.core.by_name.get(&new.core.info[i].name) else {
                    return false;
                };
                let (Ok(mut ne), Ok(mut oe)) = (
                    new.core.elements[i].try_borrow_mut(),
                    self.core.elements[old_idx].try_borrow_mut(),
                ) else {
                    return false;
                };
                let mut ictx = InitCtx::new(&new.core, i);
                ne.take_state(&mut **oe, &mut ictx)
            })
            .collect();
        let bindings = std::mem::take(&mut *self.core.bindings.borrow_mut());
        *new.core.bindings.borrow_mut() = new.core.carried_bindings(bindings, &took);
        new.stop_flag = self.stop_flag.clone();
        new.install_stats = std::mem::take(&mut self.install_stats);
        std::mem::swap(self, &mut new);
        // `new` is now the old router: dropping it runs its cleanup.
        drop(new);
        // The new configuration's warnings, in Click's form: the driver
        // printed the first configuration's, and a swap is said the same.
        for d in std::mem::take(&mut self.warnings) {
            self.core.rt.chatter(&d.to_string());
        }
        self.install_stats.record(t0.elapsed());
    }

    /// The router is stopping with a successor still being built: tells
    /// the element that asked (its client gets an error), then waits for
    /// the build (at most `ABANDON_WAIT`) and drops the successor here, so
    /// that its cleanup runs now and on this thread.
    pub(super) fn abandon_swap_job(&mut self) {
        let Some(job) = self.core.swap_job.borrow_mut().take() else {
            return;
        };
        self.call_element(job.requester, |e, ctx| {
            e.write_finished(job.token, Err(STOPPED_BEFORE_READY.to_string()), ctx)
        });
        match job.result.recv_timeout(ABANDON_WAIT) {
            Ok(built) => {
                // A successor never installed: its cleanup runs here.
                drop(built);
                if let Some(t) = job.thread {
                    let _ = t.join();
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(t) = job.thread {
                    let _ = t.join();
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                // Leave it: the thread drops (cleans up) its router
                // itself when it is done.
                self.core.rt.chatter(&format!(
                    "hot swap: the successor still being built after {} s is abandoned; \
                     it is cleaned up on its own thread when done",
                    ABANDON_WAIT.as_secs()
                ));
            }
        }
    }
}

impl Ctx<'_> {
    /// Writes handler `name` of element `elem` (a global handler when
    /// `None`) for a client that can wait for the answer: a `hotconfig`
    /// (with `-R`) is prepared off the packet path and answered later
    /// through [`Element::write_finished`](crate::Element); every other
    /// write is done now, as [`Ctx::write_handler_at`] does it.
    pub fn write_handler_start(
        &mut self,
        elem: Option<usize>,
        name: &str,
        value: &str,
    ) -> WriteStart {
        let view: &crate::ctx::ElementView = self;
        if elem.is_none() && name == "hotconfig" && view.core.hotswap {
            // The swap job is thread 0's to start and to finish.
            if view.core.rt.world.running() && super::current_thread() != 0 {
                return WriteStart::Done(Err(
                    "'hotconfig' can only be written from thread 0 while the threads run".into(),
                ));
            }
            return view.core.start_hotconfig(value, view.elem.get());
        }
        WriteStart::Done(self.write_handler_at(elem, name, value))
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<Router>();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record of install times stays bounded however many swaps.
    #[test]
    fn install_stats_keep_totals_and_the_recent_few() {
        let mut s = InstallStats::default();
        for i in 1..=1000u64 {
            s.record(Duration::from_micros(i));
        }
        assert_eq!(s.count, 1000);
        assert_eq!(s.max, Duration::from_micros(1000));
        assert_eq!(s.total, Duration::from_micros(1000 * 1001 / 2));
        assert_eq!(s.recent.len(), RECENT_INSTALLS);
        assert_eq!(s.recent.first(), Some(&Duration::from_micros(937)));
        assert_eq!(s.recent.last(), Some(&Duration::from_micros(1000)));
    }
}
