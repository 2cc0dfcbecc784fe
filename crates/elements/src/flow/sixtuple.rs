//! Six-tuple filters and packet keys (not an element class): the filter
//! SPEC syntax, the most-specific order between filters, the brute-force
//! reference matcher the DAG is tested against, and a ClassBench filter
//! set parser for tests and benchmarks.
//!
//! # SPEC
//! A filter is a space-separated list of fields, each at most once, in any
//! order; a missing field is a wildcard:
//!
//! ```text
//! src ADDR[/LEN]   dst ADDR[/LEN]      (a prefix; no /LEN means /32)
//! proto NAME|NUM   (tcp, udp, icmp, igmp, gre, esp, ah, sctp, or 0-255)
//! sport P[-Q]      dport P[-Q]         (a port or an inclusive range)
//! iif N            (the incoming interface: the PAINT annotation, 0-255)
//! ```
//!
//! `-`, `any` or `all` alone (or an empty SPEC) matches every packet.
//! Host bits below the prefix length are ignored (`src 10.1.2.3/8` is
//! `src 10.0.0.0/8`); `/0` and the range `0-65535` are wildcards. A filter
//! is printed in a canonical form, fields in the order above and
//! wildcards left out (`src 10.0.0.0/8 proto tcp dport 80`, or `-`).
//!
//! # Most specific
//! Filters are ordered as the Router Plugins DAG orders them: field by
//! field, in the order source address, destination address, protocol,
//! source port, destination port, incoming interface. The filter more
//! specific in the first field where two differ wins: a longer prefix, a
//! given protocol over a wildcard, a narrower port range (fewer ports),
//! a given interface over a wildcard. So ambiguities (A more specific in
//! the source, B in the destination port) go to the filter more specific
//! in the earlier field, which is what the DAG's per-level best match with
//! backtracking finds: it follows the longest matching source prefix
//! first and falls back to shorter ones only when nothing below matches.
//! Two different filters can be equally specific in every field only
//! through overlapping port ranges of equal width; the one installed first
//! wins. Identical filters are refused.

use std::fmt;
use std::net::Ipv4Addr;

use rclick_core::wire::Ipv4Header;
use rclick_core::Packet;

/// The exact six-tuple of a packet (addresses and ports in host order).
/// Packets without ports (not TCP, UDP, SCTP, DCCP, or a later fragment)
/// have ports 0.
///
/// The fields are laid out without padding between them (`repr(C)`, the
/// 16-bit ports before the bytes), so that comparing two keys is a
/// comparison of 14 contiguous bytes, which the compiler merges into two
/// wide compares instead of six.
#[derive(Clone, Copy, Eq, Debug, Default)]
#[repr(C)]
pub struct Key {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
    pub iif: u8,
}

impl PartialEq for Key {
    /// Field by field, which the compiler merges into two wide compares;
    /// always inline (the derived one was left as a call on the batch
    /// paths).
    #[inline(always)]
    fn eq(&self, o: &Key) -> bool {
        self.src == o.src
            && self.dst == o.dst
            && self.sport == o.sport
            && self.dport == o.dport
            && self.proto == o.proto
            && self.iif == o.iif
    }
}

impl std::hash::Hash for Key {
    /// Two words, so that a multiplicative hasher mixes twice, not six
    /// times.
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(u64::from(self.src) << 32 | u64::from(self.dst));
        h.write_u64(
            u64::from(self.proto) << 40
                | u64::from(self.iif) << 32
                | u64::from(self.sport) << 16
                | u64::from(self.dport),
        );
    }
}

/// Why a packet has no key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyError {
    /// Not IPv4, or an IP header that does not fit.
    NotIp,
    /// A first fragment (or unfragmented packet) of a protocol with ports
    /// too short to hold them.
    Truncated,
}

/// Protocols whose first four transport bytes are the two ports.
fn has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 33 | 132 | 136)
}

