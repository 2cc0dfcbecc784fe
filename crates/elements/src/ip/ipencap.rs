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
use rclick_core::wire::ipv4::MIN_HEADER_LEN as IP_LEN;
use rclick_core::wire::{Ipv4Header, Ipv4Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::{parse_ip_proto, parse_ipv4_arg};

pub struct IPEncap {
    /// The header to prepend; its length and ID change per packet, and its
    /// destination too with `DST_ANNO`.
    iph: Ipv4Repr<'static>,
    use_dst_anno: bool,
}

impl Default for IPEncap {
    fn default() -> Self {
        IPEncap {
            iph: Ipv4Repr {
                ttl: 250,
                ..Ipv4Repr::default()
            },
            use_dst_anno: false,
        }
    }
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
                self.iph.dst = Ipv4Addr::UNSPECIFIED;
            }
            Dst::Addr(a) => {
                self.use_dst_anno = false;
                self.iph.dst = a;
            }
        }
    }
}

impl SimpleAction for IPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.use_dst_anno {
            self.iph.dst = p.dst_ip_anno();
        }
        // The length saturates rather than wraps for oversized packets.
        self.iph.payload_len = (p.len() + IP_LEN).min(0xffff) - IP_LEN;
        self.iph
            .emit(&mut Ipv4Header::new_unchecked(p.push(IP_LEN)));
        self.iph.ident = self.iph.ident.wrapping_add(1);
        p.set_network_header(0, IP_LEN);
        p.set_dst_ip_anno(self.iph.dst);
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

fn read_dst(e: &IPEncap, _ctx: &Ctx) -> String {
    if e.use_dst_anno {
        "DST_ANNO".into()
    } else {
        e.iph.dst.to_string()
    }
}

fn write_dst(e: &mut IPEncap, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
    let v = value.trim();
    e.set_dst(if v == "DST_ANNO" {
        Dst::Anno
    } else {
        Dst::Addr(parse_ipv4(v)?)
    });
    Ok(())
}

const HANDLERS: &[Handler<IPEncap>] = &[
    Handler::data_rw("src", |e| &e.iph.src, |e| &mut e.iph.src),
    Handler::read_write("dst", read_dst, write_dst),
];

rclick_core::element_class!(IPEncap);

impl Element for IPEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        // Like Click: a protocol that is neither a number nor a name is an
        // invalid number; a number above 255 is "bad IP protocol".
        let proto_num: u32 = args.read_mp_with("PROTO", |s| match parse_ip_proto(s) {
            Ok(p) => Ok(u32::from(p)),
            Err(_) => rclick_core::conf::parse_u32(s).map_err(|_| "invalid number".to_string()),
        });

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
        let proto = u8::try_from(proto_num).map_err(|_| "bad IP protocol".to_string())?;
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
        self.iph = Ipv4Repr {
            src,
            protocol: proto,
            ttl,
            tos: t,
            dont_frag: df,
            ident: self.iph.ident,
            ..Ipv4Repr::default()
        };
        if let Some(d) = dst {
            self.set_dst(d);
        }
        Ok(())
    }
}
