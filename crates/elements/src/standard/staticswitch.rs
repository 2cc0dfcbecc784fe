//! # StaticSwitch
//!
//! Sends packets to one fixed output.
//!
//! ## Synopsis
//! `StaticSwitch(OUTPUT)`
//!
//! ## Ports and processing
//! One push input, any number of push outputs.
//!
//! ## Description
//! Sends every packet out output OUTPUT. A negative OUTPUT, or one not
//! below the number of outputs, drops them. Unlike Switch, OUTPUT cannot
//! change at run time.
//!
//! ## Keywords
//! - **OUTPUT** (integer): the output to use. Mandatory.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> s :: StaticSwitch(1); s[0] -> a; s[1] -> b;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

#[derive(Default)]
pub struct StaticSwitch {
    output: Option<usize>,
}

impl Classify for StaticSwitch {
    #[inline]
    fn classify(&mut self, _p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        self.output
    }
}

rclick_core::element_class!(StaticSwitch);

impl Element for StaticSwitch {
    rclick_core::element_kind!(classify);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let output: i32 = args.read_mp("OUTPUT");
        args.complete()?;
        self.output = usize::try_from(output).ok().filter(|&o| o < ctx.noutputs());
        Ok(())
    }
}