impl Key {
    /// The key of `p`: its network header (or, when none is set, its data
    /// from the start) is an IPv4 header; the incoming interface is the
    /// PAINT annotation.
    #[inline(always)]
    pub fn of(p: &Packet) -> Result<Key, KeyError> {
        let data = p.network_header().unwrap_or_else(|| p.data());
        let ip = Ipv4Header::new_checked(data).map_err(|_| KeyError::NotIp)?;
        let hl = ip.header_len();
        // The checked view guarantees 20 header bytes; read them as an
        // array (no further bounds checks).
        let Some(h) = ip.header().first_chunk::<20>() else {
            return Err(KeyError::NotIp);
        };
        let proto = h[9];
        let (mut sport, mut dport) = (0, 0);
        if has_ports(proto) && u16::from_be_bytes([h[6], h[7]]) & 0x1fff == 0 {
            let Some(t) = data.get(hl..).and_then(|t| t.first_chunk::<4>()) else {
                return Err(KeyError::Truncated);
            };
            sport = u16::from_be_bytes([t[0], t[1]]);
            dport = u16::from_be_bytes([t[2], t[3]]);
        }
        Ok(Key {
            src: u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
            dst: u32::from_be_bytes([h[16], h[17], h[18], h[19]]),
            proto,
            sport,
            dport,
            iif: p.paint_anno(),
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {}",
            Ipv4Addr::from(self.src),
            Ipv4Addr::from(self.dst),
            self.proto,
            self.sport,
            self.dport,
            self.iif
        )
    }
}

/// A six-tuple filter. Prefix values have their host bits cleared;
/// `proto`/`iif` `None` is a wildcard; a port range `(0, 65535)` is a
/// wildcard.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Spec {
    pub src: u32,
    pub src_len: u8,
    pub dst: u32,
    pub dst_len: u8,
    pub proto: Option<u8>,
    pub sport: (u16, u16),
    pub dport: (u16, u16),
    pub iif: Option<u8>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec::ANY
    }
}

/// The mask of a prefix of `len` bits.
#[inline]
pub fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len.min(32)))
    }
}

/// The ordering key of a filter: greater is more specific (see the module
/// doc). Compared lexicographically.
pub type Rank = (u8, u8, bool, u32, u32, bool);

const PROTOS: &[(&str, u8)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("ipip", 4),
    ("tcp", 6),
    ("udp", 17),
    ("dccp", 33),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("sctp", 132),
];

impl Spec {
    /// The filter matching everything.
    pub const ANY: Spec = Spec {
        src: 0,
        src_len: 0,
        dst: 0,
        dst_len: 0,
        proto: None,
        sport: (0, 65535),
        dport: (0, 65535),
        iif: None,
    };

    /// Whether `k` matches.
    #[inline]
    pub fn matches(&self, k: &Key) -> bool {
        (k.src ^ self.src) & mask(self.src_len) == 0
            && (k.dst ^ self.dst) & mask(self.dst_len) == 0
            && self.proto.is_none_or(|p| p == k.proto)
            && (self.sport.0..=self.sport.1).contains(&k.sport)
            && (self.dport.0..=self.dport.1).contains(&k.dport)
            && self.iif.is_none_or(|i| i == k.iif)
    }

    /// The ordering key: longer prefixes, given protocol, narrower port
    /// ranges, given interface are more specific, earlier fields first.
    #[inline]
    pub fn rank(&self) -> Rank {
        (
            self.src_len,
            self.dst_len,
            self.proto.is_some(),
            65535 - u32::from(self.sport.1 - self.sport.0),
            65535 - u32::from(self.dport.1 - self.dport.0),
            self.iif.is_some(),
        )
    }

    /// Clears host bits below the prefix lengths.
    pub fn normalized(mut self) -> Spec {
        self.src &= mask(self.src_len);
        self.dst &= mask(self.dst_len);
        self
    }

    /// Parses a SPEC (see the module doc).
    pub fn parse(s: &str) -> Result<Spec, String> {
        let words: Vec<&str> = s.split_ascii_whitespace().collect();
        if words.is_empty() || (words.len() == 1 && matches!(words[0], "-" | "any" | "all")) {
            return Ok(Spec::ANY);
        }
        let mut spec = Spec::ANY;
        let mut seen = [false; 6];
        let mut it = words.iter();
        while let Some(&w) = it.next() {
            let field = match w {
                "src" => 0,
                "dst" => 1,
                "proto" => 2,
                "sport" => 3,
                "dport" => 4,
                "iif" => 5,
                _ => {
                    return Err(format!(
                    "filter: expected 'src', 'dst', 'proto', 'sport', 'dport' or 'iif', not '{w}'"
                ))
                }
            };
            if std::mem::replace(&mut seen[field], true) {
                return Err(format!("filter: '{w}' given twice"));
            }
            let Some(&v) = it.next() else {
                return Err(format!("filter: '{w}' needs a value"));
            };
            match field {
                0 => (spec.src, spec.src_len) = parse_prefix(v)?,
                1 => (spec.dst, spec.dst_len) = parse_prefix(v)?,
                2 => spec.proto = Some(parse_proto(v)?),
                3 => spec.sport = parse_range(v)?,
                4 => spec.dport = parse_range(v)?,
                _ => {
                    spec.iif = Some(
                        v.parse::<u8>()
                            .map_err(|_| format!("filter: bad interface '{v}' (0-255)"))?,
                    )
                }
            }
        }
        Ok(spec.normalized())
    }
}

