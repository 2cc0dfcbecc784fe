//! # EtherVLANEncap
//!
//! Encapsulates packets in an 802.1Q-tagged Ethernet header.
//!
//! ## Synopsis
//! `EtherVLANEncap(ETHERTYPE, SRC, DST [, VLAN_TCI, VLAN_PCP, KEYWORDS])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends an 18-byte header: destination DST, source SRC, EtherType
//! 0x8100, the TCI, then ETHERTYPE (the payload's type). VLAN_TCI is the
//! whole 16-bit TCI, or the word `ANNO` to take each packet's VLAN_TCI
//! annotation; without it the TCI is made of VLAN_ID and VLAN_PCP, and
//! VLAN_PCP is ORed into the top 3 bits in either case.
//!
//! A packet whose VLAN ID equals NATIVE_VLAN (default 0) gets a plain
//! 14-byte Ethernet header instead. Set NATIVE_VLAN to -1 to tag every
//! packet, including priority-only tags (VLAN 0).
//!
//! ## Keywords
//! - **ETHERTYPE** (16-bit integer): the payload's EtherType. Mandatory.
//! - **SRC**, **DST** (Ethernet address): mandatory.
//! - **VLAN_TCI** (integer 0-0xFFFF, or `ANNO`), **VLAN_PCP** (0-7),
//!   **VLAN_ID** (0-0xFFF, keyword only), **NATIVE_VLAN** (-1-0xFFF,
//!   default 0): as in VLANEncap.
//!
//! ## Handlers
//! - `config` (read/write): `SRC, DST, ETHERTYPE` then the TCI as
//!   VLANEncap shows it (Click's order, which is not the argument order).
//! - `src`, `dst`, `ethertype` (read/write): the header fields.
//! - `vlan_tci` (read/write): the TCI in decimal, or `ANNO`.
//! - `vlan_id`, `vlan_pcp`, `native_vlan` (read/write): the values as
//!   `config` shows them. Writing `vlan_tci` or one of these reconfigures
//!   the element with that argument changed. (Click rebuilds the
//!   arguments from its `config` text, which is not in argument order, so
//!   these writes always fail there.)
//!
//! ## Example
//! ```click
//! ... -> EtherVLANEncap(0x0800, 0:1:2:3:4:5, 0:1:2:3:4:6, VLAN_ID 10) -> ToDevice(trunk);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::hflags;
use rclick_core::wire::ether::{
    EtherAddr, EtherFrame, VlanTag, ETHERTYPE_VLAN, HEADER_LEN, VLAN_TAG_LEN,
};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::vlancommon::{keyword_value, rewrite_keyword, TciSpec};
use crate::ip::address::parse_ether_arg;

#[derive(Default)]
pub struct EtherVLANEncap {
    src: EtherAddr,
    dst: EtherAddr,
    ethertype: u16,
    spec: TciSpec,
}

impl EtherVLANEncap {
    fn config_text(&self) -> String {
        format!(
            "{}, {}, {}, {}",
            self.src,
            self.dst,
            self.ethertype,
            self.spec.config_text()
        )
    }
}

/// The keyword write handlers. Click rewrites its `config` text, whose
/// first three fields are not in argument order, so every such write fails
/// there; rclick rewrites the configuration in argument order.
fn rewrite(
    e: &mut EtherVLANEncap,
    kw: &str,
    position: Option<usize>,
    v: &str,
    ctx: &mut Ctx,
) -> Result<(), String> {
    let base = format!(
        "{}, {}, {}, {}",
        e.ethertype,
        e.src,
        e.dst,
        e.spec.config_text()
    );
    rewrite_keyword(e, &base, kw, position, v, ctx)
}

impl SimpleAction for EtherVLANEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let tci = self.spec.tci_for(&p);
        if self.spec.is_native(tci) {
            let mut f = EtherFrame::new_checked(p.push(HEADER_LEN)?).ok()?;
            f.set_dst(self.dst);
            f.set_src(self.src);
            f.set_ethertype(self.ethertype);
        } else {
            let mut f = EtherFrame::new_checked(p.push(HEADER_LEN + VLAN_TAG_LEN)?).ok()?;
            f.set_dst(self.dst);
            f.set_src(self.src);
            f.set_ethertype(ETHERTYPE_VLAN);
            let mut t = VlanTag::new_checked(f.payload_mut()).ok()?;
            t.set_tci(tci);
            t.set_ethertype(self.ethertype);
        }
        Some(p)
    }
}

fn keyword(e: &EtherVLANEncap, kw: &str) -> String {
    keyword_value(&e.config_text(), kw)
}

// Click's order.
const HANDLERS: &[Handler<EtherVLANEncap>] = &[
    Handler::flagged(
        hflags::CALM,
        Handler::read("config", |e, _| e.config_text()),
    ),
    Handler::data_rw("src", |e| &e.src, |e| &mut e.src),
    Handler::data_rw("dst", |e| &e.dst, |e| &mut e.dst),
    Handler::data_rw("ethertype", |e| &e.ethertype, |e| &mut e.ethertype),
    Handler::read_write(
        "vlan_tci",
        |e, _| e.spec.tci_text(),
        |e, v, ctx| rewrite(e, "VLAN_TCI", Some(3), v, ctx),
    ),
    Handler::read_write(
        "vlan_id",
        |e, _| keyword(e, "VLAN_ID"),
        |e, v, ctx| rewrite(e, "VLAN_ID", None, v, ctx),
    ),
    Handler::read_write(
        "vlan_pcp",
        |e, _| keyword(e, "VLAN_PCP"),
        |e, v, ctx| rewrite(e, "VLAN_PCP", Some(4), v, ctx),
    ),
    Handler::read_write(
        "native_vlan",
        |e, _| keyword(e, "NATIVE_VLAN"),
        |e, v, ctx| rewrite(e, "NATIVE_VLAN", None, v, ctx),
    ),
];

rclick_core::element_class!(EtherVLANEncap);

impl Element for EtherVLANEncap {
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
        let (word, pcp, id, native) = TciSpec::read(&mut args);
        args.complete()?;
        let spec = TciSpec::finish(word, pcp, id, native)?;
        *self = EtherVLANEncap {
            src,
            dst,
            ethertype,
            spec,
        };
        Ok(())
    }
}
