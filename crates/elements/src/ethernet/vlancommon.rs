//! What the VLAN elements share: the VLAN_TCI annotation, the TCI arguments
//! (`VLAN_TCI` or `ANNO`, `VLAN_PCP`, `VLAN_ID`, `NATIVE_VLAN`) and the
//! keyword handlers that read their values back from the `config` text.

use rclick_core::conf::{parse_i64, parse_word, split_args, Args};
use rclick_core::element::handlers::config_with_keyword;
use rclick_core::packet::anno;
use rclick_core::{Ctx, Element, Packet};

/// The packet's VLAN_TCI annotation (Click's `VLAN_TCI_ANNO`: bytes 20-21
/// of the annotation area, in network byte order), as a host-order TCI.
#[inline]
pub fn vlan_tci_anno(p: &Packet) -> u16 {
    u16::from_be_bytes(p.anno_bytes::<2>(anno::VLAN_TCI))
}

/// Sets the VLAN_TCI annotation to host-order TCI `tci`.
#[inline]
pub fn set_vlan_tci_anno(p: &mut Packet, tci: u16) {
    p.set_anno_bytes(anno::VLAN_TCI, &tci.to_be_bytes());
}

/// A parser for an integer in `lo..=hi`, with Click's `BoundedIntArg`
/// messages.
pub fn bounded(lo: i64, hi: i64) -> impl Fn(&str) -> Result<i64, String> {
    move |s| {
        let v = parse_i64(s)?;
        if v < lo {
            Err(format!("out of range, bound {lo}"))
        } else if v > hi {
            Err(format!("out of range, bound {hi}"))
        } else {
            Ok(v)
        }
    }
}

/// The tag an encapsulating element adds: a fixed TCI or the annotation's,
/// and the native VLAN whose frames stay untagged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TciSpec {
    /// The TCI (host order) when not taken from the annotation.
    pub tci: u16,
    /// Whether the TCI comes from the VLAN_TCI annotation (`ANNO`).
    pub use_anno: bool,
    /// Frames whose VLAN ID is this stay untagged; -1 for none.
    pub native_vlan: i32,
}

impl TciSpec {
    /// Reads `VLAN_TCI` (positional: a number or the word `ANNO`),
    /// `VLAN_PCP` (positional), `VLAN_ID` and `NATIVE_VLAN` (keywords).
    /// The numeric VLAN_TCI is checked after the other arguments, as Click
    /// does (a second pass over that one argument).
    pub fn read(args: &mut Args) -> (Option<String>, i64, i64, i64) {
        let word = args.read_p_with("VLAN_TCI", parse_word);
        let pcp = args.read_p_with("VLAN_PCP", bounded(0, 7)).unwrap_or(0);
        let id = args.read_with("VLAN_ID", bounded(0, 0xfff)).unwrap_or(0);
        let native = args
            .read_with("NATIVE_VLAN", bounded(-1, 0xfff))
            .unwrap_or(0);
        (word, pcp, id, native)
    }

    /// Builds the spec from what [`read`](Self::read) returned (after
    /// `complete` succeeded).
    pub fn finish(word: Option<String>, pcp: i64, id: i64, native: i64) -> Result<Self, String> {
        let use_anno = word.as_deref() == Some("ANNO");
        let tci = match word.as_deref() {
            Some(w) if !use_anno => {
                let mut again = Args::from_vec(vec![w.to_string()]);
                let v = again.read_p_with("VLAN_TCI", bounded(0, 0xffff));
                again.complete().map_err(|e| e.join("\n"))?;
                v.unwrap_or(0)
            }
            _ => id,
        };
        Ok(TciSpec {
            tci: (tci as u16) | ((pcp as u16) << 13),
            use_anno,
            native_vlan: native as i32,
        })
    }

    /// The TCI for packet `p`.
    #[inline]
    pub fn tci_for(&self, p: &Packet) -> u16 {
        if self.use_anno {
            vlan_tci_anno(p)
        } else {
            self.tci
        }
    }

    /// Whether a frame with TCI `tci` belongs to the native VLAN.
    #[inline]
    pub fn is_native(&self, tci: u16) -> bool {
        i32::from(tci & 0x0fff) == self.native_vlan
    }

    /// The TCI part of Click's `config` text: `ANNO`, or `VLAN_ID n,
    /// VLAN_PCP p`, then `, NATIVE_VLAN n` unless it is 0. Click prints a
    /// native VLAN of -1 as 65535 (the 16-bit value it stores); so does
    /// this.
    pub fn config_text(&self) -> String {
        let mut s = if self.use_anno {
            "ANNO".to_string()
        } else {
            format!(
                "VLAN_ID {}, VLAN_PCP {}",
                self.tci & 0x0fff,
                (self.tci >> 13) & 7
            )
        };
        if self.native_vlan != 0 {
            s.push_str(&format!(", NATIVE_VLAN {}", self.native_vlan as u16));
        }
        s
    }

    /// The `vlan_tci` handler: `ANNO` or the TCI in decimal.
    pub fn tci_text(&self) -> String {
        if self.use_anno {
            "ANNO".into()
        } else {
            self.tci.to_string()
        }
    }
}

/// Click's `read_keyword_handler`: the value of argument `KEYWORD` in the
/// configuration text `config`, or empty when it has none.
pub fn keyword_value(config: &str, keyword: &str) -> String {
    for a in split_args(config) {
        if let Some(rest) = a.strip_prefix(keyword) {
            if rest.starts_with(|c: char| c.is_ascii_whitespace()) {
                return rest.trim().to_string();
            }
        }
    }
    String::new()
}

/// Click's keyword write handlers on the VLAN elements: argument `kw`
/// (or the positional argument at `position` standing for it) of the
/// configuration `base` is set to `value` and the element reconfigured;
/// the new text becomes its configuration.
pub fn rewrite_keyword<E: Element>(
    e: &mut E,
    base: &str,
    kw: &str,
    position: Option<usize>,
    value: &str,
    ctx: &mut Ctx,
) -> Result<(), String> {
    let new = config_with_keyword(base, kw, position, value);
    let mut ictx = ctx.init_ctx();
    e.configure(&new, &mut ictx).map_err(|x| x.to_string())?;
    ctx.set_config(&new);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_values() {
        let c = "VLAN_ID 564, VLAN_PCP 3, NATIVE_VLAN 5";
        assert_eq!(keyword_value(c, "VLAN_ID"), "564");
        assert_eq!(keyword_value(c, "NATIVE_VLAN"), "5");
        assert_eq!(keyword_value(c, "ETHERTYPE"), "");
        assert_eq!(keyword_value("VLAN_IDX 3", "VLAN_ID"), "");
    }

    #[test]
    fn tci_spec() {
        let s = TciSpec::finish(Some("0x1234".into()), 3, 0, 5).unwrap();
        assert_eq!(s.tci, 0x7234);
        assert_eq!(s.config_text(), "VLAN_ID 564, VLAN_PCP 3, NATIVE_VLAN 5");
        assert!(TciSpec::finish(Some("0x10000".into()), 0, 0, 0).is_err());
        let a = TciSpec::finish(Some("ANNO".into()), 0, 0, -1).unwrap();
        assert!(a.use_anno);
        assert_eq!(a.config_text(), "ANNO, NATIVE_VLAN 65535");
        assert!(!a.is_native(0xffff));
    }
}
