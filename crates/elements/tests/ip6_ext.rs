//! IP6HopByHop, IP6Routing and CheckICMP6Header on crafted packets: each
//! output and annotation RFC 8200, 2675, 2711, 5095, 8754 and 4443 call
//! for, malformed packets counted and dropped, and arbitrary bytes through
//! all three without a panic.

use std::net::Ipv6Addr;

use proptest::prelude::*;
use rclick_core::wire::ipv6::{
    HEADER_LEN, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ICMPV6, PROTO_ROUTING, PROTO_UDP,
};
use rclick_core::wire::{Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr};
use rclick_core::{Packet, Router};
use rclick_elements::testing::{from_config, read};

fn a6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn ip6_to(dst: &str, nh: u8, payload: &[u8]) -> Vec<u8> {
    let r = Ipv6Repr {
        src: a6("2001:db8::1"),
        dst: a6(dst),
        next_header: nh,
        payload_len: payload.len(),
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    r.emit(&mut Ipv6Header::new_unchecked(&mut b[..]));
    b[HEADER_LEN..].copy_from_slice(payload);
    b
}

fn ip6(nh: u8, payload: &[u8]) -> Vec<u8> {
    ip6_to("2001:db8::2", nh, payload)
}

fn net(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, HEADER_LEN.min(bytes.len()));
    p
}

/// Pushes `pkt` into `x` and returns (output port, packet) of what came
/// out of queues q0..q4 (None when dropped).
fn route(r: &mut Router, pkt: &[u8]) -> Option<(usize, Packet)> {
    let i = r.find_element("x").unwrap();
    r.inject_packet(i, 0, net(pkt));
    let mut found = None;
    for q in 0..5 {
        if let Some(qi) = r.find_element(&format!("q{q}")) {
            while let Some(b) = r.pull_from(qi, 0, 8) {
                for p in b {
                    assert!(found.is_none(), "two packets out");
                    found = Some((q, p));
                }
            }
        }
    }
    found
}

fn hbh_router(outputs: usize) -> Router {
    let mut c = "Idle -> x :: IP6HopByHop -> q0 :: Queue -> Idle;".to_string();
    for i in 1..outputs {
        c += &format!("x[{i}] -> q{i} :: Queue -> Idle;");
    }
    from_config(&c)
}

/// A hop-by-hop header with these option bytes (padded with PadN/Pad1 to
/// a multiple of 8), then UDP.
fn hbh(opts: &[u8], rest: &[u8]) -> Vec<u8> {
    let mut b = vec![PROTO_UDP, 0];
    b.extend_from_slice(opts);
    let pad = (8 - b.len() % 8) % 8;
    match pad {
        0 => {}
        1 => b.push(0),
        n => {
            b.extend_from_slice(&[1, (n - 2) as u8]);
            b.extend(std::iter::repeat_n(0, n - 2));
        }
    }
    b[1] = (b.len() / 8 - 1) as u8;
    b.extend_from_slice(rest);
    b
}

const UDP: [u8; 8] = [0x30, 0x39, 0, 53, 0, 8, 0, 0];

