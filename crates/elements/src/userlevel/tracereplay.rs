//! What the trace elements share. The readers (FromDump,
//! FromIPSummaryDump) are sources: [`Replay`] holds their SAMPLE, TIMING,
//! ACTIVE and BURST state, their task, timer and notifier, and
//! [`generate`] is their [`Source::generate`](rclick_core::element::Source).
//! The writers (ToDump, ToIPSummaryDump) observe packets: [`Writing`]
//! holds their count and the task that drains a pull input when they have
//! no output.

use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::element::{observe_pulled, Observe, SourceTask};
use rclick_core::{Batch, Ctx, InitCtx, Packet, PullTask, SignalId, TimerId, Timestamp};

/// SAMPLE probabilities are 28-bit fixed point, as in Click.
pub const SAMPLING_SHIFT: u32 = 28;

/// The replay state of a trace reader.
pub struct Replay {
    pub active: bool,
    pub stop: bool,
    pub timing: bool,
    pub burst: usize,
    pub sampling_prob: u32,
    pub count: u64,
    rng: u64,
    push: bool,
    task: SourceTask,
    timer: Option<TimerId>,
    signal: Option<SignalId>,
    /// The trace ended in the batch just pushed: the task run the source
    /// kind schedules after it has nothing to do (Click's reader does not
    /// run again, so the end is handled once).
    drained: bool,
}

impl Default for Replay {
    fn default() -> Self {
        Replay {
            active: true,
            stop: false,
            timing: false,
            burst: 1,
            sampling_prob: 1 << SAMPLING_SHIFT,
            count: 0,
            rng: 0x2545_f491_4f6c_dd1d,
            push: true,
            task: SourceTask::default(),
            timer: None,
            signal: None,
            drained: false,
        }
    }
}

impl Replay {
    /// Takes the SAMPLE keyword's value, warning about 0 and values over 1;
    /// creates the pull notifier.
    pub fn configure(&mut self, sample: Option<u32>, ctx: &mut InitCtx) {
        self.sampling_prob = 1 << SAMPLING_SHIFT;
        if let Some(s) = sample {
            if s > 1 << SAMPLING_SHIFT {
                ctx.chatter(&format!(
                    "{}: warning: SAMPLE probability reduced to 1",
                    ctx.element_name()
                ));
            } else {
                if s == 0 {
                    ctx.chatter(&format!(
                        "{}: warning: SAMPLE probability is 0; emitting no packets",
                        ctx.element_name()
                    ));
                }
                self.sampling_prob = s;
            }
        }
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(self.active));
        }
    }

    /// Creates the task (push output) and the TIMING timer. The task does
    /// not wait for room downstream: a trace replays at its own pace and a
    /// full queue drops, as in Click.
    pub fn initialize(&mut self, ctx: &mut InitCtx) {
        self.push = ctx.output_is_push(0);
        self.task.initialize_unthrottled(ctx, 0, self.active);
        self.timer = Some(ctx.new_timer());
    }

    pub fn source_task(&self) -> &SourceTask {
        &self.task
    }

    /// The pull notifier: active while the reader is active and has more.
    pub fn empty_notifier(&self) -> Option<SignalId> {
        if self.push {
            None
        } else {
            self.signal
        }
    }

    /// Whether SAMPLE drops the next packet. The generator is xorshift64*,
    /// deterministic so that runs can be reproduced.
    pub fn sampled_out(&mut self) -> bool {
        if self.sampling_prob >= 1 << SAMPLING_SHIFT {
            return false;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32;
        (r & ((1 << SAMPLING_SHIFT) - 1)) >= self.sampling_prob
    }

    /// Whether a packet due at `due` must wait; if so the timer wakes the
    /// reader then (and a pull reader's notifier sleeps until it does).
    pub fn must_wait(&self, due: Timestamp, ctx: &mut Ctx) -> bool {
        if ctx.now() >= due {
            return false;
        }
        if let Some(t) = self.timer {
            ctx.schedule_timer_at(t, due);
        }
        if let (false, Some(s)) = (self.push, self.signal) {
            ctx.sleep_signal(s);
        }
        true
    }

    pub fn set_active(&mut self, active: bool, ctx: &mut Ctx) {
        self.active = active;
        if active {
            self.drained = false;
            self.task.wake(ctx);
            if let Some(s) = self.signal {
                ctx.wake_signal(s);
            }
        }
    }

    /// The TIMING timer fired: run again.
    pub fn run_timer(&self, ctx: &mut Ctx) {
        if self.active {
            if self.task.task().is_some() {
                self.task.wake(ctx);
            } else if let Some(s) = self.signal {
                ctx.wake_signal(s);
            }
        }
    }
}

