//! The runtime context handed to elements, and the batch dispatcher.
//!
//! # Dispatch
//! An element never calls the next element directly. It emits packets or
//! batches on its outputs through [`Ctx`]; when its `push` (or `run_task`,
//! `run_timer`, handler, `pull`) returns, the runtime turns those emissions
//! into work items and runs them depth first, in emission order (VPP-style
//! dispatch with Click's ordering). Because no element is ever on the call
//! stack twice, elements take `&mut self` and cyclic push graphs (the IP
//! router's ICMP errors fed back into routing) are safe.
//!
//! Most handoffs are an element passing its whole batch on and emitting
//! nothing else. That first emission waits in a one-item tail slot rather
//! than on the work stack, and when the element returns the dispatcher
//! moves straight on to the next element of the chain: a straight run of
//! elements costs a table lookup, a borrow and a virtual call per element,
//! with no stack traffic. The order is the same as through the stack.
//!
//! Pull is a direct call upstream, as in Click: a pull path is a chain that
//! ends at a queue or a source, and cannot cycle back on itself in a valid
//! configuration. Should a push emitted during a pull reach an element that
//! is busy further up the same call chain, that batch is deferred until the
//! outermost call returns rather than re-entering the element.

use std::cell::{Cell, RefCell};
use std::net::Ipv4Addr;
use std::ops::Deref;

use crate::batch::Batch;
use crate::element::Element;
use crate::packet::Packet;
use crate::router::{RouterCore, NO_CHAIN, SHARED_BIT};
use crate::sched::{NotifierSignal, SignalId, TaskId, TimerId};
use crate::time::Timestamp;

/// A batch waiting to enter element `elem`'s input `port`. Emissions are
/// pushed here directly, already resolved to their destination.
pub(crate) struct Work {
    elem: u32,
    port: u32,
    batch: Batch,
}

/// Appends a work item writing each field in place. Building the item in a
/// temporary and copying it makes the compiler store the fields narrowly
/// and reload them as one wide word, which defeats store-to-load
/// forwarding and stalled every handoff by ~10 ns.
#[inline(always)]
fn push_work(work: &mut Vec<Work>, elem: u32, port: u32, batch: Batch) {
    if work.len() == work.capacity() {
        work.reserve(64);
    }
    // SAFETY: capacity was ensured above; each field of the slot is written
    // exactly once before the length grows to cover it.
    unsafe {
        let slot = work.as_mut_ptr().add(work.len());
        std::ptr::addr_of_mut!((*slot).elem).write(elem);
        std::ptr::addr_of_mut!((*slot).port).write(port);
        std::ptr::addr_of_mut!((*slot).batch).write(batch);
        work.set_len(work.len() + 1);
    }
}

/// [`push_work`] out of line, for paths that are usually not taken.
#[inline(never)]
fn push_work_cold(work: &mut Vec<Work>, elem: u32, port: u32, batch: Batch) {
    push_work(work, elem, port, batch);
}

/// Reusable buffers of the dispatcher: grown once, then reused, so steady
/// state allocates nothing.
#[derive(Default)]
pub struct Dispatcher {
    work: Vec<Work>,
    /// The running frame's first emission, when it is a whole batch sent
    /// while nothing else was pending (the common case: an element that
    /// hands its batch on). It waits here instead of on the work stack, so
    /// a straight chain of elements runs one after another without a
    /// stack push, pop and reversal per handoff. Only the innermost frame
    /// uses it: entering a nested frame (a pull, a handler) moves it onto
    /// the stack first.
    tail: Option<Batch>,
    tail_elem: u32,
    tail_port: u32,
    deferred: Vec<Work>,
    /// Handler writes asked for with [`Ctx::call_write_later`]: the caller,
    /// the handler and the value.
    calls: Vec<(usize, String, String)>,
    /// Set whenever `deferred` or `calls` gains an item, cleared when both
    /// are drained: the driver tests it after every task run, one test
    /// for both.
    later: bool,
}

impl Dispatcher {
    pub fn new() -> Self {
        Dispatcher {
            work: Vec::with_capacity(256),
            tail: None,
            tail_elem: 0,
            tail_port: 0,
            deferred: Vec::new(),
            calls: Vec::new(),
            later: false,
        }
    }
}

/// What every context shows of the element it is for: its index, name and
/// port counts, the clock, timers, descriptors, other elements by name,
/// and chatter. [`Ctx`] and [`InitCtx`] both dereference to it, so these
/// methods are called on either context alike (`ctx.element_name()`).
#[derive(Clone)]
#[repr(C)] // `elem` last: see `Ctx`.
pub struct ElementView<'a> {
    pub(crate) core: &'a RouterCore,
    /// Index of the element: a cell, so that a read handler called through
    /// a context (a Script reading another element's handler) runs with
    /// its own element's index.
    pub(crate) elem: Cell<usize>,
    /// Contexts belong to the router thread they were made on (the core is
    /// `Sync` only for the router's own threads): not `Send`, not `Sync`.
    pub(crate) _not_send: std::marker::PhantomData<*const ()>,
}