#[test]
fn hop_by_hop_outputs() {
    let mut r = hbh_router(5);
    // No hop-by-hop header; padding only.
    assert_eq!(route(&mut r, &ip6(PROTO_UDP, &UDP)).unwrap().0, 0);
    assert_eq!(
        route(&mut r, &ip6(PROTO_HOPOPTS, &hbh(&[0, 0], &UDP)))
            .unwrap()
            .0,
        0
    );
    // Router alert (MLD).
    let ra = ip6(PROTO_HOPOPTS, &hbh(&[5, 2, 0, 0], &UDP));
    assert_eq!(route(&mut r, &ra).unwrap().0, 2);
    // Unknown options by their two high bits.
    let unk = |t: u8, dst: &str| ip6_to(dst, PROTO_HOPOPTS, &hbh(&[1, 0, t, 1, 0], &UDP));
    assert_eq!(route(&mut r, &unk(0x1e, "2001:db8::2")).unwrap().0, 0);
    assert!(route(&mut r, &unk(0x5e, "2001:db8::2")).is_none());
    let (port, p) = route(&mut r, &unk(0x9e, "ff02::1")).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (4, 44));
    assert_eq!(route(&mut r, &unk(0xde, "2001:db8::2")).unwrap().0, 4);
    assert!(route(&mut r, &unk(0xde, "ff02::1")).is_none());
    // A valid jumbogram: payload length 0, option at 4n+2, the jumbo length
    // counting everything after the fixed header.
    let mut body = hbh(&[0xc2, 4, 0, 0, 0, 0], &UDP);
    body.resize(70000, 7);
    let n = body.len() as u32;
    body[4..8].copy_from_slice(&n.to_be_bytes());
    let mut jumbo = ip6(PROTO_HOPOPTS, &body[..10]);
    jumbo.truncate(HEADER_LEN);
    jumbo.extend_from_slice(&body);
    jumbo[4..6].copy_from_slice(&[0, 0]);
    assert_eq!(route(&mut r, &jumbo).unwrap().0, 1);
    // Bad jumbograms: payload length set; value too small; misaligned.
    let mut bad = jumbo.clone();
    bad[4..6].copy_from_slice(&[0, 8]);
    let (port, p) = route(&mut r, &bad).unwrap();
    // RFC 2675 section 3: pointing to the jumbo option's type byte.
    assert_eq!((port, p.icmp_param_prob_anno()), (3, 42));
    // Payload length 0 without a jumbo option: pointing to the payload
    // length.
    let mut nojumbo = ip6(PROTO_HOPOPTS, &hbh(&[0, 0], &UDP));
    nojumbo[4..6].copy_from_slice(&[0, 0]);
    let (port, p) = route(&mut r, &nojumbo).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (3, 4));
    // Options are read up to the payload length: an option in link
    // padding past it is not looked at, and a header overrunning the
    // payload is truncated.
    let mut padded = ip6(PROTO_HOPOPTS, &hbh(&[0, 0], &UDP));
    padded.extend_from_slice(&[0; 16]);
    assert_eq!(route(&mut r, &padded).unwrap().0, 0);
    let mut short = ip6(PROTO_HOPOPTS, &hbh(&[1, 4, 0, 0, 0, 0, 0x9e, 0], &UDP));
    short[4..6].copy_from_slice(&[0, 8]);
    assert!(route(&mut r, &short).is_none());
    let small = ip6(PROTO_HOPOPTS, &hbh(&[0xc2, 4, 0, 0, 0, 100], &UDP));
    let (port, p) = route(&mut r, &small).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (3, 44));
    let misaligned = ip6(PROTO_HOPOPTS, &hbh(&[0, 0xc2, 4, 0, 1, 0, 0], &UDP));
    let (port, p) = route(&mut r, &misaligned).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (3, 43));
    assert_eq!(read(&mut r, "x.drops"), "3");
    assert_eq!(read(&mut r, "x.router_alerts"), "1");
    assert_eq!(read(&mut r, "x.jumbos"), "1");
    // Malformed: truncated header, option overrunning it, bad alert length.
    for b in [
        ip6(PROTO_HOPOPTS, &[PROTO_UDP, 1, 0, 0]),
        ip6(PROTO_HOPOPTS, &[PROTO_UDP, 0, 1, 9, 0, 0, 0, 0]),
        ip6(PROTO_HOPOPTS, &hbh(&[5, 3, 0, 0, 0], &UDP)),
    ] {
        assert!(route(&mut r, &b).is_none());
    }
    assert_eq!(read(&mut r, "x.drops"), "6");
    // With output 0 only: router alerts pass, problems are dropped.
    let mut r = hbh_router(1);
    assert_eq!(route(&mut r, &ra).unwrap().0, 0);
    assert!(route(&mut r, &unk(0x9e, "2001:db8::2")).is_none());
}

fn rt_router() -> Router {
    from_config("Idle -> x :: IP6Routing -> q0 :: Queue -> Idle; x[1] -> q1 :: Queue -> Idle;")
}

/// A routing header of `rtype` with `left` segments left and `segs`
/// 16-byte addresses, then UDP; behind a destination options header when
/// `dstopts`.
fn rh(rtype: u8, left: u8, segs: &[&str], dstopts: bool) -> Vec<u8> {
    let mut b = Vec::new();
    if dstopts {
        b.extend_from_slice(&[PROTO_ROUTING, 0, 1, 4, 0, 0, 0, 0]);
    }
    b.extend_from_slice(&[PROTO_UDP, (segs.len() * 2) as u8, rtype, left]);
    b.extend_from_slice(&[segs.len().saturating_sub(1) as u8, 0, 0, 0]);
    for s in segs {
        b.extend_from_slice(&a6(s).octets());
    }
    b.extend_from_slice(&UDP);
    ip6(if dstopts { 60 } else { PROTO_ROUTING }, &b)
}

