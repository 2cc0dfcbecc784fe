//! ICMPError, IPFragmenter, IPReassembler, ARPQuerier, ARPResponder,
//! ARPPrint and ICMPPingSource on crafted packets, with simulated time:
//! exact ICMP errors and the RFC 1812 "never answer" rules, fragment
//! boundaries and option copying, reassembly in any order with overlaps and
//! expiry, ARP queries, rate limits, pending limits, timeouts, proxy ARP,
//! handlers, hot swap, and a property test that arbitrary bytes never
//! panic.

use std::net::Ipv4Addr;

use proptest::prelude::*;
use rclick_core::packet::PacketType;
use rclick_core::wire::{checksum, Ipv4Header};
use rclick_core::{Packet, Router, Timestamp};
use rclick_elements::testing::{from_config, read, try_from_config};

// ------------------------------------------------------------ helpers

fn ip_packet(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    frag: u16,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    rclick_elements::testing::ipv4_packet(src, dst, proto, 64, frag, options, payload)
}

fn net_packet(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    let hl = ((bytes.first().copied().unwrap_or(0x45) & 0xf) as usize * 4).min(bytes.len());
    p.set_network_header(0, hl);
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

fn advance(r: &Router, secs: f64) {
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_secs_f64(secs));
}

const SRC: [u8; 4] = [192, 168, 1, 5];
const DST: [u8; 4] = [10, 1, 1, 1];

fn udp_payload(n: usize) -> Vec<u8> {
    let mut u = vec![0x30, 0x39, 0x00, 0x35];
    u.extend_from_slice(&((n + 8) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..n).map(|i| i as u8));
    u
}

fn icmp_err_router(args: &str) -> Router {
    from_config(&format!(
        "Idle -> e :: ICMPError({args}) -> q :: Queue(1000) -> Idle;"
    ))
}

fn one_error(r: &mut Router, p: Packet) -> Option<Packet> {
    inject(r, "e", 0, p);
    let mut v = drain(r, "q");
    assert!(v.len() <= 1);
    v.pop()
}

// ------------------------------------------------------------ ICMPError

#[test]
fn time_exceeded_reply_is_exact() {
    let mut r = icmp_err_router("10.0.0.1, timeexceeded");
    let orig = ip_packet(SRC, DST, 17, 0, &[], &udp_payload(12));
    let q = one_error(&mut r, net_packet(&orig)).expect("an error");
    let total = 20 + 8 + orig.len();
    let mut want = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 200, 1, 0, 0, 10, 0, 0, 1];
    want[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    want.extend_from_slice(&SRC);
    let c = checksum::checksum(&want);
    want[10..12].copy_from_slice(&c.to_be_bytes());
    let mut icmp = vec![11, 0, 0, 0, 0, 0, 0, 0];
    icmp.extend_from_slice(&orig);
    let c = checksum::checksum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    want.extend_from_slice(&icmp);
    assert_eq!(q.data(), &want[..]);
    assert!(q.fix_ip_src_anno());
    assert_eq!(q.dst_ip_anno(), Ipv4Addr::from(SRC));
    assert_eq!(q.network_offset(), Some(0));
    let h = Ipv4Header::new_checked(q.data()).unwrap();
    assert!(h.verify_checksum());
    assert!(checksum::verify(&q.data()[20..]));

    // IDs increase; SET_FIX_ANNO false leaves the annotation clear.
    let q2 = one_error(&mut r, net_packet(&orig)).unwrap();
    assert_eq!(&q2.data()[4..6], &[0, 2]);
    let mut r = icmp_err_router("10.0.0.1, 11, 1, SET_FIX_ANNO false");
    let q = one_error(&mut r, net_packet(&orig)).unwrap();
    assert!(!q.fix_ip_src_anno());
    assert_eq!(q.data()[21], 1);
}

#[test]
fn never_answers_errors_broadcasts_fragments_bad_sources() {
    let mut r = icmp_err_router("10.0.0.1, unreachable, host, BADADDRS 10.1.255.255");
    // An ICMP echo request is answered...
    let echo = ip_packet(SRC, DST, 1, 0, &[], &[8, 0, 0, 0, 0, 1, 0, 1]);
    assert!(one_error(&mut r, net_packet(&echo)).is_some());
    // ...an ICMP error is not.
    let err = ip_packet(SRC, DST, 1, 0, &[], &[3, 1, 0, 0, 0, 0, 0, 0]);
    assert!(one_error(&mut r, net_packet(&err)).is_none());
    let tx = ip_packet(SRC, DST, 1, 0, &[], &[11, 0, 0, 0, 0, 0, 0, 0]);
    assert!(one_error(&mut r, net_packet(&tx)).is_none());
    // Broadcast, multicast and BADADDRS destinations.
    for d in [[255, 255, 255, 255], [224, 0, 0, 1], [10, 1, 255, 255]] {
        let p = ip_packet(SRC, d, 17, 0, &[], &udp_payload(4));
        assert!(one_error(&mut r, net_packet(&p)).is_none(), "{d:?}");
    }
    // Link-level broadcast or multicast.
    let ok = ip_packet(SRC, DST, 17, 0, &[], &udp_payload(4));
    for t in [PacketType::Broadcast, PacketType::Multicast] {
        let mut p = net_packet(&ok);
        p.set_packet_type_anno(t);
        assert!(one_error(&mut r, p).is_none());
    }
    // Non-first fragment; a first fragment is answered.
    let nf = ip_packet(SRC, DST, 17, 0x2001, &[], &udp_payload(4));
    assert!(one_error(&mut r, net_packet(&nf)).is_none());
    let ff = ip_packet(SRC, DST, 17, 0x2000, &[], &udp_payload(4));
    assert!(one_error(&mut r, net_packet(&ff)).is_some());
    // Invalid sources.
    for s in [[0, 1, 2, 3], [127, 0, 0, 1], [240, 0, 0, 1], [224, 1, 1, 1]] {
        let p = ip_packet(s, DST, 17, 0, &[], &udp_payload(4));
        assert!(one_error(&mut r, net_packet(&p)).is_none(), "{s:?}");
    }
    // No network header, truncated header.
    assert!(one_error(&mut r, Packet::from_slice(&ok)).is_none());
    assert!(one_error(&mut r, net_packet(&ok[..12])).is_none());
    assert!(one_error(&mut r, net_packet(&ok)).is_some());
}

