//! # SetTimestampDelta
//!
//! Replaces packet timestamps with differences.
//!
//! ## Synopsis
//! `SetTimestampDelta([TYPE *type*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Rewrites each nonzero timestamp annotation as a difference. With TYPE
//! RANGE (the default), the difference from the first nonzero timestamp
//! seen; with TYPE NOW, the time from the timestamp to now; with TYPE
//! FIRST, the difference from the packet's first-timestamp annotation.
//! Packets with a zero timestamp pass unchanged.
//!
//! ## Keywords
//! - **TYPE** (word): `RANGE`, `NOW` or `FIRST`. Default `RANGE`.
//!
//! On hot swap, a SetTimestampDelta of the same name keeps the first
//! timestamp it saw.
//!
//! ## Handlers
//! - `first` (read): the first timestamp seen (TYPE RANGE), or 0.
//! - `reset` (write): forgets the first timestamp.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> SetTimestampDelta -> ToIPSummaryDump(-, FIELDS timestamp);
//! ```

use rclick_core::conf::{parse_word, Args};
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction, Timestamp};

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum DeltaType {
    #[default]
    Range,
    Now,
    First,
}

#[derive(Default)]
pub struct SetTimestampDelta {
    kind: DeltaType,
    first: Timestamp,
}

impl SimpleAction for SetTimestampDelta {
    #[inline]
    fn action(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let t = p.timestamp_anno();
        if t.nanos() != 0 {
            let new = match self.kind {
                DeltaType::Range => {
                    if self.first.nanos() == 0 {
                        self.first = t;
                    }
                    Timestamp(t.nanos() - self.first.nanos())
                }
                DeltaType::Now => Timestamp(ctx.now().nanos() - t.nanos()),
                DeltaType::First => {
                    let f = i64::from_ne_bytes(p.anno_bytes::<8>(anno::FIRST_TIMESTAMP));
                    Timestamp(t.nanos() - f)
                }
            };
            p.set_timestamp_anno(new);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<SetTimestampDelta>] = &[
    Handler::read("first", |e, _| e.first.to_string()),
    Handler::button("reset", |e, _, _| {
        e.first = Timestamp(0);
        Ok(())
    }),
];

rclick_core::element_class!(SetTimestampDelta);

impl Element for SetTimestampDelta {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let typ = args.read_or_with("TYPE", parse_word, "RANGE".to_string());
        args.complete()?;
        self.kind = match typ.as_str() {
            "RANGE" => DeltaType::Range,
            "NOW" => DeltaType::Now,
            "FIRST" => DeltaType::First,
            _ => return Err("bad TYPE".into()),
        };
        Ok(())
    }

    /// Hot swap: the first timestamp seen carries over, so RANGE deltas
    /// stay relative to the same packet.
    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<SetTimestampDelta>() else {
            return false;
        };
        self.first = o.first;
        true
    }
}
