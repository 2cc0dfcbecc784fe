//! UDP headers (RFC 768), over IPv4 or IPv6.
//!
//! [`UdpHeader`] is the checked view: `new_checked` only needs the 8-byte
//! header, so it also views a truncated datagram (as ICMP errors quote
//! one). [`UdpRepr`] is the header as values; its `parse` requires the
//! length field to cover the header and to fit in the buffer. The view's
//! buffer should be the IP payload: the checksum covers the bytes the
//! length field names, after the pseudo-header of the enclosing IPv4 or
//! IPv6 header ([`UdpHeader::verify_checksum`], [`UdpHeader::fill_checksum`]).

use super::checksum::{self, PseudoHeader};
use super::ipv4::PROTO_UDP;
use super::{be16, check_len, put16, WireError};

/// Length of a UDP header.
pub const HEADER_LEN: usize = 8;

view! {
    /// A UDP header view (8 bytes).
    UdpHeader
}

impl<T: AsRef<[u8]>> UdpHeader<T> {
    /// Checks the buffer holds the 8-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), HEADER_LEN)?;
        Ok(UdpHeader { buf })
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Length field: header plus payload.
    #[inline]
    pub fn len(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// Whether the length field leaves no payload.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() <= 8
    }

    /// Checksum field (zero over IPv4 means none was computed).
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Bytes after the header, up to the length field when it is valid
    /// and fits, else to the end of the buffer.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        let b = self.b();
        let end = (self.len() as usize).clamp(HEADER_LEN, b.len());
        &b[HEADER_LEN..end]
    }

    /// Whether the checksum is correct for a datagram from `src` to `dst`.
    /// A zero checksum over IPv4 means "not computed" and passes; a length
    /// field that is too small or runs past the buffer fails.
    #[inline]
    pub fn verify_checksum<A: PseudoHeader>(&self, src: A, dst: A) -> bool {
        if !A::IS_IPV6 && self.checksum() == 0 {
            return true;
        }
        let b = self.b();
        let len = self.len() as usize;
        if len < HEADER_LEN || len > b.len() {
            return false;
        }
        checksum::verify_pseudo(src, dst, PROTO_UDP, &b[..len])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpHeader<T> {
    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.bm(), 0, v);
    }

    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    /// Sets the length field.
    #[inline]
    pub fn set_len(&mut self, v: u16) {
        put16(self.bm(), 4, v);
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.bm(), 6, v);
    }

    /// The payload (as [`UdpHeader::payload`] bounds it), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = (self.len() as usize).clamp(HEADER_LEN, self.b().len());
        &mut self.bm()[HEADER_LEN..end]
    }

    /// Computes the checksum over the pseudo-header and the bytes the
    /// length field names (clamped to the buffer). A computed zero is sent
    /// as 0xffff, since zero means "none".
    #[inline]
    pub fn fill_checksum<A: PseudoHeader>(&mut self, src: A, dst: A) {
        self.set_checksum(0);
        let b = self.b();
        let len = (self.len() as usize).clamp(HEADER_LEN, b.len());
        let c = checksum::pseudo_checksum(src, dst, PROTO_UDP, &b[..len]);
        self.set_checksum(if c == 0 { 0xffff } else { c });
    }
}

/// A UDP header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length in bytes (length field minus 8).
    pub payload_len: usize,
}

impl UdpRepr {
    /// Reads the header. The length field must be at least 8
    /// ([`WireError::BadLength`]) and fit in the buffer
    /// ([`WireError::Truncated`]); bytes past it are ignored. The checksum
    /// is not checked: see [`UdpHeader::verify_checksum`].
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(u: &UdpHeader<T>) -> Result<Self, WireError> {
        let len = u.len() as usize;
        if len < HEADER_LEN {
            return Err(WireError::BadLength);
        }
        check_len(u.b(), len)?;
        Ok(UdpRepr {
            src_port: u.src_port(),
            dst_port: u.dst_port(),
            payload_len: len - HEADER_LEN,
        })
    }