#[test]
fn parameter_problem_pointer_from_annotation() {
    let mut r = icmp_err_router("10.0.0.1, parameterproblem");
    let orig = ip_packet(SRC, DST, 17, 0, &[68, 3, 5], &udp_payload(4));
    let mut p = net_packet(&orig);
    p.set_icmp_param_prob_anno(22);
    let q = one_error(&mut r, p).unwrap();
    assert_eq!(&q.data()[20..22], &[12, 0]);
    assert_eq!(q.data()[24], 22);
    assert!(checksum::verify(&q.data()[20..]));
    assert_eq!(&q.data()[28..], &orig[..]);
}

#[test]
fn needfrag_carries_next_hop_mtu() {
    let mut r = icmp_err_router("10.0.0.1, unreachable, needfrag, PMTU 1500");
    let orig = ip_packet(SRC, DST, 6, 0x4000, &[], &[0u8; 40]);
    let q = one_error(&mut r, net_packet(&orig)).unwrap();
    assert_eq!(&q.data()[20..22], &[3, 4]);
    assert_eq!(&q.data()[24..28], &[0, 0, 0x05, 0xdc]);
    assert!(checksum::verify(&q.data()[20..]));
    assert_eq!(read(&mut r, "e.pmtu"), "1500");
    r.write_handler("e.pmtu", "1400").unwrap();
    let q = one_error(&mut r, net_packet(&orig)).unwrap();
    assert_eq!(&q.data()[26..28], &1400u16.to_be_bytes());
}

#[test]
fn redirect_gateway_and_source_routes() {
    let mut r = icmp_err_router("10.0.0.1, redirect, host");
    let orig = ip_packet(SRC, DST, 17, 0, &[], &udp_payload(4));
    let mut p = net_packet(&orig);
    p.set_dst_ip_anno(Ipv4Addr::new(10, 0, 0, 254));
    let q = one_error(&mut r, p).unwrap();
    assert_eq!(&q.data()[20..22], &[5, 1]);
    assert_eq!(&q.data()[24..28], &[10, 0, 0, 254]);
    // No redirect for a source-routed packet (LSRR, pointer 8).
    let lsrr = [131, 11, 8, 1, 1, 1, 1, 2, 2, 2, 2];
    let sr = ip_packet(SRC, DST, 17, 0, &lsrr, &udp_payload(4));
    assert!(one_error(&mut r, net_packet(&sr)).is_none());

    // Other errors carry the reversed route: visited 1.1.1.1, 2.2.2.2.
    let ssrr = [137, 15, 12, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3];
    let sr = ip_packet(SRC, DST, 17, 0, &ssrr, &udp_payload(4));
    let mut r = icmp_err_router("10.0.0.1, timeexceeded");
    let q = one_error(&mut r, net_packet(&sr)).unwrap();
    assert_eq!(q.data()[0], 0x48);
    assert_eq!(&q.data()[20..32], &[137, 11, 4, 2, 2, 2, 2, 1, 1, 1, 1, 0]);
    assert!(Ipv4Header::new_checked(q.data()).unwrap().verify_checksum());
    assert_eq!(q.data()[32], 11);
    assert!(checksum::verify(&q.data()[32..]));
}

#[test]
fn quotes_what_fits_in_mtu_and_rejects_bad_config() {
    let mut r = icmp_err_router("10.0.0.1, timeexceeded");
    let big = ip_packet(SRC, DST, 17, 0, &[], &udp_payload(1000));
    let q = one_error(&mut r, net_packet(&big)).unwrap();
    assert_eq!(q.len(), 576);
    assert_eq!(&q.data()[28..], &big[..548]);
    let mut r = icmp_err_router("10.0.0.1, timeexceeded, MTU 56");
    let q = one_error(&mut r, net_packet(&big)).unwrap();
    assert_eq!(q.len(), 56);
    assert!(try_from_config("ICMPError(10.0.0.1, echo) -> Discard;").is_err());
    assert!(try_from_config("ICMPError(10.0.0.1, unreachable, bogus) -> Discard;").is_err());
    assert!(try_from_config("ICMPError(10.0.0.1, 3, 300) -> Discard;").is_err());
}

// ------------------------------------------------------------ IPFragmenter

fn frag_router(args: &str) -> Router {
    from_config(&format!(
        "Idle -> f :: IPFragmenter({args}); f[0] -> q :: Queue(1000) -> Idle; f[1] -> q1 :: Queue(1000) -> Idle;"
    ))
}

#[test]
fn fragments_on_8_byte_boundaries_with_copied_options() {
    let mut r = frag_router("576");
    // Router alert (148: copied) and record route (7: not copied).
    let opts = [148, 4, 0, 0, 7, 7, 4, 0, 0, 0, 0, 1];
    let payload: Vec<u8> = (0..1500).map(|i| (i * 7) as u8).collect();
    let orig = ip_packet(SRC, DST, 17, 0, &opts, &payload);
    let mut p = net_packet(&orig);
    p.set_paint_anno(9);
    inject(&mut r, "f", 0, p);
    let frags = drain(&mut r, "q");
    assert!(frags.len() >= 3);
    let mut rebuilt = Vec::new();
    for (i, f) in frags.iter().enumerate() {
        let h = Ipv4Header::new_checked(f.data()).unwrap();
        assert!(h.verify_checksum(), "fragment {i} checksum");
        assert!(f.len() <= 576);
        assert_eq!(h.total_len() as usize, f.len());
        assert_eq!(h.ident(), 0x1234);
        let dlen = f.len() - h.header_len();
        let last = i == frags.len() - 1;
        assert_eq!(h.more_frags(), !last);
        if !last {
            assert_eq!(dlen % 8, 0);
        }
        assert_eq!(h.frag_offset(), rebuilt.len());
        if i == 0 {
            assert_eq!(h.options(), &opts[..]);
        } else {
            assert_eq!(h.options(), &[148, 4, 0, 0]);
        }
        assert_eq!(f.paint_anno(), 9);
        rebuilt.extend_from_slice(h.payload());
    }
    assert_eq!(rebuilt, payload);
    assert_eq!(read(&mut r, "f.fragments"), frags.len().to_string());
    assert_eq!(read(&mut r, "f.drops"), "0");
    // Small packets pass unchanged.
    let small = ip_packet(SRC, DST, 17, 0, &[], &udp_payload(10));
    inject(&mut r, "f", 0, net_packet(&small));
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].data(), &small[..]);
}

