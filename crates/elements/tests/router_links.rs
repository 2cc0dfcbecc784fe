//! The Click paper's IP router (Figure 8), as `make-ip-conf` writes it in
//! device form, on real links: host A (10.0.0.2/24) — veth — router
//! namespace — veth — host B (10.0.1.2/24), each host's default gateway
//! the router's address on its link (10.0.0.1, 10.0.1.1). The router runs
//! in-process in a thread that entered its namespace (as in devices.rs);
//! ARP is resolved for real by its ARPQueriers and ARPResponders. Real
//! Linux tools check it: ping both ways, ping with TTL 1 and traceroute
//! (the router's time exceeded), path MTU discovery and fragmentation, the
//! router's own address answered by its host stack (the TAP device fake0
//! that the device form's FromHost makes; ToHost delivers into it), an
//! iperf3 TCP transfer, and an ICMP redirect seen by tcpdump.
//!
//! Needs root, iproute2, iputils-ping and coreutils' `timeout`; the
//! traceroute, iperf3 and tcpdump parts need those Debian packages. Without
//! a tool the test (or the part) prints why it is skipped and passes. The
//! `make-ip-conf` binary must be built (`cargo build --bins`), as for
//! ip_router.rs. Every namespace is deleted when its guard drops, also
//! when a test fails; every external command runs under `timeout`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod common;

use common::netns::*;

/// The make-ip-conf binary, built next to this test's target directory.
fn make_ip_conf(args: &[&str]) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .ok_or("no target directory")?
        .join("make-ip-conf");
    let out = Command::new(&bin)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e} (cargo build --bins)", bin.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Why these tests cannot run here, if they cannot.
fn skip_reason() -> Option<String> {
    if !have(&["timeout", "--version"]) {
        return Some("timeout not installed (Debian package coreutils)".into());
    }
    if let Some(why) = namespace_skip_reason() {
        return Some(why);
    }
    if !run_t(5, &["ping", "-V"]).0 {
        return Some("ping not installed (Debian package iputils-ping)".into());
    }
    if let Err(e) = make_ip_conf(&["--help"]) {
        return Some(format!("make-ip-conf binary not built: {e}"));
    }
    None
}

macro_rules! require {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("skipping: {why}");
            return;
        }
    };
}

const A: &str = "10.0.0.2";
const B: &str = "10.0.1.2";
const RA: &str = "10.0.0.1";
const RB: &str = "10.0.1.1";

/// Hosts A and B, the router namespace between them, and the router.
/// Field order is drop order: the router stops before its namespace goes.
struct Net {
    router: Running,
    a: Netns,
    b: Netns,
    rt: Netns,
    /// A's link device.
    a_dev: String,
}

impl Net {
    /// Builds the topology and starts the make-ip-conf router; `edit`
    /// may change its configuration text first.
    fn new(edit: impl FnOnce(String) -> String) -> Net {
        let t = tag();
        let (a, b, rt) = (Netns::new("a"), Netns::new("b"), Netns::new("r"));
        for ns in [&a, &b, &rt] {
            ns.disable_ipv6();
        }
        let (a_dev, ra) = (format!("ha{t}"), format!("ra{t}"));
        let (b_dev, rb) = (format!("hb{t}"), format!("rb{t}"));
        for (h, hd, rd) in [(&a, &a_dev, &ra), (&b, &b_dev, &rb)] {
            must(&[
                "ip", "link", "add", hd, "netns", &h.name, "type", "veth", "peer", "name", rd,
                "netns", &rt.name,
            ]);
            // The router namespace's own stack stays off these links: no
            // addresses, and no ARP answers (it owns the router's
            // addresses on fake0, and would answer for them here too).
            rt.exec(&["ip", "link", "set", rd, "arp", "off"]);
            rt.exec(&["ip", "link", "set", rd, "up"]);
            h.exec(&["ip", "link", "set", hd, "up"]);
        }
        a.exec(&["ip", "addr", "add", &format!("{A}/24"), "dev", &a_dev]);
        a.exec(&["ip", "route", "add", "default", "via", RA]);
        b.exec(&["ip", "addr", "add", &format!("{B}/24"), "dev", &b_dev]);
        b.exec(&["ip", "route", "add", "default", "via", RB]);
        let conf = make_ip_conf(&[
            &format!("{ra}:{RA}/24:02:00:00:00:00:01"),
            &format!("{rb}:{RB}/24:02:00:00:00:01:01"),
        ])
        .unwrap_or_else(|e| panic!("make-ip-conf: {e}"));
        let router = Running::start(&rt, &edit(conf));
        Net {
            router,
            a,
            b,
            rt,
            a_dev,
        }
    }
}

