//! Network addresses with Click's syntax (IPAddressArg, IPPrefixArg,
//! IP6AddressArg, IP6PrefixArg, EtherAddressArg).
//!
//! Click also resolves names through AddressInfo elements; that needs the
//! router and is left to callers.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use rclick_lang::args::split_words;

use crate::wire::EtherAddr;

/// Click's IPAddressArg::basic_parse: up to four dot-separated decimal
/// bytes from the start of `s`. Returns the bytes, how many were read, and
/// how much of `s` was consumed.
fn ipv4_parts(s: &[u8]) -> ([u8; 4], usize, usize) {
    let mut value = [0u8; 4];
    let mut n = 0;
    let mut pos = 0;
    while n < 4 && pos < s.len() {
        let mut t = if n == 0 {
            pos
        } else if s[pos] == b'.' {
            pos + 1
        } else {
            break;
        };
        if t >= s.len() || !s[t].is_ascii_digit() {
            break;
        }
        let mut part: u32 = 0;
        while t < s.len() && s[t].is_ascii_digit() && part <= 255 {
            part = part * 10 + u32::from(s[t] - b'0');
            t += 1;
        }
        if part > 255 {
            break;
        }
        value[n] = part as u8;
        n += 1;
        pos = t;
    }
    (value, n, pos)
}

/// Parses a dotted-quad IPv4 address. Each part is decimal (leading zeros
/// are decimal too, as in Click: `010.0.0.1` is 10.0.0.1).
pub fn parse_ipv4(s: &str) -> Result<Ipv4Addr, String> {
    match ipv4_parts(s.as_bytes()) {
        (v, 4, used) if used == s.len() => Ok(Ipv4Addr::from(v)),
        _ => Err("expected IP address".into()),
    }
}

/// Parses a space-separated list of IPv4 addresses (Click's IPAddressArg
/// into a vector). An empty string gives an empty list.
pub fn parse_ipv4_list(s: &str) -> Result<Vec<Ipv4Addr>, String> {
    split_words(s).iter().map(|w| parse_ipv4(w)).collect()
}

fn prefix_mask_v4(len: u32) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    }
}

/// An IPv4 address with a mask, as written (the host bits of `addr` are
/// kept; use [`Ipv4Prefix::network`] to clear them). The mask need not be
/// contiguous: Click accepts any dotted-quad mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Prefix {
    /// The address part.
    pub addr: Ipv4Addr,
    /// The mask; `255.255.255.255` for a bare address.
    pub mask: Ipv4Addr,
}

impl Ipv4Prefix {
    /// Builds a prefix from an address and a prefix length (clamped to 32).
    pub fn new(addr: Ipv4Addr, len: u8) -> Self {
        Ipv4Prefix {
            addr,
            mask: Ipv4Addr::from(prefix_mask_v4(u32::from(len))),
        }
    }

    /// The prefix length, or `None` when the mask is not contiguous.
    pub fn prefix_len(&self) -> Option<u8> {
        let m = u32::from(self.mask);
        let len = m.leading_ones();
        (prefix_mask_v4(len) == m).then_some(len as u8)
    }

    /// The address with host bits cleared.
    pub fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & u32::from(self.mask))
    }

    /// Whether `ip` matches this prefix.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        let m = u32::from(self.mask);
        u32::from(ip) & m == u32::from(self.addr) & m
    }
}

impl fmt::Display for Ipv4Prefix {
    /// Click's `unparse_with_mask`: `addr/len`, or `addr/mask` for a
    /// non-contiguous mask.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix_len() {
            Some(l) => write!(f, "{}/{}", self.addr, l),
            None => write!(f, "{}/{}", self.addr, self.mask),
        }
    }
}

/// Parses the `/len` or `/mask` part shared by IPv4 and IPv6 prefixes:
/// decimal length (Click's IntArg(10)) up to `max`, else an address mask.
fn prefix_len_part(s: &str, max: u64) -> Option<u64> {
    super::num::parse_u64_radix(s, 10)
        .ok()
        .filter(|&l| l <= max)
}

fn ipv4_prefix_with_slash(s: &str) -> Option<Ipv4Prefix> {
    let slash = s.rfind('/')?;
    let (a, m) = (&s[..slash], &s[slash + 1..]);
    if a.is_empty() || m.is_empty() {
        return None;
    }
    let (addr, nbytes, used) = ipv4_parts(a.as_bytes());
    if used != a.len() || nbytes == 0 {
        return None;
    }
    let mask = match prefix_len_part(m, 32) {
        Some(len) => prefix_mask_v4(len as u32),
        None => u32::from(parse_ipv4(m).ok()?),
    };
    // A short address ("10/8", "18.26.4/24") may not have mask bits past
    // the bytes actually written.
    if nbytes < 4 && mask & prefix_mask_v4(nbytes as u32 * 8) != mask {
        return None;
    }
    Some(Ipv4Prefix {
        addr: Ipv4Addr::from(addr),
        mask: Ipv4Addr::from(mask),
    })
}

