//! The element interface, handler descriptions, and the class registry.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

use crate::batch::Batch;
use crate::ctx::{Ctx, InitCtx};
use crate::packet::Packet;
use crate::sched::{SignalId, TaskId, TimerId};

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

/// Handler flags, as listed by the `handlers` handler.
pub mod hflags {
    pub const READ: u16 = 1;
    pub const WRITE: u16 = 2;
    /// The read handler takes a parameter.
    pub const READ_PARAM: u16 = 4;
    /// Raw: no newline is appended to the value.
    pub const RAW: u16 = 8;
    pub const BUTTON: u16 = 16;
    pub const CHECKBOX: u16 = 32;
    /// Hidden from the control socket and `-h`.
    pub const PRIVATE: u16 = 64;
    /// Calling it may change state (reads that are not idempotent).
    pub const DEPRECATED: u16 = 128;
}

/// One handler an element exposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerSpec {
    pub name: String,
    pub flags: u16,
}

impl HandlerSpec {
    pub fn read(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ,
        }
    }
    pub fn write(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::WRITE,
        }
    }
    pub fn read_write(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ | hflags::WRITE,
        }
    }
    pub fn read_param(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::READ | hflags::READ_PARAM,
        }
    }
    pub fn button(name: &str) -> Self {
        HandlerSpec {
            name: name.into(),
            flags: hflags::WRITE | hflags::BUTTON,
        }
    }
    pub fn with(mut self, flags: u16) -> Self {
        self.flags |= flags;
        self
    }
    pub fn is_read(&self) -> bool {
        self.flags & hflags::READ != 0
    }
    pub fn is_write(&self) -> bool {
        self.flags & hflags::WRITE != 0
    }
    /// The flag letters of the `handlers` listing: `r`, `w`, `+`, `%`, `b`,
    /// `c`.
    pub fn flag_string(&self) -> String {
        let mut s = String::new();
        for (bit, c) in [
            (hflags::READ, 'r'),
            (hflags::WRITE, 'w'),
            (hflags::READ_PARAM, '+'),
            (hflags::RAW, '%'),
            (hflags::BUTTON, 'b'),
            (hflags::CHECKBOX, 'c'),
        ] {
            if self.flags & bit != 0 {
                s.push(c);
            }
        }
        s
    }
}

/// Lets the runtime and hot swap downcast elements to their concrete type.
pub trait AsAny {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
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

    /// Returns up to `max` packets pulled from output `port`, or `None`.
    fn pull(&mut self, _port: usize, _max: usize, _ctx: &mut Ctx) -> Option<Batch> {
        None
    }

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
    /// tasks), which the router adds itself.
    fn handlers(&self) -> Vec<HandlerSpec> {
        Vec::new()
    }

    /// Reads handler `name` (with a parameter for `+` handlers).
    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        Err(format!("no '{name}' handler"))
    }

    /// Writes handler `name`.
    fn write_handler(&mut self, name: &str, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        Err(format!("no '{name}' handler"))
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

    /// For the DriverManager: the router's run count fell to zero. Return
    /// true to let the driver stop, false to keep running (the element then
    /// restores the run count itself).
    fn driver_stop_event(&mut self, _ctx: &mut Ctx) -> bool {
        true
    }

    /// Called once when the router is torn down.
    fn cleanup(&mut self) {}
}

/// Elements that act on one packet at a time and forward to output 0, or
/// drop (Click's `simple_action`). Implement this and call
/// [`simple_push`]/[`simple_pull`] from `push`/`pull`, or use the
/// [`simple_element!`](crate::simple_element) macro.
pub trait SimpleAction {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet>;
}

/// Push for a [`SimpleAction`]: act on each packet in place, then forward
/// the survivors as one batch on output 0.
#[inline]
pub fn simple_push<E: SimpleAction + ?Sized>(e: &mut E, mut batch: Batch, ctx: &mut Ctx) {
    batch.retain_map(|p| e.action(p, ctx));
    if !batch.is_empty() {
        ctx.emit_batch(0, batch);
    }
}

/// Pull for a [`SimpleAction`]: pull from input 0 and act on what came.
#[inline]
pub fn simple_pull<E: SimpleAction + ?Sized>(
    e: &mut E,
    max: usize,
    ctx: &mut Ctx,
) -> Option<Batch> {
    let mut batch = ctx.pull(0, max)?;
    batch.retain_map(|p| e.action(p, ctx));
    (!batch.is_empty()).then_some(batch)
}

/// Elements that look at each packet and pass it on unchanged (ToDump,
/// ToIPSummaryDump, ...). [`observe_push`] and [`observe_pull`] give them
/// push and pull; with [`PullTask`](crate::PullTask) they drain an input.
pub trait Observe {
    fn observe(&mut self, p: &Packet, ctx: &mut Ctx);
}

