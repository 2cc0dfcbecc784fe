//! # RatedSource
//!
//! Generates packets at a configurable rate.
//!
//! ## Synopsis
//! `RatedSource([DATA, RATE, LIMIT, ACTIVE, *keywords*])`
//!
//! ## Ports and processing
//! No inputs, one agnostic output. Push: a task sends packets as the token
//! bucket allows. Pull: each pull returns the packets the bucket allows now.
//!
//! ## Description
//! Creates packets holding DATA and sends them at RATE packets per second,
//! using Click's token bucket arithmetic exactly (1 ms ticks, capacity 2
//! tokens below 200 packets/s, RATE/100 above), so under `--simtime` the
//! number of packets sent by a given time matches Click's: the bucket
//! starts full, so the first two packets leave at once. While waiting for
//! tokens the task sleeps on a timer set for the moment the next token is
//! due. Stops after LIMIT packets when LIMIT is non-negative; with STOP true
//! it then asks the driver to stop.
//!
//! In pull mode rclick also raises an empty-notifier signal while tokens
//! are available (Click's RatedSource has none), so a downstream Unqueue
//! sleeps between packets instead of polling.
//!
//! ## Keywords
//! - **DATA** (string): packet contents. Default is Click's 69-byte
//!   "Random bullshit in a packet, at least 64 bytes long. Well, now it is."
//! - **RATE** (unsigned): packets per second. Default 10. 0 sends one
//!   packet and then nothing, as in Click.
//! - **LIMIT** (integer): total packets to send; -1 means no limit. Default -1.
//! - **ACTIVE** (boolean): whether to send. Default true.
//! - **LENGTH** (integer): packet length; DATA is repeated or cut to fit.
//!   At most 262144 (rclick's longest packet, the largest pcap snapshot
//!   length; Click, which has no such limit, sends longer packets).
//!   Default -1 (DATA as is). **DATASIZE** is a deprecated
//!   synonym.
//! - **STOP** (boolean): stop the driver when LIMIT is reached. Default false.
//! - **BANDWIDTH** (bandwidth): if given, RATE is BANDWIDTH divided by the
//!   packet length.
//!
//! ## Handlers
//! - `count` (read): packets sent.
//! - `reset` (write): zeroes `count`, refills one token and restarts.
//! - `rate` (read/write): the rate (Click's rounding of the bucket rate).
//! - `data`, `limit`, `active`, `length` (read/write).
//! - `datasize` (read/write, deprecated): the same as `length`.
//!
//! ## Example
//! ```click
//! RatedSource(RATE 100, LIMIT 1000, STOP true) -> Counter -> Discard;
//! ```

use rclick_core::conf::{parse_bool, parse_i32, parse_u32, Args, Bandwidth};
use rclick_core::element::hflags;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SignalId, TaskId, TimerId,
};

use super::infinitesource::DEFAULT_DATA;
use super::tokenbucket::{jiffies_interval, TokenBucket};

/// Click's RatedSource headroom (16 + 20 + 24).
const HEADROOM: usize = 60;

pub struct RatedSource {
    data: Vec<u8>,
    datasize: i32,
    limit: Option<u32>,
    active: bool,
    stop: bool,
    count: u32,
    tb: TokenBucket,
    prototype: Option<Packet>,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    signal: Option<SignalId>,
    pull_mode: bool,
}

impl Default for RatedSource {
    fn default() -> Self {
        RatedSource {
            data: DEFAULT_DATA.to_vec(),
            datasize: -1,
            limit: None,
            active: true,
            stop: false,
            count: 0,
            tb: TokenBucket::default(),
            prototype: None,
            task: None,
            timer: None,
            signal: None,
            pull_mode: false,
        }
    }
}

/// Click's burst for a rate: 2 tokens below 200 packets/s, else rate/100.
fn burst_for(rate: u32) -> u32 {
    if rate < 200 {
        2
    } else {
        rate / 100
    }
}

/// The error of every RatedSource handler write that does not parse, as
/// in Click.
fn syntax<E>(_: E) -> String {
    "syntax error".to_string()
}

/// LENGTH: negative for DATA as is, else at most the longest packet (a
/// larger one was allocated, and could not be sent).
fn parse_datasize(s: &str) -> Result<i32, String> {
    let n = parse_i32(s)?;
    if n as i64 > rclick_core::packet::MAX_PACKET_LEN as i64 {
        return Err(format!(
            "{n} is longer than any packet (at most {} bytes)",
            rclick_core::packet::MAX_PACKET_LEN
        ));
    }
    Ok(n)
}

impl RatedSource {
    fn setup_packet(&mut self) {
        let body: Vec<u8> = if self.datasize < 0 {
            self.data.clone()
        } else {
            let n = self.datasize as usize;
            if self.data.is_empty() {
                vec![0; n]
            } else {
                self.data.iter().copied().cycle().take(n).collect()
            }
        };
        self.prototype = Some(Packet::with_room(HEADROOM, &body, 0));
    }

    fn limit_reached(&self) -> bool {
        self.limit.is_some_and(|l| self.count >= l)
    }

    fn make(&self, ctx: &Ctx) -> Option<Packet> {
        let mut p = self.prototype.as_ref()?.clone();
        p.set_timestamp_anno(ctx.now());
        Some(p)
    }

    /// Restarts sending after a handler changed state.
    fn restart(&self, ctx: &mut Ctx) {
        if !self.active {
            return;
        }
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
        if let Some(s) = self.signal {
            ctx.wake_signal(s);
        }
    }

