//! The rewriters' `add_mapping` and `remove_mapping` write handlers (rclick
//! additions; what kohler/click#215 and #472 ask for): a mapping installed
//! from outside rewrites both directions with valid checksums, is pinned
//! (no expiry, no eviction, survives pattern writes), and once removed
//! stops rewriting.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::wire::{Ipv4Header, TcpHeader, UdpHeader};
use rclick_core::{Packet, Router, RouterOptions, Timestamp};
use rclick_elements::testing::{drain_queue as drain, from_config_with, read};

fn udp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, data: &[u8]) -> Vec<u8> {
    rclick_elements::testing::udp_ipv4(src, sport, dst, dport, data)
}

fn tcp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, flags: u8, data: &[u8]) -> Vec<u8> {
    rclick_elements::testing::tcp_ipv4(src, sport, dst, dport, flags, data)
}

fn marked(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    let hl = ((bytes[0] & 0x0f) as usize * 4).min(bytes.len());
    p.set_network_header(0, hl);
    p
}

/// `x` has two inputs (0: LAN, 1: WAN) and two outputs (0: toward the
/// WAN, 1: toward the LAN), each output to a queue; simulated time.
fn harness(decl: &str) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    from_config_with(&wired(decl), &opts)
}

/// The configuration of [`harness`] around the rewriter `decl`.
fn wired(decl: &str) -> String {
    format!(
        "x :: {decl}; Idle -> [0]x; Idle -> [1]x; x[0] -> wan :: Queue(1000) -> Discard; x[1] -> lan :: Queue(1000) -> Discard;"
    )
}

/// [`harness`] with hot swaps allowed (to `wired` configurations).
fn hotswap_harness(decl: &str) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    from_config_with(&wired(decl), &opts)
}

fn inject(r: &mut Router, port: usize, bytes: &[u8]) {
    let i = r.find_element("x").unwrap();
    r.inject_packet(i, port, marked(bytes));
}

fn write(r: &mut Router, h: &str, v: &str) -> Result<(), String> {
    r.write_handler(h, v)
        .map(|_| ())
        .map_err(|e| format!("{e:?}"))
}

fn advance(r: &mut Router, secs: i64) {
    let now = r.clock().now();
    r.clock()
        .advance_to(now + Timestamp::from_sec_nsec(secs, 0));
}

/// (src, sport, dst, dport) of a TCP or UDP packet, checking its checksums.
fn flow_of(p: &[u8]) -> ([u8; 4], u16, [u8; 4], u16) {
    let h = Ipv4Header::new_checked(p).unwrap();
    assert!(h.verify_checksum(), "bad IP checksum");
    let (s, d) = (h.src(), h.dst());
    let seg = &p[h.header_len()..];
    let ports = match h.protocol() {
        6 => {
            let t = TcpHeader::new_checked(seg).unwrap();
            assert!(t.verify_checksum(s, d), "bad TCP checksum");
            (t.src_port(), t.dst_port())
        }
        17 => {
            let u = UdpHeader::new_checked(seg).unwrap();
            assert!(u.verify_checksum(s, d), "bad UDP checksum");
            (u.src_port(), u.dst_port())
        }
        _ => panic!("not TCP or UDP"),
    };
    (s.octets(), ports.0, d.octets(), ports.1)
}

const LAN_B: [u8; 4] = [10, 0, 0, 5];
const CLIENT: [u8; 4] = [18, 26, 4, 44];
const PUB: [u8; 4] = [1, 0, 0, 1];
const NAPT: &str = "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop)";

