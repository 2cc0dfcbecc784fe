//! Tasks (stride scheduling), timers and notifier signals.
//!
//! Stride scheduling as in Click: each task holds tickets; its stride is
//! `STRIDE1 / tickets`; the scheduled task with the smallest pass runs next
//! and its pass grows by its stride. A task that sleeps and wakes again
//! resumes at the current global pass, so sleeping earns no credit.
//!
//! Notifier signals let a pulling task sleep while every queue it could pull
//! from is empty: the queue wakes the signal's listeners when it receives a
//! packet, so an idle pull path costs nothing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Timestamp;

/// Click's default ticket count for a task.
pub const DEFAULT_TICKETS: u32 = 1024;
/// Click's maximum ticket count.
pub const MAX_TICKETS: u32 = 1 << 15;
const STRIDE1: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalId(pub u32);

#[derive(Clone, Debug)]
pub(crate) struct TaskState {
    pub elem: usize,
    pub tickets: u32,
    pub stride: u64,
    pub pass: u64,
    pub scheduled: bool,
    pub home_thread: i32,
    /// On Click's quiescent thread (StaticThreadSched preference -1): never
    /// scheduled.
    pub never: bool,
}

/// The run queue: a min-heap on pass, with a sequence number so equal
/// passes run in the order they were queued.
#[derive(Debug, Default)]
pub(crate) struct Scheduler {
    pub tasks: Vec<TaskState>,
    heap: RunHeap,
    seq: u64,
    global_pass: u64,
    /// Runs of task `lone` (each [`run_again_if_alone`]) whose pass
    /// arithmetic is still owed: it is done at once, exactly, by
    /// [`settle`] before anything reads or changes a pass, the global
    /// pass or the sequence number.
    ///
    /// [`run_again_if_alone`]: Scheduler::run_again_if_alone
    /// [`settle`]: Scheduler::settle
    lone_runs: u64,
    lone: u32,
}

/// A run-queue entry: pass, then the sequence number it was queued with
/// (so equal passes run in queueing order), then the task.
type Entry = (u64, u64, u32);

/// The run queue's min-heap. `BinaryHeap` would do, but replacing its top
/// (the task loop's common step: the task that ran goes back, the next
/// comes off) goes through `PeekMut`, whose drop is an out-of-line sift
/// even when the heap holds one entry; here it is an inline store and a
/// sift that ends at once on a small heap.
#[derive(Debug, Default)]
struct RunHeap {
    v: Vec<Entry>,
}

impl RunHeap {
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }

    fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.v.iter()
    }

    fn push(&mut self, e: Entry) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent] <= e {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    fn pop(&mut self) -> Option<Entry> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        self.sift_down_from_top(last);
        Some(top)
    }

    /// Replaces the smallest entry (the heap is not empty) with `e`.
    #[inline]
    fn replace_top(&mut self, e: Entry) {
        if self.v.len() == 1 {
            self.v[0] = e;
        } else {
            self.sift_down_from_top(e);
        }
    }

    /// Puts `e` at the top's place and moves it down to where it belongs.
    fn sift_down_from_top(&mut self, e: Entry) {
        let n = self.v.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.v[l + 1] < self.v[l] {
                l + 1
            } else {
                l
            };
            if e <= self.v[c] {
                break;
            }
            self.v[i] = self.v[c];
            i = c;
        }
        self.v[i] = e;
    }
}

impl Scheduler {
    pub fn add(&mut self, elem: usize, tickets: u32, scheduled: bool) -> TaskId {
        self.settle();
        let tickets = tickets.clamp(1, MAX_TICKETS);
        let id = TaskId(self.tasks.len() as u32);
        self.tasks.push(TaskState {
            elem,
            tickets,
            stride: STRIDE1 / tickets as u64,
            pass: self.global_pass,
            scheduled: false,
            home_thread: 0,
            never: false,
        });
        if scheduled {
            self.schedule(id);
        }
        id
    }