/// Parses an IPv4 prefix (Click's IPPrefixArg): `a.b.c.d/len`,
/// `a.b.c.d/m.a.s.k`, or a short address with a mask that only covers the
/// written bytes (`10/8`, `18.26.4/24`). A bare address is rejected; see
/// [`parse_ipv4_addr_or_prefix`].
pub fn parse_ipv4_prefix(s: &str) -> Result<Ipv4Prefix, String> {
    ipv4_prefix_with_slash(s).ok_or_else(|| "expected IP prefix".into())
}

/// Parses an IPv4 prefix or a bare address meaning `/32` (Click's
/// `IPPrefixArg(true)`).
pub fn parse_ipv4_addr_or_prefix(s: &str) -> Result<Ipv4Prefix, String> {
    if let Some(p) = ipv4_prefix_with_slash(s) {
        return Ok(p);
    }
    match parse_ipv4(s) {
        Ok(addr) => Ok(Ipv4Prefix {
            addr,
            mask: Ipv4Addr::BROADCAST,
        }),
        Err(_) => Err("expected IP address or prefix".into()),
    }
}

/// Parses an IPv6 address in standard notation (`::1`, `fe80::1`,
/// `::ffff:1.2.3.4`).
pub fn parse_ipv6(s: &str) -> Result<Ipv6Addr, String> {
    Ipv6Addr::from_str(s).map_err(|_| "expected IPv6 address".into())
}

fn prefix_mask_v6(len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len.min(128))
    }
}

/// An IPv6 address with a mask, as written (host bits kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Prefix {
    /// The address part.
    pub addr: Ipv6Addr,
    /// The mask; all ones for a bare address.
    pub mask: Ipv6Addr,
}

impl Ipv6Prefix {
    /// Builds a prefix from an address and a prefix length (clamped to 128).
    pub fn new(addr: Ipv6Addr, len: u8) -> Self {
        Ipv6Prefix {
            addr,
            mask: Ipv6Addr::from(prefix_mask_v6(u32::from(len))),
        }
    }

    /// The prefix length, or `None` when the mask is not contiguous.
    pub fn prefix_len(&self) -> Option<u8> {
        let m = u128::from(self.mask);
        let len = m.leading_ones();
        (prefix_mask_v6(len) == m).then_some(len as u8)
    }

    /// The address with host bits cleared.
    pub fn network(&self) -> Ipv6Addr {
        Ipv6Addr::from(u128::from(self.addr) & u128::from(self.mask))
    }

    /// Whether `ip` matches this prefix.
    pub fn contains(&self, ip: Ipv6Addr) -> bool {
        let m = u128::from(self.mask);
        u128::from(ip) & m == u128::from(self.addr) & m
    }
}

impl fmt::Display for Ipv6Prefix {
    /// `addr/len`, or `addr/mask` for a non-contiguous mask.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix_len() {
            Some(l) => write!(f, "{}/{}", self.addr, l),
            None => write!(f, "{}/{}", self.addr, self.mask),
        }
    }
}

fn ipv6_prefix_with_slash(s: &str) -> Option<Ipv6Prefix> {
    let slash = s.rfind('/')?;
    let addr = Ipv6Addr::from_str(&s[..slash]).ok()?;
    let m = &s[slash + 1..];
    let mask = match prefix_len_part(m, 128) {
        Some(len) => prefix_mask_v6(len as u32),
        None => u128::from(Ipv6Addr::from_str(m).ok()?),
    };
    Some(Ipv6Prefix {
        addr,
        mask: Ipv6Addr::from(mask),
    })
}

/// Parses an IPv6 prefix: `addr/len` (0..=128) or `addr/mask`.
pub fn parse_ipv6_prefix(s: &str) -> Result<Ipv6Prefix, String> {
    ipv6_prefix_with_slash(s).ok_or_else(|| "expected IPv6 prefix".into())
}

/// Parses an IPv6 prefix or a bare address meaning `/128`.
pub fn parse_ipv6_addr_or_prefix(s: &str) -> Result<Ipv6Prefix, String> {
    if let Some(p) = ipv6_prefix_with_slash(s) {
        return Ok(p);
    }
    match Ipv6Addr::from_str(s) {
        Ok(addr) => Ok(Ipv6Prefix::new(addr, 128)),
        Err(_) => Err("expected IPv6 address or prefix".into()),
    }
}

