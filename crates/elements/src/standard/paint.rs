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
//! - `config` (read/write): writing it reconfigures COLOR and ANNO live.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Paint(1) -> ...
//! ```

use rclick_core::conf::{parse_usize, Args};
use rclick_core::packet::{anno, ANNO_SIZE};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

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
        Ok(off) if off.checked_add(size).is_some_and(|end| end <= ANNO_SIZE) => Ok(off),
        Ok(_) => Err("annotation out of range".into()),
        Err(_) => Err("expected annotation".into()),
    }
}

/// A color and the one-byte annotation that holds it: the state and the
/// configuration (`COLOR [, ANNO]`) of Paint, CheckPaint and PaintTee.
pub struct Color {
    pub color: u8,
    pub anno: usize,
}

impl Default for Color {
    fn default() -> Self {
        Color {
            color: 0,
            anno: anno::PAINT,
        }
    }
}

impl Color {
    /// Reads `COLOR` (mandatory) and `ANNO` (1 byte, default PAINT).
    pub fn configure(&mut self, conf: &str) -> ConfigResult {
        let mut args = Args::new(conf);
        let color: u8 = args.read_mp("COLOR");
        let anno = args
            .read_p_with("ANNO", |s| parse_anno(s, 1))
            .unwrap_or(anno::PAINT);
        args.complete()?;
        (self.color, self.anno) = (color, anno);
        Ok(())
    }

    /// Whether `p` carries this color.
    #[inline]
    pub fn is_on(&self, p: &Packet) -> bool {
        p.anno().get(self.anno).copied().unwrap_or(0) == self.color
    }
}

#[derive(Default)]
pub struct Paint {
    paint: Color,
}

const HANDLERS: &[Handler<Paint>] = &[Handler::data_rw(
    "color",
    |e| &e.paint.color,
    |e| &mut e.paint.color,
)];

impl Paint {
    /// Straight into the annotation area (the offset was checked when
    /// configured).
    #[inline(always)]
    fn paint(&self, p: &mut Packet) {
        if let Some(b) = p.anno_mut().get_mut(self.paint.anno) {
            *b = self.paint.color;
        }
    }
}

impl SimpleAction for Paint {
    #[inline(always)]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        self.paint(&mut p);
        Some(p)
    }
}

rclick_core::element_class!(Paint);

impl Element for Paint {
    rclick_core::element_kind!(action, own_chain);
    rclick_core::handlers!(HANDLERS);

    // The action kind's push, with each packet painted where it lies
    // (nothing is ever dropped) instead of moved out and back.
    // A batch of one is painted without the loop's set-up.
    fn push_in_chain(&mut self, batch: &mut Batch, _ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            self.paint(p);
            return true;
        }
        for p in batch.packets_mut() {
            self.paint(p);
        }
        true
    }

    // Writing `config` sets COLOR and ANNO anew; a bad one changes nothing.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.paint.configure(conf)
    }
}
