//! FromDevice/ToDevice and FromHost/ToHost on real Linux devices: network
//! namespaces and veth pairs made for each test, a router running in-process
//! in a thread that entered the router's namespace, and traffic from
//! `ping` and TCP sockets in the host namespaces.
//!
//! Needs root, iproute2 (`ip`) and iputils-ping; without them each test
//! prints why it is skipped and passes. Every namespace is deleted when its
//! guard drops (the veth and TAP devices inside go with it), also when a
//! test fails.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;

use rclick_core::{Router, RouterOptions};

use common::netns::*;

/// Why these tests cannot run here, if they cannot.
fn skip_reason(need_ping: bool) -> Option<String> {
    namespace_skip_reason().or_else(|| {
        (need_ping && run(&["ping", "-V"]).is_err())
            .then(|| "ping (iputils-ping) not installed".into())
    })
}

macro_rules! require_root {
    ($ping:expr) => {
        skip_if!(skip_reason($ping))
    };
}

/// Two hosts, h1 (10.77.0.1) and h2 (10.77.0.2), each linked by a veth
/// pair to the router namespace, whose ends are `r1` and `r2`.
struct Topology {
    /// h1's end of its link to the router.
    h1_dev: String,
    h1: Netns,
    h2: Netns,
    rt: Netns,
    r1: String,
    r2: String,
}

impl Topology {
    fn new() -> Topology {
        let t = tag();
        let (h1, h2, rt) = (Netns::new("h1"), Netns::new("h2"), Netns::new("rt"));
        let (a1, r1) = (format!("a1{t}"), format!("r1{t}"));
        let (a2, r2) = (format!("a2{t}"), format!("r2{t}"));
        veth(&h1, &a1, Some("10.77.0.1/24"), &rt, &r1);
        veth(&h2, &a2, Some("10.77.0.2/24"), &rt, &r2);
        Topology {
            h1_dev: a1,
            h1,
            h2,
            rt,
            r1,
            r2,
        }
    }

    /// A two-way forwarder between r1 and r2.
    fn forwarder(&self) -> String {
        self.forwarder_with("")
    }

    /// A two-way forwarder between r1 and r2 whose devices take `keywords`
    /// (e.g. `, METHOD XDP`).
    fn forwarder_with(&self, keywords: &str) -> String {
        format!(
            "fd1 :: FromDevice({r1}{k}) -> q1 :: Queue(1000) -> td2 :: ToDevice({r2}{k});
             fd2 :: FromDevice({r2}{k}) -> q2 :: Queue(1000) -> td1 :: ToDevice({r1}{k});",
            r1 = self.r1,
            r2 = self.r2,
            k = keywords
        )
    }
}

#[test]
fn forwarder_carries_ping_without_loss() {
    require_root!(true);
    let topo = Topology::new();
    let r = Running::start(&topo.rt, &topo.forwarder());
    let out = topo
        .h1
        .try_exec(&["ping", "-c", "20", "-i", "0.05", "-W", "2", "10.77.0.2"])
        .unwrap_or_else(|e| panic!("ping through the router failed: {e}"));
    assert_eq!(ping_loss(&out), Some(0.0), "ping output:\n{out}");
    // And back the other way.
    let out = topo
        .h2
        .try_exec(&["ping", "-c", "10", "-i", "0.05", "-W", "2", "10.77.0.1"])
        .unwrap_or_else(|e| panic!("ping back failed: {e}"));
    assert_eq!(ping_loss(&out), Some(0.0), "ping output:\n{out}");
    // 30 echo requests one way, 30 replies the other, plus ARP.
    assert!(r.read_u64("fd1.count") >= 30, "fd1.count");
    assert!(r.read_u64("fd2.count") >= 30, "fd2.count");
    assert!(r.read_u64("td2.count") >= 30, "td2.count");
    assert!(r.read_u64("td1.count") >= 30, "td1.count");
    assert_eq!(r.read_u64("fd1.kernel_drops"), 0);
    assert_eq!(r.read_u64("td1.drops"), 0);
    assert_eq!(r.read("fd1.encap"), "ETHER");
    r.finish();
}

