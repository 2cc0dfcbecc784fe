//! # CheckUDPHeader
//!
//! Checks UDP headers.
//!
//! ## Synopsis
//! `CheckUDPHeader([keywords VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader upstream).
//! Checks that the protocol is UDP, that the UDP length is at least 8 and
//! fits in the packet, and that the UDP checksum (if not zero) is correct
//! over the pseudo-header, header and data (RFC 768). Invalid packets go to
//! output 1 if present, else are dropped; the first (every one with
//! VERBOSE) is reported as `NAME: UDP header check failed: REASON`.
//!
//! ## Keywords
//! - **VERBOSE** (bool): report every invalid packet. Default false.
//! - **DETAILS** (bool): keep per-reason counts. Default false.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): `COUNT<TAB>REASON` lines for not
//!   UDP, bad packet length, bad UDP checksum.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> ipc :: IPClassifier(udp, -);
//! ipc[0] -> CheckUDPHeader -> ...;
//! ```

use rclick_core::wire::ipv4::PROTO_UDP;
use rclick_core::wire::{udp, UdpHeader};
use rclick_core::Packet;

use super::ipcommon::{after_header, ip_hdr, CheckHeader, HeaderCheck};

/// The UDP header check.
pub struct UdpCheck;

impl HeaderCheck for UdpCheck {
    const PROTO: &'static str = "UDP";
    const REASONS: &'static [&'static str] = &["not UDP", "bad packet length", "bad UDP checksum"];

    fn check(p: &Packet) -> Result<(), usize> {
        let ip = ip_hdr(p)
            .filter(|ip| ip.protocol() == PROTO_UDP)
            .ok_or(0usize)?;
        // Like Click, the UDP length is checked against the data, not
        // against the IP total length.
        let rest = after_header(&ip);
        let udp = UdpHeader::new_checked(rest).map_err(|_| 1usize)?;
        let len = udp.len() as usize;
        if len < udp::HEADER_LEN || len > rest.len() {
            return Err(1);
        }
        if !udp.verify_checksum(ip.src(), ip.dst()) {
            return Err(2);
        }
        Ok(())
    }
}

/// The CheckUDPHeader element.
pub type CheckUDPHeader = CheckHeader<UdpCheck>;

rclick_core::element_class!(CheckUDPHeader);
