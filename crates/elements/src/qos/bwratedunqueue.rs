//! # BandwidthRatedUnqueue
//!
//! Pulls packets at a configurable bandwidth and pushes them out.
//!
//! ## Synopsis
//! `BandwidthRatedUnqueue(RATE, [*keywords*])`
//!
//! ## Ports and processing
//! One pull input, one push output.
//!
//! ## Description
//! Like [RatedUnqueue](#ratedunqueue), but RATE is a bandwidth and the
//! token bucket counts bytes: a packet is pulled whenever the bucket holds
//! at least 131072 bytes' worth of tokens (Click's threshold, so packets of
//! any length may go), and its length is then taken from the bucket, so the
//! bucket may run into debt and the long-run rate is RATE bytes per second.
//! The bucket's capacity is the burst plus that threshold, and it starts
//! full. Click's token bucket arithmetic is reproduced exactly (1 ms
//! ticks), so under `--simtime` the packets released by a given time match
//! Click's. One packet is pulled per task run, so the output is spaced at
//! the rate, never released in batch-sized bursts.
//!
//! ## Keywords
//! - **RATE** (bandwidth): e.g. `10Mbps`, `2000Bps`. Mandatory.
//! - **BURST_DURATION** (time): bucket capacity as a duration at RATE.
//!   Default 20 ms.
//! - **BURST_BYTES** (unsigned): bucket capacity in bytes. Cannot be given
//!   together with BURST_DURATION.
//!
//! ## Handlers
//! - `rate` (read/write): the rate, as Click prints bandwidths (`8kbps`).
//! - `active` (read/write): whether to pull. Default true.
//! - `calls` (read): task statistics, as in Click.
//! - `config` (read/write): reads the current RATE; writing it
//!   reconfigures live.
//!
//! ## Example
//! ```click
//! InfiniteSource(LENGTH 100, LIMIT 50) -> Queue(10) -> BandwidthRatedUnqueue(2000Bps) -> Discard;
//! ```

use crate::standard::ratedunqueue::RatedUnqueue;

rclick_core::element_class!("BandwidthRatedUnqueue" => RatedUnqueue::bandwidth());
