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
//! - `ethertype`, `src`, `dst` (read/write): the header fields (`etht`
//!   is a deprecated name for `ethertype`).
//! - `config` (read/write): writing it reconfigures the element live.
//!
//! ## Example
//! ```click
//! ... -> EtherEncap(0x0800, 00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth0);
//! ```

use rclick_core::conf::Args;
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
        header.emit(&mut EtherFrame::new_unchecked(p.push(header.header_len())));
        Some(p)
    }
}

// Click's registration order; `etht` is Click's deprecated name for
// `ethertype`.
const HANDLERS: &[Handler<EtherEncap>] = &[
    Handler::data_rw("src", |e| &e.header.src, |e| &mut e.header.src),
    Handler::data_rw("dst", |e| &e.header.dst, |e| &mut e.header.dst),
    Handler::data_rw(
        "ethertype",
        |e| &e.header.ethertype,
        |e| &mut e.header.ethertype,
    ),
    Handler::flagged(
        rclick_core::element::hflags::DEPRECATED,
        Handler::data_rw("etht", |e| &e.header.ethertype, |e| &mut e.header.ethertype),
    ),
];

rclick_core::element_class!(EtherEncap);

impl Element for EtherEncap {
    // Writing `config` reconfigures it, as in Click.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

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
