//! # StaticThreadSched
//!
//! Assigns elements' tasks to threads.
//!
//! ## Synopsis
//! `StaticThreadSched(ELEMENT THREAD, ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! With `-j N`, runs ELEMENT's tasks on thread THREAD (0 to N-1; -1 means
//! never). Elements not named keep Click's default: thread 0. The router
//! then serves an element's timers and descriptors on the same thread, and
//! gives every element with no task the thread whose pushes and pulls
//! reach it; a configuration in which two threads reach an element that is
//! not thread-safe (a Queue between them, say) is refused with a message
//! naming the element and both threads: put a ThreadSafeQueue there.
//!
//! A THREAD out of range draws Click's warning (`thread preference N out
//! of range`) and is taken as 0 (or -1 for a negative one).
//!
//! The `home_thread` handler of an element with tasks reports its thread.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! src :: InfiniteSource(LIMIT 1000, STOP true) -> q :: ThreadSafeQueue
//!     -> uq :: Unqueue -> Discard;
//! StaticThreadSched(src 0, uq 1);
//! ```

use rclick_core::conf::{split_args, split_words};
use rclick_core::{ConfigResult, Element, InitCtx};

#[derive(Default)]
pub struct StaticThreadSched;

rclick_core::element_class!(StaticThreadSched);

impl Element for StaticThreadSched {
    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::INFO
    }

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let nthreads = ctx.nthreads() as i64;
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        for arg in split_args(conf) {
            let parts = split_words(&arg);
            if parts.is_empty() {
                continue;
            }
            let [name, thread] = parts.as_slice() else {
                errors.push("expected 'ELEMENT THREAD'".to_string());
                continue;
            };
            let Some(elem) = ctx.find_element(name) else {
                errors.push(format!("no element named '{name}'"));
                continue;
            };
            let Ok(mut pref) = thread.parse::<i64>() else {
                errors.push(format!("THREAD: expected integer, not '{thread}'"));
                continue;
            };
            if pref < -1 || pref >= nthreads {
                warnings.push(format!("thread preference {pref} out of range"));
                pref = if pref < 0 { -1 } else { 0 };
            }
            ctx.set_thread_preference(elem, pref as i32);
        }
        for w in warnings {
            ctx.warning(w);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }
}
