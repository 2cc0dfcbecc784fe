//! Helpers shared by the IPv6 elements: header views at the network
//! header, Click's way of printing IPv6 addresses, and IPv6 address and
//! prefix arguments (addresses, or AddressInfo names).

use std::net::Ipv6Addr;

use rclick_core::conf::{parse_ipv6, parse_ipv6_addr_or_prefix, Ipv6Prefix};
use rclick_core::wire::ipv6::{
    PROTO_DSTOPTS, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ICMPV6, PROTO_ROUTING,
};
use rclick_core::wire::ipv6ext::{upper_layer, Ipv6ExtHeader};
use rclick_core::wire::{Ipv6Header, WireError};
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

/// Fragment identifications by RFC 7739 section 5.3: a keyed hash (the key
/// a secret drawn when made) of the flow (addresses, protocol) picks an
/// offset and one of 256 counters; the identification is offset plus
/// counter. One flow's identifications do not repeat before the counter
/// wraps, and those of one flow say nothing of another's. Also serves
/// IPv4 identifications (RFC 6864: unique per source, destination and
/// protocol while a datagram may be fragmented), truncated to 16 bits.
pub struct IdGen {
    key: std::collections::hash_map::RandomState,
    counters: Vec<u32>,
}

const ID_COUNTERS: usize = 256;

impl Default for IdGen {
    fn default() -> Self {
        IdGen {
            key: std::collections::hash_map::RandomState::new(),
            counters: vec![0; ID_COUNTERS],
        }
    }
}

impl IdGen {
    /// The next identification for the flow named by `flow`'s bytes.
    pub fn next(&mut self, flow: &[u8]) -> u32 {
        use std::hash::BuildHasher;
        let h = self.key.hash_one(flow);
        let i = (h >> 32) as usize % ID_COUNTERS;
        let Some(c) = self.counters.get_mut(i) else {
            return h as u32;
        };
        *c = c.wrapping_add(1);
        (h as u32).wrapping_add(*c)
    }
}

/// The length of the upper-layer header a first fragment must hold whole
/// (RFC 7112): TCP's and UDP's fixed headers, ICMPv6's first 4 bytes, one
/// byte of anything else.
pub fn upper_header_min(nh: u8) -> usize {
    use rclick_core::wire::ipv6::{PROTO_TCP, PROTO_UDP};
    match nh {
        PROTO_TCP => 20,
        PROTO_UDP => 8,
        PROTO_ICMPV6 => 4,
        _ => 1,
    }
}

/// The split of an IPv6 packet for fragmenting (RFC 8200 section 4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragSplit {
    /// Bytes of extension headers in the unfragmentable part: a
    /// hop-by-hop header, then destination options and routing headers up
    /// to the last routing header.
    pub unfrag_ext: usize,
    /// Offset in the payload of the unfragmentable header whose next-header
    /// byte names the fragmentable part; `None` for the fixed header's.
    pub nh_field: Option<usize>,
    /// The first header type of the fragmentable part.
    pub frag_nh: u8,
    /// Offset in the payload where the upper-layer header (or a header not
    /// walked: ESP, no next header, fragment) starts.
    pub chain_end: usize,
    /// The type of that header.
    pub chain_end_nh: u8,
}

/// Walks the extension headers of `payload` (after a fixed header naming
/// `next_header`) and finds the unfragmentable part. A hop-by-hop header
/// counts only first. Errors on truncated headers.
pub fn frag_split(next_header: u8, payload: &[u8]) -> Result<FragSplit, WireError> {
    let mut s = FragSplit {
        unfrag_ext: 0,
        nh_field: None,
        frag_nh: next_header,
        chain_end: 0,
        chain_end_nh: next_header,
    };
    let mut nh = next_header;
    let mut at = 0;
    loop {
        match nh {
            PROTO_HOPOPTS if at == 0 => {}
            PROTO_DSTOPTS | PROTO_ROUTING => {}
            _ => break,
        }
        let h = Ipv6ExtHeader::new_checked(&payload[at..])?;
        let this = at;
        let is_routing = nh == PROTO_ROUTING;
        nh = h.next_header();
        at += h.header_len();
        if is_routing || this == 0 && next_header == PROTO_HOPOPTS {
            s.unfrag_ext = at;
            s.nh_field = Some(this);
            s.frag_nh = nh;
        }
    }
    let (end_nh, end) = match nh {
        PROTO_FRAGMENT => (nh, at),
        _ => {
            let (n, off) = upper_layer(nh, &payload[at..])?;
            (n, at + off)
        }
    };
    s.chain_end = end;
    s.chain_end_nh = end_nh;
    Ok(s)
}

/// Finds the fragment header of an IPv6 packet's payload: the offset of
/// the header whose next-header byte names it (`None`: the fixed header),
/// and the fragment header's offset. `Ok(None)` when there is none
/// (walking hop-by-hop, destination options and routing headers only).
pub fn find_frag_header(
    next_header: u8,
    payload: &[u8],
) -> Result<Option<(Option<usize>, usize)>, WireError> {
    let mut nh = next_header;
    let mut at = 0;
    let mut field = None;
    loop {
        match nh {
            PROTO_FRAGMENT => return Ok(Some((field, at))),
            PROTO_HOPOPTS if at == 0 => {}
            PROTO_DSTOPTS | PROTO_ROUTING => {}
            _ => return Ok(None),
        }
        let h = Ipv6ExtHeader::new_checked(&payload[at..])?;
        field = Some(at);
        nh = h.next_header();
        at += h.header_len();
    }
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
