//! Shared parts of Click's legacy IPsec elements (RadixIPsecLookup,
//! IPsecESPEncap, IPsecESPUnencap, IPsecAuthHMACSHA1, IPsecAES, IPsecDES,
//! IPsecEncap): the security association (SA) data that RadixIPsecLookup
//! creates from its routes, the packet annotations that carry an SA from
//! the lookup to the elements after it, and the cryptographic transforms
//! exactly as Click applies them, built on RustCrypto's `aes`, `des`,
//! `hmac` and `sha1` crates. (The ESP IVs come from Click's shared
//! `click_random` stream, crate::standard::clickrandom.)
//!
//! # Annotations
//!
//! Click's RadixIPsecLookup stores the SPI in the 4-byte annotation at
//! offset 32 (`IPSEC_SPI_ANNO`) and a raw pointer to the SA's data in
//! `IPSEC_SA_DATA_REFERENCE_ANNO` (offset 40, 8 bytes on a 64-bit host;
//! offset 36, 4 bytes on a 32-bit one). rclick keeps the SPI where Click
//! has it ([`SPI_ANNO`]) and stores an *SA handle* instead of a pointer:
//! a 4-byte number at offset 36 ([`SA_ANNO`], Click's 32-bit place, since
//! rclick's flow annotation uses bytes 40 to 47). Handle 0 means "no SA";
//! a handle holds the SA's slot in this process's registry (lower 16
//! bits) and a check derived from the slot (upper 16 bits, never 0), so
//! that numbers other elements leave in these bytes (they are also the
//! upper half of the 8-byte first-timestamp annotation at offset 32, as
//! in Click, and any element with an ANNO argument can write them) name
//! no SA, save by a 1 in 32768 chance, and small ones never. SAs are
//! registered when RadixIPsecLookup is configured and are never freed, so
//! a handle stays valid whatever happens to the element (a packet may
//! outlive its router across a hot swap); a lookup is two atomic loads, no
//! lock. The registry holds at most [`MAX_SAS`] SAs per process (every route
//! with an SA, configured or added through a handler, takes one, and
//! reconfiguring takes new ones); past that, configuring or adding an SA
//! fails. The SA's sending counter and replay
//! window are atomics, so SAs may be shared by elements on different
//! threads; each check-and-update of the replay window is not one atomic
//! step, which is exact when (as usual) one thread decapsulates an SA.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use hmac::{Hmac, Mac};
use rclick_core::{Ctx, Packet};

/// Offset of the SPI annotation (Click's `IPSEC_SPI_ANNO`, 4 bytes).
pub const SPI_ANNO: usize = rclick_core::packet::anno::IPSEC_SPI;
/// Offset of the SA handle annotation (4 bytes; see the module doc).
pub const SA_ANNO: usize = rclick_core::packet::anno::IPSEC_SA;
/// Bytes of an ESP header as Click builds it: SPI, replay counter, 8-byte
/// IV (Click's `struct esp_new`).
pub const ESP_HEADER_LEN: usize = 16;
/// Bytes of the truncated HMAC-SHA1 digest Click appends (HMAC-SHA1-96).
pub const DIGEST_LEN: usize = 12;
/// Key bytes of an SA (Click's `KEY_SIZE`): AES-128 uses all 16, DES the
/// first 8; HMAC-SHA1 uses a 16-byte key.
pub const KEY_LEN: usize = 16;
/// Most SAs one process can register.
pub const MAX_SAS: usize = 65536;

/// One security association: Click's `SADataTuple`.
/// The keyed algorithms of an SA, set up once when the SA is made (Click
/// redoes the AES key schedule and the HMAC pads for every packet).
#[derive(Clone)]
pub struct SaKeys {
    pub aes: aes::Aes128,
    pub des: des::Des,
    /// HMAC-SHA1 with the inner and outer pads already hashed.
    pub mac: Hmac<sha1::Sha1>,
}

