//! # PullTee
//!
//! Duplicates pulled packets to push outputs.
//!
//! ## Synopsis
//! `PullTee([N])`
//!
//! ## Ports and processing
//! One pull input; output 0 is pull, outputs 1 and up are push.
//!
//! ## Description
//! Each time output 0 pulls packets, PullTee pulls them from its input,
//! returns them on output 0, and pushes a clone of each out every other
//! output. Clones share data until written. If N is given, it must equal the
//! number of outputs.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! q :: Queue -> t :: PullTee -> Unqueue -> Discard; t[1] -> Print(copy) -> Discard;
//! ```

use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

use super::tee::{clone_batch, read_arms};

#[derive(Default)]
pub struct PullTee;

rclick_core::element_class!(PullTee);

impl Element for PullTee {
    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "l/lh"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let k = ctx.noutputs();
        match read_arms(conf)? {
            Some(n) if n != k => Err(format!("{k} outputs implies {k} arms").into()),
            _ => Ok(()),
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let batch = ctx.pull(0, max)?;
        for port in 1..ctx.noutputs() {
            ctx.emit_batch(port, clone_batch(&batch));
        }
        Some(batch)
    }
}
