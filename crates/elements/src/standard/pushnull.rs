//! # PushNull
//!
//! Passes packets unchanged, in push only.
//!
//! ## Synopsis
//! `PushNull`
//!
//! ## Ports and processing
//! One push input, one push output.
//!
//! ## Description
//! Forwards every packet pushed in to its output. The same as
//! [Null](#null), but push: connecting it to a pull port is a configuration
//! error.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! InfiniteSource -> PushNull -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct PushNull;

rclick_core::element_class!(PushNull);

impl Element for PushNull {
    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        ctx.emit_batch(0, batch);
    }
}
