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
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rclick_core::{Router, RouterOptions};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A unique short tag for names (interface names are at most 15 bytes).
fn tag() -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{:x}{n}", std::process::id() % 0xfffff)
}

/// Runs `cmd` under `timeout`: whether it succeeded, and stdout + stderr.
fn run_t(secs: u32, cmd: &[&str]) -> (bool, String) {
    let secs = secs.to_string();
    match Command::new("timeout")
        .args(["-k", "2", &secs])
        .args(cmd)
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Err(e) => (false, format!("{}: {e}", cmd.join(" "))),
    }
}

fn must(cmd: &[&str]) {
    let (ok, out) = run_t(10, cmd);
    assert!(ok, "{} failed: {out}", cmd.join(" "));
}

fn have(cmd: &[&str]) -> bool {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

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
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !have(&["timeout", "--version"]) {
        return Some("timeout not installed (Debian package coreutils)".into());
    }
    if !run_t(5, &["ip", "-V"]).0 {
        return Some("ip not installed (Debian package iproute2)".into());
    }
    if !run_t(5, &["ping", "-V"]).0 {
        return Some("ping not installed (Debian package iputils-ping)".into());
    }
    if let Err(e) = make_ip_conf(&["--help"]) {
        return Some(format!("make-ip-conf binary not built: {e}"));
    }
    let probe = format!("rlprobe{}", tag());
    let (ok, out) = run_t(5, &["ip", "netns", "add", &probe]);
    if !ok {
        return Some(format!("cannot create network namespaces: {out}"));
    }
    let _ = run_t(5, &["ip", "netns", "del", &probe]);
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

/// A network namespace, deleted on drop with every device inside it.
struct Netns {
    name: String,
}

impl Netns {
    fn new(prefix: &str) -> Netns {
        let name = format!("rl{prefix}{}", tag());
        must(&["ip", "netns", "add", &name]);
        let ns = Netns { name };
        ns.exec(&["ip", "link", "set", "lo", "up"]);
        // No IPv6 chatter (router solicitations) on the links.
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns
    }

    fn cmd<'a>(&'a self, cmd: &[&'a str]) -> Vec<&'a str> {
        let mut full = vec!["ip", "netns", "exec", self.name.as_str()];
        full.extend_from_slice(cmd);
        full
    }

    fn exec(&self, cmd: &[&str]) {
        must(&self.cmd(cmd));
    }

    /// Runs `cmd` in this namespace with a timeout of `secs`.
    fn run(&self, secs: u32, cmd: &[&str]) -> (bool, String) {
        run_t(secs, &self.cmd(cmd))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run_t(10, &["ip", "netns", "del", &self.name]);
    }
}

/// Moves the calling thread into namespace `name`.
fn enter(name: &str) {
    let f = std::fs::File::open(format!("/run/netns/{name}")).expect("open netns");
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a namespace descriptor; affects only this thread.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
}

type Reply = mpsc::Sender<Result<String, String>>;

/// A router running in its own thread inside a namespace.
struct Running {
    stop: Arc<AtomicBool>,
    req: mpsc::Sender<(String, Reply)>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    fn start(ns: &Netns, config: &str) -> Running {
        let text = config.to_string();
        let name = ns.name.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (req_tx, req_rx) = mpsc::channel::<(String, Reply)>();
        let thread = std::thread::spawn(move || {
            enter(&name);
            let reg = rclick_elements::registry();
            let outcome = rclick_lang::parse_router(
                &text,
                "router_links",
                &reg,
                &rclick_lang::ParseOptions::default(),
            );
            let spec = match outcome.spec {
                Some(s) if !outcome.has_errors() => s,
                _ => {
                    let _ = ready_tx.send(Err(format!("{:?}", outcome.diagnostics)));
                    return;
                }
            };
            let opts = RouterOptions {
                capture_chatter: true,
                ..Default::default()
            };
            let mut router = match Router::new(spec, &text, &reg, &opts) {
                Ok(r) => r,
                Err(d) => {
                    let _ = ready_tx.send(Err(format!("{d:?}")));
                    return;
                }
            };
            let _ = ready_tx.send(Ok(()));
            while !stop2.load(Ordering::Relaxed) {
                router.run_limited(4);
                while let Ok((h, reply)) = req_rx.try_recv() {
                    let _ = reply.send(router.read_handler(&h, None));
                }
            }
            router.cleanup();
        });
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("router failed: {e}"),
            Err(e) => panic!("router thread: {e}"),
        }
        Running {
            stop,
            req: req_tx,
            thread: Some(thread),
        }
    }

    fn read(&self, handler: &str) -> String {
        let (tx, rx) = mpsc::channel();
        self.req
            .send((handler.to_string(), tx))
            .expect("router thread gone");
        rx.recv_timeout(Duration::from_secs(5))
            .expect("router thread answers")
            .unwrap_or_else(|e| panic!("handler {handler}: {e}"))
            .trim()
            .to_string()
    }

    fn read_u64(&self, handler: &str) -> u64 {
        let v = self.read(handler);
        v.parse()
            .unwrap_or_else(|_| panic!("{handler} = {v:?}, not a number"))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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

fn ping_loss(out: &str) -> Option<f64> {
    let i = out.find("% packet loss")?;
    let start = out[..i].rfind([' ', ','])? + 1;
    out[start..i].parse().ok()
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
