//! The IPv6 elements on crafted packets, in simulated time: the header
//! checks and annotations, the forwarding path, the route tables (and the
//! trie against a brute-force longest-prefix match on random prefixes),
//! ICMP6Error's RFC 4443 rules, ICMP6PingResponder, neighbour discovery
//! (validation, the RFC 4861 cache states, and an exchange between two
//! routers in one configuration), and arbitrary bytes through every
//! element without a panic.

use std::net::Ipv6Addr;

use proptest::prelude::*;
use rclick_core::packet::PacketType;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::{checksum, EtherAddr, Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr};
use rclick_core::{Packet, Router, Timestamp};
use rclick_elements::ip6::route6::{mask6, Route6, RouteTable6};
use rclick_elements::testing::{config_errors, from_config, read};

// ------------------------------------------------------------ helpers

fn a6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// An IPv6 packet from `src` to `dst` with next header `nh` and `payload`.
fn ip6(src: &str, dst: &str, hlim: u8, nh: u8, payload: &[u8]) -> Vec<u8> {
    let r = Ipv6Repr {
        src: a6(src),
        dst: a6(dst),
        next_header: nh,
        payload_len: payload.len(),
        hop_limit: hlim,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    r.emit(&mut Ipv6Header::new_unchecked(&mut b[..]));
    b[HEADER_LEN..].copy_from_slice(payload);
    b
}

fn udp(n: usize) -> Vec<u8> {
    let mut u = vec![0x30, 0x39, 0x00, 0x35];
    u.extend_from_slice(&((n + 8) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..n).map(|i| i as u8));
    u
}

/// An ICMPv6 message `r` with its checksum, inside an IPv6 packet.
fn icmp6(src: &str, dst: &str, hlim: u8, r: &Icmpv6Repr) -> Vec<u8> {
    let mut m = vec![0u8; r.buffer_len()];
    let mut h = Icmpv6Header::new_unchecked(&mut m[..]);
    r.emit(&mut h);
    h.fill_checksum(a6(src), a6(dst));
    ip6(src, dst, hlim, PROTO_ICMPV6, &m)
}

fn ether(dst: [u8; 6], src: [u8; 6], payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x86, 0xdd]);
    f.extend_from_slice(payload);
    f
}

/// A packet with its network header on the IPv6 header at the start.
fn net(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, HEADER_LEN.min(bytes.len()));
    p
}

fn inject(r: &mut Router, elem: &str, port: usize, p: Packet) {
    let i = r.find_element(elem).unwrap_or_else(|| panic!("no {elem}"));
    r.inject_packet(i, port, p);
}

fn drain(r: &mut Router, q: &str) -> Vec<Packet> {
    let i = r.find_element(q).unwrap_or_else(|| panic!("no {q}"));
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        out.extend(b);
    }
    out
}

/// A task that always has work, so that running the driver fires the
/// timers due by now without the simulated clock jumping to the next one
/// (which an idle driver does).
const BUSY: &str = "InfiniteSource -> Discard;";

fn advance(r: &mut Router, secs: f64) {
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_secs_f64(secs));
    r.run_limited(2);
}

fn lookup(r: &mut Router, a: &str) -> String {
    r.read_handler("rt.lookup", Some(a)).unwrap()
}

fn hdr(p: &Packet) -> Ipv6Header<&[u8]> {
    Ipv6Header::new_checked(p.network_header().unwrap()).unwrap()
}

// ------------------------------------------------------------ header elements

#[test]
fn checkip6header_checks_trims_and_counts() {
    let mut r = from_config(
        "Idle -> ck :: CheckIP6Header(3ffe::ffff 3ffe::fffe, OFFSET 2) -> q0 :: Queue -> Idle;
         ck[1] -> q1 :: Queue -> Idle;",
    );
    let good = ip6("2001:db8::1", "2001:db8::2", 64, PROTO_UDP, &udp(4));
    let mut padded = vec![0xaa, 0xbb];
    padded.extend_from_slice(&good);
    padded.extend_from_slice(&[0; 6]);
    inject(&mut r, "ck", 0, Packet::from_slice(&padded));
    let out = drain(&mut r, "q0");
    assert_eq!(out.len(), 1);
    // Trimmed to the payload length, header marked at the offset.
    assert_eq!(out[0].len(), 2 + good.len());
    assert_eq!(out[0].network_offset(), Some(2));
    assert_eq!(hdr(&out[0]).dst(), a6("2001:db8::2"));

    let mut bad = Vec::new();
    for src in [
        "3ffe::ffff",
        "3ffe::fffe",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    ] {
        bad.push([&[0u8, 0][..], &ip6(src, "::1", 64, PROTO_UDP, &udp(1))].concat());
    }
    let mut v4 = [&[0u8, 0][..], &good].concat();
    v4[2] = 0x45;
    bad.push(v4);
    let mut long = [&[0u8, 0][..], &good].concat();
    long[2 + 5] += 1; // payload length one more than present
    bad.push(long);
    bad.push(vec![0, 0, 0x60, 0, 0, 0]);
    bad.push(vec![]);
    for b in &bad {
        inject(&mut r, "ck", 0, Packet::from_slice(b));
    }
    assert_eq!(drain(&mut r, "q1").len(), bad.len());
    assert_eq!(read(&mut r, "ck.drops"), bad.len().to_string());
    assert!(
        r.take_chatter()
            .iter()
            .filter(|l| l.contains("IP6 header check failed"))
            .count()
            == 1
    );
    assert!(config_errors("Idle -> CheckIP6Header(1.2.3.4) -> Idle;").contains("BADADDRS"));
}

#[test]
fn mark_get_set_address() {
    let mut r = from_config(
        "Idle -> m :: MarkIP6Header(4) -> g :: GetIP6Address(28) -> q :: Queue -> Idle;
         Idle -> s :: SetIP6Address(fe80::77) -> q2 :: Queue -> Idle;",
    );
    let pkt = [&[1u8, 2, 3, 4][..], &ip6("::1", "2001:db8::9", 64, 59, &[])].concat();
    inject(&mut r, "m", 0, Packet::from_slice(&pkt));
    // Too short for the address: the annotation stays.
    let mut short = Packet::from_slice(&pkt[..30]);
    short.set_dst_ip6_anno(a6("::5"));
    inject(&mut r, "g", 0, short);
    let v = drain(&mut r, "q");
    assert_eq!(v[0].network_offset(), Some(4));
    assert_eq!(v[0].dst_ip6_anno(), a6("2001:db8::9"));
    assert_eq!(v[1].dst_ip6_anno(), a6("::5"));
    inject(&mut r, "s", 0, Packet::from_slice(&pkt));
    assert_eq!(drain(&mut r, "q2")[0].dst_ip6_anno(), a6("fe80::77"));
    assert!(config_errors("Idle -> GetIP6Address -> Idle;").contains("OFFSET"));
    assert!(config_errors("Idle -> SetIP6Address(1.2.3.4) -> Idle;").contains("IPADDR"));
}

#[test]
fn decip6hlim_decrements_and_diverts_expired() {
    let mut r =
        from_config("Idle -> d :: DecIP6HLIM -> q0 :: Queue -> Idle; d[1] -> q1 :: Queue -> Idle;");
    for h in [64u8, 2, 1, 0] {
        inject(&mut r, "d", 0, net(&ip6("::1", "::2", h, 59, &[])));
    }
    // No network header: counted and dropped.
    inject(&mut r, "d", 0, Packet::from_slice(&[0x60; 10]));
    let ok = drain(&mut r, "q0");
    assert_eq!(
        ok.iter().map(|p| hdr(p).hop_limit()).collect::<Vec<_>>(),
        [63, 1]
    );
    let exp = drain(&mut r, "q1");
    assert_eq!(
        exp.iter().map(|p| hdr(p).hop_limit()).collect::<Vec<_>>(),
        [1, 0]
    );
    assert_eq!(read(&mut r, "d.drops"), "3");
}

#[test]
fn setip6dscp_keeps_ecn_and_flow_label() {
    let mut r = from_config("Idle -> d :: SetIP6DSCP(46) -> q :: Queue -> Idle;");
    let mut b = ip6("::1", "::2", 64, 59, &[]);
    {
        let mut h = Ipv6Header::new_unchecked(&mut b[..]);
        h.set_traffic_class(0x03);
        h.set_flow_label(0xabcde);
    }
    inject(&mut r, "d", 0, net(&b));
    r.write_handler("d.dscp", "10").unwrap();
    inject(&mut r, "d", 0, net(&b));
    inject(&mut r, "d", 0, Packet::from_slice(&b));
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 2);
    let (h0, h1) = (hdr(&v[0]), hdr(&v[1]));
    assert_eq!((h0.dscp(), h0.ecn(), h0.flow_label()), (46, 3, 0xabcde));
    assert_eq!((h1.dscp(), h1.ecn(), h1.flow_label()), (10, 3, 0xabcde));
    assert_eq!(read(&mut r, "d.dscp"), "10");
    assert_eq!(read(&mut r, "d.drops"), "1");
    assert!(r.write_handler("d.dscp", "64").is_err());
    assert!(config_errors("Idle -> SetIP6DSCP(64) -> Idle;").contains("out of range"));
}

