//! The element kit: the [`Element`] interface and what an element file
//! uses to be short and uniform.
//!
//! * [`registry`]: the class registration beside the struct
//!   ([`element_class!`](crate::element_class)), collected at link time.
//! * [`handlers`]: handler tables, declared once
//!   ([`handlers!`](crate::handlers)).
//! * [`kinds`]: the element kinds whose batch code is written once
//!   ([`element_kind!`](crate::element_kind)).
//!
//! `docs/adding-an-element.md` walks through writing an element with them.

use std::any::Any;
use std::fmt;

use crate::batch::Batch;
use crate::ctx::{Ctx, InitCtx};
use crate::sched::{SignalId, TaskId, TimerId};

pub mod handlers;
pub mod kinds;
pub mod registry;

pub use handlers::{handlers_listing, hflags, no_handler, DataValue, Handler, HandlerSpec};
pub use kinds::{
    classify_push, dispatch_push, filter_pull, filter_push, observe_pull, observe_pulled,
    observe_push, simple_pull, simple_push, Classify, Dispatch, Filter, Observe, SimpleAction,
    Sink, Source, SourceTask,
};
pub use registry::{Constructor, ElementClass, Registry};

/// When an element is configured, relative to the others (Click's
/// `configure_phase`): lower phases first, the configuration order within a
/// phase. Information elements (AddressInfo, ScheduleInfo, ...) configure
/// first so that the others can use what they declare.
pub mod configure_phase {
    pub const FIRST: i32 = 0;
    pub const INFO: i32 = 20;
    pub const PRIVILEGED: i32 = 90;
    pub const DEFAULT: i32 = 100;
    pub const LAST: i32 = 2000;
}

/// Version of the element interface. Dynamically loaded element packages
/// must be built against the same version.
pub const ELEMENT_API_VERSION: u32 = 1;

/// Processing codes used by most classes.
pub mod processing {
    pub const AGNOSTIC: &str = "a/a";
    pub const PUSH: &str = "h/h";
    pub const PULL: &str = "l/l";
    pub const PUSH_TO_PULL: &str = "h/l";
    pub const PULL_TO_PUSH: &str = "l/h";
    /// Agnostic with a push error output 1 (CheckIPHeader, DecIPTTL).
    pub const AGNOSTIC_PUSH_ERROR: &str = "a/ah";
}

/// Messages from configuring or initializing an element. Each string is
/// one line; the router prefixes the element's landmark.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Errors(pub Vec<String>);