impl ElementView<'_> {
    /// Index of the element.
    pub fn element_index(&self) -> usize {
        self.elem.get()
    }

    pub fn element_name(&self) -> &str {
        &self.core.info[self.elem.get()].name
    }

    /// Looks up an address name declared by AddressInfo.
    pub fn lookup_ipv4(&self, name: &str) -> Option<Ipv4Addr> {
        self.address_entry(name).and_then(|v| v.ipv4)
    }

    /// The AddressInfo entry named exactly `name` (compound prefix
    /// included), if any.
    pub fn address_entry(&self, name: &str) -> Option<crate::router::AddressEntry> {
        self.core
            .rt
            .address_info
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    pub fn ninputs(&self) -> usize {
        self.core.info[self.elem.get()].ninputs
    }

    pub fn noutputs(&self) -> usize {
        self.core.info[self.elem.get()].noutputs
    }

    /// The router clock's current time.
    #[inline]
    pub fn now(&self) -> Timestamp {
        self.core.rt.clock.now()
    }

    /// Whether the router runs in simulated time (`--simtime`): its clock
    /// jumps to the next timer, so timers cannot measure waiting clients.
    pub fn is_simulated(&self) -> bool {
        self.core.rt.clock.is_simulated()
    }

    pub fn schedule_timer_at(&self, t: TimerId, when: Timestamp) {
        self.core
            .thread_rt(self.elem.get())
            .timers
            .borrow_mut()
            .schedule_at(t, when);
    }

    /// Registers (or, with an empty interest, removes) this element's
    /// interest in a descriptor.
    pub fn add_select(&self, fd: std::os::fd::RawFd, interest: crate::select::Interest) {
        self.core
            .thread_rt(self.elem.get())
            .selects
            .borrow_mut()
            .set(fd, self.elem.get(), interest);
    }

    /// Index of the element named `name` (relative to this element's
    /// compound first).
    pub fn find_element(&self, name: &str) -> Option<usize> {
        self.core
            .find_element(name, Some(&self.core.info[self.elem.get()].name))
    }

    /// Whether `path` (`elem.name`, or a global `name`; element names
    /// resolved as [`Ctx::call_write`] resolves them) names a write
    /// handler: Click's check of a handler call at initialization, for
    /// elements that take one in their configuration (FromDump's
    /// END_CALL). The error is Click's: `no element named 'E'` or
    /// `no 'PATH' write handler`. This element's own handlers are not
    /// listed here (it is busy being configured): it checks those itself.
    pub fn check_write_handler(&self, path: &str) -> Result<(), String> {
        let ctx_name = &self.core.info[self.elem.get()].name;
        let (elem, name) = self.core.resolve_handler(path, Some(ctx_name))?;
        let specs = match elem {
            Some(e) => self.core.element_handlers(e),
            None => self.core.global_handlers(),
        };
        if specs.iter().any(|h| h.name == name && h.is_write()) {
            Ok(())
        } else {
            Err(format!("no '{}' write handler", path.trim()))
        }
    }

    /// Prints a message on standard error (Click's `click_chatter`).
    pub fn chatter(&self, msg: &str) {
        self.core.rt.chatter(msg);
    }
}

/// What an element sees while it runs: its outputs and inputs, the clock,
/// tasks, timers, notifiers, handlers of other elements, and the stop
/// switch; and, through [`ElementView`], what every context shows.
///
/// `view.elem` and `base` are saved and restored together around every
/// element call; `repr(C)` keeps them adjacent, so that is one 16-byte
/// move each way.
#[repr(C)]
pub struct Ctx<'a> {
    /// The router and the element being run (`view.elem`).
    view: ElementView<'a>,
    /// Where the current element's emissions start in `disp.work`.
    base: usize,
    disp: &'a mut Dispatcher,
    /// Set by `fast_reschedule` while a task runs.
    reschedule: bool,
    /// The running task (its `TaskId`'s number), or [`NO_TASK`]: one
    /// 4-byte store to set or clear, where an `Option<TaskId>` took two
    /// to set (tag and number), once per task run.
    current_task: u32,
}

/// `Ctx::current_task` while no task runs (task numbers index the
/// router's tasks, far fewer).
const NO_TASK: u32 = u32::MAX;

impl<'a> Deref for Ctx<'a> {
    type Target = ElementView<'a>;

