//! The flow domain (Router Plugins): six-tuple filters and their
//! most-specific order, the best-match DAG against brute force (property
//! tests and ClassBench sets), the flow table (pools, recycling, timeouts,
//! annotations), FlowGate, FlowCounter and FlowDRRQueue.

use proptest::prelude::*;
use rclick_core::{Packet, StopReason};
use rclick_elements::flow::bestmatch::BestMatch;
use rclick_elements::flow::sixtuple::{brute_force, mask, parse_classbench, Key, Spec};
use rclick_elements::flow::table::Table;
use rclick_elements::testing::{self, ipv4_packet, Rng};

// ---- filters ----

#[test]
fn spec_parse_and_print() {
    let s = Spec::parse("dport 80 src 10.1.2.3/8 proto tcp sport 1024-65535 iif 2").unwrap();
    assert_eq!(
        s.to_string(),
        "src 10.0.0.0/8 proto tcp sport 1024-65535 dport 80 iif 2"
    );
    assert_eq!(Spec::parse(&s.to_string()).unwrap(), s);
    for any in ["-", "any", "all", "src 0.0.0.0/0 sport 0-65535"] {
        assert_eq!(Spec::parse(any).unwrap(), Spec::ANY, "{any}");
        assert_eq!(Spec::parse(any).unwrap().to_string(), "-");
    }
    assert_eq!(
        Spec::parse("dst 1.2.3.4 proto 47").unwrap().to_string(),
        "dst 1.2.3.4/32 proto gre"
    );
    assert_eq!(Spec::parse("proto 200").unwrap().to_string(), "proto 200");
    for bad in [
        "src",
        "src 1.2.3.4/33",
        "src 1.2.3",
        "proto tcpx",
        "proto 256",
        "sport 5-4",
        "sport 70000",
        "dport 1 dport 2",
        "iif 300",
        "port 80",
        "- src 1.2.3.4",
        "src ::1",
        "dst fe80::1/64",
        "sport 99999999999999999999",
        "dport 1-99999999999999999999",
        "src 1.2.3.4/-1",
        "src 1.2.3.4/8/8",
        "src 1.2.3.4/",
        "sport -5",
        "sport 5-",
        "sport 1-2-3",
        "iif -1",
        "proto",
    ] {
        assert!(Spec::parse(bad).is_err(), "{bad} should fail");
    }
    for bad in [
        "@",
        "@1.2.3.4/40 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF",
        "@1.2.3.4/8 0.0.0.0/0 9 : 8 0 : 65535 0x06/0xFF",
        "@1.2.3.4/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06",
        "@1.2.3.4/8 0.0.0.0/0 0 : 65535 0 : 65536 0x06/0xFF",
        "@1.2.3.4/8 0.0.0.0/0 0 : 65535 0 : 65535 0x/0xFF",
    ] {
        assert!(parse_classbench(bad).is_err(), "{bad} should fail");
    }
}

#[test]
fn ambiguity_goes_to_the_earlier_field() {
    // A is more specific in the source, B in the destination port: A wins.
    let a = Spec::parse("src 10.0.0.0/16").unwrap();
    let b = Spec::parse("src 10.0.0.0/8 dst 192.168.1.0/24 proto tcp dport 80").unwrap();
    let k = Key {
        src: 0x0a00_0001,
        dst: 0xc0a8_0105,
        proto: 6,
        sport: 1000,
        dport: 80,
        iif: 0,
    };
    let filters = vec![b, a];
    assert_eq!(brute_force(&filters, &k), Some(1));
    assert_eq!(BestMatch::new(filters.clone()).lookup(&k), Some(1));
    // Equal up to the ports: the narrower source range wins over a given
    // destination port.
    let c = Spec::parse("sport 1000-1001").unwrap();
    let d = Spec::parse("sport 0-2000 dport 80").unwrap();
    assert_eq!(BestMatch::new(vec![d, c]).lookup(&k), Some(1));
    // Equal width overlapping ranges: the first installed.
    let e = Spec::parse("sport 999-1000").unwrap();
    let f = Spec::parse("sport 1000-1001").unwrap();
    assert_eq!(BestMatch::new(vec![e, f]).lookup(&k), Some(0));
    assert_eq!(BestMatch::new(vec![f, e]).lookup(&k), Some(0));
    assert_eq!(brute_force(&[f, e], &k), Some(0));
}

fn arb_spec() -> impl Strategy<Value = Spec> {
    // Few distinct values so that filters overlap and nest.
    let addr = (
        0u32..4,
        prop::sample::select(vec![0u8, 1, 2, 8, 16, 24, 31, 32]),
    )
        .prop_map(|(v, l)| ((v * 0x4000_0001) & mask(l), l));
    let range = prop_oneof![
        Just((0u16, 65535u16)),
        (0u16..6).prop_map(|p| (p, p)),
        (0u16..6, 0u16..6).prop_map(|(a, b)| (a.min(b), a.max(b))),
    ];
    (
        addr.clone(),
        addr,
        prop::option::of(prop::sample::select(vec![6u8, 17])),
        range.clone(),
        range,
        prop::option::of(0u8..3),
    )
        .prop_map(
            |((src, src_len), (dst, dst_len), proto, sport, dport, iif)| Spec {
                src,
                src_len,
                dst,
                dst_len,
                proto,
                sport,
                dport,
                iif,
            },
        )
}

fn arb_key() -> impl Strategy<Value = Key> {
    let addr = prop_oneof![
        (0u32..4).prop_map(|v| v * 0x4000_0001),
        (0u32..4, any::<u32>()).prop_map(|(v, r)| (v * 0x4000_0001) ^ (r & 0xff)),
        any::<u32>(),
    ];
    (
        addr.clone(),
        addr,
        prop::sample::select(vec![6u8, 17, 1]),
        0u16..7,
        0u16..7,
        0u8..4,
    )
        .prop_map(|(src, dst, proto, sport, dport, iif)| Key {
            src,
            dst,
            proto,
            sport,
            dport,
            iif,
        })
}

