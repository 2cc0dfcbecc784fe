//! # DelayShaper
//!
//! Delays packets pulled through it until a fixed delay after their
//! timestamps.
//!
//! ## Synopsis
//! `DelayShaper(DELAY)`
//!
//! ## Ports and processing
//! One pull input, one pull output.
//!
//! ## Description
//! A pull takes a packet from the input (stamping it with the current time
//! if its timestamp annotation is unset, second 0) and holds it until DELAY
//! after its timestamp; pulls before then return nothing, and the first
//! pull at or after then returns it with its timestamp set to the current
//! time. One packet is held at a time.
//!
//! DelayShaper is an empty notifier: its signal is down while it holds a
//! packet that is not due (a timer raises it when the packet is due, 500 us
//! early in real time as in Click) and while nothing upstream has packets,
//! so the puller downstream sleeps meanwhile. Click's notifier also listens
//! to the queues upstream; rclick does it through a task of the
//! DelayShaper that raises the signal when an upstream queue wakes.
//!
//! ## Handlers
//! - `delay` (read/write): the delay.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> Queue -> DelayShaper(0.5s) -> Unqueue -> Discard;
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_timestamp, Args};
use rclick_core::element::hflags;
use rclick_core::time::Timestamp;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, SignalId, TaskId,
    TimerId,
};

use super::delayunqueue::{stamp_release, timer_adjustment};
use crate::standard::timedsource::unparse_interval;

pub struct DelayShaper {
    delay: Timestamp,
    held: Option<Packet>,
    timer: Option<TimerId>,
    /// This element's empty-notifier signal.
    signal: Option<SignalId>,
    /// The queues' signals upstream.
    upstream: NotifierSignal,
    /// Woken by a queue upstream: raises `signal`.
    task: Option<TaskId>,
}

impl Default for DelayShaper {
    fn default() -> Self {
        DelayShaper {
            delay: Timestamp(0),
            held: None,
            timer: None,
            signal: None,
            upstream: NotifierSignal::Busy,
            task: None,
        }
    }
}

const HANDLERS: &[Handler<DelayShaper>] = &[Handler::flagged(
    hflags::CALM,
    Handler::read_write(
        "delay",
        |e, _| unparse_interval(e.delay),
        |e, v, _| {
            let d = parse_timestamp(v.trim()).map_err(|_| "delay must be a timestamp")?;
            e.delay = Timestamp::from_duration(d);
            Ok(())
        },
    ),
)];

rclick_core::element_class!(DelayShaper);

impl Element for DelayShaper {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let d: Duration = args.read_mp_with("DELAY", parse_timestamp);
        args.complete()?;
        self.delay = Timestamp::from_duration(d);
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(true));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(false);
        self.upstream = ctx.upstream_empty_signal(0, Some(t));
        self.task = Some(t);
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    fn pull(&mut self, _port: usize, _max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if self.held.is_none() {
            if let Some(mut p) = ctx.pull(0, 1).and_then(|mut b| b.pop()) {
                stamp_release(&mut p, self.delay, ctx);
                self.held = Some(p);
            }
        }
        let Some(release) = self.held.as_ref().map(|p| p.timestamp_anno()) else {
            if !ctx.signal_active(&self.upstream) {
                if let Some(s) = self.signal {
                    ctx.sleep_signal(s);
                }
            }
            return None;
        };
        let now = ctx.now();
        if release <= now {
            let mut p = self.held.take()?;
            p.set_timestamp_anno(now);
            return Some(Batch::single(p));
        }
        let expiry = release - timer_adjustment(ctx);
        if let Some(s) = self.signal {
            if expiry <= now {
                ctx.wake_signal(s);
            } else {
                if let Some(t) = self.timer {
                    ctx.schedule_timer_at(t, expiry);
                }
                ctx.sleep_signal(s);
            }
        }
        None
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        // A queue upstream woke: pullers may find a packet (unless one is
        // held back, in which case the timer raises the signal).
        if let (Some(s), None) = (self.signal, &self.held) {
            ctx.wake_signal(s);
        }
        false
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
    }
}