    #[inline]
    fn deref(&self) -> &ElementView<'a> {
        &self.view
    }
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(core: &'a RouterCore, disp: &'a mut Dispatcher, cur: usize) -> Self {
        let base = disp.work.len();
        Ctx {
            view: ElementView {
                core,
                elem: Cell::new(cur),
                _not_send: std::marker::PhantomData,
            },
            disp,
            base,
            reschedule: false,
            current_task: NO_TASK,
        }
    }

    // ---------------------------------------------------------------- output

    /// Sends one packet out of output `port`. Packets to an unconnected or
    /// nonexistent output are dropped (Click's `checked_output_push`).
    #[inline]
    pub fn emit(&mut self, port: usize, p: Packet) {
        let Some((dst, dport)) = self.view.core.graph.push_target(self.view.elem.get(), port)
        else {
            return;
        };
        let (dst, dport) = (dst as u32, dport as u32);
        let work = &mut self.disp.work;
        // Append to the latest open batch bound for the same input (keeping
        // per-destination order); otherwise open a new one.
        let mut found = false;
        for w in work[self.base..].iter_mut().rev() {
            if w.elem == dst && w.port == dport {
                if !w.batch.is_full() {
                    w.batch.push(p);
                    return;
                }
                found = true;
                break;
            }
        }
        // The tail is this frame's first emission: the latest batch for
        // its input when the stack holds none.
        if !found && self.disp.tail_elem == dst && self.disp.tail_port == dport {
            if let Some(tail) = self.disp.tail.as_mut() {
                if !tail.is_full() {
                    tail.push(p);
                    return;
                }
            }
        }
        push_work(work, dst, dport, Batch::single(p));
    }

    /// Sends a whole batch out of output `port`.
    ///
    /// Inline, because it is most elements' last step: the usual case
    /// (nothing else emitted yet) is a table lookup and three stores.
    #[inline(always)]
    pub fn emit_batch(&mut self, port: usize, batch: Batch) {
        if batch.is_empty() {
            return;
        }
        if let Some((dst, dport)) = self.view.core.graph.push_target(self.view.elem.get(), port) {
            self.hand_on(dst, dport, batch);
        }
    }

    /// Queues a non-empty batch for input `dport` of element `dst`: into
    /// the tail slot when it is the frame's first emission, else onto the
    /// work stack.
    #[inline(always)]
    fn hand_on(&mut self, dst: usize, dport: usize, batch: Batch) {
        let disp = &mut *self.disp;
        if disp.work.len() == self.base && disp.tail.is_none() {
            disp.tail_elem = dst as u32;
            disp.tail_port = dport as u32;
            disp.tail = Some(batch);
        } else {
            push_work_cold(&mut disp.work, dst as u32, dport as u32, batch);
        }
    }

    /// [`Ctx::emit_batch`] to output 0, with the target read from the
    /// element's table entry (see `ElementCell::out0`) rather than the
    /// graph's tables: a BURST 1 source pays the lookup once per packet.
    #[inline(always)]
    pub(crate) fn emit_out0(&mut self, batch: Batch) {
        let Some(cell) = self.view.core.elements.get(self.view.elem.get()) else {
            self.emit_batch(0, batch);
            return;
        };
        let (dst, dport) = cell.out0();
        if dst == NO_CHAIN || batch.is_empty() {
            return;
        }
        self.hand_on(dst, dport, batch);
    }

    /// Moves a waiting tail emission onto the work stack, under what the
    /// frame pushed after it: before a nested frame starts (which would
    /// otherwise mistake it for its own), and when a frame finishes other
    /// than through the run loop.
    #[inline(always)]
    fn spill_tail(&mut self) {
        if self.disp.tail.is_some() {
            self.spill_tail_now();
        }
    }

    #[inline(never)]
    fn spill_tail_now(&mut self) {
        if let Some(batch) = self.disp.tail.take() {
            let (elem, port) = (self.disp.tail_elem, self.disp.tail_port);
            let work = &mut self.disp.work;
            if work.len() == self.base {
                push_work(work, elem, port, batch);
            } else {
                work.insert(self.base, Work { elem, port, batch });
            }
        }
    }

    /// Pulls up to `max` packets from input `port`, if it is a pull input.
    pub fn pull(&mut self, port: usize, max: usize) -> Option<Batch> {
        let (src, sport, _) = self.resolve_pull(port)?;
        self.pull_from(src, sport, max)
    }

    /// Where a pull on input `port` is answered: the element and output
    /// (elements that only forward pulls are skipped), and whether that
    /// answer is fixed for the router's life (no forwarder on the way,
    /// whose choice may change: Bypass's `active`).
    pub(crate) fn resolve_pull(&self, port: usize) -> Option<(usize, usize, bool)> {
        let core = self.view.core;
        let (mut src, mut sport) = core.graph.pull_source(self.view.elem.get(), port)?;
        // Elements that only forward pulls are skipped (bounded, in case
        // forwarders form a cycle). Most elements never forward: the graph
        // says so without a borrow and a virtual call per pull.
        let mut fixed = true;
        for _ in 0..64 {
            if !core.graph.forwards_pulls(src) {
                break;
            }
            fixed = false;
            let next = match core.elements.get(src).map(|c| c.try_borrow()) {
                Some(Ok(e)) => e.forward_pull(sport),
                _ => None,
            };
            match next.and_then(|i| core.graph.pull_source(src, i)) {
                Some((s, p)) => (src, sport) = (s, p),
                None => break,
            }
        }
        Some((src, sport, fixed))
    }

    /// Pulls up to `max` packets from output `sport` of element `src` (as
    /// the graph's tables name it, shared flag included), found by
    /// [`Ctx::resolve_pull`].
    #[inline(always)]
    pub(crate) fn pull_from(&mut self, src: usize, sport: usize, max: usize) -> Option<Batch> {
        self.spill_tail();
        let saved = (self.view.elem.get(), self.base);
        self.view.elem.set(src);
        self.base = self.disp.work.len();
        let result = match self.view.core.elements.get(src) {
            Some(cell) => match cell.try_borrow_mut() {
                Ok(mut e) => e.pull(sport, max, self),
                // A pull cycle: the configuration pulls from an element
                // already pulling. Nothing can be produced safely.
                Err(_) => None,
            },
            None => {
                self.view.elem.set(src & !(SHARED_BIT as usize));
                self.pull_shared(src, sport, max)
            }
        };
        self.finish_frame();
        self.view.elem.set(saved.0);
        self.base = saved.1;
        result
    }

    /// Runs everything the current frame emitted, depth first.
    #[inline(always)]
    pub(crate) fn finish_frame(&mut self) {
        if self.disp.work.len() == self.base && self.disp.tail.is_none() {
            return;
        }
        self.finish_frame_run();
    }

    /// [`Ctx::finish_frame`] for a task's frame, with the usual case (the
    /// task handed one batch on: the tail) inline in the task loop rather
    /// than a call of its own with its register saves, paid once per
    /// packet at BURST 1.
    #[inline(always)]
    pub(crate) fn finish_task_frame(&mut self) {
        let base = self.base;
        if self.disp.work.len() != base {
            self.finish_frame_stacked();
            return;
        }
        self.run_tail(base);
    }

    /// Runs task `t` of the current element (whose cell is `cell`) once
    /// more, straight after a run of it from the driver's task loop: what
    /// the loop does for a task alone on its thread. That run left the
    /// context as entering the element leaves it (the element and frame
    /// base restored by every frame that ran, and nothing left on the work
    /// stack or in the tail, deferred work included), so entering is
    /// skipped.
    #[inline(always)]
    pub(crate) fn rerun_task(
        &mut self,
        t: TaskId,
        elem: usize,
        cell: &RefCell<Box<dyn Element>>,
    ) -> bool {
        debug_assert_eq!(self.view.elem.get(), elem);
        debug_assert!(self.disp.work.len() == self.base && self.disp.tail.is_none());
        debug_assert!(self.disp.deferred.is_empty() && self.disp.calls.is_empty());
        self.set_current_task(Some(t));
        if let Ok(mut e) = cell.try_borrow_mut() {
            e.run_task(t, self);
        }
        let again = self.end_task_run();
        let base = self.base;
        if self.disp.work.len() != base {
            self.finish_frame_stacked();
        } else if let Some(batch) = self.disp.tail.take() {
            // `run_tail`, restoring the element from what is known rather
            // than from a copy saved on the stack (`base` is kept by
            // `run_chain` and `run_work`).
            let (next, port) = (self.disp.tail_elem, self.disp.tail_port);
            if self.run_chain(base, next as usize, port as usize, batch) {
                self.run_work(base);
            }
            self.view.elem.set(elem);
            debug_assert_eq!(self.base, base);
        }
        self.run_deferred();
        again
    }

    /// Runs the frame's tail batch, if any, when nothing else is stacked
    /// above `base`: straight, with no stack traffic.
    #[inline(always)]
    fn run_tail(&mut self, base: usize) {
        debug_assert_eq!(self.base, base);
        if let Some(batch) = self.disp.tail.take() {
            let (elem, port) = (self.disp.tail_elem, self.disp.tail_port);
            // `base` is kept by `run_chain` and `run_work`: only the
            // element is restored.
            let saved = self.view.elem.get();
            if self.run_chain(base, elem as usize, port as usize, batch) {
                self.run_work(base);
            }
            self.view.elem.set(saved);
            debug_assert_eq!(self.base, base);
        }
    }

    #[inline(never)]
    fn finish_frame_run(&mut self) {
        let base = self.base;
        if self.disp.work.len() == base {
            self.run_tail(base);
            return;
        }
        self.finish_frame_stacked();
    }

    /// [`Ctx::finish_frame`] when the frame pushed onto the stack.
    #[inline(never)]
    fn finish_frame_stacked(&mut self) {
        let base = self.base;
        self.spill_tail();
        if self.disp.work.len() - base > 1 {
            self.disp.work[base..].reverse();
        }
        self.run_work(base);
    }

    fn run_work(&mut self, stack_base: usize) {
        let saved = (self.view.elem.get(), self.base);
        while self.disp.work.len() > stack_base {
            let top = self.disp.work.len() - 1;
            // Read the fields one by one (not the struct as a whole) so the
            // loads match the stores that just wrote them.
            let elem = self.disp.work[top].elem as usize;
            let port = self.disp.work[top].port as usize;
            // SAFETY: `top` is in bounds; the batch is moved out exactly
            // once, and the length shrinks before anything else can read it.
            let batch = unsafe {
                let b = std::ptr::read(&self.disp.work[top].batch);
                self.disp.work.set_len(top);
                b
            };
            self.base = top;
            self.run_chain(top, elem, port, batch);
        }
        self.view.elem.set(saved.0);
        self.base = saved.1;
    }

    /// Runs `batch` into `elem`'s input `port` with the stack at `top`,
    /// then on down the chain while each element hands its batch on whole
    /// (the tail emission) and emits nothing else; whatever else a frame
    /// emits is left on the stack, first emission on top. Leaves
    /// `view.elem` for the caller to restore. Returns whether it left
    /// anything on the stack above `top`: found where the last frame ends,
    /// so a caller that ran one batch need not look again.
    ///
    /// `base` is `top` for every element of the run, set by the caller
    /// (the task's frame already has it; `run_work` stores it for each
    /// batch it pops) and left as it was: every nested frame an element
    /// starts (a pull, a handler, a task run) restores it before
    /// returning.
    #[inline(always)]
    fn run_chain(
        &mut self,
        top: usize,
        mut elem: usize,
        mut port: usize,
        mut batch: Batch,
    ) -> bool {
        let core = self.view.core;
        debug_assert_eq!(self.base, top);
        loop {
            // A shared element's index is out of range (see `SHARED_BIT`).
            if let Some(cell) = core.elements.get(elem) {
                let Ok(mut e) = cell.try_borrow_mut() else {
                    self.disp.deferred.push(Work {
                        elem: elem as u32,
                        port: port as u32,
                        batch,
                    });
                    self.disp.later = true;
                    return false;
                };
                self.view.elem.set(elem);
                let (next, next_port) = cell.chain_next();
                if next != NO_CHAIN {
                    // A chaining element: run it and, when it emitted
                    // nothing else, go straight on to where output 0
                    // leads; otherwise hand the batch on as its push would.
                    let onward = e.push_in_chain(&mut batch, self);
                    drop(e);
                    if cell.chain_quiet() {
                        debug_assert!(
                            onward
                                && self.disp.work.len() == top
                                && self.disp.tail.is_none()
                                && !batch.is_empty(),
                            "a quiet element emitted, or changed its batch, in a chain"
                        );
                        elem = next;
                        port = next_port;
                        continue;
                    }
                    if onward && self.disp.work.len() == top && self.disp.tail.is_none() {
                        if batch.is_empty() {
                            return false;
                        }
                        elem = next;
                        port = next_port;
                        continue;
                    }
                    // Moved on every path, so no drop flag is kept for
                    // `batch` around the loop.
                    if onward {
                        self.emit_batch(0, batch);
                    } else {
                        drop(batch);
                    }
                } else {
                    e.push(port, batch, self);
                }
            } else {
                self.push_shared(top, elem, port, batch);
            }
            let len = self.disp.work.len();
            // Taken only when there: a sink (which emits nothing) costs no
            // store of an empty slot.
            let tail = if self.disp.tail.is_some() {
                self.disp.tail.take()
            } else {
                None
            };
            match tail {
                Some(next) if len == top => {
                    elem = self.disp.tail_elem as usize;
                    port = self.disp.tail_port as usize;
                    batch = next;
                }
                Some(first) => {
                    // Emitted first, so it goes under the rest before the
                    // frame is turned over.
                    let (te, tp) = (self.disp.tail_elem, self.disp.tail_port);
                    self.disp.work.insert(
                        top,
                        Work {
                            elem: te,
                            port: tp,
                            batch: first,
                        },
                    );
                    self.disp.work[top..].reverse();
                    return true;
                }
                None => {
                    if len == top {
                        return false;
                    }
                    // First emitted on top, so it runs first.
                    if len - top > 1 {
                        self.disp.work[top..].reverse();
                    }
                    return true;
                }
            }
        }
    }

    /// Pushes `batch` into a flagged element (index `elem`): a shared
    /// element through its thread-safe interface, or this thread's copy
    /// of an element that runs as one copy per thread.
    #[cold]
    #[inline(never)]
    fn push_shared(&mut self, top: usize, elem: usize, port: usize, batch: Batch) {
        let index = elem & !(SHARED_BIT as usize);
        let core = self.view.core;
        // SAFETY: the flag marks a shared element, and no one borrows it
        // mutably while threads run (writes stop the world first).
        if let Some(shared) = unsafe { core.shared_interface(index) } {
            self.view.elem.set(index);
            self.base = top;
            shared.push(port, batch, self);
            return;
        }
        let Some(cell) = core.thread_cell(index) else {
            return;
        };
        let Ok(mut e) = cell.try_borrow_mut() else {
            self.disp.deferred.push(Work {
                elem: elem as u32,
                port: port as u32,
                batch,
            });
            self.disp.later = true;
            return;
        };
        self.view.elem.set(index);
        self.base = top;
        e.push(port, batch, self);
    }

    /// Pulls from a flagged element (index `src`): as [`Ctx::push_shared`].
    #[cold]
    #[inline(never)]
    fn pull_shared(&mut self, src: usize, port: usize, max: usize) -> Option<Batch> {
        let core = self.view.core;
        let index = src & !(SHARED_BIT as usize);
        // SAFETY: as in `push_shared`.
        if let Some(shared) = unsafe { core.shared_interface(index) } {
            return shared.pull(port, max, self);
        }
        // A pull cycle finds the copy busy: nothing can be produced.
        let mut e = core.thread_cell(index)?.try_borrow_mut().ok()?;
        e.pull(port, max, self)
    }

    /// Runs deferred work until none is left. Called by the driver after a
    /// top-level call returns; the check is inline, as there is almost
    /// never any.
    #[inline(always)]
    pub(crate) fn run_deferred(&mut self) {
        debug_assert!(
            self.disp.later || (self.disp.deferred.is_empty() && self.disp.calls.is_empty())
        );
        if self.disp.later {
            self.run_deferred_and_calls();
        }
    }

    #[cold]
    fn run_deferred_and_calls(&mut self) {
        if !self.disp.deferred.is_empty() {
            self.drain_deferred();
        }
        while !self.disp.calls.is_empty() {
            for (elem, path, value) in std::mem::take(&mut self.disp.calls) {
                let saved = self.enter(elem);
                // Silent on error, as Click's HandlerCall::call_write with
                // no error handler.
                let _ = self.call_write(&path, &value);
                self.finish_frame();
                self.leave(saved);
            }
            if !self.disp.deferred.is_empty() {
                self.drain_deferred();
            }
        }
        self.disp.later = false;
    }

    /// Writes a handler (as [`Ctx::call_write`]) once the running element
    /// has returned to the driver, so that the handler may be one of its
    /// own (Click's handler calls such as InfiniteSource's END_CALL, whose
    /// target often writes back to the caller). Errors are ignored, as
    /// Click ignores them (its calls run with a silent error handler).
    pub fn call_write_later(&mut self, path: &str, value: &str) {
        self.disp
            .calls
            .push((self.view.elem.get(), path.to_string(), value.to_string()));
        self.disp.later = true;
    }

    fn drain_deferred(&mut self) {
        while !self.disp.deferred.is_empty() {
            let stack_base = self.disp.work.len();
            let deferred = std::mem::take(&mut self.disp.deferred);
            // Last deferred deepest, so the first deferred runs first.
            self.disp.work.extend(deferred.into_iter().rev());
            self.run_work(stack_base);
        }
    }

    /// The router thread running this call (0 with one thread).
    pub fn thread_index(&self) -> usize {
        crate::router::current_thread()
    }

    // ------------------------------------------------------------------ time

    /// The time as of the latest clock read (no system call).
    #[inline]
    pub fn recent(&self) -> Timestamp {
        self.view.core.rt.clock.recent()
    }

    // ---------------------------------------------------------- tasks/timers

    /// Keeps the running task scheduled (Click's `fast_reschedule`).
    pub fn fast_reschedule(&mut self) {
        self.reschedule = true;
    }

    pub(crate) fn set_current_task(&mut self, t: Option<TaskId>) {
        debug_assert!(t.is_none_or(|t| t.0 != NO_TASK));
        self.current_task = t.map_or(NO_TASK, |t| t.0);
        self.reschedule = false;
    }

    /// After a task's run: whether it asked to run again. The current task
    /// is cleared; the flag is left as it is, since it is read only while
    /// a task is current (`task_scheduled`, this) and the next task run
    /// clears it as it starts (`set_current_task`): one store fewer a run.
    #[inline(always)]
    pub(crate) fn end_task_run(&mut self) -> bool {
        self.current_task = NO_TASK;
        self.reschedule
    }

    /// Schedules a task (of any element) to run.
    pub fn schedule_task(&self, t: TaskId) {
        if t.0 == self.current_task {
            return;
        }
        self.view.core.rt.schedule_task(t);
    }

    pub fn task_scheduled(&self, t: TaskId) -> bool {
        (t.0 == self.current_task && self.reschedule) || self.view.core.rt.task_scheduled(t)
    }

    pub fn schedule_timer_after(&self, t: TimerId, delay: Timestamp) {
        let when = self.now() + delay;
        self.schedule_timer_at(t, when);
    }

    pub fn unschedule_timer(&self, t: TimerId) {
        self.view
            .core
            .thread_rt(self.view.elem.get())
            .timers
            .borrow_mut()
            .unschedule(t);
    }

    pub fn timer_expiry(&self, t: TimerId) -> Option<Timestamp> {
        self.view
            .core
            .thread_rt(self.view.elem.get())
            .timers
            .borrow()
            .expiry(t)
    }

    pub fn remove_select(&self, fd: std::os::fd::RawFd) {
        self.view
            .core
            .thread_rt(self.view.elem.get())
            .selects
            .borrow_mut()
            .set(
                fd,
                self.view.elem.get(),
                crate::select::Interest {
                    read: false,
                    write: false,
                },
            );
    }

    // ------------------------------------------------------------- notifiers

    /// Raises a notifier signal, waking its listeners.
    #[inline]
    pub fn wake_signal(&self, s: SignalId) {
        self.view.core.rt.set_signal(s, true);
    }

    /// [`Ctx::wake_signal`] compiled into the caller: for a signal raised
    /// once per packet (a queue's nonempty signal at BURST 1).
    #[inline(always)]
    pub fn wake_signal_inline(&self, s: SignalId) {
        self.view.core.rt.set_signal_inline(s, true);
    }

    /// Lowers a notifier signal.
    #[inline]
    pub fn sleep_signal(&self, s: SignalId) {
        self.view.core.rt.set_signal(s, false);
    }

    /// Whether any packet might be available behind `sig`.
    #[inline]
    pub fn signal_active(&self, sig: &NotifierSignal) -> bool {
        self.view.core.rt.signal_active(sig)
    }

    // ------------------------------------------------------------- the stop

    /// Lowers the run count (Click's `please_stop_driver`).
    pub fn please_stop(&self) {
        self.view.core.rt.adjust_runcount(-1);
    }

    pub fn runcount(&self) -> i32 {
        self.view.core.rt.runcount()
    }

    pub fn set_runcount(&self, n: i32) {
        self.view
            .core
            .rt
            .runcount
            .store(n, std::sync::atomic::Ordering::Relaxed);
    }

    // -------------------------------------------------------------- handlers

    /// Reads a handler given as `elem.name` or a global `name`, resolving
    /// element names relative to this element's compound first.
    pub fn call_read(&self, path: &str, param: Option<&str>) -> Result<String, String> {
        let ctx_name = self.view.core.info[self.view.elem.get()].name.clone();
        let (elem, name) = self.view.core.resolve_handler(path, Some(&ctx_name))?;
        self.view.core.read_handler(elem, &name, param, self)
    }

    /// Writes a handler given as `elem.name` or a global `name`.
    pub fn call_write(&mut self, path: &str, value: &str) -> Result<(), String> {
        let ctx_name = self.view.core.info[self.view.elem.get()].name.clone();
        let (elem, name) = self.view.core.resolve_handler(path, Some(&ctx_name))?;
        let saved = (self.view.elem.get(), self.base);
        let r = self.view.core.write_handler(elem, &name, value, self);
        self.view.elem.set(saved.0);
        self.base = saved.1;
        r
    }

    /// [`Ctx::call_write`], also returning the warnings the write gave
    /// (a `config` write's), which are then not printed: the caller
    /// reports them under its own context.
    pub fn call_write_noting(
        &mut self,
        path: &str,
        value: &str,
    ) -> (Result<(), String>, Vec<String>) {
        use crate::router::handlers::CALL_NOTES;
        let outer = CALL_NOTES.with(|c| c.replace(Some(Vec::new())));
        let r = self.call_write(path, value);
        let notes = CALL_NOTES.with(|c| c.replace(outer));
        (r, notes.unwrap_or_default())
    }

    /// Handlers of element `elem` (standard ones included), or the global
    /// handlers when `None`. The running element's own handlers are missing
    /// (it is busy): it knows them itself.
    pub fn handler_specs(&self, elem: Option<usize>) -> Vec<crate::element::HandlerSpec> {
        match elem {
            Some(e) if e < self.view.core.info.len() => {
                // Listing asks the element itself: as a read of its
                // `handlers` handler, from thread 0 with the world stopped.
                match self.view.core.handler_access(Some(e), "handlers", false) {
                    Ok(_stopped) => self.view.core.element_handlers(e),
                    Err(_) => Vec::new(),
                }
            }
            Some(_) => Vec::new(),
            None => self.view.core.global_handlers(),
        }
    }

    /// Reads handler `name` of element `elem` (a global handler when
    /// `None`), with no name resolution.
    pub fn read_handler_at(
        &mut self,
        elem: Option<usize>,
        name: &str,
        param: Option<&str>,
    ) -> Result<String, String> {
        if elem.is_some_and(|e| e >= self.view.core.info.len()) {
            return Err("no such element".into());
        }
        self.view.core.read_handler(elem, name, param, self)
    }

    /// Writes handler `name` of element `elem` (a global handler when
    /// `None`), with no name resolution.
    pub fn write_handler_at(
        &mut self,
        elem: Option<usize>,
        name: &str,
        value: &str,
    ) -> Result<(), String> {
        if elem.is_some_and(|e| e >= self.view.core.info.len()) {
            return Err("no such element".into());
        }
        let saved = (self.view.elem.get(), self.base);
        let r = self.view.core.write_handler(elem, name, value, self);
        self.view.elem.set(saved.0);
        self.base = saved.1;
        r
    }

    /// Runs `f` on another element (not this one), mutably, if it is not
    /// busy: for test elements that reach into another's internals (Click's
    /// QueueYankTest calls a queue's methods).
    pub fn with_element_mut<R>(
        &self,
        idx: usize,
        f: impl FnOnce(&mut dyn Element) -> R,
    ) -> Option<R> {
        if idx == self.view.elem.get() {
            return None;
        }
        // Another thread's element, or a shared one, is out of reach while
        // threads run (the world is stopped for handlers, not for this).
        let core = self.view.core;
        if core.rt.world.running()
            && (core.is_shared(idx) || core.home_of(idx) != crate::router::current_thread())
        {
            return None;
        }
        let mut e = self.view.core.elements.get(idx)?.try_borrow_mut().ok()?;
        Some(f(&mut **e))
    }

    /// BalancedThreadSched's step: moves task groups between threads by
    /// their measured cost (see the element). Returns, per group, the
    /// element of its first task, its thread, and its share of the cycles
    /// in per mille. Only thread 0 can do it; with one thread, nothing.
    pub fn rebalance_threads(&self, increasing: bool) -> Vec<(usize, usize, u64)> {
        self.view.core.rebalance(increasing)
    }

    /// Number of elements in the router.
    pub fn nelements(&self) -> usize {
        self.view.core.info.len()
    }

    /// Name of element `i`.
    pub fn element_name_at(&self, i: usize) -> Option<&str> {
        self.view.core.info.get(i).map(|x| x.name.as_str())
    }

    /// Class of element `i`.
    pub fn element_class_at(&self, i: usize) -> Option<&str> {
        self.view.core.info.get(i).map(|x| x.class.as_str())
    }

    /// Current configuration string of element `i`.
    pub fn element_config_at(&self, i: usize) -> Option<String> {
        let info = self.view.core.info.get(i)?;
        // The string belongs to the element's thread: read it as its
        // `config` handler would be (thread 0 stops the world for it).
        let _stopped = self
            .view
            .core
            .handler_access(Some(i), "config", false)
            .ok()?;
        Some(info.config.borrow().clone())
    }

    /// Resolved modes of element `i`'s inputs and outputs, each with
    /// whether the port was agnostic before resolution.
    #[allow(clippy::type_complexity)]
    pub fn port_modes_at(
        &self,
        i: usize,
    ) -> Option<(
        Vec<(crate::ports::Mode, bool)>,
        Vec<(crate::ports::Mode, bool)>,
    )> {
        let x = self.view.core.info.get(i)?;
        let zip = |modes: &[crate::ports::Mode], agn: &[bool]| {
            modes
                .iter()
                .enumerate()
                .map(|(p, m)| (*m, agn.get(p).copied().unwrap_or(false)))
                .collect::<Vec<_>>()
        };
        Some((
            zip(&x.input_modes, &x.input_agnostic),
            zip(&x.output_modes, &x.output_agnostic),
        ))
    }

    /// Every connection as `((from, output port), (to, input port))`, in
    /// element and port order.
    pub fn connections(&self) -> Vec<((usize, usize), (usize, usize))> {
        let mut v = Vec::new();
        for (e, outs) in self.view.core.graph.outs.iter().enumerate() {
            for (p, peers) in outs.iter().enumerate() {
                for &(d, dp) in peers {
                    v.push(((e, p), (d, dp)));
                }
            }
        }
        v
    }

    pub(crate) fn enter(&mut self, elem: usize) -> (usize, usize) {
        self.spill_tail();
        let saved = (self.view.elem.get(), self.base);
        self.view.elem.set(elem);
        self.base = self.disp.work.len();
        saved
    }

    pub(crate) fn leave(&mut self, saved: (usize, usize)) {
        self.view.elem.set(saved.0);
        self.base = saved.1;
    }

    /// Replaces the running element's configuration string, as read by its
    /// `config` handler and the flattened configuration (elements whose
    /// write handlers change what the configuration says, like Queue's
    /// `capacity`).
    pub fn set_config(&self, config: &str) {
        *self.view.core.info[self.view.elem.get()]
            .config
            .borrow_mut() = config.to_string();
    }

    /// The running element's configuration context, for a write handler
    /// that reconfigures its element live (see
    /// [`reconfigure_keyword`](crate::element::handlers::reconfigure_keyword)).
    pub fn init_ctx(&self) -> InitCtx<'a> {
        InitCtx::new(self.view.core, self.view.elem.get())
    }
}

