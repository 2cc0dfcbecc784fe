//! # BandwidthRatedSplitter
//!
//! Splits packets by bandwidth: those within the rate to output 0, the rest
//! to output 1.
//!
//! ## Synopsis
//! `BandwidthRatedSplitter(RATE, [*keywords*])`
//!
//! ## Ports and processing
//! One push input; push output 0, and push output 1 (optional; packets over
//! the rate are dropped without it).
//!
//! ## Description
//! Like [RatedSplitter](#ratedsplitter), but RATE is a bandwidth and the
//! token bucket counts bytes. A packet goes to output 0 while the bucket
//! holds at least 131072 bytes' worth of tokens (Click's threshold) and its
//! length is then taken from the bucket; otherwise it goes to output 1. The
//! capacity is the burst plus the threshold, and the bucket starts full.
//!
//! ## Keywords
//! - **RATE** (bandwidth): e.g. `200Bps`, `1Mbps`. Mandatory.
//! - **BURST_DURATION** (time): bucket capacity as a duration at RATE.
//!   Default 20 ms.
//! - **BURST_BYTES** (unsigned): bucket capacity in bytes. Cannot be given
//!   together with BURST_DURATION.
//!
//! ## Handlers
//! - `rate` (read/write): the rate, as Click prints bandwidths; writing it
//!   reconfigures the element with that RATE (the burst returns to its
//!   default, as in Click).
//! - `config` (read/write): reads the current rate.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> s :: BandwidthRatedSplitter(1kBps) -> Discard; s[1] -> Discard;
//! ```

use super::ratedsplitter::RatedSplitter;

rclick_core::element_class!("BandwidthRatedSplitter" => RatedSplitter::bandwidth());
