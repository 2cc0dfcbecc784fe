//! Steady state allocates nothing per packet: after a warm-up, forwarding
//! many more packets through sources, Null chains, a Queue, Unqueue, Tee,
//! Counter and Discard performs zero heap allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use rclick_core::StopReason;
use rclick_elements::testing::{build, spec};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    assert_eq!(r.run_limited(2_000), StopReason::Limit);
    let before_count: u64 = r.read_handler("c.count", None).unwrap().parse().unwrap();
    let a0 = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(r.run_limited(4_000), StopReason::Limit);
    let a1 = ALLOCATIONS.load(Ordering::Relaxed);
    let after_count: u64 = r.read_handler("c.count", None).unwrap().parse().unwrap();
    (a1 - a0, after_count - before_count)
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