fn dedup(v: Vec<Spec>) -> Vec<Spec> {
    let mut out: Vec<Spec> = Vec::new();
    for s in v {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn dag_equals_brute_force(
        filters in prop::collection::vec(arb_spec(), 0..60),
        keys in prop::collection::vec(arb_key(), 1..60),
    ) {
        let filters = dedup(filters);
        let dag = BestMatch::new(filters.clone());
        for k in &keys {
            prop_assert_eq!(dag.lookup(k), brute_force(&filters, k), "key {}", k);
        }
    }
}

/// A key inside filter `f`, random within each field.
fn key_in(f: &Spec, rng: &mut Rng) -> Key {
    let r32 = rng.next_u64() as u32;
    let port = |(lo, hi): (u16, u16), rng: &mut Rng| lo + rng.below(u64::from(hi - lo) + 1) as u16;
    Key {
        src: f.src | (r32 & !mask(f.src_len)),
        dst: f.dst | ((rng.next_u64() as u32) & !mask(f.dst_len)),
        proto: f.proto.unwrap_or(rng.below(256) as u8),
        sport: port(f.sport, rng),
        dport: port(f.dport, rng),
        iif: 0,
    }
}

fn classbench(name: &str) -> Option<Vec<Spec>> {
    let dir = std::env::var("RCLICK_CLASSBENCH").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/classbench"
        )
        .into()
    });
    match std::fs::read_to_string(format!("{dir}/{name}")) {
        Ok(t) => Some(parse_classbench(&t).expect("classbench parses")),
        Err(e) => {
            println!("SKIP PART: {name}: no ClassBench set in {dir} ({e})");
            None
        }
    }
}

#[test]
fn dag_equals_brute_force_on_classbench() {
    for (name, packets) in [
        ("acl1_1k", 4000),
        ("fw1_1k", 4000),
        ("ipc1_1k", 4000),
        ("acl1_10k", 600),
        ("fw1_10k", 600),
    ] {
        let Some(filters) = classbench(name) else {
            return;
        };
        assert!(filters.len() > 500, "{name}: {} filters", filters.len());
        let dag = BestMatch::new(filters.clone());
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut matched = 0;
        for i in 0..packets {
            let k = if i % 4 == 3 {
                key_in(&Spec::ANY, &mut rng)
            } else {
                let f = &filters[rng.below(filters.len() as u64) as usize];
                key_in(f, &mut rng)
            };
            let want = brute_force(&filters, &k);
            matched += want.is_some() as usize;
            assert_eq!(dag.lookup(&k), want, "{name}: key {k}");
        }
        assert!(matched >= packets * 3 / 4, "{name}: only {matched} matched");
    }
}

// ---- the flow table ----

fn packet(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16, len: usize) -> Packet {
    let mut payload = vec![0u8; len.max(8)];
    payload[..2].copy_from_slice(&sport.to_be_bytes());
    payload[2..4].copy_from_slice(&dport.to_be_bytes());
    Packet::from_slice(&ipv4_packet(src, dst, proto, 64, 0, &[], &payload))
}

#[test]
fn table_finds_marks_and_recycles() {
    let mut t = Table::new(3, 0);
    let mut p = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 20);
    let a = t.lookup(&mut p, 0).unwrap();
    assert_eq!((t.misses, t.hits, t.anno_hits), (1, 0, 0));
    // Same packet again: found by its annotation, no hashing.
    assert_eq!(t.lookup(&mut p, 1).unwrap(), a);
    assert_eq!((t.hits, t.anno_hits), (0, 1));
    // A fresh packet of the same flow: found by hashing.
    let mut q = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 40);
    assert_eq!(t.lookup(&mut q, 2).unwrap(), a);
    assert_eq!((t.hits, t.anno_hits), (1, 1));
    // Two more flows fill the table; a fourth recycles the least recently
    // used (flow a was used last at 2; b at 3, c at 4: a goes).
    for (i, port) in [11u16, 12].iter().enumerate() {
        let mut r = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, *port, 80, 20);
        t.lookup(&mut r, 3 + i as i64).unwrap();
    }
    assert_eq!(t.len(), 3);
    let mut d = packet([9, 0, 0, 1], [2, 0, 0, 2], 17, 1, 2, 20);
    let di = t.lookup(&mut d, 10).unwrap();
    assert_eq!(di, a, "the oldest record is reused");
    assert_eq!((t.len(), t.recycled), (3, 1));
    // p's annotation names a recycled record: its stamp no longer
    // matches, so the flow is looked up again (and recycles the oldest).
    let before = t.anno_hits;
    let pi = t.lookup(&mut p, 11).unwrap();
    assert_eq!(t.anno_hits, before);
    assert_eq!(t.record(pi).key, Key::of(&p).unwrap());
    assert_eq!(t.recycled, 2);
}

/// A table's observable state: its counters and flows.
fn table_state(t: &Table) -> (Vec<u64>, String) {
    (
        vec![
            t.hits,
            t.misses,
            t.anno_hits,
            t.recycled,
            t.expired,
            t.bad,
            t.len() as u64,
        ],
        t.listing(1 << 40),
    )
}

