//! # GetIPAddress
//!
//! Sets the destination IP address annotation from packet data.
//!
//! ## Synopsis
//! `GetIPAddress(OFFSET [, ANNO])`
//!
//! `GetIPAddress(IP src|dst [, ANNO])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Copies 4 bytes starting OFFSET bytes into the packet into the
//! destination IP address annotation (or the 4-byte annotation ANNO). With
//! `IP src` or `IP dst`, copies the source or destination address of the IP
//! header at the network header instead. In the IP router,
//! `GetIPAddress(16)` follows CheckIPHeader so that routing uses the IP
//! destination. Packets too short to hold the address pass unchanged.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where the address starts.
//! - **ANNO** (annotation): where to store it. Default DST_IP.
//! - **IP** (`src` or `dst`): read from the IP header instead of OFFSET.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> GetIPAddress(16) -> LookupIPRoute(...);
//! ```

use rclick_core::conf::{parse_word, Args};
use rclick_core::packet::anno;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::ipcommon::{ip_hdr, parse_anno4, parse_byte_offset, IpField};

pub struct GetIPAddress {
    field: IpField,
    anno: usize,
}

impl Default for GetIPAddress {
    fn default() -> Self {
        GetIPAddress {
            field: IpField::Offset(16),
            anno: anno::DST_IP,
        }
    }
}

impl SimpleAction for GetIPAddress {
    #[inline(always)]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        self.annotate(&mut p);
        Some(p)
    }
}

impl GetIPAddress {
    /// Sets the annotation of `p` from its field (when the packet has it).
    #[inline(always)]
    fn annotate(&self, p: &mut Packet) {
        let addr: Option<[u8; 4]> = match self.field {
            IpField::Offset(o) => p
                .data()
                .get(o..)
                .and_then(|b| b.first_chunk::<4>())
                .copied(),
            IpField::Src => ip_hdr(p).map(|ip| ip.src().octets()),
            IpField::Dst => ip_hdr(p).map(|ip| ip.dst().octets()),
        };
        // Written straight into the annotation area (the offset was
        // checked when configured), one 4-byte store.
        if let (Some(a), Some(dst)) = (
            addr,
            p.anno_mut()
                .get_mut(self.anno..)
                .and_then(|b| b.first_chunk_mut::<4>()),
        ) {
            *dst = a;
        }
    }
}

rclick_core::element_class!(GetIPAddress);

impl Element for GetIPAddress {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let offset = args.read_p_with("OFFSET", parse_byte_offset);
        let anno = args.read_p_with("ANNO", parse_anno4);
        let ip = args.read_with("IP", parse_word);
        args.complete()?;
        self.field = match (offset, ip.as_deref()) {
            (Some(o), None) => IpField::Offset(o),
            (None, Some("src")) => IpField::Src,
            (None, Some("dst")) => IpField::Dst,
            (None, Some(_)) => return Err("bad IP".into()),
            _ => return Err("set one of OFFSET, IP".into()),
        };
        self.anno = anno.unwrap_or(anno::DST_IP);
        Ok(())
    }

    rclick_core::element_kind!(action, own_chain);

    // The action kind's push, with each packet annotated where it lies
    // (nothing is ever dropped) instead of moved out and back.
    // A batch of one is annotated without the loop's set-up.
    fn push_in_chain(&mut self, batch: &mut Batch, _ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            self.annotate(p);
            return true;
        }
        for p in batch.packets_mut() {
            self.annotate(p);
        }
        true
    }
}
