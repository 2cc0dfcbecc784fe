//! # StripToNetworkHeader
//!
//! Strips everything before the network header.
//!
//! ## Synopsis
//! `StripToNetworkHeader()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Moves the start of each packet to its network header (as set by
//! CheckIPHeader, MarkIPHeader, ...): strips the link header in front of
//! it, or puts bytes back if the header lies in the headroom. Packets with
//! no network header pass unchanged.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader(14) -> StripToNetworkHeader -> ...
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct StripToNetworkHeader;

impl SimpleAction for StripToNetworkHeader {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        match p.network_offset() {
            Some(off) if off >= 0 => p.pull(off as usize),
            Some(off) => p.unstrip(off.unsigned_abs()),
            None => {}
        }
        Some(p)
    }
}

rclick_core::element_class!(StripToNetworkHeader);

impl Element for StripToNetworkHeader {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
