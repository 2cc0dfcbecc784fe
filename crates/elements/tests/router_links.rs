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
//! iperf3 TCP transfer, and an ICMP redirect to a third host C on A's
//! segment (for that test A, C and the router share a bridge), seen by
//! tcpdump and acted on by Linux on A.
//!
//! Needs root, iproute2, iputils-ping and coreutils' `timeout`; the
//! traceroute, iperf3 and tcpdump parts need those Debian packages. Without
//! a tool the test (or the part) prints why it is skipped and passes. The
//! `make-ip-conf` binary must be built (`cargo build --bins`), as for
//! ip_router.rs. Every namespace is deleted when its guard drops, also
//! when a test fails; every external command runs under `timeout`.

use std::process::{Command, Stdio};
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
    if let Some(why) = ping_namespace_skip_reason() {
        return Some(why);
    }
    if let Err(e) = make_ip_conf(&["--help"]) {
        return Some(format!("make-ip-conf binary not built: {e}"));
    }
    None
}

macro_rules! require {
    () => {
        skip_if!(skip_reason())
    };
}

const A: &str = "10.0.0.2";
const B: &str = "10.0.1.2";
const RA: &str = "10.0.0.1";
const RB: &str = "10.0.1.1";
/// The third host on A's segment, and an address behind it.
const C: &str = "10.0.0.3";
const FAR: &str = "10.9.0.5";

/// A third host on A's segment (see `Net::with_third_host`).
struct Third {
    ns: Netns,
    dev: String,
}

/// Hosts A and B, the router namespace between them, and the router;
/// optionally a third host C on A's segment. Field order is drop order:
/// the router stops before its namespace goes.
struct Net {
    router: Running,
    a: Netns,
    b: Netns,
    rt: Netns,
    /// A's link device.
    a_dev: String,
    c: Option<Third>,
    /// The bridge joining A, C and the router's interface 0.
    _seg: Option<Segment>,
}

impl Net {
    /// Builds the topology and starts the make-ip-conf router; `edit`
    /// may change its configuration text first. A and the router's
    /// interface 0 share a veth pair.
    fn new(edit: impl FnOnce(String) -> String) -> Net {
        Net::build(false, edit)
    }

    /// As `new`, but A, the router's interface 0 and a third host C
    /// (10.0.0.3/24) are on one Ethernet segment, a bridge in a namespace
    /// of its own.
    fn with_third_host(edit: impl FnOnce(String) -> String) -> Net {
        Net::build(true, edit)
    }

    fn build(third: bool, edit: impl FnOnce(String) -> String) -> Net {
        let t = tag();
        let (a, b, rt) = (Netns::new("a"), Netns::new("b"), Netns::new("r"));
        for ns in [&a, &b, &rt] {
            ns.disable_ipv6();
        }
        let (a_dev, ra) = (format!("ha{t}"), format!("ra{t}"));
        let (b_dev, rb) = (format!("hb{t}"), format!("rb{t}"));
        let mut c = None;
        let mut seg = None;
        if third {
            let s = Segment::new("s");
            let c_ns = Netns::new("c");
            c_ns.disable_ipv6();
            let c_dev = format!("hc{t}");
            s.attach(&a, &a_dev, None);
            s.attach(&c_ns, &c_dev, Some(&format!("{C}/24")));
            s.attach(&rt, &ra, None);
            rt.exec(&["ip", "link", "set", &ra, "arp", "off"]);
            c = Some(Third {
                ns: c_ns,
                dev: c_dev,
            });
            seg = Some(s);
        }
        // Point-to-point links: B's, and A's unless A is on the segment.
        let links = [(&a, &a_dev, &ra), (&b, &b_dev, &rb)];
        for &(h, hd, rd) in &links[usize::from(third)..] {
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
            c,
            _seg: seg,
        }
    }
}

/// The Ethernet address of `dev` in `ns`.
fn mac_of(ns: &Netns, dev: &str) -> String {
    let (_, out) = ns.run(5, &["cat", &format!("/sys/class/net/{dev}/address")]);
    out.trim().to_string()
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
        eprintln!("SKIP PART: traceroute check: install the Debian package traceroute");
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
        eprintln!("SKIP: iperf3 not installed (Debian package iperf3)");
        return;
    }
    let net = Net::new(|c| c);
    iperf3_through(&net);
}

