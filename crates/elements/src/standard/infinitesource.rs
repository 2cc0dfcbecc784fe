//! # InfiniteSource
//!
//! Generates packets indefinitely (or up to a limit).
//!
//! ## Synopsis
//! `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, *keywords* DATASIZE, LENGTH, STOP, END_CALL, TIMESTAMP])`
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
//! Creates packets holding DATA: copies of one prototype packet, each
//! unshared (Click sends clones sharing the prototype's buffer, copied on
//! the first write; rclick copies when it sends, which for short packets
//! costs less than sharing). Stops after LIMIT packets when
//! LIMIT is non-negative; with STOP true it then asks the driver to stop,
//! else with END_CALL it then writes that handler (with the packets that
//! reach the limit, once this element has returned to the driver, so the
//! handler may write back to it).
//!
//! ## Keywords
//! - **DATA** (string): packet contents. Default is Click's 69-byte
//!   "Random bullshit in a packet, at least 64 bytes long. Well, now it is."
//! - **DATASIZE** (integer, also **LENGTH**): cut DATA to this length, or
//!   repeat it up to this length (an empty DATA gives zeros: Click hangs),
//!   at most 262144 (rclick's longest packet, the largest pcap
//!   snapshot length; Click, which has no such limit, sends longer
//!   packets). Default -1 (DATA as is).
//! - **LIMIT** (integer): total packets to send; -1 means no limit. Default -1.
//! - **BURST** (integer): packets per task run (the batch size). Default 1.
//! - **ACTIVE** (boolean): whether to send. Default true.
//! - **STOP** (boolean): stop the driver when LIMIT is reached. Default false.
//! - **END_CALL** (handler call `HANDLER [VALUE]`): write handler HANDLER
//!   when LIMIT is reached; not with STOP true (as Click, the router is
//!   refused). A call that fails is ignored silently, as in Click.
//! - **TIMESTAMP** (boolean): set each packet's timestamp. Default true.
//!
//! ## Handlers
//! - `count` (read): packets sent so far.
//! - `reset` (write): resets `count` to 0 and restarts.
//!
//! A handler write wakes an active source only when it has packets left
//! (`count` below LIMIT), as in Click. Failed writes answer with Click's
//! messages (`limit parameter must be integer`, `burstsize parameter must
//! be integer >= 1`, `active parameter must be boolean`, `length must be
//! integer`).
//! - `data`, `datasize` (also `length`), `limit`, `burst` (also
//!   `burstsize`), `active` (read/write).
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 1000, BURST 32, STOP true) -> c :: Counter -> Discard;
//! ```

use super::handlercall;
use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::conf::{parse_bool, parse_i64, Args};
use rclick_core::element::kinds::{source_run_burst, source_run_one};
use rclick_core::element::{Source, SourceTask};
use rclick_core::packet::PacketTemplate;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SignalId, TaskId};

/// Click's default InfiniteSource payload.
pub const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

pub struct InfiniteSource {
    data: Vec<u8>,
    datasize: i64,
    limit: i64,
    /// LIMIT as a packet count (`u64::MAX` for none), which `count` is
    /// held against on every run: kept with `limit` by `set_limit`.
    limit_count: u64,
    burst: usize,
    active: bool,
    stop: bool,
    timestamp: bool,
    count: u64,
    /// DATA as a packet, whose copies are sent.
    prototype: PacketTemplate,
    source: SourceTask,
    /// The stop was asked for with the last packets: the task's next run,
    /// which finds none left, must not ask again (each ask is a stop event
    /// to a DriverManager).
    stop_asked: bool,
    /// END_CALL: handler and value.
    end_call: Option<(String, String)>,
    /// Pulled, the empty notifier (as Click's): active while the source
    /// is active and has packets left, so a puller sleeps at the LIMIT
    /// instead of polling (which also froze simulated time).
    empty: Option<SignalId>,
}

impl Default for InfiniteSource {
    fn default() -> Self {
        InfiniteSource {
            data: DEFAULT_DATA.to_vec(),
            datasize: -1,
            limit: -1,
            limit_count: u64::MAX,
            burst: 1,
            active: true,
            stop: false,
            timestamp: true,
            count: 0,
            prototype: PacketTemplate::new(Packet::from_slice(DEFAULT_DATA)),
            source: SourceTask::default(),
            stop_asked: false,
            end_call: None,
            empty: None,
        }
    }
}

/// DATASIZE: negative for DATA as is, else at most the longest packet
/// (a larger one was allocated, and could not be sent).
fn parse_datasize(s: &str) -> Result<i64, String> {
    let n = parse_i64(s)?;
    if n > rclick_core::packet::MAX_PACKET_LEN as i64 {
        return Err(format!(
            "{n} is longer than any packet (at most {} bytes)",
            rclick_core::packet::MAX_PACKET_LEN
        ));
    }
    Ok(n)
}