#[test]
fn an_added_port_forward_rewrites_both_directions() {
    let mut r = harness(NAPT);
    // Before: the WAN client's SYN to the public port finds no mapping.
    inject(&mut r, 1, &tcp(CLIENT, 5000, PUB, 8080, 0x02, b""));
    assert!(drain(&mut r, "lan").is_empty());
    assert_eq!(read(&mut r, "x.drops"), "1");
    write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5000 1.0.0.1 8080 => 18.26.4.44 5000 10.0.0.5 80 1 0",
    )
    .unwrap();
    assert_eq!(read(&mut r, "x.size"), "1");
    // The retransmitted SYN now reaches B's port 80.
    inject(&mut r, 1, &tcp(CLIENT, 5000, PUB, 8080, 0x02, b""));
    let to_b = drain(&mut r, "lan");
    assert_eq!(to_b.len(), 1);
    assert_eq!(flow_of(&to_b[0]), (CLIENT, 5000, LAN_B, 80));
    // B's answer, arriving on the LAN input, goes back from the public
    // address and port, by the reply output.
    inject(&mut r, 0, &tcp(LAN_B, 80, CLIENT, 5000, 0x12, b""));
    let to_client = drain(&mut r, "wan");
    assert_eq!(to_client.len(), 1);
    assert_eq!(flow_of(&to_client[0]), (PUB, 8080, CLIENT, 5000));
    // Data both ways, still rewritten.
    inject(
        &mut r,
        1,
        &tcp(CLIENT, 5000, PUB, 8080, 0x18, b"GET / HTTP/1.0\r\n\r\n"),
    );
    inject(
        &mut r,
        0,
        &tcp(LAN_B, 80, CLIENT, 5000, 0x18, b"HTTP/1.0 200 OK\r\n"),
    );
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 5000, LAN_B, 80));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 8080, CLIENT, 5000));
    let table = read(&mut r, "x.tcp_table");
    assert!(
        table.contains(
            "(18.26.4.44, 5000, 1.0.0.1, 8080) => (18.26.4.44, 5000, 10.0.0.5, 80) [*1 0] pinned"
        ),
        "{table}"
    );
    assert!(
        table.contains(
            "(10.0.0.5, 80, 18.26.4.44, 5000) => (1.0.0.1, 8080, 18.26.4.44, 5000) [1 *0] pinned"
        ),
        "{table}"
    );
    // Only the spec-made count: added mappings are not input 0's.
    assert_eq!(read(&mut r, "x.nmappings"), "0");
}

#[test]
fn a_removed_mapping_stops_rewriting() {
    let mut r = harness(NAPT);
    write(
        &mut r,
        "x.add_mapping",
        "udp 18.26.4.44 53 1.0.0.1 5353 => 18.26.4.44 53 10.0.0.5 53",
    )
    .unwrap();
    // Default outputs: those of the pattern spec (0 forward, 1 reply), so
    // here the inbound flow leaves by 0, its replies by 1.
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 5353, b"x"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (CLIENT, 53, LAN_B, 53));
    inject(&mut r, 0, &udp(LAN_B, 53, CLIENT, 53, b"y"));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (PUB, 5353, CLIENT, 53));
    assert!(read(&mut r, "x.udp_table").contains("pinned"));
    // Removed by its reply flow: both directions go.
    write(&mut r, "x.remove_mapping", "udp 10.0.0.5 53 18.26.4.44 53").unwrap();
    assert_eq!(read(&mut r, "x.size"), "0");
    assert_eq!(read(&mut r, "x.udp_table"), "");
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 5353, b"x"));
    assert!(drain(&mut r, "wan").is_empty() && drain(&mut r, "lan").is_empty());
    assert_eq!(read(&mut r, "x.drops"), "1");
    // A second removal finds nothing.
    let e = write(&mut r, "x.remove_mapping", "udp 18.26.4.44 53 1.0.0.1 5353");
    assert!(e.is_err(), "{e:?}");
    // The TCP table is another map: a TCP removal of the UDP flow fails too.
    write(
        &mut r,
        "x.add_mapping",
        "udp 18.26.4.44 53 1.0.0.1 5353 => 18.26.4.44 53 10.0.0.5 53",
    )
    .unwrap();
    assert!(write(&mut r, "x.remove_mapping", "tcp 18.26.4.44 53 1.0.0.1 5353").is_err());
    write(&mut r, "x.remove_mapping", "udp 18.26.4.44 53 1.0.0.1 5353").unwrap();
}

#[test]
fn removing_a_dynamic_mapping_lets_the_pattern_make_a_new_one() {
    let mut r = harness(NAPT);
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 1024, CLIENT, 53));
    write(&mut r, "x.remove_mapping", "udp 10.0.0.5 40 18.26.4.44 53").unwrap();
    // The reply to the old public port is no longer mapped back.
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 1024, b"a"));
    assert!(drain(&mut r, "lan").is_empty());
    // The next outbound packet gets a new mapping (sequential: 1025).
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 1025, CLIENT, 53));
}

