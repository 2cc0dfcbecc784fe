//! # EraseIPPayload
//!
//! Erases the TCP or UDP payload of IPv4 and IPv6 packets.
//!
//! ## Synopsis
//! `EraseIPPayload()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader,
//! CheckIP6Header or MarkIP6Header upstream). Every byte after the TCP
//! header (its data offset) or the 8-byte UDP header, to the end of the
//! packet, becomes zero, and the TCP or UDP checksum is set to zero; the
//! packet keeps its length. ICMP and ICMPv6 packets pass unchanged; packets
//! of any other protocol are dropped. For anonymizing traces.
//!
//! IPv4 packets are found by the IP version; their transport header is the
//! transport header annotation (which CheckIPHeader sets), else the end of
//! the IP header. IPv6 packets' transport header is found past any
//! extension headers; a later fragment (no transport header) counts as
//! another protocol and is dropped.
//!
//! Click 2.1's EraseIPPayload handles IPv4 only (it reads an IPv6 packet
//! as IPv4); the IPv6 support is from the IPv6 elements report. Packets
//! without an IP header at the network header (Click reads them anyway)
//! are dropped too, and `drops` counts every dropped packet.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> Strip(14) -> CheckIPHeader -> EraseIPPayload -> ToDump(anon.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6};
use rclick_core::wire::ipv6ext::upper_layer;
use rclick_core::wire::{Ipv4Header, Ipv6Header};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use crate::ip::ipcommon::net_off;

#[derive(Default)]
pub struct EraseIPPayload {
    drops: u64,
}

/// The upper-layer protocol and the transport header's offset in the
/// packet.
fn transport(p: &Packet) -> Option<(u8, usize)> {
    let off = net_off(p)?;
    let d = &p.data()[off..];
    match d.first()? >> 4 {
        4 => {
            let h = Ipv4Header::new_checked(d).ok()?;
            let th = match p.transport_offset() {
                Some(t) if t >= 0 && t as usize <= p.len() => t as usize,
                _ => off + h.header_len(),
            };
            Some((h.protocol(), th))
        }
        6 => {
            let h = Ipv6Header::new_checked(d).ok()?;
            let (nh, at) = upper_layer(h.next_header(), h.payload()).ok()?;
            Some((nh, off + HEADER_LEN + at))
        }
        _ => None,
    }
}

impl SimpleAction for EraseIPPayload {
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let Some((proto, th)) = transport(&p) else {
            self.drops += 1;
            return None;
        };
        let len = p.len();
        let (data_at, sum_at) = match proto {
            PROTO_TCP => {
                // Without the data offset byte there is no payload to find.
                let data_at = p
                    .data()
                    .get(th + 12)
                    .map_or(len, |b| th + (b >> 4) as usize * 4);
                (data_at, th + 16)
            }
            PROTO_UDP => (th + 8, th + 6),
            PROTO_ICMP | PROTO_ICMPV6 => return Some(p),
            _ => {
                self.drops += 1;
                return None;
            }
        };
        let b = p.writable();
        if data_at < len {
            b[data_at..].fill(0);
        }
        if sum_at + 2 <= len {
            b[sum_at..sum_at + 2].fill(0);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<EraseIPPayload>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(EraseIPPayload);

impl Element for EraseIPPayload {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }
}
