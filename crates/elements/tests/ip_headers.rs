//! IPv4 header elements on crafted packets: CheckIPHeader's RFC 1812
//! checks and drop counts, DecIPTTL's incremental checksum, IPGWOptions'
//! Record Route and Timestamp processing, FixIPSrc, the encapsulation
//! elements, IPPrint's output format, ICMPPingResponder, AddressInfo names,
//! and a property test that arbitrary bytes never panic and every packet
//! is accounted for.

use std::net::Ipv4Addr;

use proptest::prelude::*;
use rclick_core::wire::{checksum, EtherFrame, Ipv4Header};
use rclick_core::{Packet, Router};
use rclick_elements::testing::{from_config, read, try_from_config};

// ------------------------------------------------------------ packet helpers

/// An IPv4 packet with the given options (padded to a multiple of 4) and
/// payload, and a correct header checksum.
fn ip_packet(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    ttl: u8,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    rclick_elements::testing::ipv4_packet(src, dst, proto, ttl, 0, options, payload)
}

fn udp_packet(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, data: &[u8]) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(data);
    let ps = checksum::pseudo_header_v4(src, dst, 17, u.len() as u16);
    let c = !(checksum::sum(&u, ps) as u16);
    u[6..8].copy_from_slice(&c.to_be_bytes());
    ip_packet(src, dst, 17, 64, &[], &u)
}

fn icmp_echo(src: [u8; 4], dst: [u8; 4], id: u16, seq: u16) -> Vec<u8> {
    let mut m = vec![8u8, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(b"abcdefgh");
    let c = checksum::checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip_packet(src, dst, 1, 64, &[], &m)
}

fn refill_checksum(p: &mut [u8]) {
    let mut h = Ipv4Header::new_checked(p).unwrap();
    h.fill_checksum();
}

// ------------------------------------------------------------ router helpers

/// `x` is the element under test; its outputs 0 and 1 go to queues `o0`
/// and `o1`.
fn harness(decl: &str, extra: &str) -> Router {
    from_config(&format!(
        "{extra}\nx :: {decl}; Idle -> x; x[0] -> o0 :: Queue(1000) -> Discard; x[1] -> o1 :: Queue(1000) -> Discard;"
    ))
}

/// Single-output harness.
fn harness1(decl: &str, extra: &str) -> Router {
    from_config(&format!(
        "{extra}\nx :: {decl}; Idle -> x -> o0 :: Queue(1000) -> Discard;"
    ))
}

fn inject(r: &mut Router, name: &str, p: Packet) {
    let i = r.find_element(name).unwrap();
    r.inject_packet(i, 0, p);
}

fn drain(r: &mut Router, q: &str) -> Vec<Packet> {
    let i = r.find_element(q).unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        if b.is_empty() {
            break;
        }
        out.extend(b);
    }
    out
}

/// A packet marked as IP (network header at 0) with its annotations set the
/// way CheckIPHeader would.
fn marked(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    let hl = ((bytes[0] & 0x0f) as usize) * 4;
    p.set_network_header(0, hl);
    p
}

// ------------------------------------------------------------ CheckIPHeader

