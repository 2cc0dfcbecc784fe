//! # Shaper
//!
//! Shapes traffic to a maximum packet rate.
//!
//! ## Synopsis
//! `Shaper(RATE)`
//!
//! ## Ports and processing
//! One pull input; pull output 0, and an optional pull output 1.
//!
//! ## Description
//! A pull on output 0 pulls a packet from the input only while the packets
//! passed so far are behind RATE packets per second; otherwise it returns
//! nothing. The rate is Click's `GapRate`: packets are spaced evenly within
//! each second, and a Shaper that fell behind (nobody pulled) may catch up
//! with a burst of at most a second's worth. A pull asking for several
//! packets gets only as many as the rate allows at that moment, pulled one
//! by one, so the output is never a batch-sized burst.
//!
//! A pull on output 1 succeeds only while output 0 would not: output 1
//! carries the packets the shaper holds back from output 0, for a
//! scheduler that serves both (`Shaper => RoundRobinSched`).
//!
//! Unless output 1 is in use, a Shaper is an empty notifier: its signal is
//! down while the rate holds packets back (a timer raises it when the
//! next may go) and while the queues upstream are empty, so a polling
//! puller (Unqueue) sleeps instead of spinning, and under `--simtime` the
//! clock can move on (Click's Shaper has no notifier; its puller spins).
//! A Shaper with output 1 in use has none: output 1 has packets exactly
//! when output 0 has not.
//!
//! ## Handlers
//! - `rate` (read/write): the rate; writing it reconfigures RATE.
//! - `config` (read/write): reads the current rate.
//! - `reset` (write): forgets the rate's history, so the next pull passes.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> Queue -> Shaper(1000) -> TimedSink(1ms);
//! ```

use rclick_core::conf::{parse_bandwidth, Args, Bandwidth};
use rclick_core::time::Timestamp;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, SignalId, TaskId, TimerId,
};

use super::common::{reconfigure_from, GapRate};
use crate::standard::ratedunqueue::unparse_rate;

/// Shaper, or BandwidthShaper when `bandwidth` (bytes per second).
#[derive(Default)]
pub struct Shaper {
    rate: GapRate,
    bandwidth: bool,
    /// This element's empty-notifier signal (none while output 1 of a
    /// packet Shaper is in use).
    signal: Option<SignalId>,
    /// The queues' signals upstream.
    upstream: NotifierSignal,
    /// Woken by a queue upstream: raises `signal`.
    task: Option<TaskId>,
    /// Raises `signal` when the rate lets the next packet go.
    timer: Option<TimerId>,
}

impl Shaper {
    /// A BandwidthShaper.
    pub fn bandwidth() -> Self {
        Shaper {
            rate: GapRate::default(),
            bandwidth: true,
            ..Shaper::default()
        }
    }

    /// Pullers may try again (the rate or its history changed).
    fn wake(&self, ctx: &Ctx) {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
    }

    /// After a pull that found nothing: lowers the signal while the rate
    /// holds packets back (until the next may go) or the queues upstream
    /// are empty (until one wakes).
    fn idle(&mut self, refused: bool, now: Timestamp, ctx: &mut Ctx) {
        let Some(s) = self.signal else { return };
        if refused {
            // The rate changes its mind at the time `expiry` gives, or at
            // the next second, when GapRate settles its count.
            let next_sec = Timestamp::from_sec_nsec(now.sec() + 1, 0);
            let at = self.rate.expiry().map_or(next_sec, |t| t.min(next_sec));
            if at <= now {
                return;
            }
            if let Some(t) = self.timer {
                ctx.schedule_timer_at(t, at);
            }
            ctx.sleep_signal(s);
        } else if !ctx.signal_active(&self.upstream) {
            ctx.sleep_signal(s);
        }
    }

    fn read_rate(&self, _ctx: &Ctx) -> String {
        unparse_rate(self.rate.rate(), self.bandwidth)
    }
}

// Click's order.
const HANDLERS: &[Handler<Shaper>] = &[
    Handler::read_write("rate", Shaper::read_rate, |e, v, ctx| {
        let base = unparse_rate(e.rate.rate(), e.bandwidth);
        reconfigure_from(e, &base, "RATE", Some(0), v, ctx)?;
        e.wake(ctx);
        Ok(())
    }),
    Handler::read("config", Shaper::read_rate),
    Handler::write("reset", |e, _, ctx| {
        e.rate.reset();
        e.wake(ctx);
        Ok(())
    }),
];

rclick_core::element_class!(Shaper);

impl Element for Shaper {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let rate: u64 = if self.bandwidth {
            let b: Bandwidth = args.read_mp_with("RATE", |s| parse_bandwidth(s).map(Bandwidth));
            b.0
        } else {
            let r: u32 = args.read_mp("RATE");
            u64::from(r)
        };
        args.complete()?;
        let rate = u32::try_from(rate).map_err(|_| "RATE: out of range".to_string())?;
        if rate > GapRate::MAX_RATE {
            // Click's words, a note rather than a warning.
            ctx.note(format_args!(
                "rate too large; lowered to {}",
                GapRate::MAX_RATE
            ));
        }
        self.rate.set_rate(rate, ctx.now());
        // Output 1 of a packet Shaper has packets exactly when output 0
        // has not: one signal cannot speak for both.
        if self.signal.is_none() && (self.bandwidth || ctx.noutputs() < 2) {
            self.signal = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if self.signal.is_some() {
            let t = ctx.new_task(false);
            self.upstream = ctx.upstream_empty_signal(0, Some(t));
            self.task = Some(t);
            self.timer = Some(ctx.new_timer());
        }
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        self.wake(ctx);
        false
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        self.wake(ctx);
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let now = ctx.now();
        // Click's BandwidthShaper shapes both outputs alike.
        if port == 1 && !self.bandwidth {
            return if self.rate.need_update(now) {
                None
            } else {
                ctx.pull(0, max)
            };
        }
        // One packet at a time, while the rate allows: never a burst of
        // the batch size.
        let mut out = Batch::new();
        let mut refused = false;
        while out.len() < max.min(rclick_core::batch::BATCH_CAPACITY) {
            if !self.rate.need_update(now) {
                refused = true;
                break;
            }
            let Some(b) = ctx.pull(0, 1) else { break };
            for p in b {
                let n = if self.bandwidth { p.len() as i32 } else { 1 };
                self.rate.update_with(n);
                out.push(p);
            }
        }
        if out.is_empty() {
            self.idle(refused, now, ctx);
            return None;
        }
        Some(out)
    }
}
