//! # VLANDecap
//!
//! Removes an 802.1Q VLAN tag from Ethernet frames.
//!
//! ## Synopsis
//! `VLANDecap([ANNO, ETHERTYPE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects Ethernet frames, tagged or not. When the frame's EtherType is
//! ETHERTYPE (0x8100 by default), the 4-byte tag after the source address
//! is removed, leaving an untagged frame with the encapsulated EtherType.
//! Only the outer tag is removed: a double-tagged frame keeps its inner tag
//! (apply VLANDecap again, with the right ETHERTYPE, to remove it). Frames
//! with another EtherType pass unchanged.
//!
//! If ANNO is true (the default), the VLAN_TCI annotation is set to the
//! removed tag's TCI, or to 0 when the frame was not tagged.
//!
//! A frame whose EtherType says it is tagged but that is too short to hold
//! the tag (under 18 bytes) is dropped (Click reads past its end).
//!
//! ## Keywords
//! - **ANNO** (boolean): set the VLAN_TCI annotation. Default true.
//! - **ETHERTYPE** (16-bit integer, keyword only): the tag's EtherType.
//!   Default 0x8100.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDevice(trunk) -> VLANDecap -> c :: Classifier(...);
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ether::{EtherFrame, VlanTag, ETHERTYPE_VLAN, VLAN_TAG_LEN};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::vlancommon::set_vlan_tci_anno;

pub struct VLANDecap {
    anno: bool,
    ethertype: u16,
}

impl Default for VLANDecap {
    fn default() -> Self {
        VLANDecap {
            anno: true,
            ethertype: ETHERTYPE_VLAN,
        }
    }
}

/// The TCI of `p`'s outer tag when its EtherType is `tpid`: `Ok(None)`
/// when the frame is not tagged so, `Err` when it is but is truncated.
pub(crate) fn outer_tci(p: &Packet, tpid: u16) -> Result<Option<u16>, ()> {
    let Ok(f) = EtherFrame::new_checked(p.data()) else {
        return Ok(None);
    };
    if f.ethertype() != tpid {
        return Ok(None);
    }
    match VlanTag::new_checked(f.payload()) {
        Ok(t) => Ok(Some(t.tci())),
        Err(_) => Err(()),
    }
}

impl SimpleAction for VLANDecap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let tci = match outer_tci(&p, self.ethertype) {
            Ok(Some(tci)) => {
                p.writable().copy_within(0..12, VLAN_TAG_LEN);
                p.pull(VLAN_TAG_LEN);
                tci
            }
            Ok(None) => 0,
            Err(()) => return None,
        };
        if self.anno {
            set_vlan_tci_anno(&mut p, tci);
        }
        Some(p)
    }
}

rclick_core::element_class!(VLANDecap);

impl Element for VLANDecap {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let anno = args.read_p_or("ANNO", true);
        let ethertype = args.read_or("ETHERTYPE", ETHERTYPE_VLAN);
        args.complete()?;
        self.anno = anno;
        self.ethertype = ethertype;
        Ok(())
    }
}
