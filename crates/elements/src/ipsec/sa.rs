//! Security associations for ESP (RFC 4301 §4, RFC 4303): the algorithm
//! and keys, the sequence number (32-bit or extended, RFC 4303 §2.2.1),
//! the anti-replay window (RFC 4303 §3.4.3 and Appendix A), lifetimes in
//! packets, bytes and time, and per-SA counters; and the ESP tunnel-mode
//! transforms that use them ([`SaKeys::seal`] and [`InSa::open`]).
//!
//! This is not an element: `ESPTunnelEncap` holds the outbound SA
//! ([`OutSa`]) and `ESPTunnelDecap` the inbound database keyed by SPI
//! ([`InSa`]), each [`Published`] so that the copies of the element on
//! several threads (`-j N`) share them.
//!
//! ## Threads
//! An SA is shared, not copied, by the threads that use it: its keys
//! ([`SaKeys`], the expanded key schedule) are read-only; the outbound
//! sequence number is one atomic from which each thread takes a block per
//! batch (so numbers are unique within the SA and never reused, RFC 4303
//! §3.3.3, however the threads interleave; packets of two threads leave
//! slightly out of order, which the peer's window absorbs); the inbound
//! anti-replay window is lock-free ([`ReplayWindow`]); counters are
//! atomics added to once per batch (outbound) or per packet (inbound).
//! Nothing on the packet path locks.
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
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// Sequence numbers one slot of a [`ReplayWindow`] covers.
const BLOCK: u64 = 32;

/// The sliding anti-replay window of RFC 4303 §3.4.3 over 64-bit
/// sequence numbers, which several threads may check and update at once
/// without a lock.
///
/// `top` is the highest sequence number accepted. The bits are a ring of
/// slots, each covering a block of 32 sequence numbers (RFC 6479's layout,
/// without bit shifting); a slot is one `AtomicU64` whose high half names
/// the block it records (sequence number / 32, truncated to 32 bits) and
/// whose low half says which of that block's numbers were accepted.
/// Accepting `s` is one compare-and-swap on its block's slot: it sets
/// `s`'s bit when the slot records `s`'s block, claims the slot for it
/// (forgetting the older block, by then below the window) when the slot
/// records an older one, and refuses when the bit is already set or the
/// slot already records a newer block. A slot's block only grows, so a
/// sequence number is accepted at most once whatever the threads do;
/// `top` (an atomic maximum) only decides what is too old. One slot more
/// than `size / 32` gives every number within `size` of `top` a slot of
/// its own. (Block numbers compare modulo 2^32: exact while the sequence
/// numbers of one window lie within 2^36 of each other, so a window set up
/// at a given top, by the SEQ keyword or a hot swap, first makes each
/// slot record a block just below the window.)
pub struct ReplayWindow {
    slots: Box<[AtomicU64]>,
    size: u64,
    top: AtomicU64,
}

impl ReplayWindow {
    /// A window of `size` sequence numbers (rounded up to a multiple of
    /// 64, at least [`MIN_WINDOW`], at most [`MAX_WINDOW`]).
    pub fn new(size: usize) -> ReplayWindow {
        let size = size.clamp(MIN_WINDOW, MAX_WINDOW).div_ceil(64) * 64;
        let n = size / BLOCK as usize + 1;
        ReplayWindow {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            size: size as u64,
            top: AtomicU64::new(0),
        }
    }

    /// The window size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The highest sequence number accepted so far (0: none).
    pub fn top(&self) -> u64 {
        self.top.load(Ordering::Acquire)
    }

    /// `seq`'s slot, its block's tag and its bit there.
    fn slot(&self, seq: u64) -> (&AtomicU64, u64, u64) {
        let block = seq / BLOCK;
        let i = (block % self.slots.len() as u64) as usize;
        (&self.slots[i], block & 0xffff_ffff, 1u64 << (seq % BLOCK))
    }

    /// How the block recorded in slot value `v` compares with `tag`:
    /// positive when newer, 0 the same, negative older.
    fn age(v: u64, tag: u64) -> i32 {
        ((v >> 32) as u32).wrapping_sub(tag as u32) as i32
    }

    /// Whether `seq` is 0 or lies below the window.
    fn too_old(&self, seq: u64) -> bool {
        let top = self.top();
        seq == 0 || (seq <= top && top - seq >= self.size)
    }

    /// Whether `seq` may be accepted: new, and not below the window.
    /// Sequence number 0 is never sent (RFC 4303 §3.3.3) and is refused.
    pub fn check(&self, seq: u64) -> bool {
        if self.too_old(seq) {
            return false;
        }
        let (slot, tag, bit) = self.slot(seq);
        let v = slot.load(Ordering::Acquire);
        match Self::age(v, tag) {
            a if a > 0 => false,
            0 => v & bit == 0,
            _ => true,
        }
    }

