//! # GetIP6Address
//!
//! Sets the destination IPv6 address annotation from packet data.
//!
//! ## Synopsis
//! `GetIP6Address(OFFSET)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Copies the 16 bytes starting OFFSET bytes into the packet into the
//! destination IPv6 address annotation. `GetIP6Address(24)` after
//! CheckIP6Header takes the IPv6 destination, so that LookupIP6Route
//! routes on it. A packet too short to hold the address passes with its
//! annotation unchanged (Click reads past the end of the data).
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where the address starts.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> GetIP6Address(24) -> LookupIP6Route(...);
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct GetIP6Address {
    offset: usize,
}

impl SimpleAction for GetIP6Address {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let a = p
            .data()
            .get(self.offset..)
            .and_then(|b| b.first_chunk::<16>())
            .copied();
        if let Some(a) = a {
            p.set_dst_ip6_anno(Ipv6Addr::from(a));
        }
        Some(p)
    }
}

rclick_core::element_class!(GetIP6Address);

impl Element for GetIP6Address {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.offset = args.read_mp("OFFSET");
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
