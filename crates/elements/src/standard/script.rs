//! # Script
//!
//! Scripts a router configuration: sets variables, calls handlers, waits,
//! and stops the driver.
//!
//! ## Synopsis
//! `Script([TYPE type,] INSTRUCTIONS...)`
//!
//! ## Ports and processing
//! None, except for PACKET scripts, which have any number of inputs and
//! outputs (port 0 agnostic, the others push). A Script with ports and no
//! TYPE is a PACKET script.
//!
//! ## Description
//! Each argument is an instruction; Script runs them in order. Text
//! undergoes substitution first: `$x` and `${x}` are script variables, `$?`
//! the status of the last `write`, `$args`, `$1`..`$9`, `$#` the `run`
//! handler's arguments, `$0` the name of the handler that started the run,
//! `$input` a PACKET script's input port, and `$(HANDLER ARGS...)` the
//! value of a read handler. Handler names without an element (`$(add 1 2)`)
//! refer to the Script's own handlers first. Substitution does not happen
//! inside single quotes.
//!
//! Instructions:
//! - `set VAR TEXT`, `setq VAR TEXT` (`q` forms also remove a layer of
//!   quotes); `init`/`initq VAR TEXT` (once, at initialization);
//!   `export`/`exportq VAR TEXT` (like `init`, and adds a read handler VAR).
//! - `print [>FILE | >>FILE] [TEXT | HANDLER]`, `printn` (no newline),
//!   `printq`, `printnq`: print TEXT unquoted, or, if it starts with a
//!   letter, `@` or `_`, the value of the read handler it names, to standard
//!   output or FILE. `save HANDLER [PARAMS] [FILE]`, `append HANDLER [PARAMS] [FILE]` (FILE is the last word).
//! - `read`/`readq HANDLER [ARGS]`: print `HANDLER:` and its value on
//!   standard error. `write`/`writeq HANDLER [ARGS]`: call a write handler.
//! - `pause [N]` / `wait_step [N]` / `wait_stop [N]`: block until stepped N
//!   times. `wait TIME` / `wait_time TIME` / `wait_for TIME`: block for TIME
//!   (on the router clock) or until stepped. `wait` alone is `pause`.
//! - `label L`; `goto L [COND]` (L may also be `begin`, `loop`, `exit`,
//!   `end`, `stop`, `error`); `loop`; `end`; `exit`; `stop` (end and ask
//!   the driver to stop); `return [V]`/`returnq [V]`; `error`/`errorq
//!   [MSG]`.
//!
//! Types: ACTIVE (runs at initialization; default), PASSIVE (runs when its
//! `run` handler is called), PACKET (runs for each packet; `return N` sends
//! it to output N, `end` to output 0, `exit` drops it), DRIVER (manages
//! driver stop events; see DriverManager), SIGNAL (`TYPE SIGNAL INT USR1
//! ...`: runs from the start when one of the signals arrives, once however
//! many arrived meanwhile; every signal script wanting the signal runs, in
//! declaration order; while one wants SIGINT or SIGTERM the driver does not
//! stop on it; `exit` gives the signals back the action they had before a
//! script took them (the default action, or the driver's), `end` keeps
//! them). More than 1000 jumps without blocking disable the script
//! (`too many jumps, giving up`).
//!
//! On hot swap, a Script of the same name, TYPE and configuration goes on
//! where its predecessor was (variables, place in the script, a pending
//! `wait` due when it was due); a changed one, and DRIVER and SIGNAL
//! scripts, start afresh as in Click. A SIGNAL script of the new
//! configuration takes its signals only when that configuration is
//! installed, not while it is being built beside the running one (so a
//! signal meanwhile reaches only the running router's scripts, and a swap
//! that fails changes nothing).
//!
//! ## Keywords
//! - **TYPE** (word): ACTIVE, PASSIVE, PACKET (or PUSH), DRIVER, or
//!   SIGNAL followed by signal names (`INT`, `SIGUSR1`) or numbers.
//!
//! ## Handlers
//! - `run` (read with parameters, write): run the script from the start
//!   with the given arguments; returns the `return` value.
//! - `step` (write): step past N blocking instructions (default 1).
//! - `goto` (write): jump to a label.
//! - `get VAR`, `shift VAR` (read with parameters), `set VAR VALUE`
//!   (write): script variables.
//! - Expression functions (read with parameters): `add sub mul div idiv
//!   min max mod rem neg abs` (integers, or reals as needed), `eq ne lt gt
//!   le ge` (numeric, else string comparison), `not and or nand nor if in`,
//!   `sprintf FMT ARGS...`, `first`, `length`, `unquote`, `random [N1
//!   [N2]]`, `htons htonl ntohs ntohl`, `cat FILE`, `catq FILE`,
//!   `readable`, `writable`, `kill SIGNAL [PID...]` (sends a signal, to
//!   this process when no PID is given); and `now` (read): the router
//!   clock.
//!
//! ## Example
//! ```click
//! Script(set x 0, label top, print $x, set x $(add $x 1),
//!        goto top $(lt $x 5), stop);
//! ```

use std::cell::RefCell;
use std::io::Write as _;

use rclick_core::conf::{parse_bool, parse_i64, parse_seconds, split_args};
use rclick_core::ctx::ElementView;
use rclick_core::element::{hflags, no_handler, HandlerSpec};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Errors, InitCtx, TimerId, Timestamp};

use super::scriptlang::{self, call_function, expand, shift_word, unq, VarSource, FUNCTIONS};

/// What kind of script this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptType {
    Active,
    Passive,
    Packet,
    Driver,
    Signal,
}

/// Signal scripts: the signal handler writes a byte to the pipe of each
/// script that wants the signal (a fixed table of atomics, as a signal
/// handler may touch nothing else); the driver's descriptor poll then runs
/// the script.
mod signals {
    use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

    const SLOTS: usize = 64;
    #[allow(clippy::declare_interior_mutable_const)]
    const NO_FD: AtomicI32 = AtomicI32::new(-1);
    #[allow(clippy::declare_interior_mutable_const)]
    const NO_MASK: AtomicU64 = AtomicU64::new(0);
    static FDS: [AtomicI32; SLOTS] = [NO_FD; SLOTS];
    static MASKS: [AtomicU64; SLOTS] = [NO_MASK; SLOTS];
    /// The action each signal had before a script first claimed it (the
    /// driver's own handler, say), given back when no script wants it any
    /// more. Only `register` and `unregister` touch it, never the handler.
    static PREVIOUS: std::sync::Mutex<Vec<(i32, libc::sigaction)>> =
        std::sync::Mutex::new(Vec::new());

    extern "C" fn on_signal(sig: libc::c_int) {
        let bit = 1u64 << (sig as u64 & 63);
        for (fd, mask) in FDS.iter().zip(MASKS.iter()) {
            if mask.load(Ordering::Acquire) & bit != 0 {
                let fd = fd.load(Ordering::Acquire);
                if fd >= 0 {
                    let b = sig as u8;
                    // SAFETY: write(2) is async-signal-safe; one byte from
                    // a local.
                    unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
                }
            }
        }
    }

    fn claimed_mask() -> u64 {
        MASKS.iter().fold(0, |m, x| m | x.load(Ordering::Acquire))
    }

    /// Whether a signal script wants `sig` (the driver then leaves it
    /// alone instead of stopping on it).
    pub fn claimed(sig: i32) -> bool {
        claimed_mask() & (1u64 << (sig as u64 & 63)) != 0
    }