#[test]
fn ip6print_formats_like_click() {
    let mut r =
        from_config("Idle -> p :: IP6Print(lbl, CONTENTS true, NBYTES 6) -> IP6Print -> Discard;");
    inject(
        &mut r,
        "p",
        0,
        net(&ip6("::1", "2001:db8::1:0:0:1", 7, 17, &[])),
    );
    inject(&mut r, "p", 0, Packet::from_slice(&[1, 2, 3]));
    let c = r.take_chatter();
    assert_eq!(
        c,
        [
            "lbl: ::0.0.0.1 -> 2001:db8::1:0:0:1 plen 0, next 17, hlim 7\n  60000000 0000",
            "::0.0.0.1 -> 2001:db8::1:0:0:1 plen 0, next 17, hlim 7",
            "lbl: no IPv6 header\n  010203",
            "no IPv6 header",
        ]
    );
}

// ------------------------------------------------------------ route tables

#[test]
fn lookupip6route_routes_and_sets_gateways() {
    let mut r = from_config(
        "rt :: LookupIP6Route(2001:db8::/32 0, 2001:db8:1::/48 fe80::1 1, ::/0 fe80::ff 2, 3ffe::1 0);
         Idle -> rt; rt[0] -> q0 :: Queue -> Idle; rt[1] -> q1 :: Queue -> Idle; rt[2] -> q2 :: Queue -> Idle;",
    );
    for (dst, q, gw) in [
        ("2001:db8::5", "q0", "2001:db8::5"),
        ("2001:db8:1::5", "q1", "fe80::1"),
        ("2600::1", "q2", "fe80::ff"),
        ("3ffe::1", "q0", "3ffe::1"),
        ("3ffe::2", "q2", "fe80::ff"),
    ] {
        let mut p = net(&ip6("::1", dst, 64, 59, &[]));
        p.set_dst_ip6_anno(a6(dst));
        inject(&mut r, "rt", 0, p);
        let v = drain(&mut r, q);
        assert_eq!(v.len(), 1, "{dst}");
        assert_eq!(v[0].dst_ip6_anno(), a6(gw), "{dst}");
    }
    assert_eq!(lookup(&mut r, "2001:db8:1::9"), "1 fe80::1");
    // Click's rules: add replaces, remove of a missing route succeeds.
    r.write_handler("rt.add", "2001:db8:1::/48 0").unwrap();
    assert_eq!(lookup(&mut r, "2001:db8:1::9"), "0");
    r.write_handler("rt.remove", "4000::/16").unwrap();
    r.write_handler("rt.remove", "::/0").unwrap();
    let mut p = net(&[]);
    p.set_dst_ip6_anno(a6("2600::1"));
    inject(&mut r, "rt", 0, p);
    assert_eq!(read(&mut r, "rt.drops"), "1");
    // ctrl is all or nothing.
    assert!(r
        .write_handler("rt.ctrl", "add 5::/64 0\nadd 6::/64 9")
        .is_err());
    assert_eq!(lookup(&mut r, "5::1"), "-1");
    assert!(
        config_errors("Idle -> rt :: LookupIP6Route(::/0 3) -> Discard;")
            .contains("need 4 or more output ports")
    );
    assert!(
        config_errors("Idle -> LookupIP6Route(3ffe::/ffff:0:ffff:: 0) -> Discard;")
            .contains("argument 1")
    );
}

#[test]
fn radixip6lookup_add_set_remove() {
    let mut r =
        from_config("Idle -> rt :: RadixIP6Lookup(2001:db8::/32 0) -> Discard; rt[1] -> Discard;");
    assert!(r.write_handler("rt.add", "2001:db8::/32 1").is_err());
    r.write_handler("rt.set", "2001:db8::/32 1").unwrap();
    assert_eq!(lookup(&mut r, "2001:db8::1"), "1");
    assert!(r.write_handler("rt.remove", "4000::/16").is_err());
    r.write_handler("rt.add", "2001:db8:8000::/33 fe80::1 0")
        .unwrap();
    assert_eq!(lookup(&mut r, "2001:db8:8000::1"), "0 fe80::1");
    r.write_handler("rt.flush", "").unwrap();
    assert_eq!(read(&mut r, "rt.table"), "");
}

/// The longest prefix containing `a`, by brute force.
fn brute(routes: &[Route6], a: u128) -> Option<Route6> {
    routes
        .iter()
        .filter(|r| a & mask6(r.len.into()) == r.addr)
        .max_by_key(|r| r.len)
        .copied()
}

