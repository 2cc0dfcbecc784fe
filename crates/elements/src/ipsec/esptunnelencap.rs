//! # ESPTunnelEncap
//!
//! Protects IPv4 packets with ESP in tunnel mode (RFC 4303) using an AEAD
//! algorithm: AES-GCM (RFC 4106) or ChaCha20-Poly1305 (RFC 7634).
//!
//! ## Synopsis
//! `ESPTunnelEncap(SPI, KEY, SRC, DST [, ALG, ESN, TTL, DSCP, MTU,
//! LIFETIME_PACKETS, LIFETIME_BYTES, LIFETIME, SEQ, PMTU_CALL])`
//!
//! ## Ports and processing
//! Agnostic input 0, push input 1 (optional: ICMP errors); agnostic output
//! 0, push output 1 (optional).
//!
//! ## Description
//! An rclick element: Click's IPsec elements (IPsecESPEncap and its
//! companions) use 3DES/AES-CBC with HMAC-SHA1 as separate elements and
//! have no AEAD algorithm. ESPTunnelEncap is the whole outbound path of one
//! security association (SA): each input packet, an IPv4 packet starting
//! at its IP header, becomes the plaintext of an ESP packet (the inner
//! packet, padding 1, 2, 3... to a 4-byte boundary, the pad length and
//! next header 4), which is encrypted and authenticated with the SA's key
//! and prefixed by a new outer IPv4 header from SRC to DST (protocol 50).
//!
//! The wire format is RFC 4303's: SPI, sequence number, an 8-byte IV (the
//! 64-bit sequence number XORed with a random value drawn per SA, as
//! Linux's `seqiv`: unique within the SA, and not repeated when the same
//! manual key is installed again), ciphertext, a 16-byte ICV. The nonce is
//! the 4-byte salt then the IV; the associated data is the SPI and the
//! sequence number (all 64 bits of it with ESN, RFC 4106 §5). The key
//! layout is the one of Linux's `ip xfrm ... aead 'rfc4106(gcm(aes))' KEY
//! 128`; the tests check interoperation with scapy's `SecurityAssociation`
//! given the same key (kernel ESP is not available to them).
//!
//! The outer header gets TTL, the inner packet's DSCP and ECN (RFC 4301
//! §5.1.2.1; or the fixed DSCP given), and the inner packet's DF bit. Bytes
//! after the inner packet's IP length are dropped before encryption.
//! Sequence numbers start at 1; without ESN the SA is used up after
//! 2^32 - 1 packets (RFC 4303 §3.3.3) and further packets are dropped until
//! it is replaced (the `replace_sa` handler). Packets are dropped too once
//! the SA's lifetime has passed.
//!
//! Path MTU (RFC 4301 §8): with MTU set, an inner packet whose ESP packet
//! would be larger than MTU and that has DF set leaves unchanged by output
//! 1, for an ICMPError(..., unreachable, needfrag) whose PMTU is the
//! `inner_mtu` handler's value (kept so by PMTU_CALL); without DF it is encapsulated (fragment the
//! outer packet downstream, e.g. with IPFragmenter). Without output 1 such
//! packets are dropped. Other bad packets (not IPv4, truncated) are counted
//! and dropped.
//!
//! Input 1 takes ICMP errors received on the unprotected side, as IPv4
//! packets (RFC 4301 §6.1.1, §8.2.1): a fragmentation-needed message
//! (type 3, code 4) that quotes one of this SA's ESP packets (from SRC to
//! DST, this SPI) lowers MTU to its next-hop MTU (never below 68 plus the
//! tunnel's overhead), so later inner packets with DF that no longer fit
//! go to output 1 with the smaller `inner_mtu`. Every packet on input 1 is
//! consumed: the others are counted in `icmp_ignored`.
//!
//! With PMTU_CALL, the element writes the current `inner_mtu` to that
//! handler (normally the `pmtu` of the ICMPError making the
//! fragmentation-needed errors from output 1) before a packet leaves by
//! output 1 whenever it differs from the value last written, so the
//! errors report the tunnel's path MTU as it is now, lowered by ICMP on
//! input 1 or the `mtu` handler (RFC 4301 §8.2.1), not a fixed number.
//!
//! The destination annotation is set to DST, and the network header to the
//! outer header.
//!
//! Threads: reached from several threads (`-j N`), the element runs as
//! one copy per thread that share the SA and MTU: the keys read-only, the
//! sequence number one atomic counter from which each copy takes a block
//! of numbers per batch (one atomic operation per batch), so numbers are
//! unique within the SA and never reused, and the SA's packet and byte
//! counts added once per batch. Counting handlers add the copies up.
//! Packets of two threads leave slightly out of sequence order (by up to
//! a thread's time slice when threads share a core), so the peer needs a
//! wider anti-replay window than with one thread (WINDOW 1024 or more).
//! A LIFETIME_BYTES limit is exact with one thread; with several it may be
//! passed by the other threads' batches in flight.
//!
//! A hot swap to a configuration with the same SPI, key, algorithm and ESN
//! setting continues the SA (sequence number, IV, counters, lifetime
//! clock); another key starts a new SA.
//!
//! ## Keywords
//! - **SPI** (integer, decimal or 0x hex, not 0): the SA's SPI.
//! - **KEY** (hex): key then 4-byte salt, as RFC 4106 and Linux lay them
//!   out: 20 bytes for AES-GCM-128, 36 for AES-GCM-256 or
//!   ChaCha20-Poly1305.
//! - **SRC**, **DST** (IP address): the tunnel endpoints.
//! - **ALG** (word): `aes128gcm16`, `aes256gcm16` or `chacha20poly1305`
//!   (or Linux's `"rfc4106(gcm(aes))"`: AES-GCM sized by the key). Default
//!   from the key length (20: AES-GCM-128, 36: AES-GCM-256).
//! - **ESN** (bool): extended sequence numbers. Default false.
//! - **TTL** (byte): outer TTL. Default 64.
//! - **DSCP** (0-63): outer DSCP; default: copied from the inner packet.
//! - **MTU** (unsigned): largest outer packet; 0 (default) means no check.
//! - **LIFETIME_PACKETS**, **LIFETIME_BYTES** (unsigned): hard lifetime in
//!   packets and inner bytes; 0 (default) means none.
//! - **LIFETIME** (time): hard lifetime from the SA's first packet (or its
//!   installation by `replace_sa`). Default none.
//! - **SEQ** (unsigned): the last sequence number already used (testing
//!   aid, e.g. to cross 2^32 with ESN). Default 0.
//! - **PMTU_CALL** (handler name `ELEMENT.HANDLER`): a write handler
//!   given the new `inner_mtu` when it changes, before packets that do not
//!   fit leave by output 1. Default none.
//!
//! ## Handlers
//! - `sa` (read): the SA, its sequence number and counters (never the key).
//! - `spi` (read): the SA's SPI (empty when removed).
//! - `seq` (read): the last sequence number used.
//! - `packets`, `bytes` (read): packets and inner bytes protected.
//! - `expired_drops`, `malformed_drops`, `too_big` (read): packets dropped
//!   because the SA expired, used up its sequence numbers or is absent;
//!   because they were not IPv4; and packets sent to output 1 (or dropped)
//!   for the MTU.
//! - `inner_mtu` (read): the largest inner packet that fits MTU (0: no MTU).
//! - `pmtu_updates`, `icmp_ignored` (read): ICMP errors on input 1 that
//!   lowered MTU, and the others.
//! - `mtu` (read/write): MTU.
//! - `replace_sa` (write): `SPI KEY [ALG]` installs a new outbound SA
//!   (rekey); the old one is forgotten at once (the peer's inbound side
//!   keeps it for the overlap).
//! - `remove_sa` (write): removes the SA; packets are dropped until a new
//!   one is installed.
//!
//! ## Example
//! ```click
//! ... -> enc :: ESPTunnelEncap(0x1001, 0x4c80e4c1fbe2e4a3b0e3c6f1e7e2a1b2c3d4e5f6,
//!                              192.0.2.1, 198.51.100.1, MTU 1500,
//!                              PMTU_CALL err.pmtu) -> ...;
//! enc[1] -> err :: ICMPError(10.1.0.1, unreachable, needfrag) -> ...;
//! ```
//!
//! ## See also
//! ESPTunnelDecap, IPFragmenter, ICMPError

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rclick_core::conf::{parse_ipv4, parse_u32, parse_u64, parse_u8, Args};
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::element::PerThread;
use rclick_core::wire::esp::{HEADER_LEN as ESP_LEN, PROTO_ESP};
use rclick_core::wire::icmp::{ICMP_UNREACH, ICMP_UNREACH_NEEDFRAG};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN as IP_LEN, PROTO_ICMP};
use rclick_core::wire::{EspHeader, IcmpHeader, Ipv4Header, Ipv4Repr};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::sa::{pad_len, Alg, OutSa, Published, SaOptions, SaSpec, View, ICV_LEN, IV_LEN};

