//! # RatedUnqueue
//!
//! Pulls packets at a configurable rate and pushes them out.
//!
//! ## Synopsis
//! `RatedUnqueue(RATE, [*keywords*])`
//!
//! ## Ports and processing
//! One pull input, one push output.
//!
//! ## Description
//! Pulls packets at RATE packets per second and pushes them out. Rate is
//! enforced by Click's token bucket, reproduced exactly: 1 ms ticks and a
//! capacity of BURST_DURATION (default 20 ms) worth of tokens, at least 1.
//! The bucket starts full. While the bucket is empty the task sleeps on a
//! timer set for when the next token is due; while every upstream queue is
//! empty it sleeps on their notifier signal.
//!
//! ## Keywords
//! - **RATE** (unsigned): packets per second. Mandatory.
//! - **BURST_DURATION** (time): bucket capacity as a duration at RATE.
//!   Default 20 ms.
//! - **BURST_SIZE** (unsigned): bucket capacity in packets. Cannot be given
//!   together with BURST_DURATION.
//!
//! ## Handlers
//! - `rate` (read/write): the rate; writing it reconfigures the element
//!   with that RATE (as in Click, from what `config` reads, so the burst
//!   keywords return to their defaults). As in Click, a task waiting for
//!   tokens keeps waiting the time the old rate said; but where the old
//!   rate was 0 (Click waits ~49 days, its bucket never filling) rclick
//!   runs it at once.
//! - `active` (read/write): whether to pull. Default true.
//! - `calls` (read): task statistics, as in Click.
//! - `config` (read/write): reads the current RATE; writing it
//!   reconfigures live (keywords not given return to their defaults;
//!   `active` and the statistics stay).
//!
//! ## Example
//! ```click
//! src -> Queue -> RatedUnqueue(100) -> Discard;
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, TaskId, TimerId};

use super::tokenbucket::{jiffies_interval, TokenBucket};

pub struct RatedUnqueue {
    tb: TokenBucket,
    /// BandwidthRatedUnqueue: RATE in bytes per second, tokens are bytes.
    bandwidth: bool,
    /// Capacity as configured: a duration in ms, or a size in packets.
    burst: Burst,
    active: bool,
    runs: u64,
    empty_runs: u64,
    pushes: u64,
    failed_pulls: u64,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    signal: NotifierSignal,
}

