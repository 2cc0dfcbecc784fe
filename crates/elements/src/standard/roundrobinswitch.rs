//! # RoundRobinSwitch
//!
//! Sends packets to its outputs in turn.
//!
//! ## Synopsis
//! `RoundRobinSwitch()`
//!
//! ## Ports and processing
//! One push input, one or more push outputs.
//!
//! ## Description
//! Sends the first packet out output 0, the next out output 1, and so on,
//! wrapping around after the last output. The rotation continues across
//! batches, so the split is exactly per packet.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> rr :: RoundRobinSwitch; rr[0] -> q0 :: Queue; rr[1] -> q1 :: Queue;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

#[derive(Default)]
pub struct RoundRobinSwitch {
    next: usize,
    noutputs: usize,
}

impl Classify for RoundRobinSwitch {
    #[inline]
    fn classify(&mut self, _p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        let i = self.next;
        self.next = if i + 1 >= self.noutputs { 0 } else { i + 1 };
        Some(i)
    }
}

rclick_core::element_class!(RoundRobinSwitch);

impl Element for RoundRobinSwitch {
    rclick_core::element_kind!(classify);

    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        self.noutputs = ctx.noutputs().max(1);
        Ok(())
    }
}