fn arb_len() -> impl Strategy<Value = u8> {
    // Real tables' lengths, plus everything else now and then.
    prop_oneof![
        4 => prop::sample::select(vec![16u8, 20, 29, 32, 36, 40, 44, 48, 56, 64]),
        1 => 0u8..=128,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trie_matches_brute_force(
        seeds in prop::collection::vec((any::<u64>(), arb_len(), 0i32..4, any::<bool>()), 1..120),
        probes in prop::collection::vec(any::<u128>(), 50),
    ) {
        let mut t = RouteTable6::default();
        let mut routes: Vec<Route6> = Vec::new();
        // Prefixes share a few top bits so that they nest.
        for (s, len, port, remove) in seeds {
            let addr = ((0x2001_0db8u128 << 96) | ((s as u128) << 40)) & mask6(len.into());
            let r = Route6 { addr, len, gw: if port == 3 { 0xfe80 << 112 | 1 } else { 0 }, port };
            if remove && !routes.is_empty() {
                let victim = routes[s as usize % routes.len()];
                t.remove(&Route6 { port: -1, ..victim }).unwrap();
                routes.retain(|x| (x.addr, x.len) != (victim.addr, victim.len));
            } else {
                t.add(r, true).unwrap();
                routes.retain(|x| (x.addr, x.len) != (addr, len));
                routes.push(r);
            }
            prop_assert_eq!(t.len(), routes.len());
        }
        let near = routes.iter().flat_map(|r| [r.addr, r.addr | 1, r.addr.wrapping_sub(1), r.addr | (u128::MAX >> r.len.min(127))]);
        for a in probes.into_iter().chain(near) {
            let want = brute(&routes, a).map(|r| (r.port, r.gw));
            let h = t.lookup(a);
            let got = (h.port >= 0).then_some((h.port, h.gw));
            prop_assert_eq!(got, want, "address {:x}", a);
        }
    }
}

/// The trie against brute force with prefixes anywhere in the address
/// space (not only under 2001:db8::/32, as above) at the lengths where a
/// stride boundary is crossed or nearly so (/1, /15 to /20, /63 to /65,
/// /111 to /113, /124 to /128), with removals, probing addresses a few
/// bits away from the routes; removing every route leaves no node.
#[test]
fn trie_matches_brute_force_at_every_length() {
    const LENS: [u8; 23] = [
        0, 1, 2, 3, 5, 15, 16, 17, 18, 19, 20, 31, 63, 64, 65, 111, 112, 113, 124, 125, 126, 127,
        128,
    ];
    for seed in 1..40u64 {
        let mut rng = rclick_elements::testing::Rng(seed * 7919);
        let near = |rng: &mut rclick_elements::testing::Rng, a: u128, flips: u64| {
            let mut a = a;
            for _ in 0..rng.below(flips) {
                a ^= 1u128 << rng.below(128);
            }
            a
        };
        let base = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        let mut t = RouteTable6::default();
        let mut routes: Vec<Route6> = Vec::new();
        for _ in 0..200 {
            let len = LENS[rng.below(LENS.len() as u64) as usize];
            if rng.below(3) == 0 && !routes.is_empty() {
                let v = routes[rng.below(routes.len() as u64) as usize];
                t.remove(&Route6 { port: -1, ..v }).unwrap();
                routes.retain(|x| (x.addr, x.len) != (v.addr, v.len));
            } else {
                let addr = near(&mut rng, base, 3) & mask6(len.into());
                let r = Route6 {
                    addr,
                    len,
                    gw: 0,
                    port: rng.below(4) as i32,
                };
                t.add(r, true).unwrap();
                routes.retain(|x| (x.addr, x.len) != (addr, len));
                routes.push(r);
            }
            for _ in 0..10 {
                let a = near(&mut rng, base, 4);
                let want = brute(&routes, a).map_or(-1, |r| r.port);
                assert_eq!(t.lookup(a).port, want, "seed {seed}, address {a:x}");
            }
        }
        for v in routes {
            t.remove(&Route6 { port: -1, ..v }).unwrap();
        }
        assert_eq!((t.len(), t.trie().nodes()), (0, 0), "seed {seed}");
        assert_eq!(t.lookup(base).port, -1);
    }
    // Sixteen sibling prefixes with one next hop fill a whole node with
    // one leaf; the node may fold only into an entry their length can
    // name, or removing one of them later would miss it.
    for len in [20u8, 64, 128] {
        let mut t = RouteTable6::default();
        let top = 0x2001_0db8u128 << 96;
        let sib = |i: u128| top | (i << (128 - u32::from(len)));
        for i in 0..16 {
            t.add(
                Route6 {
                    addr: sib(i),
                    len,
                    gw: 0,
                    port: 1,
                },
                false,
            )
            .unwrap();
        }
        t.remove(&Route6 {
            addr: sib(5),
            len,
            gw: 0,
            port: -1,
        })
        .unwrap();
        assert_eq!(t.lookup(sib(5)).port, -1, "/{len}");
        assert_eq!(t.lookup(sib(6)).port, 1, "/{len}");
    }
}

#[test]
fn trie_holds_a_large_table() {
    // 200,000 prefixes, most /48 to /32, looked up at their own addresses.
    let mut rng = rclick_elements::testing::Rng(7);
    let mut t = RouteTable6::default();
    let lens = [32u8, 36, 40, 44, 48, 48, 48, 48, 29, 64];
    let mut added = Vec::new();
    while added.len() < 200_000 {
        let len = lens[rng.below(lens.len() as u64) as usize];
        let hi = 0x2000u128 | rng.below(0x400) as u128;
        let addr = ((hi << 112) | ((rng.next_u64() as u128) << 48)) & mask6(len.into());
        if t.add(
            Route6 {
                addr,
                len,
                gw: 0,
                port: (added.len() % 8) as i32,
            },
            false,
        )
        .is_ok()
        {
            added.push((addr, len));
        }
    }
    assert_eq!(t.len(), 200_000);
    let mem = t.trie().memory();
    println!(
        "200,000 prefixes: {} trie bytes, {} nodes",
        mem,
        t.trie().nodes()
    );
    assert!(mem < 256 << 20, "{mem} bytes");
    for &(addr, len) in added.iter().step_by(97) {
        assert!(t.lookup(addr).port >= 0);
        assert_eq!(t.get(addr, len).map(|r| r.len), Some(len));
    }
    // Lookups per second (informational; meaningful in a release build).
    let probes: Vec<u128> = (0..1_000_000)
        .map(|i| added[i % added.len()].0 | (rng.next_u64() as u128))
        .collect();
    let start = std::time::Instant::now();
    let mut hits = 0u64;
    for &a in &probes {
        hits += (t.lookup(a).port >= 0) as u64;
    }
    let dt = start.elapsed();
    println!(
        "{} lookups in {:?}: {:.1} M/s",
        probes.len(),
        dt,
        probes.len() as f64 / dt.as_secs_f64() / 1e6
    );
    assert_eq!(hits, probes.len() as u64);
}

// ------------------------------------------------------------ ICMP6Error

fn icmp6error(args: &str) -> Router {
    from_config(&format!(
        "Idle -> e :: ICMP6Error({args}) -> q :: Queue(1000) -> Idle; {BUSY}"
    ))
}

fn one_error(r: &mut Router, p: Packet) -> Option<Packet> {
    inject(r, "e", 0, p);
    let mut v = drain(r, "q");
    assert!(v.len() <= 1);
    v.pop()
}

#[test]
fn icmp6error_builds_rfc4443_messages() {
    let mut r = icmp6error("3ffe::1, 2, 0, MTU 1280");
    let big = ip6("2001:db8::7", "2001:db8::9", 64, PROTO_UDP, &udp(3000));
    let e = one_error(&mut r, net(&big)).unwrap();
    // At most the minimum MTU, the rest of the packet quoted.
    assert_eq!(e.len(), 1280);
    let h = hdr(&e);
    assert_eq!(
        (h.src(), h.dst(), h.hop_limit()),
        (a6("3ffe::1"), a6("2001:db8::7"), 255)
    );
    let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
    assert!(icmp.verify_checksum(h.src(), h.dst()));
    assert_eq!((icmp.msg_type(), icmp.mtu()), (2, 1280));
    assert_eq!(icmp.data(), &big[..1232]);
    assert_eq!(e.dst_ip6_anno(), a6("2001:db8::7"));

    let mut r = icmp6error("3ffe::1, 4, 0");
    let mut p = net(&ip6("2001:db8::7", "2001:db8::9", 64, 59, &[]));
    p.set_icmp_param_prob_anno(6);
    let e = one_error(&mut r, p).unwrap();
    let h = hdr(&e);
    let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
    assert_eq!((icmp.msg_type(), icmp.code(), icmp.pointer()), (4, 0, 6));

    // A redirect names the gateway and the destination.
    let mut r = icmp6error("fe80::1, 137, 0");
    let mut p = net(&ip6("2001:db8::7", "2001:db8::9", 64, 59, &[]));
    p.set_dst_ip6_anno(a6("fe80::99"));
    let e = one_error(&mut r, p).unwrap();
    let h = hdr(&e);
    let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
    assert!(icmp.verify_checksum(h.src(), h.dst()));
    assert_eq!(
        (icmp.msg_type(), icmp.target(), icmp.redirect_dst()),
        (137, a6("fe80::99"), a6("2001:db8::9"))
    );
}

#[test]
fn icmp6error_never_answers_what_rfc4443_forbids() {
    let mut r = icmp6error("3ffe::1, 3, 0");
    let err = Icmpv6Repr::TimeExceeded {
        code: 0,
        quoted: &[0; 48],
    };
    let echo = Icmpv6Repr::EchoRequest {
        ident: 1,
        seq: 2,
        data: b"x",
    };
    // An error message, directly or behind a hop-by-hop header.
    assert!(one_error(&mut r, net(&icmp6("2001:db8::7", "2001:db8::9", 64, &err))).is_none());
    let inner = icmp6("2001:db8::7", "2001:db8::9", 64, &err);
    let hbh = [
        &[PROTO_ICMPV6, 0, 1, 4, 0, 0, 0, 0][..],
        &inner[HEADER_LEN..],
    ]
    .concat();
    assert!(one_error(&mut r, net(&ip6("2001:db8::7", "2001:db8::9", 64, 0, &hbh))).is_none());
    // Bad sources, multicast destinations, link-level broadcasts.
    for (src, dst) in [
        ("::", "2001:db8::9"),
        ("ff02::1", "2001:db8::9"),
        ("::1", "2001:db8::9"),
        ("2001:db8::7", "ff02::1"),
    ] {
        assert!(
            one_error(&mut r, net(&ip6(src, dst, 64, 59, &[]))).is_none(),
            "{src} {dst}"
        );
    }
    let mut p = net(&ip6("2001:db8::7", "2001:db8::9", 64, 59, &[]));
    p.set_packet_type_anno(PacketType::Broadcast);
    assert!(one_error(&mut r, p).is_none());
    // No network header.
    assert!(one_error(&mut r, Packet::from_slice(&[0x60; 50])).is_none());
    // Informational messages are answered.
    assert!(one_error(&mut r, net(&icmp6("2001:db8::7", "2001:db8::9", 64, &echo))).is_some());
    // Packet too big may answer a multicast destination.
    let mut r = icmp6error("3ffe::1, 2, 0");
    assert!(one_error(&mut r, net(&ip6("2001:db8::7", "ff0e::1", 64, 59, &[]))).is_some());
}

#[test]
fn icmp6error_rate_limit() {
    let mut r = icmp6error("3ffe::1, 1, 0, RATE 10, BURST 5");
    let p = ip6("2001:db8::7", "2001:db8::9", 64, 59, &[]);
    let mut n = 0;
    for _ in 0..20 {
        n += one_error(&mut r, net(&p)).is_some() as usize;
    }
    assert_eq!(n, 5);
    advance(&mut r, 0.5);
    for _ in 0..20 {
        n += one_error(&mut r, net(&p)).is_some() as usize;
    }
    assert_eq!(n, 10);
    assert_eq!(read(&mut r, "e.rate_limited"), "30");
    assert!(config_errors("Idle -> ICMP6Error(::1, 128, 0) -> Idle;").contains("not an error"));
    assert!(config_errors("Idle -> ICMP6Error(::, 1, 0) -> Idle;").contains("not configured"));
}

// ------------------------------------------------------------ echo

#[test]
fn icmp6pingresponder_answers_echo_requests() {
    let mut r = from_config(
        "Idle -> p :: ICMP6PingResponder -> q0 :: Queue -> Idle; p[1] -> q1 :: Queue -> Idle;
         Idle -> pm :: ICMP6PingResponder(SRC 2001:db8::1) -> q2 :: Queue -> Idle;",
    );
    let echo = Icmpv6Repr::EchoRequest {
        ident: 77,
        seq: 5,
        data: b"hello",
    };
    let req = icmp6("2001:db8::7", "2001:db8::1", 64, &echo);
    inject(&mut r, "p", 0, net(&req));
    // Behind a destination options header.
    let inner = &req[HEADER_LEN..];
    let dopt = [&[PROTO_ICMPV6, 0, 1, 4, 0, 0, 0, 0][..], inner].concat();
    inject(
        &mut r,
        "p",
        0,
        net(&ip6("2001:db8::7", "2001:db8::1", 64, 60, &dopt)),
    );
    let v = drain(&mut r, "q0");
    assert_eq!(v.len(), 2);
    for p in &v {
        let h = hdr(p);
        assert_eq!(
            (h.src(), h.dst(), h.next_header()),
            (a6("2001:db8::1"), a6("2001:db8::7"), PROTO_ICMPV6)
        );
        let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
        assert!(icmp.verify_checksum(h.src(), h.dst()));
        assert_eq!(
            (icmp.msg_type(), icmp.ident(), icmp.seq(), icmp.data()),
            (129, 77, 5, &b"hello"[..])
        );
        assert_eq!(p.dst_ip6_anno(), a6("2001:db8::7"));
    }
    // Bad checksum, multicast without SRC, a reply, no header: output 1.
    let mut bad = req.clone();
    bad[HEADER_LEN + 2] ^= 0xff;
    let mcast = icmp6("2001:db8::7", "ff02::1", 64, &echo);
    let reply = icmp6(
        "2001:db8::7",
        "2001:db8::1",
        64,
        &Icmpv6Repr::EchoReply {
            ident: 1,
            seq: 1,
            data: &[],
        },
    );
    // From :: (no node to answer; the reply would go to ::).
    let unspec = icmp6("::", "2001:db8::1", 64, &echo);
    for b in [&bad, &mcast, &reply, &unspec] {
        inject(&mut r, "p", 0, net(b));
    }
    inject(&mut r, "p", 0, Packet::from_slice(&req));
    assert_eq!(drain(&mut r, "q1").len(), 5);
    inject(&mut r, "pm", 0, net(&mcast));
    let v = drain(&mut r, "q2");
    assert_eq!(hdr(&v[0]).src(), a6("2001:db8::1"));
    assert_eq!(read(&mut r, "p.replies"), "2");
}

// ------------------------------------------------------------ neighbour discovery

const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];
const MAC_X: [u8; 6] = [2, 0, 0, 0, 0, 0x99];

