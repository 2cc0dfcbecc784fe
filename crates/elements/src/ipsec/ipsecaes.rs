//! # IPsecAES
//!
//! Encrypts or decrypts ESP packets with Click's AES-128 transform.
//!
//! ## Synopsis
//! `IPsecAES(ENCRYPT)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! The encryption step of Click's IPsec path: packets are ESP packets as
//! IPsecESPEncap and IPsecAuthHMACSHA1(0) leave them (16-byte ESP header,
//! payload and padding, 12-byte digest), carrying the SA annotation
//! RadixIPsecLookup sets; the key is the SA's 16-byte encryption key.
//! ENCRYPT 1 (any nonzero value) encrypts, 0 decrypts.
//!
//! The transform is Click's, byte for byte, so that rclick and Click
//! gateways interoperate; it is *not* standard AES-CBC (RFC 3602): the IV
//! is the ESP header's 8 IV bytes, and only the first 8 bytes of each
//! 16-byte block are chained (XORed with the first 8 bytes of the previous
//! ciphertext block, or the IV) before AES-128 encrypts the block. The
//! encrypted region starts after the ESP header and covers the packet
//! less the header and the 12-byte digest; since ESP padding only makes
//! that a multiple of 8, when it is not a multiple of 16 the region takes
//! in the digest's first 8 bytes too. The AES block cipher is RustCrypto's
//! `aes` crate; the chaining is done here.
//!
//! Click prints `AES: No SADataTuple annotation. This module is not
//! properly placed check man page` (when encrypting; `AES: No SADataTuple
//! reference annotation. check man page` when decrypting) and drops
//! packets without an SA annotation; rclick does the same. Click encrypts
//! past the packet when the region is not whole 8-byte units (a packet
//! that did not come from IPsecESPEncap, or was cut); rclick drops such
//! packets and counts them in `drops`.
//!
//! ## Keywords
//! - `ENCRYPT`: integer; nonzero encrypts, 0 decrypts.
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//!
//! ## Example
//! ```click
//! ... -> IPsecAuthHMACSHA1(0) -> IPsecAES(1) -> IPsecEncap(50) -> ...
//! ```

use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::legacy;

#[derive(Default)]
pub struct IPsecAES {
    encrypt: bool,
    drops: u64,
}

impl SimpleAction for IPsecAES {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let no_sa = NO_SA[usize::from(self.encrypt)];
        legacy::cipher_step(
            p,
            self.encrypt,
            &mut self.drops,
            ctx,
            no_sa,
            |data, keys, decrypt| legacy::click_aes_with(data, &keys.aes, decrypt),
        )
    }
}

/// Click's messages for a packet without an SA: decrypting, encrypting.
const NO_SA: [&str; 2] = [
    "AES: No SADataTuple reference annotation. check man page",
    "AES: No SADataTuple annotation. This module is not properly placed check man page",
];

const HANDLERS: &[Handler<IPsecAES>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecAES);

impl Element for IPsecAES {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.encrypt = legacy::read_direction(conf, "ENCRYPT")?;
        Ok(())
    }
}
