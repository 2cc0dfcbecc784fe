//! # Paint
//!
//! Sets packets' paint annotation.
//!
//! ## Synopsis
//! `Paint(COLOR [, ANNO])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets each packet's one-byte paint annotation to COLOR, an integer
//! 0..255. ANNO names another one-byte annotation to set instead: a Click
//! annotation name (`PAINT`, `ICMP_PARAMPROB`, `FIX_IP_SRC`, ...) or a byte
//! offset into the 48-byte annotation area, at the same offsets as Click.
//!
//! ## Keywords
//! - **COLOR** (byte): the color. Mandatory.
//! - **ANNO** (annotation): which annotation byte to set. Default `PAINT`
//!   (offset 16).
//!
//! ## Handlers
//! - `color` (read/write): the color.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Paint(1) -> ...
//! ```

use rclick_core::conf::{parse_u8, parse_usize, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::packet::{anno, ANNO_SIZE};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

/// Parses an annotation argument (Click's `AnnoArg(size)`): a name from
/// Click's annotation table or a byte offset; the annotation must be
/// `size` bytes (names) or fit in the annotation area (offsets).
pub fn parse_anno(s: &str, size: usize) -> Result<usize, String> {
    let s = s.trim();
    if let Some((off, sz)) =
        anno::by_name(s).or_else(|| s.strip_suffix("_ANNO").and_then(anno::by_name))
    {
        if sz != size {
            return Err(format!("annotation '{s}' has size {sz}, expected {size}"));
        }
        return Ok(off);
    }
    match parse_usize(s) {
        Ok(off) if off + size <= ANNO_SIZE => Ok(off),
        Ok(_) => Err("annotation out of range".into()),
        Err(_) => Err("expected annotation".into()),
    }
}

/// Reads `COLOR` (mandatory) and `ANNO` (1 byte, default PAINT), as
/// Paint, CheckPaint and PaintTee do.
pub fn read_color_anno(conf: &str) -> Result<(u8, usize), Vec<String>> {
    let mut args = Args::new(conf);
    let color: u8 = args.read_mp("COLOR");
    let anno = args
        .read_p_with("ANNO", |s| parse_anno(s, 1))
        .unwrap_or(anno::PAINT);
    args.complete()?;
    Ok((color, anno))
}

pub struct Paint {
    color: u8,
    anno: usize,
}

impl Default for Paint {
    fn default() -> Self {
        Paint {
            color: 0,
            anno: anno::PAINT,
        }
    }
}

impl SimpleAction for Paint {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        p.set_anno_bytes(self.anno, &[self.color]);
        Some(p)
    }
}

rclick_core::element_class!(Paint);

impl Element for Paint {
    rclick_core::element_kind!(action);

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
