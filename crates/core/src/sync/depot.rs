//! `Depot`: a bounded global store of free-list chunks, through which the
//! per-thread packet pools trade free packets, packet headers and batch
//! buffers.
//!
//! # Why
//!
//! Each thread keeps its own free lists (`crate::pool`), so allocating and
//! freeing a packet is a push or pop on a thread-local list. When a
//! pipeline is split across threads, thread A makes the packets and thread
//! B frees them: B's lists fill while A's drain. Without a depot, A then
//! allocates every packet from the heap and B frees every packet to it.
//! With one, B moves a chunk of free items to the depot when its list is
//! full, and A takes a chunk when its list is empty: in the steady state
//! neither touches the heap.
//!
//! # Algorithm
//!
//! The depot is an [`MpmcRing`] of chunks; a chunk is an array of
//! [`CHUNK`] items (pointers to free packets), stored by value in the
//! ring's slot, so moving a chunk allocates nothing. [`Depot::spill`]
//! copies the last `CHUNK` items of a thread's list into a chunk and
//! pushes it; [`Depot::refill`] pops a chunk and appends its items to a
//! thread's list. That is one ring operation (one compare-and-swap) per
//! chunk, never one per item. The ring is bounded: when it is full a spill
//! fails and the caller frees to the heap as before, so the depot keeps at
//! most `chunks * CHUNK` items.
//!
//! # Memory orderings
//!
//! Those of the ring: the `Release` store that publishes a chunk and the
//! `Acquire` load of the thread that pops it order everything the spilling
//! thread did to the items (the packets' last writes, the reset of their
//! buffers' reference counts) before anything the refilling thread does
//! with them.
//!
//! # Lifetime
//!
//! The pools' depots are statics that live for the process and are never
//! dropped: items in them are owned by the depot (no thread's exit frees
//! them), reused by whichever thread refills, and their memory goes back
//! to the system when the process exits.

use super::MpmcRing;

/// Items per chunk: large enough that one ring operation is cheap per
/// item, small enough that a thread does not hoard many more than it needs.
pub(crate) const CHUNK: usize = 32;

/// A bounded store of chunks of `P` (pointers to free items, owned by
/// whichever list or chunk holds them).
pub(crate) struct Depot<P> {
    ring: MpmcRing<Chunk<P>>,
}

/// One chunk, stored by value in a ring slot.
struct Chunk<P>([P; CHUNK]);

// SAFETY: `Depot::new`'s contract: the items may move to, and be used and
// freed by, any thread.
unsafe impl<P> Send for Chunk<P> {}

impl<P: Copy> Depot<P> {
    /// A depot of at most `chunks` chunks (rounded up to a power of two).
    ///
    /// # Safety
    /// Each item (typically a raw pointer) stands for memory that whoever
    /// holds the item owns exclusively, and that any thread may use and
    /// free: the depot moves items between threads even when `P` is not
    /// `Send` (raw pointers are not).
    pub(crate) unsafe fn new(chunks: usize) -> Self {
        Depot {
            ring: MpmcRing::new(chunks),
        }
    }

    /// Moves the last [`CHUNK`] items of `list` into the depot as one
    /// chunk. Returns false, leaving `list` as it was, when `list` holds
    /// fewer or the depot is full.
    pub(crate) fn spill(&self, list: &mut Vec<P>) -> bool {
        let len = list.len();
        // A cheap look first: skip the copy while the depot stays full.
        if len < CHUNK || self.ring.len() == self.ring.capacity() {
            return false;
        }
        let Ok(chunk) = <[P; CHUNK]>::try_from(&list[len - CHUNK..]) else {
            return false;
        };
        if self.ring.push(Chunk(chunk)).is_err() {
            return false;
        }
        // The items now belong to the depot (P is Copy: nothing to drop).
        list.truncate(len - CHUNK);
        true
    }

    /// Appends one chunk of [`CHUNK`] items from the depot to `list`.
    /// Returns false when the depot is empty.
    pub(crate) fn refill(&self, list: &mut Vec<P>) -> bool {
        match self.ring.pop() {
            Some(Chunk(chunk)) => {
                list.extend_from_slice(&chunk);
                true
            }
            None => false,
        }
    }

    /// How many chunks the depot holds (a snapshot).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn chunks(&self) -> usize {
        self.ring.len()
    }
}
