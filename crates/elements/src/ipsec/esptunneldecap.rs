//! # ESPTunnelDecap
//!
//! Verifies, decrypts and decapsulates ESP tunnel-mode packets (RFC 4303)
//! protected with AES-GCM (RFC 4106) or ChaCha20-Poly1305 (RFC 7634).
//!
//! ## Synopsis
//! `ESPTunnelDecap([SPI, KEY,] [SA SPEC ..., ALG, ESN, WINDOW, OVERLAP,
//! LIFETIME_PACKETS, LIFETIME_BYTES, LIFETIME, SEQ])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, push output 1 (optional).
//!
//! ## Description
//! An rclick element (Click's IPsecESPUnencap has no AEAD algorithm; see
//! ESPTunnelEncap). Holds the inbound security association database: the
//! SAs it accepts, by SPI. Each input packet is an IPv4 packet starting at
//! its IP header, carrying ESP (protocol 50). The SA is found by SPI; the
//! sequence number (with ESN, its high half inferred as RFC 4303 Appendix
//! A2.2 says) is checked against the anti-replay window; the packet is
//! authenticated and decrypted; only then does the window move (RFC 4303
//! §3.4.3). The padding must be 1, 2, 3... and the next header 4 (IPv4);
//! the inner IPv4 packet leaves by output 0 with its network header and
//! destination annotation set. A congestion mark (CE) on the outer header
//! of an ECN-capable inner packet is copied to it, and an outer ECT(1) to
//! an inner ECT(0) (RFC 6040 §4.2; the inner header checksum is updated);
//! a packet whose outer header is CE and whose inner packet is Not-ECT is
//! dropped and counted in `ecn_drops`, as RFC 6040 requires. Dummy packets (next header 59, RFC 4303
//! §2.6) are counted and dropped.
//!
//! Packets that fail (not ESP, truncated, fragmented, unknown SPI, expired
//! SA, replayed or too old, failed integrity check, bad padding or next
//! header) are counted and leave by output 1, or are dropped when it is not
//! connected. A packet failing the integrity check is left unchanged; one
//! with a bad trailer has been decrypted. Outer fragments must be
//! reassembled first (IPReassembler).
//!
//! Threads: reached from several threads (`-j N`), the element runs as
//! one copy per thread sharing the SA database: keys read-only, per-SA
//! counters atomic, and each SA's anti-replay window lock-free. Checking
//! a sequence number before the integrity check is a read; recording it
//! after is one compare-and-swap on the word covering its block of 32
//! numbers, which fails if another thread recorded the same number first
//! (the packet, already decrypted, is then counted as a replay). So a
//! sequence number is accepted once however the threads race, without a
//! lock per SA and without sending each SA's packets to one thread.
//! Counting handlers add the copies up; handlers that change the database
//! act once for all copies. Packets from several sending threads arrive
//! somewhat out of order: use a wider WINDOW (1024 or more).
//!
//! Rekeying: `replace_sa` installs the new SA and keeps accepting the old
//! one for OVERLAP, so packets in flight under the old key still arrive.
//! A hot swap keeps the state (window, counters, lifetime clock) of each
//! configured SA whose SPI, key, algorithm and ESN setting are unchanged;
//! SAs installed by handlers and not in the new configuration are gone.
//!
//! ## Keywords
//! - **SPI**, **KEY**: one SA, as ESPTunnelEncap's (with ALG).
//! - **SA** (`SPI KEY [ALG]`, repeatable): more SAs.
//! - **ALG** (word): the algorithm of the positional SA (default from the
//!   key length).
//! - **ESN** (bool): the SAs use extended sequence numbers. Default false.
//! - **WINDOW** (64 to 65536): anti-replay window size (rounded up to a
//!   multiple of 64). Default 64.
//! - **OVERLAP** (time): how long a replaced SA is still accepted. Default
//!   30 s.
//! - **LIFETIME_PACKETS**, **LIFETIME_BYTES**, **LIFETIME**: hard
//!   lifetimes of each SA, as ESPTunnelEncap's (LIFETIME from the SA's
//!   first authentic packet, or its installation by a handler).
//! - **SEQ** (unsigned): the highest sequence number already accepted by
//!   the configured SAs (testing aid, the counterpart of ESPTunnelEncap's
//!   SEQ). Default 0.
//!
//! ## Handlers
//! - `sas` (read): one line per SA: SPI, algorithm, window, packets,
//!   bytes, replay drops, integrity failures (never the key).
//! - `sa` (read with parameter SPI): that SA's line.
//! - `packets`, `bytes` (read): packets and inner bytes forwarded (each
//!   input packet counts once: here or in one of the drop counters).
//! - `replay_drops`, `auth_failures`, `malformed_drops`,
//!   `unknown_spi_drops`, `trailer_drops`, `expired_drops`, `dummy_drops`,
//!   `ecn_drops` (read): packets refused, by reason.
//! - `add_sa` (write): `SPI KEY [ALG]` installs an SA (an existing SPI is
//!   an error).
//! - `replace_sa` (write): `OLD_SPI SPI KEY [ALG]` installs the new SA and
//!   retires the old one after OVERLAP.
//! - `remove_sa` (write): `SPI` removes that SA at once.
//! - `overlap` (read/write): OVERLAP.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> IPClassifier(ip proto 50)
//!   -> d :: ESPTunnelDecap(0x1001, 0x4c80e4c1fbe2e4a3b0e3c6f1e7e2a1b2c3d4e5f6)
//!   -> CheckIPHeader -> ...;
//! ```
//!
//! ## See also
//! ESPTunnelEncap, IPReassembler

