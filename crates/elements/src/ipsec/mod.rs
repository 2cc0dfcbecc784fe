//! IPsec: ESP tunnel mode (RFC 4303) with AEAD algorithms (AES-GCM,
//! RFC 4106; ChaCha20-Poly1305, RFC 7634), the security associations
//! that carry their keys, sequence numbers and anti-replay windows
//! (`sa.rs`), and the encapsulating and decapsulating elements.
//!
//! Also Click's own IPsec elements, for Click configurations
//! (`conf/ipsec-router.click`): RadixIPsecLookup, IPsecESPEncap,
//! IPsecAuthHMACSHA1, IPsecAuthSHA1, IPsecAES, IPsecDES, IPsecESPUnencap
//! and IPsecEncap, byte-identical to Click's output, with their shared SA
//! data, SA annotation and transforms in `legacy.rs`.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/ipsec_modules.rs"));
