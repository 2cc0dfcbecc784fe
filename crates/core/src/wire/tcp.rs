//! TCP headers (RFC 9293) and options, over IPv4 or IPv6.
//!
//! [`TcpHeader`] is the checked view: `new_checked` requires the 20-byte
//! fixed header and a data offset of at least 20 within the buffer.
//! [`TcpRepr`] is the header as values, options kept as raw bytes;
//! [`TcpOption`] decodes them one by one ([`TcpHeader::options_typed`])
//! and encodes them for building a header. TCP has no length field: the
//! view's buffer is taken to be the whole segment (the IP payload), which
//! is what the checksum and [`TcpRepr::payload_len`] cover.

use super::checksum::{self, PseudoHeader};
use super::ipv4::PROTO_TCP;
use super::{be16, be32, check_len, put16, put32, BadOption, OptionsIter, RawOption, WireError};

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Longest header: data offset 15.
pub const MAX_HEADER_LEN: usize = 60;

/// FIN flag.
pub const TCP_FIN: u16 = 0x01;
/// SYN flag.
pub const TCP_SYN: u16 = 0x02;
/// RST flag.
pub const TCP_RST: u16 = 0x04;
/// PSH flag.
pub const TCP_PSH: u16 = 0x08;
/// ACK flag.
pub const TCP_ACK: u16 = 0x10;
/// URG flag.
pub const TCP_URG: u16 = 0x20;
/// ECE flag (RFC 3168).
pub const TCP_ECE: u16 = 0x40;
/// CWR flag (RFC 3168).
pub const TCP_CWR: u16 = 0x80;
/// NS flag (RFC 3540, historic), the low bit of byte 12.
pub const TCP_NS: u16 = 0x100;

/// Option kind: end of option list.
pub const TCPOPT_EOL: u8 = 0;
/// Option kind: no operation.
pub const TCPOPT_NOP: u8 = 1;
/// Option kind: maximum segment size.
pub const TCPOPT_MSS: u8 = 2;
/// Option kind: window scale (RFC 7323).
pub const TCPOPT_WSCALE: u8 = 3;
/// Option kind: SACK permitted (RFC 2018).
pub const TCPOPT_SACKOK: u8 = 4;
/// Option kind: SACK blocks (RFC 2018).
pub const TCPOPT_SACK: u8 = 5;
/// Option kind: timestamps (RFC 7323).
pub const TCPOPT_TIMESTAMP: u8 = 8;

view! {
    /// A TCP header view (the fixed 20 bytes; the data offset is checked
    /// against the buffer).
    TcpHeader
}

impl<T: AsRef<[u8]>> TcpHeader<T> {
    /// Checks the fixed header is present and the data offset is at least
    /// 20 and within the buffer.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        check_len(b, MIN_HEADER_LEN)?;
        let off = ((b[12] >> 4) as usize) * 4;
        if off < MIN_HEADER_LEN || off > b.len() {
            return Err(WireError::BadLength);
        }
        Ok(TcpHeader { buf })
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// Sequence number.
    #[inline]
    pub fn seq(&self) -> u32 {
        be32(self.b(), 4)
    }

    /// Acknowledgment number.
    #[inline]
    pub fn ack(&self) -> u32 {
        be32(self.b(), 8)
    }