/// Click's exact decimal form of a fixed-point number
/// (`cp_unparse_real2`).
pub fn unparse_fixed(v: u32, frac_bits: u32) -> String {
    let int = v >> frac_bits;
    let mut frac = u64::from(v) & ((1u64 << frac_bits) - 1);
    let mut s = int.to_string();
    if frac != 0 {
        s.push('.');
        while frac != 0 {
            frac *= 10;
            s.push(char::from(b'0' + (frac >> frac_bits) as u8));
            frac &= (1u64 << frac_bits) - 1;
        }
    }
    s
}

/// Where an element's [`Replay`] is ([`trace_source!`] writes it).
pub trait Replaying {
    fn replay(&self) -> &Replay;
    fn replay_mut(&mut self) -> &mut Replay;
}

/// A trace reader: how it reads, and what it does at the end of the
/// trace.
pub trait TraceReader: Replaying {
    /// The next packet due now; `Err(true)`: none now (TIMING, or many
    /// skipped: let others run), `Err(false)`: the trace ended.
    fn next_ready(&mut self, ctx: &mut Ctx) -> Result<Packet, bool>;
    /// Whether a packet read is held back for TIMING.
    fn holding(&self) -> bool;
    /// The end of the trace: STOP, END_CALL, ...
    fn at_end(&mut self, ctx: &mut Ctx);
}

/// A trace reader's [`Source::generate`](rclick_core::element::Source):
/// up to BURST packets per task run (push), up to `max` per pull. The
/// push task runs again while packets come or were skipped, and sleeps
/// while TIMING holds a packet back (the timer wakes it) and after the
/// end.
pub fn generate<E: TraceReader + ?Sized>(e: &mut E, max: usize, ctx: &mut Ctx) -> Option<Batch> {
    let r = e.replay_mut();
    let push = r.push;
    if !r.active || std::mem::take(&mut r.drained) {
        if let (false, Some(s)) = (push, r.signal) {
            ctx.sleep_signal(s);
        }
        return None;
    }
    let want = if push {
        r.burst.min(max).min(BATCH_CAPACITY)
    } else {
        max.clamp(1, BATCH_CAPACITY)
    };
    let mut batch = Batch::new();
    let mut more = true;
    while batch.len() < want {
        match e.next_ready(ctx) {
            Ok(p) => batch.push(p),
            Err(wait) => {
                more = wait;
                break;
            }
        }
    }
    let n = batch.len();
    let r = e.replay_mut();
    r.count += n as u64;
    if !more {
        if let (false, Some(s)) = (push, r.signal) {
            ctx.sleep_signal(s);
        }
        r.drained = push && n > 0;
        e.at_end(ctx);
    } else if push && (n > 0 || !(e.holding() && e.replay().timing)) {
        // Even empty (every packet skipped): `Some` has the kind run the
        // task again.
        return Some(batch);
    }
    (n > 0).then_some(batch)
}

/// The state of a trace writer.
pub struct Writing {
    pub active: bool,
    pub count: u64,
    puller: PullTask,
}

impl Default for Writing {
    fn default() -> Self {
        Writing {
            active: true,
            count: 0,
            puller: PullTask::default(),
        }
    }
}

impl Writing {
    /// Starts writing; with a pull input and no output, a task drains the
    /// input.
    pub fn initialize(&mut self, ctx: &mut InitCtx) {
        if ctx.input_is_pull(0) && ctx.noutputs() == 0 {
            self.puller.initialize(ctx, 0, true);
        }
        self.active = true;
    }
}

/// A trace writer: an [`Observe`] element with a [`Writing`]
/// ([`trace_writer!`] writes it).
pub trait TraceWriter: Observe {
    fn writing(&self) -> &Writing;
    fn writing_mut(&mut self) -> &mut Writing;
}

/// The task of a trace writer with a pull input and no output: pulls,
/// writes and frees packets while writing goes on, one packet per run as
/// Click's ToDump and ToIPSummaryDump do. (Pulling a batch per run wrote
/// more packets than Click when a source with STOP ends the run while
/// packets wait in a Queue before the writer: issue 21.)
pub fn drain<E: TraceWriter>(e: &mut E, ctx: &mut Ctx) -> bool {
    let w = e.writing();
    if !w.active {
        return false;
    }
    let got = w.puller.pull(ctx, 0, 1);
    observe_pulled(e, got, ctx)
}

/// The name a writer reports for its file: `<stdout>` for `-`.
pub fn output_name(filename: &str) -> String {
    if filename == "-" {
        "<stdout>".into()
    } else {
        filename.into()
    }
}

