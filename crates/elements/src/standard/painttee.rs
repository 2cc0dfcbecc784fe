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

use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::paint::Color;

#[derive(Default)]
pub struct PaintTee {
    paint: Color,
}

const HANDLERS: &[Handler<PaintTee>] = &[Handler::data_rw(
    "color",
    |e| &e.paint.color,
    |e| &mut e.paint.color,
)];

impl PaintTee {
    /// Whether the packet has the color, so that a copy of it leaves on
    /// output 1.
    #[inline]
    pub fn copies(&self, p: &Packet) -> bool {
        self.paint.is_on(p)
    }
}

impl SimpleAction for PaintTee {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        if self.copies(&p) {
            ctx.emit(1, p.clone());
        }
        Some(p)
    }
}

rclick_core::element_class!(PaintTee);

impl PaintTee {
    /// The kit's batch path, out of line so that the look in
    /// `push_in_chain` saves no registers for it.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        rclick_core::element::kinds::simple_push_in_chain(self, batch, ctx)
    }
}

impl Element for PaintTee {
    rclick_core::element_kind!(action, own_chain);

    // The action kind's push, after a look that usually finds no packet
    // of the color: then the batch passes as it is.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        !batch.packets().iter().any(|p| self.copies(p)) || self.push_in_chain_general(batch, ctx)
    }
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::AGNOSTIC_PUSH_ERROR
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.paint.configure(conf)
    }
}
