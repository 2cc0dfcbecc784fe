//! Typed, checked views over packet bytes.
//!
//! Each view wraps a byte buffer (`&[u8]` or `&mut [u8]`). `new_checked`
//! validates the length (and, for variable-length headers, the length field
//! against the buffer) once; after that every accessor indexes within the
//! checked bounds and cannot panic. Views read headers in place: nothing is
//! copied or allocated.
//!
//! Checksums use the Internet checksum (RFC 1071) with incremental update
//! (RFC 1624) for fields changed in place, as DecIPTTL needs.

pub mod arp;
pub mod checksum;
pub mod ether;
pub mod ipv4;
pub mod l4;

pub use ether::{EtherAddr, EtherFrame, ETHERTYPE_ARP, ETHERTYPE_IP, ETHERTYPE_IP6};
pub use ipv4::Ipv4Header;

/// Why bytes could not be viewed as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the fixed part of the header.
    Truncated,
    /// A length field disagrees with the buffer or the protocol.
    BadLength,
    /// A version or type field has a value the view does not handle.
    BadVersion,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WireError::Truncated => "truncated",
            WireError::BadLength => "bad length",
            WireError::BadVersion => "bad version",
        })
    }
}

impl std::error::Error for WireError {}

#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
