//! The driver: runs tasks, timers and ready descriptors until the router
//! stops, and the entry points that call into elements from outside
//! (injecting and pulling packets, cleanup).

use std::cell::RefCell;
use std::sync::atomic::Ordering;

use std::sync::atomic::AtomicBool;

use super::threads::{cycles, ThreadRt};
use super::{set_current_thread, ElementCell, Router, RouterCore, StopReason, WAKE_ELEM};
use crate::batch::Batch;
use crate::ctx::Ctx;
use crate::ctx::Dispatcher;
use crate::element::Element;
use crate::packet::Packet;
use crate::sched::TaskId;

/// Longest the idle driver blocks in one `poll`, so the stop flag (raised
/// by a signal handler) is noticed promptly.
const IDLE_POLL_MS: i32 = 20;

/// Longest the idle driver blocks while a hot swap is being prepared on
/// another thread, so the new router is installed soon after it is ready.
const BUILDING_POLL_MS: i32 = 2;

/// Tasks run per driver iteration before timers and the stop check.
const TASKS_PER_ITERATION: usize = 64;

/// How long a thread with nothing to do sleeps between looks at the stop
/// and pause flags (it is woken early by anything it must do).
const THREADED_IDLE_MS: i32 = 20;

/// How long an idle thread watches for wakes from other threads before it
/// sleeps.
const SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);

/// What one router thread runs with: the router, its own dispatcher and
/// its index.
pub(super) struct Driver<'a> {
    core: &'a RouterCore,
    disp: &'a mut Dispatcher,
    ready: &'a mut Vec<(std::os::fd::RawFd, usize, bool, bool)>,
    thread: usize,
    /// This thread's state, looked up once rather than per task.
    rt_thread: &'a ThreadRt,
}

/// Why thread 0's threaded loop returned.
enum Outcome {
    Stop(StopReason),
    /// A hot swap is ready: the threads stop, it is installed, they start
    /// again.
    Swap,
}

