//! # Hub
//!
//! Duplicates packets like an Ethernet hub.
//!
//! ## Synopsis
//! `Hub`
//!
//! ## Ports and processing
//! Any number of push inputs, as many push outputs.
//!
//! ## Description
//! A packet arriving on input N leaves by every output except output N: a
//! clone on each but the last such output, the original on the last.
//! Clones share the packet data until one of them is written. A packet on
//! the only port of a one-port Hub goes nowhere and is dropped. Not
//! specific to Ethernet.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! h :: Hub;
//! FromDevice(eth0) -> [0]h[0] -> ToDevice(eth0);
//! FromDevice(eth1) -> [1]h[1] -> ToDevice(eth1);
//! FromDevice(eth2) -> [2]h[2] -> ToDevice(eth2);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::processing;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

use super::tee::clone_batch;

#[derive(Default)]
pub struct Hub;

rclick_core::element_class!(Hub);

impl Element for Hub {
    fn port_count(&self) -> &'static str {
        "-/="
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn flow_code(&self) -> &'static str {
        "#/[^#]"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        let n = ctx.noutputs();
        // The last output other than `port` gets the originals.
        let last = match n.checked_sub(1) {
            Some(l) if l == port => l.checked_sub(1),
            other => other,
        };
        let Some(last) = last else {
            return; // no other output: dropped
        };
        for out in (0..last).filter(|&o| o != port) {
            ctx.emit_batch(out, clone_batch(&batch));
        }
        ctx.emit_batch(last, batch);
    }
}
