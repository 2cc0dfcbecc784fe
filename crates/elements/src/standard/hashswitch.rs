//! # HashSwitch
//!
//! Sends packets to outputs by a hash of some of their bytes.
//!
//! ## Synopsis
//! `HashSwitch(OFFSET, LENGTH)`
//!
//! ## Ports and processing
//! One push input, one or more push outputs.
//!
//! ## Description
//! Sums the LENGTH bytes starting at byte OFFSET of each packet and picks
//! an output from the sum `d`, exactly as Click does: with 2, 4 or 8
//! outputs, output `(d ^ (d >> 4)) & (n - 1)`; otherwise `d % n`. Packets
//! too short to hold those bytes go out output 0. Equal bytes always go to
//! the same output, so flows keyed on those bytes stay together.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): first byte hashed. Mandatory.
//! - **LENGTH** (unsigned, positive): number of bytes hashed. Mandatory.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> hs :: HashSwitch(26, 8); hs[0] -> a; hs[1] -> b;
//! ```

use rclick_core::conf::Args;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

#[derive(Default)]
pub struct HashSwitch {
    offset: usize,
    length: usize,
}

impl HashSwitch {
    /// The output for `data` among `n` outputs.
    pub fn output_for(&self, data: &[u8], n: usize) -> usize {
        let Some(bytes) = data.get(self.offset..self.offset + self.length) else {
            return 0;
        };
        let d: u32 = bytes.iter().map(|&b| u32::from(b)).sum();
        let n = n.max(1) as u32;
        (if n == 2 || n == 4 || n == 8 {
            (d ^ (d >> 4)) & (n - 1)
        } else {
            d % n
        }) as usize
    }
}

rclick_core::element_class!(HashSwitch);

impl Element for HashSwitch {
    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let offset: u32 = args.read_mp("OFFSET");
        let length: u32 = args.read_mp("LENGTH");
        args.complete()?;
        if length == 0 {
            return Err("length must be > 0".into());
        }
        self.offset = offset as usize;
        self.length = length as usize;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let n = ctx.noutputs();
        for p in batch {
            let o = self.output_for(p.data(), n);
            ctx.emit(o, p);
        }
    }
}
