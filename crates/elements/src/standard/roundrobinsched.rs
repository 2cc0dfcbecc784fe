//! # RoundRobinSched
//!
//! Pulls from its inputs in round-robin order.
//!
//! ## Synopsis
//! `RoundRobinSched`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Each packet pulled from the output comes from the next input in turn
//! that has one: after a packet from input i, the search starts at input
//! i+1. A pull for several packets takes them one at a time in that order,
//! so the inputs share the output packet by packet, as in Click. Inputs
//! whose upstream notifier says they are empty are skipped without being
//! pulled. Not a notifier itself; pullers listen to the queues upstream.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! a :: Queue -> [0] rr :: RoundRobinSched; b :: Queue -> [1] rr; rr -> Unqueue -> Discard;
//! ```

use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, NotifierSignal, Packet};

/// The empty signals of every input, which the schedulers check before
/// pulling from it.
pub fn input_signals(ctx: &mut InitCtx) -> Vec<NotifierSignal> {
    (0..ctx.ninputs())
        .map(|i| ctx.upstream_empty_signal(i, None))
        .collect()
}

/// Up to `max` packets (at most a batch) from `one`, a scheduler's
/// one-packet pull (Click's schedulers choose an input per packet).
pub fn pull_one_by_one<S>(
    sched: &mut S,
    max: usize,
    ctx: &mut Ctx,
    one: fn(&mut S, &mut Ctx) -> Option<Packet>,
) -> Option<Batch> {
    let max = max.min(BATCH_CAPACITY);
    if max == 0 {
        return None;
    }
    let mut out = Batch::single(one(sched, ctx)?);
    while out.len() < max {
        match one(sched, ctx) {
            Some(p) => out.push(p),
            None => break,
        }
    }
    Some(out)
}

#[derive(Default)]
pub struct RoundRobinSched {
    next: usize,
    signals: Vec<NotifierSignal>,
}

impl RoundRobinSched {
    /// Click's one-packet pull.
    fn pull_one(&mut self, ctx: &mut Ctx) -> Option<Packet> {
        let n = self.signals.len();
        let mut i = self.next;
        for _ in 0..n {
            let got = if ctx.signal_active(&self.signals[i]) {
                ctx.pull(i, 1)
            } else {
                None
            };
            i = if i + 1 >= n { 0 } else { i + 1 };
            if let Some(mut b) = got {
                if let Some(p) = b.pop() {
                    self.next = i;
                    return Some(p);
                }
            }
        }
        None
    }
}

rclick_core::element_class!(RoundRobinSched);

impl Element for RoundRobinSched {
    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.signals = input_signals(ctx);
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        pull_one_by_one(self, max, ctx, Self::pull_one)
    }
}
