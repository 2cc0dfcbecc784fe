//! # TimedSink
//!
//! Pulls a packet periodically and drops it.
//!
//! ## Synopsis
//! `TimedSink([INTERVAL])`
//!
//! ## Ports and processing
//! One pull input, no outputs.
//!
//! ## Description
//! Every INTERVAL, driven by a timer, pulls one packet from its input and
//! drops it. The first pull happens INTERVAL after the router starts; each
//! later one INTERVAL after the previous expiry. An INTERVAL of 0 pulls as
//! often as the timers run.
//!
//! On hot swap, a TimedSink of the same name keeps its timer's phase: the
//! next pull comes one (new) INTERVAL after the predecessor's last one.
//!
//! ## Keywords
//! - **INTERVAL** (time): the period. Default 0.5 s.
//!
//! ## Handlers
//! - `interval` (read/write): the period (written values must not be
//!   negative).
//!
//! ## Example
//! ```click
//! TimedSource(0.2) -> Queue(20) -> TimedSink(0.1);
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_seconds, Args};
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, TimerId, Timestamp};

use super::timedsource::unparse_interval;

pub struct TimedSink {
    interval: Timestamp,
    timer: Option<TimerId>,
    /// When the timer is due (the next expiry counts from it).
    expiry: Option<Timestamp>,
}

impl Default for TimedSink {
    fn default() -> Self {
        TimedSink {
            interval: Timestamp(500_000_000),
            timer: None,
            expiry: None,
        }
    }
}

const HANDLERS: &[Handler<TimedSink>] = &[Handler::flagged(
    hflags::CALM,
    Handler::read_write(
        "interval",
        |e, _| unparse_interval(e.interval),
        |e, v, _| {
            let v = v.trim();
            if v.starts_with('-') {
                return Err("bad interval".into());
            }
            let d = parse_seconds(v).map_err(|_| "bad interval".to_string())?;
            e.interval = Timestamp::from_duration(d);
            Ok(())
        },
    ),
)];

rclick_core::element_class!(TimedSink);

impl Element for TimedSink {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/0"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let interval: Option<Duration> = args.read_p("INTERVAL");
        args.complete()?;
        if let Some(d) = interval {
            self.interval = Timestamp::from_duration(d);
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        self.timer = Some(t);
        let when = ctx.now() + self.interval;
        ctx.schedule_timer_at(t, when);
        self.expiry = Some(when);
        Ok(())
    }

    /// Hot swap: the timer's phase carries over: the next pull comes one
    /// (new) INTERVAL after the predecessor's last one, or at once if that
    /// time has passed. Click starts afresh.
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<TimedSink>() else {
            return false;
        };
        let (Some(t), Some(due)) = (self.timer, o.expiry) else {
            return false;
        };
        let when = Timestamp(due.nanos() - o.interval.nanos() + self.interval.nanos());
        let when = when.max(ctx.now());
        ctx.schedule_timer_at(t, when);
        self.expiry = Some(when);
        true
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        // The pulled packet is dropped with the batch.
        drop(ctx.pull(0, 1));
        let base = self.expiry.unwrap_or_else(|| ctx.now());
        let when = base + self.interval;
        ctx.schedule_timer_at(timer, when);
        self.expiry = Some(when);
    }
}
