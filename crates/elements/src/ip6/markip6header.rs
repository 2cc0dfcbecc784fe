//! # MarkIP6Header
//!
//! Sets the IPv6 header annotation.
//!
//! ## Synopsis
//! `MarkIP6Header([OFFSET])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Marks each packet's IPv6 header as starting OFFSET bytes into the
//! packet (default 0), 40 bytes long, without checking it (CheckIP6Header
//! checks and marks). A packet shorter than OFFSET passes unmarked.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where the IPv6 header starts. Default 0.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(v6.pcap) -> Strip(14) -> MarkIP6Header -> IP6Print -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ipv6::HEADER_LEN;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct MarkIP6Header {
    offset: usize,
}

impl SimpleAction for MarkIP6Header {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.offset <= p.len() {
            p.set_network_header(self.offset, HEADER_LEN);
        }
        Some(p)
    }
}

rclick_core::element_class!(MarkIP6Header);

impl Element for MarkIP6Header {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.offset = args.read_p_or("OFFSET", 0);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
