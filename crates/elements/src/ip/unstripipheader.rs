//! # UnstripIPHeader
//!
//! Restores the IP header stripped by StripIPHeader.
//!
//! ## Synopsis
//! `UnstripIPHeader()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! If the packet's network header lies before the start of its data (in
//! the headroom, as after StripIPHeader), moves the start of the data back
//! to the network header. Other packets pass unchanged.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> StripIPHeader -> ... -> UnstripIPHeader -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct UnstripIPHeader;

impl SimpleAction for UnstripIPHeader {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if let Some(n) = p.network_offset() {
            if n < 0 {
                p.unstrip((-n) as usize);
            }
        }
        Some(p)
    }
}

rclick_core::element_class!(UnstripIPHeader);

impl Element for UnstripIPHeader {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
