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
//! With `-j N`, a Null reached from several threads runs as one copy per
//! thread.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! InfiniteSource -> Null -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::{Observe, PerThread};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

#[derive(Default)]
pub struct Null;

impl Observe for Null {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    #[inline]
    fn observe(&mut self, _p: &Packet, _ctx: &mut Ctx) {}
}

rclick_core::element_class!(Null);

impl PerThread for Null {
    const SUMMED: &'static [&'static str] = &[];

    fn fresh_copy(&self) -> Option<Self> {
        Some(Null)
    }

    fn absorb(&mut self, _copy: Self) {}
}

impl Element for Null {
    rclick_core::element_kind!(observe);
    rclick_core::per_thread!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