#[test]
fn checkipheader_drops_and_counts_bad_packets() {
    let mut r = harness(
        "CheckIPHeader(INTERFACES 10.0.0.1/8 192.168.1.1/24, DETAILS true)",
        "",
    );
    let good = udp_packet([1, 2, 3, 4], [10, 0, 0, 9], 1, 2, b"hello");
    // Good, with 6 bytes of link-level padding that must be trimmed.
    let mut padded = good.clone();
    padded.extend_from_slice(&[0xee; 6]);
    inject(&mut r, "x", Packet::from_slice(&padded));

    let mut bad_sum = good.clone();
    bad_sum[10] ^= 0xff;
    inject(&mut r, "x", Packet::from_slice(&bad_sum));

    let mut too_long = good.clone();
    too_long[2..4].copy_from_slice(&((good.len() + 1) as u16).to_be_bytes());
    refill_checksum(&mut too_long);
    inject(&mut r, "x", Packet::from_slice(&too_long));

    let mut shorter_than_header = good.clone();
    shorter_than_header[2..4].copy_from_slice(&19u16.to_be_bytes());
    refill_checksum(&mut shorter_than_header);
    inject(&mut r, "x", Packet::from_slice(&shorter_than_header));

    let mut v6 = good.clone();
    v6[0] = 0x65;
    inject(&mut r, "x", Packet::from_slice(&v6));

    let mut bad_hl = good.clone();
    bad_hl[0] = 0x44;
    inject(&mut r, "x", Packet::from_slice(&bad_hl));

    inject(&mut r, "x", Packet::from_slice(&good[..19]));

    // Sources: subnet broadcasts, 0.0.0.0, 255.255.255.255.
    for src in [
        [10, 255, 255, 255],
        [192, 168, 1, 255],
        [0, 0, 0, 0],
        [255, 255, 255, 255],
    ] {
        inject(
            &mut r,
            "x",
            Packet::from_slice(&udp_packet(src, [10, 0, 0, 9], 1, 2, b"x")),
        );
    }
    // A bad source to one of our own addresses (GOODDST) is allowed.
    inject(
        &mut r,
        "x",
        Packet::from_slice(&udp_packet([0, 0, 0, 0], [10, 0, 0, 1], 68, 67, b"dhcp")),
    );

    let ok = drain(&mut r, "o0");
    let bad = drain(&mut r, "o1");
    assert_eq!(ok.len(), 2);
    assert_eq!(bad.len(), 10);
    assert_eq!(read(&mut r, "x.drops"), "10");
    assert_eq!(
        read(&mut r, "x.drop_details"),
        "1\ttiny packet\n1\tbad IP version\n1\tbad IP header length\n2\tbad IP length\n1\tbad IP checksum\n4\tbad source address"
    );
    // The valid packet: trimmed to its IP length, header marked, dst anno.
    assert_eq!(ok[0].data(), &good[..]);
    assert_eq!(ok[0].network_offset(), Some(0));
    assert_eq!(ok[0].network_header_length(), Some(20));
    assert_eq!(ok[0].dst_ip_anno(), Ipv4Addr::new(10, 0, 0, 9));
    // Only the first failure is reported without VERBOSE.
    let chatter = r.take_chatter();
    assert_eq!(chatter.len(), 1, "{chatter:?}");
    assert_eq!(chatter[0], "x: IP header check failed: bad IP checksum");
}

#[test]
fn checkipheader_source_check_only_when_configured() {
    // Without BADSRC/INTERFACES Click checks no source address.
    let mut r = harness("CheckIPHeader", "");
    inject(
        &mut r,
        "x",
        Packet::from_slice(&udp_packet([255; 4], [10, 0, 0, 9], 1, 2, b"")),
    );
    assert_eq!(drain(&mut r, "o0").len(), 1);
    // Old syntax: the list plus 0.0.0.0 and 255.255.255.255 are bad.
    let mut r = harness("CheckIPHeader(18.26.4.255 2.255.255.255, 0)", "");
    for src in [[18, 26, 4, 255], [255; 4], [0; 4], [18, 26, 4, 1]] {
        inject(
            &mut r,
            "x",
            Packet::from_slice(&udp_packet(src, [10, 0, 0, 9], 1, 2, b"")),
        );
    }
    assert_eq!(drain(&mut r, "o0").len(), 1);
    assert_eq!(read(&mut r, "x.drops"), "3");
    // CHECKSUM false and CheckIPHeader2 accept a bad checksum.
    let mut bad_sum = udp_packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"");
    bad_sum[11] ^= 1;
    for decl in ["CheckIPHeader(CHECKSUM false)", "CheckIPHeader2"] {
        let mut r = harness(decl, "");
        inject(&mut r, "x", Packet::from_slice(&bad_sum));
        assert_eq!(drain(&mut r, "o0").len(), 1, "{decl}");
    }
    // OFFSET: the header 14 bytes in.
    let mut r = harness("CheckIPHeader(OFFSET 14)", "");
    let mut framed = vec![0u8; 14];
    framed.extend_from_slice(&udp_packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b""));
    inject(&mut r, "x", Packet::from_slice(&framed));
    let ok = drain(&mut r, "o0");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].network_offset(), Some(14));
    assert!(try_from_config("x :: CheckIPHeader(BADSRC nonsense); Idle -> x -> Discard;").is_err());
}