    /// Header length in bytes (data offset × 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        ((self.b()[12] >> 4) as usize) * 4
    }

    /// The eight flag bits of byte 13 (`TCP_FIN` .. `TCP_CWR`).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.b()[13]
    }

    /// All nine flag bits, [`TCP_NS`] included.
    #[inline]
    pub fn flags_with_ns(&self) -> u16 {
        (((self.b()[12] & 1) as u16) << 8) | self.b()[13] as u16
    }

    /// Whether every flag in `mask` (`TCP_*`) is set.
    #[inline]
    pub fn has_flags(&self, mask: u16) -> bool {
        self.flags_with_ns() & mask == mask
    }

    /// SYN flag.
    #[inline]
    pub fn syn(&self) -> bool {
        self.has_flags(TCP_SYN)
    }

    /// FIN flag.
    #[inline]
    pub fn fin(&self) -> bool {
        self.has_flags(TCP_FIN)
    }

    /// RST flag.
    #[inline]
    pub fn rst(&self) -> bool {
        self.has_flags(TCP_RST)
    }

    /// ACK flag.
    #[inline]
    pub fn ack_flag(&self) -> bool {
        self.has_flags(TCP_ACK)
    }

    /// Window.
    #[inline]
    pub fn window(&self) -> u16 {
        be16(self.b(), 14)
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), 16)
    }

    /// Urgent pointer.
    #[inline]
    pub fn urgent(&self) -> u16 {
        be16(self.b(), 18)
    }

    /// The options bytes (between the fixed header and the data offset).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }

    /// The options as raw type-length-value records.
    #[inline]
    pub fn options_iter(&self) -> OptionsIter<'_> {
        OptionsIter::new(self.options())
    }

    /// The options decoded; a known option with the wrong length is a
    /// [`BadOption`] at its length byte.
    #[inline]
    pub fn options_typed(&self) -> impl Iterator<Item = Result<TcpOption<'_>, BadOption>> + '_ {
        self.options_iter().map(|r| r.and_then(TcpOption::from_raw))
    }

    /// Bytes after the header (the segment's data).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }

    /// Sequence space the segment occupies: data bytes plus one each for
    /// SYN and FIN.
    #[inline]
    pub fn segment_len(&self) -> usize {
        self.payload().len() + self.syn() as usize + self.fin() as usize
    }

    /// Whether the checksum is correct for the whole buffer as a segment
    /// from `src` to `dst`.
    #[inline]
    pub fn verify_checksum<A: PseudoHeader>(&self, src: A, dst: A) -> bool {
        checksum::verify_pseudo(src, dst, PROTO_TCP, self.b())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpHeader<T> {
    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.bm(), 0, v);
    }

    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    /// Sets the sequence number.
    #[inline]
    pub fn set_seq(&mut self, v: u32) {
        put32(self.bm(), 4, v);
    }

    /// Sets the acknowledgment number.
    #[inline]
    pub fn set_ack(&mut self, v: u32) {
        put32(self.bm(), 8, v);
    }

    /// Sets the header length in bytes (rounded down to a multiple of 4,
    /// capped at 60), keeping the NS bit.
    #[inline]
    pub fn set_header_len(&mut self, len: usize) {
        let b = self.bm();
        b[12] = (((len.min(MAX_HEADER_LEN) / 4) as u8) << 4) | (b[12] & 0x0f);
    }

    /// Sets the nine flag bits ([`TCP_NS`] included).
    #[inline]
    pub fn set_flags(&mut self, flags: u16) {
        let b = self.bm();
        b[12] = (b[12] & 0xf0) | ((flags >> 8) & 1) as u8;
        b[13] = flags as u8;
    }

    /// Sets the window.
    #[inline]
    pub fn set_window(&mut self, v: u16) {
        put16(self.bm(), 14, v);
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.bm(), 16, v);
    }

    /// Sets the urgent pointer.
    #[inline]
    pub fn set_urgent(&mut self, v: u16) {
        put16(self.bm(), 18, v);
    }

    /// The options bytes, writable.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.bm()[MIN_HEADER_LEN..hl]
    }

    /// The data after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.bm()[hl..]
    }

    /// Computes the checksum over the pseudo-header and the whole buffer.
    #[inline]
    pub fn fill_checksum<A: PseudoHeader>(&mut self, src: A, dst: A) {
        self.set_checksum(0);
        let c = checksum::pseudo_checksum(src, dst, PROTO_TCP, self.b());
        self.set_checksum(c);
    }
}

/// SACK blocks of a [`TcpOption::Sack`]: (left edge, right edge) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackBlocks<'a>(&'a [u8]);

impl<'a> SackBlocks<'a> {
    /// The blocks in option order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        self.0.chunks_exact(8).map(|c| (be32(c, 0), be32(c, 4)))
    }

    /// Number of blocks.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    /// Whether there are no blocks.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.len() < 8
    }

    /// The raw block bytes.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// One TCP option, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// End of option list.
    EndOfList,
    /// No operation (padding).
    NoOp,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift count.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// Selective acknowledgment blocks.
    Sack(SackBlocks<'a>),
    /// Timestamp value and echo reply.
    Timestamp {
        /// TSval.
        tsval: u32,
        /// TSecr.
        tsecr: u32,
    },
    /// Any other kind, with its value bytes.
    Unknown {
        /// Option kind.
        kind: u8,
        /// Value (after kind and length).
        data: &'a [u8],
    },
}

