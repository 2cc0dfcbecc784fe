//! The link headers of packet captures other than Ethernet: Linux cooked
//! capture (`DLT_LINUX_SLL`), BSD loopback (`DLT_NULL`), Cisco HDLC
//! (`DLT_C_HDLC`) and PPP (`DLT_PPP`). Trace readers (FromDump's
//! `FORCE_IP`) use them to find the IP header under each link type.

use super::ether::{ETHERTYPE_IP, ETHERTYPE_IP6};
use super::{be16, check_len, WireError};

/// Length of a Linux cooked-capture (v1) header.
pub const SLL_HEADER_LEN: usize = 16;
/// Length of a BSD loopback header.
pub const NULL_HEADER_LEN: usize = 4;
/// Length of a Cisco HDLC header.
pub const C_HDLC_HEADER_LEN: usize = 4;

/// PPP protocol number of IPv4 (RFC 1332).
pub const PPP_IP: u16 = 0x0021;
/// PPP protocol number of IPv6 (RFC 5072).
pub const PPP_IPV6: u16 = 0x0057;

fn is_ip_ethertype(t: u16) -> bool {
    t == ETHERTYPE_IP || t == ETHERTYPE_IP6
}

view! {
    /// A Linux cooked-capture (v1) header: packet type, ARPHRD type, link
    /// address length, up to 8 address bytes, then an EtherType.
    SllHeader
}

impl<T: AsRef<[u8]>> SllHeader<T> {
    /// Checks the buffer holds the 16-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), SLL_HEADER_LEN)?;
        Ok(SllHeader { buf })
    }

    /// Where the packet went: 0 to us, 1 broadcast, 2 multicast, 3 to
    /// another host, 4 sent by us.
    #[inline]
    pub fn packet_type(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// The link's ARPHRD type (1 for Ethernet).
    #[inline]
    pub fn arphrd(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// The protocol of the payload, an EtherType.
    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.b(), 14)
    }

    /// Whether the payload is IPv4 or IPv6.
    #[inline]
    pub fn is_ip(&self) -> bool {
        is_ip_ethertype(self.protocol())
    }
}

view! {
    /// A BSD loopback header: the address family, in the byte order of
    /// the host that captured it.
    NullHeader
}

impl<T: AsRef<[u8]>> NullHeader<T> {
    /// Checks the buffer holds the 4-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), NULL_HEADER_LEN)?;
        Ok(NullHeader { buf })
    }

    /// The address family. Families are small numbers, so a little-endian
    /// capture has them in the first two bytes and a big-endian one in the
    /// last two; the header does not say which host wrote it.
    #[inline]
    pub fn family(&self) -> u32 {
        let b = self.b();
        let little = u32::from(u16::from_le_bytes([b[0], b[1]]));
        if little != 0 {
            little
        } else {
            u32::from(be16(b, 2))
        }
    }

    /// Whether the family is IPv4 (2) or one of the systems' IPv6 values
    /// (24 on NetBSD/OpenBSD, 28 on FreeBSD, 30 on Darwin).
    #[inline]
    pub fn is_ip(&self) -> bool {
        matches!(self.family(), 2 | 24 | 28 | 30)
    }
}

view! {
    /// A Cisco HDLC header: address, control, then an EtherType.
    CHdlcHeader
}

impl<T: AsRef<[u8]>> CHdlcHeader<T> {
    /// Checks the buffer holds the 4-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), C_HDLC_HEADER_LEN)?;
        Ok(CHdlcHeader { buf })
    }

    /// The protocol of the payload, an EtherType.
    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Whether the payload is IPv4 or IPv6.
    #[inline]
    pub fn is_ip(&self) -> bool {
        is_ip_ethertype(self.protocol())
    }
}

view! {
    /// A PPP header (RFC 1661): an optional address and control field
    /// (`ff 03`), then a protocol number of two bytes, or one when the
    /// peers agreed on protocol-field compression (an odd first byte).
    PppHeader
}

