//! UDP, TCP and ICMP header views (the fixed parts).

use super::{be16, be32, put16, WireError};

/// A UDP header view (8 bytes).
#[derive(Debug)]
pub struct UdpHeader<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> UdpHeader<T> {
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        if buf.as_ref().len() < 8 {
            return Err(WireError::Truncated);
        }
        Ok(UdpHeader { buf })
    }
    pub fn src_port(&self) -> u16 {
        be16(self.buf.as_ref(), 0)
    }
    pub fn dst_port(&self) -> u16 {
        be16(self.buf.as_ref(), 2)
    }
    pub fn len(&self) -> u16 {
        be16(self.buf.as_ref(), 4)
    }
    pub fn is_empty(&self) -> bool {
        self.len() <= 8
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buf.as_ref(), 6)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpHeader<T> {
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buf.as_mut(), 0, v);
    }
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buf.as_mut(), 2, v);
    }
    pub fn set_len(&mut self, v: u16) {
        put16(self.buf.as_mut(), 4, v);
    }
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buf.as_mut(), 6, v);
    }
}

/// A TCP header view (the fixed 20 bytes; the data offset is checked
/// against the buffer).
#[derive(Debug)]
pub struct TcpHeader<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> TcpHeader<T> {
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        if b.len() < 20 {
            return Err(WireError::Truncated);
        }
        let off = ((b[12] >> 4) as usize) * 4;
        if off < 20 || off > b.len() {
            return Err(WireError::BadLength);
        }
        Ok(TcpHeader { buf })
    }
    pub fn src_port(&self) -> u16 {
        be16(self.buf.as_ref(), 0)
    }
    pub fn dst_port(&self) -> u16 {
        be16(self.buf.as_ref(), 2)
    }
    pub fn seq(&self) -> u32 {
        be32(self.buf.as_ref(), 4)
    }
    pub fn ack(&self) -> u32 {
        be32(self.buf.as_ref(), 8)
    }
    pub fn header_len(&self) -> usize {
        ((self.buf.as_ref()[12] >> 4) as usize) * 4
    }
    pub fn flags(&self) -> u8 {
        self.buf.as_ref()[13]
    }
    pub fn window(&self) -> u16 {
        be16(self.buf.as_ref(), 14)
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buf.as_ref(), 16)
    }
    pub fn options(&self) -> &[u8] {
        &self.buf.as_ref()[20..self.header_len()]
    }
}

/// An ICMP header view (type, code, checksum, 4 bytes of rest).
#[derive(Debug)]
pub struct IcmpHeader<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> IcmpHeader<T> {
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        if buf.as_ref().len() < 8 {
            return Err(WireError::Truncated);
        }
        Ok(IcmpHeader { buf })
    }
    pub fn icmp_type(&self) -> u8 {
        self.buf.as_ref()[0]
    }
    pub fn code(&self) -> u8 {
        self.buf.as_ref()[1]
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buf.as_ref(), 2)
    }
    /// The identifier of echo messages.
    pub fn ident(&self) -> u16 {
        be16(self.buf.as_ref(), 4)
    }
    /// The sequence number of echo messages.
    pub fn seq(&self) -> u16 {
        be16(self.buf.as_ref(), 6)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IcmpHeader<T> {
    pub fn set_type(&mut self, v: u8) {
        self.buf.as_mut()[0] = v;
    }
    pub fn set_code(&mut self, v: u8) {
        self.buf.as_mut()[1] = v;
    }
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buf.as_mut(), 2, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
