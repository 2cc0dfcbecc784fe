//! # EtherRewrite
//!
//! Rewrites the source and destination of Ethernet frames.
//!
//! ## Synopsis
//! `EtherRewrite(SRC, DST)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Overwrites each frame's Ethernet source with SRC and destination with
//! DST, leaving the type and payload alone. Packets shorter than an
//! Ethernet header are dropped.
//!
//! ## Keywords
//! - **SRC**, **DST** (Ethernet address, or AddressInfo name).
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses.
//! - `config` (read/write): writing it reconfigures the element live.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> EtherRewrite(00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth1);
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::{EtherAddr, EtherFrame};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ether_arg;

#[derive(Default)]
pub struct EtherRewrite {
    src: EtherAddr,
    dst: EtherAddr,
}

impl SimpleAction for EtherRewrite {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        // A frame shorter than the header is dropped before it is made
        // writable (no copy of a shared buffer for nothing).
        EtherFrame::new_checked(p.data()).ok()?;
        let mut f = EtherFrame::new_unchecked(p.writable());
        f.set_dst(self.dst);
        f.set_src(self.src);
        Some(p)
    }
}

const HANDLERS: &[Handler<EtherRewrite>] = &[
    Handler::data_rw("src", |e| &e.src, |e| &mut e.src),
    Handler::data_rw("dst", |e| &e.dst, |e| &mut e.dst),
];

rclick_core::element_class!(EtherRewrite);

impl Element for EtherRewrite {
    // Writing `config` reconfigures it, as in Click.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src = args.read_mp_with("SRC", |s| parse_ether_arg(s, ictx));
        let dst = args.read_mp_with("DST", |s| parse_ether_arg(s, ictx));
        args.complete()?;
        self.src = src;
        self.dst = dst;
        Ok(())
    }
}
