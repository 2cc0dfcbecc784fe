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

use rclick_core::element::Filter;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::paint::Color;

#[derive(Default)]
pub struct CheckPaint {
    paint: Color,
}

const HANDLERS: &[Handler<CheckPaint>] = &[Handler::data_rw(
    "color",
    |e| &e.paint.color,
    |e| &mut e.paint.color,
)];

impl Filter for CheckPaint {
    #[inline]
    fn filter(&mut self, p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        if self.paint.is_on(&p) {
            Ok(p)
        } else {
            Err(p)
        }
    }
}

rclick_core::element_class!(CheckPaint);

impl Element for CheckPaint {
    rclick_core::element_kind!(filter);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::AGNOSTIC_PUSH_ERROR
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.paint.configure(conf)
    }
}
