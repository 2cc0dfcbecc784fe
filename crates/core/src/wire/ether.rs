//! Ethernet II frames and addresses.

use super::{be16, put16, WireError};

pub const ETHERTYPE_IP: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_IP6: u16 = 0x86dd;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const HEADER_LEN: usize = 14;

/// A 48-bit Ethernet address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EtherAddr(pub [u8; 6]);

impl EtherAddr {
    pub const BROADCAST: EtherAddr = EtherAddr([0xff; 6]);

    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// Group (multicast or broadcast) addresses have the low bit of the
    /// first octet set.
    pub fn is_group(&self) -> bool {
        self.0[0] & 1 != 0
    }
}

/// Click prints Ethernet addresses as `00-01-02-03-04-05`.
impl std::fmt::Display for EtherAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.0;
        write!(
            f,
            "{:02X}-{:02X}-{:02X}-{:02X}-{:02X}-{:02X}",
            o[0], o[1], o[2], o[3], o[4], o[5]
        )
    }
}

/// A view of an Ethernet II header at the start of a buffer.
#[derive(Debug)]
pub struct EtherFrame<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> EtherFrame<T> {
    /// Checks the buffer holds at least a 14-byte header.
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(EtherFrame { buf })
    }

    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }

    pub fn dst(&self) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.b()[0..6]);
        EtherAddr(a)
    }

    pub fn src(&self) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.b()[6..12]);
        EtherAddr(a)
    }

    pub fn ethertype(&self) -> u16 {
        be16(self.b(), 12)
    }

    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EtherFrame<T> {
    pub fn set_dst(&mut self, a: EtherAddr) {
        self.buf.as_mut()[0..6].copy_from_slice(&a.0);
    }

    pub fn set_src(&mut self, a: EtherAddr) {
        self.buf.as_mut()[6..12].copy_from_slice(&a.0);
    }

    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.buf.as_mut(), 12, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_and_edit() {
        let mut b = [0u8; 20];
        b[12] = 0x08;
        let mut f = EtherFrame::new_checked(&mut b[..]).unwrap();
        assert_eq!(f.ethertype(), ETHERTYPE_IP);
        f.set_dst(EtherAddr::BROADCAST);
        f.set_src(EtherAddr([0, 1, 2, 3, 4, 5]));
        assert!(f.dst().is_broadcast());
        assert_eq!(f.src().to_string(), "00-01-02-03-04-05");
        assert_eq!(f.payload().len(), 6);
        assert_eq!(
            EtherFrame::new_checked(&b[..13]).err(),
            Some(WireError::Truncated)
        );
    }
}
