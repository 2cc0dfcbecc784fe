//! IPv6 fixed headers (RFC 8200).
//!
//! [`Ipv6Header`] is the checked view of the 40-byte fixed header:
//! `new_checked` requires version 6 and the 40 bytes; the payload length
//! is not checked against the buffer (accessors clamp to it).
//! [`Ipv6Repr`] is the header as values; its `parse` requires the payload
//! to fit in the buffer. Extension headers between this header and the
//! upper layer are viewed with [`super::ipv6ext`]. Jumbograms (payload
//! length 0 with a hop-by-hop jumbo option, RFC 2675) are not handled.

use std::net::Ipv6Addr;

use super::{be16, check_len, ipv6_at, put16, WireError};

pub use super::ipv4::{PROTO_TCP, PROTO_UDP};

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;

/// Next header: hop-by-hop options.
pub const PROTO_HOPOPTS: u8 = 0;
/// Next header: routing header.
pub const PROTO_ROUTING: u8 = 43;
/// Next header: fragment header.
pub const PROTO_FRAGMENT: u8 = 44;
/// Next header: encapsulating security payload.
pub const PROTO_ESP: u8 = 50;
/// Next header: authentication header.
pub const PROTO_AH: u8 = 51;
/// Next header: ICMPv6.
pub const PROTO_ICMPV6: u8 = 58;
/// Next header: no next header.
pub const PROTO_NONE: u8 = 59;
/// Next header: destination options.
pub const PROTO_DSTOPTS: u8 = 60;

view! {
    /// A view of an IPv6 fixed header at the start of a buffer.
    Ipv6Header
}

impl<T: AsRef<[u8]>> Ipv6Header<T> {
    /// Checks the buffer holds 40 bytes and the version is 6.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        check_len(b, HEADER_LEN)?;
        if b[0] >> 4 != 6 {
            return Err(WireError::BadVersion);
        }
        Ok(Ipv6Header { buf })
    }

    /// IP version (6).
    #[inline]
    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }

    /// Traffic class (DSCP and ECN).
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        let b = self.b();
        (b[0] << 4) | (b[1] >> 4)
    }

    /// Differentiated services code point.
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// Explicit congestion notification.
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 3
    }

    /// Flow label (20 bits).
    #[inline]
    pub fn flow_label(&self) -> u32 {
        let b = self.b();
        (((b[1] & 0x0f) as u32) << 16) | be16(b, 2) as u32
    }

    /// Payload length field: bytes after the fixed header, extension
    /// headers included.
    #[inline]
    pub fn payload_len(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// Type of the header after the fixed header.
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.b()[6]
    }

    /// Hop limit.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.b()[7]
    }

    /// Source address.
    #[inline]
    pub fn src(&self) -> Ipv6Addr {
        ipv6_at(self.b(), 8)
    }

    /// Destination address.
    #[inline]
    pub fn dst(&self) -> Ipv6Addr {
        ipv6_at(self.b(), 24)
    }

    /// Bytes after the fixed header, up to the payload length when it fits
    /// in the buffer, else to the end of the buffer.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        let b = self.b();
        let end = (HEADER_LEN + self.payload_len() as usize).min(b.len());
        &b[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Header<T> {
    /// Sets version 6, keeping the traffic class bits of byte 0.
    #[inline]
    pub fn set_version(&mut self) {
        let b = self.bm();
        b[0] = 0x60 | (b[0] & 0x0f);
    }

    /// Sets the traffic class.
    #[inline]
    pub fn set_traffic_class(&mut self, tc: u8) {
        let b = self.bm();
        b[0] = (b[0] & 0xf0) | (tc >> 4);
        b[1] = (b[1] & 0x0f) | (tc << 4);
    }

    /// Sets the flow label (low 20 bits of `v`).
    #[inline]
    pub fn set_flow_label(&mut self, v: u32) {
        let b = self.bm();
        b[1] = (b[1] & 0xf0) | ((v >> 16) & 0x0f) as u8;
        put16(b, 2, v as u16);
    }

    /// Sets the payload length.
    #[inline]
    pub fn set_payload_len(&mut self, v: u16) {
        put16(self.bm(), 4, v);
    }

    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, v: u8) {
        self.bm()[6] = v;
    }

    /// Sets the hop limit.
    #[inline]
    pub fn set_hop_limit(&mut self, v: u8) {
        self.bm()[7] = v;
    }

    /// Decrements the hop limit (no checksum to fix in IPv6); returns the
    /// new value.
    #[inline]
    pub fn decrement_hop_limit(&mut self) -> u8 {
        let h = self.hop_limit().wrapping_sub(1);
        self.set_hop_limit(h);
        h
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src(&mut self, a: Ipv6Addr) {
        self.bm()[8..24].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst(&mut self, a: Ipv6Addr) {
        self.bm()[24..40].copy_from_slice(&a.octets());
    }

    /// The payload (as [`Ipv6Header::payload`] bounds it), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = (HEADER_LEN + self.payload_len() as usize).min(self.b().len());
        &mut self.bm()[HEADER_LEN..end]
    }
}

/// An IPv6 fixed header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Repr {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// Type of the next header.
    pub next_header: u8,
    /// Payload length (extension headers included).
    pub payload_len: usize,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
}

