//! # ICMP6PingResponder
//!
//! Answers ICMPv6 echo requests.
//!
//! ## Synopsis
//! `ICMP6PingResponder([SRC])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for replies; optional push output
//! 1 for other packets. Processing `a/ah`.
//!
//! ## Description
//! The IPv6 twin of ICMPPingResponder (Click 2.1 has none; the name is the
//! IPv6 elements report's). Expects IPv6 packets with the network header
//! set. Turns each ICMPv6 echo request (type 128) whose checksum is right
//! into an echo reply (type 129, code 0, RFC 4443 section 4.2) carrying
//! the same identifier, sequence number and data: the IPv6 source and
//! destination are swapped, the hop limit set to 255, any extension
//! headers dropped, the checksum updated; the destination IPv6 annotation
//! becomes the new destination and the timestamp annotation now. The reply
//! leaves on output 0.
//!
//! A request sent to a multicast address is answered from SRC, a unicast
//! address of this node; without SRC it is not answered. A request from a
//! multicast or the unspecified address (`::`) is not answered either:
//! there is no node to send the reply to. Everything else
//! (other messages, bad checksums, truncated requests, fragments) goes to
//! output 1, or is dropped when output 1 is absent.
//!
//! ## Keywords
//! - **SRC** (IPv6 address): the source of replies to multicast requests.
//!
//! ## Handlers
//! - `replies` (read): replies sent.
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> ICMP6PingResponder -> GetIP6Address(24) -> rt;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::Args;
use rclick_core::element::Filter;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::checksum::update16;
use rclick_core::wire::icmpv6::{ICMP6_ECHO_REPLY, ICMP6_ECHO_REQUEST};
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6};
use rclick_core::wire::{Icmpv6Header, Ipv6Header, Ipv6Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{icmp6_type, ip6_hdr, parse_ipv6_arg};

#[derive(Default)]
pub struct ICMP6PingResponder {
    src: Option<Ipv6Addr>,
    replies: u64,
}

impl ICMP6PingResponder {
    /// Where the echo request starts in the IPv6 payload and the reply's
    /// source, for a packet that is a well-formed request we answer.
    fn request(&self, p: &Packet) -> Option<(usize, Ipv6Addr)> {
        let h = ip6_hdr(p)?;
        let (t, at) = icmp6_type(&h)?;
        if t != ICMP6_ECHO_REQUEST {
            return None;
        }
        let payload = h.payload();
        if payload.len() != h.payload_len() as usize {
            return None;
        }
        let icmp = Icmpv6Header::new_checked(&payload[at..]).ok()?;
        // A multicast or unspecified source names no node to answer.
        if !icmp.verify_checksum(h.src(), h.dst())
            || h.src().is_multicast()
            || h.src().is_unspecified()
        {
            return None;
        }
        let src = if h.dst().is_multicast() {
            self.src?
        } else {
            h.dst()
        };
        Some((at, src))
    }
}

impl Filter for ICMP6PingResponder {
    fn filter(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        let Some((at, src)) = self.request(&p) else {
            return Err(p);
        };
        let Some(h) = ip6_hdr(&p) else {
            return Err(p);
        };
        let dst = h.src();
        if at == 0 && src == h.dst() {
            // In place: swapping the addresses leaves the pseudo-header sum
            // as it is; the type changes by a word.
            if let Some(mut h) = super::common::ip6_hdr_mut(&mut p) {
                h.set_src(src);
                h.set_dst(dst);
                h.set_hop_limit(255);
                if let Ok(mut icmp) = Icmpv6Header::new_checked(h.payload_mut()) {
                    let c = update16(
                        icmp.checksum(),
                        u16::from(ICMP6_ECHO_REQUEST) << 8 | u16::from(icmp.code()),
                        u16::from(ICMP6_ECHO_REPLY) << 8,
                    );
                    icmp.set_msg_type(ICMP6_ECHO_REPLY);
                    icmp.set_code(0);
                    icmp.set_checksum(c);
                }
            }
        } else {
            // Extension headers or a multicast request: a new packet
            // (rare, so the allocation is not on the common path).
            let body = &h.payload()[at..];
            let ip = Ipv6Repr {
                src,
                dst,
                next_header: PROTO_ICMPV6,
                payload_len: body.len(),
                hop_limit: 255,
                ..Ipv6Repr::default()
            };
            let total = HEADER_LEN + body.len();
            let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], total);
            let Some(b) = q.put(total) else {
                return Err(p);
            };
            let (ib, cb) = b.split_at_mut(HEADER_LEN);
            ip.emit(&mut Ipv6Header::new_unchecked(&mut *ib));
            cb.copy_from_slice(body);
            let mut icmp = Icmpv6Header::new_unchecked(&mut *cb);
            icmp.set_msg_type(ICMP6_ECHO_REPLY);
            icmp.set_code(0);
            icmp.fill_checksum(src, dst);
            q.set_network_header(0, HEADER_LEN);
            p = q;
        }
        p.set_dst_ip6_anno(dst);
        p.set_timestamp_anno(ctx.now());
        self.replies += 1;
        Ok(p)
    }
}

const HANDLERS: &[Handler<ICMP6PingResponder>] = &[Handler::data("replies", |e| &e.replies)];

rclick_core::element_class!(ICMP6PingResponder);

impl Element for ICMP6PingResponder {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.src = args.read_p_with("SRC", |s| parse_ipv6_arg(s, ictx));
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter);
    rclick_core::handlers!(HANDLERS);
}