#[test]
fn df_goes_to_output_1_unless_ignored() {
    let mut r = frag_router("576");
    let orig = ip_packet(SRC, DST, 17, 0x4000, &[], &[1u8; 1000]);
    inject(&mut r, "f", 0, net_packet(&orig));
    assert!(drain(&mut r, "q").is_empty());
    let d = drain(&mut r, "q1");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].data(), &orig[..]);
    assert_eq!(read(&mut r, "f.drops"), "1");
    assert!(r
        .take_chatter()
        .iter()
        .any(|l| l.contains("IPFragmenter(576) DF 192.168.1.5 10.1.1.1 len=1020")));

    let mut r = frag_router("576, HONOR_DF false");
    inject(&mut r, "f", 0, net_packet(&orig));
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 2);
    for f in &v {
        let h = Ipv4Header::new_checked(f.data()).unwrap();
        assert!(!h.dont_frag());
        assert!(h.verify_checksum());
    }
    assert!(try_from_config("IPFragmenter(4) -> Discard;").is_err());
}

#[test]
fn fragments_of_a_fragment_keep_offsets_and_mf() {
    let mut r = frag_router("100");
    // A middle fragment at offset 800 bytes with MF set.
    let orig = ip_packet(SRC, DST, 17, 0x2000 | 100, &[], &[5u8; 200]);
    inject(&mut r, "f", 0, net_packet(&orig));
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 3);
    let mut off = 800;
    for f in &v {
        let h = Ipv4Header::new_checked(f.data()).unwrap();
        assert!(h.more_frags());
        assert_eq!(h.frag_offset(), off);
        off += h.payload().len();
    }
}

// ------------------------------------------------------------ IPReassembler

/// Fragments of a datagram at the given (start, end) data ranges; MF is
/// set unless the range ends the datagram.
fn frags_of(orig: &[u8], ranges: &[(usize, usize)]) -> Vec<Vec<u8>> {
    let hl = ((orig[0] & 0xf) * 4) as usize;
    let dlen = orig.len() - hl;
    ranges
        .iter()
        .map(|&(a, b)| {
            let mut f = orig[..hl].to_vec();
            f.extend_from_slice(&orig[hl + a..hl + b]);
            let mut word = (a / 8) as u16;
            if b < dlen {
                word |= 0x2000;
            }
            f[6..8].copy_from_slice(&word.to_be_bytes());
            let flen = f.len() as u16;
            f[2..4].copy_from_slice(&flen.to_be_bytes());
            f[10..12].fill(0);
            let c = checksum::checksum(&f[..hl]);
            f[10..12].copy_from_slice(&c.to_be_bytes());
            f
        })
        .collect()
}

fn reasm_router() -> Router {
    from_config("Idle -> r :: IPReassembler(TIMEOUT 5); r[0] -> q :: Queue(1000) -> Idle; r[1] -> q1 :: Queue(1000) -> Idle;")
}

#[test]
fn reassembles_in_any_order_with_overlaps_and_duplicates() {
    let payload: Vec<u8> = (0..64u8).collect();
    let orig = ip_packet(SRC, DST, 17, 0, &[], &payload);
    let frags = frags_of(
        &orig,
        &[(0, 24), (16, 40), (16, 40), (40, 64), (8, 16), (32, 48)],
    );
    for order in [
        [3, 1, 4, 2, 5, 0],
        [5, 4, 3, 2, 1, 0],
        [0, 1, 2, 4, 5, 3],
        [1, 4, 5, 2, 0, 3],
    ] {
        let mut r = reasm_router();
        let mut got = Vec::new();
        for &i in &order {
            inject(&mut r, "r", 0, net_packet(&frags[i]));
            got.extend(drain(&mut r, "q"));
        }
        assert_eq!(got.len(), 1, "order {order:?}");
        assert_eq!(got[0].data(), &orig[..]);
        assert_eq!(got[0].network_offset(), Some(0));
        let dump = read(&mut r, "r.dump");
        assert!(dump.contains("good reassemblies:   1"), "{dump}");
        assert_eq!(read(&mut r, "r.mem_used"), "0");
    }
    // Non-fragments pass through.
    let mut r = reasm_router();
    inject(&mut r, "r", 0, net_packet(&orig));
    assert_eq!(drain(&mut r, "q")[0].data(), &orig[..]);
}

#[test]
fn reassembles_fragmenter_output_shuffled() {
    let mut r = from_config("Idle -> r :: IPReassembler -> q :: Queue(1000) -> Idle;");
    let payload: Vec<u8> = (0..2000).map(|i| (i % 251) as u8).collect();
    let orig = ip_packet(SRC, DST, 17, 0, &[148, 4, 0, 0], &payload);
    // Capture fragments by fragmenting through a separate router.
    let mut fr = frag_router("300");
    inject(&mut fr, "f", 0, net_packet(&orig));
    let mut frags: Vec<Vec<u8>> = drain(&mut fr, "q")
        .iter()
        .map(|p| p.data().to_vec())
        .collect();
    assert!(frags.len() > 5);
    // Deterministic shuffle.
    let n = frags.len();
    for i in 0..n {
        frags.swap(i, (i * 7 + 3) % n);
    }
    for f in &frags {
        inject(&mut r, "r", 0, net_packet(f));
    }
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].data(), &orig[..]);
}

#[test]
fn bad_fragments_are_dropped_and_incomplete_ones_expire() {
    let mut r = reasm_router();
    let payload = [7u8; 64];
    let orig = ip_packet(SRC, DST, 17, 0, &[], &payload);
    // A middle fragment whose length is not a multiple of 8.
    let bad = frags_of(&orig, &[(0, 20)]);
    inject(&mut r, "r", 0, net_packet(&bad[0]));
    assert!(read(&mut r, "r.dump").contains("bad fragments seen:  1"));
    let fr = frags_of(&orig, &[(0, 24), (40, 64)]);
    inject(&mut r, "r", 0, net_packet(&fr[0]));
    inject(&mut r, "r", 0, net_packet(&fr[1]));
    assert!(drain(&mut r, "q").is_empty());
    let dump = read(&mut r, "r.dump");
    assert!(
        dump.contains(" 192.168.1.5 > 10.1.1.1 17 4660 (0,24) (40,64)"),
        "{dump}"
    );
    r.run_limited(100);
    assert!(drain(&mut r, "q").is_empty());
    let partial = drain(&mut r, "q1");
    assert_eq!(partial.len(), 1);
    let h = Ipv4Header::new_checked(partial[0].data()).unwrap();
    assert_eq!(h.payload().len(), 64);
    assert_eq!(&h.payload()[24..40], &[0u8; 16]);
    assert!(read(&mut r, "r.dump").contains("failed reassemblies: 1"));
    assert_eq!(read(&mut r, "r.mem_used"), "0");
}

