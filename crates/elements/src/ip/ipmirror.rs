//! # IPMirror
//!
//! Swaps IP source and destination, and TCP/UDP ports.
//!
//! ## Synopsis
//! `IPMirror([DST_ANNO])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Packets need their IP header annotation (MarkIPHeader, CheckIPHeader).
//! Exchanges each packet's source and destination IPv4 addresses. On the
//! first fragment of a TCP or UDP packet with at least 8 bytes of
//! transport header, the source and destination ports are exchanged too,
//! and on TCP with at least 12 bytes, the sequence and acknowledgment
//! numbers. No checksum changes: exchanging 16-bit words leaves the
//! ones'-complement sums as they were.
//!
//! With DST_ANNO true (the default), the destination IP address annotation
//! is set to the new destination address.
//!
//! Packets without an IP header annotation, or whose header does not fit
//! in the data, are dropped and counted (`drops`); Click crashes on them.
//! A TCP header of 8 to 11 bytes gets its ports exchanged but not its
//! sequence numbers: Click reads the acknowledgment number past the end
//! of such a packet.
//!
//! ## Keyword arguments
//! - `DST_ANNO` (boolean, default true): set the destination address
//!   annotation.
//!
//! ## Handlers
//! - `drops` (read): packets dropped for lacking an IP header.
//!
//! ## Example
//! ```click
//! // Answer every UDP packet to where it came from.
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> IPMirror
//!   -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> Queue -> ToDevice(eth0);
//! ```

use rclick_core::conf::Args;
use std::net::Ipv4Addr;

use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::ipcommon::net_off;

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

pub struct IPMirror {
    dst_anno: bool,
    drops: u64,
}

impl Default for IPMirror {
    fn default() -> Self {
        IPMirror {
            dst_anno: true,
            drops: 0,
        }
    }
}

impl SimpleAction for IPMirror {
    // Inline into the batch loop: a call per packet (and its register
    // saves) cost a fifth of the element at one packet per batch, and
    // `#[inline]` alone left the call (23 instructions a lap more at
    // BURST 32 in nat-10k-baseline, 10 fewer at BURST 1).
    #[inline(always)]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.mirror_fast(&mut p) {
            return Some(p);
        }
        self.mirror(p)
    }
}

impl IPMirror {
    /// The usual packet, mirrored with the fewest tests: a 20-byte IPv4
    /// header of a TCP or UDP packet that is not a later fragment, its
    /// transport header right behind it (as the annotation says, or no
    /// annotation) with at least 8 bytes there. Does what
    /// [`IPMirror::mirror`] does to it; any other packet is left as it was
    /// (false) for `mirror`.
    #[inline(always)]
    fn mirror_fast(&self, p: &mut Packet) -> bool {
        if p.transport_offset().is_some() && p.network_header_length() != Some(20) {
            return false;
        }
        let Some((ip, l4)) = p
            .network_header_mut()
            .and_then(|d| d.split_first_chunk_mut::<20>())
        else {
            return false;
        };
        let tcp = match ip[9] {
            PROTO_TCP => true,
            PROTO_UDP => false,
            _ => return false,
        };
        if ip[0] != 0x45 || (ip[6] & 0x1f) | ip[7] != 0 || l4.len() < 8 {
            return false;
        }
        let src = [ip[12], ip[13], ip[14], ip[15]];
        let addrs = ip.last_chunk_mut::<8>().expect("20 bytes hold 8");
        *addrs = u64::from_ne_bytes(*addrs).rotate_left(32).to_ne_bytes();
        if let Some(ports) = l4.first_chunk_mut::<4>() {
            *ports = u32::from_ne_bytes(*ports).rotate_left(16).to_ne_bytes();
        }
        if tcp {
            if let Some(seq_ack) = l4.get_mut(4..).and_then(|t| t.first_chunk_mut::<8>()) {
                *seq_ack = u64::from_ne_bytes(*seq_ack).rotate_left(32).to_ne_bytes();
            }
        }
        if self.dst_anno {
            p.set_dst_ip_anno(Ipv4Addr::from(src));
        }
        true
    }

    /// Any packet `mirror_fast` leaves: checked in full. Out of line, so
    /// that the batch loop around the fast path keeps its values in
    /// registers.
    #[inline(never)]
    fn mirror(&mut self, mut p: Packet) -> Option<Packet> {
        let Some(off) = net_off(&p) else {
            self.drops += 1;
            return None;
        };
        let transport = p.transport_offset();
        let data = p.writable();
        // The fixed header as an array (fields at fixed offsets, without
        // a bounds check each), checked as `Ipv4Header::new_checked`
        // does: version 4, a header length of 20 to the bytes there.
        let Some((ip, after)) = data
            .get_mut(off..)
            .and_then(|d| d.split_first_chunk_mut::<20>())
        else {
            self.drops += 1;
            return None;
        };
        let hl = usize::from(ip[0] & 0x0f) * 4;
        // A 20-byte IPv4 header (0x45, most packets) passes the checks
        // below by itself: one test instead of three.
        if ip[0] != 0x45 && (ip[0] >> 4 != 4 || hl < 20 || hl - 20 > after.len()) {
            self.drops += 1;
            return None;
        }
        let src = [ip[12], ip[13], ip[14], ip[15]];
        // The two addresses are the halves of 8 bytes: a rotation by 32
        // bits exchanges them, in either byte order.
        let addrs = ip.last_chunk_mut::<8>().expect("20 bytes hold 8");
        *addrs = u64::from_ne_bytes(*addrs).rotate_left(32).to_ne_bytes();
        let proto = ip[9];
        let mirror_ports = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff == 0
            && (proto == PROTO_TCP || proto == PROTO_UDP);
        if mirror_ports {
            // Click mirrors at the transport header annotation; without
            // one, the header's own length says where it is.
            let th = match transport {
                Some(t) if t >= 0 => t as usize,
                _ => off + hl,
            };
            // As Click: ports only when a UDP header's worth (8 bytes) is
            // there; the sequence numbers when TCP's first 12 are.
            if let Some(t) = data.get_mut(th..).filter(|t| t.len() >= 8) {
                if let Some(ports) = t.first_chunk_mut::<4>() {
                    *ports = u32::from_ne_bytes(*ports).rotate_left(16).to_ne_bytes();
                }
                if proto == PROTO_TCP {
                    if let Some(seq_ack) = t.get_mut(4..).and_then(|t| t.first_chunk_mut::<8>()) {
                        *seq_ack = u64::from_ne_bytes(*seq_ack).rotate_left(32).to_ne_bytes();
                    }
                }
            }
        }
        if self.dst_anno {
            p.set_dst_ip_anno(Ipv4Addr::from(src));
        }
        Some(p)
    }
}