/// What CheckIPHeader(OFFSET `off`, INTERFACES 10.0.0.1/24, CHECKSUM
/// `sum`) must do with `data`, worked out from RFC 791/1812 directly:
/// `Some((IP total length, header length))` to accept, `None` to reject.
fn checkipheader_model(data: &[u8], off: usize, sum: bool) -> Option<(usize, usize)> {
    let b = data.get(off..)?;
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let hl = ((b[0] & 15) as usize) * 4;
    let total = u16::from_be_bytes([b[2], b[3]]) as usize;
    if hl < 20 || hl > b.len() || total < hl || total > b.len() {
        return None;
    }
    if sum && checksum::sum(&b[..hl], 0) != 0xffff {
        return None;
    }
    let (src, dst) = (&b[12..16], &b[16..20]);
    let bad_src = [[10, 0, 0, 255], [0; 4], [255; 4]].iter().any(|a| a == src);
    if bad_src && dst != [10, 0, 0, 1] {
        return None;
    }
    Some((total, hl))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// CheckIPHeader's fast path (option-less headers) and general path
    /// together decide as the model does, packet after packet (the
    /// last-good-source memory spans packets).
    #[test]
    fn checkipheader_matches_model(
        off in prop_oneof![Just(0usize), Just(14usize)],
        sum in any::<bool>(),
        packets in proptest::collection::vec(
            (0usize..4, 0usize..3, 0usize..24, any::<[u8; 6]>(), 0usize..8, 0usize..12),
            1..24,
        ),
    ) {
        let decl = format!("CheckIPHeader(OFFSET {off}, INTERFACES 10.0.0.1/24, CHECKSUM {sum})");
        let mut r = harness(&decl, "");
        let mut expect = Vec::new();
        for (src_i, dst_i, opt_len, junk, pad, mutation) in packets {
            let src = [[10, 0, 0, 7], [10, 0, 0, 255], [0; 4], [1, 2, 3, 4]][src_i];
            let dst = [[10, 0, 0, 1], [10, 0, 0, 9], [224, 0, 0, 5]][dst_i];
            let opts = vec![1u8; opt_len & !3];
            let mut ip = ip_packet(src, dst, 17, 64, &opts, &junk[..junk[0] as usize % 6]);
            match mutation {
                0 => ip[10] ^= junk[1] | 1,                     // bad checksum
                1 => ip[0] = 0x40 | (junk[2] & 15),             // any header length
                2 => ip[0] = (junk[3] & 0xf0) | (ip[0] & 15),   // any version
                3 => {                                          // any total length
                    ip[2] = 0;
                    ip[3] = junk[4] % 64;
                }
                4 => {
                    let n = junk[5] as usize % ip.len();        // truncated
                    ip.truncate(n);
                }
                _ => {}
            }
            if mutation != 0 && mutation != 4 && ip.len() >= 20 && junk[1] & 1 == 0 {
                let hl = (((ip[0] & 15) as usize) * 4).clamp(20, ip.len());
                ip[10] = 0;
                ip[11] = 0;
                let c = checksum::checksum(&ip[..hl]);
                ip[10..12].copy_from_slice(&c.to_be_bytes());
            }
            let mut data = vec![0xab; off];
            data.extend_from_slice(&ip);
            data.extend(std::iter::repeat_n(0xee, pad));
            expect.push((data.clone(), checkipheader_model(&data, off, sum)));
            inject(&mut r, "x", Packet::from_slice(&data));
        }
        let mut ok = drain(&mut r, "o0").into_iter();
        let mut bad = drain(&mut r, "o1").into_iter();
        for (data, verdict) in expect {
            match verdict {
                Some((total, hl)) => {
                    let p = ok.next().expect("accepted packet");
                    prop_assert_eq!(p.data(), &data[..off + total]);
                    prop_assert_eq!(p.network_offset(), Some(off as isize));
                    prop_assert_eq!(p.network_header_length(), Some(hl));
                    let d = &data[off + 16..off + 20];
                    prop_assert_eq!(p.dst_ip_anno(), Ipv4Addr::new(d[0], d[1], d[2], d[3]));
                }
                None => {
                    let p = bad.next().expect("rejected packet");
                    prop_assert_eq!(p.data(), &data[..]);
                }
            }
        }
        prop_assert!(ok.next().is_none() && bad.next().is_none());
    }
}

// ------------------------------------------------------------ DecIPTTL

#[test]
fn decipttl_expires_and_updates_checksum_incrementally() {
    let mut r = harness("DecIPTTL", "");
    for ttl in [64u8, 1, 0, 2, 255] {
        let mut p = udp_packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"data");
        p[8] = ttl;
        refill_checksum(&mut p);
        inject(&mut r, "x", marked(&p));
    }
    let ok = drain(&mut r, "o0");
    let dead = drain(&mut r, "o1");
    assert_eq!(dead.len(), 2);
    assert_eq!(read(&mut r, "x.drops"), "2");
    let ttls: Vec<u8> = ok.iter().map(|p| p.data()[8]).collect();
    assert_eq!(ttls, vec![63, 1, 254]);
    for p in &ok {
        let h = Ipv4Header::new_checked(p.data()).unwrap();
        assert!(h.verify_checksum());
        // Equal to a full recomputation.
        let mut copy = p.data().to_vec();
        refill_checksum(&mut copy);
        assert_eq!(&copy[10..12], &p.data()[10..12]);
    }
    // Expired packets leave unchanged.
    assert_eq!(dead[0].data()[8], 1);
    // MULTICAST false leaves multicast destinations alone.
    let mut r = harness("DecIPTTL(MULTICAST false)", "");
    let mut p = udp_packet([1, 2, 3, 4], [224, 0, 0, 5], 1, 2, b"");
    p[8] = 1;
    refill_checksum(&mut p);
    inject(&mut r, "x", marked(&p));
    assert_eq!(drain(&mut r, "o0").len(), 1);
    // The active handler switches it off.
    let mut r = harness("DecIPTTL", "");
    r.write_handler("x.active", "false").unwrap();
    inject(&mut r, "x", marked(&p));
    assert_eq!(drain(&mut r, "o0")[0].data()[8], 1);
    assert_eq!(read(&mut r, "x.active"), "false");
}