impl<'a> TcpOption<'a> {
    /// Decodes a raw option; a known kind with the wrong length is a
    /// [`BadOption`] at its length byte.
    #[inline]
    pub fn from_raw(o: RawOption<'a>) -> Result<Self, BadOption> {
        let d = o.data;
        let bad = Err(BadOption { at: o.offset + 1 });
        Ok(match o.kind {
            TCPOPT_EOL => TcpOption::EndOfList,
            TCPOPT_NOP => TcpOption::NoOp,
            TCPOPT_MSS if d.len() == 2 => TcpOption::Mss(be16(d, 0)),
            TCPOPT_WSCALE if d.len() == 1 => TcpOption::WindowScale(d[0]),
            TCPOPT_SACKOK if d.is_empty() => TcpOption::SackPermitted,
            TCPOPT_SACK if d.len().is_multiple_of(8) => TcpOption::Sack(SackBlocks(d)),
            TCPOPT_TIMESTAMP if d.len() == 8 => TcpOption::Timestamp {
                tsval: be32(d, 0),
                tsecr: be32(d, 4),
            },
            TCPOPT_MSS | TCPOPT_WSCALE | TCPOPT_SACKOK | TCPOPT_SACK | TCPOPT_TIMESTAMP => {
                return bad
            }
            kind => TcpOption::Unknown { kind, data: d },
        })
    }

    /// Encoded length in bytes.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        match self {
            TcpOption::EndOfList | TcpOption::NoOp => 1,
            TcpOption::Mss(_) => 4,
            TcpOption::WindowScale(_) => 3,
            TcpOption::SackPermitted => 2,
            TcpOption::Sack(s) => 2 + s.0.len(),
            TcpOption::Timestamp { .. } => 10,
            TcpOption::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Encodes the option at the start of `buf`; returns its length.
    /// Panics if `buf` is shorter than [`TcpOption::buffer_len`] or the
    /// option is longer than 255 bytes.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let n = self.buffer_len();
        let (kind, body): (u8, &[u8]) = match self {
            TcpOption::EndOfList => {
                buf[0] = TCPOPT_EOL;
                return 1;
            }
            TcpOption::NoOp => {
                buf[0] = TCPOPT_NOP;
                return 1;
            }
            TcpOption::Mss(v) => {
                put16(buf, 2, *v);
                (TCPOPT_MSS, &[])
            }
            TcpOption::WindowScale(v) => {
                buf[2] = *v;
                (TCPOPT_WSCALE, &[])
            }
            TcpOption::SackPermitted => (TCPOPT_SACKOK, &[]),
            TcpOption::Sack(s) => (TCPOPT_SACK, s.0),
            TcpOption::Timestamp { tsval, tsecr } => {
                put32(buf, 2, *tsval);
                put32(buf, 6, *tsecr);
                (TCPOPT_TIMESTAMP, &[])
            }
            TcpOption::Unknown { kind, data } => (*kind, data),
        };
        buf[0] = kind;
        buf[1] = u8::try_from(n).expect("TCP option longer than 255 bytes");
        buf[2..2 + body.len()].copy_from_slice(body);
        n
    }
}

/// A TCP header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// The nine flag bits (`TCP_*`).
    pub flags: u16,
    /// Window.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Raw option bytes; `emit` pads them with end-of-list bytes to a
    /// multiple of 4. At most 40 bytes.
    pub options: &'a [u8],
    /// Data bytes after the header.
    pub payload_len: usize,
}

impl<'a> TcpRepr<'a> {
    /// Reads the header; the whole rest of the buffer is the payload. The
    /// options are not validated (see [`TcpHeader::options_typed`]), nor
    /// is the checksum (see [`TcpHeader::verify_checksum`]).
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(t: &'a TcpHeader<T>) -> Result<Self, WireError> {
        Ok(TcpRepr {
            src_port: t.src_port(),
            dst_port: t.dst_port(),
            seq: t.seq(),
            ack: t.ack(),
            flags: t.flags_with_ns(),
            window: t.window(),
            urgent: t.urgent(),
            options: t.options(),
            payload_len: t.payload().len(),
        })
    }

