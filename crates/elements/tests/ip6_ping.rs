//! ICMP6PingSource: the requests byte by byte (the ICMPv6 checksum
//! recomputed here over the IPv6 pseudo-header), replies from an
//! ICMP6PingResponder loop and hand-made replies with a known round-trip
//! time in simulated time, LIMIT and STOP, malformed replies ignored, the
//! hot-swap carry-over, and a Linux host answering it across a veth link
//! (network namespaces; skipped with the reason when they cannot be made).

mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::net::Ipv6Addr;

use common::netns::*;
use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Router, RouterOptions, StopReason, Timestamp};
use rclick_elements::testing::{from_config, read};

const SRC: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
const DST: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);

fn inject(r: &mut Router, elem: &str, port: usize, p: Packet) {
    let i = r.find_element(elem).unwrap_or_else(|| panic!("no {elem}"));
    r.inject_packet(i, port, p);
}

fn drain(r: &mut Router, q: &str) -> Vec<Packet> {
    let i = r.find_element(q).unwrap_or_else(|| panic!("no {q}"));
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        out.extend(b);
    }
    out
}

/// The Internet checksum of the IPv6 pseudo-header (RFC 8200 section 8.1)
/// and `msg`, computed here from scratch: 0 when `msg`'s checksum field is
/// right.
fn pseudo_sum(src: Ipv6Addr, dst: Ipv6Addr, msg: &[u8]) -> u16 {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&src.octets());
    bytes.extend_from_slice(&dst.octets());
    bytes.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    bytes.extend_from_slice(&[0, 0, 0, 58]);
    bytes.extend_from_slice(msg);
    if bytes.len() % 2 == 1 {
        bytes.push(0);
    }
    let mut sum: u32 = 0;
    for w in bytes.chunks(2) {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv6 packet (network header set) holding an ICMPv6 message of
/// `ty` with `ident`, `seq` and `data`, checksum right.
fn echo(src: Ipv6Addr, dst: Ipv6Addr, ty: u8, ident: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut msg = vec![ty, 0, 0, 0];
    msg.extend_from_slice(&ident.to_be_bytes());
    msg.extend_from_slice(&seq.to_be_bytes());
    msg.extend_from_slice(data);
    let c = pseudo_sum(src, dst, &msg);
    msg[2..4].copy_from_slice(&c.to_be_bytes());
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    p.extend_from_slice(&[58, 64]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&msg);
    p
}

fn net_packet(bytes: &[u8], at: Timestamp) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, 40.min(bytes.len()));
    p.set_timestamp_anno(at);
    p
}

#[test]
fn requests_are_well_formed_icmpv6_echo_requests() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 3, INTERVAL 0.5, IDENTIFIER 77, DATA abcde, VERBOSE false)
         -> q :: Queue(100) -> Idle;"
    ));
    let start = r.clock().now();
    assert_eq!(r.run_limited(1000), StopReason::Quiescent);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 3);
    for (i, p) in v.iter().enumerate() {
        let d = p.data();
        assert_eq!(d.len(), 40 + 8 + 5);
        assert_eq!(d[0] >> 4, 6, "version");
        assert_eq!(u16::from_be_bytes([d[4], d[5]]), 13, "payload length");
        assert_eq!(d[6], 58, "next header ICMPv6");
        assert_eq!(d[7], 64, "hop limit");
        assert_eq!(&d[8..24], &SRC.octets());
        assert_eq!(&d[24..40], &DST.octets());
        let icmp = &d[40..];
        assert_eq!((icmp[0], icmp[1]), (128, 0), "echo request");
        assert_eq!(pseudo_sum(SRC, DST, icmp), 0, "checksum of request {i}");
        assert_ne!(&icmp[2..4], &[0, 0]);
        assert_eq!(&icmp[4..6], &77u16.to_be_bytes());
        assert_eq!(&icmp[6..8], &((i + 1) as u16).to_be_bytes());
        assert_eq!(&icmp[8..], b"abcde");
        assert_eq!(p.dst_ip6_anno(), DST);
        // One every 0.5 s, the first 0.5 s after start.
        let sent = p.timestamp_anno() - start;
        assert_eq!(sent, Timestamp::from_secs_f64(0.5 * (i + 1) as f64));
    }
    assert_eq!(read(&mut r, "ps.count"), "3");
    assert_eq!(read(&mut r, "ps.src"), SRC.to_string());
    assert_eq!(read(&mut r, "ps.dst"), DST.to_string());
    // No input: no reply statistics.
    assert!(r.read_handler("ps.summary", None).is_err());
}

