//! # InputSwitch
//!
//! Accepts packets from one settable input.
//!
//! ## Synopsis
//! `InputSwitch([INPUT])`
//!
//! ## Ports and processing
//! Any number of push inputs, one push output.
//!
//! ## Description
//! Forwards packets arriving on input INPUT to the output and drops
//! packets arriving on any other input. A negative INPUT drops everything.
//! The `switch` handler changes INPUT while the router runs; writing a
//! value not below the number of inputs sets it to -1. (Click names the
//! positional argument's keyword `OUTPUT`; rclick accepts that keyword
//! too.)
//!
//! ## Keywords
//! - **INPUT** (integer): the input to accept. Default 0. Must be less
//!   than the number of inputs.
//!
//! ## Handlers
//! - `switch` (read/write): the current INPUT.
//!
//! ## Example
//! ```click
//! a -> [0]s :: InputSwitch(0) -> Discard; b -> [1]s;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

#[derive(Default)]
pub struct InputSwitch {
    input: i32,
}

const HANDLERS: &[Handler<InputSwitch>] = &[
    Handler::read_write(
        "switch",
        |e, _| e.input.to_string(),
        |e, value, ctx| {
            let v = parse_i32(value.trim())
                .map_err(|_| "InputSwitch input must be integer".to_string())?;
            e.input = if v >= 0 && v as usize >= ctx.ninputs() {
                -1
            } else {
                v
            };
            ctx.set_config(&e.input.to_string());
            Ok(())
        },
    ),
    // As Click's: `config` reads the current input.
    Handler::read("config", |e, _| e.input.to_string()),
];

rclick_core::element_class!(InputSwitch);

impl Element for InputSwitch {
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let mut input = args.read_p_or("OUTPUT", 0i32);
        if let Some(i) = args.read("INPUT") {
            input = i;
        }
        args.complete()?;
        if input >= 0 && input as usize >= ctx.ninputs() {
            return Err(format!("input must be < {}", ctx.ninputs()).into());
        }
        self.input = input;
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        if usize::try_from(self.input) == Ok(port) {
            ctx.emit_batch(0, batch);
        }
    }
}