impl SaKeys {
    pub fn new(enc_key: &[u8; KEY_LEN], auth_key: &[u8; KEY_LEN]) -> Self {
        SaKeys {
            aes: aes::Aes128::new(enc_key.into()),
            des: des::Des::new((&<[u8; 8]>::try_from(&enc_key[..8]).unwrap_or_default()).into()),
            mac: keyed_hmac(auth_key),
        }
    }
}

pub struct LegacySa {
    pub keys: SaKeys,
    pub spi: u32,
    pub enc_key: [u8; KEY_LEN],
    pub auth_key: [u8; KEY_LEN],
    /// The value the sending counter restarts from after it wraps, and the
    /// receiver's first expected number (Click's `replay_start_counter`).
    pub replay_start: u32,
    /// Out-of-order window size in packets (Click's `ooowin`, 0 to 255).
    pub window: u8,
    /// Next sequence number to send (Click's `cur_rpl`).
    pub next_seq: AtomicU32,
    /// Highest sequence number received (Click's `lastseq`).
    pub last_seq: AtomicU32,
    /// Received-packet bitmap below `last_seq` (Click's `bitmap`).
    pub bitmap: AtomicU32,
}

impl LegacySa {
    pub fn new(
        spi: u32,
        enc_key: [u8; KEY_LEN],
        auth_key: [u8; KEY_LEN],
        replay: u32,
        window: u8,
    ) -> Self {
        LegacySa {
            keys: SaKeys::new(&enc_key, &auth_key),
            spi,
            enc_key,
            auth_key,
            replay_start: replay,
            window,
            next_seq: AtomicU32::new(replay),
            last_seq: AtomicU32::new(replay),
            bitmap: AtomicU32::new(0),
        }
    }

    /// The sequence number for the next packet sent; after 0xffffffff the
    /// counter goes through 0 and then restarts at the configured start
    /// value, as Click's does.
    pub fn take_seq(&self) -> u32 {
        let cur = self.next_seq.load(Ordering::Relaxed);
        let next = if cur == 0 {
            self.replay_start
        } else {
            cur.wrapping_add(1)
        };
        self.next_seq.store(next, Ordering::Relaxed);
        cur
    }

    /// Click's anti-replay check (from `IPsecESPUnencap`): whether a packet
    /// with sequence number `seq` is accepted, marking it as seen. `Err`
    /// carries Click's message for the packets it complains about.
    ///
    /// Two departures from Click, both closing replays: packets
    /// [`BITMAP_BITS`] or more behind the highest number seen are too old
    /// even when the window (OOSIZE) is wider, since the bitmap cannot
    /// remember them (Click shifts past the bitmap's width there, undefined
    /// in C); and the REPLAY start number restarts the window only when the
    /// highest number seen is within [`BITMAP_BITS`] of 2^32 - 1, i.e. when
    /// the sender's counter can have wrapped (Click restarts on any packet
    /// numbered REPLAY, so replaying an SA's first packet reopened the
    /// window to replays of all the others), and marks it as seen.
    pub fn check_replay(&self, seq: u32) -> Result<(), Option<&'static str>> {
        if seq == 0 {
            return Err(None);
        }
        let last = self.last_seq.load(Ordering::Relaxed);
        let win = u32::from(self.window);
        // The sender's counter rolled over to its start value.
        if seq == self.replay_start && last != seq && u32::MAX - last < BITMAP_BITS {
            self.bitmap.store(1, Ordering::Relaxed);
            self.last_seq.store(seq, Ordering::Relaxed);
            return Ok(());
        }
        let bitmap = self.bitmap.load(Ordering::Relaxed);
        if seq > last {
            let diff = seq - last;
            let b = if diff < win { shl(bitmap, diff) | 1 } else { 1 };
            self.bitmap.store(b, Ordering::Relaxed);
            self.last_seq.store(seq, Ordering::Relaxed);
            return Ok(());
        }
        let diff = last - seq;
        if diff >= win.min(BITMAP_BITS) {
            return Err(Some(
                "Replay protection: This packet is too old to be accepted",
            ));
        }
        let bit = shl(1, diff);
        if bitmap & bit != 0 {
            return Err(Some("Replay protection: This packet is already seen..."));
        }
        self.bitmap.store(bitmap | bit, Ordering::Relaxed);
        Ok(())
    }

    /// The SA as Click's `table` handler prints it after a tunneled route.
    pub fn unparse_keys(&self) -> String {
        let hex = |k: &[u8]| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
        format!(" |{}| |{}|", hex(&self.enc_key), hex(&self.auth_key))
    }
}

