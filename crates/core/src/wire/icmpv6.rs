//! ICMPv6 (RFC 4443) and neighbour discovery (RFC 4861).
//!
//! [`Icmpv6Header`] is the checked view: `new_checked` requires 8 bytes
//! (type, code, checksum and the 4-byte field every message has), and the
//! fixed part of the neighbour discovery message the type names (16 bytes
//! for a router advertisement, 24 for neighbour solicitations and
//! advertisements, 40 for redirects). Fields of another message type that
//! lie past the end of a shorter message read as zero, so no accessor can
//! panic. Neighbour discovery options are decoded by
//! [`Icmpv6Header::ndisc_options`] into [`NdiscOption`]s. [`Icmpv6Repr`]
//! is the message as values. The view's buffer is the whole message (the
//! IPv6 payload after any extension headers): the checksum covers it and
//! the IPv6 pseudo-header, so `emit` leaves it zero and
//! [`Icmpv6Header::fill_checksum`] completes it.

use std::net::Ipv6Addr;

use super::checksum;
use super::ether::EtherAddr;
use super::ipv6::{Ipv6Header, PROTO_ICMPV6};
use super::{
    array_or_zero, be16, be32, check_len, ether_at, ipv6_at, next_tlv, put16, put32, BadOption,
    WireError,
};

/// Length of the common header (type, code, checksum, 4 more bytes).
pub const HEADER_LEN: usize = 8;

/// Type: destination unreachable.
pub const ICMP6_DST_UNREACH: u8 = 1;
/// Type: packet too big.
pub const ICMP6_PACKET_TOO_BIG: u8 = 2;
/// Type: time exceeded.
pub const ICMP6_TIME_EXCEEDED: u8 = 3;
/// Type: parameter problem.
pub const ICMP6_PARAM_PROB: u8 = 4;
/// Type: echo request.
pub const ICMP6_ECHO_REQUEST: u8 = 128;
/// Type: echo reply.
pub const ICMP6_ECHO_REPLY: u8 = 129;
/// Type: router solicitation.
pub const ND_ROUTER_SOLICIT: u8 = 133;
/// Type: router advertisement.
pub const ND_ROUTER_ADVERT: u8 = 134;
/// Type: neighbour solicitation.
pub const ND_NEIGHBOR_SOLICIT: u8 = 135;
/// Type: neighbour advertisement.
pub const ND_NEIGHBOR_ADVERT: u8 = 136;
/// Type: redirect.
pub const ND_REDIRECT: u8 = 137;

/// Unreachable code: no route to destination.
pub const ICMP6_DST_UNREACH_NOROUTE: u8 = 0;
/// Unreachable code: administratively prohibited.
pub const ICMP6_DST_UNREACH_ADMIN: u8 = 1;
/// Unreachable code: beyond scope of source address.
pub const ICMP6_DST_UNREACH_BEYONDSCOPE: u8 = 2;
/// Unreachable code: address unreachable.
pub const ICMP6_DST_UNREACH_ADDR: u8 = 3;
/// Unreachable code: port unreachable.
pub const ICMP6_DST_UNREACH_NOPORT: u8 = 4;
/// Time exceeded code: hop limit exceeded in transit.
pub const ICMP6_TIME_EXCEED_TRANSIT: u8 = 0;
/// Time exceeded code: fragment reassembly time exceeded.
pub const ICMP6_TIME_EXCEED_REASSEMBLY: u8 = 1;
/// Parameter problem code: erroneous header field.
pub const ICMP6_PARAMPROB_HEADER: u8 = 0;
/// Parameter problem code: unrecognized next header.
pub const ICMP6_PARAMPROB_NEXTHEADER: u8 = 1;
/// Parameter problem code: unrecognized IPv6 option.
pub const ICMP6_PARAMPROB_OPTION: u8 = 2;

/// Router advertisement flag: managed address configuration.
pub const ND_RA_FLAG_MANAGED: u8 = 0x80;
/// Router advertisement flag: other configuration.
pub const ND_RA_FLAG_OTHER: u8 = 0x40;
/// Neighbour advertisement flag: sender is a router.
pub const ND_NA_FLAG_ROUTER: u8 = 0x80;
/// Neighbour advertisement flag: sent in response to a solicitation.
pub const ND_NA_FLAG_SOLICITED: u8 = 0x40;
/// Neighbour advertisement flag: override an existing cache entry.
pub const ND_NA_FLAG_OVERRIDE: u8 = 0x20;

/// Option type: source link-layer address.
pub const ND_OPT_SOURCE_LINKADDR: u8 = 1;
/// Option type: target link-layer address.
pub const ND_OPT_TARGET_LINKADDR: u8 = 2;
/// Option type: prefix information.
pub const ND_OPT_PREFIX_INFORMATION: u8 = 3;
/// Option type: redirected header.
pub const ND_OPT_REDIRECTED_HEADER: u8 = 4;
/// Option type: MTU.
pub const ND_OPT_MTU: u8 = 5;

/// Prefix information flag: on-link.
pub const ND_OPT_PI_FLAG_ONLINK: u8 = 0x80;
/// Prefix information flag: autonomous address configuration.
pub const ND_OPT_PI_FLAG_AUTO: u8 = 0x40;