/// Pairs of equal packets of four flows (one not IP), for two tables,
/// each arriving unmarked, with a copy of an earlier packet's mark from
/// its own table (stamps are unique across tables), or with garbage.
fn batch_packets(spec: &[(u8, u8)], marks: &[([u8; 8], [u8; 8])]) -> (Vec<Packet>, Vec<Packet>) {
    let flow = rclick_elements::flow::table::FLOW_ANNO;
    spec.iter()
        .map(|&(f, anno)| {
            let make = || match f % 4 {
                3 => Packet::from_slice(&[0u8; 30]),
                f => packet([10, 0, 0, f], [2, 0, 0, 2], 17, 7, 9, 8),
            };
            let (mut p, mut q) = (make(), make());
            match anno % 3 {
                1 if !marks.is_empty() => {
                    let (m, n) = marks[anno as usize % marks.len()];
                    p.set_anno_bytes(flow, &m);
                    q.set_anno_bytes(flow, &n);
                }
                2 => {
                    p.set_anno_bytes(flow, &[anno, 0, 0, 0, 1, 0, 0, 0]);
                    q.set_anno_bytes(flow, &[anno, 0, 0, 0, 1, 0, 0, 0]);
                }
                _ => {}
            }
            (p, q)
        })
        .unzip()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The batch shortcuts (the previous packet's answer for a train of
    /// one flow; one lookup for a batch of one flow) leave the table,
    /// the packets' marks and the answers exactly as a lookup per packet.
    #[test]
    fn batch_lookups_equal_lookups_per_packet(
        batches in prop::collection::vec(
            prop::collection::vec((0u8..4, 0u8..6), 1..12), 1..8),
        uniform in any::<bool>(),
    ) {
        let flow = rclick_elements::flow::table::FLOW_ANNO;
        let (mut one, mut batched) = (Table::new(3, 5), Table::new(3, 5));
        let mut marks: Vec<([u8; 8], [u8; 8])> = Vec::new();
        for (now, spec) in batches.iter().enumerate() {
            let now = now as i64 * 3;
            let spec: Vec<(u8, u8)> = if uniform {
                vec![spec[0]; spec.len()]
            } else {
                spec.clone()
            };
            let (mut a, mut b) = batch_packets(&spec, &marks);
            let want: Vec<Option<u32>> = a.iter_mut().map(|p| one.lookup(p, now).ok()).collect();
            let got: Vec<Option<u32>> = if uniform && spec[0].0 % 4 != 3 {
                let mut batch = rclick_core::Batch::new();
                for p in b.drain(..) {
                    batch.push(p);
                }
                let idx = batched.lookup_one_flow_batch(&mut batch, now);
                prop_assert!(idx.is_some(), "a batch of one flow");
                b = batch.into_iter().collect();
                vec![idx; b.len()]
            } else {
                let mut last = rclick_elements::flow::table::LastLookup::default();
                b.iter_mut().map(|p| batched.lookup_in_batch(p, now, &mut last).ok().map(|r| r.0)).collect()
            };
            prop_assert_eq!(want, got);
            for (p, q) in a.iter().zip(&b) {
                let (m, n) = (p.anno_bytes::<8>(flow), q.anno_bytes::<8>(flow));
                // The same record index; stamps differ between tables.
                prop_assert_eq!(&m[..4], &n[..4]);
                marks.push((m, n));
            }
            prop_assert_eq!(table_state(&one), table_state(&batched));
        }
    }
}

/// Three packets of one flow arriving with an annotation that names, by
/// index and stamp, the record their first packet's lookup creates (an
/// annotation set by something else, or left from before the stamps
/// wrapped): looked up one by one, the first starts the record and the
/// other two are then found by the annotation (`anno_hits`, not counted
/// in the record). The batch shortcuts must give the same.
#[test]
fn an_annotation_naming_the_new_record_is_an_anno_hit_after_it() {
    let flow = rclick_elements::flow::table::FLOW_ANNO;
    let make = || packet([10, 0, 0, 1], [2, 0, 0, 2], 17, 7, 9, 8);
    // Stamps are process-wide and other tests allocate them concurrently:
    // predict the next one, and retry when another thread took it first.
    let run = |how: usize| -> Option<(Vec<u64>, String)> {
        let mut probe = Table::new(1, 0);
        let i = probe.find_or_insert(&Key::default(), 0);
        let next = probe.record(i).stamp.checked_add(1)?;
        let mut t = Table::new(4, 0);
        let mut anno = [0u8; 8];
        anno[..4].copy_from_slice(&1u32.to_ne_bytes());
        anno[4..].copy_from_slice(&next.to_ne_bytes());
        let mut ps: Vec<Packet> = (0..3)
            .map(|_| {
                let mut p = make();
                p.set_anno_bytes(flow, &anno);
                p
            })
            .collect();
        match how {
            0 => {
                for p in &mut ps {
                    t.lookup(p, 0).ok()?;
                }
            }
            1 => {
                let mut last = rclick_elements::flow::table::LastLookup::default();
                for p in &mut ps {
                    t.lookup_in_batch(p, 0, &mut last).ok()?;
                }
            }
            _ => {
                let mut batch = rclick_core::Batch::new();
                for p in ps.drain(..) {
                    batch.push(p);
                }
                t.lookup_one_flow_batch(&mut batch, 0)?;
                ps = batch.into_iter().collect();
            }
        }
        // The prediction held: the new record has the annotation's stamp.
        if t.record(0).stamp != next {
            return None;
        }
        for p in &ps {
            assert_eq!(p.anno_bytes::<8>(flow), anno, "marks");
        }
        Some(table_state(&t))
    };
    let retry = |how| {
        (0..1000)
            .find_map(|_| run(how))
            .expect("the next stamp predicted")
    };
    let want = retry(0);
    assert_eq!(want.0[..3], [0, 1, 2], "hits, misses, anno_hits one by one");
    assert_eq!(retry(1), want, "lookup_in_batch");
    assert_eq!(retry(2), want, "lookup_one_flow_batch");
}

#[test]
fn a_mixed_batch_is_not_one_flow() {
    let mut t = Table::new(8, 0);
    let mut batch = rclick_core::Batch::new();
    batch.push(packet([10, 0, 0, 1], [2, 0, 0, 2], 17, 7, 9, 8));
    batch.push(packet([10, 0, 0, 1], [2, 0, 0, 2], 17, 7, 10, 8));
    assert_eq!(t.lookup_one_flow_batch(&mut batch, 0), None);
    assert_eq!(table_state(&t).0, vec![0; 7], "nothing counted");
    let mut empty = rclick_core::Batch::new();
    assert_eq!(t.lookup_one_flow_batch(&mut empty, 0), None);
}

#[test]
fn table_pools_grow_to_capacity() {
    let mut t = Table::new(3000, 0);
    for i in 0..5000u32 {
        let b = i.to_be_bytes();
        let mut p = packet([10, b[1], b[2], b[3]], [2, 0, 0, 2], 17, 1, 2, 8);
        t.lookup(&mut p, i64::from(i)).unwrap();
        let want = match i + 1 {
            n if n <= 1024 => 1024,
            n if n <= 2048 => 2048,
            _ => 3000,
        };
        assert!(t.allocated() <= want);
    }
    assert_eq!((t.len(), t.allocated(), t.recycled), (3000, 3000, 2000));
}

#[test]
fn table_timeouts() {
    let s = 1_000_000_000i64;
    let mut t = Table::new(100, 5 * s);
    let slot = t.register_slots(1);
    let mut p = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 20);
    let a = t.lookup(&mut p, 0).unwrap();
    *t.slot_mut(a, slot) = 7;
    let mut q = packet([1, 0, 0, 1], [2, 0, 0, 3], 6, 10, 80, 20);
    t.lookup(&mut q, 3 * s).unwrap();
    // 4 s idle: still there, state kept.
    let mut p2 = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 20);
    assert_eq!(t.lookup(&mut p2, 4 * s).unwrap(), a);
    assert_eq!(t.slot(a, slot), 7);
    // At 8.5 s q (idle since 3 s) has expired, p (since 4 s) not yet; at
    // 10 s p's flow has, and its next packet restarts it with cleared
    // state.
    t.expire(8 * s + s / 2);
    assert_eq!((t.len(), t.expired), (1, 1));
    let mut p3 = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 20);
    let a3 = t.lookup(&mut p3, 10 * s).unwrap();
    assert_eq!(a3, a);
    assert_eq!(t.slot(a, slot), 0, "an expired flow's state is cleared");
    assert_eq!(t.expired, 2);
    assert_eq!(t.record(a).packets, 1);
}

