//! IPv4 headers (RFC 791).
//!
//! [`Ipv4Header`] is the checked view: `new_checked` guarantees version 4
//! and a header length (IHL) of at least 20 bytes within the buffer, which
//! is all its accessors need. [`Ipv4Repr`] is the header as values; its
//! `parse` also requires the total length to cover the header and to fit
//! in the buffer (trailing bytes, such as Ethernet padding, are allowed).
//! Options are walked with [`Ipv4Header::options_iter`]; [`Ipv4Repr`]
//! carries them as raw bytes.

use std::net::Ipv4Addr;

use super::checksum;
use super::{be16, check_len, ipv4_at, put16, OptionsIter, WireError};

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Longest header: IHL 15.
pub const MAX_HEADER_LEN: usize = 60;
/// Protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
/// Protocol number of IGMP.
pub const PROTO_IGMP: u8 = 2;
/// Protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// Protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// Protocol number of IPv6 encapsulated in IPv4 (RFC 4213).
pub const PROTO_IPV6: u8 = 41;

/// Flag and fragment-offset bits of the `frag` word: reserved.
pub const IP_RF: u16 = 0x8000;
/// Don't fragment.
pub const IP_DF: u16 = 0x4000;
/// More fragments.
pub const IP_MF: u16 = 0x2000;
/// Fragment offset, in 8-byte units.
pub const IP_OFFMASK: u16 = 0x1fff;

/// Option type: end of option list.
pub const IPOPT_EOL: u8 = 0;
/// Option type: no operation (padding).
pub const IPOPT_NOP: u8 = 1;
/// Option type: record route.
pub const IPOPT_RR: u8 = 7;
/// Option type: timestamp.
pub const IPOPT_TS: u8 = 68;
/// Option type: security (RFC 1108).
pub const IPOPT_SECURITY: u8 = 130;
/// Option type: loose source and record route.
pub const IPOPT_LSRR: u8 = 131;
/// Option type: stream identifier.
pub const IPOPT_SATID: u8 = 136;
/// Option type: strict source and record route.
pub const IPOPT_SSRR: u8 = 137;
/// Option type: router alert (RFC 2113).
pub const IPOPT_RA: u8 = 148;
/// Bit of the option type saying the option is copied into fragments.
pub const IPOPT_COPIED: u8 = 0x80;

view! {
    /// A view of an IPv4 header at the start of a buffer. `new_checked`
    /// guarantees the version is 4, the header length is at least 20 and
    /// within the buffer; it does not check the total length or checksum
    /// (CheckIPHeader decides what to do with those).
    Ipv4Header
}

