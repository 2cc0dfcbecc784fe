//! # Clipboard
//!
//! Copies bytes from one packet to others.
//!
//! ## Synopsis
//! `Clipboard(RANGE_1, ..., RANGE_N)`
//!
//! ## Ports and processing
//! Two agnostic inputs, two agnostic outputs; input N flows to output N.
//!
//! ## Description
//! Each RANGE is `OFFSET/LENGTH`: LENGTH bytes starting OFFSET bytes into
//! the packet. A packet arriving on input 0 has the bytes of every range
//! copied onto the clipboard, in order, and leaves unchanged by output 0. A
//! packet arriving on input 1 has the clipboard written back over the same
//! ranges and leaves by output 1, unless it is shorter than the end of the
//! farthest range, in which case it leaves unchanged. So data from one
//! packet can be stamped onto any number of later ones.
//!
//! The clipboard starts zeroed. Where Click reads past the end of a packet
//! on input 0 too short for a range (undefined data), rclick copies the
//! bytes that exist and leaves the rest of that range's clipboard bytes as
//! they were.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! cb :: Clipboard(0/4);
//! FromDump(a.pcap) -> [0]cb[0] -> Discard;
//! FromDump(b.pcap) -> [1]cb[1] -> ToDump(b2.pcap);
//! ```

use rclick_core::conf::{split_args, Args};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Errors, InitCtx, Packet};

#[derive(Default)]
pub struct Clipboard {
    /// (offset, length) of each range.
    ranges: Vec<(usize, usize)>,
    clipboard: Vec<u8>,
    /// The end of the farthest range: shorter packets are not pasted on.
    min_len: usize,
}

impl Clipboard {
    fn copy(&mut self, p: &Packet) {
        let data = p.data();
        let mut at = 0;
        for &(off, len) in &self.ranges {
            let have = data.len().saturating_sub(off).min(len);
            if have > 0 {
                self.clipboard[at..at + have].copy_from_slice(&data[off..off + have]);
            }
            at += len;
        }
    }

    fn paste(&self, p: &mut Packet) {
        if p.len() < self.min_len {
            return;
        }
        let data = p.writable();
        let mut at = 0;
        for &(off, len) in &self.ranges {
            data[off..off + len].copy_from_slice(&self.clipboard[at..at + len]);
            at += len;
        }
    }

    fn process(&mut self, port: usize, batch: &mut Batch) {
        if port == 0 {
            for p in batch.packets() {
                self.copy(p);
            }
        } else {
            for p in batch.packets_mut() {
                self.paste(p);
            }
        }
    }
}

rclick_core::element_class!(Clipboard);

impl Element for Clipboard {
    fn port_count(&self) -> &'static str {
        "2/2"
    }

    fn flow_code(&self) -> &'static str {
        "#/#"
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut ranges = Vec::new();
        let mut errors = Errors::new();
        for (i, arg) in split_args(conf).iter().enumerate() {
            let slash = arg.find('/').filter(|&s| s > 0 && s + 1 < arg.len());
            let Some(slash) = slash else {
                errors.push(format!("range {i}: expected '/' between offset and length"));
                return Err(errors);
            };
            let mut args = Args::from_vec(vec![arg[..slash].into(), arg[slash + 1..].into()]);
            let off: u32 = args.read_mp("OFFSET");
            let len: u32 = args.read_mp("LENGTH");
            if let Err(e) = args.complete() {
                for m in e {
                    errors.push(m);
                }
                errors.push(format!("range {i}: invalid offset or length"));
                return Err(errors);
            }
            ranges.push((off as usize, len as usize));
        }
        let total: usize = ranges.iter().map(|r| r.1).sum();
        self.min_len = ranges.iter().map(|r| r.0 + r.1).max().unwrap_or(0);
        self.ranges = ranges;
        self.clipboard = vec![0; total];
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, ctx: &mut Ctx) {
        self.process(port, &mut batch);
        ctx.emit_batch(port, batch);
    }

    fn pull(&mut self, port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        let mut batch = ctx.pull(port, max)?;
        self.process(port, &mut batch);
        Some(batch)
    }
}