fn ns(src: &str, dst: &str, hlim: u8, target: &str, sll: Option<[u8; 6]>) -> Vec<u8> {
    let r = Icmpv6Repr::NeighborSolicit {
        target: a6(target),
        source_ll: sll.map(EtherAddr),
    };
    ether(
        [0x33, 0x33, 0xff, 0, 0, 1],
        MAC_X,
        &icmp6(src, dst, hlim, &r),
    )
}

fn na(src: &str, dst: &str, flags: u8, target: &str, tll: Option<[u8; 6]>) -> Vec<u8> {
    let r = Icmpv6Repr::NeighborAdvert {
        flags,
        target: a6(target),
        target_ll: tll.map(EtherAddr),
    };
    ether(MAC_A, MAC_X, &icmp6(src, dst, 255, &r))
}

#[test]
fn ip6ndadvertiser_validates_and_answers() {
    let mut r = from_config(
        "Idle -> nda :: IP6NDAdvertiser(fe80::a 2001:db8:a::/48 02:00:00:00:00:0a) -> q :: Queue -> Idle;",
    );
    inject(
        &mut r,
        "nda",
        0,
        Packet::from_slice(&ns(
            "fe80::99",
            "ff02::1:ff00:a",
            255,
            "fe80::a",
            Some(MAC_X),
        )),
    );
    inject(
        &mut r,
        "nda",
        0,
        Packet::from_slice(&ns(
            "fe80::99",
            "ff02::1:ff00:5",
            255,
            "2001:db8:a::5",
            Some(MAC_X),
        )),
    );
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 2);
    let f = v[0].data();
    assert_eq!((&f[..6], &f[6..12]), (&MAC_X[..], &MAC_A[..]));
    let h = Ipv6Header::new_checked(&f[14..]).unwrap();
    assert_eq!(
        (h.src(), h.dst(), h.hop_limit()),
        (a6("fe80::a"), a6("fe80::99"), 255)
    );
    let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
    assert!(icmp.verify_checksum(h.src(), h.dst()));
    match Icmpv6Repr::parse(&icmp).unwrap() {
        Icmpv6Repr::NeighborAdvert {
            flags,
            target,
            target_ll,
        } => {
            assert_eq!(
                (flags, target, target_ll),
                (0xc0, a6("fe80::a"), Some(EtherAddr(MAC_A)))
            );
        }
        o => panic!("{o:?}"),
    }

    // Duplicate address detection: answered to all-nodes, S clear.
    inject(
        &mut r,
        "nda",
        0,
        Packet::from_slice(&ns("::", "ff02::1:ff00:a", 255, "fe80::a", None)),
    );
    let v = drain(&mut r, "q");
    let h = Ipv6Header::new_checked(&v[0].data()[14..]).unwrap();
    assert_eq!(h.dst(), a6("ff02::1"));
    assert_eq!(&v[0].data()[..6], &[0x33, 0x33, 0, 0, 0, 1]);
    assert_eq!(
        Icmpv6Header::new_checked(h.payload()).unwrap().nd_flags() & 0x40,
        0
    );

    // Invalid: hop limit, checksum, DAD with a link-layer option or to a
    // unicast address, multicast target, option of length 0, truncated.
    let mut bad = vec![
        ns("fe80::99", "ff02::1:ff00:a", 64, "fe80::a", Some(MAC_X)),
        ns("::", "ff02::1:ff00:a", 255, "fe80::a", Some(MAC_X)),
        ns("::", "fe80::a", 255, "fe80::a", None),
        ns("fe80::99", "ff02::1:ff00:a", 255, "ff02::a", Some(MAC_X)),
        // A multicast source (RFC 4291 2.7): the answer would be an
        // advertisement with S set to a multicast address.
        ns("ff02::99", "ff02::1:ff00:a", 255, "fe80::a", Some(MAC_X)),
    ];
    let mut c = ns("fe80::99", "ff02::1:ff00:a", 255, "fe80::a", Some(MAC_X));
    c[14 + 42] ^= 1;
    bad.push(c);
    let mut z = ns("fe80::99", "ff02::1:ff00:a", 255, "fe80::a", Some(MAC_X));
    z[14 + 40 + 25] = 0; // option length 0 (checksum now wrong too)
    bad.push(z);
    let t = ns("fe80::99", "ff02::1:ff00:a", 255, "fe80::a", Some(MAC_X));
    bad.push(t[..70].to_vec());
    bad.push(vec![0; 10]);
    for b in &bad {
        inject(&mut r, "nda", 0, Packet::from_slice(b));
    }
    assert!(drain(&mut r, "q").is_empty());
    assert_eq!(read(&mut r, "nda.drops"), bad.len().to_string());
    assert_eq!(read(&mut r, "nda.responses"), "3");
}

fn solicitor() -> Router {
    from_config(&format!(
        "Idle -> nds :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a) -> q :: Queue(100) -> Idle;
         Idle -> [1]nds; nds[1] -> qs :: Queue(100) -> Idle; {BUSY}"
    ))
}

fn to(dst: &str) -> Packet {
    let mut p = net(&ip6("fe80::a", dst, 64, PROTO_UDP, &udp(2)));
    p.set_dst_ip6_anno(a6(dst));
    p
}

/// The neighbour solicitations in `v`: (ethernet dst, IPv6 dst, target).
fn solicitations(v: &[Packet]) -> Vec<([u8; 6], Ipv6Addr, Ipv6Addr)> {
    v.iter()
        .map(|p| {
            let f = p.data();
            let h = Ipv6Header::new_checked(&f[14..]).unwrap();
            let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
            assert_eq!(icmp.msg_type(), 135);
            assert!(icmp.verify_checksum(h.src(), h.dst()));
            assert_eq!(h.hop_limit(), 255);
            (f[..6].try_into().unwrap(), h.dst(), icmp.target())
        })
        .collect()
}

