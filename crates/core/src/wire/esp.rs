//! ESP headers (RFC 4303): the 8-byte header in front of an encrypted
//! payload.
//!
//! [`EspHeader`] is the checked view: `new_checked` needs the SPI and the
//! sequence number (8 bytes); the rest of the buffer is the payload (the
//! initialization vector, the ciphertext and the integrity check value,
//! whose lengths depend on the security association's algorithm, so the
//! view leaves them to the caller). [`EspRepr`] is the header as values.

use super::{be32, check_len, put32, WireError};

/// IP protocol number of ESP.
pub const PROTO_ESP: u8 = 50;
/// Length of the ESP header (SPI and sequence number).
pub const HEADER_LEN: usize = 8;
/// Length of the ESP trailer's fixed part (pad length, next header).
pub const TRAILER_LEN: usize = 2;

view! {
    /// An ESP header view (SPI, sequence number, then the payload).
    EspHeader
}

impl<T: AsRef<[u8]>> EspHeader<T> {
    /// Checks the buffer holds the 8-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), HEADER_LEN)?;
        Ok(EspHeader { buf })
    }

    /// Security parameters index.
    #[inline]
    pub fn spi(&self) -> u32 {
        be32(self.b(), 0)
    }

    /// Sequence number (the low 32 bits when extended sequence numbers
    /// are in use).
    #[inline]
    pub fn seq(&self) -> u32 {
        be32(self.b(), 4)
    }

    /// The header bytes (SPI and sequence number), the start of the
    /// associated data an AEAD algorithm authenticates (RFC 4106 §5).
    #[inline]
    pub fn header(&self) -> &[u8] {
        &self.b()[..HEADER_LEN]
    }

    /// Bytes after the header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EspHeader<T> {
    /// Sets the SPI.
    #[inline]
    pub fn set_spi(&mut self, v: u32) {
        put32(self.bm(), 0, v);
    }

    /// Sets the (low 32 bits of the) sequence number.
    #[inline]
    pub fn set_seq(&mut self, v: u32) {
        put32(self.bm(), 4, v);
    }

    /// Bytes after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[HEADER_LEN..]
    }
}

/// An ESP header as values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EspRepr {
    /// Security parameters index.
    pub spi: u32,
    /// Sequence number (low 32 bits).
    pub seq: u32,
}

impl EspRepr {
    /// Reads the header. An SPI of 0 is reserved (RFC 4303 §2.1) and
    /// refused as malformed.
    pub fn parse<T: AsRef<[u8]>>(h: &EspHeader<T>) -> Result<EspRepr, WireError> {
        if h.spi() == 0 {
            return Err(WireError::Malformed);
        }
        Ok(EspRepr {
            spi: h.spi(),
            seq: h.seq(),
        })
    }

    /// Bytes [`emit`](EspRepr::emit) writes.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut EspHeader<T>) {
        h.set_spi(self.spi);
        h.set_seq(self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = [0u8; 12];
        let r = EspRepr {
            spi: 0x1234_5678,
            seq: 9,
        };
        r.emit(&mut EspHeader::new_unchecked(&mut buf[..]));
        assert_eq!(&buf[..8], &[0x12, 0x34, 0x56, 0x78, 0, 0, 0, 9]);
        let h = EspHeader::new_checked(&buf[..]).unwrap();
        assert_eq!(EspRepr::parse(&h), Ok(r));
        assert_eq!(h.payload().len(), 4);
    }

    #[test]
    fn short_and_reserved() {
        assert_eq!(
            EspHeader::new_checked(&[0u8; 7][..]).err(),
            Some(WireError::Truncated)
        );
        let h = EspHeader::new_checked(&[0u8; 8][..]).unwrap();
        assert_eq!(EspRepr::parse(&h), Err(WireError::Malformed));
    }
}
