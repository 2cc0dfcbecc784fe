//! # Tee
//!
//! Duplicates packets to every output.
//!
//! ## Synopsis
//! `Tee([N])`
//!
//! ## Ports and processing
//! One push input, one or more push outputs.
//!
//! ## Description
//! Sends a clone of each packet to outputs 0 .. N-2 and the original to
//! output N-1. Clones share the packet data until one of them is written
//! (copy on write), so a Tee copies headers, not data. If N is given, it
//! must equal the number of outputs.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! src -> t :: Tee(2); t[0] -> Print(a) -> Discard; t[1] -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct Tee;

rclick_core::element_class!(Tee);

impl Element for Tee {
    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let n: Option<usize> = args.read_p("N");
        args.complete()?;
        if let Some(n) = n {
            if n != ctx.noutputs() {
                return Err(format!("{n} outputs implies {n} arms").into());
            }
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let n = ctx.noutputs();
        for port in 0..n.saturating_sub(1) {
            let mut copy = Batch::new();
            for p in batch.packets() {
                copy.push(p.clone());
            }
            ctx.emit_batch(port, copy);
        }
        ctx.emit_batch(n.saturating_sub(1), batch);
    }
}