/// Whether `msg_type` is an error message (types below 128).
#[inline]
pub fn is_error(msg_type: u8) -> bool {
    msg_type < 128
}

/// The solicited-node multicast address of `a` (ff02::1:ffXX:XXXX), where
/// neighbour solicitations for `a` are sent.
#[inline]
pub fn solicited_node(a: Ipv6Addr) -> Ipv6Addr {
    let o = a.octets();
    Ipv6Addr::from([
        0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, o[13], o[14], o[15],
    ])
}

/// The Ethernet address an IPv6 multicast address maps to (33-33 and the
/// low 32 bits, RFC 2464 section 7).
#[inline]
pub fn multicast_ether(a: Ipv6Addr) -> EtherAddr {
    let o = a.octets();
    EtherAddr([0x33, 0x33, o[12], o[13], o[14], o[15]])
}

/// Where a message type's options start, which is also the length of its
/// fixed part; `None` for types without options.
#[inline]
fn options_start(msg_type: u8) -> Option<usize> {
    match msg_type {
        ND_ROUTER_SOLICIT => Some(8),
        ND_ROUTER_ADVERT => Some(16),
        ND_NEIGHBOR_SOLICIT | ND_NEIGHBOR_ADVERT => Some(24),
        ND_REDIRECT => Some(40),
        _ => None,
    }
}

view! {
    /// A view of an ICMPv6 message at the start of a buffer.
    Icmpv6Header
}

impl<T: AsRef<[u8]>> Icmpv6Header<T> {
    /// Checks the buffer holds 8 bytes and the fixed part of the message
    /// type (see the module docs).
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        let b = buf.as_ref();
        check_len(b, HEADER_LEN)?;
        check_len(b, options_start(b[0]).unwrap_or(HEADER_LEN))?;
        Ok(Icmpv6Header { buf })
    }

    /// Message type.
    #[inline]
    pub fn msg_type(&self) -> u8 {
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

    /// Echo identifier.
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.b(), 4)
    }

    /// Echo sequence number.
    #[inline]
    pub fn seq(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// The 32-bit field after the checksum: the MTU of a packet too big,
    /// the pointer of a parameter problem.
    #[inline]
    pub fn rest(&self) -> u32 {
        be32(self.b(), 4)
    }

    /// MTU of a packet-too-big message.
    #[inline]
    pub fn mtu(&self) -> u32 {
        self.rest()
    }

    /// Pointer of a parameter problem (offset of the bad byte in the
    /// quoted packet).
    #[inline]
    pub fn pointer(&self) -> u32 {
        self.rest()
    }

    /// Bytes after the first 8: echo data, or an error's quoted packet.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }

    /// A view of an error message's quoted IPv6 header. Its payload length
    /// usually exceeds what was quoted; [`Ipv6Header::payload`] clamps.
    #[inline]
    pub fn quoted_ipv6(&self) -> Result<Ipv6Header<&[u8]>, WireError> {
        Ipv6Header::new_checked(self.data())
    }

    /// Current hop limit of a router advertisement.
    #[inline]
    pub fn cur_hop_limit(&self) -> u8 {
        self.b()[4]
    }

    /// Flags byte of a router (`ND_RA_FLAG_*`) or neighbour
    /// (`ND_NA_FLAG_*`) advertisement.
    #[inline]
    pub fn nd_flags(&self) -> u8 {
        self.b()[5 - (self.msg_type() == ND_NEIGHBOR_ADVERT) as usize]
    }

    /// Router lifetime of a router advertisement, in seconds.
    #[inline]
    pub fn router_lifetime(&self) -> u16 {
        be16(self.b(), 6)
    }

    /// Reachable time of a router advertisement, in milliseconds.
    #[inline]
    pub fn reachable_time(&self) -> u32 {
        u32::from_be_bytes(array_or_zero(self.b(), 8))
    }

    /// Retransmission timer of a router advertisement, in milliseconds.
    #[inline]
    pub fn retrans_time(&self) -> u32 {
        u32::from_be_bytes(array_or_zero(self.b(), 12))
    }

    /// Target address of a neighbour solicitation, advertisement or
    /// redirect.
    #[inline]
    pub fn target(&self) -> Ipv6Addr {
        Ipv6Addr::from(array_or_zero::<16>(self.b(), 8))
    }

    /// Destination address of a redirect.
    #[inline]
    pub fn redirect_dst(&self) -> Ipv6Addr {
        Ipv6Addr::from(array_or_zero::<16>(self.b(), 24))
    }

    /// The options of a neighbour discovery message (empty for other
    /// types).
    #[inline]
    pub fn options(&self) -> &[u8] {
        match options_start(self.msg_type()) {
            Some(at) => self.b().get(at..).unwrap_or(&[]),
            None => &[],
        }
    }

    /// The neighbour discovery options, decoded.
    #[inline]
    pub fn ndisc_options(&self) -> NdiscOptionsIter<'_> {
        NdiscOptionsIter::new(self.options())
    }

    /// Whether the checksum over the IPv6 pseudo-header and the whole
    /// buffer is correct.
    #[inline]
    pub fn verify_checksum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        checksum::verify_pseudo(src, dst, PROTO_ICMPV6, self.b())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv6Header<T> {
    /// Sets the message type.
    #[inline]
    pub fn set_msg_type(&mut self, v: u8) {
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

    /// Sets the 32-bit field after the checksum (MTU, pointer, or the
    /// reserved/flags word).
    #[inline]
    pub fn set_rest(&mut self, v: u32) {
        put32(self.bm(), 4, v);
    }

    /// Sets the target address. Panics if the message is shorter than 24
    /// bytes.
    #[inline]
    pub fn set_target(&mut self, a: Ipv6Addr) {
        self.bm()[8..24].copy_from_slice(&a.octets());
    }

    /// Bytes after the first 8, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[HEADER_LEN..]
    }

    /// Computes the checksum over the IPv6 pseudo-header and the whole
    /// buffer.
    #[inline]
    pub fn fill_checksum(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        self.set_checksum(0);
        let c = checksum::pseudo_checksum(src, dst, PROTO_ICMPV6, self.b());
        self.set_checksum(c);
    }
}

