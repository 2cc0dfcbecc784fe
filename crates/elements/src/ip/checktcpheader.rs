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

use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::PROTO_TCP;
use rclick_core::Packet;

use super::ipcommon::{ip_hdr, net_off, CheckHeader, HeaderCheck};

const REASONS: [&str; 3] = ["not TCP", "bad packet length", "bad TCP checksum"];

fn check(p: &Packet) -> Result<(), usize> {
    let (Some(ip), Some(off)) = (ip_hdr(p), net_off(p)) else {
        return Err(0);
    };
    if ip.protocol() != PROTO_TCP {
        return Err(0);
    }
    let hl = ip.header_len();
    let ipb = &p.data()[off..];
    let total = ip.total_len() as usize;
    if total < hl || total > ipb.len() {
        return Err(1);
    }
    let tcp = &ipb[hl..total];
    if tcp.len() < 20 {
        return Err(1);
    }
    let doff = ((tcp[12] >> 4) as usize) * 4;
    if doff < 20 || doff > tcp.len() {
        return Err(1);
    }
    let ps = checksum::pseudo_header_v4(
        ip.src().octets(),
        ip.dst().octets(),
        PROTO_TCP,
        tcp.len() as u16,
    );
    if checksum::sum(tcp, ps) != 0xffff {
        return Err(2);
    }
    Ok(())
}

/// The TCP header check.
pub struct TcpCheck;

impl HeaderCheck for TcpCheck {
    const PROTO: &'static str = "TCP";
    const REASONS: &'static [&'static str] = &REASONS;
    fn check(p: &Packet) -> Result<(), usize> {
        check(p)
    }
}

/// The CheckTCPHeader element.
pub type CheckTCPHeader = CheckHeader<TcpCheck>;

rclick_core::element_class!(CheckTCPHeader);
