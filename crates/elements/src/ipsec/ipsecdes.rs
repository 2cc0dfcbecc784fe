//! # IPsecDES
//!
//! Encrypts or decrypts ESP packets with DES-CBC, as Click does.
//!
//! ## Synopsis
//! `IPsecDES(ENCRYPT)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! The DES alternative to IPsecAES in Click's IPsec path: packets are ESP
//! packets as IPsecESPEncap and IPsecAuthHMACSHA1(0) leave them (16-byte
//! ESP header, payload and padding, 12-byte digest), carrying the SA
//! annotation RadixIPsecLookup sets. ENCRYPT 1 (any nonzero value)
//! encrypts, 0 decrypts. The bytes between the ESP header and the digest
//! are processed with single DES in CBC mode (RFC 2405), the IV being the
//! ESP header's 8 IV bytes and the key the first 8 bytes of the SA's
//! encryption key (parity bits ignored). The digest stays in the clear.
//! The DES block cipher is RustCrypto's `des` crate; the chaining is done
//! here.
//!
//! Click has single DES only (no 3DES element); DES's 56-bit key is long
//! broken, and the element is here so that Click configurations run.
//!
//! Click prints `DES: No SADataTuple annotation. Check man page` and drops
//! packets without an SA annotation; rclick does the same. Click encrypts
//! past the digest when the region is not whole 8-byte blocks; rclick
//! drops such packets and counts them in `drops`.
//!
//! ## Keywords
//! - `ENCRYPT`: integer; nonzero encrypts, 0 decrypts.
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//!
//! ## Example
//! ```click
//! ... -> IPsecAuthHMACSHA1(0) -> IPsecDES(1) -> IPsecEncap(50) -> ...
//! ```

use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::legacy;

#[derive(Default)]
pub struct IPsecDES {
    encrypt: bool,
    drops: u64,
}

impl SimpleAction for IPsecDES {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let no_sa = NO_SA[usize::from(self.encrypt)];
        legacy::cipher_step(
            p,
            self.encrypt,
            &mut self.drops,
            ctx,
            no_sa,
            |data, keys, decrypt| legacy::click_des_with(data, &keys.des, decrypt),
        )
    }
}

/// Click's message for a packet without an SA.
const NO_SA: [&str; 2] = ["DES: No SADataTuple annotation. Check man page"; 2];

const HANDLERS: &[Handler<IPsecDES>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPsecDES);

impl Element for IPsecDES {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.encrypt = legacy::read_direction(conf, "ENCRYPT")?;
        Ok(())
    }
}
