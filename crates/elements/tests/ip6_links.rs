//! rclick's IPv6 forwarding path on real links: host A
//! (2001:db8:a::2/64, default route via the router's address) — veth —
//! router namespace — veth — host B, which configures its address and
//! default route by SLAAC from the router's IP6RouterAdvertiser. The
//! router runs in-process in a thread that entered its
//! namespace (whose own IPv6 stack is off); neighbour discovery is done
//! for real on both sides: the hosts resolve the router through its
//! IP6NDAdvertisers, the router resolves the hosts through its
//! IP6NDSolicitors. Linux's `ping -6` checks it both ways, to the router
//! itself (ICMP6PingResponder), with hop limit 1 (ICMP6Error's time
//! exceeded from the router's address), and too big for B's link (packet
//! too big with the MTU; path MTU discovery then fragments at the source);
//! traceroute -6 shows the router hop and iperf3 moves TCP through it.
//!
//! A second test runs a dual-stack router: make-ip-conf's IPv4 router with
//! this IPv6 router on the same interfaces, IPv4 and IPv6 pings at once.
//!
//! Needs root, iproute2, iputils-ping and coreutils' `timeout` (and the
//! make-ip-conf binary, `cargo build --bins`, for the dual-stack test);
//! without them a test prints why it is skipped and passes; traceroute and
//! iperf3 parts are skipped without those tools.

mod common;

use common::netns::*;

const A: &str = "2001:db8:a::2";
/// B's SLAAC address: the advertised prefix and the EUI-64 interface id
/// of B's Ethernet address 02:00:00:00:0b:02.
const B: &str = "2001:db8:b::ff:fe00:b02";
const RA: &str = "2001:db8:a::1";
const RB: &str = "2001:db8:b::1";
const MAC_RA: &str = "02:00:00:00:0a:01";
const MAC_RB: &str = "02:00:00:00:0b:01";
/// The router's link-local address on B's link, the source of its router
/// advertisements and B's default router.
const LL_RB: &str = "fe80::b01";

fn skip_reason() -> Option<String> {
    ping_namespace_skip_reason()
}

/// One router interface: neighbour discovery and router solicitations
/// in (to `ra`, an element or `Discard; Idle`), IPv6 to the table `rt6`,
/// and the interface's queue `out{i}` out. With `dev`, the interface reads
/// and writes that device itself; without, an IPv4 router's
/// configuration has the device, its queue `out{i}` and its classifier
/// `c{i}`, whose last output sends the rest (IPv6) here. `ll` is a
/// link-local address the interface also answers for ("" for none).
fn interface(i: usize, dev: Option<&str>, ip: &str, ll: &str, mac: &str, ra: &str) -> String {
    let io = match dev {
        Some(dev) => format!(
            "FromDevice({dev}) -> v6c{i};
             out{i} :: Queue(1000) -> ToDevice({dev});"
        ),
        None => format!("c{i}[3] -> v6c{i};"),
    };
    format!(
        "v6c{i} :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd 20/3aff 54/85, 12/86dd, -);
         {io}
         nds{i} :: IP6NDSolicitor({ip}, {mac}) -> out{i};
         v6c{i}[0] -> t{i} :: Tee -> nda{i} :: IP6NDAdvertiser({ip} {ll} {mac}) -> out{i};
         t{i}[1] -> [1]nds{i};
         v6c{i}[1] -> [1]nds{i};
         v6c{i}[2] -> {ra} -> out{i};
         v6c{i}[3] -> Paint({i}) -> Strip(14) -> CheckIP6Header({ip}) -> GetIP6Address(24) -> rt6;
         v6c{i}[4] -> Discard;
         dh{i} :: DecIP6HLIM -> nds{i};
         // Expired: time exceeded from the address of the interface the
         // packet came in on (its paint).
         dh{i}[1] -> ps{i} :: PaintSwitch;
         ps{i}[0] -> ICMP6Error({RA}, 3, 0) -> rt6;
         ps{i}[1] -> ICMP6Error({RB}, 3, 0) -> rt6;
        "
    )
}