#[test]
fn routing_headers() {
    let mut r = rt_router();
    // No routing header; segments left 0 (even type 0).
    assert_eq!(route(&mut r, &ip6(PROTO_UDP, &UDP)).unwrap().0, 0);
    let done = rh(0, 0, &["2001:db8::9"], false);
    assert_eq!(route(&mut r, &done).unwrap().1.data(), &done[..]);
    // Type 0 is never processed (RFC 5095): parameter problem at the
    // routing type.
    let (port, p) = route(&mut r, &rh(0, 1, &["2001:db8::9"], false)).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (1, 42));
    let (port, p) = route(&mut r, &rh(2, 1, &["2001:db8::9"], true)).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (1, 50));
    // Segment routing: list[0] is the last segment.
    let srh = rh(4, 2, &["2001:db8::30", "2001:db8::20"], false);
    let (port, p) = route(&mut r, &srh).unwrap();
    assert_eq!(port, 0);
    let h = Ipv6Header::new_checked(p.data()).unwrap();
    assert_eq!(h.dst(), a6("2001:db8::20"));
    assert_eq!(p.data()[43], 1);
    assert_eq!(p.dst_ip6_anno(), a6("2001:db8::20"));
    let (_, p) = route(&mut r, p.data()).unwrap();
    assert_eq!(
        Ipv6Header::new_checked(p.data()).unwrap().dst(),
        a6("2001:db8::30")
    );
    assert_eq!(read(&mut r, "x.forwarded"), "2");
    // Segments left beyond the list: pointer to segments left.
    let (port, p) = route(&mut r, &rh(4, 3, &["2001:db8::30", "2001:db8::20"], false)).unwrap();
    assert_eq!((port, p.icmp_param_prob_anno()), (1, 43));
    // A multicast next segment is dropped, not forwarded to the group.
    assert!(route(&mut r, &rh(4, 1, &["ff0e::1"], false)).is_none());
    assert_eq!(read(&mut r, "x.forwarded"), "2");
    assert_eq!(read(&mut r, "x.drops"), "1");
    // Truncated.
    assert!(route(
        &mut r,
        &ip6(PROTO_ROUTING, &[PROTO_UDP, 2, 4, 1, 0, 0, 0, 0])
    )
    .is_none());
    assert_eq!(read(&mut r, "x.drops"), "2");
}

fn icmp6(src: &str, dst: &str, r: &Icmpv6Repr) -> Vec<u8> {
    let mut m = vec![0u8; r.buffer_len()];
    let mut h = Icmpv6Header::new_unchecked(&mut m[..]);
    r.emit(&mut h);
    h.fill_checksum(a6(src), a6(dst));
    let mut p = ip6_to(dst, PROTO_ICMPV6, &m);
    p[8..24].copy_from_slice(&a6(src).octets());
    p
}

#[test]
fn check_icmp6_header() {
    let mut r = from_config(
        "Idle -> x :: CheckICMP6Header(DETAILS true) -> q0 :: Queue -> Idle; x[1] -> q1 :: Queue -> Idle;",
    );
    let echo = icmp6(
        "2001:db8::1",
        "2001:db8::2",
        &Icmpv6Repr::EchoRequest {
            ident: 1,
            seq: 2,
            data: b"hello",
        },
    );
    assert_eq!(route(&mut r, &echo).unwrap().0, 0);
    // Link padding is not part of the message.
    let mut padded = echo.clone();
    padded.extend_from_slice(&[0; 20]);
    assert_eq!(route(&mut r, &padded).unwrap().0, 0);
    // Behind a hop-by-hop header (the checksum does not cover it).
    let mut behind = ip6(PROTO_HOPOPTS, &hbh(&[], &echo[HEADER_LEN..]));
    behind[HEADER_LEN] = PROTO_ICMPV6;
    assert_eq!(route(&mut r, &behind).unwrap().0, 0);
    let mut bad_sum = echo.clone();
    bad_sum[HEADER_LEN + 8] ^= 1;
    let mut short = echo.clone();
    short.truncate(HEADER_LEN + 6);
    let mut wrong_len = echo.clone();
    wrong_len[5] += 4;
    let mut frag = vec![PROTO_ICMPV6, 0, 0, 1, 0, 0, 0, 1];
    frag.extend_from_slice(&echo[HEADER_LEN..]);
    for (b, reason) in [
        (ip6(PROTO_UDP, &UDP), 0),
        (ip6(PROTO_FRAGMENT, &frag), 0),
        (bad_sum, 2),
        (short, 1),
        (wrong_len, 1),
        (echo[..20].to_vec(), 0),
    ] {
        assert_eq!(route(&mut r, &b).unwrap().0, 1, "reason {reason}");
    }
    assert_eq!(read(&mut r, "x.drops"), "6");
    assert_eq!(
        read(&mut r, "x.drop_details"),
        "3\tnot ICMPv6\n2\tbad packet length\n1\tbad ICMPv6 checksum"
    );
}

