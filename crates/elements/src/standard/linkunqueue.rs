//! # LinkUnqueue
//!
//! Emulates a serial link: pulls packets and delays them.
//!
//! ## Synopsis
//! `LinkUnqueue(LATENCY, BANDWIDTH)`
//!
//! ## Ports and processing
//! One pull input, one push output.
//!
//! ## Description
//! Pulls packets from its input and pushes each out when it would have
//! arrived over a link with latency LATENCY and bandwidth BANDWIDTH: at
//! least LATENCY after it was pulled, plus its transmission time (its
//! length, plus its extra-length annotation, at BANDWIDTH), after the
//! packet before it when they were sent back to back. It pulls only while
//! the link has room (the last packet on it would arrive within LATENCY),
//! so a `Queue -> LinkUnqueue` pair models a link fed by a queue. Each
//! packet's timestamp annotation is set to its arrival time.
//!
//! A task pulls and pushes; it sleeps while every queue upstream is empty
//! (their notifier wakes it) and uses a timer to wait for the next
//! arrival. One task run pulls at most 1024 packets onto the link (the
//! next run, at the same time, goes on): a fast link with a long latency
//! holds millions of small packets, and Click fills it in one run, which
//! keeps everything else waiting. The link holds at most 262,144 packets
//! (Click: no bound); past that it takes more only as packets arrive, so
//! LATENCY × BANDWIDTH cannot grow memory without bound.
//!
//! ## Keywords
//! - **LATENCY** (time): the link latency, e.g. `5ms`. Mandatory.
//! - **BANDWIDTH** (bandwidth): e.g. `100kbps` or `12500Bps`; at least
//!   100 bytes per second. Mandatory.
//!
//! On hot swap, a LinkUnqueue of the same name takes the packets on its
//! predecessor's link, which arrive when they were due.
//!
//! ## Handlers
//! - `latency`, `bandwidth` (read/write): the arguments; writing either
//!   drops every packet on the link, as `reset` does.
//! - `size` (read): packets on the link.
//! - `reset` (write): drops every packet on the link.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> Queue -> LinkUnqueue(10ms, 1Mbps) -> ToDump(out.pcap);
//! ```

use std::collections::VecDeque;
use std::time::Duration;

use rclick_core::conf::{parse_bandwidth, parse_timestamp, Args, Bandwidth};
use rclick_core::element::{hflags, processing};
use rclick_core::packet::anno;
use rclick_core::{
    ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, TaskId, TimerId,
    Timestamp,
};

use super::timedsource::unparse_interval;

/// Packets one task run pulls onto the link at most (as many as a source
/// sends in one run).
const MAX_PULL_PER_RUN: usize = rclick_core::element::kinds::MAX_SOURCE_BURST_PER_RUN;
/// The most packets on the link at once, whatever LATENCY × BANDWIDTH
/// allows (10 Gbps over 40 ms is 780,000 minimum-size frames; a year's
/// latency would be unbounded): past it the link takes no more until its
/// first packet arrives, and packets wait upstream, in their queue.
pub const MAX_LINK_PACKETS: usize = 1 << 18;

pub struct LinkUnqueue {
    latency: Timestamp,
    /// Bandwidth in hundreds of bytes per second, as Click keeps it.
    bw100: u64,
    link: VecDeque<Packet>,
    back_to_back: bool,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    signal: NotifierSignal,
}

impl Default for LinkUnqueue {
    fn default() -> Self {
        LinkUnqueue {
            latency: Timestamp(0),
            bw100: 1,
            link: VecDeque::new(),
            back_to_back: false,
            task: None,
            timer: None,
            signal: NotifierSignal::Busy,
        }
    }
}

fn check_bandwidth(bw: u64) -> Result<u64, String> {
    if bw < 100 {
        Err("bandwidth too small, minimum 100Bps".into())
    } else {
        Ok(bw / 100)
    }
}

impl LinkUnqueue {
    /// Sets `p`'s timestamp to `base` plus its transmission time.
    fn delay_by_bandwidth(&self, p: &mut Packet, base: Timestamp) {
        let extra = u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH));
        let length = p.len() as u64 + u64::from(extra);
        let usec = length * 10_000 / self.bw100;
        p.set_timestamp_anno(Timestamp(base.nanos().saturating_add(usec as i64 * 1000)));
    }

    /// Drops the link's packets and starts over (every handler write).
    fn reset(&mut self, ctx: &mut Ctx) {
        self.link.clear();
        if let Some(t) = self.timer {
            ctx.unschedule_timer(t);
        }
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}

