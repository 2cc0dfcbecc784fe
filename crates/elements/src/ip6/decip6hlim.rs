//! # DecIP6HLIM
//!
//! Decrements the IPv6 hop limit, diverting expired packets.
//!
//! ## Synopsis
//! `DecIP6HLIM()`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for
//! expired packets. Processing `a/ah`.
//!
//! ## Description
//! Expects IPv6 packets with the network header set (CheckIP6Header or
//! MarkIP6Header upstream). A packet whose hop limit is 1 or less has
//! expired (RFC 8200 section 3: a router does not forward it): it is
//! counted and sent to output 1, unchanged, typically to an
//! `ICMP6Error(ADDR, 3, 0)` for a Time Exceeded message; it is dropped
//! when output 1 is absent. Otherwise the hop limit is decremented (IPv6
//! has no header checksum to fix) and the packet leaves on output 0.
//!
//! Packets without an IPv6 header at the network header (Click asserts)
//! are dropped and counted in `drops` too.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): expired and header-less packets.
//!
//! ## Example
//! ```click
//! rt[1] -> dh :: DecIP6HLIM -> [0]nds;
//! dh[1] -> ICMP6Error(3ffe:1ce1:2:0:200::1, 3, 0) -> rt;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::ip6_hdr_mut;

#[derive(Default)]
pub struct DecIP6HLIM {
    drops: u64,
}

impl FilterOrDrop for DecIP6HLIM {
    #[inline]
    fn filter_or_drop(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        let hlim = match super::common::ip6_hdr(&p) {
            Some(h) => h.hop_limit(),
            None => {
                self.drops += 1;
                return None;
            }
        };
        if hlim <= 1 {
            self.drops += 1;
            return Some(Err(p));
        }
        if let Some(mut h) = ip6_hdr_mut(&mut p) {
            h.decrement_hop_limit();
        }
        Some(Ok(p))
    }
}

const HANDLERS: &[Handler<DecIP6HLIM>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(DecIP6HLIM);

impl Element for DecIP6HLIM {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter_or_drop);
    rclick_core::handlers!(HANDLERS);
}