    pub fn set_tickets(&mut self, id: TaskId, tickets: u32) {
        // The owed runs went at the old stride.
        self.settle();
        if let Some(t) = self.tasks.get_mut(id.0 as usize) {
            t.tickets = tickets.clamp(1, MAX_TICKETS);
            t.stride = STRIDE1 / t.tickets as u64;
        }
    }

    /// Puts a sleeping task on the run queue. No effect if it is already
    /// there.
    pub fn schedule(&mut self, id: TaskId) {
        self.settle();
        let gp = self.global_pass;
        let Some(t) = self.tasks.get_mut(id.0 as usize) else {
            return;
        };
        if t.scheduled || t.never {
            return;
        }
        t.scheduled = true;
        t.pass = t.pass.max(gp);
        self.seq += 1;
        self.heap.push((t.pass, self.seq, id.0));
    }

    #[inline]
    pub fn is_scheduled(&self, id: TaskId) -> bool {
        self.tasks.get(id.0 as usize).is_some_and(|t| t.scheduled)
    }

    /// Takes the next task to run off the queue (it is no longer
    /// scheduled; it runs once and must reschedule itself to run again).
    pub fn pop(&mut self) -> Option<TaskId> {
        // Nothing to settle: a pop reads passes only off a heap that is
        // not empty, and lone runs are owed only while it is empty (it
        // grows only through `schedule`, which settles).
        debug_assert!(self.heap.v.is_empty() || self.lone_runs == 0);
        while let Some((pass, _, id)) = self.heap.pop() {
            let t = &mut self.tasks[id as usize];
            if !t.scheduled || t.pass != pass {
                continue;
            }
            t.scheduled = false;
            self.global_pass = pass;
            t.pass += t.stride;
            return Some(TaskId(id));
        }
        None
    }

    /// Puts `id`, the task that just ran and asked to run again, back on
    /// the queue and takes the next task off it: the same outcome as
    /// [`schedule`](Self::schedule) then [`pop`](Self::pop), for a third
    /// of the cost. A lone busy task, or one whose pass is still strictly
    /// the smallest, runs again without touching the heap; otherwise it
    /// takes the place of the heap's top, which runs next (one sift, not a
    /// push and a pop).
    #[inline(always)]
    pub fn reschedule_and_pop(&mut self, id: TaskId) -> Option<TaskId> {
        if self.heap.v.len() == 1 {
            if let Some(next) = self.reschedule_against_one(id) {
                return next;
            }
        }
        if self.heap.v.is_empty() {
            // Lone runs may be owed only now (see `pop`).
            self.settle();
        }
        debug_assert_eq!(self.lone_runs, 0);
        let gp = self.global_pass;
        let Some(t) = self.tasks.get(id.0 as usize) else {
            return self.pop();
        };
        if t.scheduled {
            return self.pop();
        }
        let pass = t.pass.max(gp);
        let stride = t.stride;
        let Some(&(top_pass, _, top_id)) = self.heap.peek() else {
            return Some(self.run_again(id, pass, stride));
        };
        if pass < top_pass {
            return Some(self.run_again(id, pass, stride));
        }
        // The top runs next, unless its entry is stale (then the heap's own
        // pop skips it).
        let top_live = self
            .tasks
            .get(top_id as usize)
            .is_some_and(|u| u.scheduled && u.pass == top_pass);
        if !top_live {
            self.schedule(id);
            return self.pop();
        }
        self.seq += 1;
        self.heap.replace_top((pass, self.seq, id.0));
        let t = &mut self.tasks[id.0 as usize];
        t.scheduled = true;
        t.pass = pass;
        let u = &mut self.tasks[top_id as usize];
        u.scheduled = false;
        u.pass += u.stride;
        self.global_pass = top_pass;
        Some(TaskId(top_id))
    }