/// An 8 MB iperf3 TCP transfer from A to B through the router.
fn iperf3_through(net: &Net) {
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

/// Adds `keywords` to every FromDevice and ToDevice of a configuration.
fn with_device_keywords(conf: &str, keywords: &str) -> String {
    let mut out = String::with_capacity(conf.len());
    let mut rest = conf;
    while let Some(at) = ["FromDevice(", "ToDevice("]
        .iter()
        .filter_map(|k| rest.find(k).map(|i| i + k.len()))
        .min()
    {
        let close = at + rest[at..].find(')').expect("closing parenthesis");
        out.push_str(&rest[..close]);
        out.push_str(keywords);
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// The same router on AF_XDP (METHOD XDP on every device): ping both
/// ways, the router's own address through ToHost, and an iperf3 transfer.
#[test]
fn ip_router_on_af_xdp() {
    require!();
    let net = Net::new(|c| with_device_keywords(&c, ", METHOD XDP"));
    let (_, links) = net.rt.run(5, &["ip", "-d", "link", "show"]);
    assert_eq!(
        links.matches("prog/xdp").count(),
        2,
        "an XDP program on each router device:\n{links}"
    );
    ping_ok(&net.a, &["-c", "10", "-i", "0.05", B]);
    ping_ok(&net.b, &["-c", "10", "-i", "0.05", A]);
    ping_ok(&net.a, &["-c", "3", "-i", "0.05", RA]);
    if have(&["iperf3", "--version"]) {
        iperf3_through(&net);
    } else {
        eprintln!("SKIP PART: iperf3 check: iperf3 not installed (Debian package iperf3)");
    }
}

/// One packet of tcpdump's `-v` text output: its lines joined.
fn packets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        match out.last_mut() {
            Some(p) if line.starts_with([' ', '\t']) => {
                p.push(' ');
                p.push_str(line.trim());
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

/// A real ICMP redirect between three hosts. A (10.0.0.2), C (10.0.0.3)
/// and the router's interface 0 (10.0.0.1) share one Ethernet segment (a
/// bridge); the router's table sends 10.9.0.0/24 via C, which holds
/// 10.9.0.5. A pings 10.9.0.5 through its default route, the router. The
/// router forwards each request back out of interface 0 to C and tells A
/// (ICMP type 5, "redirect 10.9.0.5 to host 10.0.0.3"): the PaintTee on
/// that forwarding path sees the packet leave where it arrived, and
/// ICMPError takes the gateway from the destination annotation the
/// lookup set. C answers A directly. Linux on A accepts the redirect
/// (accept_redirects 1; secure_redirects 0 because C is not a default
/// gateway, which matters only if shared_media is 0): the route to
/// 10.9.0.5 becomes `via 10.0.0.3 ... redirected`, and the next requests
/// reach C straight from A's Ethernet address with TTL 64 instead of
/// from the router's with TTL 63. Linux acts on a redirect only once it
/// has a valid neighbour entry for the new gateway (otherwise it just
/// resolves it), so the first redirect may be ignored and the second one
/// take effect.
#[test]
fn redirect_for_a_packet_leaving_where_it_arrived() {
    require!();
    if !have(&["tcpdump", "--version"]) {
        eprintln!("SKIP: tcpdump not installed (Debian package tcpdump)");
        return;
    }
    let net = Net::with_third_host(|conf| {
        let old = "       10.0.0.0/24 1,\n";
        assert!(conf.contains(old), "no {old:?} in the configuration");
        conf.replace(old, &format!("{old}       10.9.0.0/24 {C} 1,\n"))
    });
    let c = net.c.as_ref().expect("third host");
    let route = net.router.read_param("rt.lookup", FAR);
    assert_eq!(route, format!("1 {C}"), "the router's route to {FAR}");
    c.ns.exec(&["ip", "addr", "add", &format!("{FAR}/32"), "dev", "lo"]);
    let dev_conf = format!("net.ipv4.conf.{}", net.a_dev);
    for key in [
        "net.ipv4.conf.all.accept_redirects=1",
        &format!("{dev_conf}.accept_redirects=1"),
        "net.ipv4.conf.all.secure_redirects=0",
        &format!("{dev_conf}.secure_redirects=0"),
    ] {
        net.a.exec(&["sysctl", "-qw", key]);
    }
    let (_, before) = net.a.run(5, &["ip", "route", "get", FAR]);
    assert!(before.contains(&format!("via {RA}")), "before: {before}");
    let a_mac = mac_of(&net.a, &net.a_dev);
    let c_mac = mac_of(&c.ns, &c.dev);
    let r_mac = "02:00:00:00:00:01";

    let redirects = Tcpdump::start(
        &net.a,
        30,
        &["-i", &net.a_dev, "-n", "-l", "icmp[icmptype] == 5"],
    );
    let at_c = Tcpdump::start(
        &c.ns,
        30,
        &[
            "-i",
            &c.dev,
            "-n",
            "-l",
            "-e",
            "-v",
            "-t",
            "icmp[icmptype] == 8",
        ],
    );
    ping_ok(&net.a, &["-c", "5", "-i", "0.3", FAR]);
    let redirect_text = redirects.stop();
    let c_text = at_c.stop();

    // A saw the router's redirects naming C.
    let want = format!("{RA} > {A}: ICMP redirect {FAR} to host {C}");
    let n_redirects = redirect_text.lines().filter(|l| l.contains(&want)).count();
    assert!(n_redirects >= 1, "tcpdump on A saw: {redirect_text:?}");
    // Linux on A took it: a cached, redirected route via C.
    let (_, after) = net.a.run(5, &["ip", "route", "get", FAR]);
    assert!(
        after.contains(&format!("{FAR} via {C} dev {}", net.a_dev)) && after.contains("redirected"),
        "ip route get {FAR} after the redirect: {after}"
    );
    // C got every request: first forwarded by the router (its Ethernet
    // source, TTL decremented), then, once A acted on the redirect,
    // straight from A. The switch happens once and for good.
    let requests: Vec<String> = packets(&c_text)
        .into_iter()
        .filter(|p| p.contains(&format!("{A} > {FAR}: ICMP echo request")))
        .collect();
    assert_eq!(requests.len(), 5, "tcpdump on C saw:\n{c_text}");
    let via_router =
        |p: &String| p.starts_with(&format!("{r_mac} > {c_mac}")) && p.contains("ttl 63,");
    let direct = |p: &String| p.starts_with(&format!("{a_mac} > {c_mac}")) && p.contains("ttl 64,");
    let k = requests.iter().take_while(|p| via_router(p)).count();
    assert!(
        k >= 1 && k < requests.len() && requests[k..].iter().all(direct),
        "requests at C (router {r_mac}, A {a_mac}, C {c_mac}):\n{}",
        requests.join("\n")
    );
    // One redirect for each request the router forwarded, none after.
    assert_eq!(n_redirects, k, "redirects: {redirect_text}");
}
