//! # IPEncap
//!
//! Encapsulates packets in a static IP header.
//!
//! ## Synopsis
//! `IPEncap(PROTO, SRC, DST, [keywords TOS, TTL, DSCP, ECT, CE, DF])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends a 20-byte IP header: version 4, protocol PROTO, source SRC,
//! destination DST, TTL 250 unless TTL is given, the total length of the
//! result, an identification that counts up from 0, and a correct header
//! checksum. DST may be `DST_ANNO`: the destination is then each packet's
//! destination IP annotation. Otherwise the destination annotation is set
//! to DST. The network header is set to the new header. Used for IP-in-IP
//! tunnels (protocol 4) and the like.
//!
//! ## Keywords
//! - **PROTO** (protocol number or name: `tcp`, `udp`, `icmp`, `ipip`, ...).
//! - **SRC** (IP address, or AddressInfo name).
//! - **DST** (IP address, AddressInfo name, or `DST_ANNO`).
//! - **TOS** (0-255): type of service byte. Default 0.
//! - **DSCP** (0-63): differentiated services code point (not with TOS).
//! - **ECT** (bool or `2`): set ECN-capable transport ECT(1) (true) or
//!   ECT(0) (`2`).
//! - **CE** (bool): set the ECN congestion-experienced bits.
//! - **TTL** (0-255): time to live. Default 250.
//! - **DF** (bool): set the don't-fragment flag. Default false.
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses (`dst` may read `DST_ANNO`).
//!
//! ## Example
//! ```click
//! ... -> IPEncap(4, 18.26.4.24, 140.247.60.147) -> ...;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_ipv4, parse_keyword, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::wire::checksum;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::{parse_ip_proto, parse_ipv4_arg};

#[derive(Default)]
pub struct IPEncap {
    /// The template header, checksum zero.
    iph: [u8; 20],
    use_dst_anno: bool,
    id: u16,
}

enum Dst {
    Anno,
    Addr(Ipv4Addr),
}

impl IPEncap {
    fn set_dst(&mut self, d: Dst) {
        match d {
            Dst::Anno => {
                self.use_dst_anno = true;
                self.iph[16..20].fill(0);
            }
            Dst::Addr(a) => {
                self.use_dst_anno = false;
                self.iph[16..20].copy_from_slice(&a.octets());
            }
        }
    }
}

impl SimpleAction for IPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let total = p.len() + 20;
        let dst = if self.use_dst_anno {
            p.dst_ip_anno().octets()
        } else {
            let d = &self.iph[16..20];
            [d[0], d[1], d[2], d[3]]
        };
        let id = self.id;
        self.id = self.id.wrapping_add(1);
        let h = p.push(20);
        h.copy_from_slice(&self.iph);
        h[2..4].copy_from_slice(&(total.min(0xffff) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&id.to_be_bytes());
        h[16..20].copy_from_slice(&dst);
        let c = checksum::checksum(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        p.set_network_header(0, 20);
        p.set_dst_ip_anno(Ipv4Addr::from(dst));
        Some(p)
    }
}

fn parse_dst(s: &str, ctx: &InitCtx) -> Result<Dst, String> {
    if s == "DST_ANNO" {
        Ok(Dst::Anno)
    } else {
        parse_ipv4_arg(s, ctx)
            .map(Dst::Addr)
            .map_err(|_| "DST argument should be IP address or 'DST_ANNO'".to_string())
    }
}

rclick_core::element_class!(IPEncap);

impl Element for IPEncap {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let proto: u8 = args.read_mp_with("PROTO", parse_ip_proto);
        let src: Ipv4Addr = args.read_mp_with("SRC", |s| parse_ipv4_arg(s, ictx));
        let dst = args.read_p_with("DST", |s| parse_dst(s, ictx));
        let tos: Option<u8> = args.read("TOS");
        let ttl: u8 = args.read_or("TTL", 250);
        let dscp: Option<u8> = args.read("DSCP");
        let ect = args.read_with("ECT", parse_keyword);
        let ce = args.read_or("CE", false);
        let df = args.read_or("DF", false);
        if dst.is_none() && args.is_ok() {
            args.error("DST: required argument missing");
        }
        args.complete()?;
        let ect = match ect.as_deref() {
            None => 0,
            Some("2") => 2,
            Some(s) => parse_bool(s).map_err(|_| format!("bad ECT value '{s}'"))? as u8,
        };
        if tos.is_some() && dscp.is_some() {
            return Err("cannot set both TOS and DSCP".into());
        }
        if tos.is_some() && (ect != 0 || ce) {
            return Err("cannot set both TOS and ECN bits".into());
        }
        if dscp.is_some_and(|d| d > 63) {
            return Err("DSCP too large; max 63".into());
        }
        if ect != 0 && ce {
            return Err("can set at most one ECN option".into());
        }
        let mut t = tos.unwrap_or(0);
        if let Some(d) = dscp {
            t = d << 2;
        }
        match ect {
            1 => t |= 0x01,
            2 => t |= 0x02,
            _ => {}
        }
        if ce {
            t |= 0x03;
        }
        let mut h = [0u8; 20];
        h[0] = 0x45;
        h[1] = t;
        if df {
            h[6] = 0x40;
        }
        h[8] = ttl;
        h[9] = proto;
        h[12..16].copy_from_slice(&src.octets());
        self.iph = h;
        if let Some(d) = dst {
            self.set_dst(d);
        }
        Ok(())
    }

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read_write("src"),
            HandlerSpec::read_write("dst"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        let addr = |r: std::ops::Range<usize>| {
            let b = &self.iph[r];
            Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()
        };
        match name {
            "src" => Ok(addr(12..16)),
            "dst" if self.use_dst_anno => Ok("DST_ANNO".into()),
            "dst" => Ok(addr(16..20)),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "src" => self.iph[12..16].copy_from_slice(&parse_ipv4(v)?.octets()),
            "dst" if v == "DST_ANNO" => self.set_dst(Dst::Anno),
            "dst" => self.set_dst(Dst::Addr(parse_ipv4(v)?)),
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(())
    }
}