/// The prefix information option of a router advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixInfo {
    /// Prefix length in bits.
    pub prefix_len: u8,
    /// The prefix is on-link (L flag).
    pub on_link: bool,
    /// The prefix may be used for address autoconfiguration (A flag).
    pub autonomous: bool,
    /// Valid lifetime in seconds (all ones: infinite).
    pub valid_lifetime: u32,
    /// Preferred lifetime in seconds (all ones: infinite).
    pub preferred_lifetime: u32,
    /// The prefix (bits past `prefix_len` should be zero).
    pub prefix: Ipv6Addr,
}

/// One neighbour discovery option, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdiscOption<'a> {
    /// Source link-layer address (Ethernet).
    SourceLinkAddr(EtherAddr),
    /// Target link-layer address (Ethernet).
    TargetLinkAddr(EtherAddr),
    /// Prefix information.
    PrefixInfo(PrefixInfo),
    /// Redirected header: as much of the redirected packet as fits.
    RedirectedHeader(&'a [u8]),
    /// Link MTU.
    Mtu(u32),
    /// Any other option, or a link-layer address option whose length is
    /// not Ethernet's, with the bytes after type and length.
    Unknown {
        /// Option type.
        kind: u8,
        /// Bytes after type and length.
        data: &'a [u8],
    },
}

impl<'a> NdiscOption<'a> {
    /// Encoded length in bytes (a multiple of 8).
    #[inline]
    pub fn buffer_len(&self) -> usize {
        match self {
            NdiscOption::SourceLinkAddr(_) | NdiscOption::TargetLinkAddr(_) => 8,
            NdiscOption::PrefixInfo(_) => 32,
            NdiscOption::RedirectedHeader(d) => (8 + d.len()).next_multiple_of(8),
            NdiscOption::Mtu(_) => 8,
            NdiscOption::Unknown { data, .. } => (2 + data.len()).next_multiple_of(8),
        }
    }

    /// Encodes the option at the start of `buf`, padding with zeros;
    /// returns its length. Panics if `buf` is shorter than
    /// [`NdiscOption::buffer_len`] or the option exceeds 2040 bytes.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let n = self.buffer_len();
        let units = u8::try_from(n / 8).expect("ND option longer than 2040 bytes");
        let b = &mut buf[..n];
        b.fill(0);
        b[1] = units;
        b[0] = match self {
            NdiscOption::SourceLinkAddr(a) | NdiscOption::TargetLinkAddr(a) => {
                b[2..8].copy_from_slice(&a.0);
                if matches!(self, NdiscOption::SourceLinkAddr(_)) {
                    ND_OPT_SOURCE_LINKADDR
                } else {
                    ND_OPT_TARGET_LINKADDR
                }
            }
            NdiscOption::PrefixInfo(p) => {
                b[2] = p.prefix_len;
                b[3] = if p.on_link { ND_OPT_PI_FLAG_ONLINK } else { 0 }
                    | if p.autonomous { ND_OPT_PI_FLAG_AUTO } else { 0 };
                put32(b, 4, p.valid_lifetime);
                put32(b, 8, p.preferred_lifetime);
                b[16..32].copy_from_slice(&p.prefix.octets());
                ND_OPT_PREFIX_INFORMATION
            }
            NdiscOption::RedirectedHeader(d) => {
                b[8..8 + d.len()].copy_from_slice(d);
                ND_OPT_REDIRECTED_HEADER
            }
            NdiscOption::Mtu(m) => {
                put32(b, 4, *m);
                ND_OPT_MTU
            }
            NdiscOption::Unknown { kind, data } => {
                b[2..2 + data.len()].copy_from_slice(data);
                *kind
            }
        };
        n
    }
}

/// Iterator over neighbour discovery options (RFC 4861 section 4.6):
/// type, length in 8-byte units (zero is invalid), value. Stops after the
/// first error.
#[derive(Clone, Debug)]
pub struct NdiscOptionsIter<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> NdiscOptionsIter<'a> {
    /// Iterates over the options area `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        NdiscOptionsIter { buf, pos: 0 }
    }
}

