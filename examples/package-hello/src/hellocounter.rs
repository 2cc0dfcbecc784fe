//! # HelloCounter
//!
//! Counts packets passing through (an element of the `hello` package).
//!
//! ## Synopsis
//! `HelloCounter`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Passes packets unchanged and counts them. It is the example class of
//! an element package, a library loaded at run time with
//! `require(package "hello")` or the `load_package` handler (see
//! docs/packages.md).
//!
//! Hot swap: a new HelloCounter of the same name keeps the old one's
//! count.
//!
//! ## Handlers
//! - `count` (read): packets counted.
//! - `reset` (write): zero the count.
//! - `thread` (read): the router thread that counted the latest packets
//!   (with `-j N`; 0 otherwise).
//!
//! ## Example
//! ```click
//! require(package "hello");
//! InfiniteSource(LIMIT 5, STOP true) -> c :: HelloCounter -> Discard;
//! ```
//! then `rclick -C examples/package-hello/target/release -h c.count conf.click`.

use rclick_core::element::Observe;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

#[derive(Default)]
pub struct HelloCounter {
    count: u64,
    thread: usize,
}

impl Observe for HelloCounter {
    fn observe_batch(&mut self, batch: &Batch, ctx: &mut Ctx) {
        self.count += batch.len() as u64;
        self.thread = ctx.thread_index();
    }
}

const HANDLERS: &[Handler<HelloCounter>] = &[
    Handler::data("count", |e| &e.count),
    Handler::data("thread", |e| &e.thread),
    Handler::button("reset", |e, _, _| {
        e.count = 0;
        Ok(())
    }),
];

rclick_core::element_class!(HelloCounter);

impl Element for HelloCounter {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        rclick_core::conf::Args::new(conf).complete()?;
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        match old.as_any().downcast_ref::<HelloCounter>() {
            Some(o) => {
                self.count = o.count;
                true
            }
            None => false,
        }
    }
}
