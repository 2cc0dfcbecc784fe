//! # PaintSwitch
//!
//! Sends packets to the output their paint annotation names.
//!
//! ## Synopsis
//! `PaintSwitch([ANNO])`
//!
//! ## Ports and processing
//! One push input, any number of push outputs.
//!
//! ## Description
//! Sends each packet out the output numbered by its paint annotation (or
//! the one-byte annotation ANNO). Packets whose color names no output are
//! dropped. Color 255 sends a copy out every output.
//!
//! ## Keywords
//! - **ANNO** (annotation): which annotation byte to read. Default `PAINT`.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> ps :: PaintSwitch; ps[0] -> a; ps[1] -> b;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::{classify_push, Classify};
use rclick_core::packet::anno;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet};

use super::paint::parse_anno;

/// The color that sends a packet out every output.
const ALL_OUTPUTS: u8 = 0xFF;

pub struct PaintSwitch {
    anno: usize,
}

impl Default for PaintSwitch {
    fn default() -> Self {
        PaintSwitch { anno: anno::PAINT }
    }
}

impl PaintSwitch {
    #[inline]
    fn color(&self, p: &Packet) -> u8 {
        p.anno_bytes::<1>(self.anno)[0]
    }
}

impl Classify for PaintSwitch {
    #[inline]
    fn classify(&mut self, p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        Some(self.color(p) as usize)
    }
}

rclick_core::element_class!(PaintSwitch);

impl Element for PaintSwitch {
    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.anno = args
            .read_p_with("ANNO", |s| parse_anno(s, 1))
            .unwrap_or(anno::PAINT);
        args.complete()?;
        Ok(())
    }

    // The classify kind, except that color 255 copies a packet to every
    // output, which one output per packet cannot say.
    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        if !batch.packets().iter().any(|p| self.color(p) == ALL_OUTPUTS) {
            return classify_push(batch, ctx, |p, ctx| self.classify(p, ctx));
        }
        let n = ctx.noutputs();
        for p in batch {
            if self.color(&p) != ALL_OUTPUTS {
                ctx.emit(self.color(&p) as usize, p);
            } else if n > 0 {
                for port in 0..n - 1 {
                    ctx.emit(port, p.clone());
                }
                ctx.emit(n - 1, p);
            }
        }
    }
}
