//! # IP6Fragmenter
//!
//! Fragments IPv6 packets larger than the MTU, at their source.
//!
//! ## Synopsis
//! `IP6Fragmenter(MTU [, *keywords* FORWARDING, HEADROOM])`
//!
//! ## Ports and processing
//! One push input; push output 0 for packets that fit and for fragments;
//! optional push output 1 for packets that are not fragmented. Processing
//! `h/h`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set. A packet whose length
//! from the network header on is at most MTU passes unchanged to output 0.
//!
//! A larger packet is split into fragments as a source node does (RFC 8200
//! section 4.5): the unfragmentable part (the fixed header, a hop-by-hop
//! options header, and destination options and routing headers up to the
//! last routing header) starts every fragment, its last next-header field
//! becoming 44; then comes a fragment header carrying the original next
//! header, the offset, the M flag and one identification for all the
//! fragments of the packet; then the fragment's share of the rest. Every
//! fragment's data is a multiple of 8 bytes except the last's, each
//! fragment is at most MTU bytes, and the payload length of each is its
//! own. Fragments leave in order, each a new packet starting at its IPv6
//! header with a copy of the original's annotations (link-level bytes
//! before the network header are not copied). Identifications follow RFC
//! 7739 section 5.3: a keyed hash (a secret key drawn at configuration) of
//! the source and destination addresses chooses an offset and one of 256
//! counters, and the identification is offset plus counter, so packets to
//! one destination do not repeat an identification for 2^32 packets, and
//! nobody can tell from one destination's identifications what another's
//! will be.
//!
//! Routers do not fragment packets in transit (RFC 8200 section 5): with
//! FORWARDING true, every packet larger than MTU goes to output 1 unchanged
//! for `ICMP6Error(ADDR, 2, 0, MTU M)`, a Packet Too Big message.
//!
//! A too-large packet also goes to output 1 (dropped when output 1 is
//! absent) and is counted in `drops` when it cannot be fragmented: a
//! malformed or truncated IPv6 header or extension header chain, a packet
//! that already has a fragment header, a jumbogram (payload length 0), or
//! one whose unfragmentable part, fragment header and the whole header
//! chain up to the upper-layer header (RFC 7112) plus 8 bytes of data do
//! not fit in MTU.
//!
//! Click 2.1's IP6Fragmenter does not fragment: it passes packets up to
//! MTU and neither emits nor frees larger ones (a leak). rclick fragments
//! them as its documentation says. Click's documentation mentions a DF
//! flag IPv6 does not have; FORWARDING is rclick's.
//!
//! ## Keywords
//! - **MTU** (unsigned, at least 1280 when fragmenting is to work on any
//!   packet; at least 56): the maximum packet length from the IPv6 header.
//! - **FORWARDING** (boolean): never fragment; too-big packets go to output
//!   1. Default false (rclick extension).
//! - **HEADROOM** (unsigned): headroom of fragment packets. Default 64
//!   (rclick extension).
//!
//! ## Handlers
//! - `drops` (read): packets sent to output 1.
//! - `fragments` (read): fragments emitted.
//!
//! ## Example
//! ```click
//! frag :: IP6Fragmenter(1280);
//! ... -> frag -> IP6NDSolicitor(fe80::1, 0:1:2:3:4:5) -> Queue -> ToDevice(eth0);
//! frag[1] -> ICMP6Error(fe80::1, 2, 0, MTU 1280) -> rt;
//! ```

use rclick_core::conf::{parse_bool, parse_u32, parse_usize, Args};
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_FRAGMENT};
use rclick_core::wire::ipv6ext::FRAG_HEADER_LEN;
use rclick_core::wire::{Ipv6FragHeader, Ipv6FragRepr, Ipv6Header};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{frag_split, ip6_hdr, upper_header_min, IdGen};
use crate::ip::ipcommon::net_off;

#[derive(Default)]
pub struct IP6Fragmenter {
    mtu: usize,
    forwarding: bool,
    headroom: usize,
    drops: u64,
    fragments: u64,
    ids: IdGen,
}

impl IP6Fragmenter {
    fn reject(&mut self, p: Packet, ctx: &mut Ctx) {
        self.drops += 1;
        ctx.emit(1, p);
    }

