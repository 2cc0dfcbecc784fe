//! # InfiniteSource
//!
//! Generates packets indefinitely (or up to a limit).
//!
//! ## Synopsis
//! `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, *keywords*])`
//!
//! ## Ports and processing
//! No inputs, one agnostic output. Push: a task emits BURST packets per run.
//! Pull: each pull returns up to BURST packets.
//!
//! ## Description
//! In push context the task sleeps while every queue downstream is full
//! (Click's full notifier), so a source in front of a queue costs nothing
//! while the queue cannot take packets, and simulated time can advance.
//!
//! Creates packets holding DATA, clones of one prototype packet (so they
//! share one buffer until someone writes). Stops after LIMIT packets when
//! LIMIT is non-negative; with STOP true it then asks the driver to stop.
//!
//! ## Keywords
//! - **DATA** (string): packet contents. Default is Click's 69-byte
//!   "Random bullshit in a packet, at least 64 bytes long. Well, now it is."
//! - **DATASIZE** (integer): pad or cut DATA to this length. Default -1 (DATA as is).
//! - **LIMIT** (integer): total packets to send; -1 means no limit. Default -1.
//! - **BURST** (integer): packets per task run (the batch size). Default 1.
//! - **ACTIVE** (boolean): whether to send. Default true.
//! - **STOP** (boolean): stop the driver when LIMIT is reached. Default false.
//! - **TIMESTAMP** (boolean): set each packet's timestamp. Default true.
//!
//! ## Handlers
//! - `count` (read): packets sent so far.
//! - `reset` (write): resets `count` to 0 and restarts.
//! - `data`, `datasize`, `limit`, `burst`, `active` (read/write).
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 1000, BURST 32, STOP true) -> c :: Counter -> Discard;
//! ```

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, NotifierSignal, Packet, TaskId};

/// Click's default InfiniteSource payload.
pub const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

pub struct InfiniteSource {
    data: Vec<u8>,
    datasize: i64,
    limit: i64,
    burst: usize,
    active: bool,
    stop: bool,
    timestamp: bool,
    count: u64,
    prototype: Option<Packet>,
    task: Option<TaskId>,
    /// Active while a queue downstream has room (Click's full notifier).
    nonfull: NotifierSignal,
}

impl Default for InfiniteSource {
    fn default() -> Self {
        InfiniteSource {
            data: DEFAULT_DATA.to_vec(),
            datasize: -1,
            limit: -1,
            burst: 1,
            active: true,
            stop: false,
            timestamp: true,
            count: 0,
            prototype: None,
            task: None,
            nonfull: NotifierSignal::Busy,
        }
    }
}

impl InfiniteSource {
    fn rebuild_prototype(&mut self) {
        let mut data = self.data.clone();
        if self.datasize >= 0 {
            data.resize(self.datasize as usize, 0);
        }
        self.prototype = Some(Packet::from_slice(&data));
    }

    fn remaining(&self) -> usize {
        if self.limit < 0 {
            usize::MAX
        } else {
            (self.limit as u64).saturating_sub(self.count) as usize
        }
    }

    fn make(&self, ctx: &Ctx) -> Option<Packet> {
        let mut p = self.prototype.as_ref()?.deep_copy();
        if self.timestamp {
            p.set_timestamp_anno(ctx.recent());
        }
        Some(p)
    }
}

rclick_core::element_class!(InfiniteSource);

impl Element for InfiniteSource {
    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        if let Some(d) = args.read_p::<Vec<u8>>("DATA") {
            self.data = d;
        }
        self.limit = args.read_p_or("LIMIT", -1i64);
        self.burst = args.read_p_or("BURST", 1usize);
        self.active = args.read_p_or("ACTIVE", true);
        self.datasize = args.read_or("DATASIZE", -1i64);
        self.stop = args.read_or("STOP", false);
        self.timestamp = args.read_or("TIMESTAMP", true);
        args.complete()?;
        if self.burst == 0 {
            return Err("BURST must be positive".into());
        }
        self.rebuild_prototype();
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if ctx.output_is_push(0) {
            let t = ctx.new_task(self.active);
            self.nonfull = ctx.downstream_full_signal(0, Some(t));
            self.task = Some(t);
        }
        Ok(())
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if !self.active {
            return false;
        }
        let n = self.burst.min(self.remaining());
        if n == 0 {
            if self.stop {
                ctx.please_stop();
            }
            return false;
        }
        if !ctx.signal_active(&self.nonfull) {
            // Every queue downstream is full: sleep until one has room.
            return false;
        }
        let mut batch = Batch::new();
        for _ in 0..n {
            let Some(p) = self.make(ctx) else {
                return false;
            };
            if let Err(p) = batch.try_push(p) {
                ctx.emit_batch(0, std::mem::take(&mut batch));
                batch.push(p);
            }
        }
        self.count += n as u64;
        ctx.emit_batch(0, batch);
        if self.remaining() > 0 {
            ctx.fast_reschedule();
        } else if self.stop {
            ctx.please_stop();
        }
        true
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if !self.active {
            return None;
        }
        let n = self
            .burst
            .min(max)
            .min(self.remaining())
            .min(rclick_core::batch::BATCH_CAPACITY);
        if n == 0 {
            if self.stop && self.limit >= 0 {
                ctx.please_stop();
            }
            return None;
        }
        let mut batch = Batch::new();
        for _ in 0..n {
            batch.push(self.make(ctx)?);
        }
        self.count += n as u64;
        Some(batch)
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut v = vec![HandlerSpec::read("count"), HandlerSpec::button("reset")];
        for h in ["data", "datasize", "limit", "burst", "active"] {
            v.push(HandlerSpec::read_write(h));
        }
        v
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        Ok(match name {
            "count" => self.count.to_string(),
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "datasize" => self.datasize.to_string(),
            "limit" => self.limit.to_string(),
            "burst" => self.burst.to_string(),
            "active" => self.active.to_string(),
            _ => return Err(format!("no '{name}' handler")),
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "reset" => self.count = 0,
            "data" => {
                self.data = rclick_core::conf::parse_bytes(v)?;
                self.rebuild_prototype();
            }
            "datasize" => {
                self.datasize = rclick_core::conf::parse_i64(v)?;
                self.rebuild_prototype();
            }
            "limit" => self.limit = rclick_core::conf::parse_i64(v)?,
            "burst" => self.burst = rclick_core::conf::parse_usize(v)?.max(1),
            "active" => self.active = parse_bool(v)?,
            _ => return Err(format!("no '{name}' handler")),
        }
        if let (true, Some(t)) = (self.active, self.task) {
            ctx.schedule_task(t);
        }
        Ok(())
    }
}