/// Push for an [`Observe`] element: observe each packet, forward the batch
/// on output 0.
#[inline]
pub fn observe_push<E: Observe + ?Sized>(e: &mut E, batch: Batch, ctx: &mut Ctx) {
    for p in batch.packets() {
        e.observe(p, ctx);
    }
    ctx.emit_batch(0, batch);
}

/// Pull for an [`Observe`] element: pull from input 0 and observe what came.
#[inline]
pub fn observe_pull<E: Observe + ?Sized>(e: &mut E, max: usize, ctx: &mut Ctx) -> Option<Batch> {
    let batch = ctx.pull(0, max)?;
    for p in batch.packets() {
        e.observe(p, ctx);
    }
    Some(batch)
}

/// For an [`Observe`] sink's pull task: observe what the task pulled (the
/// packets are then freed). Returns whether anything came.
#[inline]
pub fn observe_pulled<E: Observe + ?Sized>(e: &mut E, got: Option<Batch>, ctx: &mut Ctx) -> bool {
    let Some(batch) = got else {
        return false;
    };
    for p in batch.packets() {
        e.observe(p, ctx);
    }
    true
}

/// Push for classifying elements (Click's `classify(p) -> port`): `classify`
/// picks each packet's output, `None` drops it. A batch whose packets all
/// go to one output is forwarded whole (one handoff); otherwise packets are
/// split by output, keeping their order within each output.
#[inline]
pub fn classify_push(
    batch: Batch,
    ctx: &mut Ctx,
    mut classify: impl FnMut(&Packet) -> Option<usize>,
) {
    let n = batch.len();
    if n == 0 {
        return;
    }
    let mut outs = [None; crate::batch::BATCH_CAPACITY];
    for (slot, p) in outs.iter_mut().zip(batch.packets()) {
        *slot = classify(p);
    }
    if outs[1..n].iter().all(|o| *o == outs[0]) {
        if let Some(o) = outs[0] {
            ctx.emit_batch(o, batch);
        }
        return;
    }
    for (p, o) in batch.into_iter().zip(outs) {
        if let Some(o) = o {
            ctx.emit(o, p);
        }
    }
}

/// Push for elements that change each packet and then pick its output
/// (the route tables, which set the gateway annotation): `route` returns
/// the output and the packet, or `None` when it kept or dropped the packet
/// itself. As with [`classify_push`] (which looks without changing, and so
/// leaves a one-output batch untouched), a batch whose survivors all leave
/// by one output moves on whole; otherwise they go out one by one, in
/// order.
#[inline]
pub fn dispatch_push(
    mut batch: Batch,
    ctx: &mut Ctx,
    mut route: impl FnMut(Packet, &mut Ctx) -> Option<(usize, Packet)>,
) {
    let mut outs = [0usize; crate::batch::BATCH_CAPACITY];
    let mut kept = 0;
    batch.retain_map(|p| {
        let (port, p) = route(p, ctx)?;
        outs[kept] = port;
        kept += 1;
        Some(p)
    });
    if kept == 0 {
        return;
    }
    if outs[1..kept].iter().all(|&o| o == outs[0]) {
        ctx.emit_batch(outs[0], batch);
        return;
    }
    for (p, port) in batch.into_iter().zip(outs) {
        ctx.emit(port, p);
    }
}

/// Implements `push` and `pull` of an [`Element`] through its
/// [`SimpleAction`]. Use inside `impl Element for X { ... }`.
#[macro_export]
macro_rules! simple_element {
    () => {
        fn push(&mut self, _port: usize, batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            $crate::element::simple_push(self, batch, ctx)
        }
        fn pull(
            &mut self,
            _port: usize,
            max: usize,
            ctx: &mut $crate::Ctx,
        ) -> Option<$crate::Batch> {
            $crate::element::simple_pull(self, max, ctx)
        }
    };
}

/// Constructor of an element class.
pub type Constructor = fn() -> Box<dyn Element>;

/// A registered element class.
#[derive(Clone)]
pub struct ElementClass {
    pub name: &'static str,
    pub create: Constructor,
}

/// The element classes a router can use. Built-in libraries and loaded
/// packages add to it.
#[derive(Clone, Default)]
pub struct Registry {
    classes: BTreeMap<String, ElementClass>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    pub fn add(&mut self, name: &'static str, create: Constructor) {
        self.classes
            .insert(name.to_string(), ElementClass { name, create });
    }

    pub fn get(&self, name: &str) -> Option<&ElementClass> {
        self.classes.get(name)
    }

    /// Class names in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.classes.keys().map(|s| s.as_str())
    }

    pub fn len(&self) -> usize {
        self.classes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

impl rclick_lang::ClassLookup for Registry {
    fn has_class(&self, name: &str) -> bool {
        self.classes.contains_key(name)
    }
}
