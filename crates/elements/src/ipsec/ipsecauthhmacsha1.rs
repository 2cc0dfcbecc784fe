//! # IPsecAuthHMACSHA1
//!
//! Computes or verifies Click's IPsec ESP authentication digest:
//! HMAC-SHA1-96 (RFC 2104, RFC 2404) with the SA's 16-byte authentication key.
//!
//! ## Synopsis
//! `IPsecAuthHMACSHA1(VERIFY)`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, output 1 (optional) for packets
//! that fail verification.
//!
//! ## Description
//! With VERIFY 0 the element computes the digest over the whole packet (in
//! Click's IPsec path, the ESP header, payload and trailer) and appends
//! its first 12 bytes. With any other VERIFY it recomputes the digest over
//! all but the packet's last 12 bytes and compares it with them: packets
//! that match lose the 12 bytes and leave by output 0; the others are
//! counted in `drops` and go to output 1, or are dropped when output 1 is
//! not connected. The first failure prints `Invalid SHA1 authentication
//! digest`. The comparison takes constant time (Click compares with
//! `memcmp`, which returns at the first differing byte).
//!
//! The key comes from the SA named by the packet's SA annotation, set by
//! RadixIPsecLookup. In Click's configuration the digest is computed
//! before encryption (IPsecAES then encrypts part of it), which is not
//! RFC 2406's order; that is the configuration's choice, and rclick keeps
//! it byte for byte.
//!
//! Click crashes on a packet without an SA annotation, and reads before
//! the packet when verifying one shorter than 12 bytes; rclick drops the
//! first (counted in `drops`) and treats the second as failing
//! verification.
//!
//! ## Keywords
//! - `VERIFY`: integer; 0 computes, anything else verifies.
//!
//! ## Handlers
//! - `drops` (read): packets that failed verification, had no SA, or had
//!   no room for the digest.
//!
//! ## Example
//! ```click
//! ... -> IPsecESPEncap -> IPsecAuthHMACSHA1(0) -> IPsecAES(1) -> ...
//! ... -> IPsecAES(0) -> IPsecAuthHMACSHA1(1) -> IPsecESPUnencap -> ...
//! ```

use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::legacy;

#[derive(Default)]
pub struct IPsecAuthHMACSHA1 {
    verify: bool,
    drops: u64,
}

impl FilterOrDrop for IPsecAuthHMACSHA1 {
    #[inline]
    fn filter_or_drop(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        let Some(sa) = legacy::sa_of(&p) else {
            self.drops += 1;
            return None;
        };
        let mac = &sa.keys.mac;
        legacy::digest_step(
            p,
            self.verify,
            &mut self.drops,
            ctx,
            |data| legacy::hmac_sha1_96_with(mac, data),
            |body, tag| legacy::hmac_sha1_96_verify(mac, body, tag),
        )
    }
}

const HANDLERS: &[Handler<IPsecAuthHMACSHA1>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecAuthHMACSHA1);

impl Element for IPsecAuthHMACSHA1 {
    rclick_core::element_kind!(filter_or_drop);
    rclick_core::handlers!(HANDLERS);
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.verify = legacy::read_direction(conf, "VERIFY")?;
        Ok(())
    }
}
