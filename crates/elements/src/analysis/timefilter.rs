//! # TimeFilter
//!
//! Filters packets by timestamp.
//!
//! ## Synopsis
//! `TimeFilter([START, END, *keywords* START_AFTER, START_DELAY, END_AFTER, END_DELAY, INTERVAL, STOP, END_CALL])`
//!
//! ## Ports and processing
//! One push input; one or two push outputs.
//!
//! ## Description
//! Passes packets whose timestamp annotation lies in a range, at least
//! the start and before the end, to output 0; the others go to output 1 if
//! it is connected, else are dropped. The range is absolute (START, END),
//! relative to the first packet's timestamp (START_AFTER, END_AFTER), to
//! the router's initialization time (START_DELAY, END_DELAY), or an
//! INTERVAL after the start. With no end, the range is open. As in Click,
//! a zero time counts as not given: `TimeFilter(0, 1)` starts at the first
//! packet's time.
//!
//! With STOP true, the first packet at or past the end stops the driver.
//! With END_CALL, the first packet at or past the end calls that write
//! handler, `$t` in its value replaced by the packet's timestamp; the
//! handler may move the end (the `extend_interval`, `end` and `interval`
//! handlers), and the packet is then judged against the new end, calling
//! END_CALL again while each call moves the end further but not past the
//! packet. Packets wait, in order, while a call is under way (the call
//! runs once TimeFilter has returned to the driver, so that it may write
//! back to TimeFilter).
//!
//! ## Keywords
//! - **START**, **END** (timestamp): absolute start and end.
//! - **START_AFTER**, **END_AFTER** (time): relative to the first packet.
//! - **START_DELAY**, **END_DELAY** (time): relative to initialization.
//! - **INTERVAL** (time): the end is this long after the start.
//! - **STOP** (boolean): stop the driver at the end. Default false.
//! - **END_CALL** (handler call `HANDLER [VALUE]`): called at the end.
//!   STOP and END_CALL are mutually exclusive.
//!
//! ## Handlers
//! - `start`, `end` (read/write): the range's bounds.
//! - `interval` (read/write): the end minus the start; writing it sets the
//!   end to the start plus the value.
//! - `extend_interval` (write): moves the end later by the value.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap, STOP true) -> TimeFilter(START_AFTER 10, INTERVAL 60) -> ToDump(minute.pcap);
//! ```

use crate::standard::handlercall;
use std::collections::VecDeque;

use rclick_core::conf::{parse_seconds, parse_timestamp, Args};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TaskId, Timestamp};

#[derive(Default)]
pub struct TimeFilter {
    first: Timestamp,
    last: Timestamp,
    ready: bool,
    first_relative: bool,
    first_init_relative: bool,
    last_relative: bool,
    last_init_relative: bool,
    last_interval: bool,
    stop: bool,
    end_call: Option<(String, String)>,
    /// END_CALL (or STOP) may still be made for the current end.
    call_ready: bool,
    /// Packets waiting for an END_CALL under way; the end before the call.
    held: VecDeque<Packet>,
    calling_from: Option<Timestamp>,
    task: Option<TaskId>,
}

fn time(s: &str) -> Result<Timestamp, String> {
    parse_timestamp(s.trim()).map(Timestamp::from_duration)
}

fn interval(s: &str) -> Result<Timestamp, String> {
    parse_seconds(s.trim()).map(Timestamp::from_duration)
}

impl TimeFilter {
    fn first_packet(&mut self, ts: Timestamp) {
        if self.first_relative {
            self.first = self.first + ts;
        }
        if self.last_relative {
            self.last = self.last + ts;
        } else if self.last_interval {
            self.last = self.last + self.first;
        }
        self.ready = true;
    }

    fn reject(p: Packet, ctx: &mut Ctx) {
        if ctx.noutputs() > 1 {
            ctx.emit(1, p);
        }
    }

    fn call(&mut self, ts: Timestamp, ctx: &mut Ctx) {
        self.call_ready = false;
        if let Some((h, v)) = &self.end_call {
            let t = ts.to_string();
            let v = v.replace("${t}", &t).replace("$t", &t);
            ctx.call_write_later(h, &v);
            self.calling_from = Some(self.last);
            if let Some(task) = self.task {
                ctx.schedule_task(task);
            }
        } else if self.stop {
            ctx.please_stop();
        }
    }

    /// Judges one packet; false if it must wait for an END_CALL.
    fn process(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let ts = p.timestamp_anno();
        if !self.ready {
            self.first_packet(ts);
        }
        if ts < self.first {
            Self::reject(p, ctx);
            return None;
        }
        if ts >= self.last && self.call_ready && (self.end_call.is_some() || self.stop) {
            self.call(ts, ctx);
            if self.calling_from.is_some() {
                return Some(p);
            }
        }
        if ts < self.last {
            ctx.emit(0, p);
        } else {
            Self::reject(p, ctx);
        }
        None
    }

