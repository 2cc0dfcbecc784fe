//! Security associations for ESP (RFC 4301 §4, RFC 4303): the algorithm
//! and keys, the sequence number (32-bit or extended, RFC 4303 §2.2.1),
//! the anti-replay window (RFC 4303 §3.4.3 and Appendix A), lifetimes in
//! packets, bytes and time, and per-SA counters; and the ESP tunnel-mode
//! transforms that use them ([`Sa::seal`] and [`Sa::open`]).
//!
//! This is not an element: `ESPTunnelEncap` and `ESPTunnelDecap` hold the
//! SAs (the outbound one, and the inbound database keyed by SPI).
//!
//! The ciphers come from RustCrypto's audited `aes-gcm` (AES-NI and
//! CLMUL when the processor has them, detected at run time) and
//! `chacha20poly1305` crates; nothing here implements a cipher.
//!
//! ## Wire format (RFC 4303, RFC 4106 §3, RFC 7634 §2)
//! `SPI(4) SEQ(4) IV(8) ciphertext(inner packet, padding, pad length,
//! next header) ICV(16)`. The nonce is the 4-byte salt (the last 4 bytes
//! of the key material) followed by the 8-byte IV. The IV is the 64-bit
//! sequence number XORed with a random value drawn when the SA is made (as
//! Linux's `seqiv` does): unique within the SA, as both RFCs require, and
//! not repeated when a manually keyed SA is set up again with the same key
//! (a router restart starts the sequence numbers at 1 again). The associated
//! data is `SPI SEQ` (8 bytes), or `SPI SEQ_HIGH SEQ_LOW` (12 bytes) with
//! extended sequence numbers (RFC 4106 §5).

use std::fmt::Write as _;

use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::ChaCha20Poly1305;
use rclick_core::conf::{parse_bool, parse_hex, parse_u32, parse_u64_radix};
use rclick_core::time::Timestamp;

/// Length of the per-packet IV.
pub const IV_LEN: usize = 8;
/// Length of the integrity check value (the AEAD tag).
pub const ICV_LEN: usize = 16;
/// Length of the salt at the end of the key material.
pub const SALT_LEN: usize = 4;
/// Smallest anti-replay window (RFC 4303 §3.4.3 recommends at least 64;
/// 32 is the minimum, this implementation keeps 64).
pub const MIN_WINDOW: usize = 64;
/// Largest anti-replay window.
pub const MAX_WINDOW: usize = 1 << 16;

/// An AEAD algorithm for ESP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    /// AES-GCM with a 128-bit key and a 16-byte ICV (RFC 4106).
    Aes128Gcm,
    /// AES-GCM with a 256-bit key and a 16-byte ICV (RFC 4106).
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 7634).
    ChaCha20Poly1305,
}

impl Alg {
    /// Parses an algorithm name: `aes128gcm16`/`aes-gcm-128`,
    /// `aes256gcm16`/`aes-gcm-256`, `chacha20poly1305`/
    /// `rfc7539esp(chacha20,poly1305)` (Linux's `rfc4106(gcm(aes))` needs
    /// the key length: [`Alg::parse_for_key`]).
    pub fn parse(s: &str) -> Result<Alg, String> {
        let l = s.trim().to_ascii_lowercase().replace(['-', '_'], "");
        match l.as_str() {
            "aes128gcm16" | "aes128gcm" | "aesgcm128" | "aesgcm16" => Ok(Alg::Aes128Gcm),
            "aes256gcm16" | "aes256gcm" | "aesgcm256" => Ok(Alg::Aes256Gcm),
            "chacha20poly1305" | "rfc7539esp(chacha20,poly1305)" | "rfc7634" => {
                Ok(Alg::ChaCha20Poly1305)
            }
            _ => Err(format!(
                "unknown algorithm '{s}' (aes128gcm16, aes256gcm16, chacha20poly1305)"
            )),
        }
    }

    /// Parses an algorithm name for key material of `keymat_len` bytes:
    /// as [`Alg::parse`], and Linux's `rfc4106(gcm(aes))`, which names
    /// AES-GCM of either key size, by the key length (20 or 36 bytes).
    pub fn parse_for_key(s: &str, keymat_len: usize) -> Result<Alg, String> {
        let l = s.trim().to_ascii_lowercase();
        if l == "rfc4106(gcm(aes))" {
            return Alg::for_keymat_len(keymat_len);
        }
        Alg::parse(s)
    }

