//! # ICMPPingResponder
//!
//! Answers ICMP echo requests.
//!
//! ## Synopsis
//! `ICMPPingResponder()`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for replies; optional push output
//! 1 for other packets. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set. Turns each ICMP echo
//! request (type 8) into an echo reply (type 0, code 0): swaps the IP source
//! and destination, clears the fragment flags and offset, sets the TTL to
//! 255, updates the IP and ICMP checksums incrementally (RFC 1624), sets
//! the destination annotation to the new destination, the timestamp
//! annotation to now and the paint annotation to 0, and emits the reply on
//! output 0. Packets that are not well-formed echo requests go to output 1,
//! or are dropped if it is absent.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> IPClassifier(icmp type echo) -> ICMPPingResponder -> rt;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::processing;
use rclick_core::wire::checksum::update16;
use rclick_core::wire::ipv4::PROTO_ICMP;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, net_off};

const ICMP_ECHO: u8 = 8;
const ICMP_ECHOREPLY: u8 = 0;

#[derive(Default)]
pub struct ICMPPingResponder;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

impl SimpleAction for ICMPPingResponder {
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let ok = match (ip_hdr(&p), net_off(&p)) {
            (Some(ip), Some(_)) => {
                let hl = ip.header_len();
                let payload = ip.payload();
                ip.protocol() == PROTO_ICMP
                    && !ip.is_fragment()
                    && payload.len() >= 8
                    && payload[0] == ICMP_ECHO
                    && hl >= 20
            }
            _ => false,
        };
        if !ok {
            ctx.emit(1, p);
            return None;
        }
        let off = net_off(&p).unwrap_or(0);
        let now = ctx.now();
        let d = &mut p.writable()[off..];
        let hl = ((d[0] & 0x0f) as usize) * 4;
        // Swap addresses: the checksum does not change.
        let mut tmp = [0u8; 4];
        tmp.copy_from_slice(&d[12..16]);
        d.copy_within(16..20, 12);
        d[16..20].copy_from_slice(&tmp);
        let mut sum = be16(d, 10);
        // Clear the fragment word.
        sum = update16(sum, be16(d, 6), 0);
        d[6..8].fill(0);
        // TTL 255.
        let old = be16(d, 8);
        d[8] = 255;
        sum = update16(sum, old, be16(d, 8));
        d[10..12].copy_from_slice(&sum.to_be_bytes());
        // Echo reply.
        let icmp = &mut d[hl..];
        let old = be16(icmp, 0);
        icmp[0] = ICMP_ECHOREPLY;
        icmp[1] = 0;
        let c = update16(be16(icmp, 2), old, be16(icmp, 0));
        icmp[2..4].copy_from_slice(&c.to_be_bytes());
        let dst = std::net::Ipv4Addr::new(d[16], d[17], d[18], d[19]);
        p.set_dst_ip_anno(dst);
        p.set_timestamp_anno(now);
        p.set_paint_anno(0);
        Some(p)
    }
}

rclick_core::element_class!(ICMPPingResponder);

impl Element for ICMPPingResponder {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::AGNOSTIC_PUSH_ERROR
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
