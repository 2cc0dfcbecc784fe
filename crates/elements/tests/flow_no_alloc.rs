//! The flow elements allocate nothing per packet in steady state: after a
//! warm-up, three flows through a FlowTable, FlowCounter, FlowGate, a
//! per-flow DRR queue and a second gate taking the flow record from the
//! annotation perform zero heap allocations (queues are reused, records
//! and pools stay allocated).

use rclick_core::StopReason;
use rclick_elements::testing::from_config;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

fn source(name: &str, last: u8, burst: usize) -> String {
    format!(
        "{name} :: InfiniteSource(DATA \\<4500001c 00000000 40110000 0a0000{last:02x} 0a000101 04d2 0035 0008 0000>, BURST {burst})"
    )
}

#[test]
fn flow_elements_allocate_nothing_per_packet() {
    for burst in [1, 32] {
        let cfg = format!(
            "ft :: FlowTable(CAPACITY 16);
             {} -> ft; {} -> ft; {} -> ft;
             ft -> fc :: FlowCounter -> g :: FlowGate(src 10.0.0.1, -)
                -> q :: FlowDRRQueue(QUANTUM 100, CAPACITY 32, TOTAL 64)
                -> u :: Unqueue(BURST 64) -> g2 :: FlowGate(dst 10.0.1.1 dport 53, -, TABLE ft)
                -> c :: Counter -> Discard;
             g[1] -> q; g2[1] -> Discard;",
            source("s1", 1, burst),
            source("s2", 2, burst),
            source("s3", 3, burst)
        );
        let mut r = from_config(&cfg);
        assert_eq!(r.run_limited(500), StopReason::Limit);
        let count = |r: &mut rclick_core::Router| -> u64 {
            r.read_handler("c.count", None).unwrap().parse().unwrap()
        };
        let before = count(&mut r);
        let a0 = allocations();
        assert_eq!(r.run_limited(1_500), StopReason::Limit);
        let a1 = allocations();
        let packets = count(&mut r) - before;
        assert!(packets > 1_000, "burst {burst}: only {packets} packets");
        assert_eq!(
            a1 - a0,
            0,
            "burst {burst}: {} allocations for {packets} packets",
            a1 - a0
        );
        assert_eq!(r.read_handler("ft.size", None).unwrap(), "3");
    }
}

#[test]
fn a_full_table_recycles_without_allocating() {
    // New flows arriving at a table at CAPACITY: each recycles the least
    // recently used record (map entries removed and inserted, leaving
    // tombstones); after a warm-up nothing allocates.
    use rclick_elements::flow::sixtuple::Key;
    use rclick_elements::flow::table::Table;
    let mut t = Table::new(1000, 0);
    t.register_slots(2);
    let key = |i: u32| Key {
        src: 0x0a00_0000 | i,
        dst: 0x0b00_0001,
        proto: 17,
        sport: (i % 65536) as u16,
        dport: 53,
        iif: 0,
    };
    for i in 0..50_000 {
        t.find_or_insert(&key(i), i64::from(i));
    }
    let a0 = allocations();
    for i in 50_000..250_000 {
        t.find_or_insert(&key(i), i64::from(i));
    }
    let a1 = allocations();
    assert_eq!(t.len(), 1000);
    assert_eq!(t.recycled, 249_000);
    assert_eq!(a1 - a0, 0, "{} allocations", a1 - a0);
}
