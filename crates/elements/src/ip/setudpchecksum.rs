//! # SetUDPChecksum
//!
//! Sets the UDP checksum.
//!
//! ## Synopsis
//! `SetUDPChecksum()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects UDP/IP packets with the network header set (CheckIPHeader or
//! MarkIPHeader upstream). Computes the UDP checksum over the IPv4
//! pseudo-header and the datagram, whose length is the UDP length field,
//! and stores it; a computed checksum of 0 is sent as 0xFFFF, since 0
//! means "no checksum" (RFC 768). The IP header is not changed.
//!
//! A packet is dropped, and the first one reported, when it has no valid
//! IP header, is not UDP, is a fragment (the checksum covers the whole
//! datagram), or when its UDP length is below 8 or runs past the IP total
//! length or the data. Click 2.1 checksums non-UDP packets and datagrams
//! with a length below 8 or past the IP total length; rclick drops them.
//! Click 2.1 also sends a computed checksum of 0 as 0.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> StoreIPAddress(10.0.0.1, src) -> SetIPChecksum -> SetUDPChecksum -> ...
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::UdpHeader;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::ipcommon::{exact_payload, ip_hdr, net_off};

const PROTO_UDP: u8 = 17;

#[derive(Default)]
pub struct SetUDPChecksum {
    reported: bool,
}

impl SetUDPChecksum {
    fn bad(&mut self, why: &str, ctx: &mut Ctx) -> Option<Packet> {
        if !self.reported {
            self.reported = true;
            ctx.chatter(&format!("{} :: SetUDPChecksum: {why}", ctx.element_name()));
        }
        None
    }
}

impl SimpleAction for SetUDPChecksum {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let Some(ip) = ip_hdr(&p) else {
            return self.bad("bad input packet", ctx);
        };
        if ip.protocol() != PROTO_UDP {
            return self.bad("not UDP", ctx);
        }
        if ip.is_fragment() {
            return self.bad("fragment or short packet", ctx);
        }
        let hl = ip.header_len();
        let (src, dst) = (ip.src(), ip.dst());
        let Some(payload) = exact_payload(&ip) else {
            return self.bad("fragment or short packet", ctx);
        };
        let ulen = match UdpHeader::new_checked(payload) {
            Ok(u) if (8..=payload.len()).contains(&(u.len() as usize)) => u.len() as usize,
            _ => return self.bad("fragment or short packet", ctx),
        };
        let start = net_off(&p)? + hl;
        let mut udp = UdpHeader::new_unchecked(&mut p.writable()[start..start + ulen]);
        udp.fill_checksum(src, dst);
        Some(p)
    }
}

rclick_core::element_class!(SetUDPChecksum);

impl Element for SetUDPChecksum {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
