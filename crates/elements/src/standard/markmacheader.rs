//! # MarkMACHeader
//!
//! Marks where the link-level header ends.
//!
//! ## Synopsis
//! `MarkMACHeader([OFFSET, LENGTH])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Click records a MAC header annotation at OFFSET bytes into the packet
//! and, when LENGTH is given, starts the network header LENGTH bytes
//! after it. rclick's packets keep no separate MAC header annotation (the
//! link-level elements read the frame at the data's start), so here the
//! element sets the network header at OFFSET + LENGTH when LENGTH is
//! nonzero, leaving the transport header alone (as Click does), and
//! otherwise passes packets unchanged. An offset past
//! the end of the data leaves the packet unmarked.
//!
//! ## Keyword arguments
//! - `OFFSET` (unsigned, default 0): where the MAC header starts.
//! - `LENGTH` (unsigned, default 0): its length.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> MarkMACHeader(0, 14) -> IPPrint -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct MarkMACHeader {
    offset: usize,
    length: usize,
}

impl SimpleAction for MarkMACHeader {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.length != 0 {
            let network = self.offset.saturating_add(self.length);
            if network <= p.len() {
                p.set_network_offset(network);
            }
        }
        Some(p)
    }
}

rclick_core::element_class!(MarkMACHeader);

impl Element for MarkMACHeader {
    rclick_core::element_kind!(action);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let offset = args.read_p::<u32>("OFFSET");
        let length = args.read_p::<u32>("LENGTH");
        args.complete()?;
        self.offset = offset.unwrap_or(0) as usize;
        self.length = length.unwrap_or(0) as usize;
        Ok(())
    }
}
