//! # Resize
//!
//! Adds or removes bytes at both ends of packets.
//!
//! ## Synopsis
//! `Resize([HEAD, TAIL])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Adds HEAD bytes in front of each packet and TAIL bytes at its end; a
//! negative count removes that many bytes instead (at most the whole
//! packet). Bytes added in front take what the headroom holds, so
//! `Resize(HEAD -2) -> Resize(HEAD 2)` restores the two bytes, as in Click;
//! headroom beyond what the packet has is added zeroed. Bytes added at the
//! end are zero (Click leaves them uninitialized).
//!
//! ## Keywords
//! - **HEAD** (integer): bytes to add in front (negative: remove).
//!   Default 0.
//! - **TAIL** (integer): bytes to add at the end (negative: remove).
//!   Default 0.
//!
//! ## Handlers
//! - `head`, `tail` (read/write): the HEAD and TAIL counts.
//!
//! ## Example
//! ```click
//! FromDump(t.pcap) -> Resize(-14, -4) -> ToDump(ip_only.pcap);
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

#[derive(Default)]
pub struct Resize {
    head: i32,
    tail: i32,
}

impl SimpleAction for Resize {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if self.head > 0 {
            let want = self.head as usize;
            let reuse = want.min(p.headroom());
            p.unstrip(reuse);
            if want > reuse {
                p.push(want - reuse)?.fill(0);
            }
        } else if self.head < 0 {
            p.pull(self.head.unsigned_abs() as usize);
        }
        if self.tail > 0 {
            p.put(self.tail as usize)?.fill(0);
        } else if self.tail < 0 {
            p.take(self.tail.unsigned_abs() as usize);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<Resize>] = &[
    Handler::data_rw("head", |e| &e.head, |e| &mut e.head),
    Handler::data_rw("tail", |e| &e.tail, |e| &mut e.tail),
];

rclick_core::element_class!(Resize);

impl Element for Resize {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.head = args.read_p_or("HEAD", 0i32);
        self.tail = args.read_p_or("TAIL", 0i32);
        args.complete()?;
        Ok(())
    }
}
