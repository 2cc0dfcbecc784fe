//! Lock-free building blocks for running a router on several threads
//! (`-j N`): rings that carry packets and batches between threads, and the
//! chunked hand-off that lets the per-thread packet pools trade free
//! packets through a global depot.
//!
//! - [`MpmcRing`]: a bounded multi-producer multi-consumer ring (Vyukov's
//!   sequence-numbered slots), for queues any thread may push to or pull
//!   from.
//! - [`SpscRing`]: a bounded single-producer single-consumer ring with
//!   cached indices on separate cache lines and batch operations that
//!   publish once per batch, for the links the router proves have exactly
//!   one pushing and one pulling thread.
//! - `Depot` (crate-private): chunks of free-list items moved between
//!   threads with one ring operation per chunk (used by the packet pools).
//!
//! Every structure goes through a small shim (`shim.rs`) for its atomics
//! and cells, so the same code is model-checked by
//! [loom](https://docs.rs/loom) when built with `--cfg loom`:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p rclick-core --release --lib sync
//! ```

pub(crate) mod depot;
mod mpmc;
mod shim;
mod spsc;

pub use mpmc::MpmcRing;
pub use spsc::SpscRing;

/// Aligns (and pads) `T` to its own cache line, so two values written by
/// different threads do not share one (false sharing). 128 bytes on
/// x86-64 and AArch64, whose prefetchers pull lines in pairs; 64 elsewhere.
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), repr(align(128)))]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    repr(align(64))
)]
#[derive(Default)]
pub(crate) struct CachePadded<T>(pub T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
