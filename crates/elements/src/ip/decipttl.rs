//! # DecIPTTL
//!
//! Decrements the IP time-to-live, dropping dead packets.
//!
//! ## Synopsis
//! `DecIPTTL([keywords ACTIVE, MULTICAST])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for
//! expired packets. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader or
//! MarkIPHeader upstream). A packet whose TTL is 1 or less is expired: it
//! is counted and sent to output 1 (typically to an ICMPError for a Time
//! Exceeded message; dropped if output 1 is absent). Otherwise the TTL is
//! decremented and the header checksum updated incrementally (RFC 1624,
//! RFC 1812 section 5.3.1), and the packet leaves on output 0.
//!
//! Packets without a valid IP header at the network header are dropped and
//! counted in `drops`.
//!
//! ## Keywords
//! - **ACTIVE** (bool): if false, pass packets through unchanged. Default
//!   true.
//! - **MULTICAST** (bool): if false, pass multicast packets (class D
//!   destinations) unchanged. Default true.
//!
//! ## Handlers
//! - `drops` (read): expired (and header-less) packets.
//! - `active` (read/write): the ACTIVE setting.
//!
//! ## Example
//! ```click
//! ... -> dt :: DecIPTTL -> fr :: IPFragmenter(1500) -> ...;
//! dt[1] -> ICMPError(18.26.4.24, timeexceeded) -> rt;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::hflags;
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use rclick_core::wire::checksum::ttl_decrement_update;

use super::ipcommon::{ip_hdr, ip_hdr_mut, plain_ip_hdr_mut};

pub struct DecIPTTL {
    active: bool,
    multicast: bool,
    pub(crate) drops: u64,
}

impl Default for DecIPTTL {
    fn default() -> Self {
        DecIPTTL {
            active: true,
            multicast: true,
            drops: 0,
        }
    }
}

impl FilterOrDrop for DecIPTTL {
    /// `Some(Ok)` to forward, `None` when dropped (no IP header), `Some(Err)`
    /// with an expired packet (TTL 0 or 1, left unchanged). Both drops are
    /// counted. IPOutputCombo runs it too.
    ///
    /// The common packet (an option-less header, TTL above 1) takes a
    /// few-instruction path; everything else goes to
    /// [`DecIPTTL::filter_or_drop_general`].
    #[inline(always)]
    fn filter_or_drop(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        if self.decrement_plain(&mut p) {
            return Some(Ok(p));
        }
        self.filter_or_drop_general(p, ctx)
    }
}

impl DecIPTTL {
    /// The kit's batch path, out of line so that the one-packet path in
    /// `push_in_chain` saves no registers for it.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        rclick_core::element::kinds::filter_or_drop_push_in_chain(self, batch, ctx)
    }

    /// The common case in place: decrements the TTL of an option-less
    /// header with a TTL above 1 in a buffer no clone shares, and says
    /// so; any other packet (a shared one too: the general path copies
    /// it) is left as it was for [`DecIPTTL::filter_or_drop_general`].
    #[inline(always)]
    fn decrement_plain(&self, p: &mut Packet) -> bool {
        if self.active {
            if let Some(h) = plain_ip_hdr_mut(p) {
                // Class D destinations are 224.0.0.0/4.
                if h[8] > 1 && (self.multicast || h[16] & 0xf0 != 0xe0) {
                    h[8] -= 1;
                    let c = ttl_decrement_update([h[10], h[11]]);
                    h[10..12].copy_from_slice(&c);
                    return true;
                }
            }
        }
        false
    }

    /// Every case of [`FilterOrDrop::filter_or_drop`]: inactive, no IP
    /// header, options, multicast, expired.
    #[inline(never)]
    fn filter_or_drop_general(
        &mut self,
        mut p: Packet,
        _ctx: &mut Ctx,
    ) -> Option<Result<Packet, Packet>> {
        if !self.active {
            return Some(Ok(p));
        }
        let (ttl, multicast) = match ip_hdr(&p) {
            Some(ip) => (ip.ttl(), ip.dst().is_multicast()),
            None => {
                self.drops += 1;
                return None;
            }
        };
        if !self.multicast && multicast {
            return Some(Ok(p));
        }
        if ttl <= 1 {
            self.drops += 1;
            return Some(Err(p));
        }
        if let Some(mut ip) = ip_hdr_mut(&mut p) {
            ip.decrement_ttl();
        }
        Some(Ok(p))
    }
}

const HANDLERS: &[Handler<DecIPTTL>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_rw("active", |e| &e.active, |e| &mut e.active),
    ),
];

rclick_core::element_class!(DecIPTTL);

impl Element for DecIPTTL {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.active = args.read_or("ACTIVE", true);
        self.multicast = args.read_or("MULTICAST", true);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter_or_drop, own_chain);

    // The filter_or_drop kind's push, but a batch of one packet (BURST 1)
    // on the common path is changed where it lies and passes as it is.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            if self.decrement_plain(p) {
                return true;
            }
        }
        self.push_in_chain_general(batch, ctx)
    }
    rclick_core::handlers!(HANDLERS);
}
