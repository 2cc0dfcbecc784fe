//! IPv6 extension headers (RFC 8200 section 4).
//!
//! [`Ipv6ExtHeader`] views any header in the common next-header/length
//! format: hop-by-hop options, destination options and routing headers
//! (`new_checked` checks the length field against the buffer); their
//! options are walked with [`Ipv6ExtHeader::options_iter`].
//! [`Ipv6FragHeader`] views the fixed 8-byte fragment header.
//! [`Ipv6ExtRepr`] and [`Ipv6FragRepr`] are the same as values.
//! [`upper_layer`] skips a chain of extension headers to find the
//! transport header.

use super::ipv6::{PROTO_AH, PROTO_DSTOPTS, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ROUTING};
use super::{be16, be32, check_len, next_tlv, put16, put32, BadOption, RawOption, WireError};

/// Smallest extension header, and the unit of their length fields.
pub const MIN_HEADER_LEN: usize = 8;
/// Length of a fragment header.
pub const FRAG_HEADER_LEN: usize = 8;

/// Option type: one byte of padding.
pub const IPV6OPT_PAD1: u8 = 0;
/// Option type: N bytes of padding.
pub const IPV6OPT_PADN: u8 = 1;
/// Option type: router alert (RFC 2711).
pub const IPV6OPT_ROUTER_ALERT: u8 = 5;
/// Option type: jumbo payload (RFC 2675).
pub const IPV6OPT_JUMBO: u8 = 0xc2;

/// Routing type: segment routing header (RFC 8754).
pub const ROUTING_SRH: u8 = 4;

/// What a node must do with an option type it does not recognize (the
/// two high bits, RFC 8200 section 4.2): 0 skip, 1 discard, 2 discard and
/// send a parameter problem, 3 the same unless the destination was
/// multicast.
#[inline]
pub fn unrecognized_action(kind: u8) -> u8 {
    kind >> 6
}

view! {
    /// A view of a hop-by-hop, destination options or routing header at the
    /// start of a buffer.
    Ipv6ExtHeader
}

impl<T: AsRef<[u8]>> Ipv6ExtHeader<T> {
    /// Checks the buffer holds 8 bytes and the whole header its length
    /// field claims.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        check_len(b, MIN_HEADER_LEN)?;
        check_len(b, (b[1] as usize + 1) * 8)?;
        Ok(Ipv6ExtHeader { buf })
    }

    /// Type of the following header.
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.b()[0]
    }

    /// Raw length field: 8-byte units beyond the first 8.
    #[inline]
    pub fn hdr_ext_len(&self) -> u8 {
        self.b()[1]
    }

    /// Header length in bytes.
    #[inline]
    pub fn header_len(&self) -> usize {
        (self.hdr_ext_len() as usize + 1) * 8
    }

    /// Bytes after next header and length: the options, or the routing
    /// type, segments left and type-specific data.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.b()[2..self.header_len()]
    }

    /// The options of a hop-by-hop or destination options header.
    #[inline]
    pub fn options_iter(&self) -> Ipv6OptionsIter<'_> {
        Ipv6OptionsIter::new(self.data())
    }

    /// Routing type (routing headers only).
    #[inline]
    pub fn routing_type(&self) -> u8 {
        self.b()[2]
    }

    /// Segments left (routing headers only).
    #[inline]
    pub fn segments_left(&self) -> u8 {
        self.b()[3]
    }

    /// Type-specific data of a routing header (after segments left).
    #[inline]
    pub fn routing_data(&self) -> &[u8] {
        &self.b()[4..self.header_len()]
    }

    /// Bytes after this header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6ExtHeader<T> {
    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, v: u8) {
        self.bm()[0] = v;
    }

    /// Sets the raw length field.
    #[inline]
    pub fn set_hdr_ext_len(&mut self, v: u8) {
        self.bm()[1] = v;
    }

    /// Sets the segments left of a routing header.
    #[inline]
    pub fn set_segments_left(&mut self, v: u8) {
        self.bm()[3] = v;
    }

    /// The bytes after next header and length, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.bm()[2..hl]
    }
}

/// A hop-by-hop, destination options or routing header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6ExtRepr<'a> {
    /// Type of the following header.
    pub next_header: u8,
    /// Bytes after next header and length; `emit` pads them with zeros
    /// (Pad1 options) to make the header a multiple of 8.
    pub data: &'a [u8],
}

