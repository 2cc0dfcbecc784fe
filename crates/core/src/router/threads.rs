//! One router on several threads (`-j N`).
//!
//! # The model
//! Every thread has its own run queue of tasks (stride scheduled), its own
//! timers, descriptors and dispatcher; packets cross threads only through
//! elements built for it. Each element has a *home thread*: the thread of
//! its tasks (Click's default is thread 0; `StaticThreadSched` moves them),
//! or else the one thread whose pushes and pulls reach it. Its timers and
//! descriptors are served by that thread.
//!
//! # Thread safety, proved at initialization
//! After the elements initialize, [`assign_threads`] follows every push
//! connection downstream and every pull connection upstream from each
//! thread's elements and works out which threads reach each element. An
//! element reached from more than one thread must be of a class that
//! shares itself ([`Element::shared`]: ThreadSafeQueue and its kind);
//! otherwise the configuration is refused, naming the element, the threads
//! and where each comes from, and nothing runs. Elements nobody reaches
//! (they only act through handlers) belong to thread 0.
//!
//! That proof is what makes it sound to hand the router to several
//! threads ([`RouterCore`] is `Sync` on its strength):
//! - an element of the one-thread kind is only ever touched by its home
//!   thread, so its `RefCell` is too;
//! - a shared element is reached through its [`SharedElement`] interface
//!   (`&self`, `Sync`), never through its `RefCell`, while threads run;
//! - each thread touches only its own run queue, timers and descriptors;
//!   other threads wake its tasks through atomic flags;
//! - router-wide state is atomic, or is written only while one thread
//!   runs (initialization), or while the other threads are parked;
//! - a handler of an element at home on another thread (or a write to a
//!   shared element) is called by thread 0 after *stopping the world*:
//!   every other thread parks at a safe point (between tasks, holding no
//!   element) until the call returns. Worker threads cannot stop the
//!   world; such a call from them is refused with an error.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};

use rclick_lang::Diagnostic;

use super::{diag, elem_desc, RouterCore};
use crate::element::SharedElement;
use crate::ports::Mode;
use crate::sched::{Scheduler, TaskId, Timers};
use crate::select::{Interest, Selects};

thread_local! {
    static CURRENT_THREAD: Cell<u32> = const { Cell::new(0) };
}

/// The router thread this OS thread is (0 unless a worker of `-j N`).
#[inline]
pub(crate) fn current_thread() -> usize {
    // In an element package, the host's thread-local is the one the
    // router set (the package's own copy of it is never set).
    if let Some(host) = crate::package::abi::host_current_thread() {
        return host();
    }
    CURRENT_THREAD.with(|c| c.get()) as usize
}

pub(crate) fn set_current_thread(t: usize) {
    CURRENT_THREAD.with(|c| c.set(t as u32));
}

/// The thread a task with preference -1 (Click's quiescent thread) has:
/// it never runs.
pub(crate) const QUIESCENT: u32 = u32::MAX;

/// The pseudo-element that owns a thread's wake descriptor in its select
/// set.
pub(crate) const WAKE_ELEM: usize = usize::MAX;

/// Marks a shared element's index in the dispatcher's flat tables: the
/// index is out of range for `RouterCore::elements`, which sends the
/// dispatcher to the shared path without a test on the common one.
pub(crate) const SHARED_BIT: u32 = 1 << 31;

/// A vector that grows only while one thread uses the router (during
/// initialization, or with the world stopped) and is read from any thread
/// otherwise.
pub(crate) struct InitVec<T>(UnsafeCell<Vec<T>>);

impl<T> Default for InitVec<T> {
    fn default() -> Self {
        InitVec(UnsafeCell::new(Vec::new()))
    }
}

impl<T> InitVec<T> {
    /// Appends `v` and returns its index.
    ///
    /// # Safety
    /// No other thread may be using the router, and no reference from
    /// [`InitVec::get`] may be alive.
    pub unsafe fn push(&self, v: T) -> usize {
        let vec = &mut *self.0.get();
        vec.push(v);
        vec.len() - 1
    }

    /// Element `i`, mutably.
    ///
    /// # Safety
    /// As for [`InitVec::push`].
    // The `&self` to `&mut` step is the point of the type: the contract
    // above is what makes it exclusive.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut(&self, i: usize) -> Option<&mut T> {
        (&mut *self.0.get()).get_mut(i)
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        // SAFETY: the vector changes only under the conditions `push`
        // states, when no shared reference exists.
        unsafe { (&*self.0.get()).get(i) }
    }
}