/// The `source` kind's trait for a trace reader `$t` whose [`Replay`] is
/// its `replay` field.
macro_rules! trace_source {
    ($t:ty) => {
        impl $crate::userlevel::tracereplay::Replaying for $t {
            fn replay(&self) -> &$crate::userlevel::tracereplay::Replay {
                &self.replay
            }
            fn replay_mut(&mut self) -> &mut $crate::userlevel::tracereplay::Replay {
                &mut self.replay
            }
        }

        impl rclick_core::element::Source for $t {
            fn generate(
                &mut self,
                max: usize,
                ctx: &mut rclick_core::Ctx,
            ) -> Option<rclick_core::Batch> {
                $crate::userlevel::tracereplay::generate(self, max, ctx)
            }
            fn source_task(&self) -> &rclick_core::element::SourceTask {
                self.replay.source_task()
            }
        }
    };
}
pub(crate) use trace_source;

/// The `Element` methods every trace reader has: the pull notifier, the
/// TIMING timer, and letting go of the file (its `reader` and `pending`
/// fields) at cleanup. Use inside `impl Element`.
macro_rules! reader_element_methods {
    () => {
        fn empty_notifier(&self) -> Option<rclick_core::SignalId> {
            self.replay.empty_notifier()
        }

        fn run_timer(&mut self, _timer: rclick_core::TimerId, ctx: &mut rclick_core::Ctx) {
            self.replay.run_timer(ctx);
        }

        fn cleanup(&mut self) {
            self.pending = None;
            self.reader = None;
        }
    };
}
pub(crate) use reader_element_methods;

/// The `Element` methods every trace writer has: one input and an
/// optional output, the task draining a pull input when there is no
/// output, and the file (its `writer` field) flushed at cleanup. Use
/// inside `impl Element`.
macro_rules! writer_element_methods {
    () => {
        fn port_count(&self) -> &'static str {
            "1/0-1"
        }

        fn run_task(&mut self, _task: rclick_core::TaskId, ctx: &mut rclick_core::Ctx) -> bool {
            $crate::userlevel::tracereplay::drain(self, ctx)
        }

        fn cleanup(&mut self) {
            if let Some(mut w) = self.writer.take() {
                let _ = w.flush();
            }
        }
    };
}
pub(crate) use writer_element_methods;

/// [`TraceWriter`] for a writer `$t` whose [`Writing`] is its `writing`
/// field.
macro_rules! trace_writer {
    ($t:ty) => {
        impl $crate::userlevel::tracereplay::TraceWriter for $t {
            fn writing(&self) -> &$crate::userlevel::tracereplay::Writing {
                &self.writing
            }
            fn writing_mut(&mut self) -> &mut $crate::userlevel::tracereplay::Writing {
                &mut self.writing
            }
        }
    };
}
pub(crate) use trace_writer;

/// The handlers every reader has, in its table.
pub mod reader_handlers {
    use super::{unparse_fixed, Replaying, SAMPLING_SHIFT};
    use rclick_core::conf::parse_bool;
    use rclick_core::element::hflags;
    use rclick_core::Handler;

    /// `count` (read): packets emitted.
    pub const fn count<E: Replaying>() -> Handler<E> {
        Handler::data("count", |e| &e.replay().count)
    }

    /// `reset_counts` (button).
    pub const fn reset_counts<E: Replaying>() -> Handler<E> {
        Handler::button("reset_counts", |e, _, _| {
            e.replay_mut().count = 0;
            Ok(())
        })
    }

    /// `sampling_prob` (read): SAMPLE, exactly.
    pub const fn sampling_prob<E: Replaying>() -> Handler<E> {
        Handler::read("sampling_prob", |e, _| {
            unparse_fixed(e.replay().sampling_prob, SAMPLING_SHIFT)
        })
    }

    /// `active` (read/write checkbox); a write that is not a boolean is a
    /// "type mismatch".
    pub const fn active<E: Replaying>() -> Handler<E> {
        Handler::flagged(
            hflags::CHECKBOX,
            Handler::data_write(
                "active",
                |e| &e.replay().active,
                |e, value, ctx| {
                    let a = parse_bool(value.trim()).map_err(|_| "type mismatch".to_string())?;
                    e.replay_mut().set_active(a, ctx);
                    Ok(())
                },
            ),
        )
    }

    /// `stop` (button): deactivate and stop the driver.
    pub const fn stop<E: Replaying>() -> Handler<E> {
        Handler::button("stop", |e, _, ctx| {
            e.replay_mut().set_active(false, ctx);
            ctx.please_stop();
            Ok(())
        })
    }
}

/// The handlers every writer has, in its table.
pub mod writer_handlers {
    use super::TraceWriter;
    use rclick_core::Handler;

    /// `count` (read): packets (or lines) written.
    pub const fn count<E: TraceWriter>() -> Handler<E> {
        Handler::data("count", |e| &e.writing().count)
    }

    /// `reset_counts` (button).
    pub const fn reset_counts<E: TraceWriter>() -> Handler<E> {
        Handler::button("reset_counts", |e, _, _| {
            e.writing_mut().count = 0;
            Ok(())
        })
    }
}
