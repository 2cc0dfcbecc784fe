//! ARP packets for IPv4 over Ethernet (RFC 826): the 28-byte body that
//! follows the Ethernet header.
//!
//! [`ArpPacket`] is the checked view (it only needs 28 bytes; whether the
//! body describes Ethernet and IPv4 is [`ArpPacket::is_ether_ipv4`]);
//! [`ArpRepr`] is the body as values, and its `parse` rejects any other
//! hardware or protocol type.

use std::net::Ipv4Addr;

use super::ether::{EtherAddr, ETHERTYPE_IP};
use super::{be16, check_len, ether_at, ipv4_at, put16, WireError};

/// Length of an Ethernet/IPv4 ARP body.
pub const ARP_LEN: usize = 28;
/// Hardware type Ethernet.
pub const ARPHRD_ETHER: u16 = 1;
/// Operation: request.
pub const ARPOP_REQUEST: u16 = 1;
/// Operation: reply.
pub const ARPOP_REPLY: u16 = 2;
/// Operation: RARP request (RFC 903).
pub const ARPOP_REVREQUEST: u16 = 3;
/// Operation: RARP reply (RFC 903).
pub const ARPOP_REVREPLY: u16 = 4;
/// Operation: inverse ARP request (RFC 2390).
pub const ARPOP_INVREQUEST: u16 = 8;
/// Operation: inverse ARP reply (RFC 2390).
pub const ARPOP_INVREPLY: u16 = 9;

