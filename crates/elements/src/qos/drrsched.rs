//! # DRRSched
//!
//! Pulls from its inputs with deficit round robin scheduling.
//!
//! ## Synopsis
//! `DRRSched([QUANTUM, QUANTA])`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Schedules its inputs by Shreedhar and Varghese's deficit round robin,
//! as Click's DRRSched does: each input has a deficit counter, in bytes.
//! The scheduler visits the inputs in turn; arriving at an input adds its
//! quantum to its deficit, and the input sends packets while the packet at
//! its head is no longer than the deficit, each one's length being taken
//! from the deficit. A head packet too long for the deficit is held until
//! a later round; an input found empty loses its deficit. Over a
//! backlogged period each input receives bandwidth in proportion to its
//! quantum, whatever its packet sizes.
//!
//! Inputs whose upstream notifier says they are empty are skipped without
//! being pulled. DRRSched is an empty notifier itself (its signal is up
//! while it holds a head packet or an input may have packets); Click's
//! notifier also listens to the queues upstream, which rclick does through
//! a task of the DRRSched. Where a pull visits every input once and finds
//! only head packets too long for their deficits, rclick goes on to the
//! next rounds in the same pull (Click returns nothing and is pulled again
//! at once): the order of service is the same.
//!
//! ## Keywords
//! - **QUANTUM** (integer > 0): bytes added to an input's deficit per
//!   round. Default 500.
//! - **QUANTA** (space-separated integers > 0; rclick's addition): a
//!   quantum per input, in input order, for weighted shares; inputs beyond
//!   the list get QUANTUM.
//!
//! ## Example
//! ```click
//! s :: DRRSched(QUANTA 500 1000);
//! InfiniteSource(LIMIT 10) -> Queue -> [0] s;
//! InfiniteSource(LIMIT 10) -> Queue -> [1] s;
//! s -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, InitCtx, NotifierSignal, Packet, SignalId, TaskId,
};

/// Passes over the inputs one pull may make while head packets wait for
/// their deficits.
const MAX_PASSES: usize = 1 << 20;

struct Port {
    head: Option<Packet>,
    deficit: u64,
    quantum: u64,
    signal: NotifierSignal,
}

pub struct DRRSched {
    quantum: u64,
    quanta: Vec<u64>,
    ports: Vec<Port>,
    next: usize,
    /// This element's empty-notifier signal.
    signal: Option<SignalId>,
    /// Woken by a queue upstream: raises `signal`.
    task: Option<TaskId>,
}

impl Default for DRRSched {
    fn default() -> Self {
        DRRSched {
            quantum: 500,
            quanta: Vec::new(),
            ports: Vec::new(),
            next: 0,
            signal: None,
            task: None,
        }
    }
}

fn parse_quantum(s: &str) -> Result<u64, String> {
    match rclick_core::conf::parse_i64(s.trim()) {
        Ok(q) if q > 0 => Ok(q as u64),
        Ok(_) => Err("bad QUANTUM".into()),
        Err(e) => Err(e),
    }
}

impl DRRSched {
    /// Click's `pull`: one pass over the inputs, starting where the last
    /// left off. Returns the packet, and whether any input may have more.
    fn pull_pass(&mut self, ctx: &mut Ctx) -> (Option<Packet>, bool) {
        let n = self.ports.len();
        let mut signals_on = false;
        for _ in 0..n {
            let i = self.next;
            let port = &mut self.ports[i];
            let p = if let Some(p) = port.head.take() {
                signals_on = true;
                Some(p)
            } else if ctx.signal_active(&port.signal) {
                signals_on = true;
                ctx.pull(i, 1).and_then(|mut b| b.pop())
            } else {
                None
            };
            match p {
                None => port.deficit = 0,
                Some(p) if p.len() as u64 <= port.deficit => {
                    port.deficit -= p.len() as u64;
                    return (Some(p), true);
                }
                Some(p) => port.head = Some(p),
            }
            self.next = (self.next + 1) % n;
            let next = &mut self.ports[self.next];
            next.deficit += next.quantum;
        }
        (None, signals_on)
    }

    fn holding(&self) -> bool {
        self.ports.iter().any(|p| p.head.is_some())
    }
}

rclick_core::element_class!(DRRSched);

impl Element for DRRSched {
    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let quantum: i64 = args.read_p_or("QUANTUM", 500);
        let quanta: Option<Vec<u64>> = args.read_with("QUANTA", |s| {
            s.split_ascii_whitespace().map(parse_quantum).collect()
        });
        args.complete()?;
        if quantum <= 0 {
            return Err("bad QUANTUM".into());
        }
        self.quantum = quantum as u64;
        self.quanta = quanta.unwrap_or_default();
        if self.quanta.len() > ctx.ninputs() {
            return Err(format!("QUANTA has more than {} quanta", ctx.ninputs()).into());
        }
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(false);
        self.ports = (0..ctx.ninputs())
            .map(|i| Port {
                head: None,
                deficit: 0,
                quantum: self.quanta.get(i).copied().unwrap_or(self.quantum),
                signal: ctx.upstream_empty_signal(i, Some(t)),
            })
            .collect();
        self.task = Some(t);
        self.next = 0;
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if self.ports.is_empty() {
            return None;
        }
        let max = max.clamp(1, rclick_core::batch::BATCH_CAPACITY);
        let mut out = Batch::new();
        let mut passes = 0;
        let mut on = true;
        while out.len() < max && passes < MAX_PASSES {
            passes += 1;
            match self.pull_pass(ctx) {
                (Some(p), _) => out.push(p),
                (None, signals_on) => {
                    on = signals_on;
                    // Heads too long for their deficits: the next rounds.
                    if !self.holding() {
                        break;
                    }
                }
            }
        }
        if let Some(s) = self.signal {
            if out.is_empty() && !on && !self.holding() {
                ctx.sleep_signal(s);
            } else {
                ctx.wake_signal(s);
            }
        }
        (!out.is_empty()).then_some(out)
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
        false
    }
}
