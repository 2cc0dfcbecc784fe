//! # Null
//!
//! Passes packets unchanged.
//!
//! ## Synopsis
//! `Null`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Forwards every packet from its input to its output. Pushed batches are
//! forwarded whole, so a Null costs one handoff per batch.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! InfiniteSource -> Null -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct Null;

rclick_core::element_class!(Null);

impl Element for Null {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        ctx.emit_batch(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        ctx.pull(0, max)
    }
}