    fn set_active(&mut self, v: &str, ctx: &mut Ctx) -> Result<(), String> {
        let active = parse_bool(v.trim()).map_err(syntax)?;
        self.active = active;
        if active {
            if let Some(t) = self.task {
                if !ctx.task_scheduled(t) {
                    self.tb.set(1);
                }
            }
            self.restart(ctx);
        } else if let Some(s) = self.signal {
            ctx.sleep_signal(s);
        }
        Ok(())
    }

    fn set_datasize(&mut self, v: &str, _ctx: &mut Ctx) -> Result<(), String> {
        parse_i32(v.trim()).map_err(syntax)?;
        self.datasize = parse_datasize(v.trim())?;
        self.setup_packet();
        Ok(())
    }
}

// Click's order and flags.
const HANDLERS: &[Handler<RatedSource>] = &[
    Handler::flagged(
        hflags::RAW | hflags::CALM,
        Handler::read_write(
            "data",
            |e, _| String::from_utf8_lossy(&e.data).into_owned(),
            |e, value, _| {
                // Click's data handler is raw: the value is taken as is.
                e.data = value.as_bytes().to_vec();
                e.prototype = Some(Packet::from_slice(&e.data));
                Ok(())
            },
        ),
    ),
    Handler::read_write(
        "rate",
        |e, _| e.tb.rate().to_string(),
        |e, v, _| {
            let rate = parse_u32(v.trim()).map_err(syntax)?;
            e.tb.assign_adjust(rate, burst_for(rate));
            Ok(())
        },
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "limit",
            |e, _| e.limit.map_or("-1".to_string(), |l| l.to_string()),
            |e, v, ctx| {
                let limit = parse_i32(v.trim()).map_err(syntax)?;
                e.limit = (limit >= 0).then_some(limit as u32);
                e.restart(ctx);
                Ok(())
            },
        ),
    ),
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_write("active", |e| &e.active, RatedSource::set_active),
    ),
    Handler::data("count", |e| &e.count),
    Handler::button("reset", |e, _, ctx| {
        e.count = 0;
        e.tb.set(1);
        e.restart(ctx);
        Ok(())
    }),
    Handler::data_write("length", |e| &e.datasize, RatedSource::set_datasize),
    Handler::flagged(
        hflags::DEPRECATED,
        Handler::data_write("datasize", |e| &e.datasize, RatedSource::set_datasize),
    ),
];

rclick_core::element_class!(RatedSource);

impl Element for RatedSource {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        if let Some(d) = args.read_p::<Vec<u8>>("DATA") {
            self.data = d;
        }
        let mut rate = args.read_p_or("RATE", 10u32);
        let limit = args.read_p_or("LIMIT", -1i32);
        self.active = args.read_p_or("ACTIVE", true);
        let mut datasize = args.read_or_with("LENGTH", parse_datasize, -1);
        if let Some(d) = args.read_with("DATASIZE", parse_datasize) {
            datasize = d;
        }
        self.stop = args.read_or("STOP", false);
        let bandwidth = args.read::<Bandwidth>("BANDWIDTH").map_or(0, |b| b.0);
        args.complete()?;
        self.datasize = datasize;
        let bandwidth = u32::try_from(bandwidth).unwrap_or(u32::MAX);
        if bandwidth > 0 {
            let len = if datasize < 0 {
                self.data.len() as u32
            } else {
                datasize as u32
            };
            rate = bandwidth.checked_div(len).unwrap_or(0);
        }
        let mut burst = burst_for(rate) as i64;
        if bandwidth > 0 && burst < 2 * i64::from(datasize) {
            burst = 2 * i64::from(datasize);
        }
        self.tb.assign(rate, burst as u32);
        self.limit = (limit >= 0).then_some(limit as u32);
        self.setup_packet();
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(self.active));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.count = 0;
        self.pull_mode = !ctx.output_is_push(0);
        if !self.pull_mode {
            self.task = Some(ctx.new_task(true));
        }
        self.tb.set(1);
        self.timer = Some(ctx.new_timer());
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }

    /// Hot swap: the count (so LIMIT holds across swaps) and the token
    /// bucket's level carry over; a swap must not grant a fresh burst.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<RatedSource>() else {
            return false;
        };
        self.count = o.count;
        self.tb.continue_from(&o.tb);
        true
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if !self.active {
            return false;
        }
        if self.limit_reached() {
            if self.stop {
                ctx.please_stop();
            }
            return false;
        }
        self.tb.refill(ctx.now());
        if self.tb.remove_if(1) {
            if let Some(p) = self.make(ctx) {
                ctx.emit(0, p);
            }
            self.count = self.count.wrapping_add(1);
            ctx.fast_reschedule();
            true
        } else {
            if let Some(t) = self.timer {
                ctx.schedule_timer_after(t, jiffies_interval(self.tb.time_until_contains(1)));
            }
            false
        }
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
        if let Some(s) = self.signal {
            if self.active && !self.limit_reached() {
                ctx.wake_signal(s);
            }
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let mut batch = Batch::new();
        let max = max.min(rclick_core::batch::BATCH_CAPACITY);
        let mut idle = !self.active;
        if self.active {
            self.tb.refill(ctx.now());
            while batch.len() < max {
                if self.limit_reached() {
                    if self.stop {
                        ctx.please_stop();
                    }
                    idle = true;
                    break;
                }
                if !self.tb.remove_if(1) {
                    if let Some(t) = self.timer {
                        let wait = jiffies_interval(self.tb.time_until_contains(1));
                        ctx.schedule_timer_after(t, wait);
                    }
                    idle = true;
                    break;
                }
                self.count = self.count.wrapping_add(1);
                match self.make(ctx) {
                    Some(p) => batch.push(p),
                    None => break,
                }
            }
        }
        if idle {
            if let Some(s) = self.signal {
                ctx.sleep_signal(s);
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}
