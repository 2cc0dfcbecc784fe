//! The IPRewriter family's fast path for established flows against its
//! general path: two routers of one configuration, one with the fast path
//! turned off (`Rewriter::set_fast_path`), fed the same packets (TCP and
//! UDP flows in both directions with random flags, IP options, UDP
//! checksums of 0, IP total lengths shorter and longer than the data,
//! fragments, several inputs with `pattern`/`keep`/`drop`/`pass` specs,
//! `add_mapping` writes, time passing under simulated time) must send
//! the same bytes with the same annotations out of the same outputs, and
//! show the same tables, counts and expiries.

use proptest::prelude::*;
use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::wire::checksum;
use rclick_core::{Batch, Packet, Router, RouterOptions, Timestamp};
use rclick_elements::nat::rewriter::Rewriter;
use rclick_elements::testing::{from_config_with, ipv4_packet, read};

const IN: [[u8; 4]; 2] = [[10, 0, 0, 4], [10, 0, 0, 5]];
const SRV: [[u8; 4]; 2] = [[18, 26, 4, 44], [18, 26, 4, 45]];
const PUB: [u8; 4] = [1, 0, 0, 1];

/// One step of a run.
#[derive(Clone, Debug)]
enum Step {
    /// Packets into input `port`, as one batch.
    Packets(usize, Vec<Vec<u8>>),
    /// Time passes (seconds).
    Advance(i64),
    /// A write to `x.add_mapping`.
    AddMapping(String),
}

fn l4_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, seg: &mut [u8], at: usize) {
    seg[at] = 0;
    seg[at + 1] = 0;
    let ps = checksum::pseudo_header_v4(src, dst, proto, seg.len() as u16);
    let c = !(checksum::sum(seg, ps) as u16);
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// A TCP or UDP packet of one of a few flows, outbound or a reply to a
/// mapping's public side, with random details.
fn packet() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<[u8; 16]>(),
        0usize..40,
        prop_oneof![Just(0usize), Just(0), Just(4), Just(8)],
    )
        .prop_map(|(j, n, opts)| {
            let tcp = j[0] & 1 == 0;
            let reply = j[0] & 2 != 0;
            let (src, sport, dst, dport) = if reply {
                // From a server to the public side (ports 1024-1031).
                (
                    SRV[usize::from(j[1] & 1)],
                    80 + u16::from(j[2] & 1),
                    if j[2] & 8 != 0 { PUB } else { IN[0] },
                    1024 + u16::from(j[3] & 7),
                )
            } else {
                (
                    IN[usize::from(j[1] & 1)],
                    5000 + u16::from(j[2] & 3),
                    SRV[usize::from(j[3] & 1)],
                    80 + u16::from(j[3] >> 1 & 1),
                )
            };
            let data = vec![j[4]; n];
            let mut seg = Vec::new();
            seg.extend_from_slice(&sport.to_be_bytes());
            seg.extend_from_slice(&dport.to_be_bytes());
            let proto = if tcp {
                seg.extend_from_slice(&u32::from_be_bytes([j[5], 0, 0, 1]).to_be_bytes());
                seg.extend_from_slice(&[0, 0, 0, 0]);
                // Data offset 5 mostly, now and then more (options) or
                // less (nonsense).
                let doff = match j[6] & 7 {
                    0 => 6,
                    1 => 2,
                    _ => 5,
                };
                seg.push(doff << 4);
                // Flags: FIN, SYN, RST, PSH, ACK in a few mixes.
                seg.push([0x10, 0x18, 0x02, 0x12, 0x11, 0x04, 0x14, 0x01][usize::from(j[7] & 7)]);
                seg.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
                if doff == 6 {
                    seg.extend_from_slice(&[1, 1, 1, 1]);
                }
                seg.extend_from_slice(&data);
                l4_checksum(src, dst, 6, &mut seg, 16);
                6
            } else {
                seg.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
                seg.extend_from_slice(&[0, 0]);
                seg.extend_from_slice(&data);
                // No checksum (0) now and then.
                if j[6] & 3 != 0 {
                    l4_checksum(src, dst, 17, &mut seg, 6);
                }
                17
            };
            // Fragments now and then: more-fragments, an offset, or DF.
            let frag = match j[8] & 15 {
                0 => 0x2000,
                1 => 0x0003,
                2 => 0x4000,
                _ => 0,
            };
            let mut p = ipv4_packet(src, dst, proto, 64, frag, &vec![1u8; opts], &seg);
            // An IP total length shorter or longer than the data, now and
            // then; a truncated segment.
            let total = u16::from_be_bytes([p[2], p[3]]);
            let total = match j[9] & 7 {
                0 => total.saturating_sub(u16::from(j[10] & 31)),
                1 => total + u16::from(j[10]),
                _ => total,
            };
            p[2..4].copy_from_slice(&total.to_be_bytes());
            if j[11] & 15 == 0 {
                let keep = 20 + opts + usize::from(j[12] % 24);
                p.truncate(keep.min(p.len()));
            }
            p[10] = 0;
            p[11] = 0;
            let hl = 20 + opts;
            let c = checksum::checksum(&p[..hl]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
            p
        })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0usize..2, proptest::collection::vec(packet(), 1..6)).prop_map(|(port, ps)| Step::Packets(port, ps)),
        2 => prop_oneof![Just(1i64), Just(3), Just(6), Just(20), Just(70)].prop_map(Step::Advance),
        1 => (any::<bool>(), 0u16..4, any::<bool>(), any::<bool>()).prop_map(|(tcp, p, dynamic, swap)| {
            let proto = if tcp { "tcp" } else { "udp" };
            let outs = if swap { "1 0" } else { "0 1" };
            let dynamic = if dynamic { " dynamic" } else { "" };
            Step::AddMapping(format!(
                "{proto} 10.0.0.4 {} 18.26.4.44 80 => 1.0.0.1 {} 18.26.4.44 80 {outs}{dynamic}",
                5000 + p,
                1024 + p
            ))
        }),
    ]
}