    /// Bytes of key material: the key then the 4-byte salt.
    pub fn keymat_len(self) -> usize {
        match self {
            Alg::Aes128Gcm => 16 + SALT_LEN,
            Alg::Aes256Gcm | Alg::ChaCha20Poly1305 => 32 + SALT_LEN,
        }
    }

    /// The name `Alg::parse` reads back.
    pub fn name(self) -> &'static str {
        match self {
            Alg::Aes128Gcm => "aes128gcm16",
            Alg::Aes256Gcm => "aes256gcm16",
            Alg::ChaCha20Poly1305 => "chacha20poly1305",
        }
    }

    /// The algorithm a key of `len` bytes means when none is named:
    /// 20 bytes AES-GCM-128, 36 bytes AES-GCM-256.
    pub fn for_keymat_len(len: usize) -> Result<Alg, String> {
        match len {
            20 => Ok(Alg::Aes128Gcm),
            36 => Ok(Alg::Aes256Gcm),
            _ => Err(format!(
                "key must be 20 bytes (AES-GCM-128: 16-byte key, 4-byte salt) or 36 bytes \
                 (AES-GCM-256 or ChaCha20-Poly1305: 32-byte key, 4-byte salt), not {len}"
            )),
        }
    }
}

/// A keyed AEAD cipher (boxed: the expanded AES key schedules are large,
/// and an SA is made once, off the packet path).
pub enum Cipher {
    /// AES-GCM-128.
    Aes128(Box<Aes128Gcm>),
    /// AES-GCM-256.
    Aes256(Box<Aes256Gcm>),
    /// ChaCha20-Poly1305.
    ChaCha(Box<ChaCha20Poly1305>),
}

impl Cipher {
    /// Keys `alg` with `key` (without the salt).
    pub fn new(alg: Alg, key: &[u8]) -> Result<Cipher, String> {
        let bad = |_| String::from("bad key length");
        Ok(match alg {
            Alg::Aes128Gcm => {
                Cipher::Aes128(Box::new(Aes128Gcm::new_from_slice(key).map_err(bad)?))
            }
            Alg::Aes256Gcm => {
                Cipher::Aes256(Box::new(Aes256Gcm::new_from_slice(key).map_err(bad)?))
            }
            Alg::ChaCha20Poly1305 => Cipher::ChaCha(Box::new(
                ChaCha20Poly1305::new_from_slice(key).map_err(bad)?,
            )),
        })
    }

    /// Encrypts `buf` in place and returns the tag.
    pub fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> Option<[u8; ICV_LEN]> {
        let n = (*nonce).into();
        let tag = match self {
            Cipher::Aes128(c) => c.encrypt_inout_detached(&n, aad, buf.into()).ok()?,
            Cipher::Aes256(c) => c.encrypt_inout_detached(&n, aad, buf.into()).ok()?,
            Cipher::ChaCha(c) => c.encrypt_inout_detached(&n, aad, buf.into()).ok()?,
        };
        let mut out = [0u8; ICV_LEN];
        out.copy_from_slice(tag.as_slice());
        Some(out)
    }

    /// Checks `tag` and decrypts `buf` in place; false (and `buf`
    /// unchanged) when the integrity check fails.
    pub fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8; ICV_LEN]) -> bool {
        let n = (*nonce).into();
        let t = (*tag).into();
        match self {
            Cipher::Aes128(c) => c.decrypt_inout_detached(&n, aad, buf.into(), &t).is_ok(),
            Cipher::Aes256(c) => c.decrypt_inout_detached(&n, aad, buf.into(), &t).is_ok(),
            Cipher::ChaCha(c) => c.decrypt_inout_detached(&n, aad, buf.into(), &t).is_ok(),
        }
    }
}

/// Hard lifetimes of an SA (0 or `None`: no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lifetime {
    /// Packets the SA may protect or accept.
    pub packets: u64,
    /// Bytes of inner packets the SA may protect or accept.
    pub bytes: u64,
    /// Time from the SA's installation (or, for SAs in the configuration,
    /// its first packet).
    pub time: Option<Timestamp>,
}

