//! Steady state allocates nothing per packet: after a warm-up, forwarding
//! many more packets through sources, Null chains, a Queue, Unqueue, Tee,
//! Counter and Discard, and through the IP forwarding path (Classifier,
//! CheckIPHeader, route lookup, DecIPTTL, EtherEncap), performs zero heap
//! allocations.

use rclick_core::StopReason;
use rclick_elements::testing::{build, spec};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// Runs `r` 2,000 iterations to warm up, then `iterations` more, counting
/// heap allocations in the second run; returns the handler `counter` (a
/// packet count) before and after the second run, and the allocations.
fn warm_then_measure(
    r: &mut rclick_core::Router,
    counter: &str,
    iterations: u64,
) -> (u64, u64, u64) {
    let count = |r: &mut rclick_core::Router| -> u64 {
        r.read_handler(counter, None).unwrap().parse().unwrap()
    };
    assert_eq!(r.run_limited(2_000), StopReason::Limit);
    let before = count(r);
    let a0 = allocations();
    assert_eq!(r.run_limited(iterations), StopReason::Limit);
    let a1 = allocations();
    (before, count(r), a1 - a0)
}

fn steady_state_allocations(burst: usize) -> (u64, u64) {
    let src_cfg = format!("BURST {burst}");
    let mut elems = vec![("src", "InfiniteSource", src_cfg.as_str())];
    let names: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
    for n in &names {
        elems.push((n.as_str(), "Null", ""));
    }
    elems.extend([
        ("t", "Tee", "2"),
        ("q", "Queue", "4096"),
        ("u", "Unqueue", "BURST 64"),
        ("c", "Counter", ""),
        ("d", "Discard", ""),
        ("d2", "Discard", ""),
    ]);
    let mut conns: Vec<(usize, usize, usize, usize)> = (0..8).map(|i| (i, 0, i + 1, 0)).collect();
    let t = 9;
    conns.extend([
        (8, 0, t, 0),
        (t, 0, t + 1, 0),
        (t, 1, t + 5, 0),
        (t + 1, 0, t + 2, 0),
        (t + 2, 0, t + 3, 0),
        (t + 3, 0, t + 4, 0),
    ]);
    let mut r = build(spec(&elems, &conns));
    let (before_count, after_count, allocs) = warm_then_measure(&mut r, "c.count", 4_000);
    (allocs, after_count - before_count)
}

#[test]
fn no_allocation_per_packet_in_steady_state() {
    for burst in [1, 32] {
        let (allocs, packets) = steady_state_allocations(burst);
        assert!(
            packets > 50_000,
            "burst {burst}: only {packets} packets forwarded"
        );
        assert_eq!(
            allocs, 0,
            "burst {burst}: {allocs} allocations while forwarding {packets} packets"
        );
    }
}

/// The single-packet path (issue 21): at Click's default BURST 1 every
/// task run makes one packet and one batch, and the sink frees both. In
/// steady state all of it comes from, and goes back to, the thread's
/// pools. Also with a pulled sink, and at BURST 32.
#[test]
fn source_to_sink_allocates_nothing_per_packet() {
    for (config, burst) in [
        ("src :: InfiniteSource(BURST 1) -> d :: Discard;", 1),
        ("src :: InfiniteSource(BURST 32) -> d :: Discard;", 32),
        (
            "src :: InfiniteSource(BURST 1) -> Queue(64) -> d :: Discard;",
            1,
        ),
        // A straight chain of one-packet kinds (action, observe, filter)
        // that the dispatcher runs without handoffs between them.
        (
            "src :: InfiniteSource(BURST 1) -> Null -> Paint(3) -> Counter \
             -> CheckLength(2000) -> Null -> d :: Discard;",
            1,
        ),
    ] {
        let mut r = rclick_elements::testing::from_config(config);
        let (before, after, allocs) = warm_then_measure(&mut r, "d.count", 10_000);
        assert!(
            after - before >= 2_000 * burst,
            "{config}: only {} packets discarded",
            after - before
        );
        assert_eq!(
            allocs,
            0,
            "{config}: {} allocations while discarding {} packets",
            allocs,
            after - before
        );
    }
}

/// An Ethernet/IPv4/UDP frame from 10.0.0.2 to 10.0.1.5, TTL 64, with a
/// valid header checksum, as a Click `\<hex>` data string.
fn frame() -> String {
    let mut ip = vec![
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 1, 5,
    ];
    let c = rclick_core::wire::checksum::checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x04, 0x00, 0x00, 0x35, 0x00, 0x1a, 0x00, 0x00]);
    f.resize(14 + 46, 0);
    let hex: String = f.iter().map(|b| format!("{b:02x}")).collect();
    format!("\\<{hex}>")
}

