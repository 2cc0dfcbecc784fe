//! # RED
//!
//! Drops packets according to Random Early Detection.
//!
//! ## Synopsis
//! `RED(MIN_THRESH, MAX_THRESH, MAX_P [, *keywords*])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, and an optional push output 1
//! that receives the dropped packets.
//!
//! ## Description
//! Implements the Random Early Detection dropping algorithm of Floyd and
//! Jacobson, with Floyd's "gentle" variant by default.
//!
//! RED watches one or more Storage elements (usually Queues) and keeps a
//! moving average of the sum of their lengths. While the average is at most
//! MIN_THRESH no packet is dropped; between MIN_THRESH and MAX_THRESH
//! packets are dropped with a probability rising linearly from 0 to MAX_P;
//! with GENTLE, between MAX_THRESH and twice MAX_THRESH the probability
//! rises linearly from MAX_P to 1, and above that every packet is dropped
//! (without GENTLE, every packet above MAX_THRESH). As in the paper, the
//! number of packets between drops is spread uniformly: after a drop, a
//! random threshold is drawn, and the next drop comes when the count of
//! packets since exceeds the threshold divided by the current probability.
//!
//! The queues are found by flow-based router context: a RED in push
//! position uses the nearest Storage elements downstream of its output 0;
//! in pull position, the nearest upstream of its input. QUEUES names them
//! instead (the Click paper's Figure 12: one RED watching several queues
//! behind a scheduler).
//!
//! Dropped packets go to output 1 if it is connected, else are freed.
//!
//! The random draws come from Click's generator (the C library's
//! `random()`, see RandomSeed): with the same seed, the same packets drop
//! as in Click; without a RandomSeed every run drops the same packets. The drop probability and average follow Click's
//! fixed-point arithmetic exactly (16-bit probabilities, averages with 10
//! bits of fraction). In a batch, each packet is judged against the queue
//! length it would see were the packets handed on one at a time: in push
//! position the queue length plus the packets of the batch already let
//! through (when the queues are downstream), in pull position the queue
//! length plus the packets of the batch behind it.
//!
//! rclick differs where Click crashes: `RED(0, 0, P)` makes Click divide
//! by zero (MAX_THRESH 0); rclick drops every packet once the average is
//! above 0. It also differs with STABILITY 0: Click compares the
//! instantaneous length with the thresholds but computes the probability
//! from its moving average, which it no longer updates (0 after
//! initialization), so between the thresholds it never drops; rclick
//! computes the probability from the instantaneous length, as STABILITY 0
//! says.
//!
//! ## Keywords
//! - **MIN_THRESH** (unsigned): average queue length at or below which no
//!   packet is dropped.
//! - **MAX_THRESH** (unsigned, at most 65535, at least MIN_THRESH): average
//!   queue length at which packets are dropped with probability MAX_P.
//! - **MAX_P** (real between 0 and 1): the drop probability at MAX_THRESH.
//! - **QUEUES** (space-separated element names): the Storage elements to
//!   watch instead of those found by router context.
//! - **STABILITY** (unsigned, 0 to 16): the average's weight is
//!   2^-STABILITY (conventional RED's w_q); 0 uses the instantaneous length.
//!   Default 4.
//! - **GENTLE** (boolean): the gentle variant above MAX_THRESH. Default
//!   true.
//!
//! ## Handlers
//! - `min_thresh`, `max_thresh`, `max_p` (read/write): the arguments;
//!   writing one reconfigures the element from its `config` with that
//!   argument changed (Click's keyword handlers read `config`).
//! - `drops` (read): packets dropped.
//! - `avg_queue_size` (read): the current average queue length.
//! - `queues` (read): the Storage elements watched, one per line.
//! - `stats` (read): current and average queue length and drops.
//! - `config` (read/write): the configuration with the queues found.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 100, STOP true) -> RED(5, 50, 0.02) -> Queue(200) -> Discard;
//! ```