impl<'a> Driver<'a> {
    #[inline]
    fn th(&self) -> &'a ThreadRt {
        self.rt_thread
    }

    /// Calls `f` on element `elem` from outside any element (a top-level
    /// call), then runs everything it emitted, depth first, and any work
    /// deferred meanwhile. `None` if the element is busy.
    fn call_element<R>(
        &mut self,
        elem: usize,
        f: impl FnOnce(&mut dyn Element, &mut Ctx) -> R,
    ) -> Option<R> {
        let mut ctx = Ctx::new(self.core, self.disp, elem);
        let saved = ctx.enter(elem);
        let r = match self.core.elements[elem].try_borrow_mut() {
            Ok(mut e) => Some(f(&mut **e, &mut ctx)),
            Err(_) => None,
        };
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
        r
    }

    /// Runs task `t` of element `elem` (whose cell is `cell`) once in
    /// `ctx`, the round's context, and returns whether it asked to run
    /// again (`ctx.fast_reschedule()`); the caller puts it back on the
    /// queue. The task counts as running (so scheduling it is a no-op) only
    /// until its element returns, not while its emissions are dispatched.
    ///
    /// This is `call_element` written out: on the per-task path the closure
    /// version cost 4 to 8 more instructions per packet at BURST 1.
    #[inline(always)]
    fn run_task_in<const MEASURE: bool>(
        th: &ThreadRt,
        ctx: &mut Ctx,
        t: TaskId,
        elem: usize,
        cell: &RefCell<Box<dyn Element>>,
    ) -> bool {
        ctx.set_current_task(Some(t));
        ctx.enter(elem);
        let start = if MEASURE { cycles() } else { 0 };
        if let Ok(mut e) = cell.try_borrow_mut() {
            e.run_task(t, ctx);
        }
        if MEASURE {
            let spent = cycles().wrapping_sub(start);
            if let Some(c) = th.task_cycles.borrow_mut().get_mut(t.0 as usize) {
                *c += spent;
            }
        }
        let again = ctx.end_task_run();
        ctx.finish_task_frame();
        ctx.run_deferred();
        again
    }

    /// [`crate::sched::Scheduler::run_again_if_alone`] for the task loop, between two
    /// runs, without the `RefCell`'s borrow and release (two stores and a
    /// test per run of a lone task).
    #[inline(always)]
    fn run_again_if_alone(th: &ThreadRt, t: TaskId) -> bool {
        debug_assert!(th.sched.try_borrow_mut().is_ok());
        // SAFETY: no borrow of this thread's scheduler is live here. Only
        // this thread touches it while the router runs (see `ThreadRt`);
        // this loop's own borrows are temporaries that have ended; and the
        // task that just ran has returned: the element code it ran reaches
        // the scheduler only through `Ctx` and router calls, whose borrows
        // end before they return (none hands a `RefMut` out). So this is
        // the one reference to it until the call returns, and the call
        // runs no element code.
        unsafe { (*th.sched.as_ptr()).run_again_if_alone(t) }
    }

    /// Runs up to [`TASKS_PER_ITERATION`] scheduled tasks, fewer if the
    /// run count falls to zero. A task that asks to run again goes back on
    /// the run queue and the next one comes off in one step.
    fn run_tasks(&mut self) {
        // Set at initialization only: read once per round, and the
        // measuring code is left out of the usual loop altogether.
        if self.core.rt.measure_tasks.load(Ordering::Relaxed) {
            self.run_tasks_with::<true>();
        } else {
            self.run_tasks_with::<false>();
        }
    }

    /// [`Driver::run_tasks`], with task costs measured or not. One context
    /// serves the whole round (each task run sets its element and task in
    /// it). A task that runs again with no other task scheduled (a lone
    /// busy source, say) keeps its element and cell from its last run and
    /// leaves the run queue untouched.
    #[inline(always)]
    fn run_tasks_with<const MEASURE: bool>(&mut self) {
        let th = self.th();
        let core = self.core;
        let Some(mut t) = th.sched.borrow_mut().pop() else {
            return;
        };
        let mut ctx = Ctx::new(core, self.disp, 0);
        let mut ran = 0;
        let mut elem = th.sched.borrow().tasks[t.0 as usize].elem;
        let mut cell = &core.elements[elem];
        // The task that ran before `t`, with its element and cell (a
        // task's element never changes): two tasks taking turns (a source
        // and the task emptying its queue) find each other here rather
        // than through the task table and the element table.
        let mut before: Option<(TaskId, usize, &ElementCell)> = None;
        loop {
            let mut again = Self::run_task_in::<MEASURE>(th, &mut ctx, t, elem, cell);
            ran += 1;
            let mut go_on = ran < TASKS_PER_ITERATION && core.rt.runcount() > 0;
            while again && go_on && Self::run_again_if_alone(th, t) {
                again = if MEASURE {
                    Self::run_task_in::<MEASURE>(th, &mut ctx, t, elem, cell)
                } else {
                    ctx.rerun_task(t, elem, cell)
                };
                ran += 1;
                go_on = ran < TASKS_PER_ITERATION && core.rt.runcount() > 0;
            }
            let mut sched = th.sched.borrow_mut();
            let next = match (again, go_on) {
                (true, true) => sched.reschedule_and_pop(t),
                (true, false) => {
                    sched.schedule(t);
                    None
                }
                (false, true) => sched.pop(),
                (false, false) => None,
            };
            let Some(n) = next else {
                return;
            };
            let ran_before = (t, elem, cell);
            (elem, cell) = match before {
                Some((b, e, c)) if b == n => (e, c),
                _ => {
                    let e = sched.tasks[n.0 as usize].elem;
                    (e, &core.elements[e])
                }
            };
            before = Some(ran_before);
            t = n;
        }
    }

    fn busy(&self) -> bool {
        self.th().sched.borrow().any_scheduled()
    }

    /// Fires the timers that have expired; returns how many fired.
    fn run_timers(&mut self) -> usize {
        let now = self.core.rt.clock.now();
        let th = self.th();
        let mut fired = 0;
        // Bound the loop so a timer rescheduling itself at `now` cannot
        // starve tasks.
        let limit = th.timers.borrow().timers.len() * 2 + 8;
        while fired < limit {
            let Some(id) = th.timers.borrow_mut().pop_expired(now) else {
                break;
            };
            let elem = th.timers.borrow().timers[id.0 as usize].elem;
            self.call_element(elem, |e, ctx| e.run_timer(id, ctx));
            fired += 1;
        }
        fired
    }

    /// Whether the driver should stop now; consults the DriverManager.
    fn check_stop(&mut self) -> bool {
        if self.core.rt.runcount() > 0 {
            return false;
        }
        let Some(dm) = self.core.rt.driver_manager.get() else {
            return true;
        };
        let stop = self
            .call_element(dm, |e, ctx| e.driver_stop_event(ctx))
            .unwrap_or(true);
        stop && self.core.rt.runcount() <= 0
    }

    /// Polls the thread's descriptors (blocking up to `timeout_ms`) and
    /// calls each ready element's `selected`.
    fn run_selects(&mut self, timeout_ms: i32) {
        let mut ready = std::mem::take(self.ready);
        let th = self.th();
        th.selects.borrow_mut().poll(timeout_ms, &mut ready);
        // A wait may have been long: elements reading `recent()` see the
        // time they woke at, not the time before the wait.
        if !ready.is_empty() {
            self.core.rt.clock.now();
        }
        // In element order (epoll reports in no set order): elements ready
        // together run as they are declared, like Click's signal scripts.
        if ready.len() > 1 {
            ready.sort_unstable_by_key(|&(fd, elem, _, _)| (elem, fd));
        }
        for &(fd, elem, r, w) in &ready {
            if elem == WAKE_ELEM {
                th.drain_kicks();
                continue;
            }
            self.call_element(elem, |e, ctx| e.selected(fd, r, w, ctx));
        }
        *self.ready = ready;
    }

    /// With no task scheduled (one thread): waits for the next timer (under
    /// simulated time, jumps to it) or a ready descriptor, whichever comes
    /// first. Returns false, without waiting, when neither can ever come.
    fn wait_idle(&mut self) -> bool {
        let th = self.th();
        let next = th.timers.borrow_mut().next_expiry();
        let has_selects = !th.selects.borrow().is_empty();
        // A hot swap being prepared elsewhere: look for it often.
        let building = self.core.swap_in_progress();
        let idle_ms = if building {
            BUILDING_POLL_MS
        } else {
            IDLE_POLL_MS
        };
        match next {
            None if !has_selects && !building => return false,
            None => self.run_selects(idle_ms),
            Some(t) if self.core.rt.clock.is_simulated() => {
                if has_selects {
                    self.run_selects(0);
                }
                self.core.rt.clock.advance_to(t);
            }
            Some(t) => {
                let wait_ms = self.ms_until(t, idle_ms);
                self.run_selects(wait_ms);
            }
        }
        true
    }

    /// Milliseconds of real time until router time `t`, at most `cap`.
    fn ms_until(&self, t: crate::time::Timestamp, cap: i32) -> i32 {
        let now = self.core.rt.clock.now();
        if t > now {
            let real = self.core.rt.clock.real_delay(t - now);
            (real.nanos() / 1_000_000 + 1).min(cap as i64) as i32
        } else {
            0
        }
    }

    /// With no task scheduled (several threads): sleeps until the next
    /// timer, a ready descriptor or a wake from another thread. Thread 0
    /// returns false when every thread is idle for good (the router is
    /// quiescent).
    fn wait_idle_threaded(&mut self) -> bool {
        let th = self.th();
        let world = &self.core.rt.world;
        let next = th.timers.borrow_mut().next_expiry();
        // The wake descriptor is always there; any other is an element's.
        let has_selects = th.selects.borrow().entries.len() > 1;
        let building = self.thread == 0 && self.core.swap_in_progress();
        let forever = next.is_none() && !has_selects && !building;
        if forever {
            world.enter_idle();
            if self.thread == 0 && self.all_idle_for_good() {
                world.leave_idle();
                return false;
            }
        }
        let cap = if building {
            BUILDING_POLL_MS
        } else {
            THREADED_IDLE_MS
        };
        let wait_ms = next.map_or(cap, |t| self.ms_until(t, cap));
        // Across threads, work usually comes back within microseconds (the
        // other side of a queue): wait for it briefly before paying for a
        // sleep and a wake-up (two system calls) per batch. An idle router
        // still sleeps after SPIN_BEFORE_SLEEP.
        if wait_ms > 0
            && !th.spin_for_wakes(SPIN_BEFORE_SLEEP, || world.pause_requested())
            && th.start_sleep()
        {
            self.run_selects(wait_ms);
            th.end_sleep();
        }
        if forever {
            world.leave_idle();
        }
        true
    }

    /// Whether every thread waits with nothing it could do and no wake is
    /// in flight.
    fn all_idle_for_good(&self) -> bool {
        let rt = &self.core.rt;
        // The idle count and the wake flags are read apart: the count's
        // generation, unchanged across the reads, shows that no thread
        // left idle (and so none ran, or posted a wake) in between.
        let before = rt.world.idle_state();
        if before.count() != rt.threads.len() || rt.threads.iter().any(|t| t.has_wakes()) {
            return false;
        }
        rt.world.idle_state() == before
    }

    /// Thread 0's loop while other threads run.
    fn main_loop(&mut self, stop_flag: &AtomicBool, iter: &mut u64, max: u64) -> Outcome {
        loop {
            if stop_flag.load(Ordering::Relaxed) {
                return Outcome::Stop(StopReason::Signalled);
            }
            if self.core.rt.world.exiting() {
                // A worker panicked: the scope re-raises it.
                return Outcome::Stop(StopReason::Stopped);
            }
            if *iter >= max {
                return Outcome::Stop(StopReason::Limit);
            }
            *iter += 1;
            self.th().take_wakes();
            self.run_tasks();
            self.run_timers();
            if self.core.swap_ready() {
                return Outcome::Swap;
            }
            if self.check_stop() {
                return Outcome::Stop(StopReason::Stopped);
            }
            if self.busy() {
                if *iter & 7 == 0 {
                    self.run_selects(0);
                }
                continue;
            }
            if !self.wait_idle_threaded() {
                return Outcome::Stop(StopReason::Quiescent);
            }
        }
    }

    /// A worker thread's loop: until thread 0 says to leave.
    fn worker_loop(&mut self) {
        let world = &self.core.rt.world;
        let mut iter = 0u64;
        loop {
            if world.exiting() {
                return;
            }
            if world.pause_requested() {
                world.park();
                continue;
            }
            iter += 1;
            self.th().take_wakes();
            self.run_tasks();
            self.run_timers();
            if self.busy() {
                if iter & 7 == 0 {
                    self.run_selects(0);
                }
                continue;
            }
            self.wait_idle_threaded();
        }
    }
}

