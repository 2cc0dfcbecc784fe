//! # RatedSplitter
//!
//! Splits packets by rate: those within the rate to output 0, the rest to
//! output 1.
//!
//! ## Synopsis
//! `RatedSplitter(RATE, [*keywords*])`
//!
//! ## Ports and processing
//! One push input; push output 0, and push output 1 (optional; packets over
//! the rate are dropped without it).
//!
//! ## Description
//! Sends the first RATE packets per second to output 0 and the others to
//! output 1, using Click's token bucket exactly: 1 ms ticks, a capacity of
//! BURST_DURATION (default 20 ms) worth of tokens (at least 1), starting
//! full. Unlike a shaper, it never holds packets back: a packet that finds
//! no token leaves at once by output 1. With output 1 connected to a
//! Discard it is a policer.
//!
//! ## Keywords
//! - **RATE** (unsigned): packets per second. Mandatory.
//! - **BURST_DURATION** (time): bucket capacity as a duration at RATE.
//! - **BURST_SIZE** (unsigned): bucket capacity in packets. Cannot be given
//!   together with BURST_DURATION.
//!
//! ## Handlers
//! - `rate` (read/write): the rate; writing it reconfigures the element
//!   with that RATE, and, as in Click, the burst returns to its default.
//! - `config` (read/write): reads the current rate.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> rs :: RatedSplitter(2) -> Discard; rs[1] -> Discard;
//! ```

use rclick_core::element::Filter;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::reconfigure_from;
use crate::standard::ratedunqueue::{read_rate_args, unparse_rate, BANDWIDTH_THRESH};
use crate::standard::tokenbucket::TokenBucket;

/// RatedSplitter, or BandwidthRatedSplitter when `bandwidth`.
#[derive(Default)]
pub struct RatedSplitter {
    tb: TokenBucket,
    bandwidth: bool,
}

impl RatedSplitter {
    /// A BandwidthRatedSplitter.
    pub fn bandwidth() -> Self {
        RatedSplitter {
            tb: TokenBucket::default(),
            bandwidth: true,
        }
    }
}

impl Filter for RatedSplitter {
    #[inline]
    fn filter(&mut self, p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        self.tb.refill(ctx.now());
        if self.bandwidth {
            if self.tb.contains(BANDWIDTH_THRESH) {
                self.tb.remove(p.len() as u32);
                Ok(p)
            } else {
                Err(p)
            }
        } else if self.tb.remove_if(1) {
            Ok(p)
        } else {
            Err(p)
        }
    }
}

// Click's order.
const HANDLERS: &[Handler<RatedSplitter>] = &[
    Handler::read_write(
        "rate",
        |e, _| unparse_rate(e.tb.rate(), e.bandwidth),
        |e, v, ctx| {
            let base = unparse_rate(e.tb.rate(), e.bandwidth);
            reconfigure_from(e, &base, "RATE", Some(0), v, ctx)
        },
    ),
    Handler::read("config", |e, _| unparse_rate(e.tb.rate(), e.bandwidth)),
];

rclick_core::element_class!(RatedSplitter);

impl Element for RatedSplitter {
    rclick_core::element_kind!(filter);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let (rate, burst) = read_rate_args(conf, self.bandwidth)?;
        self.tb
            .assign(rate, burst.capacity_at(rate, self.bandwidth));
        Ok(())
    }

    /// Hot swap: the bucket's level carries over.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<RatedSplitter>() else {
            return false;
        };
        self.tb.continue_from(&o.tb);
        true
    }
}
