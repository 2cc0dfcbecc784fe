//! Per-thread free lists of packet headers, data buffers and batch buffers,
//! and the global depots through which threads trade them.
//!
//! One thread-local holds all three, so allocating a packet or a batch is a
//! single thread-local access. That thread-local is const-initialised and
//! has no destructor of its own (its lists are `ManuallyDrop`), so an
//! access is a plain load from the thread's TLS block, with no lazy
//! initialisation or liveness check. A separate guard, registered the
//! first time a list grows, frees the pooled memory when the thread exits
//! and closes the lists (their limit becomes 0): packets dropped after that
//! (by other thread-local destructors) find every list full and go back to
//! the allocator, and allocations find them empty.
//!
//! Packets made on one thread and freed on another (a pipeline split
//! across threads) would drain the first thread's lists and overfill the
//! second's. So each list trades with a global depot
//! ([`crate::sync::depot`]), in chunks of [`CHUNK`] items: a full list
//! moves its last chunk there before refusing an item, and a caller that
//! finds a list empty takes a chunk from there ([`FreeList::refill`])
//! before going to the allocator. That is one atomic operation per chunk,
//! on the slow paths only: the inline push and pop are unchanged. The
//! depots are bounded: when one is full, items go back to the allocator as
//! before. They are statics, never freed: what they hold is reused by any
//! thread, or returned to the system at process exit.
//!
//! From a cold start, the thread that makes packets for another still
//! allocates now and then until enough packets circulate: it allocates
//! when its list and the depot are both empty (also for the instant the
//! depot's only chunk is still being published), and each such packet
//! stays in circulation. That stops once the circulation covers the
//! largest number in flight (the freeing thread's full lists, the queue
//! between the threads, a chunk in the depot).
//!
//! The depots live for the process and are never freed: after a large
//! burst even a single-threaded router keeps, beyond its own lists, up to
//! 8192 free packets of each size, 8192 bare headers and 1024 batch
//! buffers there (about 16 MiB of full-size buffers): bounded, and reused
//! by the next burst, rather than returned to the allocator.

use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use crate::sync::depot::{Depot, CHUNK};

/// The global depot of one kind of pooled item.
type PoolDepot<T> = Depot<NonNull<T>>;

/// A bounded stack of boxed items. Items beyond the limit are freed by
/// the caller instead of being kept.
pub(crate) struct FreeList<T: 'static> {
    /// Not dropped with the thread-local (which then needs no destructor
    /// and no liveness check): the guard frees it.
    items: ManuallyDrop<Vec<NonNull<T>>>,
    /// How many items fit without growing the Vec or passing the limit:
    /// `min(items.capacity(), limit)`, so a push checks one bound.
    room: usize,
    limit: usize,
    /// The global depot this list trades chunks with (`None` for closed
    /// lists, and under loom, whose atomics only work inside a model).
    depot: fn() -> Option<&'static PoolDepot<T>>,
}

impl<T: 'static> FreeList<T> {
    const fn new(limit: usize, depot: fn() -> Option<&'static PoolDepot<T>>) -> Self {
        FreeList {
            items: ManuallyDrop::new(Vec::new()),
            room: 0,
            limit,
            depot,
        }
    }

    /// A free item from the list, or `None` when it is empty: the caller
    /// then tries [`FreeList::refill`] before going to the allocator (on its
    /// own slow path, so this inline pop stays as short as it can be).
    #[inline]
    pub fn pop(&mut self) -> Option<NonNull<T>> {
        self.items.pop()
    }

    /// For an empty list: takes a chunk of free items from the global depot
    /// (left there by threads whose lists were full) and returns one of
    /// them, or `None` when the depot is empty too.
    #[cold]
    #[inline(never)]
    pub fn refill(&mut self) -> Option<NonNull<T>> {
        // A closed list keeps nothing (its storage is already freed).
        if self.limit < CHUNK {
            return None;
        }
        let depot = (self.depot)()?;
        if !depot.refill(&mut self.items) {
            return None;
        }
        // The list holds items now (maybe for the first time): the guard
        // must free them at thread exit.
        register_guard();
        self.room = self.items.capacity().min(self.limit);
        self.items.pop()
    }

    /// Keeps `item` for reuse; hands it back when the list is full.
    #[inline(always)]
    pub fn push(&mut self, item: NonNull<T>) -> Result<(), NonNull<T>> {
        let len = self.items.len();
        if len < self.room {
            // SAFETY: len < room <= capacity: the slot is allocated, and
            // the new length covers only initialised slots.
            unsafe {
                self.items.as_mut_ptr().add(len).write(item);
                self.items.set_len(len + 1);
            }
            return Ok(());
        }
        self.push_slow(item)
    }

    /// [`FreeList::push`] when the Vec must grow (the first time, also
    /// registering the guard that frees the pools) or the list is full
    /// (then a chunk moves to the depot, if it has room).
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, item: NonNull<T>) -> Result<(), NonNull<T>> {
        if self.items.len() >= self.limit {
            if self.limit < CHUNK {
                return Err(item);
            }
            match (self.depot)() {
                Some(depot) if depot.spill(&mut self.items) => {
                    // CHUNK slots are free again, within the capacity.
                    self.items.push(item);
                    return Ok(());
                }
                _ => return Err(item),
            }
        }
        register_guard();
        self.items.push(item);
        self.room = self.items.capacity().min(self.limit);
        Ok(())
    }

    /// Frees every item and the list's own storage, and closes the list:
    /// from now on it keeps nothing.
    fn free_all(&mut self) {
        for p in self.items.drain(..) {
            // SAFETY: every pooled item came from Box::leak and is owned by
            // the list alone.
            unsafe { drop(Box::from_raw(p.as_ptr())) };
        }
        self.limit = 0;
        self.room = 0;
        // SAFETY: the Vec is replaced at once and never used after drop.
        unsafe { ManuallyDrop::drop(&mut self.items) };
        self.items = ManuallyDrop::new(Vec::new());
    }
}

