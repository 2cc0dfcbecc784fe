//! # Discard
//!
//! Drops all packets.
//!
//! ## Synopsis
//! `Discard([ACTIVE, BURST])`
//!
//! ## Ports and processing
//! One agnostic input, no outputs. In pull context it runs a task that pulls
//! and drops packets.
//!
//! ## Description
//! Discards every packet it receives. When its input is pull, a task pulls up
//! to BURST packets at a time while ACTIVE, sleeping while the upstream
//! queues are empty.
//!
//! With `-j N`, a push Discard reached from several threads runs as one
//! copy per thread; `count` reads their sum.
//!
//! ## Keywords
//! - **ACTIVE** (boolean): in pull context, whether to pull. Default true.
//! - **BURST** (integer): packets pulled per task run. Default 1.
//!
//! ## Handlers
//! - `count` (read): packets discarded.
//! - `reset_counts` (write): sets `count` to 0.
//! - `active` (read/write): the ACTIVE setting; only when the input is pull.
//!
//! Hot swap: a new Discard of the same name keeps the old one's `count`.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> Discard;
//! ```

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::{hflags, PerThread, Sink};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, PullTask};

pub struct Discard {
    count: u64,
    active: bool,
    burst: usize,
    /// Whether the input is pull (then `active` exists).
    pull: bool,
    puller: PullTask,
}

impl Default for Discard {
    fn default() -> Self {
        Discard {
            count: 0,
            active: true,
            burst: 1,
            pull: false,
            puller: PullTask::default(),
        }
    }
}

// Click's order; `active` exists only when the input is pull.
const COUNT: Handler<Discard> = Handler::data("count", |e| &e.count);
const RESET_COUNTS: Handler<Discard> = Handler::button("reset_counts", |e, _, _| {
    e.count = 0;
    Ok(())
});
const PUSH_HANDLERS: &[Handler<Discard>] = &[COUNT, RESET_COUNTS];
const PULL_HANDLERS: &[Handler<Discard>] = &[
    COUNT,
    RESET_COUNTS,
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::data_write(
            "active",
            |e| &e.active,
            |e, value, ctx| {
                e.active = parse_bool(value.trim())?;
                if e.active {
                    e.puller.wake(ctx);
                }
                Ok(())
            },
        ),
    ),
];

impl Discard {
    fn handler_table(&self) -> &'static [Handler<Discard>] {
        if self.pull {
            PULL_HANDLERS
        } else {
            PUSH_HANDLERS
        }
    }
}

impl Sink for Discard {
    #[inline]
    fn consume(&mut self, batch: Batch, _ctx: &mut Ctx) {
        self.count += batch.len() as u64;
        // Freed inline, without the drop glue's call (once per packet at
        // BURST 1).
        batch.free();
    }
    fn pull_task(&self) -> &PullTask {
        &self.puller
    }
    fn pull_burst(&self) -> usize {
        self.burst
    }
    fn pull_active(&self) -> bool {
        self.active
    }
}

rclick_core::element_class!(Discard);

impl PerThread for Discard {
    const SUMMED: &'static [&'static str] = &["count"];

    /// A pushed-to Discard is one count per thread; a pulling one has a
    /// task of its own and stays whole.
    fn fresh_copy(&self) -> Option<Self> {
        (!self.pull).then(|| Discard {
            count: 0,
            active: self.active,
            burst: self.burst,
            pull: false,
            puller: PullTask::default(),
        })
    }

    fn absorb(&mut self, copy: Self) {
        self.count += copy.count;
    }
}

impl Element for Discard {
    rclick_core::per_thread!();
    rclick_core::element_kind!(sink);
    rclick_core::handlers!(by Self::handler_table);

    fn port_count(&self) -> &'static str {
        "1/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.active = args.read_or("ACTIVE", true);
        self.burst = args.read_or("BURST", 1usize).max(1);
        args.complete()?;
        Ok(())
    }

    fn inputs_resolved(&mut self, input_pull: &[bool]) {
        self.pull = input_pull.first().copied().unwrap_or(false);
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.pull = ctx.input_is_pull(0);
        if self.pull {
            self.puller.initialize(ctx, 0, self.active);
        }
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        match old.as_any().downcast_ref::<Discard>() {
            Some(o) => {
                self.count = o.count;
                true
            }
            None => false,
        }
    }
}