#[test]
fn memory_bound_gives_up_oldest() {
    let mut r = from_config("Idle -> r :: IPReassembler(HIMEM 2000) -> q :: Queue(1000) -> Idle; r[1] -> q1 :: Queue(1000) -> Idle;");
    for id in 0..20u16 {
        let mut orig = ip_packet(SRC, DST, 17, 0, &[], &[1u8; 400]);
        orig[4..6].copy_from_slice(&id.to_be_bytes());
        let f = frags_of(&orig, &[(0, 200)]);
        inject(&mut r, "r", 0, net_packet(&f[0]));
        advance(&r, 0.01);
    }
    let mem: usize = read(&mut r, "r.mem_used").parse().unwrap();
    assert!(mem <= 2000 + 300, "mem {mem}");
    assert!(drain(&mut r, "q1").len() >= 10);
}

// ------------------------------------------------------------ ARP

const MY_ETH: [u8; 6] = [0, 0, 0, 0, 0, 1];

fn arp_router(extra: &str) -> Router {
    from_config(&format!(
        "a :: ARPQuerier(10.0.0.1/24, 00:00:00:00:00:01{extra}); Idle -> [0]a; Idle -> [1]a;
         a[0] -> q0 :: Queue(1000) -> Idle; a[1] -> q1 :: Queue(1000) -> Idle;"
    ))
}

fn ip_to(dst: [u8; 4]) -> Packet {
    let b = ip_packet([10, 0, 0, 1], dst, 17, 0, &[], &udp_payload(8));
    let mut p = net_packet(&b);
    p.set_dst_ip_anno(Ipv4Addr::from(dst));
    p
}

fn arp_frame(
    op: u16,
    sha: [u8; 6],
    spa: [u8; 4],
    tha: [u8; 6],
    tpa: [u8; 4],
    edst: [u8; 6],
) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&edst);
    f.extend_from_slice(&sha);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&sha);
    f.extend_from_slice(&spa);
    f.extend_from_slice(&tha);
    f.extend_from_slice(&tpa);
    f
}

#[test]
fn query_for_unknown_then_reply_releases_packets() {
    let mut r = arp_router(", ENTRY_PACKET_CAPACITY 3");
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 2]));
    let q = drain(&mut r, "q1");
    assert_eq!(q.len(), 1);
    let want = arp_frame(1, MY_ETH, [10, 0, 0, 1], [0; 6], [10, 0, 0, 2], [0xff; 6]);
    assert_eq!(q[0].data(), &want[..]);
    assert!(drain(&mut r, "q0").is_empty());
    // More packets at the same time: no query (rate limit), 2 beyond the
    // per-entry limit dropped.
    for _ in 0..4 {
        inject(&mut r, "a", 0, ip_to([10, 0, 0, 2]));
    }
    assert!(drain(&mut r, "q1").is_empty());
    assert_eq!(read(&mut r, "a.length"), "3");
    assert_eq!(
        read(&mut r, "a.stats"),
        "2 packets killed\n1 ARP queries sent\n"
    );
    // The reply releases the 3 held packets, in order, with Ethernet headers.
    let their = [0, 0x11, 0x22, 0x33, 0x44, 0x55];
    let reply = arp_frame(2, their, [10, 0, 0, 2], MY_ETH, [10, 0, 0, 1], MY_ETH);
    inject(&mut r, "a", 1, Packet::from_slice(&reply));
    let out = drain(&mut r, "q0");
    assert_eq!(out.len(), 3);
    for p in &out {
        assert_eq!(&p.data()[0..6], &their);
        assert_eq!(&p.data()[6..12], &MY_ETH);
        assert_eq!(&p.data()[12..14], &[0x08, 0x00]);
        assert!(Ipv4Header::new_checked(&p.data()[14..])
            .unwrap()
            .verify_checksum());
    }
    assert_eq!(read(&mut r, "a.length"), "0");
    assert_eq!(read(&mut r, "a.responses"), "1");
    assert_eq!(read(&mut r, "a.count"), "1");
    assert_eq!(
        read(&mut r, "a.table"),
        "10.0.0.2 1 00-11-22-33-44-55 0.000000\n"
    );
    // Known now: straight out.
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 2]));
    assert_eq!(drain(&mut r, "q0").len(), 1);
    assert!(drain(&mut r, "q1").is_empty());
}

#[test]
fn repeated_queries_are_rate_limited() {
    let mut r = arp_router("");
    let mut sent = 0;
    // 10 queries 100 ms apart, then one per 2 seconds.
    for _ in 0..30 {
        inject(&mut r, "a", 0, ip_to([10, 0, 0, 9]));
        sent += drain(&mut r, "q1").len();
        advance(&r, 0.05);
    }
    // 1.5 s elapsed: queries at 0, 0.1, ..., 1.4 s, capped at 10 then 2 s.
    assert_eq!(sent, 10);
    advance(&r, 2.0);
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 9]));
    assert_eq!(drain(&mut r, "q1").len(), 1);
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 9]));
    assert_eq!(drain(&mut r, "q1").len(), 0);
    assert_eq!(read(&mut r, "a.queries"), "11");
}

#[test]
fn total_capacity_drops_oldest_packets() {
    let mut r = arp_router(", CAPACITY 4");
    for i in 0..6u8 {
        inject(&mut r, "a", 0, ip_to([10, 0, 0, 20 + i]));
    }
    let len: usize = read(&mut r, "a.length").parse().unwrap();
    assert!(len <= 4, "{len}");
    let stats = read(&mut r, "a.stats");
    let killed: usize = stats.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(killed + len, 6);
}

