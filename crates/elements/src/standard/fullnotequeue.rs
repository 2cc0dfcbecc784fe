//! # FullNoteQueue
//!
//! Stores packets in a FIFO queue, with empty and full notifiers.
//!
//! ## Synopsis
//! `FullNoteQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 for
//! packets dropped because the queue was full.
//!
//! ## Description
//! Click's name for the notifying queue that [Queue](#queue) is: pulling
//! tasks downstream sleep while it is empty, and sources upstream
//! (InfiniteSource, RatedSource) sleep while it is full and wake when room
//! appears, so a fast source in front of a slow drain drops nothing. In
//! Click 2.1 FullNoteQueue is an alias whose `class` handler reads `Queue`;
//! rclick's reads `FullNoteQueue`.
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
//! InfiniteSource -> FullNoteQueue(10) -> Unqueue -> Discard;
//! ```

use super::queue::{Queue, QueueKind};

/// A FullNoteQueue instance.
pub fn new() -> Queue {
    Queue::new(QueueKind::Full)
}

rclick_core::element_class!("FullNoteQueue" => new());
