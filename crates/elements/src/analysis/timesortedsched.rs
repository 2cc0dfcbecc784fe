//! # TimeSortedSched
//!
//! Merges packet streams by timestamp.
//!
//! ## Synopsis
//! `TimeSortedSched([*keywords* STOP, BUFFER])`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Pulls packets from its inputs and returns them in increasing timestamp
//! order: it holds up to BUFFER packets from each input and, on each pull,
//! returns the earliest packet it holds. When every input's stream is
//! itself sorted (and BUFFER is 1), the output is sorted; a larger BUFFER
//! also repairs streams that are slightly out of order. The `well_ordered`
//! handler says whether every packet returned so far (with a nonzero
//! timestamp) was no earlier than the one before.
//!
//! TimeSortedSched is a notifier: its signal is up while it holds packets
//! or some input may have more, so the element pulling from it sleeps
//! when every input has run dry; an input that wakes again wakes it. With
//! STOP true, a pull that finds nothing held and every input dry asks the
//! driver to stop.
//!
//! ## Keywords
//! - **STOP** (boolean): stop the driver when every input is dry. Default
//!   false.
//! - **BUFFER** (integer): packets held per input. Default 1.
//!
//! ## Handlers
//! - `well_ordered` (read): `true` while the output has been in order.
//!
//! ## Example
//! ```click
//! a :: FromDump(a.pcap); b :: FromDump(b.pcap);
//! a -> t :: TimeSortedSched(STOP true) -> ToDump(merged.pcap); b -> [1] t;
//! ```

use rclick_core::conf::Args;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, SignalId, TaskId,
    Timestamp,
};

#[derive(Default)]
pub struct TimeSortedSched {
    stop: bool,
    buffer: usize,
    /// Held packets: timestamp, arrival order (ties go first come, first
    /// served), input, packet.
    held: Vec<(Timestamp, u64, usize, Packet)>,
    seq: u64,
    /// Packets held per input.
    count: Vec<usize>,
    inputs: Vec<NotifierSignal>,
    signal: Option<SignalId>,
    /// Woken by the inputs' signals, it raises ours.
    waker: Option<TaskId>,
    last: Option<Timestamp>,
    well_ordered: bool,
}

impl TimeSortedSched {
    fn next(&mut self, ctx: &mut Ctx) -> Option<Packet> {
        // Fill: as many packets as each input's share of the buffer holds.
        let mut signals_on = false;
        for i in 0..self.inputs.len() {
            if !ctx.signal_active(&self.inputs[i]) {
                continue;
            }
            signals_on = true;
            while self.count[i] < self.buffer {
                let Some(batch) = ctx.pull(i, self.buffer - self.count[i]) else {
                    break;
                };
                for p in batch {
                    self.count[i] += 1;
                    self.seq += 1;
                    self.held.push((p.timestamp_anno(), self.seq, i, p));
                }
            }
        }
        if let Some(s) = self.signal {
            if !self.held.is_empty() || signals_on {
                ctx.wake_signal(s);
            } else {
                ctx.sleep_signal(s);
            }
        }
        let Some(k) = (0..self.held.len()).min_by_key(|&k| (self.held[k].0, self.held[k].1)) else {
            if self.stop && !signals_on {
                ctx.please_stop();
            }
            return None;
        };
        let (ts, _, input, p) = self.held.swap_remove(k);
        self.count[input] -= 1;
        if ts != Timestamp::default() {
            if self.last.is_some_and(|l| ts < l) {
                self.well_ordered = false;
            }
            self.last = Some(ts);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<TimeSortedSched>] = &[Handler::data("well_ordered", |e| &e.well_ordered)];

rclick_core::element_class!(TimeSortedSched);

impl Element for TimeSortedSched {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.stop = args.read_or("STOP", false);
        let buffer: i64 = args.read_or("BUFFER", 1i64);
        args.complete()?;
        if buffer <= 0 {
            return Err("BUFFER must be at least 1".into());
        }
        self.buffer = buffer as usize;
        self.well_ordered = true;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let n = ctx.ninputs();
        let waker = ctx.new_task(false);
        self.waker = Some(waker);
        self.inputs = (0..n)
            .map(|i| ctx.upstream_empty_signal(i, Some(waker)))
            .collect();
        self.count = vec![0; n];
        self.held = Vec::with_capacity(n * self.buffer);
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
        false
    }

    fn pull(&mut self, _port: usize, _max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.next(ctx).map(Batch::single)
    }
}
