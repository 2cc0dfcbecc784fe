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
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct RoundRobinSwitch {
    next: usize,
}

rclick_core::element_class!(RoundRobinSwitch);

impl Element for RoundRobinSwitch {
    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let n = ctx.noutputs().max(1);
        for p in batch {
            let i = self.next;
            self.next = if i + 1 >= n { 0 } else { i + 1 };
            ctx.emit(i, p);
        }
    }
}
