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

use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::PROTO_UDP;
use rclick_core::Packet;

use super::ipcommon::{ip_hdr, net_off, CheckHeader, HeaderCheck};

const REASONS: [&str; 3] = ["not UDP", "bad packet length", "bad UDP checksum"];

fn check(p: &Packet) -> Result<(), usize> {
    let (Some(ip), Some(off)) = (ip_hdr(p), net_off(p)) else {
        return Err(0);
    };
    if ip.protocol() != PROTO_UDP {
        return Err(0);
    }
    let hl = ip.header_len();
    let ipb = &p.data()[off..];
    let udp = &ipb[hl..];
    if udp.len() < 8 {
        return Err(1);
    }
    let len = u16::from_be_bytes([udp[4], udp[5]]) as usize;
    if len < 8 || len > udp.len() {
        return Err(1);
    }
    if udp[6] != 0 || udp[7] != 0 {
        let ps =
            checksum::pseudo_header_v4(ip.src().octets(), ip.dst().octets(), PROTO_UDP, len as u16);
        if checksum::sum(&udp[..len], ps) != 0xffff {
            return Err(2);
        }
    }
    Ok(())
}

/// The UDP header check.
pub struct UdpCheck;

impl HeaderCheck for UdpCheck {
    const PROTO: &'static str = "UDP";
    const REASONS: &'static [&'static str] = &REASONS;
    fn check(p: &Packet) -> Result<(), usize> {
        check(p)
    }
}

/// The CheckUDPHeader element.
pub type CheckUDPHeader = CheckHeader<UdpCheck>;

rclick_core::element_class!(CheckUDPHeader);
