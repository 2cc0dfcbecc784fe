//! # AggregateCounter
//!
//! Counts packets (or bytes) per aggregate annotation.
//!
//! ## Synopsis
//! `AggregateCounter([*keywords* BYTES, IP_BYTES, MULTIPACKET, EXTRA_LENGTH, ACTIVE, BANNER])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output. Packets pass unchanged.
//!
//! ## Description
//! Keeps a count for each aggregate annotation value (as set by
//! AggregateIPFlows, FromIPSummaryDump's `aggregate` field, ...): the number
//! of packets, or with BYTES their bytes. The `write_text_file` handler
//! writes the counts as text, in increasing aggregate order:
//!
//! ```text
//! !IPAggregate 1.0
//! BANNER (when set)
//! !num_nonzero N
//! AGGREGATE COUNT
//! ...
//! ```
//!
//! Counting stops while `active` is false or `freeze` is true.
//!
//! ## Keywords
//! - **BYTES** (boolean): count bytes instead of packets. Default false.
//! - **IP_BYTES** (boolean): with BYTES, count only the bytes from the IP
//!   header on. Default false.
//! - **MULTIPACKET** (boolean): a packet with an extra packets annotation N
//!   counts as N+1 packets. Default true.
//! - **EXTRA_LENGTH** (boolean): with BYTES, add the extra length
//!   annotation. Default true.
//! - **ACTIVE** (boolean): count from the start. Default true.
//! - **BANNER** (string): a line written after the first line of the text
//!   output.
//!
//! ## Handlers
//! - `count` (read): packets (or bytes) counted in all.
//! - `nagg` (read): aggregates with a nonzero count.
//! - `clear` (write): forgets every count.
//! - `active`, `freeze` (read/write): booleans; counting happens when active
//!   and not frozen.
//! - `banner` (read/write): the BANNER text.
//! - `write_text_file`, `write_ascii_file` (write): write the counts as text
//!   to the file named (`-` is standard output).
//!
//! ## Example
//! ```click
//! FromIPSummaryDump(trace.txt, STOP true) -> a :: AggregateCounter -> Discard;
//! DriverManager(pause, write a.write_text_file counts.txt);
//! ```

use std::collections::BTreeMap;
use std::io::Write as _;

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

pub struct AggregateCounter {
    counts: BTreeMap<u32, u64>,
    total: u64,
    bytes: bool,
    ip_bytes: bool,
    multipacket: bool,
    extra_length: bool,
    active: bool,
    frozen: bool,
    banner: String,
}

impl Default for AggregateCounter {
    fn default() -> Self {
        AggregateCounter {
            counts: BTreeMap::new(),
            total: 0,
            bytes: false,
            ip_bytes: false,
            multipacket: true,
            extra_length: true,
            active: true,
            frozen: false,
            banner: String::new(),
        }
    }
}

impl AggregateCounter {
    fn amount(&self, p: &Packet) -> u64 {
        let extra_packets = u64::from(u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_PACKETS)));
        if !self.bytes {
            return if self.multipacket {
                1 + extra_packets
            } else {
                1
            };
        }
        let mut len = if self.ip_bytes {
            p.network_offset()
                .filter(|o| *o >= 0)
                .map_or(p.len(), |o| p.len().saturating_sub(o as usize)) as u64
        } else {
            p.len() as u64
        };
        if self.extra_length {
            len += u64::from(u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH)));
        }
        len
    }

    /// The counts as Click's text format.
    fn text(&self) -> String {
        let mut s = String::from("!IPAggregate 1.0\n");
        if !self.banner.is_empty() {
            s.push_str(&self.banner);
            s.push('\n');
        }
        let nonzero = self.counts.values().filter(|c| **c > 0).count();
        s.push_str(&format!("!num_nonzero {nonzero}\n"));
        for (agg, c) in self.counts.iter().filter(|(_, c)| **c > 0) {
            s.push_str(&format!("{agg} {c}\n"));
        }
        s
    }

    fn write_text(&mut self, file: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let file = file.trim();
        let text = self.text();
        if file.is_empty() || file == "-" {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| format!("<stdout>: {e}"))
        } else {
            std::fs::write(file, text).map_err(|e| format!("{file}: {e}"))
        }
    }
}

impl SimpleAction for AggregateCounter {
    #[inline]
    fn action(&mut self, p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.active && !self.frozen {
            let agg = u32::from_ne_bytes(p.anno_bytes::<4>(anno::AGGREGATE));
            let n = self.amount(&p);
            *self.counts.entry(agg).or_insert(0) += n;
            self.total += n;
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<AggregateCounter>] = &[
    Handler::data("count", |e| &e.total),
    Handler::read("nagg", |e, _| {
        e.counts.values().filter(|c| **c > 0).count().to_string()
    }),
    Handler::write("clear", |e, _, _| {
        e.counts.clear();
        e.total = 0;
        Ok(())
    }),
    Handler::data_rw("active", |e| &e.active, |e| &mut e.active),
    Handler::data_rw("freeze", |e| &e.frozen, |e| &mut e.frozen),
    Handler::read_write(
        "banner",
        |e, _| e.banner.clone(),
        |e, v, _| {
            e.banner = v.to_string();
            Ok(())
        },
    ),
    Handler::write("write_text_file", |e, v, ctx| e.write_text(v, ctx)),
    Handler::write("write_ascii_file", |e, v, ctx| e.write_text(v, ctx)),
];

rclick_core::element_class!(AggregateCounter);

impl Element for AggregateCounter {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.bytes = args.read_or("BYTES", false);
        self.ip_bytes = args.read_or("IP_BYTES", false);
        self.multipacket = args.read_or("MULTIPACKET", true);
        self.extra_length = args.read_or("EXTRA_LENGTH", true);
        self.active = args.read_or("ACTIVE", true);
        self.banner = args.read_or("BANNER", String::new());
        args.complete()?;
        Ok(())
    }
}
