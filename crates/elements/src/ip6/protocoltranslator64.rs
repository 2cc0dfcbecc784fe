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
//! the IPv4 identification (low 16 bits), offset and MF flag; otherwise the
//! identification is 0 and DF is set only for packets over 1260 bytes. The
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
//! always sets DF, where RFC 7915 sets it only above 1260 bytes.
//!
//! The translated packet keeps the input's annotations (Click's starts
//! without any).
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

use super::siit::{self, Prefix96};
use crate::ip::ipcommon::net_off;

pub struct ProtocolTranslator64 {
    prefix: Prefix96,
    drops: u64,
}

impl Default for ProtocolTranslator64 {
    fn default() -> Self {
        ProtocolTranslator64 {
            prefix: siit::MAPPED,
            drops: 0,
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
        q.copy_annotations(&p);
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