#[test]
fn requests_match_scapy_when_available() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 1, IDENTIFIER 4660, DATA \"hello, ping\") -> q :: Queue -> Idle;"
    ));
    r.run_limited(100);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 1);
    let hex: String = v[0].data().iter().map(|b| format!("{b:02x}")).collect();
    let script = "import sys\n\
from scapy.layers.inet6 import IPv6, ICMPv6EchoRequest\n\
p = IPv6(bytes.fromhex(sys.argv[1]))\n\
e = p[ICMPv6EchoRequest]\n\
c = e.cksum\n\
del e.cksum\n\
print(c == ICMPv6EchoRequest(bytes(IPv6(bytes(p)).payload)).cksum and IPv6(bytes(p))[ICMPv6EchoRequest].cksum == c, e.id, e.seq, bytes(e.data), p.hlim)\n";
    match std::process::Command::new("python3")
        .args(["-c", script, &hex])
        .output()
    {
        Ok(o) if o.status.success() => {
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(out.trim(), "True 4660 1 b'hello, ping' 64", "{out}");
        }
        Ok(o) => eprintln!(
            "SKIP: scapy not usable: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => eprintln!("SKIP: python3 not found: {e}"),
    }
}

#[test]
fn loop_through_icmp6pingresponder_counts_every_reply() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 4, INTERVAL 0.25, IDENTIFIER 9, DATA xyz);
         ps -> t :: Tee; t[0] -> q :: Queue(100) -> Idle; t[1] -> ICMP6PingResponder -> ps;"
    ));
    r.run_limited(1000);
    assert_eq!(drain(&mut r, "q").len(), 4);
    assert_eq!(
        read(&mut r, "ps.summary"),
        "4 packets transmitted, 4 received, 0% packet loss\nrtt min/avg/max/mdev = 0.000/0.000/0.000/0.000\n"
    );
    let c = r.take_chatter();
    for seq in 1..=4 {
        let line = format!(
            "ps :: ICMP6PingSource: 3 bytes from {DST}: icmp_seq={seq} ttl=255 time=0.000 ms"
        );
        assert!(c.contains(&line), "{line} not in {c:?}");
    }
}

#[test]
fn replies_give_round_trip_times_duplicates_and_reset() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 3, INTERVAL 1, IDENTIFIER 5, VERBOSE false)
         -> q :: Queue(100) -> Idle; Idle -> ps;"
    ));
    r.run_limited(1000);
    let reqs = drain(&mut r, "q");
    assert_eq!(reqs.len(), 3);
    // Replies 10, 30 and (to request 3) never; request 1 answered twice.
    for (seq, ms) in [(1u16, 10.0), (2, 30.0), (1, 50.0)] {
        let sent = reqs[seq as usize - 1].timestamp_anno();
        let at = sent + Timestamp::from_secs_f64(ms / 1000.0);
        let rep = echo(DST, SRC, 129, 5, seq, b"");
        inject(&mut r, "ps", 0, net_packet(&rep, at));
    }
    // 3 sent, 2 distinct answered, one duplicate. The loss is Click's
    // formula, which ICMPPingSource keeps byte for byte: (sent - replies
    // counted with duplicates - duplicates) / sent, here (3 - 3 - 1) / 3.
    assert_eq!(
        read(&mut r, "ps.summary"),
        "3 packets transmitted, 2 received, +1 duplicates, -33% packet loss\nrtt min/avg/max/mdev = 10.000/30.000/50.000/16.329\n"
    );
    assert_eq!(read(&mut r, "ps.rtt_min"), "0.01s");
    assert_eq!(read(&mut r, "ps.rtt_avg"), "0.03s");
    assert_eq!(read(&mut r, "ps.rtt_max"), "0.05s");
    r.write_handler("ps.reset_counts", "").unwrap();
    assert_eq!(read(&mut r, "ps.count"), "0");
    assert_eq!(
        read(&mut r, "ps.summary"),
        "0 packets transmitted, 0 received"
    );
    assert_eq!(read(&mut r, "ps.rtt_min"), "0s");
}

