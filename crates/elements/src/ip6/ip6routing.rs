//! # IP6Routing
//!
//! Processes IPv6 routing headers at the node a packet is addressed to.
//!
//! ## Synopsis
//! `IP6Routing()`
//!
//! ## Ports and processing
//! One push input; push output 0 for packets to process further or to
//! forward; optional push output 1 for packets needing a parameter problem
//! message. Processing `h/h`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set, addressed to this
//! node (routers do not look at routing headers of packets in transit, RFC
//! 8200 section 4). Finds the first routing header past a hop-by-hop
//! header and destination options headers; a packet without one leaves on
//! output 0 unchanged. With a routing header (RFC 8200 section 4.4):
//!
//! - segments left 0: the header is ignored, the packet leaves on output 0
//!   unchanged, for the next header's processing;
//! - a segment routing header (type 4, RFC 8754 section 4.3.1): if
//!   segments left exceeds last entry + 1, or the segment list does not fit
//!   the header, the packet goes to output 1 with its ICMP_PARAMPROB
//!   annotation pointing to segments left; otherwise segments left is
//!   decremented, the destination address becomes segment list[segments
//!   left], the destination IPv6 annotation is set to it, and the packet
//!   leaves on output 0 to be routed again (hop limit checks are
//!   DecIP6HLIM's); a packet whose next segment is a multicast address is
//!   dropped and counted in `drops`;
//! - any other type with segments left non-zero, including type 0, which
//!   RFC 5095 deprecates and nodes must not process, and type 2 (Mobile
//!   IPv6, not implemented here): output 1, the ICMP_PARAMPROB annotation
//!   pointing to the routing type (connect `ICMP6Error(ADDR, 4, 0)`).
//!
//! Packets whose headers are truncated, or whose pointer would exceed 255
//! (the annotation is one byte), are dropped and counted in `drops`, as are
//! parameter-problem packets when output 1 is absent.
//!
//! Click 2.1 has no IP6Routing; the IPv6 elements report's version
//! processed type 0, which RFC 5095 forbids.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//! - `forwarded` (read): segment routing packets sent to their next segment.
//!
//! ## Example
//! ```click
//! rt[0] -> rh :: IP6Routing -> ...;
//! rh[1] -> ICMP6Error(2001:db8::1, 4, 0) -> rt;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::Args;
use rclick_core::element::kinds::Dispatch;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_DSTOPTS, PROTO_HOPOPTS, PROTO_ROUTING};
use rclick_core::wire::ipv6ext::ROUTING_SRH;
use rclick_core::wire::Ipv6ExtHeader;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{ip6_hdr, ip6_hdr_mut};
use crate::ip::ipcommon::net_off;

#[derive(Default)]
pub struct IP6Routing {
    noutputs: usize,
    drops: u64,
    forwarded: u64,
}

enum Verdict {
    Pass,
    /// Segment routing: routing header at this offset from the IPv6
    /// header, new destination.
    Forward(usize, Ipv6Addr),
    Problem(usize),
    Drop,
}

fn examine(p: &Packet) -> Verdict {
    let Some(ip) = ip6_hdr(p) else {
        return Verdict::Drop;
    };
    let payload = ip.payload();
    let mut nh = ip.next_header();
    let mut at = 0;
    loop {
        match nh {
            PROTO_HOPOPTS if at == 0 => {}
            PROTO_DSTOPTS => {}
            PROTO_ROUTING => break,
            _ => return Verdict::Pass,
        }
        let Ok(h) = Ipv6ExtHeader::new_checked(&payload[at..]) else {
            return Verdict::Drop;
        };
        nh = h.next_header();
        at += h.header_len();
    }
    let Ok(rh) = Ipv6ExtHeader::new_checked(&payload[at..]) else {
        return Verdict::Drop;
    };
    let off = HEADER_LEN + at;
    let left = rh.segments_left() as usize;
    if left == 0 {
        return Verdict::Pass;
    }
    if rh.routing_type() != ROUTING_SRH {
        return Verdict::Problem(off + 2);
    }
    // routing_data: segments left's successor on: last entry, flags, tag,
    // then the segment list.
    let d = rh.routing_data();
    let last_entry = d[0] as usize;
    let list = &d[4..];
    if left > last_entry + 1 || list.len() < (last_entry + 1) * 16 {
        return Verdict::Problem(off + 3);
    }
    let i = (left - 1) * 16;
    let mut a = [0u8; 16];
    a.copy_from_slice(&list[i..i + 16]);
    let next = Ipv6Addr::from(a);
    if next.is_multicast() {
        // A segment list cannot steer a packet to a group (Linux's SRH
        // input drops it too): that would be an amplifier.
        return Verdict::Drop;
    }
    Verdict::Forward(off, next)
}

impl Dispatch for IP6Routing {
    fn dispatch(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<(usize, Packet)> {
        match examine(&p) {
            Verdict::Pass => Some((0, p)),
            Verdict::Forward(off, dst) => {
                let net = net_off(&p).unwrap_or(0);
                {
                    let b = p.writable();
                    let Some(seg) = b.get_mut(net + off + 3) else {
                        self.drops += 1;
                        return None;
                    };
                    *seg = seg.saturating_sub(1);
                }
                if let Some(mut h) = ip6_hdr_mut(&mut p) {
                    h.set_dst(dst);
                }
                p.set_dst_ip6_anno(dst);
                self.forwarded += 1;
                Some((0, p))
            }
            Verdict::Problem(ptr) => match u8::try_from(ptr) {
                Ok(ptr) if self.noutputs > 1 => {
                    p.set_icmp_param_prob_anno(ptr);
                    Some((1, p))
                }
                _ => {
                    self.drops += 1;
                    None
                }
            },
            Verdict::Drop => {
                self.drops += 1;
                None
            }
        }
    }
}

const HANDLERS: &[Handler<IP6Routing>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("forwarded", |e| &e.forwarded),
];

rclick_core::element_class!(IP6Routing);

impl Element for IP6Routing {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.noutputs = ctx.noutputs();
        Ok(())
    }

    rclick_core::element_kind!(dispatch);
    rclick_core::handlers!(HANDLERS);
}
