//! Stateless IP/ICMP translation (SIIT, RFC 7915) shared by
//! ProtocolTranslator46 and ProtocolTranslator64: header translation in
//! both directions, TCP/UDP checksum adjustment for the changed
//! pseudo-header, ICMP/ICMPv6 type and code mapping, and the translation of
//! the packet an ICMP error quotes. IPv4 addresses map to and from the
//! last 32 bits of IPv6 addresses under a /96 prefix (RFC 6052).

use std::net::Ipv6Addr;

use rclick_core::wire::checksum::{self, sum};
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::ipv6::{
    HEADER_LEN as V6_LEN, PROTO_DSTOPTS, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ICMPV6, PROTO_ROUTING,
};
use rclick_core::wire::{Ipv4Header, Ipv6ExtHeader, Ipv6FragHeader, Ipv6Header};

/// IPv4 header length the translators emit (no options).
pub const V4_LEN: usize = 20;
/// Longest output of a 4-to-6 translation beyond its input: the fixed
/// headers grow by 20 bytes, plus a fragment header, in the packet and in
/// a quoted packet.
pub const GROWTH46: usize = 2 * (20 + 8);

/// The /96 prefix's first 12 bytes.
pub type Prefix96 = [u8; 12];

/// The IPv4-mapped prefix ::ffff:0:0/96 (Click's translators' mapping).
pub const MAPPED: Prefix96 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// Parses a prefix argument: an IPv6 prefix of length 96.
pub fn parse_prefix96(s: &str) -> Result<Prefix96, String> {
    let p = rclick_core::conf::parse_ipv6_prefix(s).map_err(|_| "expected IPv6 prefix")?;
    if u128::from(p.mask) != !0u128 << 32 {
        return Err("PREFIX must be a /96".into());
    }
    let mut out = [0u8; 12];
    out.copy_from_slice(&p.addr.octets()[..12]);
    Ok(out)
}

fn v6_of(prefix: &Prefix96, v4: &[u8]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..12].copy_from_slice(prefix);
    a[12..].copy_from_slice(&v4[..4]);
    a
}