    /// Records `seq` as accepted, if it still may be (call after the
    /// integrity check passed): false when another thread accepted the
    /// same number first, or the window has moved past it.
    pub fn accept(&self, seq: u64) -> bool {
        if self.too_old(seq) {
            return false;
        }
        let (slot, tag, bit) = self.slot(seq);
        let mut v = slot.load(Ordering::Acquire);
        loop {
            let new = match Self::age(v, tag) {
                a if a > 0 => return false,
                0 if v & bit != 0 => return false,
                0 => v | bit,
                _ => (tag << 32) | bit,
            };
            match slot.compare_exchange_weak(v, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(x) => v = x,
            }
        }
        if seq > self.top.load(Ordering::Relaxed) {
            self.top.fetch_max(seq, Ordering::AcqRel);
        }
        true
    }

    /// Records `seq` as accepted (configuration: the SEQ keyword, a hot
    /// swap; not while other threads use the window).
    pub fn update(&self, seq: u64) {
        if seq > self.top() {
            self.retag(seq);
        }
        self.accept(seq);
    }

    /// Makes every slot record a block of the window below `top` (the one
    /// in its residue class), keeping those that already do and giving the
    /// others the block one turn of the ring older, with nothing seen.
    /// Block tags compare modulo 2^32, so a slot still recording block 0
    /// (a fresh window) or a block far below `top` could compare newer
    /// than the blocks around `top` and refuse them all. Configuration
    /// only, not while other threads use the window.
    fn retag(&self, top: u64) {
        let n = self.slots.len() as i128;
        let b = i128::from(top / BLOCK);
        for (i, slot) in self.slots.iter().enumerate() {
            // The block of slot i among the last n up to `top`'s.
            let bi = b - (b - i as i128).rem_euclid(n);
            let tag = |blk: i128| (blk as u64) & 0xffff_ffff;
            let v = slot.load(Ordering::Relaxed);
            if v >> 32 != tag(bi) {
                slot.store(tag(bi - n) << 32, Ordering::Relaxed);
            }
        }
    }

    /// A window of `size` with the same top, that refuses what this one
    /// refuses (sequence numbers this one no longer covers count as seen).
    pub fn resized(&self, size: usize) -> ReplayWindow {
        let w = ReplayWindow::new(size);
        let top = self.top();
        w.retag(top);
        w.top.store(top, Ordering::Relaxed);
        let low = top.saturating_sub(w.size - 1).max(1);
        for s in low..=top {
            if !self.check(s) {
                w.accept(s);
            }
        }
        w
    }

