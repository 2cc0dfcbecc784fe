//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `data` as 16-bit big-endian words, folded to 16
/// bits but not complemented. An odd trailing byte is padded with zero.
#[inline]
pub fn sum(data: &[u8], initial: u32) -> u32 {
    let mut acc: u64 = initial as u64;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        // Adding 32-bit halves into a 64-bit accumulator defers the carry
        // folding to the end.
        acc += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
        acc += u32::from_be_bytes([c[4], c[5], c[6], c[7]]) as u64;
    }
    let mut rest = chunks.remainder();
    // An IPv4 header without options (20 bytes) leaves 4.
    if let [a, b, c, d, tail @ ..] = rest {
        acc += u32::from_be_bytes([*a, *b, *c, *d]) as u64;
        rest = tail;
    }
    while rest.len() >= 2 {
        acc += u16::from_be_bytes([rest[0], rest[1]]) as u64;
        rest = &rest[2..];
    }
    if let [b] = rest {
        acc += (*b as u64) << 8;
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u32
}

/// The checksum field value for `data` (complement of the folded sum).
#[inline]
pub fn checksum(data: &[u8]) -> u16 {
    !(sum(data, 0) as u16)
}

/// Whether `data`, including its checksum field, sums to all ones.
#[inline]
pub fn verify(data: &[u8]) -> bool {
    sum(data, 0) == 0xffff
}

/// RFC 1624 eqn. 3: the new checksum after a 16-bit word changes from
/// `old` to `new`: HC' = ~(~HC + ~m + m').
#[inline]
pub fn update16(check: u16, old: u16, new: u16) -> u16 {
    let mut s = (!check as u32) + (!old as u32) + new as u32;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    !(s as u16)
}

/// Whether a 20-byte IPv4 header (one without options), checksum field
/// included, sums to all ones: [`verify`] for the common header, in a few
/// instructions. The five 32-bit words are added in native byte order into
/// a 64-bit accumulator; since 2^16 = 1 modulo 0xffff, the folded
/// one's-complement sum is 0xffff exactly when that total is a non-zero
/// multiple of 0xffff, whatever the byte order (swapping a word's bytes
/// multiplies it by 256 modulo 0xffff, which is invertible).
#[inline(always)]
pub fn verify_header20(h: &[u8; 20]) -> bool {
    let w = |i: usize| u32::from_ne_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]) as u64;
    let acc = w(0) + w(4) + w(8) + w(12) + w(16);
    acc != 0 && acc % 0xffff == 0
}

/// The checksum field after the TTL (the high byte of the 16-bit word at
/// offset 8 of an IPv4 header) drops by one, as DecIPTTL does: RFC 1624
/// eqn. 3 with m' = m - 0x0100, which reduces to HC' = ~(~HC + 0xfeff)
/// with one end-around carry. Equal to [`update16`] for any TTL of at
/// least 1. Takes and returns the field's two bytes as they lie in the
/// header, and computes in native byte order: one's-complement addition
/// commutes with swapping the bytes of every operand, so no swap is
/// needed.
#[inline(always)]
pub fn ttl_decrement_update(check: [u8; 2]) -> [u8; 2] {
    let add = u16::from_ne_bytes(0xfeffu16.to_be_bytes()) as u32;
    let s = (!u16::from_ne_bytes(check) as u32) + add;
    (!((s + (s >> 16)) as u16)).to_ne_bytes()
}

/// Sum of the IPv4 pseudo-header for TCP/UDP checksums.
pub fn pseudo_header_v4(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) -> u32 {
    let mut b = [0u8; 12];
    b[..4].copy_from_slice(&src);
    b[4..8].copy_from_slice(&dst);
    b[9] = proto;
    b[10..12].copy_from_slice(&len.to_be_bytes());
    sum(&b, 0)
}

/// Sum of the IPv6 pseudo-header (RFC 8200 section 8.1) for upper-layer
/// checksums: both addresses, the 32-bit upper-layer length and the next
/// header value.
#[inline]
pub fn pseudo_header_v6(src: [u8; 16], dst: [u8; 16], next_header: u8, len: u32) -> u32 {
    let mut b = [0u8; 40];
    b[..16].copy_from_slice(&src);
    b[16..32].copy_from_slice(&dst);
    b[32..36].copy_from_slice(&len.to_be_bytes());
    b[39] = next_header;
    sum(&b, 0)
}

/// An address family whose addresses form a TCP/UDP/ICMPv6 pseudo-header,
/// so one generic checksum routine serves IPv4 and IPv6 without a runtime
/// branch.
pub trait PseudoHeader: Copy {
    /// IPv6 makes the UDP checksum mandatory; IPv4 lets zero mean "none".
    const IS_IPV6: bool;

    /// Folded sum of the pseudo-header for upper-layer protocol `proto`
    /// carrying `len` bytes.
    fn pseudo_sum(src: Self, dst: Self, proto: u8, len: usize) -> u32;
}