/// Outer header, ESP header, IV, trailer and ICV around an inner packet.
const OVERHEAD: usize = IP_LEN + ESP_LEN + IV_LEN + 2 + ICV_LEN;

/// What the copies of one element on several threads share: the SA and
/// the path MTU.
struct Shared {
    sa: Published<Option<OutSa>>,
    mtu: AtomicU32,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            sa: Published::new(None),
            mtu: AtomicU32::new(0),
        }
    }
}

pub struct ESPTunnelEncap {
    shared: Arc<Shared>,
    /// This thread's view of the SA.
    view: View<Option<OutSa>>,
    /// Sequence numbers reserved for the batch being pushed: the next one
    /// and the end (exclusive), of the SA in `view`.
    next_seq: u64,
    end_seq: u64,
    /// Packets and inner bytes protected and not yet added to the SA's
    /// counters (added once per batch).
    pending_packets: u64,
    pending_bytes: u64,
    /// A copy for another thread: handlers that change the shared SA or
    /// MTU act on the element only (the router writes every copy too).
    copy: bool,
    opts: SaOptions,
    /// The configured SA and SEQ, for a hot swap.
    spec: Option<SaSpec>,
    seq0: u64,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ttl: u8,
    dscp: Option<u8>,
    pmtu_call: Option<String>,
    /// The inner MTU last written to PMTU_CALL (0: none yet).
    reported_pmtu: usize,
    packets: u64,
    bytes: u64,
    expired_drops: u64,
    malformed_drops: u64,
    too_big: u64,
    pmtu_updates: u64,
    icmp_ignored: u64,
}