/// What one router thread runs: its task queue, timers and descriptors,
/// and the flags through which other threads wake its tasks.
///
/// Aligned to 128 bytes (two cache lines, as the adjacent-line prefetcher
/// pairs them) so that neighbouring threads' states never share a line;
/// the flags other threads write have lines of their own too (`Flags`),
/// away from the `RefCell` borrow flags the owner writes on every task.
#[repr(align(128))]
pub(crate) struct ThreadRt {
    pub sched: RefCell<Scheduler>,
    pub timers: RefCell<Timers>,
    pub selects: RefCell<Selects>,
    /// One flag per task of the router: set by another thread that woke
    /// one of this thread's tasks.
    woken: Box<[AtomicBool]>,
    flags: Flags,
    wake_fd: Option<OwnedFd>,
    /// Cycles each task of this thread spent running since the last
    /// rebalance (measured only when a BalancedThreadSched asks).
    pub task_cycles: RefCell<Vec<u64>>,
}

/// A thread's wake flags, which other threads write.
#[repr(align(128))]
struct Flags {
    /// Some flag of `woken` is set.
    any_woken: AtomicBool,
    /// Set while the thread waits for descriptors: a waker then writes
    /// `wake_fd` to end the wait.
    sleeping: AtomicBool,
}

impl ThreadRt {
    pub fn new(sched: Scheduler, timers: Timers, selects: Selects) -> Self {
        ThreadRt {
            sched: RefCell::new(sched),
            timers: RefCell::new(timers),
            selects: RefCell::new(selects),
            woken: Box::new([]),
            flags: Flags {
                any_woken: AtomicBool::new(false),
                sleeping: AtomicBool::new(false),
            },
            wake_fd: None,
            task_cycles: RefCell::new(Vec::new()),
        }
    }

    /// Wakes task `t` of this thread from another thread.
    pub fn post_wake(&self, t: TaskId) {
        if let Some(flag) = self.woken.get(t.0 as usize) {
            flag.store(true, Release);
            self.flags.any_woken.store(true, SeqCst);
            if self.flags.sleeping.load(SeqCst) {
                self.kick();
            }
        }
    }

    /// Ends the thread's wait for descriptors, if it is waiting.
    pub fn kick(&self) {
        if let Some(fd) = &self.wake_fd {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
            unsafe {
                libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8);
            }
        }
    }

    /// Drains the wake descriptor after the wait returned.
    pub fn drain_kicks(&self) {
        if let Some(fd) = &self.wake_fd {
            let mut v: u64 = 0;
            // SAFETY: reads 8 bytes into a live u64 from our nonblocking
            // eventfd.
            unsafe {
                libc::read(fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8);
            }
        }
    }

    /// Schedules the tasks other threads woke. Cheap when there are none.
    #[inline]
    pub fn take_wakes(&self) {
        if self.flags.any_woken.load(Relaxed) && self.flags.any_woken.swap(false, SeqCst) {
            let mut sched = self.sched.borrow_mut();
            for (i, flag) in self.woken.iter().enumerate() {
                if flag.load(Relaxed) && flag.swap(false, Acquire) {
                    sched.schedule(TaskId(i as u32));
                }
            }
        }
    }

    /// Marks the thread as about to wait; false if a wake arrived (then
    /// it must not wait).
    pub fn start_sleep(&self) -> bool {
        self.flags.sleeping.store(true, SeqCst);
        if self.flags.any_woken.load(SeqCst) {
            self.flags.sleeping.store(false, SeqCst);
            return false;
        }
        true
    }

    /// Takes back a wake posted for task `t` (it is moving elsewhere).
    pub fn take_wake(&self, t: TaskId) -> bool {
        self.woken
            .get(t.0 as usize)
            .is_some_and(|f| f.swap(false, SeqCst))
    }

    /// Watches for a wake from another thread for up to `limit` (or until
    /// `stop` holds); true if one came.
    pub fn spin_for_wakes(&self, limit: std::time::Duration, stop: impl Fn() -> bool) -> bool {
        let start = std::time::Instant::now();
        loop {
            for _ in 0..64 {
                if self.flags.any_woken.load(Relaxed) {
                    return true;
                }
                std::hint::spin_loop();
            }
            if stop() || start.elapsed() >= limit {
                return false;
            }
        }
    }

    /// Whether a wake from another thread waits to be taken.
    pub fn has_wakes(&self) -> bool {
        self.flags.any_woken.load(SeqCst)
    }

    pub fn end_sleep(&self) {
        self.flags.sleeping.store(false, SeqCst);
    }
}

/// Coordination of a router's threads: whether they run, the world stop,
/// and quiescence.
#[derive(Default)]
pub(crate) struct World {
    running: AtomicBool,
    pause: AtomicBool,
    parked: AtomicUsize,
    stop_depth: AtomicU32,
    exit: AtomicBool,
    /// How many threads have nothing they could ever do on their own (no
    /// task, no timer, no descriptor), in the low 32 bits, and how many
    /// times a thread stopped being so, above: when all are, no wake is in
    /// flight and the generation holds still, the router is quiescent.
    idle: AtomicU64,
}

/// A snapshot of [`World`]'s idle count and generation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdleState(u64);

impl IdleState {
    pub fn count(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }
}

impl World {
    #[inline]
    pub fn running(&self) -> bool {
        self.running.load(Relaxed)
    }