#[test]
fn added_mappings_are_pinned() {
    let mut r = harness(
        "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, MAPPING_CAPACITY 2, GUARANTEE 0, UDP_GUARANTEE 0, UDP_TIMEOUT 10, REAP_INTERVAL 1)",
    );
    write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5000 1.0.0.1 8080 => 18.26.4.44 5000 10.0.0.5 80 1 0",
    )
    .unwrap();
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    assert_eq!(read(&mut r, "x.size"), "2");
    // A third flow replaces the dynamic mapping, not the pinned one.
    inject(&mut r, 0, &udp(LAN_B, 41, CLIENT, 53, b"q"));
    assert_eq!(read(&mut r, "x.size"), "2");
    assert_eq!(read(&mut r, "x.tcp_table").lines().count(), 2);
    // Time passes far beyond every timeout, the reaper runs: the dynamic
    // mapping expires, the pinned one stays.
    advance(&mut r, 100_000);
    r.run_limited(200);
    assert_eq!(read(&mut r, "x.size"), "1");
    assert_eq!(read(&mut r, "x.udp_table"), "");
    // A pattern write removes the flows its input made, not added ones.
    write(&mut r, "x.pattern0", "pattern 1.0.0.2 1024-65535# - - 0 1").unwrap();
    assert_eq!(read(&mut r, "x.size"), "1");
    inject(&mut r, 1, &tcp(CLIENT, 5000, PUB, 8080, 0x02, b""));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 5000, LAN_B, 80));
    // With the table full of pinned mappings, one more is refused.
    write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5001 1.0.0.1 8081 => 18.26.4.44 5001 10.0.0.5 81 1 0",
    )
    .unwrap();
    let e = write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5002 1.0.0.1 8082 => 18.26.4.44 5002 10.0.0.5 82 1 0",
    );
    assert!(e.is_err(), "{e:?}");
    assert_eq!(read(&mut r, "x.size"), "2");
    // `clear` removes them all.
    write(&mut r, "x.clear", "").unwrap();
    assert_eq!(read(&mut r, "x.size"), "0");
}

#[test]
fn adding_over_an_existing_mapping_replaces_it() {
    let mut r = harness(NAPT);
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 1024, CLIENT, 53));
    // Pin the flow to another public port.
    write(
        &mut r,
        "x.add_mapping",
        "udp 10.0.0.5 40 18.26.4.44 53 => 1.0.0.1 2000 18.26.4.44 53 0 1",
    )
    .unwrap();
    assert_eq!(read(&mut r, "x.size"), "1");
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 2000, CLIENT, 53));
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 2000, b"a"));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 53, LAN_B, 40));
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 1024, b"a"));
    assert!(drain(&mut r, "lan").is_empty());
}

#[test]
fn bad_mapping_writes_are_refused() {
    let mut r = harness(NAPT);
    for bad in [
        "",
        "tcp 18.26.4.44 5000 1.0.0.1 8080",
        "tcp 18.26.4.44 5000 1.0.0.1 => 1.0.0.1 1 2.0.0.1 2",
        "icmp 18.26.4.44 5000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80",
        "tcp 18.26.4.44 5000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80 2 0",
        "tcp 18.26.4.44 5000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80 1",
        "tcp 18.26.4.44 70000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80",
        "tcp 18.26.4.x 5000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80",
    ] {
        assert!(write(&mut r, "x.add_mapping", bad).is_err(), "{bad:?}");
    }
    assert!(write(&mut r, "x.remove_mapping", "tcp 1.2.3.4 5").is_err());
    assert_eq!(read(&mut r, "x.size"), "0");
    // TCPRewriter takes only TCP; UDPRewriter has the handlers too.
    let mut t = harness("TCPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop)");
    assert!(write(
        &mut t,
        "x.add_mapping",
        "udp 1.1.1.1 1 2.2.2.2 2 => 1.1.1.1 1 3.3.3.3 3"
    )
    .is_err());
    write(
        &mut t,
        "x.add_mapping",
        "tcp 1.1.1.1 1 2.2.2.2 2 => 1.1.1.1 1 3.3.3.3 3",
    )
    .unwrap();
    assert!(read(&mut t, "x.table").contains("pinned"));
    let mut u = harness("UDPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop)");
    write(
        &mut u,
        "x.add_mapping",
        "udp 1.1.1.1 1 2.2.2.2 2 => 1.1.1.1 1 3.3.3.3 3",
    )
    .unwrap();
    inject(&mut u, 1, &udp([1, 1, 1, 1], 1, [2, 2, 2, 2], 2, b"z"));
    assert_eq!(
        flow_of(&drain(&mut u, "wan")[0]),
        ([1, 1, 1, 1], 1, [3, 3, 3, 3], 3)
    );
}

