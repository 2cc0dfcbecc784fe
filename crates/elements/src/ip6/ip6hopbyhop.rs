//! # IP6HopByHop
//!
//! Processes the IPv6 hop-by-hop options header.
//!
//! ## Synopsis
//! `IP6HopByHop()`
//!
//! ## Ports and processing
//! One push input; push output 0 for ordinary packets; optional push
//! outputs 1 (jumbo payload), 2 (router alert), 3 (bad jumbo payload) and 4
//! (unrecognized option needing a parameter problem). Processing `h/h`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set. A packet without a
//! hop-by-hop options header (next header 0 in the fixed header) leaves on
//! output 0 unchanged. Otherwise every option is examined (RFC 8200
//! section 4.2), and the packet, unchanged, goes to:
//!
//! - output 4, with its ICMP_PARAMPROB annotation set to the offset of the
//!   option's type byte from the IPv6 header, when an unrecognized option's
//!   two high type bits are 10, or 11 and the destination is not multicast
//!   (connect `ICMP6Error(ADDR, 4, 2)`); it is dropped when they are 01, or
//!   11 with a multicast destination; skipped when 00;
//! - output 3, with ICMP_PARAMPROB set as RFC 2675 section 3 says, when a
//!   jumbo payload option is wrong: its length is not 4, it is not at an
//!   offset 4n+2, its value is at most 65535 (pointer: the option's value),
//!   the payload length field is not zero (pointer: the option's type
//!   byte), the packet has a fragment header, or the jumbo length
//!   disagrees with the packet; or when the payload length is zero and
//!   there is no jumbo payload option (pointer: 4) (connect
//!   `ICMP6Error(ADDR, 4, 0)`);
//! - output 2 when a router alert option (RFC 2711, value length 2) is
//!   present: the packet is for the router to look at;
//! - output 1 when a valid jumbo payload option is present;
//! - output 0 otherwise.
//!
//! Pad1 and PadN are skipped. An output that is absent sends router-alert
//! and jumbo packets to output 0 and drops the others. Packets whose
//! hop-by-hop header is truncated or whose options overrun it, router
//! alerts of the wrong length, packets that are not IPv6, and packets whose
//! parameter-problem pointer would exceed 255 (the annotation is one
//! byte) are dropped and counted in `drops`.
//!
//! Click 2.1 has no IP6HopByHop; the IPv6 elements report names it and its
//! first four outputs.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//! - `router_alerts`, `jumbos` (read): packets seen with each option.
//!
//! ## Example
//! ```click
//! hbh :: IP6HopByHop;
//! CheckIP6Header -> hbh -> rt;
//! hbh[2] -> ToHost;
//! hbh[4] -> ICMP6Error(2001:db8::1, 4, 2) -> rt;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::kinds::Dispatch;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_HOPOPTS};
use rclick_core::wire::ipv6ext::{
    unrecognized_action, IPV6OPT_JUMBO, IPV6OPT_PAD1, IPV6OPT_PADN, IPV6OPT_ROUTER_ALERT,
};
use rclick_core::wire::Ipv6ExtHeader;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::{find_frag_header, ip6_hdr};

#[derive(Default)]
pub struct IP6HopByHop {
    noutputs: usize,
    drops: u64,
    router_alerts: u64,
    jumbos: u64,
}

/// What the options say.
enum Verdict {
    Normal,
    Jumbo,
    RouterAlert,
    /// Output 3 or 4 with this pointer.
    Problem(usize, usize),
    Drop,
}

fn examine(p: &Packet) -> Verdict {
    let Some(ip) = ip6_hdr(p) else {
        return Verdict::Drop;
    };
    if ip.next_header() != PROTO_HOPOPTS {
        return Verdict::Normal;
    }
    let multicast = ip.dst().is_multicast();
    let plen = ip.payload_len();
    // A jumbogram's payload runs to the end of the buffer; any other
    // packet's ends at its payload length (link padding is not options).
    let buf = ip.clone().into_inner();
    let all = match plen {
        0 => &buf[HEADER_LEN..],
        n => &buf[HEADER_LEN..(HEADER_LEN + n as usize).min(buf.len())],
    };
    let Ok(h) = Ipv6ExtHeader::new_checked(all) else {
        return Verdict::Drop;
    };
    let mut jumbo = false;
    let mut alert = false;
    for o in h.options_iter() {
        let Ok(o) = o else { return Verdict::Drop };
        // Offset of the option's type byte from the IPv6 header.
        let at = HEADER_LEN + 2 + o.offset;
        match o.kind {
            IPV6OPT_PAD1 | IPV6OPT_PADN => {}
            IPV6OPT_ROUTER_ALERT => {
                if o.data.len() != 2 {
                    return Verdict::Drop;
                }
                alert = true;
            }
            IPV6OPT_JUMBO => {
                if o.data.len() != 4 {
                    return Verdict::Problem(3, at + 1);
                }
                if at % 4 != 2 {
                    return Verdict::Problem(3, at);
                }
                let len = u32::from_be_bytes([o.data[0], o.data[1], o.data[2], o.data[3]]);
                if len <= 65535 {
                    return Verdict::Problem(3, at + 2);
                }
                if plen != 0 {
                    // RFC 2675 section 3: pointing to the option type.
                    return Verdict::Problem(3, at);
                }
                if len as usize != all.len() {
                    return Verdict::Problem(3, at + 2);
                }
                jumbo = true;
            }
            kind => match unrecognized_action(kind) {
                0 => {}
                1 => return Verdict::Drop,
                2 => return Verdict::Problem(4, at),
                _ if multicast => return Verdict::Drop,
                _ => return Verdict::Problem(4, at),
            },
        }
    }
    if plen == 0 && !jumbo {
        // RFC 2675 section 3: payload length 0 without a jumbo payload
        // option; the pointer is the payload length's high-order byte.
        return Verdict::Problem(3, 4);
    }
    if jumbo {
        if let Ok(Some((_, frag_at))) = find_frag_header(h.next_header(), h.payload()) {
            return Verdict::Problem(3, HEADER_LEN + h.header_len() + frag_at);
        }
    }
    if alert {
        Verdict::RouterAlert
    } else if jumbo {
        Verdict::Jumbo
    } else {
        Verdict::Normal
    }
}

impl Dispatch for IP6HopByHop {
    fn dispatch(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<(usize, Packet)> {
        let port = match examine(&p) {
            Verdict::Normal => 0,
            Verdict::Jumbo => {
                self.jumbos += 1;
                1
            }
            Verdict::RouterAlert => {
                self.router_alerts += 1;
                2
            }
            Verdict::Problem(port, ptr) => match u8::try_from(ptr) {
                Ok(ptr) if port < self.noutputs => {
                    p.set_icmp_param_prob_anno(ptr);
                    port
                }
                _ => {
                    self.drops += 1;
                    return None;
                }
            },
            Verdict::Drop => {
                self.drops += 1;
                return None;
            }
        };
        Some((if port < self.noutputs { port } else { 0 }, p))
    }
}

const HANDLERS: &[Handler<IP6HopByHop>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("router_alerts", |e| &e.router_alerts),
    Handler::data("jumbos", |e| &e.jumbos),
];

rclick_core::element_class!(IP6HopByHop);

impl Element for IP6HopByHop {
    fn port_count(&self) -> &'static str {
        "1/1-5"
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