/// What an element sees while it is configured and initialized (and in
/// `take_state`); and, through [`ElementView`], what every context shows.
pub struct InitCtx<'a> {
    view: ElementView<'a>,
    /// Warnings the element gave while being configured, in order.
    warnings: RefCell<Vec<String>>,
    /// Lines the element said bare (no context line), in order.
    bare: RefCell<Vec<String>>,
}

impl<'a> Deref for InitCtx<'a> {
    type Target = ElementView<'a>;

    #[inline]
    fn deref(&self) -> &ElementView<'a> {
        &self.view
    }
}

impl<'a> InitCtx<'a> {
    pub(crate) fn new(core: &'a RouterCore, elem: usize) -> Self {
        InitCtx {
            view: ElementView {
                core,
                elem: Cell::new(elem),
                _not_send: std::marker::PhantomData,
            },
            warnings: RefCell::new(Vec::new()),
            bare: RefCell::new(Vec::new()),
        }
    }

    /// Reports a warning about the configuration: the router still starts.
    /// The driver prints it as Click does, `warning: MSG` under the
    /// element's `While configuring` line (even with `-w`, as Click's
    /// driver); a live reconfiguration prints it as chatter.
    pub fn warning(&self, msg: impl std::fmt::Display) {
        self.warnings.borrow_mut().push(format!("warning: {msg}"));
    }