    /// The 64-bit sequence number a packet carrying `low` most likely has,
    /// given the window (RFC 4303 Appendix A2.2); `None` when it would lie
    /// below sequence number 0.
    pub fn infer_esn(&self, low: u32) -> Option<u64> {
        let top = self.top();
        let th = (top >> 32) as u32;
        let tl = top as u32;
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

/// "No time yet" in the atomic time fields.
const NO_TIME: i64 = i64::MIN;

fn time_of(t: &AtomicI64) -> Option<Timestamp> {
    match t.load(Ordering::Acquire) {
        NO_TIME => None,
        n => Some(Timestamp(n)),
    }
}

fn set_time(t: &AtomicI64, v: Option<Timestamp>) {
    t.store(v.map_or(NO_TIME, |v| v.nanos()), Ordering::Release);
}

/// Sets `t` to `now` if it has no time yet (the first packet's thread
/// wins).
fn start_time(t: &AtomicI64, now: Timestamp) {
    if t.load(Ordering::Relaxed) == NO_TIME {
        let _ = t.compare_exchange(NO_TIME, now.nanos(), Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// Keeps what it holds on a cache line of its own: the atomics every
/// thread writes apart from what they only read.
#[repr(align(64))]
#[derive(Default)]
pub struct Padded<T>(pub T);

/// What an SA's packets are protected with: SPI, algorithm, keyed cipher,
/// salt and IV mask. Read-only once made, so the threads that use an SA
/// share one copy (the expanded key schedule) without locking.
pub struct SaKeys {
    /// Security parameters index.
    pub spi: u32,
    /// Algorithm.
    pub alg: Alg,
    /// Extended (64-bit) sequence numbers.
    pub esn: bool,
    cipher: Cipher,
    salt: [u8; SALT_LEN],
    /// Outbound: XORed into the sequence number to make the IV.
    iv_mask: u64,
    /// The key material, to recognise the same SA across a hot swap.
    keymat: Vec<u8>,
}

impl SaKeys {
    /// Keys an SA from its spec.
    pub fn new(spec: &SaSpec, esn: bool) -> Result<SaKeys, String> {
        let keylen = spec.alg.keymat_len() - SALT_LEN;
        let key = spec.keymat.get(..keylen).ok_or("key too short")?;
        let mut salt = [0u8; SALT_LEN];
        salt.copy_from_slice(spec.keymat.get(keylen..).ok_or("key too short")?);
        Ok(SaKeys {
            spi: spec.spi,
            alg: spec.alg,
            esn,
            cipher: Cipher::new(spec.alg, key)?,
            salt,
            iv_mask: random_u64(),
            keymat: spec.keymat.clone(),
        })
    }

    /// Whether `other` is the same SA: SPI, algorithm, ESN setting and
    /// key.
    fn same(&self, other: &SaKeys) -> bool {
        self.spi == other.spi
            && self.alg == other.alg
            && self.esn == other.esn
            && self.keymat == other.keymat
    }

    fn nonce(&self, iv: &[u8]) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[..SALT_LEN].copy_from_slice(&self.salt);
        n[SALT_LEN..].copy_from_slice(iv);
        n
    }

    fn aad(&self, seq: u64) -> ([u8; 12], usize) {
        let mut a = [0u8; 12];
        a[..4].copy_from_slice(&self.spi.to_be_bytes());
        if self.esn {
            a[4..].copy_from_slice(&seq.to_be_bytes());
            (a, 12)
        } else {
            a[4..8].copy_from_slice(&(seq as u32).to_be_bytes());
            (a, 8)
        }
    }

    /// Protects an ESP payload in place. `esp` is the whole ESP packet:
    /// 8-byte header, 8-byte IV, then the plaintext (inner packet,
    /// padding, pad length, next header, already written), then 16 bytes
    /// for the ICV. Writes the header, IV and ICV and encrypts.
    pub fn seal(&self, esp: &mut [u8], seq: u64) -> Result<(), EspError> {
        let n = esp.len();
        if n < 8 + IV_LEN + 2 + ICV_LEN {
            return Err(EspError::Malformed);
        }
        esp[..4].copy_from_slice(&self.spi.to_be_bytes());
        esp[4..8].copy_from_slice(&(seq as u32).to_be_bytes());
        let iv = (seq ^ self.iv_mask).to_be_bytes();
        esp[8..16].copy_from_slice(&iv);
        let nonce = self.nonce(&iv);
        let (aad, alen) = self.aad(seq);
        let (body, icv) = esp[16..].split_at_mut(n - 16 - ICV_LEN);
        let tag = self
            .cipher
            .seal(&nonce, &aad[..alen], body)
            .ok_or(EspError::Malformed)?;
        icv.copy_from_slice(&tag);
        Ok(())
    }

    /// Checks the ICV of the ESP packet `esp` (header first, at least the
    /// minimum length) with sequence number `seq` and decrypts it in place.
    fn unseal(&self, esp: &mut [u8], seq: u64) -> Result<(), EspError> {
        let n = esp.len();
        let nonce = self.nonce(&esp[8..16]);
        let (aad, alen) = self.aad(seq);
        let (body, icv) = esp[16..].split_at_mut(n - 16 - ICV_LEN);
        let mut tag = [0u8; ICV_LEN];
        tag.copy_from_slice(icv);
        if self.cipher.open(&nonce, &aad[..alen], body, &tag) {
            Ok(())
        } else {
            Err(EspError::Auth)
        }
    }
}

/// Bytes of padding after `payload_len` bytes so that the payload,
/// padding and 2-byte trailer end on a 4-byte boundary (RFC 4303 §2.4).
pub fn pad_len(payload_len: usize) -> usize {
    (4 - (payload_len + 2) % 4) % 4
}

/// The state of an outbound SA that its threads update.
#[derive(Default)]
struct OutHot {
    /// The last sequence number handed out (0: none yet).
    seq: AtomicU64,
    packets: AtomicU64,
    bytes: AtomicU64,
}

/// An outbound SA, shared by every thread that sends on it (one
/// `Arc<OutSa>`): the keys read-only, the sequence number an atomic from
/// which each thread takes a block of numbers per batch (one
/// compare-and-swap per batch, so the numbers are unique and never reused
/// however the threads interleave), the counters atomics added to once per
/// batch.
pub struct OutSa {
    /// Keys.
    pub keys: Arc<SaKeys>,
    /// Hard lifetime.
    pub lifetime: Lifetime,
    /// The window size the `sa` handler reports (an outbound SA has none;
    /// the element's WINDOW).
    window: u64,
    /// The sequence number before this SA's first packet (SEQ).
    seq_base: u64,
    /// The last sequence number this SA may use: 2^32 - 1 without ESN
    /// (RFC 4303 §3.3.3), or less for a lifetime in packets.
    limit: u64,
    /// Added to the sequence number (less one) to make the outer
    /// header's identification, so it goes on from the previous SA's.
    ident_base: u64,
    created: AtomicI64,
    hot: Padded<OutHot>,
}

impl OutSa {
    /// An outbound SA whose last used sequence number is `seq`.
    pub fn new(spec: &SaSpec, opts: &SaOptions, seq: u64) -> Result<OutSa, String> {
        let mut sa = OutSa {
            keys: Arc::new(SaKeys::new(spec, opts.esn)?),
            lifetime: opts.lifetime,
            window: ReplayWindow::new(opts.window).size(),
            seq_base: seq,
            limit: 0,
            ident_base: 0u64.wrapping_sub(seq),
            created: AtomicI64::new(NO_TIME),
            hot: Padded::default(),
        };
        sa.hot.0.seq.store(seq, Ordering::Relaxed);
        sa.set_limit();
        Ok(sa)
    }

    fn set_limit(&mut self) {
        let max = if self.keys.esn {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        self.limit = match self.lifetime.packets {
            0 => max,
            n => max.min(self.seq_base.saturating_add(n)),
        };
    }

    /// The last sequence number used.
    pub fn seq(&self) -> u64 {
        self.hot.0.seq.load(Ordering::Relaxed)
    }

    /// Packets protected.
    pub fn packets(&self) -> u64 {
        self.hot.0.packets.load(Ordering::Relaxed)
    }

    /// Bytes of inner packets protected.
    pub fn bytes(&self) -> u64 {
        self.hot.0.bytes.load(Ordering::Relaxed)
    }

    /// When the SA was installed or first used.
    pub fn created(&self) -> Option<Timestamp> {
        time_of(&self.created)
    }

    /// Sets the installation time.
    pub fn set_created(&self, t: Option<Timestamp>) {
        set_time(&self.created, t);
    }

    /// Starts the lifetime clock at `now` if it has not started.
    pub fn start(&self, now: Timestamp) {
        start_time(&self.created, now);
    }

    /// Reserves up to `want` consecutive sequence numbers: the first and
    /// how many (fewer when the SA's numbers or packet lifetime run out),
    /// or `None` when none is left (the SA must be replaced).
    pub fn reserve(&self, want: u64) -> Option<(u64, u64)> {
        let seq = &self.hot.0.seq;
        let mut cur = seq.load(Ordering::Relaxed);
        loop {
            if cur >= self.limit || want == 0 {
                return None;
            }
            let n = want.min(self.limit - cur);
            match seq.compare_exchange_weak(cur, cur + n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((cur + 1, n)),
                Err(x) => cur = x,
            }
        }
    }

    /// The outer header's identification for sequence number `seq`.
    pub fn ident(&self, seq: u64) -> u16 {
        seq.wrapping_sub(1).wrapping_add(self.ident_base) as u16
    }

    /// Adds packets and bytes protected (a thread's batch).
    pub fn count(&self, packets: u64, bytes: u64) {
        if packets != 0 {
            self.hot.0.packets.fetch_add(packets, Ordering::Relaxed);
            self.hot.0.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// Whether the lifetime in bytes or time is over at `now`, counting
    /// `pending` bytes this thread protected but has not added yet (the
    /// lifetime in packets is the limit of [`reserve`](OutSa::reserve)).
    pub fn expired_at(&self, now: Timestamp, pending: u64) -> bool {
        let l = &self.lifetime;
        (l.bytes != 0 && self.bytes() + pending >= l.bytes)
            || l.time.is_some_and(|t| {
                self.created()
                    .is_some_and(|c| now.nanos() - c.nanos() >= t.nanos())
            })
    }

    /// Whether the SA can protect nothing more at `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.seq() >= self.limit || self.expired_at(now, 0)
    }

    /// The SA that follows this one in a rekey: `spec` with the same
    /// settings, its outer identification going on from this one's.
    pub fn successor(&self, spec: &SaSpec, opts: &SaOptions) -> Result<OutSa, String> {
        let mut sa = OutSa::new(spec, opts, 0)?;
        sa.ident_base = self.seq().wrapping_add(self.ident_base);
        Ok(sa)
    }

    /// Hot swap: when `old` (the SA of the old router's element) has the
    /// same SPI, key, algorithm and ESN setting, this SA continues it:
    /// its keys and IV mask, the higher of the two sequence numbers, its
    /// counters, clock and outer identification (this SA's lifetime
    /// applies). Starting again from sequence number 1 under the same key
    /// would make the peer drop every packet as a replay until it passes
    /// the old number. Returns whether anything was taken; another key
    /// means a new SA.
    pub fn continue_from(&mut self, old: &OutSa) -> bool {
        if !self.keys.same(&old.keys) {
            return false;
        }
        self.keys = Arc::clone(&old.keys);
        self.hot
            .0
            .seq
            .store(self.seq().max(old.seq()), Ordering::Relaxed);
        self.hot.0.packets.store(old.packets(), Ordering::Relaxed);
        self.hot.0.bytes.store(old.bytes(), Ordering::Relaxed);
        self.set_created(old.created());
        self.seq_base = old.seq_base;
        self.ident_base = old.ident_base;
        self.set_limit();
        true
    }

    /// One line describing the SA and its counters (never the key).
    pub fn describe(&self, now: Timestamp) -> String {
        let mut s = describe(
            &self.keys,
            self.seq(),
            self.window,
            0,
            [self.packets(), self.bytes(), 0, 0],
        );
        if self.expired(now) {
            s.push_str(" expired");
        }
        s
    }
}

fn describe(k: &SaKeys, seq: u64, window: u64, top: u64, c: [u64; 4]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "spi 0x{:08x} alg {} esn {} seq {} window {} top {} packets {} bytes {} \
         replay_drops {} auth_failures {}",
        k.spi,
        k.alg.name(),
        k.esn,
        seq,
        window,
        top,
        c[0],
        c[1],
        c[2],
        c[3]
    );
    s
}

/// The counters of an inbound SA, which its threads add to.
#[derive(Default)]
struct InHot {
    packets: AtomicU64,
    bytes: AtomicU64,
    replay_drops: AtomicU64,
    auth_failures: AtomicU64,
}

/// An inbound SA, shared by every thread that receives on it: the keys
/// read-only, the anti-replay window lock-free ([`ReplayWindow`]), the
/// counters atomic.
pub struct InSa {
    /// Keys.
    pub keys: Arc<SaKeys>,
    /// Hard lifetime.
    pub lifetime: Lifetime,
    /// The anti-replay window.
    pub window: ReplayWindow,
    created: AtomicI64,
    retire_at: AtomicI64,
    hot: Padded<InHot>,
}

impl InSa {
    /// An inbound SA.
    pub fn new(spec: &SaSpec, opts: &SaOptions) -> Result<InSa, String> {
        Ok(InSa {
            keys: Arc::new(SaKeys::new(spec, opts.esn)?),
            lifetime: opts.lifetime,
            window: ReplayWindow::new(opts.window),
            created: AtomicI64::new(NO_TIME),
            retire_at: AtomicI64::new(NO_TIME),
            hot: Padded::default(),
        })
    }

    /// The SPI.
    pub fn spi(&self) -> u32 {
        self.keys.spi
    }

    /// When the SA was installed (or received its first authentic packet).
    pub fn created(&self) -> Option<Timestamp> {
        time_of(&self.created)
    }

    /// Sets the installation time.
    pub fn set_created(&self, t: Option<Timestamp>) {
        set_time(&self.created, t);
    }

    /// Starts the lifetime clock at `now` if it has not started.
    pub fn start(&self, now: Timestamp) {
        start_time(&self.created, now);
    }

    /// For an SA being replaced: when it stops being accepted.
    pub fn retire_at(&self) -> Option<Timestamp> {
        time_of(&self.retire_at)
    }

    /// Sets when the SA stops being accepted.
    pub fn set_retire_at(&self, t: Option<Timestamp>) {
        set_time(&self.retire_at, t);
    }

    /// Packets accepted.
    pub fn packets(&self) -> u64 {
        self.hot.0.packets.load(Ordering::Relaxed)
    }

    /// Bytes of inner packets accepted.
    pub fn bytes(&self) -> u64 {
        self.hot.0.bytes.load(Ordering::Relaxed)
    }

    /// Counts an accepted packet of `bytes` inner bytes.
    pub fn count(&self, bytes: u64) {
        self.hot.0.packets.fetch_add(1, Ordering::Relaxed);
        self.hot.0.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a replayed packet.
    pub fn count_replay(&self) {
        self.hot.0.replay_drops.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a packet that failed the integrity check.
    pub fn count_auth_failure(&self) {
        self.hot.0.auth_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the lifetime (or the overlap of a replaced SA) is over at
    /// `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        let l = &self.lifetime;
        (l.packets != 0 && self.packets() >= l.packets)
            || (l.bytes != 0 && self.bytes() >= l.bytes)
            || l.time.is_some_and(|t| {
                self.created()
                    .is_some_and(|c| now.nanos() - c.nanos() >= t.nanos())
            })
            || self.retire_at().is_some_and(|t| now.nanos() >= t.nanos())
    }

    /// Checks the sequence number (low 32 bits `seq_low`) against the
    /// window and returns the inferred 64-bit number.
    pub fn precheck(&self, seq_low: u32) -> Result<u64, EspError> {
        let seq = if self.keys.esn {
            self.window.infer_esn(seq_low).ok_or(EspError::Replay)?
        } else {
            u64::from(seq_low)
        };
        if self.window.check(seq) {
            Ok(seq)
        } else {
            Err(EspError::Replay)
        }
    }

    /// Verifies and decrypts the ESP packet `esp` (header first) in place
    /// and updates the window: the sequence number is checked before the
    /// integrity check (cheap refusal of replays) and recorded only after
    /// it (RFC 4303 §3.4.3), by [`ReplayWindow::accept`], which refuses it
    /// if another thread accepted the same number meanwhile (the packet is
    /// then a replay, already decrypted). Returns the sequence number, the
    /// offset of the decrypted inner packet in `esp`, its length (without
    /// padding and trailer) and the next header.
    pub fn open(&self, esp: &mut [u8]) -> Result<(u64, usize, usize, u8), EspError> {
        let n = esp.len();
        if n < 8 + IV_LEN + 2 + ICV_LEN {
            return Err(EspError::Malformed);
        }
        let seq_low = u32::from_be_bytes([esp[4], esp[5], esp[6], esp[7]]);
        let seq = self.precheck(seq_low)?;
        self.keys.unseal(esp, seq)?;
        // Authentic: the window moves, whatever the trailer says.
        if !self.window.accept(seq) {
            return Err(EspError::Replay);
        }
        let bl = n - 16 - ICV_LEN;
        let body = &esp[16..16 + bl];
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

    /// Hot swap: when `old` is the same SA (SPI, key, algorithm, ESN), this
    /// one continues it: keys, window (resized to this one's size, the
    /// higher top kept), counters and times (this SA's lifetime applies).
    /// An empty window would accept every old packet again. Returns
    /// whether anything was taken.
    pub fn continue_from(&mut self, old: &InSa) -> bool {
        if !self.keys.same(&old.keys) {
            return false;
        }
        let top = self.window.top();
        self.keys = Arc::clone(&old.keys);
        self.window = old.window.resized(self.window.size() as usize);
        if top > self.window.top() {
            self.window.update(top);
        }
        let (h, o) = (&self.hot.0, &old.hot.0);
        for (a, b) in [
            (&h.packets, &o.packets),
            (&h.bytes, &o.bytes),
            (&h.replay_drops, &o.replay_drops),
            (&h.auth_failures, &o.auth_failures),
        ] {
            a.store(b.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.set_created(old.created());
        self.set_retire_at(old.retire_at());
        true
    }

    /// One line describing the SA and its counters (never the key).
    pub fn describe(&self, now: Timestamp) -> String {
        let h = &self.hot.0;
        let mut s = describe(
            &self.keys,
            0,
            self.window.size(),
            self.window.top(),
            [
                self.packets(),
                self.bytes(),
                h.replay_drops.load(Ordering::Relaxed),
                h.auth_failures.load(Ordering::Relaxed),
            ],
        );
        if self.expired(now) {
            s.push_str(" expired");
        } else if self.retire_at().is_some() {
            s.push_str(" retiring");
        }
        s
    }
}

/// A value several threads read on their packet path and handlers
/// replace now and then (an element's SAs): each thread keeps a
/// [`View`], an `Arc` of the value and the generation it saw, and
/// [`refresh`](Published::refresh) compares generations (one atomic load)
/// before its batches, taking the mutex only after a change. No lock, no
/// allocation in steady state.
pub struct Published<T> {
    gen: AtomicU64,
    slot: Mutex<Arc<T>>,
}

/// A thread's view of a [`Published`] value.
pub struct View<T> {
    gen: u64,
    /// The value as of the last refresh.
    pub cur: Arc<T>,
}

impl<T> View<T> {
    /// The generation seen.
    pub fn generation(&self) -> u64 {
        self.gen
    }
}

impl<T> Published<T> {
    /// A published value.
    pub fn new(v: T) -> Published<T> {
        Published {
            gen: AtomicU64::new(0),
            slot: Mutex::new(Arc::new(v)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Arc<T>> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current value.
    pub fn get(&self) -> Arc<T> {
        Arc::clone(&self.lock())
    }

    /// A view of the current value.
    pub fn view(&self) -> View<T> {
        let g = self.lock();
        View {
            gen: self.gen.load(Ordering::Acquire),
            cur: Arc::clone(&g),
        }
    }

    /// Whether `view` is out of date.
    #[inline]
    pub fn stale(&self, view: &View<T>) -> bool {
        self.gen.load(Ordering::Acquire) != view.gen
    }

    /// Brings `view` up to date; true when it changed.
    #[inline]
    pub fn refresh(&self, view: &mut View<T>) -> bool {
        if self.gen.load(Ordering::Acquire) == view.gen {
            return false;
        }
        let g = self.lock();
        view.gen = self.gen.load(Ordering::Acquire);
        view.cur = Arc::clone(&g);
        true
    }

    /// Replaces the value with `f` of the current one.
    pub fn update(&self, f: impl FnOnce(&T) -> T) {
        let mut g = self.lock();
        *g = Arc::new(f(&g));
        self.gen.fetch_add(1, Ordering::AcqRel);
    }

    /// Replaces the value.
    pub fn publish(&self, v: T) {
        self.update(|_| v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_basics() {
        let w = ReplayWindow::new(64);
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
        assert!(w.check(937));
        assert!(!w.accept(1000), "accepted twice");
        assert!(w.accept(937) && !w.accept(937));
    }

    /// The window against a plain model (a set of accepted numbers and
    /// the top) on a pseudo-random walk with reordering and replays.
    #[test]
    fn window_matches_a_model() {
        for size in [64usize, 128, 1024] {
            let w = ReplayWindow::new(size);
            let mut seen = std::collections::HashSet::new();
            let mut top = 0u64;
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut base = 1u64;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly forward, sometimes back within (or just past) the
                // window, sometimes a jump.
                let s = match x % 16 {
                    0 => base + (x >> 8) % 5000,
                    1..=5 => base.saturating_sub((x >> 8) % (size as u64 + 40)).max(1),
                    _ => base + (x >> 8) % 3,
                };
                base = base.max(s);
                let ok = s != 0 && !seen.contains(&s) && (s > top || top - s < size as u64);
                assert_eq!(w.check(s), ok, "check {s} (top {top}, size {size})");
                assert_eq!(w.accept(s), ok, "accept {s} (top {top}, size {size})");
                if ok {
                    seen.insert(s);
                    top = top.max(s);
                }
                assert_eq!(w.top(), top);
            }
        }
    }

    /// Two threads offer the same sequence numbers at once (a replayed
    /// stream racing the original): each is accepted exactly once. A
    /// window checked and then updated in two steps lets both threads
    /// accept the same number.
    #[test]
    fn window_accepts_each_number_once_under_two_threads() {
        const N: u64 = 200_000;
        // Many short races: each has a small chance of catching a two-step
        // update in the act.
        for round in 0..30 {
            let w = ReplayWindow::new(1024);
            let start = std::sync::Barrier::new(2);
            // The threads keep within 64 numbers of each other, so that they
            // offer the same numbers at nearly the same moment (and neither
            // falls below the window).
            let progress = [AtomicU64::new(0), AtomicU64::new(0)];
            let counts: Vec<u64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..2)
                    .map(|t| {
                        let (w, start, progress) = (&w, &start, &progress);
                        s.spawn(move || {
                            start.wait();
                            let mut n = 0;
                            for i in 1..=N {
                                if i % 16 == 0 {
                                    progress[t].store(i, Ordering::Release);
                                    while progress[1 - t].load(Ordering::Acquire) + 64 < i {
                                        std::thread::yield_now();
                                    }
                                }
                                // Small local reordering, different per thread.
                                let seq = if t == 1 && i % 4 == 1 && i + 2 <= N {
                                    i + 2
                                } else if t == 1 && i % 4 == 3 {
                                    i - 2
                                } else {
                                    i
                                };
                                if w.check(seq) && w.accept(seq) {
                                    n += 1;
                                }
                            }
                            progress[t].store(N + 64, Ordering::Release);
                            n
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let total: u64 = counts.iter().sum();
            assert!(
                total <= N,
                "round {round}: {total} acceptances of {N} numbers: {counts:?}"
            );
            // Every number is accepted by one thread: none falls below the
            // window, and none is refused while its slot is being updated.
            assert_eq!(total, N, "round {round}: {counts:?}");
            assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
            assert_eq!(w.top(), N);
        }
    }

    /// A window set up at a high sequence number (the SEQ keyword, a hot
    /// swap's resized copy) accepts the numbers that follow, wherever they
    /// lie in the 64-bit (ESN) space. Fresh slots all record block 0, and
    /// the blocks 2^31 to 2^32 - 1 (modulo 2^32: sequence numbers 2^36 to
    /// 2^37 - 1, modulo 2^37) compare older than block 0: a fresh window
    /// refused every one of those numbers, and recording the top failed.
    #[test]
    fn a_window_set_up_high_accepts_what_follows() {
        for top in [
            1u64 << 36,
            (1 << 36) + 12_345,
            (1 << 37) - 100,
            (5 << 36) + 7,
            u64::MAX / 2,
        ] {
            let w = ReplayWindow::new(128);
            w.update(top);
            assert_eq!(w.top(), top, "top after SEQ {top}");
            assert!(!w.check(top), "{top} seen");
            assert!(w.check(top - 5), "{top} - 5 inside the window");
            assert!(w.accept(top + 1), "{top} + 1 after SEQ {top}");
            assert!(w.accept(top + 200), "{top} + 200 after SEQ {top}");
            for size in [64, 256] {
                let r = w.resized(size);
                assert_eq!(r.top(), top + 200);
                assert!(!r.check(top + 200) && !r.check(top + 1));
                assert!(r.accept(top + 199), "{top} + 199, resized to {size}");
                assert!(r.accept(top + 201), "{top} + 201, resized to {size}");
                assert!(r.accept(top + 1000), "{top} + 1000, resized to {size}");
                assert!(!r.accept(top + 1000));
            }
        }
    }

    #[test]
    fn resized_window_refuses_what_the_old_one_refused() {
        let w = ReplayWindow::new(128);
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

    fn spec() -> SaSpec {
        SaSpec::parse("0x10 000102030405060708090a0b0c0d0e0f10111213").unwrap()
    }

    fn opts(lifetime: Lifetime) -> SaOptions {
        SaOptions {
            esn: false,
            window: 64,
            lifetime,
        }
    }

    #[test]
    fn time_lifetime_and_retirement() {
        let life = Lifetime {
            time: Some(Timestamp::from_secs_f64(10.0)),
            ..Lifetime::default()
        };
        let sa = OutSa::new(&spec(), &opts(life), 0).unwrap();
        let t0 = Timestamp::from_secs_f64(1000.0);
        assert!(!sa.expired(t0), "not started yet");
        sa.start(t0);
        sa.start(Timestamp::from_secs_f64(1005.0));
        assert_eq!(sa.created(), Some(t0), "the first start counts");
        assert!(!sa.expired(Timestamp::from_secs_f64(1009.9)));
        assert!(sa.expired(Timestamp::from_secs_f64(1010.0)));
        let sa = InSa::new(&spec(), &opts(Lifetime::default())).unwrap();
        sa.set_retire_at(Some(Timestamp::from_secs_f64(5.0)));
        assert!(!sa.expired(Timestamp::from_secs_f64(4.0)));
        assert!(sa.expired(Timestamp::from_secs_f64(5.0)));
    }

    #[test]
    fn sequence_numbers_run_out_at_the_limit_and_packet_lifetime() {
        let sa = OutSa::new(&spec(), &opts(Lifetime::default()), u64::from(u32::MAX) - 3).unwrap();
        assert_eq!(sa.reserve(2), Some((u64::from(u32::MAX) - 2, 2)));
        assert_eq!(sa.reserve(5), Some((u64::from(u32::MAX), 1)));
        assert_eq!(sa.reserve(1), None);
        let life = Lifetime {
            packets: 10,
            ..Lifetime::default()
        };
        let sa = OutSa::new(&spec(), &opts(life), 100).unwrap();
        assert_eq!(sa.reserve(8), Some((101, 8)));
        assert_eq!(sa.reserve(8), Some((109, 2)));
        assert_eq!(sa.reserve(1), None);
        assert!(sa.expired(Timestamp::default()));
    }

    /// Two threads take sequence numbers from one SA at once, in blocks
    /// of varying size: every number from 1 to the total is handed out
    /// exactly once. A sequence number read and then written back in two
    /// steps hands some numbers to both threads.
    #[test]
    fn sequence_numbers_are_unique_under_two_threads() {
        const ROUNDS: u64 = 1_000_000;
        let sa = OutSa::new(&spec(), &opts(Lifetime::default()), 0).unwrap();
        let start = std::sync::Barrier::new(2);
        let got: Vec<Vec<(u64, u64)>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2u64)
                .map(|t| {
                    let (sa, start) = (&sa, &start);
                    s.spawn(move || {
                        start.wait();
                        (0..ROUNDS)
                            .map(|i| sa.reserve(1 + (i + t) % 3).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all: Vec<(u64, u64)> = got.into_iter().flatten().collect();
        all.sort_unstable();
        let mut next = 1;
        for (first, n) in all {
            assert_eq!(first, next, "a number handed out twice or skipped");
            next += n;
        }
        assert_eq!(next - 1, sa.seq());
    }

    #[test]
    fn iv_differs_between_sas_with_the_same_key() {
        let mut bufs = Vec::new();
        for _ in 0..2 {
            let sa = OutSa::new(&spec(), &opts(Lifetime::default()), 0).unwrap();
            let mut esp = vec![0u8; 8 + IV_LEN + 4 + ICV_LEN];
            let (seq, _) = sa.reserve(1).unwrap();
            sa.keys.seal(&mut esp, seq).unwrap();
            bufs.push(esp[8..16].to_vec());
        }
        assert_ne!(bufs[0], bufs[1], "IVs repeat across SA set-ups");
    }

    #[test]
    fn esn_inference() {
        let w = ReplayWindow::new(64);
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
}
