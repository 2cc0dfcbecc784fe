//! # HelloTee
//!
//! Sends each packet on, and a clone and a fresh copy of it to a second
//! output (an element of the `hello` package).
//!
//! ## Synopsis
//! `HelloTee`
//!
//! ## Ports and processing
//! One push input, two push outputs.
//!
//! ## Description
//! Each packet leaves by output 0 unchanged. Output 1 gets two packets
//! for it: a clone (sharing the data) and a new packet made here with a
//! copy of the data. A third clone is made and dropped at once.
//!
//! It exists to show (and test) that packets cross the package boundary
//! both ways: packets made in the package are freed by the router, and
//! packets the router made are cloned and freed in the package.
//!
//! ## Handlers
//! - `made` (read): packets this element made (clones and copies).
//!
//! ## Example
//! ```click
//! require(package "hello");
//! InfiniteSource(LIMIT 5, STOP true) -> t :: HelloTee -> Discard;
//! t[1] -> Counter -> Discard;
//! ```

use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

#[derive(Default)]
pub struct HelloTee {
    made: u64,
}

const HANDLERS: &[Handler<HelloTee>] = &[Handler::data("made", |e| &e.made)];

rclick_core::element_class!(HelloTee);

impl Element for HelloTee {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn flow_code(&self) -> &'static str {
        "x/x"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        rclick_core::conf::Args::new(conf).complete()?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        for p in batch {
            let shared = p.clone();
            let fresh = Packet::from_slice(p.data());
            drop(p.clone());
            self.made += 2;
            ctx.emit(1, shared);
            ctx.emit(1, fresh);
            ctx.emit(0, p);
        }
    }
}