#[test]
fn decipttl_fast_and_general_paths_agree() {
    // DecIPTTL has a fast path for option-less headers; headers with
    // options, at an offset, in shared packets or cut short take the
    // general one. Every forwarded header must equal a recomputation.
    let mut r = harness("DecIPTTL", "");
    let plain = udp_packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"data");
    let opts = ip_packet([1, 2, 3, 4], [5, 6, 7, 8], 17, 9, &[1, 1, 1, 0], b"xy");
    // A shared packet: the copy kept here must not change.
    let shared = marked(&plain);
    let kept = shared.clone();
    inject(&mut r, "x", shared);
    inject(&mut r, "x", marked(&opts));
    // The IP header 14 bytes in, after a link header.
    let mut framed = vec![0xaa; 14];
    framed.extend_from_slice(&plain);
    let mut p = Packet::from_slice(&framed);
    p.set_network_header(14, 20);
    inject(&mut r, "x", p);
    // A network header with fewer than 20 bytes after it is dropped.
    let mut p = Packet::from_slice(&plain[..19]);
    p.set_network_header(0, 20);
    inject(&mut r, "x", p);
    let ok = drain(&mut r, "o0");
    assert_eq!(ok.len(), 3);
    assert!(drain(&mut r, "o1").is_empty());
    assert_eq!(read(&mut r, "x.drops"), "1");
    assert_eq!(kept.data(), &plain[..]);
    for (p, (off, ttl)) in ok.iter().zip([(0, 63u8), (0, 8), (14, 63)]) {
        let h = &p.data()[off..];
        assert_eq!(h[8], ttl);
        let mut copy = h[..((h[0] & 15) as usize) * 4].to_vec();
        refill_checksum(&mut copy);
        assert_eq!(&copy[10..12], &h[10..12]);
    }
    assert_eq!(&ok[2].data()[..14], &[0xaa; 14]);
}

// ------------------------------------------------------------ IPGWOptions

fn gw() -> Router {
    harness("IPGWOptions(18.26.4.24, 1.2.3.4 5.6.7.8)", "")
}

fn opt_of(p: &Packet, from: usize, to: usize) -> Vec<u8> {
    p.data()[20 + from..20 + to].to_vec()
}

#[test]
fn ipgwoptions_record_route() {
    let mut r = gw();
    // RR with room for two addresses, pointer at the first slot.
    let rr = [7u8, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1 /* NOP */];
    let p = ip_packet([1, 1, 1, 1], [2, 2, 2, 2], 17, 64, &rr, b"xyz");
    inject(&mut r, "x", marked(&p));
    // A full RR option (pointer past the end) is left alone.
    let full = [7u8, 7, 8, 9, 9, 9, 9, 0];
    let pf = ip_packet([1, 1, 1, 1], [2, 2, 2, 2], 17, 64, &full, b"");
    inject(&mut r, "x", marked(&pf));
    let ok = drain(&mut r, "o0");
    assert_eq!(ok.len(), 2);
    assert_eq!(
        opt_of(&ok[0], 0, 11),
        vec![7, 11, 8, 18, 26, 4, 24, 0, 0, 0, 0]
    );
    assert!(Ipv4Header::new_checked(ok[0].data())
        .unwrap()
        .verify_checksum());
    assert_eq!(ok[1].data(), &pf[..]);
    // Second hop fills the second slot.
    let mut r = gw();
    inject(&mut r, "x", marked(ok[0].data()));
    let ok2 = drain(&mut r, "o0");
    assert_eq!(
        opt_of(&ok2[0], 0, 11),
        vec![7, 11, 12, 18, 26, 4, 24, 18, 26, 4, 24]
    );
}