fn ping_ok(ns: &Netns, args: &[&str]) -> String {
    let mut cmd = vec!["ping", "-n", "-W", "2"];
    cmd.extend_from_slice(args);
    let (ok, out) = ns.run(20, &cmd);
    assert!(ok, "{} in {}: {out}", cmd.join(" "), ns.name);
    assert_eq!(ping_loss(&out), Some(0.0), "{}:\n{out}", cmd.join(" "));
    assert!(!out.contains("DUP!"), "duplicate replies:\n{out}");
    out
}

/// 1. Ping through the router both ways, no loss; ARP resolved by the
///    router's ARPQueriers (no static entries anywhere).
#[test]
fn ping_both_ways_without_loss() {
    require!();
    let net = Net::new(|c| c);
    ping_ok(&net.a, &["-c", "10", "-i", "0.2", B]);
    ping_ok(&net.b, &["-c", "10", "-i", "0.2", A]);
    // The hosts learnt the router's Ethernet addresses from its
    // ARPResponders, the router learnt theirs through its ARPQueriers.
    let (_, n) = net.a.run(5, &["ip", "neigh", "show", RA]);
    assert!(n.contains("02:00:00:00:00:01"), "A's neighbour entry: {n}");
    let (_, n) = net.b.run(5, &["ip", "neigh", "show", RB]);
    assert!(n.contains("02:00:00:00:01:01"), "B's neighbour entry: {n}");
    let table = net.router.read("arpq1.table");
    assert!(table.contains(B), "arpq1.table: {table}");
    let table = net.router.read("arpq0.table");
    assert!(table.contains(A), "arpq0.table: {table}");
}

/// 2. TTL 1 from A to B expires at the router, which answers with time
///    exceeded from its A-side address; traceroute shows the hop.
#[test]
fn ttl_exceeded_shows_the_router_hop() {
    require!();
    let net = Net::new(|c| c);
    // Resolve ARP first so the one probe is not the one held by ARPQuerier.
    ping_ok(&net.a, &["-c", "1", B]);
    let (_, out) = net
        .a
        .run(10, &["ping", "-n", "-c", "1", "-W", "2", "-t", "1", B]);
    assert!(
        out.contains(&format!("From {RA} icmp_seq=1 Time to live exceeded")),
        "ping -t 1:\n{out}"
    );
    if !have(&["traceroute", "--version"]) {
        eprintln!("traceroute part skipped: install the Debian package traceroute");
        return;
    }
    let (ok, out) = net.a.run(
        20,
        &["traceroute", "-n", "-q", "1", "-w", "2", "-m", "4", B],
    );
    assert!(ok, "traceroute: {out}");
    let hops: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(hops.len() >= 2, "traceroute:\n{out}");
    assert_eq!(&hops[0][..2], &["1", RA], "traceroute:\n{out}");
    assert_eq!(&hops[1][..2], &["2", B], "traceroute:\n{out}");
}

/// 3. Path MTU: the router's B-side IPFragmenter (and its needfrag
///    ICMPError) set to 1000. Without DF a 1428-byte packet is fragmented
///    by the router and reassembled by B; with DF, A gets "fragmentation
///    needed" carrying MTU 1000 from the router's A-side address.
#[test]
fn path_mtu_and_fragmentation() {
    require!();
    let net = Net::new(|c| {
        let old = [
            "fr2 :: IPFragmenter(1500)",
            &format!("ICMPError({RB}, unreachable, needfrag, PMTU 1500)"),
        ];
        let new = [
            "fr2 :: IPFragmenter(1000)",
            &format!("ICMPError({RB}, unreachable, needfrag, PMTU 1000)"),
        ];
        let mut c = c;
        for (o, n) in old.iter().zip(new.iter()) {
            assert!(c.contains(o), "no {o} in the configuration");
            c = c.replace(o, n);
        }
        c
    });
    // No DF (-M dont): the router fragments each request for B.
    ping_ok(
        &net.a,
        &["-c", "3", "-i", "0.2", "-M", "dont", "-s", "1400", B],
    );
    assert!(net.router.read_u64("fr2.fragments") >= 6, "fr2.fragments");
    // DF: the router refuses and says why.
    let (ok, out) = net.a.run(
        10,
        &[
            "ping", "-n", "-c", "1", "-W", "2", "-M", "do", "-s", "1400", B,
        ],
    );
    assert!(!ok, "a DF packet larger than the MTU got through:\n{out}");
    assert!(
        out.contains(&format!(
            "From {RA} icmp_seq=1 Frag needed and DF set (mtu = 1000)"
        )),
        "ping -M do:\n{out}"
    );
    // A's kernel learnt the path MTU from the ICMP message.
    let (_, route) = net.a.run(5, &["ip", "route", "get", B]);
    assert!(route.contains("mtu 1000"), "ip route get {B}: {route}");
    // Packets that fit still go through with DF set.
    ping_ok(
        &net.a,
        &["-c", "2", "-i", "0.2", "-M", "do", "-s", "900", B],
    );
}

