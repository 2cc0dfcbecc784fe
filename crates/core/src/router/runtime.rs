//! Router-wide runtime state shared by every element: clock, scheduler,
//! timers, notifier signals, run count, information elements' tables,
//! descriptors, chatter.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32};
use std::sync::{Mutex, RwLock};

use super::threads::{current_thread, InitVec, ThreadRt, World, QUIESCENT};

use crate::conf::{Ipv4Prefix, Ipv6Prefix};
use crate::sched::{NotifierSignal, Scheduler, SignalId, TaskId, Timers, DEFAULT_TICKETS};
use crate::select::Selects;
use crate::time::Clock;
use crate::wire::EtherAddr;

/// Names that AddressInfo gives to addresses.
#[derive(Clone, Debug, Default)]
pub struct AddressEntry {
    pub ipv4: Option<Ipv4Addr>,
    /// A contiguous prefix; the address part as written (host bits kept).
    pub ipv4_prefix: Option<Ipv4Prefix>,
    pub ipv6: Option<Ipv6Addr>,
    /// A contiguous prefix; the address part as written (host bits kept).
    pub ipv6_prefix: Option<Ipv6Prefix>,
    pub ether: Option<EtherAddr>,
}

/// A notifier signal: whether packets may be there (or room), and the
/// tasks to wake when it rises. Listeners are added during
/// initialization only.
pub(crate) struct SignalSlot {
    active: AtomicBool,
    listeners: Vec<TaskId>,
}

/// Router-wide runtime state: clock, threads (each with its scheduler,
/// timers and descriptors), signals, run count.
///
/// Shared by every router thread; see the `threads` module for why each
/// part is safe to share.
pub struct Runtime {
    pub clock: Clock,
    /// Thread 0 first; more once threads are assigned.
    pub(crate) threads: Vec<ThreadRt>,
    /// Each task's home thread (empty with one thread).
    pub(crate) task_home: Box<[AtomicU32]>,
    pub(crate) world: World,
    /// StaticThreadSched preferences: element index to thread (-1: never
    /// runs).
    pub(crate) thread_prefs: RefCell<HashMap<usize, i32>>,
    signals: InitVec<SignalSlot>,
    /// Whether tasks' running times are measured (a BalancedThreadSched
    /// asked, during initialization).
    pub(crate) measure_tasks: AtomicBool,
    /// BalancedThreadSched's task groups, worked out at its first step
    /// (thread 0 only).
    pub(crate) task_groups: RefCell<Option<Vec<super::threads::TaskGroup>>>,
    pub(crate) runcount: AtomicI32,
    pub(crate) schedule_info: RefCell<Vec<(String, f64)>>,
    pub(crate) driver_manager: Cell<Option<usize>>,
    pub(crate) address_info: RwLock<HashMap<String, AddressEntry>>,
    /// When set, chatter is collected here instead of printed (tests).
    captured: Mutex<Option<Vec<String>>>,
}

impl Runtime {
    /// Fresh state on `clock`; with `capture_chatter`, chatter is kept for
    /// [`Runtime::take_chatter`] instead of printed.
    pub(super) fn new(clock: Clock, capture_chatter: bool) -> Self {
        Runtime {
            clock,
            threads: vec![ThreadRt::new(
                Scheduler::default(),
                Timers::default(),
                Selects::default(),
            )],
            task_home: Box::new([]),
            world: World::default(),
            thread_prefs: RefCell::new(HashMap::new()),
            signals: InitVec::default(),
            measure_tasks: AtomicBool::new(false),
            task_groups: RefCell::new(None),
            runcount: AtomicI32::new(1),
            schedule_info: RefCell::new(Vec::new()),
            driver_manager: Cell::new(None),
            address_info: RwLock::new(HashMap::new()),
            captured: Mutex::new(capture_chatter.then(Vec::new)),
        }
    }

    /// Thread 0's state: the only thread's, with one thread.
    #[inline]
    pub(crate) fn main_thread(&self) -> &ThreadRt {
        &self.threads[0]
    }