#[test]
fn ip6ndsolicitor_cache_states() {
    let mut r = solicitor();
    inject(&mut r, "nds", 0, to("fe80::b"));
    inject(&mut r, "nds", 0, to("fe80::b"));
    // One solicitation however many packets (RFC 4861 7.2.2); the newer
    // packet replaces the held one.
    let s = solicitations(&drain(&mut r, "qs"));
    assert_eq!(
        s,
        [(
            [0x33, 0x33, 0xff, 0, 0, 0xb],
            a6("ff02::1:ff00:b"),
            a6("fe80::b")
        )]
    );
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::b INCOMPLETE 00-00-00-00-00-00\n"
    );
    // Retransmitted each second, three in all, then given up.
    advance(&mut r, 1.0);
    advance(&mut r, 1.0);
    assert_eq!(drain(&mut r, "qs").len(), 2);
    advance(&mut r, 1.0);
    assert!(drain(&mut r, "qs").is_empty());
    assert_eq!(read(&mut r, "nds.table"), "");
    assert!(read(&mut r, "nds.stats").starts_with("2 packets killed\n3 ND"));

    // Resolved by a solicited advertisement: REACHABLE, the held packet sent.
    inject(&mut r, "nds", 0, to("fe80::b"));
    drain(&mut r, "qs");
    // An unsolicited advertisement with a bad checksum changes nothing.
    let mut badna = na("fe80::b", "fe80::a", 0x60, "fe80::b", Some(MAC_B));
    badna[14 + 42] ^= 1;
    inject(&mut r, "nds", 1, Packet::from_slice(&badna));
    assert!(drain(&mut r, "q").is_empty());
    assert_eq!(read(&mut r, "nds.drops"), "1");
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::b", "fe80::a", 0x60, "fe80::b", Some(MAC_B))),
    );
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1);
    assert_eq!(
        &v[0].data()[..14],
        &[&MAC_B[..], &MAC_A[..], &[0x86, 0xdd]].concat()[..]
    );
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::b REACHABLE 02-00-00-00-00-0B\n"
    );
    assert_eq!(read(&mut r, "nds.table"), "fe80::b 1 02-00-00-00-00-0B\n");

    // REACHABLE_TIME later: STALE, still used; first use makes it DELAY;
    // 5 s later PROBE with unicast solicitations; unanswered, removed.
    advance(&mut r, 31.0);
    assert!(read(&mut r, "nds.neighbors").contains("STALE"));
    inject(&mut r, "nds", 0, to("fe80::b"));
    assert_eq!(drain(&mut r, "q").len(), 1);
    assert!(read(&mut r, "nds.neighbors").contains("DELAY"));
    advance(&mut r, 5.0);
    assert!(read(&mut r, "nds.neighbors").contains("PROBE"));
    let s = solicitations(&drain(&mut r, "qs"));
    assert_eq!(s, [(MAC_B, a6("fe80::b"), a6("fe80::b"))]);
    // A solicited answer during PROBE: REACHABLE again.
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::b", "fe80::a", 0x60, "fe80::b", Some(MAC_B))),
    );
    assert!(read(&mut r, "nds.neighbors").contains("REACHABLE"));
    advance(&mut r, 31.0);
    inject(&mut r, "nds", 0, to("fe80::b"));
    advance(&mut r, 5.0);
    advance(&mut r, 1.0);
    advance(&mut r, 1.0);
    assert_eq!(solicitations(&drain(&mut r, "qs")).len(), 3);
    advance(&mut r, 1.0);
    assert_eq!(read(&mut r, "nds.neighbors"), "");

    // Override rules: O clear with another address only makes it STALE.
    inject(&mut r, "nds", 0, to("fe80::c"));
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::c", "fe80::a", 0x60, "fe80::c", Some(MAC_B))),
    );
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::c", "fe80::a", 0x40, "fe80::c", Some(MAC_X))),
    );
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::c STALE 02-00-00-00-00-0B\n"
    );
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::c", "fe80::a", 0x60, "fe80::c", Some(MAC_X))),
    );
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::c REACHABLE 02-00-00-00-00-99\n"
    );
    // An advertisement to a multicast address with S set is invalid.
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::c", "ff02::1", 0x60, "fe80::c", Some(MAC_B))),
    );
    assert_eq!(read(&mut r, "nds.drops"), "2");

    // Multicast destinations need no discovery; :: is dropped.
    inject(&mut r, "nds", 0, to("ff02::1:2"));
    inject(&mut r, "nds", 0, to("::"));
    let v = drain(&mut r, "q");
    assert_eq!(&v.last().unwrap().data()[..6], &[0x33, 0x33, 0, 1, 0, 2]);
    assert_eq!(read(&mut r, "nds.drops"), "3");
}

#[test]
fn ip6ndsolicitor_learns_from_solicitations() {
    let mut r = solicitor();
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&ns(
            "fe80::99",
            "ff02::1:ff00:a",
            255,
            "fe80::a",
            Some(MAC_X),
        )),
    );
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::99 STALE 02-00-00-00-00-99\n"
    );
    inject(&mut r, "nds", 0, to("fe80::99"));
    assert_eq!(&drain(&mut r, "q")[0].data()[..6], &MAC_X);
    assert!(drain(&mut r, "qs").is_empty());
    assert!(read(&mut r, "nds.neighbors").contains("DELAY"));
}

/// Very long timers (a TIMEOUT meaning "never forget", a long
/// REACHABLE_TIME) saturate instead of overflowing the due times, which
/// panicked (debug) or wrapped to the past and expired the entry at once
/// (release).
#[test]
fn ip6ndsolicitor_very_long_timers() {
    let mut r = from_config(&format!(
        "Idle -> nds :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a,
                                       TIMEOUT 10000000000, REACHABLE_TIME 10000000000)
           -> q :: Queue(100) -> Idle;
         Idle -> [1]nds; nds[1] -> qs :: Queue(100) -> Idle; {BUSY}"
    ));
    // Learnt STALE from a solicitation, and REACHABLE from an answer.
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&ns(
            "fe80::99",
            "ff02::1:ff00:a",
            255,
            "fe80::a",
            Some(MAC_X),
        )),
    );
    inject(&mut r, "nds", 0, to("fe80::b"));
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::b", "fe80::a", 0x60, "fe80::b", Some(MAC_B))),
    );
    advance(&mut r, 1000.0);
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::b REACHABLE 02-00-00-00-00-0B\nfe80::99 STALE 02-00-00-00-00-99\n"
    );
}

/// Two routers on one simulated link, each with a solicitor and an
/// advertiser: A's packets to B resolve B by neighbour discovery (B
/// answers, and learns A from A's solicitation), B's packets to A go out
/// at once, and after B's delay a unicast probe to A is answered.
#[test]
fn two_routers_discover_each_other() {
    let mut r = from_config(&format!(
        "// Router A: fe80::a, 02:00:00:00:00:0a
         ndsA :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a);
         ndaA :: IP6NDAdvertiser(fe80::a 02:00:00:00:00:0a);
         cA :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd, -);
         // Router B: fe80::b, 02:00:00:00:00:0b
         ndsB :: IP6NDSolicitor(fe80::b, 02:00:00:00:00:0b);
         ndaB :: IP6NDAdvertiser(fe80::b 02:00:00:00:00:0b);
         cB :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd, -);
         // The link: what one sends, the other receives.
         ndsA -> cB; ndaA -> cB;
         ndsB -> cA; ndaB -> cA;
         cA[0] -> ndaA; cA[1] -> [1]ndsA; cA[2] -> Strip(14) -> CheckIP6Header -> inA :: Counter -> Discard; cA[3] -> Discard;
         cB[0] -> t :: Tee -> ndaB; t[1] -> [1]ndsB; cB[1] -> [1]ndsB; cB[2] -> Strip(14) -> CheckIP6Header -> inB :: Counter -> Discard; cB[3] -> Discard;
         srcA :: Idle -> ndsA; srcB :: Idle -> ndsB; {BUSY}"
    ));
    for _ in 0..3 {
        let mut p = net(&ip6("fe80::a", "fe80::b", 64, PROTO_UDP, &udp(4)));
        p.set_dst_ip6_anno(a6("fe80::b"));
        inject(&mut r, "ndsA", 0, p);
    }
    assert_eq!(read(&mut r, "inB.count"), "3");
    assert_eq!(read(&mut r, "ndsA.table"), "fe80::b 1 02-00-00-00-00-0B\n");
    assert_eq!(
        read(&mut r, "ndsB.neighbors"),
        "fe80::a STALE 02-00-00-00-00-0A\n"
    );
    for _ in 0..2 {
        let mut p = net(&ip6("fe80::b", "fe80::a", 64, PROTO_UDP, &udp(4)));
        p.set_dst_ip6_anno(a6("fe80::a"));
        inject(&mut r, "ndsB", 0, p);
    }
    assert_eq!(read(&mut r, "inA.count"), "2");
    assert!(read(&mut r, "ndsB.stats").ends_with("0 ND Solicitation Message sent\n"));
    advance(&mut r, 5.0);
    // B probed A by unicast; A answered; B's entry is confirmed.
    assert!(read(&mut r, "ndsB.stats").ends_with("1 ND Solicitation Message sent\n"));
    assert_eq!(
        read(&mut r, "ndsB.neighbors"),
        "fe80::a REACHABLE 02-00-00-00-00-0A\n"
    );
    assert_eq!(read(&mut r, "ndaA.responses"), "1");
    assert_eq!(read(&mut r, "ndaB.responses"), "1");
}

