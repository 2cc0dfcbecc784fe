//! # StoreEtherAddress
//!
//! Stores an Ethernet address into packets.
//!
//! ## Synopsis
//! `StoreEtherAddress(ADDR, OFFSET)`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for
//! packets too short. Processing `a/ah`.
//!
//! ## Description
//! Writes ADDR into each packet at byte OFFSET. OFFSET may be `src` (6) or
//! `dst` (0), the fields of an Ethernet header at the start of the packet.
//! Packets too short to hold the address go to output 1, or are dropped if
//! it is absent.
//!
//! ## Keywords
//! - **ADDR** (Ethernet address, or AddressInfo name).
//! - **OFFSET** (unsigned, `src` or `dst`).
//!
//! ## Handlers
//! - `addr` (read/write): the address ADDR (an address or an AddressInfo
//!   name). Writing it does not change the configuration `config` shows.
//!
//! ## Example
//! ```click
//! ... -> StoreEtherAddress(00:0a:95:9d:68:16, src) -> ...;
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::Filter;
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::{ether_handler_value, parse_ether_arg};

#[derive(Default)]
pub struct StoreEtherAddress {
    addr: [u8; 6],
    offset: usize,
}

fn parse_offset(s: &str) -> Result<usize, String> {
    match s.to_ascii_lowercase().as_str() {
        "src" => Ok(6),
        "dst" => Ok(0),
        // 32 bits, so that OFFSET + 6 cannot overflow.
        _ => parse_u32(s)
            .map(|v| v as usize)
            .map_err(|_| "expected byte offset, 'src' or 'dst'".to_string()),
    }
}

// OFFSET is any byte offset (`dst` and `src` only name the Ethernet
// ones), so the address is stored by offset rather than through a view.
impl Filter for StoreEtherAddress {
    #[inline]
    fn filter(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        if p.len() < self.offset + 6 {
            return Err(p);
        }
        let o = self.offset;
        p.writable()[o..o + 6].copy_from_slice(&self.addr);
        Ok(p)
    }
}

const HANDLERS: &[Handler<StoreEtherAddress>] = &[Handler::read_write(
    "addr",
    |e, _| EtherAddr(e.addr).to_string(),
    |e, v, ctx| {
        e.addr = ether_handler_value(v, ctx)?.0;
        Ok(())
    },
)];

rclick_core::element_class!(StoreEtherAddress);

impl Element for StoreEtherAddress {
    rclick_core::filter_ports!();
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.addr = args.read_mp_with("ADDR", |s| parse_ether_arg(s, ictx)).0;
        self.offset = args.read_mp_with("OFFSET", parse_offset);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter);
}
