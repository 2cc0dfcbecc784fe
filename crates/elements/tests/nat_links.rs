//! conf/home-gateway.click on real links, run by the `rclick` binary as a
//! user would run it: LAN hosts A (192.168.1.10) and B (192.168.1.20) on a
//! bridge with the gateway's LAN device, and a WAN server S (192.0.2.100)
//! on a veth to the gateway's WAN device; the gateway's public address is
//! 192.0.2.1. Real Linux tools check it: an HTTP fetch of a 16 MB file
//! (`python3 -m http.server` on S, `curl` on A), byte-exact; ping through
//! the NAT; a UDP datagram to a closed port of S whose ICMP port
//! unreachable comes back translated to A; iperf3 TCP both ways (when
//! iperf3 is installed); endpoint-independent mapping (A's port, taken by
//! B first, gets one external port for every destination, UDP and TCP);
//! two hosts pinging with one echo identifier; the inbound firewall
//! dropping private sources from the WAN; a "fragmentation needed" from a
//! real router on the WAN side (S, routing to a second server over an MTU
//! 1280 link) reaching A; and with the Python Manager
//! (clients/python/rclick_manager.py) beside the router: a port forward
//! admitted at run time (S fetches from B through the public address), the
//! same forward reached from A through the public address (hairpinning,
//! from A's external address and port), an unforwarded port refused, an
//! outbound port blocked, and a download that stays byte-exact while the
//! Manager rewrites mappings and filter rules under it.
//!
//! Needs root, iproute2, coreutils' `timeout`, python3, curl and the
//! `rclick` binary (`cargo build -p rclick`); without one the test prints
//! why it is skipped and passes. Namespaces are deleted when their guards
//! drop; every background process is killed when its guard drops.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

use common::netns::*;

const GW_LAN_ETH: &str = "02:00:00:00:01:01";
const GW_WAN_ETH: &str = "02:00:00:00:02:01";
const WAN_IP: &str = "192.0.2.1";
const SRV: &str = "192.0.2.100";
const A_IP: &str = "192.168.1.10";
const B_IP: &str = "192.168.1.20";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The rclick binary: $RCLICK_BIN (e.g. a release build, for the
/// comparison with Linux), else the one next to this test's target
/// directory.
fn rclick_bin() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("RCLICK_BIN") {
        let b = PathBuf::from(b);
        return b.exists().then_some(b);
    }
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("rclick");
    bin.exists().then_some(bin)
}

fn skip_reason() -> Option<String> {
    if !have(&["timeout", "--version"]) {
        return Some("timeout not installed (Debian package coreutils)".into());
    }
    if let Some(why) = namespace_skip_reason() {
        return Some(why);
    }
    if !have(&["python3", "--version"]) {
        return Some("python3 not installed".into());
    }
    if !have(&["curl", "--version"]) {
        return Some("curl not installed (Debian package curl)".into());
    }
    if rclick_bin().is_none() {
        return Some("the rclick binary is not built (cargo build -p rclick)".into());
    }
    None
}

/// The topology, the router and the web servers.
struct Net {
    a: Netns,
    b: Netns,
    s: Netns,
    gw: Netns,
    _lan: Segment,
    dir: PathBuf,
    router: Option<Background>,
    servers: Vec<Background>,
    /// The file the web servers serve (as `/big`).
    big: Vec<u8>,
    /// Whether the sniffer device ntsniff exists.
    sniff: bool,
}

