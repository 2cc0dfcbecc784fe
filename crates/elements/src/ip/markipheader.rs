//! # MarkIPHeader
//!
//! Sets the IP header annotation.
//!
//! ## Synopsis
//! `MarkIPHeader([OFFSET])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Marks packets as IP packets by setting the network header OFFSET bytes
//! into the packet (default 0), with the header length taken from the IP
//! header length field. Does no checking (see CheckIPHeader); a packet too
//! short to hold the header-length byte gets a 20-byte header length.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where the IP header starts. Default 0.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> Strip(14) -> MarkIPHeader -> IPPrint -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ipv4::MIN_HEADER_LEN;
use rclick_core::wire::Ipv4Header;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct MarkIPHeader {
    offset: usize,
}

impl SimpleAction for MarkIPHeader {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        // Like Click, the header length is taken whatever the version
        // says, so the view is not a checked one.
        let hlen = p
            .data()
            .get(self.offset..)
            .filter(|b| !b.is_empty())
            .map_or(MIN_HEADER_LEN, |b| {
                Ipv4Header::new_unchecked(b).header_len()
            });
        let off = self.offset.min(p.len());
        p.set_network_header(off, hlen);
        Some(p)
    }
}

rclick_core::element_class!(MarkIPHeader);

impl Element for MarkIPHeader {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.offset = args.read_p_or("OFFSET", 0);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
