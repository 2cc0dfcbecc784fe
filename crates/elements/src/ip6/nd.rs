//! Neighbour discovery messages (RFC 4861) for IP6NDSolicitor and
//! IP6NDAdvertiser: validation of received solicitations and
//! advertisements (section 7.1) and the frames both elements send.

use std::net::Ipv6Addr;

use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ether::{ETHERTYPE_IP6, HEADER_LEN as ETHER_LEN};
use rclick_core::wire::icmpv6::{
    multicast_ether, solicited_node, ND_NA_FLAG_SOLICITED, ND_NEIGHBOR_ADVERT, ND_NEIGHBOR_SOLICIT,
};
use rclick_core::wire::ipv6::{HEADER_LEN as IP6_LEN, PROTO_ICMPV6};
use rclick_core::wire::{
    EtherAddr, EtherFrame, EthernetRepr, Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr,
};
use rclick_core::Packet;

/// Length of a solicitation or advertisement frame with one link-layer
/// address option: Ethernet, IPv6, 24 bytes of message, 8 of option.
pub const ND_FRAME_LEN: usize = ETHER_LEN + IP6_LEN + 32;

/// A received, valid neighbour solicitation or advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdMessage {
    /// Ethernet source.
    pub eth_src: EtherAddr,
    /// IPv6 source.
    pub src: Ipv6Addr,
    /// IPv6 destination.
    pub dst: Ipv6Addr,
    /// ND_NEIGHBOR_SOLICIT or ND_NEIGHBOR_ADVERT.
    pub msg_type: u8,
    /// Advertisement flags (0 for a solicitation).
    pub flags: u8,
    /// The target address.
    pub target: Ipv6Addr,
    /// The source (solicitation) or target (advertisement) link-layer
    /// address option.
    pub lladdr: Option<EtherAddr>,
}

/// Why a frame is not a valid neighbour solicitation or advertisement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdError {
    /// Not an Ethernet/IPv6/ICMPv6 solicitation or advertisement at all.
    NotNd,
    /// A solicitation or advertisement that fails RFC 4861's checks
    /// (hop limit, checksum, code, length, options, addresses).
    Invalid,
}

/// Reads an Ethernet frame holding a neighbour solicitation or
/// advertisement and checks it as RFC 4861 section 7.1 asks: hop limit
/// 255, ICMPv6 checksum, code 0, at least 24 bytes, options of nonzero
/// length, a target that is not multicast, a source that is not multicast
/// (RFC 4291 section 2.7); a solicitation from `::` must
/// go to a solicited-node address without a source link-layer option; an
/// advertisement to a multicast address must not have the solicited flag.
pub fn parse_nd(frame: &[u8]) -> Result<NdMessage, NdError> {
    let eth = EtherFrame::new_checked(frame).map_err(|_| NdError::NotNd)?;
    if eth.ethertype() != ETHERTYPE_IP6 {
        return Err(NdError::NotNd);
    }
    let h = Ipv6Header::new_checked(eth.payload()).map_err(|_| NdError::NotNd)?;
    if h.next_header() != PROTO_ICMPV6 {
        return Err(NdError::NotNd);
    }
    let t = h.payload().first().copied();
    if t != Some(ND_NEIGHBOR_SOLICIT) && t != Some(ND_NEIGHBOR_ADVERT) {
        return Err(NdError::NotNd);
    }
    let plen = h.payload_len() as usize;
    let icmp_bytes = h.payload();
    if icmp_bytes.len() != plen || h.hop_limit() != 255 {
        return Err(NdError::Invalid);
    }
    let icmp = Icmpv6Header::new_checked(icmp_bytes).map_err(|_| NdError::Invalid)?;
    let (src, dst) = (h.src(), h.dst());
    // A multicast source is never valid (RFC 4291 section 2.7); answering
    // one would send an advertisement with S set to a multicast address,
    // which RFC 4861 section 7.1.2 makes invalid in turn.
    if src.is_multicast() || !icmp.verify_checksum(src, dst) {
        return Err(NdError::Invalid);
    }
    let repr = Icmpv6Repr::parse(&icmp).map_err(|_| NdError::Invalid)?;
    let msg = match repr {
        Icmpv6Repr::NeighborSolicit { target, source_ll } => {
            if src.is_unspecified() && (dst != solicited_node(target) || source_ll.is_some()) {
                return Err(NdError::Invalid);
            }
            NdMessage {
                eth_src: eth.src(),
                src,
                dst,
                msg_type: ND_NEIGHBOR_SOLICIT,
                flags: 0,
                target,
                lladdr: source_ll,
            }
        }
        Icmpv6Repr::NeighborAdvert {
            flags,
            target,
            target_ll,
        } => {
            if dst.is_multicast() && flags & ND_NA_FLAG_SOLICITED != 0 {
                return Err(NdError::Invalid);
            }
            NdMessage {
                eth_src: eth.src(),
                src,
                dst,
                msg_type: ND_NEIGHBOR_ADVERT,
                flags,
                target,
                lladdr: target_ll,
            }
        }
        _ => return Err(NdError::NotNd),
    };
    if msg.target.is_multicast() {
        return Err(NdError::Invalid);
    }
    Ok(msg)
}

