//! # RandomSeed
//!
//! Sets the random seed.
//!
//! ## Synopsis
//! `RandomSeed([SEED])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Seeds the random number generator Click's elements draw from
//! (RandomSample, UDPRewriter and the other rewriters' random ports,
//! Script's `random`) with SEED, an unsigned 32-bit integer, when the
//! element is configured. Without SEED, the seed comes from the operating
//! system's randomness.
//!
//! The generator is the C library's `random()` as GNU libc implements it,
//! so that a configuration seeded with RandomSeed draws the same numbers,
//! and so sees the same packets and ports, as Click at user level on
//! glibc. See `standard/clickrandom.rs` for its scope (one generator per
//! thread). Click also reseeds from true randomness whenever a router
//! initializes; rclick does not: without a RandomSeed the generator starts
//! as after `srandom(1)`, so such runs repeat exactly.
//!
//! In a configuration installed by hot swap, the seed is applied when the
//! new router is installed (at the switch, or by its first timer), on the
//! router's thread: the new router is built beside the running one,
//! perhaps on a thread of its own whose generator the router never draws
//! from, and a build that fails leaves the generator alone.
//!
//! ## Keywords
//! - **SEED** (unsigned integer): the seed. Default: a truly random one.
//!
//! ## Handlers
//! - `seed` (read/write): the SEED argument as written (empty when none);
//!   writing it reseeds.
//!
//! ## Example
//! ```click
//! RandomSeed(1);
//! FromDump(in.pcap, STOP true) -> RandomSample(0.1) -> ToDump(out.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, TimerId};

use super::clickrandom::{click_random_srandom, click_srandom};
use crate::qos::common::keyword_arg;

#[derive(Default)]
pub struct RandomSeed {
    /// The SEED argument as written (Click's `read_keyword_handler`).
    seed_text: String,
    /// A hot-swap successor's seed (`Some(None)`: a truly random one),
    /// applied once the router is installed.
    deferred: Option<Option<u32>>,
    timer: Option<TimerId>,
}

fn apply(seed: Option<u32>) {
    match seed {
        Some(s) => click_srandom(s),
        None => click_random_srandom(),
    }
}

rclick_core::element_class!(RandomSeed);

const HANDLERS: &[Handler<RandomSeed>] = &[Handler::flagged(
    hflags::CALM,
    Handler::read_write(
        "seed",
        |e, _| e.seed_text.clone(),
        |e, v, ctx| reconfigure_keyword(e, "SEED", Some(0), v, ctx),
    ),
)];

impl Element for RandomSeed {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let seed = args.read_p::<u32>("SEED");
        args.complete()?;
        self.seed_text = keyword_arg(conf, "SEED", 0);
        if ctx.is_hotswap_successor() && self.timer.is_none() {
            // Built beside the running router: seed once installed.
            self.deferred = Some(seed);
        } else {
            apply(seed);
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        self.timer = Some(t);
        if self.deferred.is_some() {
            ctx.schedule_timer_at(t, ctx.now());
        }
        Ok(())
    }

    fn take_state(&mut self, _old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        // At the switch, on the router's thread.
        if let Some(seed) = self.deferred.take() {
            apply(seed);
        }
        false
    }

    fn run_timer(&mut self, _timer: TimerId, _ctx: &mut Ctx) {
        // Installed without a predecessor of this name.
        if let Some(seed) = self.deferred.take() {
            apply(seed);
        }
    }
}
