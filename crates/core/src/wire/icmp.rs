//! ICMP for IPv4 (RFC 792, RFC 1191 for the next-hop MTU).
//!
//! [`IcmpHeader`] is the checked view of the 8-byte header (type, code,
//! checksum and the 4-byte "rest of header", read as echo identifier and
//! sequence, redirect gateway, parameter-problem pointer or next-hop MTU
//! depending on the type); everything after it is the echo data or, for
//! errors, the quoted datagram ([`IcmpHeader::quoted`], which
//! [`super::Ipv4Header::new_checked`] can view). [`IcmpRepr`] is the
//! message as values. The view's buffer is the whole message (the IP
//! payload): the checksum covers all of it.

use std::net::Ipv4Addr;

use super::checksum;
use super::ipv4::Ipv4Header;
use super::{be16, check_len, ipv4_at, put16, WireError};

/// Length of the ICMP header (type, code, checksum, rest of header).
pub const HEADER_LEN: usize = 8;

/// Type: echo reply.
pub const ICMP_ECHOREPLY: u8 = 0;
/// Type: destination unreachable.
pub const ICMP_UNREACH: u8 = 3;
/// Type: source quench (deprecated, RFC 6633).
pub const ICMP_SOURCEQUENCH: u8 = 4;
/// Type: redirect.
pub const ICMP_REDIRECT: u8 = 5;
/// Type: echo request.
pub const ICMP_ECHO: u8 = 8;
/// Type: router advertisement (RFC 1256).
pub const ICMP_ROUTERADVERT: u8 = 9;
/// Type: router solicitation (RFC 1256).
pub const ICMP_ROUTERSOLICIT: u8 = 10;
/// Type: time exceeded.
pub const ICMP_TIMXCEED: u8 = 11;
/// Type: parameter problem.
pub const ICMP_PARAMPROB: u8 = 12;
/// Type: timestamp request.
pub const ICMP_TSTAMP: u8 = 13;
/// Type: timestamp reply.
pub const ICMP_TSTAMPREPLY: u8 = 14;
/// Type: information request.
pub const ICMP_IREQ: u8 = 15;
/// Type: information reply.
pub const ICMP_IREQREPLY: u8 = 16;
/// Type: address mask request (RFC 950).
pub const ICMP_MASKREQ: u8 = 17;
/// Type: address mask reply (RFC 950).
pub const ICMP_MASKREPLY: u8 = 18;

/// Unreachable code: network.
pub const ICMP_UNREACH_NET: u8 = 0;
/// Unreachable code: host.
pub const ICMP_UNREACH_HOST: u8 = 1;
/// Unreachable code: protocol.
pub const ICMP_UNREACH_PROTOCOL: u8 = 2;
/// Unreachable code: port.
pub const ICMP_UNREACH_PORT: u8 = 3;
/// Unreachable code: fragmentation needed and DF set.
pub const ICMP_UNREACH_NEEDFRAG: u8 = 4;
/// Unreachable code: source route failed.
pub const ICMP_UNREACH_SRCFAIL: u8 = 5;
/// Unreachable code: destination network unknown.
pub const ICMP_UNREACH_NET_UNKNOWN: u8 = 6;
/// Unreachable code: destination host unknown.
pub const ICMP_UNREACH_HOST_UNKNOWN: u8 = 7;
/// Unreachable code: source host isolated.
pub const ICMP_UNREACH_ISOLATED: u8 = 8;
/// Unreachable code: network administratively prohibited.
pub const ICMP_UNREACH_NET_PROHIB: u8 = 9;
/// Unreachable code: host administratively prohibited.
pub const ICMP_UNREACH_HOST_PROHIB: u8 = 10;
/// Unreachable code: network unreachable for TOS.
pub const ICMP_UNREACH_TOSNET: u8 = 11;
/// Unreachable code: host unreachable for TOS.
pub const ICMP_UNREACH_TOSHOST: u8 = 12;
/// Unreachable code: communication administratively prohibited (RFC 1812).
pub const ICMP_UNREACH_FILTER_PROHIB: u8 = 13;
/// Unreachable code: host precedence violation (RFC 1812).
pub const ICMP_UNREACH_HOST_PRECEDENCE: u8 = 14;
/// Unreachable code: precedence cutoff in effect (RFC 1812).
pub const ICMP_UNREACH_PRECEDENCE_CUTOFF: u8 = 15;
/// Redirect code: for the network.
pub const ICMP_REDIRECT_NET: u8 = 0;
/// Redirect code: for the host.
pub const ICMP_REDIRECT_HOST: u8 = 1;
/// Redirect code: for the TOS and network.
pub const ICMP_REDIRECT_TOSNET: u8 = 2;
/// Redirect code: for the TOS and host.
pub const ICMP_REDIRECT_TOSHOST: u8 = 3;
/// Time exceeded code: TTL exceeded in transit.
pub const ICMP_TIMXCEED_INTRANS: u8 = 0;
/// Time exceeded code: fragment reassembly time exceeded.
pub const ICMP_TIMXCEED_REASS: u8 = 1;
/// Parameter problem code: the pointer indicates the error.
pub const ICMP_PARAMPROB_ERRATPTR: u8 = 0;
/// Parameter problem code: missing a required option (RFC 1108).
pub const ICMP_PARAMPROB_OPTABSENT: u8 = 1;
/// Parameter problem code: bad length (RFC 1812).
pub const ICMP_PARAMPROB_LENGTH: u8 = 2;

