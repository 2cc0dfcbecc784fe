//! # DelayUnqueue
//!
//! Pulls packets and pushes each out a fixed delay after its timestamp.
//!
//! ## Synopsis
//! `DelayUnqueue(DELAY)`
//!
//! ## Ports and processing
//! One pull input, one push output.
//!
//! ## Description
//! Pulls packets from its input and holds each until DELAY after its
//! timestamp annotation (a packet without one, second 0, is stamped with
//! the current time when pulled), then pushes it out. One packet is held at
//! a time, so a packet waits for those before it: the input is served in
//! order. While a packet waits, the task sleeps on a timer; while the
//! queues upstream are empty, it sleeps on their notifier signal. As in
//! Click, the timer is set 500 us early in real time (none under
//! `--simtime`) and the last stretch is polled.
//!
//! ## Handlers
//! - `delay` (read/write): the delay.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> Queue -> DelayUnqueue(0.5s) -> Discard;
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_timestamp, Args};
use rclick_core::time::Timestamp;
use rclick_core::{
    ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, TaskId, TimerId,
};

use crate::standard::timedsource::unparse_interval;

/// Click's `Timer::adjustment()`: timers fire this early in real time.
pub fn timer_adjustment(ctx: &Ctx) -> Timestamp {
    if ctx.is_simulated() {
        Timestamp(0)
    } else {
        Timestamp(500_000)
    }
}

/// Stamps `p` with its release time: its timestamp (now if it has none)
/// plus `delay`.
pub fn stamp_release(p: &mut Packet, delay: Timestamp, ctx: &Ctx) {
    let mut ts = p.timestamp_anno();
    if ts.sec() == 0 {
        ts = ctx.now();
    }
    p.set_timestamp_anno(Timestamp(ts.nanos().saturating_add(delay.nanos())));
}

pub struct DelayUnqueue {
    delay: Timestamp,
    held: Option<Packet>,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    signal: NotifierSignal,
}

impl Default for DelayUnqueue {
    fn default() -> Self {
        DelayUnqueue {
            delay: Timestamp(0),
            held: None,
            task: None,
            timer: None,
            signal: NotifierSignal::Busy,
        }
    }
}

const HANDLERS: &[Handler<DelayUnqueue>] = &[Handler::read_write(
    "delay",
    |e, _| unparse_interval(e.delay),
    |e, v, _| {
        let d = parse_timestamp(v.trim()).map_err(|_| "delay must be a timestamp")?;
        e.delay = Timestamp::from_duration(d);
        Ok(())
    },
)];

rclick_core::element_class!(DelayUnqueue);

impl Element for DelayUnqueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let d: Duration = args.read_mp_with("DELAY", parse_timestamp);
        args.complete()?;
        self.delay = Timestamp::from_duration(d);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(true);
        self.signal = ctx.upstream_empty_signal(0, Some(t));
        self.task = Some(t);
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        let mut worked = false;
        loop {
            if self.held.is_none() {
                if let Some(mut p) = ctx.pull(0, 1).and_then(|mut b| b.pop()) {
                    stamp_release(&mut p, self.delay, ctx);
                    self.held = Some(p);
                }
            }
            let Some(release) = self.held.as_ref().map(|p| p.timestamp_anno()) else {
                if !ctx.signal_active(&self.signal) {
                    return false;
                }
                break;
            };
            let now = ctx.now();
            if release <= now {
                if let Some(p) = self.held.take() {
                    ctx.emit(0, p);
                }
                worked = true;
                continue;
            }
            let expiry = release - timer_adjustment(ctx);
            if expiry > now {
                if let Some(t) = self.timer {
                    ctx.schedule_timer_at(t, expiry);
                }
                return false;
            }
            break;
        }
        ctx.fast_reschedule();
        worked
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}