    /// A note about the configuration that is not a warning (Click's
    /// `errh->message`): printed like [`InitCtx::warning`], in the same
    /// place, without the word `warning:`. The router still starts.
    pub fn note(&self, msg: impl std::fmt::Display) {
        self.warnings.borrow_mut().push(msg.to_string());
    }

    /// [`InitCtx::warning`] about a part of the configuration, printed
    /// `PART: warning: MSG` (Click's `pattern 2: warning: ...`).
    pub fn warning_in(&self, part: impl std::fmt::Display, msg: impl std::fmt::Display) {
        self.warnings
            .borrow_mut()
            .push(format!("{part}: warning: {msg}"));
    }

    /// A line printed as it is, with no context line above it, in
    /// configuration order among the other elements' messages (what Click
    /// prints with `click_chatter` while configuring).
    pub fn say_bare(&self, line: impl std::fmt::Display) {
        self.bare.borrow_mut().push(line.to_string());
    }

    /// The warnings given so far, each a whole line (`warning: ...`),
    /// oldest first; the list is left empty.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(self.warnings.get_mut())
    }

    /// The lines given by [`InitCtx::say_bare`] so far, oldest first; the
    /// list is left empty.
    pub fn take_bare(&mut self) -> Vec<String> {
        std::mem::take(self.bare.get_mut())
    }

    /// Cancels a timer of this element (hot swap: a successor taking its
    /// predecessor's schedule in `take_state`).
    pub fn unschedule_timer(&self, t: TimerId) {
        self.core
            .thread_rt(self.elem.get())
            .timers
            .borrow_mut()
            .unschedule(t);
    }

    /// Whether input `port` is a pull input (valid during `initialize`).
    pub fn input_is_pull(&self, port: usize) -> bool {
        self.core.info[self.elem.get()].input_modes.get(port) == Some(&crate::ports::Mode::Pull)
    }

    /// Whether output `port` is a push output (valid during `initialize`).
    pub fn output_is_push(&self, port: usize) -> bool {
        self.core.info[self.elem.get()].output_modes.get(port) == Some(&crate::ports::Mode::Push)
    }

    /// Creates a task for this element, with tickets from any ScheduleInfo.
    pub fn new_task(&self, scheduled: bool) -> TaskId {
        let tickets = self
            .core
            .rt
            .tickets_for(&self.core.info[self.elem.get()].name);
        let id =
            self.core
                .rt
                .main_thread()
                .sched
                .borrow_mut()
                .add(self.elem.get(), tickets, scheduled);
        self.core.info[self.elem.get()].tasks.borrow_mut().push(id);
        id
    }

    pub fn new_timer(&self) -> TimerId {
        self.core
            .rt
            .main_thread()
            .timers
            .borrow_mut()
            .add(self.elem.get())
    }

    pub fn schedule_task(&self, t: TaskId) {
        self.core.rt.schedule_task(t);
    }

    /// The element's landmark, `file:line`, for messages.
    pub fn landmark(&self) -> String {
        self.core.info[self.elem.get()].landmark.to_string()
    }

    /// Adjusts the router's run count (a DriverManager-type script that
    /// stops the driver before it starts).
    pub fn adjust_runcount(&self, delta: i32) {
        self.core.rt.adjust_runcount(delta);
    }

    /// Whether this router is being built by hot swap to replace a running
    /// one: elements holding exclusive resources (a listening socket, a
    /// device) should expect to take them from their predecessor in
    /// `take_state` rather than acquire them in `initialize`.
    pub fn is_hotswap_successor(&self) -> bool {
        self.core.is_successor()
    }

    /// Raises or lowers a notifier signal (hot swap: a queue that took
    /// packets from its predecessor wakes its listeners).
    pub fn set_signal(&self, s: SignalId, active: bool) {
        self.core.rt.set_signal(s, active);
    }

    /// Creates a notifier signal, initially `active`.
    pub fn new_signal(&self, active: bool) -> SignalId {
        self.core.rt.new_signal(active)
    }

    /// Records ScheduleInfo parameters: tasks of `element` (and of elements
    /// inside a compound named `element`) get `param` times the default
    /// tickets.
    pub fn set_schedule_info(&self, element: &str, param: f64) {
        self.core
            .rt
            .schedule_info
            .borrow_mut()
            .push((element.to_string(), param));
    }

    /// How many threads the router will run on (`-j N`).
    pub fn nthreads(&self) -> usize {
        self.core.options_threads()
    }

    /// Makes element `elem`'s tasks (and timers and descriptors) run on
    /// `thread`, or never with -1 (StaticThreadSched).
    pub fn set_thread_preference(&self, elem: usize, thread: i32) {
        self.core.rt.thread_prefs.borrow_mut().insert(elem, thread);
    }

    /// Starts measuring tasks' running times, for BalancedThreadSched.
    pub fn measure_task_costs(&self) {
        self.core
            .rt
            .measure_tasks
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Makes this element the DriverManager: it decides when the driver
    /// stops.
    pub fn set_driver_manager(&self) {
        self.core.rt.driver_manager.set(Some(self.elem.get()));
    }

    /// Elements reachable downstream from output `port` (all outputs when
    /// `None`) that satisfy `filter`, stopping at the first match on each
    /// path. Cycle-safe.
    pub fn downstream(
        &self,
        port: Option<usize>,
        filter: &dyn Fn(&dyn Element) -> bool,
    ) -> Vec<usize> {
        self.core
            .context_search(self.elem.get(), port, true, filter)
    }

    /// Elements reachable upstream from input `port` (all inputs when
    /// `None`) that satisfy `filter`, stopping at the first match on each
    /// path. Cycle-safe.
    pub fn upstream(
        &self,
        port: Option<usize>,
        filter: &dyn Fn(&dyn Element) -> bool,
    ) -> Vec<usize> {
        self.core
            .context_search(self.elem.get(), port, false, filter)
    }

    /// The signal a pushing source on output `port` should watch (Click's
    /// `Notifier::downstream_full_signal`): active while a queue downstream
    /// has room. Registers `task` to be woken when it rises.
    pub fn downstream_full_signal(&self, port: usize, task: Option<TaskId>) -> NotifierSignal {
        let sig = self.core.downstream_full_signal(self.elem.get(), port);
        if let (NotifierSignal::Signals(ids), Some(t)) = (&sig, task) {
            for id in ids {
                self.core.rt.add_listener(*id, t);
            }
        }
        sig
    }

    /// The signal a puller on input `port` should watch (Click's
    /// `Notifier::upstream_empty_signal`), and registers `task` to be woken
    /// when it rises.
    pub fn upstream_empty_signal(&self, port: usize, task: Option<TaskId>) -> NotifierSignal {
        let sig = self.core.upstream_empty_signal(self.elem.get(), port);
        if let (NotifierSignal::Signals(ids), Some(t)) = (&sig, task) {
            for id in ids {
                self.core.rt.add_listener(*id, t);
            }
        }
        sig
    }

    pub fn element_class_of(&self, idx: usize) -> Option<&str> {
        self.core.info.get(idx).map(|i| i.class.as_str())
    }

    /// The name of element `idx` (for messages and handlers that list
    /// elements found by router context).
    pub fn element_name_of(&self, idx: usize) -> Option<&str> {
        self.core.info.get(idx).map(|i| i.name.as_str())
    }

    /// Runs `f` on another element (not this one), if it is not busy.
    pub fn with_element<R>(&self, idx: usize, f: impl FnOnce(&dyn Element) -> R) -> Option<R> {
        if idx == self.elem.get() {
            return None;
        }
        let e = self.core.elements.get(idx)?.try_borrow().ok()?;
        Some(f(&**e))
    }

    /// Defines (or replaces) the AddressInfo entry named `name`.
    pub fn set_address_entry(&self, name: &str, entry: crate::router::AddressEntry) {
        self.core
            .rt
            .address_info
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), entry);
    }
}
