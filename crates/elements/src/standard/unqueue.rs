//! # Unqueue
//!
//! Pulls packets and pushes them out.
//!
//! ## Synopsis
//! `Unqueue([BURST, *keywords*])`
//!
//! ## Ports and processing
//! One pull input, one push output.
//!
//! ## Description
//! A task pulls up to BURST packets from the input per run and pushes them
//! to the output. While every upstream queue is empty the task sleeps,
//! woken by the queues' notifier signal.
//!
//! ## Keywords
//! - **BURST** (integer): packets per run. Default 1. A negative BURST
//!   pulls as many as are there (it reads as 2147483647); 0 pulls nothing
//!   (with a warning).
//! - **ACTIVE** (boolean): whether to pull. Default true.
//! - **LIMIT** (integer): stop after this many packets; negative for no
//!   limit. Default -1.
//!
//! ## Handlers
//! - `count` (read): packets moved.
//! - `reset`, `reset_counts` (write): zero `count` (pulling resumes under
//!   LIMIT).
//! - `active`, `burst`, `limit` (read/write).
//!
//! ## Example
//! ```click
//! src -> Queue -> Unqueue(BURST 32) -> Discard;
//! ```

use rclick_core::conf::{parse_bool, parse_i32, Args};
use rclick_core::element::{hflags, Sink};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, PullTask, TaskId};

pub struct Unqueue {
    /// Packets per run; 0 pulls nothing (Click's BURST; a negative one
    /// is stored as `i32::MAX`).
    burst: i32,
    active: bool,
    /// Negative: no limit.
    limit: i32,
    count: u64,
    puller: PullTask,
}

impl Default for Unqueue {
    fn default() -> Self {
        Unqueue {
            burst: 1,
            active: true,
            limit: -1,
            count: 0,
            puller: PullTask::default(),
        }
    }
}

/// Click's BURST: a negative value means as many as possible.
fn burst_value(b: i32) -> i32 {
    if b < 0 {
        i32::MAX
    } else {
        b
    }
}

/// The error of every Unqueue handler write that does not parse, as in
/// Click.
fn syntax<E>(_: E) -> String {
    "syntax error".to_string()
}

impl Unqueue {
    /// Packets the next task run may pull: BURST, cut to what LIMIT leaves.
    fn want(&self) -> usize {
        let burst = self.burst as usize;
        if self.limit < 0 {
            burst
        } else {
            burst.min((self.limit as u64).saturating_sub(self.count) as usize)
        }
    }

    /// After any handler write: an active Unqueue pulls again.
    fn wake(&mut self, ctx: &mut Ctx) -> Result<(), String> {
        if self.active {
            self.puller.wake(ctx);
        }
        Ok(())
    }

    fn reset(&mut self, _: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.count = 0;
        self.wake(ctx)
    }
}

// Click's order and flags: `reset_counts` is an uncommon synonym of
// `reset`.
const HANDLERS: &[Handler<Unqueue>] = &[
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_write(
            "active",
            |e| &e.active,
            |e, v, ctx| {
                e.active = parse_bool(v.trim()).map_err(syntax)?;
                e.wake(ctx)
            },
        ),
    ),
    Handler::data("count", |e| &e.count),
    Handler::data_write(
        "burst",
        |e| &e.burst,
        |e, v, ctx| {
            e.burst = burst_value(parse_i32(v.trim()).map_err(syntax)?);
            e.wake(ctx)
        },
    ),
    Handler::data_write(
        "limit",
        |e| &e.limit,
        |e, v, ctx| {
            e.limit = parse_i32(v.trim()).map_err(syntax)?;
            e.wake(ctx)
        },
    ),
    Handler::button("reset", Unqueue::reset),
    Handler::flagged(
        hflags::UNCOMMON,
        Handler::button("reset_counts", Unqueue::reset),
    ),
];

// A sink whose consumption is sending the pulled packets on.
impl Sink for Unqueue {
    fn consume(&mut self, batch: Batch, ctx: &mut Ctx) {
        self.count += batch.len() as u64;
        ctx.emit_batch(0, batch);
    }
    fn pull_task(&self) -> &PullTask {
        &self.puller
    }
    fn pull_burst(&self) -> usize {
        self.want()
    }
    fn pull_active(&self) -> bool {
        self.active && self.want() > 0
    }
}

rclick_core::element_class!(Unqueue);

impl Element for Unqueue {
    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.consume(batch, ctx);
    }
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/h"
    }

    /// The sink kind's task body, with the pulled batch handed on where
    /// it is rather than through `consume`: the task of every
    /// Queue -> Unqueue hop, run once per packet at BURST 1.
    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if !self.pull_active() {
            return false;
        }
        match self.puller.pull_to_out0(ctx, 0, self.want()) {
            Some(n) => {
                self.count += n as u64;
                true
            }
            None => false,
        }
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let burst = args.read_p_or("BURST", 1i32);
        let active = args.read_or("ACTIVE", true);
        let limit = args.read_or("LIMIT", -1i32);
        args.complete()?;
        (self.burst, self.active, self.limit) = (burst_value(burst), active, limit);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if self.burst == 0 {
            ctx.warning("BURST size 0, no packets will be pulled");
        }
        self.puller.initialize(ctx, 0, self.active);
        Ok(())
    }
}