#[test]
fn ipgwoptions_timestamp() {
    let mut r = gw();
    let now = r.clock().now();
    let ms = ((now.sec().rem_euclid(86400) as u64) * 1000 + (now.subsec_nanos() / 1_000_000) as u64)
        as u32;
    let ms_b = ms.to_be_bytes();
    // Flag 0: timestamps only.
    let ts0 = [68u8, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    inject(
        &mut r,
        "x",
        marked(&ip_packet([1; 4], [2; 4], 17, 64, &ts0, b"")),
    );
    // Flag 1: address and timestamp.
    let ts1 = [68u8, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    inject(
        &mut r,
        "x",
        marked(&ip_packet([1; 4], [2; 4], 17, 64, &ts1, b"")),
    );
    // Flag 1, full: overflow count goes up.
    let ts1f = [68u8, 4, 5, 0x21];
    inject(
        &mut r,
        "x",
        marked(&ip_packet([1; 4], [2; 4], 17, 64, &ts1f, b"")),
    );
    // Flag 3: pre-specified addresses; ours (an OTHERADDR) gets stamped.
    let ts3 = [68u8, 12, 5, 3, 5, 6, 7, 8, 0, 0, 0, 0];
    inject(
        &mut r,
        "x",
        marked(&ip_packet([1; 4], [2; 4], 17, 64, &ts3, b"")),
    );
    // Flag 3, someone else's address: untouched.
    let ts3o = [68u8, 12, 5, 3, 9, 9, 9, 9, 0, 0, 0, 0];
    let p3o = ip_packet([1; 4], [2; 4], 17, 64, &ts3o, b"");
    inject(&mut r, "x", marked(&p3o));
    let ok = drain(&mut r, "o0");
    assert_eq!(ok.len(), 5);
    let mut want0 = vec![68u8, 12, 9, 0];
    want0.extend_from_slice(&ms_b);
    want0.extend_from_slice(&[0; 4]);
    assert_eq!(opt_of(&ok[0], 0, 12), want0);
    let mut want1 = vec![68u8, 12, 13, 1, 18, 26, 4, 24];
    want1.extend_from_slice(&ms_b);
    assert_eq!(opt_of(&ok[1], 0, 12), want1);
    assert_eq!(opt_of(&ok[2], 0, 4), vec![68, 4, 5, 0x31]);
    let mut want3 = vec![68u8, 12, 13, 3, 5, 6, 7, 8];
    want3.extend_from_slice(&ms_b);
    assert_eq!(opt_of(&ok[3], 0, 12), want3);
    assert_eq!(ok[4].data(), &p3o[..]);
    for p in &ok {
        assert!(Ipv4Header::new_checked(p.data()).unwrap().verify_checksum());
    }
}

#[test]
fn ipgwoptions_bad_options_get_parameter_problem_pointer() {
    // (options, expected pointer from the start of the IP header)
    let cases: &[(&[u8], u8)] = &[
        // Length 1: points at the length byte.
        (&[7, 1, 0, 0], 21),
        // Length past the header.
        (&[1, 7, 12, 4, 0, 0, 0, 0], 22),
        // RR pointer below 4: points at the pointer.
        (&[7, 7, 2, 0, 0, 0, 0, 0], 22),
        // RR pointer inside but with no room for an address.
        (&[7, 7, 6, 0, 0, 0, 0, 0], 22),
        // TS pointer below 5.
        (&[68, 8, 4, 0, 0, 0, 0, 0], 22),
        // TS flag 2 does not exist: points at the flags byte.
        (&[68, 8, 5, 2, 0, 0, 0, 0], 23),
        // TS overflow counter already 15.
        (&[68, 4, 5, 0xf0], 23),
        // An unknown option is skipped, then a bad RR after it.
        (&[130, 4, 0, 0, 7, 3, 1, 0], 26),
    ];
    for (opts, ptr) in cases {
        let mut r = gw();
        inject(
            &mut r,
            "x",
            marked(&ip_packet([1; 4], [2; 4], 17, 64, opts, b"")),
        );
        let bad = drain(&mut r, "o1");
        assert_eq!(bad.len(), 1, "{opts:?}");
        assert_eq!(bad[0].icmp_param_prob_anno(), *ptr, "{opts:?}");
        assert_eq!(read(&mut r, "x.drops"), "1");
    }
    // No options, unknown options, NOP/EOL only: untouched.
    let mut r = gw();
    for opts in [&[][..], &[130, 4, 0, 0], &[1, 1, 0, 0]] {
        let p = ip_packet([1; 4], [2; 4], 17, 64, opts, b"");
        inject(&mut r, "x", marked(&p));
        assert_eq!(drain(&mut r, "o0")[0].data(), &p[..]);
    }
}

// ------------------------------------------------------------ FixIPSrc

#[test]
fn fixipsrc_rewrites_only_marked_packets() {
    let mut r = harness1("FixIPSrc(18.26.4.24)", "");
    let p = udp_packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2, b"");
    inject(&mut r, "x", marked(&p));
    let mut m = marked(&p);
    m.set_fix_ip_src_anno(true);
    inject(&mut r, "x", m);
    let out = drain(&mut r, "o0");
    assert_eq!(out[0].data(), &p[..]);
    let h = Ipv4Header::new_checked(out[1].data()).unwrap();
    assert_eq!(h.src(), Ipv4Addr::new(18, 26, 4, 24));
    assert!(h.verify_checksum());
    assert!(!out[1].fix_ip_src_anno());
}

// ------------------------------------------------------------ encapsulation

#[test]
fn etherencap_ipencap_udpipencap_build_valid_headers() {
    let mut r = harness1(
        "EtherEncap(0x0800, 00:01:02:03:04:05, ff:ff:ff:ff:ff:ff)",
        "",
    );
    inject(&mut r, "x", Packet::from_slice(b"payload"));
    let out = drain(&mut r, "o0");
    let f = EtherFrame::new_checked(out[0].data()).unwrap();
    assert_eq!(f.src().0, [0, 1, 2, 3, 4, 5]);
    assert!(f.dst().is_broadcast());
    assert_eq!(f.ethertype(), 0x0800);
    assert_eq!(f.payload(), b"payload");
    assert_eq!(read(&mut r, "x.ethertype"), "2048");

    let mut r = harness1(
        "IPEncap(ipip, 1.0.0.1, 2.0.0.2, TTL 17, DF true, DSCP 10)",
        "",
    );
    inject(&mut r, "x", Packet::from_slice(b"inner"));
    inject(&mut r, "x", Packet::from_slice(b"inner2"));
    let out = drain(&mut r, "o0");
    for (i, p) in out.iter().enumerate() {
        let h = Ipv4Header::new_checked(p.data()).unwrap();
        assert!(h.verify_checksum());
        assert_eq!(h.protocol(), 4);
        assert_eq!(h.ttl(), 17);
        assert!(h.dont_frag());
        assert_eq!(h.tos(), 40);
        assert_eq!(h.ident(), i as u16);
        assert_eq!(h.total_len() as usize, p.len());
        assert_eq!(h.src(), Ipv4Addr::new(1, 0, 0, 1));
        assert_eq!(p.dst_ip_anno(), Ipv4Addr::new(2, 0, 0, 2));
        assert_eq!(p.network_offset(), Some(0));
    }
    let mut r = harness1("IPEncap(17, 1.0.0.1, DST_ANNO)", "");
    let mut p = Packet::from_slice(b"x");
    p.set_dst_ip_anno(Ipv4Addr::new(9, 8, 7, 6));
    inject(&mut r, "x", p);
    let out = drain(&mut r, "o0");
    let h = Ipv4Header::new_checked(out[0].data()).unwrap();
    assert_eq!(h.dst(), Ipv4Addr::new(9, 8, 7, 6));
    assert!(h.verify_checksum());
    assert_eq!(read(&mut r, "x.dst"), "DST_ANNO");

    // Click's UDPIPEncap sends no checksum by default (checked against
    // Click 2.1): CHECKSUM true asks for one.
    let mut r = harness1("UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, dns)", "");
    inject(&mut r, "x", Packet::from_slice(b"odd-length!"));
    let out = drain(&mut r, "o0");
    assert_eq!(&out[0].data()[26..28], &[0, 0]);
    let mut r = harness1("UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, dns, CHECKSUM true)", "");
    inject(&mut r, "x", Packet::from_slice(b"odd-length!"));
    let out = drain(&mut r, "o0");
    let d = out[0].data();
    let h = Ipv4Header::new_checked(d).unwrap();
    assert!(h.verify_checksum());
    assert_eq!(h.protocol(), 17);
    assert_eq!(h.total_len() as usize, 28 + 11);
    let u = &d[20..];
    assert_eq!(u16::from_be_bytes([u[0], u[1]]), 1234);
    assert_eq!(u16::from_be_bytes([u[2], u[3]]), 53);
    assert_eq!(u16::from_be_bytes([u[4], u[5]]), 19);
    let ps = checksum::pseudo_header_v4([1, 0, 0, 1], [2, 0, 0, 2], 17, 19);
    assert_eq!(checksum::sum(u, ps), 0xffff);
    // And CheckUDPHeader agrees.
    let mut r = harness("CheckUDPHeader", "");
    inject(&mut r, "x", marked(d));
    let mut bad = d.to_vec();
    bad[30] ^= 1;
    inject(&mut r, "x", marked(&bad));
    assert_eq!(drain(&mut r, "o0").len(), 1);
    assert_eq!(drain(&mut r, "o1").len(), 1);
}

#[test]
fn strip_and_unstrip_ip_header() {
    let mut r = from_config(
        "Idle -> x :: StripIPHeader -> o1 :: Queue -> Discard; Idle -> y :: UnstripIPHeader -> o0 :: Queue -> Discard;",
    );
    let p = ip_packet([1; 4], [2; 4], 17, 64, &[1, 1, 1, 0], b"body");
    inject(&mut r, "x", marked(&p));
    let stripped = drain(&mut r, "o1");
    assert_eq!(stripped[0].data(), b"body");
    inject(&mut r, "y", stripped.into_iter().next().unwrap());
    assert_eq!(drain(&mut r, "o0")[0].data(), &p[..]);
}

// ------------------------------------------------------------ IPPrint

#[test]
fn ipprint_formats_like_click() {
    let mut r = harness1("IPPrint(in, TIMESTAMP false, TTL true, ID true)", "");
    inject(
        &mut r,
        "x",
        marked(&udp_packet([1, 0, 0, 1], [2, 0, 0, 2], 1234, 53, b"abc")),
    );
    // TCP SYN with 4 bytes of data, ack set.
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&80u16.to_be_bytes());
    t[2..4].copy_from_slice(&4000u16.to_be_bytes());
    t[4..8].copy_from_slice(&1000u32.to_be_bytes());
    t[8..12].copy_from_slice(&77u32.to_be_bytes());
    t[12] = 5 << 4;
    t[13] = 0x12;
    t[14..16].copy_from_slice(&8192u16.to_be_bytes());
    t.extend_from_slice(b"data");
    inject(
        &mut r,
        "x",
        marked(&ip_packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 9, &[], &t)),
    );
    inject(
        &mut r,
        "x",
        marked(&icmp_echo([1, 0, 0, 1], [2, 0, 0, 2], 0x0102, 7)),
    );
    let mut frag = ip_packet([1, 0, 0, 1], [2, 0, 0, 2], 47, 64, &[], &[0; 16]);
    frag[6..8].copy_from_slice(&(0x2000u16 | 3).to_be_bytes());
    inject(&mut r, "x", marked(&frag));
    let lines = r.take_chatter();
    assert_eq!(
        lines,
        vec![
            "in: id 4660 ttl 64 1.0.0.1.1234 > 2.0.0.2.53: udp 11",
            "in: id 4660 ttl 9 1.0.0.1.80 > 2.0.0.2.4000: S 1000:1005(5,44,44) ack 77 win 8192",
            "in: id 4660 ttl 64 1.0.0.1 > 2.0.0.2: icmp echo (258, 7)",
            "in: id 4660 ttl 64 1.0.0.1 > 2.0.0.2: ip-proto-47 (frag 4660:16@24+)",
        ]
    );
    let mut r = harness1("IPPrint(CONTENTS HEX, TIMESTAMP false)", "");
    let p = udp_packet([1, 0, 0, 1], [2, 0, 0, 2], 1, 2, &[0xab; 10]);
    inject(&mut r, "x", marked(&p));
    let hex: String = p
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let sep = if i % 24 == 0 {
                "\n  "
            } else if i % 4 == 0 {
                " "
            } else {
                ""
            };
            format!("{sep}{b:02x}")
        })
        .collect();
    assert_eq!(
        r.take_chatter(),
        vec![format!("1.0.0.1.1 > 2.0.0.2.2: udp 18{hex}")]
    );
    // With the timestamp (default), the annotation comes first.
    let mut r = harness1("IPPrint", "");
    let mut p = marked(&udp_packet([1, 0, 0, 1], [2, 0, 0, 2], 1, 2, b""));
    p.set_timestamp_anno(rclick_core::Timestamp::from_sec_nsec(1, 500_000_000));
    inject(&mut r, "x", p);
    assert_eq!(
        r.take_chatter(),
        vec!["1.500000: 1.0.0.1.1 > 2.0.0.2.2: udp 8"]
    );
}