use std::sync::Arc;
use std::time::Duration;

use rclick_core::conf::{parse_seconds, parse_u64, Args};
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::element::PerThread;
use rclick_core::wire::esp::PROTO_ESP;
use rclick_core::wire::{EspHeader, Ipv4Header};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

use super::sa::{parse_spi, Alg, EspError, InSa, Published, SaOptions, SaSpec, View};

/// The inbound security association database: the SAs, found by SPI.
type Sad = Vec<Arc<InSa>>;

pub struct ESPTunnelDecap {
    /// The database, shared by the element's copies on other threads.
    sad: Arc<Published<Sad>>,
    /// This thread's view of it.
    view: View<Sad>,
    /// A copy for another thread: handlers that change the shared
    /// database act on the element only (the router writes every copy
    /// too).
    copy: bool,
    opts: SaOptions,
    overlap: Duration,
    /// The configured SAs and SEQ, for a hot swap.
    specs: Vec<SaSpec>,
    seq0: u64,
    packets: u64,
    bytes: u64,
    replay_drops: u64,
    auth_failures: u64,
    malformed_drops: u64,
    unknown_spi_drops: u64,
    trailer_drops: u64,
    expired_drops: u64,
    dummy_drops: u64,
    ecn_drops: u64,
}

impl Default for ESPTunnelDecap {
    fn default() -> Self {
        let sad = Arc::new(Published::new(Vec::new()));
        let view = sad.view();
        ESPTunnelDecap {
            sad,
            view,
            copy: false,
            opts: SaOptions {
                esn: false,
                window: super::sa::MIN_WINDOW,
                lifetime: Default::default(),
            },
            overlap: Duration::from_secs(30),
            specs: Vec::new(),
            seq0: 0,
            packets: 0,
            bytes: 0,
            replay_drops: 0,
            auth_failures: 0,
            malformed_drops: 0,
            unknown_spi_drops: 0,
            trailer_drops: 0,
            expired_drops: 0,
            dummy_drops: 0,
            ecn_drops: 0,
        }
    }
}

