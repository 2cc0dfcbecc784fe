//! # CheckLength
//!
//! Diverts packets longer than a given length.
//!
//! ## Synopsis
//! `CheckLength(LENGTH)`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0, push output 1 (optional).
//! Processing `a/ah`.
//!
//! ## Description
//! Packets of at most LENGTH bytes leave by output 0. Longer packets leave
//! by output 1, or are dropped when output 1 is not connected.
//!
//! ## Keywords
//! - **LENGTH** (unsigned): the largest length passed to output 0.
//!   Mandatory.
//!
//! ## Handlers
//! - `length` (read/write): LENGTH.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> cl :: CheckLength(1500) -> Queue -> ToDevice(eth0);
//! cl[1] -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Filter;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

#[derive(Default)]
pub struct CheckLength {
    length: usize,
}

impl Filter for CheckLength {
    #[inline]
    fn filter(&mut self, p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        if p.len() > self.length {
            Err(p)
        } else {
            Ok(p)
        }
    }
}

const HANDLERS: &[Handler<CheckLength>] =
    &[Handler::data_rw("length", |e| &e.length, |e| &mut e.length)];

rclick_core::element_class!(CheckLength);

impl Element for CheckLength {
    rclick_core::element_kind!(filter);
    rclick_core::handlers!(HANDLERS);
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let length = args.read_mp("LENGTH");
        args.complete()?;
        self.length = length;
        Ok(())
    }
}
