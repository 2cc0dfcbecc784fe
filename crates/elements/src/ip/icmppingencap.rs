//! # ICMPPingEncap
//!
//! Encapsulates packets in ICMP echo-request (ping) headers.
//!
//! ## Synopsis
//! `ICMPPingEncap(SRC, DST [, *keywords* IDENTIFIER])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends an 8-byte ICMP echo-request header and a 20-byte IP header
//! from SRC to DST to each packet: ICMPIPEncap(SRC, DST, echo, IDENTIFIER
//! ID). The echo sequence number counts up from 1, one per packet; the IP
//! header has TTL 255 and an identification counting up from 1. The
//! network header and destination IP annotations are set.
//!
//! ## Keywords
//! - **SRC**, **DST** (IP address or AddressInfo name).
//! - **IDENTIFIER** (16-bit unsigned): the echo identifier. Default 0.
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 2, STOP true)
//!   -> ICMPPingEncap(1.0.0.1, 2.0.0.2, IDENTIFIER 3)
//!   -> ICMPPingResponder -> ToDump(pings.pcap, ENCAP IP);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::icmpipencap::ICMPIPEncap;

#[derive(Default)]
pub struct ICMPPingEncap(ICMPIPEncap);

impl SimpleAction for ICMPPingEncap {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        self.0.action(p, ctx)
    }
}

const HANDLERS: &[Handler<ICMPPingEncap>] = &[
    Handler::flagged(
        hflags::CALM,
        Handler::data_rw("src", |e| e.0.addrs().0, |e| e.0.addrs_mut().0),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::data_rw("dst", |e| e.0.addrs().1, |e| e.0.addrs_mut().1),
    ),
];

rclick_core::element_class!(ICMPPingEncap);

impl Element for ICMPPingEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: Ipv4Addr = args.read_mp_with("SRC", |s| parse_ipv4_arg(s, ictx));
        let dst: Ipv4Addr = args.read_mp_with("DST", |s| parse_ipv4_arg(s, ictx));
        let ident: Option<u16> = args.read("IDENTIFIER");
        args.complete()?;
        self.0 = ICMPIPEncap::echo(src, dst, ident.unwrap_or(0));
        Ok(())
    }
}