/// At BURST 32, and at BURST 1 (issue 21: Click's default, where every
/// element sees batches of one and the source and sink take their
/// one-packet paths).
#[test]
fn no_allocation_on_the_ip_forwarding_path() {
    for burst in [32, 1] {
        ip_forwarding_path_allocates_nothing(burst);
    }
}

fn ip_forwarding_path_allocates_nothing(burst: usize) {
    let frame = frame();
    let text = format!(
        "src :: InfiniteSource(DATA {frame}, BURST {burst})
           -> cl :: Classifier(12/0800, -)
           -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
           -> rt :: RadixIPLookup(10.0.1.0/24 0, 0.0.0.0/0 10.0.0.1 1)
           -> dt :: DecIPTTL -> EtherEncap(0x0800, 00:00:00:00:00:01, 00:00:00:00:00:02)
           -> c :: Counter -> Discard;
         cl[1] -> Discard; rt[1] -> Discard; dt[1] -> Discard;"
    );
    let mut r = rclick_elements::testing::from_config(&text);
    let (before, after, allocs) = warm_then_measure(&mut r, "c.count", 4_000);
    assert!(
        before > 0,
        "nothing reached the counter: the frame is not forwarded"
    );
    assert!(
        after - before >= 3_000 * burst as u64,
        "BURST {burst}: only {} packets forwarded",
        after - before
    );
    assert_eq!(
        allocs,
        0,
        "BURST {burst}: {} allocations while forwarding {} packets",
        allocs,
        after - before
    );
}

/// Small packets take small buffers (issue 13: a queued 60-byte packet
/// held a 2 KB buffer, about 2.2 KB in all): memory per queued packet,
/// measured, for a minimum-size frame and a full-size one.
fn bytes_per_queued_packet(len: usize) -> i64 {
    let n = 10_000;
    let data = format!("\\<{}>", "00".repeat(len));
    let mut r = rclick_elements::testing::from_config(&format!(
        "InfiniteSource(DATA {data}, LIMIT {n}, BURST 100) -> q :: Queue({n}) -> Idle;"
    ));
    let before = counting_alloc::live_bytes();
    r.run_limited(1_000);
    let after = counting_alloc::live_bytes();
    assert_eq!(r.read_handler("q.length", None).unwrap(), n.to_string());
    (after - before) / n as i64
}

#[test]
fn a_queued_small_packet_holds_a_small_buffer() {
    let small = bytes_per_queued_packet(60);
    let large = bytes_per_queued_packet(1500);
    println!("bytes per queued packet: 60-byte frame {small}, 1500-byte frame {large}");
    assert!(small < 512, "a 60-byte packet costs {small} bytes");
    assert!(large > 1500, "a 1500-byte packet costs only {large} bytes?");
}

/// Small and full-size buffers come from their own pools, and a small
/// packet grown past its buffer moves to a full-size one: in steady
/// state neither allocates.
#[test]
fn small_and_growing_packets_allocate_nothing_in_steady_state() {
    use rclick_core::Packet;
    let cycle = || {
        let mut held = Vec::with_capacity(256);
        for i in 0..256 {
            let mut p = Packet::from_slice(&[i as u8; 60]);
            if i % 2 == 0 {
                let tail = p.put(1000).expect("room");
                tail.fill(7);
                assert_eq!(p.len(), 1060);
                assert_eq!(p.data()[59], i as u8);
            }
            held.push(p);
        }
        drop(held);
    };
    cycle();
    let a0 = allocations();
    for _ in 0..100 {
        cycle();
    }
    let a1 = allocations();
    // The Vec of each cycle is one allocation.
    assert_eq!(a1 - a0, 100, "{} allocations", a1 - a0);
}

