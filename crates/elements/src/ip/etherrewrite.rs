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
//! - `src`, `dst` (read/write): the addresses. Writing one reconfigures
//!   the element with that argument changed, as writing `config` does, so
//!   `config` shows it. Click's `src` handler rewrites the second
//!   positional argument (DST) of a positional configuration, leaving SRC
//!   as it was; rclick's changes SRC.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> EtherRewrite(00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth1);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::handlers::reconfigure_keyword;
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

// Writes reconfigure with the argument changed (Click's keyword handlers).
// Click's `src` handler names the second positional slot, so writing it
// to a positional configuration changes DST; here each names its own.
const HANDLERS: &[Handler<EtherRewrite>] = &[
    Handler::data_write(
        "src",
        |e| &e.src,
        |e, v, ctx| reconfigure_keyword(e, "SRC", Some(0), v, ctx),
    ),
    Handler::data_write(
        "dst",
        |e| &e.dst,
        |e, v, ctx| reconfigure_keyword(e, "DST", Some(1), v, ctx),
    ),
];

rclick_core::element_class!(EtherRewrite);

impl Element for EtherRewrite {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

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