#[test]
fn table_refuses_non_ip() {
    let mut t = Table::new(10, 0);
    let mut p = Packet::from_slice(&[0x60; 40]);
    assert!(t.lookup(&mut p, 0).is_err());
    // TCP with two bytes of ports: truncated.
    let mut q = Packet::from_slice(&ipv4_packet(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        6,
        64,
        0,
        &[],
        &[0, 1],
    ));
    assert!(t.lookup(&mut q, 0).is_err());
    // A later fragment has no ports: keyed with ports 0.
    let mut r = Packet::from_slice(&ipv4_packet(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        6,
        64,
        100,
        &[],
        &[0, 1],
    ));
    assert!(t.lookup(&mut r, 0).is_ok());
    assert_eq!(Key::of(&r).unwrap().sport, 0);
    assert_eq!(t.bad, 2);
}

// ---- elements ----

fn inject(r: &mut rclick_core::Router, elem: &str, p: Packet) {
    let i = r.find_element(elem).expect("element");
    r.inject_packet(i, 0, p);
}

fn read_u64(r: &mut rclick_core::Router, h: &str) -> u64 {
    testing::read(r, h)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{h}"))
}

const GATE: &str = "ft :: FlowTable(CAPACITY 100);
    g :: FlowGate(src 10.0.0.0/8 proto tcp, dport 53, -);
    c0 :: Counter; c1 :: Counter; c2 :: Counter;
    ft -> g; g[0] -> c0 -> Discard; g[1] -> c1 -> Discard; g[2] -> c2 -> Discard;";

#[test]
fn gate_binds_and_caches() {
    let mut r = testing::from_config(GATE);
    let send = |r: &mut rclick_core::Router, src: [u8; 4], proto: u8, dport: u16| {
        inject(
            r,
            "ft",
            packet(src, [192, 168, 1, 1], proto, 999, dport, 20),
        );
    };
    for _ in 0..3 {
        send(&mut r, [10, 0, 0, 1], 6, 53); // src+proto beats dport
        send(&mut r, [11, 0, 0, 1], 17, 53);
        send(&mut r, [11, 0, 0, 1], 17, 54);
    }
    assert_eq!(read_u64(&mut r, "c0.count"), 3);
    assert_eq!(read_u64(&mut r, "c1.count"), 3);
    assert_eq!(read_u64(&mut r, "c2.count"), 3);
    assert_eq!(read_u64(&mut r, "g.lookups"), 3);
    assert_eq!(read_u64(&mut r, "g.cached"), 6);
    assert_eq!(read_u64(&mut r, "ft.size"), 3);
    assert_eq!(testing::read(&mut r, "ft.hit_rate"), "0.666667");
    assert_eq!(
        testing::read(&mut r, "g.filters"),
        "0 src 10.0.0.0/8 proto tcp\n1 dport 53\n2 -\n"
    );
    // A more specific filter for output 1: cached bindings are dropped.
    r.write_handler("g.add_filter", "1 src 10.0.0.1/32")
        .unwrap();
    send(&mut r, [10, 0, 0, 1], 6, 53);
    assert_eq!(read_u64(&mut r, "c1.count"), 4);
    assert_eq!(read_u64(&mut r, "g.lookups"), 4);
    r.write_handler("g.remove_filter", "1 src 10.0.0.1")
        .unwrap();
    send(&mut r, [10, 0, 0, 1], 6, 53);
    assert_eq!(read_u64(&mut r, "c0.count"), 4);
    // Errors.
    assert!(r
        .write_handler("g.remove_filter", "1 src 10.0.0.1")
        .is_err());
    assert!(r.write_handler("g.add_filter", "3 -").is_err());
    assert!(
        r.write_handler("g.add_filter", "1 -").is_err(),
        "same as output 2's"
    );
    assert!(r.write_handler("g.add_filter", "1").is_err());
    assert!(r.write_handler("g.add_filter", "x src 1.2.3.4").is_err());
    assert!(r.write_handler("g.add_filter", "1 sport 9-8").is_err());
    // Remove the wildcard: unmatched packets are dropped and counted.
    r.write_handler("g.remove_filter", "2 any").unwrap();
    send(&mut r, [11, 0, 0, 1], 17, 54);
    assert_eq!(read_u64(&mut r, "g.nomatch"), 1);
    assert_eq!(read_u64(&mut r, "c2.count"), 3);
    // Non-IP.
    inject(&mut r, "ft", Packet::from_slice(&[0u8; 30]));
    assert_eq!(read_u64(&mut r, "g.bad"), 1);
    // Flows listing.
    let flows = testing::read(&mut r, "ft.flows");
    assert_eq!(flows.lines().count(), 3, "{flows}");
    assert!(
        flows.starts_with("11.0.0.1 192.168.1.1 17 999 54 0 4 "),
        "{flows}"
    );
    r.write_handler("ft.clear", "").unwrap();
    assert_eq!(read_u64(&mut r, "ft.size"), 0);
}

