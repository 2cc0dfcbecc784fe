//! # IP6NDAdvertiser
//!
//! Answers IPv6 neighbour solicitations (the IPv6 twin of ARPResponder).
//!
//! ## Synopsis
//! `IP6NDAdvertiser(IP6/MASK1 [IP6/MASK...] ETH1, IP6/MASK2 ETH2, ...)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Input: Ethernet frames holding neighbour solicitations (RFC 4861
//! section 4.3). Each argument gives IPv6 addresses or prefixes and the
//! Ethernet address that answers for them (a bare address is a /128). A
//! solicitation whose target matches an entry (the longest prefix; of
//! equal ones, the last) is answered with a neighbour advertisement on the
//! output: from the target address and the entry's Ethernet address to
//! the solicitation's source, with the router and solicited flags and a
//! target link-layer address option. Input frames are consumed.
//!
//! Every solicitation is validated as RFC 4861 section 7.1.1 asks (hop
//! limit 255, ICMPv6 checksum over the whole message, code 0, length,
//! option lengths, a unicast target, and for a duplicate address
//! detection probe from `::`, a solicited-node destination and no source
//! link-layer option), and from a source that is not multicast (RFC 4291
//! section 2.7); invalid ones are counted and dropped. A probe from
//! `::` is answered to the all-nodes address ff02::1 with the solicited
//! flag clear (section 7.2.4), so that the prober learns the address is
//! taken.
//!
//! Click 2.1 checks the checksum only over the first 32 bytes of the
//! message (so it refuses solicitations without the source link-layer
//! option, such as every duplicate address detection probe, and accepts
//! some with bad trailing options), and answers a probe from `::` to
//! `::`. Like Click, rclick leaves the override flag clear (RFC 4861
//! recommends setting it for a unicast address; a host whose cache entry
//! is incomplete, the case that matters, takes the address either way).
//!
//! ## Keywords
//! None: each argument is addresses and an Ethernet address.
//!
//! ## Handlers
//! - `drops` (read): invalid solicitations and frames that are not
//!   solicitations (rclick extension).
//! - `responses` (read): advertisements sent (rclick extension).
//!
//! ## Example
//! ```click
//! c :: Classifier(12/86dd 20/3aff 54/87, ...);
//! c[0] -> IP6NDAdvertiser(3ffe:1ce1:2:0:200::1/128 00:A0:C9:9C:FD:9E,
//!                         fe80::2a0:c9ff:fe9c:fd9e/128 00:A0:C9:9C:FD:9E)
//!      -> Queue -> ToDevice(eth0);
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::{split_args, split_words};
use rclick_core::wire::icmpv6::{ND_NA_FLAG_OVERRIDE, ND_NA_FLAG_ROUTER, ND_NEIGHBOR_SOLICIT};
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Ctx, Element, Errors, Handler, InitCtx, Packet, SimpleAction};

use super::common::parse_ipv6_prefix_arg;
use super::nd::{advertisement, parse_nd, NdError};
use crate::ip::address::parse_ether_arg;

/// All-nodes multicast address.
const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);

#[derive(Clone, Copy)]
struct Entry {
    addr: u128,
    len: u32,
    eth: EtherAddr,
}

#[derive(Default)]
pub struct IP6NDAdvertiser {
    entries: Vec<Entry>,
    drops: u64,
    responses: u64,
}

impl IP6NDAdvertiser {
    /// The Ethernet address answering for `a`.
    fn lookup(&self, a: Ipv6Addr) -> Option<EtherAddr> {
        let a = u128::from(a);
        let mut best: Option<&Entry> = None;
        for e in &self.entries {
            let m = super::route6::mask6(e.len);
            if a & m == e.addr & m && best.is_none_or(|b| e.len >= b.len) {
                best = Some(e);
            }
        }
        best.map(|e| e.eth)
    }
}

impl SimpleAction for IP6NDAdvertiser {
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let m = match parse_nd(p.data()) {
            Ok(m) if m.msg_type == ND_NEIGHBOR_SOLICIT => m,
            Ok(_) | Err(NdError::NotNd) | Err(NdError::Invalid) => {
                self.drops += 1;
                return None;
            }
        };
        let eth = self.lookup(m.target)?;
        let q = if m.src.is_unspecified() {
            advertisement(
                eth,
                rclick_core::wire::icmpv6::multicast_ether(ALL_NODES),
                m.target,
                ALL_NODES,
                ND_NA_FLAG_ROUTER | ND_NA_FLAG_OVERRIDE,
                m.target,
                eth,
            )
        } else {
            // Click's flags: router and solicited.
            advertisement(eth, m.eth_src, m.target, m.src, 0xc0, m.target, eth)
        };
        self.responses += 1;
        Some(q)
    }
}

const HANDLERS: &[Handler<IP6NDAdvertiser>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("responses", |e| &e.responses),
];

rclick_core::element_class!(IP6NDAdvertiser);

impl Element for IP6NDAdvertiser {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut errors = Errors::new();
        let mut entries = Vec::new();
        for (i, arg) in split_args(conf).iter().enumerate() {
            let first = entries.len();
            let mut eth = None;
            for w in split_words(arg) {
                if let Ok(p) = parse_ipv6_prefix_arg(&w, ctx) {
                    let Some(len) = p.prefix_len() else {
                        errors.push(format!("argument {i} should be 'IP6/MASK ETHADDR'"));
                        break;
                    };
                    entries.push(Entry {
                        addr: u128::from(p.addr) & super::route6::mask6(len.into()),
                        len: len.into(),
                        eth: EtherAddr::default(),
                    });
                } else if let Ok(e) = parse_ether_arg(&w, ctx) {
                    if eth.is_some() {
                        errors.push(format!("argument {i} has more than one Ethernet address"));
                    }
                    eth = Some(e);
                } else {
                    errors.push(format!("argument {i} should be 'IP6/MASK ETHADDR'"));
                    break;
                }
            }
            if first == entries.len() {
                errors.push(format!("argument {i} had no IP6 address and masks"));
            }
            for e in &mut entries[first..] {
                e.eth = eth.unwrap_or_default();
            }
        }
        errors.into_result()?;
        self.entries = entries;
        Ok(())
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