// ------------------------------------------------------------ ping

#[test]
fn icmppingresponder_builds_valid_echo_reply() {
    let mut r = harness("ICMPPingResponder", "");
    let mut req = icmp_echo([1, 0, 0, 1], [2, 0, 0, 2], 0x55, 9);
    req[6] = 0x40; // DF
    refill_checksum(&mut req);
    inject(&mut r, "x", marked(&req));
    inject(
        &mut r,
        "x",
        marked(&udp_packet([1, 0, 0, 1], [2, 0, 0, 2], 1, 2, b"")),
    );
    let out = drain(&mut r, "o0");
    assert_eq!(drain(&mut r, "o1").len(), 1);
    let d = out[0].data();
    let h = Ipv4Header::new_checked(d).unwrap();
    assert!(h.verify_checksum());
    assert_eq!(h.src(), Ipv4Addr::new(2, 0, 0, 2));
    assert_eq!(h.dst(), Ipv4Addr::new(1, 0, 0, 1));
    assert_eq!(h.ttl(), 255);
    assert_eq!(h.frag_word(), 0);
    let icmp = &d[20..];
    assert_eq!(icmp[0], 0);
    assert!(checksum::verify(icmp));
    assert_eq!(&icmp[4..], &req[24..]);
    assert_eq!(out[0].dst_ip_anno(), Ipv4Addr::new(1, 0, 0, 1));
}