/// Packets the anti-replay bitmap remembers (Click's 32-bit `bitmap`).
pub const BITMAP_BITS: u32 = 32;

/// A left shift that gives 0 for shifts of 32 or more (the window is at
/// most 255 packets but the bitmap has 32 bits; Click's C shift is
/// undefined there).
fn shl(v: u32, by: u32) -> u32 {
    v.checked_shl(by).unwrap_or(0)
}

/// Slots per chunk of the registry; chunks are allocated when first used.
const CHUNK: usize = 256;

type Chunk = [OnceLock<&'static LegacySa>; CHUNK];

static SAS: [OnceLock<Box<Chunk>>; MAX_SAS / CHUNK] = [const { OnceLock::new() }; MAX_SAS / CHUNK];
static NEXT_SA: AtomicUsize = AtomicUsize::new(0);

/// The check a handle carries in its upper 16 bits for registry slot `i`
/// (never 0): a hash of the slot number, so that a number another element
/// left in the annotation names an SA only by a 1 in 32768 chance, and a
/// small one (below 65536) never does.
#[inline]
fn check(i: u32) -> u32 {
    let h = (i ^ 0x5bd1_e995).wrapping_mul(0x9e37_79b9);
    (h >> 16) | 0x8000
}

/// Registers an SA for the rest of the process and returns its handle
/// (never 0: slot number in the lower 16 bits, [`check`] in the upper
/// ones), or an error when the registry is full.
pub fn register(sa: LegacySa) -> Result<u32, String> {
    let i = NEXT_SA.fetch_add(1, Ordering::Relaxed);
    let chunk = SAS
        .get(i / CHUNK)
        .ok_or_else(|| {
            format!("too many IPsec security associations (at most {MAX_SAS} per process)")
        })?
        .get_or_init(|| Box::new([const { OnceLock::new() }; CHUNK]));
    let _ = chunk[i % CHUNK].set(Box::leak(Box::new(sa)));
    let i = i as u32;
    Ok(check(i) << 16 | i)
}

/// How many SAs this process has registered (at most [`MAX_SAS`]).
pub fn registered() -> usize {
    NEXT_SA.load(Ordering::Relaxed).min(MAX_SAS)
}

/// The SA a handle names; `None` for 0 or any number that is not a
/// handle [`register`] gave.
#[inline]
pub fn lookup(handle: u32) -> Option<&'static LegacySa> {
    let i = handle & 0xffff;
    if handle >> 16 != check(i) {
        return None;
    }
    let i = i as usize;
    SAS.get(i / CHUNK)?.get()?[i % CHUNK].get().copied()
}

/// The SA named by a packet's SA annotation.
#[inline]
pub fn sa_of(p: &Packet) -> Option<&'static LegacySa> {
    lookup(u32::from_ne_bytes(p.anno_bytes::<4>(SA_ANNO)))
}

/// Sets a packet's SA annotation (0: none).
#[inline]
pub fn set_sa_anno(p: &mut Packet, handle: u32) {
    p.set_anno_bytes(SA_ANNO, &handle.to_ne_bytes());
}

/// Reads a packet's SPI annotation.
#[inline]
pub fn spi_anno(p: &Packet) -> u32 {
    u32::from_ne_bytes(p.anno_bytes::<4>(SPI_ANNO))
}

/// Sets a packet's SPI annotation.
#[inline]
pub fn set_spi_anno(p: &mut Packet, spi: u32) {
    p.set_anno_bytes(SPI_ANNO, &spi.to_ne_bytes());
}

// ---------------------------------------------------------- transforms

