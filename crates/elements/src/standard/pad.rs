//! # Pad
//!
//! Extends packets to a length.
//!
//! ## Synopsis
//! `Pad([LENGTH, *keywords*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Extends packets shorter than LENGTH bytes to LENGTH bytes by adding
//! bytes at the end. Without LENGTH (or with LENGTH 0), extends each packet
//! by its extra-length annotation (the bytes a Truncate or a capture cut
//! off), restoring its original length. Either way, packets leave with the
//! extra-length annotation zero.
//!
//! ## Keywords
//! - **LENGTH** (unsigned): the minimum length. Default 0: use the
//!   extra-length annotation.
//! - **ZERO** (boolean): zero the added bytes. Default true. When false the
//!   added bytes hold whatever the buffer held, as in Click.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(headers.pcap) -> Pad -> ToDump(full_length.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

pub struct Pad {
    nbytes: u32,
    zero: bool,
}

impl Default for Pad {
    fn default() -> Self {
        Pad {
            nbytes: 0,
            zero: true,
        }
    }
}

impl SimpleAction for Pad {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let extra = u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH));
        let len = p.len() as u64;
        let nput = if self.nbytes != 0 {
            u64::from(self.nbytes).saturating_sub(len)
        } else {
            u64::from(extra)
        };
        if nput > 0 {
            // Past the longest packet (a huge EXTRA_LENGTH annotation):
            // dropped.
            let added = p.put(usize::try_from(nput).ok()?)?;
            if self.zero {
                added.fill(0);
            }
        }
        p.set_anno_bytes(anno::EXTRA_LENGTH, &0u32.to_ne_bytes());
        Some(p)
    }
}

rclick_core::element_class!(Pad);

impl Element for Pad {
    rclick_core::element_kind!(action);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.nbytes = args.read_p_or("LENGTH", 0u32);
        self.zero = args.read_or("ZERO", true);
        args.complete()?;
        Ok(())
    }
}