impl<'a> Ipv6ExtRepr<'a> {
    /// Reads the header; a checked view is always valid.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &'a Ipv6ExtHeader<T>) -> Result<Self, WireError> {
        Ok(Ipv6ExtRepr {
            next_header: h.next_header(),
            data: h.data(),
        })
    }

    /// Header length: 2 plus the data, rounded up to a multiple of 8.
    #[inline]
    pub fn header_len(&self) -> usize {
        (2 + self.data.len()).next_multiple_of(8)
    }

    /// Bytes `emit` writes: the header length.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header. Panics if it would exceed 2048 bytes or the
    /// buffer is too short.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv6ExtHeader<T>) {
        let units =
            u8::try_from(self.header_len() / 8 - 1).expect("IPv6 extension header too long");
        h.set_next_header(self.next_header);
        h.set_hdr_ext_len(units);
        let d = h.data_mut();
        d[..self.data.len()].copy_from_slice(self.data);
        d[self.data.len()..].fill(IPV6OPT_PAD1);
    }
}

/// Iterator over the options of a hop-by-hop or destination options
/// header: Pad1 is a single zero byte, every other option is type, length
/// (of the value only), value. Stops after the first error.
#[derive(Clone, Debug)]
pub struct Ipv6OptionsIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Ipv6OptionsIter<'a> {
    /// Iterates over the options area `buf` (the header after its first
    /// two bytes).
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Ipv6OptionsIter { buf, pos: 0 }
    }
}

impl<'a> Iterator for Ipv6OptionsIter<'a> {
    type Item = Result<RawOption<'a>, BadOption>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.pos;
        let kind = *self.buf.get(at)?;
        if kind == IPV6OPT_PAD1 {
            self.pos = at + 1;
            return Some(Ok(RawOption {
                offset: at,
                kind,
                data: &[],
            }));
        }
        // The length counts the value only.
        let o = next_tlv(self.buf, &mut self.pos, |len| Some(2 + len as usize));
        Some(o.map(|o| RawOption {
            offset: at,
            kind,
            data: &o[2..],
        }))
    }
}

view! {
    /// A view of an IPv6 fragment header at the start of a buffer.
    Ipv6FragHeader
}

impl<T: AsRef<[u8]>> Ipv6FragHeader<T> {
    /// Checks the buffer holds the 8-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), FRAG_HEADER_LEN)?;
        Ok(Ipv6FragHeader { buf })
    }

    /// Type of the header the reassembled payload starts with.
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.b()[0]
    }

    /// Fragment offset in bytes.
    #[inline]
    pub fn frag_offset(&self) -> usize {
        (be16(self.b(), 2) & 0xfff8) as usize
    }

    /// The M (more fragments) flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.b()[3] & 1 != 0
    }

    /// Identification.
    #[inline]
    pub fn ident(&self) -> u32 {
        be32(self.b(), 4)
    }

    /// Bytes after the header (this fragment's data).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[FRAG_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6FragHeader<T> {
    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, v: u8) {
        self.bm()[0] = v;
    }

    /// Sets the offset in bytes (rounded down to a multiple of 8) and the
    /// M flag, zeroing the reserved fields.
    #[inline]
    pub fn set_offset_and_more(&mut self, offset: usize, more: bool) {
        let b = self.bm();
        b[1] = 0;
        put16(b, 2, (offset as u16 & 0xfff8) | more as u16);
    }

    /// Sets the identification.
    #[inline]
    pub fn set_ident(&mut self, v: u32) {
        put32(self.bm(), 4, v);
    }
}

/// An IPv6 fragment header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6FragRepr {
    /// Type of the header the reassembled payload starts with.
    pub next_header: u8,
    /// Offset in bytes (a multiple of 8).
    pub frag_offset: u16,
    /// More fragments follow.
    pub more_frags: bool,
    /// Identification.
    pub ident: u32,
}

