//! A global allocator that counts allocations per thread, for the tests
//! that prove a steady state allocates nothing per packet. Included with
//! `#[path = "common/counting_alloc.rs"] mod counting_alloc;` by the test
//! binaries that want it (as part of `common` it would count in all of
//! them).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Per thread, so tests running in parallel don't count each other's
    // allocations. Const-initialized with no destructor, so the allocator
    // may touch it at any time.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
}

/// Bytes this thread allocated and has not freed (negative when it freed
/// memory other threads allocated).
#[allow(dead_code)]
pub fn live_bytes() -> i64 {
    LIVE_BYTES.with(|a| a.get())
}

fn add_bytes(n: i64) {
    let _ = LIVE_BYTES.try_with(|a| a.set(a.get() + n));
}

/// Allocations (and reallocations) made by this thread so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(|a| a.get())
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        add_bytes(layout.size() as i64);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add_bytes(-(layout.size() as i64));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        add_bytes(new_size as i64 - layout.size() as i64);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
