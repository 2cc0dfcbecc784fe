//! # IPsecAuthSHA1
//!
//! Computes or verifies Click's IPsec ESP authentication digest:
//! a plain SHA-1 digest truncated to 96 bits (no key: Click's older element; it authenticates nothing, as anyone can recompute it).
//!
//! ## Synopsis
//! `IPsecAuthSHA1(VERIFY)`
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
//! digest`.
//!
//! Click reads before the packet when verifying one shorter than 12
//! bytes; rclick treats it as failing verification.
//!
//! ## Keywords
//! - `VERIFY`: integer; 0 computes, anything else verifies.
//!
//! ## Handlers
//! - `drops` (read): packets that failed verification, or had no room for
//!   the digest.
//!
//! ## Example
//! ```click
//! ... -> IPsecESPEncap -> IPsecAuthSHA1(0) -> IPsecAES(1) -> ...
//! ... -> IPsecAES(0) -> IPsecAuthSHA1(1) -> IPsecESPUnencap -> ...
//! ```

use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::legacy;

#[derive(Default)]
pub struct IPsecAuthSHA1 {
    verify: bool,
    drops: u64,
}

impl FilterOrDrop for IPsecAuthSHA1 {
    #[inline]
    fn filter_or_drop(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        // An unkeyed digest: nothing secret to time, so a plain comparison.
        legacy::digest_step(
            p,
            self.verify,
            &mut self.drops,
            ctx,
            legacy::sha1_96,
            |body, tag| legacy::sha1_96(body) == tag,
        )
    }
}

const HANDLERS: &[Handler<IPsecAuthSHA1>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecAuthSHA1);

impl Element for IPsecAuthSHA1 {
    rclick_core::element_kind!(filter_or_drop);
    rclick_core::handlers!(HANDLERS);
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.verify = legacy::read_direction(conf, "VERIFY")?;
        Ok(())
    }
}
