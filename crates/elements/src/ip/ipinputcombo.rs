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
//!   CheckIPHeader.
//! - `color` (read): the paint color.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> c :: Classifier(12/0806, 12/0800, -);
//! c[1] -> IPInputCombo(1, INTERFACES 18.26.4.1/24) -> rt :: StaticIPLookup(...);
//! ```

use rclick_core::conf::Args;
use rclick_core::element::{processing, HandlerSpec};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::checkipheader::CheckIPHeader;
use super::getipaddress::GetIPAddress;
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

impl SimpleAction for IPInputCombo {
    #[inline]
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let p = self.paint.action(p, ctx)?;
        let p = self.strip.action(p, ctx)?;
        // Invalid packets leave on output 1, which is also ours.
        let p = self.check.action(p, ctx)?;
        self.getaddr.action(p, ctx)
    }
}

rclick_core::element_class!(IPInputCombo);

impl Element for IPInputCombo {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::AGNOSTIC_PUSH_ERROR
    }

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

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        let mut h = self.check.handlers();
        h.push(HandlerSpec::read("color"));
        h
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        match name {
            "color" => self.paint.read_handler("color", param, ctx),
            _ => self.check.read_handler(name, param, ctx),
        }
    }
}