    /// Header length: 20 plus the options padded to a multiple of 4.
    #[inline]
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.len().next_multiple_of(4)
    }

    /// Header plus payload.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Writes the header and options with a zero checksum; call
    /// [`TcpHeader::fill_checksum`] once the payload is in place.
    ///
    /// Panics if the options exceed 40 bytes or the buffer is shorter than
    /// [`TcpRepr::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, t: &mut TcpHeader<T>) {
        let hl = self.header_len();
        assert!(hl <= MAX_HEADER_LEN, "TCP options longer than 40 bytes");
        assert!(t.b().len() >= hl, "buffer shorter than the TCP header");
        t.set_src_port(self.src_port);
        t.set_dst_port(self.dst_port);
        t.set_seq(self.seq);
        t.set_ack(self.ack);
        t.bm()[12] = 0;
        t.set_header_len(hl);
        t.set_flags(self.flags);
        t.set_window(self.window);
        t.set_checksum(0);
        t.set_urgent(self.urgent);
        let o = t.options_mut();
        o[..self.options.len()].copy_from_slice(self.options);
        o[self.options.len()..].fill(TCPOPT_EOL);
    }
}

// Software GSO clears FIN/PSH/CWR on some segments and must
// leave the rest of byte 12 (NS and the reserved bits) as the sender wrote
// it, which `set_flags` rewrites.
impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpHeader<T> {
    /// Clears the flags in `mask` (`TCP_FIN` .. `TCP_CWR`), touching only
    /// the flag byte.
    #[inline]
    pub fn clear_flags(&mut self, mask: u8) {
        self.bm()[13] &= !mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::{naive_with_pseudo, pseudo_v4, pseudo_v6};
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const SRC4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const DST4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
    const SRC6: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1);
    const DST6: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 2);

    /// A SYN with MSS, SACK-permitted, timestamps, NOP and window scale
    /// (the usual Linux set), 3 data bytes.
    fn syn() -> Vec<u8> {
        let mut b = vec![
            0x9c, 0x40, 0x00, 0x50, // 40000 -> 80
            0x12, 0x34, 0x56, 0x78, // seq
            0, 0, 0, 0, // ack
            0xa0, 0x02, 0xfa, 0xf0, // offset 40, SYN, window 64240
            0, 0, 0, 0, // checksum, urgent
        ];
        b.extend_from_slice(&[
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ]);
        b.extend_from_slice(b"abc");
        b
    }

    #[test]
    fn fields_and_options() {
        let b = syn();
        let t = TcpHeader::new_checked(&b[..]).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (40000, 80));
        assert_eq!(t.seq(), 0x12345678);
        assert_eq!(t.header_len(), 40);
        assert!(t.syn() && !t.ack_flag() && !t.fin() && !t.rst());
        assert_eq!(t.flags(), TCP_SYN as u8);
        assert_eq!(t.window(), 64240);
        assert_eq!(t.payload(), b"abc");
        assert_eq!(t.segment_len(), 4);
        let opts: Vec<_> = t.options_typed().map(Result::unwrap).collect();
        assert_eq!(
            opts,
            [
                TcpOption::Mss(1460),
                TcpOption::SackPermitted,
                TcpOption::Timestamp { tsval: 1, tsecr: 0 },
                TcpOption::NoOp,
                TcpOption::WindowScale(7),
            ]
        );
        let mut enc = [0u8; 20];
        let mut at = 0;
        for o in &opts {
            at += o.emit(&mut enc[at..]);
        }
        assert_eq!(at, 20);
        assert_eq!(enc[..], b[20..40]);
    }

    #[test]
    fn sack_and_bad_lengths() {
        let o = [1, 1, 5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4];
        let v: Vec<_> = OptionsIter::new(&o)
            .map(|r| r.and_then(TcpOption::from_raw))
            .collect();
        let TcpOption::Sack(s) = v[2].unwrap() else {
            panic!("not sack")
        };
        assert_eq!(s.len(), 2);
        assert_eq!(s.iter().collect::<Vec<_>>(), [(1, 2), (3, 4)]);
        let mut enc = [0u8; 18];
        assert_eq!(TcpOption::Sack(s).emit(&mut enc), 18);
        assert_eq!(enc[..], o[2..]);
        // MSS with length 3.
        let bad = [1, 2, 3, 0];
        let v: Vec<_> = OptionsIter::new(&bad)
            .map(|r| r.and_then(TcpOption::from_raw))
            .collect();
        assert_eq!(v[1], Err(BadOption { at: 2 }));
        let unk = TcpOption::from_raw(RawOption {
            offset: 0,
            kind: 30,
            data: &[9],
        });
        assert_eq!(
            unk,
            Ok(TcpOption::Unknown {
                kind: 30,
                data: &[9]
            })
        );
    }

    #[test]
    fn checksum_matches_independent_sum() {
        let mut b = syn();
        let mut t = TcpHeader::new_checked(&mut b[..]).unwrap();
        t.fill_checksum(SRC4, DST4);
        let c = t.checksum();
        let mut z = b.clone();
        z[16] = 0;
        z[17] = 0;
        let n = z.len();
        assert_eq!(
            c,
            naive_with_pseudo(&pseudo_v4(SRC4.octets(), DST4.octets(), 6, n), &z)
        );
        assert!(TcpHeader::new_checked(&b[..])
            .unwrap()
            .verify_checksum(SRC4, DST4));

        let mut t = TcpHeader::new_checked(&mut b[..]).unwrap();
        t.fill_checksum(SRC6, DST6);
        assert_eq!(
            t.checksum(),
            naive_with_pseudo(&pseudo_v6(SRC6.octets(), DST6.octets(), 6, n), &z)
        );
        assert!(t.verify_checksum(SRC6, DST6));
        assert!(!t.verify_checksum(DST6, DST6));
    }

    #[test]
    fn repr_round_trip() {
        let mut b = syn();
        b[12] |= 1; // NS
        b[13] |= (TCP_ACK | TCP_ECE | TCP_CWR) as u8;
        let t = TcpHeader::new_checked(&b[..]).unwrap();
        let r = TcpRepr::parse(&t).unwrap();
        assert_eq!(r.flags, TCP_NS | TCP_SYN | TCP_ACK | TCP_ECE | TCP_CWR);
        assert_eq!(r.options.len(), 20);
        assert_eq!(r.payload_len, 3);
        assert_eq!(r.buffer_len(), b.len());
        let mut out = vec![0xeeu8; r.buffer_len()];
        let mut v = TcpHeader::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.payload_mut().copy_from_slice(b"abc");
        assert_eq!(out, b);
    }

    #[test]
    fn emit_pads_options() {
        let r = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: 3,
            ack: 4,
            flags: TCP_ACK | TCP_PSH,
            window: 5,
            urgent: 6,
            options: &[TCPOPT_WSCALE, 3, 2],
            payload_len: 0,
        };
        assert_eq!(r.header_len(), 24);
        let mut out = [0xffu8; 24];
        r.emit(&mut TcpHeader::new_unchecked(&mut out[..]));
        let t = TcpHeader::new_checked(&out[..]).unwrap();
        assert_eq!(t.options(), &[TCPOPT_WSCALE, 3, 2, TCPOPT_EOL]);
        assert_eq!(t.urgent(), 6);
        assert_eq!(t.flags_with_ns(), TCP_ACK | TCP_PSH);
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = syn();
        for n in 0..40 {
            assert!(TcpHeader::new_checked(&b[..n]).is_err(), "{n}");
        }
        let mut b = b;
        b[12] = 0x40;
        assert_eq!(
            TcpHeader::new_checked(&b[..]).err(),
            Some(WireError::BadLength)
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(t) = TcpHeader::new_checked(&b[..]) {
                let _ = (t.src_port(), t.dst_port(), t.seq(), t.ack(), t.header_len(), t.flags());
                let _ = (t.flags_with_ns(), t.window(), t.checksum(), t.urgent(), t.options());
                let _ = (t.payload(), t.segment_len(), t.verify_checksum(SRC4, DST4));
                for o in t.options_typed().flatten() {
                    let mut buf = vec![0u8; o.buffer_len()];
                    prop_assert_eq!(o.emit(&mut buf), buf.len());
                }
                let r = TcpRepr::parse(&t).unwrap();
                let mut out = vec![0u8; r.buffer_len()];
                let mut v = TcpHeader::new_unchecked(&mut out[..]);
                r.emit(&mut v);
                v.payload_mut().copy_from_slice(t.payload());
                v.fill_checksum(SRC6, DST6);
                prop_assert!(v.verify_checksum(SRC6, DST6));
                let v = TcpHeader::new_checked(&out[..]).unwrap();
                prop_assert_eq!(TcpRepr::parse(&v).unwrap(), r);
            }
        }
    }
}