    /// [`reschedule_and_pop`](Self::reschedule_and_pop) when one other
    /// task is scheduled: two busy tasks taking turns (a source and the
    /// task that empties the queue it fills). The same steps, on slices
    /// whose lengths stay in registers: each index is checked once, and
    /// the heap's one entry is overwritten in place. `None` (nothing
    /// changed) leaves the uncommon cases to the general path: `id`
    /// already queued, the heap's entry stale, an index out of range.
    #[inline(always)]
    fn reschedule_against_one(&mut self, id: TaskId) -> Option<Option<TaskId>> {
        let heap = &mut self.heap.v[..];
        let tasks = &mut self.tasks[..];
        let [(top_pass, _, top_id)] = *heap else {
            return None;
        };
        let (i, j) = (id.0 as usize, top_id as usize);
        let (Some(t), Some(u)) = (tasks.get(i), tasks.get(j)) else {
            return None;
        };
        if t.scheduled {
            return None;
        }
        let pass = t.pass.max(self.global_pass);
        let stride = t.stride;
        if pass < top_pass {
            // Still strictly first: it runs again, the heap untouched.
            self.seq += 1;
            self.global_pass = pass;
            tasks[i].pass = pass + stride;
            return Some(Some(id));
        }
        if !(u.scheduled && u.pass == top_pass) {
            return None;
        }
        let next_pass = top_pass + u.stride;
        self.seq += 1;
        heap[0] = (pass, self.seq, id.0);
        tasks[i].scheduled = true;
        tasks[i].pass = pass;
        tasks[j].scheduled = false;
        tasks[j].pass = next_pass;
        self.global_pass = top_pass;
        Some(Some(TaskId(top_id)))
    }

    /// When no task is scheduled, runs `id` (the task that just ran,
    /// taken off this queue, and asked to run again) again: the outcome of
    /// [`reschedule_and_pop`](Self::reschedule_and_pop) on an empty queue.
    /// Returns false, changing nothing, when some task is scheduled; the
    /// caller then goes the usual way.
    ///
    /// The pass arithmetic of these runs waits (see `lone_runs`): a busy
    /// task alone on its thread costs a length test and a count per run.
    #[inline(always)]
    pub fn run_again_if_alone(&mut self, id: TaskId) -> bool {
        // Every scheduled task has an entry on the heap: an empty heap
        // means none is (so neither is `id`).
        if !self.heap.v.is_empty() {
            return false;
        }
        // Any other task's owed runs were settled before `id` ran: it came
        // off the queue through `pop`, from a heap that was not empty
        // (which only `schedule` grows, and it settles), or through
        // `reschedule_and_pop` (it settles on an empty heap). So all the
        // runs owed are this task's.
        self.lone = id.0;
        self.lone_runs += 1;
        true
    }

    /// Does the pass arithmetic owed for the lone task's runs: each run
    /// was `reschedule_and_pop` on an empty queue (its pass `p`, the
    /// larger of its own and the global pass, becomes the global pass; its
    /// own grows to `p + stride`; the sequence number grows by one).
    #[inline(always)]
    fn settle(&mut self) {
        if self.lone_runs != 0 {
            self.settle_lone_runs();
        }
    }

    #[inline(never)]
    fn settle_lone_runs(&mut self) {
        let k = std::mem::take(&mut self.lone_runs);
        let gp = self.global_pass;
        let Some(t) = self.tasks.get_mut(self.lone as usize) else {
            return;
        };
        // After the first run the task's pass stays ahead of the global
        // pass, so each later run starts from its own: a closed form.
        let first = t.pass.max(gp);
        self.global_pass = first + (k - 1) * t.stride;
        t.pass = first + k * t.stride;
        self.seq += k;
    }

    /// The end state of scheduling task `id` at `pass` and popping it
    /// straight off again.
    #[inline]
    fn run_again(&mut self, id: TaskId, pass: u64, stride: u64) -> TaskId {
        self.seq += 1;
        self.global_pass = pass;
        self.tasks[id.0 as usize].pass = pass + stride;
        id
    }

    /// Puts a task on Click's quiescent thread: off the queue, for good.
    pub fn never_run(&mut self, id: TaskId) {
        if let Some(t) = self.tasks.get_mut(id.0 as usize) {
            t.scheduled = false;
            t.never = true;
            t.home_thread = -1;
        }
    }

    /// Takes a task off the queue (its heap entry goes stale).
    pub fn unschedule(&mut self, id: TaskId) {
        if let Some(t) = self.tasks.get_mut(id.0 as usize) {
            t.scheduled = false;
        }
    }

