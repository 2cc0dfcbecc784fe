//! The rclick runtime: packets, batches, the element interface, router
//! installation and checking, the task scheduler, timers, notifiers and
//! handlers.
//!
//! See `docs/architecture.md` for the design and its reasons.

pub mod batch;
pub mod conf;
pub mod ctx;
pub mod element;
pub mod package;
pub mod packet;
mod pool;
pub mod ports;
pub mod pulltask;
pub mod ring;
pub mod router;
pub mod sched;
pub mod select;
pub mod sync;
pub mod time;
pub mod wire;

pub use batch::Batch;
pub use ctx::{Ctx, InitCtx};
pub use element::{
    ConfigResult, Element, Errors, Handler, HandlerSpec, PerThread, Registry, SharedElement,
    SimpleAction,
};
#[doc(hidden)]
pub use inventory;
pub use packet::Packet;
pub use pulltask::PullTask;
pub use router::{Router, RouterOptions, StopReason, WriteStart};
pub use sched::{NotifierSignal, SignalId, TaskId, TimerId};
pub use select::Interest;
pub use time::Timestamp;

/// The version reported by the `version` handler and `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Stands in for an element whose class could not be found, so that
/// installation can go on collecting errors.
pub(crate) struct Placeholder;

impl Element for Placeholder {}
