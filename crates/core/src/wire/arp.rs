//! ARP packets for IPv4 over Ethernet (RFC 826): the 28-byte body that
//! follows the Ethernet header.

use std::net::Ipv4Addr;

use super::ether::{EtherAddr, ETHERTYPE_IP};
use super::{be16, put16, WireError};

/// Length of an Ethernet/IPv4 ARP body.
pub const ARP_LEN: usize = 28;
pub const ARPHRD_ETHER: u16 = 1;
pub const ARPOP_REQUEST: u16 = 1;
pub const ARPOP_REPLY: u16 = 2;
pub const ARPOP_REVREQUEST: u16 = 3;
pub const ARPOP_REVREPLY: u16 = 4;
pub const ARPOP_INVREQUEST: u16 = 8;
pub const ARPOP_INVREPLY: u16 = 9;

/// A view of an ARP body at the start of a buffer. `new_checked` only
/// checks that 28 bytes are present; [`ArpPacket::is_ether_ipv4`] tells
/// whether the hardware/protocol fields describe Ethernet and IPv4.
#[derive(Debug)]
pub struct ArpPacket<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        if buf.as_ref().len() < ARP_LEN {
            return Err(WireError::Truncated);
        }
        Ok(ArpPacket { buf })
    }

    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }

    pub fn hardware(&self) -> u16 {
        be16(self.b(), 0)
    }

    pub fn protocol(&self) -> u16 {
        be16(self.b(), 2)
    }

    pub fn hardware_len(&self) -> u8 {
        self.b()[4]
    }

    pub fn protocol_len(&self) -> u8 {
        self.b()[5]
    }

    pub fn op(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Hardware type Ethernet, protocol IPv4, lengths 6 and 4.
    pub fn is_ether_ipv4(&self) -> bool {
        self.hardware() == ARPHRD_ETHER
            && self.protocol() == ETHERTYPE_IP
            && self.hardware_len() == 6
            && self.protocol_len() == 4
    }

    fn eth_at(&self, at: usize) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.b()[at..at + 6]);
        EtherAddr(a)
    }

    fn ip_at(&self, at: usize) -> Ipv4Addr {
        let b = self.b();
        Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
    }

    /// Sender hardware address.
    pub fn sha(&self) -> EtherAddr {
        self.eth_at(8)
    }

    /// Sender protocol address.
    pub fn spa(&self) -> Ipv4Addr {
        self.ip_at(14)
    }

    /// Target hardware address.
    pub fn tha(&self) -> EtherAddr {
        self.eth_at(18)
    }

    /// Target protocol address.
    pub fn tpa(&self) -> Ipv4Addr {
        self.ip_at(24)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Writes the fixed fields of an Ethernet/IPv4 ARP message with
    /// operation `op`.
    pub fn fill_header(&mut self, op: u16) {
        let b = self.buf.as_mut();
        put16(b, 0, ARPHRD_ETHER);
        put16(b, 2, ETHERTYPE_IP);
        b[4] = 6;
        b[5] = 4;
        put16(b, 6, op);
    }

    pub fn set_sha(&mut self, a: EtherAddr) {
        self.buf.as_mut()[8..14].copy_from_slice(&a.0);
    }

    pub fn set_spa(&mut self, a: Ipv4Addr) {
        self.buf.as_mut()[14..18].copy_from_slice(&a.octets());
    }

    pub fn set_tha(&mut self, a: EtherAddr) {
        self.buf.as_mut()[18..24].copy_from_slice(&a.0);
    }

    pub fn set_tpa(&mut self, a: Ipv4Addr) {
        self.buf.as_mut()[24..28].copy_from_slice(&a.octets());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
