//! # Bypass
//!
//! Sends packets through an optional detour.
//!
//! ## Synopsis
//! `Bypass([ACTIVE, *keywords*])`
//!
//! ## Ports and processing
//! One or two agnostic inputs, one or two agnostic outputs. Input 0 flows
//! to both outputs, input 1 to output 0.
//!
//! ## Description
//! An inactive Bypass passes packets from input 0 to output 0, like
//! [Null](#null). An active push Bypass sends packets from input 0 out
//! output 1 instead; an active pull Bypass answers pulls on output 0 from
//! input 1. A second input (push) or output (pull) rejoins the detour to
//! the main path: packets pushed into input 1 leave by output 0, and pulls
//! on output 1 are answered from input 0. So
//!
//! ```click
//! src -> b :: Bypass -> sink;  b[1] -> Print(Debug) -> [1]b;
//! ```
//!
//! prints packets only while `b.active` is true, in push or in pull.
//!
//! Click's Bypass rewires its neighbours' ports at initialization and
//! whenever `active` changes, so that packets skip it entirely (zero
//! overhead, unless INLINE is true). In rclick a pushing Bypass forwards
//! each batch with one handoff, as a Null does; pulls skip it: the runtime
//! asks it which input answers and pulls from there directly, so a pulled
//! detour that comes back through the same Bypass works, as in Click, and
//! a handler called during the pull (a Counter's COUNT_CALL writing
//! `active`) finds the Bypass free. INLINE is accepted and changes
//! nothing.
//!
//! ## Keywords
//! - **ACTIVE** (boolean): take the detour. Default false.
//! - **INLINE** (boolean): in Click, do not rewire the neighbours. Accepted.
//!
//! ## Handlers
//! - `active` (read/write): whether the detour is taken.
//!
//! ## Example
//! ```click
//! InfiniteSource(LIMIT 5) -> b :: Bypass -> Discard;
//! b[1] -> Print(detour) -> [1]b;
//! ```

use rclick_core::conf::{parse_bool, Args};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

#[derive(Default)]
pub struct Bypass {
    active: bool,
    inline: bool,
    ninputs: usize,
}

const HANDLERS: &[Handler<Bypass>] = &[Handler::data_write(
    "active",
    |e| &e.active,
    |e, v, _| {
        e.active = parse_bool(v.trim()).map_err(|_| "syntax error".to_string())?;
        Ok(())
    },
)];

rclick_core::element_class!(Bypass);

impl Element for Bypass {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1-2/1-2"
    }

    fn flow_code(&self) -> &'static str {
        "xy/[xy]x"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.ninputs = ctx.ninputs();
        let mut args = Args::new(conf);
        self.active = args.read_p_or("ACTIVE", false);
        self.inline = args.read_or("INLINE", false);
        args.complete()?;
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        let out = usize::from(self.active && port == 0 && ctx.noutputs() > 1);
        ctx.emit_batch(out, batch);
    }

    fn forwards_pulls(&self) -> bool {
        true
    }

    fn forward_pull(&self, port: usize) -> Option<usize> {
        Some(usize::from(self.active && port == 0 && self.ninputs > 1))
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let input = usize::from(self.active && port == 0 && ctx.ninputs() > 1);
        ctx.pull(input, max)
    }
}
