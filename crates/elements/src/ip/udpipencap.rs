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
//! UDP length and, if CHECKSUM is true (the default), the UDP checksum over
//! the pseudo-header, header and data (RFC 768; a computed 0 is sent as
//! 0xffff). DST may be `DST_ANNO` to use each packet's destination
//! annotation. The destination annotation and the network header are set.
//!
//! ## Keywords
//! - **SRC**, **DST** (IP address, or AddressInfo name; DST may be
//!   `DST_ANNO`).
//! - **SPORT**, **DPORT** (port number, PortInfo or service name).
//! - **CHECKSUM** (bool): compute the UDP checksum. Default true.
//!
//! ## Handlers
//! - `src`, `sport`, `dst`, `dport` (read): the header fields.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 53) -> ...;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::element::HandlerSpec;
use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::PROTO_UDP;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::{parse_ipv4_arg, parse_port_arg};

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
            checksum: true,
            id: 0,
        }
    }
}

impl SimpleAction for UDPIPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let dst = self.dst.unwrap_or_else(|| p.dst_ip_anno());
        let total = (p.len() + 28).min(0xffff) as u16;
        let ulen = total - 20;
        let id = self.id;
        self.id = self.id.wrapping_add(1);
        let (src_o, dst_o) = (self.src.octets(), dst.octets());
        let h = p.push(28);
        h[0] = 0x45;
        h[1] = 0;
        h[2..4].copy_from_slice(&total.to_be_bytes());
        h[4..6].copy_from_slice(&id.to_be_bytes());
        h[6..8].fill(0);
        h[8] = 250;
        h[9] = PROTO_UDP;
        h[10..12].fill(0);
        h[12..16].copy_from_slice(&src_o);
        h[16..20].copy_from_slice(&dst_o);
        let c = checksum::checksum(&h[..20]);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h[20..22].copy_from_slice(&self.sport.to_be_bytes());
        h[22..24].copy_from_slice(&self.dport.to_be_bytes());
        h[24..26].copy_from_slice(&ulen.to_be_bytes());
        h[26..28].fill(0);
        if self.checksum {
            let ps = checksum::pseudo_header_v4(src_o, dst_o, PROTO_UDP, ulen);
            let data = p.data();
            let end = (20 + ulen as usize).min(data.len());
            let mut c = !(checksum::sum(&data[20..end], ps) as u16);
            if c == 0 {
                c = 0xffff;
            }
            p.writable()[26..28].copy_from_slice(&c.to_be_bytes());
        }
        p.set_network_header(0, 20);
        p.set_dst_ip_anno(dst);
        Some(p)
    }
}

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
        self.checksum = args.read_p_or("CHECKSUM", true);
        args.complete()?;
        self.dst = dst;
        Ok(())
    }

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        ["src", "sport", "dst", "dport"]
            .iter()
            .map(|n| HandlerSpec::read(n))
            .collect()
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "src" => Ok(self.src.to_string()),
            "sport" => Ok(self.sport.to_string()),
            "dst" => Ok(self
                .dst
                .map_or_else(|| "DST_ANNO".to_string(), |d| d.to_string())),
            "dport" => Ok(self.dport.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }
}