    pub fn enter_idle(&self) {
        self.idle.fetch_add(1, SeqCst);
    }

    /// One fewer idle thread, and a new generation.
    pub fn leave_idle(&self) {
        self.idle.fetch_add((1 << 32) - 1, SeqCst);
    }

    pub fn idle_state(&self) -> IdleState {
        IdleState(self.idle.load(SeqCst))
    }

    pub fn set_running(&self, on: bool) {
        self.exit.store(false, SeqCst);
        self.running.store(on, SeqCst);
    }

    pub fn exiting(&self) -> bool {
        self.exit.load(Relaxed)
    }

    pub fn request_exit(&self) {
        self.exit.store(true, SeqCst);
    }

    /// Whether thread 0 holds the world stopped.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop_depth.load(Relaxed) > 0
    }

    #[inline]
    pub fn pause_requested(&self) -> bool {
        self.pause.load(Relaxed)
    }

    /// A worker parks here, at a safe point, until thread 0 restarts the
    /// world.
    pub fn park(&self) {
        self.parked.fetch_add(1, SeqCst);
        while self.pause.load(SeqCst) {
            std::thread::yield_now();
        }
        self.parked.fetch_sub(1, SeqCst);
    }
}

// SAFETY: router threads share the core under the discipline this module's
// header sets out, which `assign_threads` proves for the configuration
// before any thread starts: every `RefCell`/`Cell` in it is used by one
// thread at a time (its home thread; or thread 0 during initialization,
// with the world stopped, or before and after the threads run), shared
// elements are reached through their `Sync` interface only, and state
// every thread uses is atomic.
unsafe impl Sync for RouterCore {}

/// Held by thread 0 while the other threads are parked.
pub(crate) struct WorldStop<'a> {
    core: &'a RouterCore,
}

impl Drop for WorldStop<'_> {
    fn drop(&mut self) {
        let w = &self.core.rt.world;
        if w.stop_depth.fetch_sub(1, SeqCst) == 1 {
            w.pause.store(false, SeqCst);
        }
    }
}

impl RouterCore {
    /// The number of threads the options ask for (at least 1).
    pub(crate) fn options_threads(&self) -> usize {
        self.options.threads.max(1)
    }

    /// The state of the thread element `e` is at home on.
    #[inline]
    pub(crate) fn thread_rt(&self, e: usize) -> &ThreadRt {
        self.rt.thread_of(self.home_of(e))
    }

    /// The home thread of element `e` (0 before threads are assigned).
    #[inline]
    pub(crate) fn home_of(&self, e: usize) -> usize {
        match self.home.get(e) {
            Some(h) => h.load(Relaxed) as usize,
            None => 0,
        }
    }

    /// Whether element `e` runs as one copy per thread.
    #[inline]
    pub(crate) fn has_thread_copies(&self, e: usize) -> bool {
        self.thread_copies.get(e).is_some_and(|c| !c.is_empty())
    }

    /// The cell of element `e` the running thread pushes into: its own
    /// copy, or the element itself on its home thread.
    #[inline]
    pub(crate) fn thread_cell(&self, e: usize) -> Option<&super::ElementCell> {
        let t = current_thread();
        if t == self.home_of(e) {
            return self.elements.get(e);
        }
        self.thread_copies.get(e)?.get(t)?.as_ref()
    }

    /// Every per-thread copy of element `e` other than the element itself.
    pub(crate) fn copies_of(&self, e: usize) -> impl Iterator<Item = &super::ElementCell> {
        self.thread_copies
            .get(e)
            .into_iter()
            .flat_map(|c| c.iter().flatten())
    }

    /// Folds every per-thread copy's state into its element and drops
    /// the copies' cleanup-free remains. Threads must not be running.
    pub(crate) fn fold_thread_copies(&mut self) {
        for (e, copies) in self.thread_copies.iter_mut().enumerate() {
            for copy in copies.iter_mut().filter_map(Option::take) {
                let mut copy = copy.into_inner();
                copy.cleanup();
                self.elements[e].get_mut().absorb_copy(copy);
            }
        }
    }

    /// Whether element `e` is shared by several threads.
    #[inline]
    pub(crate) fn is_shared(&self, e: usize) -> bool {
        self.shared_elems.get(e).copied().unwrap_or(false)
    }

    /// The `Sync` interface of shared element `e`, derived afresh from
    /// its cell on each use without touching the cell's borrow flag (a
    /// pointer kept across a stopped-world `&mut` write would be stale).
    ///
    /// # Safety
    /// `e` must be shared and the caller a router thread while threads run
    /// (no `&mut` to the element exists then).
    #[inline]
    pub(crate) unsafe fn shared_interface(&self, e: usize) -> Option<&dyn SharedElement> {
        if !self.is_shared(e) {
            return None;
        }
        let el: &dyn crate::element::Element = &**self.elements.get(e)?.as_ptr();
        el.shared()
    }