    /// Sets `sig`'s handler; returns the action it replaced.
    fn set_action(sig: i32, handler: libc::sighandler_t) -> libc::sigaction {
        // SAFETY: a zeroed sigaction with a handler and an empty mask is
        // valid; sigaction(2) copies it, and fills `old`.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            old.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &sa, &mut old);
            old
        }
    }

    /// Registers the write end `fd` for `sigs`; returns the slot.
    pub fn register(fd: i32, sigs: &[i32]) -> Option<usize> {
        let mask = sigs.iter().fold(0u64, |m, s| m | 1u64 << (*s as u64 & 63));
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        let before = claimed_mask();
        let slot = FDS.iter().position(|f| {
            f.compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })?;
        MASKS[slot].store(mask, Ordering::Release);
        for s in sigs {
            let old = set_action(*s, on_signal as *const () as libc::sighandler_t);
            if before & (1u64 << (*s as u64 & 63)) == 0 {
                previous.retain(|(sig, _)| sig != s);
                previous.push((*s, old));
            }
        }
        Some(slot)
    }

    /// Unregisters a slot; signals no other script wants get back the
    /// action they had before a script claimed them (the default action,
    /// or the driver's handler).
    pub fn unregister(slot: usize) {
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        let mask = MASKS[slot].swap(0, Ordering::AcqRel);
        FDS[slot].store(-1, Ordering::Release);
        let still = claimed_mask();
        for sig in 1..64 {
            if mask & (1u64 << sig) != 0 && still & (1u64 << sig) == 0 {
                match previous.iter().position(|(s, _)| *s == sig) {
                    Some(i) => {
                        let (_, old) = previous.swap_remove(i);
                        // SAFETY: restores an action sigaction(2) gave us.
                        unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) };
                    }
                    None => {
                        set_action(sig, libc::SIG_DFL);
                    }
                }
            }
        }
    }
}

/// Whether a `Script(TYPE SIGNAL ...)` of this process handles `sig`.
pub fn signal_claimed(sig: i32) -> bool {
    signals::claimed(sig)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Initial,
    WaitStep,
    WaitTime,
    Print,
    PrintQ,
    PrintN,
    PrintNQ,
    Save,
    Append,
    Read,
    ReadQ,
    Write,
    WriteQ,
    Set,
    SetQ,
    Init,
    InitQ,
    Export,
    ExportQ,
    Label,
    Goto,
    Return,
    ReturnQ,
    Exit,
    End,
    Stop,
    Error,
    ErrorQ,
}

/// Goto targets that end the script, as Click's negative instruction codes.
const T_EXIT: i64 = -1;
/// `$?` after a write handler failed with error `e`: what Click's
/// handler would return. Most return -EINVAL (-22, what Click's error
/// reporting returns); a handler given a handler call that cannot be
/// found (Counter's `count_call 5 x.nosuch`) passes on
/// `HandlerCall::reset_write`'s -1.
fn write_failed_status(e: &str) -> i64 {
    let lookup = e.starts_with("no element named '")
        || (e.starts_with("no '") && e.ends_with("' write handler"));
    if lookup {
        -1
    } else {
        -22
    }
}
const T_END: i64 = -2;
const T_STOP: i64 = -3;
const T_ERROR: i64 = -4;
const T_ERRORQ: i64 = -5;

const MAX_JUMPS: i64 = 1000;

#[derive(Clone, Debug)]
struct Insn {
    op: Op,
    /// Wait count, variable index, or goto target.
    arg: i64,
    text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StepType {
    Normal,
    Router,
    Timer,
    Jump,
}

/// Mutable execution state (behind a RefCell so read handlers, which see
/// the element shared, can run the script).
#[derive(Clone, Debug, Default)]
struct State {
    vars: Vec<(String, String)>,
    run_args: String,
    run_handler: String,
    run_write: bool,
    pos: usize,
    step_count: i64,
    write_status: i64,
    /// Per-instruction progress of `pause N` (Click's `_args2`).
    waits: Vec<i64>,
    /// The INITIAL instruction still owes its first step.
    initial: bool,
    /// When the timer (`wait TIME`, INITIAL) is due, while it is scheduled.
    timer_due: Option<Timestamp>,
}

impl State {
    fn find_var(&mut self, name: &str, add: bool) -> Option<usize> {
        if let Some(i) = self.vars.iter().position(|(n, _)| n == name) {
            return Some(i);
        }
        if add {
            self.vars.push((name.to_string(), String::new()));
            return Some(self.vars.len() - 1);
        }
        None
    }
}

/// The Script element (also DriverManager, with default TYPE DRIVER).
pub struct Script {
    class: &'static str,
    kind: ScriptType,
    insns: Vec<Insn>,
    /// Variables known at configure time (instruction arguments refer to
    /// them by index).
    initial_vars: Vec<String>,
    exports: Vec<String>,
    config: String,
    st: RefCell<State>,
    timer: Option<TimerId>,
    /// A DRIVER script that starts right away lowers the run count from its
    /// first timer (InitCtx cannot).
    driver_kick: bool,
    /// SIGNAL scripts: the signals, the self-pipe (read, write) and the
    /// handler table slot.
    signals: Vec<i32>,
    signal_pipe: Option<(i32, i32)>,
    signal_slot: Option<usize>,
    /// A SIGNAL script of a hot-swap successor: its signals are claimed
    /// when it is installed (in `take_state`, or its first timer), not
    /// while it is built beside the running router.
    signal_deferred: bool,
}

impl Default for Script {
    fn default() -> Self {
        Script::new("Script")
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if let Some(slot) = self.signal_slot.take() {
            signals::unregister(slot);
        }
        if let Some((r, w)) = self.signal_pipe.take() {
            // SAFETY: our own descriptors, closed once.
            unsafe {
                libc::close(r);
                libc::close(w);
            }
        }
    }
}

impl Script {
    /// Claims this SIGNAL script's signals for its pipe.
    fn claim_signals(&mut self) -> Result<(), String> {
        self.signal_deferred = false;
        let Some((_, w)) = self.signal_pipe else {
            return Ok(());
        };
        match signals::register(w, &self.signals) {
            Some(slot) => {
                self.signal_slot = Some(slot);
                Ok(())
            }
            None => Err("too many signal scripts".into()),
        }
    }

    /// A hot-swap successor's deferred signals, claimed now that it runs.
    fn claim_deferred_signals(&mut self, ctx: &ElementView) {
        if self.signal_deferred {
            if let Err(e) = self.claim_signals() {
                ctx.chatter(&format!("{}: {e}", ctx.element_name()));
            }
        }
    }

    fn release_signals(&mut self, ctx: &mut Ctx) {
        if let Some(slot) = self.signal_slot.take() {
            signals::unregister(slot);
        }
        if let Some((r, _)) = self.signal_pipe {
            ctx.remove_select(r);
        }
    }

    pub fn new(class: &'static str) -> Self {
        Script {
            class,
            kind: if class == "DriverManager" {
                ScriptType::Driver
            } else {
                ScriptType::Active
            },
            insns: Vec::new(),
            initial_vars: Vec::new(),
            exports: Vec::new(),
            config: String::new(),
            st: RefCell::new(State::default()),
            timer: None,
            driver_kick: false,
            signals: Vec::new(),
            signal_pipe: None,
            signal_slot: None,
            signal_deferred: false,
        }
    }