impl<T: AsRef<[u8]>> Ipv4Header<T> {
    /// Checks the version is 4 and the header length is at least 20 and
    /// within the buffer.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        check_len(b, MIN_HEADER_LEN)?;
        if b[0] >> 4 != 4 {
            return Err(WireError::BadVersion);
        }
        let hl = ((b[0] & 0x0f) as usize) * 4;
        if hl < MIN_HEADER_LEN || hl > b.len() {
            return Err(WireError::BadLength);
        }
        Ok(Ipv4Header { buf })
    }

    /// IP version (4).
    #[inline]
    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }

    /// Header length in bytes (IHL × 4), at least 20.
    #[inline]
    pub fn header_len(&self) -> usize {
        ((self.b()[0] & 0x0f) as usize) * 4
    }

    /// Type of service byte (DSCP and ECN).
    #[inline]
    pub fn tos(&self) -> u8 {
        self.b()[1]
    }

    /// Differentiated services code point (upper 6 bits of the TOS byte).
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.b()[1] >> 2
    }

    /// Explicit congestion notification (lower 2 bits of the TOS byte).
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.b()[1] & 3
    }

    /// Total length field: header plus payload.
    #[inline]
    pub fn total_len(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Identification field.
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// Flags and fragment offset, as the raw 16-bit word.
    #[inline]
    pub fn frag_word(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// The don't-fragment flag.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.frag_word() & IP_DF != 0
    }

    /// The more-fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.frag_word() & IP_MF != 0
    }

    /// Fragment offset in bytes.
    #[inline]
    pub fn frag_offset(&self) -> usize {
        ((self.frag_word() & IP_OFFMASK) as usize) * 8
    }

    /// Whether this is a fragment (more fragments follow or the offset is
    /// non-zero).
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.frag_word() & (IP_MF | IP_OFFMASK) != 0
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.b()[8]
    }

    /// Protocol of the payload.
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.b()[9]
    }

    /// Header checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), 10)
    }

    /// Source address.
    #[inline]
    pub fn src(&self) -> Ipv4Addr {
        ipv4_at(self.b(), 12)
    }

    /// Destination address.
    #[inline]
    pub fn dst(&self) -> Ipv4Addr {
        ipv4_at(self.b(), 16)
    }

    /// The options bytes (between the fixed header and the header length).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }

    /// The options, one by one. Offsets are relative to the options area;
    /// add 20 for an offset within the header.
    #[inline]
    pub fn options_iter(&self) -> OptionsIter<'_> {
        OptionsIter::new(self.options())
    }

    /// Whether the header checksum is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::verify(&self.b()[..self.header_len()])
    }

    /// The header bytes (header length, including options).
    #[inline]
    pub fn header(&self) -> &[u8] {
        &self.b()[..self.header_len()]
    }

    /// Bytes after the header, up to the total length when it fits in the
    /// buffer, else to the end of the buffer.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        let end = (self.total_len() as usize).clamp(self.header_len(), self.b().len());
        &self.b()[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Header<T> {
    /// Sets version 4 and a header length of `len` bytes (rounded down to
    /// a multiple of 4 and capped at 60).
    #[inline]
    pub fn set_version_and_header_len(&mut self, len: usize) {
        self.bm()[0] = 0x40 | (len.min(MAX_HEADER_LEN) / 4) as u8;
    }

    /// Sets the TOS byte.
    #[inline]
    pub fn set_tos(&mut self, v: u8) {
        self.bm()[1] = v;
    }

    /// Sets the DSCP (low 6 bits of `v`), keeping the ECN bits.
    #[inline]
    pub fn set_dscp(&mut self, v: u8) {
        let b = self.bm();
        b[1] = (b[1] & 3) | (v << 2);
    }

    /// Sets the ECN bits (low 2 bits of `v`), keeping the DSCP.
    #[inline]
    pub fn set_ecn(&mut self, v: u8) {
        let b = self.bm();
        b[1] = (b[1] & !3) | (v & 3);
    }

    /// Sets the total length.
    #[inline]
    pub fn set_total_len(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    /// Sets the identification field.
    #[inline]
    pub fn set_ident(&mut self, v: u16) {
        put16(self.bm(), 4, v);
    }

    /// Sets the flags and fragment offset word.
    #[inline]
    pub fn set_frag_word(&mut self, v: u16) {
        put16(self.bm(), 6, v);
    }

    /// Sets or clears the don't-fragment flag.
    #[inline]
    pub fn set_dont_frag(&mut self, on: bool) {
        let w = self.frag_word() & !IP_DF;
        self.set_frag_word(w | if on { IP_DF } else { 0 });
    }

    /// Sets or clears the more-fragments flag.
    #[inline]
    pub fn set_more_frags(&mut self, on: bool) {
        let w = self.frag_word() & !IP_MF;
        self.set_frag_word(w | if on { IP_MF } else { 0 });
    }

    /// Sets the fragment offset in bytes (rounded down to a multiple of 8),
    /// keeping the flags.
    #[inline]
    pub fn set_frag_offset(&mut self, bytes: usize) {
        let w = self.frag_word() & !IP_OFFMASK;
        self.set_frag_word(w | ((bytes / 8) as u16 & IP_OFFMASK));
    }

    /// Sets the time to live.
    #[inline]
    pub fn set_ttl(&mut self, v: u8) {
        self.bm()[8] = v;
    }

    /// Sets the protocol.
    #[inline]
    pub fn set_protocol(&mut self, v: u8) {
        self.bm()[9] = v;
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.bm(), 10, v);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src(&mut self, a: Ipv4Addr) {
        self.bm()[12..16].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst(&mut self, a: Ipv4Addr) {
        self.bm()[16..20].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum from scratch.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = self.header_len();
        let c = checksum::checksum(&self.b()[..hl]);
        self.set_checksum(c);
    }

    /// Decrements the TTL, updating the checksum incrementally (RFC 1624),
    /// as DecIPTTL does. Returns the new TTL.
    #[inline]
    pub fn decrement_ttl(&mut self) -> u8 {
        let old_word = be16(self.b(), 8);
        let ttl = self.ttl().wrapping_sub(1);
        self.set_ttl(ttl);
        let new_word = be16(self.b(), 8);
        let c = checksum::update16(self.checksum(), old_word, new_word);
        self.set_checksum(c);
        ttl
    }

    /// The options bytes, writable.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.bm()[MIN_HEADER_LEN..hl]
    }

    /// The payload (as [`Ipv4Header::payload`] bounds it), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        let end = (self.total_len() as usize).clamp(hl, self.b().len());
        &mut self.bm()[hl..end]
    }
}

/// An IPv4 header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr<'a> {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Protocol of the payload.
    pub protocol: u8,
    /// Payload length in bytes (total length minus header length).
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// TOS byte (DSCP and ECN).
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// More-fragments flag.
    pub more_frags: bool,
    /// Fragment offset in bytes (a multiple of 8).
    pub frag_offset: u16,
    /// Raw option bytes; `emit` pads them with end-of-list bytes to a
    /// multiple of 4. At most 40 bytes.
    pub options: &'a [u8],
}

