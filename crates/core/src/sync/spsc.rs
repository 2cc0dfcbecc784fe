//! [`SpscRing`]: a bounded single-producer single-consumer ring.
//!
//! # Algorithm
//!
//! A power-of-two array of slots and two free-running counters: `tail`,
//! the next position to write, advanced only by the producer, and `head`,
//! the next position to read, advanced only by the consumer. Position
//! `pos` lives in slot `pos & mask`; the ring holds `tail - head` values
//! (wrapping arithmetic), so it is full when that equals the capacity and
//! empty when it is 0. With one writer per counter no compare-and-swap is
//! needed: a push writes the slot then stores `tail + 1`, a pop reads the
//! slot then stores `head + 1`.
//!
//! Each side also keeps a private copy of the other side's counter (the
//! producer's `cached_head`, the consumer's `cached_tail`) and reloads the
//! shared one only when its copy says the ring is full (producer) or empty
//! (consumer). In the steady state of a busy link a push or pop therefore
//! touches no cache line the other side writes, apart from the slot
//! itself. The producer's counter and cache share one cache line, the
//! consumer's another ([`super::CachePadded`]).
//!
//! The batch forms [`SpscRing::push_many`] and [`SpscRing::pop_many`]
//! move up to as many values as fit (or as are there) and publish the
//! counter once for the whole batch: one atomic store, and one cache-line
//! transfer to the other side, per batch instead of per value.
//!
//! # Memory orderings
//!
//! The producer's `Release` store of `tail` after writing slots, and the
//! consumer's `Acquire` load of `tail` before reading them, order the
//! writes before the reads; symmetrically the consumer's `Release` store
//! of `head` after reading slots and the producer's `Acquire` load of
//! `head` before overwriting them order those reads before the next lap's
//! writes. A side's loads of its own counter are `Relaxed`: only it
//! writes that counter.
//!
//! # Contract
//!
//! [`SpscRing::push`]/[`SpscRing::push_many`] and
//! [`SpscRing::pop`]/[`SpscRing::pop_many`] are `unsafe`: at any time at
//! most one thread may be pushing and at most one popping (they may be
//! different threads, or the same one). For the rings embedded in
//! elements, the router is to guarantee it when it assigns elements to
//! threads, by checking that exactly one thread pushes to and one thread
//! pulls from each such element. Handing the producer or consumer role to another
//! thread later is fine if the hand-over itself synchronises (a thread
//! join, a mutex, a Release/Acquire flag).

use std::mem::MaybeUninit;

use super::shim::{AtomicUsize, Ordering, UnsafeCell};
use super::CachePadded;

/// One side's counter, and its copy of the other side's.
struct Side {
    /// Shared: written by this side only, read by the other.
    pos: AtomicUsize,
    /// Private to this side: the other side's counter when last read.
    cached: UnsafeCell<usize>,
}

/// A bounded queue for exactly one pushing and one popping thread. See
/// the module documentation for the algorithm and the contract of its
/// `unsafe` methods.
pub struct SpscRing<T> {
    /// `pos` is the tail (next write), `cached` the producer's copy of the
    /// head.
    producer: CachePadded<Side>,
    /// `pos` is the head (next read), `cached` the consumer's copy of the
    /// tail.
    consumer: CachePadded<Side>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
}

// SAFETY: values move from the producer's thread to the consumer's (hence
// `T: Send`). Shared access is sound under the contract of the unsafe
// methods (one producer, one consumer at a time): each slot is written
// only by the producer while it is outside head..tail and read only by the
// consumer while inside, ordered by the Release/Acquire counters; each
// side's private cache is touched by that side alone. The safe methods
// only load atomics.
unsafe impl<T: Send> Send for SpscRing<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SpscRing<T> {}

/// Stores a counter when dropped: publishes the values a batch has moved
/// so far even if the caller's iterator or closure panics.
struct Publish<'a> {
    counter: &'a AtomicUsize,
    pos: usize,
}

impl Drop for Publish<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.counter.store(self.pos, Ordering::Release);
    }
}

impl<T> SpscRing<T> {
    /// An empty ring of at least `capacity` slots (the next power of two;
    /// at least 1).
    ///
    /// # Panics
    /// If the rounded capacity overflows `usize`.
    pub fn new(capacity: usize) -> Self {
        let cap = capacity
            .max(1)
            .checked_next_power_of_two()
            .expect("SpscRing capacity overflows usize");
        SpscRing {
            producer: CachePadded(Side {
                pos: AtomicUsize::new(0),
                cached: UnsafeCell::new(0),
            }),
            consumer: CachePadded(Side {
                pos: AtomicUsize::new(0),
                cached: UnsafeCell::new(0),
            }),
            slots: (0..cap)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
            mask: cap - 1,
        }
    }

    /// How many values the ring holds at most.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// How many values the ring holds: exact when neither side is busy, a
    /// snapshot between 0 and the capacity otherwise.
    pub fn len(&self) -> usize {
        let head = self.consumer.pos.load(Ordering::Acquire);
        let tail = self.producer.pos.load(Ordering::Acquire);
        let n = tail.wrapping_sub(head);
        if (n as isize) < 0 {
            0
        } else {
            n.min(self.capacity())
        }
    }

    /// Whether the ring holds nothing (with the caveat of
    /// [`SpscRing::len`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many slots the producer may fill from position `tail`, reloading
    /// the consumer's head only when the cached one says fewer than `want`.
    ///
    /// # Safety
    /// Called by the producer only.
    #[inline(always)]
    unsafe fn room(&self, tail: usize, want: usize) -> usize {
        let cap = self.capacity();
        // SAFETY: the producer's cache is the producer's alone.
        let mut head = self.producer.cached.with(|c| unsafe { *c });
        let mut room = cap - tail.wrapping_sub(head);
        if room < want {
            // Acquire: the consumer's reads of the slots it freed happen
            // before we overwrite them.
            head = self.consumer.pos.load(Ordering::Acquire);
            // SAFETY: as above.
            self.producer.cached.with_mut(|c| unsafe { *c = head });
            room = cap - tail.wrapping_sub(head);
        }
        room
    }

