//! # SetTimestamp
//!
//! Stores a time in packets' timestamp annotation.
//!
//! ## Synopsis
//! `SetTimestamp([TIMESTAMP, *keywords*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets each packet's timestamp annotation to TIMESTAMP, or to the router
//! clock's current time if TIMESTAMP is not given (simulated time under
//! `--simtime`). With FIRST true, sets the first-timestamp annotation
//! instead (offset 32: nanoseconds since the epoch as a native-endian
//! 64-bit integer).
//!
//! ## Keywords
//! - **TIMESTAMP** (timestamp): the time, as `SEC.FRAC`. Default: now.
//! - **FIRST** (boolean): set the first-timestamp annotation. Default false.
//! - **DELTA**: deprecated; true is an error, as in Click.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> SetTimestamp -> ToDump(t.pcap);
//! ```

use std::time::Duration;

use rclick_core::conf::{parse_timestamp, Args};
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction, Timestamp};

#[derive(Default)]
pub struct SetTimestamp {
    /// The fixed time, or None for "now".
    time: Option<Timestamp>,
    first: bool,
}

impl SimpleAction for SetTimestamp {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let t = self.time.unwrap_or_else(|| ctx.now());
        if self.first {
            p.set_anno_bytes(anno::FIRST_TIMESTAMP, &t.nanos().to_ne_bytes());
        } else {
            p.set_timestamp_anno(t);
        }
        Some(p)
    }
}

rclick_core::element_class!(SetTimestamp);

impl Element for SetTimestamp {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let time: Option<Duration> = args.read_p_with("TIMESTAMP", parse_timestamp);
        self.first = args.read_or("FIRST", false);
        let delta = args.read_or("DELTA", false);
        args.complete()?;
        if delta {
            return Err(
                "SetTimestamp(DELTA) is deprecated, use SetTimestampDelta(TYPE FIRST)".into(),
            );
        }
        self.time = time.map(Timestamp::from_duration);
        Ok(())
    }
}