/// Per-SA counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaCounters {
    /// Packets protected (outbound) or accepted (inbound).
    pub packets: u64,
    /// Bytes of inner packets protected or accepted.
    pub bytes: u64,
    /// Inbound packets dropped as replays or too old for the window.
    pub replay_drops: u64,
    /// Inbound packets whose integrity check failed.
    pub auth_failures: u64,
}

/// The sliding anti-replay window of RFC 4303 §3.4.3 over 64-bit
/// sequence numbers: `top` is the highest sequence number accepted, bit
/// `s % size` records whether `s` (within `size` below `top`) was seen.
#[derive(Clone, Debug)]
pub struct ReplayWindow {
    bits: Vec<u64>,
    size: u64,
    top: u64,
}

impl ReplayWindow {
    /// A window of `size` sequence numbers (rounded up to a multiple of
    /// 64, at least [`MIN_WINDOW`], at most [`MAX_WINDOW`]).
    pub fn new(size: usize) -> ReplayWindow {
        let size = size.clamp(MIN_WINDOW, MAX_WINDOW).div_ceil(64) * 64;
        ReplayWindow {
            bits: vec![0; size / 64],
            size: size as u64,
            top: 0,
        }
    }

    /// The window size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The highest sequence number accepted so far (0: none).
    pub fn top(&self) -> u64 {
        self.top
    }

    fn bit(&self, s: u64) -> (usize, u64) {
        let i = s % self.size;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Whether `seq` may be accepted: new, and not below the window.
    /// Sequence number 0 is never sent (RFC 4303 §3.3.3) and is refused.
    pub fn check(&self, seq: u64) -> bool {
        if seq == 0 {
            return false;
        }
        if seq > self.top {
            return true;
        }
        if self.top - seq >= self.size {
            return false;
        }
        let (w, m) = self.bit(seq);
        self.bits.get(w).is_some_and(|b| b & m == 0)
    }

    /// Records `seq` as accepted (call only after the integrity check
    /// passed and [`check`](ReplayWindow::check) said yes).
    pub fn update(&mut self, seq: u64) {
        if seq > self.top {
            let d = seq - self.top;
            if d >= self.size {
                self.bits.iter_mut().for_each(|b| *b = 0);
            } else {
                for s in self.top + 1..seq {
                    let (w, m) = self.bit(s);
                    if let Some(b) = self.bits.get_mut(w) {
                        *b &= !m;
                    }
                }
            }
            self.top = seq;
        }
        let (w, m) = self.bit(seq);
        if let Some(b) = self.bits.get_mut(w) {
            *b |= m;
        }
    }

    /// A window of `size` with the same top, that refuses what this one
    /// refuses (sequence numbers this one no longer covers count as seen).
    pub fn resized(&self, size: usize) -> ReplayWindow {
        let mut w = ReplayWindow::new(size);
        w.top = self.top;
        let low = self.top.saturating_sub(w.size - 1).max(1);
        for s in low..=self.top {
            if !self.check(s) {
                let (i, m) = w.bit(s);
                if let Some(b) = w.bits.get_mut(i) {
                    *b |= m;
                }
            }
        }
        w
    }

    /// The 64-bit sequence number a packet carrying `low` most likely has,
    /// given the window (RFC 4303 Appendix A2.2); `None` when it would lie
    /// below sequence number 0.
    pub fn infer_esn(&self, low: u32) -> Option<u64> {
        let th = (self.top >> 32) as u32;
        let tl = self.top as u32;
        let w = self.size as u32;
        let bottom = tl.wrapping_sub(w).wrapping_add(1);
        let high = if tl >= w - 1 {
            // The window lies within one 2^32 subspace.
            if low >= bottom {
                th
            } else {
                th.checked_add(1)?
            }
        } else if low >= bottom {
            // The window spans two subspaces; `low` is in the lower one.
            th.checked_sub(1)?
        } else {
            th
        };
        Some((u64::from(high) << 32) | u64::from(low))
    }
}

/// What configures an SA: `SPI KEY [ALG]` plus the element-wide
/// settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SaSpec {
    /// Security parameters index (not 0).
    pub spi: u32,
    /// Algorithm.
    pub alg: Alg,
    /// Key material: key then salt.
    pub keymat: Vec<u8>,
}