    /// Stops the other threads for a call from thread 0 that reaches
    /// another thread's element, if threads run and the call needs it.
    /// Worker threads cannot stop the world: their call is refused.
    pub(crate) fn handler_access(
        &self,
        elem: Option<usize>,
        name: &str,
        write: bool,
    ) -> Result<Option<WorldStop<'_>>, String> {
        let world = &self.rt.world;
        if !world.running() {
            return Ok(None);
        }
        let here = current_thread();
        let needs_stop = match elem {
            // Global handlers read immutable or atomic state; `stop` is an
            // atomic run count. Others (hotconfig) belong to thread 0.
            None => write && name != "stop",
            // Thread 0 reads a shared element's handlers as the threads
            // run (workers use its `Sync` interface, never its RefCell);
            // writes stop the world, and workers keep out.
            Some(e) if self.is_shared(e) => write || here != 0,
            // The copies live on several threads.
            Some(e) if self.has_thread_copies(e) => true,
            Some(e) => self.home_of(e) != here,
        };
        if !needs_stop || (here == 0 && world.stopped()) {
            return Ok(None);
        }
        if here != 0 {
            let target = match elem {
                Some(e) => format!(
                    "'{}.{name}' (thread {})",
                    self.info[e].name,
                    self.home_of(e)
                ),
                None => format!("'{name}'"),
            };
            return Err(format!(
                "{target} cannot be called from thread {here} while the threads run; \
                 call it from thread 0 (the control socket's thread)"
            ));
        }
        Ok(Some(self.stop_world()))
    }

    /// Parks every other thread at a safe point; they run again when the
    /// guard drops. Thread 0 only.
    pub(crate) fn stop_world(&self) -> WorldStop<'_> {
        let w = &self.rt.world;
        if w.stop_depth.fetch_add(1, SeqCst) == 0 {
            // Threads still leaving the previous stop must be gone before
            // `parked` counts this one.
            while w.parked.load(SeqCst) != 0 {
                std::thread::yield_now();
            }
            w.pause.store(true, SeqCst);
            let others = self.rt.threads.len() - 1;
            for t in &self.rt.threads[1..] {
                t.kick();
            }
            // A worker that panicked never parks: give up then (the run
            // is ending).
            while w.parked.load(SeqCst) < others && !w.exiting() {
                std::thread::yield_now();
            }
        }
        WorldStop { core: self }
    }
}

/// Where a thread reached an element from, for messages.
#[derive(Clone, Copy)]
struct Reach {
    thread: u32,
    /// The element whose task, timer or handler started the walk.
    root: usize,
}