/// Builds an Ethernet frame carrying `icmp` from `src` to `dst`, hop
/// limit 255, with the checksum filled in.
fn nd_frame(
    eth_src: EtherAddr,
    eth_dst: EtherAddr,
    src: Ipv6Addr,
    dst: Ipv6Addr,
    icmp: &Icmpv6Repr,
) -> Packet {
    let ilen = icmp.buffer_len();
    let mut b = [0u8; ND_FRAME_LEN];
    let total = ETHER_LEN + IP6_LEN + ilen;
    let (eh, rest) = b[..total].split_at_mut(ETHER_LEN);
    EthernetRepr {
        src: eth_src,
        dst: eth_dst,
        ethertype: ETHERTYPE_IP6,
    }
    .emit(&mut EtherFrame::new_unchecked(eh));
    let (ih, cb) = rest.split_at_mut(IP6_LEN);
    Ipv6Repr {
        src,
        dst,
        next_header: PROTO_ICMPV6,
        payload_len: ilen,
        hop_limit: 255,
        ..Ipv6Repr::default()
    }
    .emit(&mut Ipv6Header::new_unchecked(ih));
    let mut ch = Icmpv6Header::new_unchecked(cb);
    icmp.emit(&mut ch);
    ch.fill_checksum(src, dst);
    let mut q = Packet::with_room(DEFAULT_HEADROOM - ETHER_LEN, &b[..total], 0);
    q.set_network_header(ETHER_LEN, IP6_LEN);
    q
}

/// A neighbour solicitation for `target` from `my_ip`/`my_eth` with a
/// source link-layer option: multicast to the target's solicited-node
/// address, or, with `unicast`, to that Ethernet address and the target
/// itself (a reachability probe).
pub fn solicitation(
    my_eth: EtherAddr,
    my_ip: Ipv6Addr,
    target: Ipv6Addr,
    unicast: Option<EtherAddr>,
) -> Packet {
    let (eth_dst, dst) = match unicast {
        Some(e) => (e, target),
        None => {
            let sn = solicited_node(target);
            (multicast_ether(sn), sn)
        }
    };
    let icmp = Icmpv6Repr::NeighborSolicit {
        target,
        source_ll: Some(my_eth),
    };
    nd_frame(my_eth, eth_dst, my_ip, dst, &icmp)
}

/// A neighbour advertisement for `target` at `tll`, with `flags`.
pub fn advertisement(
    eth_src: EtherAddr,
    eth_dst: EtherAddr,
    src: Ipv6Addr,
    dst: Ipv6Addr,
    flags: u8,
    target: Ipv6Addr,
    tll: EtherAddr,
) -> Packet {
    let icmp = Icmpv6Repr::NeighborAdvert {
        flags,
        target,
        target_ll: Some(tll),
    };
    nd_frame(eth_src, eth_dst, src, dst, &icmp)
}

/// A received, valid router solicitation: its IPv6 source and source
/// link-layer address option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterSolicitation {
    /// IPv6 source (`::` before the host has an address).
    pub src: Ipv6Addr,
    /// Source link-layer address option.
    pub lladdr: Option<EtherAddr>,
}

/// Reads an Ethernet frame holding a router solicitation and checks it as
/// RFC 4861 section 6.1.1 asks: hop limit 255, checksum, code 0, at least
/// 8 bytes, options of nonzero length, and no source link-layer option
/// from `::`.
pub fn parse_rs(frame: &[u8]) -> Result<RouterSolicitation, NdError> {
    use rclick_core::wire::icmpv6::ND_ROUTER_SOLICIT;
    let eth = EtherFrame::new_checked(frame).map_err(|_| NdError::NotNd)?;
    if eth.ethertype() != ETHERTYPE_IP6 {
        return Err(NdError::NotNd);
    }
    let h = Ipv6Header::new_checked(eth.payload()).map_err(|_| NdError::NotNd)?;
    if h.next_header() != PROTO_ICMPV6 || h.payload().first() != Some(&ND_ROUTER_SOLICIT) {
        return Err(NdError::NotNd);
    }
    let icmp_bytes = h.payload();
    if icmp_bytes.len() != h.payload_len() as usize || h.hop_limit() != 255 {
        return Err(NdError::Invalid);
    }
    let icmp = Icmpv6Header::new_checked(icmp_bytes).map_err(|_| NdError::Invalid)?;
    if !icmp.verify_checksum(h.src(), h.dst()) {
        return Err(NdError::Invalid);
    }
    match Icmpv6Repr::parse(&icmp) {
        Ok(Icmpv6Repr::RouterSolicit { source_ll }) => {
            if h.src().is_unspecified() && source_ll.is_some() {
                return Err(NdError::Invalid);
            }
            Ok(RouterSolicitation {
                src: h.src(),
                lladdr: source_ll,
            })
        }
        _ => Err(NdError::Invalid),
    }
}