impl SaSpec {
    /// Parses `SPI KEY [ALG]`: SPI in decimal or `0x` hex, KEY in hex
    /// (key then 4-byte salt), ALG as [`Alg::parse`] (by default from the
    /// key length).
    pub fn parse(s: &str) -> Result<SaSpec, String> {
        let mut words = s.split_whitespace();
        let spi = parse_spi(words.next().ok_or("missing SPI")?)?;
        let keymat = parse_key(words.next().ok_or("missing KEY")?)?;
        let alg = match words.next() {
            Some(a) => Alg::parse_for_key(a, keymat.len())?,
            None => Alg::for_keymat_len(keymat.len())?,
        };
        if words.next().is_some() {
            return Err("expected 'SPI KEY [ALG]'".into());
        }
        SaSpec::new(spi, keymat, alg)
    }

    /// Checks an SPI, key and algorithm fit together.
    pub fn new(spi: u32, keymat: Vec<u8>, alg: Alg) -> Result<SaSpec, String> {
        if spi == 0 {
            return Err("SPI 0 is reserved".into());
        }
        if keymat.len() != alg.keymat_len() {
            return Err(format!(
                "{} needs {} bytes of key (key then 4-byte salt), not {}",
                alg.name(),
                alg.keymat_len(),
                keymat.len()
            ));
        }
        Ok(SaSpec { spi, alg, keymat })
    }
}

/// Parses an SPI: decimal or `0x` hex, not 0.
pub fn parse_spi(s: &str) -> Result<u32, String> {
    let s = s.trim();
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let v = parse_u64_radix(h, 16)?;
        u32::try_from(v).map_err(|_| format!("SPI '{s}' too large"))?
    } else {
        parse_u32(s)?
    };
    if v == 0 {
        return Err("SPI 0 is reserved".into());
    }
    Ok(v)
}

/// Parses key material in hex (an optional `0x` prefix allowed, as
/// `ip xfrm` writes it).
pub fn parse_key(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if h.is_empty() {
        return Err("empty key".into());
    }
    parse_hex(h)
}

/// 64 random bits from the kernel (made once per SA, off the packet path).
fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    let mut got = 0;
    while got < b.len() {
        // SAFETY: getrandom writes at most the given length into the buffer.
        let n = unsafe { libc::getrandom(b[got..].as_mut_ptr().cast(), b.len() - got, 0) };
        if n <= 0 {
            // No entropy source: fall back on the clock, still distinct
            // across restarts.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            return t ^ u64::from(std::process::id()).rotate_left(32);
        }
        got += n as usize;
    }
    u64::from_ne_bytes(b)
}

/// Why a packet was not protected or accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EspError {
    /// Too short or inconsistent to be ESP for this SA.
    Malformed,
    /// A replay, or below the window.
    Replay,
    /// The integrity check failed.
    Auth,
    /// The padding or next header field is wrong.
    BadTrailer,
    /// The SA's lifetime is over, or its sequence numbers are used up.
    Expired,
}

/// A security association.
pub struct Sa {
    /// Security parameters index.
    pub spi: u32,
    /// Algorithm.
    pub alg: Alg,
    cipher: Cipher,
    salt: [u8; SALT_LEN],
    /// Extended (64-bit) sequence numbers.
    pub esn: bool,
    /// Hard lifetime.
    pub lifetime: Lifetime,
    /// Counters.
    pub counters: SaCounters,
    /// When the SA was installed (or first used).
    pub created: Option<Timestamp>,
    /// For an inbound SA being replaced: when it stops being accepted.
    pub retire_at: Option<Timestamp>,
    /// Outbound: the last sequence number sent (0: none yet).
    pub seq: u64,
    /// Outbound: XORed into the sequence number to make the IV.
    iv_mask: u64,
    /// Inbound: the anti-replay window.
    pub replay: ReplayWindow,
    /// The key material, to recognise the same SA across a hot swap.
    keymat: Vec<u8>,
}

