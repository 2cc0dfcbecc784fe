//! # CheckIPHeader2
//!
//! Checks IP headers, without checking checksums.
//!
//! ## Synopsis
//! `CheckIPHeader2([OFFSET, keywords OFFSET, INTERFACES, BADSRC, GOODDST, VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Exactly like CheckIPHeader, except that it never checks the IP header
//! checksum (a CHECKSUM keyword is accepted and ignored). Useful when
//! checksums are known to be valid, or for traces whose checksums were
//! zeroed.
//!
//! ## Keywords
//! As CheckIPHeader: OFFSET, INTERFACES, BADSRC, GOODDST, VERBOSE, DETAILS.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): per-reason counts, as
//!   CheckIPHeader.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> Strip(14) -> CheckIPHeader2 -> IPPrint -> Discard;
//! ```

use rclick_core::element::HandlerSpec;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx};

use super::checkipheader::CheckIPHeader;

/// CheckIPHeader without the checksum check.
pub struct CheckIPHeader2(CheckIPHeader);

impl Default for CheckIPHeader2 {
    fn default() -> Self {
        CheckIPHeader2(CheckIPHeader::without_checksum())
    }
}

rclick_core::element_class!(CheckIPHeader2);

impl Element for CheckIPHeader2 {
    fn port_count(&self) -> &'static str {
        self.0.port_count()
    }

    fn processing(&self) -> &'static str {
        self.0.processing()
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.0.configure(conf, ctx)
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        self.0.push(port, batch, ctx)
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        self.0.pull(port, max, ctx)
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        self.0.handlers()
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        self.0.read_handler(name, param, ctx)
    }
}
