//! Typed, checked views over packet bytes, and plain-data representations
//! of each protocol's header.
//!
//! Every protocol follows the same two-layer pattern:
//!
//! * A **view** (`EtherFrame`, `ArpPacket`, `Ipv4Header`, `UdpHeader`,
//!   `TcpHeader`, `IcmpHeader`, `Ipv6Header`, `Ipv6ExtHeader`,
//!   `Ipv6FragHeader`, `Icmpv6Header`, `VlanTag`, `EspHeader`) wraps a byte buffer
//!   `T: AsRef<[u8]>` (`&[u8]`, `&mut [u8]`, `Vec<u8>`, ...).
//!   `new_checked` validates the lengths once (the fixed part, and any
//!   length field that decides where later fields sit); after that every
//!   accessor indexes within the checked bounds and cannot panic, whatever
//!   the bytes are. Accessors read in place: nothing is copied or
//!   allocated. Setters exist when `T: AsMut<[u8]>`. `new_unchecked` skips
//!   the validation, for writing a header into a fresh (zeroed) buffer;
//!   on such a view accessors may panic if the buffer is too short.
//! * A **Repr** (`EthernetRepr`, `ArpRepr`, `Ipv4Repr`, `UdpRepr`,
//!   `TcpRepr`, `IcmpRepr`, `Ipv6Repr`, `Icmpv6Repr`, ...) is the header as
//!   plain values. `Repr::parse(&view)` validates everything a well-formed
//!   header must satisfy (version, header length, length fields against
//!   the buffer) and `repr.emit(&mut view)` writes it back;
//!   `header_len()`/`buffer_len()` say how many bytes `emit` needs.
//!
//! Checksums are never checked by `parse`: what a bad one means is the
//! element's call (CheckIPHeader drops the packet, a router forwards a bad
//! transport checksum untouched) and summing the payload is a cost the
//! fast path should only pay on purpose, so the check is an explicit
//! `verify_checksum` on the view. `emit` fills a checksum itself only when
//! it covers nothing but bytes `emit` writes (the IPv4 header, ICMP); for
//! UDP, TCP and ICMPv6 the pseudo-header and payload are the caller's, so
//! `emit` leaves the field zero and the caller calls
//! `fill_checksum(src, dst)` once the payload is in place.
//!
//! Checksums use the Internet checksum (RFC 1071) with incremental update
//! (RFC 1624) for fields changed in place, as DecIPTTL needs.

/// Declares a header view: `pub struct $name<T> { buf: T }` (with the doc
/// comment given, and `Debug` and `Clone`) and the methods every view
/// shares: `new_unchecked`, `into_inner`, and the private `b()` and `bm()`
/// that borrow the buffer for the accessors. Each protocol file writes its
/// own `new_checked` (which decides what the accessors may assume) and
/// its field accessors in further `impl` blocks.
///
/// ```ignore
/// view! {
///     /// A UDP header view (8 bytes).
///     UdpHeader
/// }
/// ```
macro_rules! view {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name<T> {
            buf: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps `buf` without checking it, to emit into; accessors
            /// panic if it is shorter than the header they read.
            #[inline]
            pub fn new_unchecked(buf: T) -> Self {
                $name { buf }
            }

            /// The wrapped buffer.
            #[inline]
            pub fn into_inner(self) -> T {
                self.buf
            }

            #[inline]
            fn b(&self) -> &[u8] {
                self.buf.as_ref()
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            // Views of headers rclick only reads (capture link headers)
            // have no setters.
            #[allow(dead_code)]
            #[inline]
            fn bm(&mut self) -> &mut [u8] {
                self.buf.as_mut()
            }
        }
    };
}

pub mod arp;
pub mod checksum;
pub mod esp;
pub mod ether;
pub mod icmp;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod l4;
pub mod link;
pub mod tcp;
pub mod udp;

pub use arp::{ArpPacket, ArpRepr};
pub use checksum::PseudoHeader;
pub use esp::{EspHeader, EspRepr};
pub use ether::{
    EtherAddr, EtherFrame, EthernetRepr, VlanRepr, VlanTag, ETHERTYPE_ARP, ETHERTYPE_IP,
    ETHERTYPE_IP6,
};
pub use icmp::{IcmpHeader, IcmpRepr};
pub use icmpv6::{Icmpv6Header, Icmpv6Repr, NdiscOption, PrefixInfo};
pub use ipv4::{Ipv4Header, Ipv4Repr};
pub use ipv6::{Ipv6Header, Ipv6Repr};
pub use ipv6ext::{Ipv6ExtHeader, Ipv6FragHeader, Ipv6FragRepr};
pub use tcp::{TcpHeader, TcpOption, TcpRepr};
pub use udp::{UdpHeader, UdpRepr};

