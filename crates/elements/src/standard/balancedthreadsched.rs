//! # BalancedThreadSched
//!
//! Moves tasks between threads to balance their measured load.
//!
//! ## Synopsis
//! `BalancedThreadSched([INTERVAL, INCREASING])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! With `-j N`, every INTERVAL milliseconds, takes the cycles each task
//! spent running since the last look and packs the tasks onto the threads
//! so that the busiest thread carries as little as it can: tasks sorted by
//! cost (increasing with INCREASING true, else decreasing), each to the
//! least loaded thread. The move happens only when it lowers the busiest
//! thread's load by more than 5%, so an even load does not churn.
//!
//! Unlike Click's, it moves only what may move together: tasks that reach
//! a common element that is not thread-safe form one group (a pipeline
//! from its source to its queue), and the group moves whole, with its
//! elements' timers and descriptors, so the router's thread-safety proof
//! still holds after the move. A group that StaticThreadSched places stays
//! there; work that starts without a task (descriptors such as FromDevice's
//! and ControlSocket's, and elements no task reaches) stays on thread 0.
//! The threads are stopped for the move (microseconds).
//!
//! Costs are measured only when a BalancedThreadSched is present: two
//! reads of the cycle counter per task run.
//!
//! ## Keywords
//! - **INTERVAL** (integer, milliseconds): time between steps. Default 1000.
//! - **INCREASING** (boolean): sort tasks by increasing cost before packing.
//!   Default true.
//!
//! ## Handlers
//! - `history` (read): one line per step since the router started (the
//!   last 64): the time, then for each task group the element of its
//!   first task, `@` its thread, and its share of the cycles in per mille,
//!   e.g. `1.000200 a/src@0:498 b/src@1:502`.
//! - `steps` (read): how many steps have run.
//!
//! ## Example
//! ```click
//! a :: InfiniteSource -> IPFilter(allow udp, deny all) -> Discard;
//! b :: InfiniteSource -> IPFilter(allow tcp, deny all) -> Discard;
//! BalancedThreadSched(100);
//! ```

use std::collections::VecDeque;

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, TimerId, Timestamp};

/// Steps the `history` handler keeps.
const HISTORY: usize = 64;

pub struct BalancedThreadSched {
    interval_ms: u32,
    increasing: bool,
    timer: Option<TimerId>,
    steps: u64,
    history: VecDeque<String>,
}

impl Default for BalancedThreadSched {
    fn default() -> Self {
        BalancedThreadSched {
            interval_ms: 1000,
            increasing: true,
            timer: None,
            steps: 0,
            history: VecDeque::new(),
        }
    }
}

impl BalancedThreadSched {
    fn interval(&self) -> Timestamp {
        Timestamp(i64::from(self.interval_ms.max(1)) * 1_000_000)
    }
}

const HANDLERS: &[Handler<BalancedThreadSched>] = &[
    Handler::read("history", |e, _| {
        e.history.iter().map(|l| format!("{l}\n")).collect()
    }),
    Handler::read("steps", |e, _| e.steps.to_string()),
];

rclick_core::element_class!(BalancedThreadSched);

impl Element for BalancedThreadSched {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.interval_ms = args.read_p_or("INTERVAL", 1000u32);
        self.increasing = args.read_p_or("INCREASING", true);
        args.complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if ctx.nthreads() > 1 {
            ctx.measure_task_costs();
            let t = ctx.new_timer();
            ctx.schedule_timer_at(t, ctx.now() + self.interval());
            self.timer = Some(t);
        }
        Ok(())
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        let placement = ctx.rebalance_threads(self.increasing);
        self.steps += 1;
        let mut line = ctx.now().to_string();
        for (elem, thread, share) in placement {
            let name = ctx.element_name_at(elem).unwrap_or("?");
            line.push_str(&format!(" {name}@{thread}:{share}"));
        }
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(line);
        ctx.schedule_timer_after(timer, self.interval());
    }
}