    fn fragment(&mut self, p: Packet, ctx: &mut Ctx) {
        if self.forwarding {
            self.reject(p, ctx);
            return;
        }
        let Some(off) = net_off(&p) else {
            self.reject(p, ctx);
            return;
        };
        let (plen, split) = match ip6_hdr(&p) {
            Some(h) => {
                let plen = h.payload_len() as usize;
                if plen == 0 || p.len() - off < HEADER_LEN + plen {
                    // A jumbogram, or a truncated packet.
                    (0, None)
                } else {
                    (plen, frag_split(h.next_header(), h.payload()).ok())
                }
            }
            None => (0, None),
        };
        let Some(s) = split else {
            self.reject(p, ctx);
            return;
        };
        if HEADER_LEN + plen <= self.mtu {
            // Only link-level padding made it look too big.
            ctx.emit(0, p);
            return;
        }
        let unfrag = HEADER_LEN + s.unfrag_ext;
        let per_frag = self.mtu.saturating_sub(unfrag + FRAG_HEADER_LEN) & !7;
        // The whole header chain, the upper-layer header included (RFC
        // 7112), and at least 8 bytes in the first fragment.
        let chain = HEADER_LEN + s.chain_end - unfrag + upper_header_min(s.chain_end_nh);
        if s.chain_end_nh == PROTO_FRAGMENT || per_frag < 8 || per_frag < chain {
            self.reject(p, ctx);
            return;
        }
        let data = &p.data()[off..off + HEADER_LEN + plen];
        let ident = self.ids.next(&data[8..40]);
        let rest = &data[unfrag..];
        let mut pos = 0;
        while pos < rest.len() {
            let dlen = per_frag.min(rest.len() - pos);
            let more = pos + dlen < rest.len();
            let total = unfrag + FRAG_HEADER_LEN + dlen;
            let mut q = Packet::with_room(self.headroom, &[], total);
            {
                let Some(b) = q.put(total) else { break };
                b[..unfrag].copy_from_slice(&data[..unfrag]);
                match s.nh_field {
                    Some(f) => b[HEADER_LEN + f] = PROTO_FRAGMENT,
                    None => b[6] = PROTO_FRAGMENT,
                }
                Ipv6Header::new_unchecked(&mut b[..HEADER_LEN])
                    .set_payload_len((total - HEADER_LEN) as u16);
                Ipv6FragRepr {
                    next_header: s.frag_nh,
                    frag_offset: pos as u16,
                    more_frags: more,
                    ident,
                }
                .emit(&mut Ipv6FragHeader::new_unchecked(
                    &mut b[unfrag..unfrag + FRAG_HEADER_LEN],
                ));
                b[unfrag + FRAG_HEADER_LEN..].copy_from_slice(&rest[pos..pos + dlen]);
            }
            q.set_network_header(0, HEADER_LEN);
            q.copy_annotations(&p);
            ctx.emit(0, q);
            self.fragments += 1;
            pos += dlen;
        }
    }
}

const HANDLERS: &[Handler<IP6Fragmenter>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("fragments", |e| &e.fragments),
];

rclick_core::element_class!(IP6Fragmenter);

impl Element for IP6Fragmenter {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let mtu: u32 = args.read_mp_with("MTU", parse_u32);
        let forwarding = args.read_or_with("FORWARDING", parse_bool, false);
        let headroom = args.read_or_with("HEADROOM", parse_usize, DEFAULT_HEADROOM);
        args.complete()?;
        // Fixed header, fragment header and 8 bytes of data.
        if mtu < 56 {
            return Err("MTU must be at least 56".into());
        }
        self.mtu = mtu as usize;
        self.forwarding = forwarding;
        self.headroom = headroom.min(4096);
        self.ids = IdGen::default();
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let mtu = self.mtu;
        let fits = |p: &Packet| match net_off(p) {
            Some(off) => p.len() - off <= mtu,
            None => false,
        };
        if batch.packets().iter().all(fits) {
            ctx.emit_batch(0, batch);
            return;
        }
        for p in batch {
            if fits(&p) {
                ctx.emit(0, p);
            } else {
                self.fragment(p, ctx);
            }
        }
    }

    rclick_core::handlers!(HANDLERS);
}