impl PseudoHeader for std::net::Ipv4Addr {
    const IS_IPV6: bool = false;

    #[inline]
    fn pseudo_sum(src: Self, dst: Self, proto: u8, len: usize) -> u32 {
        pseudo_header_v4(src.octets(), dst.octets(), proto, len as u16)
    }
}

impl PseudoHeader for std::net::Ipv6Addr {
    const IS_IPV6: bool = true;

    #[inline]
    fn pseudo_sum(src: Self, dst: Self, proto: u8, len: usize) -> u32 {
        pseudo_header_v6(src.octets(), dst.octets(), proto, len as u32)
    }
}

/// Whether `data`, an upper-layer message with its checksum field in
/// place, sums to all ones after the pseudo-header from `src` to `dst`
/// for protocol `proto` (UDP, TCP and ICMPv6 `verify_checksum`).
#[inline]
pub fn verify_pseudo<A: PseudoHeader>(src: A, dst: A, proto: u8, data: &[u8]) -> bool {
    sum(data, A::pseudo_sum(src, dst, proto, data.len())) == 0xffff
}

/// The checksum field value for `data`, an upper-layer message whose
/// checksum field is zero, after the pseudo-header from `src` to `dst`
/// for protocol `proto` (UDP, TCP and ICMPv6 `fill_checksum`).
#[inline]
pub fn pseudo_checksum<A: PseudoHeader>(src: A, dst: A, proto: u8, data: &[u8]) -> u16 {
    !(sum(data, A::pseudo_sum(src, dst, proto, data.len())) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3 example words.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&data, 0), 0xddf2);
    }

    fn naive(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for c in data.chunks(2) {
            let w = if c.len() == 2 {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                (c[0] as u16) << 8
            };
            s += w as u32;
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn header20_edge_cases() {
        // All zeros sums to zero (not all ones); all ones sums to 0xffff.
        assert!(!verify_header20(&[0; 20]));
        assert!(verify_header20(&[0xff; 20]));
        // The bench frame's header, and the same header with one bit off.
        let mut h = [
            0x45, 0, 0, 0x2e, 0, 1, 0, 0, 0x40, 0x11, 0x65, 0xbb, 10, 0, 0, 2, 10, 0, 1, 2,
        ];
        assert!(verify_header20(&h));
        h[8] ^= 1;
        assert!(!verify_header20(&h));
    }

    #[test]
    fn pseudo_headers_match_their_byte_layout() {
        use crate::wire::testutil::{naive_checksum, pseudo_v4, pseudo_v6};
        let s4 = [192, 0, 2, 1];
        let d4 = [198, 51, 100, 7];
        let b = pseudo_v4(s4, d4, 17, 1234);
        assert_eq!(
            !(pseudo_header_v4(s4, d4, 17, 1234) as u16),
            naive_checksum(&b)
        );
        let s6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let d6 = [
            0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55,
        ];
        let b = pseudo_v6(s6, d6, 58, 70000);
        assert_eq!(
            !(pseudo_header_v6(s6, d6, 58, 70000) as u16),
            naive_checksum(&b)
        );
    }

    proptest! {
        #[test]
        fn header20_verify_matches_sum(mut h in proptest::array::uniform20(any::<u8>()), fill in any::<bool>(), zero in any::<bool>()) {
            if zero {
                h = [0; 20];
            }
            if fill {
                h[10] = 0;
                h[11] = 0;
                let c = checksum(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            prop_assert_eq!(verify_header20(&h), verify(&h));
        }

        #[test]
        fn ttl_decrement_matches_update16(check in any::<u16>(), ttl in 1u8..=255, proto in any::<u8>()) {
            let old = u16::from_be_bytes([ttl, proto]);
            let new = u16::from_be_bytes([ttl - 1, proto]);
            let inc = u16::from_be_bytes(ttl_decrement_update(check.to_be_bytes()));
            prop_assert_eq!(inc, update16(check, old, new));
        }

        #[test]
        fn matches_naive(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(checksum(&data), naive(&data));
        }

        #[test]
        fn incremental_equals_recomputed(mut data in proptest::collection::vec(any::<u8>(), 4..64), word in 0usize..30, new in any::<u16>()) {
            if data.len() % 2 == 1 { data.pop(); }
            let i = (word * 2) % (data.len() - 2);
            // Checksum field at bytes 0..2.
            data[0] = 0; data[1] = 0;
            let c = checksum(&data);
            data[0..2].copy_from_slice(&c.to_be_bytes());
            let i = i.max(2) & !1;
            let old = u16::from_be_bytes([data[i], data[i + 1]]);
            data[i..i + 2].copy_from_slice(&new.to_be_bytes());
            let inc = update16(c, old, new);
            data[0] = 0; data[1] = 0;
            let full = checksum(&data);
            // One's complement has two zeros; both are valid encodings.
            prop_assert!(inc == full || (inc == 0xffff && full == 0) || (inc == 0 && full == 0xffff));
        }
    }
}
