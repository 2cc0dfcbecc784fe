//! loom model tests of the `sync` structures: every interleaving (up to a
//! preemption bound) of a few threads, with loom checking data races on
//! the slots and the memory orderings. Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p rclick-core --release --lib sync
//! ```
//!
//! Each model is kept small (capacity 2, a handful of items) so the whole
//! set finishes in seconds.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

use super::depot::{Depot, CHUNK};
use super::{MpmcRing, SpscRing};

/// Runs `f` under loom with a preemption bound (the number of times a
/// thread is switched out while it could go on): 3 catches the known bugs
/// of rings like these and keeps the models fast. `LOOM_MAX_PREEMPTIONS`
/// overrides it.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

#[test]
fn mpmc_two_producers_one_consumer_each_item_once_in_order() {
    model(|| {
        // Capacity 2 for 4 items: pushes find the ring full, and go round.
        let ring = Arc::new(MpmcRing::new(2));
        // The consumer pops while the producers push (then the main thread
        // drains what is left).
        let consumer = {
            let ring = ring.clone();
            thread::spawn(move || (0..2).filter_map(|_| ring.pop()).collect::<Vec<u32>>())
        };
        // No spinning (loom would explore every spin): a push that finds
        // the ring full is recorded as refused.
        let produce = |ring: &MpmcRing<u32>, p: u32| -> Vec<u32> {
            (0..2u32)
                .map(|i| p * 10 + i)
                .filter(|&v| ring.push(v).is_ok())
                .collect()
        };
        let other = {
            let ring = ring.clone();
            thread::spawn(move || produce(&ring, 1))
        };
        let pushed = [produce(&ring, 0), other.join().unwrap()];
        let mut seen = consumer.join().unwrap();
        seen.extend(std::iter::from_fn(|| ring.pop()));
        assert!(ring.is_empty());
        // Per producer, every value it pushed, once, in the order pushed.
        for (p, pushed) in pushed.iter().enumerate() {
            let mine: Vec<u32> = seen
                .iter()
                .copied()
                .filter(|v| v / 10 == p as u32)
                .collect();
            assert_eq!(&mine, pushed);
        }
        assert!(
            pushed.iter().map(Vec::len).sum::<usize>() >= 2,
            "two slots take two"
        );
    });
}

#[test]
fn mpmc_full_and_empty_edges_with_a_concurrent_pop() {
    model(|| {
        let ring = Arc::new(MpmcRing::new(2));
        let consumer = {
            let ring = ring.clone();
            thread::spawn(move || ring.pop())
        };
        // Three pushes into two slots while a pop may run: at most one of
        // them can fail only if the pop had not yet freed its slot.
        let pushed: Vec<u32> = (0..3).filter(|&v| ring.push(v).is_ok()).collect();
        let popped = consumer.join().unwrap();
        assert!(pushed.len() >= 2, "two slots always take two pushes");
        // Quiescent: len is exact.
        let left: Vec<u32> = std::iter::from_fn(|| ring.pop()).collect();
        let mut all: Vec<u32> = popped.into_iter().chain(left.iter().copied()).collect();
        // The pop took the oldest value, if any.
        if let Some(first) = popped {
            assert_eq!(first, 0);
        }
        all.sort_unstable();
        assert_eq!(all, pushed, "every pushed value comes out once");
        assert_eq!(ring.len(), 0);
        assert_eq!(ring.pop(), None, "empty stays empty");
    });
}

#[test]
fn mpmc_drop_with_items_left_after_threads() {
    model(|| {
        let ring = Arc::new(MpmcRing::new(2));
        let t = {
            let ring = ring.clone();
            thread::spawn(move || {
                let _ = ring.push(Box::new(1u32));
            })
        };
        let _ = ring.push(Box::new(2u32));
        t.join().unwrap();
        assert_eq!(ring.len(), 2);
        // Dropping the ring frees both boxes (loom reports leaks).
    });
}

// In these models the consumer is the spawned thread and the main thread
// produces: loom explored only one interleaving of the opposite set-up
// (found by weakening an ordering on purpose, which this one catches).

#[test]
fn spsc_wraps_around_capacity_2() {
    model(|| {
        let ring = Arc::new(SpscRing::new(2));
        let consumer = {
            let ring = ring.clone();
            // SAFETY: the only consumer (until it is joined).
            thread::spawn(move || {
                (0..3)
                    .filter_map(|_| unsafe { ring.pop() })
                    .collect::<Vec<u32>>()
            })
        };
        // No spinning: a push that finds the ring full is refused.
        // SAFETY: the only producer.
        let pushed: Vec<u32> = (0..4u32)
            .filter(|&v| unsafe { ring.push(v) }.is_ok())
            .collect();
        let mut seen = consumer.join().unwrap();
        // SAFETY: the consumer thread has finished: we are the consumer.
        seen.extend(std::iter::from_fn(|| unsafe { ring.pop() }));
        assert_eq!(seen, pushed, "every pushed value once, in order");
        assert!(pushed.len() >= 2);
    });
}