#[test]
fn malformed_and_foreign_replies_are_ignored() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 2, INTERVAL 1, IDENTIFIER 5)
         -> q :: Queue(100) -> Idle; Idle -> ps;"
    ));
    r.run_limited(1000);
    assert_eq!(drain(&mut r, "q").len(), 2);
    let now = r.clock().now();
    let good = echo(DST, SRC, 129, 5, 1, b"data");
    let mut bad_sum = good.clone();
    bad_sum[42] ^= 1;
    let mut bad_len = good.clone();
    bad_len[5] += 4; // payload length beyond the packet: truncated
    let mut odd_code = good.clone();
    odd_code[41] = 1; // checksum now wrong too
    let cases: Vec<Vec<u8>> = vec![
        bad_sum,
        bad_len,
        odd_code,
        good[..47].to_vec(),                // ICMPv6 header cut
        good[..30].to_vec(),                // IPv6 header cut
        echo(DST, SRC, 128, 5, 1, b"data"), // a request, not a reply
        echo(DST, SRC, 1, 5, 1, b"data"),   // an error
        echo(DST, SRC, 129, 6, 1, b"data"), // another identifier
        echo(DST, SRC, 129, 5, 3, b"data"), // never sent
        echo(DST, SRC, 129, 5, 0, b"data"), // never sent
        Vec::new(),
    ];
    for c in &cases {
        inject(&mut r, "ps", 0, net_packet(c, now));
    }
    // Without a network header.
    inject(&mut r, "ps", 0, Packet::from_slice(&good));
    // IPv4 bytes.
    let v4 =
        rclick_elements::testing::ipv4_packet([1, 0, 0, 1], [1, 0, 0, 2], 1, 64, 0, &[], &[0; 8]);
    inject(&mut r, "ps", 0, net_packet(&v4, now));
    // Arbitrary bytes (a fixed pseudo-random sequence).
    let mut x: u32 = 0x1234_5678;
    for n in 0..300 {
        let mut b = good.clone();
        for _ in 0..1 + n % 4 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let i = (x >> 8) as usize % b.len();
            b[i] = (x >> 20) as u8;
        }
        b.truncate((x as usize >> 3) % (b.len() + 1));
        inject(&mut r, "ps", 0, net_packet(&b, now));
    }
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("2 packets transmitted, 0 received, 100% packet loss"),
        "{s}"
    );
    let c = r.take_chatter();
    assert!(!c.iter().any(|l| l.contains("bytes from")), "{c:?}");
    // The good reply still counts.
    inject(&mut r, "ps", 0, net_packet(&good, now));
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("2 packets transmitted, 1 received, 50% packet loss"),
        "{s}"
    );
    // Behind an extension header (destination options, 8 bytes of PadN).
    let mut ext = echo(DST, SRC, 129, 5, 2, b"data");
    ext[6] = 60;
    let plen = u16::from_be_bytes([ext[4], ext[5]]) + 8;
    ext[4..6].copy_from_slice(&plen.to_be_bytes());
    ext.splice(40..40, [58, 0, 1, 4, 0, 0, 0, 0]);
    inject(&mut r, "ps", 0, net_packet(&ext, now));
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("2 packets transmitted, 2 received, 0% packet loss"),
        "{s}"
    );
}

/// Matching replies (good, duplicate and malformed) allocates nothing
/// (VERBOSE false: printing a line allocates its text).
#[test]
fn reply_matching_allocates_nothing() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 50, INTERVAL 0.01, IDENTIFIER 5, VERBOSE false)
         -> q :: Queue(100) -> Idle; Idle -> ps; Idle -> d :: Discard;"
    ));
    r.run_limited(1000);
    assert_eq!(drain(&mut r, "q").len(), 50);
    let now = r.clock().now();
    let mut bad = echo(DST, SRC, 129, 5, 3, b"data");
    bad[44] ^= 0x40;
    let ps = r.find_element("ps").unwrap();
    // Warm-up: freed packets go to a recycling pool, which grows while
    // the first ones are freed; the same number through a Discard first.
    let d = r.find_element("d").unwrap();
    let warm: Vec<Packet> = (0..150).map(|_| net_packet(&bad, now)).collect();
    for p in warm {
        r.inject_packet(d, 0, p);
    }
    // Made after the warm-up, from the pool.
    let replies: Vec<Packet> = (1..=50u16)
        .flat_map(|seq| {
            let good = echo(DST, SRC, 129, 5, seq, b"data");
            [
                net_packet(&good, now),
                net_packet(&good, now),
                net_packet(&bad, now),
            ]
        })
        .collect();
    // And a first reply through the element.
    let mut replies = replies.into_iter();
    for p in replies.by_ref().take(3) {
        r.inject_packet(ps, 0, p);
    }
    let a0 = counting_alloc::allocations();
    for p in replies {
        r.inject_packet(ps, 0, p);
    }
    let a1 = counting_alloc::allocations();
    assert_eq!(a1 - a0, 0, "allocations while matching 147 replies");
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("50 packets transmitted, 50 received, +50 duplicates"),
        "{s}"
    );
}