impl Ipv6FragRepr {
    /// Reads the header; a checked view is always valid.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &Ipv6FragHeader<T>) -> Result<Self, WireError> {
        Ok(Ipv6FragRepr {
            next_header: h.next_header(),
            frag_offset: h.frag_offset() as u16,
            more_frags: h.more_frags(),
            ident: h.ident(),
        })
    }

    /// Header length: 8.
    #[inline]
    pub const fn header_len(&self) -> usize {
        FRAG_HEADER_LEN
    }

    /// Bytes `emit` writes: 8.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        FRAG_HEADER_LEN
    }

    /// Writes the header. Panics if the buffer is shorter than 8.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv6FragHeader<T>) {
        h.set_next_header(self.next_header);
        h.set_offset_and_more(self.frag_offset as usize, self.more_frags);
        h.set_ident(self.ident);
    }
}

/// Skips the extension headers of a packet whose fixed header says
/// `next_header` and whose payload is `payload`. Returns the first header
/// type that is not hop-by-hop, routing, destination options, fragment or
/// AH, with its offset in `payload`. A fragment header with a non-zero
/// offset ends the walk (later fragments carry no upper-layer header):
/// the result is then [`PROTO_FRAGMENT`] at that header's offset.
pub fn upper_layer(mut next_header: u8, payload: &[u8]) -> Result<(u8, usize), WireError> {
    let mut at = 0;
    loop {
        let rest = &payload[at..];
        let len = match next_header {
            PROTO_HOPOPTS | PROTO_ROUTING | PROTO_DSTOPTS => {
                let h = Ipv6ExtHeader::new_checked(rest)?;
                next_header = h.next_header();
                h.header_len()
            }
            PROTO_FRAGMENT => {
                let h = Ipv6FragHeader::new_checked(rest)?;
                if h.frag_offset() != 0 {
                    return Ok((PROTO_FRAGMENT, at));
                }
                next_header = h.next_header();
                FRAG_HEADER_LEN
            }
            PROTO_AH => {
                // AH counts its length in 4-byte units, minus 2 (RFC 4302).
                check_len(rest, 8)?;
                let len = (rest[1] as usize + 2) * 4;
                check_len(rest, len)?;
                next_header = rest[0];
                len
            }
            other => return Ok((other, at)),
        };
        at += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ipv6::{PROTO_NONE, PROTO_TCP, PROTO_UDP};
    use proptest::prelude::*;

    /// Hop-by-hop with a router alert and PadN, then a fragment header
    /// (first fragment, M set), then 4 bytes of UDP.
    fn chain() -> Vec<u8> {
        let mut b = vec![
            PROTO_FRAGMENT,
            0,
            IPV6OPT_ROUTER_ALERT,
            2,
            0,
            0,
            IPV6OPT_PADN,
            0,
        ];
        b.extend_from_slice(&[PROTO_UDP, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef]);
        b.extend_from_slice(&[1, 2, 3, 4]);
        b
    }

    #[test]
    fn hop_by_hop_options() {
        let b = chain();
        let h = Ipv6ExtHeader::new_checked(&b[..]).unwrap();
        assert_eq!(h.next_header(), PROTO_FRAGMENT);
        assert_eq!(h.header_len(), 8);
        let v: Vec<_> = h.options_iter().map(Result::unwrap).collect();
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            RawOption {
                offset: 0,
                kind: IPV6OPT_ROUTER_ALERT,
                data: &[0, 0]
            }
        );
        assert_eq!((v[1].kind, v[1].data.len()), (IPV6OPT_PADN, 0));
        assert_eq!(unrecognized_action(IPV6OPT_JUMBO), 3);
        let r = Ipv6ExtRepr::parse(&h).unwrap();
        let mut out = [0xffu8; 8];
        r.emit(&mut Ipv6ExtHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, b[..8]);
        let pad1 = Ipv6OptionsIter::new(&[0, 0, 1, 5]).collect::<Vec<_>>();
        assert_eq!(pad1[2], Err(BadOption { at: 3 }));
    }

    #[test]
    fn fragment_header() {
        let b = chain();
        let f = Ipv6FragHeader::new_checked(&b[8..]).unwrap();
        assert_eq!(f.next_header(), PROTO_UDP);
        assert_eq!(f.frag_offset(), 0);
        assert!(f.more_frags());
        assert_eq!(f.ident(), 0xdeadbeef);
        assert_eq!(f.payload(), &[1, 2, 3, 4]);
        let r = Ipv6FragRepr::parse(&f).unwrap();
        let mut out = [0u8; 8];
        r.emit(&mut Ipv6FragHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, b[8..16]);
        let r = Ipv6FragRepr {
            next_header: PROTO_TCP,
            frag_offset: 1448,
            more_frags: false,
            ident: 7,
        };
        r.emit(&mut Ipv6FragHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, [PROTO_TCP, 0, 0x05, 0xa8, 0, 0, 0, 7]);
        let f = Ipv6FragHeader::new_checked(&out[..]).unwrap();
        assert_eq!(Ipv6FragRepr::parse(&f).unwrap(), r);
    }

    #[test]
    fn routing_header() {
        // Segment routing, 2 segments left, one 16-byte segment.
        let mut b = vec![PROTO_TCP, 2, ROUTING_SRH, 2, 0, 0, 0, 0];
        b.extend_from_slice(&[0x20; 16]);
        let h = Ipv6ExtHeader::new_checked(&b[..]).unwrap();
        assert_eq!(h.header_len(), 24);
        assert_eq!((h.routing_type(), h.segments_left()), (ROUTING_SRH, 2));
        assert_eq!(h.routing_data().len(), 20);
        let r = Ipv6ExtRepr::parse(&h).unwrap();
        assert_eq!(r.header_len(), 24);
        let mut out = [0u8; 24];
        let mut v = Ipv6ExtHeader::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.set_segments_left(1);
        assert_eq!(v.segments_left(), 1);
        assert_eq!(out[..3], b[..3]);
        assert_eq!(out[4..], b[4..]);
    }

    #[test]
    fn walk_to_upper_layer() {
        let b = chain();
        assert_eq!(upper_layer(PROTO_HOPOPTS, &b), Ok((PROTO_UDP, 16)));
        assert_eq!(upper_layer(PROTO_TCP, &b), Ok((PROTO_TCP, 0)));
        let mut later = b.clone();
        later[11] = 0x08; // offset 8
        assert_eq!(upper_layer(PROTO_HOPOPTS, &later), Ok((PROTO_FRAGMENT, 8)));
        // AH (len 1: 12 bytes) then no next header.
        let ah = [PROTO_NONE, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(upper_layer(PROTO_AH, &ah), Ok((PROTO_NONE, 12)));
        assert_eq!(upper_layer(PROTO_AH, &ah[..11]), Err(WireError::Truncated));
        for n in 0..16 {
            assert_eq!(
                upper_layer(PROTO_HOPOPTS, &b[..n]),
                Err(WireError::Truncated)
            );
        }
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = chain();
        for n in 0..8 {
            assert!(Ipv6ExtHeader::new_checked(&b[..n]).is_err());
            assert!(Ipv6FragHeader::new_checked(&b[8..8 + n]).is_err());
        }
        let mut long = vec![PROTO_TCP, 1];
        long.resize(16, 0);
        for n in 0..16 {
            assert_eq!(
                Ipv6ExtHeader::new_checked(&long[..n]).err(),
                Some(WireError::Truncated)
            );
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64), nh in any::<u8>()) {
            if let Ok(h) = Ipv6ExtHeader::new_checked(&b[..]) {
                let _ = (h.next_header(), h.hdr_ext_len(), h.header_len(), h.data());
                let _ = (h.routing_type(), h.segments_left(), h.routing_data(), h.payload());
                for o in h.options_iter() {
                    let _ = o;
                }
                let r = Ipv6ExtRepr::parse(&h).unwrap();
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut Ipv6ExtHeader::new_unchecked(&mut out[..]));
                prop_assert_eq!(&out[..], &b[..h.header_len()]);
            }
            if let Ok(f) = Ipv6FragHeader::new_checked(&b[..]) {
                let _ = (f.next_header(), f.frag_offset(), f.more_frags(), f.ident(), f.payload());
                let r = Ipv6FragRepr::parse(&f).unwrap();
                let mut out = [0u8; 8];
                r.emit(&mut Ipv6FragHeader::new_unchecked(&mut out[..]));
                prop_assert_eq!(Ipv6FragRepr::parse(&Ipv6FragHeader::new_checked(&out[..]).unwrap()).unwrap(), r);
            }
            if let Ok((_, at)) = upper_layer(nh, &b) {
                prop_assert!(at <= b.len());
            }
        }
    }
}