#[test]
fn spsc_batches_wrap_around_capacity_2() {
    model(|| {
        let ring = Arc::new(SpscRing::new(2));
        let consumer = {
            let ring = ring.clone();
            thread::spawn(move || {
                let mut seen = Vec::new();
                for _ in 0..2 {
                    // SAFETY: the only consumer (until it is joined).
                    unsafe { ring.pop_many(2, |v| seen.push(v)) };
                }
                seen
            })
        };
        let mut values = 0..5u32;
        // SAFETY: the only producer.
        let a = unsafe { ring.push_many(&mut values) };
        // SAFETY: as above.
        let b = unsafe { ring.push_many(&mut values) };
        assert_eq!(a, 2, "an empty ring of 2 takes 2");
        let mut seen = consumer.join().unwrap();
        // SAFETY: the consumer thread has finished: we are the consumer.
        unsafe { ring.pop_many(usize::MAX, |v| seen.push(v)) };
        assert_eq!(seen, (0..(a + b) as u32).collect::<Vec<_>>());
        assert!(ring.is_empty());
    });
}

#[test]
fn spsc_full_and_empty_edges() {
    model(|| {
        let ring = Arc::new(SpscRing::new(2));
        let consumer = {
            let ring = ring.clone();
            // SAFETY: the only consumer.
            thread::spawn(move || unsafe { ring.pop() })
        };
        // SAFETY: the only producer.
        let pushed: Vec<u32> = (0..3)
            .filter(|&v| unsafe { ring.push(v) }.is_ok())
            .collect();
        let popped = consumer.join().unwrap();
        // Two slots take the first two; the third fits only if the pop
        // ran before it, and then it took the first value.
        assert_eq!(&pushed[..2], [0, 1]);
        if pushed.len() == 3 {
            assert_eq!(popped, Some(0));
        }
        if let Some(v) = popped {
            assert_eq!(v, 0);
        }
        let expect_left = pushed.len() - usize::from(popped.is_some());
        assert_eq!(ring.len(), expect_left);
        // SAFETY: the consumer thread has finished: we are the consumer.
        let left: Vec<u32> = std::iter::from_fn(|| unsafe { ring.pop() }).collect();
        assert_eq!(left.len(), expect_left);
        assert_eq!(left.last(), pushed.last());
    });
}

/// Items in a depot model: indices of cells in a shared arena, so that
/// loom sees every access to the memory an item stands for.
struct Arena(Vec<UnsafeCell<u64>>);

// SAFETY: the cells are accessed only by the thread whose list or chunk
// holds their index (what the test checks, with loom's race detection).
unsafe impl Sync for Arena {}

#[test]
fn depot_chunk_hand_off_between_two_threads() {
    model(|| {
        let arena = Arc::new(Arena((0..CHUNK).map(|_| UnsafeCell::new(0)).collect()));
        // SAFETY: the items are arena indices, used only by their holder.
        // Two depots, one each way, so that A cannot take its own chunk
        // back before B had it.
        let (there, back) = unsafe { (Arc::new(Depot::<usize>::new(2)), Arc::new(Depot::new(2))) };
        let b = {
            let (arena, there, back) = (arena.clone(), there.clone(), back.clone());
            thread::spawn(move || {
                // Thread B: takes the chunk A freed, uses every item, and
                // frees the chunk back.
                let mut list = Vec::new();
                while !there.refill(&mut list) {
                    thread::yield_now();
                }
                assert_eq!(list.len(), CHUNK);
                for &i in &list {
                    // SAFETY: index `i` is this thread's now.
                    arena.0[i].with_mut(|v| unsafe {
                        assert_eq!(*v, i as u64 + 1, "A's write is visible");
                        *v += 100;
                    });
                }
                assert!(back.spill(&mut list));
                assert!(list.is_empty());
            })
        };
        // Thread A: writes its items, then moves them to the depot.
        let mut list: Vec<usize> = (0..CHUNK).collect();
        for &i in &list {
            // SAFETY: index `i` is this thread's.
            arena.0[i].with_mut(|v| unsafe { *v = i as u64 + 1 });
        }
        assert!(there.spill(&mut list));
        assert!(list.is_empty());
        // ... and gets them back once B is done with them.
        while !back.refill(&mut list) {
            thread::yield_now();
        }
        for &i in &list {
            // SAFETY: index `i` is this thread's again.
            arena.0[i].with(|v| assert_eq!(unsafe { *v }, i as u64 + 101));
        }
        b.join().unwrap();
    });
}