    /// How many values the consumer may read from position `head`,
    /// reloading the producer's tail only when the cached one says fewer
    /// than `want`.
    ///
    /// # Safety
    /// Called by the consumer only.
    #[inline(always)]
    unsafe fn ready(&self, head: usize, want: usize) -> usize {
        // SAFETY: the consumer's cache is the consumer's alone.
        let mut tail = self.consumer.cached.with(|c| unsafe { *c });
        let mut ready = tail.wrapping_sub(head);
        if ready < want {
            // Acquire: the producer's writes of the slots happen before
            // we read them.
            tail = self.producer.pos.load(Ordering::Acquire);
            // SAFETY: as above.
            self.consumer.cached.with_mut(|c| unsafe { *c = tail });
            ready = tail.wrapping_sub(head);
        }
        ready
    }

    /// Adds `value` at the tail, or hands it back when the ring is full.
    ///
    /// # Safety
    /// No other thread is pushing (or calling [`SpscRing::push_many`]) at
    /// the same time.
    #[inline]
    pub unsafe fn push(&self, value: T) -> Result<(), T> {
        let tail = self.producer.pos.load(Ordering::Relaxed);
        // SAFETY: we are the only producer (the caller's contract).
        if unsafe { self.room(tail, 1) } == 0 {
            return Err(value);
        }
        // SAFETY: the slot at `tail` is outside head..tail, so the
        // consumer does not read it until the store below; we are the only
        // producer.
        self.slots[tail & self.mask].with_mut(|s| unsafe { (*s).write(value) });
        self.producer
            .pos
            .store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// Removes the value at the head, or `None` when the ring is empty.
    ///
    /// # Safety
    /// No other thread is popping (or calling [`SpscRing::pop_many`]) at
    /// the same time.
    #[inline]
    pub unsafe fn pop(&self) -> Option<T> {
        let head = self.consumer.pos.load(Ordering::Relaxed);
        // SAFETY: we are the only consumer (the caller's contract).
        if unsafe { self.ready(head, 1) } == 0 {
            return None;
        }
        // SAFETY: the slot at `head` is inside head..tail: the producer
        // published its value and does not touch it until the store below
        // frees it; we are the only consumer, and read it once.
        let value = self.slots[head & self.mask].with(|s| unsafe { (*s).assume_init_read() });
        self.consumer
            .pos
            .store(head.wrapping_add(1), Ordering::Release);
        Some(value)
    }

    /// Pushes values from `values` while there is room, and publishes them
    /// with a single store: returns how many it pushed. Values the ring had
    /// no room for stay in the iterator (it is not advanced past them).
    ///
    /// # Safety
    /// As for [`SpscRing::push`]; and `values` must not push to this ring
    /// itself (the batch's index is published only at the end, so a
    /// nested push would write a slot this call then overwrites).
    pub unsafe fn push_many<I: Iterator<Item = T>>(&self, values: &mut I) -> usize {
        let tail = self.producer.pos.load(Ordering::Relaxed);
        let want = values.size_hint().0.max(1);
        // SAFETY: we are the only producer (the caller's contract).
        let room = unsafe { self.room(tail, want) };
        // Publishes whatever was written, also if `next` panics.
        let mut publish = Publish {
            counter: &self.producer.pos,
            pos: tail,
        };
        for _ in 0..room {
            let Some(value) = values.next() else { break };
            let pos = publish.pos;
            // SAFETY: as in `push`: `pos` is in tail..head + capacity, not
            // yet published, so the slot is ours.
            self.slots[pos & self.mask].with_mut(|s| unsafe { (*s).write(value) });
            publish.pos = pos.wrapping_add(1);
        }
        publish.pos.wrapping_sub(tail)
    }

    /// Pops up to `max` values, handing each to `f` in order, and frees
    /// their slots with a single store: returns how many it popped.
    ///
    /// # Safety
    /// As for [`SpscRing::pop`]; and `f` must not pop from this ring itself
    /// (the batch's index is published only at the end, so a nested pop
    /// would take a slot this call already handed to `f`).
    pub unsafe fn pop_many(&self, max: usize, mut f: impl FnMut(T)) -> usize {
        let head = self.consumer.pos.load(Ordering::Relaxed);
        // SAFETY: we are the only consumer (the caller's contract).
        let n = unsafe { self.ready(head, max) }.min(max);
        // Frees the slots read so far, also if `f` panics (each value is
        // moved out before `f` runs, so none is read twice).
        let mut publish = Publish {
            counter: &self.consumer.pos,
            pos: head,
        };
        for _ in 0..n {
            let pos = publish.pos;
            // SAFETY: as in `pop`: `pos` is in head..tail, published by the
            // producer and read once here.
            let value = self.slots[pos & self.mask].with(|s| unsafe { (*s).assume_init_read() });
            publish.pos = pos.wrapping_add(1);
            f(value);
        }
        n
    }
}

impl<T> Drop for SpscRing<T> {
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() {
            // SAFETY: `&mut self`: no other thread pushes or pops.
            unsafe { while self.pop().is_some() {} }
        }
    }
}

impl<T> std::fmt::Debug for SpscRing<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpscRing")
            .field("capacity", &self.capacity())
            .field("len", &self.len())
            .finish()
    }
}