    pub fn script_type(&self) -> ScriptType {
        self.kind
    }

    fn add_insn(&mut self, op: Op, arg: i64, text: String) {
        if self.insns.is_empty() && !matches!(op, Op::Initial | Op::WaitStep | Op::WaitTime) {
            self.insns.push(Insn {
                op: Op::Initial,
                arg: 0,
                text: String::new(),
            });
        }
        self.insns.push(Insn { op, arg, text });
    }

    fn var_index(&mut self, name: &str) -> i64 {
        if let Some(i) = self.initial_vars.iter().position(|n| n == name) {
            return i as i64;
        }
        self.initial_vars.push(name.to_string());
        (self.initial_vars.len() - 1) as i64
    }

    fn find_label(insns: &[Insn], label: &str) -> Option<i64> {
        if let Some(i) = insns
            .iter()
            .position(|x| x.op == Op::Label && x.text == label)
        {
            return Some(i as i64);
        }
        match label {
            "exit" => Some(T_EXIT),
            "end" => Some(T_END),
            "stop" => Some(T_STOP),
            "error" => Some(T_ERROR),
            "errorq" => Some(T_ERRORQ),
            "begin" | "loop" => Some(0),
            _ => None,
        }
    }

    fn decl(&self, name: &str) -> String {
        format!("{name} :: {}", self.class)
    }

    fn exec<'p, 'c, 'a>(&'p self, st: &'p mut State, host: Host<'c, 'a>) -> Exec<'p, 'c, 'a> {
        Exec {
            s: self,
            st,
            host,
            errs: Vec::new(),
            write_notes: Vec::new(),
            pending: -1,
        }
    }

    fn report(&self, host: &Host, errs: &[String]) {
        if errs.is_empty() {
            return;
        }
        host.chatter(&format!(
            "While executing '{}':",
            self.decl(&host.element_name())
        ));
        for e in errs {
            for line in e.lines() {
                host.chatter(&format!("  {line}"));
            }
        }
    }

    /// Runs the script for one packet arriving on `port`; returns the
    /// output port, if any.
    fn run_packet(&mut self, port: usize, ctx: &mut Ctx) -> Option<usize> {
        let mut st = std::mem::take(self.st.get_mut());
        let (out, errs) = {
            let mut ex = self.exec(&mut st, Host::Mut(ctx));
            if let Some(i) = ex.st.find_var("input", true) {
                ex.st.vars[i].1 = port.to_string();
            }
            ex.st.pos = 0;
            ex.step(0, StepType::Jump, 0);
            let mut out = String::new();
            ex.complete_step(Some(&mut out));
            (out, std::mem::take(&mut ex.errs))
        };
        *self.st.get_mut() = st;
        self.report(&Host::Mut(ctx), &errs);
        parse_i64(out.trim())
            .ok()
            .and_then(|p| usize::try_from(p).ok())
    }
}

/// Where handler calls, time and output go while a script runs.
enum Host<'c, 'a> {
    Mut(&'c mut Ctx<'a>),
    Ref(&'c Ctx<'a>),
    Init(&'c InitCtx<'a>),
}

impl Host<'_, '_> {
    fn now(&self) -> Timestamp {
        match self {
            Host::Mut(c) => c.now(),
            Host::Ref(c) => c.now(),
            Host::Init(c) => c.now(),
        }
    }
    fn element_name(&self) -> String {
        match self {
            Host::Mut(c) => c.element_name().to_string(),
            Host::Ref(c) => c.element_name().to_string(),
            Host::Init(c) => c.element_name().to_string(),
        }
    }
    fn element_index(&self) -> usize {
        match self {
            Host::Mut(c) => c.element_index(),
            Host::Ref(c) => c.element_index(),
            Host::Init(c) => c.element_index(),
        }
    }
    fn find_element(&self, name: &str) -> Option<usize> {
        match self {
            Host::Mut(c) => c.find_element(name),
            Host::Ref(c) => c.find_element(name),
            Host::Init(c) => c.find_element(name),
        }
    }
    fn chatter(&self, msg: &str) {
        match self {
            Host::Mut(c) => c.chatter(msg),
            Host::Ref(c) => c.chatter(msg),
            Host::Init(c) => c.chatter(msg),
        }
    }
    fn adjust_runcount(&self, delta: i32) {
        let c: &Ctx = match self {
            Host::Mut(c) => c,
            Host::Ref(c) => c,
            Host::Init(c) => return c.adjust_runcount(delta),
        };
        c.set_runcount(c.runcount().saturating_add(delta));
    }
    /// Schedules timer `t` `delay` from now; returns when it is due.
    fn schedule_timer(&self, t: TimerId, delay: Timestamp) -> Timestamp {
        let view: &ElementView = match self {
            Host::Mut(c) => c,
            Host::Ref(c) => c,
            Host::Init(c) => c,
        };
        let when = view.now() + delay;
        view.schedule_timer_at(t, when);
        when
    }
    fn unschedule_timer(&self, t: TimerId) {
        match self {
            Host::Mut(c) => c.unschedule_timer(t),
            Host::Ref(c) => c.unschedule_timer(t),
            Host::Init(_) => {}
        }
    }
    fn read(&mut self, path: &str, param: Option<&str>) -> Result<String, String> {
        match self {
            Host::Mut(c) => c.call_read(path, param),
            Host::Ref(c) => c.call_read(path, param),
            Host::Init(_) => Err("handlers not yet defined".into()),
        }
    }
    /// The write's result, and the warnings it gave (to be reported
    /// under "While calling", as Click's Script does).
    fn write(&mut self, path: &str, value: &str) -> (Result<(), String>, Vec<String>) {
        let r = match self {
            Host::Mut(c) => return c.call_write_noting(path, value),
            Host::Ref(_) => Err(format!(
                "'{path}': cannot call write handlers from a read handler"
            )),
            Host::Init(_) => Err("handlers not yet defined".into()),
        };
        (r, Vec::new())
    }
}

thread_local! {
    static STDOUT_CAPTURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Makes Script's standard output on this thread go to a buffer (tests).
pub fn capture_stdout() {
    STDOUT_CAPTURE.with(|c| *c.borrow_mut() = Some(String::new()));
}

/// Returns what Script printed on this thread since `capture_stdout`.
pub fn take_stdout() -> String {
    STDOUT_CAPTURE.with(|c| {
        c.borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    })
}

fn write_stdout(s: &str) {
    let captured = STDOUT_CAPTURE.with(|c| {
        if let Some(buf) = c.borrow_mut().as_mut() {
            buf.push_str(s);
            true
        } else {
            false
        }
    });
    if !captured {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    }
}

/// Where a handler reference points.
enum Target {
    Local(String),
    Other,
}

struct Exec<'p, 'c, 'a> {
    s: &'p Script,
    st: &'p mut State,
    host: Host<'c, 'a>,
    errs: Vec<String>,
    /// Warnings the last handler write gave.
    write_notes: Vec<String>,
    /// Click's `_cur_steps`: steps requested by the script itself while it
    /// runs (-1: none).
    pending: i64,
}

impl VarSource for Exec<'_, '_, '_> {
    fn lookup(&mut self, name: &str, vtype: u8) -> Option<String> {
        if let Some(i) = self.st.find_var(name, false) {
            return Some(self.st.vars[i].1.clone());
        }
        match name {
            "?" => return Some(self.st.write_status.to_string()),
            "args" => return Some(self.st.run_args.clone()),
            "$" => return Some(std::process::id().to_string()),
            "0" => return Some(self.st.run_handler.clone()),
            "#" => return Some(scriptlang::words(&self.st.run_args).len().to_string()),
            "write" => return Some(self.st.run_write.to_string()),
            _ => {}
        }
        if name
            .as_bytes()
            .first()
            .is_some_and(|c| (b'1'..=b'9').contains(c))
        {
            if let Ok(n) = name.parse::<usize>() {
                return Some(
                    scriptlang::words(&self.st.run_args)
                        .get(n - 1)
                        .cloned()
                        .unwrap_or_default(),
                );
            }
        }
        if vtype == b'(' {
            let (h, param) = shift_word(name);
            return match self.call_read(&h, &param) {
                Ok(v) => Some(v),
                Err(e) => {
                    self.errs.push(e);
                    None
                }
            };
        }
        None
    }
}

