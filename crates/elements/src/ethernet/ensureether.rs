//! # EnsureEther
//!
//! Makes sure IP packets carry an Ethernet header.
//!
//! ## Synopsis
//! `EnsureEther([ETHERTYPE, SRC, DST])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects packets with their network header set (IPv4 or IPv6, as after
//! CheckIPHeader or MarkIPHeader). A packet whose network header comes
//! right after an Ethernet header of type IPv4 or IPv6 passes unchanged. A
//! packet starting at its network header whose stripped Ethernet header
//! (of type IPv4 or IPv6) still precedes it gets that header back.
//! Otherwise everything before the network header is removed and a new
//! header is prepended: destination DST, source SRC, type ETHERTYPE.
//! Packets without a network header, or whose network header lies before
//! their data, pass unchanged.
//!
//! Only bytes that belonged to the packet count as a stripped header
//! (Click also looks at whatever stale bytes the headroom holds).
//!
//! ## Keywords
//! - **ETHERTYPE** (integer at most 0xFFFF): the new header's type.
//!   Default 0x0800.
//! - **SRC** (Ethernet address): default 01-01-01-01-01-01.
//! - **DST** (Ethernet address): default 02-02-02-02-02-02.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! FromHost(fake0) -> MarkIPHeader(14) -> EnsureEther -> ToDevice(eth0);
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::wire::ether::{EtherAddr, EtherFrame, ETHERTYPE_IP, ETHERTYPE_IP6, HEADER_LEN};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use crate::ip::address::parse_ether_arg;

pub struct EnsureEther {
    ethertype: u16,
    src: EtherAddr,
    dst: EtherAddr,
}

impl Default for EnsureEther {
    fn default() -> Self {
        EnsureEther {
            ethertype: ETHERTYPE_IP,
            src: EtherAddr([1; 6]),
            dst: EtherAddr([2; 6]),
        }
    }
}

fn is_ip_type(header: &[u8]) -> bool {
    EtherFrame::new_checked(header)
        .is_ok_and(|f| matches!(f.ethertype(), ETHERTYPE_IP | ETHERTYPE_IP6))
}

impl SimpleAction for EnsureEther {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let Some(off) = p.network_offset() else {
            return Some(p);
        };
        if off < 0 {
            return Some(p);
        }
        if off as usize == HEADER_LEN && is_ip_type(p.data()) {
            return Some(p);
        }
        if off == 0
            && p.bytes_before_network_header(HEADER_LEN)
                .is_some_and(is_ip_type)
        {
            p.unstrip(HEADER_LEN);
            return Some(p);
        }
        p.pull(off as usize);
        let mut f = EtherFrame::new_checked(p.push(HEADER_LEN)?).ok()?;
        f.set_dst(self.dst);
        f.set_src(self.src);
        f.set_ethertype(self.ethertype);
        Some(p)
    }
}

rclick_core::element_class!(EnsureEther);

impl Element for EnsureEther {
    rclick_core::element_kind!(action);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let etht = args.read_p_with("ETHERTYPE", parse_u32).unwrap_or(0x0800);
        let src = args.read_p_with("SRC", |s| parse_ether_arg(s, ictx));
        let dst = args.read_p_with("DST", |s| parse_ether_arg(s, ictx));
        args.complete()?;
        if etht > 0xffff {
            return Err("argument 1 (Ethernet encapsulation type) must be <= 0xFFFF".into());
        }
        let d = EnsureEther::default();
        *self = EnsureEther {
            ethertype: etht as u16,
            src: src.unwrap_or(d.src),
            dst: dst.unwrap_or(d.dst),
        };
        Ok(())
    }
}