impl Default for ESPTunnelEncap {
    fn default() -> Self {
        let shared = Arc::new(Shared::default());
        let view = shared.sa.view();
        ESPTunnelEncap {
            shared,
            view,
            next_seq: 0,
            end_seq: 0,
            pending_packets: 0,
            pending_bytes: 0,
            copy: false,
            opts: SaOptions {
                esn: false,
                window: super::sa::MIN_WINDOW,
                lifetime: Default::default(),
            },
            spec: None,
            seq0: 0,
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            ttl: 64,
            dscp: None,
            pmtu_call: None,
            reported_pmtu: 0,
            packets: 0,
            bytes: 0,
            expired_drops: 0,
            malformed_drops: 0,
            too_big: 0,
            pmtu_updates: 0,
            icmp_ignored: 0,
        }
    }
}

/// The largest inner packet whose ESP packet fits `mtu` (0: no MTU).
fn inner_mtu(mtu: u32) -> usize {
    if mtu == 0 {
        return 0;
    }
    // inner + pad + 2 is a multiple of 4 and at most mtu - 52 + 2.
    let room = (mtu as usize).saturating_sub(OVERHEAD - 2);
    (room & !3).saturating_sub(2)
}

/// Why an input packet is not protected, before its SA is looked at.
enum Unfit {
    Malformed,
    TooBig,
}

impl ESPTunnelEncap {
    fn mtu(&self) -> u32 {
        self.shared.mtu.load(Ordering::Relaxed)
    }

    /// Adds the pending counts to the SA's and forgets the rest of the
    /// reservation.
    fn flush(&mut self) {
        if self.pending_packets != 0 {
            if let Some(sa) = self.view.cur.as_ref() {
                sa.count(self.pending_packets, self.pending_bytes);
            }
            self.pending_packets = 0;
            self.pending_bytes = 0;
        }
        self.next_seq = 0;
        self.end_seq = 0;
    }

    /// Brings the view of the SA up to date (after a rekey).
    fn refresh(&mut self) {
        if self.shared.sa.stale(&self.view) {
            self.flush();
            self.shared.sa.refresh(&mut self.view);
        }
    }

