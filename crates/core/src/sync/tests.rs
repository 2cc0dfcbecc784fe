//! Ordinary tests of the `sync` structures: single-thread edges, property
//! tests against `VecDeque`, and multi-threaded stress runs. The loom
//! model tests are in `loom_tests.rs`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use proptest::prelude::*;

use super::depot::{Depot, CHUNK};
use super::{MpmcRing, SpscRing};

/// Counts its drops, to check rings drop what they still hold, once.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

// ---- MpmcRing ----

#[test]
fn mpmc_capacity_is_a_power_of_two_of_at_least_2() {
    for (asked, got) in [(0, 2), (1, 2), (2, 2), (3, 4), (4, 4), (5, 8), (1000, 1024)] {
        assert_eq!(MpmcRing::<u8>::new(asked).capacity(), got, "asked {asked}");
    }
}

#[test]
fn mpmc_full_and_empty_edges() {
    let r = MpmcRing::new(4);
    assert!(r.is_empty());
    assert_eq!(r.pop(), None);
    for i in 0..4 {
        assert_eq!(r.push(i), Ok(()));
        assert_eq!(r.len(), i + 1);
    }
    assert_eq!(r.push(99), Err(99), "a full ring hands the value back");
    assert_eq!(r.len(), 4);
    assert_eq!(r.pop(), Some(0));
    assert_eq!(r.push(4), Ok(()), "one pop makes room for one push");
    assert_eq!(r.push(5), Err(5));
    for i in 1..5 {
        assert_eq!(r.pop(), Some(i));
    }
    assert_eq!(r.pop(), None);
    assert!(r.is_empty());
}

#[test]
fn mpmc_wraps_around_many_laps() {
    let r = MpmcRing::new(2);
    for i in 0..1000u32 {
        r.push(i).unwrap();
        if i % 2 == 1 {
            assert_eq!(r.pop(), Some(i - 1));
            assert_eq!(r.pop(), Some(i));
        }
    }
    assert!(r.is_empty());
}

#[test]
fn mpmc_drop_drops_what_is_left_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let r = MpmcRing::new(8);
    for _ in 0..5 {
        assert!(r.push(Counted(drops.clone())).is_ok());
    }
    drop(r.pop());
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    drop(r);
    assert_eq!(drops.load(Ordering::Relaxed), 5);
}

#[test]
fn mpmc_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<MpmcRing<Box<u8>>>();
    check::<SpscRing<Box<u8>>>();
}

/// Items a stress run moves: "a few million", fewer in debug builds
/// (unoptimised atomics loops are slow, and the machine is shared), and a
/// few hundred under Miri (which checks each access, and explores
/// interleavings and weak-memory outcomes instead of relying on volume).
fn stress_items() -> usize {
    if cfg!(miri) {
        1 << 7
    } else if cfg!(debug_assertions) {
        1 << 20
    } else {
        1 << 22
    }
}

