//! # BandwidthShaper
//!
//! Shapes traffic to a maximum bandwidth.
//!
//! ## Synopsis
//! `BandwidthShaper(RATE)`
//!
//! ## Ports and processing
//! One pull input; pull output 0, and an optional pull output 1.
//!
//! ## Description
//! Like [Shaper](#shaper), but RATE is a bandwidth: a pull on output 0
//! pulls a packet only while the bytes passed so far are behind RATE bytes
//! per second (Click's `GapRate` counting bytes), and pulls one packet at a
//! time, so the output follows the rate rather than the batch size. Unlike
//! Shaper, an output 1 is shaped exactly as output 0 (Click's
//! BandwidthShaper ignores the port pulled).
//!
//! Like Shaper, and unlike Click's, it is an empty notifier, so a puller
//! sleeps while it holds packets back. This changes what a StrideSched
//! above it does: in Click the puller keeps pulling in vain, each failed
//! pull advances every StrideSched input's pass, and with unequal tickets
//! the passes drift until their comparison wraps, so the shares follow
//! the number of failed pulls instead of the tickets (a shaped input with
//! 2 tickets of 7 got 22 packets a second of the 77 its rate allowed);
//! rclick keeps the tickets' shares.
//!
//! ## Handlers
//! - `rate` (read/write): the rate, as Click prints bandwidths.
//! - `config` (read/write): reads the current rate.
//! - `reset` (write): forgets the rate's history.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> Queue -> BandwidthShaper(1MBps) -> TimedSink(1ms);
//! ```

use super::shaper::Shaper;

rclick_core::element_class!("BandwidthShaper" => Shaper::bandwidth());
