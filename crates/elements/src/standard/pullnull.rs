//! # PullNull
//!
//! Passes packets unchanged, in pull only.
//!
//! ## Synopsis
//! `PullNull`
//!
//! ## Ports and processing
//! One pull input, one pull output.
//!
//! ## Description
//! Returns whatever a pull on its input returns. The same as
//! [Null](#null), but pull: connecting it to a push port is a configuration
//! error.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! q :: Queue -> PullNull -> Unqueue -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct PullNull;

rclick_core::element_class!(PullNull);

impl Element for PullNull {
    fn processing(&self) -> &'static str {
        processing::PULL
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        ctx.pull(0, max)
    }
}
