//! # SetIP6Address
//!
//! Sets the destination IPv6 address annotation.
//!
//! ## Synopsis
//! `SetIP6Address(IPADDR)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets every packet's destination IPv6 address annotation to IPADDR (an
//! address or an AddressInfo name), for example to send everything to one
//! next hop through IP6NDSolicitor.
//!
//! ## Keywords
//! - **IPADDR** (IPv6 address): the annotation to set.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> SetIP6Address(fe80::1) -> IP6NDSolicitor(fe80::2, 00:01:02:03:04:05) -> ...;
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::common::parse_ipv6_arg;

pub struct SetIP6Address {
    addr: Ipv6Addr,
}

impl Default for SetIP6Address {
    fn default() -> Self {
        SetIP6Address {
            addr: Ipv6Addr::UNSPECIFIED,
        }
    }
}

impl SimpleAction for SetIP6Address {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        p.set_dst_ip6_anno(self.addr);
        Some(p)
    }
}

rclick_core::element_class!(SetIP6Address);

impl Element for SetIP6Address {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.addr = args.read_mp_with("IPADDR", |s| parse_ipv6_arg(s, ictx));
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