/// Batches through a gate (one flow; a mixed train) give the outputs and
/// counts that one packet at a time gives.
#[test]
fn gate_batches_count_as_single_packets() {
    let flows: [([u8; 4], u8, u16); 3] = [
        ([10, 0, 0, 1], 6, 53),
        ([11, 0, 0, 1], 17, 53),
        ([11, 0, 0, 1], 17, 54),
    ];
    let make = |f: usize| {
        packet(
            flows[f].0,
            [192, 168, 1, 1],
            flows[f].1,
            999,
            flows[f].2,
            20,
        )
    };
    // One flow, then a train mixing flows, then the first flow again.
    let batches: [&[usize]; 4] = [&[0; 32], &[1, 1, 2, 2, 2, 0, 1, 1], &[0; 5], &[2]];
    let handlers = [
        "c0.count",
        "c1.count",
        "c2.count",
        "g.lookups",
        "g.cached",
        "ft.size",
    ];
    let mut single = testing::from_config(GATE);
    let mut batched = testing::from_config(GATE);
    for b in batches {
        let mut batch = rclick_core::Batch::new();
        for &f in b {
            inject(&mut single, "ft", make(f));
            batch.push(make(f));
        }
        let ft = batched.find_element("ft").expect("ft");
        batched.inject(ft, 0, batch);
        for h in handlers {
            assert_eq!(read_u64(&mut single, h), read_u64(&mut batched, h), "{h}");
        }
        // Flows with their packet counts, without the idle times (two
        // routers, two clocks).
        let flows = |r: &mut rclick_core::Router| -> Vec<String> {
            testing::read(r, "ft.flows")
                .lines()
                .map(|l| l.rsplit_once(' ').map_or(l, |x| x.0).to_string())
                .collect()
        };
        assert_eq!(flows(&mut single), flows(&mut batched));
    }
    assert_eq!(read_u64(&mut batched, "c0.count"), 38);
    assert_eq!(read_u64(&mut batched, "g.lookups"), 3);
}

/// A gate hashing for itself (TABLE, no FlowTable upstream) at a table
/// too small for the batch's flows: mixed trains with a packet that is
/// not IP, flows matching no filter, two outputs and recycling inside a
/// batch give the outputs and counts of one packet at a time.
#[test]
fn gate_hashing_small_table_batches_count_as_single_packets() {
    const CONF: &str = "ft :: FlowTable(CAPACITY 2, TIMEOUT 0);
        g :: FlowGate(src 10.0.0.0/8 proto tcp, dport 53, TABLE ft);
        Idle -> g;
        g[0] -> c0 :: Counter -> Discard; g[1] -> c1 :: Counter -> Discard;";
    let make = |f: u8| match f {
        // Output 0, output 1, no filter, no filter, not IP.
        0 => packet([10, 0, 0, 1], [2, 0, 0, 2], 6, 7, 80, 8),
        1 => packet([11, 0, 0, 1], [2, 0, 0, 2], 17, 7, 53, 8),
        2 => packet([11, 0, 0, 1], [2, 0, 0, 2], 17, 7, 54, 8),
        3 => packet([12, 0, 0, 1], [2, 0, 0, 2], 1, 0, 0, 8),
        _ => Packet::from_slice(&[0u8; 30]),
    };
    let batches: [&[u8]; 7] = [
        &[0, 0, 1, 1, 4, 1, 0, 2, 2, 0],
        &[2; 6],
        &[0, 1, 2, 3, 0, 1, 2, 3],
        &[3, 3, 4, 3, 3],
        &[1; 4],
        &[4, 4],
        &[0, 2, 0, 2, 2, 0, 0],
    ];
    let handlers = [
        "c0.count",
        "c1.count",
        "g.lookups",
        "g.cached",
        "g.nomatch",
        "g.bad",
        "ft.hits",
        "ft.misses",
        "ft.anno_hits",
        "ft.recycled",
        "ft.size",
    ];
    let mut single = testing::from_config(CONF);
    let mut batched = testing::from_config(CONF);
    for b in batches {
        let mut batch = rclick_core::Batch::new();
        for &f in b {
            inject(&mut single, "g", make(f));
            batch.push(make(f));
        }
        let i = batched.find_element("g").expect("g");
        batched.inject(i, 0, batch);
        for h in handlers {
            assert_eq!(
                read_u64(&mut single, h),
                read_u64(&mut batched, h),
                "{h} after {b:?}"
            );
        }
        let flows = |r: &mut rclick_core::Router| -> Vec<String> {
            testing::read(r, "ft.flows")
                .lines()
                .map(|l| l.rsplit_once(' ').map_or(l, |x| x.0).to_string())
                .collect()
        };
        assert_eq!(flows(&mut single), flows(&mut batched), "after {b:?}");
    }
    assert!(
        read_u64(&mut batched, "ft.recycled") > 0,
        "recycled in batches"
    );
    assert_eq!(read_u64(&mut batched, "g.bad"), 4);
}

