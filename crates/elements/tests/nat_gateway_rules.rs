//! conf/home-gateway.click's rewriters and inbound firewall, taken from the
//! file itself (their declarations, with the file's default parameters),
//! on crafted packets: two LAN hosts pinging one server with the same echo
//! identifier both get their replies, an ICMP query mapping lives at least
//! 60 s (RFC 5508 section 3, ICMP queries), a "fragmentation needed"
//! from a WAN router reaches the LAN host translated with its MTU intact
//! (RFC 5508 REQ-3), the endpoint-independent mapping (RFC 4787 REQ-1,
//! port parity), and the firewall's defaults (bogon sources dropped and
//! counted, replies passed). The namespace tests in nat_links.rs run the
//! same file with real hosts.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::wire::{checksum, IcmpHeader, Ipv4Header, UdpHeader};
use rclick_core::{Packet, Router, RouterOptions, Timestamp};
use rclick_elements::testing::{
    drain_queue as drain, from_config, from_config_with, read, udp_ipv4,
};

const LAN_A: [u8; 4] = [192, 168, 1, 10];
const LAN_B: [u8; 4] = [192, 168, 1, 20];
const WAN_IP: [u8; 4] = [192, 0, 2, 1];
const SERVER: [u8; 4] = [198, 51, 100, 7];
const SERVER2: [u8; 4] = [203, 0, 113, 9];
const WAN_ROUTER: [u8; 4] = [192, 0, 2, 254];

fn conf_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conf/home-gateway.click");
    let text = std::fs::read_to_string(path).unwrap();
    // Without comments: a `//` never occurs inside a value of this file.
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The defaults of the file's `define(...)`, longest names first (so that
/// `$LAN_NET` is not replaced as `$LAN_N...`).
fn defaults(text: &str) -> Vec<(String, String)> {
    let start = text.find("define(").unwrap() + "define(".len();
    let end = start + text[start..].find(");").unwrap();
    let mut defs: Vec<(String, String)> = text[start..end]
        .split(',')
        .filter_map(|d| {
            let (name, value) = d.trim().split_once(char::is_whitespace)?;
            Some((name.to_string(), value.trim().to_string()))
        })
        .collect();
    defs.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    defs
}

/// The declaration `CLASS(ARGS)` of element `name` in the file, with the
/// parameters at their defaults.
fn declaration(name: &str) -> String {
    let text = conf_text();
    let at = text
        .find(&format!("\n{name} :: "))
        .unwrap_or_else(|| panic!("no {name} in conf/home-gateway.click"))
        + name.len()
        + 5;
    let open = at + text[at..].find('(').unwrap();
    let mut depth = 0;
    let mut close = open;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let mut decl = text[at..=close]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for (n, v) in defaults(&text) {
        decl = decl.replace(&n, &v);
    }
    decl
}

/// The gateway's rewriters as in the file: rw (outputs 0, 1, 2 to queues
/// rw0, rw1, rw2), ping (ping0, ping1) and icmp_in (to the queue icmp_in0)
/// under simulated time.
fn gateway_rewriters() -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    let text = format!(
        "rw :: {rw}; ping :: {ping}; icmp_in :: {icmp_in};
         Idle -> [0]rw; Idle -> [1]rw; Idle -> [0]ping; Idle -> [1]ping; Idle -> icmp_in;
         rw[0] -> rw0 :: Queue(100) -> Discard; rw[1] -> rw1 :: Queue(100) -> Discard;
         rw[2] -> rw2 :: Queue(100) -> Discard;
         ping[0] -> ping0 :: Queue(100) -> Discard; ping[1] -> ping1 :: Queue(100) -> Discard;
         icmp_in[0] -> icmp_in0 :: Queue(100) -> Discard;",
        rw = declaration("rw"),
        ping = declaration("ping"),
        icmp_in = declaration("icmp_in"),
    );
    from_config_with(&text, &opts)
}

fn marked(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, usize::from(bytes[0] & 0x0f) * 4);
    p
}

fn inject(r: &mut Router, element: &str, port: usize, bytes: &[u8]) {
    let i = r.find_element(element).unwrap();
    r.inject_packet(i, port, marked(bytes));
}

fn advance(r: &mut Router, secs: i64) {
    let now = r.clock().now();
    r.clock()
        .advance_to(now + Timestamp::from_sec_nsec(secs, 0));
}

fn ip(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    rclick_elements::testing::ipv4_packet(src, dst, proto, 64, 0, &[], payload)
}