#[test]
fn a_dynamic_mapping_expires_as_a_spec_made_one() {
    let mut r = harness(
        "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, UDP_TIMEOUT 10, UDP_GUARANTEE 0, REAP_INTERVAL 1)",
    );
    write(
        &mut r,
        "x.add_mapping",
        "udp 18.26.4.44 53 1.0.0.1 5353 => 18.26.4.44 53 10.0.0.5 53 1 0 dynamic",
    )
    .unwrap();
    let table = read(&mut r, "x.udp_table");
    assert!(table.contains("[*1 0] i- exp10"), "{table}");
    // Traffic refreshes it (the reaper would run here in real time; its
    // expiry is what matters).
    for _ in 0..3 {
        advance(&mut r, 6);
        assert!(read(&mut r, "x.udp_table").contains("exp4"));
        inject(&mut r, 1, &udp(CLIENT, 53, PUB, 5353, b"x"));
        assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 53, LAN_B, 53));
        assert!(read(&mut r, "x.udp_table").contains("exp10"));
    }
    // ...and silence ends it.
    advance(&mut r, 11);
    r.run_limited(50);
    assert_eq!(read(&mut r, "x.size"), "0");
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 5353, b"x"));
    assert!(drain(&mut r, "lan").is_empty());
}

/// Lowering the capacity evicts dynamic mappings, never pinned ones (they
/// are "never evicted"; only `remove_mapping` and `clear` remove them).
#[test]
fn lowering_the_capacity_keeps_pinned_mappings() {
    let mut r = harness(NAPT);
    for i in 0..3u16 {
        write(
            &mut r,
            "x.add_mapping",
            &format!(
                "tcp 18.26.4.44 {} 1.0.0.1 {} => 18.26.4.44 {} 10.0.0.5 80 1 0",
                5000 + i,
                8080 + i,
                5000 + i
            ),
        )
        .unwrap();
    }
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    inject(&mut r, 0, &udp(LAN_B, 41, CLIENT, 53, b"q"));
    assert_eq!(drain(&mut r, "wan").len(), 2);
    assert_eq!(read(&mut r, "x.size"), "5");
    write(&mut r, "x.capacity", "1").unwrap();
    // The dynamic ones go; the three pinned stay, though above capacity.
    assert_eq!(read(&mut r, "x.size"), "3");
    assert_eq!(read(&mut r, "x.udp_table"), "");
    for i in 0..3u16 {
        inject(&mut r, 1, &tcp(CLIENT, 5000 + i, PUB, 8080 + i, 0x02, b""));
        assert_eq!(
            flow_of(&drain(&mut r, "lan")[0]),
            (CLIENT, 5000 + i, LAN_B, 80)
        );
    }
    // A new dynamic flow finds no room.
    inject(&mut r, 0, &udp(LAN_B, 42, CLIENT, 53, b"q"));
    assert!(drain(&mut r, "wan").is_empty());
    assert_eq!(read(&mut r, "x.size"), "3");
    write(&mut r, "x.clear", "").unwrap();
    assert_eq!(read(&mut r, "x.size"), "0");
}