/// The pools of one thread.
pub(crate) struct Pools {
    /// Bare packet headers: their buffer went elsewhere (`buf` is stale).
    pub headers: FreeList<crate::packet::Header>,
    /// Free packets: headers that each keep an unshared full-size buffer
    /// (reference count 1), so a packet is made or freed with one pop or
    /// push.
    pub full: FreeList<crate::packet::Header>,
    /// The same with small buffers.
    pub small: FreeList<crate::packet::Header>,
    pub batches: FreeList<crate::batch::BatchBuf>,
}

impl Pools {
    /// The free packets whose buffers hold `capacity` bytes (at most
    /// [`crate::packet::POOLED_BUFFER_SIZE`]).
    #[inline(always)]
    pub fn packets(&mut self, capacity: usize) -> &mut FreeList<crate::packet::Header> {
        if capacity > crate::packet::SMALL_BUFFER_SIZE {
            &mut self.full
        } else {
            &mut self.small
        }
    }
}

const PACKET_POOL_LIMIT: usize = 16384;
const BATCH_POOL_LIMIT: usize = 1024;
/// Chunks (of [`CHUNK`] items) each global depot keeps at most: 8192 free
/// packets of each size (16 MiB of full-size buffers), 8192 bare headers,
/// 1024 batch buffers.
#[cfg_attr(loom, allow(dead_code))]
const PACKET_DEPOT_CHUNKS: usize = 256;
#[cfg_attr(loom, allow(dead_code))]
const BATCH_DEPOT_CHUNKS: usize = 32;

/// Defines a function returning one global depot, created on first use.
macro_rules! global_depot {
    ($name:ident, $t:ty, $chunks:expr) => {
        fn $name() -> Option<&'static PoolDepot<$t>> {
            #[cfg(not(loom))]
            {
                static DEPOT: std::sync::OnceLock<PoolDepot<$t>> = std::sync::OnceLock::new();
                // SAFETY: a pooled item is free memory (a packet header,
                // with or without its unshared buffer, or an empty batch
                // buffer) that the list or depot chunk holding the pointer
                // owns exclusively; it is what a `Packet` or `Batch` holds,
                // both `Send`, so any thread may reuse or free it.
                Some(DEPOT.get_or_init(|| unsafe { Depot::new($chunks) }))
            }
            #[cfg(loom)]
            None
        }
    };
}

global_depot!(headers_depot, crate::packet::Header, PACKET_DEPOT_CHUNKS);
global_depot!(full_depot, crate::packet::Header, PACKET_DEPOT_CHUNKS);
global_depot!(small_depot, crate::packet::Header, PACKET_DEPOT_CHUNKS);
global_depot!(batches_depot, crate::batch::BatchBuf, BATCH_DEPOT_CHUNKS);

/// For closed lists, which trade with no depot.
fn no_depot<T>() -> Option<&'static PoolDepot<T>> {
    None
}

// `Pools` must not need dropping: a thread-local without a destructor is a
// plain `#[thread_local]` static, accessed with no state check.
const _: () = assert!(!std::mem::needs_drop::<Pools>());