#[test]
fn forwarder_carries_tcp_with_offloads_on() {
    require_root!(false);
    let topo = Topology::new();
    let r = Running::start(&topo.rt, &topo.forwarder());
    // Default veth offloads (TSO, checksum offload) stay on: the router
    // receives GSO super-frames with partial checksums and must turn them
    // into valid segments.
    tcp_transfer(&topo, &r);
    r.finish();
}

/// Sends 4 MiB from h1 to h2 through the running forwarder and checks
/// every byte arrived, and a digest came back.
fn tcp_transfer(topo: &Topology, r: &Running) {
    const LEN: usize = 4 << 20;
    let (port_tx, port_rx) = mpsc::channel();
    let server = topo.h2.spawn(move || -> Result<Vec<u8>, String> {
        let l = TcpListener::bind("10.77.0.2:0").map_err(|e| e.to_string())?;
        let _ = port_tx.send(l.local_addr().map_err(|e| e.to_string())?.port());
        let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let mut got = Vec::with_capacity(LEN);
        s.read_to_end(&mut got).map_err(|e| e.to_string())?;
        // Echo a digest back so the reverse path carries data too.
        let sum: u64 = got.iter().map(|&b| u64::from(b)).sum();
        s.write_all(&sum.to_be_bytes()).map_err(|e| e.to_string())?;
        Ok(got)
    });
    let port: u16 = port_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("server port");
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 + i / 4096) as u8).collect();
    let expect_sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
    let payload = data.clone();
    let (done_tx, done_rx) = mpsc::channel();
    let _client = topo.h1.spawn(move || {
        let r = (|| -> Result<u64, String> {
            let addr = std::net::SocketAddr::from(([10, 77, 0, 2], port));
            let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .map_err(|e| format!("connect: {e}"))?;
            s.set_write_timeout(Some(Duration::from_secs(10)))
                .map_err(|e| e.to_string())?;
            s.set_read_timeout(Some(Duration::from_secs(10)))
                .map_err(|e| e.to_string())?;
            s.write_all(&payload).map_err(|e| format!("write: {e}"))?;
            s.shutdown(std::net::Shutdown::Write)
                .map_err(|e| e.to_string())?;
            let mut b = [0u8; 8];
            s.read_exact(&mut b).map_err(|e| format!("read: {e}"))?;
            Ok(u64::from_be_bytes(b))
        })();
        let _ = done_tx.send(r);
    });
    let t0 = Instant::now();
    // A hard deadline: a router that mangles segments stalls TCP, and the
    // test must fail then, not hang.
    let sum = done_rx
        .recv_timeout(Duration::from_secs(15))
        .unwrap_or_else(|_| panic!("TCP transfer through the router stalled"));
    let got = server.join().expect("server thread");
    let elapsed = t0.elapsed();
    let got = got.unwrap_or_else(|e| panic!("server: {e}"));
    assert_eq!(got.len(), LEN, "bytes received");
    assert!(got == data, "data corrupted through the router");
    assert_eq!(sum, Ok(expect_sum));
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert!(r.read_u64("fd1.count") > (LEN / 1500) as u64 / 2);
    assert_eq!(r.read_u64("td2.drops"), 0, "ToDevice refused packets");
}

#[test]
fn idle_fromdevice_sleeps() {
    require_root!(false);
    let topo = Topology::new();
    let r = Running::start(&topo.rt, &topo.forwarder());
    std::thread::sleep(Duration::from_millis(200));
    let c0 = r.cpu();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let used = r.cpu() - c0;
    let wall = t0.elapsed();
    assert!(
        used.as_secs_f64() < 0.1 * wall.as_secs_f64(),
        "idle router used {used:?} of CPU in {wall:?}"
    );
    // Still awake: one ping gets through after the idle second.
    let out = topo
        .h1
        .try_exec(&["ping", "-c", "1", "-W", "2", "10.77.0.2"])
        .ok();
    if let Some(out) = out {
        assert_eq!(ping_loss(&out), Some(0.0), "{out}");
    }
    r.finish();
}