    /// The inner packet's length, TOS and DF bit, and the ESP packet's
    /// length.
    fn inspect(p: &Packet, mtu: u32) -> Result<(usize, u8, bool, usize), Unfit> {
        let (inner_len, tos, df) = match Ipv4Header::new_checked(p.data()) {
            Ok(ip)
                if (ip.total_len() as usize) >= ip.header_len()
                    && (ip.total_len() as usize) <= p.len() =>
            {
                (ip.total_len() as usize, ip.tos(), ip.dont_frag())
            }
            _ => return Err(Unfit::Malformed),
        };
        let outer_len = inner_len + pad_len(inner_len) + OVERHEAD;
        if mtu != 0 && outer_len > mtu as usize && df {
            return Err(Unfit::TooBig);
        }
        if outer_len > 0xffff {
            return Err(Unfit::Malformed);
        }
        Ok((inner_len, tos, df, outer_len))
    }

    /// Reserves one sequence number for each packet of `batch` that will
    /// need one: a single atomic operation per batch.
    fn reserve_batch(&mut self, batch: &Batch, ctx: &Ctx) {
        self.refresh();
        let Some(sa) = self.view.cur.as_ref() else {
            return;
        };
        let mtu = self.mtu();
        let want = batch
            .packets()
            .iter()
            .filter(|p| Self::inspect(p, mtu).is_ok())
            .count() as u64;
        if want == 0 || sa.expired_at(ctx.recent(), 0) {
            return;
        }
        if let Some((first, n)) = sa.reserve(want) {
            self.next_seq = first;
            self.end_seq = first + n;
        }
    }

    /// Writes the inner MTU to PMTU_CALL if it changed since the last
    /// write, so that the ICMP error made from a packet leaving by output
    /// 1 reports the tunnel's current path MTU.
    fn report_pmtu(&mut self, mtu: u32, ctx: &mut Ctx) {
        let inner = inner_mtu(mtu);
        if inner == self.reported_pmtu {
            return;
        }
        self.reported_pmtu = inner;
        if let Some(h) = self.pmtu_call.clone() {
            if let Err(e) = ctx.call_write(&h, &inner.to_string()) {
                ctx.chatter(&format!("{}: PMTU_CALL: {e}", ctx.element_name()));
            }
        }
    }

    /// An ICMP error from the unprotected side: a fragmentation-needed
    /// message about this SA's packets lowers MTU.
    fn icmp_error(&mut self, p: &Packet) -> bool {
        self.refresh();
        let Ok(ip) = Ipv4Header::new_checked(p.data()) else {
            return false;
        };
        if ip.protocol() != PROTO_ICMP || ip.is_fragment() {
            return false;
        }
        let Ok(icmp) = IcmpHeader::new_checked(ip.payload()) else {
            return false;
        };
        if icmp.icmp_type() != ICMP_UNREACH || icmp.code() != ICMP_UNREACH_NEEDFRAG {
            return false;
        }
        let Ok(q) = icmp.quoted_ipv4() else {
            return false;
        };
        let spi = match EspHeader::new_checked(q.payload()) {
            Ok(h) => h.spi(),
            Err(_) => return false,
        };
        let ours = q.protocol() == PROTO_ESP
            && q.src() == self.src
            && q.dst() == self.dst
            && self
                .view
                .cur
                .as_ref()
                .as_ref()
                .is_some_and(|s| s.keys.spi == spi);
        let mtu = u32::from(icmp.next_hop_mtu());
        let floor = (68 + OVERHEAD + 3) as u32;
        if !ours || mtu < floor {
            return false;
        }
        // Only ever lowered here (another thread may lower it at once).
        self.shared
            .mtu
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cur| {
                (cur == 0 || mtu < cur).then_some(mtu)
            })
            .is_ok()
    }
}