/// Whether `icmp_type` is an error message (one that quotes a datagram).
#[inline]
pub fn is_error(icmp_type: u8) -> bool {
    matches!(
        icmp_type,
        ICMP_UNREACH | ICMP_SOURCEQUENCH | ICMP_REDIRECT | ICMP_TIMXCEED | ICMP_PARAMPROB
    )
}

view! {
    /// An ICMP header view (type, code, checksum, 4 bytes of rest).
    IcmpHeader
}

impl<T: AsRef<[u8]>> IcmpHeader<T> {
    /// Checks the buffer holds the 8-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), HEADER_LEN)?;
        Ok(IcmpHeader { buf })
    }

    /// Message type.
    #[inline]
    pub fn icmp_type(&self) -> u8 {
        self.b()[0]
    }

    /// Message code.
    #[inline]
    pub fn code(&self) -> u8 {
        self.b()[1]
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// The identifier of echo messages.
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// The sequence number of echo messages.
    #[inline]
    pub fn seq(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// The four "rest of header" bytes, whatever the type.
    #[inline]
    pub fn rest(&self) -> [u8; 4] {
        let b = self.b();
        [b[4], b[5], b[6], b[7]]
    }

    /// The gateway address of a redirect.
    #[inline]
    pub fn gateway(&self) -> Ipv4Addr {
        ipv4_at(self.b(), 4)
    }

    /// The pointer of a parameter problem (offset of the bad byte in the
    /// quoted header).
    #[inline]
    pub fn pointer(&self) -> u8 {
        self.b()[4]
    }

    /// The next-hop MTU of a fragmentation-needed unreachable (RFC 1191);
    /// zero from routers that predate it.
    #[inline]
    pub fn next_hop_mtu(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Bytes after the header: echo data, or the quoted datagram of an
    /// error.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }

    /// The quoted datagram of an error message (the same bytes as
    /// [`IcmpHeader::data`]).
    #[inline]
    pub fn quoted(&self) -> &[u8] {
        self.data()
    }

    /// A view of the quoted IPv4 header of an error message. Its total
    /// length usually exceeds what was quoted, so view only the header and
    /// [`Ipv4Header::payload`] (clamped to the quote).
    #[inline]
    pub fn quoted_ipv4(&self) -> Result<Ipv4Header<&[u8]>, WireError> {
        Ipv4Header::new_checked(self.data())
    }

    /// Whether the checksum over the whole buffer is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::verify(self.b())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IcmpHeader<T> {
    /// Sets the message type.
    #[inline]
    pub fn set_type(&mut self, v: u8) {
        self.bm()[0] = v;
    }

    /// Sets the message code.
    #[inline]
    pub fn set_code(&mut self, v: u8) {
        self.bm()[1] = v;
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.bm(), 2, v);
    }

    /// Sets the echo identifier.
    #[inline]
    pub fn set_ident(&mut self, v: u16) {
        put16(self.bm(), 4, v);
    }

    /// Sets the echo sequence number.
    #[inline]
    pub fn set_seq(&mut self, v: u16) {
        put16(self.bm(), 6, v);
    }

    /// Sets the four "rest of header" bytes.
    #[inline]
    pub fn set_rest(&mut self, v: [u8; 4]) {
        self.bm()[4..8].copy_from_slice(&v);
    }

    /// Sets the redirect gateway.
    #[inline]
    pub fn set_gateway(&mut self, a: Ipv4Addr) {
        self.set_rest(a.octets());
    }

    /// Sets the parameter-problem pointer (and zeroes the unused bytes).
    #[inline]
    pub fn set_pointer(&mut self, p: u8) {
        self.set_rest([p, 0, 0, 0]);
    }

    /// Sets the next-hop MTU (and zeroes the unused bytes).
    #[inline]
    pub fn set_next_hop_mtu(&mut self, mtu: u16) {
        let m = mtu.to_be_bytes();
        self.set_rest([0, 0, m[0], m[1]]);
    }

    /// Bytes after the header, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[HEADER_LEN..]
    }

    /// Computes the checksum over the whole buffer.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::checksum(self.b());
        self.set_checksum(c);
    }
}