impl Default for Ipv4Repr<'_> {
    /// An unfragmented, optionless header between unspecified addresses
    /// with TTL 64.
    fn default() -> Self {
        Ipv4Repr {
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            protocol: 0,
            payload_len: 0,
            ttl: 64,
            tos: 0,
            ident: 0,
            dont_frag: false,
            more_frags: false,
            frag_offset: 0,
            options: &[],
        }
    }
}

impl<'a> Ipv4Repr<'a> {
    /// Reads the header. Beyond what `new_checked` ensured, the total
    /// length must cover the header ([`WireError::BadLength`]) and fit in
    /// the buffer ([`WireError::Truncated`]). The checksum is not checked:
    /// see [`Ipv4Header::verify_checksum`].
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &'a Ipv4Header<T>) -> Result<Self, WireError> {
        let hl = h.header_len();
        let total = h.total_len() as usize;
        if total < hl {
            return Err(WireError::BadLength);
        }
        check_len(h.b(), total)?;
        Ok(Ipv4Repr {
            src: h.src(),
            dst: h.dst(),
            protocol: h.protocol(),
            payload_len: total - hl,
            ttl: h.ttl(),
            tos: h.tos(),
            ident: h.ident(),
            dont_frag: h.dont_frag(),
            more_frags: h.more_frags(),
            frag_offset: (h.frag_word() & IP_OFFMASK) * 8,
            options: h.options(),
        })
    }

    /// Header length: 20 plus the options padded to a multiple of 4.
    #[inline]
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.len().next_multiple_of(4)
    }

    /// Header plus payload: the total length.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Writes the header, options and checksum (the payload is the
    /// caller's). The reserved flag is written as zero.
    ///
    /// Panics if the options exceed 40 bytes, the total length exceeds
    /// 65535, or the buffer is shorter than [`Ipv4Repr::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Ipv4Header<T>) {
        let hl = self.header_len();
        assert!(hl <= MAX_HEADER_LEN, "IPv4 options longer than 40 bytes");
        let total = u16::try_from(self.buffer_len()).expect("IPv4 total length over 65535");
        assert!(h.b().len() >= hl, "buffer shorter than the IPv4 header");
        h.set_version_and_header_len(hl);
        h.set_tos(self.tos);
        h.set_total_len(total);
        h.set_ident(self.ident);
        let mut w = (self.frag_offset / 8) & IP_OFFMASK;
        if self.dont_frag {
            w |= IP_DF;
        }
        if self.more_frags {
            w |= IP_MF;
        }
        h.set_frag_word(w);
        h.set_ttl(self.ttl);
        h.set_protocol(self.protocol);
        h.set_src(self.src);
        h.set_dst(self.dst);
        let o = h.options_mut();
        o[..self.options.len()].copy_from_slice(self.options);
        o[self.options.len()..].fill(IPOPT_EOL);
        h.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::naive_checksum;
    use crate::wire::{BadOption, RawOption};
    use proptest::prelude::*;

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

    /// A widely published example header (192.168.0.1 -> 192.168.0.199,
    /// UDP, total length 115) whose checksum is 0xb861.
    const KNOWN: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn known_header_checksum() {
        let mut b = KNOWN.to_vec();
        b.resize(115, 0);
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert!(h.verify_checksum());
        assert_eq!(
            naive_checksum(&[&KNOWN[..10], &KNOWN[12..]].concat()),
            0xb861
        );
        let r = Ipv4Repr::parse(&h).unwrap();
        assert_eq!(r.payload_len, 95);
        assert_eq!(r.protocol, PROTO_UDP);
        assert!(r.dont_frag && !r.more_frags);
        let mut out = vec![0u8; r.header_len()];
        r.emit(&mut Ipv4Header::new_unchecked(&mut out[..]));
        assert_eq!(out, KNOWN);
        let mut h = Ipv4Header::new_checked(&mut b[..]).unwrap();
        h.set_checksum(0);
        h.fill_checksum();
        assert_eq!(h.checksum(), 0xb861);
    }

    /// A header with NOP and record-route (7 bytes, room for one address)
    /// options, then 4 payload bytes.
    fn with_options() -> Vec<u8> {
        let mut b = vec![
            0x47, 0xb8, 0, 32, 0xab, 0xcd, 0x20, 0x03, 9, PROTO_TCP, 0, 0, 10, 1, 2, 3, 10, 4, 5, 6,
        ];
        b.extend_from_slice(&[IPOPT_NOP, IPOPT_RR, 7, 4, 0, 0, 0, 0]);
        b.extend_from_slice(&[1, 2, 3, 4]);
        let c = naive_checksum(&b[..28]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn repr_round_trip_with_options() {
        let b = with_options();
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert!(h.verify_checksum());
        assert_eq!((h.dscp(), h.ecn()), (0x2e, 0));
        let r = Ipv4Repr::parse(&h).unwrap();
        assert_eq!(
            r,
            Ipv4Repr {
                src: Ipv4Addr::new(10, 1, 2, 3),
                dst: Ipv4Addr::new(10, 4, 5, 6),
                protocol: PROTO_TCP,
                payload_len: 4,
                ttl: 9,
                tos: 0xb8,
                ident: 0xabcd,
                dont_frag: false,
                more_frags: true,
                frag_offset: 24,
                options: &b[20..28],
            }
        );
        assert_eq!(r.header_len(), 28);
        assert_eq!(r.buffer_len(), 32);
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut Ipv4Header::new_unchecked(&mut out[..]));
        out[28..].copy_from_slice(&b[28..]);
        assert_eq!(out, b);
    }

    #[test]
    fn emit_pads_options() {
        let r = Ipv4Repr {
            src: Ipv4Addr::new(1, 2, 3, 4),
            dst: Ipv4Addr::new(5, 6, 7, 8),
            protocol: PROTO_ICMP,
            payload_len: 0,
            options: &[IPOPT_RR, 3, 4],
            ..Default::default()
        };
        assert_eq!(r.header_len(), 24);
        let mut out = vec![0xffu8; 24];
        r.emit(&mut Ipv4Header::new_unchecked(&mut out[..]));
        let h = Ipv4Header::new_checked(&out[..]).unwrap();
        assert_eq!(h.options(), &[IPOPT_RR, 3, 4, IPOPT_EOL]);
        assert!(h.verify_checksum());
        assert_eq!(naive_checksum(&out), 0);
        let p = Ipv4Repr::parse(&h).unwrap();
        assert_eq!(p.options, &[IPOPT_RR, 3, 4, IPOPT_EOL]);
    }

    #[test]
    fn options_iter_finds_record_route() {
        let b = with_options();
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        let v: Vec<_> = h.options_iter().map(Result::unwrap).collect();
        let kinds: Vec<u8> = v.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, [IPOPT_NOP, IPOPT_RR]);
        assert_eq!(
            v[1],
            RawOption {
                offset: 1,
                kind: IPOPT_RR,
                data: &[4, 0, 0, 0, 0]
            }
        );
        let mut b = b;
        b[22] = 9; // RR length past the options area
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert_eq!(h.options_iter().nth(1), Some(Err(BadOption { at: 2 })));
    }

    #[test]
    fn frag_setters() {
        let mut b = with_options();
        let mut h = Ipv4Header::new_checked(&mut b[..]).unwrap();
        h.set_more_frags(false);
        h.set_dont_frag(true);
        h.set_frag_offset(8 * 100 + 5);
        assert_eq!(h.frag_word(), IP_DF | 100);
        h.set_dscp(0x0a);
        h.set_ecn(3);
        assert_eq!(h.tos(), 0x2b);
        h.set_version_and_header_len(24);
        assert_eq!(h.header_len(), 24);
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = with_options();
        for n in 0..28 {
            assert!(Ipv4Header::new_checked(&b[..n]).is_err(), "{n}");
        }
        for n in 28..b.len() {
            let h = Ipv4Header::new_checked(&b[..n]).unwrap();
            assert_eq!(Ipv4Repr::parse(&h), Err(WireError::Truncated), "{n}");
        }
        let mut b = b;
        b[3] = 27; // total length inside the header
        let h = Ipv4Header::new_checked(&b[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&h), Err(WireError::BadLength));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..80), v4 in any::<bool>()) {
            if v4 && !b.is_empty() {
                // Make the version right often enough to reach the accessors.
                b[0] = 0x40 | (b[0] & 0x0f);
            }
            if let Ok(h) = Ipv4Header::new_checked(&b[..]) {
                let _ = (h.version(), h.header_len(), h.tos(), h.dscp(), h.ecn(), h.total_len());
                let _ = (h.ident(), h.frag_word(), h.dont_frag(), h.more_frags(), h.frag_offset());
                let _ = (h.is_fragment(), h.ttl(), h.protocol(), h.checksum(), h.src(), h.dst());
                let _ = (h.options(), h.verify_checksum(), h.header(), h.payload());
                for o in h.options_iter() {
                    let _ = o;
                }
                if let Ok(r) = Ipv4Repr::parse(&h) {
                    prop_assert_eq!(r.header_len(), h.header_len());
                    let mut out = vec![0u8; r.buffer_len()];
                    r.emit(&mut Ipv4Header::new_unchecked(&mut out[..]));
                    let h2 = Ipv4Header::new_checked(&out[..]).unwrap();
                    prop_assert!(h2.verify_checksum());
                    prop_assert_eq!(Ipv4Repr::parse(&h2).unwrap(), r);
                }
            }
            let mut c = b.clone();
            if let Ok(mut h) = Ipv4Header::new_checked(&mut c[..]) {
                let _ = h.payload_mut();
                h.decrement_ttl();
            }
        }
    }
}