impl<'a> Iterator for NdiscOptionsIter<'a> {
    type Item = Result<NdiscOption<'a>, BadOption>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.pos;
        let kind = *self.buf.get(at)?;
        // The length counts 8-byte units, the type and length bytes
        // included; zero is invalid.
        let units = |u: u8| (u != 0).then_some(u as usize * 8);
        let o = match next_tlv(self.buf, &mut self.pos, units) {
            Ok(o) => o,
            Err(e) => return Some(Err(e)),
        };
        let bad = Some(Err(BadOption { at: at + 1 }));
        Some(Ok(match (kind, o.len()) {
            (ND_OPT_SOURCE_LINKADDR, 8) => NdiscOption::SourceLinkAddr(ether_at(o, 2)),
            (ND_OPT_TARGET_LINKADDR, 8) => NdiscOption::TargetLinkAddr(ether_at(o, 2)),
            (ND_OPT_PREFIX_INFORMATION, 32) => NdiscOption::PrefixInfo(PrefixInfo {
                prefix_len: o[2],
                on_link: o[3] & ND_OPT_PI_FLAG_ONLINK != 0,
                autonomous: o[3] & ND_OPT_PI_FLAG_AUTO != 0,
                valid_lifetime: be32(o, 4),
                preferred_lifetime: be32(o, 8),
                prefix: ipv6_at(o, 16),
            }),
            (ND_OPT_PREFIX_INFORMATION, _) | (ND_OPT_MTU, 16..) => return bad,
            (ND_OPT_REDIRECTED_HEADER, _) => NdiscOption::RedirectedHeader(&o[8..]),
            (ND_OPT_MTU, _) => NdiscOption::Mtu(be32(o, 4)),
            _ => NdiscOption::Unknown {
                kind,
                data: &o[2..],
            },
        }))
    }
}

/// An ICMPv6 message as values. Error variants carry the quoted packet as
/// bytes; neighbour discovery variants carry the options they use (the
/// first of each kind; unknown options are skipped, as RFC 4861 asks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Icmpv6Repr<'a> {
    /// Echo request (type 128).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
        /// Data echoed back.
        data: &'a [u8],
    },
    /// Echo reply (type 129).
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq: u16,
        /// Data echoed back.
        data: &'a [u8],
    },
    /// Destination unreachable (type 1).
    DstUnreachable {
        /// Code (`ICMP6_DST_UNREACH_*`).
        code: u8,
        /// The quoted packet.
        quoted: &'a [u8],
    },
    /// Packet too big (type 2).
    PacketTooBig {
        /// MTU of the next hop.
        mtu: u32,
        /// The quoted packet.
        quoted: &'a [u8],
    },
    /// Time exceeded (type 3).
    TimeExceeded {
        /// Code (`ICMP6_TIME_EXCEED_*`).
        code: u8,
        /// The quoted packet.
        quoted: &'a [u8],
    },
    /// Parameter problem (type 4).
    ParamProblem {
        /// Code (`ICMP6_PARAMPROB_*`).
        code: u8,
        /// Offset of the offending byte in the quoted packet.
        pointer: u32,
        /// The quoted packet.
        quoted: &'a [u8],
    },
    /// Router solicitation (type 133).
    RouterSolicit {
        /// Source link-layer address option.
        source_ll: Option<EtherAddr>,
    },
    /// Router advertisement (type 134).
    RouterAdvert {
        /// Hop limit hosts should use (0: unspecified).
        hop_limit: u8,
        /// `ND_RA_FLAG_*` bits.
        flags: u8,
        /// Router lifetime in seconds (0: not a default router).
        router_lifetime: u16,
        /// Reachable time in milliseconds.
        reachable_time: u32,
        /// Retransmission timer in milliseconds.
        retrans_time: u32,
        /// Source link-layer address option.
        source_ll: Option<EtherAddr>,
        /// MTU option.
        mtu: Option<u32>,
        /// First prefix information option.
        prefix_info: Option<PrefixInfo>,
    },
    /// Neighbour solicitation (type 135).
    NeighborSolicit {
        /// The address being resolved.
        target: Ipv6Addr,
        /// Source link-layer address option.
        source_ll: Option<EtherAddr>,
    },
    /// Neighbour advertisement (type 136).
    NeighborAdvert {
        /// `ND_NA_FLAG_*` bits.
        flags: u8,
        /// The address advertised.
        target: Ipv6Addr,
        /// Target link-layer address option.
        target_ll: Option<EtherAddr>,
    },
    /// Any other type (redirects, MLD, ...), kept raw.
    Other {
        /// Message type.
        msg_type: u8,
        /// Message code.
        code: u8,
        /// The 4 bytes after the checksum.
        rest: [u8; 4],
        /// Bytes after the first 8.
        data: &'a [u8],
    },
}