// ------------------------------------------------------------ AddressInfo

#[test]
fn addressinfo_names_resolve_in_arguments() {
    let info =
        "AddressInfo(me 10.0.0.1/8 00:01:02:03:04:05, peer 10.0.0.2);\nPortInfo(svc 4444/udp);";
    let mut r = harness1("EtherEncap(0x0800, me, me:eth)", info);
    inject(&mut r, "x", Packet::from_slice(b"p"));
    let out = drain(&mut r, "o0");
    assert_eq!(&out[0].data()[0..12], &[0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]);

    let mut r = harness1("UDPIPEncap(me:ip, svc, peer, 7)", info);
    inject(&mut r, "x", Packet::from_slice(b"p"));
    let out = drain(&mut r, "o0");
    let h = Ipv4Header::new_checked(out[0].data()).unwrap();
    assert_eq!(h.src(), Ipv4Addr::new(10, 0, 0, 1));
    assert_eq!(h.dst(), Ipv4Addr::new(10, 0, 0, 2));
    assert_eq!(&out[0].data()[20..22], &4444u16.to_be_bytes());

    // me:bcast as a bad source; INTERFACES with a name.
    for decl in [
        "CheckIPHeader(BADSRC me:bcast)",
        "CheckIPHeader(INTERFACES me)",
    ] {
        let mut r = harness(decl, info);
        inject(
            &mut r,
            "x",
            Packet::from_slice(&udp_packet([10, 255, 255, 255], [10, 0, 0, 3], 1, 2, b"")),
        );
        assert_eq!(drain(&mut r, "o1").len(), 1, "{decl}");
    }
    // Names inside a compound are local to it.
    let mut r = from_config(
        "elementclass C { AddressInfo(inner 3.3.3.3); input -> f :: FixIPSrc(inner) -> output }\n\
         c :: C -> o0 :: Queue -> Discard; Idle -> c;",
    );
    let mut p = marked(&udp_packet([1; 4], [2; 4], 1, 2, b""));
    p.set_fix_ip_src_anno(true);
    inject(&mut r, "c/f", p);
    let out = drain(&mut r, "o0");
    assert_eq!(&out[0].data()[12..16], &[3, 3, 3, 3]);
    assert!(try_from_config(
        "elementclass C { AddressInfo(inner 3.3.3.3); input -> output }\n\
         c :: C -> FixIPSrc(inner) -> Discard; Idle -> c;"
    )
    .is_err());
    // Unknown names and bad addresses are configuration errors.
    let errs = try_from_config("Idle -> FixIPSrc(nobody) -> Discard;")
        .err()
        .unwrap();
    assert!(errs.iter().any(|e| e.contains("IPADDR")), "{errs:?}");
    assert!(try_from_config("AddressInfo(x 1.2.3.4.5); Idle -> Discard;").is_err());
    assert!(try_from_config("Idle -> EtherEncap(0x0800, me, 1.2.3.4) -> Discard;").is_err());
}

