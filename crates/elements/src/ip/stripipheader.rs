//! # StripIPHeader
//!
//! Strips everything up to the transport header.
//!
//! ## Synopsis
//! `StripIPHeader()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Removes the bytes from the start of the packet up to its transport
//! header (the end of the IP header marked by CheckIPHeader or
//! MarkIPHeader), e.g. to decapsulate IP-in-IP. The header stays in the
//! headroom, so UnstripIPHeader can restore it. Packets without a network
//! header pass unchanged.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> StripIPHeader -> CheckIPHeader -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct StripIPHeader;

impl SimpleAction for StripIPHeader {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if let Some(t) = p.transport_offset() {
            if t > 0 {
                p.pull(t as usize);
            }
        }
        Some(p)
    }
}

rclick_core::element_class!(StripIPHeader);

impl Element for StripIPHeader {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
