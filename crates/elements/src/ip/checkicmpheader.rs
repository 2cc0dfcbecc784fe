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

use rclick_core::conf::Args;
use rclick_core::element::{processing, HandlerSpec};
use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::PROTO_ICMP;
use rclick_core::{simple_element, ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, net_off, DropStats};

const REASONS: [&str; 3] = ["not ICMP", "bad packet length", "bad ICMP checksum"];

#[derive(Default)]
pub struct CheckICMPHeader {
    stats: DropStats,
}

fn check(p: &Packet) -> Result<(), usize> {
    let (Some(ip), Some(off)) = (ip_hdr(p), net_off(p)) else {
        return Err(0);
    };
    if ip.protocol() != PROTO_ICMP {
        return Err(0);
    }
    let hl = ip.header_len();
    let ipb = &p.data()[off..];
    let total = ip.total_len() as usize;
    if total < hl + 8 || total > ipb.len() {
        return Err(1);
    }
    if !checksum::verify(&ipb[hl..total]) {
        return Err(2);
    }
    Ok(())
}

impl SimpleAction for CheckICMPHeader {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        match check(&p) {
            Ok(()) => Some(p),
            Err(r) => {
                self.stats.drop("ICMP", r, &REASONS, p, ctx);
                None
            }
        }
    }
}

impl Element for CheckICMPHeader {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::AGNOSTIC_PUSH_ERROR
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let verbose = args.read_or("VERBOSE", false);
        let details = args.read_or("DETAILS", false);
        args.complete()?;
        self.stats = DropStats::new(verbose, details, REASONS.len());
        Ok(())
    }

    simple_element!();

    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut h = vec![HandlerSpec::read("drops")];
        if self.stats.details.is_some() {
            h.push(HandlerSpec::read("drop_details"));
        }
        h
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "drops" => Ok(self.stats.drops.to_string()),
            "drop_details" => self
                .stats
                .details_text(&REASONS)
                .ok_or_else(|| "no 'drop_details' handler".to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }
}
