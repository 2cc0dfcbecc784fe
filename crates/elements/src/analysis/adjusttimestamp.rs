//! # AdjustTimestamp
//!
//! Adds a constant to packets' timestamp annotations.
//!
//! ## Synopsis
//! `AdjustTimestamp(TIME [, *keywords* FIRST, ALL])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Adds TIME, a signed time in seconds (`-1`, `+1.5`, `250ms`), to each
//! packet's timestamp annotation. A zero timestamp (a packet that was never
//! stamped) is left alone unless ALL is true. With FIRST true, the
//! first-timestamp annotation is adjusted instead.
//!
//! ## Keywords
//! - **FIRST** (boolean): adjust the first-timestamp annotation. Default
//!   false.
//! - **ALL** (boolean): adjust zero timestamps too. Default false.
//!
//! ## Handlers
//! - `time` (read/write): TIME.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> AdjustTimestamp(-3600) -> ToDump(shifted.pcap);
//! ```

use rclick_core::conf::{parse_timestamp, Args};
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction, Timestamp};

#[derive(Default)]
pub struct AdjustTimestamp {
    delta: Timestamp,
    first: bool,
    all: bool,
}

/// A signed time: an optional `+` or `-`, then a time in seconds.
pub fn parse_signed_time(s: &str) -> Result<Timestamp, String> {
    let s = s.trim();
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let t = Timestamp::from_duration(parse_timestamp(rest)?);
    Ok(if neg { Timestamp::default() - t } else { t })
}

impl SimpleAction for AdjustTimestamp {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.first {
            let b = p.anno_bytes::<8>(anno::FIRST_TIMESTAMP);
            let t = i64::from_ne_bytes(b);
            if t != 0 || self.all {
                let t = t.saturating_add(self.delta.nanos());
                p.set_anno_bytes(anno::FIRST_TIMESTAMP, &t.to_ne_bytes());
            }
        } else {
            let t = p.timestamp_anno();
            if t != Timestamp::default() || self.all {
                p.set_timestamp_anno(t + self.delta);
            }
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<AdjustTimestamp>] = &[Handler::read_write(
    "time",
    |e, _| e.delta.to_string(),
    |e, v, _| {
        e.delta = parse_signed_time(v)?;
        Ok(())
    },
)];

rclick_core::element_class!(AdjustTimestamp);

impl Element for AdjustTimestamp {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let delta = args.read_p_with("TIME", parse_signed_time);
        self.first = args.read_or("FIRST", false);
        self.all = args.read_or("ALL", false);
        args.complete()?;
        self.delta = delta.ok_or("TIME: required argument missing")?;
        Ok(())
    }
}
