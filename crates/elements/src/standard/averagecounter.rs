//! # AverageCounter
//!
//! Counts packets and bytes, and their average rates since the first.
//!
//! ## Synopsis
//! `AverageCounter([IGNORE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Passes packets unchanged, counting them and their bytes. The rates are
//! averages over the whole run: the count divided by the time from the
//! first packet to the last, in Click's jiffies (milliseconds), so that a
//! burst followed by silence keeps its rate (Counter's rates decay
//! instead). Packets within IGNORE seconds of the first are not counted,
//! and the rates leave that time out, so a warm-up can be ignored.
//!
//! ## Keyword arguments
//! - `IGNORE` (unsigned, seconds; default 0).
//!
//! ## Handlers
//! - `count`, `byte_count` (read): packets and bytes counted.
//! - `rate`, `byte_rate` (read): packets and bytes per second, from the
//!   first packet (plus IGNORE) to the last, printed as C's `%.12g`; a
//!   span under one millisecond counts as one.
//! - `reset` (write): forgets every count and the first packet's time.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> ac :: AverageCounter(IGNORE 2) -> Discard;
//! // click ... -h ac.rate
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Observe;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::scriptlang::fmt_g;

#[derive(Default)]
pub struct AverageCounter {
    /// IGNORE, in jiffies (milliseconds).
    ignore: u32,
    count: u64,
    byte_count: u64,
    /// Jiffies of the first packet; 0 while none came (as Click's).
    first: u32,
    last: u32,
}

/// Click's jiffies at user level: milliseconds of the router's clock,
/// wrapping as Click's 32-bit counter does.
fn jiffies(ctx: &Ctx) -> u32 {
    (ctx.now().nanos() / 1_000_000) as u32
}

impl Observe for AverageCounter {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        let now = jiffies(ctx);
        if self.first == 0 {
            self.first = now;
        }
        if now.wrapping_sub(self.first) >= self.ignore {
            self.count += 1;
            self.byte_count += p.len() as u64;
        }
        self.last = now;
    }
}

impl AverageCounter {
    fn rate(&self, count: u64) -> String {
        let span = self
            .last
            .wrapping_sub(self.first)
            .wrapping_sub(self.ignore)
            .max(1);
        // Click keeps its counts in 32 bits where it computes the rate.
        fmt_g(f64::from(count as u32) * 1000.0 / f64::from(span), 12)
    }

    fn reset(&mut self, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        (self.count, self.byte_count, self.first, self.last) = (0, 0, 0, 0);
        Ok(())
    }
}

rclick_core::element_class!(AverageCounter);

const HANDLERS: &[Handler<AverageCounter>] = &[
    Handler::data("count", |e| &e.count),
    Handler::data("byte_count", |e| &e.byte_count),
    Handler::read("rate", |e, _| e.rate(e.count)),
    Handler::read("byte_rate", |e, _| e.rate(e.byte_count)),
    Handler::button("reset", AverageCounter::reset),
];

impl Element for AverageCounter {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let ignore = args.read_p::<u32>("IGNORE");
        args.complete()?;
        self.ignore = ignore.unwrap_or(0).saturating_mul(1000);
        Ok(())
    }
}
