//! # IPsecESPUnencap
//!
//! Removes an ESP header and trailer, Click's way, with a replay check.
//!
//! ## Synopsis
//! `IPsecESPUnencap()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! The last IPsec step of Click's inbound path `RadixIPsecLookup[0] ->
//! StripIPHeader -> IPsecAES(0) -> IPsecAuthHMACSHA1(1) ->
//! IPsecESPUnencap -> CheckIPHeader`. Each packet starts with a decrypted
//! ESP packet as IPsecESPEncap builds it (digest already removed) and
//! carries the SA annotation RadixIPsecLookup set from its SPI.
//!
//! First the sequence number is checked against the SA's anti-replay
//! window (Click's algorithm: a 32-bit bitmap below the highest number
//! seen, OOSIZE packets wide; number 0 is refused; the SA's REPLAY start
//! value is accepted again after the sender's counter wraps). Two replays
//! Click lets through are refused: a packet 32 or more behind the highest
//! number seen is too old even when OOSIZE is wider (Click's bitmap has
//! 32 bits, and its shift past them is undefined), and the REPLAY start
//! value restarts the window only when the highest number seen is within
//! 32 of 2^32 - 1 (in Click, replaying the SA's first packet restarted
//! the window at any time and let every later packet be replayed; tests
//! `replays_beyond_the_32_bit_bitmap_are_refused` and
//! `replaying_the_first_packet_does_not_reopen_the_window` in
//! tests/ipsec_legacy.rs). Refused
//! packets are dropped; old and repeated ones print `Replay protection:
//! This packet is too old to be accepted` or `... is already seen...`.
//! Then the 16-byte ESP header is removed and the trailer checked: the
//! pad length byte must be 0 or equal to the byte before it (`Invalid
//! padding length`), and the padding must be 1, 2, 3, ... (`Corrupt
//! padding`); failing packets are dropped. The padding, pad length and
//! next-header bytes are removed.
//!
//! Click prints `Null reference to Security Association Table` and then
//! crashes when a packet has no SA annotation, and reads before the packet
//! when the trailer's pad length exceeds the packet; rclick prints the
//! message and drops the packet in the first case and drops it as
//! `Corrupt padding` in the second; both are counted in `drops`.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//!
//! ## Example
//! ```click
//! rt[0] -> StripIPHeader -> IPsecAES(0) -> IPsecAuthHMACSHA1(1)
//!       -> IPsecESPUnencap -> CheckIPHeader -> [0]rt;
//! ```

use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::legacy::{self, ESP_HEADER_LEN};

#[derive(Default)]
pub struct IPsecESPUnencap {
    drops: u64,
}

impl IPsecESPUnencap {
    #[cold]
    fn drop_with(&mut self, msg: Option<&str>, ctx: &mut Ctx) -> Option<Packet> {
        self.drops += 1;
        if let Some(m) = msg {
            ctx.chatter(m);
        }
        None
    }
}

impl SimpleAction for IPsecESPUnencap {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let Some(sa) = legacy::sa_of(&p) else {
            return self.drop_with(Some("Null reference to Security Association Table"), ctx);
        };
        let d = p.data();
        if d.len() < ESP_HEADER_LEN + 2 {
            return self.drop_with(None, ctx);
        }
        let seq = u32::from_be_bytes([d[4], d[5], d[6], d[7]]);
        if let Err(msg) = sa.check_replay(seq) {
            return self.drop_with(msg, ctx);
        }
        let body = &d[ESP_HEADER_LEN..];
        let n = body.len();
        let padlen = body[n - 2];
        if padlen != 0 && (n < 3 || body[n - 3] != padlen) {
            return self.drop_with(Some("Invalid padding length"), ctx);
        }
        let padlen = usize::from(padlen);
        let good = n >= padlen + 2
            && body[n - 2 - padlen..n - 2]
                .iter()
                .enumerate()
                .all(|(i, &b)| usize::from(b) == i + 1);
        if !good {
            return self.drop_with(Some("Corrupt padding"), ctx);
        }
        p.pull(ESP_HEADER_LEN);
        p.take(padlen + 2);
        Some(p)
    }
}

const HANDLERS: &[Handler<IPsecESPUnencap>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecESPUnencap);

impl Element for IPsecESPUnencap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        rclick_core::conf::Args::new(conf).complete()?;
        Ok(())
    }
}