/// An ICMP message as values. Error variants carry the quoted datagram
/// (IP header and at least 8 bytes of its payload, by RFC 792) as bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpRepr<'a> {
    /// Echo request (type 8).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
        /// Data echoed back.
        data: &'a [u8],
    },
    /// Echo reply (type 0).
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
        /// Data echoed back.
        data: &'a [u8],
    },
    /// Destination unreachable (type 3).
    DstUnreachable {
        /// Code (`ICMP_UNREACH_*`).
        code: u8,
        /// Next-hop MTU for code 4 (zero otherwise).
        next_hop_mtu: u16,
        /// The quoted datagram.
        quoted: &'a [u8],
    },
    /// Time exceeded (type 11).
    TimeExceeded {
        /// Code (`ICMP_TIMXCEED_*`).
        code: u8,
        /// The quoted datagram.
        quoted: &'a [u8],
    },
    /// Parameter problem (type 12).
    ParamProblem {
        /// Code (`ICMP_PARAMPROB_*`).
        code: u8,
        /// Offset of the offending byte in the quoted header.
        pointer: u8,
        /// The quoted datagram.
        quoted: &'a [u8],
    },
    /// Redirect (type 5).
    Redirect {
        /// Code (`ICMP_REDIRECT_*`).
        code: u8,
        /// The better first hop.
        gateway: Ipv4Addr,
        /// The quoted datagram.
        quoted: &'a [u8],
    },
    /// Any other type (source quench, timestamps, router discovery, ...),
    /// kept raw.
    Other {
        /// Message type.
        icmp_type: u8,
        /// Message code.
        code: u8,
        /// The four "rest of header" bytes.
        rest: [u8; 4],
        /// Bytes after the header.
        data: &'a [u8],
    },
}

impl<'a> IcmpRepr<'a> {
    /// Reads the message. Every type is accepted (unknown ones as
    /// [`IcmpRepr::Other`]) and codes are not checked: ICMP receivers
    /// must tolerate new ones. The checksum is not checked: see
    /// [`IcmpHeader::verify_checksum`].
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(h: &'a IcmpHeader<T>) -> Result<Self, WireError> {
        let code = h.code();
        let data = h.data();
        Ok(match h.icmp_type() {
            ICMP_ECHO => IcmpRepr::EchoRequest {
                ident: h.ident(),
                seq: h.seq(),
                data,
            },
            ICMP_ECHOREPLY => IcmpRepr::EchoReply {
                ident: h.ident(),
                seq: h.seq(),
                data,
            },
            ICMP_UNREACH => IcmpRepr::DstUnreachable {
                code,
                next_hop_mtu: h.next_hop_mtu(),
                quoted: data,
            },
            ICMP_TIMXCEED => IcmpRepr::TimeExceeded { code, quoted: data },
            ICMP_PARAMPROB => IcmpRepr::ParamProblem {
                code,
                pointer: h.pointer(),
                quoted: data,
            },
            ICMP_REDIRECT => IcmpRepr::Redirect {
                code,
                gateway: h.gateway(),
                quoted: data,
            },
            icmp_type => IcmpRepr::Other {
                icmp_type,
                code,
                rest: h.rest(),
                data,
            },
        })
    }