/// Click's IPsecAES transform, in place on an ESP packet (header, payload
/// and padding, then the 12-byte digest). It is not standard AES-CBC and
/// is kept for interoperation with Click: the IV is the ESP header's 8
/// bytes, and each 16-byte block's first 8 bytes only are XORed with the
/// first 8 bytes of the previous ciphertext block (or the IV) before the
/// block is encrypted; the region starts after the ESP header and covers
/// the packet's length less the header and the digest, rounded up by 8
/// bytes (into the digest) when that is not a multiple of 16. `None` when
/// the region is not whole 8-byte units inside the packet (Click would
/// read and write past the packet).
pub fn click_aes(data: &mut [u8], key: &[u8; KEY_LEN], decrypt: bool) -> Option<()> {
    click_aes_with(data, &aes::Aes128::new(key.into()), decrypt)
}

/// [`click_aes`] with a key schedule already made.
pub fn click_aes_with(data: &mut [u8], cipher: &aes::Aes128, decrypt: bool) -> Option<()> {
    let body = data.len().checked_sub(ESP_HEADER_LEN + DIGEST_LEN)?;
    if body % 8 != 0 {
        return None;
    }
    let plen = if body % 16 != 0 { body + 8 } else { body };
    let (head, rest) = data.split_at_mut(ESP_HEADER_LEN);
    let region = rest.get_mut(..plen)?;
    let mut chain = [0u8; 8];
    chain.copy_from_slice(&head[8..16]);
    for block in region.chunks_exact_mut(16) {
        let mut b = [0u8; 16];
        b.copy_from_slice(block);
        if decrypt {
            let mut next = [0u8; 8];
            next.copy_from_slice(&b[..8]);
            cipher.decrypt_block((&mut b).into());
            for (x, c) in b.iter_mut().zip(chain) {
                *x ^= c;
            }
            chain = next;
        } else {
            for (x, c) in b.iter_mut().zip(chain) {
                *x ^= c;
            }
            cipher.encrypt_block((&mut b).into());
            chain.copy_from_slice(&b[..8]);
        }
        block.copy_from_slice(&b);
    }
    Some(())
}

/// Click's IPsecDES transform: DES-CBC (single DES, key = the SA key's
/// first 8 bytes) with the ESP header's 8-byte IV over the bytes between
/// the ESP header and the 12-byte digest. `None` when that region is not
/// whole 8-byte blocks (Click would run past it).
pub fn click_des(data: &mut [u8], key: &[u8; KEY_LEN], decrypt: bool) -> Option<()> {
    click_des_with(data, &SaKeys::new(key, key).des, decrypt)
}

/// [`click_des`] with a key schedule already made.
pub fn click_des_with(data: &mut [u8], cipher: &des::Des, decrypt: bool) -> Option<()> {
    let body = data.len().checked_sub(ESP_HEADER_LEN + DIGEST_LEN)?;
    if body % 8 != 0 {
        return None;
    }
    let (head, rest) = data.split_at_mut(ESP_HEADER_LEN);
    let mut chain = [0u8; 8];
    chain.copy_from_slice(&head[8..16]);
    for block in rest[..body].chunks_exact_mut(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(block);
        if decrypt {
            let next = b;
            cipher.decrypt_block((&mut b).into());
            for (x, c) in b.iter_mut().zip(chain) {
                *x ^= c;
            }
            chain = next;
        } else {
            for (x, c) in b.iter_mut().zip(chain) {
                *x ^= c;
            }
            cipher.encrypt_block((&mut b).into());
            chain = b;
        }
        block.copy_from_slice(&b);
    }
    Some(())
}

/// HMAC-SHA1 (RFC 2104) of `data` with a 16-byte key, truncated to 96
/// bits (RFC 2404), as Click's IPsecAuthHMACSHA1 computes it.
pub fn hmac_sha1_96(key: &[u8; KEY_LEN], data: &[u8]) -> [u8; DIGEST_LEN] {
    hmac_sha1_96_with(&keyed_hmac(key), data)
}

