//! # EtherEncap
//!
//! Encapsulates packets in an Ethernet header.
//!
//! ## Synopsis
//! `EtherEncap(ETHERTYPE, SRC, DST)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Prepends a 14-byte Ethernet header with destination DST, source SRC and
//! type ETHERTYPE (e.g. 0x0800 for IP). Uses headroom when there is some,
//! else reallocates.
//!
//! ## Keywords
//! - **ETHERTYPE** (16-bit integer, usually hex `0x0800`).
//! - **SRC**, **DST** (Ethernet address, or AddressInfo name).
//!
//! ## Handlers
//! - `ethertype`, `src`, `dst` (read/write): the header fields.
//!
//! ## Example
//! ```click
//! ... -> EtherEncap(0x0800, 00:0a:95:9d:68:16, 00:0a:95:9d:68:17) -> ToDevice(eth0);
//! ```

use rclick_core::conf::{parse_ether, parse_u16, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::parse_ether_arg;

#[derive(Default)]
pub struct EtherEncap {
    /// The header to prepend: dst, src, type.
    header: [u8; 14],
}

impl SimpleAction for EtherEncap {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        p.push(14).copy_from_slice(&self.header);
        Some(p)
    }
}

rclick_core::element_class!(EtherEncap);

impl Element for EtherEncap {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let ty: u16 = args.read_mp("ETHERTYPE");
        let src = args.read_mp_with("SRC", |s| parse_ether_arg(s, ictx));
        let dst = args.read_mp_with("DST", |s| parse_ether_arg(s, ictx));
        args.complete()?;
        self.header[0..6].copy_from_slice(&dst.0);
        self.header[6..12].copy_from_slice(&src.0);
        self.header[12..14].copy_from_slice(&ty.to_be_bytes());
        Ok(())
    }

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read_write("ethertype"),
            HandlerSpec::read_write("src"),
            HandlerSpec::read_write("dst"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        let h = &self.header;
        let mac = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 6];
            a.copy_from_slice(&h[r]);
            EtherAddr(a).to_string()
        };
        match name {
            "ethertype" => Ok(u16::from_be_bytes([h[12], h[13]]).to_string()),
            "src" => Ok(mac(6..12)),
            "dst" => Ok(mac(0..6)),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "ethertype" => {
                let t = parse_u16(v)?;
                self.header[12..14].copy_from_slice(&t.to_be_bytes());
            }
            "src" => self.header[6..12].copy_from_slice(&parse_ether(v)?.0),
            "dst" => self.header[0..6].copy_from_slice(&parse_ether(v)?.0),
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(())
    }
}
