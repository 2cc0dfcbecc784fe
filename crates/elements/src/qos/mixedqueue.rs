//! # MixedQueue
//!
//! Stores packets in a queue with a FIFO input and a LIFO input.
//!
//! ## Synopsis
//! `MixedQueue([CAPACITY])`
//!
//! ## Ports and processing
//! Two push inputs; one pull output, and an optional push output 1 that
//! receives dropped packets.
//!
//! ## Description
//! Packets arriving on input 0 are appended at the tail, as in a Queue; when
//! the queue is full the arriving packet is dropped. Packets arriving on
//! input 1 are inserted at the head, so they leave next (last in, first
//! out); when the queue is full the packet at the tail is dropped to make
//! room. Drops go to output 1 if it is connected and are counted; the first
//! is reported as `NAME :: MixedQueue: overflow`, as in Click. Pulls take
//! from the head.
//!
//! MixedQueue implements the Storage interface and has an empty notifier,
//! like NotifierQueue.
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
//! c :: Classifier(12/0800, -);
//! Idle -> c;
//! c[0] -> m :: MixedQueue(50) -> Discard;
//! c[1] -> [1] m;
//! ```

use super::frontdropqueue::{Variant, VariantQueue};

/// A MixedQueue instance.
pub fn new() -> VariantQueue {
    VariantQueue::new(Variant::Mixed)
}

rclick_core::element_class!("MixedQueue" => new());
