//! # QuickNoteQueue
//!
//! Stores packets in a FIFO queue whose empty notifier sleeps as soon as it
//! empties.
//!
//! ## Synopsis
//! `QuickNoteQueue([CAPACITY])`
//!
//! ## Ports and processing
//! One push input; one pull output, and an optional push output 1 that
//! receives packets dropped because the queue was full.
//!
//! ## Description
//! A [FullNoteQueue](#fullnotequeue) (empty and full notifiers) whose empty
//! notifier goes to sleep as soon as a pull takes the last packet, rather
//! than at the next pull that finds the queue empty: a puller downstream
//! sleeps one pull sooner. rclick's Queue already does this, so the two
//! behave the same; the class is here for Click configurations that name
//! it.
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
//! InfiniteSource(LIMIT 5) -> QuickNoteQueue(10) -> Unqueue -> Discard;
//! ```

use crate::standard::queue::{Queue, QueueKind};

/// A QuickNoteQueue instance.
pub fn new() -> Queue {
    Queue::new(QueueKind::Full)
}

rclick_core::element_class!("QuickNoteQueue" => new());
