//! # UDPIPEncap
//!
//! Encapsulates packets in static UDP/IP headers.
//!
//! ## Synopsis
//! `UDPIPEncap(SRC, SPORT, DST, DPORT [, CHECKSUM])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends a 20-byte IP header and an 8-byte UDP header. The IP header has
//! protocol UDP, TTL 250, an identification counting up from 0, the total
//! length and a correct checksum; the UDP header has the given ports, the
//! UDP length and, if CHECKSUM is true, the UDP checksum over the
//! pseudo-header, header and data (RFC 768; a computed 0 is sent as
//! 0xffff). By default the checksum is 0 (none), as in Click. DST may be `DST_ANNO` to use each packet's destination
//! annotation. The destination annotation and the network header are set.
//!
//! ## Keywords
//! - **SRC**, **DST** (IP address, or AddressInfo name; DST may be
//!   `DST_ANNO`).
//! - **SPORT**, **DPORT** (port number, PortInfo or service name).
//! - **CHECKSUM** (bool): compute the UDP checksum. Default false, as in
//!   Click.
//!
//! ## Handlers
//! - `src`, `sport`, `dst`, `dport` (read/write): the header fields; a
//!   write takes the argument's syntax.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 53) -> ...;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_ipv4, parse_u32, Args};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN as IP_LEN, PROTO_UDP};
use rclick_core::wire::udp::HEADER_LEN as UDP_LEN;
use rclick_core::wire::{Ipv4Header, Ipv4Repr, UdpHeader, UdpRepr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::{parse_ipv4_arg, parse_known_port, parse_port_arg};

pub struct UDPIPEncap {
    src: Ipv4Addr,
    dst: Option<Ipv4Addr>,
    sport: u16,
    dport: u16,
    checksum: bool,
    id: u16,
}

impl Default for UDPIPEncap {
    fn default() -> Self {
        UDPIPEncap {
            src: Ipv4Addr::UNSPECIFIED,
            dst: None,
            sport: 0,
            dport: 0,
            checksum: false,
            id: 0,
        }
    }
}

impl SimpleAction for UDPIPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let dst = self.dst.unwrap_or_else(|| p.dst_ip_anno());
        // Lengths saturate rather than wrap for oversized packets.
        let total = (p.len() + IP_LEN + UDP_LEN).min(0xffff);
        let id = self.id;
        self.id = self.id.wrapping_add(1);
        let ip = Ipv4Repr {
            src: self.src,
            dst,
            protocol: PROTO_UDP,
            payload_len: total - IP_LEN,
            ttl: 250,
            ident: id,
            ..Ipv4Repr::default()
        };
        let udp = UdpRepr {
            src_port: self.sport,
            dst_port: self.dport,
            payload_len: total - IP_LEN - UDP_LEN,
        };
        let h = p.push(IP_LEN + UDP_LEN)?;
        let (iph, udph) = h.split_at_mut(IP_LEN);
        ip.emit(&mut Ipv4Header::new_unchecked(iph));
        udp.emit(&mut UdpHeader::new_unchecked(udph));
        if self.checksum {
            UdpHeader::new_unchecked(&mut p.writable()[IP_LEN..]).fill_checksum(self.src, dst);
        }
        p.set_network_header(0, IP_LEN);
        p.set_dst_ip_anno(dst);
        Some(p)
    }
}

fn read_dst(e: &UDPIPEncap, _ctx: &Ctx) -> String {
    e.dst
        .map_or_else(|| "DST_ANNO".to_string(), |d| d.to_string())
}

fn write_dst(e: &mut UDPIPEncap, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
    let v = value.trim();
    e.dst = if v == "DST_ANNO" {
        None
    } else {
        Some(parse_ipv4(v)?)
    };
    Ok(())
}

fn write_port(v: &str) -> Result<u16, String> {
    let v = v.trim();
    parse_u32(v)
        .ok()
        .and_then(|n| u16::try_from(n).ok())
        .or_else(|| parse_known_port(v).ok())
        .ok_or_else(|| format!("invalid port number '{v}'"))
}

const HANDLERS: &[Handler<UDPIPEncap>] = &[
    Handler::data_rw("src", |e| &e.src, |e| &mut e.src),
    Handler::read_write(
        "sport",
        |e, _| e.sport.to_string(),
        |e, v, _| {
            e.sport = write_port(v)?;
            Ok(())
        },
    ),
    Handler::read_write("dst", read_dst, write_dst),
    Handler::read_write(
        "dport",
        |e, _| e.dport.to_string(),
        |e, v, _| {
            e.dport = write_port(v)?;
            Ok(())
        },
    ),
];

rclick_core::element_class!(UDPIPEncap);

impl Element for UDPIPEncap {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.src = args.read_mp_with("SRC", |s| parse_ipv4_arg(s, ictx));
        self.sport = args.read_mp_with("SPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        let dst = args.read_mp_with("DST", |s| {
            if s == "DST_ANNO" {
                Ok(None)
            } else {
                parse_ipv4_arg(s, ictx).map(Some)
            }
        });
        self.dport = args.read_mp_with("DPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        self.checksum = args.read_p_or("CHECKSUM", false);
        args.complete()?;
        self.dst = dst;
        Ok(())
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
