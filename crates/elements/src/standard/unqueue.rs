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
//! - **BURST** (integer): packets per run. Default 1.
//! - **ACTIVE** (boolean): whether to pull. Default true.
//! - **LIMIT** (integer): stop after this many packets; -1 for no limit.
//!
//! ## Handlers
//! - `count` (read): packets moved.
//! - `reset` (write): zeroes `count`.
//! - `active`, `burst`, `limit` (read/write).
//!
//! ## Example
//! ```click
//! src -> Queue -> Unqueue(BURST 32) -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::{DataValue, Sink};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, PullTask};

pub struct Unqueue {
    burst: usize,
    active: bool,
    limit: i64,
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

impl Unqueue {
    /// Packets the next task run may pull: BURST, cut to what LIMIT leaves.
    fn want(&self) -> usize {
        if self.limit < 0 {
            self.burst
        } else {
            self.burst
                .min((self.limit as u64).saturating_sub(self.count) as usize)
        }
    }

    /// Writes a field with its Click parser, then wakes (the `active`,
    /// `burst` and `limit` handlers).
    fn set(
        &mut self,
        value: &str,
        ctx: &mut Ctx,
        field: fn(&mut Self) -> &mut dyn DataValue,
    ) -> Result<(), String> {
        field(self).assign(value)?;
        // BURST is at least 1, whatever was written.
        self.burst = self.burst.max(1);
        self.wake(ctx)
    }

    /// After any handler write: an active Unqueue pulls again.
    fn wake(&mut self, ctx: &mut Ctx) -> Result<(), String> {
        if self.active {
            self.puller.wake(ctx);
        }
        Ok(())
    }
}

// Click's registration order and flags (its `handlers` listing).
const HANDLERS: &[Handler<Unqueue>] = &[
    Handler::flagged(
        rclick_core::element::hflags::CHECKBOX,
        Handler::data_write(
            "active",
            |e| &e.active,
            |e, v, ctx| e.set(v, ctx, |e| &mut e.active),
        ),
    ),
    Handler::data("count", |e| &e.count),
    Handler::data_write(
        "burst",
        |e| &e.burst,
        |e, v, ctx| e.set(v, ctx, |e| &mut e.burst),
    ),
    Handler::data_write(
        "limit",
        |e| &e.limit,
        |e, v, ctx| e.set(v, ctx, |e| &mut e.limit),
    ),
    Handler::button("reset", |e, _, ctx| {
        e.count = 0;
        e.wake(ctx)
    }),
    Handler::flagged(
        rclick_core::element::hflags::UNCOMMON,
        Handler::button("reset_counts", |e, _, ctx| {
            e.count = 0;
            e.wake(ctx)
        }),
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
    rclick_core::element_kind!(sink);
    rclick_core::handlers!(HANDLERS);

    fn processing(&self) -> &'static str {
        "l/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.burst = args.read_p_or("BURST", 1usize).max(1);
        self.active = args.read_or("ACTIVE", true);
        self.limit = args.read_or("LIMIT", -1i64);
        args.complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.puller.initialize(ctx, 0, self.active);
        Ok(())
    }
}
