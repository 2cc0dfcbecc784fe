//! # AdaptiveRED
//!
//! Drops packets according to Adaptive RED.
//!
//! ## Synopsis
//! `AdaptiveRED(TARGET, MAX_P [, *keywords*])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, and an optional push output 1
//! that receives the dropped packets.
//!
//! ## Description
//! Random Early Detection (as the RED element, always in its gentle
//! variant) that sets its own drop probability: Floyd, Gummadi and
//! Shenker's Adaptive RED. TARGET is the average queue length aimed at:
//! MIN_THRESH becomes TARGET/2 and MAX_THRESH TARGET + TARGET/2 (a TARGET
//! below 10 counts as 10). MAX_P is only the starting probability.
//!
//! Every 500 milliseconds, from initialization on, the element looks at
//! the average queue length (the instantaneous length with STABILITY 0).
//! Below the middle of the band between the thresholds (TARGET, give or
//! take the rounding of TARGET/2), MAX_P shrinks to nine tenths of
//! itself, unless it is already at most 0.01; above the middle, it grows
//! by 0.01, or by a quarter of itself if that is smaller, unless it is
//! already at least 0.5. Only at the middle itself does it stay. (Floyd,
//! Gummadi and Shenker aim at a range around the middle, 0.4 to 0.6 of
//! the band; Click's AdaptiveRED, and so this one, at the middle.) The
//! probabilities are Click's 16-bit fixed point (0.01 is 655/65536, nine
//! tenths 58982/65536), so `max_p` reads exactly what Click's would.
//!
//! The queues are found as RED finds them (router context, or QUEUES);
//! everything else, the random draws (Click's generator, see RandomSeed),
//! the batch handling and the
//! differences from Click with STABILITY 0, is RED's: see RED.
//!
//! As in Click, the handlers are RED's: `config` reads in RED's form
//! (`MIN_THRESH, MAX_THRESH, MAX_P, QUEUES ..., STABILITY N`), so writing
//! `min_thresh`, `max_thresh` or `max_p` (which reconfigure from that text
//! with one argument changed) fails with "too many arguments", as Click's
//! do; write `config` with AdaptiveRED's own arguments instead.
//!
//! ## Keywords
//! - **TARGET** (unsigned): the target average queue length.
//! - **MAX_P** (real between 0 and 1): the initial drop probability at
//!   MAX_THRESH.
//! - **QUEUES** (space-separated element names): the Storage elements to
//!   watch instead of those found by router context.
//! - **STABILITY** (unsigned, 0 to 16): the average's weight is
//!   2^-STABILITY. Default 4.
//!
//! ## Handlers
//! - `min_thresh`, `max_thresh`, `max_p` (read/write): the thresholds
//!   derived from TARGET and the current (adapted) MAX_P; writes fail as
//!   in Click (see above).
//! - `drops` (read): packets dropped.
//! - `avg_queue_size` (read): the current average queue length.
//! - `queues` (read): the Storage elements watched, one per line.
//! - `stats` (read): current and average queue length and drops.
//! - `config` (read/write): RED's form of the configuration, with the
//!   adapted MAX_P.
//!
//! ## Example
//! ```click
//! RatedSource(RATE 1200, LIMIT 3000, STOP true) -> AdaptiveRED(20, 0.02)
//!   -> Queue(200) -> RatedUnqueue(1000) -> Discard;
//! ```

use rclick_core::conf::{parse_fixed_point, Args};
use rclick_core::time::Timestamp;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, TimerId};

use super::common::{keyword_arg, reconfigure_from};
use super::red::Red;

/// How often MAX_P adapts.
const INTERVAL: Timestamp = Timestamp(500_000_000);

#[derive(Default)]
pub struct AdaptiveRed {
    pub(super) red: Red,
    timer: Option<TimerId>,
    /// When the timer is due next (Click reschedules from the expiry).
    next: Timestamp,
}

fn read_kw(e: &AdaptiveRed, ctx: &Ctx, kw: &str, pos: usize) -> String {
    keyword_arg(&e.red.read_config(ctx), kw, pos)
}

fn write_kw(
    e: &mut AdaptiveRed,
    kw: &str,
    pos: usize,
    v: &str,
    ctx: &mut Ctx,
) -> Result<(), String> {
    let base = e.red.read_config(ctx);
    reconfigure_from(e, &base, kw, Some(pos), v, ctx)
}

// Click's order (RED's).
const HANDLERS: &[Handler<AdaptiveRed>] = &[
    Handler::data("drops", |e| &e.red.drops),
    Handler::read_write(
        "min_thresh",
        |e, ctx| read_kw(e, ctx, "MIN_THRESH", 0),
        |e, v, ctx| write_kw(e, "MIN_THRESH", 0, v, ctx),
    ),
    Handler::read_write(
        "max_thresh",
        |e, ctx| read_kw(e, ctx, "MAX_THRESH", 1),
        |e, v, ctx| write_kw(e, "MAX_THRESH", 1, v, ctx),
    ),
    Handler::read_write(
        "max_p",
        |e, ctx| read_kw(e, ctx, "MAX_P", 2),
        |e, v, ctx| write_kw(e, "MAX_P", 2, v, ctx),
    ),
    Handler::read("avg_queue_size", |e, _| e.red.size.unparse()),
    Handler::read("stats", |e, ctx| e.red.read_stats(ctx)),
    Handler::read("queues", |e, _| e.red.read_queues()),
    Handler::read("config", |e, ctx| e.red.read_config(ctx)),
];

rclick_core::element_class!("AdaptiveRED" => AdaptiveRed::default());

impl Element for AdaptiveRed {
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
        let target: u32 = args.read_mp("TARGET");
        let max_p: u32 = args.read_mp_with("MAX_P", |s| parse_fixed_point(s, 16));
        let queues: Option<String> = args.read_with("QUEUES", |s| Ok(s.to_string()));
        let stability: u32 = args.read_or("STABILITY", 4);
        args.complete()?;
        let target = target.max(10);
        let min_thresh = target / 2;
        // Unsigned arithmetic as Click's: a TARGET near 2^32 wraps, and the
        // error is then Click's (MIN_THRESH above MAX_THRESH).
        let max_thresh = target.wrapping_add(min_thresh);
        self.red
            .finish_configure(min_thresh, max_thresh, true, max_p, stability, queues, ctx)
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.red.initialize(ctx)?;
        let t = ctx.new_timer();
        self.next = ctx.now() + INTERVAL;
        ctx.schedule_timer_at(t, self.next);
        self.timer = Some(t);
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        self.red.take_state(old, ctx)
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        self.red.adapt(ctx);
        self.next = self.next + INTERVAL;
        ctx.schedule_timer_at(timer, self.next);
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        self.red.push(port, batch, ctx);
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.red.pull(port, max, ctx)
    }
}
