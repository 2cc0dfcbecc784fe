//! # CoDel
//!
//! Drops packets by their queueing delay (Controlled Delay).
//!
//! ## Synopsis
//! `CoDel([TARGET, INTERVAL, *keywords*])`
//!
//! ## Ports and processing
//! One pull input, one pull output.
//!
//! ## Description
//! Implements the CoDel active queue management of Nichols and Jacobson
//! (RFC 8289), as Click's CoDel does. Each packet's sojourn time is the
//! time since its first-timestamp annotation, which
//! `SetTimestamp(FIRST true)` must set just before the queue; packets
//! without one pass untouched. CoDel pulls from the queue upstream:
//!
//! - while sojourn times stay below TARGET nothing is dropped;
//! - once they have stayed at or above TARGET for INTERVAL, CoDel enters
//!   the dropping state: it drops the packet at hand and pulls the next;
//! - in the dropping state it drops again at each time the control law
//!   gives, `drop_next = drop_next + INTERVAL / sqrt(count)` for the
//!   `count`-th drop of the state, so the drop rate rises as the square
//!   root of the drops until the delay falls below TARGET;
//! - re-entering the dropping state soon after leaving it (within
//!   INTERVAL of the last planned drop) resumes with the count less 2, as
//!   Click (and the CoDel pseudocode it follows) does.
//!
//! The control law is computed as Click computes it (interval in
//! milliseconds, a fixed-point integer square root) but in 64-bit
//! arithmetic (128-bit where an INTERVAL of years needs it): Click's
//! 32-bit product overflows for an INTERVAL above 268 ms and schedules the
//! next drop too early.
//!
//! The Storage elements upstream (found by flow-based router context, or
//! named by QUEUES) are only reported by `stats` and `queues`.
//!
//! ## Keywords
//! - **TARGET** (time): the acceptable standing delay. Default 5 ms.
//! - **INTERVAL** (time): the window over which the delay must stay above
//!   TARGET before dropping starts. Default 100 ms.
//! - **QUEUES** (space-separated element names): the queues to report.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//! - `codel_target`, `codel_interval` (read/write): the arguments, as
//!   `config` shows them; writing one reconfigures the element.
//! - `stats` (read): current queue length and drops.
//! - `queues` (read): the queues, one per line.
//! - `config` (read/write): `TARGETs, INTERVAL s, ` as Click prints it.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 100) -> SetTimestamp(FIRST true) -> Queue(200)
//!   -> CoDel(5ms, 100ms) -> TimedSink(1ms);
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_timestamp, Args};
use rclick_core::element::hflags;
use rclick_core::packet::anno;
use rclick_core::time::Timestamp;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{find_queues, keyword_arg, named_queues, queue_lengths, reconfigure_from};

const NS_PER_SEC: i64 = 1_000_000_000;

pub struct CoDel {
    target: Timestamp,
    interval: Timestamp,
    queues: Vec<usize>,
    queue_names: Vec<String>,
    total_drops: u64,
    state_drops: u32,
    first_above: i64,
    drop_next: i64,
    dropping: bool,
    ok_to_drop: bool,
}

impl Default for CoDel {
    fn default() -> Self {
        CoDel {
            target: Timestamp(5_000_000),
            interval: Timestamp(100_000_000),
            queues: Vec::new(),
            queue_names: Vec::new(),
            total_drops: 0,
            state_drops: 0,
            first_above: 0,
            drop_next: 0,
            dropping: false,
            ok_to_drop: false,
        }
    }
}

