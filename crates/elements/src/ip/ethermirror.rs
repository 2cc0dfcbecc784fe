//! # EtherMirror
//!
//! Swaps the Ethernet source and destination addresses.
//!
//! ## Synopsis
//! `EtherMirror()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Exchanges each frame's Ethernet source and destination addresses, so
//! the frame can be sent back where it came from. The type and payload are
//! left alone. Frames shorter than an Ethernet header (14 bytes) are
//! dropped (Click swaps bytes past the end of such frames).
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> EtherMirror -> Queue -> ToDevice(eth0);
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::EtherFrame;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct EtherMirror;

impl SimpleAction for EtherMirror {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let (src, dst) = {
            let f = EtherFrame::new_checked(p.data()).ok()?;
            (f.src(), f.dst())
        };
        let mut f = EtherFrame::new_unchecked(p.writable());
        f.set_src(dst);
        f.set_dst(src);
        Some(p)
    }
}

rclick_core::element_class!(EtherMirror);

impl Element for EtherMirror {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