use rclick_core::conf::{parse_fixed_point, Args};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{
    find_queues, keyword_arg, named_queues, queue_lengths, reconfigure_from, unparse_real2,
    DirectEwma, EWMA_SCALE,
};

/// Probability one, in Click's 16-bit fixed point.
const ONE: u32 = 0x10000;

pub struct Red {
    min_thresh: u32,
    max_thresh: u32,
    kill_thresh: u32,
    max_p: u32,
    gentle: bool,
    c1: u32,
    c2: u32,
    g1: u32,
    g2: u32,
    pub(super) size: DirectEwma,
    count: i32,
    random_value: i32,
    last_jiffies: u32,
    pub(super) drops: u64,
    /// The Storage elements watched: indexes and names.
    queues: Vec<usize>,
    queue_names: Vec<String>,
    /// Whether the packets RED passes on reach the queues it watches (they
    /// were found downstream): then, in a batch, each packet passed makes
    /// the queue one longer for the next.
    feeds_queues: bool,
}

impl Default for Red {
    fn default() -> Self {
        Red {
            min_thresh: 0,
            max_thresh: 0,
            kill_thresh: 0,
            max_p: 0,
            gentle: true,
            c1: 0,
            c2: 1,
            g1: 0,
            g2: 0,
            size: DirectEwma::new(4),
            count: -1,
            random_value: 0,
            last_jiffies: 0,
            drops: 0,
            queues: Vec::new(),
            queue_names: Vec::new(),
            feeds_queues: false,
        }
    }
}