impl FilterOrDrop for ESPTunnelDecap {
    fn filter_or_drop(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        if self.sad.stale(&self.view) {
            self.sad.refresh(&mut self.view);
        }
        let (hl, total, outer_ecn) = match Ipv4Header::new_checked(p.data()) {
            Ok(ip)
                if ip.protocol() == PROTO_ESP
                    && !ip.is_fragment()
                    && (ip.total_len() as usize) >= ip.header_len()
                    && (ip.total_len() as usize) <= p.len() =>
            {
                (ip.header_len(), ip.total_len() as usize, ip.ecn())
            }
            _ => {
                self.malformed_drops += 1;
                return Some(Err(p));
            }
        };
        let spi = match p.data().get(hl..total).map(EspHeader::new_checked) {
            Some(Ok(h)) => h.spi(),
            _ => {
                self.malformed_drops += 1;
                return Some(Err(p));
            }
        };
        let Some(sa) = self.view.cur.iter().find(|s| s.spi() == spi) else {
            self.unknown_spi_drops += 1;
            return Some(Err(p));
        };
        let now = ctx.recent();
        if sa.expired(now) {
            self.expired_drops += 1;
            if sa.retire_at().is_some() {
                // The overlap of a replaced SA is over: forget it (every
                // thread's next packet sees it gone).
                self.sad
                    .update(|v| v.iter().filter(|s| s.spi() != spi).cloned().collect());
            }
            return Some(Err(p));
        }
        p.take(p.len() - total);
        let buf = p.writable();
        let Some(esp) = buf.get_mut(hl..) else {
            self.malformed_drops += 1;
            return Some(Err(p));
        };
        match sa.open(esp) {
            Ok((_seq, off, inner_len, next)) => {
                // The lifetime clock of a configured SA starts with its
                // first authentic packet (a forged one must not start it).
                sa.start(now);
                if next == 59 {
                    self.dummy_drops += 1;
                    return None;
                }
                p.pull(hl + off);
                p.take(p.len() - inner_len);
                let inner = match Ipv4Header::new_checked(p.data()) {
                    Ok(ip) if next == 4 => Some((ip.header_len(), ip.dst(), ip.ecn())),
                    _ => None,
                };
                let Some((ihl, dst, inner_ecn)) = inner else {
                    self.trailer_drops += 1;
                    return Some(Err(p));
                };
                // RFC 6040 §4.2 (Figure 4): congestion marked on the outer
                // header of an ECN-capable inner packet carries over (and
                // an outer ECT(1) over an inner ECT(0)); a CE mark over a
                // Not-ECT inner packet cannot be passed on, so the packet
                // is dropped, as the congestion signal requires.
                let ecn = match (outer_ecn, inner_ecn) {
                    (3, 0) => {
                        self.ecn_drops += 1;
                        return Some(Err(p));
                    }
                    (3, 1 | 2) => Some(3),
                    (1, 2) => Some(1),
                    _ => None,
                };
                if let Some(ecn) = ecn {
                    let mut ip = Ipv4Header::new_unchecked(&mut p.writable()[..ihl]);
                    ip.set_ecn(ecn);
                    ip.fill_checksum();
                }
                sa.count(inner_len as u64);
                self.packets += 1;
                self.bytes += inner_len as u64;
                p.set_network_header(0, ihl);
                p.set_dst_ip_anno(dst);
                Some(Ok(p))
            }
            Err(e) => {
                match e {
                    EspError::Replay => {
                        sa.count_replay();
                        self.replay_drops += 1;
                    }
                    EspError::Auth => {
                        sa.count_auth_failure();
                        self.auth_failures += 1;
                    }
                    EspError::BadTrailer => self.trailer_drops += 1,
                    EspError::Malformed => self.malformed_drops += 1,
                    EspError::Expired => self.expired_drops += 1,
                }
                Some(Err(p))
            }
        }
    }
}

impl ESPTunnelDecap {
    /// Installs an SA from `spec`, started at `now`, beside the others.
    fn add(&mut self, spec: &SaSpec, now: Option<Timestamp>) -> Result<(), String> {
        let sad = self.sad.get();
        if sad.iter().any(|s| s.spi() == spec.spi) {
            return Err(format!("SPI 0x{:08x} already installed", spec.spi));
        }
        let sa = InSa::new(spec, &self.opts)?;
        sa.set_created(now);
        let sa = Arc::new(sa);
        self.sad.update(|v| {
            let mut v = v.clone();
            v.push(sa);
            v
        });
        Ok(())
    }
}

