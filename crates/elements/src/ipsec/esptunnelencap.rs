//! # ESPTunnelEncap
//!
//! Protects IPv4 packets with ESP in tunnel mode (RFC 4303) using an AEAD
//! algorithm: AES-GCM (RFC 4106) or ChaCha20-Poly1305 (RFC 7634).
//!
//! ## Synopsis
//! `ESPTunnelEncap(SPI, KEY, SRC, DST [, ALG, ESN, TTL, DSCP, MTU,
//! LIFETIME_PACKETS, LIFETIME_BYTES, LIFETIME, SEQ])`
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
//! 1, for an ICMPError(..., unreachable, needfrag, PMTU N) whose N is the
//! `inner_mtu` handler's value; without DF it is encapsulated (fragment the
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
//! The destination annotation is set to DST, and the network header to the
//! outer header.
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
//! ... -> ESPTunnelEncap(0x1001, 0x4c80e4c1fbe2e4a3b0e3c6f1e7e2a1b2c3d4e5f6,
//!                       192.0.2.1, 198.51.100.1) -> ...;
//! ```
//!
//! ## See also
//! ESPTunnelDecap, IPFragmenter, ICMPError

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_ipv4, parse_u32, parse_u64, parse_u8, Args};
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::wire::esp::{HEADER_LEN as ESP_LEN, PROTO_ESP};
use rclick_core::wire::icmp::{ICMP_UNREACH, ICMP_UNREACH_NEEDFRAG};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN as IP_LEN, PROTO_ICMP};
use rclick_core::wire::{EspHeader, IcmpHeader, Ipv4Header, Ipv4Repr};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::sa::{Alg, Sa, SaOptions, SaSpec, ICV_LEN, IV_LEN};

/// Outer header, ESP header, IV, trailer and ICV around an inner packet.
const OVERHEAD: usize = IP_LEN + ESP_LEN + IV_LEN + 2 + ICV_LEN;

