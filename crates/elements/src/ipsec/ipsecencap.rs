//! # IPsecEncap
//!
//! Encapsulates ESP packets in an IP header addressed to the tunnel's
//! other end.
//!
//! ## Synopsis
//! `IPsecEncap(PROTO)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! The last step of Click's outbound IPsec path: prepends a 20-byte IPv4
//! header with protocol PROTO (a number or a name such as `tcp`; 50 for
//! ESP), TTL 250, TOS 0, no fragment bits, source 0.0.0.0 and destination
//! the packet's destination address annotation: RadixIPsecLookup set it
//! to the tunneled route's gateway, the far end of the tunnel. The IP
//! length and checksum are computed; the IP ID counts up from 0. The
//! packet's FIX_IP_SRC annotation is set, so that a FixIPSrc on the way
//! out fills in the sending interface's address, and its network header
//! is the new IP header.
//!
//! ## Keywords
//! - `PROTO`: the IP protocol.
//!
//! ## Handlers
//! None beyond the standard ones (`config` can be written).
//!
//! ## Example
//! ```click
//! ... -> IPsecAES(1) -> IPsecEncap(50) -> [0]rt;
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ipv4::MIN_HEADER_LEN as IP_LEN;
use rclick_core::wire::{Ipv4Header, Ipv4Repr};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use crate::ip::address::parse_ip_proto;

pub struct IPsecEncap {
    iph: Ipv4Repr<'static>,
}

impl Default for IPsecEncap {
    fn default() -> Self {
        IPsecEncap {
            iph: Ipv4Repr {
                ttl: 250,
                ..Ipv4Repr::default()
            },
        }
    }
}

impl SimpleAction for IPsecEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        self.iph.dst = p.dst_ip_anno();
        self.iph.payload_len = (p.len() + IP_LEN).min(0xffff) - IP_LEN;
        self.iph
            .emit(&mut Ipv4Header::new_unchecked(p.push(IP_LEN)?));
        self.iph.ident = self.iph.ident.wrapping_add(1);
        p.set_fix_ip_src_anno(true);
        p.set_network_header(0, IP_LEN);
        Some(p)
    }
}

rclick_core::element_class!(IPsecEncap);

impl Element for IPsecEncap {
    rclick_core::element_kind!(action);

    // Click lets `config` be written; the IP ID continues.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let proto: u32 = args.read_mp_with("PROTO", |s| match parse_ip_proto(s) {
            Ok(p) => Ok(u32::from(p)),
            Err(_) => rclick_core::conf::parse_u32(s).map_err(|_| "invalid number".to_string()),
        });
        args.complete()?;
        self.iph.protocol = u8::try_from(proto).map_err(|_| "bad IP protocol".to_string())?;
        Ok(())
    }
}