const HANDLERS: &[Handler<LinkUnqueue>] = &[
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "latency",
            |e, _| unparse_interval(e.latency),
            |e, v, ctx| {
                let d = parse_timestamp(v.trim()).map_err(|_| "latency must be a timestamp")?;
                e.latency = Timestamp::from_duration(d);
                e.reset(ctx);
                Ok(())
            },
        ),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "bandwidth",
            |e, _| (e.bw100 * 100).to_string(),
            |e, v, ctx| {
                let bw = parse_bandwidth(v.trim()).map_err(|_| "invalid bandwidth")?;
                e.bw100 = check_bandwidth(bw)?;
                e.reset(ctx);
                Ok(())
            },
        ),
    ),
    Handler::read("size", |e, _| e.link.len().to_string()),
    Handler::button("reset", |e, _, ctx| {
        e.reset(ctx);
        Ok(())
    }),
];

rclick_core::element_class!(LinkUnqueue);

impl Element for LinkUnqueue {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        processing::PULL_TO_PUSH
    }

    fn has_interface(&self, name: &str) -> bool {
        name == "Storage"
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some((self.link.len(), 0x7FFF_FFFF))
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let latency: Duration = args.read_mp_with("LATENCY", parse_timestamp);
        let bw: Bandwidth = args.read_mp("BANDWIDTH");
        args.complete()?;
        self.latency = Timestamp::from_duration(latency);
        self.bw100 = check_bandwidth(bw.0)?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(true);
        self.signal = ctx.upstream_empty_signal(0, Some(t));
        self.task = Some(t);
        self.timer = Some(ctx.new_timer());
        self.link.reserve(64);
        Ok(())
    }

    /// Hot swap: the packets on the link carry over with their arrival
    /// times (they were sent under the old LATENCY and BANDWIDTH; the next
    /// ones follow them back to back if they were still coming). Click
    /// starts with an empty link.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<LinkUnqueue>() else {
            return false;
        };
        self.link = std::mem::take(&mut o.link);
        self.back_to_back = o.back_to_back && !self.link.is_empty();
        true
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        let mut worked = false;
        let now = ctx.now();
        let now_delayed = Timestamp(now.nanos().saturating_add(self.latency.nanos()));

        // Pull while the link has room: the last packet on it arrives
        // within LATENCY. At most MAX_PULL_PER_RUN a run: a fast link with
        // a long latency holds millions of small packets, and filling it in
        // one run kept everything else waiting (and the memory grew at
        // once); the next run, at the same time, goes on filling.
        let mut pulled = 0;
        while pulled < MAX_PULL_PER_RUN
            && self.link.len() < MAX_LINK_PACKETS
            && self
                .link
                .back()
                .is_none_or(|p| p.timestamp_anno() <= now_delayed)
        {
            pulled += 1;
            let Some(batch) = ctx.pull(0, 1) else {
                self.back_to_back = false;
                break;
            };
            for mut p in batch {
                let base = match self.link.back() {
                    Some(tail) if self.back_to_back => tail.timestamp_anno(),
                    _ => now_delayed,
                };
                self.delay_by_bandwidth(&mut p, base);
                self.link.push_back(p);
                worked = true;
                self.back_to_back = true;
            }
        }

        // Emit the packets that have arrived.
        while self.link.front().is_some_and(|p| p.timestamp_anno() <= now) {
            if let Some(p) = self.link.pop_front() {
                ctx.emit(0, p);
                worked = true;
            }
        }

        // Run again when the next packet arrives, or when there is room.
        let active = ctx.signal_active(&self.signal);
        if let Some(head) = self.link.front() {
            let mut expiry = head.timestamp_anno();
            // A link full by count has room only when its head arrives.
            if active && self.link.len() < MAX_LINK_PACKETS {
                if let Some(tail) = self.link.back() {
                    let room = Timestamp(
                        tail.timestamp_anno()
                            .nanos()
                            .saturating_sub(self.latency.nanos()),
                    );
                    if room < expiry {
                        expiry = room;
                    }
                }
            }
            if expiry <= now {
                ctx.fast_reschedule();
            } else if let Some(t) = self.timer {
                ctx.schedule_timer_at(t, expiry);
            }
        } else if active {
            ctx.fast_reschedule();
        }
        worked
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }
}
