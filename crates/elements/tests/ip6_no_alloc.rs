//! The IPv6 forwarding path allocates nothing per packet in steady state:
//! CheckIP6Header, IP6Classifier, GetIP6Address, LookupIP6Route,
//! DecIP6HLIM and IP6NDSolicitor (its neighbour resolved by an
//! advertisement first), after a warm-up, forward many packets with zero
//! heap allocations.

use std::net::Ipv6Addr;

use rclick_core::wire::{EtherAddr, Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr};
use rclick_core::{Packet, StopReason};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// An Ethernet/IPv6/UDP frame to 2001:db8:1::5 as a Click `\<hex>` string.
fn frame() -> String {
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x86, 0xdd];
    let ip = Ipv6Repr {
        src: "2001:db8::2".parse().unwrap(),
        dst: "2001:db8:1::5".parse().unwrap(),
        next_header: 17,
        payload_len: 12,
        hop_limit: 64,
        ..Ipv6Repr::default()
    };
    let mut h = [0u8; 40];
    ip.emit(&mut Ipv6Header::new_unchecked(&mut h[..]));
    f.extend_from_slice(&h);
    f.extend_from_slice(&[0x04, 0x00, 0x00, 0x35, 0x00, 0x0c, 0, 0, 1, 2, 3, 4]);
    let hex: String = f.iter().map(|b| format!("{b:02x}")).collect();
    format!("\\<{hex}>")
}

/// A solicited advertisement for fe80::1 at 02:00:00:00:00:09, to
/// fe80::a.
fn advertisement() -> Vec<u8> {
    let (src, dst): (Ipv6Addr, Ipv6Addr) = ("fe80::1".parse().unwrap(), "fe80::a".parse().unwrap());
    let r = Icmpv6Repr::NeighborAdvert {
        flags: 0x60,
        target: src,
        target_ll: Some(EtherAddr([2, 0, 0, 0, 0, 9])),
    };
    let mut m = vec![0u8; r.buffer_len()];
    let mut ih = Icmpv6Header::new_unchecked(&mut m[..]);
    r.emit(&mut ih);
    ih.fill_checksum(src, dst);
    let ip = Ipv6Repr {
        src,
        dst,
        next_header: 58,
        payload_len: m.len(),
        hop_limit: 255,
        ..Ipv6Repr::default()
    };
    let mut f = vec![2, 0, 0, 0, 0, 0xa, 2, 0, 0, 0, 0, 9, 0x86, 0xdd];
    let mut h = [0u8; 40];
    ip.emit(&mut Ipv6Header::new_unchecked(&mut h[..]));
    f.extend_from_slice(&h);
    f.extend_from_slice(&m);
    f
}

#[test]
fn no_allocation_on_the_ipv6_forwarding_path() {
    let frame = frame();
    let text = format!(
        "src :: InfiniteSource(DATA {frame}, BURST 32)
           -> Strip(14) -> CheckIP6Header
           -> cl :: IP6Classifier(udp and dst net 2001:db8::/32, -)
           -> GetIP6Address(24)
           -> rt :: LookupIP6Route(2001:db8:1::/48 fe80::1 0, ::/0 fe80::2 1)
           -> dh :: DecIP6HLIM -> nds :: IP6NDSolicitor(fe80::a, 02:00:00:00:00:0a)
           -> c :: Counter -> Discard;
         Idle -> [1]nds; nds[1] -> Discard;
         cl[1] -> Discard; rt[1] -> Discard; dh[1] -> Discard;"
    );
    let mut r = rclick_elements::testing::from_config(&text);
    // The first packets make the neighbour INCOMPLETE; the advertisement
    // resolves it.
    assert_eq!(r.run_limited(1), StopReason::Limit);
    let nds = r.find_element("nds").unwrap();
    r.inject_packet(nds, 1, Packet::from_slice(&advertisement()));
    assert_eq!(r.run_limited(2_000), StopReason::Limit);
    let before: u64 = r.read_handler("c.count", None).unwrap().parse().unwrap();
    assert!(
        before > 0,
        "nothing reached the counter: {} {} {}",
        r.read_handler("rt.drops", None).unwrap(),
        r.read_handler("nds.neighbors", None).unwrap(),
        r.read_handler("nds.stats", None).unwrap()
    );
    let a0 = allocations();
    assert_eq!(r.run_limited(4_000), StopReason::Limit);
    let a1 = allocations();
    let after: u64 = r.read_handler("c.count", None).unwrap().parse().unwrap();
    assert!(
        after - before > 50_000,
        "only {} packets forwarded",
        after - before
    );
    assert_eq!(
        a1 - a0,
        0,
        "{} allocations while forwarding {} packets",
        a1 - a0,
        after - before
    );
}