// ------------------------------------------------------------ malformed input

/// Arbitrary bytes (often shaped like IPv6, ICMPv6 and ND) through every
/// IPv6 element: no panic, and every packet is accounted for.
#[test]
fn arbitrary_bytes_never_panic() {
    let mut r = from_config(
        "Idle -> ck :: CheckIP6Header -> IP6Print(x, CONTENTS true) -> GetIP6Address(24)
           -> rt :: LookupIP6Route(::/1 0, 8000::/1 1);
         ck[1] -> bad :: Counter -> Discard;
         rt[0] -> d :: DecIP6HLIM -> SetIP6DSCP(3) -> pr :: ICMP6PingResponder -> out :: Counter -> Discard;
         pr[1] -> e2 :: ICMP6Error(3ffe::1, 1, 0) -> Discard;
         rt[1] -> MarkIP6Header -> e :: ICMP6Error(3ffe::1, 4, 0, RATE 0) -> Discard;
         d[1] -> Discard;
         Idle -> nda :: IP6NDAdvertiser(fe80::a ::/0 02:00:00:00:00:0a) -> Discard;
         Idle -> nds :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a) -> Discard; Idle -> [1]nds;
         Idle -> cl :: IP6Classifier(tcp port 80, icmp6 type 128 or frag, -) -> Discard;
         cl[1] -> Discard; cl[2] -> cnt :: Counter -> Discard;",
    );
    let mut rng = rclick_elements::testing::Rng(99);
    let shapes: Vec<Vec<u8>> = vec![
        ip6("2001:db8::7", "2001:db8::9", 64, PROTO_UDP, &udp(10)),
        icmp6(
            "fe80::9",
            "ff02::1:ff00:a",
            255,
            &Icmpv6Repr::NeighborSolicit {
                target: a6("fe80::a"),
                source_ll: Some(EtherAddr(MAC_X)),
            },
        ),
        icmp6(
            "2001:db8::7",
            "2001:db8::9",
            64,
            &Icmpv6Repr::EchoRequest {
                ident: 1,
                seq: 1,
                data: b"abc",
            },
        ),
    ];
    let n = 3000;
    for i in 0..n {
        let mut b = shapes[i % shapes.len()].clone();
        // Corrupt a few bytes, and cut at a random length.
        for _ in 0..rng.below(4) {
            let at = rng.below(b.len() as u64) as usize;
            b[at] = rng.next_u64() as u8;
        }
        b.truncate(rng.below(b.len() as u64 + 1) as usize);
        inject(&mut r, "ck", 0, Packet::from_slice(&b));
        inject(&mut r, "cl", 0, net(&b));
        let f = ether(MAC_A, MAC_X, &b);
        inject(&mut r, "nda", 0, Packet::from_slice(&f));
        inject(&mut r, "nds", 1, Packet::from_slice(&f));
        let mut p = Packet::from_slice(&b);
        p.set_dst_ip6_anno(a6("fe80::b"));
        inject(&mut r, "nds", 0, p);
    }
    let good: u64 = n as u64 - read(&mut r, "bad.count").parse::<u64>().unwrap();
    assert_eq!(read(&mut r, "ck.drops"), read(&mut r, "bad.count"));
    assert!(good > 0);
    // The advertiser answers every valid solicitation (it owns ::/0).
    let nda: u64 = read(&mut r, "nda.drops").parse::<u64>().unwrap()
        + read(&mut r, "nda.responses").parse::<u64>().unwrap();
    assert_eq!(nda, n as u64);
    assert!(read(&mut r, "cnt.count").parse::<u64>().unwrap() > 0);
    r.take_chatter();
}

// ------------------------------------------------------------ router advertisements

fn rs(src: &str, sll: Option<[u8; 6]>, hlim: u8) -> Vec<u8> {
    let r = Icmpv6Repr::RouterSolicit {
        source_ll: sll.map(EtherAddr),
    };
    ether(
        [0x33, 0x33, 0, 0, 0, 2],
        MAC_X,
        &icmp6(src, "ff02::2", hlim, &r),
    )
}

/// A very long INTERVAL (unsolicited advertisements hardly ever) makes
/// the next one due at the end of time instead of overflowing after the
/// three initial advertisements (a panic in debug builds; in release a due
/// time in the past, so that advertisements went out on every timer run).
#[test]
fn ip6routeradvertiser_very_long_interval() {
    let mut r = from_config(&format!(
        "Idle -> ra :: IP6RouterAdvertiser(fe80::1, 02:00:00:00:00:01, 2001:db8:1::/64,
                                           INTERVAL 10000000000)
           -> q :: Queue(100) -> Idle; {BUSY}"
    ));
    r.run_limited(2);
    for _ in 0..4 {
        advance(&mut r, 16.0);
    }
    // At 0, 16 and 32 s (MAX_INITIAL_RTR_ADVERT_INTERVAL), then no more.
    assert_eq!(drain(&mut r, "q").len(), 3);
    assert_eq!(read(&mut r, "ra.sent"), "3");
    // Solicitations are still answered.
    inject(
        &mut r,
        "ra",
        0,
        Packet::from_slice(&rs("fe80::9", Some(MAC_X), 255)),
    );
    assert_eq!(drain(&mut r, "q").len(), 1);
}

#[test]
fn ip6routeradvertiser_advertises_prefixes() {
    let mut r = from_config(&format!(
        "Idle -> ra :: IP6RouterAdvertiser(fe80::1, 02:00:00:00:00:01, 2001:db8:1::/64 2001:db8:2::/64,
                                           INTERVAL 30, LIFETIME 900, MTU 1400, OTHER true)
           -> q :: Queue(100) -> Idle; {BUSY}"
    ));
    r.run_limited(2);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1, "the first advertisement goes out at once");
    let f = v[0].data();
    assert_eq!(&f[..6], &[0x33, 0x33, 0, 0, 0, 1]);
    let h = Ipv6Header::new_checked(&f[14..]).unwrap();
    assert_eq!(
        (h.src(), h.dst(), h.hop_limit()),
        (a6("fe80::1"), a6("ff02::1"), 255)
    );
    let icmp = Icmpv6Header::new_checked(h.payload()).unwrap();
    assert!(icmp.verify_checksum(h.src(), h.dst()));
    assert_eq!(
        (
            icmp.msg_type(),
            icmp.router_lifetime(),
            icmp.cur_hop_limit(),
            icmp.nd_flags()
        ),
        (134, 900, 64, 0x40)
    );
    let opts: Vec<_> = icmp.ndisc_options().map(|o| o.unwrap()).collect();
    assert_eq!(
        opts[0],
        rclick_core::wire::NdiscOption::SourceLinkAddr(EtherAddr([2, 0, 0, 0, 0, 1]))
    );
    assert_eq!(opts[1], rclick_core::wire::NdiscOption::Mtu(1400));
    let prefixes: Vec<_> = opts[2..]
        .iter()
        .map(|o| match o {
            rclick_core::wire::NdiscOption::PrefixInfo(p) => {
                assert!(p.on_link && p.autonomous);
                assert_eq!(
                    (p.valid_lifetime, p.preferred_lifetime),
                    (2_592_000, 604_800)
                );
                (p.prefix, p.prefix_len)
            }
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(
        prefixes,
        [(a6("2001:db8:1::"), 64), (a6("2001:db8:2::"), 64)]
    );

    // The initial advertisements come at most 16 s apart, then INTERVAL.
    advance(&mut r, 15.0);
    assert!(drain(&mut r, "q").is_empty());
    advance(&mut r, 1.0);
    assert_eq!(drain(&mut r, "q").len(), 1);
    advance(&mut r, 16.0);
    assert_eq!(drain(&mut r, "q").len(), 1);
    advance(&mut r, 16.0);
    assert!(drain(&mut r, "q").is_empty());
    advance(&mut r, 14.0);
    assert_eq!(drain(&mut r, "q").len(), 1);

    // A solicitation is answered at once, then no sooner than 3 s after
    // the last advertisement.
    advance(&mut r, 5.0);
    inject(
        &mut r,
        "ra",
        0,
        Packet::from_slice(&rs("fe80::99", Some(MAC_X), 255)),
    );
    assert_eq!(drain(&mut r, "q").len(), 1);
    inject(&mut r, "ra", 0, Packet::from_slice(&rs("::", None, 255)));
    assert!(drain(&mut r, "q").is_empty());
    advance(&mut r, 3.0);
    assert_eq!(drain(&mut r, "q").len(), 1);
    // Invalid: hop limit, a link-layer option from ::, not a solicitation.
    for b in [
        rs("fe80::99", None, 64),
        rs("::", Some(MAC_X), 255),
        ns("fe80::99", "ff02::1:ff00:1", 255, "fe80::1", None),
    ] {
        inject(&mut r, "ra", 0, Packet::from_slice(&b));
    }
    advance(&mut r, 3.0);
    assert!(drain(&mut r, "q").is_empty());
    assert_eq!(read(&mut r, "ra.drops"), "3");
    assert_eq!(read(&mut r, "ra.solicitations"), "2");
    assert_eq!(read(&mut r, "ra.sent"), "6");
    assert!(config_errors(
        "Idle -> IP6RouterAdvertiser(2001:db8::1, 0:1:2:3:4:5, 2001:db8::/64) -> Idle;"
    )
    .contains("link-local"));
}

// ------------------------------------------------------------ IP6Classifier, IP6Filter

fn tcp(sport: u16, dport: u16, flags: u8) -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[12] = 0x50;
    t[13] = flags;
    t[14..16].copy_from_slice(&1000u16.to_be_bytes());
    t
}

