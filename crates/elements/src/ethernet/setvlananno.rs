//! # SetVLANAnno
//!
//! Sets the VLAN_TCI annotation.
//!
//! ## Synopsis
//! `SetVLANAnno([VLAN_TCI, VLAN_PCP, KEYWORDS])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets each packet's VLAN_TCI annotation, which VLANEncap(ANNO) and
//! EtherVLANEncap(..., ANNO) use as the tag to add. VLAN_TCI is the whole
//! 16-bit TCI; without it the TCI is made of VLAN_ID and VLAN_PCP. VLAN_PCP
//! is ORed into the top 3 bits in either case.
//!
//! ## Keywords
//! - **VLAN_TCI** (integer 0-0xFFFF): the TCI.
//! - **VLAN_PCP** (integer 0-7): priority code point. Default 0.
//! - **VLAN_ID** (integer 0-0xFFF, keyword only): the VLAN ID when
//!   VLAN_TCI is not given. Default 0.
//!
//! ## Handlers
//! - `config` (read/write): `VLAN_ID n, VLAN_PCP p`.
//! - `vlan_tci` (read/write): the TCI in decimal.
//! - `vlan_id`, `vlan_pcp` (read/write): those values. Writing `vlan_tci`
//!   or one of these reconfigures the element from the `config` text with
//!   that argument changed (set, or `VLAN_TCI n` added).
//!
//! ## Example
//! ```click
//! FromDevice(eth2) -> SetVLANAnno(VLAN_ID 20) -> [2]switch;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::vlancommon::{bounded, keyword_value, rewrite_keyword, set_vlan_tci_anno};

#[derive(Default)]
pub struct SetVLANAnno {
    tci: u16,
}

impl SetVLANAnno {
    fn config_text(&self) -> String {
        format!(
            "VLAN_ID {}, VLAN_PCP {}",
            self.tci & 0x0fff,
            (self.tci >> 13) & 7
        )
    }
}

/// Click's keyword writes start from the `config` handler's text.
fn rewrite(e: &mut SetVLANAnno, kw: &str, v: &str, ctx: &mut Ctx) -> Result<(), String> {
    let base = e.config_text();
    rewrite_keyword(e, &base, kw, None, v, ctx)
}

impl SimpleAction for SetVLANAnno {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        set_vlan_tci_anno(&mut p, self.tci);
        Some(p)
    }
}

// Click's order.
const HANDLERS: &[Handler<SetVLANAnno>] = &[
    Handler::flagged(
        hflags::CALM,
        Handler::read("config", |e, _| e.config_text()),
    ),
    Handler::read_write(
        "vlan_tci",
        |e, _| e.tci.to_string(),
        |e, v, ctx| rewrite(e, "VLAN_TCI", v, ctx),
    ),
    Handler::read_write(
        "vlan_id",
        |e, _| keyword_value(&e.config_text(), "VLAN_ID"),
        |e, v, ctx| rewrite(e, "VLAN_ID", v, ctx),
    ),
    Handler::read_write(
        "vlan_pcp",
        |e, _| keyword_value(&e.config_text(), "VLAN_PCP"),
        |e, v, ctx| rewrite(e, "VLAN_PCP", v, ctx),
    ),
];

rclick_core::element_class!(SetVLANAnno);

impl Element for SetVLANAnno {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let tci = args.read_p_with("VLAN_TCI", bounded(0, 0xffff));
        let pcp = args.read_p_with("VLAN_PCP", bounded(0, 7)).unwrap_or(0);
        let id = args.read_with("VLAN_ID", bounded(0, 0xfff)).unwrap_or(0);
        args.complete()?;
        self.tci = (tci.unwrap_or(id) as u16) | ((pcp as u16) << 13);
        Ok(())
    }
}