/// The IPv6 router; `devs` names its devices, or is `None` when an IPv4
/// router's configuration has them (see [`interface`]).
fn router_config(devs: Option<(&str, &str)>) -> String {
    format!(
        "rt6 :: LookupIP6Route({RA}/128 0, {RB}/128 0, 2001:db8:a::/64 1, 2001:db8:b::/64 2);
         rt6[0] -> ping6 :: ICMP6PingResponder -> GetIP6Address(24) -> rt6;
         ping6[1] -> Discard;
         {}{}
         // B's link has an MTU of 1280: bigger packets get packet too big.
         rt6[1] -> dh0; rt6[2] -> mtu1 :: CheckLength(1280) -> dh1;
         mtu1[1] -> tb :: PaintSwitch;
         tb[0] -> ICMP6Error({RA}, 2, 0, MTU 1280) -> rt6;
         tb[1] -> ICMP6Error({RB}, 2, 0, MTU 1280) -> rt6;",
        interface(0, devs.map(|d| d.0), RA, "", MAC_RA, "Discard; Idle"),
        // B configures itself by SLAAC from these advertisements.
        interface(
            1,
            devs.map(|d| d.1),
            RB,
            LL_RB,
            MAC_RB,
            &format!("ra1 :: IP6RouterAdvertiser({LL_RB}, {MAC_RB}, 2001:db8:b::/64, INTERVAL 10)")
        )
    )
}

fn ping_ok(ns: &Netns, args: &[&str]) -> String {
    let mut cmd = vec!["ping", "-6", "-n", "-W", "2"];
    cmd.extend_from_slice(args);
    let (ok, out) = ns.run(30, &cmd);
    assert!(ok, "{} in {}: {out}", cmd.join(" "), ns.name);
    assert_eq!(ping_loss(&out), Some(0.0), "{}:\n{out}", cmd.join(" "));
    assert!(!out.contains("DUP!"), "duplicate replies:\n{out}");
    out
}

/// B has no configured address: it takes one from the router's
/// advertisements (SLAAC: the prefix 2001:db8:b::/64 and the EUI-64
/// interface id of its Ethernet address) and the router's link-local
/// address as its default router.
fn slaac(b: &Netns, b_dev: &str, router_ll: &str) {
    b.exec(&[
        "sysctl",
        "-qw",
        &format!("net.ipv6.conf.{b_dev}.accept_dad=0"),
    ]);
    b.exec(&[
        "sysctl",
        "-qw",
        &format!("net.ipv6.conf.{b_dev}.addr_gen_mode=0"),
    ]);
    b.exec(&["ip", "link", "set", b_dev, "down"]);
    b.exec(&["ip", "link", "set", b_dev, "address", "02:00:00:00:0b:02"]);
    b.exec(&["ip", "link", "set", b_dev, "up"]);
    let mut got = String::new();
    for _ in 0..150 {
        let (_, out) = b.run(
            5,
            &["ip", "-6", "addr", "show", "dev", b_dev, "scope", "global"],
        );
        if out.contains(B) {
            got = out;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        got.contains(&format!("{B}/64")),
        "B's SLAAC address: {got:?}"
    );
    let (_, route) = b.run(5, &["ip", "-6", "route", "show", "default"]);
    assert!(
        route.contains(&format!("via {router_ll}")),
        "B's default route: {route}"
    );
}

#[test]
fn ping6_through_rclick_with_neighbour_discovery() {
    skip_if!(skip_reason());
    let t = tag();
    let (a, b, rt) = (Netns::new("a6"), Netns::new("b6"), Netns::new("r6"));
    // The router namespace's own IPv6 stack stays off the links.
    rt.disable_ipv6();
    let (a_dev, ra) = (format!("ha{t}"), format!("ra{t}"));
    let (b_dev, rb) = (format!("hb{t}"), format!("rb{t}"));
    for (h, hd, rd, mac) in [(&a, &a_dev, &ra, MAC_RA), (&b, &b_dev, &rb, MAC_RB)] {
        must(&[
            "ip", "link", "add", hd, "netns", &h.name, "type", "veth", "peer", "name", rd, "netns",
            &rt.name,
        ]);
        rt.exec(&["ip", "link", "set", rd, "address", mac]);
        rt.exec(&["ip", "link", "set", rd, "arp", "off"]);
        rt.exec(&["ip", "link", "set", rd, "up"]);
        h.exec(&["ip", "link", "set", hd, "up"]);
    }
    a.exec(&[
        "ip",
        "-6",
        "addr",
        "add",
        &format!("{A}/64"),
        "dev",
        &a_dev,
        "nodad",
    ]);
    a.exec(&["ip", "-6", "route", "add", "default", "via", RA]);
    let router = Running::start(&rt, &router_config(Some((&ra, &rb))));
    slaac(&b, &b_dev, LL_RB);
    assert!(router.read_u64("ra1.sent") >= 1);

    ping_ok(&a, &["-c", "5", "-i", "0.2", B]);
    ping_ok(&b, &["-c", "5", "-i", "0.2", A]);
    ping_ok(&a, &["-c", "2", "-i", "0.2", RA]);

    // Neighbour discovery on both sides: the hosts know the router's
    // Ethernet addresses, the router knows theirs.
    let (_, n) = a.run(5, &["ip", "-6", "neigh", "show", RA]);
    assert!(
        n.contains(MAC_RA),
        "A's neighbour entry for the router: {n}"
    );
    let (_, n) = b.run(5, &["ip", "-6", "neigh", "show", RB]);
    assert!(
        n.contains(MAC_RB),
        "B's neighbour entry for the router: {n}"
    );
    let table = router.read("nds0.table");
    assert!(table.contains(&format!("{A} 1 ")), "nds0.table: {table}");
    let table = router.read("nds1.table");
    assert!(table.contains(&format!("{B} 1 ")), "nds1.table: {table}");
    assert!(router.read_u64("nda0.responses") >= 1);

    // Hop limit 1 expires at the router: time exceeded from its address.
    let (_, out) = a.run(
        10,
        &["ping", "-6", "-n", "-c", "1", "-W", "2", "-t", "1", B],
    );
    assert!(
        out.contains(&format!("From {RA} icmp_seq=1 Time exceeded")),
        "ping -t 1:\n{out}"
    );
    // Path MTU discovery: a 1400-byte ping that may not be fragmented gets
    // packet too big with B's link MTU, from the router's A-side address.
    let (_, out) = a.run(
        10,
        &[
            "ping", "-6", "-n", "-c", "1", "-W", "2", "-M", "do", "-s", "1400", B,
        ],
    );
    assert!(
        out.contains(&format!("From {RA} icmp_seq=1 Packet too big: mtu=1280")),
        "ping -M do -s 1400:\n{out}"
    );
    // Then A fragments to fit, and the ping goes through.
    ping_ok(&a, &["-c", "2", "-i", "0.2", "-s", "1400", B]);
    if have(&["traceroute", "--version"]) {
        let (ok, out) = a.run(
            30,
            &["traceroute", "-6", "-n", "-q", "1", "-w", "2", "-m", "4", B],
        );
        assert!(ok, "traceroute: {out}");
        let hops: Vec<Vec<&str>> = out
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            hops.first().and_then(|h| h.get(1)).copied(),
            Some(RA),
            "traceroute:\n{out}"
        );
        assert_eq!(
            hops.get(1).and_then(|h| h.get(1)).copied(),
            Some(B),
            "traceroute:\n{out}"
        );
    } else {
        eprintln!("SKIP PART: traceroute -6: install the Debian package traceroute");
    }
    if have(&["iperf3", "--version"]) {
        // A TCP transfer both ways through the IPv6 path.
        let server = b.spawn(|| run_t(20, &["iperf3", "-s", "-1", "-6"]));
        std::thread::sleep(std::time::Duration::from_millis(500));
        let (ok, out) = a.run(20, &["iperf3", "-6", "-c", B, "-t", "2"]);
        let _ = server.join();
        assert!(ok, "iperf3: {out}");
        assert!(out.contains("receiver"), "iperf3: {out}");
    } else {
        eprintln!("SKIP PART: iperf3 -6: install the Debian package iperf3");
    }
    assert_eq!(router.read("nds0.drops"), "0");
    drop(router);
}

