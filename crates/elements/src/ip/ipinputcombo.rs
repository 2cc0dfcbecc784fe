//! # IPInputCombo
//!
//! The IP router's input path in one element: Paint, Strip(14),
//! CheckIPHeader and GetIPAddress(16).
//!
//! ## Synopsis
//! `IPInputCombo(COLOR [, BADSRC, keywords INTERFACES, BADSRC, GOODDST, CHECKSUM, VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones (dropped when unconnected). Processing `a/ah`.
//!
//! ## Description
//! A merged element (the Click paper's section on merging elements)
//! equivalent to
//!
//! ```text
//! elementclass IPInputCombo { $COLOR, $BADSRC |
//!   input -> Paint($COLOR) -> Strip(14) -> CheckIPHeader($BADSRC)
//!         -> GetIPAddress(16) -> output;
//! }
//! ```
//!
//! but with one element handoff instead of four. Each input packet, an
//! Ethernet frame, gets paint annotation COLOR; its 14-byte Ethernet header
//! is stripped; the IP header is checked exactly as CheckIPHeader does (the
//! same code runs), and valid packets leave on output 0 with their network
//! header set, link-level padding removed and the destination IP
//! annotation set to the IP destination. Invalid packets go to output 1.
//!
//! The arguments after COLOR are CheckIPHeader's: a positional BADSRC list
//! (0.0.0.0 and 255.255.255.255 are then bad too) or the INTERFACES, BADSRC
//! and GOODDST keywords.
//!
//! ## Keywords
//! - **COLOR** (0-255): paint color for every packet.
//! - **BADSRC**, **INTERFACES**, **GOODDST**, **CHECKSUM**, **VERBOSE**,
//!   **DETAILS**: as for CheckIPHeader.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): per-reason counts, as for
//!   CheckIPHeader (an rclick addition, as is DETAILS).
//! - `color` (read): the paint color (an rclick addition).
//!
//! rclick's additions are listed after Click's handlers.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> c :: Classifier(12/0806, 12/0800, -);
//! c[1] -> IPInputCombo(1, INTERFACES 18.26.4.1/24) -> rt :: StaticIPLookup(...);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::element::Filter;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::checkipheader::{CheckIPHeader, REASONS};
use super::getipaddress::GetIPAddress;
use super::ipcommon::{checker_handlers, DROP_DETAILS};
use crate::standard::paint::Paint;
use crate::standard::strip::Strip;

/// Paint, Strip(14), CheckIPHeader and GetIPAddress(16), run in sequence
/// on one packet.
#[derive(Default)]
pub struct IPInputCombo {
    paint: Paint,
    strip: Strip,
    check: CheckIPHeader,
    getaddr: GetIPAddress,
    color: String,
}

impl FilterOrDrop for IPInputCombo {
    #[inline(always)]
    fn filter_or_drop(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Result<Packet, Packet>> {
        let p = self.paint.action(p, ctx)?;
        let p = self.strip.action(p, ctx)?;
        match self.check.filter(p, ctx) {
            Ok(p) => self.getaddr.action(p, ctx).map(Ok),
            Err(bad) => Some(Err(bad)),
        }
    }
}

// rclick's additions first, so that they are listed after Click's `drops`.
const HANDLERS: &[Handler<IPInputCombo>] = &[
    Handler::read(DROP_DETAILS, |e, _| e.check.stats.details_text(&REASONS)),
    Handler::read("color", |e, ctx| {
        e.paint.read_handler("color", None, ctx).unwrap_or_default()
    }),
    Handler::data("drops", |e| &e.check.stats.drops),
];

rclick_core::element_class!(IPInputCombo);

impl Element for IPInputCombo {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let color: String = args.read_mp("COLOR");
        let rest = args.consume()?;
        self.paint.configure(&color, ctx)?;
        self.strip.configure("14", ctx)?;
        self.check.configure(&rest.join(", "), ctx)?;
        self.getaddr.configure("16", ctx)?;
        self.color = color;
        Ok(())
    }

    rclick_core::element_kind!(filter_or_drop);
    checker_handlers!(HANDLERS, |e: &Self| e.check.details());
}
