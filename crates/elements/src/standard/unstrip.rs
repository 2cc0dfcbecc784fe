//! # Unstrip
//!
//! Puts bytes back on the front of packets.
//!
//! ## Synopsis
//! `Unstrip(LENGTH)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Moves the start of each packet LENGTH bytes back into the headroom,
//! restoring bytes an earlier Strip removed. If the packet has less
//! headroom than that, room is made and the new bytes are unspecified.
//! A packet that would grow past the longest packet (262144 bytes) is
//! dropped.
//!
//! ## Keywords
//! - **LENGTH** (unsigned): bytes to put back, at most 262144 (checked
//!   when configured; Click accepts any and then fails on every packet).
//!   Mandatory.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> Strip(14) -> CheckIPHeader -> Unstrip(14) -> ...
//! ```

use rclick_core::packet::MAX_PACKET_LEN;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::strip::read_length;

#[derive(Default)]
pub struct Unstrip {
    nbytes: usize,
}

impl SimpleAction for Unstrip {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if p.headroom() >= self.nbytes {
            p.unstrip(self.nbytes);
        } else {
            // Only a packet already near the longest can fail: NBYTES is
            // checked against MAX_PACKET_LEN when configured.
            p.push(self.nbytes)?;
        }
        Some(p)
    }
}

rclick_core::element_class!(Unstrip);

impl Element for Unstrip {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let n = read_length(conf)?;
        if n > MAX_PACKET_LEN {
            return Err(vec![format!(
                "LENGTH: {n} is longer than any packet (at most {MAX_PACKET_LEN} bytes)"
            )]
            .into());
        }
        self.nbytes = n;
        Ok(())
    }
}
