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
//! ## Keywords
//! - **ACTIVE** (boolean): in pull context, whether to pull. Default true.
//! - **BURST** (integer): packets pulled per task run. Default 1.
//!
//! ## Handlers
//! - `count` (read): packets discarded.
//! - `reset_counts` (write): sets `count` to 0.
//! - `active` (read/write): the ACTIVE setting.
//!
//! Hot swap: a new Discard of the same name keeps the old one's `count`.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> Discard;
//! ```

use rclick_core::conf::{parse_bool, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, PullTask, TaskId};

pub struct Discard {
    count: u64,
    active: bool,
    burst: usize,
    puller: PullTask,
}

impl Default for Discard {
    fn default() -> Self {
        Discard {
            count: 0,
            active: true,
            burst: 1,
            puller: PullTask::default(),
        }
    }
}

impl Element for Discard {
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

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if ctx.input_is_pull(0) {
            self.puller.initialize(ctx, 0, self.active);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, _ctx: &mut Ctx) {
        self.count += batch.len() as u64;
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if !self.active {
            return false;
        }
        match self.puller.pull(ctx, 0, self.burst) {
            Some(b) => {
                self.count += b.len() as u64;
                true
            }
            None => false,
        }
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read("count"),
            HandlerSpec::write("reset_counts"),
            HandlerSpec::read_write("active"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "count" => Ok(self.count.to_string()),
            "active" => Ok(self.active.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "reset_counts" => self.count = 0,
            "active" => {
                self.active = parse_bool(value.trim())?;
                if self.active {
                    self.puller.wake(ctx);
                }
            }
            _ => return Err(format!("no '{name}' handler")),
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
