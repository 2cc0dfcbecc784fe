//! # SimplePullSwitch
//!
//! Forwards pulls to one settable input, without notification.
//!
//! ## Synopsis
//! `SimplePullSwitch([INPUT])`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Answers each pull with a packet pulled from input INPUT; a negative
//! INPUT (or one not below the number of inputs) answers nothing. Unlike
//! [PullSwitch](#pullswitch) it is no notifier: a puller downstream sees
//! the signals of everything upstream of every input, whichever is
//! selected.
//!
//! ## Keywords
//! - **INPUT** (integer): the input to pull from. Default 0.
//!
//! ## Handlers
//! - `switch` (read/write): the current INPUT (-1 for none).
//!
//! ## Example
//! ```click
//! q1 :: Queue; q2 :: Queue;
//! q1 -> [0]s :: SimplePullSwitch(0) -> Unqueue -> Discard; q2 -> [1]s;
//! ```

use rclick_core::conf::{parse_i32, Args};
use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx};

/// The input a switch setting selects: -1 unless `0 <= v < n`.
pub fn select_input(v: i32, ninputs: usize) -> i32 {
    if v < 0 || v as usize >= ninputs {
        -1
    } else {
        v
    }
}

#[derive(Default)]
pub struct SimplePullSwitch {
    input: i32,
}

const HANDLERS: &[Handler<SimplePullSwitch>] = &[
    Handler::read_write(
        "switch",
        |e, _| e.input.to_string(),
        |e, value, ctx| {
            let v = parse_i32(value.trim()).map_err(|_| "syntax error".to_string())?;
            e.input = select_input(v, ctx.ninputs());
            Ok(())
        },
    ),
    // As Click's: `config` reads the current input.
    Handler::read("config", |e, _| e.input.to_string()),
];

rclick_core::element_class!(SimplePullSwitch);

impl Element for SimplePullSwitch {
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        processing::PULL
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let input = args.read_p_or("INPUT", 0i32);
        args.complete()?;
        self.input = select_input(input, ctx.ninputs());
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let input = usize::try_from(self.input).ok()?;
        ctx.pull(input, max)
    }
}
