//! # ProtocolTranslator64
//!
//! Translates IPv6 packets to IPv4 (stateless IP/ICMP translation).
//!
//! ## Synopsis
//! `ProtocolTranslator64([*keywords* PREFIX])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IPv6 packets at the network header (or at the start of the
//! packet when it is not set) whose addresses both lie under PREFIX, and
//! emits each as a new IPv4 packet (without the link header) by RFC 7915
//! section 5: TOS from the traffic class, TTL from the hop limit, no
//! options; hop-by-hop, destination options and routing headers (with no
//! segments left) are dropped from the packet; a fragment header becomes
//! the IPv4 identification (low 16 bits), offset and MF flag; otherwise DF
//! is set only for packets over 1260 bytes, and a packet without DF, which
//! IPv4 routers may fragment, gets its identification from a generator
//! (RFC 6864: not repeated for its addresses and protocol while it may
//! be fragmented; an RFC 7739-style keyed hash and counters, so not
//! predictable); a packet with DF keeps identification 0. The
//! header checksum is computed and TCP and UDP checksums adjusted. ICMPv6
//! becomes ICMP (section 5.2): echo request and reply; destination
//! unreachable (codes 0, 2, 3 to host unreachable, 1 to administratively
//! prohibited, 4 to port unreachable); packet too big to fragmentation
//! needed with the MTU minus 20; time exceeded; parameter problem code 0
//! with the pointer mapped, code 1 to protocol unreachable. The quoted
//! packet of an error is translated too. Other ICMPv6 messages (neighbour
//! discovery, MLD), fragmented ICMPv6, addresses outside PREFIX, routing
//! headers with segments left, and malformed packets are dropped and
//! counted.
//!
//! Differences from Click 2.1, whose translator follows RFC 2765: Click
//! always sets DF (with identification 0), where RFC 7915 sets it only
//! above 1260 bytes (so identifications of smaller packets differ).
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
//! ... -> CheckIP6Header -> ProtocolTranslator64 -> CheckIPHeader -> rt :: LookupIPRoute(...);
//! ```

use rclick_core::conf::Args;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use rclick_core::wire::{checksum, Ipv6Header};

use super::common::{find_frag_header, IdGen};
use super::siit::{self, Prefix96};
use crate::ip::ipcommon::net_off;

pub struct ProtocolTranslator64 {
    prefix: Prefix96,
    drops: u64,
    ids: IdGen,
}

impl Default for ProtocolTranslator64 {
    fn default() -> Self {
        ProtocolTranslator64 {
            prefix: siit::MAPPED,
            drops: 0,
            ids: IdGen::default(),
        }
    }
}

impl SimpleAction for ProtocolTranslator64 {
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let off = net_off(&p).unwrap_or(0);
        let input = &p.data()[off..];
        let room = input.len();
        let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], room);
        let n = match q.put(room) {
            Some(out) => siit::translate64(input, &self.prefix, out, false),
            None => None,
        };
        let Some(n) = n else {
            self.drops += 1;
            return None;
        };
        q.take(room - n);
        // RFC 7915 section 5.1 clears DF up to 1260 bytes; such a datagram
        // may be fragmented on its way, so its identification comes from a
        // generator (RFC 6864: not repeated for a source, destination and
        // protocol). A translated fragment keeps its own.
        let unfragmented = Ipv6Header::new_checked(input)
            .ok()
            .and_then(|h| find_frag_header(h.next_header(), h.payload()).ok())
            .is_some_and(|f| f.is_none());
        if unfragmented {
            if let Some(h) = q.writable().get_mut(..siit::V4_LEN) {
                if h[6..8] == [0, 0] {
                    let mut flow = [0u8; 9];
                    flow[..8].copy_from_slice(&h[12..20]);
                    flow[8] = h[9];
                    let id = self.ids.next(&flow) as u16;
                    h[4..6].copy_from_slice(&id.to_be_bytes());
                    h[10..12].fill(0);
                    let c = checksum::checksum(h);
                    h[10..12].copy_from_slice(&c.to_be_bytes());
                }
            }
        }
        q.copy_annotations(&p);
        // The destination annotation was the other family's address (or
        // next hop): as in Click, whose translated packet starts without
        // annotations, it is cleared, for GetIPAddress to set.
        q.set_dst_ip6_anno(std::net::Ipv6Addr::UNSPECIFIED);
        q.set_network_header(0, siit::V4_LEN.min(n));
        Some(q)
    }
}

const HANDLERS: &[Handler<ProtocolTranslator64>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(ProtocolTranslator64);

impl Element for ProtocolTranslator64 {
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