/// The make-ip-conf binary, built next to this test's target directory.
fn make_ip_conf(args: &[&str]) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .ok_or("no target directory")?
        .join("make-ip-conf");
    let out = std::process::Command::new(&bin)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e} (cargo build --bins)", bin.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A dual-stack router written whole by make-ip-conf: the Click paper's
/// Figure 8 IPv4 router with `--ip6` on both interfaces, so the IPv4
/// classifiers' last outputs feed IPv6 paths (neighbour discovery, router
/// advertisements for SLAAC, one IPv6 table) that share the output
/// queues. B configures itself by SLAAC from the generated router
/// advertisements (its default router the EUI-64 link-local address of
/// the router's interface); IPv4 and IPv6 pings run through it at once.
#[test]
fn dual_stack_ipv4_and_ipv6_at_once() {
    skip_if!(skip_reason());
    let t = tag();
    let (ra, rb) = (format!("ra{t}"), format!("rb{t}"));
    let v4 = match make_ip_conf(&[
        "--ip6",
        &format!("{ra}:{RA}/64"),
        "--ip6",
        &format!("{rb}:{RB}/64"),
        &format!("{ra}:10.0.0.1/24:{MAC_RA}"),
        &format!("{rb}:10.0.1.1/24:{MAC_RB}"),
    ]) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP: make-ip-conf binary not built: {e}");
            return;
        }
    };
    assert!(v4.contains("c0[3] -> v6c0 ::") && v4.contains("c1[3] -> v6c1 ::"));
    let (a, b, rt) = (Netns::new("a6"), Netns::new("b6"), Netns::new("r6"));
    rt.disable_ipv6();
    let (a_dev, b_dev) = (format!("ha{t}"), format!("hb{t}"));
    for (h, hd, rd, mac) in [(&a, &a_dev, &ra, MAC_RA), (&b, &b_dev, &rb, MAC_RB)] {
        must(&[
            "ip", "link", "add", hd, "netns", &h.name, "type", "veth", "peer", "name", rd, "netns",
            &rt.name,
        ]);
        rt.exec(&["ip", "link", "set", rd, "address", mac]);
        rt.exec(&["ip", "link", "set", rd, "arp", "off"]);
        rt.exec(&["ip", "link", "set", rd, "up"]);
        h.exec(&["ip", "link", "set", hd, "up"]);
    }
    a.exec(&["ip", "addr", "add", "10.0.0.2/24", "dev", &a_dev]);
    a.exec(&["ip", "route", "add", "default", "via", "10.0.0.1"]);
    a.exec(&[
        "ip",
        "-6",
        "addr",
        "add",
        &format!("{A}/64"),
        "dev",
        &a_dev,
        "nodad",
    ]);
    a.exec(&["ip", "-6", "route", "add", "default", "via", RA]);
    let router = Running::start(&rt, &v4);
    // (After SLAAC, which takes the link down and up.)
    slaac(&b, &b_dev, "fe80::ff:fe00:b01");
    b.exec(&["ip", "addr", "add", "10.0.1.2/24", "dev", &b_dev]);
    b.exec(&["ip", "route", "add", "default", "via", "10.0.1.1"]);

    let (v4_out, v6_out) = std::thread::scope(|s| {
        let v4 = s.spawn(|| {
            a.run(
                30,
                &[
                    "ping", "-4", "-n", "-W", "2", "-c", "10", "-i", "0.1", "10.0.1.2",
                ],
            )
        });
        let v6 = s.spawn(|| {
            a.run(
                30,
                &["ping", "-6", "-n", "-W", "2", "-c", "10", "-i", "0.1", B],
            )
        });
        (v4.join().unwrap(), v6.join().unwrap())
    });
    assert_eq!(
        ping_loss(&v4_out.1),
        Some(0.0),
        "IPv4 ping:\n{}\narpq0: {}\narpq1: {}\nA neigh: {}",
        v4_out.1,
        router.read("arpq0.table"),
        router.read("arpq1.table"),
        a.run(5, &["ip", "neigh"]).1
    );
    assert_eq!(ping_loss(&v6_out.1), Some(0.0), "IPv6 ping:\n{}", v6_out.1);
    ping_ok(&b, &["-c", "3", "-i", "0.2", A]);
    assert!(router.read("arpq1.table").contains("10.0.1.2"));
    assert!(router.read("nds1.table").contains(&format!("{B} 1 ")));
    drop(router);
}