impl Exec<'_, '_, '_> {
    fn expand(&mut self, text: &str, expand_quote: bool) -> String {
        expand(text, self, expand_quote, 0)
    }

    fn has_local_handler(&self, h: &str) -> bool {
        FUNCTIONS.contains(&h)
            || matches!(
                h,
                "now"
                    | "get"
                    | "shift"
                    | "set"
                    | "run"
                    | "step"
                    | "goto"
                    | "readable"
                    | "writable"
                    | "name"
                    | "class"
                    | "config"
            )
            || self.s.exports.iter().any(|e| e == h)
    }

    fn target(&self, hname: &str) -> Target {
        match hname.split_once('.') {
            None if self.has_local_handler(hname) => Target::Local(hname.to_string()),
            None => Target::Other,
            Some(("", _)) | Some(("0", _)) => Target::Other,
            Some((e, h)) => match self.host.find_element(e) {
                Some(i) if i == self.host.element_index() && self.has_local_handler(h) => {
                    Target::Local(h.to_string())
                }
                _ => Target::Other,
            },
        }
    }

    /// The name Click prints for a handler reference.
    fn unparse_name(&self, hname: &str) -> String {
        match self.target(hname) {
            Target::Local(h) => format!("{}.{h}", self.host.element_name()),
            Target::Other => hname.trim_start_matches('.').to_string(),
        }
    }

    fn call_read(&mut self, hname: &str, param: &str) -> Result<String, String> {
        let p = (!param.is_empty()).then_some(param);
        match self.target(hname) {
            Target::Local(h) => self.local_read(&h, param),
            // Click's words for a handler that cannot be read.
            Target::Other => self.host.read(hname, p).map_err(|e| {
                match e
                    .strip_suffix("' handler")
                    .and_then(|x| x.strip_prefix("no '"))
                    .or_else(|| {
                        e.strip_suffix("' is a write handler")
                            .and_then(|x| x.strip_prefix('\''))
                    }) {
                    Some(path) => format!("no '{path}' read handler"),
                    None => e,
                }
            }),
        }
    }

    /// Finds write handler `hname` before a `write` calls it: its full
    /// name as Click prints it in "While calling" (`x/i.limit` for `i.limit`
    /// written inside compound `x`), or Click's lookup error (`no element
    /// named 'E'`, `no 'H' write handler`).
    fn write_target(&self, hname: &str) -> Result<String, String> {
        let hname = hname.trim();
        let missing = || format!("no '{hname}' write handler");
        match self.target(hname) {
            Target::Local(h) => {
                if matches!(h.as_str(), "set" | "step" | "goto" | "run") {
                    Ok(format!("{}.{h}", self.host.element_name()))
                } else {
                    Err(missing())
                }
            }
            Target::Other => {
                let Host::Mut(ctx) = &self.host else {
                    return Ok(hname.trim_start_matches('.').to_string());
                };
                let (elem, h) = match hname.split_once('.') {
                    None => (None, hname),
                    Some(("", h)) | Some(("0", h)) => (None, h),
                    Some((e, h)) => match ctx.find_element(e) {
                        Some(i) => (Some(i), h),
                        None => return Err(format!("no element named '{e}'")),
                    },
                };
                let full = match elem.and_then(|i| ctx.element_name_at(i)) {
                    Some(name) => format!("{name}.{h}"),
                    None => h.to_string(),
                };
                let specs = ctx.handler_specs(elem);
                // An element on the call stack cannot list its handlers
                // (the list is empty): the call itself will say.
                if !specs.is_empty() && !specs.iter().any(|s| s.name == h && s.is_write()) {
                    return Err(format!("no '{full}' write handler"));
                }
                Ok(full)
            }
        }
    }

    fn call_write(&mut self, hname: &str, value: &str) -> Result<(), String> {
        match self.target(hname) {
            Target::Local(h) => self.local_write(&h, value),
            Target::Other => {
                let (r, notes) = self.host.write(hname, value);
                self.write_notes = notes;
                r
            }
        }
    }

    fn local_read(&mut self, h: &str, param: &str) -> Result<String, String> {
        if let Some(r) = call_function(h, param, self.host.now()) {
            return r;
        }
        match h {
            "get" | "shift" => var_handler(self.st, h, param),
            "readable" | "writable" => Ok(scriptlang::words(param)
                .iter()
                .all(|w| match self.target(w) {
                    Target::Local(x) => self.has_local_handler(&x),
                    Target::Other => w
                        .split_once('.')
                        .is_none_or(|(e, _)| e.is_empty() || self.host.find_element(e).is_some()),
                })
                .to_string()),
            "name" => Ok(self.host.element_name()),
            "class" => Ok(self.s.class.to_string()),
            "config" => Ok(self.s.config.clone()),
            "run" | "step" | "goto" | "set" => Err(format!(
                "'{h}': cannot call a running script's own '{h}' handler"
            )),
            _ => match self.st.find_var(h, false) {
                Some(i) if self.s.exports.iter().any(|e| e == h) => Ok(self.st.vars[i].1.clone()),
                _ => Err(format!("no '{h}' read handler")),
            },
        }
    }

    fn local_write(&mut self, h: &str, value: &str) -> Result<(), String> {
        match h {
            "set" => var_handler(self.st, "set", value).map(|_| ()),
            "step" => {
                let data = value.trim();
                let n = if data.is_empty() || data == "router" {
                    1
                } else {
                    parse_i64(data).map_err(|_| "syntax error".to_string())?
                };
                self.pending += n;
                Ok(())
            }
            "goto" => {
                let step = Script::find_label(&self.s.insns, value.trim())
                    .filter(|s| *s >= 0)
                    .ok_or("jump to nonexistent label")? as usize;
                for w in self.st.waits.iter_mut().skip(step) {
                    *w = 0;
                }
                self.st.pos = step;
                Ok(())
            }
            "run" => {
                self.st.pos = 0;
                self.st.run_args = value.to_string();
                Ok(())
            }
            _ => Err(format!("no '{h}' write handler")),
        }
    }

    /// Click's `Script::step`: runs until blocked, ended, or out of steps.
    fn step(&mut self, nsteps: i64, step_type: StepType, mut njumps: i64) -> i64 {
        let script = self.s;
        let insns = &script.insns;
        let nsteps = nsteps + self.st.step_count;
        while nsteps - self.st.step_count >= 0 && self.st.pos < insns.len() && njumps < MAX_JUMPS {
            let ipos = self.st.pos;
            self.st.pos += 1;
            let insn = &insns[ipos];
            match insn.op {
                Op::Stop => {
                    self.st.step_count += 1;
                    self.st.pos -= 1;
                    if step_type != StepType::Router {
                        self.host.adjust_runcount(-1);
                    }
                    return njumps + 1;
                }
                Op::WaitStep => {
                    while self.st.step_count < nsteps && self.st.waits[ipos] < insn.arg {
                        self.st.waits[ipos] += 1;
                        self.st.step_count += 1;
                    }
                    if self.st.step_count == nsteps && self.st.waits[ipos] < insn.arg {
                        self.st.pos -= 1;
                        break;
                    }
                }
                Op::WaitTime => {
                    if self.st.step_count == nsteps {
                        let text = self.expand(&insn.text, false);
                        match parse_seconds(text.trim()) {
                            Ok(d) => {
                                if let Some(t) = self.s.timer {
                                    self.st.timer_due = Some(
                                        self.host.schedule_timer(t, Timestamp::from_duration(d)),
                                    );
                                }
                                self.st.pos -= 1;
                            }
                            Err(_) => self.errs.push("syntax error at 'wait'".into()),
                        }
                        break;
                    }
                    self.st.step_count += 1;
                    if let Some(t) = self.s.timer {
                        self.host.unschedule_timer(t);
                        self.st.timer_due = None;
                    }
                }
                Op::Initial => {
                    if self.st.initial {
                        self.st.step_count += 1;
                        self.st.initial = false;
                    }
                }
                Op::Print | Op::PrintQ | Op::PrintN | Op::PrintNQ | Op::Save | Op::Append => {
                    self.do_print(insn)
                }
                Op::Read | Op::ReadQ => {
                    let text = self.expand(&insn.text, false);
                    let (h, mut param) = shift_word(&text);
                    if insn.op == Op::ReadQ {
                        param = unq(&param);
                    }
                    match self.call_read(&h, &param) {
                        Ok(v) => {
                            let msg = format!("{}:\n{v}", self.unparse_name(&h));
                            for line in msg.split('\n') {
                                self.host.chatter(line);
                            }
                        }
                        Err(e) => self.errs.push(e),
                    }
                }
                Op::Write | Op::WriteQ => {
                    let text = self.expand(&insn.text, false);
                    let (h, mut value) = shift_word(&text);
                    if insn.op == Op::WriteQ {
                        value = unq(&value);
                    }
                    // As Click's Script: a handler that cannot be found
                    // is reported bare and leaves `$?` as it was; a write
                    // handler that fails, or warns (a `config` write), is
                    // reported under "While calling 'ELEMENT.HANDLER
                    // VALUE':"; a failure sets `$?` to -22 (-EINVAL, what
                    // Click's handlers return).
                    match self.write_target(&h) {
                        Err(e) => self.errs.push(e),
                        Ok(full) => {
                            let r = self.call_write(&h, &value);
                            let notes = std::mem::take(&mut self.write_notes);
                            let failure = r.as_ref().err().cloned();
                            self.st.write_status = match &r {
                                Ok(()) => 0,
                                Err(e) => write_failed_status(e),
                            };
                            // The write's warnings, then its error, under
                            // the call's context line.
                            if !notes.is_empty() || failure.is_some() {
                                let v = value.trim();
                                let call = if v.is_empty() {
                                    full
                                } else {
                                    format!("{full} {v}")
                                };
                                let mut msg = format!("While calling '{call}':");
                                let lines = notes.iter().map(String::as_str);
                                for line in lines.chain(failure.iter().flat_map(|e| e.lines())) {
                                    msg.push_str("\n  ");
                                    msg.push_str(line);
                                }
                                self.errs.push(msg);
                            }
                        }
                    }
                }
                Op::Set | Op::SetQ | Op::Return | Op::ReturnQ => {
                    let mut v = self.expand(&insn.text, false);
                    if matches!(insn.op, Op::SetQ | Op::ReturnQ) {
                        v = unq(&v);
                    }
                    if let Some(slot) = self.st.vars.get_mut(insn.arg as usize) {
                        slot.1 = v;
                    }
                    if matches!(insn.op, Op::Return | Op::ReturnQ) && self.st.pos == ipos + 1 {
                        self.st.pos -= 1;
                        break;
                    }
                }
                Op::Goto => {
                    let cond = self.expand(&insn.text, false);
                    let cond = cond.trim();
                    let taken = if cond.is_empty() {
                        true
                    } else {
                        match parse_bool(cond) {
                            Ok(b) => b,
                            Err(_) => {
                                self.errs.push(format!("bad condition '{cond}'"));
                                false
                            }
                        }
                    };
                    if taken {
                        if insn.arg < 0 {
                            if insn.arg == T_STOP && step_type != StepType::Router {
                                self.host.adjust_runcount(-1);
                            }
                            self.st.pos -= 1;
                            return njumps + 1;
                        }
                        let target = insn.arg as usize;
                        for (i, x) in insns.iter().enumerate().take(ipos).skip(target) {
                            if x.op == Op::WaitStep {
                                self.st.waits[i] = 0;
                            }
                        }
                        self.st.pos = target;
                    }
                }
                Op::Error | Op::ErrorQ | Op::End | Op::Exit => {
                    if matches!(insn.op, Op::Error | Op::ErrorQ) {
                        let mut msg = self.expand(&insn.text, false);
                        if insn.op == Op::ErrorQ {
                            msg = unq(&msg);
                        }
                        if !msg.is_empty() {
                            self.errs.push(msg);
                        }
                    }
                    self.st.pos -= 1;
                    return njumps + 1;
                }
                Op::Label | Op::Init | Op::InitQ | Op::Export | Op::ExportQ => {}
            }
            if self.st.pos != ipos + 1 {
                njumps += 1;
            }
        }
        if njumps >= MAX_JUMPS {
            let decl = self.s.decl(&self.host.element_name());
            self.host
                .chatter(&format!("{decl}: too many jumps, giving up"));
            self.st.pos = insns.len();
            if let Some(t) = self.s.timer {
                self.host.unschedule_timer(t);
                self.st.timer_due = None;
            }
        }
        if step_type == StepType::Router {
            self.host.adjust_runcount(1);
        }
        njumps + 1
    }

    fn do_print(&mut self, insn: &Insn) {
        let mut text = insn.text.clone();
        if matches!(insn.op, Op::Save | Op::Append) {
            // `save HANDLER [PARAMS...] FILE`: the file is the last word.
            let (word, rest) = shift_word(&text);
            let rest = rest.trim_end();
            let (params, file) = match rest.rfind(|c: char| c.is_ascii_whitespace()) {
                Some(i) => (rest[..i].trim_end(), &rest[i + 1..]),
                None => ("", rest),
            };
            let file = if file.is_empty() { "-" } else { file };
            text = format!(
                "{}{file} {word} {params}",
                if insn.op == Op::Save { ">" } else { ">>" }
            );
        }
        let mut file: Option<(String, bool)> = None;
        if let Some(t) = text.strip_prefix('>') {
            let (append, t) = match t.strip_prefix('>') {
                Some(t) => (true, t),
                None => (false, t),
            };
            let (name, rest) = shift_word(t);
            if !name.is_empty() && name != "-" {
                file = Some((name, append));
            }
            text = rest;
        }
        let before = self.errs.len();
        let unquote_param = matches!(insn.op, Op::PrintQ | Op::PrintNQ);
        let mut result = if text
            .as_bytes()
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'@' || *c == b'_')
        {
            let t = self.expand(&text, false);
            let (h, mut param) = shift_word(&t);
            if unquote_param {
                param = unq(&param);
            }
            match self.call_read(&h, &param) {
                Ok(v) => v,
                Err(e) => {
                    self.errs.push(e);
                    String::new()
                }
            }
        } else {
            unq(&self.expand(&text, true))
        };
        if self.errs.len() == before
            && !result.ends_with('\n')
            && !matches!(insn.op, Op::PrintN | Op::PrintNQ)
        {
            result.push('\n');
        }
        match file {
            None => write_stdout(&result),
            Some((name, append)) => {
                if !append && replace_regular_file(&name, result.as_bytes()) {
                    return;
                }
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .append(append)
                    .truncate(!append)
                    .open(&name);
                match f.and_then(|mut f| f.write_all(result.as_bytes())) {
                    Ok(()) => {}
                    Err(e) => self.errs.push(format!("{name}: {e}")),
                }
            }
        }
    }

    /// Click's `complete_step`: 1 after `stop`, -1 after `error`, else 0;
    /// fills `retval` with the return value.
    fn complete_step(&mut self, retval: Option<&mut String>) -> i32 {
        let last = self.s.insns.get(self.st.pos).map(|i| {
            if i.op == Op::Goto && i.arg < 0 {
                match i.arg {
                    T_EXIT => Op::Exit,
                    T_END => Op::End,
                    T_STOP => Op::Stop,
                    T_ERROR => Op::Error,
                    _ => Op::ErrorQ,
                }
            } else {
                i.op
            }
        });
        if let Some(r) = retval {
            r.clear();
            match last {
                Some(Op::Return) | Some(Op::ReturnQ) => {
                    if let Some(i) = self.st.find_var("_", false) {
                        *r = self.st.vars[i].1.clone();
                    }
                }
                Some(Op::End) if self.s.kind == ScriptType::Packet => *r = "0".into(),
                _ => {}
            }
        }
        match last {
            Some(Op::Error) | Some(Op::ErrorQ) => -1,
            Some(Op::Stop) => 1,
            _ => 0,
        }
    }

    /// Click's `step_handler` for `step`, `goto` and `run`. Returns the
    /// completion code and the return value.
    fn entry(&mut self, handler: &str, data: &str, write: bool) -> Result<(i32, String), String> {
        self.st.run_handler = handler.to_string();
        self.st.run_args.clear();
        self.st.run_write = write;
        let (nsteps, step_type) = match handler {
            "goto" => {
                let step = Script::find_label(&self.s.insns, data.trim())
                    .filter(|s| *s >= 0 && (*s as usize) < self.s.insns.len())
                    .ok_or("jump to nonexistent label")? as usize;
                for w in self.st.waits.iter_mut().skip(step) {
                    *w = 0;
                }
                self.st.pos = step;
                (0, StepType::Jump)
            }
            "run" => {
                self.st.pos = 0;
                self.st.run_args = data.to_string();
                (0, StepType::Jump)
            }
            _ => {
                let d = data.trim();
                if d == "router" {
                    (1, StepType::Router)
                } else if d.is_empty() {
                    (1, StepType::Normal)
                } else {
                    (
                        parse_i64(d).map_err(|_| "syntax error".to_string())?,
                        StepType::Normal,
                    )
                }
            }
        };
        self.pending = nsteps;
        let mut njumps = 0;
        let mut st_type = step_type;
        while self.pending >= 0 {
            let n = self.pending;
            self.pending = -1;
            njumps = self.step(n, st_type, njumps);
            st_type = StepType::Normal;
        }
        let mut ret = String::new();
        let code = self.complete_step(Some(&mut ret));
        Ok((code, ret))
    }
}

