//! # UDPIP6Encap
//!
//! Encapsulates packets in UDP/IPv6 headers.
//!
//! ## Synopsis
//! `UDPIP6Encap(SRC, SPORT, DST, DPORT)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends an IPv6 header (hop limit 255, next header UDP, from SRC to
//! DST) and a UDP header (SPORT to DPORT, length, checksum over the IPv6
//! pseudo-header, RFC 8200 section 8.1) to each packet, marks the IPv6
//! header as the network header, and sets the destination IPv6 annotation
//! to DST. DST may be `DST_ANNO`: the destination is then each packet's
//! destination IPv6 annotation. A computed checksum of 0 is sent as
//! 0xffff, since 0 means "no checksum", which IPv6 forbids for UDP (Click
//! sends 0).
//!
//! ## Keywords
//! - **SRC**, **DST** (IPv6 addresses; DST may be `DST_ANNO`).
//! - **SPORT**, **DPORT** (UDP ports, numbers or service names).
//!
//! ## Handlers
//! - `src`, `sport`, `dst`, `dport` (read/write): the arguments; writing
//!   reconfigures.
//!
//! ## Example
//! ```click
//! InfiniteSource(DATA "hello") -> UDPIP6Encap(2001:db8::1, 1234, 2001:db8::2, 1234)
//!   -> EtherEncap(0x86dd, 00:00:00:00:00:01, 00:00:00:00:00:02) -> ...;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::Args;
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::wire::checksum;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_UDP};
use rclick_core::wire::{Ipv6Header, Ipv6Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::{fmt_ip6, parse_ipv6_arg};
use crate::ip::address::parse_port_arg;

const UDP_LEN: usize = 8;

pub struct UDPIP6Encap {
    src: Ipv6Addr,
    dst: Ipv6Addr,
    sport: u16,
    dport: u16,
    use_dst_anno: bool,
}

impl Default for UDPIP6Encap {
    fn default() -> Self {
        UDPIP6Encap {
            src: Ipv6Addr::UNSPECIFIED,
            dst: Ipv6Addr::UNSPECIFIED,
            sport: 0,
            dport: 0,
            use_dst_anno: false,
        }
    }
}

impl SimpleAction for UDPIP6Encap {
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let ulen = u16::try_from(p.len() + UDP_LEN).ok()?;
        let dst = if self.use_dst_anno {
            p.dst_ip6_anno()
        } else {
            self.dst
        };
        let b = p.push(HEADER_LEN + UDP_LEN)?;
        Ipv6Repr {
            src: self.src,
            dst,
            next_header: PROTO_UDP,
            payload_len: ulen.into(),
            hop_limit: 255,
            ..Ipv6Repr::default()
        }
        .emit(&mut Ipv6Header::new_unchecked(&mut b[..HEADER_LEN]));
        let u = &mut b[HEADER_LEN..];
        u[..2].copy_from_slice(&self.sport.to_be_bytes());
        u[2..4].copy_from_slice(&self.dport.to_be_bytes());
        u[4..6].copy_from_slice(&ulen.to_be_bytes());
        u[6..8].fill(0);
        // Over the UDP header and the payload (`push` gave the new bytes).
        let mut c = checksum::pseudo_checksum(self.src, dst, PROTO_UDP, &p.data()[HEADER_LEN..]);
        if c == 0 {
            c = 0xffff;
        }
        p.writable()[HEADER_LEN + 6..HEADER_LEN + 8].copy_from_slice(&c.to_be_bytes());
        p.set_network_header(0, HEADER_LEN);
        if !self.use_dst_anno {
            p.set_dst_ip6_anno(dst);
        }
        Some(p)
    }
}

// Click's order of adding them (the listing shows the newest first).
const HANDLERS: &[Handler<UDPIP6Encap>] = &[
    Handler::read_write(
        "src",
        |e, _| fmt_ip6(e.src),
        |e, v, ctx| reconfigure_keyword(e, "SRC", Some(0), v, ctx),
    ),
    Handler::read_write(
        "sport",
        |e, _| e.sport.to_string(),
        |e, v, ctx| reconfigure_keyword(e, "SPORT", Some(1), v, ctx),
    ),
    Handler::read_write(
        "dst",
        |e, _| fmt_ip6(e.dst),
        |e, v, ctx| reconfigure_keyword(e, "DST", Some(2), v, ctx),
    ),
    Handler::read_write(
        "dport",
        |e, _| e.dport.to_string(),
        |e, v, ctx| reconfigure_keyword(e, "DPORT", Some(3), v, ctx),
    ),
];

rclick_core::element_class!(UDPIP6Encap);

impl Element for UDPIP6Encap {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: Ipv6Addr = args.read_mp_with("SRC", |s| parse_ipv6_arg(s, ictx));
        let sport: u16 = args.read_mp_with("SPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        let dst: String = args.read_mp_with("DST", |s| Ok(s.to_string()));
        let dport: u16 = args.read_mp_with("DPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        args.complete()?;
        let use_dst_anno = dst == "DST_ANNO";
        let dst = if use_dst_anno {
            Ipv6Addr::UNSPECIFIED
        } else {
            parse_ipv6_arg(&dst, ctx).map_err(|_| "bad DST".to_string())?
        };
        *self = UDPIP6Encap {
            src,
            dst,
            sport,
            dport,
            use_dst_anno,
        };
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
