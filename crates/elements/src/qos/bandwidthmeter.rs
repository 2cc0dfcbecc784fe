//! # BandwidthMeter
//!
//! Classifies packets by the recent byte rate.
//!
//! ## Synopsis
//! `BandwidthMeter(RATE1, RATE2, ..., RATEn)`
//!
//! ## Ports and processing
//! One push input; n + 1 push outputs.
//!
//! ## Description
//! Like [Meter](#meter), but measures bytes per second: keeps Click's
//! moving average of the bytes arriving per millisecond (weight 1/16, 10
//! bits of fraction) and sends each packet to output 0 while the rate is
//! below RATE1, ..., to output n at or above RATEn. The rates are
//! bandwidths (`100kBps`, `1Mbps`; a bare number is bytes per second, with
//! a warning) and must increase.
//!
//! ## Handlers
//! - `rate` (read): the current average rate in bytes per second.
//! - `meters` (read): the thresholds.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 10) -> m :: BandwidthMeter(1MBps) -> Discard; m[1] -> Discard;
//! ```

use super::meter::Meter;

rclick_core::element_class!("BandwidthMeter" => Meter::bandwidth());