/// A hot swap keeps the rewriter's mappings: a pinned port forward and a
/// spec-made flow both go on being translated under the new configuration
/// (here with another TCP timeout), and the spec-made flow keeps its
/// public port (a new mapping would take the next one). Before, the new
/// rewriter started empty: every connection through the NAT was cut.
#[test]
fn mappings_survive_a_hot_swap() {
    let mut r = hotswap_harness(NAPT);
    write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5000 1.0.0.1 8080 => 18.26.4.44 5000 10.0.0.5 80 1 0",
    )
    .unwrap();
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    inject(&mut r, 0, &udp(LAN_B, 41, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[1]), (PUB, 1025, CLIENT, 53));
    write(&mut r, "x.remove_mapping", "udp 10.0.0.5 40 18.26.4.44 53").unwrap();
    r.hotswap(&wired(
        "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, TCP_TIMEOUT 7440)",
    ))
    .unwrap();
    assert_eq!(read(&mut r, "x.size"), "2");
    assert_eq!(read(&mut r, "x.nmappings"), "1");
    let table = read(&mut r, "x.tcp_table");
    assert!(table.contains("pinned"), "{table}");
    inject(&mut r, 1, &tcp(CLIENT, 5000, PUB, 8080, 0x02, b""));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 5000, LAN_B, 80));
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 1025, b"a"));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 53, LAN_B, 41));
    inject(&mut r, 0, &udp(LAN_B, 41, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 1025, CLIENT, 53));
    // The freed flow's slot and the new table work as before.
    inject(&mut r, 0, &udp(LAN_B, 42, CLIENT, 53, b"q"));
    assert_eq!(read(&mut r, "x.size"), "3");
    // A new configuration with a single output: the mappings that use
    // output 1 cannot be kept.
    r.hotswap("x :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 0, drop); Idle -> [0]x; Idle -> [1]x; x[0] -> wan :: Queue(1000) -> Discard;")
        .unwrap();
    assert_eq!(read(&mut r, "x.size"), "0");
}

/// The `timeouts` handler shows each class's timeout keywords as they
/// can be written back: a configuration made from them reads the same.
/// `mapping_count` counts the mappings, as `size`.
#[test]
fn timeouts_read_back_as_keywords_and_mapping_count_follows_the_table() {
    for (decl, want) in [
        (
            "IPRewriter(pattern 1.0.0.1 1024-65535 - - 0 1, drop, TCP_TIMEOUT 7440, UDP_TIMEOUT 120, REAP_INTERVAL 2)",
            &["TCP_TIMEOUT 7440", "TCP_DONE_TIMEOUT 240", "UDP_TIMEOUT 120", "UDP_STREAMING_TIMEOUT 120", "REAP_INTERVAL 2"][..],
        ),
        (
            "TCPRewriter(pattern 1.0.0.1 1024-65535 - - 0 1, drop, TCP_NODATA_TIMEOUT 30)",
            &["TCP_TIMEOUT 86400", "TCP_NODATA_TIMEOUT 30", "TCP_GUARANTEE 5", "REAP_INTERVAL 900"][..],
        ),
        (
            "UDPRewriter(pattern 1.0.0.1 1024-65535 - - 0 1, drop, TIMEOUT 61, GUARANTEE 0)",
            &["TIMEOUT 61", "STREAMING_TIMEOUT 61", "GUARANTEE 0"][..],
        ),
        (
            "ICMPPingRewriter(pattern 1.0.0.1 - - - 0 1, drop, TIMEOUT 60)",
            &["TIMEOUT 60", "GUARANTEE 5"][..],
        ),
    ] {
        let mut r = harness(decl);
        let text = read(&mut r, "x.timeouts");
        for w in want {
            assert!(text.lines().any(|l| l == *w), "{decl}: {w} in\n{text}");
        }
        let (class, rest) = decl.split_once('(').unwrap();
        let args = rest.strip_suffix(')').unwrap();
        let spec: Vec<&str> = args.splitn(3, ", ").take(2).collect();
        let again = format!(
            "{class}({}, {})",
            spec.join(", "),
            text.lines().collect::<Vec<_>>().join(", ")
        );
        let mut r2 = harness(&again);
        assert_eq!(read(&mut r2, "x.timeouts"), text, "{again}");
    }
    let mut r = harness(NAPT);
    for port in 40..45 {
        inject(&mut r, 0, &udp(LAN_B, port, CLIENT, 53, b"q"));
    }
    assert_eq!(read(&mut r, "x.mapping_count"), "5");
    assert_eq!(read(&mut r, "x.mapping_count"), read(&mut r, "x.size"));
}