/// Spins politely: the test machine may have fewer cores than threads.
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins > 16 {
        thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

#[test]
fn mpmc_stress_every_item_once_and_in_producer_order() {
    const PRODUCERS: usize = 2;
    const CONSUMERS: usize = 2;
    let per_producer = stress_items() / PRODUCERS;
    let total = per_producer * PRODUCERS;
    let ring = Arc::new(MpmcRing::<u64>::new(256));
    let taken = Arc::new(AtomicUsize::new(0));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let ring = ring.clone();
            thread::spawn(move || {
                for i in 0..per_producer {
                    // The producer in the high bits, the sequence below.
                    let mut v = ((p as u64) << 32) | i as u64;
                    let mut spins = 0;
                    while let Err(back) = ring.push(v) {
                        v = back;
                        backoff(&mut spins);
                    }
                }
            })
        })
        .collect();
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let (ring, taken) = (ring.clone(), taken.clone());
            thread::spawn(move || {
                let mut seen = Vec::new();
                let mut spins = 0;
                while taken.load(Ordering::Relaxed) < total {
                    match ring.pop() {
                        Some(v) => {
                            seen.push(v);
                            taken.fetch_add(1, Ordering::Relaxed);
                            spins = 0;
                        }
                        None => backoff(&mut spins),
                    }
                }
                seen
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let mut count = vec![0u8; total];
    for c in consumers {
        let seen = c.join().unwrap();
        // One consumer sees each producer's items in the order pushed.
        let mut last = [None::<u64>; PRODUCERS];
        for v in seen {
            let (p, i) = ((v >> 32) as usize, v & 0xffff_ffff);
            if let Some(l) = last[p] {
                assert!(l < i, "producer {p}: {i} after {l}");
            }
            last[p] = Some(i);
            count[p * per_producer + i as usize] += 1;
        }
    }
    assert!(ring.is_empty());
    let wrong: Vec<_> = count
        .iter()
        .enumerate()
        .filter(|(_, &n)| n != 1)
        .take(5)
        .collect();
    assert!(wrong.is_empty(), "items not seen exactly once: {wrong:?}");
}

// ---- SpscRing ----

#[test]
fn spsc_capacity_is_a_power_of_two() {
    for (asked, got) in [(0, 1), (1, 1), (2, 2), (3, 4), (64, 64), (65, 128)] {
        assert_eq!(SpscRing::<u8>::new(asked).capacity(), got, "asked {asked}");
    }
}

#[test]
fn spsc_full_and_empty_edges() {
    for cap in [1, 2, 4] {
        let r = SpscRing::new(cap);
        // SAFETY (all unsafe blocks in this test): one thread pushes and
        // pops.
        unsafe {
            assert_eq!(r.pop(), None);
            for lap in 0..3 {
                for i in 0..cap {
                    assert_eq!(r.push(lap * 10 + i), Ok(()));
                }
                assert_eq!(r.len(), cap);
                assert_eq!(r.push(99), Err(99), "capacity {cap}: full");
                for i in 0..cap {
                    assert_eq!(r.pop(), Some(lap * 10 + i));
                }
                assert_eq!(r.pop(), None, "capacity {cap}: empty");
                assert!(r.is_empty());
            }
        }
    }
}

#[test]
fn spsc_batches_move_what_fits_and_leave_the_rest() {
    let r = SpscRing::new(4);
    // SAFETY (all unsafe blocks in this test): one thread pushes and pops.
    unsafe {
        let mut it = 0..6;
        assert_eq!(r.push_many(&mut it), 4);
        assert_eq!(it.next(), Some(4), "the iterator keeps what did not fit");
        assert_eq!(r.push_many(&mut it), 0);
        let mut out = Vec::new();
        assert_eq!(r.pop_many(3, |v| out.push(v)), 3);
        assert_eq!(out, [0, 1, 2]);
        let mut more = 5..8;
        assert_eq!(r.push_many(&mut more), 3, "wraps around");
        assert_eq!(r.pop_many(100, |v| out.push(v)), 4);
        assert_eq!(out, [0, 1, 2, 3, 5, 6, 7]);
        assert_eq!(r.pop_many(100, |v| out.push(v)), 0);
        assert_eq!(r.push_many(&mut std::iter::empty()), 0);
    }
}

#[test]
fn spsc_pop_many_frees_what_it_took_when_the_closure_panics() {
    let drops = Arc::new(AtomicUsize::new(0));
    let r = SpscRing::new(8);
    // SAFETY (all unsafe blocks in this test): one thread pushes and pops.
    unsafe {
        for _ in 0..6 {
            assert!(r.push(Counted(drops.clone())).is_ok());
        }
        let mut calls = 0;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            r.pop_many(6, |c| {
                calls += 1;
                if calls == 3 {
                    panic!("stop");
                }
                drop(c);
            })
        }));
        assert!(caught.is_err());
        // Three were taken (the third dropped while unwinding); three left.
        assert_eq!(drops.load(Ordering::Relaxed), 3);
        assert_eq!(r.len(), 3);
    }
    drop(r);
    assert_eq!(drops.load(Ordering::Relaxed), 6);
}

#[test]
fn spsc_stress_batches_every_item_once_in_order() {
    let total = stress_items() as u64;
    let ring = Arc::new(SpscRing::<u64>::new(256));
    let producer = {
        let ring = ring.clone();
        thread::spawn(move || {
            let mut next = 0;
            let mut spins = 0;
            while next < total {
                // Odd rounds push one at a time, even ones in batches.
                let pushed = if next % 2 == 1 {
                    // SAFETY: this thread is the only producer.
                    match unsafe { ring.push(next) } {
                        Ok(()) => 1,
                        Err(_) => 0,
                    }
                } else {
                    let mut it = next..total.min(next + 48);
                    // SAFETY: this thread is the only producer.
                    unsafe { ring.push_many(&mut it) as u64 }
                };
                if pushed == 0 {
                    backoff(&mut spins);
                } else {
                    spins = 0;
                    next += pushed;
                }
            }
        })
    };
    let mut expect = 0;
    let mut spins = 0;
    while expect < total {
        let got = if expect % 3 == 0 {
            // SAFETY: this thread is the only consumer.
            match unsafe { ring.pop() } {
                Some(v) => {
                    assert_eq!(v, expect);
                    1
                }
                None => 0,
            }
        } else {
            let mut n = expect;
            // SAFETY: this thread is the only consumer.
            let got = unsafe {
                ring.pop_many(40, |v| {
                    assert_eq!(v, n);
                    n += 1;
                })
            };
            got as u64
        };
        if got == 0 {
            backoff(&mut spins);
        } else {
            spins = 0;
            expect += got;
        }
    }
    producer.join().unwrap();
    assert!(ring.is_empty());
}