impl Sa {
    /// An SA from its spec.
    pub fn new(spec: &SaSpec, esn: bool, window: usize, lifetime: Lifetime) -> Result<Sa, String> {
        let keylen = spec.alg.keymat_len() - SALT_LEN;
        let key = spec.keymat.get(..keylen).ok_or("key too short")?;
        let mut salt = [0u8; SALT_LEN];
        salt.copy_from_slice(spec.keymat.get(keylen..).ok_or("key too short")?);
        Ok(Sa {
            spi: spec.spi,
            alg: spec.alg,
            cipher: Cipher::new(spec.alg, key)?,
            salt,
            esn,
            lifetime,
            counters: SaCounters::default(),
            created: None,
            retire_at: None,
            seq: 0,
            iv_mask: random_u64(),
            replay: ReplayWindow::new(window),
            keymat: spec.keymat.clone(),
        })
    }

    /// Hot swap: when `old` (the SA with this SPI in the old router) has
    /// the same key, algorithm and sequence number size, this SA continues
    /// it: `old`'s sequence number, IV mask, window, counters and times
    /// are taken (this SA's lifetime and window size apply, and the higher
    /// of the two sequence numbers and window tops). Starting again from
    /// sequence number 1 under the same key would make the peer drop
    /// every packet as a replay until it passes the old number, and an
    /// empty inbound window would accept every old packet again. Returns
    /// whether anything was taken; another key means a new SA.
    pub fn continue_from(&mut self, old: &mut Sa) -> bool {
        if old.spi != self.spi
            || old.alg != self.alg
            || old.esn != self.esn
            || old.keymat != self.keymat
        {
            return false;
        }
        let (lifetime, window, seq, top) = (
            self.lifetime,
            self.replay.size(),
            self.seq,
            self.replay.top(),
        );
        std::mem::swap(self, old);
        self.lifetime = lifetime;
        self.seq = self.seq.max(seq);
        if self.replay.size() != window {
            self.replay = self.replay.resized(window as usize);
        }
        if top > self.replay.top() {
            self.replay.update(top);
        }
        true
    }