impl<'a> Icmpv6Repr<'a> {
    /// Reads the message. Neighbour discovery messages must have code 0
    /// and well-formed options ([`WireError::Malformed`]); the hop limit
    /// of 255 that RFC 4861 also requires is the IPv6 header's, for the
    /// caller to check. The checksum is not checked: see
    /// [`Icmpv6Header::verify_checksum`].
    pub fn parse<T: AsRef<[u8]>>(h: &'a Icmpv6Header<T>) -> Result<Self, WireError> {
        let code = h.code();
        let data = h.data();
        let t = h.msg_type();
        if options_start(t).is_some() && code != 0 {
            return Err(WireError::Malformed);
        }
        let mut source_ll = None;
        let mut target_ll = None;
        let mut mtu = None;
        let mut prefix_info = None;
        for o in h.ndisc_options() {
            match o.map_err(|_| WireError::Malformed)? {
                NdiscOption::SourceLinkAddr(a) => {
                    source_ll.get_or_insert(a);
                }
                NdiscOption::TargetLinkAddr(a) => {
                    target_ll.get_or_insert(a);
                }
                NdiscOption::Mtu(m) => {
                    mtu.get_or_insert(m);
                }
                NdiscOption::PrefixInfo(p) => {
                    prefix_info.get_or_insert(p);
                }
                NdiscOption::RedirectedHeader(_) | NdiscOption::Unknown { .. } => {}
            }
        }
        Ok(match t {
            ICMP6_ECHO_REQUEST => Icmpv6Repr::EchoRequest {
                ident: h.ident(),
                seq: h.seq(),
                data,
            },
            ICMP6_ECHO_REPLY => Icmpv6Repr::EchoReply {
                ident: h.ident(),
                seq: h.seq(),
                data,
            },
            ICMP6_DST_UNREACH => Icmpv6Repr::DstUnreachable { code, quoted: data },
            ICMP6_PACKET_TOO_BIG => Icmpv6Repr::PacketTooBig {
                mtu: h.mtu(),
                quoted: data,
            },
            ICMP6_TIME_EXCEEDED => Icmpv6Repr::TimeExceeded { code, quoted: data },
            ICMP6_PARAM_PROB => Icmpv6Repr::ParamProblem {
                code,
                pointer: h.pointer(),
                quoted: data,
            },
            ND_ROUTER_SOLICIT => Icmpv6Repr::RouterSolicit { source_ll },
            ND_ROUTER_ADVERT => Icmpv6Repr::RouterAdvert {
                hop_limit: h.cur_hop_limit(),
                flags: h.nd_flags(),
                router_lifetime: h.router_lifetime(),
                reachable_time: h.reachable_time(),
                retrans_time: h.retrans_time(),
                source_ll,
                mtu,
                prefix_info,
            },
            ND_NEIGHBOR_SOLICIT => Icmpv6Repr::NeighborSolicit {
                target: h.target(),
                source_ll,
            },
            ND_NEIGHBOR_ADVERT => Icmpv6Repr::NeighborAdvert {
                flags: h.nd_flags(),
                target: h.target(),
                target_ll,
            },
            msg_type => Icmpv6Repr::Other {
                msg_type,
                code,
                rest: h.rest().to_be_bytes(),
                data,
            },
        })
    }

    /// The message type.
    #[inline]
    pub fn msg_type(&self) -> u8 {
        match self {
            Icmpv6Repr::EchoRequest { .. } => ICMP6_ECHO_REQUEST,
            Icmpv6Repr::EchoReply { .. } => ICMP6_ECHO_REPLY,
            Icmpv6Repr::DstUnreachable { .. } => ICMP6_DST_UNREACH,
            Icmpv6Repr::PacketTooBig { .. } => ICMP6_PACKET_TOO_BIG,
            Icmpv6Repr::TimeExceeded { .. } => ICMP6_TIME_EXCEEDED,
            Icmpv6Repr::ParamProblem { .. } => ICMP6_PARAM_PROB,
            Icmpv6Repr::RouterSolicit { .. } => ND_ROUTER_SOLICIT,
            Icmpv6Repr::RouterAdvert { .. } => ND_ROUTER_ADVERT,
            Icmpv6Repr::NeighborSolicit { .. } => ND_NEIGHBOR_SOLICIT,
            Icmpv6Repr::NeighborAdvert { .. } => ND_NEIGHBOR_ADVERT,
            Icmpv6Repr::Other { msg_type, .. } => *msg_type,
        }
    }

    /// The options `emit` writes, in order.
    fn nd_options(&self) -> [Option<NdiscOption<'a>>; 3] {
        match *self {
            Icmpv6Repr::RouterSolicit { source_ll }
            | Icmpv6Repr::NeighborSolicit { source_ll, .. } => {
                [source_ll.map(NdiscOption::SourceLinkAddr), None, None]
            }
            Icmpv6Repr::RouterAdvert {
                source_ll,
                mtu,
                prefix_info,
                ..
            } => [
                source_ll.map(NdiscOption::SourceLinkAddr),
                mtu.map(NdiscOption::Mtu),
                prefix_info.map(NdiscOption::PrefixInfo),
            ],
            Icmpv6Repr::NeighborAdvert { target_ll, .. } => {
                [target_ll.map(NdiscOption::TargetLinkAddr), None, None]
            }
            _ => [None, None, None],
        }
    }

