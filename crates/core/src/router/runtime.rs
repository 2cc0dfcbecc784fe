//! Router-wide runtime state shared by every element: clock, scheduler,
//! timers, notifier signals, run count, information elements' tables,
//! descriptors, chatter.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::conf::{Ipv4Prefix, Ipv6Prefix};
use crate::sched::{
    NotifierSignal, Scheduler, SignalId, SignalState, TaskId, Timers, DEFAULT_TICKETS,
};
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

/// Router-wide runtime state: clock, scheduler, timers, signals, run count.
pub struct Runtime {
    pub clock: Clock,
    pub(crate) sched: RefCell<Scheduler>,
    pub(crate) timers: RefCell<Timers>,
    signals: RefCell<Vec<SignalState>>,
    pub(crate) runcount: Cell<i32>,
    pub(crate) schedule_info: RefCell<Vec<(String, f64)>>,
    pub(crate) driver_manager: Cell<Option<usize>>,
    pub(crate) address_info: RefCell<HashMap<String, AddressEntry>>,
    pub(crate) selects: RefCell<crate::select::Selects>,
    /// When set, chatter is collected here instead of printed (tests).
    captured: RefCell<Option<Vec<String>>>,
}

impl Runtime {
    /// Fresh state on `clock`; with `capture_chatter`, chatter is kept for
    /// [`Runtime::take_chatter`] instead of printed.
    pub(super) fn new(clock: Clock, capture_chatter: bool) -> Self {
        Runtime {
            clock,
            sched: RefCell::new(Scheduler::default()),
            timers: RefCell::new(Timers::default()),
            signals: RefCell::new(Vec::new()),
            runcount: Cell::new(1),
            schedule_info: RefCell::new(Vec::new()),
            driver_manager: Cell::new(None),
            address_info: RefCell::new(HashMap::new()),
            selects: RefCell::new(crate::select::Selects::default()),
            captured: RefCell::new(capture_chatter.then(Vec::new)),
        }
    }

    pub(crate) fn new_signal(&self, active: bool) -> SignalId {
        let mut s = self.signals.borrow_mut();
        s.push(SignalState {
            active,
            listeners: Vec::new(),
        });
        SignalId(s.len() as u32 - 1)
    }

    pub(crate) fn add_listener(&self, s: SignalId, t: TaskId) {
        if let Some(st) = self.signals.borrow_mut().get_mut(s.0 as usize) {
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
        let mut sigs = self.signals.borrow_mut();
        let Some(st) = sigs.get_mut(s.0 as usize) else {
            return;
        };
        if st.active == active {
            return;
        }
        st.active = active;
        if active {
            self.wake_listeners(&st.listeners);
        }
    }

    fn wake_listeners(&self, listeners: &[TaskId]) {
        let mut sched = self.sched.borrow_mut();
        for t in listeners {
            sched.schedule(*t);
        }
    }

    #[inline]
    pub(crate) fn signal_active(&self, sig: &NotifierSignal) -> bool {
        match sig {
            NotifierSignal::Idle => false,
            NotifierSignal::Busy => true,
            NotifierSignal::Signals(ids) => self.any_signal_active(ids),
        }
    }

    fn any_signal_active(&self, ids: &[SignalId]) -> bool {
        let sigs = self.signals.borrow();
        ids.iter()
            .any(|i| sigs.get(i.0 as usize).is_some_and(|s| s.active))
    }

    pub(crate) fn adjust_runcount(&self, delta: i32) {
        self.runcount.set(self.runcount.get().saturating_add(delta));
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
        if let Some(buf) = self.captured.borrow_mut().as_mut() {
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
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
