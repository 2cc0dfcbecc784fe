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
use rclick_core::element::Classify;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet};

#[derive(Default)]
pub struct HashSwitch {
    offset: usize,
    length: usize,
    noutputs: usize,
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

impl Classify for HashSwitch {
    #[inline]
    fn classify(&mut self, p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        Some(self.output_for(p.data(), self.noutputs))
    }
}

rclick_core::element_class!(HashSwitch);

impl Element for HashSwitch {
    rclick_core::element_kind!(classify);

    fn port_count(&self) -> &'static str {
        "1/1-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let offset: u32 = args.read_mp("OFFSET");
        let length: u32 = args.read_mp("LENGTH");
        args.complete()?;
        if length == 0 {
            return Err("length must be > 0".into());
        }
        self.offset = offset as usize;
        self.length = length as usize;
        self.noutputs = ctx.noutputs();
        Ok(())
    }
}