    /// Echo data, quoted packet or raw data, for the non-ND variants.
    fn body(&self) -> &'a [u8] {
        match *self {
            Icmpv6Repr::EchoRequest { data, .. }
            | Icmpv6Repr::EchoReply { data, .. }
            | Icmpv6Repr::Other { data, .. } => data,
            Icmpv6Repr::DstUnreachable { quoted, .. }
            | Icmpv6Repr::PacketTooBig { quoted, .. }
            | Icmpv6Repr::TimeExceeded { quoted, .. }
            | Icmpv6Repr::ParamProblem { quoted, .. } => quoted,
            _ => &[],
        }
    }

    /// Length of the fixed part (before data or options).
    #[inline]
    pub fn header_len(&self) -> usize {
        match self {
            Icmpv6Repr::RouterAdvert { .. } => 16,
            Icmpv6Repr::NeighborSolicit { .. } | Icmpv6Repr::NeighborAdvert { .. } => 24,
            // Other keeps everything after the first 8 bytes as data, even
            // for types (redirect) whose fixed part is longer.
            _ => HEADER_LEN,
        }
    }

    /// Bytes `emit` writes: fixed part plus data or options.
    pub fn buffer_len(&self) -> usize {
        let opts: usize = self
            .nd_options()
            .iter()
            .flatten()
            .map(NdiscOption::buffer_len)
            .sum();
        self.header_len() + self.body().len() + opts
    }

    /// Writes the message with a zero checksum; call
    /// [`Icmpv6Header::fill_checksum`] afterwards. The checksum covers the
    /// whole view buffer, so size it to [`Icmpv6Repr::buffer_len`].
    ///
    /// Panics if the buffer is shorter than [`Icmpv6Repr::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Icmpv6Header<T>) {
        let hl = self.header_len();
        let b = h.bm();
        b[..hl].fill(0);
        b[0] = self.msg_type();
        match *self {
            Icmpv6Repr::EchoRequest { ident, seq, .. }
            | Icmpv6Repr::EchoReply { ident, seq, .. } => {
                put16(b, 4, ident);
                put16(b, 6, seq);
            }
            Icmpv6Repr::DstUnreachable { code, .. } | Icmpv6Repr::TimeExceeded { code, .. } => {
                b[1] = code;
            }
            Icmpv6Repr::PacketTooBig { mtu, .. } => put32(b, 4, mtu),
            Icmpv6Repr::ParamProblem { code, pointer, .. } => {
                b[1] = code;
                put32(b, 4, pointer);
            }
            Icmpv6Repr::RouterSolicit { .. } => {}
            Icmpv6Repr::RouterAdvert {
                hop_limit,
                flags,
                router_lifetime,
                reachable_time,
                retrans_time,
                ..
            } => {
                b[4] = hop_limit;
                b[5] = flags;
                put16(b, 6, router_lifetime);
                put32(b, 8, reachable_time);
                put32(b, 12, retrans_time);
            }
            Icmpv6Repr::NeighborSolicit { target, .. } => {
                b[8..24].copy_from_slice(&target.octets());
            }
            Icmpv6Repr::NeighborAdvert { flags, target, .. } => {
                b[4] = flags;
                b[8..24].copy_from_slice(&target.octets());
            }
            Icmpv6Repr::Other { code, rest, .. } => {
                b[1] = code;
                b[4..8].copy_from_slice(&rest);
            }
        }
        let body = self.body();
        b[hl..hl + body.len()].copy_from_slice(body);
        let mut at = hl + body.len();
        for o in self.nd_options().iter().flatten() {
            at += o.emit(&mut b[at..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ipv6::{Ipv6Repr, PROTO_UDP};
    use crate::wire::testutil::{naive_with_pseudo, pseudo_v6};
    use proptest::prelude::*;

    const LL_A: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0x0200, 0x00ff, 0xfe00, 0x0001);
    const LL_B: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0x0200, 0x00ff, 0xfe00, 0x0002);
    const MAC_A: EtherAddr = EtherAddr([2, 0, 0, 0, 0, 1]);

    fn emit_checked(r: &Icmpv6Repr<'_>, src: Ipv6Addr, dst: Ipv6Addr) -> Vec<u8> {
        let mut out = vec![0xa5u8; r.buffer_len()];
        let mut h = Icmpv6Header::new_unchecked(&mut out[..]);
        r.emit(&mut h);
        h.fill_checksum(src, dst);
        out
    }

    /// A neighbour solicitation for LL_B from LL_A, as on the wire.
    fn neighbor_solicit() -> Vec<u8> {
        let mut b = vec![135, 0, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&LL_B.octets());
        b.extend_from_slice(&[1, 1, 2, 0, 0, 0, 0, 1]);
        b
    }

    #[test]
    fn neighbor_solicit_round_trip_and_checksum() {
        let dst = solicited_node(LL_B);
        assert_eq!(dst, "ff02::1:ff00:2".parse::<Ipv6Addr>().unwrap());
        assert_eq!(multicast_ether(dst), EtherAddr([0x33, 0x33, 0xff, 0, 0, 2]));
        let mut b = neighbor_solicit();
        let c = naive_with_pseudo(&pseudo_v6(LL_A.octets(), dst.octets(), 58, b.len()), &b);
        b[2..4].copy_from_slice(&c.to_be_bytes());
        let h = Icmpv6Header::new_checked(&b[..]).unwrap();
        assert!(h.verify_checksum(LL_A, dst));
        assert!(!h.verify_checksum(LL_B, dst));
        assert_eq!(h.target(), LL_B);
        let r = Icmpv6Repr::parse(&h).unwrap();
        assert_eq!(
            r,
            Icmpv6Repr::NeighborSolicit {
                target: LL_B,
                source_ll: Some(MAC_A)
            }
        );
        assert_eq!(emit_checked(&r, LL_A, dst), b);
    }

    #[test]
    fn neighbor_advert() {
        let r = Icmpv6Repr::NeighborAdvert {
            flags: ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE,
            target: LL_B,
            target_ll: Some(EtherAddr([2, 0, 0, 0, 0, 2])),
        };
        let out = emit_checked(&r, LL_B, LL_A);
        assert_eq!(out.len(), 32);
        assert_eq!(out[4], 0x60);
        assert_eq!(out[24..26], [ND_OPT_TARGET_LINKADDR, 1]);
        let h = Icmpv6Header::new_checked(&out[..]).unwrap();
        assert!(h.verify_checksum(LL_B, LL_A));
        assert_eq!(h.nd_flags(), 0x60);
        assert_eq!(Icmpv6Repr::parse(&h).unwrap(), r);
    }

    #[test]
    fn router_advert_with_options() {
        let pi = PrefixInfo {
            prefix_len: 64,
            on_link: true,
            autonomous: true,
            valid_lifetime: 2592000,
            preferred_lifetime: 604800,
            prefix: "2001:db8:1::".parse().unwrap(),
        };
        let r = Icmpv6Repr::RouterAdvert {
            hop_limit: 64,
            flags: ND_RA_FLAG_OTHER,
            router_lifetime: 1800,
            reachable_time: 30000,
            retrans_time: 1000,
            source_ll: Some(MAC_A),
            mtu: Some(1500),
            prefix_info: Some(pi),
        };
        let all_nodes: Ipv6Addr = "ff02::1".parse().unwrap();
        let out = emit_checked(&r, LL_A, all_nodes);
        assert_eq!(r.buffer_len(), 16 + 8 + 8 + 32);
        let h = Icmpv6Header::new_checked(&out[..]).unwrap();
        assert!(h.verify_checksum(LL_A, all_nodes));
        assert_eq!(
            (h.cur_hop_limit(), h.nd_flags(), h.router_lifetime()),
            (64, ND_RA_FLAG_OTHER, 1800)
        );
        assert_eq!((h.reachable_time(), h.retrans_time()), (30000, 1000));
        let opts: Vec<_> = h.ndisc_options().map(Result::unwrap).collect();
        assert_eq!(
            opts,
            [
                NdiscOption::SourceLinkAddr(MAC_A),
                NdiscOption::Mtu(1500),
                NdiscOption::PrefixInfo(pi)
            ]
        );
        // The prefix option's bytes, from RFC 4861 section 4.6.2's layout.
        assert_eq!(out[32..36], [3, 4, 64, 0xc0]);
        assert_eq!(out[36..40], 2592000u32.to_be_bytes());
        assert_eq!(Icmpv6Repr::parse(&h).unwrap(), r);

        let rs = Icmpv6Repr::RouterSolicit { source_ll: None };
        let out = emit_checked(&rs, LL_A, "ff02::2".parse().unwrap());
        assert_eq!(out.len(), 8);
        let h = Icmpv6Header::new_checked(&out[..]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&h).unwrap(), rs);
    }

    #[test]
    fn unknown_options_are_skipped_and_bad_ones_rejected() {
        let mut b = neighbor_solicit();
        b.extend_from_slice(&[200, 1, 9, 9, 9, 9, 9, 9]);
        let h = Icmpv6Header::new_checked(&b[..]).unwrap();
        assert!(matches!(
            Icmpv6Repr::parse(&h),
            Ok(Icmpv6Repr::NeighborSolicit {
                source_ll: Some(_),
                ..
            })
        ));
        let mut z = neighbor_solicit();
        z[25] = 0; // option length zero
        let h = Icmpv6Header::new_checked(&z[..]).unwrap();
        assert_eq!(h.ndisc_options().next(), Some(Err(BadOption { at: 1 })));
        assert_eq!(Icmpv6Repr::parse(&h), Err(WireError::Malformed));
        let mut c = neighbor_solicit();
        c[1] = 1;
        let h = Icmpv6Header::new_checked(&c[..]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&h), Err(WireError::Malformed));
        // A link-layer option of another length is not Ethernet's.
        let o = [1, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
        assert!(matches!(
            NdiscOptionsIter::new(&o).next(),
            Some(Ok(NdiscOption::Unknown { kind: 1, .. }))
        ));
        let mtu16 = [5, 2, 0, 0, 0, 0, 5, 220, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            NdiscOptionsIter::new(&mtu16).next(),
            Some(Err(BadOption { at: 1 }))
        );
    }

    #[test]
    fn echo_and_errors() {
        let echo = Icmpv6Repr::EchoRequest {
            ident: 0xbeef,
            seq: 3,
            data: b"ping",
        };
        let out = emit_checked(&echo, LL_A, LL_B);
        assert_eq!(out[..2], [128, 0]);
        assert_eq!(out[4..], [0xbe, 0xef, 0, 3, b'p', b'i', b'n', b'g']);
        let mut z = out.clone();
        z[2] = 0;
        z[3] = 0;
        assert_eq!(
            u16::from_be_bytes([out[2], out[3]]),
            naive_with_pseudo(&pseudo_v6(LL_A.octets(), LL_B.octets(), 58, 12), &z)
        );
        let h = Icmpv6Header::new_checked(&out[..]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&h).unwrap(), echo);

        // A packet too big quoting the start of a UDP packet.
        let ip = Ipv6Repr {
            src: LL_B,
            dst: LL_A,
            next_header: PROTO_UDP,
            payload_len: 1452,
            ..Default::default()
        };
        let mut q = vec![0u8; 48];
        ip.emit(&mut Ipv6Header::new_unchecked(&mut q[..]));
        let reprs = [
            Icmpv6Repr::PacketTooBig {
                mtu: 1280,
                quoted: &q,
            },
            Icmpv6Repr::DstUnreachable {
                code: ICMP6_DST_UNREACH_NOPORT,
                quoted: &q,
            },
            Icmpv6Repr::TimeExceeded {
                code: ICMP6_TIME_EXCEED_TRANSIT,
                quoted: &q,
            },
            Icmpv6Repr::ParamProblem {
                code: ICMP6_PARAMPROB_NEXTHEADER,
                pointer: 6,
                quoted: &q,
            },
            Icmpv6Repr::Other {
                msg_type: ND_REDIRECT,
                code: 0,
                rest: [0; 4],
                data: &[0; 32],
            },
        ];
        for r in reprs {
            let out = emit_checked(&r, LL_A, LL_B);
            let h = Icmpv6Header::new_checked(&out[..]).unwrap();
            assert!(h.verify_checksum(LL_A, LL_B));
            assert_eq!(is_error(h.msg_type()), h.msg_type() < 5);
            assert_eq!(Icmpv6Repr::parse(&h).unwrap(), r);
            if is_error(h.msg_type()) {
                let qh = h.quoted_ipv6().unwrap();
                assert_eq!((qh.src(), qh.payload().len()), (LL_B, 8));
            }
        }
        let h = Icmpv6Header::new_checked(&[2, 0, 0, 0, 0, 0, 5, 0xdc][..]).unwrap();
        assert_eq!((h.mtu(), h.pointer()), (1500, 1500));
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = neighbor_solicit();
        for n in 0..24 {
            assert_eq!(
                Icmpv6Header::new_checked(&b[..n]).err(),
                Some(WireError::Truncated),
                "{n}"
            );
        }
        // Cutting into the option leaves a malformed option.
        for n in 25..b.len() {
            let h = Icmpv6Header::new_checked(&b[..n]).unwrap();
            assert_eq!(Icmpv6Repr::parse(&h), Err(WireError::Malformed), "{n}");
        }
        let mut ra = vec![134, 0, 0, 0];
        ra.resize(16, 0);
        for n in 0..16 {
            assert!(Icmpv6Header::new_checked(&ra[..n]).is_err());
        }
        let mut rd = vec![137, 0, 0, 0];
        rd.resize(40, 0);
        for n in 0..40 {
            assert!(Icmpv6Header::new_checked(&rd[..n]).is_err());
        }
        for n in 0..8 {
            assert!(Icmpv6Header::new_checked(&[128, 0, 0, 0, 0, 0, 0, 0][..n]).is_err());
        }
    }

    #[test]
    fn option_emit_matches_parse() {
        let opts = [
            NdiscOption::RedirectedHeader(&[1, 2, 3]),
            NdiscOption::Unknown {
                kind: 14,
                data: &[7; 6],
            },
            NdiscOption::TargetLinkAddr(MAC_A),
        ];
        let mut buf = vec![0u8; opts.iter().map(NdiscOption::buffer_len).sum()];
        let mut at = 0;
        for o in &opts {
            at += o.emit(&mut buf[at..]);
        }
        let back: Vec<_> = NdiscOptionsIter::new(&buf).map(Result::unwrap).collect();
        assert_eq!(
            back[0],
            NdiscOption::RedirectedHeader(&[1, 2, 3, 0, 0, 0, 0, 0])
        );
        assert_eq!(back[1], opts[1]);
        assert_eq!(back[2], opts[2]);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..96), nd in 0u8..6) {
            if nd < 5 && !b.is_empty() {
                // Steer the type to the ND messages half the time.
                b[0] = 133 + nd;
            }
            if let Ok(h) = Icmpv6Header::new_checked(&b[..]) {
                let _ = (h.msg_type(), h.code(), h.checksum(), h.ident(), h.seq(), h.rest());
                let _ = (h.mtu(), h.pointer(), h.data(), h.quoted_ipv6().is_ok());
                let _ = (h.cur_hop_limit(), h.nd_flags(), h.router_lifetime(), h.reachable_time());
                let _ = (h.retrans_time(), h.target(), h.redirect_dst(), h.options());
                let _ = h.verify_checksum(LL_A, LL_B);
                for o in h.ndisc_options().flatten() {
                    let mut buf = vec![0u8; o.buffer_len()];
                    prop_assert_eq!(o.emit(&mut buf), buf.len());
                }
                if let Ok(r) = Icmpv6Repr::parse(&h) {
                    prop_assert_eq!(r.msg_type(), h.msg_type());
                    let out = emit_checked(&r, LL_A, LL_B);
                    let v = Icmpv6Header::new_checked(&out[..]).unwrap();
                    prop_assert!(v.verify_checksum(LL_A, LL_B));
                    prop_assert_eq!(Icmpv6Repr::parse(&v).unwrap(), r);
                }
            }
        }
    }
}
