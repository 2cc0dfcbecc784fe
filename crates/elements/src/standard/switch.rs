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
//!
//! ## Example
//! ```click
//! ... -> s :: Switch(0); s[0] -> a; s[1] -> b;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct Switch {
    output: i32,
    noutputs: usize,
}

impl Element for Switch {
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

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        if self.output >= 0 {
            ctx.emit_batch(self.output as usize, batch);
        }
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![HandlerSpec::read_write("switch")]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "switch" => Ok(self.output.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "switch" => {
                let v = parse_i32(value.trim())
                    .map_err(|_| "Switch output must be integer".to_string())?;
                self.output = if v >= 0 && v as usize >= self.noutputs {
                    -1
                } else {
                    v
                };
                Ok(())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }
}