fn parse_prefix(v: &str) -> Result<(u32, u8), String> {
    let (a, len) = match v.split_once('/') {
        Some((a, l)) => {
            let len: u8 = l
                .parse()
                .ok()
                .filter(|&n| n <= 32)
                .ok_or_else(|| format!("filter: bad prefix length in '{v}'"))?;
            (a, len)
        }
        None => (v, 32),
    };
    let addr: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("filter: bad IP address '{a}'"))?;
    Ok((u32::from(addr) & mask(len), len))
}

fn parse_proto(v: &str) -> Result<u8, String> {
    if let Some(&(_, n)) = PROTOS.iter().find(|(name, _)| name.eq_ignore_ascii_case(v)) {
        return Ok(n);
    }
    v.parse::<u8>()
        .map_err(|_| format!("filter: bad protocol '{v}'"))
}

fn parse_range(v: &str) -> Result<(u16, u16), String> {
    let port = |s: &str| {
        s.parse::<u16>()
            .map_err(|_| format!("filter: bad port '{s}' (0-65535)"))
    };
    match v.split_once('-') {
        Some((a, b)) => {
            let (lo, hi) = (port(a)?, port(b)?);
            if lo > hi {
                return Err(format!("filter: empty port range '{v}'"));
            }
            Ok((lo, hi))
        }
        None => {
            let p = port(v)?;
            Ok((p, p))
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        let mut field = |f: &mut fmt::Formatter<'_>, s: fmt::Arguments| {
            let r = write!(f, "{sep}{s}");
            sep = " ";
            r
        };
        if self.src_len > 0 {
            field(
                f,
                format_args!("src {}/{}", Ipv4Addr::from(self.src), self.src_len),
            )?;
        }
        if self.dst_len > 0 {
            field(
                f,
                format_args!("dst {}/{}", Ipv4Addr::from(self.dst), self.dst_len),
            )?;
        }
        if let Some(p) = self.proto {
            match PROTOS.iter().find(|&&(_, n)| n == p) {
                Some((name, _)) => field(f, format_args!("proto {name}"))?,
                None => field(f, format_args!("proto {p}"))?,
            }
        }
        for (name, (lo, hi)) in [("sport", self.sport), ("dport", self.dport)] {
            if (lo, hi) == (lo, lo) {
                field(f, format_args!("{name} {lo}"))?;
            } else if (lo, hi) != (0, 65535) {
                field(f, format_args!("{name} {lo}-{hi}"))?;
            }
        }
        if let Some(i) = self.iif {
            field(f, format_args!("iif {i}"))?;
        }
        if sep.is_empty() {
            write!(f, "-")?;
        }
        Ok(())
    }
}

/// Whether filter `a` (installed as number `ia`) beats filter `b` (number
/// `ib`): more specific, or equally specific and installed first.
#[inline]
pub fn beats(a: &Spec, ia: u32, b: &Spec, ib: u32) -> bool {
    (a.rank(), std::cmp::Reverse(ia)) > (b.rank(), std::cmp::Reverse(ib))
}

/// The brute-force reference: scans every filter and returns the index of
/// the most specific one matching `k` (ties to the lower index).
pub fn brute_force(filters: &[Spec], k: &Key) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, f) in filters.iter().enumerate() {
        if f.matches(k) && best.is_none_or(|b| beats(f, i as u32, &filters[b], b as u32)) {
            best = Some(i);
        }
    }
    best
}

/// Parses a ClassBench filter set (`@src/len dst/len sp : sp dp : dp
/// proto/mask ...` per line; extra fields ignored). A protocol mask of 0 is
/// a wildcard. Duplicate filters are dropped (the first is kept), since a
/// gate refuses identical filters.
pub fn parse_classbench(text: &str) -> Result<Vec<Spec>, String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix('@') else {
            continue;
        };
        let w: Vec<&str> = rest.split_ascii_whitespace().collect();
        let bad = || format!("classbench line {}: '{line}'", n + 1);
        if w.len() < 9 || w[3] != ":" || w[6] != ":" {
            return Err(bad());
        }
        let (src, src_len) = parse_prefix(w[0]).map_err(|_| bad())?;
        let (dst, dst_len) = parse_prefix(w[1]).map_err(|_| bad())?;
        let p = |s: &str| s.parse::<u16>().map_err(|_| bad());
        let sport = (p(w[2])?, p(w[4])?);
        let dport = (p(w[5])?, p(w[7])?);
        let (pv, pm) = w[8].split_once('/').ok_or_else(bad)?;
        let hex = |s: &str| u8::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| bad());
        let proto = if hex(pm)? == 0 { None } else { Some(hex(pv)?) };
        if sport.0 > sport.1 || dport.0 > dport.1 {
            return Err(bad());
        }
        let spec = Spec {
            src,
            src_len,
            dst,
            dst_len,
            proto,
            sport,
            dport,
            iif: None,
        };
        if seen.insert(spec) {
            out.push(spec);
        }
    }
    Ok(out)
}