#[test]
fn fromhost_tohost_answer_ping_from_the_host() {
    require_root!(true);
    let rt = Netns::new("th");
    let tap = format!("tp{}", tag());
    let config = format!(
        "fh :: FromHost({tap}, 10.78.0.1/24, ETHER 02:00:00:00:00:01);
         th :: ToHost({tap});
         c :: Classifier(12/0806 20/0001, 12/0800, -);
         fh -> c;
         c[0] -> ARPResponder(10.78.0.2 02:00:00:00:00:02) -> th;
         c[1] -> Strip(14) -> CheckIPHeader -> ICMPPingResponder
              -> EtherEncap(0x0800, 02:00:00:00:00:02, 02:00:00:00:00:01) -> th;
         c[2] -> Discard;"
    );
    let r = Running::start(&rt, &config);
    // The device exists, with the configured addresses, and is up.
    let link = rt
        .try_exec(&["ip", "-o", "addr", "show", "dev", &tap])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(link.contains("10.78.0.1/24"), "{link}");
    let l2 = rt
        .try_exec(&["ip", "-o", "link", "show", "dev", &tap])
        .unwrap();
    assert!(l2.contains("02:00:00:00:00:01"), "{l2}");
    assert_eq!(r.read("fh.dev_name"), tap);
    // The host pings the router's address on the TAP network: requests
    // leave the host through FromHost, answers enter it through ToHost.
    let out = rt
        .try_exec(&["ping", "-c", "5", "-i", "0.1", "-W", "2", "10.78.0.2"])
        .unwrap_or_else(|e| panic!("ping to the router failed: {e}"));
    assert_eq!(ping_loss(&out), Some(0.0), "{out}");
    // The ARP reply ToHost injected reached the host stack's neighbour table.
    let neigh = rt.try_exec(&["ip", "neigh", "show", "10.78.0.2"]).unwrap();
    assert!(neigh.contains("02:00:00:00:00:02"), "{neigh}");
    assert!(r.read_u64("fh.count") >= 6);
    assert!(r.read_u64("th.count") >= 6);
    assert_eq!(r.read_u64("th.drops"), 0);
    r.finish();
    // The device goes away with the router.
    assert!(rt.try_exec(&["ip", "link", "show", "dev", &tap]).is_err());
}

#[test]
fn bad_configurations_are_errors() {
    assert_rejected(&[
        ("FromDevice() -> Discard;", "missing DEVNAME"),
        ("FromDevice(eth0, SNAPLEN 5) -> Discard;", "SNAPLEN"),
        ("FromDevice(eth0, BURST 0) -> Discard;", "BURST"),
        ("FromDevice(eth0, METHOD NETMAP) -> Discard;", "METHOD"),
        ("Idle -> ToDevice(eth0, BURST 0);", "BURST"),
        ("FromDevice(no-such-device-x) -> Discard;", "no device"),
        (
            "FromHost(fake9, 10.0.0.1/8) -> Discard; Idle -> ToHost(nothere);",
            "no FromHost of that name",
        ),
        (
            "FromHost(x0, 10.0.0.1/24, GATEWAY 10.1.0.1) -> Discard;",
            "GATEWAY",
        ),
    ]);
}

// AF_XDP (METHOD XDP): the same forwarder on AF_XDP sockets, in native
// (veth driver) copy mode, with veth offloads left on.

/// The XDP programs attached in namespace `ns` (`ip link` shows `xdp`).
fn xdp_attached(ns: &Netns) -> bool {
    ns.try_exec(&["ip", "-d", "link", "show"])
        .map(|out| out.contains("prog/xdp"))
        .unwrap_or(false)
}

#[test]
fn xdp_forwarder_carries_ping_and_tcp() {
    require_root!(true);
    let topo = Topology::new();
    let r = Running::start(&topo.rt, &topo.forwarder_with(", METHOD XDP"));
    for h in ["fd1", "fd2"] {
        assert_eq!(r.read(&format!("{h}.method")), "XDP native copy", "{h}");
    }
    assert_eq!(r.read("td1.method"), "XDP");
    assert!(
        xdp_attached(&topo.rt),
        "no XDP program on the router's devices"
    );
    let out = topo
        .h1
        .try_exec(&["ping", "-c", "20", "-i", "0.05", "-W", "2", "10.77.0.2"])
        .unwrap_or_else(|e| panic!("ping failed: {e}"));
    assert_eq!(ping_loss(&out), Some(0.0), "ping output:\n{out}");
    // AF_XDP delivers frames without the kernel's partial-checksum note;
    // FromDevice must recognize and complete them or TCP stalls.
    tcp_transfer(&topo, &r);
    assert!(r.read_u64("fd1.count") > 1000);
    assert_eq!(r.read_u64("fd1.kernel_drops"), 0, "fd1.kernel_drops");
    let chatter = r.finish();
    assert!(
        !chatter.iter().any(|c| c.contains("unavailable")),
        "{chatter:?}"
    );
    // The program goes with the router.
    assert!(!xdp_attached(&topo.rt), "XDP program left attached");
}

