//! # ProtocolTranslator46
//!
//! Translates IPv4 packets to IPv6 (stateless IP/ICMP translation).
//!
//! ## Synopsis
//! `ProtocolTranslator46([*keywords* PREFIX])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IPv4 packets at the network header (or at the start of the
//! packet when it is not set) and emits each as a new IPv6 packet (without
//! the link header) by RFC 7915 section 4: traffic class from the TOS, flow
//! label 0, hop limit from the TTL (decrement it before or after, as a
//! router does), the addresses under PREFIX, IPv4 options left out (but a
//! packet with an unexpired loose or strict source route option, or
//! options that cannot be walked, is dropped: RFC 7915 section 4.1), and a
//! fragment header carrying the offset, M flag and identification when the
//! IPv4 packet is a fragment. TCP and UDP checksums are adjusted for the
//! new pseudo-header (a zero UDP checksum is computed, or the packet
//! dropped if it is a fragment). ICMP becomes ICMPv6 (section 4.2): echo
//! request and reply; destination unreachable (codes 0, 1, 5-8, 11, 12 to
//! no route, 9, 10, 13, 15 to administratively prohibited, 3 to port
//! unreachable, 2 to parameter problem pointing at the next header, 4 to
//! packet too big with the MTU plus 20, at least 1280); time exceeded;
//! parameter problem with the pointer mapped. The packet an error quotes
//! is translated too, and the ICMPv6 checksum computed. Other ICMP types,
//! fragmented ICMP, ICMPv6 carried in IPv4, and malformed packets (the
//! packet shorter than its IP length) are dropped and counted.
//!
//! Differences from Click 2.1, whose translator follows RFC 2765: Click
//! sets the hop limit to TTL - 191 (mod 256) instead of the TTL, drops the
//! TOS, ignores fragmentation, and reads ICMP lengths in one byte; rclick
//! follows RFC 7915. Packets larger than 1280 bytes with DF clear are not
//! fragmented here: put an IP6Fragmenter after the translator.
//!
//! The translated packet keeps the input's annotations (Click's starts
//! without any), but for the destination address annotation, which is
//! cleared: it held the other family's address, and a route lookup on it
//! would have sent the packet astray.
//!
//! ## Keywords
//! - **PREFIX** (IPv6 prefix, a /96): where IPv4 addresses sit in IPv6
//!   addresses (RFC 6052). Default `::ffff:0:0/96`, the IPv4-mapped
//!   addresses Click uses; `64:ff9b::/96` is the well-known NAT64 prefix
//!   (rclick extension).
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ProtocolTranslator46
//!   -> CheckIP6Header -> rt6 :: LookupIP6Route(...);
//! ```

use rclick_core::conf::Args;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ipv6::HEADER_LEN;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::siit::{self, Prefix96};
use crate::ip::ipcommon::net_off;

pub struct ProtocolTranslator46 {
    prefix: Prefix96,
    drops: u64,
}

impl Default for ProtocolTranslator46 {
    fn default() -> Self {
        ProtocolTranslator46 {
            prefix: siit::MAPPED,
            drops: 0,
        }
    }
}

impl SimpleAction for ProtocolTranslator46 {
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let off = net_off(&p).unwrap_or(0);
        let input = &p.data()[off..];
        let room = input.len() + siit::GROWTH46;
        let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], room);
        let n = match q.put(room) {
            Some(out) => siit::translate46(input, &self.prefix, out, false),
            None => None,
        };
        let Some(n) = n else {
            self.drops += 1;
            return None;
        };
        q.take(room - n);
        q.copy_annotations(&p);
        // The destination annotation was the other family's address (or
        // next hop): as in Click, whose translated packet starts without
        // annotations, it is cleared, for GetIP6Address to set.
        q.set_dst_ip6_anno(std::net::Ipv6Addr::UNSPECIFIED);
        q.set_network_header(0, HEADER_LEN.min(n));
        Some(q)
    }
}

const HANDLERS: &[Handler<ProtocolTranslator46>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(ProtocolTranslator46);

impl Element for ProtocolTranslator46 {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let prefix = args.read_or_with("PREFIX", siit::parse_prefix96, siit::MAPPED);
        args.complete()?;
        self.prefix = prefix;
        Ok(())
    }
}
