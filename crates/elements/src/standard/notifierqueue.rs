//! # NotifierQueue
//!
//! Stores packets in a FIFO queue and notifies pullers when it is non-empty.
//!
//! ## Synopsis
//! `NotifierQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 for
//! packets dropped because the queue was full.
//!
//! ## Description
//! A FIFO queue like [Queue](#queue) with an empty notifier only: pulling
//! tasks downstream sleep while it is empty and wake when a packet arrives.
//! Unlike Queue it has no full notifier, so a source upstream keeps pushing
//! while it is full, and the excess is dropped (the first drop is reported
//! as `NAME :: NotifierQueue: overflow`, as in Click).
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
//! src -> NotifierQueue(100) -> Unqueue -> Discard;
//! ```

use super::queue::{Queue, QueueKind};

/// A NotifierQueue instance.
pub fn new() -> Queue {
    Queue::new(QueueKind::Notifier)
}

rclick_core::element_class!("NotifierQueue" => new());
