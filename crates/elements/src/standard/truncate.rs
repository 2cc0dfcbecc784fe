//! # Truncate
//!
//! Limits packet length.
//!
//! ## Synopsis
//! `Truncate(LENGTH, [*keywords*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Cuts packets longer than LENGTH bytes down to LENGTH by removing bytes
//! from the end. With EXTRA_LENGTH true, adds the number of bytes removed
//! to the packet's extra-length annotation (offset 28, 4 bytes, native byte
//! order as in Click).
//!
//! ## Keywords
//! - **LENGTH** (unsigned, at most 65535): the maximum length. Mandatory.
//! - **EXTRA_LENGTH** (boolean): update the extra-length annotation.
//!   Default true.
//!
//! ## Handlers
//! - `nbytes` (read/write): the length packets are cut to.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> Truncate(54) -> ToDump(headers.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct Truncate {
    nbytes: usize,
    extra_length: bool,
}

impl SimpleAction for Truncate {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let len = p.len();
        if len > self.nbytes {
            let cut = len - self.nbytes;
            if self.extra_length {
                let old = u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH));
                let new = old.wrapping_add(cut as u32);
                p.set_anno_bytes(anno::EXTRA_LENGTH, &new.to_ne_bytes());
            }
            p.take(cut);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<Truncate>] =
    &[Handler::data_rw("nbytes", |e| &e.nbytes, |e| &mut e.nbytes)];

rclick_core::element_class!(Truncate);

impl Element for Truncate {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let n: u16 = args.read_mp("LENGTH");
        self.extra_length = args.read_or("EXTRA_LENGTH", true);
        args.complete()?;
        self.nbytes = n as usize;
        Ok(())
    }
}