#[test]
fn broadcast_multicast_zero_and_entry_timeout() {
    let mut r = arp_router(", TIMEOUT 5, POLL_TIMEOUT 0");
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 255]));
    inject(&mut r, "a", 0, ip_to([224, 1, 2, 3]));
    inject(&mut r, "a", 0, ip_to([0, 0, 0, 0]));
    let v = drain(&mut r, "q0");
    assert_eq!(v.len(), 2);
    assert_eq!(&v[0].data()[..6], &[0xff; 6]);
    assert_eq!(&v[1].data()[..6], &[0x01, 0x00, 0x5e, 1, 2, 3]);
    assert!(r
        .take_chatter()
        .iter()
        .any(|l| l.contains("would query for 0.0.0.0")));
    assert_eq!(read(&mut r, "a.drops"), "1");

    r.write_handler("a.insert", "10.0.0.3 00:00:00:00:00:03")
        .unwrap();
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 3]));
    assert_eq!(&drain(&mut r, "q0")[0].data()[..6], &[0, 0, 0, 0, 0, 3]);
    advance(&r, 6.0);
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 3]));
    assert!(drain(&mut r, "q0").is_empty());
    assert_eq!(drain(&mut r, "q1").len(), 1);
    advance(&r, 0.001);
    assert!(read(&mut r, "a.table").starts_with("10.0.0.3 0 "));
    r.write_handler("a.delete", "10.0.0.3").unwrap();
    assert!(read(&mut r, "a.table").starts_with("10.0.0.3 0 FF-FF-FF-FF-FF-FF"));
    r.write_handler("a.clear", "").unwrap();
    assert_eq!(read(&mut r, "a.count"), "0");
    assert!(r.write_handler("a.insert", "bogus").is_err());
}

/// Injects `packets` as one batch.
fn inject_batch(r: &mut Router, elem: &str, packets: Vec<Packet>) {
    let i = r.find_element(elem).unwrap_or_else(|| panic!("no {elem}"));
    let mut b = rclick_core::Batch::new();
    for p in packets {
        b.push(p);
    }
    r.inject(i, 0, b);
}

#[test]
fn batches_keep_click_order_of_queries_and_packets() {
    // One output: queries and addressed packets share output 0, so their
    // order shows. A batch to one next hop is addressed in place; a poll
    // (or a query for a held packet) must still come before its packets.
    let conf = "a :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01, POLL_TIMEOUT 2); Idle -> [0]a; Idle -> [1]a; a -> q0 :: Queue(1000) -> Idle;";
    let mut r = from_config(conf);
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    let kind = |p: &Packet| match &p.data()[12..14] {
        [0x08, 0x06] => "arp".to_string(),
        _ => format!("ip{}", p.data()[5]),
    };
    // Known entry, poll not due: three packets, no query.
    inject_batch(&mut r, "a", (0..3).map(|_| ip_to([10, 0, 0, 7])).collect());
    let v: Vec<_> = drain(&mut r, "q0").iter().map(kind).collect();
    assert_eq!(v, ["ip7", "ip7", "ip7"]);
    // Poll due: the poll goes out before the batch's packets.
    advance(&r, 3.0);
    inject_batch(&mut r, "a", (0..3).map(|_| ip_to([10, 0, 0, 7])).collect());
    let v: Vec<_> = drain(&mut r, "q0").iter().map(kind).collect();
    assert_eq!(v, ["arp", "ip7", "ip7", "ip7"]);
    // Unknown next hop: all held, one query.
    inject_batch(&mut r, "a", (0..3).map(|_| ip_to([10, 0, 0, 8])).collect());
    let v: Vec<_> = drain(&mut r, "q0").iter().map(kind).collect();
    assert_eq!(v, ["arp"]);
    assert_eq!(read(&mut r, "a.length"), "3");
    // Mixed: packets before a held one leave before its query.
    advance(&r, 3.0);
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    inject_batch(
        &mut r,
        "a",
        vec![
            ip_to([10, 0, 0, 7]),
            ip_to([10, 0, 0, 9]),
            ip_to([10, 0, 0, 7]),
        ],
    );
    let v: Vec<_> = drain(&mut r, "q0").iter().map(kind).collect();
    assert_eq!(v, ["ip7", "arp", "ip7"]);
}

/// What each frame a querier sent is, by its EtherType and the last byte
/// of its destination: `arp-to-N` or `ip-to-N`.
fn frame_kinds(v: Vec<Packet>) -> Vec<String> {
    v.iter()
        .map(|p| match &p.data()[12..14] {
            [0x08, 0x06] => format!("arp-to-{}", p.data()[5]),
            _ => format!("ip-to-{}", p.data()[5]),
        })
        .collect()
}

/// One packet at a time (BURST 1) to one next hop takes the querier's
/// remembered entry instead of a table lookup: every table change, the
/// entry's expiry, a due poll and an unset interface address must still
/// show, exactly as with the lookup.
#[test]
fn single_packets_for_the_last_next_hop_follow_table_changes() {
    let conf = "a :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01, TIMEOUT 10, POLL_TIMEOUT 2); Idle -> [0]a; Idle -> [1]a; a -> q0 :: Queue(1000) -> Idle;";
    let mut r = from_config(conf);
    let kinds = frame_kinds;
    let one = |r: &mut Router, dst: u8| {
        inject(r, "a", 0, ip_to([10, 0, 0, dst]));
        kinds(drain(r, "q0"))
    };
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    // A new address for the next hop is used at once.
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:77")
        .unwrap();
    assert_eq!(one(&mut r, 7), ["ip-to-119"]);
    // Another next hop in between, then back.
    r.write_handler("a.insert", "10.0.0.8 00:00:00:00:00:08")
        .unwrap();
    assert_eq!(one(&mut r, 8), ["ip-to-8"]);
    assert_eq!(one(&mut r, 7), ["ip-to-119"]);
    // The poll falls due: it goes out (unicast) before the packet, once.
    advance(&r, 2.5);
    assert_eq!(one(&mut r, 7), ["arp-to-119", "ip-to-119"]);
    assert_eq!(one(&mut r, 7), ["ip-to-119"]);
    // Deleted: held and queried for, not sent to the old address.
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    r.write_handler("a.delete", "10.0.0.7").unwrap();
    assert_eq!(one(&mut r, 7), ["arp-to-255"]);
    assert_eq!(read(&mut r, "a.length"), "1");
    // Expired (TIMEOUT 10, with the poll no earlier than that): held.
    let mut r = from_config(&conf.replace("POLL_TIMEOUT 2", "POLL_TIMEOUT 0"));
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    advance(&r, 9.0);
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    advance(&r, 2.0);
    assert_eq!(one(&mut r, 7), ["arp-to-255"]);
    // No interface address: dropped. (The insert releases the packet
    // held above.)
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, 7), ["ip-to-7", "ip-to-7"]);
    assert_eq!(one(&mut r, 7), ["ip-to-7"]);
    r.write_handler("a.ipaddr", "0.0.0.0").unwrap();
    assert!(one(&mut r, 7).is_empty());
    assert_eq!(read(&mut r, "a.drops"), "1");
}

