//! The pull-side task idiom: a task that pulls from one input and sleeps
//! while everything upstream is empty (Click's Task + NotifierSignal pair,
//! used by Unqueue, Discard and ToDump in pull context, ToDevice, ...).

use crate::batch::Batch;
use crate::ctx::{Ctx, InitCtx};
use crate::sched::{NotifierSignal, TaskId};

/// A task pulling from an input, woken by the upstream queues' notifier.
#[derive(Debug, Default)]
pub struct PullTask {
    task: Option<TaskId>,
    signal: NotifierSignal,
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
    pub fn pull(&self, ctx: &mut Ctx, port: usize, max: usize) -> Option<Batch> {
        let got = ctx.pull(port, max);
        if got.is_some() || ctx.signal_active(&self.signal) {
            ctx.fast_reschedule();
        }
        got
    }

    /// Schedules the task (after it was deactivated, for example).
    pub fn wake(&self, ctx: &Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}