/// The `get`, `shift` and `set` variable handlers.
fn var_handler(st: &mut State, what: &str, param: &str) -> Result<String, String> {
    let (mut name, rest) = shift_word(param);
    if name.is_empty() && what == "shift" {
        name = "args".into();
    }
    if name.is_empty() {
        return Err("no variable".into());
    }
    if !rest.is_empty() && what != "set" {
        return Err("too many arguments".into());
    }
    let slot: &mut String = if name == "args" {
        &mut st.run_args
    } else {
        match st.find_var(&name, what == "set") {
            Some(i) => &mut st.vars[i].1,
            None => return Err(format!("undefined variable '{name}'")),
        }
    };
    Ok(match what {
        "get" => slot.clone(),
        "set" => {
            *slot = rest;
            String::new()
        }
        _ => {
            let (w, r) = shift_word(slot);
            *slot = r;
            w
        }
    })
}

rclick_core::element_class!(Script);

impl Element for Script {
    fn port_count(&self) -> &'static str {
        "-/-"
    }

    fn processing(&self) -> &'static str {
        "ah/ah"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.config = conf.to_string();
        let mut errors = Errors::new();
        let mut type_word: Option<String> = None;
        let mut insn_args = Vec::new();
        for arg in split_args(conf) {
            let (w, rest) = shift_word(&arg);
            if w == "TYPE" {
                type_word = Some(rest);
            } else {
                insn_args.push(arg);
            }
        }
        let has_ports = ctx.ninputs() > 0 || ctx.noutputs() > 0;
        if let Some(t) = &type_word {
            let t = t.trim();
            self.kind = match t {
                "ACTIVE" => ScriptType::Active,
                "PASSIVE" => ScriptType::Passive,
                "PACKET" | "PUSH" => ScriptType::Packet,
                "DRIVER" => ScriptType::Driver,
                _ if t.starts_with("SIGNAL") => {
                    self.signals.clear();
                    for w in t["SIGNAL".len()..].split_whitespace() {
                        match scriptlang::signal_number(w) {
                            Some(n) if n != libc::SIGKILL && n != libc::SIGSTOP => {
                                self.signals.push(n)
                            }
                            _ => return Err(format!("bad signal '{w}'").into()),
                        }
                    }
                    if self.signals.is_empty() {
                        return Err("TYPE SIGNAL needs signals".into());
                    }
                    ScriptType::Signal
                }
                "PROXY" => return Err("TYPE PROXY is not supported".into()),
                _ => return Err("bad TYPE".into()),
            };
        } else if has_ports && self.kind == ScriptType::Active {
            self.kind = ScriptType::Packet;
        }
        if self.kind == ScriptType::Packet && ctx.ninputs() == 0 {
            return Err("PACKET script must have inputs".into());
        }
        if self.kind != ScriptType::Packet && has_ports {
            return Err("ports allowed only on PACKET scripts".into());
        }

        self.insns.clear();
        self.initial_vars.clear();
        self.exports.clear();
        for arg in insn_args {
            let (name, rest) = shift_word(&arg);
            if name.is_empty() {
                continue;
            }
            let syntax = |errors: &mut Errors| errors.push(format!("syntax error at '{name}'"));
            match name.as_str() {
                "wait" | "pause" | "wait_step" | "wait_stop" | "wait_time" | "wait_for" => {
                    let timed = matches!(name.as_str(), "wait_time" | "wait_for")
                        || (name == "wait" && !rest.is_empty());
                    if timed {
                        self.add_insn(Op::WaitTime, 0, rest);
                    } else if rest.is_empty() {
                        self.add_insn(Op::WaitStep, 1, String::new());
                    } else {
                        match rest.trim().parse::<u32>() {
                            Ok(n) => self.add_insn(Op::WaitStep, i64::from(n), String::new()),
                            Err(_) => syntax(&mut errors),
                        }
                    }
                }
                "print" | "printq" | "printn" | "printnq" | "save" | "append" | "read"
                | "readq" | "write" | "writeq" | "goto" => {
                    let op = match name.as_str() {
                        "print" => Op::Print,
                        "printq" => Op::PrintQ,
                        "printn" => Op::PrintN,
                        "printnq" => Op::PrintNQ,
                        "save" => Op::Save,
                        "append" => Op::Append,
                        "read" => Op::Read,
                        "readq" => Op::ReadQ,
                        "write" => Op::Write,
                        "writeq" => Op::WriteQ,
                        _ => Op::Goto,
                    };
                    self.add_insn(op, 0, rest);
                }
                "return" | "returnq" | "init" | "initq" | "export" | "exportq" | "set" | "setq" => {
                    let (var, value) = if name.starts_with("return") {
                        ("_".to_string(), rest)
                    } else {
                        shift_word(&rest)
                    };
                    if var.is_empty() || (name.starts_with("set") && value.is_empty()) {
                        syntax(&mut errors);
                        continue;
                    }
                    let op = match name.as_str() {
                        "return" => Op::Return,
                        "returnq" => Op::ReturnQ,
                        "init" => Op::Init,
                        "initq" => Op::InitQ,
                        "export" => Op::Export,
                        "exportq" => Op::ExportQ,
                        "set" => Op::Set,
                        _ => Op::SetQ,
                    };
                    if matches!(op, Op::Export | Op::ExportQ) && !self.exports.contains(&var) {
                        self.exports.push(var.clone());
                    }
                    let idx = self.var_index(&var);
                    self.add_insn(op, idx, value);
                }
                "label" => {
                    let (w, r) = shift_word(&rest);
                    if w.is_empty() || !r.is_empty() {
                        syntax(&mut errors);
                    } else {
                        self.add_insn(Op::Label, 0, w);
                    }
                }
                "loop" | "end" | "exit" | "stop" | "error" | "errorq" => {
                    let op = match name.as_str() {
                        "loop" => Op::Goto,
                        "end" => Op::End,
                        "exit" => Op::Exit,
                        "stop" => Op::Stop,
                        "error" => Op::Error,
                        _ => Op::ErrorQ,
                    };
                    if !rest.is_empty() && !matches!(op, Op::Error | Op::ErrorQ) {
                        syntax(&mut errors);
                    } else {
                        self.add_insn(op, 0, rest);
                    }
                }
                _ => syntax(&mut errors),
            }
        }
        // Resolve goto labels; what follows the label is the condition.
        for i in 0..self.insns.len() {
            if self.insns[i].op == Op::Goto && !self.insns[i].text.is_empty() {
                let (label, cond) = shift_word(&self.insns[i].text);
                match Script::find_label(&self.insns, &label) {
                    Some(t) => {
                        self.insns[i].arg = t;
                        self.insns[i].text = cond;
                    }
                    None => errors.push(format!("no such label '{label}'")),
                }
            }
        }
        if self.insns.is_empty() && self.kind == ScriptType::Driver {
            self.add_insn(Op::WaitStep, 1, String::new());
        }
        let last = if self.kind == ScriptType::Driver {
            Op::Stop
        } else {
            Op::End
        };
        self.add_insn(last, 0, String::new());
        errors.into_result()
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if self.kind == ScriptType::Driver {
            ctx.set_driver_manager();
        }
        self.timer = Some(ctx.new_timer());
        let mut st = State {
            vars: self
                .initial_vars
                .iter()
                .map(|v| (v.clone(), String::new()))
                .collect(),
            waits: vec![0; self.insns.len()],
            ..State::default()
        };
        let mut errs = Vec::new();
        let mut kick = false;
        {
            let mut ex = self.exec(&mut st, Host::Init(ctx));
            for insn in &self.insns {
                if matches!(insn.op, Op::Init | Op::InitQ | Op::Export | Op::ExportQ) {
                    let mut v = ex.expand(&insn.text, false);
                    if matches!(insn.op, Op::InitQ | Op::ExportQ) {
                        v = unq(&v);
                    }
                    if let Some(slot) = ex.st.vars.get_mut(insn.arg as usize) {
                        slot.1 = v;
                    }
                }
            }
            let passive = matches!(
                self.kind,
                ScriptType::Passive | ScriptType::Packet | ScriptType::Signal
            );
            match self.insns.first() {
                Some(first) if !passive && first.op == Op::WaitTime => {
                    let text = ex.expand(&first.text, false);
                    match parse_seconds(text.trim()) {
                        Ok(d) => {
                            if let Some(t) = self.timer {
                                let when = ctx.now() + Timestamp::from_duration(d);
                                ctx.schedule_timer_at(t, when);
                                ex.st.timer_due = Some(when);
                            }
                        }
                        Err(_) => ex.errs.push("syntax error at 'wait'".into()),
                    }
                }
                Some(first) if !passive && first.op == Op::Initial => {
                    ex.st.initial = true;
                    kick = self.kind == ScriptType::Driver;
                    if let Some(t) = self.timer {
                        ctx.schedule_timer_at(t, ctx.now());
                        ex.st.timer_due = Some(ctx.now());
                    }
                }
                _ => {}
            }
            errs.append(&mut ex.errs);
        }
        *self.st.get_mut() = st;
        self.driver_kick = kick;
        if self.kind == ScriptType::Signal && errs.is_empty() {
            let mut fds = [-1i32; 2];
            // SAFETY: pipe2 fills the two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
                return Err(format!("pipe: {}", std::io::Error::last_os_error()).into());
            }
            self.signal_pipe = Some((fds[0], fds[1]));
            if ctx.is_hotswap_successor() {
                // Built beside the running router (perhaps on another
                // thread, perhaps never installed): the signals are
                // claimed at the switch, by `take_state` or, failing that,
                // by the timer, due at once.
                self.signal_deferred = true;
                if let Some(t) = self.timer {
                    ctx.schedule_timer_at(t, ctx.now());
                }
            } else {
                self.claim_signals()?;
            }
            ctx.add_select(fds[0], rclick_core::select::Interest::READ);
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.into())
        }
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        for p in batch {
            if let Some(out) = self.run_packet(port, ctx) {
                ctx.emit(out, p);
            }
        }
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if port != 0 {
            return None;
        }
        let batch = ctx.pull(0, max)?;
        let mut keep = Batch::new();
        for p in batch {
            match self.run_packet(0, ctx) {
                Some(0) => keep.push(p),
                Some(out) => ctx.emit(out, p),
                None => {}
            }
        }
        (!keep.is_empty()).then_some(keep)
    }

    /// Hot swap: a script of the same class, TYPE and configuration goes
    /// on where its predecessor was: its variables, its place in the
    /// script, and a pending `wait` (due when it was due, or at once if
    /// that time has passed). A changed script starts afresh, as in
    /// Click; DRIVER and SIGNAL scripts always do.
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        // Installed now: a SIGNAL script claims its signals (before its
        // predecessor, dropped next, lets go of them); its timer, set for
        // that, is not needed.
        if self.signal_deferred {
            self.claim_deferred_signals(ctx);
            if let Some(t) = self.timer {
                ctx.unschedule_timer(t);
            }
        }
        let Some(o) = old.as_any().downcast_ref::<Script>() else {
            return false;
        };
        if o.class != self.class
            || o.kind != self.kind
            || o.config != self.config
            || matches!(self.kind, ScriptType::Driver | ScriptType::Signal)
        {
            return false;
        }
        let st = o.st.borrow().clone();
        if let Some(t) = self.timer {
            match st.timer_due {
                Some(due) => ctx.schedule_timer_at(t, due.max(ctx.now())),
                None => ctx.unschedule_timer(t),
            }
        }
        *self.st.get_mut() = st;
        true
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if self.signal_deferred {
            // A SIGNAL script swapped in with no predecessor of its name:
            // this timer, due at the switch, only claims the signals.
            self.claim_deferred_signals(ctx);
            return;
        }
        if self.driver_kick {
            self.driver_kick = false;
            ctx.please_stop();
            return;
        }
        self.st.get_mut().timer_due = None;
        let pos = self.st.get_mut().pos;
        if !self
            .insns
            .get(pos)
            .is_some_and(|i| matches!(i.op, Op::WaitTime | Op::Initial))
        {
            return;
        }
        let mut st = std::mem::take(self.st.get_mut());
        let errs = {
            let mut ex = self.exec(&mut st, Host::Mut(ctx));
            ex.step(1, StepType::Timer, 0);
            ex.complete_step(None);
            std::mem::take(&mut ex.errs)
        };
        *self.st.get_mut() = st;
        self.report(&Host::Mut(ctx), &errs);
    }

    fn selected(&mut self, fd: i32, _readable: bool, _writable: bool, ctx: &mut Ctx) {
        if self.signal_pipe.map(|p| p.0) != Some(fd) {
            return;
        }
        // However many signals arrived, the script runs once.
        let mut buf = [0u8; 64];
        // SAFETY: reads into a local buffer from our nonblocking pipe.
        while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        if self.signal_slot.is_none() {
            return;
        }
        let mut st = std::mem::take(self.st.get_mut());
        let errs = {
            let mut ex = self.exec(&mut st, Host::Mut(ctx));
            let r = ex.entry("run", "", true);
            let mut errs = std::mem::take(&mut ex.errs);
            if let Err(e) = r {
                errs.push(e);
            }
            errs
        };
        // `exit` ends the script for good: the signal gets its default
        // action back (unless another script wants it).
        let exited = self.insns.get(st.pos).is_some_and(|i| i.op == Op::Exit);
        *self.st.get_mut() = st;
        self.report(&Host::Mut(ctx), &errs);
        if exited {
            self.release_signals(ctx);
        }
    }

    fn driver_stop_event(&mut self, ctx: &mut Ctx) -> bool {
        if self.kind != ScriptType::Driver {
            return true;
        }
        let mut st = std::mem::take(self.st.get_mut());
        let mut errs = Vec::new();
        {
            let mut ex = self.exec(&mut st, Host::Mut(ctx));
            for _ in 0..=1000 {
                let r = ex.entry("step", "router", true);
                errs.append(&mut ex.errs);
                let go_on = matches!(r, Ok((0, _)));
                if let Err(e) = r {
                    errs.push(e);
                }
                let rc = match &ex.host {
                    Host::Mut(c) => c.runcount(),
                    _ => 0,
                };
                if !go_on || rc > 0 {
                    break;
                }
            }
        }
        *self.st.get_mut() = st;
        for e in &errs {
            ctx.chatter(e);
        }
        ctx.runcount() <= 0
    }

    // The exported variables are handlers too, so the set depends on the
    // script: listed here rather than in a table.
    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut v = vec![
            HandlerSpec::write("step"),
            HandlerSpec::write("goto"),
            HandlerSpec::read_write("run").with(hflags::READ_PARAM),
        ];
        for f in FUNCTIONS {
            let h = HandlerSpec::read_param(f);
            v.push(if matches!(*f, "cat" | "catq") {
                h.with(hflags::PRIVATE)
            } else {
                h
            });
        }
        v.push(HandlerSpec::read("now"));
        v.push(HandlerSpec::read_param("readable"));
        v.push(HandlerSpec::read_param("writable"));
        v.push(HandlerSpec::read_param("get"));
        v.push(HandlerSpec::write("set"));
        v.push(HandlerSpec::read_param("shift"));
        for e in &self.exports {
            if !v.iter().any(|h| &h.name == e) {
                v.push(HandlerSpec::read(e));
            }
        }
        v
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        let param = param.unwrap_or("");
        if name != "run" && (FUNCTIONS.contains(&name) || name == "now") {
            let r = call_function(name, param, ctx.now());
            return r.unwrap_or_else(|| Err(no_handler(name)));
        }
        let mut guard = self
            .st
            .try_borrow_mut()
            .map_err(|_| format!("'{name}': script is busy"))?;
        let st: &mut State = &mut guard;
        match name {
            "run" => {
                let mut ex = self.exec(st, Host::Ref(ctx));
                let r = ex.entry("run", param, false);
                let errs = std::mem::take(&mut ex.errs);
                match r {
                    Ok((code, ret)) if errs.is_empty() && code >= 0 => Ok(ret),
                    Ok(_) => Err(if errs.is_empty() {
                        "script error".into()
                    } else {
                        errs.join("\n")
                    }),
                    Err(e) => Err(e),
                }
            }
            "get" | "shift" => var_handler(st, name, param),
            "readable" | "writable" => {
                let ex = self.exec(st, Host::Ref(ctx));
                Ok(scriptlang::words(param)
                    .iter()
                    .all(|w| match ex.target(w) {
                        Target::Local(_) => true,
                        Target::Other => w
                            .split_once('.')
                            .is_none_or(|(e, _)| e.is_empty() || ctx.find_element(e).is_some()),
                    })
                    .to_string())
            }
            _ if self.exports.iter().any(|e| e == name) => Ok(st
                .find_var(name, false)
                .map(|i| st.vars[i].1.clone())
                .unwrap_or_default()),
            _ => Err(no_handler(name)),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "set" => var_handler(self.st.get_mut(), "set", value).map(|_| ()),
            "step" | "goto" | "run" => {
                let mut st = std::mem::take(self.st.get_mut());
                let (r, errs) = {
                    let mut ex = self.exec(&mut st, Host::Mut(ctx));
                    let r = ex.entry(name, value, true);
                    (r, std::mem::take(&mut ex.errs))
                };
                *self.st.get_mut() = st;
                match r {
                    Ok((code, _)) if errs.is_empty() && code >= 0 => Ok(()),
                    Ok(_) => Err(if errs.is_empty() {
                        "script error".into()
                    } else {
                        errs.join("\n")
                    }),
                    Err(e) => Err(e),
                }
            }
            _ => Err(no_handler(name)),
        }
    }
}

/// `print >FILE` onto a regular file (or a new one): writes a sibling and
/// renames it over FILE, so a reader polling for FILE never finds it
/// created but still empty (Click's Script-signal-01 waits for a file
/// holding a pid, then reads it). Devices, FIFOs and anything that cannot
/// be replaced this way return false and are written in place.
fn replace_regular_file(name: &str, bytes: &[u8]) -> bool {
    let path = std::path::Path::new(name);
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => return false,
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return false,
        _ => {}
    }
    let Some(file_name) = path.file_name() else {
        return false;
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".rclick-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_ok() {
        return true;
    }
    let _ = std::fs::remove_file(&tmp);
    false
}