impl InfiniteSource {
    /// The packet: DATA, cut or filled to DATASIZE. A longer DATASIZE
    /// repeats DATA, as Click does (Click hangs on an empty DATA there;
    /// rclick fills zeros).
    fn rebuild_prototype(&mut self) {
        let data: Vec<u8> = match usize::try_from(self.datasize) {
            Err(_) => self.data.clone(),
            // Longer than DATA: DATA repeated, as Click's (which hangs on
            // an empty DATA; here that is zeros).
            Ok(n) if self.data.is_empty() => vec![0; n],
            Ok(n) => self.data.iter().copied().cycle().take(n).collect(),
        };
        self.prototype = PacketTemplate::new(Packet::from_slice(&data));
    }

    fn set_limit(&mut self, limit: i64) {
        self.limit = limit;
        self.limit_count = u64::try_from(limit).unwrap_or(u64::MAX);
    }

    #[inline]
    fn remaining(&self) -> usize {
        self.limit_count.saturating_sub(self.count) as usize
    }

    /// Parses a handler value as Click's InfiniteSource does (a 32-bit
    /// integer), with Click's message on failure.
    fn int_value(v: &str, what: &str) -> Result<i64, String> {
        parse_i64(v.trim())
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| what.to_string())
    }

    /// After any handler write: an active source with packets left runs
    /// again. One with none left (count at LIMIT) stays asleep, as in
    /// Click: waking it would only put its task on the run queue ahead of
    /// tasks woken after it (a `data` write before a `reset` once changed
    /// which of two sources ran first).
    fn wake(&mut self, ctx: &mut Ctx) -> Result<(), String> {
        self.stop_asked = false;
        if self.active && self.remaining() > 0 {
            self.source.wake(ctx);
        }
        self.update_empty(ctx);
        Ok(())
    }

    /// The empty notifier follows whether a pull could get a packet.
    fn update_empty(&self, ctx: &Ctx) {
        if let Some(s) = self.empty {
            if self.active && self.remaining() > 0 {
                ctx.wake_signal(s);
            } else {
                ctx.sleep_signal(s);
            }
        }
    }
}

// The write handlers answer with Click's messages, which Script shows
// under "While calling" (Click's test suite compares them).
fn write_length(e: &mut InfiniteSource, v: &str, ctx: &mut Ctx) -> Result<(), String> {
    InfiniteSource::int_value(v, "length must be integer")?;
    e.datasize = parse_datasize(v.trim())?;
    e.rebuild_prototype();
    e.wake(ctx)
}

fn write_burst(e: &mut InfiniteSource, v: &str, ctx: &mut Ctx) -> Result<(), String> {
    let n = InfiniteSource::int_value(v, "burstsize parameter must be integer >= 1")?;
    if n < 1 {
        return Err("burstsize parameter must be integer >= 1".into());
    }
    e.burst = n as usize;
    e.wake(ctx)
}

const HANDLERS: &[Handler<InfiniteSource>] = &[
    Handler::data("count", |e| &e.count),
    Handler::button("reset", |e, _, ctx| {
        e.count = 0;
        e.wake(ctx)
    }),
    Handler::read_write(
        "data",
        |e, _| String::from_utf8_lossy(&e.data).into_owned(),
        // The value is taken as is, unquoted and untrimmed, as Click does
        // (`write i.data "a b"` makes the data `"a b"`, quotes included).
        |e, v, ctx| {
            e.data = v.as_bytes().to_vec();
            e.rebuild_prototype();
            e.wake(ctx)
        },
    ),
    Handler::data_write("datasize", |e| &e.datasize, write_length),
    Handler::data_write("length", |e| &e.datasize, write_length),
    Handler::data_write(
        "limit",
        |e| &e.limit,
        |e, v, ctx| {
            let limit = InfiniteSource::int_value(v, "limit parameter must be integer")?;
            e.set_limit(limit);
            e.wake(ctx)
        },
    ),
    Handler::data_write("burst", |e| &e.burst, write_burst),
    Handler::data_write("burstsize", |e| &e.burst, write_burst),
    Handler::data_write(
        "active",
        |e| &e.active,
        |e, v, ctx| {
            e.active =
                parse_bool(v.trim()).map_err(|_| "active parameter must be boolean".to_string())?;
            e.wake(ctx)
        },
    ),
];