#[test]
fn erase_ip_payload_drops_what_it_cannot_read() {
    let mut r = from_config("Idle -> x :: EraseIPPayload -> q0 :: Queue -> Idle;");
    let mut later = vec![PROTO_UDP, 0, 0, 8, 0, 0, 0, 1];
    later.extend_from_slice(b"not a header");
    for b in [
        ip6(PROTO_FRAGMENT, &later),
        ip6(47, b"gre"),
        vec![0x45, 0, 0],
        b"\x60 short".to_vec(),
    ] {
        assert!(route(&mut r, &b).is_none());
    }
    assert_eq!(read(&mut r, "x.drops"), "4");
    // A first fragment's UDP payload is erased.
    let mut first = vec![PROTO_UDP, 0, 0, 1, 0, 0, 0, 1];
    first.extend_from_slice(&[0, 1, 0, 2, 0, 20, 0xab, 0xcd]);
    first.extend_from_slice(b"payload!");
    let (_, p) = route(&mut r, &ip6(PROTO_FRAGMENT, &first)).unwrap();
    assert_eq!(
        &p.data()[HEADER_LEN + 8..],
        &[0, 1, 0, 2, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn flow_label_and_random_addresses() {
    let mut r = from_config("Idle -> x :: SetIP6FlowLabel(0xabcde) -> q0 :: Queue -> Idle;");
    let mut pkt = ip6(PROTO_UDP, &UDP);
    pkt[0..4].copy_from_slice(&[0x6b, 0x81, 0x23, 0x45]);
    let (_, p) = route(&mut r, &pkt).unwrap();
    assert_eq!(&p.data()[..4], &[0x6b, 0x8a, 0xbc, 0xde]);
    assert_eq!(&p.data()[4..], &pkt[4..]);
    r.write_handler("x.flow", "7").unwrap();
    let (_, p) = route(&mut r, &pkt).unwrap();
    assert_eq!(&p.data()[..4], &[0x6b, 0x80, 0x00, 0x07]);
    assert!(r.write_handler("x.flow", "0x100000").is_err());
    assert!(route(&mut r, &pkt[..30]).is_none());
    assert_eq!(read(&mut r, "x.drops"), "1");

    let addrs = |conf: &str, n: usize| {
        let mut r = from_config(&format!(
            "Idle -> x :: SetRandIP6Address({conf}) -> q0 :: Queue -> Idle;"
        ));
        (0..n)
            .map(|_| {
                route(&mut r, &ip6(PROTO_UDP, &UDP))
                    .unwrap()
                    .1
                    .dst_ip6_anno()
            })
            .collect::<Vec<_>>()
    };
    let v = addrs("2001:db8:7::/48, SEED 1", 200);
    assert!(v.iter().all(|a| a.segments()[..3] == [0x2001, 0xdb8, 7]));
    let distinct: std::collections::BTreeSet<_> = v.iter().collect();
    assert!(distinct.len() > 190);
    assert_eq!(v, addrs("2001:db8:7::/48, SEED 1", 200));
    assert_ne!(v, addrs("2001:db8:7::/48, SEED 2", 200));
    let few: std::collections::BTreeSet<_> = addrs("2001:db8::/120, 3, SEED 9", 100)
        .into_iter()
        .collect();
    assert!(few.len() <= 3 && !few.is_empty());
    assert!(few
        .iter()
        .all(|a| a.segments()[..7] == [0x2001, 0xdb8, 0, 0, 0, 0, 0]));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..120),
        nh in prop_oneof![Just(0u8), Just(43), Just(44), Just(58), Just(60), any::<u8>()],
        cut in any::<u8>(),
    ) {
        let mut pkt = ip6(nh, &body);
        if cut % 4 == 0 {
            pkt.truncate(cut as usize);
        }
        for class in [
            "IP6HopByHop",
            "IP6Routing",
            "CheckICMP6Header",
            "EraseIPPayload",
            "SetIP6FlowLabel(5)",
            "SetRandIP6Address(2001:db8::/32)",
        ] {
            let second = if class.starts_with("IP6") || class.starts_with("Check") { "x[1] -> q1 :: Queue -> Idle;" } else { "" };
            let mut r = from_config(&format!(
                "Idle -> x :: {class} -> q0 :: Queue -> Idle; {second}"
            ));
            let _ = route(&mut r, &pkt);
        }
    }
}
