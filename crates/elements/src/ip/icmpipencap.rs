//! # ICMPIPEncap
//!
//! Encapsulates packets in ICMP/IP headers.
//!
//! ## Synopsis
//! `ICMPIPEncap(SRC, DST, TYPE [, CODE, *keywords* IDENTIFIER])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends an ICMP header of type TYPE and code CODE and a 20-byte IP
//! header from SRC to DST to each packet. TYPE and CODE are numbers 0-255
//! or Click's ICMP type and code names (see ICMPError); CODE defaults to 0.
//!
//! The ICMP header is 8 bytes, except for timestamp and timestamp-reply
//! messages (types 13 and 14), whose 20-byte header ends with three zero
//! timestamps. Messages whose header has an identifier and a sequence
//! number (echo, echo-reply, timestamp, timestamp-reply, inforeq,
//! inforeq-reply) carry IDENTIFIER and a sequence number that counts up
//! from 1, one per packet; the other types leave those four bytes zero.
//! The ICMP checksum covers the header and the packet's data.
//!
//! The IP header has protocol ICMP, TTL 255, TOS 0, no fragmentation
//! flags, an identification that counts up from 1, and a correct checksum.
//! The packet's network header annotation is set to it and its destination
//! IP annotation to DST.
//!
//! ## Keywords
//! - **SRC**, **DST** (IP address or AddressInfo name).
//! - **TYPE**, **CODE**: as above.
//! - **IDENTIFIER** (16-bit unsigned): the ICMP identifier. Default 0.
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 3, STOP true)
//!   -> ICMPIPEncap(1.0.0.1, 2.0.0.2, echo, IDENTIFIER 7)
//!   -> ToIPSummaryDump(-, FIELDS ip_src ip_dst icmp_type icmp_code);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::element::hflags;
use rclick_core::wire::icmp::{
    HEADER_LEN as ICMP_LEN, ICMP_ECHO, ICMP_ECHOREPLY, ICMP_IREQ, ICMP_IREQREPLY, ICMP_TSTAMP,
    ICMP_TSTAMPREPLY,
};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN as IP_LEN, PROTO_ICMP};
use rclick_core::wire::{IcmpHeader, Ipv4Header, Ipv4Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::icmperror::{parse_icmp_code, parse_icmp_type};

/// Length of a timestamp message's header: the 8 bytes plus three 32-bit
/// timestamps.
const TSTAMP_LEN: usize = 20;

pub struct ICMPIPEncap {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    icmp_type: u8,
    code: u8,
    ident: u16,
    seq: u16,
    ip_id: u16,
}

impl Default for ICMPIPEncap {
    fn default() -> Self {
        ICMPIPEncap {
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            icmp_type: ICMP_ECHO,
            code: 0,
            ident: 0,
            seq: 1,
            ip_id: 1,
        }
    }
}

impl ICMPIPEncap {
    /// An echo-request encapsulation (ICMPPingEncap's).
    pub fn echo(src: Ipv4Addr, dst: Ipv4Addr, ident: u16) -> Self {
        ICMPIPEncap {
            src,
            dst,
            ident,
            ..ICMPIPEncap::default()
        }
    }

    /// The source and destination addresses (for ICMPPingEncap's
    /// handlers).
    pub fn addrs_mut(&mut self) -> (&mut Ipv4Addr, &mut Ipv4Addr) {
        (&mut self.src, &mut self.dst)
    }

    pub fn addrs(&self) -> (&Ipv4Addr, &Ipv4Addr) {
        (&self.src, &self.dst)
    }

    /// Whether the type's header carries an identifier and a sequence.
    fn has_sequence(&self) -> bool {
        matches!(
            self.icmp_type,
            ICMP_ECHO
                | ICMP_ECHOREPLY
                | ICMP_TSTAMP
                | ICMP_TSTAMPREPLY
                | ICMP_IREQ
                | ICMP_IREQREPLY
        )
    }

    fn icmp_header_len(&self) -> usize {
        if matches!(self.icmp_type, ICMP_TSTAMP | ICMP_TSTAMPREPLY) {
            TSTAMP_LEN
        } else {
            ICMP_LEN
        }
    }
}

impl SimpleAction for ICMPIPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let ilen = self.icmp_header_len();
        // Lengths saturate rather than wrap for oversized packets.
        let payload = (p.len() + ilen).min(0xffff - IP_LEN);
        let ip = Ipv4Repr {
            src: self.src,
            dst: self.dst,
            protocol: PROTO_ICMP,
            payload_len: payload,
            ttl: 255,
            ident: self.ip_id,
            ..Ipv4Repr::default()
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        let (ident, seq) = if self.has_sequence() {
            let s = self.seq;
            self.seq = self.seq.wrapping_add(1);
            (self.ident, s)
        } else {
            (0, 0)
        };
        let h = p.push(IP_LEN + ilen)?;
        h.fill(0);
        let (iph, icmph) = h.split_at_mut(IP_LEN);
        ip.emit(&mut Ipv4Header::new_unchecked(iph));
        let mut icmp = IcmpHeader::new_unchecked(icmph);
        icmp.set_type(self.icmp_type);
        icmp.set_code(self.code);
        icmp.set_ident(ident);
        icmp.set_seq(seq);
        // The checksum covers the ICMP header and the data after it.
        IcmpHeader::new_unchecked(&mut p.writable()[IP_LEN..]).fill_checksum();
        p.set_network_header(0, IP_LEN);
        p.set_dst_ip_anno(self.dst);
        Some(p)
    }
}

const HANDLERS: &[Handler<ICMPIPEncap>] = &[
    Handler::flagged(
        hflags::CALM,
        Handler::data_rw("src", |e| &e.src, |e| &mut e.src),
    ),
    Handler::flagged(
        hflags::CALM,
        Handler::data_rw("dst", |e| &e.dst, |e| &mut e.dst),
    ),
];

rclick_core::element_class!(ICMPIPEncap);

impl Element for ICMPIPEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src = args.read_mp_with("SRC", |s| parse_ipv4_arg(s, ictx));
        let dst = args.read_mp_with("DST", |s| parse_ipv4_arg(s, ictx));
        let icmp_type = args.read_mp_with("TYPE", |s| {
            parse_icmp_type(s).map_err(|_| "invalid TYPE".to_string())
        });
        let code: Option<String> = args.read_p("CODE");
        let ident: Option<u16> = args.read("IDENTIFIER");
        args.complete()?;
        let code = match code {
            Some(c) => parse_icmp_code(icmp_type, c.trim()).ok_or("invalid CODE")?,
            None => 0,
        };
        self.src = src;
        self.dst = dst;
        self.icmp_type = icmp_type;
        self.code = code;
        self.ident = ident.unwrap_or(0);
        Ok(())
    }
}