const DECLS: [&str; 5] = [
    "IPRewriter(pattern 1.0.0.1 1024-1031# - - 0 1, keep 1 0, TCP_TIMEOUT 30, TCP_DONE_TIMEOUT 5, TCP_NODATA_TIMEOUT 10, UDP_TIMEOUT 10, UDP_STREAMING_TIMEOUT 40, TCP_GUARANTEE 0, UDP_GUARANTEE 0, MAPPING_CAPACITY 6, REPLY_ANNO 20, REAP_INTERVAL 1)",
    "IPRewriter(pattern 1.0.0.1 1024-1031# - - 0 1, drop, MAPPING_CAPACITY 5, TCP_GUARANTEE 4, UDP_GUARANTEE 2, TCP_DONE_TIMEOUT 3, UDP_TIMEOUT 8, REAP_INTERVAL 2)",
    "TCPRewriter(pattern 1.0.0.1 1024-1031# - - 0 1, pass 1, TCP_TIMEOUT 30, TCP_DONE_TIMEOUT 4, TCP_NODATA_TIMEOUT 9, TCP_GUARANTEE 0, DST_ANNO false, REAP_INTERVAL 1)",
    "UDPRewriter(pattern 1.0.0.1 1024-1031# - - 0 1, keep 1 0, TIMEOUT 7, STREAMING_TIMEOUT 30, GUARANTEE 0, REPLY_ANNO 21, REAP_INTERVAL 1)",
    "UDPRewriter(keep 0 1, pass 1, TIMEOUT 7, GUARANTEE 3, MAPPING_CAPACITY 4, REAP_INTERVAL 1)",
];

fn router(decl: &str, fast: bool) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    let r = from_config_with(
        &format!(
            "x :: {decl}; Idle -> [0]x; Idle -> [1]x; x[0] -> o0 :: Queue(1000) -> Discard; x[1] -> o1 :: Queue(1000) -> Discard;"
        ),
        &opts,
    );
    r.with_element::<Rewriter, _>("x", |e| e.set_fast_path(fast))
        .expect("x is a rewriter");
    r
}

/// What left by queue `q`: bytes, destination annotation, annotations.
fn drain(r: &mut Router, q: &str) -> Vec<(Vec<u8>, std::net::Ipv4Addr, Vec<u8>)> {
    let i = r.find_element(q).unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        if b.is_empty() {
            break;
        }
        out.extend(
            b.packets()
                .iter()
                .map(|p| (p.data().to_vec(), p.dst_ip_anno(), p.anno().to_vec())),
        );
    }
    out
}

fn state(r: &mut Router, decl: &str) -> Vec<String> {
    let mut hs = vec!["x.size", "x.nmappings", "x.mapping_failures", "x.drops"];
    if decl.starts_with("IPRewriter") {
        hs.extend(["x.tcp_table", "x.udp_table"]);
    } else {
        hs.push("x.table");
    }
    hs.iter().map(|h| format!("{h}: {}", read(r, h))).collect()
}

