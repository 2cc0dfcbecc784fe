//! # CheckICMP6Header
//!
//! Checks ICMPv6 headers.
//!
//! ## Synopsis
//! `CheckICMP6Header([keywords VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set (CheckIP6Header
//! upstream). Checks that the upper-layer header, found past any
//! hop-by-hop, destination options, routing and AH headers, is ICMPv6 in
//! an unfragmented packet (reassemble fragments first, with
//! IP6Reassembler); that the payload length is not zero and the packet
//! holds all of it; that the message holds 8 bytes and the fixed part of
//! its type (24 bytes for neighbour solicitations and advertisements, 16
//! for router advertisements, 40 for redirects); and that the ICMPv6
//! checksum over the IPv6 pseudo-header and the message is correct (RFC
//! 4443 section 2.3). Bytes beyond the payload length (link padding) are
//! ignored. Invalid packets go to output 1 if present, else are dropped;
//! the first (every one with VERBOSE) is reported as `NAME: ICMPv6 header
//! check failed: REASON`.
//!
//! Click 2.1 has no CheckICMP6Header; this is CheckICMPHeader's IPv6 twin,
//! named in the IPv6 elements report.
//!
//! ## Keywords
//! - **VERBOSE** (bool): report every invalid packet. Default false.
//! - **DETAILS** (bool): keep per-reason counts. Default false.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): `COUNT<TAB>REASON` lines for not
//!   ICMPv6, bad packet length, bad ICMPv6 checksum.
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> c :: IP6Classifier(icmp6, -);
//! c[0] -> CheckICMP6Header -> ICMP6PingResponder -> ...;
//! ```

use rclick_core::wire::ipv6::PROTO_ICMPV6;
use rclick_core::wire::ipv6ext::upper_layer;
use rclick_core::wire::Icmpv6Header;
use rclick_core::Packet;

use super::common::{find_frag_header, ip6_hdr};
use crate::ip::ipcommon::{CheckHeader, HeaderCheck};

/// The ICMPv6 header check.
pub struct Icmp6Check;

impl HeaderCheck for Icmp6Check {
    const PROTO: &'static str = "ICMPv6";
    const REASONS: &'static [&'static str] =
        &["not ICMPv6", "bad packet length", "bad ICMPv6 checksum"];

    fn check(p: &Packet) -> Result<(), usize> {
        let ip = ip6_hdr(p).ok_or(0usize)?;
        let plen = ip.payload_len() as usize;
        let payload = ip.payload();
        // Fragments are not whole messages; a truncated chain is no
        // ICMPv6 either.
        match find_frag_header(ip.next_header(), payload) {
            Ok(None) => {}
            _ => return Err(0),
        }
        let (nh, at) = upper_layer(ip.next_header(), payload).map_err(|_| 0usize)?;
        if nh != PROTO_ICMPV6 {
            return Err(0);
        }
        if plen == 0 || payload.len() < plen {
            return Err(1);
        }
        let icmp = Icmpv6Header::new_checked(&payload[at..]).map_err(|_| 1usize)?;
        if !icmp.verify_checksum(ip.src(), ip.dst()) {
            return Err(2);
        }
        Ok(())
    }
}

/// The CheckICMP6Header element.
pub type CheckICMP6Header = CheckHeader<Icmp6Check>;

rclick_core::element_class!(CheckICMP6Header);
