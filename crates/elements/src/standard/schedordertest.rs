//! # SchedOrderTest
//!
//! Records the order in which the scheduler runs tasks (a test element).
//!
//! ## Synopsis
//! `SchedOrderTest(ID [, *keywords* SIZE, LIMIT, STOP])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Has a task that, each time it runs, appends ID to a log shared by every
//! SchedOrderTest of the router, until the log holds SIZE entries (the
//! largest SIZE any SchedOrderTest gives; 1024 if none does). Once the log
//! is full, a SchedOrderTest with STOP true asks the driver to stop. With
//! LIMIT N (N > 0) the task runs N times and then stays unscheduled; with
//! LIMIT 0 (the default) it runs forever. Together with ScheduleInfo it
//! shows how the scheduler shares the CPU between tasks of different
//! ticket counts.
//!
//! The log is shared through a mutex taken once per task run: this is a
//! test element, not for packet paths.
//!
//! ## Keywords
//! - **ID** (integer): the number this element logs.
//! - **SIZE** (unsigned): log capacity. Default 1024 (the largest given).
//! - **LIMIT** (unsigned): task runs before stopping; 0 means no limit.
//! - **STOP** (boolean): stop the driver when the log is full. Default
//!   false.
//!
//! ## Handlers
//! - `order` (read): the log, IDs separated by spaces (the same on every
//!   SchedOrderTest).
//! - `scheduled`, `tickets` (the standard task handlers).
//!
//! ## Example
//! ```click
//! s1 :: SchedOrderTest(1, SIZE 100, STOP true);
//! s2 :: SchedOrderTest(2, SIZE 100);
//! ScheduleInfo(s1 1, s2 2);
//! DriverManager(wait_stop, print s1.order, stop);
//! ```

use std::sync::{Arc, Mutex};

use rclick_core::conf::{parse_u32, Args};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, TaskId};

#[derive(Default)]
struct Log {
    size: usize,
    ids: Vec<i32>,
}

#[derive(Default)]
pub struct SchedOrderTest {
    id: i32,
    limit: u32,
    stop: bool,
    count: u32,
    log: Arc<Mutex<Log>>,
}

impl SchedOrderTest {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn order(&self) -> String {
        let log = self.log();
        let mut s = String::new();
        for id in &log.ids {
            s.push_str(&id.to_string());
            s.push(' ');
        }
        // Click replaces the last space with a newline (an empty log
        // reads as empty).
        if s.pop().is_some() {
            s.push('\n');
        }
        s
    }
}

const HANDLERS: &[Handler<SchedOrderTest>] =
    &[Handler::read("order", |e: &SchedOrderTest, _| e.order())];

rclick_core::element_class!(SchedOrderTest);

impl Element for SchedOrderTest {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.id = args.read_mp("ID");
        let size: u32 = args.read_or_with(
            "SIZE",
            |s| match parse_u32(s) {
                Ok(v) if v <= i32::MAX as u32 => Ok(v),
                // Click's bound (an int) for anything past it, u32 or not.
                Err(e) if !e.starts_with("out of range") => Err(e),
                _ => Err(format!("out of range, bound {}", i32::MAX)),
            },
            0,
        );
        self.stop = args.read_or("STOP", false);
        self.limit = args.read_or("LIMIT", 0);
        args.complete()?;
        // The first SchedOrderTest's log is everyone's.
        let me = ctx.element_index();
        let first = (0..me)
            .filter(|&i| ctx.element_class_of(i) == Some("SchedOrderTest"))
            .find_map(|i| {
                ctx.with_element(i, |e| {
                    e.as_any()
                        .downcast_ref::<SchedOrderTest>()
                        .map(|s| s.log.clone())
                })
                .flatten()
            });
        if let Some(log) = first {
            self.log = log;
        }
        let mut log = self.log();
        log.size = log.size.max(size as usize);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        {
            let mut log = self.log();
            if log.size == 0 {
                log.size = 1024;
            }
            let n = log.size;
            // Room for a short log up front; a long one grows as it fills
            // (SIZE near Click's bound would be gigabytes at once).
            log.ids.reserve(n.min(1 << 16));
        }
        ctx.new_task(true);
        Ok(())
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        let full = {
            let mut log = self.log();
            if log.ids.len() < log.size {
                log.ids.push(self.id);
                false
            } else {
                true
            }
        };
        if full && self.stop {
            ctx.please_stop();
        }
        self.count = self.count.wrapping_add(1);
        if self.limit == 0 || self.count < self.limit {
            ctx.fast_reschedule();
        }
        true
    }
}
