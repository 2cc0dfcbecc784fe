//! # FlowTable
//!
//! A flow cache shared by the gates and per-flow elements of a path
//! (Router Plugins).
//!
//! ## Synopsis
//! `FlowTable([CAPACITY, TIMEOUT])`
//!
//! ## Ports and processing
//! None, or one agnostic input and one agnostic output (packets pushed
//! in with no output connected are dropped).
//!
//! ## Description
//! Holds a record per flow, keyed by the exact six-tuple: source and
//! destination address, protocol, source and destination port (0 for
//! protocols without ports and for later fragments) and incoming interface
//! (the PAINT annotation). [FlowGate](#flowgate), [FlowCounter](#flowcounter)
//! and [FlowDRRQueue](#flowdrrqueue) keep their per-flow state in it: a
//! gate its cached binding (which output the flow's filter chose), the
//! others their counts and queues. They find it upstream by flow-based
//! router context (the nearest FlowTable upstream of their input), or by
//! name with their `TABLE` keyword.
//!
//! The first element to see a packet looks its flow up by hashing its
//! six-tuple and stores the record's index in the packet's flow
//! annotation (8 bytes at offset 40 of the annotation area: index and the
//! record's stamp); later elements on the path take the record from the
//! annotation without hashing (each still reads the packet's six-tuple
//! and checks it against the record's, so a packet whose header was
//! rewritten since it was marked, or that carries another packet's
//! annotations, is looked up by hashing). When the FlowTable is itself
//! on the path, it does that first lookup and passes every packet on
//! unchanged (non-IP packets too, unmarked).
//!
//! Records are allocated in pools growing 1024, 2048, ... up to CAPACITY;
//! then the least recently used flow is recycled. A flow idle for longer
//! than TIMEOUT expires: its record is reused before the pools grow, and a
//! packet of an expired flow starts it afresh (its state cleared, so a
//! gate looks its filter up again). Recycling changes a record's stamp:
//! annotations still naming it are ignored and the next element hashes.
//!
//! Threads: the table is one structure behind a lock, taken once per
//! batch by each element using it (like the IPRewriter family's table);
//! under `-j N` gates on several threads share it, and the lock is a
//! mutex. With one thread the lock is a flag set with one atomic swap
//! (nothing contends for it), cheaper per batch than a mutex. A FlowTable on a path
//! reached from several threads runs as one copy per thread, all copies
//! holding the same table. Not carried over by hot swap: a new
//! configuration starts with an empty table.
//!
//! ## Keywords
//! - **CAPACITY** (unsigned): the most flows held. Default 65536.
//! - **TIMEOUT** (seconds): idle timeout; 0 means none. Default 60.
//!
//! ## Handlers
//! - `size` (read): flows held now (expired ones are dropped first).
//! - `capacity`, `timeout` (read): the configuration.
//! - `allocated` (read): records allocated so far (the pools' size).
//! - `hits`, `misses` (read): hash lookups that found a live record, and
//!   lookups that started one (a new or expired flow); `hit_rate` (read):
//!   hits / (hits + misses). `anno_hits` (read): lookups answered from the
//!   packet's annotation, without hashing (not counted in `hits`).
//! - `recycled`, `expired` (read): records reused at capacity, and flows
//!   expired.
//! - `flows` (read): one flow a line, most recently used first:
//!   `SRC DST PROTO SPORT DPORT IIF PACKETS IDLE` (IDLE in seconds).
//! - `clear` (write): forgets every flow.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> Strip(14) -> CheckIPHeader -> ft :: FlowTable(CAPACITY 10000)
//!   -> g :: FlowGate(proto tcp dport 80, -) -> Discard; g[1] -> Discard;
//! ```

use std::time::Duration;

use rclick_core::conf::Args;
use rclick_core::element::PerThread;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

use super::table::SharedTable;

pub struct FlowTable {
    capacity: usize,
    timeout: Duration,
    table: SharedTable,
}

impl Default for FlowTable {
    fn default() -> Self {
        FlowTable {
            capacity: 65536,
            timeout: Duration::from_secs(60),
            table: SharedTable::new(65536, 60_000_000_000),
        }
    }
}

impl FlowTable {
    /// The shared table, for the elements that use it.
    pub fn shared(&self) -> SharedTable {
        self.table.clone()
    }

