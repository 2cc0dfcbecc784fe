//! # HostEtherFilter
//!
//! Classifies Ethernet frames by destination and drops those for other
//! hosts.
//!
//! ## Synopsis
//! `HostEtherFilter(ETHER [, DROP_OWN, DROP_OTHER, keywords OFFSET])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for
//! dropped frames. Processing `a/ah`.
//!
//! ## Description
//! Looks at the Ethernet header OFFSET bytes into each packet and sets the
//! packet-type annotation: HOST if the destination is ETHER, BROADCAST for
//! ff:ff:ff:ff:ff:ff, MULTICAST for other group addresses, OTHERHOST
//! otherwise. With DROP_OWN, frames whose source is ETHER (our own frames
//! looped back) go to output 1; with DROP_OTHER (default true), OTHERHOST
//! frames go to output 1. Output 1 drops when unconnected. Frames too short
//! for an Ethernet header also go to output 1.
//!
//! ## Keywords
//! - **ETHER** (Ethernet address, or AddressInfo name): this host.
//! - **DROP_OWN** (bool): drop frames sent by ETHER. Default false.
//! - **DROP_OTHER** (bool): drop frames for other hosts. Default true.
//! - **OFFSET** (unsigned): where the Ethernet header starts. Default 0.
//!
//! ## Handlers
//! - `ether` (read/write): the host's Ethernet address.
//! - `config` (read/write): writing it reconfigures the element live.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> HostEtherFilter(00:0a:95:9d:68:16) -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Filter;
use rclick_core::packet::PacketType;
use rclick_core::wire::{EtherAddr, EtherFrame};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::parse_ether_arg;

pub struct HostEtherFilter {
    addr: EtherAddr,
    drop_own: bool,
    drop_other: bool,
    offset: usize,
}

impl Default for HostEtherFilter {
    fn default() -> Self {
        HostEtherFilter {
            addr: EtherAddr::default(),
            drop_own: false,
            drop_other: true,
            offset: 0,
        }
    }
}

impl Filter for HostEtherFilter {
    #[inline]
    fn filter(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        let Some(e) = p
            .data()
            .get(self.offset..)
            .and_then(|b| EtherFrame::new_checked(b).ok())
        else {
            return Err(p);
        };
        let (dst, src) = (e.dst(), e.src());
        if self.drop_own && src == self.addr {
            return Err(p);
        }
        let t = if dst == self.addr {
            PacketType::Host
        } else if dst.is_broadcast() {
            PacketType::Broadcast
        } else if dst.is_group() {
            PacketType::Multicast
        } else {
            PacketType::OtherHost
        };
        p.set_packet_type_anno(t);
        if t == PacketType::OtherHost && self.drop_other {
            Err(p)
        } else {
            Ok(p)
        }
    }
}

rclick_core::element_class!(HostEtherFilter);

const HANDLERS: &[Handler<HostEtherFilter>] =
    &[Handler::data_rw("ether", |e| &e.addr, |e| &mut e.addr)];

impl Element for HostEtherFilter {
    // Writing `config` reconfigures it, as in Click.
    fn can_live_reconfigure(&self) -> bool {
        true
    }

    rclick_core::filter_ports!();
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.addr = args.read_mp_with("ETHER", |s| parse_ether_arg(s, ictx));
        self.drop_own = args.read_p_or("DROP_OWN", false);
        self.drop_other = args.read_p_or("DROP_OTHER", true);
        self.offset = args.read_or("OFFSET", 0);
        args.complete()?;
        Ok(())
    }

    rclick_core::element_kind!(filter);
}