#[test]
fn one_output_sends_queries_on_output_0_and_hotswap_keeps_table() {
    let conf = "a :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01); Idle -> [0]a; Idle -> [1]a; a -> q0 :: Queue(1000) -> Idle;";
    let mut r = from_config(conf);
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 2]));
    let v = drain(&mut r, "q0");
    assert_eq!(v.len(), 1);
    assert_eq!(&v[0].data()[12..14], &[0x08, 0x06]);
    r.write_handler("a.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    r.hotswap(conf).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(read(&mut r, "a.count"), "2");
    assert_eq!(read(&mut r, "a.length"), "1");
    inject(&mut r, "a", 0, ip_to([10, 0, 0, 7]));
    assert_eq!(&drain(&mut r, "q0")[0].data()[..6], &[0, 0, 0, 0, 0, 7]);
}

/// A batch keeps Click's order on a one-output ARPQuerier: the query for
/// an unknown next hop follows the packets before it, and a packet for a
/// known next hop after an entry was evicted (ENTRY_CAPACITY 1) is held
/// and queried for, not sent to the evicted address.
#[test]
fn a_batch_keeps_order_with_queries_and_evictions() {
    use rclick_core::Batch;
    let one_output = |extra: &str| {
        from_config(&format!(
            "a :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01{extra}); Idle -> [0]a; Idle -> [1]a;
             a -> q0 :: Queue(1000) -> Idle;"
        ))
    };
    let kinds = |v: &[Packet]| -> Vec<String> {
        v.iter()
            .map(|p| match &p.data()[12..14] {
                [0x08, 0x06] => format!("ARP?{}", p.data()[41]),
                _ => format!("IP{}", p.data()[14 + 19]),
            })
            .collect()
    };
    let batch = |dsts: &[u8]| {
        let mut b = Batch::new();
        for &d in dsts {
            b.push(ip_to([10, 0, 0, d]));
        }
        b
    };
    let mut r = one_output("");
    r.write_handler("a.insert", "10.0.0.2 00:00:00:00:00:02")
        .unwrap();
    let a = r.find_element("a").unwrap();
    r.inject(a, 0, batch(&[2, 2, 3, 2]));
    assert_eq!(kinds(&drain(&mut r, "q0")), ["IP2", "IP2", "ARP?3", "IP2"]);

    let mut r = one_output(", ENTRY_CAPACITY 1");
    r.write_handler("a.insert", "10.0.0.2 00:00:00:00:00:02")
        .unwrap();
    let a = r.find_element("a").unwrap();
    r.inject(a, 0, batch(&[2, 3, 2]));
    assert_eq!(kinds(&drain(&mut r, "q0")), ["IP2", "ARP?3", "ARP?2"]);
}

#[test]
fn arp_responder_answers_and_proxies() {
    let conf =
        "Idle -> ar :: ARPResponder(10.0.0.1 00:00:00:00:00:01, 10.1.0.0/16 00:00:00:00:00:02);
                ar[0] -> q0 :: Queue(1000) -> Idle; ar[1] -> q1 :: Queue(1000) -> Idle;";
    let mut r = from_config(conf);
    let them = [0, 0xaa, 0, 0, 0, 9];
    let req = arp_frame(1, them, [10, 0, 0, 9], [0; 6], [10, 1, 2, 3], [0xff; 6]);
    inject(&mut r, "ar", 0, Packet::from_slice(&req));
    let v = drain(&mut r, "q0");
    assert_eq!(v.len(), 1);
    let want = arp_frame(
        2,
        [0, 0, 0, 0, 0, 2],
        [10, 1, 2, 3],
        them,
        [10, 0, 0, 9],
        them,
    );
    // arp_frame puts sha as the Ethernet source; fix the target fields.
    let mut want = want;
    want[32..38].copy_from_slice(&them);
    want[38..42].copy_from_slice(&[10, 0, 0, 9]);
    assert_eq!(v[0].data(), &want[..]);
    // Own address, unknown address, and a non-request.
    let req = arp_frame(1, them, [10, 0, 0, 9], [0; 6], [10, 0, 0, 1], [0xff; 6]);
    inject(&mut r, "ar", 0, Packet::from_slice(&req));
    assert_eq!(&drain(&mut r, "q0")[0].data()[6..12], &MY_ETH);
    let req = arp_frame(1, them, [10, 0, 0, 9], [0; 6], [10, 2, 0, 1], [0xff; 6]);
    inject(&mut r, "ar", 0, Packet::from_slice(&req));
    let rep = arp_frame(2, them, [10, 0, 0, 9], [0; 6], [10, 0, 0, 1], [0xff; 6]);
    inject(&mut r, "ar", 0, Packet::from_slice(&rep));
    assert!(drain(&mut r, "q0").is_empty());
    assert_eq!(drain(&mut r, "q1").len(), 2);

    assert_eq!(
        read(&mut r, "ar.table"),
        "10.0.0.1/32 00-00-00-00-00-01\n10.1.0.0/16 00-00-00-00-00-02\n"
    );
    assert_eq!(
        r.read_handler("ar.lookup", Some("10.1.9.9")).unwrap(),
        "00-00-00-00-00-02"
    );
    assert_eq!(r.read_handler("ar.lookup", Some("10.9.9.9")).unwrap(), "");
    r.write_handler("ar.add", "10.1.5.0/24 00:00:00:00:00:05")
        .unwrap();
    assert_eq!(
        r.read_handler("ar.lookup", Some("10.1.5.1")).unwrap(),
        "00-00-00-00-00-05"
    );
    r.write_handler("ar.remove", "10.1.0.0/16").unwrap();
    assert_eq!(r.read_handler("ar.lookup", Some("10.1.9.9")).unwrap(), "");
    assert!(r.write_handler("ar.remove", "10.1.0.0/16").is_err());
    // Hot swap with the same configuration keeps handler changes.
    r.hotswap(conf).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        r.read_handler("ar.lookup", Some("10.1.5.1")).unwrap(),
        "00-00-00-00-00-05"
    );
    assert!(try_from_config("ARPResponder(10.0.0.1) -> Discard;").is_err());
    assert!(try_from_config("ARPResponder(00:00:00:00:00:01) -> Discard;").is_err());
}

