//! # ICMP6Error
//!
//! Generates ICMPv6 error messages.
//!
//! ## Synopsis
//! `ICMP6Error(SRC, TYPE, CODE [, keywords MTU, RATE, BURST])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Answers each input packet, an IPv6 packet with its network header set,
//! with an ICMPv6 error of type TYPE and code CODE (RFC 4443) from SRC to
//! the packet's source; the input packet is consumed. TYPE is 1
//! (destination unreachable), 2 (packet too big, carrying MTU), 3 (time
//! exceeded), 4 (parameter problem, whose pointer is the packet's
//! ICMP_PARAMPROB annotation) or 137 (redirect, to the destination IPv6
//! annotation as target). The output packet is a whole IPv6 packet with
//! hop limit 255, its network header set, its destination IPv6 annotation
//! set to the new destination and its FIX_IP_SRC annotation set: connect
//! it to the routing table, as if it came from an interface.
//!
//! The message quotes as much of the packet as fits without the error
//! exceeding the minimum IPv6 MTU, 1280 bytes (RFC 4443 section 2.4 (c)).
//! No error is sent (RFC 4443 section 2.4 (e)) about an ICMPv6 error or
//! redirect message (found past any extension headers), about a packet
//! whose source does not identify one node (unspecified, multicast, or
//! loopback), about a packet sent to an IPv6 multicast address or as a
//! link-level broadcast or multicast (except packet too big, and parameter
//! problem code 2, which the RFC allows there), or beyond the rate limit:
//! a token bucket of RATE messages per second and BURST at once (section
//! 2.4 (f)).
//!
//! Where Click 2.1 differs, it is wrong, and rclick follows the RFC:
//! Click looks for the ICMPv6 type in the first byte of the IPv6 header,
//! so it answers ICMPv6 errors with errors; it writes the packet-too-big
//! MTU (always 1500) and the parameter-problem pointer in host byte order
//! (1500 becomes 3691315200 on the wire); it quotes at most 568 bytes; it
//! answers packets from `::` and multicast sources; and it has no rate
//! limit.
//!
//! ## Keywords
//! - **SRC** (IPv6 address): the errors' source address.
//! - **TYPE**, **CODE** (integers): the ICMPv6 type and code.
//! - **MTU** (unsigned): the MTU a packet-too-big message reports.
//!   Default 1500 (rclick extension).
//! - **RATE** (unsigned): errors per second; 0 means no limit. Default
//!   1000 (rclick extension).
//! - **BURST** (unsigned): errors sent at once before the rate applies.
//!   Default 100 (rclick extension).
//!
//! ## Handlers
//! - `rate_limited` (read): packets not answered because of the rate
//!   limit (rclick extension).
//!
//! ## Example
//! ```click
//! dh :: DecIP6HLIM;
//! dh[1] -> ICMP6Error(3ffe:1ce1:2:0:200::1, 3, 0) -> rt;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::{parse_u32, Args};
use rclick_core::packet::{PacketType, DEFAULT_HEADROOM};
use rclick_core::wire::icmpv6::{
    is_error, ICMP6_PACKET_TOO_BIG, ICMP6_PARAMPROB_OPTION, ICMP6_PARAM_PROB, ND_REDIRECT,
};
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6};
use rclick_core::wire::{Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::{icmp6_type, ip6_hdr, parse_ipv6_arg};

/// The minimum IPv6 MTU (RFC 8200 section 5): no error exceeds it.
pub const MIN_MTU: usize = 1280;

pub struct ICMP6Error {
    src: Ipv6Addr,
    icmp_type: u8,
    code: u8,
    mtu: u32,
    rate: u32,
    burst: u32,
    tokens: f64,
    last_refill: i64,
    rate_limited: u64,
}

impl Default for ICMP6Error {
    fn default() -> Self {
        ICMP6Error {
            src: Ipv6Addr::UNSPECIFIED,
            icmp_type: 3,
            code: 0,
            mtu: 1500,
            rate: 1000,
            burst: 100,
            tokens: 100.0,
            last_refill: i64::MIN,
            rate_limited: 0,
        }
    }
}

impl ICMP6Error {
    /// Whether RFC 4443 section 2.4 (e) lets us answer `h`, sent as a
    /// packet of link type `pt`.
    fn may_answer(&self, h: &Ipv6Header<&[u8]>, pt: PacketType) -> bool {
        if let Some((t, _)) = icmp6_type(h) {
            if is_error(t) || t == ND_REDIRECT {
                return false;
            }
        }
        let src = h.src();
        if src.is_unspecified() || src.is_multicast() || src.is_loopback() {
            return false;
        }
        let multicast_ok = self.icmp_type == ICMP6_PACKET_TOO_BIG
            || (self.icmp_type == ICMP6_PARAM_PROB && self.code == ICMP6_PARAMPROB_OPTION);
        let multicast =
            h.dst().is_multicast() || matches!(pt, PacketType::Broadcast | PacketType::Multicast);
        !multicast || multicast_ok
    }

    /// Takes a token from the bucket; false when it is empty.
    fn admit(&mut self, now: i64) -> bool {
        if self.rate == 0 {
            return true;
        }
        if self.last_refill == i64::MIN {
            self.last_refill = now;
            self.tokens = self.burst as f64;
        }
        let dt = (now - self.last_refill).max(0) as f64 / 1e9;
        self.tokens = (self.tokens + dt * self.rate as f64).min(self.burst.max(1) as f64);
        self.last_refill = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            self.rate_limited += 1;
            false
        }
    }
}

