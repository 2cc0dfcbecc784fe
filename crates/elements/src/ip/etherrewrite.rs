//! # EtherRewrite
//!
//! Rewrites the source and destination of Ethernet frames.
//!
//! ## Synopsis
//! `EtherRewrite(SRC, DST)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Overwrites each frame's Ethernet source with SRC and destination with
//! DST, leaving the type and payload alone. Packets shorter than an
//! Ethernet header are dropped.
//!
//! ## Keywords
//! - **SRC**, **DST** (Ethernet address, or AddressInfo name).
//!
//! ## Handlers
//! - `src`, `dst` (read/write): the addresses.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> EtherRewrite(00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth1);
//! ```

use rclick_core::conf::{parse_ether, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::parse_ether_arg;

#[derive(Default)]
pub struct EtherRewrite {
    /// dst then src, as they appear in the header.
    addrs: [u8; 12],
}

impl SimpleAction for EtherRewrite {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if p.len() < 14 {
            return None;
        }
        p.writable()[..12].copy_from_slice(&self.addrs);
        Some(p)
    }
}

rclick_core::element_class!(EtherRewrite);

impl Element for EtherRewrite {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src = args.read_mp_with("SRC", |s| parse_ether_arg(s, ictx));
        let dst = args.read_mp_with("DST", |s| parse_ether_arg(s, ictx));
        args.complete()?;
        self.addrs[..6].copy_from_slice(&dst.0);
        self.addrs[6..].copy_from_slice(&src.0);
        Ok(())
    }

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read_write("src"),
            HandlerSpec::read_write("dst"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        let mut a = [0u8; 6];
        match name {
            "src" => a.copy_from_slice(&self.addrs[6..]),
            "dst" => a.copy_from_slice(&self.addrs[..6]),
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(EtherAddr(a).to_string())
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let a = parse_ether(value.trim())?.0;
        match name {
            "src" => self.addrs[6..].copy_from_slice(&a),
            "dst" => self.addrs[..6].copy_from_slice(&a),
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(())
    }
}