/// The Manager's `set_manager_class` writes the gateway's `manager_class`
/// IPClassifier (conf/home-gateway.click) as `PATTERN, -`: the choice of
/// the outbound packets copied to the Manager changes at run time.
#[test]
fn the_manager_class_can_be_rewritten_at_run_time() {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    let mut r = from_config_with(
        "manager_class :: IPClassifier(tcp opt syn and not tcp opt ack, -);
         Idle -> manager_class -> copied :: Queue(100) -> Discard;
         manager_class[1] -> not_copied :: Queue(100) -> Discard;",
        &opts,
    );
    let conf = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf/home-gateway.click"),
    )
    .unwrap();
    assert!(conf.contains("manager_class :: IPClassifier($MANAGER_CLASS, -)"));
    let mc = r.find_element("manager_class").unwrap();
    let send = |r: &mut Router, bytes: Vec<u8>| r.inject_packet(mc, 0, marked(&bytes));
    send(&mut r, tcp(LAN_B, 40000, CLIENT, 80, 0x02, b""));
    send(&mut r, udp(LAN_B, 40001, CLIENT, 53, b"q"));
    assert_eq!(drain(&mut r, "copied").len(), 1);
    assert_eq!(drain(&mut r, "not_copied").len(), 1);
    write(&mut r, "manager_class.config", "udp dst port 53, -").unwrap();
    send(&mut r, udp(LAN_B, 40001, CLIENT, 53, b"q"));
    send(&mut r, tcp(LAN_B, 40000, CLIENT, 80, 0x02, b""));
    let copied = drain(&mut r, "copied");
    assert_eq!(copied.len(), 1);
    assert_eq!(copied[0][9], 17);
    assert_eq!(drain(&mut r, "not_copied").len(), 1);
}

/// Endpoint-independent bindings carry over a hot swap with their flows:
/// after it, the bound host gets its port towards a new server, and
/// another host is not given that port.
#[test]
fn endpoint_independent_bindings_survive_a_hot_swap() {
    let eim = "IPRewriter(pattern 1.0.0.1 2000-2001# - - 0 1, drop, ENDPOINT_INDEPENDENT true)";
    let mut r = hotswap_harness(eim);
    inject(&mut r, 0, &udp(LAN_B, 40, CLIENT, 53, b"q"));
    let port = flow_of(&drain(&mut r, "wan")[0]).1;
    r.hotswap(&wired(eim)).unwrap();
    assert_eq!(read(&mut r, "x.bindings"), "1");
    inject(&mut r, 0, &udp(LAN_B, 40, [18, 26, 4, 45], 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]).1, port);
    // Two more hosts for a range of two ports: the one left, then none.
    inject(&mut r, 0, &udp([10, 0, 0, 6], 40, CLIENT, 53, b"q"));
    inject(&mut r, 0, &udp([10, 0, 0, 7], 40, CLIENT, 53, b"q"));
    let out = drain(&mut r, "wan");
    assert_eq!(out.len(), 1);
    assert_ne!(flow_of(&out[0]).1, port);
    assert_eq!(read(&mut r, "x.mapping_failures"), "1");
}

/// A hot swap that changes the outside address (a new WAN address): the
/// carried flows keep the old one and their replies still arrive, while
/// a bound host's new flows take the new address (a binding of its own
/// there), not the old one, which the configuration no longer names.
#[test]
fn a_new_outside_address_after_a_hot_swap_gets_new_bindings() {
    let rewriter = |addr: &str| {
        format!("IPRewriter(pattern {addr} 1024-65535 - - 0 1, drop, ENDPOINT_INDEPENDENT true)")
    };
    let mut r = hotswap_harness(&rewriter("1.0.0.1"));
    inject(&mut r, 0, &udp(LAN_B, 5000, CLIENT, 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 5000, CLIENT, 53));
    r.hotswap(&wired(&rewriter("1.0.0.9"))).unwrap();
    let other = [18, 26, 4, 45];
    inject(&mut r, 0, &udp(LAN_B, 5000, other, 53, b"q"));
    assert_eq!(
        flow_of(&drain(&mut r, "wan")[0]),
        ([1, 0, 0, 9], 5000, other, 53)
    );
    assert_eq!(read(&mut r, "x.bindings"), "2");
    inject(&mut r, 1, &udp(CLIENT, 53, PUB, 5000, b"r"));
    inject(&mut r, 1, &udp(other, 53, [1, 0, 0, 9], 5000, b"r"));
    let back: Vec<_> = drain(&mut r, "lan").iter().map(|p| flow_of(p)).collect();
    assert_eq!(
        back,
        vec![(CLIENT, 53, LAN_B, 5000), (other, 53, LAN_B, 5000)]
    );
}