/// Duplicate entries warn, as Click: under the element's context line when
/// the router is built, under the handler call's when `config` is written.
#[test]
fn arp_responder_duplicates_warn_in_clicks_context() {
    let mut r = from_config(
        "Idle -> ar :: ARPResponder(10.0.0.1 00:00:00:00:00:01, 10.0.0.1 00:00:00:00:00:02)
           -> Discard;",
    );
    let said: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
    assert_eq!(
        said,
        [
            "test:1: While configuring 'ar :: ARPResponder':",
            "  warning: multiple entries for 10.0.0.1/32",
        ]
    );
    assert!(r.take_chatter().is_empty());
    r.write_handler("ar.config", "10.0.0.2 10.0.0.2/32 00:00:00:00:00:03")
        .unwrap();
    assert_eq!(
        r.take_chatter(),
        [
            "While calling 'ar.config 10.0.0.2 10.0.0.2/32 00:00:00:00:00:03':",
            "  warning: multiple entries for 10.0.0.2/32",
        ]
    );
}

#[test]
fn arp_print_format() {
    let mut r = from_config("Idle -> p :: ARPPrint(x, TIMESTAMP false, ETHER true) -> Discard;");
    let req = arp_frame(1, MY_ETH, [10, 0, 0, 1], [0; 6], [10, 0, 0, 2], [0xff; 6]);
    inject(&mut r, "p", 0, Packet::from_slice(&req));
    let rep = arp_frame(
        2,
        [0, 0, 0, 0, 0, 2],
        [10, 0, 0, 2],
        MY_ETH,
        [10, 0, 0, 1],
        MY_ETH,
    );
    inject(&mut r, "p", 0, Packet::from_slice(&rep));
    inject(&mut r, "p", 0, Packet::from_slice(&req[..20]));
    let c = r.take_chatter();
    assert!(
        c.iter()
            .any(|l| l
                == "x: 00-00-00-00-00-01 > FF-FF-FF-FF-FF-FF: arp who-has 10.0.0.2 tell 10.0.0.1"),
        "{c:?}"
    );
    assert!(c.iter().any(|l| l == "x: 00-00-00-00-00-02 > 00-00-00-00-00-01: arp reply 10.0.0.2 is-at 00-00-00-00-00-02"), "{c:?}");
    assert!(c.iter().any(|l| l.ends_with("truncated-arp (6)")), "{c:?}");
}

// ------------------------------------------------------------ ICMPPingSource

#[test]
fn ping_source_sends_limit_and_summarizes() {
    let mut r = from_config(
        "ps :: ICMPPingSource(10.0.0.1, 10.0.0.2, LIMIT 3, INTERVAL 0.5, IDENTIFIER 77, DATA abcd, VERBOSE false);
         ps -> t :: Tee(2); t[0] -> q :: Queue(100) -> Idle; t[1] -> ICMPPingResponder -> ps;",
    );
    r.run_limited(1000);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 3);
    for (i, p) in v.iter().enumerate() {
        let h = Ipv4Header::new_checked(p.data()).unwrap();
        assert!(h.verify_checksum());
        assert_eq!(h.dst(), Ipv4Addr::new(10, 0, 0, 2));
        let icmp = &p.data()[20..];
        assert!(checksum::verify(icmp));
        assert_eq!(icmp[0], 8);
        assert_eq!(&icmp[4..6], &77u16.to_be_bytes());
        assert_eq!(&icmp[6..8], &((i + 1) as u16).to_be_bytes());
        assert_eq!(&icmp[8..], b"abcd");
    }
    assert_eq!(read(&mut r, "ps.count"), "3");
    assert_eq!(
        read(&mut r, "ps.summary"),
        "3 packets transmitted, 3 received, 0% packet loss\nrtt min/avg/max/mdev = 0.000/0.000/0.000/0.000\n"
    );
    assert_eq!(read(&mut r, "ps.rtt_min"), "0s");
}

// ------------------------------------------------------------ robustness

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200), set_net in any::<bool>(), port in 0usize..2) {
        let mut r = from_config(
            "Idle -> e :: ICMPError(10.0.0.1, parameterproblem) -> Discard;
             Idle -> f :: IPFragmenter(64) -> Discard; f[1] -> Discard;
             Idle -> ra :: IPReassembler -> Discard; ra[1] -> Discard;
             a :: ARPQuerier(10.0.0.1/24, 00:00:00:00:00:01); a[0] -> Discard; a[1] -> Discard;
             Idle -> ar :: ARPResponder(10.0.0.0/8 00:00:00:00:00:01) -> Discard; ar[1] -> Discard;
             Idle -> p :: ARPPrint -> Discard;
             Idle -> ps :: ICMPPingSource(10.0.0.1, 10.0.0.2, ACTIVE false) -> Discard; Idle -> [0]a; Idle -> [1]a;",
        );
        for (name, ports) in [("e", 1), ("f", 1), ("ra", 1), ("a", 2), ("ar", 1), ("p", 1), ("ps", 1)] {
            let mut pk = Packet::from_slice(&data);
            if set_net {
                let hl = ((data.first().copied().unwrap_or(0) & 0xf) as usize * 4).min(data.len());
                pk.set_network_header(0, hl);
                pk.set_dst_ip_anno(Ipv4Addr::new(10, 0, 0, 2));
            }
            inject(&mut r, name, port.min(ports - 1), pk);
        }
        r.run_limited(3);
    }
}