    /// After an END_CALL: judges the waiting packets in order.
    fn resume(&mut self, ctx: &mut Ctx) {
        if let Some(prev) = self.calling_from.take() {
            let Some(p) = self.held.pop_front() else {
                return;
            };
            let ts = p.timestamp_anno();
            if ts >= self.last && self.call_ready && self.last > prev {
                // The call moved the end, not past this packet: again.
                self.call(ts, ctx);
                self.held.push_front(p);
                return;
            }
            if ts < self.last {
                ctx.emit(0, p);
            } else {
                Self::reject(p, ctx);
            }
        }
        while let Some(p) = self.held.pop_front() {
            if let Some(wait) = self.process(p, ctx) {
                self.held.push_front(wait);
                return;
            }
        }
    }
}

const HANDLERS: &[Handler<TimeFilter>] = &[
    Handler::read_write(
        "start",
        |e, _| e.first.to_string(),
        |e, v, _| {
            let t = time(v)?;
            if !e.ready {
                e.first_packet(t);
            }
            e.first = t;
            Ok(())
        },
    ),
    Handler::read_write(
        "end",
        |e, _| e.last.to_string(),
        |e, v, _| {
            e.last = time(v)?;
            e.last_relative = false;
            e.last_init_relative = false;
            e.last_interval = false;
            e.call_ready = true;
            Ok(())
        },
    ),
    Handler::read_write(
        "interval",
        |e, _| (e.last - e.first).to_string(),
        |e, v, _| {
            e.last = e.first + interval(v)?;
            e.call_ready = true;
            Ok(())
        },
    ),
    Handler::write("extend_interval", |e, v, _| {
        e.last = e.last + interval(v)?;
        e.call_ready = true;
        Ok(())
    }),
];

rclick_core::element_class!(TimeFilter);

impl Element for TimeFilter {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let start = args.read_p_with("START", time);
        let end = args.read_p_with("END", time);
        let start_delay = args.read_with("START_DELAY", interval);
        let end_delay = args.read_with("END_DELAY", interval);
        let start_after = args.read_with("START_AFTER", interval);
        let end_after = args.read_with("END_AFTER", interval);
        let ival = args.read_with("INTERVAL", interval);
        self.stop = args.read_or("STOP", false);
        let end_call = args.read_with("END_CALL", handlercall::parse);
        args.complete()?;
        // As in Click, a zero time counts as not given (START 0 is the
        // first packet's time, END 0 no end).
        let nz = |t: Option<Timestamp>| t.filter(|t| *t != Timestamp::default());
        let (start, end, start_delay, end_delay, start_after, end_after, ival) = (
            nz(start),
            nz(end),
            nz(start_delay),
            nz(end_delay),
            nz(start_after),
            nz(end_after),
            nz(ival),
        );
        let n_start = [
            start.is_some(),
            start_delay.is_some(),
            start_after.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if n_start > 1 {
            return Err("START, START_AFTER, and START_DELAY are mutually exclusive".into());
        }
        let n_end = [
            end.is_some(),
            end_after.is_some(),
            end_delay.is_some(),
            ival.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if n_end > 1 {
            return Err("END, END_AFTER, END_DELAY, and INTERVAL are mutually exclusive".into());
        }
        if end_call.is_some() && self.stop {
            return Err("END_CALL and STOP are mutually exclusive".into());
        }
        if let Some((path, _)) = &end_call {
            handlercall::check_element_at_configure("END_CALL", path, ctx)?;
        }
        self.first_relative = start.is_none() && start_delay.is_none();
        self.first_init_relative = start_delay.is_some();
        self.first = start.or(start_delay).or(start_after).unwrap_or_default();
        self.last_relative = end_after.is_some();
        self.last_init_relative = end_delay.is_some();
        self.last_interval = ival.is_some();
        self.last = end
            .or(end_after)
            .or(end_delay)
            .or(ival)
            .unwrap_or(Timestamp::from_sec_nsec(i64::from(i32::MAX), 0));
        self.end_call = end_call;
        self.ready = false;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if let Some((path, _)) = &self.end_call {
            handlercall::check_write_at_initialize(path, self, ctx)?;
        }
        let now = ctx.now();
        if self.first_init_relative {
            self.first = self.first + now;
        }
        if self.last_init_relative {
            self.last = self.last + now;
        }
        self.call_ready = self.end_call.is_some() || self.stop;
        self.task = Some(ctx.new_task(false));
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        for p in batch {
            if !self.held.is_empty() {
                self.held.push_back(p);
                continue;
            }
            if let Some(wait) = self.process(p, ctx) {
                self.held.push_back(wait);
            }
        }
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        self.resume(ctx);
        false
    }
}