    /// The message type.
    #[inline]
    pub fn icmp_type(&self) -> u8 {
        match self {
            IcmpRepr::EchoRequest { .. } => ICMP_ECHO,
            IcmpRepr::EchoReply { .. } => ICMP_ECHOREPLY,
            IcmpRepr::DstUnreachable { .. } => ICMP_UNREACH,
            IcmpRepr::TimeExceeded { .. } => ICMP_TIMXCEED,
            IcmpRepr::ParamProblem { .. } => ICMP_PARAMPROB,
            IcmpRepr::Redirect { .. } => ICMP_REDIRECT,
            IcmpRepr::Other { icmp_type, .. } => *icmp_type,
        }
    }

    #[inline]
    fn parts(&self) -> (u8, [u8; 4], &'a [u8]) {
        match *self {
            IcmpRepr::EchoRequest { ident, seq, data }
            | IcmpRepr::EchoReply { ident, seq, data } => {
                let (i, s) = (ident.to_be_bytes(), seq.to_be_bytes());
                (0, [i[0], i[1], s[0], s[1]], data)
            }
            IcmpRepr::DstUnreachable {
                code,
                next_hop_mtu,
                quoted,
            } => {
                let m = next_hop_mtu.to_be_bytes();
                (code, [0, 0, m[0], m[1]], quoted)
            }
            IcmpRepr::TimeExceeded { code, quoted } => (code, [0; 4], quoted),
            IcmpRepr::ParamProblem {
                code,
                pointer,
                quoted,
            } => (code, [pointer, 0, 0, 0], quoted),
            IcmpRepr::Redirect {
                code,
                gateway,
                quoted,
            } => (code, gateway.octets(), quoted),
            IcmpRepr::Other {
                code, rest, data, ..
            } => (code, rest, data),
        }
    }