impl Red {
    /// Checks the parameters and sets them (Click's `finish_configure`,
    /// shared with AdaptiveRED).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_configure(
        &mut self,
        min_thresh: u32,
        max_thresh: u32,
        gentle: bool,
        max_p: u32,
        stability: u32,
        queues: Option<String>,
        ctx: &mut InitCtx,
    ) -> ConfigResult {
        if max_thresh > 0xFFFF {
            return Err("MAX_THRESH must be <= 65535".into());
        }
        if min_thresh > max_thresh {
            return Err("MIN_THRESH must be <= MAX_THRESH".into());
        }
        if max_p > ONE {
            return Err("MAX_P must be between 0 and 1".into());
        }
        if stability > 16 {
            return Err("STABILITY must be between 0 and 16".into());
        }
        // As Click: QUEUES is resolved once (a live reconfigure keeps the
        // queues already found).
        if let (Some(q), true) = (queues, self.queues.is_empty()) {
            (self.queues, self.queue_names) = named_queues(ctx, &q)?;
        }
        self.min_thresh = min_thresh;
        self.max_thresh = max_thresh;
        self.kill_thresh = if gentle && max_p != ONE {
            max_thresh * 2
        } else {
            max_thresh
        };
        self.max_p = max_p;
        self.size.set_stability(stability);
        self.gentle = gentle;
        self.set_constants();
        Ok(())
    }

    /// AdaptiveRED's periodic step (Floyd, Gummadi and Shenker's Adaptive
    /// RED, as Click's AdaptiveRED computes it): with the average (the
    /// instantaneous length under STABILITY 0) in the lower half of the
    /// band between the thresholds, MAX_P shrinks to 9/10 (while above
    /// 0.01); in the upper half it grows by 0.01, or by a quarter of itself
    /// if that is less (while below 0.5). Only the probability slope
    /// changes: the kill threshold stays where configuration put it.
    pub(super) fn adapt(&mut self, ctx: &Ctx) {
        const ONE_HUNDREDTH: u32 = 655;
        const NINE_TENTHS: u32 = 58982;
        let avg = if self.size.stability() == 0 {
            self.queue_size(ctx).0
        } else {
            self.size.unscaled_average()
        } as u32;
        let part = (self.max_thresh - self.min_thresh) / 2;
        if avg < self.min_thresh + part && self.max_p > ONE_HUNDREDTH {
            self.max_p = (self.max_p * NINE_TENTHS) >> 16;
        } else if avg > self.max_thresh - part && self.max_p < 0x8000 {
            self.max_p += ONE_HUNDREDTH.min(self.max_p / 4);
        }
        self.set_constants();
    }

    /// The RED state of `e`, a RED or an AdaptiveRED (Click's cast to
    /// "RED"), for a hot swap.
    pub(super) fn of(e: &dyn Element) -> Option<&Red> {
        let any = e.as_any();
        any.downcast_ref::<Red>().or_else(|| {
            any.downcast_ref::<super::adaptivered::AdaptiveRed>()
                .map(|a| &a.red)
        })
    }

    fn set_constants(&mut self) {
        if self.min_thresh >= self.max_thresh {
            self.c1 = 0;
            self.c2 = 1;
        } else {
            let d = self.max_thresh - self.min_thresh;
            self.c1 = self.max_p / d;
            self.c2 = (self.max_p * self.min_thresh) / d;
        }
        // Click divides by MAX_THRESH even when it is 0 (and crashes).
        self.g1 = (ONE - self.max_p).checked_div(self.max_thresh).unwrap_or(0);
        self.g2 = ONE.wrapping_sub(2 * self.max_p);
    }

    /// Packets held by the watched queues, and their total capacity.
    pub(super) fn queue_size(&self, ctx: &Ctx) -> (u64, u64) {
        queue_lengths(ctx, &self.queues)
    }

    /// Whether to drop a packet that finds `s` packets queued (Click's
    /// `should_drop`).
    fn should_drop(&mut self, s: u64, ctx: &Ctx) -> bool {
        let avg = if self.size.stability() == 0 {
            s
        } else if s != 0 {
            self.size.update(s);
            self.last_jiffies = 0;
            self.size.unscaled_average()
        } else {
            // Time the queue spent empty, in 20 ms units: as Click's,
            // milliseconds in 32 bits (Click's jiffies) divided by 20, so
            // the units start where Click's do.
            let j = (ctx.now().nanos().div_euclid(1_000_000) as u64 as u32) / 20;
            let n = if self.last_jiffies != 0 {
                j.wrapping_sub(self.last_jiffies)
            } else {
                1
            };
            self.size.update_n(0, u64::from(n));
            self.last_jiffies = j;
            self.size.unscaled_average()
        };

        if avg <= u64::from(self.min_thresh) {
            self.count = -1;
            return false;
        } else if avg > u64::from(self.kill_thresh) {
            self.count = -1;
            return true;
        }

        let scaled = if self.size.stability() == 0 {
            s << EWMA_SCALE
        } else {
            self.size.scaled_average()
        };
        let p_b = if avg <= u64::from(self.max_thresh) {
            ((u64::from(self.c1).wrapping_mul(scaled)) >> EWMA_SCALE)
                .wrapping_sub(u64::from(self.c2))
        } else {
            ((u64::from(self.g1).wrapping_mul(scaled)) >> EWMA_SCALE)
                .wrapping_sub(u64::from(self.g2))
        } as i32;

        self.count = self.count.saturating_add(1);
        if self.count > 0 && p_b > 0 && self.count > self.random_value / p_b {
            self.count = 0;
            self.random_value =
                ((crate::standard::clickrandom::click_random() >> 5) & 0xFFFF) as i32;
            return true;
        }
        if self.count == 0 {
            self.random_value =
                ((crate::standard::clickrandom::click_random() >> 5) & 0xFFFF) as i32;
        }
        false
    }

    fn handle_drop(&mut self, p: Packet, ctx: &mut Ctx) {
        self.drops += 1;
        if ctx.noutputs() > 1 {
            ctx.emit(1, p);
        }
    }

    pub(super) fn read_stats(&self, ctx: &Ctx) -> String {
        format!(
            "{} current queue\n{} avg queue\n{} drops\n",
            self.queue_size(ctx).0,
            self.size.unparse(),
            self.drops
        )
    }

    pub(super) fn read_queues(&self) -> String {
        self.queue_names.iter().map(|n| format!("{n}\n")).collect()
    }

    pub(super) fn read_config(&self, _ctx: &Ctx) -> String {
        let mut s = format!(
            "{}, {}, {}, QUEUES",
            self.min_thresh,
            self.max_thresh,
            unparse_real2(u64::from(self.max_p), 16)
        );
        for n in &self.queue_names {
            s.push(' ');
            s.push_str(n);
        }
        s.push_str(&format!(", STABILITY {}", self.size.stability()));
        if !self.gentle {
            s.push_str(", GENTLE false");
        }
        s
    }
}