thread_local! {
    static POOLS: UnsafeCell<Pools> = const {
        UnsafeCell::new(Pools {
            headers: FreeList::new(PACKET_POOL_LIMIT, headers_depot),
            full: FreeList::new(PACKET_POOL_LIMIT, full_depot),
            small: FreeList::new(PACKET_POOL_LIMIT, small_depot),
            batches: FreeList::new(BATCH_POOL_LIMIT, batches_depot),
        })
    };
    static GUARD: Guard = const { Guard };
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = POOLS.try_with(|p| {
            // SAFETY: thread exit, outside any `with` (destructors do not
            // run inside one), so this borrow is unique; whatever runs
            // later on this thread finds the lists closed.
            let p = unsafe { &mut *p.get() };
            for list in [&mut p.full, &mut p.small] {
                for &h in list.items.iter() {
                    // SAFETY: a free packet's header is the list's alone,
                    // and its buffer the header's alone.
                    unsafe { crate::packet::free_buffer_of(h) };
                }
            }
            p.headers.free_all();
            p.full.free_all();
            p.small.free_all();
            p.batches.free_all();
        });
    }
}

fn register_guard() {
    let _ = GUARD.try_with(|_| {});
}

/// Runs `f` with this thread's pools. On targets with native thread-locals
/// they are always there, even while the thread's locals are being
/// destroyed: the pools have no destructor (after the guard's, their lists
/// are closed). Elsewhere a thread-local can be gone at teardown; `f` then
/// gets closed, empty pools that keep nothing, so everything goes to and
/// from the allocator.
///
/// `f` must not call `with` again (every caller is a short closure that
/// pushes, pops and at most calls the allocator), so the mutable borrow is
/// unique.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&mut Pools) -> R) -> R {
    match pools() {
        // SAFETY: thread-local, and never re-entered (see above).
        Some(p) => f(unsafe { &mut *p }),
        None => f(&mut closed_pools()),
    }
}

/// This thread's pools, when its thread-locals are still there. One small
/// function for every caller (rather than a `LocalKey` access per
/// closure, which the compiler sometimes left out of line): with native
/// thread-locals it inlines to the address computation, and is never
/// `None`.
#[inline(always)]
fn pools() -> Option<*mut Pools> {
    POOLS.try_with(|p| p.get()).ok()
}

/// Pools that keep nothing (every limit 0): pops find them empty, pushes
/// find them full.
#[cold]
fn closed_pools() -> Pools {
    Pools {
        headers: FreeList::new(0, no_depot),
        full: FreeList::new(0, no_depot),
        small: FreeList::new(0, no_depot),
        batches: FreeList::new(0, no_depot),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A depot of this test's own (the pools' are process-wide).
    fn test_depot() -> Option<&'static PoolDepot<u64>> {
        static DEPOT: std::sync::OnceLock<PoolDepot<u64>> = std::sync::OnceLock::new();
        // SAFETY: the items are boxed numbers owned by whoever holds them.
        Some(DEPOT.get_or_init(|| unsafe { Depot::new(2) }))
    }

    fn boxed(v: u64) -> NonNull<u64> {
        NonNull::from(Box::leak(Box::new(v)))
    }

    #[test]
    fn full_lists_spill_chunks_and_empty_lists_refill() {
        let limit = 2 * CHUNK;
        let mut full = FreeList::new(limit, test_depot);
        for v in 0..limit as u64 {
            assert!(full.push(boxed(v)).is_ok());
        }
        // Full: the top chunk moves to the depot, making room.
        assert!(full.push(boxed(1000)).is_ok());
        assert_eq!(full.items.len(), limit - CHUNK + 1);
        // Another thread's empty list (here: another list) takes it.
        let mut empty = FreeList::new(limit, test_depot);
        assert_eq!(empty.pop(), None, "pop alone never touches the depot");
        let got = empty.refill().expect("a chunk in the depot");
        // SAFETY: the item is ours now (a box from `boxed`).
        assert_eq!(
            unsafe { *got.as_ref() },
            limit as u64 - 1,
            "the chunk's top"
        );
        assert_eq!(empty.items.len(), CHUNK - 1);
        assert_eq!(empty.refill(), None, "the depot is empty again");
        // A closed list trades nothing.
        let mut closed = FreeList::new(0, test_depot);
        let item = boxed(7);
        assert_eq!(closed.push(item), Err(item));
        assert_eq!(closed.refill(), None);
        // SAFETY: every item came from `boxed` and is freed once.
        unsafe {
            drop(Box::from_raw(item.as_ptr()));
            drop(Box::from_raw(got.as_ptr()));
        }
        full.free_all();
        empty.free_all();
        closed.free_all();
    }
}
