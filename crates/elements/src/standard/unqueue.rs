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

use rclick_core::conf::{parse_bool, parse_i64, parse_usize, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, PullTask, TaskId};

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

rclick_core::element_class!(Unqueue);

impl Element for Unqueue {
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

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if !self.active {
            return false;
        }
        let mut want = self.burst;
        if self.limit >= 0 {
            want = want.min((self.limit as u64).saturating_sub(self.count) as usize);
            if want == 0 {
                return false;
            }
        }
        match self.puller.pull(ctx, 0, want) {
            Some(b) => {
                self.count += b.len() as u64;
                ctx.emit_batch(0, b);
                true
            }
            None => false,
        }
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read("count"),
            HandlerSpec::button("reset"),
            HandlerSpec::read_write("active"),
            HandlerSpec::read_write("burst"),
            HandlerSpec::read_write("limit"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        Ok(match name {
            "count" => self.count.to_string(),
            "active" => self.active.to_string(),
            "burst" => self.burst.to_string(),
            "limit" => self.limit.to_string(),
            _ => return Err(format!("no '{name}' handler")),
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "reset" => self.count = 0,
            "active" => self.active = parse_bool(v)?,
            "burst" => self.burst = parse_usize(v)?.max(1),
            "limit" => self.limit = parse_i64(v)?,
            _ => return Err(format!("no '{name}' handler")),
        }
        if self.active {
            self.puller.wake(ctx);
        }
        Ok(())
    }
}