#[test]
fn gate_without_table_looks_up_every_packet() {
    let mut r = testing::from_config(
        "Idle -> g :: FlowGate(iif 1, -); g[0] -> c0 :: Counter -> Discard; g[1] -> c1 :: Counter -> Discard;",
    );
    for paint in [1u8, 1, 0] {
        let mut p = packet([1, 2, 3, 4], [5, 6, 7, 8], 1, 0, 0, 20);
        p.set_paint_anno(paint);
        inject(&mut r, "g", p);
    }
    assert_eq!(read_u64(&mut r, "c0.count"), 2);
    assert_eq!(read_u64(&mut r, "c1.count"), 1);
    assert_eq!(read_u64(&mut r, "g.lookups"), 3);
}

#[test]
fn gates_share_the_annotation() {
    // Two gates on one path: the second takes the record from the
    // annotation the first set.
    let mut r = testing::from_config(
        "ft :: FlowTable; g1 :: FlowGate(TABLE ft, -); g2 :: FlowGate(dport 80, -, TABLE ft);
         Idle -> g1 -> g2; g2[0] -> c0 :: Counter -> Discard; g2[1] -> c1 :: Counter -> Discard;",
    );
    for i in 0..4u16 {
        inject(
            &mut r,
            "g1",
            packet([1, 2, 3, 4], [5, 6, 7, 8], 6, 1000 + i % 2, 80, 20),
        );
    }
    assert_eq!(read_u64(&mut r, "c0.count"), 4);
    assert_eq!(read_u64(&mut r, "ft.misses"), 2);
    assert_eq!(read_u64(&mut r, "ft.anno_hits"), 4, "g2 never hashes");
    assert_eq!(read_u64(&mut r, "g2.lookups"), 2);
}

#[test]
fn an_annotation_naming_another_flow_is_not_trusted() {
    // A packet carrying another packet's annotations (copied by an
    // element that builds a packet from another), or whose header was
    // rewritten after it was marked, names a live record of a different
    // flow: the table must not take that record for the packet's own.
    let mut t = Table::new(16, 0);
    let mut p = packet([1, 0, 0, 1], [2, 0, 0, 2], 6, 10, 80, 20);
    let a = t.lookup(&mut p, 0).unwrap();
    let mut q = packet([3, 0, 0, 3], [4, 0, 0, 4], 17, 53, 53, 20);
    q.copy_annotations(&p);
    let b = t.lookup(&mut q, 1).unwrap();
    assert_ne!(a, b);
    assert_eq!(t.record(b).key, Key::of(&q).unwrap());
    assert_eq!((t.misses, t.anno_hits), (2, 0));
    // q is now marked with its own record, which a later lookup trusts.
    assert_eq!(t.lookup(&mut q, 2).unwrap(), b);
    assert_eq!(t.anno_hits, 1);

    // On a path: the destination rewritten between two gates sharing the
    // table; the second gate must bind the packet by its new destination.
    let mut r = testing::from_config(
        "ft :: FlowTable; g1 :: FlowGate(TABLE ft, -); g2 :: FlowGate(dst 10.0.0.9, -, TABLE ft);
         Idle -> g1 -> StoreIPAddress(10.0.0.9, 16) -> g2;
         g2[0] -> c0 :: Counter -> Discard; g2[1] -> c1 :: Counter -> Discard;",
    );
    for _ in 0..2 {
        inject(
            &mut r,
            "g1",
            packet([1, 2, 3, 4], [5, 6, 7, 8], 6, 1000, 80, 20),
        );
    }
    assert_eq!(read_u64(&mut r, "c0.count"), 2);
    assert_eq!(read_u64(&mut r, "c1.count"), 0);
    assert_eq!(read_u64(&mut r, "ft.size"), 2, "the flow before and after");
}

#[test]
fn gate_configuration_errors() {
    let e = testing::config_errors("Idle -> FlowGate(src 1.2.3.4, sport x) -> Discard;");
    assert!(e.contains("filters but only 1 outputs"), "{e}");
    let e = testing::config_errors(
        "Idle -> g :: FlowGate(src 1.2.3.4, sport x); g[0] -> Discard; g[1] -> Discard;",
    );
    assert!(e.contains("argument 2: filter: bad port 'x'"), "{e}");
    let e =
        testing::config_errors("Idle -> g :: FlowGate(-, any); g[0] -> Discard; g[1] -> Discard;");
    assert!(e.contains("same filter"), "{e}");
    let e = testing::config_errors("i :: Idle; i -> g :: FlowGate(-, TABLE i) -> Discard;");
    assert!(e.contains("not a FlowTable"), "{e}");
    let e = testing::config_errors("Idle -> FlowCounter -> Discard;");
    assert!(e.contains("no FlowTable"), "{e}");
    // Empty positional arguments install nothing for their output.
    let mut r = testing::from_config(
        "g :: FlowGate(, dport 1); Idle -> g; g[0] -> Discard; g[1] -> Discard;",
    );
    assert_eq!(testing::read(&mut r, "g.filters"), "1 dport 1\n");
}

#[test]
fn flow_counter_counts_per_flow() {
    let mut r = testing::from_config("ft :: FlowTable -> fc :: FlowCounter -> Discard;");
    for i in 0..5u16 {
        inject(
            &mut r,
            "ft",
            packet(
                [1, 2, 3, 4],
                [5, 6, 7, 8],
                17,
                7,
                9 + i % 2,
                20 + usize::from(i),
            ),
        );
    }
    assert_eq!(read_u64(&mut r, "fc.count"), 5);
    let flows = testing::read(&mut r, "fc.flows");
    let mut lines: Vec<&str> = flows.lines().collect();
    lines.sort();
    // IP length 20 + payload (20 + i bytes).
    assert_eq!(
        lines,
        vec![
            "1.2.3.4 5.6.7.8 17 7 10 0 2 84",
            "1.2.3.4 5.6.7.8 17 7 9 0 3 126"
        ]
    );
    r.write_handler("fc.reset", "").unwrap();
    assert_eq!(testing::read(&mut r, "fc.flows"), "");
}

