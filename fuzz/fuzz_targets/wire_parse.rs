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

fn ether(d: &[u8]) {
    let Ok(f) = EtherFrame::new_checked(d) else {
        return;
    };
    let _ = (
        f.dst().is_group(),
        f.src(),
        f.ethertype(),
        f.is_tagged(),
        f.payload(),
    );
    let r = EthernetRepr::parse(&f).expect("a checked Ethernet view parses");
    let mut out = vec![0u8; r.buffer_len()];
    r.emit(&mut EtherFrame::new_unchecked(&mut out[..]));
    assert_eq!(out[..], d[..14]);
}

fn vlan(d: &[u8]) {
    let Ok(t) = VlanTag::new_checked(d) else {
        return;
    };
    let _ = (
        t.tci(),
        t.pcp(),
        t.dei(),
        t.vid(),
        t.ethertype(),
        t.payload(),
    );
    let r = VlanRepr::parse(&t).expect("a checked VLAN view parses");
    let mut out = vec![0u8; r.buffer_len()];
    r.emit(&mut VlanTag::new_unchecked(&mut out[..]));
    assert_eq!(out[..], d[..4]);
}

fn arp(d: &[u8]) {
    let Ok(a) = ArpPacket::new_checked(d) else {
        return;
    };
    let _ = (
        a.hardware(),
        a.protocol(),
        a.hardware_len(),
        a.protocol_len(),
        a.op(),
    );
    let _ = (a.sha(), a.spa(), a.tha(), a.tpa(), a.is_ether_ipv4());
    if let Ok(r) = ArpRepr::parse(&a) {
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut ArpPacket::new_unchecked(&mut out[..]));
        assert_eq!(out[..], d[..28]);
    }
}

/// Returns the protocol and payload when the header parses.
fn ipv4(d: &[u8]) -> Option<(u8, &[u8])> {
    let h = Ipv4Header::new_checked(d).ok()?;
    let _ = (
        h.version(),
        h.header_len(),
        h.tos(),
        h.dscp(),
        h.ecn(),
        h.total_len(),
    );
    let _ = (
        h.ident(),
        h.frag_word(),
        h.dont_frag(),
        h.more_frags(),
        h.frag_offset(),
    );
    let _ = (
        h.is_fragment(),
        h.ttl(),
        h.checksum(),
        h.src(),
        h.dst(),
        h.options(),
    );
    let _ = (h.verify_checksum(), h.header());
    for o in h.options_iter() {
        let _ = o;
    }
    let mut copy = d.to_vec();
    if let Ok(mut m) = Ipv4Header::new_checked(&mut copy[..]) {
        let _ = m.payload_mut().len();
        m.decrement_ttl();
    }
    let r = Ipv4Repr::parse(&h).ok()?;
    let mut out = vec![0u8; r.buffer_len()];
    r.emit(&mut Ipv4Header::new_unchecked(&mut out[..]));
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
    let _ = (
        h.version(),
        h.traffic_class(),
        h.dscp(),
        h.ecn(),
        h.flow_label(),
    );
    let _ = (h.payload_len(), h.hop_limit(), h.src(), h.dst());
    let r = Ipv6Repr::parse(&h).ok()?;
    let mut out = vec![0u8; r.buffer_len()];
    r.emit(&mut Ipv6Header::new_unchecked(&mut out[..]));
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
        let _ = (h.next_header(), h.hdr_ext_len(), h.header_len(), h.data());
        let _ = (
            h.routing_type(),
            h.segments_left(),
            h.routing_data(),
            h.payload(),
        );
        for o in h.options_iter() {
            let _ = o;
        }
        let r = Ipv6ExtRepr::parse(&h).expect("a checked extension header parses");
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut Ipv6ExtHeader::new_unchecked(&mut out[..]));
        assert_eq!(out[..], d[..h.header_len()]);
    }
    if let Ok(f) = Ipv6FragHeader::new_checked(d) {
        let _ = (
            f.next_header(),
            f.frag_offset(),
            f.more_frags(),
            f.ident(),
            f.payload(),
        );
        let r = Ipv6FragRepr::parse(&f).expect("a checked fragment header parses");
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut Ipv6FragHeader::new_unchecked(&mut out[..]));
        let back = Ipv6FragHeader::new_checked(&out[..]).expect("8 bytes");
        assert_eq!(Ipv6FragRepr::parse(&back), Ok(r));
    }
}

fn udp(d: &[u8]) {
    let Ok(u) = UdpHeader::new_checked(d) else {
        return;
    };
    let _ = (
        u.src_port(),
        u.dst_port(),
        u.len(),
        u.is_empty(),
        u.checksum(),
        u.payload(),
    );
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
    let _ = (
        t.src_port(),
        t.dst_port(),
        t.seq(),
        t.ack(),
        t.header_len(),
        t.flags(),
    );
    let _ = (
        t.flags_with_ns(),
        t.window(),
        t.checksum(),
        t.urgent(),
        t.options(),
    );
    let _ = (t.payload(), t.segment_len(), t.verify_checksum(V4.0, V4.1));
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
    let _ = (
        h.icmp_type(),
        h.code(),
        h.checksum(),
        h.ident(),
        h.seq(),
        h.rest(),
    );
    let _ = (
        h.gateway(),
        h.pointer(),
        h.next_hop_mtu(),
        h.data(),
        h.verify_checksum(),
    );
    if let Ok(q) = h.quoted_ipv4() {
        let _ = (q.src(), q.payload());
    }
    let r = IcmpRepr::parse(&h).expect("every ICMP type parses");
    let mut out = vec![0u8; r.buffer_len()];
    r.emit(&mut IcmpHeader::new_unchecked(&mut out[..]));
    let back = IcmpHeader::new_checked(&out[..]).expect("emitted ICMP header is valid");
    assert!(back.verify_checksum());
    assert_eq!(
        IcmpRepr::parse(&back).map(|b| b.icmp_type()),
        Ok(r.icmp_type())
    );
}

fn icmpv6(d: &[u8]) {
    let Ok(h) = Icmpv6Header::new_checked(d) else {
        return;
    };
    let _ = (
        h.msg_type(),
        h.code(),
        h.checksum(),
        h.ident(),
        h.seq(),
        h.rest(),
    );
    let _ = (
        h.mtu(),
        h.pointer(),
        h.data(),
        h.cur_hop_limit(),
        h.nd_flags(),
    );
    let _ = (
        h.router_lifetime(),
        h.reachable_time(),
        h.retrans_time(),
        h.target(),
    );
    let _ = (h.redirect_dst(), h.options(), h.verify_checksum(V6.0, V6.1));
    if let Ok(q) = h.quoted_ipv6() {
        let _ = (q.src(), q.payload());
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
    ether(data);
    vlan(data);
    arp(data);
    let _ = ipv4(data);
    let _ = ipv6(data);
    ipv6_ext(data);
    udp(data);
    tcp(data);
    icmp(data);
    icmpv6(data);

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
    match ethertype {
        ETHERTYPE_ARP => arp(rest),
        ETHERTYPE_IP => {
            if let Some((proto, payload)) = ipv4(rest) {
                transport(proto, payload);
            }
        }
        ETHERTYPE_IP6 => {
            if let Some((proto, payload)) = ipv6(rest) {
                transport(proto, payload);
            }
        }
        _ => {}
    }
});
