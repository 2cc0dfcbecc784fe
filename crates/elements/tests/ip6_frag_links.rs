//! IP6Fragmenter and IP6Reassembler against Linux on a real link: host A
//! (2001:db8:a::2/64, link MTU 1500) — veth — a namespace where rclick
//! plays an IPv6 end host at 2001:db8:a::1 (its own IPv6 stack off):
//! neighbour discovery by IP6NDAdvertiser/IP6NDSolicitor, then
//! IP6Reassembler, ICMP6PingResponder and IP6Fragmenter(1280). `ping -6
//! -s 3000` from A sends echo requests Linux fragmented, which only a
//! working IP6Reassembler turns into one request; the 3048-byte reply
//! leaves in fragments of at most 1280 bytes, which only Linux's
//! reassembly turns back into a reply `ping` counts. Then scapy on A
//! sends extension headers through IP6HopByHop and IP6Routing: a type 0
//! routing header gets ICMP6Error's parameter problem at the routing type
//! (RFC 5095), an unknown option of type 10xxxxxx one at the option, and
//! a router alert reaches its output (scapy parts skipped without scapy).
//!
//! Needs root, iproute2, iputils-ping and coreutils' `timeout`; without
//! them the test prints why it is skipped and passes.

mod common;

use common::netns::*;

const A: &str = "2001:db8:a::2";
const R: &str = "2001:db8:a::1";
const MAC_R: &str = "02:00:00:00:0a:01";

fn skip_reason() -> Option<String> {
    ping_namespace_skip_reason()
}

fn host_config(dev: &str) -> String {
    format!(
        "FromDevice({dev}) -> c :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd, -);
         out :: Queue(1000) -> ToDevice({dev});
         nds :: IP6NDSolicitor({R}, {MAC_R}) -> out;
         c[0] -> t :: Tee -> nda :: IP6NDAdvertiser({R} {MAC_R}) -> out;
         t[1] -> [1]nds;
         c[1] -> [1]nds;
         c[2] -> Strip(14) -> CheckIP6Header -> hbh :: IP6HopByHop -> rh :: IP6Routing
           -> reasm :: IP6Reassembler
           -> ping :: ICMP6PingResponder -> GetIP6Address(24)
           -> frag :: IP6Fragmenter(1280) -> nds;
         c[3] -> Discard; ping[1] -> Discard; frag[1] -> Discard; reasm[1] -> Discard;
         hbh[1] -> Discard; // Router alerts: Linux's own MLD reports (next header 58) and scapy's UDP one.
         hbh[2] -> ac :: Classifier(40/11, -) -> alerts :: Counter -> Discard; ac[1] -> Discard; hbh[3] -> Discard;
         hbh[4] -> ICMP6Error({R}, 4, 2) -> GetIP6Address(24) -> nds;
         rh[1] -> ICMP6Error({R}, 4, 0) -> GetIP6Address(24) -> nds;"
    )
}

#[test]
fn linux_fragments_reassembled_and_ours_reassembled_by_linux() {
    skip_if!(skip_reason());
    let t = tag();
    let (a, r) = (Netns::new("i6a"), Netns::new("i6r"));
    r.disable_ipv6();
    let (a_dev, r_dev) = (format!("i6a{t}"), format!("i6r{t}"));
    must(&[
        "ip", "link", "add", &a_dev, "netns", &a.name, "type", "veth", "peer", "name", &r_dev,
        "netns", &r.name,
    ]);
    r.exec(&["ip", "link", "set", &r_dev, "address", MAC_R]);
    r.exec(&["ip", "link", "set", &r_dev, "up"]);
    a.exec(&["ip", "link", "set", &a_dev, "up"]);
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
    let router = Running::start(&r, &host_config(&r_dev));

    // Small pings first: neighbour discovery, no fragments.
    let (ok, out) = a.run(
        20,
        &["ping", "-6", "-n", "-W", "2", "-c", "2", "-i", "0.2", R],
    );
    assert!(ok && ping_loss(&out) == Some(0.0), "small ping:\n{out}");
    assert_eq!(router.read_u64("frag.fragments"), 0);

    // 3000 bytes of ICMP data: Linux sends 3 fragments (MTU 1500), rclick
    // answers with 3 fragments of at most 1280 bytes.
    let (ok, out) = a.run(
        30,
        &[
            "ping", "-6", "-n", "-W", "2", "-c", "4", "-i", "0.3", "-s", "3000", R,
        ],
    );
    assert!(ok, "ping -s 3000:\n{out}");
    assert_eq!(ping_loss(&out), Some(0.0), "ping -s 3000:\n{out}");
    assert!(out.contains("3008 bytes from"), "ping -s 3000:\n{out}");
    let dump = router.read("reasm.dump");
    assert!(
        dump.contains("good reassemblies:   4"),
        "reasm.dump:\n{dump}"
    );
    assert!(
        dump.contains("bad fragments seen:  0"),
        "reasm.dump:\n{dump}"
    );
    assert_eq!(router.read_u64("frag.fragments"), 12);
    assert_eq!(router.read("frag.drops"), "0");

    // Extension headers from scapy on A: a type 0 routing header with a
    // segment left gets a parameter problem pointing at the routing type
    // (RFC 5095); an unknown hop-by-hop option of type 10xxxxxx one
    // pointing at the option (code 2); a router alert reaches its output.
    let script = format!(
        "from scapy.all import *\n\
         conf.verb = 0\n\
         a, r = '{A}', '{R}'\n\
         p = sr1(IPv6(src=a, dst=r)/IPv6ExtHdrRouting(type=0, segleft=1, addresses=['2001:db8::99'])/ICMPv6EchoRequest(), iface='{a_dev}', timeout=3)\n\
         print('rh0', p[ICMPv6ParamProblem].code, p[ICMPv6ParamProblem].ptr, p[IPv6].src if p else None)\n\
         p = sr1(IPv6(src=a, dst=r)/IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=0x9e, optdata=b'xy')])/ICMPv6EchoRequest(), iface='{a_dev}', timeout=3)\n\
         print('hbh', p[ICMPv6ParamProblem].code, p[ICMPv6ParamProblem].ptr)\n\
         send(IPv6(src=a, dst=r)/IPv6ExtHdrHopByHop(options=[RouterAlert()])/UDP(), iface='{a_dev}')\n"
    );
    if a.run(5, &["python3", "-c", "import scapy.all"]).0 {
        let (ok, out) = a.run(30, &["python3", "-c", &script]);
        assert!(ok, "scapy:\n{out}");
        assert!(out.contains(&format!("rh0 0 42 {R}")), "scapy:\n{out}");
        assert!(out.contains("hbh 2 42"), "scapy:\n{out}");
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(router.read_u64("alerts.count"), 1);
    } else {
        eprintln!("SKIP PART: extension headers: python3 with scapy not available");
    }
    drop(router);
}
