//! # Align
//!
//! Aligns packet data in memory.
//!
//! ## Synopsis
//! `Align(MODULUS, OFFSET)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Moves each packet's data so that its first byte lies at an address
//! congruent to OFFSET modulo MODULUS (2, 4 or 8). A packet already so
//! aligned passes untouched. Otherwise its bytes move forward in the
//! buffer, into the tailroom, as in Click; a packet whose buffer is shared
//! with a clone, or that lacks the tailroom, is first copied.
//!
//! Header offsets (network and transport headers) set within the data
//! follow the data. Bytes already stripped into the headroom (an Ethernet
//! header before `Strip(14)`) do not move, as in Click, so unstrip before
//! aligning, not after.
//!
//! rclick reads headers through checked views that do not care about
//! alignment, so Align matters only to configurations ported from Click
//! (where it kept the IP header word-aligned on strict-alignment
//! processors) and to AlignmentInfo's bookkeeping.
//!
//! A negative OFFSET counts back from MODULUS (Click accepts it too; Click
//! then moves data backward for offsets below -MODULUS, rclick takes the
//! offset modulo MODULUS).
//!
//! ## Keywords
//! - **MODULUS** (unsigned): 2, 4 or 8.
//! - **OFFSET** (integer): smaller than MODULUS.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> Strip(14) -> Align(4, 0) -> CheckIPHeader -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct Align {
    /// MODULUS - 1.
    mask: usize,
    /// OFFSET modulo MODULUS.
    offset: usize,
}

impl Align {
    /// Bytes the data must move forward to be aligned.
    fn delta(&self, p: &Packet) -> usize {
        let addr = p.data().as_ptr() as usize;
        self.offset.wrapping_sub(addr) & self.mask
    }
}

impl SimpleAction for Align {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let delta = self.delta(&p);
        if delta == 0 {
            return Some(p);
        }
        let len = p.len();
        let net = p.network_offset().and_then(|n| usize::try_from(n).ok());
        let trans = p.transport_offset().and_then(|t| usize::try_from(t).ok());
        // Grows the data by `delta` (copying the packet first if it is
        // shared or short of tailroom; a copy keeps the address modulo 8),
        // moves the bytes up and drops the front.
        p.put(delta);
        p.writable().copy_within(0..len, delta);
        p.pull(delta);
        let moved = self.delta(&p);
        if moved != 0 {
            // The copy landed elsewhere modulo MODULUS: one more step.
            let len = p.len();
            p.put(moved);
            p.writable().copy_within(0..len, moved);
            p.pull(moved);
        }
        match (net, trans) {
            (Some(n), Some(t)) if t >= n => p.set_network_header(n, t - n),
            (Some(n), _) => p.set_network_header(n, 0),
            _ => {}
        }
        Some(p)
    }
}

rclick_core::element_class!(Align);

impl Element for Align {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let modulus: u32 = args.read_mp("MODULUS");
        let offset: i32 = args.read_mp("OFFSET");
        args.complete()?;
        if !matches!(modulus, 2 | 4 | 8) {
            return Err("MODULUS must be 2, 4, or 8".into());
        }
        if offset >= modulus as i32 {
            return Err("OFFSET must be smaller than MODULUS".into());
        }
        self.mask = modulus as usize - 1;
        self.offset = offset.rem_euclid(modulus as i32) as usize;
        Ok(())
    }
}
