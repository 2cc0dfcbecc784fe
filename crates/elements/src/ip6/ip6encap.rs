//! # IP6Encap
//!
//! Encapsulates packets in an IPv6 header.
//!
//! ## Synopsis
//! `IP6Encap(PROTO, SRC, DST [, keywords HLIM, CLASS])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends a 40-byte IPv6 header: next header PROTO, source SRC,
//! destination DST, hop limit HLIM, traffic class CLASS, flow label 0, and
//! a payload length of the packet's length. The network header annotation
//! marks the new header. DST may be `DST_ANNO`: the destination is then
//! each packet's destination IPv6 annotation (when it is not `::`);
//! otherwise the annotation is set to DST.
//!
//! ## Keywords
//! - **PROTO** (IP protocol number or name): the next header.
//! - **SRC**, **DST** (IPv6 addresses; DST may be `DST_ANNO`).
//! - **HLIM** (unsigned): hop limit. Default 250 (Click's).
//! - **CLASS** (unsigned): traffic class. Default 0.
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses; writing reconfigures
//!   (`dst` may read `DST_ANNO`).
//!
//! ## Example
//! ```click
//! ... -> IP6Encap(udp, 2001:db8::1, 2001:db8::2) -> ...;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::element::hflags;
use rclick_core::wire::ipv6::HEADER_LEN;
use rclick_core::wire::{Ipv6Header, Ipv6Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::{fmt_ip6, parse_ipv6_arg};
use crate::ip::address::parse_ip_proto;

#[derive(Default)]
pub struct IP6Encap {
    header: Ipv6Repr,
    use_dst_anno: bool,
}

impl SimpleAction for IP6Encap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let plen = u16::try_from(p.len()).ok()?;
        let anno = p.dst_ip6_anno();
        let from_anno = self.use_dst_anno && !anno.is_unspecified();
        let dst = if from_anno { anno } else { self.header.dst };
        let b = p.push(HEADER_LEN)?;
        let r = Ipv6Repr {
            dst,
            payload_len: plen.into(),
            ..self.header
        };
        r.emit(&mut Ipv6Header::new_unchecked(&mut b[..HEADER_LEN]));
        p.set_network_header(0, HEADER_LEN);
        if !from_anno {
            p.set_dst_ip6_anno(dst);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<IP6Encap>] = &[
    // Click's order (listed newest first).
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "src",
            |e, _| fmt_ip6(e.header.src),
            |e, v, ctx| reconfigure_keyword(e, "SRC", Some(1), v, ctx),
        ),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "dst",
            |e, _| {
                if e.use_dst_anno {
                    "DST_ANNO".to_string()
                } else {
                    fmt_ip6(e.header.dst)
                }
            },
            |e, v, ctx| reconfigure_keyword(e, "DST", Some(2), v, ctx),
        ),
    ),
];

rclick_core::element_class!(IP6Encap);

impl Element for IP6Encap {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let proto: u8 = args.read_mp_with("PROTO", parse_ip_proto);
        let src: Ipv6Addr = args.read_mp_with("SRC", |s| parse_ipv6_arg(s, ictx));
        let dst: String = args.read_mp_with("DST", |s| Ok(s.to_string()));
        let hlim = args.read_or_with("HLIM", parse_u32, 250);
        let class = args.read_or_with("CLASS", parse_u32, 0);
        args.complete()?;
        let use_dst_anno = dst == "DST_ANNO";
        let dst = if use_dst_anno {
            Ipv6Addr::UNSPECIFIED
        } else {
            parse_ipv6_arg(&dst, ctx)
                .map_err(|_| "DST argument should be IP address or 'DST_ANNO'".to_string())?
        };
        self.header = Ipv6Repr {
            src,
            dst,
            next_header: proto,
            payload_len: 0,
            hop_limit: u8::try_from(hlim).map_err(|_| "HLIM out of range".to_string())?,
            traffic_class: u8::try_from(class).map_err(|_| "CLASS out of range".to_string())?,
            flow_label: 0,
        };
        self.use_dst_anno = use_dst_anno;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
