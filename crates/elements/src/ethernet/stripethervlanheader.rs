//! # StripEtherVLANHeader
//!
//! Strips an 802.1Q-tagged Ethernet header, keeping its TCI.
//!
//! ## Synopsis
//! `StripEtherVLANHeader([NATIVE_VLAN])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, push output 1 (optional).
//!
//! ## Description
//! A frame with EtherType 0x8100 loses its 18-byte tagged header and gets
//! its VLAN_TCI annotation set to the tag's TCI. An untagged frame loses
//! its 14-byte header and gets VLAN_TCI set to NATIVE_VLAN, when
//! NATIVE_VLAN is 0 or more (the default is 0); with a negative NATIVE_VLAN
//! untagged frames leave unchanged by output 1 (or are dropped when it is
//! not connected).
//!
//! Frames too short for the header they claim (under 18 bytes tagged,
//! under 14 untagged) are dropped.
//!
//! ## Keywords
//! - **NATIVE_VLAN** (integer, at most 0xFFF): the VLAN of untagged
//!   frames; negative for none. Default 0.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDevice(trunk) -> StripEtherVLANHeader(-1) -> ... ;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::wire::ether::{EtherFrame, VlanTag, ETHERTYPE_VLAN, HEADER_LEN, VLAN_TAG_LEN};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

use super::vlancommon::set_vlan_tci_anno;

#[derive(Default)]
pub struct StripEtherVLANHeader {
    /// -1: untagged frames go to output 1.
    native_vlan: i32,
}

impl FilterOrDrop for StripEtherVLANHeader {
    #[inline]
    fn filter_or_drop(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        let tagged = {
            let f = EtherFrame::new_checked(p.data()).ok()?;
            if f.ethertype() == ETHERTYPE_VLAN {
                Some(VlanTag::new_checked(f.payload()).ok()?.tci())
            } else {
                None
            }
        };
        match tagged {
            Some(tci) => {
                set_vlan_tci_anno(&mut p, tci);
                p.pull(HEADER_LEN + VLAN_TAG_LEN);
            }
            None if self.native_vlan >= 0 => {
                set_vlan_tci_anno(&mut p, self.native_vlan as u16);
                p.pull(HEADER_LEN);
            }
            None => return Some(Err(p)),
        }
        Some(Ok(p))
    }
}

rclick_core::element_class!(StripEtherVLANHeader);

impl Element for StripEtherVLANHeader {
    rclick_core::element_kind!(filter_or_drop);
    rclick_core::filter_ports!();

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let native = args.read_p_with("NATIVE_VLAN", parse_i32).unwrap_or(0);
        args.complete()?;
        if native > 0xfff {
            return Err("bad NATIVE_VLAN".into());
        }
        self.native_vlan = native.max(-1);
        Ok(())
    }
}