rclick_core::element_class!(IPMirror);

const HANDLERS: &[Handler<IPMirror>] = &[Handler::data("drops", |e| &e.drops)];

impl Element for IPMirror {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let dst_anno = args.read_p::<bool>("DST_ANNO");
        args.complete()?;
        self.dst_anno = dst_anno.unwrap_or(true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Seen = Option<(Vec<u8>, Ipv4Addr, Option<isize>, Option<isize>)>;

    fn seen(p: Option<Packet>) -> Seen {
        p.map(|p| {
            (
                p.data().to_vec(),
                p.dst_ip_anno(),
                p.network_offset(),
                p.transport_offset(),
            )
        })
    }

    fn mirror_both_ways(m: &mut IPMirror, mut p: Packet) -> Option<Packet> {
        if m.mirror_fast(&mut p) {
            return Some(p);
        }
        m.mirror(p)
    }

    #[test]
    fn plain_udp_and_tcp_packets_take_the_fast_path() {
        let m = IPMirror::default();
        for proto in [PROTO_UDP, PROTO_TCP] {
            let mut bytes = [0u8; 40];
            bytes[0] = 0x45;
            bytes[9] = proto;
            bytes[12..20].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
            for transport_annotated in [false, true] {
                let mut p = Packet::from_slice(&bytes);
                if transport_annotated {
                    p.set_network_header(0, 20);
                } else {
                    p.set_network_offset(0);
                }
                assert!(m.mirror_fast(&mut p), "proto {proto}");
                assert_eq!(&p.data()[12..20], &[5, 6, 7, 8, 1, 2, 3, 4]);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the packet, the fast path followed by the general one
        /// gives what the general path alone gives: the same bytes,
        /// annotation, offsets and drops, and a clone sharing the buffer
        /// keeps the original bytes.
        #[test]
        fn the_fast_path_agrees_with_the_general_one(
            mut bytes in prop_oneof![
                proptest::collection::vec(any::<u8>(), 26..48),
                proptest::collection::vec(any::<u8>(), 0..48),
            ],
            first in prop_oneof![Just(0x45u8), Just(0x46), Just(0x44), Just(0x55), any::<u8>()],
            proto in prop_oneof![Just(PROTO_TCP), Just(PROTO_UDP), any::<u8>()],
            frag in prop_oneof![
                Just([0u8, 0]),
                Just([0x20, 0]),
                Just([0x40, 0]),
                Just([0, 1]),
                Just([1, 0]),
                Just([0x80, 0]),
                any::<[u8; 2]>(),
            ],
            network in prop_oneof![Just(Some(0usize)), (0..6usize).prop_map(Some), Just(None)],
            transport in prop_oneof![Just(None), Just(Some(20usize)), (0..30usize).prop_map(Some)],
            pulled in 0..3usize,
            shared in any::<bool>(),
            dst_anno in any::<bool>(),
        ) {
            let at = network.unwrap_or(0);
            for (i, b) in [(0, first), (6, frag[0]), (7, frag[1]), (9, proto)] {
                if let Some(x) = bytes.get_mut(at + i) {
                    *x = b;
                }
            }
            let mut p = Packet::from_slice(&bytes);
            if let Some(n) = network.filter(|&n| n <= bytes.len()) {
                p.set_network_offset(n);
            }
            if let Some(t) = transport.map(|t| t + at).filter(|&t| t <= bytes.len()) {
                p.set_transport_header(t);
            }
            p.pull(pulled);
            let before = p.data().to_vec();
            let (fast_in, general_in) = (p.deep_copy(), p.deep_copy());
            let keep = shared.then(|| fast_in.clone());
            let mut fast = IPMirror { dst_anno, drops: 0 };
            let mut general = IPMirror { dst_anno, drops: 0 };
            let got = seen(mirror_both_ways(&mut fast, fast_in));
            let want = seen(general.mirror(general_in));
            prop_assert_eq!(got, want);
            prop_assert_eq!(fast.drops, general.drops);
            if let Some(k) = keep {
                prop_assert_eq!(k.data(), &before[..]);
            }
        }
    }
}