/// An Ethernet/IPv4 frame of protocol `proto` (UDP or TCP) from
/// 10.0.0.2:1024 to 10.0.1.5:53, as a Click `\<hex>` data string.
fn transport_frame(proto: u8) -> String {
    let l4_len: u16 = if proto == 6 { 20 } else { 8 };
    let total = 20 + l4_len + 6;
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0, 10, 0, 0, 2, 10, 0, 1, 5,
    ];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    let c = rclick_core::wire::checksum::checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0x04, 0x00, 0x00, 0x35]);
    if proto == 6 {
        // Sequence and acknowledgement numbers, data offset 5, ACK, a
        // window, a checksum (any: it is updated, not checked).
        f.extend_from_slice(&[
            0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x10, 0xff, 0xff, 0x12, 0x34, 0, 0,
        ]);
    } else {
        f.extend_from_slice(&[0x00, 0x0e, 0x12, 0x34]);
    }
    f.resize(14 + usize::from(total), 0);
    let hex: String = f.iter().map(|b| format!("{b:02x}")).collect();
    format!("\\<{hex}>")
}

/// IPRewriter's established flows (its fast path and flow map), outbound
/// and back in as replies through IPMirror, for UDP and TCP, at BURST 1
/// and 32: no allocation per packet once the flow exists.
#[test]
fn no_allocation_on_the_rewriter_fast_path() {
    for proto in [17u8, 6] {
        for burst in [1usize, 32] {
            let frame = transport_frame(proto);
            let text = format!(
                "src :: InfiniteSource(DATA {frame}, BURST {burst})
                   -> Strip(14) -> MarkIPHeader
                   -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535 - - 0 1, drop);
                 rw[0] -> IPMirror -> [1]rw;
                 rw[1] -> c :: Counter -> Discard;"
            );
            let mut r = rclick_elements::testing::from_config(&text);
            let (before, after, allocs) = warm_then_measure(&mut r, "c.count", 4_000);
            assert!(before > 0, "proto {proto}: no reply came back out");
            assert!(
                after - before >= 3_000 * burst as u64,
                "proto {proto} BURST {burst}: only {} replies",
                after - before
            );
            assert_eq!(
                allocs,
                0,
                "proto {proto} BURST {burst}: {} allocations for {} packets",
                allocs,
                after - before
            );
        }
    }
}

/// IPRewriter with 5,000 established flows, where a batch's lookups are
/// made ahead of its processing (`Rewriter::look_ahead`, from 4,096
/// flows): the frames of a trace circulate through the rewriter both
/// ways at BURST 32, without an allocation per packet.
#[test]
fn no_allocation_when_the_rewriter_looks_a_batch_up_ahead() {
    const FLOWS: u32 = 5_000;
    let dir = std::env::temp_dir().join(format!("rclick-noalloc-nat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("flows.pcap");
    // A little-endian pcap of Ethernet frames, one UDP packet per flow.
    let mut pcap = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65_535, 1] {
        pcap.extend_from_slice(&v.to_le_bytes());
    }
    for i in 0..FLOWS {
        let mut ip = vec![0x45, 0, 0, 34, 0, 0, 0, 0, 64, 17, 0, 0];
        ip.extend_from_slice(&(0x0a00_0001 + i).to_be_bytes());
        ip.extend_from_slice(&[172, 16, 0, 1]);
        let c = !rclick_core::wire::checksum::sum(&ip, 0) as u16;
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(&[0x13, 0x88, 0, 53, 0, 14, 0, 0, 1, 2, 3, 4, 5, 6]);
        let mut frame = vec![0, 0, 0, 0xc0, 0, 1, 0, 0, 0x0a, 0, 0, 2, 8, 0];
        frame.extend_from_slice(&ip);
        for v in [1u32, i, frame.len() as u32, frame.len() as u32] {
            pcap.extend_from_slice(&v.to_le_bytes());
        }
        pcap.extend_from_slice(&frame);
    }
    std::fs::write(&path, pcap).unwrap();
    let text = format!(
        "q :: Queue(8192) -> Unqueue(BURST 32) -> c :: Counter
           -> [0]rw :: IPRewriter(keep 0 1, keep 1 0);
         rw[0] -> IPMirror -> [1]rw;
         rw[1] -> IPMirror -> q;
         FromDump({}, BURST 64) -> Strip(14) -> MarkIPHeader -> q;",
        path.display()
    );
    let mut r = rclick_elements::testing::from_config(&text);
    assert_eq!(r.run_limited(2_000), StopReason::Limit);
    let flows: u32 = r
        .read_handler("rw.nmappings", None)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(flows, FLOWS, "the trace did not load");
    let (before, after, allocs) = warm_then_measure(&mut r, "c.count", 4_000);
    assert!(
        after - before >= 100_000,
        "only {} packets went round",
        after - before
    );
    assert_eq!(
        allocs,
        0,
        "{} allocations for {} packets",
        allocs,
        after - before
    );
}
