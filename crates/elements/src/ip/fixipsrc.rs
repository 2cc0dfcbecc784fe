//! # FixIPSrc
//!
//! Sets the IP source address of packets marked with the fix-IP-source
//! annotation.
//!
//! ## Synopsis
//! `FixIPSrc(IPADDR)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set. If a packet's
//! fix-IP-source annotation is set (ICMPError sets it on the errors it
//! generates), FixIPSrc clears the annotation, sets the IP source address
//! to IPADDR (the address of the interface the packet leaves by, as RFC
//! 1812 section 4.3.2.4 asks), and recomputes the header checksum. Other
//! packets pass unchanged.
//!
//! ## Keywords
//! - **IPADDR** (IP address, or AddressInfo name): the source to set.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> FixIPSrc(18.26.4.24) -> DecIPTTL -> ...;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::ipcommon::ip_hdr_mut;

pub struct FixIPSrc {
    addr: Ipv4Addr,
}

impl Default for FixIPSrc {
    fn default() -> Self {
        FixIPSrc {
            addr: Ipv4Addr::UNSPECIFIED,
        }
    }
}

impl SimpleAction for FixIPSrc {
    /// Most packets lack the annotation: one byte is looked at.
    #[inline(always)]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        self.fix_if_asked(&mut p);
        Some(p)
    }
}

impl FixIPSrc {
    /// Most packets lack the annotation: one byte is looked at.
    #[inline(always)]
    fn fix_if_asked(&self, p: &mut Packet) {
        if p.anno()[anno::FIX_IP_SRC] != 0 {
            self.fix(p);
        }
    }

    /// A packet with the Fix IP Source annotation set.
    #[inline(never)]
    fn fix(&self, p: &mut Packet) {
        if p.fix_ip_src_anno() && p.network_offset().is_some() {
            p.set_fix_ip_src_anno(false);
            if let Some(mut ip) = ip_hdr_mut(p) {
                ip.set_src(self.addr);
                ip.fill_checksum();
            }
        }
    }
}

rclick_core::element_class!(FixIPSrc);

impl Element for FixIPSrc {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.addr = args.read_mp_with("IPADDR", |s| parse_ipv4_arg(s, ictx));
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action, own_chain);

    // The action kind's push, with each packet fixed where it lies
    // (nothing is ever dropped) instead of moved out and back.
    // A batch of one is looked at without the loop's set-up.
    fn push_in_chain(&mut self, batch: &mut Batch, _ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            self.fix_if_asked(p);
            return true;
        }
        for p in batch.packets_mut() {
            self.fix_if_asked(p);
        }
        true
    }
}
