//! IPv4 headers (RFC 791).

use std::net::Ipv4Addr;

use super::checksum;
use super::{be16, put16, WireError};

pub const MIN_HEADER_LEN: usize = 20;
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Flag and fragment-offset bits of the `frag` word.
pub const IP_RF: u16 = 0x8000;
pub const IP_DF: u16 = 0x4000;
pub const IP_MF: u16 = 0x2000;
pub const IP_OFFMASK: u16 = 0x1fff;

/// A view of an IPv4 header at the start of a buffer. `new_checked`
/// guarantees the version is 4, the header length is at least 20 and
/// within the buffer; it does not check the total length or checksum
/// (CheckIPHeader decides what to do with those).
#[derive(Debug)]
pub struct Ipv4Header<T> {
    buf: T,
}

impl<T: AsRef<[u8]>> Ipv4Header<T> {
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] >> 4 != 4 {
            return Err(WireError::BadVersion);
        }
        let hl = ((b[0] & 0x0f) as usize) * 4;
        if hl < MIN_HEADER_LEN || hl > b.len() {
            return Err(WireError::BadLength);
        }
        Ok(Ipv4Header { buf })
    }

    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }

    /// Header length in bytes (IHL × 4), at least 20.
    pub fn header_len(&self) -> usize {
        ((self.b()[0] & 0x0f) as usize) * 4
    }

    pub fn tos(&self) -> u8 {
        self.b()[1]
    }

    pub fn dscp(&self) -> u8 {
        self.b()[1] >> 2
    }

    pub fn total_len(&self) -> u16 {
        be16(self.b(), 2)
    }

    pub fn ident(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// Flags and fragment offset, as the raw 16-bit word.
    pub fn frag_word(&self) -> u16 {
        be16(self.b(), 6)
    }

    pub fn dont_frag(&self) -> bool {
        self.frag_word() & IP_DF != 0
    }

    pub fn more_frags(&self) -> bool {
        self.frag_word() & IP_MF != 0
    }

    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> usize {
        ((self.frag_word() & IP_OFFMASK) as usize) * 8
    }

    pub fn is_fragment(&self) -> bool {
        self.frag_word() & (IP_MF | IP_OFFMASK) != 0
    }

    pub fn ttl(&self) -> u8 {
        self.b()[8]
    }

    pub fn protocol(&self) -> u8 {
        self.b()[9]
    }

    pub fn checksum(&self) -> u16 {
        be16(self.b(), 10)
    }

    pub fn src(&self) -> Ipv4Addr {
        let b = self.b();
        Ipv4Addr::new(b[12], b[13], b[14], b[15])
    }

    pub fn dst(&self) -> Ipv4Addr {
        let b = self.b();
        Ipv4Addr::new(b[16], b[17], b[18], b[19])
    }

    /// The options bytes (between the fixed header and the header length).
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }

    /// Whether the header checksum is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::verify(&self.b()[..self.header_len()])
    }

    /// Bytes after the header, up to the total length when it fits in the
    /// buffer, else to the end of the buffer.
    pub fn payload(&self) -> &[u8] {
        let end = (self.total_len() as usize).clamp(self.header_len(), self.b().len());
        &self.b()[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Header<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buf.as_mut()
    }

    pub fn set_tos(&mut self, v: u8) {
        self.bm()[1] = v;
    }

    pub fn set_total_len(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    pub fn set_ident(&mut self, v: u16) {
        put16(self.bm(), 4, v);
    }

    pub fn set_frag_word(&mut self, v: u16) {
        put16(self.bm(), 6, v);
    }

    pub fn set_ttl(&mut self, v: u8) {
        self.bm()[8] = v;
    }

    pub fn set_protocol(&mut self, v: u8) {
        self.bm()[9] = v;
    }

    pub fn set_checksum(&mut self, v: u16) {
        put16(self.bm(), 10, v);
    }

    pub fn set_src(&mut self, a: Ipv4Addr) {
        self.bm()[12..16].copy_from_slice(&a.octets());
    }

    pub fn set_dst(&mut self, a: Ipv4Addr) {
        self.bm()[16..20].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum from scratch.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = self.header_len();
        let c = checksum::checksum(&self.b()[..hl]);
        self.set_checksum(c);
    }

    /// Decrements the TTL, updating the checksum incrementally (RFC 1624),
    /// as DecIPTTL does. Returns the new TTL.
    pub fn decrement_ttl(&mut self) -> u8 {
        let old_word = be16(self.b(), 8);
        let ttl = self.ttl().wrapping_sub(1);
        self.set_ttl(ttl);
        let new_word = be16(self.b(), 8);
        let c = checksum::update16(self.checksum(), old_word, new_word);
        self.set_checksum(c);
        ttl
    }

    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.bm()[MIN_HEADER_LEN..hl]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut h = vec![
            0x45, 0, 0, 28, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        h.extend_from_slice(&[0; 8]);
        let c = checksum::checksum(&h[..20]);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    #[test]
    fn fields() {
        let b = sample();
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.header_len(), 20);
        assert_eq!(h.total_len(), 28);
        assert!(h.dont_frag() && !h.is_fragment());
        assert_eq!(h.src(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(h.protocol(), PROTO_UDP);
        assert!(h.verify_checksum());
        assert_eq!(h.payload().len(), 8);
    }

    #[test]
    fn checked_construction_rejects_bad_input() {
        let mut b = sample();
        assert_eq!(
            Ipv4Header::new_checked(&b[..19]).err(),
            Some(WireError::Truncated)
        );
        b[0] = 0x65;
        assert_eq!(
            Ipv4Header::new_checked(&b[..]).err(),
            Some(WireError::BadVersion)
        );
        b[0] = 0x44;
        assert_eq!(
            Ipv4Header::new_checked(&b[..]).err(),
            Some(WireError::BadLength)
        );
        b[0] = 0x4f;
        assert_eq!(
            Ipv4Header::new_checked(&b[..]).err(),
            Some(WireError::BadLength)
        );
    }

    #[test]
    fn ttl_decrement_keeps_checksum_valid() {
        let mut b = sample();
        for _ in 0..64 {
            let mut h = Ipv4Header::new_checked(&mut b[..]).unwrap();
            h.decrement_ttl();
            assert!(h.verify_checksum());
        }
        assert_eq!(Ipv4Header::new_checked(&b[..]).unwrap().ttl(), 0);
    }

    #[test]
    fn payload_never_panics_on_lying_total_length() {
        let mut b = sample();
        b[2] = 0xff;
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.payload().len(), 8);
        b[2] = 0;
        b[3] = 4;
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.payload().len(), 0);
    }
}
