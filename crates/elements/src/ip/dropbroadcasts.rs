//! # DropBroadcasts
//!
//! Drops packets that arrived as link-level broadcasts or multicasts.
//!
//! ## Synopsis
//! `DropBroadcasts`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Drops packets whose packet-type annotation is BROADCAST or MULTICAST (set
//! by FromDevice or HostEtherFilter), passing the rest. In the IP router it
//! keeps link-level broadcasts from being forwarded (RFC 1812 section
//! 5.3.4).
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped.
//!
//! ## Example
//! ```click
//! rt[1] -> DropBroadcasts -> cp :: PaintTee(1) -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::packet::PacketType;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct DropBroadcasts {
    pub(crate) drops: u64,
}

impl SimpleAction for DropBroadcasts {
    #[inline]
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        match p.packet_type_anno() {
            PacketType::Broadcast | PacketType::Multicast => {
                self.drops += 1;
                None
            }
            _ => Some(p),
        }
    }
}

impl DropBroadcasts {
    /// The kit's batch path, out of line so that the fast path in
    /// `push_in_chain` saves no registers for it.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        rclick_core::element::kinds::simple_push_in_chain(self, batch, ctx)
    }
}

const HANDLERS: &[Handler<DropBroadcasts>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(DropBroadcasts);

impl Element for DropBroadcasts {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action, own_chain);

    // The action kind's push, after a look that usually finds nothing to
    // drop: then the batch passes as it is.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        let keeps_all = batch.packets().iter().all(|p| {
            !matches!(
                p.packet_type_anno(),
                PacketType::Broadcast | PacketType::Multicast
            )
        });
        keeps_all || self.push_in_chain_general(batch, ctx)
    }
    rclick_core::handlers!(HANDLERS);
}
