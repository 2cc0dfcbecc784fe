//! [`MpmcRing`]: a bounded lock-free multi-producer multi-consumer ring.
//!
//! # Algorithm
//!
//! Dmitry Vyukov's bounded MPMC queue. The ring has a power-of-two number
//! of slots; each slot holds a value and a sequence number. Two free-running
//! counters say where the next push (`tail`) and the next pop (`head`)
//! go; position `pos` lives in slot `pos & mask`. A slot's sequence number
//! tells whose turn it is at that slot:
//!
//! - `seq == pos`: empty, waiting for the push of position `pos`;
//! - `seq == pos + 1`: full, waiting for the pop of position `pos`;
//! - after that pop, `seq == pos + capacity`: empty, waiting for the push
//!   one lap later.
//!
//! A producer reads `tail`, looks at that slot's sequence: equal to its
//! position, it claims the position by moving `tail` forward with a
//! compare-and-swap, writes the value and publishes it by storing
//! `pos + 1`. Smaller, the slot still holds the value of the previous lap:
//! the ring is full. Larger, another producer got there first: it reloads
//! `tail` and tries again. Consumers do the same on `head`, with the
//! sequence one ahead. So each push or pop is one compare-and-swap on a
//! shared counter plus one store to the slot, and no value is ever
//! allocated: values live in the slots.
//!
//! # Memory orderings
//!
//! The slot's sequence number carries all the synchronisation of the data:
//! the store that publishes a value (`pos + 1`) is `Release` and the load
//! of a consumer that sees it is `Acquire`, so the value's write happens
//! before its read; likewise the consumer's `Release` store of
//! `pos + capacity` after reading the value and the next lap's producer's
//! `Acquire` load order that read before the slot is overwritten. The
//! counters themselves only arbitrate which thread owns which position:
//! their loads and compare-and-swaps are `Relaxed` (a stale counter only
//! makes the sequence check fail and the loop reload it).
//!
//! # Caveats
//!
//! Like every ring of this kind it is not strictly linearisable at the
//! edges: a push may report the ring full while a pop that has claimed the
//! oldest slot is still reading it, and a pop may report it empty while a
//! push that has claimed the next slot is still writing it (later slots
//! are not looked at). Both are transient: callers retry or treat them as
//! "full"/"empty now". [`MpmcRing::len`] is a snapshot of two counters read
//! one after the other: approximate while other threads work on the ring,
//! exact when it is quiescent.

use std::mem::MaybeUninit;

use super::shim::{AtomicUsize, Ordering, UnsafeCell};
use super::CachePadded;

struct Slot<T> {
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A bounded lock-free queue that any number of threads may push to and
/// pop from at once. See the module documentation for the algorithm.
pub struct MpmcRing<T> {
    /// The next position to pop.
    head: CachePadded<AtomicUsize>,
    /// The next position to push.
    tail: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
    mask: usize,
}

// SAFETY: values move between threads through the ring (hence `T: Send`);
// every access to a slot's value is made by the one thread that owns the
// slot's current position (claimed with a compare-and-swap on a counter)
// and ordered with the other threads' accesses by the slot's sequence
// number (Release/Acquire), so sharing `&MpmcRing` is sound.
unsafe impl<T: Send> Send for MpmcRing<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for MpmcRing<T> {}

impl<T> MpmcRing<T> {
    /// An empty ring of at least `capacity` slots: the next power of two,
    /// and at least 2 (one slot cannot tell full from empty with sequence
    /// numbers).
    ///
    /// # Panics
    /// If the rounded capacity overflows `usize`.
    pub fn new(capacity: usize) -> Self {
        let cap = capacity
            .max(2)
            .checked_next_power_of_two()
            .expect("MpmcRing capacity overflows usize");
        let slots = (0..cap)
            .map(|i| Slot {
                seq: AtomicUsize::new(i),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        MpmcRing {
            head: CachePadded(AtomicUsize::new(0)),
            tail: CachePadded(AtomicUsize::new(0)),
            slots,
            mask: cap - 1,
        }
    }

    /// How many values the ring holds at most.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Adds `value` at the tail, or hands it back when the ring is full.
    pub fn push(&self, value: T) -> Result<(), T> {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            // Acquire: pairs with the Release of the pop that emptied the
            // slot one lap ago, which read the old value before we write.
            let seq = slot.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos) as isize;
            if diff == 0 {
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the compare-and-swap made position `pos`
                        // ours alone, and its slot is empty (seq == pos):
                        // no other thread touches the value until the store
                        // below publishes it.
                        slot.value.with_mut(|v| unsafe { (*v).write(value) });
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                // The slot still holds the value from one lap ago: full.
                return Err(value);
            } else {
                // Another producer took this position: catch up.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Removes the value at the head, or `None` when the ring is empty.
    pub fn pop(&self) -> Option<T> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            // Acquire: pairs with the Release that published the value.
            let seq = slot.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos.wrapping_add(1)) as isize;
            if diff == 0 {
                match self.head.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the compare-and-swap made position `pos`
                        // ours alone, and its slot holds the value its
                        // producer published (seq == pos + 1); we move it
                        // out once, and the store below hands the now
                        // empty slot to the producer one lap later.
                        let value = slot.value.with(|v| unsafe { (*v).assume_init_read() });
                        slot.seq
                            .store(pos.wrapping_add(self.mask + 1), Ordering::Release);
                        return Some(value);
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                // Not yet published for this lap: empty.
                return None;
            } else {
                // Another consumer took this position: catch up.
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// How many values the ring holds: exact when no other thread is using
    /// it, a snapshot between 0 and the capacity otherwise.
    pub fn len(&self) -> usize {
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        let n = tail.wrapping_sub(head);
        // The two loads are not one snapshot: `head` may have moved past
        // the `tail` we then read (stale), or pops and pushes in between
        // may make the difference exceed the capacity.
        if (n as isize) < 0 {
            0
        } else {
            n.min(self.capacity())
        }
    }

    /// Whether the ring holds nothing (with the same caveat as
    /// [`MpmcRing::len`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for MpmcRing<T> {
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() {
            while self.pop().is_some() {}
        }
    }
}

impl<T> std::fmt::Debug for MpmcRing<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpmcRing")
            .field("capacity", &self.capacity())
            .field("len", &self.len())
            .finish()
    }
}