/// Integer square root, rounded down.
fn isqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl CoDel {
    /// The next drop time after `t`: INTERVAL / sqrt(count), with Click's
    /// scaling (milliseconds times 16 over the root of count times 256).
    fn control_law(&self, t: i64) -> i64 {
        let interval_ms = (self.interval.nanos() / 1_000_000).max(0) as u64;
        let root = isqrt(u64::from(self.state_drops) * 256).max(1);
        // In 128 bits: an INTERVAL of years (a live `codel_interval`
        // write) overflows 64.
        let ns = u128::from(interval_ms) * 16 * 1_000_000 / u128::from(root);
        t.saturating_add(i64::try_from(ns).unwrap_or(i64::MAX))
    }

    /// Pulls a packet and notes whether its sojourn time allows a drop.
    /// The flag is false when there is no packet or it has no first
    /// timestamp.
    fn dequeue(&mut self, now: i64, ctx: &mut Ctx) -> (Option<Packet>, bool) {
        self.ok_to_drop = false;
        let Some(p) = ctx.pull(0, 1).and_then(|mut b| b.pop()) else {
            self.first_above = 0;
            return (None, false);
        };
        let first = i64::from_ne_bytes(p.anno_bytes::<8>(anno::FIRST_TIMESTAMP));
        if first.div_euclid(NS_PER_SEC) == 0 {
            return (Some(p), false);
        }
        if now.saturating_sub(first) < self.target.nanos() {
            self.first_above = 0;
        } else if self.first_above == 0 {
            self.first_above = now.saturating_add(self.interval.nanos());
        } else if now >= self.first_above {
            self.ok_to_drop = true;
        }
        (Some(p), true)
    }

    fn drop_packet(&mut self, p: Option<Packet>) {
        if p.is_some() {
            self.total_drops += 1;
        }
    }

    /// One of Click's pulls: a packet, after any drops.
    fn pull_one(&mut self, ctx: &mut Ctx) -> Option<Packet> {
        let now = ctx.now().nanos();
        let (mut p, ok) = self.dequeue(now, ctx);
        if !ok {
            self.dropping = false;
            return p;
        }
        let interval = self.interval.nanos();
        if self.dropping {
            if !self.ok_to_drop {
                self.dropping = false;
            } else if now >= self.drop_next {
                while now >= self.drop_next && self.dropping {
                    self.drop_packet(p.take());
                    self.state_drops = self.state_drops.saturating_add(1);
                    p = self.dequeue(now, ctx).0;
                    if !self.ok_to_drop {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next);
                    }
                }
            }
        } else if self.ok_to_drop
            && (now.saturating_sub(self.drop_next) < interval
                || now.saturating_sub(self.first_above) >= interval)
        {
            self.drop_packet(p.take());
            p = self.dequeue(now, ctx).0;
            self.dropping = true;
            self.state_drops = if now.saturating_sub(self.drop_next) < interval {
                if self.state_drops > 2 {
                    self.state_drops - 2
                } else {
                    1
                }
            } else {
                1
            };
            self.drop_next = self.control_law(now);
        }
        p
    }

    fn read_config(&self, _ctx: &Ctx) -> String {
        format!("{}s, {} s, ", self.target, self.interval)
    }
}

// Click's order.
const HANDLERS: &[Handler<CoDel>] = &[
    Handler::data("drops", |e| &e.total_drops),
    Handler::read_write(
        "codel_interval",
        |e, ctx| keyword_arg(&e.read_config(ctx), "INTERVAL", 1),
        |e, v, ctx| {
            let base = e.read_config(ctx);
            reconfigure_from(e, &base, "INTERVAL", Some(1), v, ctx)
        },
    ),
    Handler::read_write(
        "codel_target",
        |e, ctx| keyword_arg(&e.read_config(ctx), "TARGET", 0),
        |e, v, ctx| {
            let base = e.read_config(ctx);
            reconfigure_from(e, &base, "TARGET", Some(0), v, ctx)
        },
    ),
    Handler::read("stats", |e, ctx| {
        format!(
            "{} current queue\n{} drops\n",
            queue_lengths(ctx, &e.queues).0,
            e.total_drops
        )
    }),
    Handler::read("queues", |e, _| {
        e.queue_names.iter().map(|n| format!("{n}\n")).collect()
    }),
    Handler::flagged(hflags::CALM, Handler::read("config", CoDel::read_config)),
];

rclick_core::element_class!(CoDel);

impl Element for CoDel {
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let target: Option<Duration> = args.read_p_with("TARGET", parse_timestamp);
        let interval: Option<Duration> = args.read_p_with("INTERVAL", parse_timestamp);
        let queues: Option<String> = args.read_with("QUEUES", |s| Ok(s.to_string()));
        args.complete()?;
        self.target = target.map_or(Timestamp(5_000_000), Timestamp::from_duration);
        self.interval = interval.map_or(Timestamp(100_000_000), Timestamp::from_duration);
        if let (Some(q), true) = (queues, self.queues.is_empty()) {
            (self.queues, self.queue_names) = named_queues(ctx, &q)?;
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        find_queues(ctx, false, &mut self.queues, &mut self.queue_names)?;
        self.total_drops = 0;
        self.state_drops = 0;
        self.dropping = false;
        self.first_above = 0;
        self.drop_next = 0;
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let max = max.clamp(1, rclick_core::batch::BATCH_CAPACITY);
        let mut out = Batch::new();
        while out.len() < max {
            match self.pull_one(ctx) {
                Some(p) => out.push(p),
                None => break,
            }
        }
        (!out.is_empty()).then_some(out)
    }
}
