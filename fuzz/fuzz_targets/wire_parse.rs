//! Arbitrary bytes through every rclick_core::wire view and Repr: no
//! `new_checked`, accessor, option iterator or `parse` may panic, and
//! whatever parses must emit into a buffer of `buffer_len()` bytes and
//! parse back to the same Repr (checksums, where `emit` leaves them to the
//! caller, are filled and must then verify).
//!
//! The input is offered whole to each view, then walked as a received
//! frame would be: Ethernet, any VLAN tags, ARP / IPv4 / IPv6 (through its
//! extension headers), then UDP, TCP, ICMP or ICMPv6 on what remains, so
//! inputs that get past one layer's checks exercise the next.
#![no_main]

use std::net::{Ipv4Addr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use rclick_core::wire::ether::{ETHERTYPE_QINQ, ETHERTYPE_VLAN};
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::ipv6::PROTO_ICMPV6;
use rclick_core::wire::ipv6ext::{upper_layer, Ipv6ExtRepr};
use rclick_core::wire::link::{CHdlcHeader, NullHeader, PppHeader, SllHeader};
use rclick_core::wire::{
    ArpPacket, ArpRepr, EtherFrame, EthernetRepr, IcmpHeader, IcmpRepr, Icmpv6Header, Icmpv6Repr,
    Ipv4Header, Ipv4Repr, Ipv6ExtHeader, Ipv6FragHeader, Ipv6FragRepr, Ipv6Header, Ipv6Repr,
    TcpHeader, TcpOption, TcpRepr, UdpHeader, UdpRepr, VlanRepr, VlanTag, ETHERTYPE_ARP,
    ETHERTYPE_IP, ETHERTYPE_IP6,
};

const V4: (Ipv4Addr, Ipv4Addr) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
const V6: (Ipv6Addr, Ipv6Addr) = (
    Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1),
    Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 2),
);

/// Calls each named accessor on the view `v` and drops what it returns:
/// on a checked view none may panic, whatever the bytes.
macro_rules! touch {
    ($v:ident, $($accessor:ident),+ $(,)?) => {
        $(let _ = $v.$accessor();)+
    };
}

/// Emits `repr` through a `$view` over a fresh buffer of
/// `repr.buffer_len()` zero bytes, and returns the buffer.
macro_rules! emitted {
    ($repr:expr, $view:ident) => {{
        let mut out = vec![0u8; $repr.buffer_len()];
        $repr.emit(&mut $view::new_unchecked(&mut out[..]));
        out
    }};
}

fn ether(d: &[u8]) {
    let Ok(f) = EtherFrame::new_checked(d) else {
        return;
    };
    touch!(f, dst, src, ethertype, is_tagged, payload);
    let _ = f.dst().is_group();
    let r = EthernetRepr::parse(&f).expect("a checked Ethernet view parses");
    assert_eq!(emitted!(r, EtherFrame)[..], d[..14]);
}

fn vlan(d: &[u8]) {
    let Ok(t) = VlanTag::new_checked(d) else {
        return;
    };
    touch!(t, tci, pcp, dei, vid, ethertype, payload);
    let r = VlanRepr::parse(&t).expect("a checked VLAN view parses");
    assert_eq!(emitted!(r, VlanTag)[..], d[..4]);
}

fn arp(d: &[u8]) {
    let Ok(a) = ArpPacket::new_checked(d) else {
        return;
    };
    touch!(a, hardware, protocol, hardware_len, protocol_len, op);
    touch!(a, sha, spa, tha, tpa, is_ether_ipv4);
    if let Ok(r) = ArpRepr::parse(&a) {
        assert_eq!(emitted!(r, ArpPacket)[..], d[..28]);
    }
}

/// Returns the protocol and payload when the header parses.
fn ipv4(d: &[u8]) -> Option<(u8, &[u8])> {
    let h = Ipv4Header::new_checked(d).ok()?;
    touch!(h, version, header_len, tos, dscp, ecn, total_len, ident);
    touch!(
        h,
        frag_word,
        dont_frag,
        more_frags,
        frag_offset,
        is_fragment
    );
    touch!(h, ttl, checksum, src, dst, options, verify_checksum, header);
    let _ = h.options_iter().count();
    let mut copy = d.to_vec();
    if let Ok(mut m) = Ipv4Header::new_checked(&mut copy[..]) {
        let _ = m.payload_mut().len();
        m.decrement_ttl();
    }
    let r = Ipv4Repr::parse(&h).ok()?;
    let out = emitted!(r, Ipv4Header);
    let back = Ipv4Header::new_checked(&out[..]).expect("emitted IPv4 header is valid");
    assert!(back.verify_checksum());
    assert_eq!(Ipv4Repr::parse(&back), Ok(r));
    assert_eq!(h.payload().len(), r.payload_len);
    // Sliced from `d`, not the view, so it outlives this function.
    let hl = h.header_len();
    Some((h.protocol(), &d[hl..hl + r.payload_len]))
}

