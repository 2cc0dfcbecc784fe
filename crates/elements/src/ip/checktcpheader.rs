//! # CheckTCPHeader
//!
//! Checks TCP headers.
//!
//! ## Synopsis
//! `CheckTCPHeader([keywords VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader upstream).
//! Checks that the protocol is TCP, that the segment (IP length minus IP
//! header) is at least 20 bytes and fits in the packet, that the data offset
//! is at least 20 bytes and within the segment, and that the TCP checksum
//! over pseudo-header and segment is correct (RFC 793). Invalid packets go
//! to output 1 if present, else are dropped; the first (every one with
//! VERBOSE) is reported as `NAME: TCP header check failed: REASON`.
//!
//! ## Keywords
//! - **VERBOSE** (bool): report every invalid packet. Default false.
//! - **DETAILS** (bool): keep per-reason counts. Default false.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): `COUNT<TAB>REASON` lines for not
//!   TCP, bad packet length, bad TCP checksum.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> ipc :: IPClassifier(tcp, -);
//! ipc[0] -> CheckTCPHeader -> ...;
//! ```

use rclick_core::wire::ipv4::PROTO_TCP;
use rclick_core::wire::TcpHeader;
use rclick_core::Packet;

use super::ipcommon::{exact_payload, ip_hdr, CheckHeader, HeaderCheck};

/// The TCP header check.
pub struct TcpCheck;

impl HeaderCheck for TcpCheck {
    const PROTO: &'static str = "TCP";
    const REASONS: &'static [&'static str] = &["not TCP", "bad packet length", "bad TCP checksum"];

    fn check(p: &Packet) -> Result<(), usize> {
        let ip = ip_hdr(p)
            .filter(|ip| ip.protocol() == PROTO_TCP)
            .ok_or(0usize)?;
        let segment = exact_payload(&ip).ok_or(1usize)?;
        let tcp = TcpHeader::new_checked(segment).map_err(|_| 1usize)?;
        if !tcp.verify_checksum(ip.src(), ip.dst()) {
            return Err(2);
        }
        Ok(())
    }
}

/// The CheckTCPHeader element.
pub type CheckTCPHeader = CheckHeader<TcpCheck>;

rclick_core::element_class!(CheckTCPHeader);
