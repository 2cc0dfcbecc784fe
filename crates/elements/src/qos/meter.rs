//! # Meter
//!
//! Classifies packets by the recent packet rate.
//!
//! ## Synopsis
//! `Meter(RATE1, RATE2, ..., RATEn)`
//!
//! ## Ports and processing
//! One push input; n + 1 push outputs.
//!
//! ## Description
//! Keeps a moving average of the rate of packets arriving, in packets per
//! second, and sends each packet to output 0 while the rate is below RATE1,
//! to output 1 while it is at least RATE1 and below RATE2, ..., and to
//! output n at or above RATEn. The rates must increase. The average is
//! Click's `RateEWMA` exactly: packets are counted per millisecond and each
//! millisecond's count enters an average with weight 1/16 kept with 10 bits
//! of fraction, so the meter reacts within a few tens of milliseconds.
//!
//! As in Click, the arguments are read as bandwidths (a number without
//! units, with a warning; a unit such as `Bps` is accepted and ignored)
//! and at most 4194303.
//!
//! ## Handlers
//! - `rate` (read): the current average rate.
//! - `meters` (read): the thresholds, as Click prints them (several are
//!   printed one after another with nothing between, as Click does).
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> m :: Meter(1000) -> Discard; m[1] -> Discard;
//! ```

use rclick_core::conf::{bandwidth_has_unit, parse_bandwidth, split_args};
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{unparse_real2, RateEwma, EWMA_SCALE};
use crate::standard::tokenbucket::jiffies;

/// Meter, or BandwidthMeter when `bandwidth` (bytes rather than packets).
#[derive(Default)]
pub struct Meter {
    bandwidth: bool,
    /// Thresholds in units per jiffy, with 10 bits of fraction.
    meters: Vec<u32>,
    rate: RateEwma,
}

impl Meter {
    /// A BandwidthMeter.
    pub fn bandwidth() -> Self {
        Meter {
            bandwidth: true,
            ..Meter::default()
        }
    }

    fn read_rate(&self, ctx: &Ctx) -> String {
        let mut r = self.rate;
        r.update(0, jiffies(ctx.now()));
        unparse_real2(u64::from(r.scaled_average().wrapping_mul(1000)), EWMA_SCALE)
    }

    fn read_meters(&self, _ctx: &Ctx) -> String {
        self.meters
            .iter()
            .map(|m| unparse_real2(u64::from(m.wrapping_mul(1000)), EWMA_SCALE))
            .collect()
    }
}

impl Classify for Meter {
    #[inline]
    fn classify(&mut self, p: &Packet, ctx: &mut Ctx) -> Option<usize> {
        let delta = if self.bandwidth { p.len() as u32 } else { 1 };
        self.rate.update(delta, jiffies(ctx.now()));
        let r = self.rate.scaled_average();
        Some(
            self.meters
                .iter()
                .position(|&m| r < m)
                .unwrap_or(self.meters.len()),
        )
    }
}

// Click's order.
const HANDLERS: &[Handler<Meter>] = &[
    Handler::read("rate", Meter::read_rate),
    Handler::read("meters", Meter::read_meters),
];

rclick_core::element_class!(Meter);

impl Element for Meter {
    rclick_core::element_kind!(classify);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/2-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        // Warnings go out with the first error, under one heading, as
        // Click's error handler prints them; alone if all is well.
        let mut warnings: Vec<String> = Vec::new();
        let result = self.read_meters_config(conf, ctx, &mut warnings);
        match result {
            Ok(()) => {
                for w in warnings {
                    ctx.warning(w);
                }
                Ok(())
            }
            Err(e) => {
                let mut msgs: Vec<String> =
                    warnings.iter().map(|w| format!("warning: {w}")).collect();
                msgs.push(e);
                Err(msgs.into())
            }
        }
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.rate = RateEwma::new(jiffies(ctx.now()));
        Ok(())
    }
}

impl Meter {
    fn read_meters_config(
        &mut self,
        conf: &str,
        ctx: &InitCtx,
        warnings: &mut Vec<String>,
    ) -> Result<(), String> {
        let args = split_args(conf);
        if args.is_empty() {
            return Err("too few arguments to BandwidthMeter(bandwidth, ...)".into());
        }
        let mut vals: Vec<u64> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let v = parse_bandwidth(a.trim())
                .ok()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("argument {} syntax error", i + 1))?;
            if i > 0 && u64::from(v) <= vals[i - 1] {
                return Err(format!("rate {} must be > rate {}", i + 1, i));
            }
            if !bandwidth_has_unit(a.trim()) {
                warnings.push(format!(
                    "no units for bandwidth argument {}, assuming Bps",
                    i + 1
                ));
            }
            vals.push(u64::from(v));
        }
        let max_value = u32::MAX >> EWMA_SCALE;
        let mut meters = Vec::with_capacity(vals.len());
        for (i, v) in vals.iter().enumerate() {
            if *v > u64::from(max_value) {
                return Err(format!("rate {} too large (max {max_value})", i + 1));
            }
            meters.push(((v << EWMA_SCALE) / 1000) as u32);
        }
        if meters.len() + 1 != ctx.noutputs() {
            return Err(format!(
                "need {} arguments, one less than the number of output ports",
                ctx.noutputs().saturating_sub(1)
            ));
        }
        self.meters = meters;
        Ok(())
    }
}