    /// Header length: 8.
    #[inline]
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus data or quoted datagram.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.parts().2.len()
    }

    /// Writes the message and its checksum. The checksum covers the whole
    /// view buffer, so it should be exactly [`IcmpRepr::buffer_len`] long
    /// (bytes beyond are left as they are but summed).
    ///
    /// Panics if the buffer is shorter than [`IcmpRepr::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut IcmpHeader<T>) {
        let (code, rest, data) = self.parts();
        h.set_type(self.icmp_type());
        h.set_code(code);
        h.set_rest(rest);
        h.data_mut()[..data.len()].copy_from_slice(data);
        h.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ipv4::{Ipv4Repr, PROTO_UDP};
    use crate::wire::testutil::naive_checksum;
    use proptest::prelude::*;

    /// An echo request as `ping` sends it: ident 0x1234, seq 1, 8 bytes of
    /// data.
    fn echo() -> Vec<u8> {
        let mut b = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1];
        b.extend_from_slice(b"abcdefgh");
        let c = naive_checksum(&b);
        b[2..4].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn echo_round_trip_and_checksum() {
        let b = echo();
        let h = IcmpHeader::new_checked(&b[..]).unwrap();
        assert!(h.verify_checksum());
        let r = IcmpRepr::parse(&h).unwrap();
        assert_eq!(
            r,
            IcmpRepr::EchoRequest {
                ident: 0x1234,
                seq: 1,
                data: b"abcdefgh"
            }
        );
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
        // The reply differs only in type, so its checksum moves by 0x0800.
        let reply = IcmpRepr::EchoReply {
            ident: 0x1234,
            seq: 1,
            data: b"abcdefgh",
        };
        reply.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
        assert_eq!(
            u16::from_be_bytes([out[2], out[3]]),
            checksum::update16(h.checksum(), 0x0800, 0x0000)
        );
        assert_eq!(naive_checksum(&out), 0);
    }

    /// A port unreachable quoting a UDP datagram 10.0.0.1:5000 ->
    /// 10.0.0.2:53.
    fn port_unreachable() -> Vec<u8> {
        let ip = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: PROTO_UDP,
            payload_len: 100,
            ..Default::default()
        };
        let mut q = vec![0u8; 28];
        ip.emit(&mut Ipv4Header::new_unchecked(&mut q[..]));
        q[20..28].copy_from_slice(&[0x13, 0x88, 0, 53, 0, 108, 0, 0]);
        let mut b = vec![3, 3, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&q);
        let c = naive_checksum(&b);
        b[2..4].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn error_quotes_datagram() {
        let b = port_unreachable();
        let h = IcmpHeader::new_checked(&b[..]).unwrap();
        assert!(h.verify_checksum());
        assert!(is_error(h.icmp_type()));
        let q = h.quoted_ipv4().unwrap();
        assert_eq!(q.dst(), Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(q.protocol(), PROTO_UDP);
        assert_eq!(q.payload(), &[0x13, 0x88, 0, 53, 0, 108, 0, 0]);
        let r = IcmpRepr::parse(&h).unwrap();
        assert_eq!(
            r,
            IcmpRepr::DstUnreachable {
                code: ICMP_UNREACH_PORT,
                next_hop_mtu: 0,
                quoted: &b[8..]
            }
        );
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
    }

    #[test]
    fn error_rest_fields() {
        let q = &port_unreachable()[8..];
        let cases = [
            (
                IcmpRepr::DstUnreachable {
                    code: ICMP_UNREACH_NEEDFRAG,
                    next_hop_mtu: 1400,
                    quoted: q,
                },
                [0, 0, 0x05, 0x78],
            ),
            (
                IcmpRepr::ParamProblem {
                    code: ICMP_PARAMPROB_ERRATPTR,
                    pointer: 22,
                    quoted: q,
                },
                [22, 0, 0, 0],
            ),
            (
                IcmpRepr::Redirect {
                    code: ICMP_REDIRECT_HOST,
                    gateway: Ipv4Addr::new(10, 0, 0, 254),
                    quoted: q,
                },
                [10, 0, 0, 254],
            ),
            (
                IcmpRepr::TimeExceeded {
                    code: ICMP_TIMXCEED_INTRANS,
                    quoted: q,
                },
                [0; 4],
            ),
            (
                IcmpRepr::Other {
                    icmp_type: ICMP_SOURCEQUENCH,
                    code: 0,
                    rest: [1, 2, 3, 4],
                    data: q,
                },
                [1, 2, 3, 4],
            ),
        ];
        for (r, rest) in cases {
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
            assert_eq!(out[4..8], rest);
            assert_eq!(naive_checksum(&out), 0);
            let h = IcmpHeader::new_checked(&out[..]).unwrap();
            assert_eq!(IcmpRepr::parse(&h).unwrap(), r);
        }
        let mut b = port_unreachable();
        let mut h = IcmpHeader::new_checked(&mut b[..]).unwrap();
        h.set_type(ICMP_UNREACH);
        h.set_next_hop_mtu(576);
        assert_eq!(h.next_hop_mtu(), 576);
        h.set_type(ICMP_PARAMPROB);
        h.set_pointer(9);
        assert_eq!(h.pointer(), 9);
        h.set_gateway(Ipv4Addr::new(1, 2, 3, 4));
        assert_eq!(h.gateway(), Ipv4Addr::new(1, 2, 3, 4));
        h.set_ident(7);
        h.set_seq(8);
        assert_eq!((h.ident(), h.seq()), (7, 8));
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = echo();
        for n in 0..HEADER_LEN {
            assert_eq!(
                IcmpHeader::new_checked(&b[..n]).err(),
                Some(WireError::Truncated)
            );
        }
        // A truncated message is still a message, but its checksum fails.
        for n in HEADER_LEN..b.len() {
            assert!(!IcmpHeader::new_checked(&b[..n]).unwrap().verify_checksum());
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(h) = IcmpHeader::new_checked(&b[..]) {
                let _ = (h.icmp_type(), h.code(), h.checksum(), h.ident(), h.seq(), h.rest());
                let _ = (h.gateway(), h.pointer(), h.next_hop_mtu(), h.data(), h.quoted());
                let _ = (h.quoted_ipv4().map(|q| q.payload().len()), h.verify_checksum());
                let r = IcmpRepr::parse(&h).unwrap();
                prop_assert_eq!(r.icmp_type(), h.icmp_type());
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
                let v = IcmpHeader::new_checked(&out[..]).unwrap();
                prop_assert!(v.verify_checksum());
                let r2 = IcmpRepr::parse(&v).unwrap();
                // Unused rest bytes of errors are emitted as zero.
                let mut out2 = vec![0u8; r2.buffer_len()];
                r2.emit(&mut IcmpHeader::new_unchecked(&mut out2[..]));
                prop_assert_eq!(out, out2);
            }
        }
    }
}
