//! No heap allocation per packet on real devices either: a forwarder
//! between two veth links, on AF_PACKET and on AF_XDP, carries a flood of
//! 10,000 packets after a warm-up. The only allocations allowed on the
//! router thread are the packet pool growing to a new high-water mark of
//! packets in flight (a burst deeper than any in the warm-up; seen: 0-3
//! buffers); a per-packet allocation would show up thousands of times.

mod common;

use common::netns::*;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// The router thread's allocation count so far.
fn router_allocations(r: &Running) -> u64 {
    r.on_router_thread(|| allocations().to_string())
        .parse()
        .expect("a count")
}

fn flood_allocations(method: &str) -> (u64, u64) {
    let (h1, h2, rt) = (Netns::new("h1"), Netns::new("h2"), Netns::new("rt"));
    for ns in [&h1, &h2, &rt] {
        ns.disable_ipv6();
    }
    let t = tag();
    let (a1, r1, a2, r2) = (
        format!("a1{t}"),
        format!("r1{t}"),
        format!("a2{t}"),
        format!("r2{t}"),
    );
    veth(&h1, &a1, Some("10.79.0.1/24"), &rt, &r1);
    veth(&h2, &a2, Some("10.79.0.2/24"), &rt, &r2);
    let k = format!(", METHOD {method}");
    let r = Running::start(
        &rt,
        &format!(
            "fd1 :: FromDevice({r1}{k}) -> Queue(1000) -> td2 :: ToDevice({r2}{k});
             fd2 :: FromDevice({r2}{k}) -> Queue(1000) -> td1 :: ToDevice({r1}{k});"
        ),
    );
    let flood = |n: &str| {
        let (ok, out) = h1.run(30, &["ping", "-f", "-c", n, "-W", "1", "10.79.0.2"]);
        assert!(ok, "ping flood: {out}");
        assert_eq!(ping_loss(&out), Some(0.0), "{out}");
    };
    flood("1000");
    // Reading the counter allocates its answer (after reading it): one
    // read's cost is taken off the difference of two reads.
    let a = router_allocations(&r);
    let per_read = router_allocations(&r) - a;
    let packets_before = r.read_u64("fd1.count") + r.read_u64("fd2.count");
    let before = router_allocations(&r);
    flood("5000");
    let after = router_allocations(&r);
    let packets = r.read_u64("fd1.count") + r.read_u64("fd2.count") - packets_before;
    let during = after - before - per_read;
    let chatter = r.finish();
    assert!(
        !chatter.iter().any(|c| c.contains("unavailable")),
        "{chatter:?}"
    );
    (during, packets)
}

#[test]
fn forwarding_between_devices_allocates_nothing_per_packet() {
    if let Some(why) = namespace_skip_reason() {
        eprintln!("SKIP: {why}");
        return;
    }
    if !run_t(5, &["ping", "-V"]).0 {
        eprintln!("SKIP: ping not installed (Debian package iputils-ping)");
        return;
    }
    for method in ["LINUX", "XDP"] {
        let (allocs, packets) = flood_allocations(method);
        assert!(packets >= 10_000, "{method}: only {packets} packets");
        eprintln!("{method}: {allocs} allocations for {packets} packets");
        assert!(
            allocs <= 32,
            "{method}: {allocs} allocations for {packets} packets"
        );
    }
}