impl Errors {
    pub fn new() -> Self {
        Errors(Vec::new())
    }
    pub fn push(&mut self, msg: impl Into<String>) {
        self.0.push(msg.into());
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// `Ok(())` when no message was recorded.
    pub fn into_result(self) -> Result<(), Errors> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl From<String> for Errors {
    fn from(s: String) -> Self {
        Errors(vec![s])
    }
}

impl From<&str> for Errors {
    fn from(s: &str) -> Self {
        Errors(vec![s.to_string()])
    }
}

impl From<Vec<String>> for Errors {
    fn from(v: Vec<String>) -> Self {
        Errors(v)
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

pub type ConfigResult = Result<(), Errors>;

/// Lets the runtime and hot swap downcast elements to their concrete type.
pub trait AsAny {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The `&self` interface of an element that several router threads may
/// push to and pull from at once. It is `Sync`: the element keeps its
/// state in atomics or lock-free structures. While threads run, the
/// router calls these instead of [`Element::push`] and [`Element::pull`];
/// handlers still go through [`Element`] (reads concurrently with
/// packets, writes with the other threads stopped).
pub trait SharedElement: Sync {
    fn push(&self, port: usize, batch: Batch, ctx: &mut Ctx);
    fn pull(&self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch>;
}

/// An element class whose elements can run as one copy per thread when
/// several threads reach them (see [`Element::per_thread_copy`]): each
/// thread pushes into its own copy, so no state is shared and nothing is
/// locked; reading a handler named in [`PerThread::SUMMED`] adds the
/// copies' values. Name it in the element with
/// [`per_thread!`](crate::per_thread).
///
/// ```ignore
/// impl PerThread for Counter {
///     const SUMMED: &'static [&'static str] = &["count", "byte_count", "rate"];
///     fn fresh_copy(&self) -> Option<Self> { ... }
///     fn absorb(&mut self, copy: Self) { self.count += copy.count; ... }
/// }
/// impl Element for Counter {
///     rclick_core::per_thread!();
/// }
/// ```
pub trait PerThread: Sized {
    /// Read handlers whose per-thread values add up.
    const SUMMED: &'static [&'static str];
    /// A copy as configured, with its state (counts) fresh; `None` when
    /// the configuration needs one element to see every packet.
    fn fresh_copy(&self) -> Option<Self>;
    /// Adds a copy's state to this element's.
    fn absorb(&mut self, copy: Self);
}

/// A packet-processing element.
///
/// Lifecycle: created by its class's constructor; `configure` with its
/// configuration string; ports resolved; `initialize` (router context
/// queries, tasks, timers, notifier listening); then `push`, `pull`,
/// `run_task` and `run_timer` as the router runs; `cleanup` at the end.
///
/// Packets move in batches. An element receives a whole [`Batch`] in
/// `push` and hands packets on through the [`Ctx`] (`ctx.emit(port, p)` or
/// `ctx.emit_batch(port, batch)`); the runtime dispatches them downstream
/// after `push` returns, depth first and in emission order, so an element is
/// never re-entered while it runs (cyclic push graphs are safe).
pub trait Element: AsAny + Send {
    /// Click's port count string, e.g. `1/1`, `1/1-2`, `-/=`.
    fn port_count(&self) -> &'static str {
        "1/1"
    }

    /// Click's processing code, e.g. `a/a`, `h/l`, `a/ah`. May depend on
    /// the configuration: it is read after `configure`.
    fn processing(&self) -> &'static str {
        processing::AGNOSTIC
    }

    /// Click's flow code, e.g. `x/x`, `xy/x`, `#/#`.
    fn flow_code(&self) -> &'static str {
        "x/x"
    }

    /// When to configure, relative to other elements: a
    /// [`configure_phase`] constant.
    fn configure_phase(&self) -> i32 {
        configure_phase::DEFAULT
    }

    /// Parses the configuration string. `ctx` tells the port counts.
    fn configure(&mut self, _conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Ok(())
    }

    /// Runs after every element is configured and ports are resolved.
    fn initialize(&mut self, _ctx: &mut InitCtx) -> ConfigResult {
        Ok(())
    }

    /// Receives a batch pushed into input `port`. The default drops it.
    fn push(&mut self, _port: usize, batch: Batch, _ctx: &mut Ctx) {
        drop(batch);
    }

    /// Whether this element's push is [`push_in_chain`](Element::push_in_chain)
    /// and then the batch on output 0: asked once at initialization. The
    /// one-packet kinds (`action`, `observe`, `filter`, `filter_or_drop`)
    /// say yes, and the dispatcher then runs straight chains of them
    /// without handing each batch back between elements.
    fn chains(&self) -> bool {
        false
    }

    /// Whether this element, when it [chains](Element::chains), is quiet
    /// in a chain: its [`push_in_chain`](Element::push_in_chain) always
    /// returns `true`, leaves the batch as it found it, and emits nothing
    /// else (no output, no handler call that could push). Asked once at
    /// initialization, so it must hold for every configuration of the
    /// class. The dispatcher then moves the batch straight on to the
    /// next element without its tests for other output. Observers that
    /// declare [`Observe::QUIET`](crate::element::Observe::QUIET) say yes.
    fn chain_quiet(&self) -> bool {
        false
    }

    /// Push for an element that [`chains`](Element::chains), except for
    /// the batch's last step: returns `true` when what is left of `batch`
    /// goes on output 0 (the dispatcher moves it on), `false` when the
    /// element sent it on itself. The default pushes the batch.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        let whole = std::mem::take(batch);
        self.push(0, whole, ctx);
        false
    }

    /// Returns up to `max` packets pulled from output `port`, or `None`.
    fn pull(&mut self, _port: usize, _max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        None
    }

    /// For elements that only pass pulls on (Bypass): the input a pull on
    /// output `port` would be answered from. The runtime then pulls from
    /// that input's peer directly, without entering this element, as
    /// Click's Bypass rewires its neighbours; so a detour that pulls back
    /// through the same element works. `None` (the default) calls `pull`.
    fn forward_pull(&self, _port: usize) -> Option<usize> {
        None
    }

    /// Whether [`forward_pull`](Element::forward_pull) may ever answer
    /// `Some`: asked once at initialization, so pulls through the other
    /// elements skip the question.
    fn forwards_pulls(&self) -> bool {
        false
    }

    /// Told each input's mode (`true`: pull) once the router has resolved
    /// them, before any element initializes: for elements whose handlers
    /// depend on their ports' modes (Discard's `active`), which Click adds
    /// at that point, so that another element's initialization (a handler
    /// call checked there) sees them.
    fn inputs_resolved(&mut self, _input_pull: &[bool]) {}

    /// This element's thread-safe interface, for classes built to be
    /// reached from several threads at once (ThreadSafeQueue and its
    /// kind). Elements of other classes are refused, at initialization,
    /// if more than one thread can reach them. A shared element must not
    /// have tasks of its own.
    fn shared(&self) -> Option<&dyn SharedElement> {
        None
    }

    /// A fresh copy of this element, as configured, for another thread:
    /// an element reached from several threads that is not
    /// [shared](Element::shared) runs as one independent copy per thread
    /// when its class allows it (counters, discards, stateless actions),
    /// and its read handlers combine the copies (see
    /// [`Element::per_thread_summed`]). `None` (the default) means the
    /// class cannot be copied, or not as configured now (a Counter with a
    /// `COUNT_CALL` must see every packet). Written with
    /// [`per_thread!`](crate::per_thread) and the [`PerThread`] trait.
    fn per_thread_copy(&self) -> Option<Box<dyn Element>> {
        None
    }

    /// Whether read handler `name`'s value, on an element running as
    /// per-thread copies, is the sum of the copies' values (a count, a
    /// rate); other handlers read the copy on the element's home thread.
    fn per_thread_summed(&self, _name: &str) -> bool {
        false
    }

    /// Folds a per-thread copy's state into this element (before a hot
    /// swap hands the state on, so that the new router's element starts
    /// from the whole count).
    fn absorb_copy(&mut self, _copy: Box<dyn Element>) {}

    /// Runs a task of this element. Returns whether it did useful work. The
    /// task is unscheduled while it runs; call `ctx.fast_reschedule()` to
    /// run again.
    fn run_task(&mut self, _task: TaskId, _ctx: &mut Ctx) -> bool {
        false
    }

    /// A timer of this element expired.
    fn run_timer(&mut self, _timer: TimerId, _ctx: &mut Ctx) {}

    /// A descriptor registered with `add_select` is ready.
    fn selected(
        &mut self,
        _fd: std::os::fd::RawFd,
        _readable: bool,
        _writable: bool,
        _ctx: &mut Ctx,
    ) {
    }

    /// Handlers beyond the standard ones (`name class config ports
    /// handlers`, plus `scheduled tickets home_thread` for elements with
    /// tasks), which the router adds itself. Write these three methods with
    /// [`handlers!`](crate::handlers) from a handler table.
    fn handlers(&self) -> Vec<HandlerSpec> {
        Vec::new()
    }

    /// Reads handler `name` (with a parameter for `+` handlers).
    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        Err(no_handler(name))
    }