impl FilterOrDrop for ESPTunnelEncap {
    fn filter_or_drop(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        self.refresh();
        let mtu = self.mtu();
        let (inner_len, tos, df, outer_len) = match Self::inspect(&p, mtu) {
            Ok(x) => x,
            Err(Unfit::Malformed) => {
                self.malformed_drops += 1;
                return None;
            }
            Err(Unfit::TooBig) => {
                self.too_big += 1;
                self.report_pmtu(mtu, ctx);
                return Some(Err(p));
            }
        };
        let Some(sa) = self.view.cur.as_ref() else {
            self.expired_drops += 1;
            return None;
        };
        let now = ctx.recent();
        sa.start(now);
        if sa.expired_at(now, self.pending_bytes) {
            self.expired_drops += 1;
            return None;
        }
        let seq = if self.next_seq < self.end_seq {
            self.next_seq += 1;
            self.next_seq - 1
        } else if let Some((s, _)) = sa.reserve(1) {
            s
        } else {
            self.expired_drops += 1;
            return None;
        };
        let pad = pad_len(inner_len);
        p.take(p.len() - inner_len);
        let Some(t) = p.put(pad + 2 + ICV_LEN) else {
            self.malformed_drops += 1;
            return None;
        };
        for (i, b) in t[..pad].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        t[pad] = pad as u8;
        t[pad + 1] = 4; // IPv4 in IPv4
        if p.push(IP_LEN + ESP_LEN + IV_LEN).is_none() {
            self.malformed_drops += 1;
            return None;
        }
        let tos = match self.dscp {
            Some(d) => (d << 2) | (tos & 3),
            None => tos,
        };
        let outer = Ipv4Repr {
            src: self.src,
            dst: self.dst,
            protocol: PROTO_ESP,
            payload_len: outer_len - IP_LEN,
            ttl: self.ttl,
            tos,
            ident: sa.ident(seq),
            dont_frag: df,
            ..Ipv4Repr::default()
        };
        let buf = p.writable();
        let (iph, esp) = buf.split_at_mut(IP_LEN);
        outer.emit(&mut Ipv4Header::new_unchecked(iph));
        if sa.keys.seal(esp, seq).is_err() {
            self.malformed_drops += 1;
            return None;
        }
        self.pending_packets += 1;
        self.pending_bytes += inner_len as u64;
        self.packets += 1;
        self.bytes += inner_len as u64;
        p.set_network_header(0, IP_LEN);
        p.set_dst_ip_anno(self.dst);
        Some(Ok(p))
    }
}

fn parse_dscp(s: &str) -> Result<u8, String> {
    let d = parse_u8(s)?;
    if d > 63 {
        return Err("DSCP must be 0 to 63".into());
    }
    Ok(d)
}

/// Reads the SA.
fn with_sa<T>(e: &ESPTunnelEncap, f: impl FnOnce(&OutSa) -> T) -> Option<T> {
    e.shared.sa.get().as_ref().as_ref().map(f)
}

const HANDLERS: &[Handler<ESPTunnelEncap>] = &[
    Handler::read("sa", |e, ctx| {
        with_sa(e, |s| s.describe(ctx.recent())).unwrap_or_default()
    }),
    Handler::read("spi", |e, _| {
        with_sa(e, |s| format!("0x{:08x}", s.keys.spi)).unwrap_or_default()
    }),
    Handler::read("seq", |e, _| {
        with_sa(e, OutSa::seq).unwrap_or(0).to_string()
    }),
    Handler::data("packets", |e| &e.packets),
    Handler::data("bytes", |e| &e.bytes),
    Handler::data("expired_drops", |e| &e.expired_drops),
    Handler::data("malformed_drops", |e| &e.malformed_drops),
    Handler::data("too_big", |e| &e.too_big),
    Handler::read("inner_mtu", |e, _| inner_mtu(e.mtu()).to_string()),
    Handler::data("pmtu_updates", |e| &e.pmtu_updates),
    Handler::data("icmp_ignored", |e| &e.icmp_ignored),
    Handler::read_write(
        "mtu",
        |e, _| e.mtu().to_string(),
        |e, v, _| {
            let mtu = parse_u32(v.trim())?;
            if !e.copy {
                e.shared.mtu.store(mtu, Ordering::Relaxed);
            }
            Ok(())
        },
    ),
    Handler::write("replace_sa", |e, v, ctx| {
        let spec = SaSpec::parse(v)?;
        if e.copy {
            return Ok(());
        }
        let sa = match e.shared.sa.get().as_ref() {
            Some(old) => old.successor(&spec, &e.opts)?,
            None => OutSa::new(&spec, &e.opts, 0)?,
        };
        sa.set_created(Some(ctx.recent()));
        e.shared.sa.publish(Some(sa));
        Ok(())
    }),
    Handler::write("remove_sa", |e, _, _| {
        if !e.copy {
            e.shared.sa.publish(None);
        }
        Ok(())
    }),
];

rclick_core::element_class!(ESPTunnelEncap);