/// Ethernet addresses read as [`parse_ether`] reads them.
impl FromStr for EtherAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_ether(s)
    }
}

/// Parses an Ethernet address: six groups of one or two hex digits
/// separated consistently by `:` or `-` (`00:01:02:03:04:05`,
/// `00-01-02-03-04-05`, `0:1:2:3:4:5`).
pub fn parse_ether(s: &str) -> Result<EtherAddr, String> {
    let bad = || String::from("expected Ethernet address");
    let mut out = [0u8; 6];
    let mut group = 0;
    let mut ndigits = 0;
    let mut sep: Option<u8> = None;
    for &c in s.as_bytes() {
        if let Some(d) = (c as char).to_digit(16) {
            if ndigits == 2 {
                return Err(bad());
            }
            out[group] = out[group] << 4 | d as u8;
            ndigits += 1;
        } else if (c == b':' || c == b'-') && sep.unwrap_or(c) == c {
            if ndigits == 0 || group == 5 {
                return Err(bad());
            }
            sep = Some(c);
            group += 1;
            ndigits = 0;
        } else {
            return Err(bad());
        }
    }
    if group == 5 && ndigits > 0 {
        Ok(EtherAddr(out))
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn ipv4() {
        assert_eq!(parse_ipv4("1.2.3.4"), Ok(ip("1.2.3.4")));
        assert_eq!(parse_ipv4("0.0.0.0"), Ok(ip("0.0.0.0")));
        assert_eq!(parse_ipv4("255.255.255.255"), Ok(ip("255.255.255.255")));
        assert_eq!(parse_ipv4("010.001.0.1"), Ok(ip("10.1.0.1")));
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "1.2.3.256",
            "1..2.3",
            "1.2.3.4 ",
            " 1.2.3.4",
            "a.b.c.d",
            "1.2.3.",
            ".1.2.3",
            "1.2.3.4/8",
            "99999999999.1.1.1",
            "-1.2.3.4",
        ] {
            assert_eq!(
                parse_ipv4(bad),
                Err("expected IP address".into()),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_ipv4_list("1.2.3.4  5.6.7.8"),
            Ok(vec![ip("1.2.3.4"), ip("5.6.7.8")])
        );
        assert_eq!(parse_ipv4_list(""), Ok(vec![]));
        assert!(parse_ipv4_list("1.2.3.4 x").is_err());
    }

    #[test]
    fn ipv4_prefixes() {
        let p = parse_ipv4_prefix("10.0.0.1/8").unwrap();
        assert_eq!(p.addr, ip("10.0.0.1"));
        assert_eq!(p.mask, ip("255.0.0.0"));
        assert_eq!(p.prefix_len(), Some(8));
        assert_eq!(p.network(), ip("10.0.0.0"));
        assert!(p.contains(ip("10.9.9.9")));
        assert!(!p.contains(ip("11.0.0.0")));
        assert_eq!(p.to_string(), "10.0.0.1/8");
        let p = parse_ipv4_prefix("18.26.4.0/255.255.255.0").unwrap();
        assert_eq!(p.prefix_len(), Some(24));
        let p = parse_ipv4_prefix("1.2.3.4/255.0.255.0").unwrap();
        assert_eq!(p.prefix_len(), None);
        assert_eq!(p.to_string(), "1.2.3.4/255.0.255.0");
        assert_eq!(parse_ipv4_prefix("0.0.0.0/0").unwrap().mask, ip("0.0.0.0"));
        assert_eq!(
            parse_ipv4_prefix("1.2.3.4/32").unwrap().mask,
            ip("255.255.255.255")
        );
        let p = parse_ipv4_prefix("10/8").unwrap();
        assert_eq!((p.addr, p.prefix_len()), (ip("10.0.0.0"), Some(8)));
        let p = parse_ipv4_prefix("18.26.4/24").unwrap();
        assert_eq!((p.addr, p.prefix_len()), (ip("18.26.4.0"), Some(24)));
        for bad in [
            "",
            "1.2.3.4",
            "1.2.3.4/",
            "/8",
            "1.2.3.4/33",
            "10/16",
            "1.2.3.4/-1",
            "1.2.3.4/8/8",
            "1.2.3.4/x",
            "1.2.3/255.255.255.255",
            "1.2.3.4/0x8",
        ] {
            assert_eq!(
                parse_ipv4_prefix(bad),
                Err("expected IP prefix".into()),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_ipv4_prefix("1.2.3.4/+8").unwrap().prefix_len(),
            Some(8)
        );
        assert_eq!(
            parse_ipv4_prefix("1.2.3.4/08").unwrap().prefix_len(),
            Some(8)
        );
    }

    #[test]
    fn ipv4_addr_or_prefix() {
        let p = parse_ipv4_addr_or_prefix("1.2.3.4").unwrap();
        assert_eq!((p.addr, p.prefix_len()), (ip("1.2.3.4"), Some(32)));
        let p = parse_ipv4_addr_or_prefix("1.2.3.0/24").unwrap();
        assert_eq!(p.prefix_len(), Some(24));
        assert_eq!(Ipv4Prefix::new(ip("1.2.3.4"), 16).network(), ip("1.2.0.0"));
        assert_eq!(Ipv4Prefix::new(ip("1.2.3.4"), 0).mask, ip("0.0.0.0"));
        assert_eq!(
            parse_ipv4_addr_or_prefix("1.2.3"),
            Err("expected IP address or prefix".into())
        );
    }

    #[test]
    fn ipv6() {
        let a = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        assert_eq!(parse_ipv6("::1"), Ok(Ipv6Addr::LOCALHOST));
        assert_eq!(parse_ipv6("::"), Ok(Ipv6Addr::UNSPECIFIED));
        assert_eq!(parse_ipv6("fe80::1"), Ok(a("fe80::1")));
        assert_eq!(parse_ipv6("::ffff:1.2.3.4"), Ok(a("::ffff:102:304")));
        assert_eq!(parse_ipv6("1:2:3:4:5:6:7:8"), Ok(a("1:2:3:4:5:6:7:8")));
        for bad in ["", "1.2.3.4", ":::", "1:2:3:4:5:6:7:8:9", "g::1", "::1/64"] {
            assert_eq!(
                parse_ipv6(bad),
                Err("expected IPv6 address".into()),
                "{bad:?}"
            );
        }
        let p = parse_ipv6_prefix("fe80::1/64").unwrap();
        assert_eq!(p.prefix_len(), Some(64));
        assert_eq!(p.network(), a("fe80::"));
        assert!(p.contains(a("fe80::abcd")));
        assert_eq!(p.to_string(), "fe80::1/64");
        assert_eq!(parse_ipv6_prefix("::/0").unwrap().prefix_len(), Some(0));
        assert_eq!(
            parse_ipv6_prefix("::1/128").unwrap().prefix_len(),
            Some(128)
        );
        let p = parse_ipv6_prefix("2001:db8::/ffff:ffff::").unwrap();
        assert_eq!(p.prefix_len(), Some(32));
        for bad in ["::1", "::1/129", "::1/", "/64", "x/64", "::1/-1"] {
            assert_eq!(
                parse_ipv6_prefix(bad),
                Err("expected IPv6 prefix".into()),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_ipv6_addr_or_prefix("::1").unwrap().prefix_len(),
            Some(128)
        );
        assert_eq!(
            parse_ipv6_addr_or_prefix("::1/8").unwrap().prefix_len(),
            Some(8)
        );
        assert!(parse_ipv6_addr_or_prefix("zz").is_err());
    }

    #[test]
    fn ether() {
        let e = EtherAddr([0, 1, 2, 3, 4, 5]);
        assert_eq!(parse_ether("00:01:02:03:04:05"), Ok(e));
        assert_eq!(parse_ether("00-01-02-03-04-05"), Ok(e));
        assert_eq!(parse_ether("0:1:2:3:4:5"), Ok(e));
        assert_eq!(parse_ether("0:01:2:03:4:5"), Ok(e));
        assert_eq!(
            parse_ether("aa:BB:cc:DD:ee:FF"),
            Ok(EtherAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]))
        );
        for bad in [
            "",
            "00:01:02:03:04",
            "00:01:02:03:04:05:06",
            "00:01-02:03:04:05",
            "000:01:02:03:04:05",
            "00:01:02:03:04:",
            ":00:01:02:03:04",
            "00::01:02:03:04",
            "0g:01:02:03:04:05",
            "00 01 02 03 04 05",
            "000102030405",
            "00:01:02:03:04:05 ",
        ] {
            assert_eq!(
                parse_ether(bad),
                Err("expected Ethernet address".into()),
                "{bad:?}"
            );
        }
        assert_eq!(e.to_string(), "00-01-02-03-04-05");
        assert_eq!(
            "ff:ff:ff:ff:ff:ff".parse::<EtherAddr>(),
            Ok(EtherAddr::BROADCAST)
        );
    }
}