fn run_both(decl: &str, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut fast = router(decl, true);
    let mut slow = router(decl, false);
    for (n, s) in steps.iter().enumerate() {
        for r in [&mut fast, &mut slow] {
            match s {
                Step::Packets(port, ps) => {
                    let mut b = Batch::new();
                    for bytes in ps {
                        let mut p = Packet::from_slice(bytes);
                        let hl = (usize::from(bytes[0] & 15) * 4).min(bytes.len());
                        p.set_network_header(0, hl);
                        b.push(p);
                    }
                    let x = r.find_element("x").unwrap();
                    r.inject(x, *port, b);
                }
                Step::Advance(secs) => {
                    let now = r.clock().now();
                    r.clock()
                        .advance_to(now + Timestamp::from_sec_nsec(*secs, 0));
                    r.run_limited(4);
                }
                Step::AddMapping(m) => {
                    let _ = r.write_handler("x.add_mapping", m);
                }
            }
        }
        for q in ["o0", "o1"] {
            let (a, b) = (drain(&mut fast, q), drain(&mut slow, q));
            prop_assert_eq!(a, b, "step {} ({:?}): {}", n, s, q);
        }
        prop_assert_eq!(
            state(&mut fast, decl),
            state(&mut slow, decl),
            "step {} ({:?})",
            n,
            s
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn fast_path_matches_the_general_path(
        which in 0usize..DECLS.len(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        run_both(DECLS[which], &steps)?;
    }
}

/// The two routers sent the same (what left each queue; every queue in
/// `nonempty` sent something) and show the same tables.
fn same_out(fast: &mut Router, slow: &mut Router, decl: &str, round: u32, nonempty: &[&str]) {
    for q in ["o0", "o1"] {
        let (a, b) = (drain(fast, q), drain(slow, q));
        assert!(
            !a.is_empty() || !nonempty.contains(&q),
            "round {round}: nothing left by {q}"
        );
        assert_eq!(a, b, "round {round}: {q}");
    }
    assert_eq!(state(fast, decl), state(slow, decl), "round {round}");
}

/// A UDP packet with 6 bytes of payload, its checksum set or 0.
fn udp(src: u32, sport: u16, dst: [u8; 4], dport: u16, csum: bool) -> Vec<u8> {
    udp_ip(src, sport, dst, dport, csum, 0, &[])
}

/// [`udp`] with the IP header's fragment word `frag` and IP options.
fn udp_ip(
    src: u32,
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    csum: bool,
    frag: u16,
    options: &[u8],
) -> Vec<u8> {
    let src = src.to_be_bytes();
    let mut seg = Vec::new();
    seg.extend_from_slice(&sport.to_be_bytes());
    seg.extend_from_slice(&dport.to_be_bytes());
    seg.extend_from_slice(&12u16.to_be_bytes());
    seg.extend_from_slice(&[0, 0, 1, 2, 3, 4]);
    if csum {
        l4_checksum(src, dst, 17, &mut seg, 6);
    }
    ipv4_packet(src, dst, 17, 64, frag, options, &seg)
}

/// A TCP segment with TCP flags `flags` and `payload` bytes of data.
fn tcp(src: u32, sport: u16, dst: [u8; 4], dport: u16, flags: u8, payload: usize) -> Vec<u8> {
    let src = src.to_be_bytes();
    let mut seg = Vec::new();
    seg.extend_from_slice(&sport.to_be_bytes());
    seg.extend_from_slice(&dport.to_be_bytes());
    seg.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    seg.extend(std::iter::repeat_n(0x5a, payload));
    l4_checksum(src, dst, 6, &mut seg, 16);
    ipv4_packet(src, dst, 6, 64, 0, &[], &seg)
}

/// `ps` into input `port` of `x`, as one batch.
fn send(r: &mut Router, port: usize, ps: &[Vec<u8>]) {
    let mut b = Batch::new();
    for bytes in ps {
        let mut p = Packet::from_slice(bytes);
        p.set_network_header(0, usize::from(bytes[0] & 15) * 4);
        b.push(p);
    }
    let x = r.find_element("x").unwrap();
    r.inject(x, port, b);
}

/// With 4,096 flows and more the rewriter looks a batch's flows up ahead
/// (`Rewriter::look_ahead`); here with 70,000: batches of established, new, reply and odd packets still
/// leave as the general path sends them, before and after the table
/// empties again.
#[test]
fn large_tables_with_prefetch_match_the_general_path() {
    let decl = "IPRewriter(keep 0 1, keep 1 0, UDP_TIMEOUT 10, TCP_NODATA_TIMEOUT 10, UDP_GUARANTEE 0, TCP_GUARANTEE 0, REAP_INTERVAL 1)";
    let mut fast = router(decl, true);
    let mut slow = router(decl, false);
    let n = 70_000u32;
    let flows: Vec<Vec<u8>> = (0..n)
        .map(|i| udp(0x0a00_0000 + i, 5000, SRV[0], 53, i % 7 != 0))
        .collect();
    for chunk in flows.chunks(32) {
        for r in [&mut fast, &mut slow] {
            send(r, 0, chunk);
        }
        for r in [&mut fast, &mut slow] {
            drain(r, "o0");
            drain(r, "o1");
        }
    }
    assert_eq!(read(&mut fast, "x.size"), n.to_string());
    let round = |fast: &mut Router, slow: &mut Router| {
        for k in 0..40u32 {
            // Established flows both ways, a new flow, a fragment, junk.
            let mut ps: Vec<Vec<u8>> = (0..24)
                .map(|j| flows[((k * 997 + j * 2_801) % n) as usize].clone())
                .collect();
            ps.push(udp(0x0b00_0000 + k, 6000, SRV[1], 53, true));
            let mut frag = flows[k as usize].clone();
            frag[6] = 0x20;
            ps.push(frag);
            ps.push(vec![0x45, 0, 0, 20]);
            let replies: Vec<Vec<u8>> = (0..16u32)
                .map(|j| {
                    let to = (0x0a00_0000 + (k * 131 + j * 4_099) % n).to_be_bytes();
                    let src = u32::from_be_bytes(SRV[0]);
                    udp(src, 53, to, 5000, j % 5 != 0)
                })
                .collect();
            for r in [&mut *fast, &mut *slow] {
                send(r, 0, &ps);
                send(r, 1, &replies);
            }
            for q in ["o0", "o1"] {
                assert_eq!(drain(fast, q), drain(slow, q), "round {k}: {q}");
            }
        }
    };
    round(&mut fast, &mut slow);
    // The flows expire; the slab keeps its slots (and the look-ahead).
    for r in [&mut fast, &mut slow] {
        let now = r.clock().now();
        r.clock().advance_to(now + Timestamp::from_sec_nsec(30, 0));
        r.run_limited(4);
    }
    let size: usize = read(&mut fast, "x.size").parse().unwrap();
    assert!(size < 1000, "size {size} after the timeout");
    round(&mut fast, &mut slow);
    assert_eq!(state(&mut fast, decl), state(&mut slow, decl));
}

/// A batch's lookups are made ahead, and a packet that makes a flow can
/// evict another (the table is at its capacity), whose slot the next new
/// flow takes at once: a packet of the evicted flow later in the same
/// batch must not be rewritten by the entry found for it ahead (it would
/// leave as the new flow's). Here flows are made a chunk a second, so the
/// first chunk's are the oldest; each batch brings new flows first, then
/// packets of the oldest flows, in both directions.
#[test]
fn flows_evicted_within_a_batch_are_looked_up_again() {
    evictions_within_batches(|i| udp(0x0a00_0000 + i, 5000, SRV[0], 53, true));
}

/// As [`flows_evicted_within_a_batch_are_looked_up_again`], with the new
/// flows' packets ones the fast path passes on without calling them a
/// miss (`Fast::Other`: IP options, a first fragment): they make flows
/// and evict as a miss does, and the entries found ahead must be given
/// up all the same.
#[test]
fn flows_evicted_by_packets_the_fast_path_passes_on_are_looked_up_again() {
    evictions_within_batches(|i| {
        let (frag, options): (u16, &[u8]) = if i % 2 == 0 {
            (0, &[1, 1, 1, 1])
        } else {
            (0x2000, &[])
        };
        udp_ip(0x0a00_0000 + i, 5000, SRV[0], 53, true, frag, options)
    });
}

/// The run of the two tests above: 5,000 flows of `flow(i)` (an
/// unfragmented packet without options for the first 5,000, which make
/// the table), then rounds of batches that make new flows (`flow(i)`,
/// `i` from 10,000) first and bring packets of the oldest flows after.
fn evictions_within_batches(new_flow: impl Fn(u32) -> Vec<u8>) {
    let decl = "IPRewriter(keep 0 1, keep 1 0, MAPPING_CAPACITY 5000, UDP_GUARANTEE 0, REAP_INTERVAL 3600)";
    let mut fast = router(decl, true);
    let mut slow = router(decl, false);
    let flow = |i: u32| {
        if i < 5000 {
            udp(0x0a00_0000 + i, 5000, SRV[0], 53, true)
        } else {
            new_flow(i)
        }
    };
    let advance = |r: &mut Router| {
        let now = r.clock().now();
        r.clock().advance_to(now + Timestamp::from_sec_nsec(1, 0));
    };
    let made: Vec<u32> = (0..5000).collect();
    for chunk in made.chunks(32) {
        let ps: Vec<Vec<u8>> = chunk.iter().map(|&i| flow(i)).collect();
        for r in [&mut fast, &mut slow] {
            send(r, 0, &ps);
            advance(r);
        }
    }
    for r in [&mut fast, &mut slow] {
        drain(r, "o0");
        drain(r, "o1");
    }
    assert_eq!(read(&mut fast, "x.size"), "5000");
    // `keep`: a flow's replies come back to its source unchanged.
    let reply = |k: u32| {
        let to = (0x0a00_0000 + k).to_be_bytes();
        udp(u32::from_be_bytes(SRV[0]), 53, to, 5000, true)
    };
    for round in 0..8u32 {
        let mut ps: Vec<Vec<u8>> = (0..4).map(|j| flow(10_000 + round * 4 + j)).collect();
        ps.extend((0..24).map(|j| flow(round * 24 + j)));
        let replies: Vec<Vec<u8>> = (0..4)
            .map(|j| flow(20_000 + round * 4 + j))
            .chain((0..24).map(|j| reply(round * 24 + j)))
            .collect();
        for r in [&mut fast, &mut slow] {
            send(r, 0, &ps);
            send(r, 0, &replies[..4]);
            send(r, 1, &replies[4..]);
        }
        same_out(&mut fast, &mut slow, decl, round, &["o0"]);
    }
}

/// A rewriter of TCP and UDP flows from sequential ports, whose flows
/// never expire during a test (no guarantee, a reap an hour away), with
/// its replies on input 1.
const BOTH_PROTOCOLS: &str = "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, keep 1 0, TCP_GUARANTEE 0, UDP_GUARANTEE 0, REAP_INTERVAL 3600)";

/// The client address of flow `i`.
fn client(i: u32) -> u32 {
    0x0a01_0000 + i
}

/// An IPRewriter's TCP and UDP flows of the same addresses and ports
/// live in its two maps with different rewrites (the pattern hands out
/// ports in order, and the TCP flows are made in the reverse order of
/// the UDP ones). Over the look-ahead's 4,096 flows, full batches (64
/// packets) mix both protocols' packets of the same keys, both ways, TCP
/// ones with data, FIN or RST, and packets for the general path (new
/// flows, ICMP, a later fragment, IP options, a truncated segment, junk)
/// first, in the middle, last or not at all: they must leave as the
/// general path sends them. An entry found ahead in the other protocol's
/// map would rewrite a packet with the other flow's port.
#[test]
fn tcp_and_udp_flows_of_one_key_in_full_batches_with_look_ahead() {
    const N: u32 = 2_100;
    let (mut fast, mut slow) = (router(BOTH_PROTOCOLS, true), router(BOTH_PROTOCOLS, false));
    let sport = |i: u32| 5000 + (i % 7) as u16;
    let server = |i: u32| SRV[(i % 2) as usize];
    let out_udp = |i: u32| udp(client(i), sport(i), server(i), 80, !i.is_multiple_of(5));
    let out_tcp =
        |i: u32, flags: u8, payload: usize| tcp(client(i), sport(i), server(i), 80, flags, payload);
    // Makes the flows of `ps`: the public ports they were given, in order.
    let make = |fast: &mut Router, slow: &mut Router, ps: Vec<Vec<u8>>| -> Vec<u16> {
        let mut ports = Vec::new();
        for chunk in ps.chunks(32) {
            for r in [&mut *fast, &mut *slow] {
                send(r, 0, chunk);
            }
            let (a, b) = (drain(fast, "o0"), drain(slow, "o0"));
            assert_eq!(a, b, "making flows");
            ports.extend(a.iter().map(|(p, _, _)| u16::from_be_bytes([p[20], p[21]])));
        }
        ports
    };
    let udp_ports = make(&mut fast, &mut slow, (0..N).map(out_udp).collect());
    let mut tcp_ports = make(
        &mut fast,
        &mut slow,
        (0..N).rev().map(|i| out_tcp(i, 0x02, 0)).collect(),
    );
    tcp_ports.reverse();
    assert_eq!(read(&mut fast, "x.size"), (2 * N).to_string());
    assert_eq!((udp_ports.len(), tcp_ports.len()), (N as usize, N as usize));
    let differ = (0..N as usize)
        .filter(|&i| udp_ports[i] != tcp_ports[i])
        .count();
    assert!(differ > N as usize / 2, "{differ} keys rewritten apart");
    let (pub_addr, srv) = (PUB, |i: u32| u32::from_be_bytes(server(i)));
    let in_udp = |i: u32| udp(srv(i), 80, pub_addr, udp_ports[i as usize], true);
    let in_tcp = |i: u32, flags: u8, payload: usize| {
        tcp(srv(i), 80, pub_addr, tcp_ports[i as usize], flags, payload)
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..30u32 {
        // The general path's packets of this round, and where they go.
        let odd: Vec<Vec<u8>> = match round % 5 {
            0 => vec![],
            1 => vec![udp(0x0a02_0000 + round, 6000, SRV[0], 53, true)],
            2 => vec![ipv4_packet(
                IN[0],
                SRV[0],
                1,
                64,
                0,
                &[],
                &[8, 0, 0xf7, 0xfe, 0, 1, 0, 0],
            )],
            3 => {
                let mut later = out_udp(round);
                later[6..8].copy_from_slice(&3u16.to_be_bytes());
                // An established flow's segment, with IP options.
                let p = out_tcp(round, 0x10, 0);
                let (src, dst) = (p[12..16].try_into(), p[16..20].try_into());
                let options = ipv4_packet(
                    src.unwrap(),
                    dst.unwrap(),
                    6,
                    64,
                    0,
                    &[1, 1, 1, 1],
                    &p[20..],
                );
                vec![later, options, vec![0x45, 0, 0, 20]]
            }
            _ => {
                let mut truncated = out_tcp(round + 1, 0x10, 0);
                truncated.truncate(26);
                vec![
                    tcp(0x0a02_0000 + round, 6000, SRV[1], 80, 0x02, 0),
                    truncated,
                ]
            }
        };
        let mut ps: Vec<Vec<u8>> = Vec::new();
        while ps.len() + odd.len() < 64 {
            let r = next();
            let i = (r % u64::from(N)) as u32;
            let (flags, payload) = match (r >> 32) % 16 {
                0 => (0x11, 0),
                1 => (0x04, 0),
                2..=7 => (0x18, 10),
                _ => (0x10, 0),
            };
            // The key's TCP and UDP packets next to each other.
            let pair = match (r >> 40) % 4 {
                0 => [out_tcp(i, flags, payload), out_udp(i)],
                1 => [in_tcp(i, flags, payload), in_udp(i)],
                2 => [out_udp(i), in_tcp(i, flags, payload)],
                _ => [in_udp(i), out_tcp(i, flags, payload)],
            };
            ps.extend(pair);
        }
        ps.truncate(64 - odd.len());
        let at = match round % 3 {
            0 => 0,
            1 => ps.len() / 2,
            _ => ps.len(),
        };
        ps.splice(at..at, odd);
        assert_eq!(ps.len(), 64);
        for r in [&mut fast, &mut slow] {
            send(r, 0, &ps);
        }
        same_out(&mut fast, &mut slow, BOTH_PROTOCOLS, round, &["o0", "o1"]);
    }
}

/// Over the look-ahead's 4,096 flows, a batch's first packet of a new
/// flow makes the flow on the general path without replacing or removing
/// a map entry, so the entries found ahead for the rest of the batch stay
/// in use. The new flow's own later packets in that batch, and the
/// replies to it, were found absent ahead: they must be looked up again
/// and take the new flow (its public port), not make another flow. Here
/// each batch makes a UDP and a TCP flow, which the sequential pattern
/// gives the next two ports, and brings their second packets and their
/// replies later in the batch, amid established flows' packets both ways.
/// Were a key found absent ahead taken as a known miss, the second packet
/// would be given a port of its own and the reply handled as a new flow.
#[test]
fn a_flow_made_within_a_batch_takes_its_later_packets_and_replies() {
    const N: u32 = 4_200;
    let (mut fast, mut slow) = (router(BOTH_PROTOCOLS, true), router(BOTH_PROTOCOLS, false));
    let srv = u32::from_be_bytes(SRV[0]);
    let mut ports = Vec::new();
    let made: Vec<Vec<u8>> = (0..N)
        .map(|i| udp(client(i), 5000, SRV[0], 80, true))
        .collect();
    for chunk in made.chunks(32) {
        for r in [&mut fast, &mut slow] {
            send(r, 0, chunk);
        }
        let (a, b) = (drain(&mut fast, "o0"), drain(&mut slow, "o0"));
        assert_eq!(a, b, "making flows");
        ports.extend(a.iter().map(|(p, _, _)| u16::from_be_bytes([p[20], p[21]])));
    }
    assert_eq!(read(&mut fast, "x.size"), N.to_string());
    assert!(ports.windows(2).all(|w| w[1] == w[0] + 1), "ports in order");
    let mut next_port = ports[ports.len() - 1] + 1;
    let established = |k: u32, j: u32| {
        let i = (k * 613 + j * 1_009) % N;
        if j.is_multiple_of(2) {
            udp(client(i), 5000, SRV[0], 80, true)
        } else {
            udp(srv, 80, PUB, ports[i as usize], !j.is_multiple_of(3))
        }
    };
    for round in 0..12u32 {
        let (new_udp, new_tcp) = (0x0a02_0000 + round, 0x0a03_0000 + round);
        let (udp_port, tcp_port) = (next_port, next_port + 1);
        next_port += 2;
        let mut ps: Vec<Vec<u8>> = Vec::new();
        let filler = |ps: &mut Vec<Vec<u8>>, n: u32| {
            let at = ps.len() as u32;
            ps.extend((at..at + n).map(|j| established(round, j)));
        };
        let first = round % 3;
        filler(&mut ps, first);
        ps.push(udp(new_udp, 7000, SRV[0], 80, true));
        filler(&mut ps, 9);
        ps.push(tcp(new_tcp, 7001, SRV[0], 80, 0x02, 0));
        filler(&mut ps, 9);
        ps.push(udp(new_udp, 7000, SRV[0], 80, round.is_multiple_of(2)));
        ps.push(udp(srv, 80, PUB, udp_port, true));
        filler(&mut ps, 9);
        ps.push(tcp(srv, 80, PUB, tcp_port, 0x12, 0));
        ps.push(tcp(new_tcp, 7001, SRV[0], 80, 0x10, 0));
        ps.push(tcp(new_tcp, 7001, SRV[0], 80, 0x18, 20));
        let rest = 64 - ps.len() as u32;
        filler(&mut ps, rest);
        assert_eq!(ps.len(), 64);
        for r in [&mut fast, &mut slow] {
            send(r, 0, &ps);
        }
        let outs: Vec<_> = ["o0", "o1"]
            .iter()
            .map(|q| {
                let (a, b) = (drain(&mut fast, q), drain(&mut slow, q));
                assert_eq!(a, b, "round {round}: {q}");
                a
            })
            .collect();
        assert_eq!(
            state(&mut fast, BOTH_PROTOCOLS),
            state(&mut slow, BOTH_PROTOCOLS),
            "round {round}"
        );
        // Both new flows' packets left with their one public port, and
        // the replies to them went back to their clients.
        let from = |proto: u8, port: u16| {
            outs[0]
                .iter()
                .filter(|(p, _, _)| {
                    p[9] == proto && p[12..16] == PUB && u16::from_be_bytes([p[20], p[21]]) == port
                })
                .count()
        };
        assert_eq!(from(17, udp_port), 2, "round {round}: UDP flow's packets");
        assert_eq!(from(6, tcp_port), 3, "round {round}: TCP flow's packets");
        for (client, port) in [(new_udp, 7000u16), (new_tcp, 7001)] {
            let back = outs[1]
                .iter()
                .filter(|(p, _, _)| {
                    p[16..20] == client.to_be_bytes() && u16::from_be_bytes([p[22], p[23]]) == port
                })
                .count();
            assert_eq!(back, 1, "round {round}: reply to {client:#x}");
        }
    }
    assert_eq!(read(&mut fast, "x.size"), (N + 24).to_string());
}

/// An entry replaced without a removal must give up the entries found
/// ahead too. A flow whose reply is its own key (1.0.0.1:1024 to itself,
/// kept as it is) holds that key with its reply entry alone. A new flow
/// under a fixed pattern, rewritten to that same flow, takes the key over
/// (`add_flow` replaces the entry, then destroys the old flow, which has
/// no entry left to remove); the next new flow of the batch takes the
/// freed slot at once. A later packet of the key, found ahead as the old
/// flow's reply, is the first new flow's reply now: looked up with the
/// old entry it would be rewritten by the flow in the reused slot (a
/// debug build stops at the fast path's check of the entry). Over the
/// look-ahead's 4,096 flows, with established flows' packets around.
#[test]
fn an_entry_replaced_within_a_batch_is_looked_up_again() {
    const N: u32 = 4_200;
    let decl =
        "IPRewriter(keep 0 1, pattern 1.0.0.1 1024 - - 0 1, UDP_GUARANTEE 0, REAP_INTERVAL 3600)";
    let mut fast = router(decl, true);
    let mut slow = router(decl, false);
    let public = u32::from_be_bytes(PUB);
    let established = |i: u32| udp(0x0a01_0000 + (i % N), 5000, SRV[0], 53, true);
    for k in 0..(N / 32 + 1) {
        let ps: Vec<Vec<u8>> = (k * 32..(k + 1) * 32).map(established).collect();
        for r in [&mut fast, &mut slow] {
            send(r, 0, &ps);
        }
    }
    let own_reply = udp(public, 1024, PUB, 1024, true);
    for r in [&mut fast, &mut slow] {
        send(r, 0, &[own_reply.clone(), established(0)]);
    }
    same_out(&mut fast, &mut slow, decl, 0, &["o0"]);
    assert_eq!(read(&mut fast, "x.size"), (N + 1).to_string());
    let (x, y) = (0x0a05_0001u32, 0x0a05_0002u32);
    let mut ps: Vec<Vec<u8>> = (0..8).map(|j| established(j * 97)).collect();
    // X is rewritten to 1.0.0.1:1024 -> 1.0.0.1:1024: its reply key is
    // the self-replying flow's key. Y, rewritten to 1.0.0.1:1024 ->
    // 1.0.0.1:80, takes the slot X's arrival freed.
    ps.push(udp(x, 7000, PUB, 1024, true));
    ps.push(udp(y, 7001, PUB, 80, true));
    ps.extend((8..16).map(|j| established(j * 97)));
    ps.push(own_reply.clone());
    ps.extend((16..24).map(|j| established(j * 97)));
    for r in [&mut fast, &mut slow] {
        send(r, 1, &ps);
    }
    let (a, b) = (drain(&mut fast, "o1"), drain(&mut slow, "o1"));
    assert_eq!(a, b, "o1");
    // The key's packet went back to X as its reply.
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].0[16..20], x.to_be_bytes());
    assert_eq!(u16::from_be_bytes([a[0].0[22], a[0].0[23]]), 7000);
    same_out(&mut fast, &mut slow, decl, 1, &["o0"]);
    assert_eq!(read(&mut fast, "x.size"), (N + 2).to_string());
}

/// The fast path refreshes a guaranteed flow from the guarantee its map
/// was configured with; when that is shorter than the one the flow had
/// (a hot swap to a shorter TCP_GUARANTEE), the flow's expiry goes down
/// and its place in the guaranteed heap must follow. Here flow A, made
/// after B under a 100 s guarantee, is refreshed under a 5 s one: once
/// that has passed, A is the flow a new one over the capacity replaces
/// (B is still guaranteed). Were A's heap key left at its old expiry,
/// behind B's, A would stay guaranteed and the new flow be refused.
#[test]
fn a_shorter_guarantee_after_a_hot_swap_lowers_the_flow_in_its_heap() {
    let conf = |guarantee: u32| {
        format!(
            "x :: IPRewriter(pattern 1.0.0.1 1024-1031# - - 0 1, drop, TCP_GUARANTEE {guarantee}, MAPPING_CAPACITY 2); Idle -> [0]x; Idle -> [1]x; x[0] -> o0 :: Queue(1000) -> Discard; x[1] -> o1 :: Queue(1000) -> Discard;"
        )
    };
    let syn = |sport: u16, flags: u8| {
        let mut seg = Vec::new();
        seg.extend_from_slice(&sport.to_be_bytes());
        seg.extend_from_slice(&80u16.to_be_bytes());
        seg.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        l4_checksum(IN[0], SRV[0], 6, &mut seg, 16);
        ipv4_packet(IN[0], SRV[0], 6, 64, 0, &[], &seg)
    };
    let send = |r: &mut Router, bytes: &[u8]| {
        let mut p = Packet::from_slice(bytes);
        p.set_network_header(0, 20);
        let mut b = Batch::new();
        b.push(p);
        let x = r.find_element("x").unwrap();
        r.inject(x, 0, b);
    };
    let advance = |r: &mut Router, secs: i64| {
        let now = r.clock().now();
        r.clock()
            .advance_to(now + Timestamp::from_sec_nsec(secs, 0));
    };
    let mut tables = Vec::new();
    for fast in [true, false] {
        let opts = RouterOptions {
            simtime: Some(DEFAULT_SIMTIME_START),
            hotswap: true,
            ..Default::default()
        };
        let mut r = from_config_with(&conf(100), &opts);
        send(&mut r, &syn(5000, 0x02)); // B
        advance(&mut r, 30);
        send(&mut r, &syn(5001, 0x02)); // A
        r.hotswap(&conf(5)).unwrap();
        r.with_element::<Rewriter, _>("x", |e| e.set_fast_path(fast))
            .expect("x is a rewriter");
        send(&mut r, &syn(5001, 0x10)); // A, established
        advance(&mut r, 10);
        send(&mut r, &syn(5002, 0x02)); // C, over the capacity
        assert_eq!(drain(&mut r, "o0").len(), 4, "fast path {fast}");
        assert_eq!(read(&mut r, "x.mapping_failures"), "0", "fast path {fast}");
        let table = read(&mut r, "x.tcp_table");
        assert!(
            table.contains("(10.0.0.4, 5000,") && table.contains("(10.0.0.4, 5002,"),
            "fast path {fast}: {table}"
        );
        assert!(
            !table.contains("(10.0.0.4, 5001,"),
            "fast path {fast}: {table}"
        );
        tables.push(table);
    }
    assert_eq!(tables[0], tables[1]);
}
