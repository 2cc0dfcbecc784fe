//! # ICMPPingSource
//!
//! Sends ICMP echo requests, and optionally measures the replies.
//!
//! ## Synopsis
//! `ICMPPingSource(SRC, DST [, *keywords* INTERVAL, IDENTIFIER, LIMIT, DATA, ACTIVE, VERBOSE, STOP])`
//!
//! ## Ports and processing
//! An optional push input for echo replies; one agnostic output for the
//! requests. Processing `h/a`.
//!
//! ## Description
//! Emits IP packets holding ICMP echo requests from SRC to DST: TTL 200,
//! IP ID and ICMP sequence number 1, 2, 3, ... (wrapping after 65535),
//! identifier IDENTIFIER, and DATA as the payload; checksums are valid,
//! the destination IP annotation is DST and the timestamp annotation is
//! the sending time. When the output is push, one request leaves every
//! INTERVAL (the first one INTERVAL after start); when it is pull, one is
//! produced per pull. After LIMIT requests it stops, and with STOP true
//! it then stops the router.
//!
//! With an input, echo replies carrying the identifier are matched to the
//! requests by sequence number: each reply is counted (duplicates
//! separately) and its round-trip time, from the reply's timestamp
//! annotation (or the router time when it has none) minus the request's
//! sending time, feeds the statistics. With VERBOSE, each reply prints
//! `NAME :: ICMPPingSource: N bytes from SRC: icmp_seq=S ttl=T time=M.UUU ms`
//! and the summary is printed when the router is torn down.
//!
//! ## Keywords
//! - **SRC**, **DST** (IP addresses).
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
//! On hot swap, an ICMPPingSource of the same name carries over its count
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
//! ps :: ICMPPingSource(10.0.0.1, 10.0.0.2, LIMIT 5, STOP true);
//! ps -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> ToDevice(eth0);
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ps;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::parse_ipv4;
use rclick_core::wire::icmp::{HEADER_LEN as ICMP_HEADER_LEN, ICMP_ECHOREPLY};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN, PROTO_ICMP};
use rclick_core::wire::{IcmpHeader, IcmpRepr, Ipv4Header, Ipv4Repr};
use rclick_core::{InitCtx, Packet};

use super::address::parse_ipv4_arg;
use super::ipcommon::ip_hdr;
use super::pingcommon::{EchoReply, PingFamily, PingSource};

/// The IPv4 part of the ping source (the rest is in
/// [`pingcommon`](super::pingcommon), shared with ICMP6PingSource).
pub struct Icmp4;

pub type ICMPPingSource = PingSource<Icmp4>;

rclick_core::element_class!(ICMPPingSource);

impl PingFamily for Icmp4 {
    type Addr = Ipv4Addr;
    const CLASS: &'static str = "ICMPPingSource";
    const UNSPECIFIED: Ipv4Addr = Ipv4Addr::UNSPECIFIED;

    fn parse_arg(s: &str, ctx: &InitCtx) -> Result<Ipv4Addr, String> {
        parse_ipv4_arg(s, ctx)
    }

    fn parse_handler(s: &str) -> Result<Ipv4Addr, String> {
        parse_ipv4(s).map_err(|e| e.to_string())
    }

    fn unparse(a: Ipv4Addr) -> String {
        a.to_string()
    }

    fn request(src: Ipv4Addr, dst: Ipv4Addr, ident: u16, seq: u16, data: &[u8]) -> Option<Packet> {
        let icmp = IcmpRepr::EchoRequest { ident, seq, data };
        let total = MIN_HEADER_LEN + icmp.buffer_len();
        let ip = Ipv4Repr {
            src,
            dst,
            protocol: PROTO_ICMP,
            // The length field saturates for oversized DATA.
            payload_len: total.min(65535) - MIN_HEADER_LEN,
            ttl: 200,
            ident: seq,
            ..Ipv4Repr::default()
        };
        let mut p = Packet::with_room(rclick_core::packet::DEFAULT_HEADROOM, &[], total);
        let (ib, cb) = p.put(total)?.split_at_mut(ip.header_len());
        ip.emit(&mut Ipv4Header::new_unchecked(ib));
        icmp.emit(&mut IcmpHeader::new_unchecked(cb));
        p.set_network_header(0, MIN_HEADER_LEN);
        p.set_dst_ip_anno(dst);
        Some(p)
    }

    fn reply(p: &Packet) -> Option<EchoReply<Ipv4Addr>> {
        let h = ip_hdr(p)?;
        let hl = h.header_len();
        // The reply as far as the packet goes, whatever its IP length says.
        let icmp = IcmpHeader::new_checked(&h.clone().into_inner()[hl..]).ok()?;
        if h.protocol() != PROTO_ICMP || icmp.icmp_type() != ICMP_ECHOREPLY {
            return None;
        }
        Some(EchoReply {
            ident: icmp.ident(),
            seq: icmp.seq(),
            bytes: (h.total_len() as usize).saturating_sub(hl + ICMP_HEADER_LEN),
            src: h.src(),
            ttl: h.ttl(),
        })
    }
}
