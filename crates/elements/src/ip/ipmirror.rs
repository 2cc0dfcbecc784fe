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
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if p.is_shared() {
            return self.mirror_shared(p);
        }
        self.mirror(p)
    }
}

impl IPMirror {
    /// A packet whose buffer a clone shares: copied first. Out of line, so
    /// that the batch loop has no call in its way but this rare one, after
    /// which nothing of the packet is still needed.
    #[cold]
    #[inline(never)]
    fn mirror_shared(&mut self, mut p: Packet) -> Option<Packet> {
        p.writable();
        self.mirror(p)
    }

    /// Mirrors an unshared packet.
    #[inline(always)]
    fn mirror(&mut self, mut p: Packet) -> Option<Packet> {
        let Some(off) = net_off(&p) else {
            self.drops += 1;
            return None;
        };
        let transport = p.transport_offset();
        let Some(data) = p.writable_if_unique() else {
            // Not reached: `action` made the buffer unshared.
            self.drops += 1;
            return None;
        };
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