impl Net {
    fn new() -> Net {
        let dir = std::env::temp_dir().join(format!("rclick-nt-nat-{}", tag()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut big = vec![0u8; 16 << 20];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for chunk in big.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = chunk.len();
            chunk.copy_from_slice(&x.to_le_bytes()[..n]);
        }
        std::fs::write(dir.join("big"), &big).unwrap();
        let lan = Segment::new("ntl");
        let a = Netns::new("nta");
        let b = Netns::new("ntb");
        let s = Netns::new("nts");
        let gw = Netns::new("ntg");
        for ns in [&a, &b, &s, &gw] {
            ns.disable_ipv6();
        }
        lan.attach(&a, "ntA", Some("192.168.1.10/24"));
        lan.attach(&b, "ntB", Some("192.168.1.20/24"));
        lan.attach(&gw, "ntlan", None);
        veth(&s, "ntsrv", Some("192.0.2.100/24"), &gw, "ntwan");
        for (dev, mac) in [("ntlan", GW_LAN_ETH), ("ntwan", GW_WAN_ETH)] {
            gw.exec(&["ip", "link", "set", dev, "address", mac]);
        }
        for ns in [&a, &b] {
            ns.exec(&["ip", "route", "add", "default", "via", "192.168.1.1"]);
        }
        // The sniffer tap's device (an ifb: this kernel may lack dummy).
        let sniff = gw
            .try_exec(&["ip", "link", "add", "ntsniff", "type", "ifb"])
            .and_then(|_| gw.try_exec(&["ip", "link", "set", "ntsniff", "mtu", "65535", "up"]))
            .is_ok();
        Net {
            a,
            b,
            s,
            gw,
            _lan: lan,
            dir,
            router: None,
            servers: Vec::new(),
            big,
            sniff,
        }
    }

    /// Starts the gateway (and waits for its control socket).
    fn start_router(&mut self) {
        self.start_router_with(&[]);
    }

    /// [`Net::start_router`] with more driver options (`-R`, say).
    fn start_router_with(&mut self, options: &[&str]) {
        let conf = root().join("conf/home-gateway.click");
        let bin = rclick_bin().unwrap();
        let log = self.dir.join("rclick.log");
        let mut args = vec![
            bin.to_str().unwrap().to_string(),
            "-p".into(),
            "7777".into(),
        ];
        args.extend(options.iter().map(|o| o.to_string()));
        args.extend(
            [
                conf.to_str().unwrap(),
                "LAN_DEV=ntlan",
                "WAN_DEV=ntwan",
                &format!("LAN_ETH={GW_LAN_ETH}"),
                &format!("WAN_ETH={GW_WAN_ETH}"),
                "SNIFF_DEV=ntsniff",
            ]
            .map(String::from),
        );
        let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let mut r = Background::start(&self.gw, log, &argv);
        let t = Instant::now();
        loop {
            assert!(r.alive(), "rclick exited: {}", r.output());
            if self.call("rw.table_size").is_ok() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "no control socket: {}",
                r.output()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        self.router = Some(r);
    }

    /// Reads a handler of the running gateway.
    fn call(&self, handler: &str) -> Result<String, String> {
        let bin = rclick_bin().unwrap();
        self.gw
            .try_exec(&[bin.to_str().unwrap(), "call", "-t", "5", handler])
            .map(|s| s.trim().to_string())
    }

    /// `python3 -m http.server PORT` on `ns`, serving the test directory.
    fn web_server(&mut self, ns_is_b: bool, bind: &str, port: &str) {
        let ns = if ns_is_b { &self.b } else { &self.s };
        let log = self.dir.join(format!("http-{port}-{bind}.log"));
        let dir = self.dir.to_str().unwrap().to_string();
        // http.server's own startup looks its address up in the DNS
        // (getfqdn), which waits for timeouts where the default route
        // leads nowhere: a server without that lookup.
        let script = format!(
            "import functools, http.server, socketserver
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = '{bind}', {port}
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory={dir:?})
S(('{bind}', {port}), h).serve_forever()
"
        );
        let srv = Background::start(ns, log, &["python3", "-c", &script]);
        self.servers.push(srv);
        // Wait until it listens.
        let t = Instant::now();
        let mut last = String::new();
        while t.elapsed() < Duration::from_secs(10) {
            let probe =
                format!("import socket; socket.create_connection(('{bind}', {port}), 1).close()");
            let (ok, out) = ns.run(5, &["python3", "-c", &probe]);
            if ok {
                return;
            }
            last = out;
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "http.server on {bind}:{port} did not start: {last}\n{} (alive: {:?})",
            self.servers.last().map(|s| s.output()).unwrap_or_default(),
            self.servers.last_mut().map(|s| s.alive()),
        );
    }

    /// Fetches `url` with curl on `ns` into a file; the bytes, or why not.
    fn fetch(&self, ns: &Netns, url: &str, name: &str, secs: u32) -> Result<Vec<u8>, String> {
        let out = self.dir.join(name);
        let _ = std::fs::remove_file(&out);
        let (ok, text) = ns.run(
            secs + 5,
            &[
                "curl",
                "-sS",
                "--max-time",
                &secs.to_string(),
                "-o",
                out.to_str().unwrap(),
                url,
            ],
        );
        if !ok {
            return Err(text);
        }
        std::fs::read(&out).map_err(|e| e.to_string())
    }

    fn router_log(&self) -> String {
        self.router.as_ref().map(|r| r.output()).unwrap_or_default()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.servers.clear();
        self.router = None;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn same(got: &[u8], want: &[u8]) -> bool {
    got.len() == want.len() && got == want
}

#[test]
fn lan_host_reaches_the_wan_through_the_napt() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.start_router();
    net.web_server(false, SRV, "8000");

    // HTTP: 16 MB, byte-exact, seen by S as coming from the public address.
    let t = Instant::now();
    let got = net
        .fetch(&net.a, &format!("http://{SRV}:8000/big"), "a-big", 120)
        .unwrap_or_else(|e| panic!("fetch failed: {e}\n{}", net.router_log()));
    let secs = t.elapsed().as_secs_f64();
    assert!(same(&got, &net.big), "the fetched file differs");
    println!(
        "HTTP fetch of {} MB through rclick: {:.2} s",
        net.big.len() >> 20,
        secs
    );
    let access = net.servers[0].output();
    assert!(
        access.contains(&format!("{WAN_IP} - - ")) && !access.contains(A_IP),
        "S saw: {access}"
    );
    let table = net.call("rw.tcp_table").unwrap();
    assert!(
        table.contains(&format!("({A_IP}, ")) && table.contains(&format!("({WAN_IP}, ")),
        "{table}"
    );

    // The gateway answers pings on both its addresses.
    let (ok, out) = net.a.run(
        15,
        &["ping", "-c", "2", "-i", "0.2", "-W", "2", "192.168.1.1"],
    );
    assert!(ok && ping_loss(&out) == Some(0.0), "{out}");
    let (ok, out) = net
        .s
        .run(15, &["ping", "-c", "2", "-i", "0.2", "-W", "2", WAN_IP]);
    assert!(ok && ping_loss(&out) == Some(0.0), "{out}");
    // Ping through the NAT (ICMPPingRewriter).
    let (ok, out) = net
        .a
        .run(15, &["ping", "-c", "3", "-i", "0.2", "-W", "2", SRV]);
    assert!(ok && ping_loss(&out) == Some(0.0), "{out}");
    assert!(net.call("ping.table").unwrap().contains(A_IP));

    // A UDP datagram to a closed port of S: the port unreachable comes back
    // translated (ICMPRewriter) and Linux on A reports it to the socket.
    let probe = format!(
        "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect(('{SRV}', 9999))
s.send(b'anyone?')
try:
    s.recv(100)
    print('answer')
except ConnectionRefusedError:
    print('refused')
except socket.timeout:
    print('timeout')
"
    );
    let (_, out) = net.a.run(10, &["python3", "-c", &probe]);
    assert_eq!(out.trim(), "refused", "{}", net.router_log());

    // traceroute (UDP probes): hop 1 is the gateway's time exceeded, hop 2
    // S's port unreachable, translated back through the probe's mapping.
    if have(&["traceroute", "--version"]) {
        let (ok, out) = net.a.run(
            30,
            &["traceroute", "-n", "-q", "1", "-w", "2", "-m", "4", SRV],
        );
        assert!(ok, "{out}");
        let hops: Vec<&str> = out.lines().skip(1).collect();
        assert!(
            hops.len() == 2 && hops[0].contains("192.168.1.1 ") && hops[1].contains(SRV),
            "{out}"
        );
    } else {
        println!("traceroute part skipped: traceroute not installed");
    }

    // Path MTU discovery: with a 4000-byte MTU on the LAN (A, the bridge,
    // the gateway's LAN device), A's 2000-byte DF ping does not fit the
    // gateway's MTU 1500 on the WAN; the gateway's "fragmentation needed"
    // reaches A through the ICMP translator (it is about the translated
    // packet).
    for link in net
        ._lan
        .ns
        .try_exec(&["ip", "-o", "link", "show"])
        .unwrap()
        .lines()
    {
        if let Some(name) = link
            .split(": ")
            .nth(1)
            .map(|n| n.split('@').next().unwrap_or(n))
        {
            if name != "lo" {
                net._lan
                    .ns
                    .exec(&["ip", "link", "set", name, "mtu", "4000"]);
            }
        }
    }
    net.a.exec(&["ip", "link", "set", "ntA", "mtu", "4000"]);
    net.gw.exec(&["ip", "link", "set", "ntlan", "mtu", "4000"]);
    let (_, out) = net.a.run(
        15,
        &[
            "ping", "-c", "2", "-i", "0.3", "-W", "2", "-M", "do", "-s", "2000", SRV,
        ],
    );
    assert!(
        out.contains("mtu = 1500") || out.contains("mtu=1500"),
        "no fragmentation needed: {out}\n{:?} {:?} {:?} {:?}",
        net.call("icmp_in.drops"),
        net.call("ping.table"),
        net.call("lan_in.count"),
        net.call("to_wan.fragments")
    );
    // Without DF the gateway fragments, and S answers.
    let (ok, out) = net.a.run(
        15,
        &[
            "ping", "-c", "2", "-i", "0.3", "-W", "2", "-M", "dont", "-s", "2000", SRV,
        ],
    );
    assert!(ok && ping_loss(&out) == Some(0.0), "{out}");
    net.a.exec(&["ip", "link", "set", "ntA", "mtu", "1500"]);

    // Two LAN hosts to the same server get distinct external ports, even
    // from the same source port (the second cannot keep it).
    let mut external = Vec::new();
    for (ns, host) in [(&net.a, A_IP), (&net.b, B_IP)] {
        let url = format!("http://{SRV}:8000/");
        let (ok, out) = ns.run(
            25,
            &[
                "curl",
                "-sS",
                "-o",
                "/dev/null",
                "--max-time",
                "20",
                "--local-port",
                "40000",
                &url,
            ],
        );
        assert!(ok, "fetch from {host}:40000: {out}");
        let table = net.call("rw.tcp_table").unwrap();
        let key = format!("({host}, 40000, {SRV}, 8000) => ({WAN_IP}, ");
        let port: u16 = table
            .lines()
            .find_map(|l| l.strip_prefix(&key)?.split(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no mapping of {host}:40000: {table}"));
        external.push(port);
    }
    assert_ne!(external[0], external[1], "A and B share an external port");

    // iperf3 TCP both ways, when installed.
    if have(&["iperf3", "--version"]) {
        let log = net.dir.join("iperf3.log");
        let mut server = Background::start(&net.s, log, &["iperf3", "-s", "-B", SRV]);
        wait_listening(&net.s, &mut server, 5201);
        for reverse in [false, true] {
            let mut cmd = vec!["iperf3", "-c", SRV, "-t", "3", "-f", "m"];
            if reverse {
                cmd.push("-R");
            }
            let (ok, out) = net.a.run(30, &cmd);
            assert!(ok, "iperf3 {cmd:?}: {out}");
            let rate = out
                .lines()
                .filter(|l| l.contains("receiver"))
                .filter_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let i = w.iter().position(|x| *x == "Mbits/sec")?;
                    w.get(i - 1)?.parse::<f64>().ok()
                })
                .next()
                .unwrap_or(0.0);
            assert!(rate > 0.0, "{out}");
            println!(
                "iperf3 TCP through rclick ({}): {rate} Mbit/s",
                if reverse { "WAN to LAN" } else { "LAN to WAN" }
            );
        }
        // UDP both ways at a modest rate: datagrams arrive through the
        // mapping (the reverse direction only through it).
        for reverse in [false, true] {
            let mut cmd = vec!["iperf3", "-c", SRV, "-u", "-b", "20M", "-t", "2", "-J"];
            if reverse {
                cmd.push("-R");
            }
            let (ok, out) = net.a.run(30, &cmd);
            assert!(ok, "iperf3 {cmd:?}: {out}");
            let field = |name: &str| -> Option<f64> {
                let sum = out.rfind("\"sum\"")?;
                let rest = &out[sum..];
                let at = rest.find(&format!("\"{name}\":"))? + name.len() + 3;
                rest[at..]
                    .trim_start()
                    .split([',', '\n', '}'])
                    .next()?
                    .trim()
                    .parse()
                    .ok()
            };
            let (packets, lost) = (field("packets").unwrap_or(0.0), field("lost_packets"));
            assert!(packets > 0.0, "{out}");
            println!(
                "iperf3 UDP 20 Mbit/s through rclick ({}): {packets} datagrams, {} lost",
                if reverse { "WAN to LAN" } else { "LAN to WAN" },
                lost.map_or("?".to_string(), |l| l.to_string())
            );
        }
        server.stop();
    } else {
        println!("iperf3 part skipped: iperf3 not installed (Debian package iperf3)");
    }
    let router = net.router.take().unwrap();
    assert!(router.alive_check(), "rclick died");
    let log = router.stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// Waits until `server` listens on TCP `port` in `ns` (`ss`), rather than
/// a fixed pause a loaded machine may outlast (the client then fails with
/// "connection refused").
fn wait_listening(ns: &Netns, server: &mut Background, port: u16) {
    let t = Instant::now();
    let want = format!(":{port}");
    loop {
        let (_, out) = ns.run(5, &["ss", "-Hltn"]);
        if out.lines().any(|l| {
            l.split_whitespace()
                .nth(3)
                .is_some_and(|a| a.ends_with(&want))
        }) {
            return;
        }
        assert!(server.alive(), "server exited: {}", server.output());
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "nothing listens on port {port}: {out}\n{}",
            server.output()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

trait AliveCheck {
    fn alive_check(&self) -> bool;
}

impl AliveCheck for Background {
    fn alive_check(&self) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(self.pid() as i32, 0) == 0 }
    }
}

/// Starts the Python Manager in the gateway's namespace.
fn manager(net: &Net, extra: &[&str]) -> Background {
    let script = root().join("clients/python/rclick_manager.py");
    let mut cmd = vec![
        "python3",
        script.to_str().unwrap(),
        "--control",
        "127.0.0.1:7777",
        "--listen",
        "127.0.0.1:7779",
        "--wan-ip",
        WAN_IP,
        "--log",
    ];
    cmd.extend_from_slice(extra);
    let cmd: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    let argv: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
    let mut m = Background::start(&net.gw, net.dir.join("manager.log"), &argv);
    let t = Instant::now();
    while !m.output().contains("manager ready") {
        assert!(m.alive(), "manager exited: {}", m.output());
        assert!(t.elapsed() < Duration::from_secs(10), "manager not ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    m
}

#[test]
fn the_manager_forwards_a_port_at_run_time() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.start_router();
    net.web_server(true, B_IP, "8000");
    net.web_server(false, SRV, "8000");
    net.web_server(false, SRV, "8001");
    // Before the Manager blocks it, port 8001 of S is reachable.
    net.fetch(&net.a, &format!("http://{SRV}:8001/"), "open", 10)
        .unwrap();

    // Without a Manager, S cannot reach B through the public address.
    let r = net.fetch(&net.s, &format!("http://{WAN_IP}:8080/big"), "none", 3);
    assert!(r.is_err(), "reached B without a port forward");

    let m = manager(
        &net,
        &[
            "--forward",
            "tcp:8080=192.168.1.20:8000",
            "--block-outbound",
            "tcp:8001",
        ],
    );
    // The sniffer tap shows what the Manager gets, without the host stack.
    let dump = net
        .sniff
        .then(|| Tcpdump::start(&net.gw, 120, &["-l", "-n", "-i", "ntsniff", "tcp"]));
    // What reaches B of S's connections: the first SYN comes through the
    // Manager (sent back after the mapping is installed), yet crosses the
    // gateway once: its TTL is decremented once (S sends 64).
    let b_dump = Tcpdump::start(
        &net.b,
        120,
        &[
            "-l",
            "-n",
            "-v",
            "-i",
            "ntB",
            "tcp dst port 8000 and tcp[13] & 2 != 0",
        ],
    );
    // S fetches B's file through the forward admitted by the Manager.
    let got = net
        .fetch(&net.s, &format!("http://{WAN_IP}:8080/big"), "s-big", 120)
        .unwrap_or_else(|e| panic!("forwarded fetch failed: {e}\n{}", m.output()));
    assert!(same(&got, &net.big), "the forwarded file differs");
    let syns = b_dump.stop();
    assert!(
        syns.contains("ttl 63") && !syns.contains("ttl 62"),
        "B saw the SYN with: {syns}"
    );
    // B saw S's own address (a port forward keeps the source).
    assert!(net.servers[0].output().contains(&format!("{SRV} - - ")));
    match dump {
        Some(d) => {
            let seen = d.stop();
            assert!(
                seen.contains(&format!("{SRV}."))
                    && seen.contains(&format!("> {WAN_IP}.8080: Flags [S]")),
                "the sniffer saw: {seen}"
            );
        }
        None => println!("sniffer part skipped: no ifb device"),
    }

    // Hairpinning: A reaches B's forwarded port through the public
    // address; B sees A's external address and port as the source (RFC
    // 4787 REQ-9): the port of A's mapping, not A's own.
    let b_hairpin = Tcpdump::start(
        &net.b,
        120,
        &[
            "-l",
            "-n",
            "-i",
            "ntB",
            "tcp dst port 8000 and tcp[13] & 2 != 0",
        ],
    );
    let got = net
        .fetch(
            &net.a,
            &format!("http://{WAN_IP}:8080/big"),
            "a-hairpin",
            60,
        )
        .unwrap_or_else(|e| panic!("hairpin fetch failed: {e}\n{}", m.output()));
    assert!(same(&got, &net.big), "the hairpinned file differs");
    assert!(net.servers[0].output().contains(&format!("{WAN_IP} - - ")));
    let syns = b_hairpin.stop();
    let table = net.call("rw.tcp_table").unwrap();
    // "(A_IP, P, WAN_IP, 8080) => (WAN_IP, Q, WAN_IP, 8080) ...": Q.
    let a_external: u16 = table
        .lines()
        .filter(|l| l.starts_with(&format!("({A_IP}, ")))
        .find_map(|l| {
            let rest = l
                .split_once(&format!(", {WAN_IP}, 8080) => ({WAN_IP}, "))?
                .1;
            rest.split(',').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no mapping of A's hairpinned connection: {table}"));
    assert!(
        syns.contains(&format!("{WAN_IP}.{a_external} > {B_IP}.8000: Flags [S]")),
        "B saw the hairpinned SYN as: {syns}\n(A's mapping: {a_external}; {table})"
    );

    // A port nobody forwards stays closed.
    let r = net.fetch(&net.s, &format!("http://{WAN_IP}:8081/"), "closed", 3);
    assert!(r.is_err(), "reached an unforwarded port");
    // The blocked outbound port: the outbound IPFilter drops A's SYNs.
    let r = net.fetch(&net.a, &format!("http://{SRV}:8001/"), "blocked", 3);
    assert!(r.is_err());
    assert!(net
        .call("outbound.config")
        .unwrap()
        .contains("deny tcp and dst port 8001"));

    // While A downloads, the Manager's library rewrites mappings and
    // filter rules many times: nothing of the download is lost.
    let dir = net.dir.clone();
    let a_name = net.a.name.clone();
    let url = format!("http://{SRV}:8000/big");
    let out = dir.join("a-during");
    let dl = std::thread::spawn(move || {
        run_t(
            125,
            &[
                "ip",
                "netns",
                "exec",
                &a_name,
                "curl",
                "-sS",
                "--limit-rate",
                "4M",
                "--max-time",
                "120",
                "-o",
                out.to_str().unwrap(),
                &url,
            ],
        )
    });
    let lib = root().join("clients/python");
    let churn = format!(
        "import sys, time
sys.path.insert(0, {lib:?})
from rclick_manager import Manager
from rclick_control import ControlSocket
m = Manager(ControlSocket('127.0.0.1', 7777), listen=('127.0.0.1', 0), wan_ip='{WAN_IP}')
n = 0
t = time.time()
while time.time() - t < 2.5:
    for i in range(20):
        flow = ('198.51.100.%d' % (i + 1), 40000 + n % 1000, '{WAN_IP}', 9000 + i)
        m.add_mapping('udp', flow, (flow[0], flow[1], '{B_IP}', 9000), outputs=(1, 0))
        m.remove_mapping('udp', flow)
        n += 1
    m.set_inbound_rules(['deny src net 203.0.113.0/24', 'allow all'])
    m.set_inbound_rules(['allow all'])
print(n)
"
    );
    let (ok, out) = net.gw.run(30, &["python3", "-c", &churn]);
    assert!(ok, "{out}");
    let changes: u64 = out.trim().parse().unwrap_or(0);
    assert!(changes > 50, "only {changes} changes");
    let (ok, text) = dl.join().unwrap();
    assert!(ok, "download during reconfiguration failed: {text}");
    let got = std::fs::read(dir.join("a-during")).unwrap();
    assert!(
        same(&got, &net.big),
        "the download during reconfiguration differs"
    );
    println!("{changes} mappings added and removed during a 16 MB download");

    let mlog = m.stop();
    println!("Manager log:\n{mlog}");
    assert!(
        mlog.contains(&format!("admit tcp {SRV} ")) && mlog.contains("refuse tcp"),
        "{mlog}"
    );
    assert!(mlog.contains("new tcp 192.168.1.10"), "{mlog}");
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// The Manager channel is bound: the Manager handles only datagrams from
/// the router's CHANNEL_IP:CHANNEL_PORT. Another process in the gateway's
/// namespace sends the Manager what the router would send for a new
/// connection to a forwarded port: the Manager ignores it (no mapping is
/// installed), and cannot take the router's port either; the router's own
/// frames for the same forward are admitted.
#[test]
fn a_forged_sender_cannot_feed_the_manager() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.start_router();
    net.web_server(true, B_IP, "8000");
    let m = manager(&net, &["--forward", "tcp:8080=192.168.1.20:8000"]);
    // A SYN from S:40000 to WAN_IP:8080, as the router wraps it.
    let forger = format!(
        "import socket, struct
def csum(b):
    s = sum(struct.unpack('!10H', b))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
tcp = struct.pack('!HHIIBBHHH', 40000, 8080, 1, 0, 5 << 4, 2, 65535, 0, 0)
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 1, 0, 63, 6, 0,
                 socket.inet_aton('{SRV}'), socket.inet_aton('{WAN_IP}'))
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
# The router's end of the channel is taken.
for opt in (None, socket.SO_REUSEADDR, socket.SO_REUSEPORT):
    t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if opt is not None:
        t.setsockopt(socket.SOL_SOCKET, opt, 1)
    try:
        t.bind(('127.0.0.1', 778))
        print('bound the router port with', opt)
    except OSError as e:
        print('router port taken:', e.errno)
    t.close()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
s.sendto(ip + tcp, ('127.0.0.1', 7779))
print('sent from', s.getsockname())
"
    );
    let (ok, out) = net.gw.run(10, &["python3", "-c", &forger]);
    assert!(ok, "{out}");
    assert!(!out.contains("bound the router port"), "{out}");
    let t = Instant::now();
    while !m.output().contains("forged 127.0.0.1:") {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the Manager did not see the forged datagram: {}",
            m.output()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let table = net.call("rw.tcp_table").unwrap();
    assert!(
        !table.contains("40000"),
        "a forged frame made a mapping: {table}"
    );
    assert!(!m.output().contains("admit"), "{}", m.output());
    // The router's frames are still handled: the forward works.
    let got = net
        .fetch(&net.s, &format!("http://{WAN_IP}:8080/big"), "s-big", 60)
        .unwrap_or_else(|e| panic!("forwarded fetch failed: {e}\n{}", m.output()));
    assert!(same(&got, &net.big), "the forwarded file differs");
    let mlog = m.stop();
    println!("Manager log:\n{mlog}");
    assert!(mlog.contains(&format!("admit tcp {SRV} ")), "{mlog}");
    assert!(mlog.contains("forged=1 "), "{mlog}");
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// The router's end of the channel: the `manager` Socket (a UDP client)
/// takes datagrams from any local sender, and the router processes them
/// as packets from the WAN. They must meet the inbound firewall as the
/// WAN's own packets do: a SYN forged from a source the firewall denies,
/// sent to CHANNEL_PORT, must not reach the Manager and get a forwarded
/// port admitted (with a mapping). The same SYN from an allowed source
/// is admitted, as a WAN host's would be (so the test sees the path).
#[test]
fn a_datagram_to_the_router_channel_meets_the_inbound_firewall() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.start_router();
    let m = manager(&net, &["--forward", "tcp:8080=192.168.1.20:8000"]);
    let bin = rclick_bin().unwrap();
    net.gw
        .try_exec(&[
            bin.to_str().unwrap(),
            "call",
            "-t",
            "5",
            "inbound.config",
            "deny src net 198.51.100.0/24, allow all",
        ])
        .unwrap();
    let forger = |src: &str, sport: u16| {
        format!(
            "import socket, struct
def csum(b):
    s = sum(struct.unpack('!10H', b))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
tcp = struct.pack('!HHIIBBHHH', {sport}, 8080, 1, 0, 5 << 4, 2, 65535, 0, 0)
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 1, 0, 63, 6, 0,
                 socket.inet_aton('{src}'), socket.inet_aton('{WAN_IP}'))
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(ip + tcp, ('127.0.0.1', 778))
"
        )
    };
    let (ok, out) = net
        .gw
        .run(10, &["python3", "-c", &forger("198.51.100.7", 40001)]);
    assert!(ok, "{out}");
    let (ok, out) = net
        .gw
        .run(10, &["python3", "-c", &forger("203.0.113.7", 40002)]);
    assert!(ok, "{out}");
    // The allowed one is admitted; by then the denied one, sent first,
    // has been handled too.
    let t = Instant::now();
    while !m.output().contains("admit tcp 203.0.113.7") {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the allowed SYN through the channel was not admitted: {}\n{}",
            m.output(),
            net.router_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let table = net.call("rw.tcp_table").unwrap();
    assert!(
        !table.contains("198.51.100.7"),
        "a SYN from a denied source, sent to the router's channel, made a mapping: {table}"
    );
    let mlog = m.stop();
    assert!(!mlog.contains("198.51.100.7"), "{mlog}");
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// One measurement round on a ready topology: the seconds of a 16 MB HTTP
/// fetch from S to A, and iperf3 TCP from A to S in Mbit/s (0 without
/// iperf3).
fn measure(net: &Net, round: usize) -> (f64, f64) {
    let t = Instant::now();
    let got = net
        .fetch(
            &net.a,
            &format!("http://{SRV}:8000/big"),
            &format!("m{round}"),
            120,
        )
        .unwrap_or_else(|e| panic!("fetch failed: {e}"));
    let secs = t.elapsed().as_secs_f64();
    assert!(same(&got, &net.big), "the fetched file differs");
    let mut rate = 0.0;
    if have(&["iperf3", "--version"]) {
        let (ok, out) = net.a.run(30, &["iperf3", "-c", SRV, "-t", "3", "-f", "m"]);
        assert!(ok, "{out}");
        rate = out
            .lines()
            .filter(|l| l.contains("receiver"))
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let i = w.iter().position(|x| *x == "Mbits/sec")?;
                w.get(i - 1)?.parse::<f64>().ok()
            })
            .next()
            .unwrap_or(0.0);
    }
    (secs, rate)
}

fn range(v: &[f64]) -> String {
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    // Three significant digits or so: more would be noise.
    let decimals = match hi.abs() {
        h if h >= 100.0 => 0,
        h if h >= 10.0 => 1,
        _ => 2,
    };
    format!("{lo:.decimals$}-{hi:.decimals$}")
}

/// The same topology with Linux's own NAT (nftables masquerade in the
/// gateway's namespace) instead of rclick, side by side: the same checks
/// (`nat_checks`) run against both gateways, then three rounds each of an
/// HTTP fetch (byte-exact) and iperf3 TCP throughput, and of a 64-byte UDP
/// packet blast from A to S (`udp_blast`), printed as ranges. The blast's
/// sender runs on core 0 and rclick's gateway where the scheduler puts
/// it; Linux's NAT is blasted as the kernel places it (in the sender's
/// softirq, on core 0) and again steered to core 1 (RPS), and the sender
/// alone, into a gateway that drops the blast, gives the ceiling. The numbers are for
/// docs/benchmarks.md (the machine is shared, so only ranges mean
/// anything, and no rate is asserted). Set RCLICK_BIN to a release build
/// for a fair comparison: it also runs the blast's sender.
#[test]
fn comparison_with_linux_nftables_masquerade() {
    skip_if!(skip_reason());
    if !have(&["nft", "--version"]) {
        println!("SKIP: nft not installed (Debian package nftables)");
        return;
    }
    let rounds = 3;
    let iperf = have(&["iperf3", "--version"]);
    let mut results = Vec::new();
    let mut sender_alone = Vec::new();
    let mut linux_on_core_1 = Vec::new();
    for gateway in [Gateway::LinuxNftables, Gateway::Rclick] {
        println!("{}:", gateway.name());
        let mut net = Net::new();
        let mut iperf_server = None;
        match gateway {
            Gateway::LinuxNftables => start_linux_nat(&net),
            Gateway::Rclick => net.start_router(),
        }
        net.web_server(false, SRV, "8000");
        if iperf {
            let mut server = Background::start(
                &net.s,
                net.dir.join("iperf3.log"),
                &["iperf3", "-s", "-B", SRV],
            );
            wait_listening(&net.s, &mut server, 5201);
            iperf_server = Some(server);
        }
        nat_checks(&mut net);
        let mut fetch = Vec::new();
        let mut tput = Vec::new();
        for round in 0..rounds {
            let (f, t) = measure(&net, round);
            fetch.push(f);
            tput.push(t);
        }
        drop(iperf_server);
        let blasts: Vec<Blast> = (0..rounds).map(|_| udp_blast(&net)).collect();
        for b in &blasts {
            assert!(
                b.received > 0,
                "no UDP datagram came through {}",
                gateway.name()
            );
        }
        if let Gateway::LinuxNftables = gateway {
            sender_alone = (0..rounds).map(|_| sender_baseline(&net)).collect();
            if two_cores_and_taskset() && steer_gateway_to_core_1(&net) {
                let steered: Vec<Blast> = (0..rounds).map(|_| udp_blast(&net)).collect();
                for b in &steered {
                    assert!(b.received > 0, "no UDP datagram came through Linux (RPS)");
                }
                linux_on_core_1 = steered;
            }
        }
        if let Some(router) = net.router.take() {
            assert!(router.alive_check(), "rclick died");
            let log = router.stop();
            assert!(!log.contains("panicked"), "{log}");
        }
        results.push((gateway.name(), fetch, tput, blasts));
    }
    println!(
        "NAT comparison, {rounds} rounds each (ranges; shared, loaded machine; UDP: \
         {BLAST_SECS} s blasts of 64-byte Ethernet frames ({BLAST_FRAME} bytes and the FCS, \
         {} bytes of UDP payload), kpps = thousand packets per second; the sender on core 0{}):",
        BLAST_FRAME - 14 - 20 - 8,
        if two_cores_and_taskset() {
            ""
        } else {
            " (not pinned: no taskset or one core)"
        }
    );
    let alone: Vec<f64> = sender_alone
        .iter()
        .map(|b: &Blast| b.sent as f64 / BLAST_SECS as f64 / 1e3)
        .collect();
    println!(
        "  the sender alone (the gateway's kernel drops the frames on arrival): {} kpps",
        range(&alone)
    );
    for (who, fetch, tput, blasts) in &results {
        println!(
            "  {who:15} HTTP 16 MB fetch {} s   iperf3 TCP {} Mbit/s",
            range(fetch),
            range(tput)
        );
        print_blasts(blasts);
        let inside: Vec<(&Blast, &InsideRclick)> = blasts
            .iter()
            .filter_map(|b| Some((b, b.inside_rclick.as_ref()?)))
            .collect();
        if !inside.is_empty() {
            let cpu: Vec<f64> = inside.iter().map(|(_, i)| 100.0 * i.cpu_share).collect();
            let taken: Vec<f64> = inside
                .iter()
                .map(|(_, i)| i.taken_in as f64 / BLAST_SECS as f64 / 1e3)
                .collect();
            // Frames the LAN device received that FromDevice never saw:
            // its socket's ring was full.
            let missed: Vec<f64> = inside
                .iter()
                .map(|(b, i)| b.at_gateway.saturating_sub(i.taken_in) as f64)
                .collect();
            let drops: Vec<f64> = inside.iter().map(|(_, i)| i.queue_drops as f64).collect();
            println!(
                "  {:15} inside rclick: {} % of a core; FromDevice took in {} kpps, missed {} frames; \
                 the WAN queue dropped {}",
                "",
                range(&cpu),
                range(&taken),
                range(&missed),
                range(&drops)
            );
        }
    }
    if !linux_on_core_1.is_empty() {
        println!("  Linux nftables, its receive work steered to core 1 (RPS):");
        print_blasts(&linux_on_core_1);
    }
}

/// Prints the ranges of a gateway's UDP blasts: sent, arrived at the
/// gateway, received at S (kpps), loss (%).
fn print_blasts(blasts: &[Blast]) {
    let kpps = |f: fn(&Blast) -> u64| -> Vec<f64> {
        blasts
            .iter()
            .map(|b| f(b) as f64 / BLAST_SECS as f64 / 1e3)
            .collect()
    };
    let loss: Vec<f64> = blasts.iter().map(Blast::loss_percent).collect();
    println!(
        "  {:15} 64-byte UDP: sent {} kpps, reached the gateway {} kpps, received at S {} kpps, loss {} %",
        "",
        range(&kpps(|b| b.sent)),
        range(&kpps(|b| b.at_gateway)),
        range(&kpps(|b| b.received)),
        range(&loss)
    );
    let cores = blasts.iter().map(|b| b.core_busy.len()).min().unwrap_or(0);
    let busy: Vec<String> = (0..cores.min(2))
        .map(|c| {
            let v: Vec<f64> = blasts.iter().map(|b| b.core_busy[c]).collect();
            format!("core {c} {} %", range(&v))
        })
        .collect();
    println!("  {:15} busy (whole machine): {}", "", busy.join(", "));
}

/// Active and passive FTP from A to an FTP server on S (pyftpdlib, when
/// installed: `pip install pyftpdlib`), through the gateway's
/// FTPPortMapper: A's PORT command names its private address; the gateway
/// rewrites it to the public address and a mapped port, and S's data
/// connection (from port 20, as RFC 959 has it; pyftpdlib is told to)
/// reaches A. Both transfers byte-exact.
#[test]
fn ftp_active_and_passive_through_the_napt() {
    skip_if!(skip_reason());
    if !run_t(10, &["python3", "-c", "import pyftpdlib"]).0 {
        println!("SKIP: pyftpdlib not installed (pip install pyftpdlib)");
        return;
    }
    let mut net = Net::new();
    net.start_router();
    let dir = net.dir.to_str().unwrap().to_string();
    // pyftpdlib opens active data connections from a random port; RFC 959
    // servers (vsftpd, proftpd) use port 20, which FTPPortMapper's data
    // mapping expects.
    let server = format!(
        "import socket
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.handlers.ftp import dispatchers
from pyftpdlib.servers import FTPServer
orig = dispatchers.ActiveDTP.connect_af_unspecified
def from_port_20(self, addr, source_address=None):
    return orig(self, addr, (source_address[0], 20))
dispatchers.ActiveDTP.connect_af_unspecified = from_port_20
a = DummyAuthorizer()
a.add_anonymous({dir:?})
FTPHandler.authorizer = a
FTPServer(('{SRV}', 21), FTPHandler).serve_forever()
"
    );
    let srv = Background::start(
        &net.s,
        net.dir.join("ftpd.log"),
        &["python3", "-c", &server],
    );
    net.servers.push(srv);
    let client = |active: bool, name: &str| {
        let out = net.dir.join(name);
        format!(
            "import ftplib, time
for i in range(50):
    try:
        f = ftplib.FTP('{SRV}', timeout=20)
        break
    except OSError:
        time.sleep(0.1)
f.login()
f.set_pasv({pasv})
with open({out:?}, 'wb') as o:
    f.retrbinary('RETR big', o.write)
f.quit()
print('done')
",
            pasv = if active { "False" } else { "True" },
        )
    };
    for (active, name) in [(true, "ftp-active"), (false, "ftp-passive")] {
        let (ok, out) = net.a.run(90, &["python3", "-c", &client(active, name)]);
        assert!(
            ok && out.contains("done"),
            "{name}: {out}\nserver: {}",
            net.servers[0].output()
        );
        let got = std::fs::read(net.dir.join(name)).unwrap();
        assert!(same(&got, &net.big), "{name}: the file differs");
    }
    // The data connection of the active transfer came from S's port 20 to
    // a mapping FTPPortMapper made.
    let table = net.call("rw.tcp_table").unwrap();
    assert!(
        table.contains(&format!("({SRV}, 20, {WAN_IP}, ")),
        "{table}"
    );
}

/// The second address of S (a second WAN destination on the same host).
const SRV2: &str = "192.0.2.101";

/// Endpoint-independent mapping (RFC 4787 REQ-1, RFC 5382 REQ-1): B first
/// sends from port 40000 (UDP) and 41000 (TCP), which it keeps; A then
/// sends from the same ports, which it cannot keep, to three UDP
/// destinations (two ports of S, and S's second address) and two TCP ones
/// (both addresses): S sees A's datagrams and connections all come from
/// one external port, another than B's, of the same parity as A's own
/// (PORT_PARITY).
#[test]
fn a_lan_endpoint_keeps_one_external_port_for_every_destination() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.s
        .exec(&["ip", "addr", "add", &format!("{SRV2}/24"), "dev", "ntsrv"]);
    net.start_router();
    let server = format!(
        "import select, socket
socks = []
for a in ('{SRV}', '{SRV2}'):
    for p in (7001, 7002):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((a, p))
        socks.append(u)
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(('0.0.0.0', 7003))
t.listen(16)
socks.append(t)
print('ready', flush=True)
while True:
    for s in select.select(socks, [], [])[0]:
        if s is t:
            c, peer = t.accept()
            c.settimeout(3)
            tag = c.recv(100).decode()
            print('tcp', tag, '%s:%d' % peer, flush=True)
            c.sendall(b'ok')
            c.close()
        else:
            data, peer = s.recvfrom(100)
            print('udp', data.decode(), '%s:%d' % peer, flush=True)
            s.sendto(data, peer)
"
    );
    let mut srv = Background::start(
        &net.s,
        net.dir.join("eim-server.log"),
        &["python3", "-c", &server],
    );
    let t = Instant::now();
    while !srv.output().contains("ready") {
        assert!(srv.alive(), "server exited: {}", srv.output());
        assert!(t.elapsed() < Duration::from_secs(10), "server not ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    // One UDP socket per host, bound to port 40000, to each destination in
    // turn; each datagram is echoed back through the mapping.
    let udp_client = |host: &str, dsts: &[(&str, u16)]| {
        let dsts: Vec<String> = dsts.iter().map(|(a, p)| format!("('{a}', {p})")).collect();
        format!(
            "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', 40000))
s.settimeout(3)
for d in [{}]:
    s.sendto(('{host}>%s:%d' % d).encode(), d)
    print('echo', s.recvfrom(100)[0].decode())
",
            dsts.join(", ")
        )
    };
    // One TCP connection after the other, each from port 41000.
    let tcp_client = |host: &str, dsts: &[&str]| {
        let dsts: Vec<String> = dsts.iter().map(|a| format!("('{a}', 7003)")).collect();
        format!(
            "import socket
for d in [{}]:
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.bind(('0.0.0.0', 41000))
    c.settimeout(5)
    c.connect(d)
    c.sendall(('{host}>%s:%d' % d).encode())
    print('reply', c.recv(10).decode())
    c.close()
",
            dsts.join(", ")
        )
    };
    let runs = [
        (&net.b, udp_client("b", &[(SRV, 7001)])),
        (&net.b, tcp_client("b", &[SRV])),
        (
            &net.a,
            udp_client("a", &[(SRV, 7001), (SRV, 7002), (SRV2, 7001)]),
        ),
        (&net.a, tcp_client("a", &[SRV, SRV2])),
    ];
    for (ns, script) in &runs {
        let (ok, out) = ns.run(20, &["python3", "-c", script]);
        assert!(
            ok && !out.contains("Error"),
            "{out}\n{}\n{}",
            srv.output(),
            net.router_log()
        );
    }
    // "PROTO HOST>DST:PORT SRC:SPORT" lines: the external ports each host's
    // flows came from, by protocol.
    let seen = srv.stop();
    let ports = |proto: &str, host: &str| -> Vec<u16> {
        seen.lines()
            .filter(|l| l.starts_with(&format!("{proto} {host}>")))
            .map(|l| {
                let from = l.rsplit(' ').next().unwrap();
                let (addr, port) = from.split_once(':').unwrap();
                assert_eq!(addr, WAN_IP, "{seen}");
                port.parse().unwrap()
            })
            .collect()
    };
    for (proto, own, dsts) in [("udp", 40000u16, 3), ("tcp", 41000, 2)] {
        let b = ports(proto, "b");
        let a = ports(proto, "a");
        assert_eq!(b, [own], "B's {proto} port was not kept: {seen}");
        assert_eq!(a.len(), dsts, "{seen}");
        assert!(
            a.iter().all(|&p| p == a[0]),
            "A's {proto} flows from one port left by several: {a:?}\n{seen}"
        );
        assert_ne!(a[0], own, "A and B share an external port: {seen}");
        assert_eq!(a[0] % 2, own % 2, "the port's parity changed: {seen}");
        println!(
            "{proto}: B keeps {own}, A's {own} is {} for {dsts} destinations",
            a[0]
        );
    }
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// Two LAN hosts ping S at once with the same echo identifier (`ping -e`):
/// the gateway gives the second another identifier (ICMPPingRewriter's
/// identifier range), and every reply reaches its own host.
#[test]
fn two_lan_hosts_ping_with_the_same_identifier() {
    skip_if!(skip_reason());
    if !have(&["ping", "-V"]) {
        println!("SKIP: ping not installed (Debian package iputils-ping)");
        return;
    }
    let mut net = Net::new();
    net.start_router();
    let pings: Vec<_> = [&net.a, &net.b]
        .into_iter()
        .map(|ns| {
            let name = ns.name.clone();
            std::thread::spawn(move || {
                run_t(
                    30,
                    &[
                        "ip", "netns", "exec", &name, "ping", "-e", "4242", "-c", "6", "-i", "0.3",
                        "-W", "2", SRV,
                    ],
                )
            })
        })
        .collect();
    for (host, ping) in [A_IP, B_IP].into_iter().zip(pings) {
        let (ok, out) = ping.join().unwrap();
        assert!(
            ok && ping_loss(&out) == Some(0.0),
            "{host}'s pings: {out}\n{:?}",
            net.call("ping.table")
        );
    }
    // "(HOST, 4242, SRV, 0) => (WAN_IP, ID, SRV, 0) ..." lines: distinct IDs.
    let table = net.call("ping.table").unwrap();
    let ids: Vec<&str> = [A_IP, B_IP]
        .iter()
        .map(|h| {
            let key = format!("({h}, 4242, {SRV}, 0) => ({WAN_IP}, ");
            table
                .lines()
                .find_map(|l| l.strip_prefix(&key)?.split(',').next())
                .unwrap_or_else(|| panic!("no mapping of {h}: {table}"))
        })
        .collect();
    assert_ne!(ids[0], ids[1], "{table}");
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// The inbound firewall's defaults: datagrams from S with private
/// sources (RFC 1918, and the home prefix itself) are dropped before the
/// rewriter and counted in inbound_drops; one from S's own address passes
/// to the rewriter (which, finding no mapping, hands it to the Manager).
#[test]
fn the_inbound_firewall_drops_private_sources_from_the_wan() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    let spoofed = ["10.9.9.9", "172.20.0.1", "192.168.1.50"];
    for a in spoofed {
        net.s
            .exec(&["ip", "addr", "add", &format!("{a}/32"), "dev", "ntsrv"]);
    }
    net.start_router();
    let count = |h: &str| -> u64 { net.call(h).unwrap().parse().unwrap() };
    let (drops, to_manager) = (count("inbound_drops.count"), count("to_manager_q.count"));
    let send = |src: &str, n: u32| {
        format!(
            "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('{src}', 0))
for i in range({n}):
    s.sendto(b'unsolicited', ('{WAN_IP}', 40000 + i))
"
        )
    };
    for a in spoofed {
        let (ok, out) = net.s.run(10, &["python3", "-c", &send(a, 2)]);
        assert!(ok, "{out}");
    }
    let (ok, out) = net.s.run(10, &["python3", "-c", &send(SRV, 1)]);
    assert!(ok, "{out}");
    let t = Instant::now();
    while count("to_manager_q.count") == to_manager {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "S's own datagram did not reach the rewriter"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        count("inbound_drops.count") - drops,
        2 * spoofed.len() as u64
    );
    assert_eq!(count("to_manager_q.count") - to_manager, 1);
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// Path MTU discovery through a real router on the WAN side: S doubles as
/// the gateway's next hop (WAN_GW, 192.0.2.254) to a second server S2 on
/// 198.51.100.0/24, over a link of MTU 1280. A LAN host's DF datagrams
/// bigger than that reach S through the NAPT; Linux on S answers
/// "fragmentation needed, MTU 1280" to the public address, and the gateway
/// translates it back to the host (RFC 5508 REQ-3): A's UDP socket learns
/// the MTU, and A's ping reports it.
#[test]
fn fragmentation_needed_from_a_wan_router_reaches_the_lan_host() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    let s2 = Netns::new("nt2");
    s2.disable_ipv6();
    veth(&s2, "nts2", Some("198.51.100.7/24"), &net.s, "ntr2");
    let s = &net.s;
    s.exec(&["ip", "addr", "add", "192.0.2.254/24", "dev", "ntsrv"]);
    s.exec(&["ip", "addr", "add", "198.51.100.1/24", "dev", "ntr2"]);
    s.exec(&["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    s.exec(&["ip", "link", "set", "ntr2", "mtu", "1280"]);
    s2.exec(&["ip", "link", "set", "nts2", "mtu", "1280"]);
    s2.exec(&["ip", "route", "add", "default", "via", "198.51.100.1"]);
    net.start_router();
    let s2_ip = "198.51.100.7";
    // Small packets go through (the gateway's default route leads to S).
    let (ok, out) = net
        .a
        .run(15, &["ping", "-c", "2", "-i", "0.3", "-W", "2", s2_ip]);
    assert!(
        ok && ping_loss(&out) == Some(0.0),
        "{out}\n{}",
        net.router_log()
    );
    // UDP with DF: once the error about a 1400-byte datagram is back, the
    // socket knows the path's MTU and refuses the next (EMSGSIZE).
    let udp = format!(
        "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER, IP_PMTUDISC_DO
s.connect(('{s2_ip}', 9))
for i in range(20):
    try:
        s.send(b'x' * 1400)
    except OSError as e:
        print('errno', e.errno)
        break
    time.sleep(0.25)
print('mtu', s.getsockopt(socket.IPPROTO_IP, 14))  # IP_MTU
"
    );
    let (ok, out) = net.a.run(10, &["python3", "-c", &udp]);
    assert!(
        ok && out.contains("errno 90") && out.contains("mtu 1280"),
        "A's socket did not learn the MTU: {out}\nicmp_in.drops {:?}",
        net.call("icmp_in.drops")
    );
    // A ping with DF (after forgetting the MTU learnt above): S's error
    // comes back with the MTU.
    net.a.exec(&["ip", "route", "flush", "cache"]);
    let (_, out) = net.a.run(
        15,
        &[
            "ping", "-c", "2", "-i", "0.3", "-W", "2", "-M", "do", "-s", "1400", s2_ip,
        ],
    );
    println!("{out}");
    // From S (either of its addresses on the WAN link), not the gateway.
    let from_router = [SRV, "192.0.2.254"]
        .iter()
        .any(|r| out.contains(&format!("From {r} icmp_seq=1 Frag needed")));
    assert!(
        from_router && out.contains("mtu = 1280"),
        "no fragmentation needed from the router: {out}"
    );
    let log = net.router.take().unwrap().stop();
    assert!(!log.contains("panicked"), "{log}");
}

/// The Manager replaces the whole gateway configuration while a download
/// runs through it (`Manager.hotswap`, the `hotconfig` handler with
/// `rclick -R`): the new configuration (the same file with a shorter UDP
/// timeout, which `rw.timeouts` then shows) takes over, the NAPT mappings
/// carry over, and the 16 MB download, rate-limited so that it spans the
/// swap, completes byte-exact on the same connection.
#[test]
fn a_hot_swap_by_the_manager_keeps_a_running_download() {
    skip_if!(skip_reason());
    let mut net = Net::new();
    net.start_router_with(&["-R"]);
    net.web_server(false, SRV, "8000");
    let out = net.dir.join("swapped");
    let mut curl = Background::start(
        &net.a,
        net.dir.join("curl.log"),
        &[
            "curl",
            "-sS",
            "--max-time",
            "60",
            "--limit-rate",
            "4M",
            "-o",
            out.to_str().unwrap(),
            &format!("http://{SRV}:8000/big"),
        ],
    );
    // The connection is mapped and data flows before the swap.
    let t = Instant::now();
    while !net
        .call("rw.tcp_table")
        .unwrap_or_default()
        .contains(&format!("({A_IP}, "))
    {
        assert!(curl.alive(), "curl ended early: {}", curl.output());
        assert!(t.elapsed() < Duration::from_secs(10), "no mapping for A");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let before = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    assert!(
        before < net.big.len() as u64,
        "the download ended before the swap"
    );
    let conf = std::fs::read_to_string(root().join("conf/home-gateway.click")).unwrap();
    assert!(
        conf.contains("UDP_TIMEOUT 300"),
        "the gateway's UDP timeout moved"
    );
    let swapped = net.dir.join("swapped.click");
    std::fs::write(&swapped, conf.replace("UDP_TIMEOUT 300", "UDP_TIMEOUT 240")).unwrap();
    let clients = root().join("clients/python");
    let script = format!(
        "import sys
sys.path.insert(0, {clients:?})
from rclick_manager import Manager
m = Manager(('127.0.0.1', 7777), listen=('127.0.0.1', 0), wan_ip='{WAN_IP}')
m.hotswap(open({swapped:?}).read())
print('UDP_TIMEOUT', m.timeouts()['UDP_TIMEOUT'])
m.close()
",
        clients = clients.to_str().unwrap(),
        swapped = swapped.to_str().unwrap(),
    );
    let (ok, said) = net.gw.run(30, &["python3", "-c", &script]);
    assert!(ok, "hotswap: {said}\n{}", net.router_log());
    // The answer may come before the new router is in place: ask again.
    let t = Instant::now();
    while net
        .call("rw.timeouts")
        .unwrap_or_default()
        .lines()
        .all(|l| l != "UDP_TIMEOUT 240")
    {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the new configuration did not take over"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (ok, log) = curl.wait(60);
    assert!(ok, "curl: {log}\n{}", net.router_log());
    let got = std::fs::read(&out).unwrap();
    assert!(
        same(&got, &net.big),
        "the download through the swap differs"
    );
    let log = net.router_log();
    assert!(!log.contains("panicked"), "{log}");
}

/// The gateway under test in `comparison_with_linux_nftables_masquerade`.
#[derive(Clone, Copy)]
enum Gateway {
    Rclick,
    LinuxNftables,
}

impl Gateway {
    fn name(self) -> &'static str {
        match self {
            Gateway::Rclick => "rclick",
            Gateway::LinuxNftables => "Linux nftables",
        }
    }
}

/// Linux's own NAT in the gateway's namespace, on the same devices and
/// addresses as rclick's gateway: forwarding on, and nftables masquerade
/// of everything leaving by the WAN device.
fn start_linux_nat(net: &Net) {
    let gw = &net.gw;
    gw.exec(&["ip", "addr", "add", "192.168.1.1/24", "dev", "ntlan"]);
    gw.exec(&["ip", "addr", "add", &format!("{WAN_IP}/24"), "dev", "ntwan"]);
    gw.exec(&["sysctl", "-qw", "net.ipv4.ip_forward=1"]);
    gw.exec(&["nft", "add", "table", "ip", "nat"]);
    gw.exec(&[
        "nft",
        "add chain ip nat post { type nat hook postrouting priority 100; }",
    ]);
    gw.exec(&[
        "nft",
        "add",
        "rule",
        "ip",
        "nat",
        "post",
        "oifname",
        "ntwan",
        "masquerade",
    ]);
}

/// The port of S's peer-echo server (`peer_echo_server`).
const ECHO_PORT: u16 = 8100;

/// Starts a server on S that answers every TCP connection and every UDP
/// datagram on ECHO_PORT with the address and port it came from, as
/// "ADDR PORT": what S sees of a LAN host behind the NAT.
fn peer_echo_server(net: &mut Net) {
    // The UDP socket is bound before the TCP one listens, so that a
    // listening TCP port means both are ready.
    let script = format!(
        "import socket, threading
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('{SRV}', {ECHO_PORT}))
def tcp():
    t = socket.socket()
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(('{SRV}', {ECHO_PORT}))
    t.listen(16)
    while True:
        c, a = t.accept()
        c.sendall(('%s %d\\n' % a).encode())
        c.close()
threading.Thread(target=tcp, daemon=True).start()
while True:
    d, a = u.recvfrom(100)
    u.sendto(('%s %d\\n' % a).encode(), a)
"
    );
    let mut server = Background::start(
        &net.s,
        net.dir.join("peer-echo.log"),
        &["python3", "-c", &script],
    );
    wait_listening(&net.s, &mut server, ECHO_PORT);
    net.servers.push(server);
}

/// The address and port S's peer-echo server sees for a TCP connection
/// (`udp` false) or a UDP datagram from `ns`'s source port `sport`.
fn seen_by_server(ns: &Netns, udp: bool, sport: u16) -> (String, u16) {
    let probe = format!(
        "import socket
s = socket.socket(socket.AF_INET, socket.{kind})
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', {sport}))
s.settimeout(2)
s.connect(('{SRV}', {ECHO_PORT}))
# A TCP server answers the connection; a UDP one needs a datagram, which
# is sent again if it or the answer was lost.
for attempt in range(5 if {udp} else 1):
    if {udp}:
        s.send(b'who am I?')
    try:
        print(s.recv(100).decode().strip())
        break
    except socket.timeout:
        pass
",
        kind = if udp { "SOCK_DGRAM" } else { "SOCK_STREAM" },
        udp = if udp { "True" } else { "False" },
    );
    let (ok, out) = ns.run(20, &["python3", "-c", &probe]);
    assert!(ok, "peer echo from port {sport} (udp: {udp}): {out}");
    let mut words = out.split_whitespace();
    let addr = words.next().unwrap_or_default().to_string();
    let port = words
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("peer echo answered {out:?}"));
    (addr, port)
}

/// What a LAN host's UDP socket on source port `sport` hears back after a
/// datagram to a closed port of S: "refused" when the ICMP port
/// unreachable reached it, else "answer" or "timeout".
fn udp_to_closed_port(ns: &Netns, sport: u16) -> String {
    let probe = format!(
        "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', {sport}))
s.settimeout(3)
s.connect(('{SRV}', 9999))
s.send(b'anyone?')
try:
    s.recv(100)
    print('answer')
except ConnectionRefusedError:
    print('refused')
except socket.timeout:
    print('timeout')
"
    );
    ns.run(10, &["python3", "-c", &probe]).1.trim().to_string()
}

/// The checks that make sense for any NAT, run in the very same way
/// against rclick's gateway and against Linux's: ping from LAN hosts to S
/// through the NAT; S sees only the public address, and two LAN hosts
/// using the same source port to the same server get distinct external
/// ports (TCP and UDP, as S sees them); an ICMP port unreachable from S
/// reaches the LAN host whose datagram caused it, also the host whose
/// port the NAT had to change; a 16 MB HTTP fetch arrives byte-exact and
/// S's web server saw only the public address. Starts the peer-echo
/// server on S.
fn nat_checks(net: &mut Net) {
    peer_echo_server(net);
    for ns in [&net.a, &net.b] {
        let (ok, out) = ns.run(15, &["ping", "-c", "3", "-i", "0.2", "-W", "2", SRV]);
        assert!(ok && ping_loss(&out) == Some(0.0), "{out}");
    }
    for (udp, sport) in [(false, 40000), (true, 40001)] {
        let from_a = seen_by_server(&net.a, udp, sport);
        let from_b = seen_by_server(&net.b, udp, sport);
        for (addr, _) in [&from_a, &from_b] {
            assert_eq!(addr, WAN_IP, "S saw a private address (udp: {udp})");
        }
        assert_ne!(
            from_a.1, from_b.1,
            "A and B share the external port (udp: {udp})"
        );
        println!(
            "{} from port {sport} of A and of B: S saw ports {} and {}",
            if udp { "UDP" } else { "TCP" },
            from_a.1,
            from_b.1
        );
    }
    // A first, so that B's datagram is the one whose source port the NAT
    // changes: the error quoting the changed port must still reach B.
    for (ns, host) in [(&net.a, A_IP), (&net.b, B_IP)] {
        assert_eq!(
            udp_to_closed_port(ns, 40002),
            "refused",
            "{host}: no port unreachable\n{}",
            net.router_log()
        );
    }
    let got = net
        .fetch(&net.a, &format!("http://{SRV}:8000/big"), "check-big", 120)
        .unwrap_or_else(|e| panic!("fetch failed: {e}\n{}", net.router_log()));
    assert!(same(&got, &net.big), "the fetched file differs");
    let access = net.servers[0].output();
    assert!(
        access.contains(&format!("{WAN_IP} - - ")) && !access.contains(A_IP),
        "S saw: {access}"
    );
}

/// Seconds each 64-byte UDP blast lasts.
const BLAST_SECS: u32 = 3;
/// The blast's frame length without the FCS: 64 bytes on the wire.
const BLAST_FRAME: u32 = 60;
/// The UDP port the blast is sent to (S counts and drops it).
const BLAST_PORT: u16 = 9000;

/// One 64-byte UDP blast's counts: frames A sent, frames the gateway's
/// LAN device received, datagrams that reached S; and with rclick as the
/// gateway, where inside it the rest went.
struct Blast {
    sent: u64,
    at_gateway: u64,
    received: u64,
    inside_rclick: Option<InsideRclick>,
    /// How busy each core was during the blast, in percent (everything
    /// the machine ran, other users' work included).
    core_busy: Vec<f64>,
}

/// Each core's busy and total time so far (`/proc/stat`, in ticks).
fn core_ticks() -> Vec<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    stat.lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .map(|l| {
            let t: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|v| v.parse().ok())
                .collect();
            // idle and iowait are the 4th and 5th; guest time is already
            // counted in user time.
            let total: u64 = t.iter().take(8).sum();
            (total - t[3] - t[4], total)
        })
        .collect()
}

/// What rclick's gateway did during a blast.
struct InsideRclick {
    /// The share of one core its process used (user and system time).
    cpu_share: f64,
    /// Frames its LAN FromDevice handed on (`lan_in.count`).
    taken_in: u64,
    /// Frames its WAN queue dropped (`wan_q.drops`).
    queue_drops: u64,
}

/// The CPU time (user and system) process `pid` has used, in seconds.
fn process_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (which may hold spaces) start
    // with the state, field 3; utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}

/// A counter handler of the running rclick gateway.
fn gateway_counter(net: &Net, handler: &str) -> u64 {
    let v = net.call(handler).unwrap();
    v.parse().unwrap_or_else(|_| panic!("{handler} = {v:?}"))
}

impl Blast {
    fn loss_percent(&self) -> f64 {
        100.0 * self.sent.saturating_sub(self.received) as f64 / self.sent.max(1) as f64
    }
}

/// A packet counter of the kernel in `ns`: `/sys/class/net/DEV/statistics/NAME`.
fn link_counter(ns: &Netns, dev: &str, name: &str) -> u64 {
    let path = format!("/sys/class/net/{dev}/statistics/{name}");
    let out = ns.try_exec(&["cat", &path]).unwrap();
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{path}: {out}"))
}

/// The packets S's nftables counter has seen on BLAST_PORT (installed by
/// the first call).
fn received_at_server(net: &Net) -> u64 {
    let list = |ns: &Netns| ns.try_exec(&["nft", "list", "chain", "ip", "sink", "pre"]);
    let out = match list(&net.s) {
        Ok(out) => out,
        Err(_) => {
            // Counted and dropped before routing: no socket, no port
            // unreachables sent back through the NAT.
            net.s.exec(&["nft", "add", "table", "ip", "sink"]);
            net.s.exec(&[
                "nft",
                "add chain ip sink pre { type filter hook prerouting priority -300; }",
            ]);
            net.s.exec(&[
                "nft",
                "add",
                "rule",
                "ip",
                "sink",
                "pre",
                "ip",
                "saddr",
                WAN_IP,
                "udp",
                "dport",
                &BLAST_PORT.to_string(),
                "counter",
                "drop",
            ]);
            list(&net.s).unwrap()
        }
    };
    let after = out
        .split("counter packets ")
        .nth(1)
        .unwrap_or_else(|| panic!("no counter: {out}"));
    after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no counter: {out}"))
}

/// Blasts 64-byte UDP frames from A to S through the gateway for
/// BLAST_SECS seconds, as fast as the sender goes: rclick itself in A's
/// namespace (FastUDPSource, one prebuilt frame handed to ToDevice again
/// and again, batched sendmmsg straight to the driver), which outruns any
/// socket-per-datagram sender. One flow (fixed ports). Counts what A
/// sent, what the gateway's LAN device received, and what reached S.
fn udp_blast(net: &Net) -> Blast {
    let a_eth = net
        .a
        .try_exec(&["cat", "/sys/class/net/ntA/address"])
        .unwrap();
    let conf = net.dir.join("blast.click");
    std::fs::write(
        &conf,
        format!(
            "src :: FastUDPSource(0, -1, {BLAST_FRAME}, {a_eth}, {A_IP}, 5000, {GW_LAN_ETH}, {SRV}, {BLAST_PORT});
src -> td :: ToDevice(ntA, BURST 32);
Script(wait {BLAST_SECS}s, stop);
",
            a_eth = a_eth.trim()
        ),
    )
    .unwrap();
    let received_before = received_at_server(net);
    let at_gateway_before = link_counter(&net.gw, "ntlan", "rx_packets");
    let rclick_before = net.router.as_ref().map(|r| {
        (
            process_cpu_seconds(r.pid()),
            gateway_counter(net, "lan_in.count"),
            gateway_counter(net, "wan_q.drops"),
        )
    });
    let t = Instant::now();
    let ticks_before = core_ticks();
    let bin = rclick_bin().unwrap();
    let mut cmd = Vec::new();
    if two_cores_and_taskset() {
        cmd.extend(["taskset", "-c", "0"]);
    }
    cmd.extend([
        bin.to_str().unwrap(),
        "-h",
        "td.count",
        conf.to_str().unwrap(),
    ]);
    let (ok, out) = net.a.run(BLAST_SECS + 20, &cmd);
    assert!(ok, "the blast's sender: {out}");
    let core_busy = core_ticks()
        .iter()
        .zip(&ticks_before)
        .map(|((busy, total), (busy0, total0))| {
            100.0 * (busy - busy0) as f64 / (total - total0).max(1) as f64
        })
        .collect();
    let inside_rclick =
        net.router
            .as_ref()
            .zip(rclick_before)
            .map(|(r, (cpu, taken_in, queue_drops))| InsideRclick {
                cpu_share: (process_cpu_seconds(r.pid()) - cpu) / t.elapsed().as_secs_f64(),
                taken_in: gateway_counter(net, "lan_in.count") - taken_in,
                queue_drops: gateway_counter(net, "wan_q.drops") - queue_drops,
            });
    // Frames still in flight through the bridge and the gateway.
    std::thread::sleep(Duration::from_millis(300));
    // One handler asked for: rclick prints its value alone (as Click).
    let sent: u64 = out
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no td.count: {out}"));
    let blast = Blast {
        sent,
        at_gateway: link_counter(&net.gw, "ntlan", "rx_packets") - at_gateway_before,
        received: received_at_server(net) - received_before,
        inside_rclick,
        core_busy,
    };
    assert!(blast.sent > 0, "the sender sent nothing: {out}");
    // Every datagram S counted was sent by A (the counter matches only the
    // blast's port from the public address).
    assert!(blast.received <= blast.sent, "S counted more than A sent");
    blast
}

/// The blast's sender with no NAT behind it: the gateway's kernel drops
/// the blast's frames as they arrive (nftables, before routing), so what A
/// sends is what the sender, the bridge and the gateway's device take,
/// with nothing forwarded. The ceiling of the blast in this topology on
/// this machine, for telling a sender limit from a NAT limit.
fn sender_baseline(net: &Net) -> Blast {
    let gw = &net.gw;
    gw.exec(&["nft", "add", "table", "ip", "blackhole"]);
    gw.exec(&[
        "nft",
        "add chain ip blackhole pre { type filter hook prerouting priority -300; }",
    ]);
    gw.exec(&[
        "nft",
        "add",
        "rule",
        "ip",
        "blackhole",
        "pre",
        "udp",
        "dport",
        &BLAST_PORT.to_string(),
        "drop",
    ]);
    let blast = udp_blast(net);
    gw.exec(&["nft", "delete", "table", "ip", "blackhole"]);
    assert_eq!(blast.received, 0, "the blackhole let datagrams through");
    blast
}

/// Whether the blast's sender can be pinned to core 0 with another core
/// left for the gateway.
fn two_cores_and_taskset() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        && have(&["taskset", "--version"])
}

/// Linux's NAT runs in the softirq of whichever core received the frame:
/// on veths, the sender's own core, which then sends, bridges, translates
/// and delivers to S alone while the other core idles. Receive packet
/// steering (RPS) on the gateway's LAN device queues the gateway's receive
/// work (routing, NAT, and the delivery to S) to core 1 instead, the way
/// rclick's gateway, a process of its own, runs beside the sender: the
/// sender (pinned to core 0) and the bridge on one core, the NAT on the
/// other. Whether the kernel took it (it may lack RPS).
fn steer_gateway_to_core_1(net: &Net) -> bool {
    let steered = net.gw.try_exec(&[
        "sh",
        "-c",
        "echo 2 > /sys/class/net/ntlan/queues/rx-0/rps_cpus",
    ]);
    if let Err(why) = &steered {
        println!("Linux with RPS skipped: {why}");
    }
    steered.is_ok()
}