fn read_sa(e: &ESPTunnelDecap, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
    let spi = parse_spi(param.ok_or("expected SPI")?)?;
    e.sad
        .get()
        .iter()
        .find(|s| s.spi() == spi)
        .map(|s| s.describe(ctx.recent()))
        .ok_or_else(|| format!("no SA with SPI 0x{spi:08x}"))
}

fn replace_sa(e: &mut ESPTunnelDecap, v: &str, ctx: &mut Ctx) -> Result<(), String> {
    let v = v.trim();
    let (old, rest) = v
        .split_once(char::is_whitespace)
        .ok_or("expected 'OLD_SPI SPI KEY [ALG]'")?;
    let old = parse_spi(old)?;
    let spec = SaSpec::parse(rest)?;
    if e.copy {
        return Ok(());
    }
    let Some(old_sa) = e.sad.get().iter().find(|s| s.spi() == old).cloned() else {
        return Err(format!("no SA with SPI 0x{old:08x}"));
    };
    let now = ctx.recent();
    e.add(&spec, Some(now))?;
    if e.overlap.is_zero() {
        e.sad
            .update(|v| v.iter().filter(|s| s.spi() != old).cloned().collect());
    } else {
        old_sa.set_retire_at(Some(now + e.overlap));
    }
    Ok(())
}

const HANDLERS: &[Handler<ESPTunnelDecap>] = &[
    Handler::read("sas", |e, ctx| {
        let now = ctx.recent();
        let mut out = String::new();
        for s in e.sad.get().iter() {
            out.push_str(&s.describe(now));
            out.push('\n');
        }
        out
    }),
    Handler::read_param("sa", read_sa),
    Handler::data("packets", |e| &e.packets),
    Handler::data("bytes", |e| &e.bytes),
    Handler::data("replay_drops", |e| &e.replay_drops),
    Handler::data("auth_failures", |e| &e.auth_failures),
    Handler::data("malformed_drops", |e| &e.malformed_drops),
    Handler::data("unknown_spi_drops", |e| &e.unknown_spi_drops),
    Handler::data("trailer_drops", |e| &e.trailer_drops),
    Handler::data("expired_drops", |e| &e.expired_drops),
    Handler::data("dummy_drops", |e| &e.dummy_drops),
    Handler::data("ecn_drops", |e| &e.ecn_drops),
    Handler::write("add_sa", |e, v, ctx| {
        let spec = SaSpec::parse(v)?;
        if e.copy {
            return Ok(());
        }
        e.add(&spec, Some(ctx.recent()))
    }),
    Handler::write("replace_sa", replace_sa),
    Handler::write("remove_sa", |e, v, _| {
        let spi = parse_spi(v)?;
        if e.copy {
            return Ok(());
        }
        if !e.sad.get().iter().any(|s| s.spi() == spi) {
            return Err(format!("no SA with SPI 0x{spi:08x}"));
        }
        e.sad
            .update(|v| v.iter().filter(|s| s.spi() != spi).cloned().collect());
        Ok(())
    }),
    Handler::read_write(
        "overlap",
        |e, _| Timestamp::from_duration(e.overlap).to_string(),
        |e, v, _| {
            e.overlap = parse_seconds(v.trim())?;
            Ok(())
        },
    ),
];

rclick_core::element_class!(ESPTunnelDecap);

