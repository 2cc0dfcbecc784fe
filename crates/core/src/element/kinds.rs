//! Element kinds: the shapes most elements take, with their batch code
//! written once.
//!
//! An element implements the kind's one-packet trait and names the kind with
//! [`element_kind!`](crate::element_kind) inside its `impl Element`; the
//! macro writes `push`, `pull` and (for sources and sinks) `run_task`.
//!
//! | kind | trait | Click's idiom | ports |
//! |---|---|---|---|
//! | `action` | [`SimpleAction`] | `simple_action` | change or drop each packet; push and pull through |
//! | `observe` | [`Observe`] | a `simple_action` returning `p` | look, pass on unchanged; push and pull through |
//! | `filter` | [`Filter`] | `checked_output_push(1, p)` | rejected packets to output 1 if present, else dropped |
//! | `filter_or_drop` | [`FilterOrDrop`] | the same, and `p->kill()` | a filter that may also drop a packet itself |
//! | `classify` | [`Classify`] | `push` with `output(classify(p))` | one output per packet; a one-way batch moves whole |
//! | `dispatch` | [`Dispatch`] | route tables | change each packet, then pick its output |
//! | `source` | [`Source`] | task + full notifier | packets from nowhere, pushed by a task or pulled |
//! | `sink` | [`Sink`] | task + empty notifier | packets consumed, pushed in or pulled by a task |

use std::mem::MaybeUninit;

use crate::batch::{Batch, BATCH_CAPACITY};
use crate::ctx::{Ctx, InitCtx};
use crate::packet::Packet;
use crate::pulltask::PullTask;
use crate::sched::{NotifierSignal, TaskId};

/// Elements that act on one packet at a time and forward to output 0, or
/// drop (Click's `simple_action`): the `action` kind.
pub trait SimpleAction {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet>;
}

/// Push for a [`SimpleAction`]: act on each packet in place, then forward
/// the survivors as one batch on output 0.
#[inline]
pub fn simple_push<E: SimpleAction + ?Sized>(e: &mut E, mut batch: Batch, ctx: &mut Ctx) {
    if simple_push_in_chain(e, &mut batch, ctx) && !batch.is_empty() {
        ctx.emit_batch(0, batch);
    }
}