#[test]
fn xdp_refused_falls_back_to_af_packet_with_a_message() {
    require_root!(true);
    let topo = Topology::new();
    // A bridge device has no driver XDP: native mode is refused.
    let bridge = format!("br{}", tag());
    topo.rt
        .exec(&["ip", "link", "add", &bridge, "type", "bridge"]);
    topo.rt.exec(&["ip", "link", "set", &bridge, "up"]);
    let conf = format!(
        "fd :: FromDevice({bridge}, METHOD XDP, XDP_MODE native) -> Discard;
         td :: ToDevice({bridge}, METHOD LINUX);
         Idle -> td;"
    );
    let r = Running::start(&topo.rt, &conf);
    assert_eq!(r.read("fd.method"), "LINUX");
    let chatter = r.finish();
    assert!(
        chatter.iter().any(
            |c| c.contains("fd: warning: AF_XDP unavailable, using AF_PACKET")
                && c.contains("native mode")
        ),
        "no fallback message: {chatter:?}"
    );
}

#[test]
fn xdp_bad_keywords_are_errors() {
    let reg = rclick_elements::registry();
    for (conf, want) in [
        ("FromDevice(eth0, METHOD XDPX) -> Discard;", "bad METHOD"),
        (
            "FromDevice(eth0, METHOD XDP, XDP_MODE turbo) -> Discard;",
            "bad XDP_MODE",
        ),
        ("Idle -> ToDevice(eth0, METHOD FOO);", "bad METHOD"),
    ] {
        let outcome =
            rclick_lang::parse_router(conf, "t", &reg, &rclick_lang::ParseOptions::default());
        let spec = outcome.spec.expect("parses");
        let err = Router::new(spec, conf, &reg, &RouterOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{conf} accepted"));
        let text = format!("{err:?}");
        assert!(text.contains(want), "{conf}: {text}");
    }
}

/// QUEUE on a two-queue veth: one FromDevice per queue, for AF_PACKET and
/// AF_XDP. veth records no receive queue for AF_PACKET (every frame counts
/// as queue 0), and the kernel here lacks the tc actions that would steer
/// test traffic to queue 1, so what is checked is that per-queue elements
/// coexist on one device (for AF_XDP: two sockets and one program) and
/// together see every frame exactly once.
#[test]
fn one_fromdevice_per_queue() {
    require_root!(true);
    for method in ["LINUX", "XDP"] {
        let (h, rt) = (Netns::new("hq"), Netns::new("rq"));
        h.disable_ipv6();
        rt.disable_ipv6();
        let t = tag();
        let (hd, rd) = (format!("hq{t}"), format!("rq{t}"));
        must(&[
            "ip",
            "link",
            "add",
            &hd,
            "netns",
            &h.name,
            "numtxqueues",
            "2",
            "numrxqueues",
            "2",
            "type",
            "veth",
            "peer",
            "name",
            &rd,
            "netns",
            &rt.name,
            "numtxqueues",
            "2",
            "numrxqueues",
            "2",
        ]);
        h.exec(&["ip", "addr", "add", "10.78.0.1/24", "dev", &hd]);
        h.exec(&["ip", "link", "set", &hd, "up"]);
        rt.exec(&["ip", "link", "set", &rd, "up"]);
        // Nobody answers ARP: a static entry lets the pings go out.
        let mac = std::fs::read_to_string(format!("/sys/class/net/{rd}/address"))
            .ok()
            .or_else(|| {
                rt.try_exec(&["cat", &format!("/sys/class/net/{rd}/address")])
                    .ok()
            })
            .expect("router device address");
        h.exec(&[
            "ip",
            "neigh",
            "replace",
            "10.78.0.2",
            "lladdr",
            mac.trim(),
            "dev",
            &hd,
        ]);
        let conf = format!(
            "f0 :: FromDevice({rd}, QUEUE 0, METHOD {method}) -> c0 :: Counter -> Discard;
             f1 :: FromDevice({rd}, QUEUE 1, METHOD {method}) -> c1 :: Counter -> Discard;"
        );
        let r = Running::start(&rt, &conf);
        if method == "XDP" {
            assert!(
                r.read("f0.method").starts_with("XDP"),
                "{}",
                r.read("f0.method")
            );
            assert!(
                r.read("f1.method").starts_with("XDP"),
                "{}",
                r.read("f1.method")
            );
        }
        let _ = h.run(
            10,
            &["ping", "-c", "10", "-i", "0.05", "-W", "1", "10.78.0.2"],
        );
        let deadline = Instant::now() + Duration::from_secs(3);
        while r.read_u64("c0.count") + r.read_u64("c1.count") < 10 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let (c0, c1) = (r.read_u64("c0.count"), r.read_u64("c1.count"));
        let chatter = r.finish();
        assert_eq!(
            c0 + c1,
            10,
            "{method}: queue 0 saw {c0}, queue 1 saw {c1}; {chatter:?}"
        );
        assert!(
            !chatter.iter().any(|c| c.contains("unavailable")),
            "{chatter:?}"
        );
    }
}

/// Hot swap keeps the AF_XDP sockets: the successors take them from their
/// same-named predecessors (one program per device all along, pings keep
/// flowing); a swap to METHOD LINUX releases them and detaches the program.
#[test]
fn xdp_sockets_survive_hot_swap() {
    require_root!(true);
    let topo = Topology::new();
    let xdp = topo.forwarder_with(", METHOD XDP");
    let r = Running::start(&topo.rt, &xdp);
    let ping = |n: &str| {
        let out = topo
            .h1
            .try_exec(&["ping", "-c", n, "-i", "0.05", "-W", "2", "10.77.0.2"])
            .unwrap_or_else(|e| panic!("ping failed: {e}"));
        assert_eq!(ping_loss(&out), Some(0.0), "ping output:\n{out}");
    };
    ping("5");
    // The same devices with a counter added: every device element is taken
    // over, not reopened (reopening would fail: the queues are in use).
    r.hotswap(&format!("{xdp} c :: Counter; Idle -> c -> Discard;"));
    for h in ["fd1", "fd2"] {
        assert_eq!(r.read(&format!("{h}.method")), "XDP native copy", "{h}");
    }
    assert_eq!(r.read("td1.method"), "XDP");
    ping("5");
    let (_, links) = topo.rt.run(5, &["ip", "-d", "link", "show"]);
    assert_eq!(links.matches("prog/xdp").count(), 2, "{links}");
    // FromDevice(r1) leaves AF_XDP while ToDevice(r1) stays: r1's queue
    // is no longer redirected (its receive half goes back, unused), so
    // AF_PACKET sees r1's frames again; then AF_XDP comes back.
    let r1_linux = xdp.replacen(
        &format!("FromDevice({}, METHOD XDP)", topo.r1),
        &format!("FromDevice({})", topo.r1),
        1,
    );
    assert_ne!(r1_linux, xdp);
    r.hotswap(&r1_linux);
    assert_eq!(r.read("fd1.method"), "LINUX");
    assert_eq!(r.read("td1.method"), "XDP");
    ping("5");
    r.hotswap(&xdp);
    assert_eq!(r.read("fd1.method"), "XDP native copy");
    ping("5");
    // Back to AF_PACKET: the XDP sockets close and the programs go.
    r.hotswap(&topo.forwarder());
    assert_eq!(r.read("fd1.method"), "LINUX");
    ping("5");
    assert!(!xdp_attached(&topo.rt), "XDP program left attached");
    let chatter = r.finish();
    assert!(
        !chatter.iter().any(|c| c.contains("unavailable")),
        "{chatter:?}"
    );
}

/// ToDevice on AF_XDP: a push input in bursts of 64 (more than copy mode
/// sends per kick; ToDevice kicks again, and its retry timer flushes what
/// is left) delivers every frame, and frames that do not fit an
/// AF_XDP frame (empty, or longer than 4096 bytes) leave on output 1 as
/// drops rather than vanishing or wedging the socket.
#[test]
fn xdp_todevice_bursts_and_misfits() {
    require_root!(false);
    let topo = Topology::new();
    let h1_dev = topo.h1_dev.clone();
    let rx = |ns: &Netns| -> u64 {
        ns.try_exec(&[
            "cat",
            &format!("/sys/class/net/{h1_dev}/statistics/rx_packets"),
        ])
        .expect("rx_packets")
        .trim()
        .parse()
        .expect("a count")
    };
    let before = rx(&topo.h1);
    let conf = format!(
        "src :: InfiniteSource(DATASIZE 50, LIMIT 1000, BURST 64, STOP false)
           -> EtherEncap(0x0800, 02:00:00:00:00:01, ff:ff:ff:ff:ff:ff)
           -> td :: ToDevice({r1}, METHOD XDP);
         big :: InfiniteSource(DATASIZE 5000, LIMIT 3, STOP false)
           -> EtherEncap(0x0800, 02:00:00:00:00:01, ff:ff:ff:ff:ff:ff) -> td;
         td[0] -> Discard;
         td[1] -> refused :: Counter -> Discard;",
        r1 = topo.r1
    );
    let r = Running::start(&topo.rt, &conf);
    let deadline = Instant::now() + Duration::from_secs(3);
    while rx(&topo.h1) - before < 1000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    // The kernel may send a frame of its own on the link meanwhile (IPv6
    // autoconfiguration after link-up): h1's counter is a lower bound;
    // td.count is the exact check.
    let at_h1 = rx(&topo.h1) - before;
    assert!((1000..=1004).contains(&at_h1), "frames at h1: {at_h1}");
    assert_eq!(r.read_u64("td.count"), 1000);
    assert_eq!(r.read_u64("td.drops"), 3);
    assert_eq!(r.read_u64("refused.count"), 3);
    r.finish();
}

/// AF_XDP under overload: a generator (rclick with AF_PACKET in h1, as fast
/// as it can) floods the router's XDP receiver; afterwards every receive
/// frame is back in the rings (a short fill-ring reservation once leaked
/// frames until the socket starved) and traffic still flows without loss.
#[test]
fn xdp_receive_survives_overload_without_losing_frames() {
    require_root!(true);
    let topo = Topology::new();
    let r = Running::start(&topo.rt, &topo.forwarder_with(", METHOD XDP"));
    let frames = |r: &Running| -> u64 {
        let stats = r.read("fd1.xdp_stats");
        stats
            .lines()
            .find_map(|l| l.strip_prefix("frames "))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no frames in {stats:?}"))
    };
    assert_eq!(frames(&r), 2048, "idle before");
    let h1_dev = topo.h1_dev.clone();
    let gen = Running::start(
        &topo.h1,
        &format!(
            "src :: InfiniteSource(DATASIZE 46, LIMIT 400000, BURST 64, STOP false)
               -> EtherEncap(0x0800, 02:00:00:00:00:01, ff:ff:ff:ff:ff:ff)
               -> Queue(4096) -> out :: ToDevice({h1_dev}, BURST 64);"
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while gen.read_u64("src.count") < 400_000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = gen.read_u64("out.count");
    gen.finish();
    let got = r.read_u64("fd1.count");
    let dropped = r.read_u64("fd1.kernel_drops");
    eprintln!("generator sent {sent}, router received {got}, kernel dropped {dropped}");
    assert_eq!(
        frames(&r),
        2048,
        "receive frames lost: {}",
        r.read("fd1.xdp_stats")
    );
    let out = topo
        .h1
        .try_exec(&["ping", "-c", "20", "-i", "0.02", "-W", "2", "10.77.0.2"])
        .unwrap_or_else(|e| panic!("ping failed: {e}"));
    assert_eq!(ping_loss(&out), Some(0.0), "ping output:\n{out}");
    r.finish();
}