    /// Header length: 8.
    #[inline]
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus payload: the length field.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the header with a zero checksum; call
    /// [`UdpHeader::fill_checksum`] once the payload is in place (or leave
    /// it zero over IPv4 for "none").
    ///
    /// Panics if the length exceeds 65535 or the buffer is shorter than 8.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, u: &mut UdpHeader<T>) {
        let len = u16::try_from(self.buffer_len()).expect("UDP length over 65535");
        u.set_src_port(self.src_port);
        u.set_dst_port(self.dst_port);
        u.set_len(len);
        u.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::{naive_with_pseudo, pseudo_v4, pseudo_v6};
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const SRC4: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
    const DST4: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);
    const SRC6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
    const DST6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);

    /// A DNS-like datagram, 53 -> 1024, with 5 payload bytes (odd, so the
    /// checksum pads) and 3 bytes of trailing link padding.
    fn datagram() -> Vec<u8> {
        let mut b = vec![0, 53, 4, 0, 0, 13, 0, 0, b'h', b'e', b'l', b'l', b'o'];
        b.extend_from_slice(&[0xaa; 3]);
        b
    }

    #[test]
    fn checksum_over_ipv4_matches_independent_sum() {
        let mut b = datagram();
        let mut u = UdpHeader::new_checked(&mut b[..]).unwrap();
        u.fill_checksum(SRC4, DST4);
        let c = u.checksum();
        b[6] = 0;
        b[7] = 0;
        let expect = naive_with_pseudo(&pseudo_v4(SRC4.octets(), DST4.octets(), 17, 13), &b[..13]);
        assert_eq!(c, expect);
        b[6..8].copy_from_slice(&c.to_be_bytes());
        let u = UdpHeader::new_checked(&b[..]).unwrap();
        assert!(u.verify_checksum(SRC4, DST4));
        assert!(!u.verify_checksum(SRC4, Ipv4Addr::new(198, 51, 100, 3)));
    }

    #[test]
    fn checksum_over_ipv6_matches_independent_sum() {
        let mut b = datagram();
        let mut u = UdpHeader::new_checked(&mut b[..]).unwrap();
        u.fill_checksum(SRC6, DST6);
        let c = u.checksum();
        let expect = naive_with_pseudo(
            &pseudo_v6(SRC6.octets(), DST6.octets(), 17, 13),
            &[&b[..6], &[0, 0], &b[8..13]].concat(),
        );
        assert_eq!(c, expect);
        let u = UdpHeader::new_checked(&b[..]).unwrap();
        assert!(u.verify_checksum(SRC6, DST6));
    }

    #[test]
    fn zero_checksum_means_none_only_over_ipv4() {
        let b = datagram();
        let u = UdpHeader::new_checked(&b[..]).unwrap();
        assert!(u.verify_checksum(SRC4, DST4));
        assert!(!u.verify_checksum(SRC6, DST6));
    }

    #[test]
    fn computed_zero_is_sent_as_all_ones() {
        // Choose the payload word so the full sum is 0xffff.
        let mut b = vec![0, 1, 0, 2, 0, 10, 0, 0, 0, 0];
        let s = !naive_with_pseudo(&pseudo_v4(SRC4.octets(), DST4.octets(), 17, 10), &b);
        b[8..10].copy_from_slice(&(!s).to_be_bytes());
        let mut u = UdpHeader::new_checked(&mut b[..]).unwrap();
        u.fill_checksum(SRC4, DST4);
        assert_eq!(u.checksum(), 0xffff);
        assert!(u.verify_checksum(SRC4, DST4));
    }

    #[test]
    fn repr_round_trip() {
        let b = datagram();
        let u = UdpHeader::new_checked(&b[..]).unwrap();
        let r = UdpRepr::parse(&u).unwrap();
        assert_eq!(
            r,
            UdpRepr {
                src_port: 53,
                dst_port: 1024,
                payload_len: 5
            }
        );
        assert_eq!(u.payload(), b"hello");
        let mut out = vec![0u8; r.buffer_len()];
        let mut v = UdpHeader::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.payload_mut().copy_from_slice(b"hello");
        assert_eq!(out, b[..13]);
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = datagram();
        for n in 0..HEADER_LEN {
            assert_eq!(
                UdpHeader::new_checked(&b[..n]).err(),
                Some(WireError::Truncated)
            );
        }
        for n in HEADER_LEN..13 {
            let u = UdpHeader::new_checked(&b[..n]).unwrap();
            assert_eq!(UdpRepr::parse(&u), Err(WireError::Truncated));
            assert!(!u.verify_checksum(SRC6, DST6));
        }
        let mut b = b;
        b[5] = 7;
        let u = UdpHeader::new_checked(&b[..]).unwrap();
        assert_eq!(UdpRepr::parse(&u), Err(WireError::BadLength));
        assert_eq!(u.payload(), b"");
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(u) = UdpHeader::new_checked(&b[..]) {
                let _ = (u.src_port(), u.dst_port(), u.len(), u.is_empty(), u.checksum(), u.payload());
                let _ = (u.verify_checksum(SRC4, DST4), u.verify_checksum(SRC6, DST6));
                if let Ok(r) = UdpRepr::parse(&u) {
                    let mut out = vec![0u8; r.buffer_len()];
                    r.emit(&mut UdpHeader::new_unchecked(&mut out[..]));
                    let v = UdpHeader::new_checked(&out[..]).unwrap();
                    prop_assert_eq!(UdpRepr::parse(&v).unwrap(), r);
                }
            }
            let mut c = b.clone();
            if let Ok(mut u) = UdpHeader::new_checked(&mut c[..]) {
                let _ = u.payload_mut();
                u.fill_checksum(SRC6, DST6);
            }
        }
    }
}