/// Why bytes could not be viewed or parsed as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the fixed part of the header, or than a length
    /// field says the packet holds.
    Truncated,
    /// A length field disagrees with the buffer or the protocol.
    BadLength,
    /// A version or type field has a value the view does not handle.
    BadVersion,
    /// A well-formed header of a kind this module does not represent (for
    /// example ARP for a hardware type other than Ethernet).
    Unsupported,
    /// A field has a value the protocol forbids (for example a neighbour
    /// discovery option of length zero).
    Malformed,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WireError::Truncated => "truncated",
            WireError::BadLength => "bad length",
            WireError::BadVersion => "bad version",
            WireError::Unsupported => "unsupported",
            WireError::Malformed => "malformed",
        })
    }
}

impl std::error::Error for WireError {}

/// One type-length-value option, as the option iterators yield it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawOption<'a> {
    /// Offset of the option's type byte within the options area.
    pub offset: usize,
    /// The option type.
    pub kind: u8,
    /// The option's value: the bytes after the type and length bytes
    /// (empty for single-byte options).
    pub data: &'a [u8],
}

/// A malformed option: its length byte is missing, too small, or runs past
/// the end of the options area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadOption {
    /// Offset within the options area of the offending byte (the length
    /// byte, or where it should have been). ICMP parameter-problem
    /// pointers want exactly this.
    pub at: usize,
}

/// Iterator over IPv4 or TCP options (RFC 791, RFC 9293): type 0 ends the
/// list, type 1 is a one-byte no-op, every other option is type, length
/// (counting both), value. Yields the end-of-list option, then stops; stops
/// after the first error.
#[derive(Clone, Debug)]
pub struct OptionsIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> OptionsIter<'a> {
    /// Iterates over the options area `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        OptionsIter { buf, pos: 0 }
    }
}

impl<'a> Iterator for OptionsIter<'a> {
    type Item = Result<RawOption<'a>, BadOption>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.pos;
        let kind = *self.buf.get(at)?;
        if kind <= 1 {
            // End of list consumes the rest so iteration stops.
            self.pos = if kind == 0 { self.buf.len() } else { at + 1 };
            return Some(Ok(RawOption {
                offset: at,
                kind,
                data: &[],
            }));
        }
        // The length counts the type and length bytes.
        let o = next_tlv(self.buf, &mut self.pos, |len| {
            (len >= 2).then_some(len as usize)
        });
        Some(o.map(|o| RawOption {
            offset: at,
            kind,
            data: &o[2..],
        }))
    }
}

/// The type-length-value option at `*pos` in `buf`, for the option
/// iterators: `total_len` turns its length byte into the option's whole
/// length (type and length bytes included), or `None` for a length the
/// protocol forbids. Returns the option's bytes and moves `*pos` past
/// them, or, when the length byte is missing, forbidden or runs past
/// `buf`, the error pointing at it and moves `*pos` to the end.
#[inline]
pub(crate) fn next_tlv<'a>(
    buf: &'a [u8],
    pos: &mut usize,
    total_len: impl FnOnce(u8) -> Option<usize>,
) -> Result<&'a [u8], BadOption> {
    let at = *pos;
    *pos = buf.len();
    let len = buf.get(at + 1).copied().and_then(total_len);
    let o = len.and_then(|len| buf.get(at..at + len));
    let o = o.ok_or(BadOption { at: at + 1 })?;
    *pos = at + o.len();
    Ok(o)
}

/// `Err(Truncated)` when `b` is shorter than `len` bytes: the check every
/// `new_checked` and `parse` makes before it reads a field.
#[inline]
pub(crate) fn check_len(b: &[u8], len: usize) -> Result<(), WireError> {
    if b.len() < len {
        return Err(WireError::Truncated);
    }
    Ok(())
}

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

#[inline]
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// `N` bytes at `at`, or zeros when the buffer ends first. For fields whose
/// presence depends on a message type that `new_checked` cannot tie to the
/// accessor being called.
#[inline]
pub(crate) fn array_or_zero<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0; N];
    if let Some(s) = at.checked_add(N).and_then(|end| b.get(at..end)) {
        a.copy_from_slice(s);
    }
    a
}

