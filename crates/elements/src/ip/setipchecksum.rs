//! # SetIPChecksum
//!
//! Sets the IP header checksum.
//!
//! ## Synopsis
//! `SetIPChecksum()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader or
//! MarkIPHeader upstream). Recomputes the IP header checksum, over the
//! header length the header names, and passes the packet on. The total
//! length is not checked.
//!
//! A packet without a network header, or whose header is shorter than 20
//! bytes, is not version 4, or names a header length past the end of the
//! data, is dropped and counted; the first such packet is reported
//! (`SetIPChecksum: bad input packet`). Click 2.1 does not check the
//! version: it writes an IPv4 checksum into a version-6 header, over bytes
//! of its source address; rclick drops such packets.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//!
//! ## Example
//! ```click
//! ... -> StoreIPAddress(10.0.0.1, src) -> SetIPChecksum -> ...
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, ip_hdr_mut};

#[derive(Default)]
pub struct SetIPChecksum {
    drops: u64,
}

impl SimpleAction for SetIPChecksum {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        // Check before making the packet writable: no copy for a drop.
        if ip_hdr(&p).is_none() {
            if self.drops == 0 {
                ctx.chatter("SetIPChecksum: bad input packet");
            }
            self.drops += 1;
            return None;
        }
        ip_hdr_mut(&mut p)?.fill_checksum();
        Some(p)
    }
}

const HANDLERS: &[Handler<SetIPChecksum>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(SetIPChecksum);

impl Element for SetIPChecksum {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
