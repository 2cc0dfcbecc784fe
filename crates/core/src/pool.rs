//! Per-thread free lists of packet headers, data buffers and batch buffers.
//!
//! One thread-local holds all three, so allocating a packet or a batch is a
//! single thread-local access. A separate guard, registered the first time
//! a list grows, frees the pooled memory when the thread exits. Packets
//! dropped while thread-locals are being torn down (by other thread-local
//! destructors) find no pool and fall back to the allocator.

use std::cell::UnsafeCell;
use std::ptr::NonNull;

/// A bounded stack of boxed items. Items beyond the limit are freed by
/// the caller instead of being kept.
pub(crate) struct FreeList<T> {
    items: Vec<NonNull<T>>,
    limit: usize,
}

impl<T> FreeList<T> {
    const fn new(limit: usize) -> Self {
        FreeList {
            items: Vec::new(),
            limit,
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<NonNull<T>> {
        self.items.pop()
    }

    /// Keeps `item` for reuse; hands it back when the list is full.
    #[inline]
    pub fn push(&mut self, item: NonNull<T>) -> Result<(), NonNull<T>> {
        if self.items.len() >= self.limit {
            return Err(item);
        }
        if self.items.len() == self.items.capacity() {
            register_guard();
        }
        self.items.push(item);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    fn free_all(&mut self) {
        for p in self.items.drain(..) {
            // SAFETY: every pooled item came from Box::leak and is owned by
            // the list alone.
            unsafe { drop(Box::from_raw(p.as_ptr())) };
        }
    }
}

/// The pools of one thread.
pub(crate) struct Pools {
    pub headers: FreeList<crate::packet::Header>,
    /// Free full-size and small buffers.
    pub buffers: FreeList<crate::packet::Buffer>,
    pub small_buffers: FreeList<crate::packet::Buffer>,
    pub batches: FreeList<crate::batch::BatchBuf>,
}

impl Pools {
    /// The free list for buffers of `capacity` bytes (at most
    /// [`crate::packet::POOLED_BUFFER_SIZE`]).
    #[inline(always)]
    pub fn buffer_list(&mut self, capacity: usize) -> &mut FreeList<crate::packet::Buffer> {
        if capacity > crate::packet::SMALL_BUFFER_SIZE {
            &mut self.buffers
        } else {
            &mut self.small_buffers
        }
    }

    /// The header list and [`Pools::buffer_list`] at once.
    #[inline(always)]
    pub fn header_and_buffer_lists(
        &mut self,
        capacity: usize,
    ) -> (
        &mut FreeList<crate::packet::Header>,
        &mut FreeList<crate::packet::Buffer>,
    ) {
        let buffers = if capacity > crate::packet::SMALL_BUFFER_SIZE {
            &mut self.buffers
        } else {
            &mut self.small_buffers
        };
        (&mut self.headers, buffers)
    }
}

const PACKET_POOL_LIMIT: usize = 16384;
const BATCH_POOL_LIMIT: usize = 1024;

thread_local! {
    static POOLS: UnsafeCell<Pools> = const {
        UnsafeCell::new(Pools {
            headers: FreeList::new(PACKET_POOL_LIMIT),
            buffers: FreeList::new(PACKET_POOL_LIMIT),
            small_buffers: FreeList::new(PACKET_POOL_LIMIT),
            batches: FreeList::new(BATCH_POOL_LIMIT),
        })
    };
    static GUARD: Guard = const { Guard };
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = POOLS.try_with(|p| {
            // SAFETY: thread exit; nothing else on this thread uses the
            // pools any more.
            let p = unsafe { &mut *p.get() };
            p.headers.free_all();
            p.buffers.free_all();
            p.small_buffers.free_all();
            p.batches.free_all();
        });
    }
}

fn register_guard() {
    let _ = GUARD.try_with(|_| {});
}

/// Runs `f` with this thread's pools, or returns `None` when the thread's
/// locals are already being destroyed.
///
/// `f` must not call `with` again (every caller is a short closure that
/// only pushes or pops), so the mutable borrow is unique.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&mut Pools) -> R) -> Option<R> {
    // SAFETY: thread-local, and never re-entered (see above).
    POOLS.try_with(|p| f(unsafe { &mut *p.get() })).ok()
}