    /// Whether the lifetime (or the overlap of a replaced SA) is over at
    /// `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        let l = &self.lifetime;
        (l.packets != 0 && self.counters.packets >= l.packets)
            || (l.bytes != 0 && self.counters.bytes >= l.bytes)
            || matches!((l.time, self.created), (Some(t), Some(c)) if now.nanos() - c.nanos() >= t.nanos())
            || self.retire_at.is_some_and(|t| now.nanos() >= t.nanos())
    }

    fn nonce(&self, iv: &[u8]) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..SALT_LEN].copy_from_slice(&self.salt);
        n[SALT_LEN..].copy_from_slice(iv);
        n
    }

    fn aad(&self, spi: u32, seq: u64) -> ([u8; 12], usize) {
        let mut a = [0u8; 12];
        a[..4].copy_from_slice(&spi.to_be_bytes());
        if self.esn {
            a[4..].copy_from_slice(&seq.to_be_bytes());
            (a, 12)
        } else {
            a[4..8].copy_from_slice(&(seq as u32).to_be_bytes());
            (a, 8)
        }
    }

    /// Bytes of padding after `payload_len` bytes so that the payload,
    /// padding and 2-byte trailer end on a 4-byte boundary (RFC 4303
    /// §2.4).
    pub fn pad_len(payload_len: usize) -> usize {
        (4 - (payload_len + 2) % 4) % 4
    }

    /// Takes the next outbound sequence number, or `None` when they are
    /// used up (2^32 - 1 without ESN, RFC 4303 §3.3.3: the SA must be
    /// replaced).
    pub fn next_seq(&mut self) -> Option<u64> {
        let limit = if self.esn {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        if self.seq >= limit {
            return None;
        }
        self.seq += 1;
        Some(self.seq)
    }

    /// Protects an ESP payload in place. `esp` is the whole ESP packet:
    /// 8-byte header, 8-byte IV, then the plaintext (inner packet,
    /// padding, pad length, next header, already written), then 16 bytes
    /// for the ICV. Writes the header, IV and ICV and encrypts.
    pub fn seal(&mut self, esp: &mut [u8], seq: u64) -> Result<(), EspError> {
        let n = esp.len();
        if n < 8 + IV_LEN + 2 + ICV_LEN {
            return Err(EspError::Malformed);
        }
        esp[..4].copy_from_slice(&self.spi.to_be_bytes());
        esp[4..8].copy_from_slice(&(seq as u32).to_be_bytes());
        let iv = (seq ^ self.iv_mask).to_be_bytes();
        esp[8..16].copy_from_slice(&iv);
        let nonce = self.nonce(&iv);
        let (aad, alen) = self.aad(self.spi, seq);
        let (body, icv) = esp[16..].split_at_mut(n - 16 - ICV_LEN);
        let tag = self
            .cipher
            .seal(&nonce, &aad[..alen], body)
            .ok_or(EspError::Malformed)?;
        icv.copy_from_slice(&tag);
        Ok(())
    }

    /// Checks the sequence number of the ESP packet `esp` (header first)
    /// against the window and returns the inferred 64-bit number.
    pub fn precheck(&self, seq_low: u32) -> Result<u64, EspError> {
        let seq = if self.esn {
            self.replay.infer_esn(seq_low).ok_or(EspError::Replay)?
        } else {
            u64::from(seq_low)
        };
        if self.replay.check(seq) {
            Ok(seq)
        } else {
            Err(EspError::Replay)
        }
    }

    /// Verifies and decrypts the ESP packet `esp` (header first) in place
    /// and updates the window. Returns the sequence number, the offset of
    /// the decrypted inner packet in `esp`, its length (without padding
    /// and trailer) and the next header.
    pub fn open(&mut self, esp: &mut [u8]) -> Result<(u64, usize, usize, u8), EspError> {
        let n = esp.len();
        if n < 8 + IV_LEN + 2 + ICV_LEN {
            return Err(EspError::Malformed);
        }
        let seq_low = u32::from_be_bytes([esp[4], esp[5], esp[6], esp[7]]);
        let seq = self.precheck(seq_low)?;
        let nonce = self.nonce(&esp[8..16]);
        let (aad, alen) = self.aad(self.spi, seq);
        let (body, icv) = esp[16..].split_at_mut(n - 16 - ICV_LEN);
        let mut tag = [0u8; ICV_LEN];
        tag.copy_from_slice(icv);
        if !self.cipher.open(&nonce, &aad[..alen], body, &tag) {
            return Err(EspError::Auth);
        }
        // Authentic: the window moves, whatever the trailer says.
        self.replay.update(seq);
        let bl = body.len();
        let next = body[bl - 1];
        let pad = body[bl - 2] as usize;
        if pad + 2 > bl {
            return Err(EspError::BadTrailer);
        }
        let inner = bl - 2 - pad;
        // Default padding is 1, 2, 3, ... (RFC 4303 §2.4).
        if body[inner..inner + pad]
            .iter()
            .enumerate()
            .any(|(i, &b)| b as usize != i + 1)
        {
            return Err(EspError::BadTrailer);
        }
        Ok((seq, 16, inner, next))
    }

    /// One line describing the SA and its counters (never the key).
    pub fn describe(&self, now: Timestamp) -> String {
        let mut s = String::new();
        let c = &self.counters;
        let _ = write!(
            s,
            "spi 0x{:08x} alg {} esn {} seq {} window {} top {} packets {} bytes {} \
             replay_drops {} auth_failures {}",
            self.spi,
            self.alg.name(),
            self.esn,
            self.seq,
            self.replay.size(),
            self.replay.top(),
            c.packets,
            c.bytes,
            c.replay_drops,
            c.auth_failures
        );
        if self.expired(now) {
            s.push_str(" expired");
        } else if self.retire_at.is_some() {
            s.push_str(" retiring");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_basics() {
        let mut w = ReplayWindow::new(64);
        assert!(!w.check(0));
        assert!(w.check(1));
        w.update(1);
        assert!(!w.check(1));
        w.update(100);
        assert!(!w.check(36));
        assert!(w.check(37));
        w.update(37);
        assert!(!w.check(37));
        assert!(w.check(99));
        w.update(1000);
        assert!(w.check(999));
        assert!(!w.check(936));
    }

    #[test]
    fn resized_window_refuses_what_the_old_one_refused() {
        let mut w = ReplayWindow::new(128);
        w.update(290);
        w.update(300);
        let small = w.resized(64);
        assert_eq!(small.top(), 300);
        assert!(!small.check(290) && !small.check(300) && !small.check(236));
        assert!(small.check(291) && small.check(237));
        let big = w.resized(256);
        // 45..=172 lie below the old window: counted as seen.
        assert!(!big.check(45) && !big.check(172) && !big.check(290));
        assert!(big.check(173) && big.check(299));
        assert!(!big.check(44), "below the new window");
    }

    #[test]
    fn time_lifetime_and_retirement() {
        let spec = SaSpec::parse("0x10 000102030405060708090a0b0c0d0e0f10111213").unwrap();
        let life = Lifetime {
            time: Some(Timestamp::from_secs_f64(10.0)),
            ..Lifetime::default()
        };
        let mut sa = Sa::new(&spec, false, 64, life).unwrap();
        let t0 = Timestamp::from_secs_f64(1000.0);
        assert!(!sa.expired(t0), "not started yet");
        sa.created = Some(t0);
        assert!(!sa.expired(Timestamp::from_secs_f64(1009.9)));
        assert!(sa.expired(Timestamp::from_secs_f64(1010.0)));
        let mut sa = Sa::new(&spec, false, 64, Lifetime::default()).unwrap();
        sa.retire_at = Some(Timestamp::from_secs_f64(5.0));
        assert!(!sa.expired(Timestamp::from_secs_f64(4.0)));
        assert!(sa.expired(Timestamp::from_secs_f64(5.0)));
    }

    #[test]
    fn iv_differs_between_sas_with_the_same_key() {
        let spec = SaSpec::parse("0x10 000102030405060708090a0b0c0d0e0f10111213").unwrap();
        let mut bufs = Vec::new();
        for _ in 0..2 {
            let mut sa = Sa::new(&spec, false, 64, Lifetime::default()).unwrap();
            let mut esp = vec![0u8; 8 + IV_LEN + 4 + ICV_LEN];
            let seq = sa.next_seq().unwrap();
            sa.seal(&mut esp, seq).unwrap();
            bufs.push(esp[8..16].to_vec());
        }
        assert_ne!(bufs[0], bufs[1], "IVs repeat across SA set-ups");
    }

    #[test]
    fn esn_inference() {
        let mut w = ReplayWindow::new(64);
        w.update(u64::from(u32::MAX) - 5);
        // Just above the top, wrapped into the next subspace.
        assert_eq!(w.infer_esn(3), Some((1 << 32) | 3));
        assert_eq!(w.infer_esn(u32::MAX - 10), Some(u64::from(u32::MAX) - 10));
        w.update((1 << 32) | 10);
        // Window spans two subspaces: a late packet from the lower one.
        assert_eq!(w.infer_esn(u32::MAX - 2), Some(u64::from(u32::MAX) - 2));
        assert_eq!(w.infer_esn(20), Some((1 << 32) | 20));
    }
}

/// The settings every SA of an element shares, from its keywords `ESN`,
/// `WINDOW`, `LIFETIME_PACKETS`, `LIFETIME_BYTES` and `LIFETIME`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SaOptions {
    /// Extended sequence numbers.
    pub esn: bool,
    /// Anti-replay window size.
    pub window: usize,
    /// Hard lifetime.
    pub lifetime: Lifetime,
}

impl SaOptions {
    /// Reads the keywords (all optional).
    pub fn read(args: &mut rclick_core::conf::Args) -> SaOptions {
        let esn = args.read_or_with("ESN", parse_bool, false);
        let window = args.read_or_with(
            "WINDOW",
            |s| {
                let w = rclick_core::conf::parse_usize(s)?;
                if (MIN_WINDOW..=MAX_WINDOW).contains(&w) {
                    Ok(w)
                } else {
                    Err(format!("window must be {MIN_WINDOW} to {MAX_WINDOW}"))
                }
            },
            MIN_WINDOW,
        );
        let packets = args.read_or_with("LIFETIME_PACKETS", rclick_core::conf::parse_u64, 0);
        let bytes = args.read_or_with("LIFETIME_BYTES", rclick_core::conf::parse_u64, 0);
        let time = args
            .read_with("LIFETIME", rclick_core::conf::parse_seconds)
            .filter(|d| !d.is_zero())
            .map(Timestamp::from_duration);
        SaOptions {
            esn,
            window,
            lifetime: Lifetime {
                packets,
                bytes,
                time,
            },
        }
    }

    /// An SA from `spec` with these settings.
    pub fn sa(&self, spec: &SaSpec) -> Result<Sa, String> {
        Sa::new(spec, self.esn, self.window, self.lifetime)
    }
}