// Click's order.
const HANDLERS: &[Handler<Red>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::read_write(
        "min_thresh",
        |e, ctx| keyword_arg(&e.read_config(ctx), "MIN_THRESH", 0),
        |e, v, ctx| {
            let base = e.read_config(ctx);
            reconfigure_from(e, &base, "MIN_THRESH", Some(0), v, ctx)
        },
    ),
    Handler::read_write(
        "max_thresh",
        |e, ctx| keyword_arg(&e.read_config(ctx), "MAX_THRESH", 1),
        |e, v, ctx| {
            let base = e.read_config(ctx);
            reconfigure_from(e, &base, "MAX_THRESH", Some(1), v, ctx)
        },
    ),
    Handler::read_write(
        "max_p",
        |e, ctx| keyword_arg(&e.read_config(ctx), "MAX_P", 2),
        |e, v, ctx| {
            let base = e.read_config(ctx);
            reconfigure_from(e, &base, "MAX_P", Some(2), v, ctx)
        },
    ),
    Handler::read("avg_queue_size", |e, _| e.size.unparse()),
    Handler::read("stats", |e, ctx| e.read_stats(ctx)),
    Handler::read("queues", |e, _| e.read_queues()),
    Handler::read("config", Red::read_config),
];

rclick_core::element_class!("RED" => Red::default());

impl Element for Red {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "a/ah"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let min_thresh: u32 = args.read_mp("MIN_THRESH");
        let max_thresh: u32 = args.read_mp("MAX_THRESH");
        let max_p: u32 = args.read_mp_with("MAX_P", |s| parse_fixed_point(s, 16));
        let queues: Option<String> = args.read_with("QUEUES", |s| Ok(s.to_string()));
        let stability: u32 = args.read_or("STABILITY", 4);
        let gentle: bool = args.read_or("GENTLE", true);
        args.complete()?;
        self.finish_configure(
            min_thresh, max_thresh, gentle, max_p, stability, queues, ctx,
        )
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let downstream = ctx.output_is_push(0);
        find_queues(ctx, downstream, &mut self.queues, &mut self.queue_names)?;
        self.feeds_queues = downstream && {
            let near = ctx.downstream(Some(0), &|e: &dyn Element| e.has_interface("Storage"));
            self.queues.iter().all(|q| near.contains(q))
        };
        self.size.clear();
        self.drops = 0;
        self.count = -1;
        self.last_jiffies = 0;
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = Red::of(old) else {
            return false;
        };
        let stability = self.size.stability();
        self.size = o.size;
        self.size.set_stability(stability);
        true
    }

    fn push(&mut self, _port: usize, mut batch: Batch, ctx: &mut Ctx) {
        let (mut len, cap) = self.queue_size(ctx);
        batch.retain_map(|p| {
            if self.should_drop(len, ctx) {
                self.handle_drop(p, ctx);
                None
            } else {
                // The packet joins the queue before the next one looks.
                if self.feeds_queues {
                    len = (len + 1).min(cap.max(len));
                }
                Some(p)
            }
        });
        ctx.emit_batch(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        loop {
            let mut batch = ctx.pull(0, max)?;
            let (len, _) = self.queue_size(ctx);
            // Packet i of n left the queue with n - 1 - i behind it.
            let mut behind = batch.len() as u64;
            batch.retain_map(|p| {
                behind -= 1;
                if self.should_drop(len + behind, ctx) {
                    self.handle_drop(p, ctx);
                    None
                } else {
                    Some(p)
                }
            });
            if !batch.is_empty() {
                return Some(batch);
            }
        }
    }
}
