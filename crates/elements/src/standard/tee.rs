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

/// A batch of clones of `batch`'s packets (sharing their data).
pub fn clone_batch(batch: &Batch) -> Batch {
    let mut copy = Batch::new();
    for p in batch.packets() {
        copy.push(p.clone());
    }
    copy
}

/// Reads Tee's and PullTee's optional `N`, the number of outputs.
pub fn read_arms(conf: &str) -> Result<Option<usize>, Vec<String>> {
    let mut args = Args::new(conf);
    let n: Option<usize> = args.read_p("N");
    args.complete()?;
    Ok(n)
}

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
        match read_arms(conf)? {
            // Click's wording, which names the output count twice.
            Some(n) if n != ctx.noutputs() => {
                let k = ctx.noutputs();
                Err(format!("{k} outputs implies {k} arms").into())
            }
            _ => Ok(()),
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let n = ctx.noutputs();
        for port in 0..n.saturating_sub(1) {
            ctx.emit_batch(port, clone_batch(&batch));
        }
        ctx.emit_batch(n.saturating_sub(1), batch);
    }
}