/// Assigns every element a home thread from task preferences and the
/// connections, refuses elements reached from several threads that are
/// not thread-safe, and hands each thread its tasks, timers and
/// descriptors. With one thread, only checks the preferences.
pub(crate) fn assign_threads(core: &mut RouterCore, nthreads: usize) -> Vec<Diagnostic> {
    let n = core.info.len();
    let mut errors = Vec::new();
    let prefs = core.rt.thread_prefs.borrow().clone();
    if nthreads <= 1 {
        core.home = (0..n).map(|_| AtomicU32::new(0)).collect();
        core.shared_elems = vec![false; n];
        core.thread_copies = (0..n).map(|_| Box::default()).collect();
        // Click's quiescent thread exists with one thread too.
        let sched = core.rt.threads[0].sched.get_mut();
        for (&e, &p) in &prefs {
            if p < 0 {
                for t in core.info[e].tasks.borrow().iter() {
                    sched.never_run(*t);
                }
            }
        }
        return errors;
    }
    // Seeds: elements with a preference or with tasks.
    let mut reached: Vec<Vec<Reach>> = vec![Vec::new(); n];
    let mut queue: VecDeque<(usize, Reach)> = VecDeque::new();
    let seed_thread = |e: usize| -> Option<u32> {
        match prefs.get(&e) {
            Some(&p) if p < 0 => Some(QUIESCENT),
            Some(&p) => Some(p as u32),
            None if !core.info[e].tasks.borrow().is_empty() => Some(0),
            None => None,
        }
    };
    let why = |e: usize| {
        if core.info[e].tasks.borrow().is_empty() {
            "its StaticThreadSched preference"
        } else {
            "its own task"
        }
    };
    for e in 0..n {
        match seed_thread(e) {
            // A quiescent element's tasks never run.
            Some(QUIESCENT) | None => {}
            Some(t) => queue.push_back((e, Reach { thread: t, root: e })),
        }
    }
    walk(core, &mut reached, &mut queue);
    // Elements no task reached that act on their own (timers,
    // descriptors) do so on thread 0, unless StaticThreadSched says
    // otherwise.
    let acts_alone = |e: usize| {
        core.rt.threads[0]
            .timers
            .borrow()
            .timers
            .iter()
            .any(|t| t.elem == e)
            || core.rt.threads[0]
                .selects
                .borrow()
                .entries
                .iter()
                .any(|x| x.elem == e)
    };
    for e in 0..n {
        if reached[e].is_empty() && acts_alone(e) {
            queue.push_back((e, Reach { thread: 0, root: e }));
            walk(core, &mut reached, &mut queue);
        }
    }
    let mut home = vec![0u32; n];
    let mut shared = vec![false; n];
    let mut copies: Vec<super::ThreadCopies> = (0..n).map(|_| Box::default()).collect();
    // Elements nothing reaches and that never act alone (Idle, an unused
    // Counter) run only through handlers: give them a neighbour's thread,
    // so that a handler from elsewhere stops the world before reaching
    // into it. Repeated so chains of them take a thread too.
    for _ in 0..n {
        let mut changed = false;
        for e in 0..n {
            if !reached[e].is_empty() {
                continue;
            }
            let neighbour = core.graph.outs[e]
                .iter()
                .chain(core.graph.ins[e].iter())
                .flatten()
                .find_map(|&(d, _)| reached[d].first().copied());
            if let Some(r) = neighbour {
                reached[e].push(Reach {
                    thread: r.thread,
                    root: r.root,
                });
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for e in 0..n {
        let threads: Vec<u32> = {
            let mut t: Vec<u32> = reached[e].iter().map(|r| r.thread).collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        home[e] = threads.first().copied().unwrap_or(0);
        if threads.len() <= 1 {
            continue;
        }
        let el = core.elements[e].borrow();
        let has_own_work = !core.info[e].tasks.borrow().is_empty() || acts_alone(e);
        if el.shared().is_some() && !has_own_work {
            shared[e] = true;
            continue;
        }
        // One copy per thread, where the class allows it: each thread
        // other than the home thread gets its own.
        if !has_own_work {
            let mut slots: Vec<Option<super::ElementCell>> = (0..nthreads).map(|_| None).collect();
            // Every thread gets one, not only those reaching it now:
            // BalancedThreadSched and `home_thread` move tasks later.
            let made = (0..nthreads as u32).filter(|&t| t != threads[0]).all(|t| {
                let copy = el.per_thread_copy();
                let ok = copy.is_some();
                slots[t as usize] = copy.map(super::ElementCell::new);
                ok
            });
            if made {
                copies[e] = slots.into_boxed_slice();
                continue;
            }
        }
        let from: Vec<String> = threads
            .iter()
            .map(|&t| {
                let r = reached[e].iter().find(|r| r.thread == t).copied();
                let root = r.map(|r| r.root).unwrap_or(e);
                if root == e {
                    format!("thread {t} ({})", why(e))
                } else {
                    format!("thread {t} (from {})", elem_desc(&core.info[root]))
                }
            })
            .collect();
        let fix = if el.shared().is_some() {
            "a shared element cannot also have tasks, timers or descriptors of its own".to_string()
        } else {
            format!(
                "{} is not thread-safe{}: put a ThreadSafeQueue between the threads, \
                 or give each thread its own copy",
                core.info[e].class,
                if has_own_work && el.per_thread_copy().is_some() {
                    " (it has work of its own, so it cannot run as one copy per thread)"
                } else {
                    ""
                }
            )
        };
        errors.push(diag(
            &core.info[e].landmark,
            format!(
                "{} is reached by {}; {fix}",
                elem_desc(&core.info[e]),
                from.join(" and ")
            ),
        ));
    }
    if !errors.is_empty() {
        return errors;
    }
    for (e, &is_shared) in shared.iter().enumerate() {
        // Copied elements take the dispatcher's flagged path too, which
        // finds the running thread's copy.
        if is_shared || !copies[e].is_empty() {
            super::mark_shared(&mut core.graph, &mut core.elements, e, SHARED_BIT);
        }
    }
    core.shared_elems = shared;
    core.thread_copies = copies;
    // Tasks take their element's preference, else its home.
    let ntasks = core.rt.threads[0].sched.borrow().tasks.len();
    let mut task_home = vec![0u32; ntasks];
    for (e, &h) in home.iter().enumerate() {
        let t = seed_thread(e).unwrap_or(h);
        for task in core.info[e].tasks.borrow().iter() {
            task_home[task.0 as usize] = t;
        }
    }
    core.home = home.iter().map(|&h| AtomicU32::new(h)).collect();
    core.rt.distribute(nthreads, &task_home, &home);
    errors
}

/// Breadth-first walk of what each queued (element, thread) reaches:
/// downstream along push connections, upstream along pull connections.
fn walk(core: &RouterCore, reached: &mut [Vec<Reach>], queue: &mut VecDeque<(usize, Reach)>) {
    while let Some((e, r)) = queue.pop_front() {
        if reached[e].iter().any(|x| x.thread == r.thread) {
            continue;
        }
        reached[e].push(r);
        let info = &core.info[e];
        for (p, peers) in core.graph.outs[e].iter().enumerate() {
            if info.output_modes.get(p) == Some(&Mode::Push) {
                for &(d, _) in peers {
                    queue.push_back((d, r));
                }
            }
        }
        for (p, peers) in core.graph.ins[e].iter().enumerate() {
            if info.input_modes.get(p) == Some(&Mode::Pull) {
                for &(s, _) in peers {
                    queue.push_back((s, r));
                }
            }
        }
    }
}

/// A nonblocking eventfd.
pub(crate) fn new_eventfd() -> Option<OwnedFd> {
    // SAFETY: eventfd returns a new descriptor we own, or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    // SAFETY: fd is a fresh descriptor owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

impl super::Runtime {
    /// Splits thread 0's tasks, timers and descriptors among `nthreads`
    /// threads: task `t` goes to `task_home[t]`, element `e`'s timers and
    /// descriptors to `elem_home[e]`.
    pub(crate) fn distribute(&mut self, nthreads: usize, task_home: &[u32], elem_home: &[u32]) {
        let ntasks = task_home.len();
        let mut new_threads = Vec::with_capacity(nthreads);
        for k in 1..nthreads as u32 {
            let sched = self.threads[0]
                .sched
                .get_mut()
                .split_off(|t| task_home.get(t) == Some(&k));
            let timers = self.threads[0]
                .timers
                .get_mut()
                .split_off(|elem| elem_home.get(elem) == Some(&k));
            let mut selects = Selects::default();
            let old = self.threads[0].selects.get_mut();
            let moving: Vec<(i32, usize, Interest)> = old
                .entries
                .iter()
                .filter(|s| elem_home.get(s.elem) == Some(&k))
                .map(|s| (s.fd, s.elem, s.interest))
                .collect();
            for (fd, elem, interest) in moving {
                old.set(
                    fd,
                    elem,
                    Interest {
                        read: false,
                        write: false,
                    },
                );
                selects.set(fd, elem, interest);
            }
            new_threads.push(ThreadRt::new(sched, timers, selects));
        }
        // Tasks preferring the quiescent thread never run.
        let s0 = self.threads[0].sched.get_mut();
        for (t, &h) in task_home.iter().enumerate() {
            if h != 0 {
                s0.unschedule(TaskId(t as u32));
            }
        }
        self.threads.extend(new_threads);
        for (k, t) in self.threads.iter_mut().enumerate() {
            t.woken = (0..ntasks).map(|_| AtomicBool::new(false)).collect();
            *t.task_cycles.get_mut() = vec![0; ntasks];
            t.wake_fd = new_eventfd();
            if let Some(fd) = &t.wake_fd {
                t.selects
                    .get_mut()
                    .set(fd.as_raw_fd(), WAKE_ELEM, Interest::READ);
            }
            for (i, &h) in task_home.iter().enumerate() {
                if h as usize == k {
                    if let Some(ts) = t.sched.get_mut().tasks.get_mut(i) {
                        ts.home_thread = k as i32;
                    }
                }
            }
        }
        for (i, &h) in task_home.iter().enumerate() {
            if h == QUIESCENT {
                self.threads[0].sched.get_mut().never_run(TaskId(i as u32));
            }
        }
        self.task_home = task_home.iter().map(|&h| AtomicU32::new(h)).collect();
    }
}

/// A cycle counter for task costs: the time-stamp counter where there is
/// one, else nanoseconds.
#[inline]
pub(crate) fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions on x86-64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        crate::time::Timestamp::now_real().nanos() as u64
    }
}

/// Tasks that must share a thread, with the elements they reach: the
/// unit BalancedThreadSched moves.
#[derive(Clone, Debug)]
pub(crate) struct TaskGroup {
    pub tasks: Vec<TaskId>,
    pub elements: Vec<usize>,
    /// A thread the group may not leave (a StaticThreadSched preference,
    /// or thread 0 for work that starts without a task: descriptors,
    /// timers of unreached elements, handlers).
    pub pinned: Option<u32>,
}

impl RouterCore {
    /// Splits the router into groups of tasks that reach a common
    /// element that is not shared (so must run on one thread).
    pub(crate) fn task_groups(&self) -> Vec<TaskGroup> {
        let n = self.info.len();
        let prefs = self.rt.thread_prefs.borrow().clone();
        // Each root's reach; roots are elements with tasks, then elements
        // no task reaches (thread 0's own work).
        let reach_of = |root: usize| -> Vec<usize> {
            let mut seen = vec![false; n];
            let mut out = Vec::new();
            let mut stack = vec![root];
            while let Some(e) = stack.pop() {
                if std::mem::replace(&mut seen[e], true) {
                    continue;
                }
                out.push(e);
                if self.is_shared(e) {
                    // A shared element's own outputs (a drop port) run on
                    // whichever thread pushed: still this root's.
                }
                let info = &self.info[e];
                for (p, peers) in self.graph.outs[e].iter().enumerate() {
                    if info.output_modes.get(p) == Some(&Mode::Push) {
                        stack.extend(peers.iter().map(|&(d, _)| d));
                    }
                }
                for (p, peers) in self.graph.ins[e].iter().enumerate() {
                    if info.input_modes.get(p) == Some(&Mode::Pull) {
                        stack.extend(peers.iter().map(|&(s, _)| s));
                    }
                }
            }
            out
        };
        let mut roots: Vec<usize> = (0..n)
            .filter(|&e| !self.info[e].tasks.borrow().is_empty())
            .collect();
        let mut covered = vec![false; n];
        let mut reaches: Vec<Vec<usize>> = Vec::new();
        for &r in &roots {
            let rr = reach_of(r);
            for &e in &rr {
                covered[e] = true;
            }
            reaches.push(rr);
        }
        let task_roots = roots.len();
        for e in 0..n {
            if !covered[e] {
                let rr = reach_of(e);
                for &x in &rr {
                    covered[x] = true;
                }
                roots.push(e);
                reaches.push(rr);
            }
        }
        // Union roots that share a one-thread element.
        let mut parent: Vec<usize> = (0..roots.len()).collect();
        fn find(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        let mut owner: Vec<Option<usize>> = vec![None; n];
        for (ri, rr) in reaches.iter().enumerate() {
            for &e in rr {
                if self.is_shared(e) || self.has_thread_copies(e) {
                    continue;
                }
                match owner[e] {
                    None => owner[e] = Some(ri),
                    Some(o) => {
                        let (a, b) = (find(&mut parent, o), find(&mut parent, ri));
                        parent[a] = b;
                    }
                }
            }
        }
        let mut groups: std::collections::BTreeMap<usize, TaskGroup> = Default::default();
        for ri in 0..roots.len() {
            let g = find(&mut parent, ri);
            let group = groups.entry(g).or_insert_with(|| TaskGroup {
                tasks: Vec::new(),
                elements: Vec::new(),
                pinned: None,
            });
            let root = roots[ri];
            group
                .tasks
                .extend(self.info[root].tasks.borrow().iter().copied());
            for &e in &reaches[ri] {
                if !self.is_shared(e) && !self.has_thread_copies(e) && !group.elements.contains(&e)
                {
                    group.elements.push(e);
                }
            }
            let pin = if ri >= task_roots {
                Some(0)
            } else {
                prefs
                    .get(&root)
                    .map(|&p| if p < 0 { QUIESCENT } else { p as u32 })
            };
            if pin.is_some() {
                group.pinned = pin;
            }
        }
        groups
            .into_values()
            .filter(|g| !g.tasks.is_empty())
            .collect()
    }

    /// BalancedThreadSched's step: with the other threads stopped, takes
    /// every task's cycles since the last step, and moves whole task groups
    /// so that the busiest thread's load is as small as a greedy packing
    /// makes it (tasks sorted by cost, `increasing` or decreasing, each to
    /// the least loaded thread). Returns each group's (first task's
    /// element, thread, share of all cycles in per mille) after the step.
    /// Thread 0 only; nothing happens with one thread.
    pub(crate) fn rebalance(&self, increasing: bool) -> Vec<(usize, usize, u64)> {
        let nthreads = self.rt.threads.len();
        if nthreads <= 1 || current_thread() != 0 {
            return Vec::new();
        }
        let _stop = self.rt.world.running().then(|| self.stop_world());
        let groups = self
            .rt
            .task_groups
            .borrow_mut()
            .get_or_insert_with(|| self.task_groups())
            .clone();
        let mut cost = |g: &TaskGroup| -> u64 {
            g.tasks
                .iter()
                .map(|t| {
                    let th = self.rt.thread_of(self.rt.task_home(*t) as usize);
                    let mut c = th.task_cycles.borrow_mut();
                    c.get_mut(t.0 as usize).map_or(0, std::mem::take)
                })
                .sum()
        };
        let costs: Vec<u64> = groups.iter().map(&mut cost).collect();
        let total: u64 = costs.iter().sum::<u64>().max(1);
        let current = |g: &TaskGroup| self.rt.task_home(g.tasks[0]);
        let mut load = vec![0u64; nthreads];
        let mut target: Vec<u32> = groups.iter().map(current).collect();
        let mut order: Vec<usize> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            match g.pinned {
                Some(p) => {
                    target[i] = p;
                    if let Some(l) = load.get_mut(p as usize) {
                        *l += costs[i];
                    }
                }
                None => order.push(i),
            }
        }
        order.sort_by_key(|&i| costs[i]);
        if !increasing {
            order.reverse();
        }
        let before_max = {
            let mut l = vec![0u64; nthreads];
            for (i, g) in groups.iter().enumerate() {
                if let Some(x) = l.get_mut(current(g) as usize) {
                    *x += costs[i];
                }
            }
            l.into_iter().max().unwrap_or(0)
        };
        for &i in &order {
            // The least loaded thread; ties go to the group's own thread,
            // then the lowest.
            let here = current(&groups[i]) as usize;
            let best = (0..nthreads)
                .min_by_key(|&k| (load[k], k != here, k))
                .unwrap_or(0);
            load[best] += costs[i];
            target[i] = best as u32;
        }
        let after_max = load.iter().copied().max().unwrap_or(0);
        // Moving costs caches: only for a clear gain.
        if after_max.saturating_mul(20) < before_max.saturating_mul(19) {
            for (i, g) in groups.iter().enumerate() {
                if target[i] != current(g) && target[i] != QUIESCENT {
                    self.move_group(g, target[i] as usize);
                }
            }
        }
        groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let elem = self.rt.threads[0].sched.borrow().tasks[g.tasks[0].0 as usize].elem;
                (elem, current(g) as usize, costs[i] * 1000 / total)
            })
            .collect()
    }

    /// The `home_thread` write handler: moves element `e`'s tasks (with
    /// the elements they alone reach, and those elements' timers and
    /// descriptors) to thread `to`. Tasks that share an element that is
    /// neither shared nor copied per thread must stay together, so moving
    /// one of them alone is refused, naming the others.
    pub(crate) fn set_home_thread(&self, e: usize, to: i64) -> Result<(), String> {
        let n = self.rt.threads.len();
        if to < 0 || to as usize >= n {
            return Err(format!(
                "thread {to} out of range: the router has {n} thread{} (0 to {})",
                if n == 1 { "" } else { "s" },
                n - 1
            ));
        }
        if n == 1 {
            return Ok(());
        }
        if current_thread() != 0 {
            return Err("'home_thread' can only be written from thread 0".into());
        }
        let _stop = self.rt.world.running().then(|| self.stop_world());
        let groups = self
            .rt
            .task_groups
            .borrow_mut()
            .get_or_insert_with(|| self.task_groups())
            .clone();
        let tasks = self.info[e].tasks.borrow().clone();
        let Some(group) = groups
            .iter()
            .find(|g| tasks.iter().any(|t| g.tasks.contains(t)))
        else {
            return Ok(());
        };
        let sched = self.rt.threads[0].sched.borrow();
        let mut others: Vec<String> = group
            .tasks
            .iter()
            .map(|t| sched.tasks[t.0 as usize].elem)
            .filter(|&x| x != e)
            .map(|x| elem_desc(&self.info[x]))
            .collect();
        drop(sched);
        others.dedup();
        if !others.is_empty() {
            return Err(format!(
                "{}'s task reaches elements that {} also reach{}, so they run on one thread: \
                 move them together (BalancedThreadSched does), or put a ThreadSafeQueue between them",
                elem_desc(&self.info[e]),
                others.join(", "),
                if others.len() == 1 { "es" } else { "" }
            ));
        }
        self.move_group(group, to as usize);
        Ok(())
    }

    /// Moves a task group's tasks, and its elements' timers and
    /// descriptors, to thread `to`. The other threads are stopped (or not
    /// running).
    fn move_group(&self, g: &TaskGroup, to: usize) {
        let rt = &self.rt;
        let Some(dest) = rt.threads.get(to) else {
            return;
        };
        for &t in &g.tasks {
            let from = rt.task_home(t) as usize;
            if from == to {
                continue;
            }
            let Some(src) = rt.threads.get(from) else {
                continue;
            };
            let was = {
                let mut s = src.sched.borrow_mut();
                let was = s.is_scheduled(t);
                s.unschedule(t);
                was
            } || src.take_wake(t);
            rt.task_home[t.0 as usize].store(to as u32, Relaxed);
            let mut d = dest.sched.borrow_mut();
            if let Some(ts) = d.tasks.get_mut(t.0 as usize) {
                ts.home_thread = to as i32;
            }
            if was {
                d.schedule(t);
            }
        }
        for &e in &g.elements {
            let from = self.home_of(e);
            if from == to {
                continue;
            }
            if let Some(h) = self.home.get(e) {
                h.store(to as u32, Relaxed);
            }
            let Some(src) = rt.threads.get(from) else {
                continue;
            };
            {
                let mut st = src.timers.borrow_mut();
                let mut dt = dest.timers.borrow_mut();
                for i in 0..st.timers.len() {
                    if st.timers[i].elem != e {
                        continue;
                    }
                    if let Some(when) = st.expiry(crate::sched::TimerId(i as u32)) {
                        st.unschedule(crate::sched::TimerId(i as u32));
                        dt.schedule_at(crate::sched::TimerId(i as u32), when);
                    }
                }
            }
            let mut ss = src.selects.borrow_mut();
            let moving: Vec<(i32, Interest)> = ss
                .entries
                .iter()
                .filter(|x| x.elem == e)
                .map(|x| (x.fd, x.interest))
                .collect();
            let mut ds = dest.selects.borrow_mut();
            for (fd, interest) in moving {
                ss.set(
                    fd,
                    e,
                    Interest {
                        read: false,
                        write: false,
                    },
                );
                ds.set(fd, e, interest);
            }
        }
    }
}