impl InfiniteSource {
    /// No packets left (or BURST asked for none): the empty notifier, and
    /// the stop with STOP.
    #[cold]
    #[inline(never)]
    fn none_left(&mut self, ctx: &mut Ctx) {
        self.update_empty(ctx);
        if self.stop && self.limit >= 0 && !self.stop_asked {
            ctx.please_stop();
            // Pushing, the stop is asked once (a burst loop or a later
            // run may come back here); pulled, Click asks on every pull
            // that finds none left.
            self.stop_asked = self.source.task().is_some();
        }
    }
}

impl InfiniteSource {
    #[inline(never)]
    fn run_burst(&mut self, ctx: &mut Ctx) -> bool {
        source_run_burst(self, self.burst, ctx)
    }

    /// Counts `n` packets sent.
    #[inline(always)]
    fn sent(&mut self, n: u64, ctx: &mut Ctx) {
        self.count += n;
        // END_CALL with the packets that reach the limit (as Click). STOP
        // is tested in the cold path: tested here, the compiler made the
        // usual path test a flag it had just set.
        if self.count == self.limit_count {
            self.reached_limit(ctx);
        }
        // With STOP, the stop is asked by the run (or pull) that finds
        // none left, as in Click: tasks scheduled before that run still
        // run, so an Unqueue behind a Queue moves the last packets on.
    }

    #[cold]
    #[inline(never)]
    fn reached_limit(&mut self, ctx: &mut Ctx) {
        if self.stop {
            return;
        }
        if let Some((h, v)) = &self.end_call {
            ctx.call_write_later(h, v);
        }
    }
}

impl Source for InfiniteSource {
    // Inline into the task body: at BURST 1 the call cost about as much
    // as the rest of the task's own work.
    #[inline(always)]
    fn generate(&mut self, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if !self.active {
            return None;
        }
        let n = self
            .burst
            .min(max)
            .min(self.remaining())
            .min(BATCH_CAPACITY);
        if n == 0 {
            self.none_left(ctx);
            return None;
        }
        let proto = &mut self.prototype;
        // Every packet of a run gets the same timestamp: set it on the
        // prototype, which each copy takes with its annotations.
        if self.timestamp {
            proto.set_timestamp_anno(ctx.recent());
        }
        let batch = if n == 1 {
            Batch::copy_of_template(proto)
        } else {
            Batch::copies_of_template(proto, n)
        };
        self.sent(n as u64, ctx);
        Some(batch)
    }

    // `generate(1, ..)`, knowing BURST is 1: the count against LIMIT is
    // the only test of how many to send.
    #[inline(always)]
    fn generate_one(&mut self, ctx: &mut Ctx) -> Option<Batch> {
        if !self.active {
            return None;
        }
        if self.count >= self.limit_count {
            self.none_left(ctx);
            return None;
        }
        if self.timestamp {
            self.prototype.set_timestamp_anno(ctx.recent());
        }
        let batch = Batch::copy_of_template(&self.prototype);
        self.sent(1, ctx);
        Some(batch)
    }

    fn source_task(&self) -> &SourceTask {
        &self.source
    }
}

rclick_core::element_class!(InfiniteSource);

impl Element for InfiniteSource {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        if let Some(d) = args.read_p::<Vec<u8>>("DATA") {
            self.data = d;
        }
        self.set_limit(args.read_p_or("LIMIT", -1i64));
        self.burst = args.read_p_or("BURST", 1usize);
        self.active = args.read_p_or("ACTIVE", true);
        self.datasize = args.read_or_with("DATASIZE", parse_datasize, -1);
        if let Some(l) = args.read_with("LENGTH", parse_datasize) {
            self.datasize = l;
        }
        self.end_call = args.read_with("END_CALL", handlercall::parse);
        self.stop = args.read_or("STOP", false);
        self.timestamp = args.read_or("TIMESTAMP", true);
        args.complete()?;
        if self.burst == 0 {
            return Err("BURST must be positive".into());
        }
        if let Some((path, _)) = &self.end_call {
            handlercall::check_element_at_configure("END_CALL", path, ctx)?;
            if self.stop {
                return Err("END_CALL and STOP are mutually exclusive".into());
            }
        }
        self.rebuild_prototype();
        if self.empty.is_none() {
            self.empty = Some(ctx.new_signal(self.active && self.remaining() > 0));
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if let Some((path, _)) = &self.end_call {
            handlercall::check_write_at_initialize(path, self, ctx)?;
        }
        self.source.initialize(ctx, 0, self.active);
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.empty
    }

    // The source kind, with Click's whole BURST per task run (the kind's
    // own task body sends one batch a run). A BURST of 1 is the whole of
    // this function: the burst loop, out of line, does not make it save
    // registers it does not use.
    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if self.burst == 1 {
            source_run_one(self, ctx)
        } else {
            self.run_burst(ctx)
        }
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.generate(max, ctx)
    }
}