    /// The state of the thread element `elem` is at home on.
    #[inline]
    pub(crate) fn thread_of(&self, core_home: usize) -> &ThreadRt {
        self.threads.get(core_home).unwrap_or(&self.threads[0])
    }

    /// The home thread of task `t`.
    #[inline]
    pub(crate) fn task_home(&self, t: TaskId) -> u32 {
        self.task_home
            .get(t.0 as usize)
            .map_or(0, |h| h.load(Relaxed))
    }

    /// Schedules task `t` on its home thread: directly when that is this
    /// thread (or the others are parked or not running), else through the
    /// home thread's wake flags.
    #[inline]
    pub(crate) fn schedule_task(&self, t: TaskId) {
        if self.threads.len() == 1 {
            self.threads[0].sched.borrow_mut().schedule(t);
            return;
        }
        self.schedule_task_threaded(t);
    }

    fn schedule_task_threaded(&self, t: TaskId) {
        let home = self.task_home(t);
        if home == QUIESCENT {
            return;
        }
        let Some(thread) = self.threads.get(home as usize) else {
            return;
        };
        let here = current_thread();
        if home as usize == here || !self.world.running() || (here == 0 && self.world.stopped()) {
            thread.sched.borrow_mut().schedule(t);
        } else {
            thread.post_wake(t);
        }
    }

    /// Whether task `t` is on its thread's run queue (asked by the task's
    /// own element, on its home thread).
    pub(crate) fn task_scheduled(&self, t: TaskId) -> bool {
        let home = self.task_home(t);
        self.threads
            .get(home as usize)
            .is_some_and(|th| th.sched.borrow().is_scheduled(t))
    }

    pub(crate) fn new_signal(&self, active: bool) -> SignalId {
        debug_assert!(!self.world.running() || self.world.stopped());
        // SAFETY: signals are created while elements initialize (or
        // reconfigure with the world stopped): one thread uses the router,
        // and no signal reference is held across this call.
        let i = unsafe {
            self.signals.push(SignalSlot {
                active: AtomicBool::new(active),
                listeners: Vec::new(),
            })
        };
        SignalId(i as u32)
    }

    pub(crate) fn add_listener(&self, s: SignalId, t: TaskId) {
        debug_assert!(!self.world.running() || self.world.stopped());
        // SAFETY: as in `new_signal`.
        if let Some(st) = unsafe { self.signals.get_mut(s.0 as usize) } {
            if !st.listeners.contains(&t) {
                st.listeners.push(t);
            }
        }
    }

    /// Raises or lowers a signal; raising it wakes its listeners. Inline:
    /// queues set their signals on every push and pull, and almost always
    /// to what they already are.
    #[inline]
    pub(crate) fn set_signal(&self, s: SignalId, active: bool) {
        self.set_signal_inline(s, active);
    }

    /// [`Runtime::set_signal`] always compiled into its caller: for the
    /// one signal raised per packet at BURST 1 (Queue's nonempty signal,
    /// lowered by the pull that empties it), where the call and its
    /// register saves cost a quarter of the raise.
    #[inline(always)]
    pub(crate) fn set_signal_inline(&self, s: SignalId, active: bool) {
        let Some(st) = self.signals.get(s.0 as usize) else {
            return;
        };
        if st.active.load(Relaxed) == active {
            if !active || self.threads.len() == 1 {
                return;
            }
            // A queue's pusher (add, then look at the signal) against its
            // puller on another thread (lower the signal, then look at the
            // queue again): without a full fence between its store and
            // this load, both may miss the other on weakly ordered CPUs.
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            if st.active.load(Relaxed) == active {
                return;
            }
        }
        self.change_signal(st, active);
    }