/// HMAC-SHA1 keyed with `key` (the inner and outer pads hashed).
pub fn keyed_hmac(key: &[u8; KEY_LEN]) -> Hmac<sha1::Sha1> {
    <Hmac<sha1::Sha1> as Mac>::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// [`hmac_sha1_96`] from a keyed state.
pub fn hmac_sha1_96_with(keyed: &Hmac<sha1::Sha1>, data: &[u8]) -> [u8; DIGEST_LEN] {
    let mut mac = keyed.clone();
    mac.update(data);
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; DIGEST_LEN];
    out.copy_from_slice(&full[..DIGEST_LEN]);
    out
}

/// Whether `tag` is the HMAC-SHA1-96 of `data` under `keyed`, compared in
/// constant time (`hmac`'s truncated verify), so that the time taken
/// tells nothing about how many leading bytes of a forged digest are
/// right. `tag` must be [`DIGEST_LEN`] bytes.
pub fn hmac_sha1_96_verify(keyed: &Hmac<sha1::Sha1>, data: &[u8], tag: &[u8]) -> bool {
    if tag.len() != DIGEST_LEN {
        return false;
    }
    let mut mac = keyed.clone();
    mac.update(data);
    mac.verify_truncated_left(tag).is_ok()
}

/// The digest step of Click's authentication elements (IPsecAuthHMACSHA1,
/// IPsecAuthSHA1): without `verify`, appends `make(data)`; with it, checks
/// the trailing 12-byte digest with `check(body, tag)` and removes it, or
/// sends the packet to the error output (chattering the first time, as
/// Click). Drops (no room for the digest) and failures are counted.
pub fn digest_step(
    mut p: Packet,
    verify: bool,
    drops: &mut u64,
    ctx: &Ctx,
    make: impl Fn(&[u8]) -> [u8; DIGEST_LEN],
    check: impl Fn(&[u8], &[u8]) -> bool,
) -> Option<Result<Packet, Packet>> {
    if !verify {
        let mac = make(p.data());
        let Some(tail) = p.put(DIGEST_LEN) else {
            *drops += 1;
            return None;
        };
        tail.copy_from_slice(&mac);
        return Some(Ok(p));
    }
    let d = p.data();
    let good = d.len() >= DIGEST_LEN && {
        let (body, tag) = d.split_at(d.len() - DIGEST_LEN);
        check(body, tag)
    };
    if good {
        p.take(DIGEST_LEN);
        return Some(Ok(p));
    }
    if *drops == 0 {
        ctx.chatter("Invalid SHA1 authentication digest");
    }
    *drops += 1;
    Some(Err(p))
}

/// The cipher step of Click's IPsecAES and IPsecDES: runs `cipher` over
/// the packet with its SA's keys (`decrypt` unless `encrypt`). A packet
/// without an SA annotation is dropped with Click's message `no_sa`; one
/// the cipher refuses (its region not whole blocks) is dropped too. Both
/// are counted in `drops`.
pub fn cipher_step(
    mut p: Packet,
    encrypt: bool,
    drops: &mut u64,
    ctx: &Ctx,
    no_sa: &str,
    cipher: impl Fn(&mut [u8], &SaKeys, bool) -> Option<()>,
) -> Option<Packet> {
    let Some(sa) = sa_of(&p) else {
        *drops += 1;
        ctx.chatter(no_sa);
        return None;
    };
    if cipher(p.writable(), &sa.keys, !encrypt).is_none() {
        *drops += 1;
        return None;
    }
    Some(p)
}

/// Reads the one mandatory integer argument of Click's legacy IPsec
/// elements (`ENCRYPT` or `VERIFY`): nonzero means true.
pub fn read_direction(conf: &str, name: &str) -> Result<bool, Vec<String>> {
    let mut args = rclick_core::conf::Args::new(conf);
    let op: i32 = args.read_mp(name);
    args.complete()?;
    Ok(op != 0)
}

/// Click's plain SHA-1 digest (IPsecAuthSHA1): SHA-1 of `data`, truncated
/// to 96 bits.
pub fn sha1_96(data: &[u8]) -> [u8; DIGEST_LEN] {
    use sha1::Digest;
    let full = sha1::Sha1::digest(data);
    let mut out = [0u8; DIGEST_LEN];
    out.copy_from_slice(&full[..DIGEST_LEN]);
    out
}
