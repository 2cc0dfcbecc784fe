//! # CheckPaint
//!
//! Checks packets' paint annotation.
//!
//! ## Synopsis
//! `CheckPaint(COLOR [, ANNO])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 and an optional push output 1.
//!
//! ## Description
//! Packets whose paint annotation equals COLOR go out output 0. Others go
//! out output 1 if it exists, and are dropped otherwise. In pull mode a
//! packet that fails the check is pushed to output 1 and the pull returns
//! nothing for it.
//!
//! ## Keywords
//! - **COLOR** (byte): the color to accept. Mandatory.
//! - **ANNO** (annotation): which annotation byte to check. Default `PAINT`.
//!
//! ## Handlers
//! - `color` (read/write): the color.
//!
//! ## Example
//! ```click
//! ... -> cp :: CheckPaint(2) -> ...; cp[1] -> Discard;
//! ```

use rclick_core::conf::parse_u8;
use rclick_core::element::HandlerSpec;
use rclick_core::packet::anno;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

use super::paint::read_color_anno;

pub struct CheckPaint {
    color: u8,
    anno: usize,
}

impl Default for CheckPaint {
    fn default() -> Self {
        CheckPaint {
            color: 0,
            anno: anno::PAINT,
        }
    }
}

rclick_core::element_class!(CheckPaint);

impl Element for CheckPaint {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "a/ah"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        (self.color, self.anno) = read_color_anno(conf)?;
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, ctx: &mut Ctx) {
        let (color, off) = (self.color, self.anno);
        batch.retain_map(|p| {
            if p.anno_bytes::<1>(off)[0] == color {
                Some(p)
            } else {
                ctx.emit(1, p);
                None
            }
        });
        ctx.emit_batch(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let mut batch = ctx.pull(0, max)?;
        let (color, off) = (self.color, self.anno);
        batch.retain_map(|p| {
            if p.anno_bytes::<1>(off)[0] == color {
                Some(p)
            } else {
                ctx.emit(1, p);
                None
            }
        });
        (!batch.is_empty()).then_some(batch)
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![HandlerSpec::read_write("color")]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "color" => Ok(self.color.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "color" => self.color = parse_u8(value.trim())?,
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(())
    }
}