impl<T: AsRef<[u8]>> PppHeader<T> {
    /// Checks the buffer holds at least the protocol field, after the
    /// address and control field if there is one.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        let at = Self::protocol_at(b);
        let len = if b.get(at).is_some_and(|x| x & 1 == 1) {
            at + 1
        } else {
            at + 2
        };
        check_len(b, len)?;
        Ok(PppHeader { buf })
    }

    fn protocol_at(b: &[u8]) -> usize {
        if b.starts_with(&[0xff, 0x03]) {
            2
        } else {
            0
        }
    }

    /// The protocol number, expanded if it was compressed.
    #[inline]
    pub fn protocol(&self) -> u16 {
        let b = self.b();
        let at = Self::protocol_at(b);
        if b[at] & 1 == 1 {
            u16::from(b[at])
        } else {
            be16(b, at)
        }
    }

    /// The header's length: where the payload starts.
    #[inline]
    pub fn header_len(&self) -> usize {
        let b = self.b();
        let at = Self::protocol_at(b);
        if b[at] & 1 == 1 {
            at + 1
        } else {
            at + 2
        }
    }

    /// Whether the payload is IPv4 or IPv6.
    #[inline]
    pub fn is_ip(&self) -> bool {
        matches!(self.protocol(), PPP_IP | PPP_IPV6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sll_finds_ip_and_rejects_short() {
        let mut h = [0u8; 16];
        h[14..16].copy_from_slice(&ETHERTYPE_IP6.to_be_bytes());
        assert!(SllHeader::new_checked(&h[..]).unwrap().is_ip());
        h[14..16].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(!SllHeader::new_checked(&h[..]).unwrap().is_ip());
        for n in 0..16 {
            assert_eq!(
                SllHeader::new_checked(&h[..n]).err(),
                Some(WireError::Truncated)
            );
        }
    }

    #[test]
    fn null_reads_either_byte_order() {
        let little = [2, 0, 0, 0];
        let big = [0, 0, 0, 30];
        assert_eq!(NullHeader::new_checked(&little[..]).unwrap().family(), 2);
        assert_eq!(NullHeader::new_checked(&big[..]).unwrap().family(), 30);
        assert!(NullHeader::new_checked(&big[..]).unwrap().is_ip());
        assert!(!NullHeader::new_checked(&[7, 0, 0, 0][..]).unwrap().is_ip());
        assert!(NullHeader::new_checked(&little[..3]).is_err());
    }

    #[test]
    fn chdlc_protocol() {
        let h = [0x0f, 0, 0x08, 0x00];
        assert!(CHdlcHeader::new_checked(&h[..]).unwrap().is_ip());
        assert!(CHdlcHeader::new_checked(&h[..3]).is_err());
    }

    #[test]
    fn ppp_with_and_without_address_and_compression() {
        for (bytes, proto, len) in [
            (&[0xff, 0x03, 0x00, 0x21][..], PPP_IP, 4),
            (&[0xff, 0x03, 0x57][..], PPP_IPV6, 3),
            (&[0x00, 0x57][..], PPP_IPV6, 2),
            (&[0x21][..], PPP_IP, 1),
            (&[0xc0, 0x21][..], 0xc021, 2),
        ] {
            let h = PppHeader::new_checked(bytes).unwrap();
            assert_eq!((h.protocol(), h.header_len()), (proto, len), "{bytes:?}");
        }
        assert!(!PppHeader::new_checked(&[0xc0, 0x21][..]).unwrap().is_ip());
        for short in [
            &[][..],
            &[0xff, 0x03][..],
            &[0xff, 0x03, 0x00][..],
            &[0x00][..],
        ] {
            assert!(PppHeader::new_checked(short).is_err(), "{short:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(proptest::num::u8::ANY, 0..24)) {
            if let Ok(h) = SllHeader::new_checked(&b[..]) { let _ = (h.packet_type(), h.arphrd(), h.is_ip()); }
            if let Ok(h) = NullHeader::new_checked(&b[..]) { let _ = h.is_ip(); }
            if let Ok(h) = CHdlcHeader::new_checked(&b[..]) { let _ = h.is_ip(); }
            if let Ok(h) = PppHeader::new_checked(&b[..]) { let _ = (h.is_ip(), h.header_len()); }
        }
    }
}
