//! # MarkIPCE
//!
//! Sets IP packets' ECN field to Congestion Experienced.
//!
//! ## Synopsis
//! `MarkIPCE([FORCE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set. Sets each packet's ECN
//! field (the low two bits of the TOS byte) to Congestion Experienced
//! (value 3, RFC 3168), updates the IP checksum incrementally (RFC 1624),
//! and passes the packet on. A packet whose ECN field is 0 (the sender is
//! not ECN-capable) is dropped and counted, unless FORCE is true; then it is
//! marked too. Packets already marked pass unchanged. Packets without an
//! IP header at the network header are dropped and counted.
//!
//! ## Keywords
//! - **FORCE** (bool): mark packets that are not ECN-capable instead of
//!   dropping them. Default false.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> MarkIPCE -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::checksum::update16;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, ip_hdr_mut};

/// The Congestion Experienced codepoint (RFC 3168).
const ECN_CE: u8 = 3;

#[derive(Default)]
pub struct MarkIPCE {
    force: bool,
    drops: u64,
}

impl SimpleAction for MarkIPCE {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let ecn = match ip_hdr(&p) {
            Some(ip) => ip.ecn(),
            None => {
                self.drops += 1;
                return None;
            }
        };
        if ecn == 0 && !self.force {
            self.drops += 1;
            return None;
        }
        if ecn != ECN_CE {
            if let Some(mut ip) = ip_hdr_mut(&mut p) {
                // The TOS byte is the low half of the header's first word.
                let old = u16::from_be_bytes([ip.header()[0], ip.tos()]);
                ip.set_ecn(ECN_CE);
                let new = u16::from_be_bytes([ip.header()[0], ip.tos()]);
                let c = update16(ip.checksum(), old, new);
                ip.set_checksum(c);
            }
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<MarkIPCE>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(MarkIPCE);

impl Element for MarkIPCE {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.force = args.read_p_or("FORCE", false);
        args.complete()?;
        Ok(())
    }
}
