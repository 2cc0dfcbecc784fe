//! # TimedSource
//!
//! Sends a packet periodically.
//!
//! ## Synopsis
//! `TimedSource([INTERVAL, DATA, *keywords*])`
//!
//! ## Ports and processing
//! No inputs, one push output.
//!
//! ## Description
//! Creates packets holding DATA and pushes one out about once every
//! INTERVAL, driven by a timer: the first packet leaves INTERVAL after the
//! router starts, and each later one INTERVAL after the previous expiry (so
//! the period does not drift). Stops after LIMIT packets when LIMIT is
//! non-negative; with STOP true it then asks the driver to stop.
//!
//! On hot swap, a TimedSource of the same name carries over its count and
//! its timer's phase: the next packet leaves one (new) INTERVAL after the
//! predecessor's last one, not a full INTERVAL after the swap.
//!
//! ## Keywords
//! - **INTERVAL** (time): the period. Default 0.5 s.
//! - **DATA** (string): packet contents. Default is Click's 69-byte
//!   "Random bullshit in a packet, at least 64 bytes long. Well, now it is."
//! - **LIMIT** (integer): total packets to send; negative means no limit.
//!   Default -1.
//! - **HEADROOM** (unsigned): headroom of generated packets. Default 64.
//! - **STOP** (boolean): stop the driver once LIMIT packets are sent.
//!   Default false.
//! - **ACTIVE** (boolean): whether to send. Default true.
//!
//! ## Handlers
//! - `count` (read): packets sent.
//! - `reset` (write): zeroes `count` and restarts.
//! - `data`, `interval`, `limit`, `active`, `headroom` (read/write).
//!
//! ## Example
//! ```click
//! TimedSource(0.1, LIMIT 10, STOP true) -> Print(tick) -> Discard;
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_bool, parse_seconds, parse_usize, Args};
use rclick_core::element::hflags;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp};

use super::infinitesource::DEFAULT_DATA;

pub struct TimedSource {
    data: Vec<u8>,
    interval: Timestamp,
    limit: i32,
    count: u32,
    active: bool,
    stop: bool,
    headroom: usize,
    prototype: Option<Packet>,
    timer: Option<TimerId>,
    /// When the timer is due (Click's `reschedule_after` counts from it).
    expiry: Option<Timestamp>,
}

impl Default for TimedSource {
    fn default() -> Self {
        TimedSource {
            data: DEFAULT_DATA.to_vec(),
            interval: Timestamp(500_000_000),
            limit: -1,
            count: 0,
            active: true,
            stop: false,
            headroom: DEFAULT_HEADROOM,
            prototype: None,
            timer: None,
            expiry: None,
        }
    }
}

/// Click's `Timestamp::unparse_interval`: `500ms`, `20us`, `1.500000s`.
pub fn unparse_interval(t: Timestamp) -> String {
    let ns = t.nanos();
    if (0..1_000_000_000).contains(&ns) {
        if ns % 1_000_000 == 0 {
            format!("{}ms", ns / 1_000_000)
        } else if ns % 1000 == 0 {
            format!("{}us", ns / 1000)
        } else {
            format!("{ns}ns")
        }
    } else if ns % 1000 == 0 {
        format!("{t}s")
    } else {
        format!("{t:#}s")
    }
}

impl TimedSource {
    fn rebuild(&mut self) {
        self.prototype = Some(Packet::with_room(self.headroom, &self.data, 0));
    }

    fn schedule(&mut self, ctx: &Ctx, when: Timestamp) {
        if let Some(t) = self.timer {
            ctx.schedule_timer_at(t, when);
            self.expiry = Some(when);
        }
    }

    fn schedule_now_if_idle(&mut self, ctx: &Ctx) {
        if self.active && self.timer.is_some_and(|t| ctx.timer_expiry(t).is_none()) {
            self.schedule(ctx, ctx.now());
        }
    }
}

// Click's order and flags.
const HANDLERS: &[Handler<TimedSource>] = &[
    Handler::flagged(
        hflags::RAW | hflags::CALM,
        Handler::read_write(
            "data",
            |e, _| String::from_utf8_lossy(&e.data).into_owned(),
            |e, value, _| {
                e.data = value.as_bytes().to_vec();
                e.rebuild();
                Ok(())
            },
        ),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::data_rw("limit", |e| &e.limit, |e| &mut e.limit),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "interval",
            |e, _| unparse_interval(e.interval),
            |e, v, _| {
                let d = parse_seconds(v.trim()).map_err(|_| "bad interval".to_string())?;
                if d.is_zero() {
                    return Err("bad interval".into());
                }
                e.interval = Timestamp::from_duration(d);
                Ok(())
            },
        ),
    ),
    Handler::flagged(
        hflags::CALM | hflags::CHECKBOX,
        Handler::data_write(
            "active",
            |e| &e.active,
            |e, v, ctx| {
                e.active = parse_bool(v.trim()).map_err(|_| "bad active".to_string())?;
                e.schedule_now_if_idle(ctx);
                Ok(())
            },
        ),
    ),
    Handler::data("count", |e| &e.count),
    Handler::flagged(
        hflags::CALM,
        Handler::data_write(
            "headroom",
            |e| &e.headroom,
            |e, v, _| {
                e.headroom = parse_usize(v.trim()).map_err(|_| "bad headroom".to_string())?;
                e.rebuild();
                Ok(())
            },
        ),
    ),
    Handler::button("reset", |e, _, ctx| {
        e.count = 0;
        e.schedule_now_if_idle(ctx);
        Ok(())
    }),
];

rclick_core::element_class!(TimedSource);

impl Element for TimedSource {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let interval: Option<Duration> = args.read_p("INTERVAL");
        if let Some(d) = args.read_p::<Vec<u8>>("DATA") {
            self.data = d;
        }
        self.limit = args.read_or("LIMIT", -1i32);
        self.active = args.read_or("ACTIVE", true);
        self.stop = args.read_or("STOP", false);
        self.headroom = args.read_or("HEADROOM", DEFAULT_HEADROOM);
        args.complete()?;
        if let Some(d) = interval {
            self.interval = Timestamp::from_duration(d);
        }
        self.rebuild();
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        self.timer = Some(t);
        if self.active {
            let when = ctx.now() + self.interval;
            ctx.schedule_timer_at(t, when);
            self.expiry = Some(when);
        }
        Ok(())
    }

    /// Hot swap: the count carries over (LIMIT counts packets sent by
    /// both), and so does the timer's phase: the next packet leaves one new
    /// INTERVAL after the predecessor's last one (with the same INTERVAL,
    /// exactly when the predecessor's would have), or at once if that time
    /// has passed. Click starts afresh (a full INTERVAL after the swap).
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<TimedSource>() else {
            return false;
        };
        self.count = o.count;
        if let (Some(t), Some(due), true, true) = (self.timer, o.expiry, o.active, self.active) {
            let when = Timestamp(due.nanos() - o.interval.nanos() + self.interval.nanos());
            let when = when.max(ctx.now());
            ctx.schedule_timer_at(t, when);
            self.expiry = Some(when);
        }
        true
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if !self.active {
            return;
        }
        if self.limit < 0 || (self.count as i64) < i64::from(self.limit) {
            if let Some(proto) = &self.prototype {
                let mut p = proto.clone();
                p.set_timestamp_anno(ctx.now());
                ctx.emit(0, p);
            }
            self.count = self.count.wrapping_add(1);
            let base = self.expiry.unwrap_or_else(|| ctx.now());
            self.schedule(ctx, base + self.interval);
        } else if self.stop {
            ctx.please_stop();
        }
    }
}
