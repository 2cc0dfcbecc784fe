//! Helpers shared by the IPv6 elements: header views at the network
//! header, Click's way of printing IPv6 addresses, and IPv6 address and
//! prefix arguments (addresses, or AddressInfo names).

use std::net::Ipv6Addr;

use rclick_core::conf::{parse_ipv6, parse_ipv6_addr_or_prefix, Ipv6Prefix};
use rclick_core::wire::ipv6::PROTO_ICMPV6;
use rclick_core::wire::ipv6ext::upper_layer;
use rclick_core::wire::Ipv6Header;
use rclick_core::{InitCtx, Packet};

use crate::ip::address::lookup_entry;
use crate::ip::ipcommon::net_off;

/// A read-only view of the IPv6 fixed header at the network header, if it
/// is set and 40 bytes of version 6 lie there.
#[inline]
pub fn ip6_hdr(p: &Packet) -> Option<Ipv6Header<&[u8]>> {
    let off = net_off(p)?;
    Ipv6Header::new_checked(&p.data()[off..]).ok()
}

/// A writable view of the IPv6 fixed header at the network header
/// (copying shared data first).
#[inline]
pub fn ip6_hdr_mut(p: &mut Packet) -> Option<Ipv6Header<&mut [u8]>> {
    let off = net_off(p)?;
    Ipv6Header::new_checked(&mut p.writable()[off..]).ok()
}

/// The ICMPv6 message type of an IPv6 packet and the message's offset in
/// the payload, when its upper layer (past any extension headers) is
/// ICMPv6 with at least the type byte present.
pub fn icmp6_type(h: &Ipv6Header<&[u8]>) -> Option<(u8, usize)> {
    let payload = h.payload();
    let (nh, at) = upper_layer(h.next_header(), payload).ok()?;
    (nh == PROTO_ICMPV6)
        .then(|| payload.get(at).map(|&t| (t, at)))
        .flatten()
}

/// Click's `IP6Address::unparse`: RFC 5952 text (the longest run of two
/// or more zero groups, the first of equal runs, becomes `::`), except
/// that an address whose first 80 bits are zero and whose next 16 are
/// 0000 or ffff ends in a dotted quad (`::0.0.0.1`, `::ffff:1.2.3.4`);
/// `::` stays `::`. Rust's `Display` differs only in that dotted form.
pub fn fmt_ip6(a: Ipv6Addr) -> String {
    let s = a.segments();
    if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) && a != Ipv6Addr::UNSPECIFIED {
        let o = a.octets();
        let pre = if s[5] == 0 { "::" } else { "::ffff:" };
        return format!("{pre}{}.{}.{}.{}", o[12], o[13], o[14], o[15]);
    }
    a.to_string()
}

/// A prefix as Click prints it: `ADDR/LEN`, or `ADDR/MASK` when the mask
/// is not contiguous.
pub fn fmt_prefix6(addr: Ipv6Addr, mask: Ipv6Addr) -> String {
    let m = u128::from(mask);
    let len = m.leading_ones();
    if len == 128 || m == !(u128::MAX >> len) {
        format!("{}/{}", fmt_ip6(addr), len)
    } else {
        format!("{}/{}", fmt_ip6(addr), fmt_ip6(mask))
    }
}

/// Splits `name:suffix` for AddressInfo lookups.
fn split_suffix(s: &str) -> (&str, Option<String>) {
    match s.rfind(':') {
        Some(i) if i > 0 => (&s[..i], Some(s[i + 1..].to_ascii_lowercase())),
        _ => (s, None),
    }
}

/// Parses an IPv6 address argument (Click's IP6AddressArg): standard
/// notation, or an AddressInfo name (`name`, `name:ip6`).
pub fn parse_ipv6_arg(s: &str, ctx: &InitCtx) -> Result<Ipv6Addr, String> {
    if let Ok(a) = parse_ipv6(s) {
        return Ok(a);
    }
    let (name, suffix) = split_suffix(s);
    let name = match suffix.as_deref() {
        Some("ip6") => name,
        _ => s,
    };
    lookup_entry(name, ctx, |e| e.ipv6.is_some())
        .and_then(|e| e.ipv6)
        .ok_or_else(|| "expected IPv6 address".to_string())
}

/// Parses an IPv6 prefix or bare address (a bare address is a /128;
/// Click's IP6PrefixArg(true)), or an AddressInfo name: `name` (its
/// prefix, or its address as a /128), `name:ip6net` (the prefix),
/// `name:ip6` (the address as a /128).
pub fn parse_ipv6_prefix_arg(s: &str, ctx: &InitCtx) -> Result<Ipv6Prefix, String> {
    if let Ok(p) = parse_ipv6_addr_or_prefix(s) {
        return Ok(p);
    }
    let (name, suffix) = split_suffix(s);
    let found = match suffix.as_deref() {
        Some("ip6net") => {
            lookup_entry(name, ctx, |e| e.ipv6_prefix.is_some()).and_then(|e| e.ipv6_prefix)
        }
        Some("ip6") => lookup_entry(name, ctx, |e| e.ipv6.is_some())
            .and_then(|e| e.ipv6.map(|a| Ipv6Prefix::new(a, 128))),
        _ => lookup_entry(s, ctx, |e| e.ipv6_prefix.is_some() || e.ipv6.is_some())
            .and_then(|e| e.ipv6_prefix.or(e.ipv6.map(|a| Ipv6Prefix::new(a, 128)))),
    };
    found.ok_or_else(|| "expected IPv6 address or prefix".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    /// Click 2.1 prints these (LookupIP6Route's `table`).
    #[test]
    fn click_address_text() {
        for (i, o) in [
            ("::", "::"),
            ("::1", "::0.0.0.1"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1:0:0", "::1:0:0"),
            ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("0:0:1::", "0:0:1::"),
            ("::ffff:0:0:0", "::ffff:0:0:0"),
            ("::c0a8:1", "::192.168.0.1"),
        ] {
            assert_eq!(fmt_ip6(a(i)), o);
        }
        assert_eq!(fmt_prefix6(a("fe80::"), a("ffc0::")), "fe80::/10");
        assert_eq!(fmt_prefix6(a("::"), a("::")), "::/0");
        assert_eq!(fmt_prefix6(a("::"), a("ff::")), "::/ff::");
    }
}