#[test]
fn limit_and_stop() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 2, INTERVAL 0.1, STOP true) -> q :: Queue -> Idle;"
    ));
    assert_eq!(r.run_limited(1000), StopReason::Stopped);
    assert_eq!(drain(&mut r, "q").len(), 2);
    assert_eq!(read(&mut r, "ps.count"), "2");
    // Without STOP the router goes quiet; a higher limit goes on.
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 2, INTERVAL 0.1) -> q :: Queue -> Idle;"
    ));
    assert_eq!(r.run_limited(1000), StopReason::Quiescent);
    assert_eq!(drain(&mut r, "q").len(), 2);
    r.write_handler("ps.limit", "5").unwrap();
    r.run_limited(1000);
    assert_eq!(drain(&mut r, "q").len(), 3);
    assert_eq!(read(&mut r, "ps.count"), "5");
    // Inactive: nothing.
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, ACTIVE false) -> q :: Queue -> Idle;"
    ));
    assert_eq!(r.run_limited(1000), StopReason::Quiescent);
    assert_eq!(read(&mut r, "ps.count"), "0");
    assert_eq!(read(&mut r, "ps.active"), "false");
    // Pull output: one request per pull, up to LIMIT.
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 2) -> u :: Unqueue -> q :: Queue -> Idle;"
    ));
    r.run_limited(100);
    let v = drain(&mut r, "q");
    assert_eq!(v.len(), 2);
    assert_eq!(&v[1].data()[46..48], &2u16.to_be_bytes());
}

#[test]
fn bad_arguments_are_refused() {
    for conf in [
        "ICMP6PingSource(10.0.0.1, ::2) -> Discard",
        "ICMP6PingSource(::1) -> Discard",
        "ICMP6PingSource(::1, ::2, IDENTIFIER 70000) -> Discard",
        "ICMP6PingSource(::1, ::2, INTERVAL x) -> Discard",
    ] {
        assert!(
            rclick_elements::testing::try_from_config(conf).is_err(),
            "{conf} accepted"
        );
    }
}

#[test]
fn hot_swap_keeps_sequence_phase_and_statistics() {
    let conf = "ps :: ICMP6PingSource(::1, ::2, INTERVAL 1, VERBOSE false) \
                -> t :: Tee -> ICMP6PingResponder -> ps; \
                t[1] -> q :: Queue(100) -> Discard(ACTIVE false);";
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    let mut r = rclick_elements::testing::from_config_with(conf, &opts);
    let step_until = |r: &mut Router, n: u64| {
        for _ in 0..10_000 {
            let then = r.clock().now();
            r.run_limited(1);
            if read(r, "q.length") == n.to_string() {
                return (then - DEFAULT_SIMTIME_START).as_secs_f64();
            }
        }
        panic!("never {n}");
    };
    assert_eq!(step_until(&mut r, 3), 3.0);
    r.clock()
        .advance_to(DEFAULT_SIMTIME_START + Timestamp::from_secs_f64(3.5));
    r.hotswap(conf).unwrap();
    assert_eq!(step_until(&mut r, 4), 4.0, "the phase carries over");
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("4 packets transmitted, 4 received, 0% packet loss"),
        "{s}"
    );
    let q = r.find_element("q").unwrap();
    let seqs: Vec<u16> = r
        .pull_from(q, 0, 64)
        .unwrap()
        .packets()
        .iter()
        .map(|p| u16::from_be_bytes([p.data()[46], p.data()[47]]))
        .collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}

// ------------------------------------------------------------ real link

const R_ADDR: &str = "2001:db8:5::1";
const H_ADDR: &str = "2001:db8:5::2";
const R_MAC: &str = "02:00:00:00:56:01";