    /// A scheduler for another thread, with the same task table: the
    /// tasks for which `moves` holds leave this queue and join the new
    /// one (if they were scheduled).
    pub fn split_off(&mut self, moves: impl Fn(usize) -> bool) -> Scheduler {
        self.settle();
        let mut other = Scheduler {
            tasks: self.tasks.clone(),
            heap: RunHeap::default(),
            seq: 0,
            global_pass: self.global_pass,
            lone_runs: 0,
            lone: 0,
        };
        for t in other.tasks.iter_mut() {
            t.scheduled = false;
        }
        for i in 0..self.tasks.len() {
            if moves(i) && self.tasks[i].scheduled {
                self.tasks[i].scheduled = false;
                other.schedule(TaskId(i as u32));
            }
        }
        other
    }

    pub fn any_scheduled(&self) -> bool {
        self.heap.iter().any(|(pass, _, id)| {
            let t = &self.tasks[*id as usize];
            t.scheduled && t.pass == *pass
        })
    }
}

#[derive(Clone, Debug)]
pub(crate) struct TimerState {
    pub elem: usize,
    pub expiry: Option<Timestamp>,
    generation: u64,
}

/// Timers ordered by expiry; rescheduling leaves a stale heap entry that is
/// skipped by its generation number.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    pub timers: Vec<TimerState>,
    heap: BinaryHeap<Reverse<(Timestamp, u64, u32, u64)>>,
    seq: u64,
}

impl Timers {
    pub fn add(&mut self, elem: usize) -> TimerId {
        self.timers.push(TimerState {
            elem,
            expiry: None,
            generation: 0,
        });
        TimerId(self.timers.len() as u32 - 1)
    }

    pub fn schedule_at(&mut self, id: TimerId, when: Timestamp) {
        let Some(t) = self.timers.get_mut(id.0 as usize) else {
            return;
        };
        t.generation += 1;
        t.expiry = Some(when);
        self.seq += 1;
        self.heap
            .push(Reverse((when, self.seq, id.0, t.generation)));
    }

    pub fn unschedule(&mut self, id: TimerId) {
        if let Some(t) = self.timers.get_mut(id.0 as usize) {
            t.generation += 1;
            t.expiry = None;
        }
    }

    pub fn expiry(&self, id: TimerId) -> Option<Timestamp> {
        self.timers.get(id.0 as usize).and_then(|t| t.expiry)
    }

    /// Timers for another thread, with the same timer table: the pending
    /// timers of elements for which `moves` holds leave this set and join
    /// the new one.
    pub fn split_off(&mut self, moves: impl Fn(usize) -> bool) -> Timers {
        let mut other = Timers {
            timers: self.timers.clone(),
            heap: BinaryHeap::new(),
            seq: 0,
        };
        for t in other.timers.iter_mut() {
            t.expiry = None;
        }
        for i in 0..self.timers.len() {
            if !moves(self.timers[i].elem) {
                continue;
            }
            if let Some(when) = self.timers[i].expiry {
                self.unschedule(TimerId(i as u32));
                other.schedule_at(TimerId(i as u32), when);
            }
        }
        other
    }

    fn discard_stale(&mut self) {
        while let Some(Reverse((_, _, id, gen))) = self.heap.peek() {
            if self.timers[*id as usize].generation == *gen {
                break;
            }
            self.heap.pop();
        }
    }

    /// The earliest pending expiry.
    pub fn next_expiry(&mut self) -> Option<Timestamp> {
        self.discard_stale();
        self.heap.peek().map(|Reverse((t, ..))| *t)
    }

    /// Takes the earliest timer if it has expired by `now`.
    pub fn pop_expired(&mut self, now: Timestamp) -> Option<TimerId> {
        self.discard_stale();
        match self.heap.peek() {
            Some(Reverse((t, ..))) if *t <= now => {
                let Reverse((_, _, id, _)) = self.heap.pop()?;
                self.timers[id as usize].expiry = None;
                self.timers[id as usize].generation += 1;
                Some(TimerId(id))
            }
            _ => None,
        }
    }
}

