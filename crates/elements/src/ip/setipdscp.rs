//! # SetIPDSCP
//!
//! Sets the IP header's DSCP field.
//!
//! ## Synopsis
//! `SetIPDSCP(DSCP)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set. Sets the
//! differentiated services code point (the upper 6 bits of the TOS byte)
//! to DSCP, keeps the ECN bits, and updates the IP checksum incrementally
//! (RFC 1624). Packets without an IP header at the network header are
//! dropped and counted.
//!
//! ## Keywords
//! - **DSCP** (integer 0-63): the code point.
//!
//! ## Handlers
//! - `dscp` (read/write): the code point.
//! - `drops` (read): packets dropped for want of an IP header (rclick
//!   extension).
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> SetIPDSCP(46) -> ...;
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::hflags;
use rclick_core::wire::checksum::update16;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, ip_hdr_mut};

#[derive(Default)]
pub struct SetIPDSCP {
    dscp: u8,
    drops: u64,
}

fn parse_dscp(s: &str) -> Result<u8, String> {
    match parse_u32(s.trim()) {
        Ok(n) if n <= 63 => Ok(n as u8),
        Ok(_) => Err("diffserv code point out of range".into()),
        Err(_) => Err("DSCP: expected unsigned integer".into()),
    }
}

impl SimpleAction for SetIPDSCP {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if ip_hdr(&p).is_none() {
            self.drops += 1;
            return None;
        }
        if let Some(mut ip) = ip_hdr_mut(&mut p) {
            // The TOS byte is the low half of the header's first word.
            let old = u16::from_be_bytes([ip.header()[0], ip.tos()]);
            ip.set_dscp(self.dscp);
            let new = u16::from_be_bytes([ip.header()[0], ip.tos()]);
            let c = update16(ip.checksum(), old, new);
            ip.set_checksum(c);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<SetIPDSCP>] = &[
    // rclick's addition, listed after Click's.
    Handler::data("drops", |e| &e.drops),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "dscp",
            |e, _| e.dscp.to_string(),
            |e, v, _| {
                e.dscp = parse_dscp(v)?;
                Ok(())
            },
        ),
    ),
];

rclick_core::element_class!(SetIPDSCP);

impl Element for SetIPDSCP {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let dscp: u32 = args.read_mp("DSCP");
        args.complete()?;
        self.dscp = parse_dscp(&dscp.to_string())?;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