/// Returns the upper-layer protocol and its bytes when the header and
/// extension headers parse.
fn ipv6(d: &[u8]) -> Option<(u8, &[u8])> {
    let h = Ipv6Header::new_checked(d).ok()?;
    touch!(h, version, traffic_class, dscp, ecn, flow_label);
    touch!(h, payload_len, hop_limit, src, dst);
    let r = Ipv6Repr::parse(&h).ok()?;
    let out = emitted!(r, Ipv6Header);
    let back = Ipv6Header::new_checked(&out[..]).expect("emitted IPv6 header is valid");
    assert_eq!(Ipv6Repr::parse(&back), Ok(r));
    assert_eq!(h.payload().len(), r.payload_len);
    let payload = &d[40..40 + r.payload_len];
    let (proto, at) = upper_layer(h.next_header(), payload).ok()?;
    assert!(at <= payload.len());
    Some((proto, &payload[at..]))
}

fn ipv6_ext(d: &[u8]) {
    if let Ok(h) = Ipv6ExtHeader::new_checked(d) {
        touch!(h, next_header, hdr_ext_len, header_len, data);
        touch!(h, routing_type, segments_left, routing_data, payload);
        let _ = h.options_iter().count();
        let r = Ipv6ExtRepr::parse(&h).expect("a checked extension header parses");
        assert_eq!(emitted!(r, Ipv6ExtHeader)[..], d[..h.header_len()]);
    }
    if let Ok(f) = Ipv6FragHeader::new_checked(d) {
        touch!(f, next_header, frag_offset, more_frags, ident, payload);
        let r = Ipv6FragRepr::parse(&f).expect("a checked fragment header parses");
        let out = emitted!(r, Ipv6FragHeader);
        let back = Ipv6FragHeader::new_checked(&out[..]).expect("8 bytes");
        assert_eq!(Ipv6FragRepr::parse(&back), Ok(r));
    }
}

fn udp(d: &[u8]) {
    let Ok(u) = UdpHeader::new_checked(d) else {
        return;
    };
    touch!(u, src_port, dst_port, len, is_empty, checksum, payload);
    let _ = (u.verify_checksum(V4.0, V4.1), u.verify_checksum(V6.0, V6.1));
    if let Ok(r) = UdpRepr::parse(&u) {
        let mut out = vec![0u8; r.buffer_len()];
        let mut v = UdpHeader::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.payload_mut().copy_from_slice(u.payload());
        v.fill_checksum(V6.0, V6.1);
        assert!(v.verify_checksum(V6.0, V6.1));
        v.fill_checksum(V4.0, V4.1);
        assert!(v.verify_checksum(V4.0, V4.1));
        assert_eq!(UdpRepr::parse(&v), Ok(r));
    }
}

fn tcp(d: &[u8]) {
    let Ok(t) = TcpHeader::new_checked(d) else {
        return;
    };
    touch!(
        t,
        src_port,
        dst_port,
        seq,
        ack,
        header_len,
        flags,
        flags_with_ns
    );
    touch!(t, window, checksum, urgent, options, payload, segment_len);
    let _ = t.verify_checksum(V4.0, V4.1);
    for o in t.options_typed().flatten() {
        let mut buf = vec![0u8; o.buffer_len()];
        assert_eq!(o.emit(&mut buf), buf.len());
        if !matches!(o, TcpOption::EndOfList | TcpOption::NoOp) {
            assert_eq!(buf[1] as usize, buf.len());
        }
    }
    let r = TcpRepr::parse(&t).expect("a checked TCP view parses");
    let mut out = vec![0u8; r.buffer_len()];
    let mut v = TcpHeader::new_unchecked(&mut out[..]);
    r.emit(&mut v);
    v.payload_mut().copy_from_slice(t.payload());
    v.fill_checksum(V6.0, V6.1);
    assert!(v.verify_checksum(V6.0, V6.1));
    let back = TcpHeader::new_checked(&out[..]).expect("emitted TCP header is valid");
    assert_eq!(TcpRepr::parse(&back), Ok(r));
}

