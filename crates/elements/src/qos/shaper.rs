//! # Shaper
//!
//! Shapes traffic to a maximum packet rate.
//!
//! ## Synopsis
//! `Shaper(RATE)`
//!
//! ## Ports and processing
//! One pull input; pull output 0, and an optional pull output 1.
//!
//! ## Description
//! A pull on output 0 pulls a packet from the input only while the packets
//! passed so far are behind RATE packets per second; otherwise it returns
//! nothing. The rate is Click's `GapRate`: packets are spaced evenly within
//! each second, and a Shaper that fell behind (nobody pulled) may catch up
//! with a burst of at most a second's worth. A pull asking for several
//! packets gets only as many as the rate allows at that moment, pulled one
//! by one, so the output is never a batch-sized burst.
//!
//! A pull on output 1 succeeds only while output 0 would not: output 1
//! carries the packets the shaper holds back from output 0, for a
//! scheduler that serves both (`Shaper => RoundRobinSched`).
//!
//! A Shaper has no notifier: a puller downstream polls it while the queue
//! upstream is non-empty.
//!
//! ## Handlers
//! - `rate` (read/write): the rate; writing it reconfigures RATE.
//! - `config` (read/write): reads the current rate.
//! - `reset` (write): forgets the rate's history, so the next pull passes.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> Queue -> Shaper(1000) -> TimedSink(1ms);
//! ```

use rclick_core::conf::{parse_bandwidth, Args, Bandwidth};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

use super::common::{reconfigure_from, GapRate};
use crate::standard::ratedunqueue::unparse_rate;

/// Shaper, or BandwidthShaper when `bandwidth` (bytes per second).
#[derive(Default)]
pub struct Shaper {
    rate: GapRate,
    bandwidth: bool,
}

impl Shaper {
    /// A BandwidthShaper.
    pub fn bandwidth() -> Self {
        Shaper {
            rate: GapRate::default(),
            bandwidth: true,
        }
    }

    fn read_rate(&self, _ctx: &Ctx) -> String {
        unparse_rate(self.rate.rate(), self.bandwidth)
    }
}

// Click's order.
const HANDLERS: &[Handler<Shaper>] = &[
    Handler::read_write("rate", Shaper::read_rate, |e, v, ctx| {
        let base = unparse_rate(e.rate.rate(), e.bandwidth);
        reconfigure_from(e, &base, "RATE", Some(0), v, ctx)
    }),
    Handler::read("config", Shaper::read_rate),
    Handler::write("reset", |e, _, _| {
        e.rate.reset();
        Ok(())
    }),
];

rclick_core::element_class!(Shaper);

impl Element for Shaper {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let rate: u64 = if self.bandwidth {
            let b: Bandwidth = args.read_mp_with("RATE", |s| parse_bandwidth(s).map(Bandwidth));
            b.0
        } else {
            let r: u32 = args.read_mp("RATE");
            u64::from(r)
        };
        args.complete()?;
        let rate = u32::try_from(rate).map_err(|_| "RATE: out of range".to_string())?;
        if rate > GapRate::MAX_RATE {
            ctx.chatter(&format!(
                "{}: While configuring '{}':\n  warning: rate reduced to {}",
                ctx.landmark(),
                ctx.element_name(),
                GapRate::MAX_RATE
            ));
        }
        self.rate.set_rate(rate, ctx.now());
        Ok(())
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let now = ctx.now();
        // Click's BandwidthShaper shapes both outputs alike.
        if port == 1 && !self.bandwidth {
            return if self.rate.need_update(now) {
                None
            } else {
                ctx.pull(0, max)
            };
        }
        // One packet at a time, while the rate allows: never a burst of
        // the batch size.
        let mut out = Batch::new();
        while out.len() < max.min(rclick_core::batch::BATCH_CAPACITY) && self.rate.need_update(now)
        {
            let Some(b) = ctx.pull(0, 1) else { break };
            for p in b {
                let n = if self.bandwidth { p.len() as i32 } else { 1 };
                self.rate.update_with(n);
                out.push(p);
            }
        }
        (!out.is_empty()).then_some(out)
    }
}
