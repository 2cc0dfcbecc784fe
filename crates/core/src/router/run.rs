//! The driver: runs tasks, timers and ready descriptors until the router
//! stops, and the entry points that call into elements from outside
//! (injecting and pulling packets, cleanup).

use std::sync::atomic::Ordering;

use super::{Router, StopReason};
use crate::batch::Batch;
use crate::ctx::Ctx;
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

impl Router {
    /// Calls `f` on element `elem` from outside any element (a top-level
    /// call), then runs everything it emitted, depth first, and any work
    /// deferred meanwhile. `None` if the element is busy.
    pub(super) fn call_element<R>(
        &mut self,
        elem: usize,
        f: impl FnOnce(&mut dyn Element, &mut Ctx) -> R,
    ) -> Option<R> {
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
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

    /// Pushes a packet into input `port` of element `elem` and runs
    /// everything that follows (tests, benchmarks, I/O glue).
    pub fn inject(&mut self, elem: usize, port: usize, batch: Batch) {
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

    /// Runs task `t` once and returns whether it asked to run again
    /// (`ctx.fast_reschedule()`); the caller puts it back on the queue. The
    /// task counts as running (so scheduling it is a no-op) only until its
    /// element returns, not while its emissions are dispatched.
    ///
    /// This is `call_element` written out: on the per-task path the closure
    /// version cost 4 to 8 more instructions per packet at BURST 1.
    #[inline]
    fn run_task(&mut self, t: TaskId) -> bool {
        let elem = self.core.rt.sched.borrow().tasks[t.0 as usize].elem;
        let mut ctx = Ctx::new(&self.core, &mut self.disp, elem);
        ctx.set_current_task(Some(t));
        let saved = ctx.enter(elem);
        if let Ok(mut e) = self.core.elements[elem].try_borrow_mut() {
            e.run_task(t, &mut ctx);
        }
        let again = ctx.take_reschedule();
        ctx.set_current_task(None);
        ctx.finish_frame();
        ctx.leave(saved);
        ctx.run_deferred();
        again
    }

    /// Runs up to [`TASKS_PER_ITERATION`] scheduled tasks, fewer if the
    /// run count falls to zero. A task that asks to run again goes back on
    /// the run queue and the next one comes off in one step.
    fn run_tasks(&mut self) {
        let mut ran = 0;
        let mut next = self.core.rt.sched.borrow_mut().pop();
        while let Some(t) = next {
            let again = self.run_task(t);
            ran += 1;
            let go_on = ran < TASKS_PER_ITERATION && self.core.rt.runcount.get() > 0;
            let mut sched = self.core.rt.sched.borrow_mut();
            next = match (again, go_on) {
                (true, true) => sched.reschedule_and_pop(t),
                (true, false) => {
                    sched.schedule(t);
                    None
                }
                (false, true) => sched.pop(),
                (false, false) => None,
            };
        }
    }

    /// Fires the timers that have expired; returns how many fired.
    fn run_timers(&mut self) -> usize {
        let now = self.core.rt.clock.now();
        let mut fired = 0;
        // Bound the loop so a timer rescheduling itself at `now` cannot
        // starve tasks.
        let limit = self.core.rt.timers.borrow().timers.len() * 2 + 8;
        while fired < limit {
            let Some(id) = self.core.rt.timers.borrow_mut().pop_expired(now) else {
                break;
            };
            let elem = self.core.rt.timers.borrow().timers[id.0 as usize].elem;
            self.call_element(elem, |e, ctx| e.run_timer(id, ctx));
            fired += 1;
        }
        fired
    }

    /// Whether the driver should stop now; consults the DriverManager.
    fn check_stop(&mut self) -> bool {
        if self.core.rt.runcount.get() > 0 {
            return false;
        }
        let Some(dm) = self.core.rt.driver_manager.get() else {
            return true;
        };
        let stop = self
            .call_element(dm, |e, ctx| e.driver_stop_event(ctx))
            .unwrap_or(true);
        stop && self.core.rt.runcount.get() <= 0
    }

    /// Runs until the run count falls to zero, nothing can happen any more,
    /// or the stop flag is raised.
    pub fn run(&mut self) -> StopReason {
        self.run_limited(u64::MAX)
    }

    /// Like [`Router::run`], but gives up after `max_iterations` driver
    /// iterations.
    pub fn run_limited(&mut self, max_iterations: u64) -> StopReason {
        let mut iter = 0u64;
        loop {
            if self.stop_flag.load(Ordering::Relaxed) {
                return StopReason::Signalled;
            }
            if iter >= max_iterations {
                return StopReason::Limit;
            }
            iter += 1;
            self.run_tasks();
            self.run_timers();
            self.apply_pending_swap();
            if self.check_stop() {
                return StopReason::Stopped;
            }
            let busy = self.core.rt.sched.borrow().any_scheduled();
            if busy {
                // Look at descriptors now and then without blocking.
                if iter & 7 == 0 {
                    self.run_selects(0);
                }
                continue;
            }
            if !self.wait_idle() {
                return StopReason::Quiescent;
            }
        }
    }

    /// With no task scheduled: waits for the next timer (under simulated
    /// time, jumps to it) or a ready descriptor, whichever comes first.
    /// Returns false, without waiting, when neither can ever come.
    fn wait_idle(&mut self) -> bool {
        let next = self.core.rt.timers.borrow_mut().next_expiry();
        let has_selects = !self.core.rt.selects.borrow().is_empty();
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
                let now = self.core.rt.clock.now();
                let wait_ms = if t > now {
                    let real = self.core.rt.clock.real_delay(t - now);
                    (real.nanos() / 1_000_000 + 1).min(idle_ms as i64) as i32
                } else {
                    0
                };
                self.run_selects(wait_ms);
            }
        }
        true
    }

    /// Polls the registered descriptors (blocking up to `timeout_ms`) and
    /// calls each ready element's `selected`.
    fn run_selects(&mut self, timeout_ms: i32) {
        let mut ready = std::mem::take(&mut self.ready);
        self.core
            .rt
            .selects
            .borrow_mut()
            .poll(timeout_ms, &mut ready);
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
            self.call_element(elem, |e, ctx| e.selected(fd, r, w, ctx));
        }
        self.ready = ready;
        self.apply_pending_swap();
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
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        self.cleanup();
    }
}