/// Per-flow DRR: a heavy flow (3 packets per round of arrivals) and two
/// light ones share the output equally while all are backlogged.
#[test]
fn drr_is_fair_between_backlogged_flows() {
    let mut r = testing::from_config(
        "ft :: FlowTable; q :: FlowDRRQueue(QUANTUM 100, CAPACITY 1000, TOTAL 5000);
         ft -> q -> Discard;",
    );
    let q = r.find_element("q").unwrap();
    // Backlog: heavy flow 300 packets, light flows 100 each, 100 bytes.
    for i in 0..300 {
        inject(
            &mut r,
            "ft",
            packet([1, 0, 0, 1], [2, 0, 0, 1], 17, 1, 1, 72),
        );
        if i % 3 == 0 {
            inject(
                &mut r,
                "ft",
                packet([1, 0, 0, 2], [2, 0, 0, 1], 17, 1, 1, 72),
            );
            inject(
                &mut r,
                "ft",
                packet([1, 0, 0, 3], [2, 0, 0, 1], 17, 1, 1, 72),
            );
        }
    }
    assert_eq!(read_u64(&mut r, "q.length"), 500);
    assert_eq!(read_u64(&mut r, "q.active_flows"), 3);
    // The first 240 packets out: 80 of each flow.
    let mut per = std::collections::HashMap::new();
    let mut n = 0;
    while n < 240 {
        let b = r.pull_from(q, 0, 7.min(240 - n)).expect("packets");
        for p in b.packets() {
            *per.entry(Key::of(p).unwrap().src).or_insert(0) += 1;
            n += 1;
        }
    }
    let mut counts: Vec<i32> = per.values().copied().collect();
    counts.sort();
    assert!(counts[0] == 80 && counts[2] == 80, "{counts:?}");
    // Then the light flows run out and the heavy one gets everything.
    while r.pull_from(q, 0, 64).is_some() {}
    assert_eq!(read_u64(&mut r, "q.length"), 0);
    assert_eq!(read_u64(&mut r, "q.active_flows"), 0);
    assert_eq!(read_u64(&mut r, "q.drops"), 0);
}

/// A flow's record recycled while its packets wait in the DRR queue: the
/// packets are still sent (none lost, none counted twice), and the
/// queues are freed and reused.
#[test]
fn drr_sends_the_packets_of_a_recycled_record() {
    let mut r = testing::from_config(
        "ft :: FlowTable(CAPACITY 1); q :: FlowDRRQueue(QUANTUM 100, CAPACITY 8, TOTAL 100);
         ft -> q -> Discard;",
    );
    let q = r.find_element("q").unwrap();
    // Packets of flows A and B with a sequence number in the payload.
    let numbered = |host: u8, n: u8| {
        let mut payload = [0u8; 72];
        payload[..4].copy_from_slice(&[0, 1, 0, 1]);
        payload[4] = n;
        Packet::from_slice(&ipv4_packet(
            [1, 0, 0, host],
            [2, 0, 0, 1],
            17,
            64,
            0,
            &[],
            &payload,
        ))
    };
    let a = |n: u8| numbered(1, n);
    let b = |n: u8| numbered(2, n);
    // A's record is recycled for B while A's packets wait, then A's
    // record comes back (recycling B's): A's later packets join A's
    // waiting queue, behind its earlier ones, not a second queue.
    for p in [a(1), a(2), a(3), b(1), a(4), a(5)] {
        inject(&mut r, "ft", p);
    }
    assert_eq!(read_u64(&mut r, "ft.recycled"), 2);
    assert_eq!(read_u64(&mut r, "q.length"), 6);
    assert_eq!(read_u64(&mut r, "q.active_flows"), 2, "one queue per flow");
    let mut out = Vec::new();
    while let Some(batch) = r.pull_from(q, 0, 1) {
        out.extend(
            batch
                .packets()
                .iter()
                .map(|p| (Key::of(p).unwrap().src & 0xff, p.data()[20 + 4])),
        );
    }
    // QUANTUM 100: one 100-byte packet per flow per round; A in order.
    assert_eq!(out, [(1, 1), (2, 1), (1, 2), (1, 3), (1, 4), (1, 5)]);
    assert_eq!(read_u64(&mut r, "q.length"), 0);
    assert_eq!(read_u64(&mut r, "q.active_flows"), 0);
    assert_eq!(read_u64(&mut r, "q.drops"), 0);
    // Freed queues are reused.
    for p in [a(6), b(2)] {
        inject(&mut r, "ft", p);
    }
    assert_eq!(read_u64(&mut r, "q.length"), 2);
    assert_eq!(r.pull_from(q, 0, 64).map(|b| b.len()), Some(2));
    assert_eq!(read_u64(&mut r, "q.active_flows"), 0);
}

#[test]
fn drr_byte_fairness_and_limits() {
    let mut r = testing::from_config(
        "ft :: FlowTable; q :: FlowDRRQueue(QUANTUM 500, CAPACITY 50, TOTAL 80); ft -> q -> Discard;",
    );
    let q = r.find_element("q").unwrap();
    // Flow A sends 1000-byte packets, flow B 100-byte ones.
    for _ in 0..60 {
        inject(
            &mut r,
            "ft",
            packet([1, 0, 0, 1], [2, 0, 0, 1], 17, 1, 1, 972),
        );
        inject(
            &mut r,
            "ft",
            packet([1, 0, 0, 2], [2, 0, 0, 1], 17, 1, 1, 72),
        );
    }
    // A: 50 (per-flow CAPACITY) then dropped; B: 30 until TOTAL 80.
    assert_eq!(read_u64(&mut r, "q.length"), 80);
    assert_eq!(read_u64(&mut r, "q.drops"), 40);
    let (mut a, mut b) = (0usize, 0usize);
    for _ in 0..20 {
        let p = r.pull_from(q, 0, 1).unwrap();
        let p = &p.packets()[0];
        if Key::of(p).unwrap().src == 0x0100_0001 {
            a += p.len();
        } else {
            b += p.len();
        }
    }
    // Bytes within one quantum plus a packet of each other.
    assert!(a.abs_diff(b) <= 1500, "a {a} b {b}");
}