/// The IP router's per-packet elements take a one-packet batch (BURST 1)
/// on an in-place path and a batch with nothing to do as it is; both must
/// do exactly what the kinds' loops do, including for packets off the
/// common path, alone or mixed into a batch.
#[test]
fn router_elements_one_packet_and_mixed_batches() {
    let conf = "Idle -> c :: CheckIPHeader -> GetIPAddress(16) -> b :: DropBroadcasts
        -> IPGWOptions(10.0.0.1) -> t :: DecIPTTL -> IPFragmenter(1500) -> q :: Queue(100) -> Idle;
        t[1] -> q1 :: Queue(100) -> Idle;";
    let mut r = from_config(conf);
    let raw = |ttl: u8| {
        let b = rclick_elements::testing::ipv4_packet(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            17,
            ttl,
            0,
            &[],
            &udp_payload(8),
        );
        Packet::from_slice(&b)
    };
    let check = |p: &Packet, ttl: u8| {
        assert_eq!(p.data()[8], ttl);
        assert!(Ipv4Header::new_checked(p.data()).unwrap().verify_checksum());
        assert_eq!(p.dst_ip_anno(), Ipv4Addr::new(10, 0, 0, 2));
    };
    // One common packet: checked, annotated, TTL decremented in place.
    inject(&mut r, "c", 0, raw(64));
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1);
    check(&v[0], 63);
    // One packet off the common paths: expired, then a bad checksum.
    inject(&mut r, "c", 0, raw(1));
    assert!(drain(&mut r, "q").is_empty());
    check(&drain(&mut r, "q1")[0], 1);
    let mut bad = raw(64);
    bad.writable()[10] ^= 0xff;
    inject(&mut r, "c", 0, bad);
    assert!(drain(&mut r, "q").is_empty());
    assert_eq!(read(&mut r, "c.drops"), "1");
    // A batch mixing a broadcast, an expired and two common packets: each
    // goes its way, in order, and the common ones are changed once.
    let mut bcast = raw(64);
    bcast.set_packet_type_anno(PacketType::Broadcast);
    inject_batch(&mut r, "c", vec![raw(64), bcast, raw(1), raw(20)]);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 2);
    check(&v[0], 63);
    check(&v[1], 19);
    check(&drain(&mut r, "q1")[0], 1);
    assert_eq!(read(&mut r, "b.drops"), "1");
    assert_eq!(read(&mut r, "t.drops"), "2");
}

/// Two queriers sharing one ARPTable (TABLE): the entry one querier
/// remembered must be forgotten whatever changes it (a reply to the other
/// querier, either element's `insert`, `delete` and `clear` handlers, the
/// table's expiry), and a querier with another POLL_TIMEOUT must still
/// poll at its own age.
#[test]
fn shared_table_changes_reach_every_querier_remembered_entry() {
    let conf = "t :: ARPTable(TIMEOUT 10);
        a :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01, TABLE t, POLL_TIMEOUT 0);
        b :: ARPQuerier(10.0.0.2, 00:00:00:00:00:02, TABLE t, POLL_TIMEOUT 2);
        Idle -> [0]a; Idle -> [1]a; a -> qa :: Queue(1000) -> Idle;
        Idle -> [0]b; Idle -> [1]b; b -> qb :: Queue(1000) -> Idle;";
    let mut r = from_config(conf);
    let kinds = frame_kinds;
    let one = |r: &mut Router, q: &str, dst: u8| {
        inject(r, q, 0, ip_to([10, 0, 0, dst]));
        kinds(drain(r, &format!("q{q}")))
    };
    let reply = |r: &mut Router, q: &str, eth: u8| {
        let their = [0, 0, 0, 0, 0, eth];
        let f = arp_frame(2, their, [10, 0, 0, 7], MY_ETH, [10, 0, 0, 1], MY_ETH);
        inject(r, q, 1, Packet::from_slice(&f));
    };
    r.write_handler("t.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, "a", 7), ["ip-to-7"]);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-7"]);
    // A reply to the other querier.
    reply(&mut r, "b", 0x17);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-23"]);
    assert_eq!(one(&mut r, "b", 7), ["ip-to-23"]);
    // The table's own handler, then the other querier's.
    r.write_handler("t.insert", "10.0.0.7 00:00:00:00:00:27")
        .unwrap();
    assert_eq!(one(&mut r, "a", 7), ["ip-to-39"]);
    r.write_handler("b.insert", "10.0.0.7 00:00:00:00:00:37")
        .unwrap();
    assert_eq!(one(&mut r, "a", 7), ["ip-to-55"]);
    assert_eq!(one(&mut r, "b", 7), ["ip-to-55"]);
    // b polls at its own POLL_TIMEOUT though a remembered the entry
    // without one.
    advance(&r, 2.5);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-55"]);
    assert_eq!(one(&mut r, "b", 7), ["arp-to-55", "ip-to-55"]);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-55"]);
    assert_eq!(read(&mut r, "b.queries"), "1");
    assert_eq!(read(&mut r, "a.queries"), "0");
    // Deleted through the table, then through a querier.
    r.write_handler("t.delete", "10.0.0.7").unwrap();
    assert_eq!(one(&mut r, "a", 7), ["arp-to-255"]);
    reply(&mut r, "a", 0x47);
    assert_eq!(kinds(drain(&mut r, "qa")), ["ip-to-71"]);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-71"]);
    r.write_handler("b.delete", "10.0.0.7").unwrap();
    assert_eq!(one(&mut r, "a", 7), ["arp-to-255"]);
    // Cleared (the held packet goes too).
    r.write_handler("t.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(kinds(drain(&mut r, "qa")), Vec::<String>::new());
    assert_eq!(one(&mut r, "a", 7), ["ip-to-7"]);
    r.write_handler("t.clear", "").unwrap();
    assert_eq!(one(&mut r, "a", 7), ["arp-to-255"]);
    assert_eq!(read(&mut r, "t.count"), "1");
    // Expired: held and queried for again.
    r.write_handler("a.clear", "").unwrap();
    r.write_handler("t.insert", "10.0.0.7 00:00:00:00:00:07")
        .unwrap();
    assert_eq!(one(&mut r, "a", 7), ["ip-to-7"]);
    advance(&r, 9.0);
    assert_eq!(one(&mut r, "a", 7), ["ip-to-7"]);
    advance(&r, 2.0);
    assert_eq!(one(&mut r, "a", 7), ["arp-to-255"]);
    assert_eq!(read(&mut r, "a.queries"), "1");
}
