//! # ICMP6PingSource
//!
//! Sends ICMPv6 echo requests, and optionally measures the replies.
//!
//! ## Synopsis
//! `ICMP6PingSource(SRC, DST [, *keywords* INTERVAL, IDENTIFIER, LIMIT, DATA, ACTIVE, VERBOSE, STOP])`
//!
//! ## Ports and processing
//! An optional push input for echo replies; one agnostic output for the
//! requests. Processing `h/a`.
//!
//! ## Description
//! The IPv6 twin of ICMPPingSource (Click 2.1 has none; the name is the
//! IPv6 elements report's). Emits IPv6 packets (no link header) holding
//! ICMPv6 echo requests (type 128, code 0, RFC 4443 section 4.1) from SRC
//! to DST: hop limit 64 (the default hop limit RFC 8200 and IANA
//! recommend; ICMPPingSource's TTL of 200 is Click's own choice), ICMP
//! sequence number 1, 2, 3, ... (wrapping after 65535), identifier
//! IDENTIFIER, and DATA as the payload; the ICMPv6 checksum covers the
//! IPv6 pseudo-header. The destination IPv6 annotation is DST and the
//! timestamp annotation the sending time. When the output is push, one
//! request leaves every INTERVAL (the first one INTERVAL after start);
//! when it is pull, one is produced per pull. After LIMIT requests it
//! stops, and with STOP true it then stops the router.
//!
//! With an input, IPv6 packets (network header set) holding ICMPv6 echo
//! replies (type 129, found past any extension headers) with the
//! identifier are matched to the requests by sequence number: each reply
//! is counted (duplicates separately) and its round-trip time, from the
//! reply's timestamp annotation (or the router time when it has none)
//! minus the request's sending time, feeds the statistics. Anything else
//! (other messages, truncated packets, replies with a bad checksum,
//! replies to no request sent) is ignored. With VERBOSE, each reply prints
//! `NAME :: ICMP6PingSource: N bytes from SRC: icmp_seq=S ttl=H time=M.UUU ms`
//! (H the reply's hop limit) and the summary is printed when the router
//! is torn down.
//!
//! ## Keywords
//! - **SRC**, **DST** (IPv6 addresses).
//! - **INTERVAL** (time, millisecond precision): default 1 s.
//! - **IDENTIFIER** (unsigned 16-bit): default 0.
//! - **LIMIT** (integer): requests to send; negative means no limit.
//!   Default -1.
//! - **DATA** (string): payload. Default empty.
//! - **ACTIVE** (boolean): send at all. Default true.
//! - **VERBOSE** (boolean): print replies and the summary. Default true.
//! - **STOP** (boolean): stop the router after LIMIT requests. Default
//!   false.
//!
//! On hot swap, an ICMP6PingSource of the same name carries over its count
//! (sequence numbers go on) and its timer's phase; with the same
//! IDENTIFIER and an input on both, also the reply statistics and the send
//! times of unanswered requests.
//!
//! ## Handlers
//! - `active` (read/write), `src`, `dst` (read/write), `count` (read),
//!   `limit`, `interval` (write), `reset_counts` (write button).
//! - With an input: `summary` (read): `N packets transmitted, M received[,
//!   +D duplicates], L% packet loss` and an
//!   `rtt min/avg/max/mdev = a/b/c/d` line in milliseconds; `rtt_min`,
//!   `rtt_avg`, `rtt_max` (read).
//!
//! ## Example
//! ```click
//! ps :: ICMP6PingSource(2001:db8::1, 2001:db8::2, LIMIT 5, STOP true);
//! ps -> EtherEncap(0x86dd, 1:1:1:1:1:1, 2:2:2:2:2:2) -> ToDevice(eth0);
//! FromDevice(eth0) -> Classifier(12/86dd) -> Strip(14) -> CheckIP6Header -> ps;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::parse_ipv6;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::icmpv6::{
    HEADER_LEN as ICMP6_HEADER_LEN, ICMP6_ECHO_REPLY, ICMP6_ECHO_REQUEST,
};
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6};
use rclick_core::wire::{Icmpv6Header, Ipv6Header, Ipv6Repr};
use rclick_core::{InitCtx, Packet};

use super::common::{fmt_ip6, icmp6_type, ip6_hdr, parse_ipv6_arg};
use crate::ip::pingcommon::{EchoReply, PingFamily, PingSource};

/// The hop limit of the requests.
const HOP_LIMIT: u8 = 64;

/// The IPv6 part of the ping source (the rest is in
/// [`pingcommon`](crate::ip::pingcommon), shared with ICMPPingSource).
pub struct Icmp6;

pub type ICMP6PingSource = PingSource<Icmp6>;

rclick_core::element_class!(ICMP6PingSource);

impl PingFamily for Icmp6 {
    type Addr = Ipv6Addr;
    const CLASS: &'static str = "ICMP6PingSource";
    const UNSPECIFIED: Ipv6Addr = Ipv6Addr::UNSPECIFIED;

    fn parse_arg(s: &str, ctx: &InitCtx) -> Result<Ipv6Addr, String> {
        parse_ipv6_arg(s, ctx)
    }

    fn parse_handler(s: &str) -> Result<Ipv6Addr, String> {
        parse_ipv6(s).map_err(|e| e.to_string())
    }

    fn unparse(a: Ipv6Addr) -> String {
        fmt_ip6(a)
    }

    fn request(src: Ipv6Addr, dst: Ipv6Addr, ident: u16, seq: u16, data: &[u8]) -> Option<Packet> {
        // A payload beyond 65535 bytes would need a jumbogram: cut DATA.
        let data = &data[..data.len().min(65535 - ICMP6_HEADER_LEN)];
        let len = ICMP6_HEADER_LEN + data.len();
        let ip = Ipv6Repr {
            src,
            dst,
            next_header: PROTO_ICMPV6,
            payload_len: len,
            hop_limit: HOP_LIMIT,
            ..Ipv6Repr::default()
        };
        let total = HEADER_LEN + len;
        let mut p = Packet::with_room(DEFAULT_HEADROOM, &[], total);
        let (ib, cb) = p.put(total)?.split_at_mut(HEADER_LEN);
        ip.emit(&mut Ipv6Header::new_unchecked(&mut *ib));
        cb[ICMP6_HEADER_LEN..].copy_from_slice(data);
        let mut icmp = Icmpv6Header::new_unchecked(&mut *cb);
        icmp.set_msg_type(ICMP6_ECHO_REQUEST);
        icmp.set_code(0);
        icmp.set_ident(ident);
        icmp.set_seq(seq);
        icmp.fill_checksum(src, dst);
        p.set_network_header(0, HEADER_LEN);
        p.set_dst_ip6_anno(dst);
        Some(p)
    }

    fn reply(p: &Packet) -> Option<EchoReply<Ipv6Addr>> {
        let h = ip6_hdr(p)?;
        let (t, at) = icmp6_type(&h)?;
        let payload = h.payload();
        // Truncated packets cannot be checked.
        if t != ICMP6_ECHO_REPLY || payload.len() != h.payload_len() as usize {
            return None;
        }
        let icmp = Icmpv6Header::new_checked(payload.get(at..)?).ok()?;
        if !icmp.verify_checksum(h.src(), h.dst()) {
            return None;
        }
        Some(EchoReply {
            ident: icmp.ident(),
            seq: icmp.seq(),
            bytes: payload.len() - at - ICMP6_HEADER_LEN,
            src: h.src(),
            ttl: h.hop_limit(),
        })
    }
}
