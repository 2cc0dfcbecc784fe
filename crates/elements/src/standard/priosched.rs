//! # PrioSched
//!
//! Pulls from its inputs in strict priority order.
//!
//! ## Synopsis
//! `PrioSched`
//!
//! ## Ports and processing
//! Any number of pull inputs, one pull output.
//!
//! ## Description
//! Each pull on the output tries input 0 first, then input 1, and so on,
//! returning packets from the first input that has any: input 0 has the
//! highest priority. Inputs whose upstream notifier says they are empty
//! are skipped without being pulled. PrioSched is not a notifier itself:
//! an element pulling from it listens to the signals of every queue
//! upstream of it, as in Click.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! hi :: Queue -> [0] ps :: PrioSched; lo :: Queue -> [1] ps; ps -> Unqueue -> Discard;
//! ```

use rclick_core::batch::BATCH_CAPACITY;
use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, NotifierSignal};

use super::roundrobinsched::input_signals;

#[derive(Default)]
pub struct PrioSched {
    signals: Vec<NotifierSignal>,
}

rclick_core::element_class!(PrioSched);

impl Element for PrioSched {
    fn port_count(&self) -> &'static str {
        "-/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.signals = input_signals(ctx);
        Ok(())
    }

    // Fills the batch from the inputs in priority order, each input giving
    // what it has before the next is asked.
    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let max = max.min(BATCH_CAPACITY);
        let mut out: Option<Batch> = None;
        for (i, sig) in self.signals.iter().enumerate() {
            let have = out.as_ref().map_or(0, Batch::len);
            if have >= max {
                break;
            }
            if !ctx.signal_active(sig) {
                continue;
            }
            let Some(b) = ctx.pull(i, max - have) else {
                continue;
            };
            match &mut out {
                None => out = Some(b),
                Some(o) => b.into_iter().for_each(|p| o.push(p)),
            }
        }
        out
    }
}