pub struct ESPTunnelEncap {
    sa: Option<Sa>,
    opts: SaOptions,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ttl: u8,
    dscp: Option<u8>,
    mtu: u32,
    ident: u16,
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
        ESPTunnelEncap {
            sa: None,
            opts: SaOptions {
                esn: false,
                window: super::sa::MIN_WINDOW,
                lifetime: Default::default(),
            },
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            ttl: 64,
            dscp: None,
            mtu: 0,
            ident: 0,
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

impl ESPTunnelEncap {
    /// The largest inner packet whose ESP packet fits `mtu`.
    fn inner_mtu(&self) -> usize {
        if self.mtu == 0 {
            return 0;
        }
        // inner + pad + 2 is a multiple of 4 and at most mtu - 52 + 2.
        let room = (self.mtu as usize).saturating_sub(OVERHEAD - 2);
        (room & !3).saturating_sub(2)
    }
}

impl ESPTunnelEncap {
    /// An ICMP error from the unprotected side: a fragmentation-needed
    /// message about this SA's packets lowers MTU.
    fn icmp_error(&mut self, p: &Packet) -> bool {
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
            && self.sa.as_ref().is_some_and(|s| s.spi == spi);
        let mtu = u32::from(icmp.next_hop_mtu());
        let floor = (68 + OVERHEAD + 3) as u32;
        if !ours || mtu < floor || (self.mtu != 0 && mtu >= self.mtu) {
            return false;
        }
        self.mtu = mtu;
        true
    }
}

impl FilterOrDrop for ESPTunnelEncap {
    fn filter_or_drop(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        let (inner_len, tos, df) = match Ipv4Header::new_checked(p.data()) {
            Ok(ip)
                if (ip.total_len() as usize) >= ip.header_len()
                    && (ip.total_len() as usize) <= p.len() =>
            {
                (ip.total_len() as usize, ip.tos(), ip.dont_frag())
            }
            _ => {
                self.malformed_drops += 1;
                return None;
            }
        };
        let pad = Sa::pad_len(inner_len);
        let outer_len = inner_len + pad + OVERHEAD;
        if self.mtu != 0 && outer_len > self.mtu as usize && df {
            self.too_big += 1;
            return Some(Err(p));
        }
        if outer_len > 0xffff {
            self.malformed_drops += 1;
            return None;
        }
        let Some(sa) = self.sa.as_mut() else {
            self.expired_drops += 1;
            return None;
        };
        let now = ctx.recent();
        if sa.created.is_none() {
            sa.created = Some(now);
        }
        if sa.expired(now) {
            self.expired_drops += 1;
            return None;
        }
        let Some(seq) = sa.next_seq() else {
            self.expired_drops += 1;
            return None;
        };
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
        let ident = self.ident;
        self.ident = self.ident.wrapping_add(1);
        let outer = Ipv4Repr {
            src: self.src,
            dst: self.dst,
            protocol: PROTO_ESP,
            payload_len: outer_len - IP_LEN,
            ttl: self.ttl,
            tos,
            ident,
            dont_frag: df,
            ..Ipv4Repr::default()
        };
        let buf = p.writable();
        let (iph, esp) = buf.split_at_mut(IP_LEN);
        outer.emit(&mut Ipv4Header::new_unchecked(iph));
        if sa.seal(esp, seq).is_err() {
            self.malformed_drops += 1;
            return None;
        }
        sa.counters.packets += 1;
        sa.counters.bytes += inner_len as u64;
        self.packets += 1;
        self.bytes += inner_len as u64;
        p.set_network_header(0, IP_LEN);
        p.set_dst_ip_anno(self.dst);
        Some(Ok(p))
    }
}

fn install(
    e: &mut ESPTunnelEncap,
    spec: &SaSpec,
    now: Option<rclick_core::Timestamp>,
) -> Result<(), String> {
    let mut sa = e.opts.sa(spec)?;
    sa.created = now;
    e.sa = Some(sa);
    Ok(())
}

fn parse_dscp(s: &str) -> Result<u8, String> {
    let d = parse_u8(s)?;
    if d > 63 {
        return Err("DSCP must be 0 to 63".into());
    }
    Ok(d)
}

const HANDLERS: &[Handler<ESPTunnelEncap>] = &[
    Handler::read("sa", |e, ctx| {
        e.sa.as_ref()
            .map(|s| s.describe(ctx.recent()))
            .unwrap_or_default()
    }),
    Handler::read("spi", |e, _| {
        e.sa.as_ref()
            .map(|s| format!("0x{:08x}", s.spi))
            .unwrap_or_default()
    }),
    Handler::read("seq", |e, _| e.sa.as_ref().map_or(0, |s| s.seq).to_string()),
    Handler::data("packets", |e| &e.packets),
    Handler::data("bytes", |e| &e.bytes),
    Handler::data("expired_drops", |e| &e.expired_drops),
    Handler::data("malformed_drops", |e| &e.malformed_drops),
    Handler::data("too_big", |e| &e.too_big),
    Handler::read("inner_mtu", |e, _| e.inner_mtu().to_string()),
    Handler::data("pmtu_updates", |e| &e.pmtu_updates),
    Handler::data("icmp_ignored", |e| &e.icmp_ignored),
    Handler::read_write(
        "mtu",
        |e, _| e.mtu.to_string(),
        |e, v, _| {
            e.mtu = parse_u32(v.trim())?;
            Ok(())
        },
    ),
    Handler::write("replace_sa", |e, v, ctx| {
        let spec = SaSpec::parse(v)?;
        install(e, &spec, Some(ctx.recent()))
    }),
    Handler::write("remove_sa", |e, _, _| {
        e.sa = None;
        Ok(())
    }),
];

rclick_core::element_class!(ESPTunnelEncap);

impl Element for ESPTunnelEncap {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1-2/1-2"
    }

    fn processing(&self) -> &'static str {
        "ah/ah"
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if port == 0 {
            rclick_core::element::kinds::filter_or_drop_push(self, batch, ctx);
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
        rclick_core::element::kinds::filter_or_drop_pull(self, max, ctx)
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<ESPTunnelEncap>() else {
            return false;
        };
        match (self.sa.as_mut(), o.sa.as_mut()) {
            (Some(new), Some(old)) => new.continue_from(old),
            _ => false,
        }
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
        let mut sa = opts.sa(&spec).map_err(rclick_core::element::Errors::from)?;
        if !opts.esn && seq > u64::from(u32::MAX) {
            return Err("SEQ: too large without ESN".into());
        }
        sa.seq = seq;
        self.opts = opts;
        self.sa = Some(sa);
        self.src = src;
        self.dst = dst;
        self.ttl = ttl;
        self.dscp = dscp;
        self.mtu = mtu;
        Ok(())
    }
}
