//! # SimpleQueue
//!
//! Stores packets in a FIFO queue, without notification.
//!
//! ## Synopsis
//! `SimpleQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 for
//! packets dropped because the queue was full.
//!
//! ## Description
//! Like [Queue](#queue) but raises no notifier signal, so downstream pulling
//! tasks keep polling it. Provided for configurations that name it.
//!
//! ## Keywords
//! - **CAPACITY** (integer): maximum length. Default 1000.
//!
//! ## Handlers
//! `length`, `highwater_length`, `capacity`, `drops`, `reset_counts`,
//! `reset`, as for Queue.
//!
//! ## Example
//! ```click
//! src -> SimpleQueue(100) -> Unqueue -> Discard;
//! ```

use super::queue::{Queue, QueueKind};

/// A SimpleQueue instance.
pub fn new() -> Queue {
    Queue::new(QueueKind::Simple)
}

rclick_core::element_class!("SimpleQueue" => new());
