//! # Idle
//!
//! Has any number of ports and never moves a packet.
//!
//! ## Synopsis
//! `Idle`
//!
//! ## Ports and processing
//! Any number of agnostic inputs and outputs. No packet flows from any
//! input to any output.
//!
//! ## Description
//! Drops every packet pushed into it and returns nothing when pulled. Idle
//! is an empty notifier whose signal is never active, so an element pulling
//! from it (an Unqueue, a scheduler) sleeps instead of polling. Use it to
//! fill ports that must be connected.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! Idle -> q :: Queue -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Element, InitCtx, SignalId};

// Idle keeps the Element defaults for push (drop) and pull (nothing).
#[derive(Default)]
pub struct Idle {
    signal: Option<SignalId>,
}

rclick_core::element_class!(Idle);

impl Element for Idle {
    fn port_count(&self) -> &'static str {
        "-/-"
    }

    fn flow_code(&self) -> &'static str {
        "x/y"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        if self.signal.is_none() {
            self.signal = Some(ctx.new_signal(false));
        }
        Ok(())
    }

    fn empty_notifier(&self) -> Option<SignalId> {
        self.signal
    }
}