impl PerThread for ESPTunnelEncap {
    const SUMMED: &'static [&'static str] = &[
        "packets",
        "bytes",
        "expired_drops",
        "malformed_drops",
        "too_big",
        "pmtu_updates",
        "icmp_ignored",
    ];

    /// A copy shares the SA (keys, sequence number, counters) and the
    /// MTU; its own counts are added to the element's when read.
    fn fresh_copy(&self) -> Option<Self> {
        Some(ESPTunnelEncap {
            shared: Arc::clone(&self.shared),
            view: self.shared.sa.view(),
            copy: true,
            opts: self.opts,
            src: self.src,
            dst: self.dst,
            ttl: self.ttl,
            dscp: self.dscp,
            pmtu_call: self.pmtu_call.clone(),
            ..ESPTunnelEncap::default()
        })
    }

    fn absorb(&mut self, c: Self) {
        self.packets += c.packets;
        self.bytes += c.bytes;
        self.expired_drops += c.expired_drops;
        self.malformed_drops += c.malformed_drops;
        self.too_big += c.too_big;
        self.pmtu_updates += c.pmtu_updates;
        self.icmp_ignored += c.icmp_ignored;
    }
}

impl Element for ESPTunnelEncap {
    rclick_core::handlers!(HANDLERS);
    rclick_core::per_thread!();

    fn port_count(&self) -> &'static str {
        "1-2/1-2"
    }

    fn processing(&self) -> &'static str {
        "ah/ah"
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if port == 0 {
            self.reserve_batch(&batch, ctx);
            rclick_core::element::kinds::filter_or_drop_push(self, batch, ctx);
            self.flush();
            return;
        }
        for p in batch {
            if self.icmp_error(&p) {
                self.pmtu_updates += 1;
            } else {
                self.icmp_ignored += 1;
            }
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let b = rclick_core::element::kinds::filter_or_drop_pull(self, max, ctx);
        self.flush();
        b
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<ESPTunnelEncap>() else {
            return false;
        };
        o.flush();
        let Some(spec) = self.spec.as_ref() else {
            return false;
        };
        let Ok(mut new) = OutSa::new(spec, &self.opts, self.seq0) else {
            return false;
        };
        let old_sa = o.shared.sa.get();
        let took = match old_sa.as_ref() {
            Some(old) => new.continue_from(old),
            None => false,
        };
        if took {
            self.shared.sa.publish(Some(new));
        }
        took
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let spi = args.read_mp_with("SPI", super::sa::parse_spi);
        let key: Vec<u8> = args.read_mp_with("KEY", super::sa::parse_key);
        let src = args.read_mp_with("SRC", parse_ipv4);
        let dst = args.read_mp_with("DST", parse_ipv4);
        let alg = args.read_with("ALG", rclick_core::conf::parse_word);
        let opts = SaOptions::read(&mut args);
        let ttl = args.read_or_with("TTL", parse_u8, 64);
        let dscp = args.read_with("DSCP", parse_dscp);
        let mtu = args.read_or_with("MTU", parse_u32, 0);
        let seq = args.read_or_with("SEQ", parse_u64, 0);
        let pmtu_call = args.read_with("PMTU_CALL", |s| {
            let h = rclick_core::conf::parse_word(s)?;
            if h.contains('.') {
                Ok(h)
            } else {
                Err(format!("'{h}' is not a handler name (ELEMENT.HANDLER)"))
            }
        });
        let spec = if args.is_ok() {
            let alg = match alg {
                Some(a) => Alg::parse_for_key(&a, key.len()),
                None => Alg::for_keymat_len(key.len()),
            };
            match alg.and_then(|a| SaSpec::new(spi, key, a)) {
                Ok(s) => Some(s),
                Err(e) => {
                    args.error_for("KEY", &e);
                    None
                }
            }
        } else {
            None
        };
        args.complete()?;
        let Some(spec) = spec else {
            return Err("bad SA".into());
        };
        if !opts.esn && seq > u64::from(u32::MAX) {
            return Err("SEQ: too large without ESN".into());
        }
        let sa = OutSa::new(&spec, &opts, seq).map_err(rclick_core::element::Errors::from)?;
        self.shared = Arc::new(Shared {
            sa: Published::new(Some(sa)),
            mtu: AtomicU32::new(mtu),
        });
        self.view = self.shared.sa.view();
        self.spec = Some(spec);
        self.seq0 = seq;
        self.opts = opts;
        self.src = src;
        self.dst = dst;
        self.ttl = ttl;
        self.dscp = dscp;
        self.pmtu_call = pmtu_call;
        Ok(())
    }
}
