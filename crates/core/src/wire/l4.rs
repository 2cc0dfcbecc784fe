//! UDP, TCP and ICMP header views under their original paths; they live
//! in [`super::udp`], [`super::tcp`] and [`super::icmp`].

pub use super::icmp::IcmpHeader;
pub use super::tcp::TcpHeader;
pub use super::udp::UdpHeader;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireError;

    #[test]
    fn short_buffers_are_rejected() {
        assert!(UdpHeader::new_checked(&[0u8; 7][..]).is_err());
        assert!(TcpHeader::new_checked(&[0u8; 19][..]).is_err());
        let mut t = [0u8; 20];
        t[12] = 0x60; // data offset 24 > 20 bytes
        assert_eq!(
            TcpHeader::new_checked(&t[..]).err(),
            Some(WireError::BadLength)
        );
        t[12] = 0x50;
        assert_eq!(TcpHeader::new_checked(&t[..]).unwrap().options().len(), 0);
        assert!(IcmpHeader::new_checked(&[0u8; 7][..]).is_err());
    }
}