impl PerThread for ESPTunnelDecap {
    const SUMMED: &'static [&'static str] = &[
        "packets",
        "bytes",
        "replay_drops",
        "auth_failures",
        "malformed_drops",
        "unknown_spi_drops",
        "trailer_drops",
        "expired_drops",
        "dummy_drops",
        "ecn_drops",
    ];

    /// A copy shares the SA database (keys, windows, per-SA counters);
    /// its own counts are added to the element's when read.
    fn fresh_copy(&self) -> Option<Self> {
        Some(ESPTunnelDecap {
            sad: Arc::clone(&self.sad),
            view: self.sad.view(),
            copy: true,
            opts: self.opts,
            overlap: self.overlap,
            ..ESPTunnelDecap::default()
        })
    }

    fn absorb(&mut self, c: Self) {
        self.packets += c.packets;
        self.bytes += c.bytes;
        self.replay_drops += c.replay_drops;
        self.auth_failures += c.auth_failures;
        self.malformed_drops += c.malformed_drops;
        self.unknown_spi_drops += c.unknown_spi_drops;
        self.trailer_drops += c.trailer_drops;
        self.expired_drops += c.expired_drops;
        self.dummy_drops += c.dummy_drops;
        self.ecn_drops += c.ecn_drops;
    }
}

impl ESPTunnelDecap {
    /// The configured SAs, fresh.
    fn configured(&self) -> Result<Sad, String> {
        let mut sas = Vec::with_capacity(self.specs.len());
        for s in &self.specs {
            let sa = InSa::new(s, &self.opts)?;
            if self.seq0 != 0 {
                sa.window.update(self.seq0);
            }
            sas.push(sa);
        }
        Ok(sas.into_iter().map(Arc::new).collect())
    }
}

impl Element for ESPTunnelDecap {
    rclick_core::element_kind!(filter_or_drop);
    rclick_core::handlers!(HANDLERS);
    rclick_core::filter_ports!();
    rclick_core::per_thread!();

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<ESPTunnelDecap>() else {
            return false;
        };
        let old_sad = o.sad.get();
        let mut took = false;
        let mut sas = Vec::with_capacity(self.specs.len());
        for s in &self.specs {
            let Ok(mut sa) = InSa::new(s, &self.opts) else {
                return false;
            };
            if self.seq0 != 0 {
                sa.window.update(self.seq0);
            }
            if let Some(old) = old_sad.iter().find(|x| x.spi() == s.spi) {
                took |= sa.continue_from(old);
            }
            sas.push(Arc::new(sa));
        }
        if took {
            self.sad.publish(sas);
        }
        took
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let spi = args.read_p_with("SPI", parse_spi);
        let key = args.read_p_with("KEY", super::sa::parse_key);
        let alg = args.read_with("ALG", rclick_core::conf::parse_word);
        let mut specs = args.read_all_with("SA", SaSpec::parse);
        let opts = SaOptions::read(&mut args);
        let overlap = args.read_or_with("OVERLAP", parse_seconds, Duration::from_secs(30));
        let seq = args.read_or_with("SEQ", parse_u64, 0);
        match (spi, key) {
            (Some(spi), Some(key)) => {
                let alg = match alg {
                    Some(a) => Alg::parse_for_key(&a, key.len()),
                    None => Alg::for_keymat_len(key.len()),
                };
                match alg.and_then(|a| SaSpec::new(spi, key, a)) {
                    Ok(s) => specs.insert(0, s),
                    Err(e) => args.error_for("KEY", &e),
                }
            }
            (Some(_), None) => args.error_for("KEY", "required argument missing"),
            _ => {}
        }
        args.complete()?;
        if !opts.esn && seq > u64::from(u32::MAX) {
            return Err("SEQ: too large without ESN".into());
        }
        for (i, s) in specs.iter().enumerate() {
            if specs[..i].iter().any(|x| x.spi == s.spi) {
                return Err(format!("SA: SPI 0x{:08x} given twice", s.spi).into());
            }
        }
        self.specs = specs;
        self.seq0 = seq;
        self.opts = opts;
        self.overlap = overlap;
        let sas = self
            .configured()
            .map_err(rclick_core::element::Errors::from)?;
        self.sad = Arc::new(Published::new(sas));
        self.view = self.sad.view();
        Ok(())
    }
}
