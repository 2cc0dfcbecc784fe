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
use rclick_core::element::Filter;
use rclick_core::wire::checksum::update16;
use rclick_core::wire::icmp::{ICMP_ECHO, ICMP_ECHOREPLY};
use rclick_core::wire::ipv4::PROTO_ICMP;
use rclick_core::wire::IcmpHeader;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

use super::ipcommon::{ip_hdr, ip_hdr_mut};

#[derive(Default)]
pub struct ICMPPingResponder;

fn is_echo_request(p: &Packet) -> bool {
    ip_hdr(p).is_some_and(|ip| {
        ip.protocol() == PROTO_ICMP
            && !ip.is_fragment()
            && IcmpHeader::new_checked(ip.payload()).is_ok_and(|icmp| icmp.icmp_type() == ICMP_ECHO)
    })
}

impl Filter for ICMPPingResponder {
    fn filter(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        if !is_echo_request(&p) {
            return Err(p);
        }
        let Some(mut ip) = ip_hdr_mut(&mut p) else {
            return Err(p);
        };
        // Swapping the addresses leaves the checksum as it is; the other
        // changes update it incrementally, as Click does.
        let (src, dst) = (ip.src(), ip.dst());
        ip.set_src(dst);
        ip.set_dst(src);
        let mut sum = update16(ip.checksum(), ip.frag_word(), 0);
        ip.set_frag_word(0);
        let proto = ip.protocol();
        sum = update16(
            sum,
            u16::from_be_bytes([ip.ttl(), proto]),
            u16::from_be_bytes([255, proto]),
        );
        ip.set_ttl(255);
        ip.set_checksum(sum);
        if let Ok(mut icmp) = IcmpHeader::new_checked(ip.payload_mut()) {
            let old = u16::from_be_bytes([icmp.icmp_type(), icmp.code()]);
            icmp.set_type(ICMP_ECHOREPLY);
            icmp.set_code(0);
            let c = update16(
                icmp.checksum(),
                old,
                u16::from_be_bytes([ICMP_ECHOREPLY, 0]),
            );
            icmp.set_checksum(c);
            // Click's click_update_zero_in_cksum: an incremental update
            // gives 0x0000 where the whole-message checksum is 0xffff
            // (a message summing to zero, such as all zeros).
            if c == 0 {
                let msg = ip.payload_mut();
                if rclick_core::wire::checksum::sum(msg, 0) == 0 {
                    if let Ok(mut icmp) = IcmpHeader::new_checked(msg) {
                        icmp.set_checksum(0xffff);
                    }
                }
            }
        }
        p.set_dst_ip_anno(src);
        p.set_timestamp_anno(ctx.now());
        p.set_paint_anno(0);
        Ok(p)
    }
}

rclick_core::element_class!(ICMPPingResponder);

impl Element for ICMPPingResponder {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter);
}