    fn mark(&self, batch: &mut Batch, ctx: &Ctx) {
        let now = ctx.recent().nanos();
        let mut t = self.table.lock();
        for p in batch.packets_mut() {
            let _ = t.lookup(p, now);
        }
    }

    fn read_table(&self, ctx: &Ctx, f: fn(&super::table::Table) -> String) -> String {
        let mut t = self.table.lock();
        t.expire(ctx.now().nanos());
        f(&t)
    }
}

/// The FlowTable element reached through the `TABLE` keyword or, failing
/// that, the nearest one upstream of input 0.
pub fn find_table(ctx: &InitCtx, name: Option<&str>) -> Result<Option<SharedTable>, String> {
    let idx = match name {
        Some(n) => Some(
            ctx.find_element(n)
                .ok_or_else(|| format!("TABLE: no element named '{n}'"))?,
        ),
        None => ctx
            .upstream(Some(0), &|e: &dyn Element| e.has_interface("FlowTable"))
            .first()
            .copied(),
    };
    let Some(idx) = idx else { return Ok(None) };
    let t = ctx.with_element(idx, |e| {
        e.as_any()
            .downcast_ref::<FlowTable>()
            .map(FlowTable::shared)
    });
    match t.flatten() {
        Some(t) => Ok(Some(t)),
        None => Err(format!(
            "TABLE: '{}' is not a FlowTable",
            ctx.element_name_of(idx).unwrap_or_default()
        )),
    }
}

fn rate(t: &super::table::Table) -> String {
    let all = t.hits + t.misses;
    if all == 0 {
        "0".into()
    } else {
        format!("{:.6}", t.hits as f64 / all as f64)
    }
}

const HANDLERS: &[Handler<FlowTable>] = &[
    Handler::button("clear", |e, _, _| {
        e.table.lock().clear();
        Ok(())
    }),
    Handler::read("flows", |e, ctx| {
        let mut t = e.table.lock();
        let now = ctx.now().nanos();
        t.expire(now);
        t.listing(now)
    }),
    Handler::read("expired", |e, ctx| {
        e.read_table(ctx, |t| t.expired.to_string())
    }),
    Handler::read("recycled", |e, ctx| {
        e.read_table(ctx, |t| t.recycled.to_string())
    }),
    Handler::read("hit_rate", |e, ctx| e.read_table(ctx, rate)),
    Handler::read("anno_hits", |e, ctx| {
        e.read_table(ctx, |t| t.anno_hits.to_string())
    }),
    Handler::read("misses", |e, ctx| {
        e.read_table(ctx, |t| t.misses.to_string())
    }),
    Handler::read("hits", |e, ctx| e.read_table(ctx, |t| t.hits.to_string())),
    Handler::read("allocated", |e, ctx| {
        e.read_table(ctx, |t| t.allocated().to_string())
    }),
    Handler::read("timeout", |e, _| {
        rclick_core::time::Timestamp::from_duration(e.timeout).to_string()
    }),
    Handler::data("capacity", |e| &e.capacity),
    Handler::read("size", |e, ctx| e.read_table(ctx, |t| t.len().to_string())),
];

impl PerThread for FlowTable {
    const SUMMED: &'static [&'static str] = &[];

    /// Every copy holds the same table.
    fn fresh_copy(&self) -> Option<Self> {
        Some(FlowTable {
            capacity: self.capacity,
            timeout: self.timeout,
            table: self.table.clone(),
        })
    }

    fn absorb(&mut self, _copy: Self) {}
}

rclick_core::element_class!(FlowTable);

impl Element for FlowTable {
    rclick_core::per_thread!();
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0-1/0-1"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let capacity: usize = args.read_p_or("CAPACITY", 65536usize);
        let timeout: Duration = args.read_p_or("TIMEOUT", Duration::from_secs(60));
        args.complete()?;
        if capacity == 0 || capacity > (1 << 30) {
            return Err("CAPACITY: must be between 1 and 2^30".into());
        }
        let ns = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        self.capacity = capacity;
        self.timeout = timeout;
        self.table = SharedTable::for_threads(capacity, ns, ctx.nthreads() > 1);
        Ok(())
    }

    fn has_interface(&self, name: &str) -> bool {
        name == "FlowTable"
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        self.mark(&mut batch, ctx);
        if port < ctx.noutputs() {
            ctx.emit_batch(port, batch);
        }
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let mut batch = ctx.pull(port, max)?;
        self.mark(&mut batch, ctx);
        Some(batch)
    }
}