fn echo(src: [u8; 4], dst: [u8; 4], icmp_type: u8, ident: u16, seq: u16) -> Vec<u8> {
    let mut m = vec![icmp_type, 0, 0, 0];
    m.extend_from_slice(&ident.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(b"abcdefgh");
    let c = checksum::checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip(src, dst, 1, &m)
}

/// (source, destination, identifier) of an echo request or reply, checking
/// both checksums.
fn echo_of(p: &[u8]) -> ([u8; 4], [u8; 4], u16) {
    let h = Ipv4Header::new_checked(p).unwrap();
    assert!(h.verify_checksum(), "bad IP checksum");
    let icmp = &p[h.header_len()..];
    assert!(checksum::verify(icmp), "bad ICMP checksum");
    let m = IcmpHeader::new_checked(icmp).unwrap();
    (h.src().octets(), h.dst().octets(), m.ident())
}

/// (source, source port, destination, destination port) of a UDP datagram,
/// checking both checksums.
fn udp_of(p: &[u8]) -> ([u8; 4], u16, [u8; 4], u16) {
    let h = Ipv4Header::new_checked(p).unwrap();
    assert!(h.verify_checksum(), "bad IP checksum");
    let u = UdpHeader::new_checked(&p[h.header_len()..]).unwrap();
    assert!(u.verify_checksum(h.src(), h.dst()), "bad UDP checksum");
    (
        h.src().octets(),
        u.src_port(),
        h.dst().octets(),
        u.dst_port(),
    )
}

#[test]
fn two_lan_hosts_ping_one_server_with_the_same_identifier() {
    let mut r = gateway_rewriters();
    inject(&mut r, "ping", 0, &echo(LAN_A, SERVER, 8, 0x4242, 1));
    inject(&mut r, "ping", 0, &echo(LAN_B, SERVER, 8, 0x4242, 1));
    let out = drain(&mut r, "ping0");
    assert_eq!(out.len(), 2);
    let (a, b) = (echo_of(&out[0]), echo_of(&out[1]));
    assert_eq!((a.0, a.1), (WAN_IP, SERVER));
    assert_eq!((b.0, b.1), (WAN_IP, SERVER));
    // The first keeps its identifier; the second cannot, and gets another.
    assert_eq!(a.2, 0x4242);
    assert_ne!(b.2, a.2, "two LAN hosts share an echo identifier");
    // Each reply reaches its own host with its own identifier, B's first.
    inject(&mut r, "ping", 1, &echo(SERVER, WAN_IP, 0, b.2, 1));
    inject(&mut r, "ping", 1, &echo(SERVER, WAN_IP, 0, a.2, 1));
    let back = drain(&mut r, "ping1");
    assert_eq!(back.len(), 2);
    assert_eq!(echo_of(&back[0]), (SERVER, LAN_B, 0x4242));
    assert_eq!(echo_of(&back[1]), (SERVER, LAN_A, 0x4242));
}

#[test]
fn an_icmp_query_mapping_lives_at_least_60_seconds() {
    let mut r = gateway_rewriters();
    inject(&mut r, "ping", 0, &echo(LAN_A, SERVER, 8, 7, 1));
    let ident = echo_of(&drain(&mut r, "ping0")[0]).2;
    advance(&mut r, 59);
    // A capacity write reaps expired mappings.
    r.write_handler("ping.capacity", "4096").unwrap();
    assert_eq!(read(&mut r, "ping.size"), "1", "expired within 59 s");
    inject(&mut r, "ping", 1, &echo(SERVER, WAN_IP, 0, ident, 1));
    let back = drain(&mut r, "ping1");
    assert_eq!(back.len(), 1, "the reply 59 s later was not translated");
    assert_eq!(echo_of(&back[0]), (SERVER, LAN_A, 7));
    // And it does not live for ever: the table stays small.
    advance(&mut r, 121);
    r.write_handler("ping.capacity", "4096").unwrap();
    assert_eq!(read(&mut r, "ping.size"), "0");
    inject(&mut r, "ping", 1, &echo(SERVER, WAN_IP, 0, ident, 2));
    assert!(drain(&mut r, "ping1").is_empty());
}

#[test]
fn the_tables_are_bounded() {
    let mut r = gateway_rewriters();
    assert_eq!(read(&mut r, "rw.capacity"), "65536");
    assert_eq!(read(&mut r, "ping.capacity"), "4096");
}

/// An ICMP "fragmentation needed" (type 3 code 4) with next-hop MTU `mtu`
/// from `from` to `to`, quoting `quoted` whole (as Linux routers quote up
/// to 576 bytes).
fn frag_needed(from: [u8; 4], to: [u8; 4], mtu: u16, quoted: &[u8]) -> Vec<u8> {
    let mut m = vec![3, 4, 0, 0, 0, 0];
    m.extend_from_slice(&mtu.to_be_bytes());
    m.extend_from_slice(quoted);
    let c = checksum::checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip(from, to, 1, &m)
}

#[test]
fn fragmentation_needed_from_a_wan_router_reaches_the_lan_host_translated() {
    let mut r = gateway_rewriters();
    let sent = udp_ipv4(LAN_A, 5004, SERVER, 9, &[0x55; 64]);
    inject(&mut r, "rw", 0, &sent);
    let out = drain(&mut r, "rw0").remove(0);
    let (_, outside_port, ..) = udp_of(&out);
    let error = frag_needed(WAN_ROUTER, WAN_IP, 1280, &out);
    inject(&mut r, "icmp_in", 0, &error);
    let got = drain(&mut r, "icmp_in0");
    assert_eq!(got.len(), 1, "the error was not translated");
    let p = &got[0];
    let h = Ipv4Header::new_checked(&p[..]).unwrap();
    assert!(h.verify_checksum(), "bad IP checksum");
    assert_eq!((h.src().octets(), h.dst().octets()), (WAN_ROUTER, LAN_A));
    let icmp = &p[h.header_len()..];
    assert!(checksum::verify(icmp), "bad ICMP checksum");
    assert_eq!((icmp[0], icmp[1]), (3, 4));
    // The unused field and the next-hop MTU are as the router sent them.
    assert_eq!(&icmp[4..8], &[0, 0, 0x05, 0x00]);
    // The quoted datagram is the one A sent, whole and with valid sums.
    assert_eq!(&icmp[8..], &sent[..]);
    assert_eq!(udp_of(&icmp[8..]), (LAN_A, 5004, SERVER, 9));
    assert_ne!(outside_port, 0);
}

#[test]
fn the_mapping_is_endpoint_independent_with_port_parity() {
    let mut r = gateway_rewriters();
    // B takes port 5004 first; A's 5004 then gets another, even, port,
    // the same for two destinations.
    inject(&mut r, "rw", 0, &udp_ipv4(LAN_B, 5004, SERVER, 53, b"b"));
    inject(&mut r, "rw", 0, &udp_ipv4(LAN_A, 5004, SERVER, 53, b"a"));
    inject(&mut r, "rw", 0, &udp_ipv4(LAN_A, 5004, SERVER2, 53, b"a"));
    inject(&mut r, "rw", 0, &udp_ipv4(LAN_A, 5005, SERVER2, 53, b"a"));
    let out: Vec<_> = drain(&mut r, "rw0").iter().map(|p| udp_of(p)).collect();
    assert_eq!(out.len(), 4);
    assert_eq!(out[0], (WAN_IP, 5004, SERVER, 53));
    let a_port = out[1].1;
    assert_ne!(a_port, 5004);
    assert_eq!(a_port % 2, 0, "RTP's even port became odd");
    assert_eq!(out[2], (WAN_IP, a_port, SERVER2, 53));
    assert_eq!(out[3].1 % 2, 1, "RTCP's odd port became even");
}

/// The file's `inbound` IPFilter with output 0 (allowed) and 1 (dropped,
/// counted) to queues.
fn inbound_filter() -> Router {
    from_config(&format!(
        "inbound :: {}; Idle -> inbound;
         inbound[0] -> pass :: Queue(100) -> Discard;
         inbound[1] -> dropped :: Queue(100) -> Discard;",
        declaration("inbound")
    ))
}

#[test]
fn the_inbound_firewall_drops_bogon_sources_and_passes_replies() {
    let mut r = inbound_filter();
    let to_us = |src: [u8; 4]| udp_ipv4(src, 53, WAN_IP, 40000, b"answer");
    let bogons = [
        [10, 1, 2, 3],
        [172, 16, 0, 1],
        [172, 31, 255, 254],
        [192, 168, 1, 10],
        [192, 168, 77, 1],
        [127, 0, 0, 1],
        [0, 1, 2, 3],
        [169, 254, 1, 1],
        [224, 0, 0, 251],
        [255, 255, 255, 255],
    ];
    for src in bogons {
        inject(&mut r, "inbound", 0, &to_us(src));
    }
    let fine = [
        SERVER,
        SERVER2,
        [192, 0, 2, 100],
        WAN_ROUTER,
        [100, 64, 0, 1],
    ];
    for src in fine {
        inject(&mut r, "inbound", 0, &to_us(src));
    }
    // A fragment (say, one sent back through the Manager channel).
    let mut frag = to_us(SERVER);
    frag[6] = 0x20;
    frag[10] = 0;
    frag[11] = 0;
    let c = checksum::checksum(&frag[..20]);
    frag[10..12].copy_from_slice(&c.to_be_bytes());
    inject(&mut r, "inbound", 0, &frag);
    let passed: Vec<[u8; 4]> = drain(&mut r, "pass").iter().map(|p| udp_of(p).0).collect();
    assert_eq!(passed, fine);
    assert_eq!(drain(&mut r, "dropped").len(), bogons.len() + 1);
}
