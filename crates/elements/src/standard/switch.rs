//! # Switch
//!
//! Sends packets to one settable output.
//!
//! ## Synopsis
//! `Switch([OUTPUT])`
//!
//! ## Ports and processing
//! One push input, any number of push outputs.
//!
//! ## Description
//! Sends every packet out output OUTPUT. A negative OUTPUT drops them. The
//! `switch` handler changes OUTPUT while the router runs; writing a value
//! not below the number of outputs sets it to -1.
//!
//! ## Keywords
//! - **OUTPUT** (integer): the output to use. Default 0. Must be less than
//!   the number of outputs.
//!
//! ## Handlers
//! - `switch` (read/write): the current OUTPUT.
//! - `config` (read/write): reads the current OUTPUT; writing it
//!   reconfigures live (an OUTPUT not below the number of outputs is then
//!   an error and changes nothing).
//!
//! ## Example
//! ```click
//! ... -> s :: Switch(0); s[0] -> a; s[1] -> b;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

#[derive(Default)]
pub struct Switch {
    output: i32,
    noutputs: usize,
}

const HANDLERS: &[Handler<Switch>] = &[
    Handler::read_write(
        "switch",
        |e, _| e.output.to_string(),
        |e, value, _| {
            let v =
                parse_i32(value.trim()).map_err(|_| "Switch output must be integer".to_string())?;
            e.output = if v >= 0 && v as usize >= e.noutputs {
                -1
            } else {
                v
            };
            Ok(())
        },
    ),
    // Click's Switch reads its current output as its configuration.
    Handler::read("config", |e, _| e.output.to_string()),
];

rclick_core::element_class!(Switch);

impl Element for Switch {
    rclick_core::handlers!(HANDLERS);

    // Not the classify kind: every packet of a batch takes the same output,
    // so the batch moves on whole without looking at its packets.
    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        if let Ok(output) = usize::try_from(self.output) {
            ctx.emit_batch(output, batch);
        }
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let output = args.read_p_or("OUTPUT", 0i32);
        args.complete()?;
        self.noutputs = ctx.noutputs();
        if output >= 0 && output as usize >= self.noutputs {
            return Err(format!("output must be < {}", self.noutputs).into());
        }
        self.output = output;
        Ok(())
    }
}
