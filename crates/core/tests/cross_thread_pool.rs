//! Packets made on one thread and freed on another reach a steady state
//! with no heap allocation on either: the freeing thread's full free lists
//! move chunks to the global depots, and the making thread's empty lists
//! take them from there (crates/core/src/pool.rs). Without the depots the
//! making thread would allocate every packet and the freeing thread free
//! every one to the heap.
//!
//! Thread A makes packets (or batches) and sends them through an
//! `MpmcRing` to thread B, which checks and drops them. After a warm-up
//! (B's lists must fill before it spills), each thread counts its own heap
//! allocations with a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::thread;

use rclick_core::sync::MpmcRing;
use rclick_core::{Batch, Packet};

struct Counting;

thread_local! {
    // Per thread; const-initialised with no destructor, so the allocator
    // may touch it at any time.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn allocations() -> u64 {
    ALLOCATIONS.with(|a| a.get())
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs A (`make` item `i`) and B (`check` and drop it) over `warmup +
/// measure` items through a ring of `ring_capacity`: returns the heap
/// allocations each thread made over the last `measure` items.
///
/// First A makes and drops `prewarm` items itself, which fills its own
/// lists and the depots. Why: A allocates from the heap only when its
/// list and the depot are both empty, and each such allocation adds a
/// packet to those circulating for good; from a cold start the circulation
/// grows that way until it covers the worst moment (B's lists full, the
/// ring full, A's list just emptied, the depot's one chunk still being
/// published by B), which a run may reach late. Started with full depots,
/// the circulation only shrinks (B frees to the heap while the depot is
/// full) down to where the depot stays nearly full, so A always finds a
/// chunk there: the steady state is reached within the warm-up.
fn steady_state<T: Send + 'static>(
    prewarm: usize,
    warmup: usize,
    measure: usize,
    ring_capacity: usize,
    make: impl Fn(usize) -> T + Send + 'static,
    check: impl Fn(usize, &T) + Send + 'static,
) -> (u64, u64) {
    let total = warmup + measure;
    let ring = Arc::new(MpmcRing::<T>::new(ring_capacity));
    let a = {
        let ring = ring.clone();
        thread::spawn(move || {
            drop((0..prewarm).map(&make).collect::<Vec<T>>());
            let mut start = 0;
            for i in 0..total {
                if i == warmup {
                    start = allocations();
                }
                let mut item = make(i);
                while let Err(back) = ring.push(item) {
                    item = back;
                    thread::yield_now();
                }
            }
            allocations() - start
        })
    };
    let b = thread::spawn(move || {
        let mut start = 0;
        let mut i = 0;
        while i < total {
            if i == warmup {
                start = allocations();
            }
            match ring.pop() {
                Some(item) => {
                    check(i, &item);
                    drop(item);
                    i += 1;
                }
                None => thread::yield_now(),
            }
        }
        allocations() - start
    });
    (a.join().unwrap(), b.join().unwrap())
}

/// Two sizes, so both pooled buffer sizes (small and full) cross over.
fn len_of(i: usize) -> usize {
    if i & 1 == 0 {
        60
    } else {
        1000
    }
}

/// Packet `i`'s bytes (all `i as u8`; only the first `len_of(i)` used).
fn bytes(i: usize) -> [u8; 1000] {
    [i as u8; 1000]
}

// One test (not two run in parallel): both use the process-wide depots, and
// another test's threads taking chunks could starve this one's.
#[test]
fn packets_and_batches_freed_on_another_thread_come_back_without_the_heap() {
    // Packets: each size's list holds 16384, its depot 8192; B's two lists
    // are full after 2 * 16384 packets.
    let (a, b) = steady_state(
        2 * (16384 + 8192),
        60_000,
        200_000,
        64,
        |i| Packet::from_slice(&bytes(i)[..len_of(i)]),
        |i, p: &Packet| {
            assert_eq!(p.len(), len_of(i));
            assert!(p.data().iter().all(|&x| x == i as u8), "packet {i} intact");
        },
    );
    assert_eq!(
        (a, b),
        (0, 0),
        "heap allocations (thread A, thread B) in the steady state of packets made on A and freed on B"
    );

    // Batches of 32 copies: packets and batch buffers both cross over.
    // (2048 batches fill the batch lists and depot, and hold 65536 packets.)
    let (a, b) = steady_state(
        2048,
        3_000,
        6_000,
        16,
        |i| Batch::copies_of(&Packet::from_slice(&bytes(i)[..len_of(i)]), 32),
        |i, b: &Batch| {
            assert_eq!(b.len(), 32);
            assert!(b
                .packets()
                .iter()
                .all(|p| p.len() == len_of(i) && p.data()[0] == i as u8));
        },
    );
    assert_eq!(
        (a, b),
        (0, 0),
        "heap allocations (thread A, thread B) in the steady state of batches made on A and freed on B"
    );
}