fn icmp(d: &[u8]) {
    let Ok(h) = IcmpHeader::new_checked(d) else {
        return;
    };
    touch!(h, icmp_type, code, checksum, ident, seq, rest, gateway);
    touch!(h, pointer, next_hop_mtu, data, verify_checksum);
    if let Ok(q) = h.quoted_ipv4() {
        touch!(q, src, payload);
    }
    let r = IcmpRepr::parse(&h).expect("every ICMP type parses");
    let out = emitted!(r, IcmpHeader);
    let back = IcmpHeader::new_checked(&out[..]).expect("emitted ICMP header is valid");
    assert!(back.verify_checksum());
    let back_type = IcmpRepr::parse(&back).map(|b| b.icmp_type());
    assert_eq!(back_type, Ok(r.icmp_type()));
}

fn icmpv6(d: &[u8]) {
    let Ok(h) = Icmpv6Header::new_checked(d) else {
        return;
    };
    touch!(h, msg_type, code, checksum, ident, seq, rest, mtu, pointer);
    touch!(h, data, cur_hop_limit, nd_flags, router_lifetime);
    touch!(
        h,
        reachable_time,
        retrans_time,
        target,
        redirect_dst,
        options
    );
    let _ = h.verify_checksum(V6.0, V6.1);
    if let Ok(q) = h.quoted_ipv6() {
        touch!(q, src, payload);
    }
    for o in h.ndisc_options().flatten() {
        let mut buf = vec![0u8; o.buffer_len()];
        assert_eq!(o.emit(&mut buf), buf.len());
    }
    if let Ok(r) = Icmpv6Repr::parse(&h) {
        let mut out = vec![0u8; r.buffer_len()];
        let mut v = Icmpv6Header::new_unchecked(&mut out[..]);
        r.emit(&mut v);
        v.fill_checksum(V6.0, V6.1);
        let back = Icmpv6Header::new_checked(&out[..]).expect("emitted ICMPv6 is valid");
        assert!(back.verify_checksum(V6.0, V6.1));
        assert_eq!(Icmpv6Repr::parse(&back), Ok(r));
    }
}

/// The capture link headers (FromDump's FORCE_IP).
fn capture_links(d: &[u8]) {
    if let Ok(h) = SllHeader::new_checked(d) {
        touch!(h, packet_type, arphrd, protocol, is_ip);
    }
    if let Ok(h) = NullHeader::new_checked(d) {
        touch!(h, family, is_ip);
    }
    if let Ok(h) = CHdlcHeader::new_checked(d) {
        touch!(h, protocol, is_ip);
    }
    if let Ok(h) = PppHeader::new_checked(d) {
        touch!(h, protocol, header_len, is_ip);
    }
}

/// Every view, offered the input whole.
const WHOLE: [fn(&[u8]); 11] = [
    capture_links,
    ether,
    vlan,
    arp,
    |d| {
        let _ = ipv4(d);
    },
    |d| {
        let _ = ipv6(d);
    },
    ipv6_ext,
    udp,
    tcp,
    icmp,
    icmpv6,
];

fn transport(proto: u8, d: &[u8]) {
    match proto {
        PROTO_UDP => udp(d),
        PROTO_TCP => tcp(d),
        PROTO_ICMP => icmp(d),
        PROTO_ICMPV6 => icmpv6(d),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    for view in WHOLE {
        view(data);
    }

    // The same bytes as a received frame.
    let Ok(f) = EtherFrame::new_checked(data) else {
        return;
    };
    let mut ethertype = f.ethertype();
    let mut rest = f.payload();
    while matches!(ethertype, ETHERTYPE_VLAN | ETHERTYPE_QINQ) {
        let Ok(t) = VlanTag::new_checked(rest) else {
            return;
        };
        ethertype = t.ethertype();
        rest = &rest[4..];
    }
    let ip = match ethertype {
        ETHERTYPE_ARP => {
            arp(rest);
            None
        }
        ETHERTYPE_IP => ipv4(rest),
        ETHERTYPE_IP6 => ipv6(rest),
        _ => None,
    };
    if let Some((proto, payload)) = ip {
        transport(proto, payload);
    }
});