/// 4. The router's own addresses answer ping: rt[0] sends the packets
///    through ToHost into the router namespace's host stack (the TAP
///    device fake0 of the device form's FromHost, which holds the first
///    interface's address), whose replies come out of FromHost and are
///    routed back. The host stack needs the other interfaces' addresses
///    and routes added to fake0 to answer on them.
#[test]
fn router_addresses_answer_through_the_host_stack() {
    require!();
    let net = Net::new(|c| c);
    let (_, link) = net.rt.run(5, &["ip", "-o", "addr", "show", "dev", "fake0"]);
    assert!(link.contains(&format!("{RA}/24")), "fake0: {link}");
    ping_ok(&net.a, &["-c", "5", "-i", "0.2", RA]);
    let to_host = net.router.read_u64("toh.count");
    let from_host = net.router.read_u64("fh.count");
    assert!(to_host >= 5, "toh.count = {to_host}");
    assert!(from_host >= 5, "fh.count = {from_host}");
    // B-side address, once the host stack knows it and B's network.
    net.rt
        .exec(&["ip", "addr", "add", &format!("{RB}/32"), "dev", "fake0"]);
    net.rt
        .exec(&["ip", "route", "add", "10.0.1.0/24", "dev", "fake0"]);
    ping_ok(&net.b, &["-c", "5", "-i", "0.2", RB]);
    // And A reaches the B-side address too.
    ping_ok(&net.a, &["-c", "3", "-i", "0.2", RB]);
}

/// A short TCP transfer A→B with iperf3.
#[test]
fn iperf3_tcp_transfer() {
    require!();
    if !have(&["iperf3", "--version"]) {
        eprintln!("skipping: iperf3 not installed (Debian package iperf3)");
        return;
    }
    let net = Net::new(|c| c);
    let mut server = Command::new("timeout")
        .args(["-k", "2", "20"])
        .args(net.b.cmd(&["iperf3", "-s", "-1", "-B", B, "-p", "5201"]))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 server");
    // Wait for the server's socket rather than for a fixed time.
    let mut listening = false;
    for _ in 0..50 {
        let (_, ss) = net.b.run(5, &["ss", "-ltnH", "sport = :5201"]);
        if ss.contains("5201") {
            listening = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(listening, "iperf3 server did not start");
    let (ok, out) = net
        .a
        .run(20, &["iperf3", "-c", B, "-p", "5201", "-n", "8M", "-J"]);
    let _ = server.wait();
    assert!(ok, "iperf3 client failed:\n{out}");
    assert!(
        out.contains("\"sum_received\"") && !out.contains("\"error\""),
        "{out}"
    );
    assert_eq!(net.router.read_u64("todevice1.drops"), 0, "ToDevice drops");
}

/// An ICMP redirect: A sends a packet for 10.0.0.3 (on A's own segment)
/// to the router, which forwards it out of the interface it arrived on
/// and tells A (ICMP type 5, "redirect host to 10.0.0.3"). No third host
/// answers on the segment; the redirect does not depend on it.
#[test]
fn redirect_for_a_packet_leaving_where_it_arrived() {
    require!();
    if !have(&["tcpdump", "--version"]) {
        eprintln!("skipping: tcpdump not installed (Debian package tcpdump)");
        return;
    }
    let net = Net::new(|c| c);
    net.a
        .exec(&["ip", "route", "add", "10.0.0.3/32", "via", RA]);
    let mut dump = Command::new("timeout")
        .args(["-k", "2", "15"])
        .args(net.a.cmd(&[
            "tcpdump",
            "-i",
            &net.a_dev,
            "-n",
            "-l",
            "-c",
            "1",
            "icmp[icmptype] == 5",
        ]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcpdump");
    // tcpdump says "listening on" once its capture is open.
    let err = dump.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains("listening on") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("tcpdump did not start");
    let _ = net.a.run(
        10,
        &["ping", "-n", "-c", "2", "-i", "0.5", "-W", "1", "10.0.0.3"],
    );
    let out = dump.wait_with_output().expect("tcpdump output");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{RA} > {A}: ICMP redirect 10.0.0.3 to host 10.0.0.3"
        )),
        "tcpdump saw: {text:?}"
    );
}