impl Default for RatedUnqueue {
    fn default() -> Self {
        RatedUnqueue {
            tb: TokenBucket::default(),
            bandwidth: false,
            burst: Burst::Duration(20),
            active: true,
            runs: 0,
            empty_runs: 0,
            pushes: 0,
            failed_pulls: 0,
            task: None,
            timer: None,
            signal: NotifierSignal::Busy,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Burst {
    Duration(u32),
    Size(u32),
}

/// Click's `tb_bandwidth_thresh`: the bytes a bandwidth-rated element's
/// bucket must hold before a packet may go, whatever its length.
pub const BANDWIDTH_THRESH: u32 = 131_072;

impl Burst {
    /// The bucket capacity for `rate`, as Click's
    /// `RatedUnqueue::configure_helper` computes it: BANDWIDTH_THRESH more
    /// for the bandwidth-rated classes, and at least 1.
    pub fn capacity_at(self, rate: u32, bandwidth: bool) -> u32 {
        let tokens = match self {
            Burst::Duration(ms) => capacity_for(rate, ms),
            Burst::Size(n) => n,
        };
        let tokens = if bandwidth {
            tokens.saturating_add(BANDWIDTH_THRESH)
        } else {
            tokens
        };
        tokens.max(1)
    }
}

/// Reads RATE, BURST_DURATION and BURST_SIZE (BURST_BYTES, with RATE a
/// bandwidth, when `bandwidth`), as Click's `configure_helper`: the rate
/// and the burst.
pub fn read_rate_args(
    conf: &str,
    bandwidth: bool,
) -> Result<(u32, Burst), rclick_core::element::Errors> {
    let mut args = Args::new(conf);
    let rate: u32 = if bandwidth {
        let b: rclick_core::conf::Bandwidth = args.read_mp("RATE");
        match u32::try_from(b.0) {
            Ok(r) => r,
            Err(_) => {
                args.error_for("RATE", "out of range");
                0
            }
        }
    } else {
        args.read_mp("RATE")
    };
    let dur: Option<Duration> = args.read("BURST_DURATION");
    let size: Option<u32> = args.read(if bandwidth {
        "BURST_BYTES"
    } else {
        "BURST_SIZE"
    });
    args.complete()?;
    let burst = match (dur, size) {
        (Some(_), Some(_)) => {
            return Err("cannot specify both BURST_DURATION and BURST_SIZE".into())
        }
        (_, Some(s)) => Burst::Size(s),
        (d, None) => {
            Burst::Duration(d.map_or(20, |d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX)))
        }
    };
    Ok((rate, burst))
}

/// A rate as Click's rated elements print it: a number, or a bandwidth.
pub fn unparse_rate(rate: u32, bandwidth: bool) -> String {
    if bandwidth {
        crate::qos::common::unparse_bandwidth(rate)
    } else {
        rate.to_string()
    }
}

/// Bucket capacity from a rate and a duration in milliseconds, as Click
/// computes it (saturating at `u32::MAX`).
fn capacity_for(rate: u32, dur_msec: u32) -> u32 {
    let v = u64::from(rate) * u64::from(dur_msec) / 1000;
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl RatedUnqueue {
    /// A BandwidthRatedUnqueue: RATE in bytes per second.
    pub fn bandwidth() -> Self {
        RatedUnqueue {
            bandwidth: true,
            ..RatedUnqueue::default()
        }
    }

    fn rate_string(&self) -> String {
        unparse_rate(self.tb.rate(), self.bandwidth)
    }

    fn calls(&self, _ctx: &Ctx) -> String {
        format!(
            "{} calls to run_task()\n{} empty runs\n{} pushes\n{} failed pulls\n",
            self.runs, self.empty_runs, self.pushes, self.failed_pulls
        )
    }

    /// After a handler write: an active RatedUnqueue runs again.
    fn wake(&self, ctx: &mut Ctx) -> Result<(), String> {
        if let (true, Some(t)) = (self.active, self.task) {
            ctx.schedule_task(t);
        }
        Ok(())
    }
}

const HANDLERS: &[Handler<RatedUnqueue>] = &[
    Handler::read("calls", RatedUnqueue::calls),
    Handler::read_write(
        "rate",
        |e, _| e.rate_string(),
        |e, v, ctx| {
            // As Click's keyword handler: the element is reconfigured from
            // what `config` reads (the rate alone), so the burst keywords
            // return to their defaults.
            let base = e.rate_string();
            let was_idle = e.tb.rate() == 0;
            crate::qos::common::reconfigure_from(e, &base, "RATE", Some(0), v, ctx)?;
            // Click does not wake the task: one sleeping on its timer
            // wakes when the old rate said. At rate 0 that timer is ~49
            // days away (Click's never-filling bucket), so the new rate
            // would never be seen: rclick wakes the task then.
            if was_idle {
                e.wake(ctx)?;
            }
            Ok(())
        },
    ),
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_write(
            "active",
            |e| &e.active,
            |e, v, ctx| {
                e.active = parse_bool(v.trim())?;
                e.wake(ctx)
            },
        ),
    ),
    // Click reads the current rate as the configuration.
    Handler::read("config", |e, _| e.rate_string()),
];

rclick_core::element_class!(RatedUnqueue);

impl Element for RatedUnqueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/h"
    }

    // Writing `config` re-reads RATE and the burst keywords (those not
    // given return to their defaults); `active` and the statistics stay.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let (rate, burst) = read_rate_args(conf, self.bandwidth)?;
        self.burst = burst;
        self.tb
            .assign(rate, self.burst.capacity_at(rate, self.bandwidth));
        Ok(())
    }

    /// Hot swap: the token bucket's level carries over, so a swap cannot
    /// release a fresh burst.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<RatedUnqueue>() else {
            return false;
        };
        self.tb.continue_from(&o.tb);
        true
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(true);
        self.signal = ctx.upstream_empty_signal(0, Some(t));
        self.task = Some(t);
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        self.runs += 1;
        if !self.active {
            return false;
        }
        self.tb.refill(ctx.now());
        let need = if self.bandwidth { BANDWIDTH_THRESH } else { 1 };
        if !self.tb.contains(need) {
            if let Some(t) = self.timer {
                ctx.schedule_timer_after(t, jiffies_interval(self.tb.time_until_contains(need)));
            }
            self.empty_runs += 1;
            return false;
        }
        let worked = match ctx.pull(0, 1) {
            Some(b) => {
                let tokens = if self.bandwidth {
                    b.packets().iter().map(|p| p.len() as u32).sum()
                } else {
                    b.len() as u32
                };
                self.tb.remove(tokens);
                self.pushes += 1;
                ctx.emit_batch(0, b);
                true
            }
            None => {
                self.failed_pulls += 1;
                if !ctx.signal_active(&self.signal) {
                    return false;
                }
                false
            }
        };
        ctx.fast_reschedule();
        if !worked {
            self.empty_runs += 1;
        }
        worked
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}