#[test]
fn flow_elements_run_under_two_threads() {
    // Two sources on two threads, each through its own gate, sharing one
    // table named by TABLE.
    let cfg = "ft :: FlowTable;
        s0 :: InfiniteSource(DATA \\<4500001c 00000000 40110000 01000001 02000001 00010002 00080000>, LIMIT 3000, STOP false)
          -> g0 :: FlowGate(src 1.0.0.1, -, TABLE ft) -> c0 :: Counter -> Discard; g0[1] -> Discard;
        s1 :: InfiniteSource(DATA \\<4500001c 00000000 40110000 01000002 02000001 00010002 00080000>, LIMIT 3000, STOP false)
          -> g1 :: FlowGate(src 1.0.0.1, -, TABLE ft) -> Discard; g1[1] -> c1 :: Counter -> Discard;
        StaticThreadSched(s0 0, s1 1);";
    let opts = rclick_core::RouterOptions {
        threads: 2,
        ..Default::default()
    };
    let mut r = testing::from_config_with(cfg, &opts);
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(read_u64(&mut r, "c0.count"), 3000);
    assert_eq!(read_u64(&mut r, "c1.count"), 3000);
    assert_eq!(read_u64(&mut r, "ft.size"), 2);
    assert_eq!(
        read_u64(&mut r, "g0.lookups") + read_u64(&mut r, "g1.lookups"),
        2
    );
}

#[test]
fn a_flow_table_on_a_path_of_two_threads_runs_as_copies_sharing_one_table() {
    // One FlowTable element pushed to from two threads: each thread gets a
    // copy, and every copy holds the same table.
    let cfg = "s0 :: InfiniteSource(DATA \\<4500001c 00000000 40110000 01000001 02000001 00010002 00080000>, LIMIT 2000, STOP false)
          -> ft :: FlowTable -> c :: Counter -> Discard;
        s1 :: InfiniteSource(DATA \\<4500001c 00000000 40110000 01000002 02000001 00010002 00080000>, LIMIT 2000, STOP false)
          -> ft;
        StaticThreadSched(s0 0, s1 1);";
    let opts = rclick_core::RouterOptions {
        threads: 2,
        ..Default::default()
    };
    let mut r = testing::from_config_with(cfg, &opts);
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(read_u64(&mut r, "c.count"), 4000);
    assert_eq!(read_u64(&mut r, "ft.size"), 2);
    assert_eq!(read_u64(&mut r, "ft.misses"), 2);
    assert_eq!(read_u64(&mut r, "ft.hits"), 3998);
    let flows = testing::read(&mut r, "ft.flows");
    assert!(flows.contains("1.0.0.1 2.0.0.1 17 1 2 0 2000 "), "{flows}");
    assert!(flows.contains("1.0.0.2 2.0.0.1 17 1 2 0 2000 "), "{flows}");
}

#[test]
fn filters_changed_by_handlers_survive_a_hot_swap() {
    let opts = rclick_core::RouterOptions {
        simtime: Some(rclick_core::time::DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    let v1 = "Idle -> g :: FlowGate(dport 80, dport 53, -); g[0] -> Discard; g[1] -> Discard; g[2] -> Discard;";
    let mut r = testing::from_config_with(v1, &opts);
    r.write_handler("g.add_filter", "0 src 10.0.0.1").unwrap();
    r.write_handler("g.add_filter", "2 src 10.0.0.9").unwrap();
    r.write_handler("g.remove_filter", "1 dport 53").unwrap();
    // The new configuration has two outputs and a filter of its own.
    let v2 =
        "Idle -> g :: FlowGate(dport 80, dport 53 proto udp); g[0] -> Discard; g[1] -> Discard;";
    r.hotswap(v2).unwrap();
    assert_eq!(
        testing::read(&mut r, "g.filters"),
        "0 dport 80\n1 proto udp dport 53\n0 src 10.0.0.1/32\n",
        "added filters carried (output 2 is gone), the removed one stays removed"
    );
}

#[test]
fn the_table_lock_is_a_mutex_only_with_threads() {
    use rclick_elements::flow::flowtable::FlowTable;
    let cfg = "ft :: FlowTable; Idle -> ft -> Discard;";
    let threaded = |threads: usize| {
        let opts = rclick_core::RouterOptions {
            threads,
            ..Default::default()
        };
        let r = testing::from_config_with(cfg, &opts);
        r.with_element::<FlowTable, _>("ft", |f| f.shared().threaded())
            .expect("a FlowTable")
    };
    assert!(!threaded(1));
    assert!(threaded(2));
}

#[test]
fn the_one_thread_lock_still_excludes() {
    // The flag lock of a one-thread table is a real lock: two threads
    // taking it at once (which a router never does) lose no update.
    use rclick_elements::flow::table::SharedTable;
    for threaded in [false, true] {
        let t = SharedTable::for_threads(16, 0, threaded);
        std::thread::scope(|s| {
            for _ in 0..2 {
                let t = t.clone();
                s.spawn(move || {
                    for _ in 0..50_000 {
                        let mut g = t.lock();
                        let h = g.hits;
                        std::hint::black_box(&mut *g);
                        g.hits = h + 1;
                    }
                });
            }
        });
        assert_eq!(t.lock().hits, 100_000, "threaded {threaded}");
    }
}