/// A packet behind a hop-by-hop header and a destination options header.
fn with_ext(src: &str, dst: &str, nh: u8, upper: &[u8]) -> Vec<u8> {
    let mut p = vec![60, 0, 1, 4, 0, 0, 0, 0];
    p.extend_from_slice(&[nh, 0, 1, 4, 0, 0, 0, 0]);
    p.extend_from_slice(upper);
    ip6(src, dst, 64, 0, &p)
}

fn fragment(src: &str, dst: &str, nh: u8, offset: u16, upper: &[u8]) -> Vec<u8> {
    let mut p = vec![nh, 0];
    p.extend_from_slice(&((offset << 3) | 1).to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 7]);
    p.extend_from_slice(upper);
    ip6(src, dst, 64, 44, &p)
}

fn classify_all(conf: &str, n: usize, packets: &[Vec<u8>]) -> Vec<Option<usize>> {
    let mut outs = String::new();
    for i in 0..n {
        outs.push_str(&format!("c[{i}] -> q{i} :: Queue(1000) -> Idle;\n"));
    }
    let mut r = from_config(&format!("Idle -> c :: {conf};\n{outs}"));
    packets
        .iter()
        .map(|b| {
            inject(&mut r, "c", 0, net(b));
            let got: Vec<usize> = (0..n)
                .filter(|i| !drain(&mut r, &format!("q{i}")).is_empty())
                .collect();
            assert!(got.len() <= 1);
            got.first().copied()
        })
        .collect()
}

#[test]
fn ip6classifier_primitives() {
    let echo = Icmpv6Repr::EchoRequest {
        ident: 1,
        seq: 1,
        data: b"x",
    };
    let ns_msg = Icmpv6Repr::NeighborSolicit {
        target: a6("fe80::1"),
        source_ll: None,
    };
    let mut tc = ip6("2001:db8::1", "2001:db8:9::9", 1, 59, &[]);
    Ipv6Header::new_unchecked(&mut tc[..]).set_traffic_class(46 << 2 | 1);
    Ipv6Header::new_unchecked(&mut tc[..]).set_flow_label(0x12345);
    let packets = vec![
        ip6(
            "2001:db8::1",
            "2600::1",
            64,
            PROTO_TCP,
            &tcp(1234, 80, 0x02),
        ),
        ip6("2600::5", "2001:db8::1", 64, PROTO_UDP, &udp(4)),
        icmp6("2001:db8::1", "2600::1", 64, &echo),
        icmp6("fe80::2", "ff02::1:ff00:1", 255, &ns_msg),
        with_ext("2600::5", "2600::6", PROTO_TCP, &tcp(443, 5000, 0x10)),
        fragment("2600::5", "2600::6", PROTO_TCP, 0, &tcp(22, 6000, 0x10)),
        fragment("2600::5", "2600::6", PROTO_TCP, 100, &tcp(22, 6000, 0x10)),
        tc,
        ip6("2600::5", "2600::6", 64, PROTO_TCP, &tcp(80, 80, 0x10))[..42].to_vec(),
    ];
    let cases: &[(&str, &[Option<usize>])] = &[
        (
            "tcp",
            &[
                Some(0),
                None,
                None,
                None,
                Some(0),
                Some(0),
                None,
                None,
                Some(0),
            ],
        ),
        (
            "tcp dst port 80",
            &[Some(0), None, None, None, None, None, None, None, None],
        ),
        (
            "port 443 or 22",
            &[None, None, None, None, Some(0), Some(0), None, None, None],
        ),
        (
            "src net 2001:db8::/32",
            &[
                Some(0),
                None,
                Some(0),
                None,
                None,
                None,
                None,
                Some(0),
                None,
            ],
        ),
        (
            "dst host 2001:db8::1",
            &[None, Some(0), None, None, None, None, None, None, None],
        ),
        (
            "2001:db8::1",
            &[
                Some(0),
                Some(0),
                Some(0),
                None,
                None,
                None,
                None,
                Some(0),
                None,
            ],
        ),
        (
            "icmp6 type echo-request",
            &[None, None, Some(0), None, None, None, None, None, None],
        ),
        (
            "icmp6 type neighbor-solicit and hlim 255",
            &[None, None, None, Some(0), None, None, None, None, None],
        ),
        (
            "ip6 nxt 0",
            &[None, None, None, None, Some(0), None, None, None, None],
        ),
        // A later fragment names its protocol, though it carries no header.
        (
            "ip6 proto tcp and not ip6 nxt tcp",
            &[
                None,
                None,
                None,
                None,
                Some(0),
                Some(0),
                Some(0),
                None,
                None,
            ],
        ),
        (
            "frag",
            &[None, None, None, None, None, Some(0), Some(0), None, None],
        ),
        (
            "hlim < 2",
            &[None, None, None, None, None, None, None, Some(0), None],
        ),
        (
            "dscp 46 && ecn 1 && ip6 flow 0x12345",
            &[None, None, None, None, None, None, None, Some(0), None],
        ),
        (
            "tcp opt syn",
            &[Some(0), None, None, None, None, None, None, None, None],
        ),
        (
            "tcp win >= 1000 and src port < 1024",
            &[None, None, None, None, Some(0), Some(0), None, None, None],
        ),
        (
            "port != 80",
            &[
                Some(0),
                Some(0),
                None,
                None,
                Some(0),
                Some(0),
                None,
                None,
                None,
            ],
        ),
        (
            "not port 80",
            &[
                None,
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                None,
            ],
        ),
        ("-", &[Some(0); 9]),
    ];
    for (pat, want) in cases {
        let got = classify_all(&format!("IP6Classifier({pat})"), 1, &packets);
        assert_eq!(&got[..], *want, "pattern {pat}");
    }
    // Several outputs: the first match wins; IP6Filter's actions.
    let got = classify_all("IP6Classifier(icmp6, tcp, -)", 3, &packets);
    assert_eq!(
        got,
        [
            Some(1),
            Some(2),
            Some(0),
            Some(0),
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            Some(1)
        ]
    );
    let got = classify_all(
        "IP6Filter(deny src net 2600::/16 and tcp, 1 udp, allow all)",
        2,
        &packets,
    );
    assert_eq!(
        got,
        [
            Some(0),
            Some(1),
            Some(0),
            Some(0),
            None,
            None,
            Some(0),
            Some(0),
            None
        ]
    );
    for bad in [
        "IP6Classifier(port 99999)",
        "IP6Classifier(udp opt syn)",
        "IP6Classifier(host 2001:db8::/32)",
        "IP6Classifier(tcp and)",
        "IP6Filter(5 tcp)",
    ] {
        let e = config_errors(&format!("Idle -> {bad} -> Discard;"));
        assert!(e.contains("pattern 0"), "{bad}: {e}");
    }
}