// ---- property tests against VecDeque ----

#[derive(Debug, Clone)]
enum Op {
    Push(u16),
    Pop,
    PushMany(u8),
    PopMany(u8),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            any::<u16>().prop_map(Op::Push),
            Just(Op::Pop),
            (0u8..12).prop_map(Op::PushMany),
            (0u8..12).prop_map(Op::PopMany),
        ],
        0..200,
    )
}

proptest! {
    #[test]
    fn mpmc_matches_a_bounded_vecdeque(cap_log in 1u32..5, ops in ops()) {
        let cap = 1usize << cap_log;
        let r = MpmcRing::new(cap);
        let mut model = VecDeque::new();
        let mut next = 0u16;
        for op in ops {
            // The MPMC ring has no batch forms: they are runs of single ops.
            let (push, n) = match op {
                Op::Push(v) => { next = v; (true, 1) }
                Op::Pop => (false, 1),
                Op::PushMany(n) => (true, n as usize),
                Op::PopMany(n) => (false, n as usize),
            };
            for _ in 0..n {
                if push {
                    let got = r.push(next);
                    if model.len() < cap {
                        model.push_back(next);
                        prop_assert_eq!(got, Ok(()));
                    } else {
                        prop_assert_eq!(got, Err(next));
                    }
                    next = next.wrapping_add(1);
                } else {
                    prop_assert_eq!(r.pop(), model.pop_front());
                }
            }
            prop_assert_eq!(r.len(), model.len());
            prop_assert_eq!(r.is_empty(), model.is_empty());
        }
    }

    #[test]
    fn spsc_matches_a_bounded_vecdeque(cap_log in 0u32..5, ops in ops()) {
        let cap = 1usize << cap_log;
        let r = SpscRing::new(cap);
        let mut model = VecDeque::new();
        let mut next = 0u16;
        // SAFETY: one thread pushes and pops.
        unsafe {
            for op in ops {
                match op {
                    Op::Push(v) => {
                        let got = r.push(v);
                        if model.len() < cap {
                            model.push_back(v);
                            prop_assert_eq!(got, Ok(()));
                        } else {
                            prop_assert_eq!(got, Err(v));
                        }
                    }
                    Op::Pop => prop_assert_eq!(r.pop(), model.pop_front()),
                    Op::PushMany(n) => {
                        let values: Vec<u16> = (0..n as u16).map(|i| next.wrapping_add(i)).collect();
                        let mut it = values.iter().copied();
                        let pushed = r.push_many(&mut it);
                        let fits = (cap - model.len()).min(values.len());
                        prop_assert_eq!(pushed, fits);
                        model.extend(&values[..fits]);
                        // Not advanced past what did not fit.
                        prop_assert_eq!(it.next(), values.get(fits).copied());
                        next = next.wrapping_add(n as u16);
                    }
                    Op::PopMany(n) => {
                        let mut got = Vec::new();
                        let popped = r.pop_many(n as usize, |v| got.push(v));
                        let want: Vec<u16> = (0..(n as usize).min(model.len()))
                            .filter_map(|_| model.pop_front())
                            .collect();
                        prop_assert_eq!(popped, want.len());
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(r.len(), model.len());
                prop_assert_eq!(r.is_empty(), model.is_empty());
            }
        }
    }
}

// ---- Depot ----

#[test]
fn depot_moves_whole_chunks_and_refuses_when_full_or_short() {
    // SAFETY: the items are plain numbers.
    let d = unsafe { Depot::<usize>::new(2) };
    let mut short: Vec<usize> = (0..CHUNK - 1).collect();
    assert!(!d.spill(&mut short), "fewer than a chunk stays");
    assert_eq!(short.len(), CHUNK - 1);

    let mut list: Vec<usize> = (0..3 * CHUNK + 5).collect();
    assert!(d.spill(&mut list));
    assert!(d.spill(&mut list));
    assert_eq!(d.chunks(), 2);
    assert!(!d.spill(&mut list), "a full depot refuses");
    assert_eq!(list.len(), CHUNK + 5, "and leaves the list as it was");

    let mut other = Vec::new();
    assert!(d.refill(&mut other));
    // The first chunk spilled: the top of the list then.
    assert_eq!(other, (2 * CHUNK + 5..3 * CHUNK + 5).collect::<Vec<_>>());
    assert!(d.refill(&mut other));
    assert_eq!(other.len(), 2 * CHUNK);
    assert!(!d.refill(&mut other), "empty");
    assert_eq!(d.chunks(), 0);
}