/// ICMP6PingSource in a router namespace (its own IPv6 stack off) sends
/// through an IP6NDSolicitor to a Linux host in another namespace, which
/// answers; the replies come back through Classifier, Strip and
/// CheckIP6Header into the source. IP6NDAdvertiser answers the host's own
/// neighbour solicitations for the router's address.
#[test]
fn linux_host_answers_icmp6pingsource() {
    skip_if!(namespace_skip_reason());
    if !have(&["timeout", "--version"]) {
        eprintln!("SKIP: timeout not installed (Debian package coreutils)");
        return;
    }
    let t = tag();
    let (h, rt) = (Netns::new("p6h"), Netns::new("p6r"));
    rt.disable_ipv6();
    let (h_dev, r_dev) = (format!("p6h{t}"), format!("p6r{t}"));
    must(&[
        "ip", "link", "add", &h_dev, "netns", &h.name, "type", "veth", "peer", "name", &r_dev,
        "netns", &rt.name,
    ]);
    rt.exec(&["ip", "link", "set", &r_dev, "address", R_MAC]);
    rt.exec(&["ip", "link", "set", &r_dev, "arp", "off"]);
    rt.exec(&["ip", "link", "set", &r_dev, "up"]);
    h.exec(&[
        "ip",
        "-6",
        "addr",
        "add",
        &format!("{H_ADDR}/64"),
        "dev",
        &h_dev,
        "nodad",
    ]);
    h.exec(&["ip", "link", "set", &h_dev, "up"]);
    let config = format!(
        "ps :: ICMP6PingSource({R_ADDR}, {H_ADDR}, INTERVAL 0.1, LIMIT 1, IDENTIFIER 4242, DATA \"rclick ping6\");
         out :: Queue(1000) -> ToDevice({r_dev});
         FromDevice({r_dev}) -> c :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd 20/3a, -);
         nds :: IP6NDSolicitor({R_ADDR}, {R_MAC}) -> out;
         ps -> nds;
         c[0] -> tee :: Tee -> IP6NDAdvertiser({R_ADDR} {R_MAC}) -> out;
         tee[1] -> [1]nds;
         c[1] -> [1]nds;
         c[2] -> Strip(14) -> CheckIP6Header -> ps;
         c[3] -> Discard;"
    );
    let router = Running::start(&rt, &config);
    // IP6NDSolicitor holds one packet per neighbour while it resolves it,
    // and the host's first answer may need a retransmission: a first
    // request (LIMIT 1) resolves the host, then the counts start afresh.
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    wait("neighbour resolved", &|| {
        router.read("nds.neighbors").contains(H_ADDR)
            && !router.read("nds.neighbors").contains("INCOMPLETE")
    });
    router.write("ps.reset_counts", "");
    router.write("ps.limit", "10");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while router.read_u64("ps.count") < 10 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The last reply's round trip.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let summary = router.read("ps.summary");
    let rtt_max = router.read("ps.rtt_max");
    let chatter = router.finish();
    assert!(
        summary.starts_with("10 packets transmitted, 10 received, 0% packet loss"),
        "{summary}\n{chatter:?}"
    );
    assert!(summary.contains("rtt min/avg/max/mdev = "), "{summary}");
    assert_ne!(rtt_max, "0s", "a real round trip takes time");
    let line = chatter
        .iter()
        .find(|l| l.contains("icmp_seq=10 "))
        .unwrap_or_else(|| panic!("{chatter:?}"));
    assert!(
        line.starts_with(&format!(
            "ps :: ICMP6PingSource: 12 bytes from {H_ADDR}: icmp_seq=10 ttl=64 time="
        )),
        "{line}"
    );
}

// ------------------------------------------------------------ review fixes

/// INTERVAL is kept in milliseconds that must fit 32 bits, as Click's:
/// beyond 4294967.295 s it is "out of range" (rclick used to accept it and
/// then panic multiplying it into nanoseconds). The `interval` handler
/// refuses such values too and the element keeps running.
#[test]
fn interval_out_of_range_is_refused_not_a_panic() {
    for class in [
        "ICMPPingSource(1.0.0.1, 2.0.0.2",
        "ICMP6PingSource(::1, ::2",
    ] {
        let ok = format!("p :: {class}, INTERVAL 4294967.295) -> Discard");
        let mut r = from_config(&ok);
        r.run_limited(10);
        for v in ["4294967.296", "100000000000000"] {
            let bad = format!("p :: {class}, INTERVAL {v}) -> Discard");
            let e = rclick_elements::testing::config_errors(&bad);
            assert!(e.contains("INTERVAL: out of range"), "{bad}: {e}");
            assert!(r.write_handler("p.interval", v).is_err(), "{class} {v}");
        }
        r.write_handler("p.interval", "0.5").unwrap();
        r.write_handler("p.active", "true").unwrap();
        r.run_limited(10);
    }
}

