//! # EtherEncap
//!
//! Encapsulates packets in an Ethernet header.
//!
//! ## Synopsis
//! `EtherEncap(ETHERTYPE, SRC, DST)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends a 14-byte Ethernet header with destination DST, source SRC and
//! type ETHERTYPE (e.g. 0x0800 for IP). Uses headroom when there is some,
//! else reallocates.
//!
//! ## Keywords
//! - **ETHERTYPE** (16-bit integer, usually hex `0x0800`).
//! - **SRC**, **DST** (Ethernet address, or AddressInfo name).
//!
//! ## Handlers
//! - `src`, `dst`, `ethertype` (read/write): the header fields. Writing one
//!   reconfigures the element with that argument changed, as writing
//!   `config` does, so `config` shows the new value.
//! - `etht` (read/write, deprecated): the same as `ethertype`.
//!
//! ## Example
//! ```click
//! ... -> EtherEncap(0x0800, 00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth0);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::element::hflags;
use rclick_core::wire::{EtherAddr, EtherFrame, EthernetRepr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ether_arg;

pub struct EtherEncap {
    header: EthernetRepr,
}

impl Default for EtherEncap {
    fn default() -> Self {
        EtherEncap {
            header: EthernetRepr {
                src: EtherAddr::default(),
                dst: EtherAddr::default(),
                ethertype: 0,
            },
        }
    }
}

impl SimpleAction for EtherEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let header = &self.header;
        header.emit(&mut EtherFrame::new_unchecked(p.push(header.header_len())?));
        Some(p)
    }
}

// Click's order. Writes reconfigure the element with the new argument
// (Click's keyword handlers), so `config` shows it.
const HANDLERS: &[Handler<EtherEncap>] = &[
    Handler::data_write(
        "src",
        |e| &e.header.src,
        |e, v, ctx| reconfigure_keyword(e, "SRC", Some(1), v, ctx),
    ),
    Handler::data_write(
        "dst",
        |e| &e.header.dst,
        |e, v, ctx| reconfigure_keyword(e, "DST", Some(2), v, ctx),
    ),
    Handler::data_write(
        "ethertype",
        |e| &e.header.ethertype,
        |e, v, ctx| reconfigure_keyword(e, "ETHERTYPE", Some(0), v, ctx),
    ),
    Handler::flagged(
        hflags::DEPRECATED,
        Handler::data_write(
            "etht",
            |e| &e.header.ethertype,
            |e, v, ctx| reconfigure_keyword(e, "ETHERTYPE", Some(0), v, ctx),
        ),
    ),
];

rclick_core::element_class!(EtherEncap);

impl Element for EtherEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let ethertype: u16 = args.read_mp("ETHERTYPE");
        let src = args.read_mp_with("SRC", |s| parse_ether_arg(s, ictx));
        let dst = args.read_mp_with("DST", |s| parse_ether_arg(s, ictx));
        args.complete()?;
        self.header = EthernetRepr {
            src,
            dst,
            ethertype,
        };
        Ok(())
    }
}
