//! # SetTCPChecksum
//!
//! Sets the TCP checksum.
//!
//! ## Synopsis
//! `SetTCPChecksum([FIXOFF])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects TCP/IP packets with the network header set (CheckIPHeader or
//! MarkIPHeader upstream). Computes the TCP checksum over the IPv4
//! pseudo-header and the segment, whose length is the IP total length
//! minus the IP header length, and stores it. Bytes past the IP total
//! length (link padding) are left alone. The IP header is not changed.
//!
//! A packet is dropped, and the first one reported, when it has no valid
//! IP header, when the segment is shorter than a TCP header or runs past
//! the end of the data (`SetTCPChecksum: bad lengths`), when it is not
//! TCP, or when it is a fragment. Click 2.1 checksums non-TCP packets and
//! fragments as if they were whole TCP segments, overwriting bytes of
//! other protocols; rclick drops them instead.
//!
//! ## Keywords
//! - **FIXOFF** (bool): if true, a TCP data offset that runs past the end
//!   of the segment is set to the segment length (rounded down to a
//!   multiple of 4) before the checksum is computed. Default false.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> StoreIPAddress(10.0.0.1, src) -> SetIPChecksum -> SetTCPChecksum -> ...
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::TcpHeader;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, net_off};

const PROTO_TCP: u8 = 6;

#[derive(Default)]
pub struct SetTCPChecksum {
    fixoff: bool,
    reported: bool,
}

impl SetTCPChecksum {
    fn bad(&mut self, why: &str, ctx: &mut Ctx) -> Option<Packet> {
        if !self.reported {
            self.reported = true;
            ctx.chatter(&format!("SetTCPChecksum: {why}"));
        }
        None
    }
}

impl SimpleAction for SetTCPChecksum {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let Some(ip) = ip_hdr(&p) else {
            return self.bad("bad input packet", ctx);
        };
        let hl = ip.header_len();
        let total = ip.total_len() as usize;
        let avail = ip.clone().into_inner().len();
        let (src, dst) = (ip.src(), ip.dst());
        if ip.protocol() != PROTO_TCP {
            return self.bad("not TCP", ctx);
        }
        if ip.is_fragment() {
            return self.bad("fragment", ctx);
        }
        if total < hl + 20 || total > avail {
            return self.bad("bad lengths", ctx);
        }
        let off = net_off(&p)?;
        let seg = &mut p.writable()[off..off + total];
        // The segment holds at least the fixed TCP header; the data offset
        // may be bad (FIXOFF repairs it), so the view is taken unchecked.
        let mut tcp = TcpHeader::new_unchecked(&mut seg[hl..]);
        if self.fixoff && tcp.header_len() > total - hl {
            tcp.set_header_len(total - hl);
        }
        tcp.fill_checksum(src, dst);
        Some(p)
    }
}

rclick_core::element_class!(SetTCPChecksum);

impl Element for SetTCPChecksum {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let fixoff = args.read_p_or("FIXOFF", false);
        args.complete()?;
        self.fixoff = fixoff;
        Ok(())
    }
}