impl SimpleAction for ICMP6Error {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let h = ip6_hdr(&p)?;
        if !self.may_answer(&h, p.packet_type_anno()) || !self.admit(ctx.now().nanos()) {
            return None;
        }
        let orig_src = h.src();
        let orig_dst = h.dst();
        let data = h.into_inner();
        let redirect = self.icmp_type == ND_REDIRECT;
        // Fixed part: 8 bytes, or 40 for a redirect plus the 8-byte
        // redirected-header option header.
        let fixed = if redirect { 48 } else { 8 };
        let room = MIN_MTU - HEADER_LEN - fixed;
        let mut qlen = data.len().min(room);
        if redirect {
            // The option's length is a multiple of 8 bytes.
            qlen -= qlen % 8;
        }
        let quoted = &data[..qlen];
        let icmp = match self.icmp_type {
            ICMP6_PACKET_TOO_BIG => Icmpv6Repr::PacketTooBig {
                mtu: self.mtu,
                quoted,
            },
            ICMP6_PARAM_PROB => Icmpv6Repr::ParamProblem {
                code: self.code,
                pointer: p.icmp_param_prob_anno() as u32,
                quoted,
            },
            1 => Icmpv6Repr::DstUnreachable {
                code: self.code,
                quoted,
            },
            3 => Icmpv6Repr::TimeExceeded {
                code: self.code,
                quoted,
            },
            // A redirect: written below.
            t => Icmpv6Repr::Other {
                msg_type: t,
                code: self.code,
                rest: [0; 4],
                data: &[],
            },
        };
        let icmp_len = if redirect {
            fixed + qlen
        } else {
            icmp.buffer_len()
        };
        let ip = Ipv6Repr {
            src: self.src,
            dst: orig_src,
            next_header: PROTO_ICMPV6,
            payload_len: icmp_len,
            hop_limit: 255,
            traffic_class: 0,
            flow_label: 0,
        };
        let total = HEADER_LEN + icmp_len;
        let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], total);
        let (ib, cb) = q.put(total)?.split_at_mut(HEADER_LEN);
        ip.emit(&mut Ipv6Header::new_unchecked(&mut *ib));
        if redirect {
            cb.fill(0);
            cb[0] = ND_REDIRECT;
            cb[1] = self.code;
            cb[8..24].copy_from_slice(&p.dst_ip6_anno().octets());
            cb[24..40].copy_from_slice(&orig_dst.octets());
            cb[40] = 4;
            cb[41] = ((8 + qlen) / 8) as u8;
            cb[48..48 + qlen].copy_from_slice(quoted);
        } else {
            icmp.emit(&mut Icmpv6Header::new_unchecked(&mut *cb));
        }
        Icmpv6Header::new_unchecked(&mut *cb).fill_checksum(self.src, orig_src);
        q.set_network_header(0, HEADER_LEN);
        q.set_dst_ip6_anno(orig_src);
        q.set_fix_ip_src_anno(true);
        Some(q)
    }
}

const HANDLERS: &[Handler<ICMP6Error>] = &[Handler::data("rate_limited", |e| &e.rate_limited)];

rclick_core::element_class!(ICMP6Error);

impl Element for ICMP6Error {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: Ipv6Addr = args.read_mp_with("SRC", |s| parse_ipv6_arg(s, ictx));
        let icmp_type: i32 = args.read_mp("TYPE");
        let code: i32 = args.read_mp("CODE");
        let mtu = args.read_or_with("MTU", parse_u32, 1500);
        let rate = args.read_or_with("RATE", parse_u32, 1000);
        let burst = args.read_or_with("BURST", parse_u32, 100);
        args.complete()?;
        if icmp_type < 0 || code < 0 || src.is_unspecified() {
            return Err("not configured".into());
        }
        if !matches!(icmp_type, 1..=4) && icmp_type != ND_REDIRECT as i32 {
            return Err(format!("ICMP6 type {icmp_type} is not an error or redirect type").into());
        }
        let code = u8::try_from(code).map_err(|_| "CODE out of range".to_string())?;
        self.src = src;
        self.icmp_type = icmp_type as u8;
        self.code = code;
        self.mtu = mtu;
        self.rate = rate;
        self.burst = burst;
        self.tokens = burst as f64;
        Ok(())
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
