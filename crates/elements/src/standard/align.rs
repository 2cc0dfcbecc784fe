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
//! with a clone, or that lacks the tailroom, is first copied. The headroom
//! moves along with the data, so headers stripped earlier (an Ethernet
//! header before `Strip(14)`) can still be restored by Unstrip, and the
//! network and transport header offsets follow their bytes.
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
use rclick_core::packet::MAX_PACKET_LEN;
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

/// Moves everything in `p`'s buffer up to the end of its data (the
/// headroom, with any stripped headers in it, and the data) `delta` bytes
/// forward, keeping the header offsets with the bytes. `None` (the packet
/// unchanged) if it cannot grow by `delta`.
fn shift_forward(p: &mut Packet, delta: usize) -> Option<()> {
    let head = p.headroom();
    if delta > MAX_PACKET_LEN.saturating_sub(head + p.len()) {
        return None;
    }
    // Offsets from the buffer's start, before the move.
    let net = p.network_offset().map(|n| n + head as isize);
    let trans = p.transport_offset().map(|t| t + head as isize);
    p.unstrip(head);
    let total = p.len();
    // Copies the packet first if it is shared or short of tailroom.
    p.put(delta)?;
    p.writable().copy_within(0..total, delta);
    match (net, trans) {
        (Some(n), Some(t)) if n >= 0 && t >= n => {
            p.set_network_header(n as usize + delta, (t - n) as usize)
        }
        (Some(n), _) if n >= 0 => p.set_network_header(n as usize + delta, 0),
        _ => {}
    }
    p.pull(head + delta);
    Some(())
}

impl SimpleAction for Align {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        // A copy (of a shared packet) may land at another address modulo
        // MODULUS: then one more step.
        for _ in 0..2 {
            let delta = self.delta(&p);
            if delta == 0 {
                break;
            }
            shift_forward(&mut p, delta)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn addr_mod(p: &Packet, m: usize) -> usize {
        p.data().as_ptr() as usize % m
    }

    fn aligned(modulus: usize, offset: usize, mut p: Packet) -> Packet {
        let a = Align {
            mask: modulus - 1,
            offset,
        };
        for _ in 0..2 {
            let d = a.delta(&p);
            if d == 0 {
                break;
            }
            shift_forward(&mut p, d).unwrap();
        }
        p
    }

    #[test]
    fn moves_data_to_the_offset_keeping_bytes_and_headers() {
        let frame: Vec<u8> = (0u8..60).collect();
        for strip in 0..8 {
            for (m, o) in [(2, 0), (2, 1), (4, 0), (4, 2), (4, 3), (8, 0), (8, 5)] {
                let mut p = Packet::from_slice(&frame);
                p.pull(strip);
                p.set_network_header(0, 20);
                let q = aligned(m, o, p);
                assert_eq!(addr_mod(&q, m), o, "strip {strip} mod {m} off {o}");
                assert_eq!(q.data(), &frame[strip..]);
                assert_eq!(q.network_offset(), Some(0));
                assert_eq!(q.transport_offset(), Some(20));
                // The stripped bytes moved along: Unstrip restores them.
                let mut u = q;
                u.unstrip(strip);
                assert_eq!(u.data(), &frame[..]);
            }
        }
    }

    #[test]
    fn shared_packets_are_copied_not_changed() {
        let frame: Vec<u8> = (0u8..40).collect();
        let mut p = Packet::from_slice(&frame);
        p.pull(1);
        let keep = p.clone();
        let before = keep.data().as_ptr() as usize;
        let q = aligned(8, 0, p);
        assert_eq!(addr_mod(&q, 8), 0);
        assert_eq!(q.data(), &frame[1..]);
        // The clone still sees its bytes where they were.
        assert_eq!(keep.data().as_ptr() as usize, before);
        assert_eq!(keep.data(), &frame[1..]);
    }

    #[test]
    fn packets_without_tailroom_are_copied() {
        let frame: Vec<u8> = (0u8..33).collect();
        let mut p = Packet::with_room(3, &frame, 0);
        p.pull(1);
        let q = aligned(4, 0, p);
        assert_eq!(addr_mod(&q, 4), 0);
        assert_eq!(q.data(), &frame[1..]);
    }
}