/// ENDPOINT_INDEPENDENT turned on by a hot swap: the flows carried over
/// hold no binding, and a new host still gets a port that is free towards
/// its destination, however many carried flows use the ports from where
/// the search starts towards that destination.
#[test]
fn endpoint_independent_mapping_turned_on_by_a_hot_swap_finds_a_free_port() {
    let pattern = "pattern 1.0.0.1 2000-2299# - - 0 1, drop";
    let mut r = hotswap_harness(&format!("IPRewriter({pattern})"));
    for i in 0..200u8 {
        inject(&mut r, 0, &udp([10, 0, 1, i], 40, CLIENT, 53, b"q"));
    }
    assert_eq!(drain(&mut r, "wan").len(), 200);
    r.hotswap(&wired(&format!(
        "IPRewriter({pattern}, ENDPOINT_INDEPENDENT true)"
    )))
    .unwrap();
    assert_eq!(read(&mut r, "x.size"), "200");
    assert_eq!(read(&mut r, "x.bindings"), "0");
    let host = [10, 0, 2, 1];
    inject(&mut r, 0, &udp(host, 40, CLIENT, 53, b"q"));
    let out = drain(&mut r, "wan");
    assert_eq!(out.len(), 1, "a free port is found");
    let port = flow_of(&out[0]).1;
    assert!((2200..=2299).contains(&port), "{port}");
    assert_eq!(read(&mut r, "x.mapping_failures"), "0");
    // The host keeps that port towards another server.
    inject(&mut r, 0, &udp(host, 40, [18, 26, 4, 45], 53, b"q"));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]).1, port);
}

/// A new flow whose rewritten reply would take a pinned mapping's key
/// (a pattern without a port range cannot choose another) is refused and
/// counted in `mapping_failures`; before, it silently replaced the pinned
/// port forward, which then led the WAN client to the other host.
#[test]
fn a_new_flow_does_not_displace_a_pinned_mapping() {
    let mut r = harness("IPRewriter(pattern 1.0.0.1 - - - 0 1, drop)");
    write(
        &mut r,
        "x.add_mapping",
        "tcp 18.26.4.44 5000 1.0.0.1 80 => 18.26.4.44 5000 10.0.0.5 80 1 0",
    )
    .unwrap();
    // Another LAN host, from port 80 to the same client: its rewritten
    // flow (1.0.0.1 80 -> 18.26.4.44 5000) is the port forward's reply.
    const LAN_C: [u8; 4] = [10, 0, 0, 6];
    inject(&mut r, 0, &tcp(LAN_C, 80, CLIENT, 5000, 0x02, b""));
    assert!(drain(&mut r, "wan").is_empty());
    assert_eq!(read(&mut r, "x.mapping_failures"), "1");
    assert_eq!(read(&mut r, "x.size"), "1");
    assert!(read(&mut r, "x.tcp_table").contains("pinned"));
    // The forward still leads to B.
    inject(&mut r, 1, &tcp(CLIENT, 5000, PUB, 80, 0x02, b""));
    assert_eq!(flow_of(&drain(&mut r, "lan")[0]), (CLIENT, 5000, LAN_B, 80));
    // A dynamic mapping in the way is replaced, as Click does.
    inject(&mut r, 0, &tcp(LAN_C, 81, CLIENT, 5001, 0x02, b""));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 81, CLIENT, 5001));
    inject(&mut r, 0, &tcp([10, 0, 0, 7], 81, CLIENT, 5001, 0x02, b""));
    assert_eq!(flow_of(&drain(&mut r, "wan")[0]), (PUB, 81, CLIENT, 5001));
    assert_eq!(read(&mut r, "x.size"), "2");
}