view! {
    /// A view of an ARP body at the start of a buffer. `new_checked` only
    /// checks that 28 bytes are present; [`ArpPacket::is_ether_ipv4`] tells
    /// whether the hardware/protocol fields describe Ethernet and IPv4.
    ArpPacket
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// Checks the buffer holds the 28-byte body.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), ARP_LEN)?;
        Ok(ArpPacket { buf })
    }

    /// Hardware type.
    #[inline]
    pub fn hardware(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// Protocol type (an EtherType).
    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Hardware address length.
    #[inline]
    pub fn hardware_len(&self) -> u8 {
        self.b()[4]
    }

    /// Protocol address length.
    #[inline]
    pub fn protocol_len(&self) -> u8 {
        self.b()[5]
    }

    /// Operation.
    #[inline]
    pub fn op(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Hardware type Ethernet, protocol IPv4, lengths 6 and 4.
    #[inline]
    pub fn is_ether_ipv4(&self) -> bool {
        self.hardware() == ARPHRD_ETHER
            && self.protocol() == ETHERTYPE_IP
            && self.hardware_len() == 6
            && self.protocol_len() == 4
    }

    /// Sender hardware address.
    #[inline]
    pub fn sha(&self) -> EtherAddr {
        ether_at(self.b(), 8)
    }

    /// Sender protocol address.
    #[inline]
    pub fn spa(&self) -> Ipv4Addr {
        ipv4_at(self.b(), 14)
    }

    /// Target hardware address.
    #[inline]
    pub fn tha(&self) -> EtherAddr {
        ether_at(self.b(), 18)
    }

    /// Target protocol address.
    #[inline]
    pub fn tpa(&self) -> Ipv4Addr {
        ipv4_at(self.b(), 24)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Writes the fixed fields of an Ethernet/IPv4 ARP message with
    /// operation `op`.
    #[inline]
    pub fn fill_header(&mut self, op: u16) {
        let b = self.bm();
        put16(b, 0, ARPHRD_ETHER);
        put16(b, 2, ETHERTYPE_IP);
        b[4] = 6;
        b[5] = 4;
        put16(b, 6, op);
    }

    /// Sets the sender hardware address.
    #[inline]
    pub fn set_sha(&mut self, a: EtherAddr) {
        self.bm()[8..14].copy_from_slice(&a.0);
    }

    /// Sets the sender protocol address.
    #[inline]
    pub fn set_spa(&mut self, a: Ipv4Addr) {
        self.bm()[14..18].copy_from_slice(&a.octets());
    }

    /// Sets the target hardware address.
    #[inline]
    pub fn set_tha(&mut self, a: EtherAddr) {
        self.bm()[18..24].copy_from_slice(&a.0);
    }

    /// Sets the target protocol address.
    #[inline]
    pub fn set_tpa(&mut self, a: Ipv4Addr) {
        self.bm()[24..28].copy_from_slice(&a.octets());
    }

    /// Sets the operation.
    #[inline]
    pub fn set_op(&mut self, op: u16) {
        put16(self.bm(), 6, op);
    }
}

/// An Ethernet/IPv4 ARP body as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpRepr {
    /// Operation ([`ARPOP_REQUEST`], [`ARPOP_REPLY`], ...).
    pub op: u16,
    /// Sender hardware address.
    pub sha: EtherAddr,
    /// Sender protocol address.
    pub spa: Ipv4Addr,
    /// Target hardware address.
    pub tha: EtherAddr,
    /// Target protocol address.
    pub tpa: Ipv4Addr,
}

impl ArpRepr {
    /// Reads the body; [`WireError::Unsupported`] unless it describes
    /// Ethernet and IPv4.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(a: &ArpPacket<T>) -> Result<Self, WireError> {
        if !a.is_ether_ipv4() {
            return Err(WireError::Unsupported);
        }
        Ok(ArpRepr {
            op: a.op(),
            sha: a.sha(),
            spa: a.spa(),
            tha: a.tha(),
            tpa: a.tpa(),
        })
    }

    /// Body length: 28.
    #[inline]
    pub const fn header_len(&self) -> usize {
        ARP_LEN
    }

    /// Bytes `emit` writes: 28.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        ARP_LEN
    }

    /// Writes the body. Panics if the buffer is shorter than 28 bytes.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, a: &mut ArpPacket<T>) {
        a.fill_header(self.op);
        a.set_sha(self.sha);
        a.set_spa(self.spa);
        a.set_tha(self.tha);
        a.set_tpa(self.tpa);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn build_and_read() {
        let mut b = [0u8; ARP_LEN];
        let mut a = ArpPacket::new_checked(&mut b[..]).unwrap();
        a.fill_header(ARPOP_REPLY);
        a.set_sha(EtherAddr([1, 2, 3, 4, 5, 6]));
        a.set_spa(Ipv4Addr::new(10, 0, 0, 1));
        a.set_tha(EtherAddr([6, 5, 4, 3, 2, 1]));
        a.set_tpa(Ipv4Addr::new(10, 0, 0, 2));
        let a = ArpPacket::new_checked(&b[..]).unwrap();
        assert!(a.is_ether_ipv4());
        assert_eq!(a.op(), ARPOP_REPLY);
        assert_eq!(a.sha(), EtherAddr([1, 2, 3, 4, 5, 6]));
        assert_eq!(a.spa(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(a.tha(), EtherAddr([6, 5, 4, 3, 2, 1]));
        assert_eq!(a.tpa(), Ipv4Addr::new(10, 0, 0, 2));
        assert!(ArpPacket::new_checked(&b[..27]).is_err());
    }

    fn request() -> Vec<u8> {
        // A who-has for 10.0.0.2 from 10.0.0.1, as on the wire.
        vec![
            0, 1, 8, 0, 6, 4, 0, 1, // Ethernet, IPv4, request
            0x02, 0, 0, 0, 0, 1, 10, 0, 0, 1, // sender
            0, 0, 0, 0, 0, 0, 10, 0, 0, 2, // target
        ]
    }

    #[test]
    fn repr_round_trip() {
        let b = request();
        let r = ArpRepr::parse(&ArpPacket::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            ArpRepr {
                op: ARPOP_REQUEST,
                sha: EtherAddr([2, 0, 0, 0, 0, 1]),
                spa: Ipv4Addr::new(10, 0, 0, 1),
                tha: EtherAddr::default(),
                tpa: Ipv4Addr::new(10, 0, 0, 2),
            }
        );
        let mut out = vec![0xee; r.buffer_len()];
        let mut v = ArpPacket::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.set_op(ARPOP_REQUEST);
        assert_eq!(out, b);
    }

    #[test]
    fn other_hardware_is_unsupported() {
        let mut b = request();
        b[1] = 6; // IEEE 802
        let a = ArpPacket::new_checked(&b[..]).unwrap();
        assert_eq!(ArpRepr::parse(&a), Err(WireError::Unsupported));
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = request();
        for n in 0..ARP_LEN {
            assert_eq!(
                ArpPacket::new_checked(&b[..n]).err(),
                Some(WireError::Truncated)
            );
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(a) = ArpPacket::new_checked(&b[..]) {
                let _ = (a.hardware(), a.protocol(), a.hardware_len(), a.protocol_len());
                let _ = (a.op(), a.sha(), a.spa(), a.tha(), a.tpa());
                if let Ok(r) = ArpRepr::parse(&a) {
                    let mut out = vec![0u8; r.buffer_len()];
                    r.emit(&mut ArpPacket::new_unchecked(&mut out[..]));
                    prop_assert_eq!(&out[..], &b[..ARP_LEN]);
                }
            }
        }
    }
}