/// make-ip-conf's dual-stack router initializes when an interface before
/// the last `--ip6` one has no IPv6 (its `rt6` output, which no route
/// names, still needs a connection). Trace form, so it needs no devices
/// and no root.
#[test]
fn make_ip_conf_dual_stack_initializes_with_an_ipv4_only_first_interface() {
    let dir = std::env::temp_dir().join(format!("rclick-mipc6-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // An empty pcap file (header only) for each interface's input trace.
    let header: [u8; 24] = [
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
    ];
    for f in ["a", "b"] {
        std::fs::write(dir.join(format!("{f}.in.pcap")), header).unwrap();
    }
    let d = dir.to_string_lossy().into_owned();
    let conf = match make_ip_conf(&[
        "--trace",
        &d,
        "--ip6",
        "b:2001:db8:b::1/64",
        "a:10.0.0.1/24:02:00:00:00:0a:01",
        "b:10.0.1.1/24:02:00:00:00:0b:01",
    ]) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP: make-ip-conf binary not built: {e}");
            return;
        }
    };
    let reg = rclick_elements::registry();
    let outcome =
        rclick_lang::parse_router(&conf, "test", &reg, &rclick_lang::ParseOptions::default());
    assert!(!outcome.has_errors(), "{conf}");
    let spec = outcome.spec.expect("a router");
    let r = rclick_core::Router::new(spec, &conf, &reg, &rclick_core::RouterOptions::default());
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(errs) = r {
        let msgs: Vec<String> = errs.iter().map(|e| format!("{e:?}")).collect();
        panic!("{}\n{conf}", msgs.join("\n"));
    }
}
