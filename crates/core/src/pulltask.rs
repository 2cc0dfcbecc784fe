//! The pull-side task idiom: a task that pulls from one input and sleeps
//! while everything upstream is empty (Click's Task + NotifierSignal pair,
//! used by Unqueue, Discard and ToDump in pull context, ToDevice, ...).

use std::cell::Cell;

use crate::batch::Batch;
use crate::ctx::{Ctx, InitCtx};
use crate::sched::{NotifierSignal, TaskId};

/// A task pulling from an input, woken by the upstream queues' notifier.
#[derive(Debug, Default)]
pub struct PullTask {
    task: Option<TaskId>,
    signal: NotifierSignal,
    /// The input last pulled and the element output answering it, when
    /// that answer cannot change (no pull forwarder on the way): resolved
    /// at the first pull (the graph's tables are final by then, shared
    /// flags included), so later pulls skip the graph lookup.
    source: Cell<Option<ResolvedSource>>,
}

#[derive(Clone, Copy, Debug)]
struct ResolvedSource {
    port: usize,
    src: usize,
    sport: usize,
}

impl PullTask {
    /// Creates the task (scheduled if `scheduled`) and listens to the
    /// empty-notifiers upstream of input `port`.
    pub fn initialize(&mut self, ctx: &mut InitCtx, port: usize, scheduled: bool) {
        let t = ctx.new_task(scheduled);
        self.signal = ctx.upstream_empty_signal(port, Some(t));
        self.task = Some(t);
    }

    pub fn task(&self) -> Option<TaskId> {
        self.task
    }

    /// Pulls up to `max` packets from input `port`. The task stays
    /// scheduled while packets come or upstream may still have some;
    /// otherwise it sleeps until a queue upstream wakes it.
    #[inline]
    pub fn pull(&self, ctx: &mut Ctx, port: usize, max: usize) -> Option<Batch> {
        self.pull_inline(ctx, port, max)
    }

    /// [`PullTask::pull`] compiled into its caller: for a task that does
    /// little else (Unqueue), where the call and its register saves are a
    /// tenth of the pull.
    #[inline(always)]
    fn pull_inline(&self, ctx: &mut Ctx, port: usize, max: usize) -> Option<Batch> {
        let got = match self.source.get() {
            Some(r) if r.port == port => ctx.pull_from(r.src, r.sport, max),
            _ => self.pull_resolving(ctx, port, max),
        };
        if got.is_some() || ctx.signal_active(&self.signal) {
            ctx.fast_reschedule();
        }
        got
    }

    /// [`PullTask::pull`] from input `port`, the packets handed on
    /// straight out of output 0 (the element's table entry names its
    /// target: no graph lookup per pull): Unqueue's whole task. Returns
    /// how many packets moved, `None` when the pull found none.
    #[inline(always)]
    pub fn pull_to_out0(&self, ctx: &mut Ctx, port: usize, max: usize) -> Option<usize> {
        let batch = self.pull_inline(ctx, port, max)?;
        let n = batch.len();
        ctx.emit_out0(batch);
        Some(n)
    }

    /// A pull that finds its source in the graph, remembering it when it
    /// is fixed.
    #[inline(never)]
    fn pull_resolving(&self, ctx: &mut Ctx, port: usize, max: usize) -> Option<Batch> {
        let (src, sport, fixed) = ctx.resolve_pull(port)?;
        if fixed {
            self.source.set(Some(ResolvedSource { port, src, sport }));
        }
        ctx.pull_from(src, sport, max)
    }

    /// Schedules the task (after it was deactivated, for example).
    pub fn wake(&self, ctx: &Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}