    /// A signal's change: inline for one thread (a store, and a call only
    /// to wake listeners), out of line for several.
    #[inline(always)]
    fn change_signal(&self, st: &SignalSlot, active: bool) {
        // The one thread taken here, before the store: the store is atomic,
        // so a length read after it would be read again.
        if let [th] = &self.threads[..] {
            // One thread: no other can race the change, and a locked swap
            // would cost a queue that toggles per packet at BURST 1.
            st.active.store(active, Relaxed);
            if active && !st.listeners.is_empty() {
                Self::wake_local(th, &st.listeners);
            }
            return;
        }
        self.change_signal_threaded(st, active);
    }

    /// Schedules a raised signal's listeners on thread `th`, the only one.
    /// At one packet per push and pull a queue's signal goes down and up
    /// again per packet, while its puller is still scheduled, so the usual
    /// wake finds its one listener queued already: one listener (a queue's
    /// puller) is looked at without a loop, and the whole is always inline
    /// (left to itself the compiler made it a call with six register saves
    /// in Queue's push).
    #[inline(always)]
    fn wake_local(th: &ThreadRt, listeners: &[TaskId]) {
        let mut sched = th.sched.borrow_mut();
        if let [t] = *listeners {
            if !sched.is_scheduled(t) {
                sched.schedule(t);
            }
            return;
        }
        for &t in listeners {
            if !sched.is_scheduled(t) {
                sched.schedule(t);
            }
        }
    }

    #[inline(never)]
    fn change_signal_threaded(&self, st: &SignalSlot, active: bool) {
        // SeqCst: a queue that lowers its signal and then looks at its
        // contents again must not miss a packet another thread added
        // before raising it.
        if st.active.swap(active, std::sync::atomic::Ordering::SeqCst) != active && active {
            for t in &st.listeners {
                self.schedule_task(*t);
            }
        }
    }

    #[inline]
    pub(crate) fn signal_active(&self, sig: &NotifierSignal) -> bool {
        match sig {
            NotifierSignal::Idle => false,
            NotifierSignal::Busy => true,
            // One signal (a source in front of one queue, asking per run
            // whether there is room): read here, not through a call and a
            // loop.
            NotifierSignal::Signals(ids) => match **ids {
                [one] => self
                    .signals
                    .get(one.0 as usize)
                    .is_some_and(|s| s.active.load(Relaxed)),
                _ => self.any_signal_active(ids),
            },
        }
    }

    fn any_signal_active(&self, ids: &[SignalId]) -> bool {
        ids.iter().any(|i| {
            self.signals
                .get(i.0 as usize)
                .is_some_and(|s| s.active.load(Relaxed))
        })
    }

    pub(crate) fn adjust_runcount(&self, delta: i32) {
        let _ = self
            .runcount
            .fetch_update(Relaxed, Relaxed, |r| Some(r.saturating_add(delta)));
    }

    pub(crate) fn runcount(&self) -> i32 {
        self.runcount.load(Relaxed)
    }

    /// Tickets for a task of `elem`: ScheduleInfo parameters apply to the
    /// named element and to everything inside a compound of that name.
    pub(crate) fn tickets_for(&self, elem: &str) -> u32 {
        let info = self.schedule_info.borrow();
        let mut best: Option<(usize, f64)> = None;
        for (name, param) in info.iter() {
            let matches = elem == name
                || (elem.starts_with(name.as_str()) && elem[name.len()..].starts_with('/'));
            if matches && best.is_none_or(|(len, _)| name.len() >= len) {
                best = Some((name.len(), *param));
            }
        }
        match best {
            Some((_, p)) => {
                ((p * DEFAULT_TICKETS as f64).round() as i64).clamp(1, i64::from(u32::MAX)) as u32
            }
            None => DEFAULT_TICKETS,
        }
    }

    pub(crate) fn chatter(&self, msg: &str) {
        if let Some(buf) = self
            .captured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            buf.push(msg.to_string());
            return;
        }
        use std::io::Write;
        // One write per line, as Click does: processes sharing a stderr
        // pipe then never split each other's lines.
        let mut line = String::with_capacity(msg.len() + 1);
        line.push_str(msg);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    /// Chatter collected so far, when capturing.
    pub(super) fn take_chatter(&self) -> Vec<String> {
        self.captured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