    /// Writes handler `name`.
    fn write_handler(&mut self, name: &str, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        Err(no_handler(name))
    }

    /// Whether writing the `config` handler reconfigures this element live.
    fn can_live_reconfigure(&self) -> bool {
        false
    }

    /// Names of the interfaces this element implements, for router context
    /// searches (Click's `cast`): e.g. `"Storage"`.
    fn has_interface(&self, _name: &str) -> bool {
        false
    }

    /// The signal this element raises while it may have packets to pull
    /// (Click's empty notifier), if it is a notifier.
    fn empty_notifier(&self) -> Option<SignalId> {
        None
    }

    /// The signal this element raises while it has room for more packets
    /// (Click's full notifier), if it is a notifier: sources upstream sleep
    /// while it is down.
    fn full_notifier(&self) -> Option<SignalId> {
        None
    }

    /// For Storage elements (queues): packets held now, and capacity.
    fn storage(&self) -> Option<(usize, usize)> {
        None
    }

    /// Hot swap: take state from the element of the same name in the old
    /// router. Returns whether anything was taken. The default takes
    /// nothing.
    fn take_state(&mut self, _old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        false
    }

    /// A write started with [`Ctx::write_handler_start`] that answered
    /// [`WriteStart::Pending(token)`](crate::WriteStart) is done (a
    /// `hotconfig` prepared off the packet path): `result` is what the
    /// write handler would have returned. Called at a safe point; after a
    /// successful `hotconfig`, the new router is installed right after
    /// this returns. The default ignores it.
    fn write_finished(&mut self, _token: u64, _result: Result<(), String>, _ctx: &mut Ctx) {}

    /// For the DriverManager: the router's run count fell to zero. Return
    /// true to let the driver stop, false to keep running (the element then
    /// restores the run count itself).
    fn driver_stop_event(&mut self, _ctx: &mut Ctx) -> bool {
        true
    }

    /// Called once when the router is torn down.
    fn cleanup(&mut self) {}
}

/// Inside `impl Element for X`, where `X:` [`PerThread`] (and `Element`):
/// lets the router run `X` as one copy per thread (see
/// [`Element::per_thread_copy`]).
#[macro_export]
macro_rules! per_thread {
    () => {
        fn per_thread_copy(&self) -> ::std::option::Option<::std::boxed::Box<dyn $crate::Element>> {
            $crate::element::PerThread::fresh_copy(self)
                .map(|c| ::std::boxed::Box::new(c) as ::std::boxed::Box<dyn $crate::Element>)
        }
        fn per_thread_summed(&self, name: &str) -> bool {
            fn summed<T: $crate::element::PerThread>(_: &T, name: &str) -> bool {
                T::SUMMED.contains(&name)
            }
            summed(self, name)
        }
        fn absorb_copy(&mut self, copy: ::std::boxed::Box<dyn $crate::Element>) {
            fn absorb<T: $crate::element::PerThread + 'static>(
                this: &mut T,
                copy: ::std::boxed::Box<dyn $crate::Element>,
            ) {
                let any: ::std::boxed::Box<dyn ::std::any::Any> = copy.into_any();
                if let Ok(c) = any.downcast::<T>() {
                    $crate::element::PerThread::absorb(this, *c);
                }
            }
            absorb(self, copy)
        }
    };
}