// ------------------------------------------------------------ property test

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic_and_are_accounted_for(
        packets in proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..80),
                // Mostly-valid headers with random fields, so DecIPTTL sees
                // packets too.
                (any::<u8>(), any::<[u8; 8]>(), 0usize..40).prop_map(|(ttl, junk, n)| {
                    let mut p = ip_packet([1, 2, 3, 4], junk[..4].try_into().unwrap(), junk[4], ttl, &[], &vec![junk[5]; n]);
                    if junk[6] & 1 == 1 { let i = junk[7] as usize % p.len(); p[i] ^= junk[6]; }
                    p
                }),
            ],
            1..40,
        )
    ) {
        let mut r = from_config(
            "Idle -> c :: CheckIPHeader(INTERFACES 1.2.3.4/24); d :: DecIPTTL;\n\
             c[0] -> d; c[1] -> e :: Counter -> Discard;\n\
             d[0] -> a :: Counter -> Discard; d[1] -> b :: Counter -> Discard;",
        );
        let n = packets.len() as u64;
        for p in &packets {
            inject(&mut r, "c", Packet::from_slice(p));
        }
        let get = |r: &mut Router, h: &str| read(r, h).parse::<u64>().unwrap();
        let (a, b, e) = (get(&mut r, "a.count"), get(&mut r, "b.count"), get(&mut r, "e.count"));
        let drops = get(&mut r, "c.drops");
        prop_assert_eq!(e, drops);
        prop_assert_eq!(a + b + drops, n);
        prop_assert_eq!(get(&mut r, "d.drops"), b);
    }
}
