//! # Strip
//!
//! Removes bytes from the front of packets.
//!
//! ## Synopsis
//! `Strip(LENGTH)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Deletes the first LENGTH bytes of each packet (all of it if it is
//! shorter). The bytes stay in the headroom, so Unstrip can bring them
//! back. No data is copied.
//!
//! ## Keywords
//! - **LENGTH** (unsigned): bytes to strip. Mandatory.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ...
//! ```

use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

/// Reads the `LENGTH` of Strip and Unstrip.
pub fn read_length(conf: &str) -> Result<usize, Vec<String>> {
    let mut args = Args::new(conf);
    let n: u32 = args.read_mp("LENGTH");
    args.complete()?;
    Ok(n as usize)
}

#[derive(Default)]
pub struct Strip {
    nbytes: usize,
}

impl SimpleAction for Strip {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        p.pull(self.nbytes);
        Some(p)
    }
}

rclick_core::element_class!(Strip);

impl Element for Strip {
    rclick_core::element_kind!(action, own_chain);

    // The action kind's push, with each packet stripped where it lies
    // (nothing is ever dropped) instead of moved out and back.
    // A batch of one is stripped without the loop's set-up.
    fn push_in_chain(&mut self, batch: &mut Batch, _ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            p.pull(self.nbytes);
            return true;
        }
        for p in batch.packets_mut() {
            p.pull(self.nbytes);
        }
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.nbytes = read_length(conf)?;
        Ok(())
    }
}
