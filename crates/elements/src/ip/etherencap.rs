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
//! - `ethertype`, `src`, `dst` (read/write): the header fields.
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
        header.emit(&mut EtherFrame::new_unchecked(p.push(header.header_len())?));
        Some(p)
    }
}

const HANDLERS: &[Handler<EtherEncap>] = &[
    Handler::data_rw(
        "ethertype",
        |e| &e.header.ethertype,
        |e| &mut e.header.ethertype,
    ),
    Handler::data_rw("src", |e| &e.header.src, |e| &mut e.header.src),
    Handler::data_rw("dst", |e| &e.header.dst, |e| &mut e.header.dst),
];

rclick_core::element_class!(EtherEncap);

impl Element for EtherEncap {
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
