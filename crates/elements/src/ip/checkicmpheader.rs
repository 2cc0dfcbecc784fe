//! # CheckICMPHeader
//!
//! Checks ICMP headers.
//!
//! ## Synopsis
//! `CheckICMPHeader([keywords VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader upstream).
//! Checks that the protocol is ICMP, that the ICMP message (IP length minus
//! IP header) is at least 8 bytes and fits in the packet, and that the ICMP
//! checksum over the whole message is correct (RFC 792). Invalid packets go
//! to output 1 if present, else are dropped; the first (every one with
//! VERBOSE) is reported as `NAME: ICMP header check failed: REASON`.
//!
//! ## Keywords
//! - **VERBOSE** (bool): report every invalid packet. Default false.
//! - **DETAILS** (bool): keep per-reason counts. Default false.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): `COUNT<TAB>REASON` lines for not
//!   ICMP, bad packet length, bad ICMP checksum.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> ipc :: IPClassifier(icmp, -);
//! ipc[0] -> CheckICMPHeader -> ICMPPingResponder -> ...;
//! ```

use rclick_core::wire::ipv4::PROTO_ICMP;
use rclick_core::wire::IcmpHeader;
use rclick_core::Packet;

use super::ipcommon::{exact_payload, ip_hdr, CheckHeader, HeaderCheck};

/// The ICMP header check.
pub struct IcmpCheck;

impl HeaderCheck for IcmpCheck {
    const PROTO: &'static str = "ICMP";
    const REASONS: &'static [&'static str] =
        &["not ICMP", "bad packet length", "bad ICMP checksum"];

    fn check(p: &Packet) -> Result<(), usize> {
        let ip = ip_hdr(p)
            .filter(|ip| ip.protocol() == PROTO_ICMP)
            .ok_or(0usize)?;
        let message = exact_payload(&ip).ok_or(1usize)?;
        let icmp = IcmpHeader::new_checked(message).map_err(|_| 1usize)?;
        if !icmp.verify_checksum() {
            return Err(2);
        }
        Ok(())
    }
}

/// The CheckICMPHeader element.
pub type CheckICMPHeader = CheckHeader<IcmpCheck>;

rclick_core::element_class!(CheckICMPHeader);
