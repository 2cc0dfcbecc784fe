//! # IPsecESPEncap
//!
//! Adds an ESP header and trailer, Click's way.
//!
//! ## Synopsis
//! `IPsecESPEncap()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Click's IPsec ESP encapsulation (RFC 2406), the first step of the
//! outbound path `RadixIPsecLookup[1] -> IPsecESPEncap ->
//! IPsecAuthHMACSHA1(0) -> IPsecAES(1) -> IPsecEncap(50)`. Each packet
//! (normally an IP packet) must carry the SPI and SA annotations that
//! RadixIPsecLookup sets for its tunneled routes. The element prepends
//! Click's 16-byte ESP header: the SPI (from the `IPSEC_SPI` annotation),
//! the SA's next sequence number (the SA's REPLAY value first; after
//! 2^32 - 1 the counter goes through 0 and back to REPLAY, as Click's),
//! and an 8-byte IV made of two `click_random() >> 2` values in
//! little-endian byte order. It then appends RFC 2406 default padding
//! (1, 2, 3, ...) to an 8-byte boundary with at least the 2 trailer bytes,
//! the pad length, and the next-header byte: the protocol of the packet's
//! IP header (0 when it has none).
//!
//! The IVs come from Click's `click_random` stream, the one RandomSample,
//! RED, UDPRewriter and Script's `random` draw from (the C library's
//! `random()`, reproduced in rclick): with a RandomSeed element in the
//! configuration, the IVs, and so the ciphertext, equal Click's byte for
//! byte, also when other elements draw from the stream between packets;
//! without one the stream starts from seed 1 (Click seeds itself from
//! true randomness). These
//! predictable IVs are Click's design, kept for compatibility; they are
//! not fit for confidentiality against a serious adversary (see
//! ESPTunnelEncap for rclick's RFC 4303 path).
//!
//! The SA annotation (bytes 36-39) holds a handle naming an SA created by
//! RadixIPsecLookup, where Click stores a raw pointer (bytes 40-47 on a
//! 64-bit host); the SPI annotation is Click's (bytes 32-35).
//!
//! Click ignores any arguments (its documentation still shows the old
//! `IPsecESPEncap(SPI)`), and so does rclick, so that old configurations
//! load. Without an SA annotation Click crashes (kohler/click#470: its
//! IPsecESPEncap(1) dereferences a null SA); rclick drops the packet and
//! counts it in `drops` (tests/ipsec_legacy.rs, `encap_without_sa_drops`,
//! and tests/diff/cases/ipsec-espencap-nosa.case).
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets dropped for lack of an SA or room (rclick
//!   extension).
//!
//! ## Example
//! ```click
//! rt[1] -> IPsecESPEncap -> IPsecAuthHMACSHA1(0) -> IPsecAES(1)
//!       -> IPsecEncap(50) -> [0]rt;
//! ```

use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::legacy::{self, ESP_HEADER_LEN};
use crate::standard::clickrandom::click_random;

/// Click's ESP block size: payloads are padded to 8 bytes.
const BLOCK: usize = 8;

#[derive(Default)]
pub struct IPsecESPEncap {
    drops: u64,
}

impl SimpleAction for IPsecESPEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let Some(sa) = legacy::sa_of(&p) else {
            self.drops += 1;
            return None;
        };
        let proto = p
            .network_header()
            .and_then(|h| h.get(9).copied())
            .unwrap_or(0);
        let plen = p.len();
        let padding = ((BLOCK - ((plen + 2) % BLOCK)) % BLOCK) + 2;
        let spi = legacy::spi_anno(&p);
        let seq = sa.take_seq();
        let iv0 = click_random() >> 2;
        let iv1 = click_random() >> 2;
        let Some(head) = p.push(ESP_HEADER_LEN) else {
            self.drops += 1;
            return None;
        };
        head[0..4].copy_from_slice(&spi.to_be_bytes());
        head[4..8].copy_from_slice(&seq.to_be_bytes());
        head[8..12].copy_from_slice(&iv0.to_le_bytes());
        head[12..16].copy_from_slice(&iv1.to_le_bytes());
        let Some(tail) = p.put(padding) else {
            self.drops += 1;
            return None;
        };
        let n = padding - 2;
        for (i, b) in tail[..n].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        tail[n] = n as u8;
        tail[n + 1] = proto;
        Some(p)
    }
}

const HANDLERS: &[Handler<IPsecESPEncap>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecESPEncap);

impl Element for IPsecESPEncap {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    /// Click's IPsecESPEncap accepts and ignores any arguments.
    fn configure(&mut self, _conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Ok(())
    }
}