/// [`Element::push_in_chain`](super::Element::push_in_chain) for a
/// [`SimpleAction`].
#[inline]
pub fn simple_push_in_chain<E: SimpleAction + ?Sized>(
    e: &mut E,
    batch: &mut Batch,
    ctx: &mut Ctx,
) -> bool {
    batch.retain_map(|p| e.action(p, ctx));
    true
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

/// Elements that look at each packet and pass it on unchanged (Counter,
/// ToDump, ToIPSummaryDump, ...). [`observe_push`] and [`observe_pull`]
/// give them push and pull; with [`PullTask`] they drain an input.
pub trait Observe {
    /// True when observing only looks at packets (counts, prints, writes
    /// a file) and never emits a batch or calls a handler, in every
    /// configuration of the class: in a chain the dispatcher then moves
    /// the batch straight on (see [`Element::chain_quiet`](super::Element::chain_quiet)).
    /// Counter, which may call a handler (COUNT_CALL), is not quiet.
    const QUIET: bool = false;

    /// Looks at one packet. Implement this or
    /// [`observe_batch`](Self::observe_batch).
    fn observe(&mut self, _p: &Packet, _ctx: &mut Ctx) {}

    /// Looks at a whole batch, before it moves on; the default observes
    /// each packet. Push and pull both come here.
    #[inline]
    fn observe_batch(&mut self, batch: &Batch, ctx: &mut Ctx) {
        for p in batch.packets() {
            self.observe(p, ctx);
        }
    }
}

/// Push for an [`Observe`] element: observe each packet, forward the batch
/// on output 0.
#[inline]
pub fn observe_push<E: Observe + ?Sized>(e: &mut E, batch: Batch, ctx: &mut Ctx) {
    e.observe_batch(&batch, ctx);
    ctx.emit_batch(0, batch);
}

/// [`Element::push_in_chain`](super::Element::push_in_chain) for an
/// [`Observe`] element.
#[inline]
pub fn observe_push_in_chain<E: Observe + ?Sized>(
    e: &mut E,
    batch: &mut Batch,
    ctx: &mut Ctx,
) -> bool {
    e.observe_batch(batch, ctx);
    true
}

/// Pull for an [`Observe`] element: pull from input 0 and observe what came.
#[inline]
pub fn observe_pull<E: Observe + ?Sized>(e: &mut E, max: usize, ctx: &mut Ctx) -> Option<Batch> {
    let batch = ctx.pull(0, max)?;
    e.observe_batch(&batch, ctx);
    Some(batch)
}

/// For an [`Observe`] sink's pull task: observe what the task pulled (the
/// packets are then freed). Returns whether anything came.
#[inline]
pub fn observe_pulled<E: Observe + ?Sized>(e: &mut E, got: Option<Batch>, ctx: &mut Ctx) -> bool {
    let Some(batch) = got else {
        return false;
    };
    e.observe_batch(&batch, ctx);
    true
}

/// Elements that pick each packet's output without changing it (Click's
/// `classify`): the `classify` kind. `None` drops the packet.
pub trait Classify {
    fn classify(&mut self, p: &Packet, ctx: &mut Ctx) -> Option<usize>;
}

/// Elements that change each packet and then pick its output (the route
/// tables, which set the gateway annotation): the `dispatch` kind. `None`
/// means the element kept or dropped the packet itself.
pub trait Dispatch {
    fn dispatch(&mut self, p: Packet, ctx: &mut Ctx) -> Option<(usize, Packet)>;
}

/// Push for classifying elements (Click's `classify(p) -> port`): `classify`
/// picks each packet's output, `None` drops it. A batch whose packets all
/// go to one output is forwarded whole (one handoff); otherwise packets are
/// split by output, keeping their order within each output.
#[inline]
pub fn classify_push(
    batch: Batch,
    ctx: &mut Ctx,
    mut classify: impl FnMut(&Packet, &mut Ctx) -> Option<usize>,
) {
    let n = batch.len();
    if n == 0 {
        return;
    }
    // Uninitialised: zeroing a whole array per batch cost more than the
    // classification of a batch of one.
    let mut outs = [MaybeUninit::<Option<usize>>::uninit(); BATCH_CAPACITY];
    let mut same = true;
    let mut first = None;
    for (i, p) in batch.packets().iter().enumerate() {
        let o = classify(p, ctx);
        if i == 0 {
            first = o;
        } else {
            same &= o == first;
        }
        outs[i].write(o);
    }
    if same {
        if let Some(o) = first {
            ctx.emit_batch(o, batch);
        }
        return;
    }
    for (i, p) in batch.into_iter().enumerate() {
        // SAFETY: the loop above wrote outs[i] for every packet index i.
        if let Some(o) = unsafe { outs[i].assume_init() } {
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
    // Uninitialised, as in `classify_push`.
    let mut outs = [MaybeUninit::<usize>::uninit(); BATCH_CAPACITY];
    let mut kept = 0;
    let mut same = true;
    batch.retain_map(|p| {
        let (port, p) = route(p, ctx)?;
        if kept > 0 {
            // SAFETY: outs[0] was written when the first packet was kept.
            same &= port == unsafe { outs[0].assume_init() };
        }
        outs[kept].write(port);
        kept += 1;
        Some(p)
    });
    if kept == 0 {
        return;
    }
    if same {
        // SAFETY: kept > 0, so outs[0] was written.
        ctx.emit_batch(unsafe { outs[0].assume_init() }, batch);
        return;
    }
    for (i, p) in batch.into_iter().enumerate() {
        // SAFETY: one output was written per kept packet, in order, and
        // the batch holds exactly the kept packets.
        ctx.emit(unsafe { outs[i].assume_init() }, p);
    }
}

/// Elements that check each packet and pass the good ones on output 0
/// (Click's checkers: `CheckIPHeader`, `DecIPTTL`, ...): the `filter` kind.
/// `Err` packets leave by output 1 when it is connected and are dropped
/// otherwise, as Click's `checked_output_push(1, p)`; in pull, output 1 is
/// pushed while output 0 is pulled, so the element's processing must be
/// `a/ah` ([`AGNOSTIC_PUSH_ERROR`](super::processing::AGNOSTIC_PUSH_ERROR)):
/// the generated `pull` answers for output 0 only.
pub trait Filter {
    fn filter(&mut self, p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet>;
}

/// Push for a [`Filter`]. A batch that passes whole moves on in one call;
/// otherwise each packet leaves by its output in arrival order, so outputs
/// 0 and 1 that meet again downstream keep Click's packet order.
#[inline]
pub fn filter_push<E: Filter + ?Sized>(e: &mut E, mut batch: Batch, ctx: &mut Ctx) {
    if filter_push_in_chain(e, &mut batch, ctx) && !batch.is_empty() {
        ctx.emit_batch(0, batch);
    }
}

/// [`Element::push_in_chain`](super::Element::push_in_chain) for a
/// [`Filter`].
#[inline]
pub fn filter_push_in_chain<E: Filter + ?Sized>(
    e: &mut E,
    batch: &mut Batch,
    ctx: &mut Ctx,
) -> bool {
    checked_push_in_chain(batch, ctx, |p, ctx| Some(e.filter(p, ctx)))
}

/// Pull for a [`Filter`].
#[inline]
pub fn filter_pull<E: Filter + ?Sized>(e: &mut E, max: usize, ctx: &mut Ctx) -> Option<Batch> {
    checked_pull(max, ctx, |p, ctx| Some(e.filter(p, ctx)))
}

/// The batch code of the filter kinds: `check` passes (`Ok`), rejects
/// (`Err`, to output 1) or drops (`None`) each packet. Returns `true` when
/// every packet left passed (they go on output 0 as one batch); otherwise
/// it has sent each packet out of its own output, in arrival order, and
/// left `batch` empty.
#[inline]
fn checked_push_in_chain(
    batch: &mut Batch,
    ctx: &mut Ctx,
    mut check: impl FnMut(Packet, &mut Ctx) -> Option<Result<Packet, Packet>>,
) -> bool {
    // One bit per kept packet: a 64-byte flag array cleared on every call
    // cost more than the check itself on a batch of one.
    const _: () = assert!(BATCH_CAPACITY <= 64);
    let mut rejected: u64 = 0;
    let mut kept = 0;
    batch.retain_map(|p| {
        let p = match check(p, ctx)? {
            Ok(p) => p,
            Err(p) => {
                rejected |= 1 << kept;
                p
            }
        };
        kept += 1;
        Some(p)
    });
    if rejected == 0 {
        return true;
    }
    for (i, p) in batch.drain().enumerate() {
        ctx.emit(((rejected >> i) & 1) as usize, p);
    }
    false
}

/// Pull for the filter kinds: output 0 is pulled, rejects are pushed out of
/// output 1 as they are found.
#[inline]
fn checked_pull(
    max: usize,
    ctx: &mut Ctx,
    mut check: impl FnMut(Packet, &mut Ctx) -> Option<Result<Packet, Packet>>,
) -> Option<Batch> {
    let mut batch = ctx.pull(0, max)?;
    batch.retain_map(|p| match check(p, ctx)? {
        Ok(p) => Some(p),
        Err(bad) => {
            ctx.emit(1, bad);
            None
        }
    });
    (!batch.is_empty()).then_some(batch)
}

/// The push-side task of a source: runs while the queues downstream have
/// room (Click's full notifier) and sleeps while they are all full.
#[derive(Debug, Default)]
pub struct SourceTask {
    task: Option<TaskId>,
    room: NotifierSignal,
    /// `room` is `Busy` (no queue downstream, or unthrottled): asked on
    /// every task run, a flag is cheaper than matching the signal.
    always_room: bool,
}

impl SourceTask {
    /// Creates the task when output `port` is push (scheduled if `active`).
    pub fn initialize(&mut self, ctx: &mut InitCtx, port: usize, active: bool) {
        if ctx.output_is_push(port) {
            let t = ctx.new_task(active);
            self.room = ctx.downstream_full_signal(port, Some(t));
            self.task = Some(t);
        } else {
            self.room = NotifierSignal::Busy;
        }
        self.always_room = matches!(self.room, NotifierSignal::Busy);
    }

    pub fn task(&self) -> Option<TaskId> {
        self.task
    }

    /// Whether a queue downstream has room.
    #[inline]
    pub fn has_room(&self, ctx: &Ctx) -> bool {
        self.always_room || ctx.signal_active(&self.room)
    }

    /// Schedules the task (after it was reactivated, for example).
    pub fn wake(&self, ctx: &Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}

/// Elements that make packets (InfiniteSource, RatedSource, ...): the
/// `source` kind. Output 0 is agnostic: a push output is fed by the task in
/// [`source_task`](Source::source_task), a pull output by `pull`.
pub trait Source {
    /// Up to `max` new packets, or `None` when there are none now. After
    /// `None` the task sleeps: a source that will have packets later (a
    /// rate limit, a file being read) arms a timer or watches a descriptor
    /// and wakes its [`SourceTask`]. When nothing more will ever come, also
    /// stop the router if asked to.
    fn generate(&mut self, max: usize, ctx: &mut Ctx) -> Option<Batch>;
    /// [`generate`](Source::generate) of one packet: a BURST 1 task run.
    /// A source may write it out for the one-packet case, whose tests are
    /// fewer than those of any `max`.
    #[inline(always)]
    fn generate_one(&mut self, ctx: &mut Ctx) -> Option<Batch> {
        self.generate(1, ctx)
    }
    fn source_task(&self) -> &SourceTask;
}

/// The task body of a [`Source`] with a push output.
#[inline]
pub fn source_run<E: Source + ?Sized>(e: &mut E, ctx: &mut Ctx) -> bool {
    if !e.source_task().has_room(ctx) {
        return false;
    }
    match e.generate(BATCH_CAPACITY, ctx) {
        Some(batch) => {
            ctx.emit_batch(0, batch);
            ctx.fast_reschedule();
            true
        }
        None => false,
    }
}

/// Elements that consume packets (Discard, ToDump, ToDevice, ...): the
/// `sink` kind. Input 0 is agnostic: pushed batches go straight to
/// `consume`; a pull input is drained by the task in
/// [`pull_task`](Sink::pull_task), `pull_burst` packets at a time.
pub trait Sink {
    fn consume(&mut self, batch: Batch, ctx: &mut Ctx);
    fn pull_task(&self) -> &PullTask;
    fn pull_burst(&self) -> usize {
        BATCH_CAPACITY
    }
    /// An inactive sink's task pulls nothing (Discard's `ACTIVE false`).
    fn pull_active(&self) -> bool {
        true
    }
}

/// The task body of a [`Sink`] with a pull input.
#[inline]
pub fn sink_run<E: Sink + ?Sized>(e: &mut E, ctx: &mut Ctx) -> bool {
    if !e.pull_active() {
        return false;
    }
    let burst = e.pull_burst();
    match e.pull_task().pull(ctx, 0, burst) {
        Some(batch) => {
            e.consume(batch, ctx);
            true
        }
        None => false,
    }
}

/// Writes the `push`, `pull` and `run_task` of an element kind: `action`,
/// `observe`, `filter`, `filter_or_drop`, `classify`, `dispatch`, `source`
/// or `sink` (see the
/// [module docs](crate::element::kinds)). Use inside `impl Element for X`.
///
/// `action, own_chain` (likewise `filter` and `filter_or_drop`) writes the
/// kind's `pull` and a `push` through the element's own `push_in_chain`,
/// which the element then writes: a fast path (a batch of one handled
/// where it lies, a batch with nothing to do passed on whole) before the
/// kind's `*_push_in_chain`. `push_only, own_chain` is the same for an
/// element with no pull path.
#[macro_export]
macro_rules! element_kind {
    (action, own_chain) => {
        $crate::element_kind!(@own_chain);
        $crate::element_kind!(@pull simple_pull);
    };
    (filter, own_chain) => {
        $crate::element_kind!(@own_chain);
        $crate::element_kind!(@pull filter_pull);
    };
    (filter_or_drop, own_chain) => {
        $crate::element_kind!(@own_chain);
        $crate::element_kind!(@pull filter_or_drop_pull);
    };
    (push_only, own_chain) => {
        $crate::element_kind!(@own_chain);
    };
    (action) => {
        $crate::element_kind!(@through simple_push simple_pull);
        $crate::element_kind!(@chain simple_push_in_chain);
    };
    (observe) => {
        $crate::element_kind!(@through observe_push observe_pull);
        $crate::element_kind!(@chain observe_push_in_chain);
        fn chain_quiet(&self) -> bool {
            <Self as $crate::element::Observe>::QUIET
        }
    };
    (filter) => {
        $crate::element_kind!(@through filter_push filter_pull);
        $crate::element_kind!(@chain filter_push_in_chain);
    };
    (filter_or_drop) => {
        $crate::element_kind!(@through filter_or_drop_push filter_or_drop_pull);
        $crate::element_kind!(@chain filter_or_drop_push_in_chain);
    };
    (classify) => {
        fn push(&mut self, _port: usize, batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            $crate::element::kinds::classify_push(batch, ctx, |p, ctx| {
                $crate::element::Classify::classify(self, p, ctx)
            })
        }
    };
    (dispatch) => {
        fn push(&mut self, _port: usize, batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            $crate::element::kinds::dispatch_push(batch, ctx, |p, ctx| {
                $crate::element::Dispatch::dispatch(self, p, ctx)
            })
        }
    };
    (source) => {
        fn run_task(&mut self, _task: $crate::TaskId, ctx: &mut $crate::Ctx) -> bool {
            $crate::element::kinds::source_run(self, ctx)
        }
        fn pull(
            &mut self,
            _port: usize,
            max: usize,
            ctx: &mut $crate::Ctx,
        ) -> ::std::option::Option<$crate::Batch> {
            $crate::element::Source::generate(self, max, ctx)
        }
    };
    (sink) => {
        fn push(&mut self, _port: usize, batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            $crate::element::Sink::consume(self, batch, ctx)
        }
        fn run_task(&mut self, _task: $crate::TaskId, ctx: &mut $crate::Ctx) -> bool {
            $crate::element::kinds::sink_run(self, ctx)
        }
    };
    (@own_chain) => {
        fn push(&mut self, _port: usize, mut batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            if $crate::Element::push_in_chain(self, &mut batch, ctx) && !batch.is_empty() {
                ctx.emit_batch(0, batch);
            }
        }
        fn chains(&self) -> bool {
            true
        }
    };
    (@pull $pull:ident) => {
        fn pull(
            &mut self,
            _port: usize,
            max: usize,
            ctx: &mut $crate::Ctx,
        ) -> ::std::option::Option<$crate::Batch> {
            $crate::element::kinds::$pull(self, max, ctx)
        }
    };
    (@chain $in_chain:ident) => {
        fn chains(&self) -> bool {
            true
        }
        fn push_in_chain(&mut self, batch: &mut $crate::Batch, ctx: &mut $crate::Ctx) -> bool {
            $crate::element::kinds::$in_chain(self, batch, ctx)
        }
    };
    (@through $push:ident $pull:ident) => {
        fn push(&mut self, _port: usize, batch: $crate::Batch, ctx: &mut $crate::Ctx) {
            $crate::element::kinds::$push(self, batch, ctx)
        }
        $crate::element_kind!(@pull $pull);
    };
}

/// The most packets a source sends in one task run, whatever its BURST:
/// a BURST of 4294967295 (a configuration or a `burst` handler write)
/// otherwise kept the task in one run forever, and nothing else (timers,
/// the control socket, `stop`) ever ran. A longer burst continues in the
/// next runs.
pub const MAX_SOURCE_BURST_PER_RUN: usize = 16 * BATCH_CAPACITY;

/// The task body of a [`Source`] that sends `burst` packets a run, as
/// Click's sources with a BURST do, even when the burst is longer than a
/// batch: it goes out in as many batches as it takes, all in this run (the
/// room downstream is checked once, as Click checks it once per run), up
/// to [`MAX_SOURCE_BURST_PER_RUN`].
#[inline]
pub fn source_run_burst<E: Source + ?Sized>(e: &mut E, burst: usize, ctx: &mut Ctx) -> bool {
    if burst == 1 {
        return source_run_one(e, ctx);
    }
    if !e.source_task().has_room(ctx) {
        return false;
    }
    let mut left = burst.min(MAX_SOURCE_BURST_PER_RUN);
    let mut sent = false;
    while left > 0 {
        let asked = left.min(BATCH_CAPACITY);
        let Some(batch) = e.generate(asked, ctx) else {
            break;
        };
        let short = batch.len() < asked;
        if batch.is_empty() {
            break;
        }
        left = left.saturating_sub(batch.len());
        ctx.emit_batch(0, batch);
        sent = true;
        // A short batch means the source has no more for now: asking again
        // in the same run would see it empty, which for a source with a
        // LIMIT means stopping the driver one run early (before the tasks
        // behind it have moved its last packets on, unlike Click).
        if short {
            break;
        }
    }
    if sent {
        ctx.fast_reschedule();
    }
    sent
}

/// [`source_run_burst`] for a BURST of 1 (Click's default): one packet a
/// run, with none of the burst loop's bookkeeping.
#[inline(always)]
pub fn source_run_one<E: Source + ?Sized>(e: &mut E, ctx: &mut Ctx) -> bool {
    if !e.source_task().has_room(ctx) {
        return false;
    }
    match e.generate_one(ctx) {
        Some(batch) if !batch.is_empty() => {
            ctx.emit_out0(batch);
            ctx.fast_reschedule();
            true
        }
        _ => false,
    }
}

/// A [`Filter`] that may also drop a packet itself: `None` means the
/// element dropped (and counted) the packet, which leaves by no output.
/// DecIPTTL drops packets that have no IP header rather than calling them
/// expired, and IPInputCombo drops what its parts drop; both still send
/// rejects to output 1 as the filter kind does.
pub trait FilterOrDrop {
    fn filter_or_drop(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>>;
}

/// Push for a [`FilterOrDrop`].
#[inline]
pub fn filter_or_drop_push<E: FilterOrDrop + ?Sized>(e: &mut E, mut batch: Batch, ctx: &mut Ctx) {
    if filter_or_drop_push_in_chain(e, &mut batch, ctx) && !batch.is_empty() {
        ctx.emit_batch(0, batch);
    }
}

/// [`Element::push_in_chain`](super::Element::push_in_chain) for a
/// [`FilterOrDrop`].
#[inline]
pub fn filter_or_drop_push_in_chain<E: FilterOrDrop + ?Sized>(
    e: &mut E,
    batch: &mut Batch,
    ctx: &mut Ctx,
) -> bool {
    checked_push_in_chain(batch, ctx, |p, ctx| e.filter_or_drop(p, ctx))
}

/// Pull for a [`FilterOrDrop`].
#[inline]
pub fn filter_or_drop_pull<E: FilterOrDrop + ?Sized>(
    e: &mut E,
    max: usize,
    ctx: &mut Ctx,
) -> Option<Batch> {
    checked_pull(max, ctx, |p, ctx| e.filter_or_drop(p, ctx))
}

/// The ports of every filter ([`Filter`], [`FilterOrDrop`]): one input,
/// output 0 and an optional reject output 1, agnostic but for the pushed
/// rejects (`1/1-2`, `a/ah`). Use inside `impl Element for X`.
#[macro_export]
macro_rules! filter_ports {
    () => {
        fn port_count(&self) -> &'static str {
            "1/1-2"
        }

        fn processing(&self) -> &'static str {
            $crate::element::processing::AGNOSTIC_PUSH_ERROR
        }
    };
}

// Trace readers (FromDump, FromIPSummaryDump) are sources
// that push at the trace's pace whatever lies downstream: a full queue
// drops, as in Click, instead of holding the trace back.
impl SourceTask {
    /// As [`initialize`](Self::initialize), without waiting for room
    /// downstream.
    pub fn initialize_unthrottled(&mut self, ctx: &mut InitCtx, port: usize, active: bool) {
        if ctx.output_is_push(port) {
            self.task = Some(ctx.new_task(active));
        }
        self.room = NotifierSignal::Busy;
        self.always_room = true;
    }
}