#[inline]
pub(crate) fn ether_at(b: &[u8], at: usize) -> EtherAddr {
    let mut a = [0; 6];
    a.copy_from_slice(&b[at..at + 6]);
    EtherAddr(a)
}

#[inline]
pub(crate) fn ipv4_at(b: &[u8], at: usize) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

#[inline]
pub(crate) fn ipv6_at(b: &[u8], at: usize) -> std::net::Ipv6Addr {
    let mut a = [0; 16];
    a.copy_from_slice(&b[at..at + 16]);
    std::net::Ipv6Addr::from(a)
}

/// Helpers shared by the tests of every wire module.
#[cfg(test)]
pub(crate) mod testutil {
    /// RFC 1071 checksum, written the slow obvious way so the tests do not
    /// check `checksum` against itself.
    pub fn naive_checksum(data: &[u8]) -> u16 {
        let mut s: u64 = 0;
        let mut i = 0;
        while i < data.len() {
            let hi = data[i] as u64;
            let lo = data.get(i + 1).copied().unwrap_or(0) as u64;
            s += (hi << 8) | lo;
            i += 2;
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    /// The IPv4 pseudo-header as bytes (RFC 768).
    pub fn pseudo_v4(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&src);
        v.extend_from_slice(&dst);
        v.push(0);
        v.push(proto);
        v.extend_from_slice(&(len as u16).to_be_bytes());
        v
    }

    /// The IPv6 pseudo-header as bytes (RFC 8200 section 8.1).
    pub fn pseudo_v6(src: [u8; 16], dst: [u8; 16], next: u8, len: usize) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&src);
        v.extend_from_slice(&dst);
        v.extend_from_slice(&(len as u32).to_be_bytes());
        v.extend_from_slice(&[0, 0, 0, next]);
        v
    }

    /// Checksum over the pseudo-header followed by `segment`.
    pub fn naive_with_pseudo(pseudo: &[u8], segment: &[u8]) -> u16 {
        // The pseudo-header is a multiple of 4 bytes, so concatenating
        // keeps the segment's words aligned.
        let mut all = pseudo.to_vec();
        all.extend_from_slice(segment);
        naive_checksum(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn options_iter_walks_and_stops() {
        // NOP, RR (len 7), EOL, then garbage the iterator must not reach.
        let b = [1, 7, 7, 4, 1, 2, 3, 4, 0, 9, 9];
        let v: Vec<_> = OptionsIter::new(&b).collect();
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0],
            Ok(RawOption {
                offset: 0,
                kind: 1,
                data: &[]
            })
        );
        let rr = v[1].unwrap();
        assert_eq!((rr.offset, rr.kind, rr.data), (1, 7, &[4, 1, 2, 3, 4][..]));
        assert_eq!(v[2].unwrap().kind, 0);
    }

    #[test]
    fn options_iter_reports_offending_byte() {
        assert_eq!(
            OptionsIter::new(&[1, 7]).nth(1),
            Some(Err(BadOption { at: 2 }))
        );
        assert_eq!(
            OptionsIter::new(&[7, 1, 0]).next(),
            Some(Err(BadOption { at: 1 }))
        );
        assert_eq!(
            OptionsIter::new(&[7, 9, 0]).next(),
            Some(Err(BadOption { at: 1 }))
        );
        let mut it = OptionsIter::new(&[7, 9, 0]);
        it.next();
        assert_eq!(it.next(), None);
    }

    proptest! {
        #[test]
        fn options_iter_never_panics(b in proptest::collection::vec(any::<u8>(), 0..48)) {
            let mut n = 0;
            for o in OptionsIter::new(&b) {
                n += 1;
                if let Ok(o) = o {
                    prop_assert!(o.offset + o.data.len() <= b.len());
                }
            }
            prop_assert!(n <= b.len());
        }
    }

    #[test]
    fn array_or_zero_is_total() {
        assert_eq!(array_or_zero::<4>(&[1, 2, 3], 0), [0; 4]);
        assert_eq!(array_or_zero::<2>(&[1, 2, 3], 1), [2, 3]);
        assert_eq!(array_or_zero::<2>(&[1, 2, 3], usize::MAX - 1), [0; 2]);
    }
}