/// What a pulling element listens to: the OR of some notifier signals, or
/// "always busy" when some upstream source has no notifier (so the puller
/// must keep polling).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NotifierSignal {
    /// Nothing upstream can ever produce a packet.
    #[default]
    Idle,
    Busy,
    Signals(Vec<SignalId>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests' pseudo-random numbers (xorshift64): repeatable runs.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn stride_shares_by_tickets() {
        let mut s = Scheduler::default();
        let a = s.add(0, 100, true);
        let _b = s.add(1, 300, true);
        let (mut na, mut nb) = (0, 0);
        for _ in 0..4000 {
            let t = s.pop().unwrap();
            if t == a {
                na += 1
            } else {
                nb += 1
            }
            s.schedule(t);
        }
        let ratio = nb as f64 / na as f64;
        assert!((2.9..3.1).contains(&ratio), "ratio {ratio}");
    }

    /// `reschedule_and_pop` picks exactly the tasks `schedule` then `pop`
    /// would, in the same order, for any mix of tickets and sleeps.
    #[test]
    fn reschedule_fast_path_matches_schedule_then_pop() {
        let tickets = [1024u32, 1024, 300, 7, 32768, 1024];
        let mut slow = Scheduler::default();
        let mut fast = Scheduler::default();
        for (i, &n) in tickets.iter().enumerate() {
            slow.add(i, n, i % 2 == 0);
            fast.add(i, n, i % 2 == 0);
        }
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut fast_next = fast.pop();
        // Fewer steps under Miri, which checks every access of each.
        let steps = if cfg!(miri) { 500 } else { 20_000u32 };
        for step in 0..steps {
            xorshift(&mut rng);
            let t = slow.pop();
            assert_eq!(t, fast_next, "step {step}");
            let Some(t) = t else { break };
            // Wake a sleeping task now and then; the task that ran asks
            // to run again most of the time.
            let wake = TaskId((rng % tickets.len() as u64) as u32);
            if rng.is_multiple_of(5) {
                slow.schedule(wake);
                fast.schedule(wake);
            }
            let again = !rng.is_multiple_of(11);
            if again {
                slow.schedule(t);
                fast_next = fast.reschedule_and_pop(t);
            } else {
                fast_next = fast.pop();
            }
            if slow.tasks.iter().all(|x| !x.scheduled) && fast_next.is_none() {
                slow.schedule(TaskId(0));
                fast.schedule(TaskId(0));
                fast_next = fast.pop();
            }
        }
    }

    /// The driver's step after a task ran: alone, it runs again through
    /// [`Scheduler::run_again_if_alone`] (its passes owed); otherwise as
    /// before.
    fn driver_step(s: &mut Scheduler, t: TaskId, again: bool) -> Option<TaskId> {
        if !again {
            return s.pop();
        }
        if s.run_again_if_alone(t) {
            return Some(t);
        }
        s.reschedule_and_pop(t)
    }

    /// The passes, queue flags, global pass and sequence number, with the
    /// lone task's runs settled.
    fn state(s: &mut Scheduler) -> (Vec<(u64, bool)>, u64, u64) {
        s.settle();
        let tasks = s.tasks.iter().map(|t| (t.pass, t.scheduled)).collect();
        (tasks, s.global_pass, s.seq)
    }

    /// Two busy tasks share by their tickets through the driver's step
    /// too (neither is ever alone, so each run goes through the heap).
    #[test]
    fn stride_shares_by_tickets_through_driver_step() {
        let mut s = Scheduler::default();
        let a = s.add(0, 100, true);
        let _b = s.add(1, 300, true);
        let (mut na, mut nb) = (0, 0);
        let mut next = s.pop();
        for _ in 0..4000 {
            let t = next.unwrap();
            if t == a {
                na += 1
            } else {
                nb += 1
            }
            next = driver_step(&mut s, t, true);
        }
        let ratio = nb as f64 / na as f64;
        assert!((2.9..3.1).contains(&ratio), "ratio {ratio}");
    }

    /// A task that runs alone for a while, then wakes another (as a source
    /// wakes the task behind a queue), leaves the same passes as when each
    /// run went through `schedule` and `pop`: the woken task starts at the
    /// same global pass, and the two then alternate in the same order.
    #[test]
    fn task_woken_by_lone_task_runs_in_the_same_order() {
        let mut slow = Scheduler::default();
        let mut fast = Scheduler::default();
        for s in [&mut slow, &mut fast] {
            s.add(0, 1024, true);
            s.add(1, 300, false);
        }
        let a = slow.pop().unwrap();
        let mut fast_next = fast.pop();
        let mut order = Vec::new();
        for step in 0..200 {
            if step <= 37 {
                assert_eq!(fast_next, Some(a), "alone until the wake");
            }
            let t = fast_next.unwrap();
            order.push(t);
            // At run 37 the lone task wakes task 1, during its run.
            if step == 37 {
                assert_eq!(fast.lone_runs, 37, "the runs' passes are owed");
                slow.schedule(TaskId(1));
                fast.schedule(TaskId(1));
                assert_eq!(state(&mut slow), state(&mut fast), "at the wake");
            }
            slow.schedule(t);
            let want = slow.pop();
            fast_next = driver_step(&mut fast, t, true);
            assert_eq!(want, fast_next, "step {step}");
        }
        assert!(order[38..].contains(&TaskId(1)), "the woken task runs");
        assert_eq!(state(&mut slow), state(&mut fast));
    }

    /// The driver's step, with lone runs owed and settled in between, picks
    /// exactly the tasks `schedule` then `pop` would and leaves the same
    /// passes, for any mix of tickets, sleeps, wakes and ticket changes.
    #[test]
    fn lone_runs_settle_exactly() {
        let tickets = [1024u32, 300, 7, 32768];
        let mut slow = Scheduler::default();
        let mut fast = Scheduler::default();
        for (i, &n) in tickets.iter().enumerate() {
            slow.add(i, n, i == 0);
            fast.add(i, n, i == 0);
        }
        let mut rng = 0x1234_5678_9abc_def1u64;
        let mut fast_next = fast.pop();
        let steps = if cfg!(miri) { 500 } else { 20_000u32 };
        let mut lone = 0;
        for step in 0..steps {
            xorshift(&mut rng);
            let t = slow.pop();
            assert_eq!(t, fast_next, "step {step}");
            let Some(t) = t else { break };
            lone += usize::from(fast.lone_runs > 0);
            // Rare wakes and sleeps, so a task often runs alone for a
            // while; now and then its tickets change mid-run.
            match rng % 64 {
                0 => {
                    let wake = TaskId((rng >> 8) as u32 % tickets.len() as u32);
                    slow.schedule(wake);
                    fast.schedule(wake);
                    assert_eq!(state(&mut slow), state(&mut fast), "step {step}");
                }
                2 => {
                    let n = (rng >> 8) as u32 % 4000 + 1;
                    slow.set_tickets(t, n);
                    fast.set_tickets(t, n);
                }
                _ => {}
            }
            let again = !matches!(rng % 64, 3 | 4);
            if again {
                slow.schedule(t);
            }
            fast_next = driver_step(&mut fast, t, again);
            if slow.tasks.iter().all(|x| !x.scheduled) && fast_next.is_none() {
                slow.schedule(TaskId(0));
                fast.schedule(TaskId(0));
                fast_next = fast.pop();
            }
        }
        assert!(lone > steps as usize / 4, "lone runs exercised: {lone}");
        // Both took the last step's next task off their queue.
        assert_eq!(slow.pop(), fast_next);
        assert_eq!(state(&mut slow), state(&mut fast));
    }

    /// Two or three tasks taking turns, the heap mostly holding the one
    /// other task (`reschedule_against_one`): the driver's step leaves the
    /// same order, passes, flags, global pass and sequence number as
    /// `schedule` then `pop`, through stale entries (a task taken off the
    /// queue), a task queued again while it runs, and ticket changes (of
    /// the running task and of a queued one).
    #[test]
    fn two_task_turns_match_schedule_then_pop() {
        let tickets = [1024u32, 1024, 300];
        let mut slow = Scheduler::default();
        let mut fast = Scheduler::default();
        for (i, &n) in tickets.iter().enumerate() {
            slow.add(i, n, i < 2);
            fast.add(i, n, i < 2);
        }
        let mut rng = 0x0bad_5eed_1234_4321u64;
        let mut next = slow.pop();
        assert_eq!(next, fast.pop());
        let steps = if cfg!(miri) { 500 } else { 20_000u32 };
        let (mut against_one, mut turns) = (0, 0);
        for step in 0..steps {
            xorshift(&mut rng);
            let Some(t) = next else { break };
            let other = TaskId((rng >> 8) as u32 % tickets.len() as u32);
            match rng % 32 {
                0 => {
                    slow.unschedule(other);
                    fast.unschedule(other);
                }
                1 => {
                    slow.schedule(other);
                    fast.schedule(other);
                }
                2 => {
                    slow.schedule(t);
                    fast.schedule(t);
                }
                3 => {
                    let n = (rng >> 16) as u32 % 3000 + 1;
                    slow.set_tickets(t, n);
                    fast.set_tickets(t, n);
                }
                5 => {
                    // The queued task's stride changes under its entry.
                    let n = (rng >> 16) as u32 % 3000 + 1;
                    slow.set_tickets(other, n);
                    fast.set_tickets(other, n);
                }
                _ => {}
            }
            let again = rng % 32 != 4;
            if again {
                slow.schedule(t);
            }
            next = slow.pop();
            let one_other = fast.heap.v.len() == 1;
            against_one += usize::from(again && one_other);
            let fast_next = driver_step(&mut fast, t, again);
            assert_eq!(next, fast_next, "step {step}");
            turns += usize::from(again && one_other && next != Some(t));
            assert_eq!(state(&mut slow), state(&mut fast), "step {step}");
            if next.is_none() {
                slow.schedule(TaskId(0));
                fast.schedule(TaskId(0));
                next = slow.pop();
                assert_eq!(next, fast.pop());
            }
        }
        assert!(
            against_one > steps as usize / 5,
            "two-task path: {against_one}"
        );
        assert!(turns > steps as usize / 10, "turns taken: {turns}");
    }

    /// The run queue's heap gives entries back smallest first, whatever
    /// the mix of pushes, pops and top replacements.
    #[test]
    fn run_heap_orders_like_a_sorted_list() {
        let mut h = RunHeap::default();
        let mut model: Vec<Entry> = Vec::new();
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let steps = if cfg!(miri) { 300 } else { 20_000u32 };
        for seq in 0..steps as u64 {
            xorshift(&mut rng);
            let e = (rng % 50, seq, (rng % 7) as u32);
            match rng % 3 {
                0 if !model.is_empty() => {
                    model.sort_unstable();
                    let want = model.remove(0);
                    assert_eq!(h.pop(), Some(want));
                }
                1 if !model.is_empty() => {
                    model.sort_unstable();
                    model[0] = e;
                    h.replace_top(e);
                }
                _ => {
                    model.push(e);
                    h.push(e);
                }
            }
            model.sort_unstable();
            assert_eq!(h.peek(), model.first());
        }
        while let Some(want) = (!model.is_empty()).then(|| model.remove(0)) {
            assert_eq!(h.pop(), Some(want));
        }
        assert_eq!(h.pop(), None);
    }

    #[test]
    fn timers_fire_in_order_and_reschedule_replaces() {
        let mut t = Timers::default();
        let x = t.add(0);
        let y = t.add(1);
        t.schedule_at(x, Timestamp(30));
        t.schedule_at(y, Timestamp(20));
        t.schedule_at(x, Timestamp(10));
        assert_eq!(t.next_expiry(), Some(Timestamp(10)));
        assert_eq!(t.pop_expired(Timestamp(25)), Some(x));
        assert_eq!(t.pop_expired(Timestamp(25)), Some(y));
        assert_eq!(t.pop_expired(Timestamp(100)), None);
    }
}
