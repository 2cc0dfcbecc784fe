//! # PaintTee
//!
//! Copies packets with a given paint color to output 1.
//!
//! ## Synopsis
//! `PaintTee(COLOR [, ANNO])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 and push output 1.
//!
//! ## Description
//! Every packet goes out output 0. A packet whose paint annotation equals
//! COLOR also sends a clone out output 1 (IP routers use this to send ICMP
//! redirects for packets leaving by the interface they came in on).
//!
//! ## Keywords
//! - **COLOR** (byte): the color. Mandatory.
//! - **ANNO** (annotation): which annotation byte to check. Default `PAINT`.
//!
//! ## Handlers
//! - `color` (read/write): the color.
//!
//! ## Example
//! ```click
//! ... -> pt :: PaintTee(1) -> ...; pt[1] -> ICMPError(18.26.4.24, redirect, host) -> ...;
//! ```

use rclick_core::conf::parse_u8;
use rclick_core::element::HandlerSpec;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::paint::read_color_anno;

pub struct PaintTee {
    color: u8,
    anno: usize,
}

impl Default for PaintTee {
    fn default() -> Self {
        PaintTee {
            color: 0,
            anno: anno::PAINT,
        }
    }
}

impl SimpleAction for PaintTee {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        if p.anno_bytes::<1>(self.anno)[0] == self.color {
            ctx.emit(1, p.clone());
        }
        Some(p)
    }
}

rclick_core::element_class!(PaintTee);

impl Element for PaintTee {
    rclick_core::element_kind!(action);

    fn port_count(&self) -> &'static str {
        "1/2"
    }

    fn processing(&self) -> &'static str {
        "a/ah"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        (self.color, self.anno) = read_color_anno(conf)?;
        Ok(())
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