/// One's-complement difference to add to a checksum when the pseudo-header
/// addresses `old` become `new`.
fn adjust(check: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut s = (!check) as u32 + sum(new, 0) + (!(sum(old, 0) as u16)) as u32;
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Adjusts the TCP or UDP checksum in `l4` (the start of the transport
/// header, possibly truncated) for the new pseudo-header addresses. A UDP
/// checksum of zero is computed afresh when `whole` (the datagram is all
/// there), with `pseudo` the new pseudo-header sum; else it stays zero.
/// Returns false when a zero UDP checksum cannot be filled in.
fn fix_l4(proto: u8, l4: &mut [u8], old: &[u8], new: &[u8], whole: Option<u32>) -> bool {
    let at = match proto {
        PROTO_TCP => 16,
        PROTO_UDP => 6,
        _ => return true,
    };
    if l4.len() < at + 2 {
        return true;
    }
    let c = u16::from_be_bytes([l4[at], l4[at + 1]]);
    let n = if proto == PROTO_UDP && c == 0 {
        match whole {
            Some(pseudo) => {
                let v = !(sum(l4, pseudo) as u16);
                if v == 0 {
                    0xffff
                } else {
                    v
                }
            }
            None => return false,
        }
    } else {
        let v = adjust(c, old, new);
        if proto == PROTO_UDP && v == 0 {
            0xffff
        } else {
            v
        }
    };
    l4[at..at + 2].copy_from_slice(&n.to_be_bytes());
    true
}

// ------------------------------------------------------------ 4 to 6

/// Translates the IPv4 packet `v4` into `out`; returns the length written,
/// or `None` when the packet is dropped (malformed, an untranslatable ICMP
/// message, ICMPv6 in IPv4, a fragmented ICMP message, or a fragment of
/// a UDP datagram without checksum). `inner` translates a quoted packet:
/// its length fields may claim more than is there, and nothing in it is
/// refused but a bad header.
pub fn translate46(v4: &[u8], prefix: &Prefix96, out: &mut [u8], inner: bool) -> Option<usize> {
    let h = Ipv4Header::new_checked(v4).ok()?;
    let hl = h.header_len();
    let total = h.total_len() as usize;
    if total < hl || (!inner && total > v4.len()) {
        return None;
    }
    if !inner && source_routed(v4.get(V4_LEN..hl)?) {
        return None;
    }
    let payload = &v4[hl..total.min(v4.len())];
    let proto = h.protocol();
    let (mf, off) = (h.more_frags(), h.frag_offset());
    let is_frag = mf || off != 0;
    if proto == PROTO_ICMPV6 || (!inner && proto == PROTO_ICMP && is_frag) {
        return None;
    }
    let nh = if proto == PROTO_ICMP {
        PROTO_ICMPV6
    } else {
        proto
    };
    let src = v6_of(prefix, &v4[12..16]);
    let dst = v6_of(prefix, &v4[16..20]);
    let fh = if is_frag { 8 } else { 0 };
    let plen = total - hl + fh;
    let hdr = V6_LEN + fh;
    out.get(..hdr + payload.len())?;
    {
        let o = &mut out[..V6_LEN];
        o[0] = 0x60 | (h.tos() >> 4);
        o[1] = h.tos() << 4;
        o[2] = 0;
        o[3] = 0;
        o[4..6].copy_from_slice(&(plen.min(0xffff) as u16).to_be_bytes());
        o[6] = if is_frag { PROTO_FRAGMENT } else { nh };
        o[7] = h.ttl();
        o[8..24].copy_from_slice(&src);
        o[24..40].copy_from_slice(&dst);
    }
    if is_frag {
        let mut f = Ipv6FragHeader::new_unchecked(&mut out[V6_LEN..hdr]);
        f.set_next_header(nh);
        f.set_offset_and_more(off, mf);
        f.set_ident(u32::from(h.ident()));
    }
    let body_len = if proto == PROTO_ICMP && off == 0 {
        icmp46(payload, &mut out[hdr..], prefix, inner)?
    } else {
        out[hdr..hdr + payload.len()].copy_from_slice(payload);
        if off == 0 {
            let pseudo = (!inner && !is_frag)
                .then(|| checksum::pseudo_header_v6(src, dst, nh, payload.len() as u32));
            let (o, l4) = out.split_at_mut(hdr);
            let body = &mut l4[..payload.len()];
            if !fix_l4(proto, body, &v4[12..20], &o[8..40], pseudo) && !inner {
                return None;
            }
        }
        payload.len()
    };
    if proto == PROTO_ICMP && off == 0 {
        // The payload length of what the ICMPv6 message became.
        let plen = if inner {
            (total - hl + fh).max(body_len + fh)
        } else {
            body_len + fh
        };
        out[4..6].copy_from_slice(&(plen.min(0xffff) as u16).to_be_bytes());
        if !inner {
            let m = &mut out[hdr..hdr + body_len];
            m[2..4].fill(0);
            let c = !(sum(
                m,
                checksum::pseudo_header_v6(src, dst, PROTO_ICMPV6, body_len as u32),
            ) as u16);
            m[2..4].copy_from_slice(&c.to_be_bytes());
        }
    }
    Some(hdr + body_len)
}

/// Whether IPv4 options hold an unexpired loose or strict source route
/// (RFC 7915 section 4.1: such a packet must be discarded, not translated
/// with its options ignored), or cannot be walked.
fn source_routed(opts: &[u8]) -> bool {
    const LSRR: u8 = 131;
    const SSRR: u8 = 137;
    let mut at = 0;
    while let Some(&kind) = opts.get(at) {
        match kind {
            0 => return false,
            1 => at += 1,
            _ => {
                let Some(&len) = opts.get(at + 1) else {
                    return true;
                };
                let len = len as usize;
                if len < 2 || at + len > opts.len() {
                    return true;
                }
                // The pointer (1-based, in the option) is past the route
                // once the route is used up.
                if (kind == LSRR || kind == SSRR)
                    && opts.get(at + 2).is_some_and(|&p| (p as usize) <= len)
                {
                    return true;
                }
                at += len;
            }
        }
    }
    false
}

/// ICMPv4 parameter problem pointer to ICMPv6's (RFC 7915 section 4.2).
fn pointer46(p: u8) -> Option<u32> {
    Some(match p {
        0 => 0,
        1 => 1,
        2 | 3 => 4,
        8 => 7,
        9 => 6,
        12..=15 => 8,
        16..=19 => 24,
        _ => return None,
    })
}

/// Translates the ICMPv4 message `m` into `out` (checksum left for the
/// caller); returns its length.
fn icmp46(m: &[u8], out: &mut [u8], prefix: &Prefix96, inner: bool) -> Option<usize> {
    if m.len() < 8 {
        return if inner {
            out.get_mut(..m.len())?.copy_from_slice(m);
            Some(m.len())
        } else {
            None
        };
    }
    let (t, code) = (m[0], m[1]);
    let mut rest = [m[4], m[5], m[6], m[7]];
    let (nt, ncode, error) = match (t, code) {
        (8, _) => (128, 0, false),
        (0, _) => (129, 0, false),
        (3, 0 | 1 | 5 | 6 | 7 | 8 | 11 | 12) => (1, 0, true),
        (3, 9 | 10 | 13 | 15) => (1, 1, true),
        (3, 3) => (1, 4, true),
        (3, 2) => {
            rest = 6u32.to_be_bytes();
            (4, 1, true)
        }
        (3, 4) => {
            let mtu = u16::from_be_bytes([m[6], m[7]]) as u32;
            let mtu = if mtu == 0 { 1280 } else { (mtu + 20).max(1280) };
            rest = mtu.to_be_bytes();
            (2, 0, true)
        }
        (11, c) => (3, c, true),
        (12, 0 | 2) => {
            rest = pointer46(m[4])?.to_be_bytes();
            (4, 0, true)
        }
        _ => return None,
    };
    if inner && error {
        // No error inside an error.
        return None;
    }
    let o = out.get_mut(..8)?;
    o[0] = nt;
    o[1] = ncode;
    o[2..4].fill(0);
    o[4..8].copy_from_slice(&rest);
    if !error {
        out.get_mut(8..m.len())?.copy_from_slice(&m[8..]);
        return Some(m.len());
    }
    let n = translate46(&m[8..], prefix, &mut out[8..], true)?;
    // The quoted packet, at most what keeps the error within 1280 bytes.
    Some((8 + n).min(1280 - V6_LEN))
}

// ------------------------------------------------------------ 6 to 4

/// The IPv4 address of a translatable IPv6 address.
fn v4_of(prefix: &Prefix96, a: &[u8]) -> Option<[u8; 4]> {
    (a[..12] == prefix[..]).then(|| [a[12], a[13], a[14], a[15]])
}

/// Translates the IPv6 packet `v6` into `out`; returns the length written,
/// or `None` when dropped: malformed, addresses outside the prefix, a
/// routing header with segments left, an untranslatable ICMPv6 message,
/// IPv4's ICMP inside IPv6, a fragmented ICMPv6 message.
pub fn translate64(v6: &[u8], prefix: &Prefix96, out: &mut [u8], inner: bool) -> Option<usize> {
    let h = Ipv6Header::new_checked(v6).ok()?;
    let plen = h.payload_len() as usize;
    if plen == 0 || (!inner && V6_LEN + plen > v6.len()) {
        return None;
    }
    let payload = h.payload();
    let src4 = v4_of(prefix, &v6[8..24])?;
    let dst4 = v4_of(prefix, &v6[24..40])?;
    let mut nh = h.next_header();
    let mut at = 0;
    let mut frag = None;
    loop {
        match nh {
            PROTO_HOPOPTS | PROTO_DSTOPTS | PROTO_ROUTING => {
                let e = Ipv6ExtHeader::new_checked(payload.get(at..)?).ok()?;
                if nh == PROTO_ROUTING && e.segments_left() != 0 {
                    return None;
                }
                nh = e.next_header();
                at += e.header_len();
            }
            PROTO_FRAGMENT => {
                let f = Ipv6FragHeader::new_checked(payload.get(at..)?).ok()?;
                frag = Some((f.ident(), f.frag_offset(), f.more_frags()));
                nh = f.next_header();
                at += 8;
            }
            _ => break,
        }
    }
    let body = &payload[at..];
    let off = frag.map_or(0, |f| f.1);
    if nh == PROTO_ICMP || (!inner && nh == PROTO_ICMPV6 && frag.is_some()) {
        return None;
    }
    let proto = if nh == PROTO_ICMPV6 { PROTO_ICMP } else { nh };
    let claimed = plen.saturating_sub(at);
    out.get(..V4_LEN + body.len())?;
    let body_len = if nh == PROTO_ICMPV6 && off == 0 {
        icmp64(body, &mut out[V4_LEN..], prefix, inner)?
    } else {
        out[V4_LEN..V4_LEN + body.len()].copy_from_slice(body);
        if off == 0 {
            let pseudo = (!inner && frag.is_none())
                .then(|| checksum::pseudo_header_v4(src4, dst4, proto, body.len() as u16));
            let mut new = [0u8; 8];
            new[..4].copy_from_slice(&src4);
            new[4..].copy_from_slice(&dst4);
            let l4 = &mut out[V4_LEN..V4_LEN + body.len()];
            if !fix_l4(proto, l4, &v6[8..40], &new, pseudo) && !inner {
                return None;
            }
        }
        body.len()
    };
    let total = V4_LEN
        + if inner && nh != PROTO_ICMPV6 {
            claimed.max(body_len)
        } else {
            body_len
        };
    let o = &mut out[..V4_LEN];
    o[0] = 0x45;
    o[1] = h.traffic_class();
    o[2..4].copy_from_slice(&(total.min(0xffff) as u16).to_be_bytes());
    let (id, word) = match frag {
        Some((id, off, mf)) => (id as u16, (off / 8) as u16 | if mf { 0x2000 } else { 0 }),
        // RFC 7915 section 5.1: DF only above 1260 bytes.
        None => (0, if total > 1260 { 0x4000 } else { 0 }),
    };
    o[4..6].copy_from_slice(&id.to_be_bytes());
    o[6..8].copy_from_slice(&word.to_be_bytes());
    o[8] = h.hop_limit();
    o[9] = proto;
    o[10..12].fill(0);
    o[12..16].copy_from_slice(&src4);
    o[16..20].copy_from_slice(&dst4);
    let c = checksum::checksum(o);
    o[10..12].copy_from_slice(&c.to_be_bytes());
    if nh == PROTO_ICMPV6 && off == 0 && !inner {
        let m = &mut out[V4_LEN..V4_LEN + body_len];
        m[2..4].fill(0);
        let c = checksum::checksum(m);
        m[2..4].copy_from_slice(&c.to_be_bytes());
    }
    Some(V4_LEN + body_len)
}

/// ICMPv6 parameter problem pointer to ICMPv4's (RFC 7915 section 5.2).
fn pointer64(p: u32) -> Option<u8> {
    Some(match p {
        0 => 0,
        1 => 1,
        4 | 5 => 2,
        6 => 9,
        7 => 8,
        8..=23 => 12,
        24..=39 => 16,
        _ => return None,
    })
}

fn icmp64(m: &[u8], out: &mut [u8], prefix: &Prefix96, inner: bool) -> Option<usize> {
    if m.len() < 8 {
        return if inner {
            out.get_mut(..m.len())?.copy_from_slice(m);
            Some(m.len())
        } else {
            None
        };
    }
    let (t, code) = (m[0], m[1]);
    let mut rest = [m[4], m[5], m[6], m[7]];
    let (nt, ncode, error) = match (t, code) {
        (128, _) => (8, 0, false),
        (129, _) => (0, 0, false),
        (1, 0 | 2 | 3) => (3, 1, true),
        (1, 1) => (3, 10, true),
        (1, 4) => (3, 3, true),
        (2, _) => {
            let mtu = u32::from_be_bytes(rest).saturating_sub(20).min(0xffff) as u16;
            rest = [0, 0, (mtu >> 8) as u8, mtu as u8];
            (3, 4, true)
        }
        (3, c) => (11, c, true),
        (4, 0) => {
            rest = [pointer64(u32::from_be_bytes(rest))?, 0, 0, 0];
            (12, 0, true)
        }
        (4, 1) => (3, 2, true),
        _ => return None,
    };
    if inner && error {
        return None;
    }
    let o = out.get_mut(..8)?;
    o[0] = nt;
    o[1] = ncode;
    o[2..4].fill(0);
    if error {
        o[4..8].copy_from_slice(&rest);
        let n = translate64(&m[8..], prefix, &mut out[8..], true)?;
        // RFC 792's errors quote the header and 8 bytes at least; keep
        // what fits within 576 bytes (RFC 1812 section 4.3.2.3).
        Some((8 + n).min(576 - V4_LEN))
    } else {
        o[4..8].copy_from_slice(&m[4..8]);
        out.get_mut(8..m.len())?.copy_from_slice(&m[8..]);
        Some(m.len())
    }
}

/// The IPv6 address of an IPv4 one under `prefix` (for tests and
/// documentation).
pub fn map46(prefix: &Prefix96, v4: std::net::Ipv4Addr) -> Ipv6Addr {
    Ipv6Addr::from(v6_of(prefix, &v4.octets()))
}
