//! # SetIPAddress
//!
//! Sets the destination IP address annotation to a fixed address.
//!
//! ## Synopsis
//! `SetIPAddress(IPADDR [, ANNO])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets each packet's destination IP address annotation (or the 4-byte
//! annotation ANNO) to IPADDR, e.g. to send packets to a fixed next hop.
//!
//! ## Keywords
//! - **IPADDR** (IP address, or AddressInfo name): the address.
//! - **ANNO** (annotation): where to store it. Default DST_IP.
//!
//! ## Handlers
//! - `addr` (read/write): the address set.
//!
//! ## Example
//! ```click
//! ... -> SetIPAddress(18.26.4.1) -> ARPQuerier(...);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::ipcommon::parse_anno4;

pub struct SetIPAddress {
    addr: Ipv4Addr,
    anno: usize,
}

impl Default for SetIPAddress {
    fn default() -> Self {
        SetIPAddress {
            addr: Ipv4Addr::UNSPECIFIED,
            anno: anno::DST_IP,
        }
    }
}

impl SimpleAction for SetIPAddress {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        p.set_anno_bytes(self.anno, &self.addr.octets());
        Some(p)
    }
}

rclick_core::element_class!(SetIPAddress);

const HANDLERS: &[Handler<SetIPAddress>] =
    &[Handler::data_rw("addr", |e| &e.addr, |e| &mut e.addr)];

impl Element for SetIPAddress {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.addr = args.read_mp_with("IPADDR", |s| parse_ipv4_arg(s, ictx));
        self.anno = args
            .read_p_with("ANNO", parse_anno4)
            .unwrap_or(anno::DST_IP);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