/// A bare address after a primitive of another type is a host or net
/// test that keeps only the previous primitive's src/dst, as in IPFilter
/// (Click 2.1's IPFilter: `tcp or 1.2.3.4`, `tcp host A or B`, `dst port
/// 80 or 1.2.3.4`); it used to inherit the protocol and type as well, so
/// these were refused or tested the protocol.
#[test]
fn ip6classifier_bare_address_after_other_primitives() {
    let echo = Icmpv6Repr::EchoRequest {
        ident: 1,
        seq: 1,
        data: b"x",
    };
    let packets = vec![
        ip6(
            "2001:db8::1",
            "2600::1",
            64,
            PROTO_TCP,
            &tcp(1234, 80, 0x02),
        ),
        ip6("2600::5", "2001:db8::1", 64, PROTO_UDP, &udp(4)),
        icmp6("2001:db8::1", "2600::1", 64, &echo),
        ip6("2600::7", "2600::8", 64, 59, &[]),
    ];
    let (s, n) = (Some(0), None);
    for (pat, want) in [
        ("udp or 2600::1", [s, s, s, n]),
        ("tcp host 2600::5 or 2001:db8::1", [s, s, s, n]),
        ("dst port 80 or 2600::/16", [s, n, s, s]),
        ("icmp6 type 128 or src 2600::7", [n, n, s, s]),
    ] {
        let got = classify_all(&format!("IP6Classifier({pat})"), 1, &packets);
        assert_eq!(got, want, "pattern {pat}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The compiled classifier agrees with the patterns' direct reading on
    /// arbitrary (often damaged) packets.
    #[test]
    fn ip6classifier_compiled_matches_reference(
        picks in prop::collection::vec(0usize..12, 1..8),
        cuts in prop::collection::vec((0usize..4, any::<u8>(), 0usize..120), 1..40),
    ) {
        use rclick_elements::ip::ipfilter_compile::{reference_classify, CompileOptions, Compiled};
        use rclick_elements::ip6::ip6filter_compile::{ip6_headers, parse_classifier6, SYN_LEN};
        const PATS: [&str; 12] = [
            "tcp dst port 80", "udp", "icmp6 type echo-request", "src net 2001:db8::/32",
            "port != 22", "hlim < 10 or frag", "ip6 nxt 0 and tcp opt syn", "not dst host 2600::6",
            "dscp > 3", "icmp6 code 0 && plen > 10", "tcp win 1000", "ip6 proto 59",
        ];
        let pats: Vec<String> = picks.iter().map(|&i| PATS[i].to_string()).collect();
        let rules = parse_classifier6(&pats, None).unwrap();
        let prog = Compiled::new(&rules, CompileOptions::default());
        let shapes = [
            ip6("2001:db8::1", "2600::1", 64, PROTO_TCP, &tcp(1234, 80, 0x02)),
            with_ext("2600::5", "2600::6", PROTO_TCP, &tcp(443, 5000, 0x10)),
            fragment("2600::5", "2600::6", PROTO_UDP, 0, &udp(3)),
            icmp6("2001:db8::1", "2600::1", 9, &Icmpv6Repr::EchoRequest { ident: 1, seq: 1, data: b"xy" }),
        ];
        for (shape, byte, at) in cuts {
            let mut b = shapes[shape].clone();
            let at = at % b.len();
            b[at] = byte;
            b.truncate((at + byte as usize).min(b.len()));
            let p = net(&b);
            let mut buf = [0u8; SYN_LEN];
            let (ip, tp) = ip6_headers(&p, &mut buf);
            prop_assert_eq!(prog.classify(ip, tp), reference_classify(&rules, ip, tp));
        }
    }
}

#[test]
fn ip6ndsolicitor_hot_swap_keeps_the_cache() {
    let conf = format!(
        "Idle -> nds :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a) -> q :: Queue(100) -> Idle;
         Idle -> [1]nds; nds[1] -> qs :: Queue(100) -> Idle; {BUSY}"
    );
    let mut r = rclick_elements::testing::from_config_with(
        &conf,
        &rclick_core::RouterOptions {
            simtime: Some(Timestamp::from_secs_f64(1000.0)),
            capture_chatter: true,
            hotswap: true,
            ..Default::default()
        },
    );
    inject(&mut r, "nds", 0, to("fe80::b"));
    inject(&mut r, "nds", 0, to("fe80::c"));
    inject(
        &mut r,
        "nds",
        1,
        Packet::from_slice(&na("fe80::b", "fe80::a", 0x60, "fe80::b", Some(MAC_B))),
    );
    r.hotswap(&conf).unwrap();
    assert_eq!(
        read(&mut r, "nds.neighbors"),
        "fe80::b REACHABLE 02-00-00-00-00-0B\nfe80::c INCOMPLETE 00-00-00-00-00-00\n"
    );
    // The incomplete entry's retransmissions go on after the swap.
    drain(&mut r, "qs");
    advance(&mut r, 1.0);
    assert_eq!(solicitations(&drain(&mut r, "qs")).len(), 1);
}

#[test]
fn addressinfo_names_in_ipv6_arguments() {
    let mut r = from_config(
        "AddressInfo(r0 2001:db8:a::1/64 02:00:00:00:00:0a, peer fe80::99);
         Idle -> ck :: CheckIP6Header(peer) -> Discard;
         Idle -> rt :: LookupIP6Route(r0:ip6net 0, peer 1) -> Discard; rt[1] -> Discard;
         Idle -> nds :: IP6NDSolicitor(r0, r0) -> Discard; Idle -> [1]nds;
         Idle -> nda :: IP6NDAdvertiser(r0:ip6 r0:eth) -> q :: Queue -> Idle;
         Idle -> s :: SetIP6Address(r0:ip6) -> Discard;",
    );
    assert_eq!(
        read(&mut r, "rt.table"),
        "# Active routes\n2001:db8:a::/64\t::\t0\nfe80::99/128\t::\t1\n"
    );
    inject(&mut r, "ck", 0, net(&ip6("fe80::99", "::1", 64, 59, &[])));
    assert_eq!(read(&mut r, "ck.drops"), "1");
    inject(
        &mut r,
        "nda",
        0,
        Packet::from_slice(&ns(
            "fe80::5",
            "ff02::1:ff00:1",
            255,
            "2001:db8:a::1",
            Some(MAC_X),
        )),
    );
    let v = drain(&mut r, "q");
    assert_eq!(&v[0].data()[6..12], &MAC_A);
    assert!(config_errors("Idle -> SetIP6Address(nobody) -> Discard;").contains("IPADDR"));
}

#[test]
fn ip6mirror_and_ip6encap() {
    let mut r = from_config(
        "Idle -> m :: IP6Mirror -> q :: Queue -> Idle;
         Idle -> e :: IP6Encap(udp, 2001:db8::1, DST_ANNO, HLIM 7, CLASS 0xb8) -> qe :: Queue -> Idle;",
    );
    inject(
        &mut r,
        "m",
        0,
        net(&ip6("2001:db8::1", "2600::2", 64, PROTO_UDP, &udp(2))),
    );
    inject(&mut r, "m", 0, Packet::from_slice(&[1, 2, 3]));
    let v = drain(&mut r, "q");
    let h = hdr(&v[0]);
    assert_eq!((h.src(), h.dst()), (a6("2600::2"), a6("2001:db8::1")));
    assert_eq!(&h.payload()[..4], &[0x00, 0x35, 0x30, 0x39]);
    assert_eq!(v[1].data(), &[1, 2, 3]);
    assert_eq!(read(&mut r, "m.drops"), "1");

    let mut p = Packet::from_slice(&udp(4));
    p.set_dst_ip6_anno(a6("2600::9"));
    inject(&mut r, "e", 0, p);
    inject(&mut r, "e", 0, Packet::from_slice(&udp(1)));
    let v = drain(&mut r, "qe");
    let h = hdr(&v[0]);
    assert_eq!(
        (
            h.src(),
            h.dst(),
            h.next_header(),
            h.hop_limit(),
            h.traffic_class(),
            h.payload_len()
        ),
        (a6("2001:db8::1"), a6("2600::9"), PROTO_UDP, 7, 0xb8, 12)
    );
    // No annotation: the configured destination (::).
    assert_eq!(hdr(&v[1]).dst(), a6("::"));
    assert_eq!(read(&mut r, "e.dst"), "DST_ANNO");
    r.write_handler("e.dst", "2001:db8::77").unwrap();
    assert_eq!(read(&mut r, "e.dst"), "2001:db8::77");
    assert!(read(&mut r, "e.config").contains("2001:db8::77"));
    assert!(config_errors("Idle -> IP6Encap(udp, ::1, nowhere) -> Idle;").contains("DST"));
}

#[test]
fn udpip6encap_checksums() {
    let mut r = from_config(
        "Idle -> u :: UDPIP6Encap(2001:db8::1, 1234, 2001:db8::2, 53) -> q :: Queue -> Idle;",
    );
    let check = |p: &Packet| {
        let h = hdr(p);
        let u = h.payload();
        assert!(checksum::verify_pseudo(h.src(), h.dst(), PROTO_UDP, u));
        u16::from_be_bytes([u[6], u[7]])
    };
    inject(&mut r, "u", 0, Packet::from_slice(b"hello"));
    let v = drain(&mut r, "q");
    let h = hdr(&v[0]);
    assert_eq!(
        (h.payload_len(), h.hop_limit(), h.next_header()),
        (13, 255, PROTO_UDP)
    );
    assert_eq!(&h.payload()[..6], &[0x04, 0xd2, 0, 53, 0, 13]);
    check(&v[0]);
    assert_eq!(v[0].dst_ip6_anno(), a6("2001:db8::2"));
    // A payload word that makes the sum come out 0: sent as 0xffff.
    inject(&mut r, "u", 0, Packet::from_slice(&[0, 0]));
    let c0 = check(&drain(&mut r, "q")[0]);
    inject(&mut r, "u", 0, Packet::from_slice(&c0.to_be_bytes()));
    assert_eq!(check(&drain(&mut r, "q")[0]), 0xffff);
}
