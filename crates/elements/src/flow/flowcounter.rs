//! # FlowCounter
//!
//! Counts packets and bytes per flow, in the flow table's soft state.
//!
//! ## Synopsis
//! `FlowCounter([TABLE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Passes packets on unchanged, counting each flow's packets and bytes in
//! two state slots of its record in a [FlowTable](#flowtable) (the nearest
//! one upstream, or TABLE), the per-flow private state of the Router
//! Plugins flow records. A packet already marked by the table or a gate
//! upstream is counted without hashing. Packets that are not IPv4 (or are
//! truncated before their ports) pass on uncounted, counted as `bad`. A
//! flow's counts go with its record: when the flow expires or its record
//! is recycled, they start again from zero.
//!
//! ## Keywords
//! - **TABLE** (element name): the FlowTable. Default: the nearest one
//!   upstream; there must be one.
//!
//! ## Handlers
//! - `count`, `byte_count` (read): packets and bytes counted in all.
//! - `bad` (read): packets passed uncounted.
//! - `flows` (read): one flow a line, for the flows in the table that this
//!   element counted: `SRC DST PROTO SPORT DPORT IIF PACKETS BYTES`,
//!   most recently used first.
//! - `reset` (write): zeroes every count.
//!
//! ## Example
//! ```click
//! ... -> ft :: FlowTable -> fc :: FlowCounter -> ...
//! ```
//! `read fc.flows`

use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

use super::flowtable::find_table;
use super::table::SharedTable;

#[derive(Default)]
pub struct FlowCounter {
    table_name: Option<String>,
    table: Option<(SharedTable, usize)>,
    count: u64,
    byte_count: u64,
    bad: u64,
}

impl FlowCounter {
    fn count_batch(&mut self, batch: &mut Batch, ctx: &Ctx) {
        let Some((table, slot)) = &self.table else {
            return;
        };
        let now = ctx.recent().nanos();
        let mut t = table.lock();
        for p in batch.packets_mut() {
            match t.lookup(p, now) {
                Ok(idx) => {
                    let len = p.len() as u64;
                    *t.slot_mut(idx, *slot) += 1;
                    *t.slot_mut(idx, *slot + 1) += len;
                    self.count += 1;
                    self.byte_count += len;
                }
                Err(_) => self.bad += 1,
            }
        }
    }

    fn listing(&self) -> String {
        let Some((table, slot)) = &self.table else {
            return String::new();
        };
        let t = table.lock();
        let mut s = String::new();
        for (idx, r) in t.iter() {
            let n = t.slot(idx, *slot);
            if n > 0 {
                s.push_str(&format!("{} {n} {}\n", r.key, t.slot(idx, *slot + 1)));
            }
        }
        s
    }
}

const HANDLERS: &[Handler<FlowCounter>] = &[
    Handler::button("reset", |e, _, _| {
        e.count = 0;
        e.byte_count = 0;
        e.bad = 0;
        if let Some((table, slot)) = &e.table {
            let mut t = table.lock();
            let idxs: Vec<u32> = t.iter().map(|(i, _)| i).collect();
            for i in idxs {
                *t.slot_mut(i, *slot) = 0;
                *t.slot_mut(i, *slot + 1) = 0;
            }
        }
        Ok(())
    }),
    Handler::read("flows", |e, _| e.listing()),
    Handler::data("bad", |e| &e.bad),
    Handler::data("byte_count", |e| &e.byte_count),
    Handler::data("count", |e| &e.count),
];

rclick_core::element_class!(FlowCounter);

impl Element for FlowCounter {
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.table_name = args.read_p("TABLE");
        args.complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let Some(t) = find_table(ctx, self.table_name.as_deref())? else {
            return Err("no FlowTable upstream (name one with TABLE)".into());
        };
        let slot = t.lock().register_slots(2);
        self.table = Some((t, slot));
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        self.count_batch(&mut batch, ctx);
        ctx.emit_batch(port, batch);
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let mut batch = ctx.pull(port, max)?;
        self.count_batch(&mut batch, ctx);
        Some(batch)
    }
}
