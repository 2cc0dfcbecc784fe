//! # VLANEncap
//!
//! Adds an 802.1Q VLAN tag to Ethernet frames.
//!
//! ## Synopsis
//! `VLANEncap([VLAN_TCI, VLAN_PCP, KEYWORDS])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects Ethernet frames. Inserts a 4-byte tag after the source address:
//! the tag's EtherType (0x8100 by default) and the TCI (priority code point
//! in the top 3 bits, drop eligible bit, VLAN ID in the low 12 bits); the
//! frame's own EtherType follows, so the result is an 802.1Q frame.
//!
//! VLAN_TCI is the whole 16-bit TCI, or the word `ANNO`: then each frame's
//! TCI is its VLAN_TCI annotation (set by VLANDecap, SetVLANAnno or
//! StripEtherVLANHeader). Without VLAN_TCI the TCI is made of VLAN_ID and
//! VLAN_PCP. VLAN_PCP is ORed into the top bits in either case.
//!
//! A frame whose VLAN ID equals NATIVE_VLAN is left untagged. NATIVE_VLAN
//! defaults to 0, so priority-only tags (VLAN 0) are not added unless
//! NATIVE_VLAN is set to -1. Stacking (QinQ) is done by tagging an
//! already tagged frame again, usually with ETHERTYPE 0x88a8.
//!
//! A frame shorter than an Ethernet header (14 bytes) that would be tagged
//! is dropped (Click tags it with bytes from past its end).
//!
//! ## Keywords
//! - **VLAN_TCI** (integer 0-0xFFFF, or `ANNO`): the TCI.
//! - **VLAN_PCP** (integer 0-7): priority code point. Default 0.
//! - **VLAN_ID** (integer 0-0xFFF, keyword only): VLAN ID when VLAN_TCI is
//!   not given. Default 0.
//! - **NATIVE_VLAN** (integer -1-0xFFF): the untagged VLAN, -1 for none.
//!   Default 0.
//! - **ETHERTYPE** (16-bit integer): the tag's EtherType (TPID). Default
//!   0x8100; 0x88a8 for 802.1ad service tags.
//!
//! ## Handlers
//! - `config` (read): `ANNO` or `VLAN_ID n, VLAN_PCP p`, then
//!   `, NATIVE_VLAN n` unless it is 0 (ETHERTYPE is not shown, as in Click).
//! - `vlan_tci` (read/write): the TCI in decimal, or `ANNO`.
//! - `vlan_id`, `vlan_pcp`, `native_vlan`, `ethertype` (read/write): the
//!   argument's value as `config` shows it (empty when not shown). As in
//!   Click, VLANEncap cannot be reconfigured live, so writing `vlan_tci` or
//!   one of these fails.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> VLANEncap(VLAN_ID 10, VLAN_PCP 5) -> Queue -> ToDevice(eth1);
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ether::{EtherFrame, VlanTag, ETHERTYPE_VLAN, HEADER_LEN, VLAN_TAG_LEN};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::vlancommon::{keyword_value, TciSpec};

pub struct VLANEncap {
    spec: TciSpec,
    ethertype: u16,
}

impl Default for VLANEncap {
    fn default() -> Self {
        VLANEncap {
            spec: TciSpec::default(),
            ethertype: ETHERTYPE_VLAN,
        }
    }
}

/// Inserts a tag with TPID `tpid` and TCI `tci` after the addresses of
/// Ethernet frame `p`; `None` when `p` is shorter than an Ethernet header
/// or cannot grow.
pub(crate) fn insert_tag(mut p: Packet, tpid: u16, tci: u16) -> Option<Packet> {
    if p.len() < HEADER_LEN {
        return None;
    }
    p.push(VLAN_TAG_LEN)?;
    let d = p.writable();
    d.copy_within(VLAN_TAG_LEN..VLAN_TAG_LEN + 12, 0);
    let mut f = EtherFrame::new_checked(&mut d[..]).ok()?;
    f.set_ethertype(tpid);
    VlanTag::new_checked(f.payload_mut()).ok()?.set_tci(tci);
    Some(p)
}

impl SimpleAction for VLANEncap {
    #[inline]
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let tci = self.spec.tci_for(&p);
        if self.spec.is_native(tci) {
            return Some(p);
        }
        insert_tag(p, self.ethertype, tci)
    }
}

/// Click cannot reconfigure VLANEncap live, so its keyword write handlers
/// always fail.
fn refuse(ctx: &Ctx) -> Result<(), String> {
    Err(format!(
        "cannot reconfigure {} :: VLANEncap live",
        ctx.element_name()
    ))
}

fn keyword(e: &VLANEncap, kw: &str) -> String {
    keyword_value(&e.spec.config_text(), kw)
}

// Click's order.
const HANDLERS: &[Handler<VLANEncap>] = &[
    Handler::read("config", |e, _| e.spec.config_text()),
    Handler::read_write(
        "vlan_tci",
        |e, _| e.spec.tci_text(),
        |_, _, ctx| refuse(ctx),
    ),
    Handler::read_write(
        "vlan_id",
        |e, _| keyword(e, "VLAN_ID"),
        |_, _, ctx| refuse(ctx),
    ),
    Handler::read_write(
        "vlan_pcp",
        |e, _| keyword(e, "VLAN_PCP"),
        |_, _, ctx| refuse(ctx),
    ),
    Handler::read_write(
        "native_vlan",
        |e, _| keyword(e, "NATIVE_VLAN"),
        |_, _, ctx| refuse(ctx),
    ),
    Handler::read_write(
        "ethertype",
        |e, _| keyword(e, "ETHERTYPE"),
        |_, _, ctx| refuse(ctx),
    ),
];

rclick_core::element_class!(VLANEncap);

impl Element for VLANEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let (word, pcp, id, native) = TciSpec::read(&mut args);
        let ethertype = args.read_or("ETHERTYPE", ETHERTYPE_VLAN);
        args.complete()?;
        let spec = TciSpec::finish(word, pcp, id, native)?;
        self.spec = spec;
        self.ethertype = ethertype;
        Ok(())
    }
}