/// A reply whose timestamp annotation lies far from the request's (a
/// clock jump, a replayed trace) gives a clamped time, never an overflow
/// panic, however often it comes back (duplicates count every time).
#[test]
fn absurd_reply_timestamps_do_not_overflow() {
    let mut r = from_config(&format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, LIMIT 1, INTERVAL 1, VERBOSE false)
         -> q :: Queue(100) -> Idle; Idle -> ps;"
    ));
    r.run_limited(1000);
    assert_eq!(drain(&mut r, "q").len(), 1);
    let rep = echo(DST, SRC, 129, 0, 1, b"");
    inject(&mut r, "ps", 0, net_packet(&rep, Timestamp(i64::MIN + 1)));
    for _ in 0..3000 {
        inject(&mut r, "ps", 0, net_packet(&rep, Timestamp(i64::MAX)));
    }
    let s = read(&mut r, "ps.summary");
    assert!(
        s.starts_with("1 packets transmitted, 1 received, +3000 duplicates"),
        "{s}"
    );
    assert!(s.contains("rtt min/avg/max/mdev = 0.000/"), "{s}");
}

/// Hot swap between an ICMPPingSource and an ICMP6PingSource of the same
/// name: the types differ, so nothing carries over (the new one starts at
/// sequence 1 and count 0) and nothing panics, in both directions.
#[test]
fn hot_swap_between_families_starts_afresh() {
    let v4 = "ps :: ICMPPingSource(1.0.0.1, 2.0.0.2, INTERVAL 1, VERBOSE false) \
              -> q :: Queue(100) -> Discard(ACTIVE false); Idle -> ps;";
    let v6 = format!(
        "ps :: ICMP6PingSource({SRC}, {DST}, INTERVAL 1, VERBOSE false) \
         -> q :: Queue(100) -> Discard(ACTIVE false); Idle -> ps;"
    );
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    for (a, b) in [(v4, v6.as_str()), (v6.as_str(), v4)] {
        let mut r = rclick_elements::testing::from_config_with(a, &opts);
        for _ in 0..10_000 {
            r.run_limited(1);
            if read(&mut r, "ps.count") == "3" {
                break;
            }
        }
        assert_eq!(read(&mut r, "ps.count"), "3");
        r.hotswap(b).unwrap();
        assert_eq!(read(&mut r, "ps.count"), "0", "{a} -> {b}");
        assert_eq!(
            read(&mut r, "ps.summary"),
            "0 packets transmitted, 0 received"
        );
        for _ in 0..10_000 {
            r.run_limited(1);
            if read(&mut r, "ps.count") == "1" {
                break;
            }
        }
        let p = drain(&mut r, "q").pop().expect("a request after the swap");
        let v6 = p.data()[0] >> 4 == 6;
        let seq_at = if v6 { 46 } else { 26 };
        assert_eq!(v6, b.contains("ICMP6"));
        assert_eq!(
            u16::from_be_bytes([p.data()[seq_at], p.data()[seq_at + 1]]),
            1
        );
    }
}

/// A hot swap whose new LIMIT the carried-over count already reaches:
/// nothing more is sent, and with STOP the router stops (it used to stay
/// running forever, its timer finding the limit reached and returning).
#[test]
fn hot_swap_past_limit_with_stop_stops() {
    let old = "ps :: ICMPPingSource(1.0.0.1, 2.0.0.2, INTERVAL 1, VERBOSE false) \
               -> q :: Queue(100) -> Discard(ACTIVE false);";
    let new = "ps :: ICMPPingSource(1.0.0.1, 2.0.0.2, INTERVAL 1, LIMIT 2, STOP true, \
               VERBOSE false) -> q :: Queue(100) -> Discard(ACTIVE false);";
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    let mut r = rclick_elements::testing::from_config_with(old, &opts);
    for _ in 0..10_000 {
        r.run_limited(1);
        if read(&mut r, "ps.count") == "3" {
            break;
        }
    }
    assert_eq!(read(&mut r, "ps.count"), "3");
    let queued = read(&mut r, "q.length");
    r.hotswap(new).unwrap();
    assert_eq!(r.run_limited(1000), StopReason::Stopped);
    assert_eq!(read(&mut r, "ps.count"), "3");
    // The Queue keeps what it held across the swap; nothing was added.
    assert_eq!(read(&mut r, "q.length"), queued);
}
