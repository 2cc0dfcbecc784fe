//! # StoreData
//!
//! Overwrites packet bytes at an offset.
//!
//! ## Synopsis
//! `StoreData(OFFSET, DATA [, MASK, keywords GROW])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Writes DATA into each packet starting OFFSET bytes from the start of the
//! data. When the packet is too short, the write is truncated at the end
//! of the packet (a packet of at most OFFSET bytes is passed unchanged),
//! unless GROW is true: then the packet is first extended with zero bytes
//! to OFFSET plus the length of DATA.
//!
//! With MASK, only the bits set in MASK are stored: each byte becomes
//! `(old & !mask) | (data & mask)`. MASK must be as long as DATA.
//!
//! MASK and GROW are rclick's: Click 2.1 accepts only OFFSET and DATA and
//! rejects a configuration that uses them.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where to write. Mandatory.
//! - **DATA** (string): the bytes to write, e.g. `\<0800>`. Mandatory.
//! - **MASK** (string): which bits of DATA to store. Default all.
//! - **GROW** (bool): extend short packets. Default false.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> StoreData(12, \<86dd>) -> ToDump(out.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct StoreData {
    offset: usize,
    data: Vec<u8>,
    mask: Option<Vec<u8>>,
    grow: bool,
}

impl SimpleAction for StoreData {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let want = self.offset + self.data.len();
        if self.grow && p.len() < want {
            let extra = want - p.len();
            // Past the longest packet, only what fits is stored.
            if let Some(bytes) = p.put(extra) {
                bytes.fill(0);
            }
        }
        if p.len() <= self.offset || self.data.is_empty() {
            return Some(p);
        }
        let end = want.min(p.len());
        let dst = &mut p.writable()[self.offset..end];
        match &self.mask {
            None => dst.copy_from_slice(&self.data[..dst.len()]),
            Some(mask) => {
                for ((b, d), m) in dst.iter_mut().zip(&self.data).zip(mask) {
                    *b = (*b & !m) | (d & m);
                }
            }
        }
        Some(p)
    }
}

rclick_core::element_class!(StoreData);

impl Element for StoreData {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        // Click's OFFSET is 32 bits, which also keeps OFFSET plus the
        // length of DATA from overflowing.
        let offset = args.read_mp::<u32>("OFFSET") as usize;
        let data: Vec<u8> = args.read_mp("DATA");
        let mask: Option<Vec<u8>> = args.read_p("MASK");
        let grow = args.read_or("GROW", false);
        args.complete()?;
        if let Some(m) = &mask {
            if m.len() != data.len() {
                return Err("MASK must be as long as DATA".into());
            }
        }
        (self.offset, self.data, self.mask, self.grow) = (offset, data, mask, grow);
        Ok(())
    }
}