/// Pins the calling thread to CPU `cpu` (modulo the CPUs there are).
fn pin_to_cpu(cpu: usize) {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes within it; the
    // call reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu % ncpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Makes every router thread leave its loop if the thread holding it
/// unwinds.
struct LeaveOnPanic<'a>(&'a RouterCore);

impl Drop for LeaveOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.rt.world.request_exit();
            for t in &self.0.rt.threads {
                t.kick();
            }
        }
    }
}

impl Router {
    fn driver(&mut self) -> Driver<'_> {
        Driver {
            core: &self.core,
            disp: &mut self.disp,
            ready: &mut self.ready,
            thread: 0,
            rt_thread: &self.core.rt.threads[0],
        }
    }

    /// Calls `f` on element `elem` from outside any element (a top-level
    /// call), then runs everything it emitted, depth first, and any work
    /// deferred meanwhile. `None` if the element is busy.
    pub(super) fn call_element<R>(
        &mut self,
        elem: usize,
        f: impl FnOnce(&mut dyn Element, &mut Ctx) -> R,
    ) -> Option<R> {
        self.driver().call_element(elem, f)
    }

    /// Pushes a packet into input `port` of element `elem` and runs
    /// everything that follows (tests, benchmarks, I/O glue).
    ///
    /// The clock is read first, so elements that stamp with `recent()` see
    /// the time of the call, as they see a driver iteration's in a run.
    pub fn inject(&mut self, elem: usize, port: usize, batch: Batch) {
        self.core.rt.clock.now();
        self.call_element(elem, |e, ctx| e.push(port, batch, ctx));
    }

    /// Convenience for [`Router::inject`] with one packet.
    pub fn inject_packet(&mut self, elem: usize, port: usize, p: Packet) {
        self.inject(elem, port, Batch::single(p));
    }

    /// Pulls from output `port` of element `elem` (tests).
    pub fn pull_from(&mut self, elem: usize, port: usize, max: usize) -> Option<Batch> {
        self.call_element(elem, |e, ctx| e.pull(port, max, ctx))
            .flatten()
    }

    /// How many threads the router runs on.
    pub fn nthreads(&self) -> usize {
        self.core.rt.threads.len()
    }

    /// Runs until the run count falls to zero, nothing can happen any more,
    /// or the stop flag is raised.
    pub fn run(&mut self) -> StopReason {
        self.run_limited(u64::MAX)
    }

    /// Like [`Router::run`], but gives up after `max_iterations` driver
    /// iterations (of thread 0).
    pub fn run_limited(&mut self, max_iterations: u64) -> StopReason {
        if self.core.rt.threads.len() > 1 {
            return self.run_threaded(max_iterations);
        }
        let mut iter = 0u64;
        loop {
            if self.stop_flag.load(Ordering::Relaxed) {
                return StopReason::Signalled;
            }
            if iter >= max_iterations {
                return StopReason::Limit;
            }
            iter += 1;
            let busy = {
                let mut d = self.driver();
                d.run_tasks();
                d.run_timers();
                d.busy()
            };
            self.apply_pending_swap();
            if self.driver().check_stop() {
                return StopReason::Stopped;
            }
            if busy || self.driver().busy() {
                // Look at descriptors now and then without blocking.
                if iter & 7 == 0 {
                    self.driver().run_selects(0);
                    self.apply_pending_swap();
                }
                continue;
            }
            let waited = self.driver().wait_idle();
            self.apply_pending_swap();
            if !waited {
                return StopReason::Quiescent;
            }
        }
    }

    /// [`Router::run_limited`] with several threads: thread 0 is this one,
    /// the others are started here and stopped before it returns (and
    /// around a hot swap, which they then run on).
    fn run_threaded(&mut self, max_iterations: u64) -> StopReason {
        let mut iter = 0u64;
        loop {
            let nthreads = self.core.rt.threads.len();
            let affinity = self.core.options.affinity;
            let stop_flag = self.stop_flag.clone();
            self.core.rt.world.set_running(true);
            let core = &self.core;
            let disp = &mut self.disp;
            let ready = &mut self.ready;
            let outcome = std::thread::scope(|s| {
                for k in 1..nthreads {
                    let spawned = std::thread::Builder::new()
                        .name(format!("rclick-{k}"))
                        .spawn_scoped(s, move || {
                            // A worker that panics makes every thread
                            // leave (the scope then re-raises the panic)
                            // rather than leave thread 0 waiting on it.
                            let _leave = LeaveOnPanic(core);
                            set_current_thread(k);
                            if affinity {
                                pin_to_cpu(k);
                            }
                            let mut disp = Dispatcher::new();
                            let mut ready = Vec::new();
                            Driver {
                                core,
                                disp: &mut disp,
                                ready: &mut ready,
                                thread: k,
                                rt_thread: &core.rt.threads[k],
                            }
                            .worker_loop();
                        });
                    if let Err(e) = spawned {
                        core.rt
                            .chatter(&format!("cannot start router thread {k}: {e}; stopping"));
                        core.rt.world.request_exit();
                        for t in &core.rt.threads[1..] {
                            t.kick();
                        }
                        return Outcome::Stop(StopReason::Stopped);
                    }
                }
                let _leave = LeaveOnPanic(core);
                if affinity {
                    pin_to_cpu(0);
                }
                let mut d = Driver {
                    core,
                    disp,
                    ready,
                    thread: 0,
                    rt_thread: &core.rt.threads[0],
                };
                let outcome = d.main_loop(&stop_flag, &mut iter, max_iterations);
                core.rt.world.request_exit();
                for t in &core.rt.threads[1..] {
                    t.kick();
                }
                outcome
            });
            self.core.rt.world.set_running(false);
            // Wakes posted while the threads stopped are kept for the next
            // run: they stay in the flags.
            match outcome {
                Outcome::Stop(reason) => return reason,
                Outcome::Swap => {
                    self.apply_pending_swap();
                }
            }
        }
    }

    /// Tears the router down, calling every element's `cleanup` once.
    pub fn cleanup(&mut self) {
        if self.cleaned_up {
            return;
        }
        self.cleaned_up = true;
        // A successor still being built: its client is answered, and it
        // is cleaned up before this router's elements are.
        self.abandon_swap_job();
        for e in &self.core.elements {
            if let Ok(mut e) = e.try_borrow_mut() {
                e.cleanup();
            }
        }
        for copies in &self.core.thread_copies {
            for c in copies.iter().flatten() {
                if let Ok(mut c) = c.try_borrow_mut() {
                    c.cleanup();
                }
            }
        }
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        self.cleanup();
    }
}