impl Default for Ipv6Repr {
    /// A header between unspecified addresses with hop limit 64.
    fn default() -> Self {
        Ipv6Repr {
            src: Ipv6Addr::UNSPECIFIED,
            dst: Ipv6Addr::UNSPECIFIED,
            next_header: PROTO_NONE,
            payload_len: 0,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
        }
    }
}

impl Ipv6Repr {
    /// Reads the header; the payload length must fit in the buffer
    /// ([`WireError::Truncated`]); trailing bytes are allowed.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &Ipv6Header<T>) -> Result<Self, WireError> {
        let plen = h.payload_len() as usize;
        check_len(h.b(), HEADER_LEN + plen)?;
        Ok(Ipv6Repr {
            src: h.src(),
            dst: h.dst(),
            next_header: h.next_header(),
            payload_len: plen,
            hop_limit: h.hop_limit(),
            traffic_class: h.traffic_class(),
            flow_label: h.flow_label(),
        })
    }

    /// Header length: 40.
    #[inline]
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus payload.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the fixed header (the payload is the caller's).
    ///
    /// Panics if the payload exceeds 65535 bytes or the buffer is shorter
    /// than 40.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv6Header<T>) {
        let plen = u16::try_from(self.payload_len).expect("IPv6 payload over 65535");
        let b = h.bm();
        b[0] = 0x60;
        b[1] = 0;
        h.set_traffic_class(self.traffic_class);
        h.set_flow_label(self.flow_label);
        h.set_payload_len(plen);
        h.set_next_header(self.next_header);
        h.set_hop_limit(self.hop_limit);
        h.set_src(self.src);
        h.set_dst(self.dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A hand-assembled header: traffic class 0xb8 (EF), flow label
    /// 0x12345, 4 bytes of UDP-ish payload, hop limit 255.
    fn sample() -> Vec<u8> {
        let mut b = vec![0x6b, 0x81, 0x23, 0x45, 0, 4, PROTO_UDP, 255];
        b.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        b.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        b.extend_from_slice(&[9, 8, 7, 6]);
        b
    }

    #[test]
    fn fields() {
        let b = sample();
        let h = Ipv6Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.version(), 6);
        assert_eq!(h.traffic_class(), 0xb8);
        assert_eq!((h.dscp(), h.ecn()), (46, 0));
        assert_eq!(h.flow_label(), 0x12345);
        assert_eq!(h.payload_len(), 4);
        assert_eq!(h.next_header(), PROTO_UDP);
        assert_eq!(h.hop_limit(), 255);
        assert_eq!(h.src(), "2001:db8::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(h.dst(), "fe80::2".parse::<Ipv6Addr>().unwrap());
        assert_eq!(h.payload(), &[9, 8, 7, 6]);
    }

    #[test]
    fn repr_round_trip() {
        let b = sample();
        let h = Ipv6Header::new_checked(&b[..]).unwrap();
        let r = Ipv6Repr::parse(&h).unwrap();
        assert_eq!(
            r,
            Ipv6Repr {
                src: h.src(),
                dst: h.dst(),
                next_header: PROTO_UDP,
                payload_len: 4,
                hop_limit: 255,
                traffic_class: 0xb8,
                flow_label: 0x12345,
            }
        );
        let mut out = vec![0xffu8; r.buffer_len()];
        let mut v = Ipv6Header::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.payload_mut().copy_from_slice(&[9, 8, 7, 6]);
        assert_eq!(out, b);
    }

    #[test]
    fn setters() {
        let mut b = sample();
        let mut h = Ipv6Header::new_checked(&mut b[..]).unwrap();
        h.set_traffic_class(0x03);
        h.set_flow_label(0xfffff);
        assert_eq!(
            (h.traffic_class(), h.flow_label(), h.version()),
            (3, 0xfffff, 6)
        );
        h.set_flow_label(0);
        assert_eq!((h.traffic_class(), h.flow_label()), (3, 0));
        assert_eq!(h.decrement_hop_limit(), 254);
        h.set_version();
        assert_eq!(h.version(), 6);
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = sample();
        for n in 0..HEADER_LEN {
            assert_eq!(
                Ipv6Header::new_checked(&b[..n]).err(),
                Some(WireError::Truncated)
            );
        }
        for n in HEADER_LEN..b.len() {
            let h = Ipv6Header::new_checked(&b[..n]).unwrap();
            assert_eq!(Ipv6Repr::parse(&h), Err(WireError::Truncated));
        }
        let mut b = b;
        b[0] = 0x4b;
        assert_eq!(
            Ipv6Header::new_checked(&b[..]).err(),
            Some(WireError::BadVersion)
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..64), v6 in any::<bool>()) {
            if v6 && !b.is_empty() {
                b[0] = 0x60 | (b[0] & 0x0f);
            }
            if let Ok(h) = Ipv6Header::new_checked(&b[..]) {
                let _ = (h.version(), h.traffic_class(), h.dscp(), h.ecn(), h.flow_label());
                let _ = (h.payload_len(), h.next_header(), h.hop_limit(), h.src(), h.dst(), h.payload());
                if let Ok(r) = Ipv6Repr::parse(&h) {
                    let mut out = vec![0u8; r.buffer_len()];
                    r.emit(&mut Ipv6Header::new_unchecked(&mut out[..]));
                    prop_assert_eq!(&out[..40], &b[..40]);
                }
            }
            let mut c = b.clone();
            if let Ok(mut h) = Ipv6Header::new_checked(&mut c[..]) {
                let _ = h.payload_mut();
                h.decrement_hop_limit();
            }
        }
    }
}
