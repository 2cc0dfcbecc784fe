//! Parallel input from one device: FromDevice with FANOUT (several
//! AF_PACKET sockets in one PACKET_FANOUT group) and FromDevice with
//! METHOD XDP, one per receive QUEUE. Traffic is many UDP flows sent from
//! a peer namespace over a veth pair made for each test; each FromDevice
//! counts its packets and writes their 5-tuples with ToIPSummaryDump, and
//! the test checks that every packet sent was received exactly once and
//! that each flow went to one element only.
//!
//! Needs root and iproute2 (`ip`); without them each test prints why it
//! is skipped and passes.

use std::collections::{BTreeMap, BTreeSet};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

use rclick_core::{Router, RouterOptions};
use rclick_elements::testing::try_from_config_with;

use common::netns::*;

const HOST: &str = "10.79.0.1";
const PEER: &str = "10.79.0.2";

/// A veth pair with `queues` receive and transmit queues: `hd` in the
/// sending namespace `h` (address HOST, a static neighbor entry for PEER,
/// since nobody answers ARP) and `rd` in the router's namespace `rt`.
struct Link {
    h: Netns,
    rt: Netns,
    hd: String,
    rd: String,
}

impl Link {
    fn new(queues: u32) -> Link {
        let (h, rt) = (Netns::new("hf"), Netns::new("rf"));
        h.disable_ipv6();
        rt.disable_ipv6();
        let t = tag();
        let (hd, rd) = (format!("hf{t}"), format!("rf{t}"));
        let q = queues.to_string();
        must(&[
            "ip",
            "link",
            "add",
            &hd,
            "netns",
            &h.name,
            "numtxqueues",
            &q,
            "numrxqueues",
            &q,
            "type",
            "veth",
            "peer",
            "name",
            &rd,
            "netns",
            &rt.name,
            "numtxqueues",
            &q,
            "numrxqueues",
            &q,
        ]);
        h.exec(&["ip", "addr", "add", &format!("{HOST}/24"), "dev", &hd]);
        h.exec(&["ip", "link", "set", &hd, "up"]);
        rt.exec(&["ip", "link", "set", &rd, "up"]);
        let mac = rt
            .try_exec(&["cat", &format!("/sys/class/net/{rd}/address")])
            .expect("router device address");
        h.exec(&[
            "ip",
            "neigh",
            "replace",
            PEER,
            "lladdr",
            mac.trim(),
            "dev",
            &hd,
        ]);
        Link { h, rt, hd, rd }
    }

    /// Sends `per_flow` UDP datagrams on each of `flows` flows (source
    /// port 20000 + i to destination port 30000 + i), from a thread in the
    /// sending namespace, pausing after every 16 so that no queue on the
    /// way (veth's 256-frame ring, the receive rings) can overflow even on
    /// a loaded machine. Returns the flows, as ToIPSummaryDump writes them.
    fn send(&self, flows: u16, per_flow: usize) -> BTreeSet<String> {
        let sent = self
            .h
            .spawn(move || {
                let socks: Vec<(UdpSocket, u16)> = (0..flows)
                    .map(|i| {
                        let s = UdpSocket::bind((HOST, 20000 + i)).expect("bind");
                        (s, 30000 + i)
                    })
                    .collect();
                for _ in 0..per_flow {
                    for (i, (s, dport)) in socks.iter().enumerate() {
                        s.send_to(b"rclick fanout test", (PEER, *dport))
                            .expect("send");
                        if i % 16 == 15 {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
            .join();
        assert!(sent.is_ok(), "sender thread panicked");
        (0..flows)
            .map(|i| format!("{HOST} {} {PEER} {} U", 20000 + i, 30000 + i))
            .collect()
    }

    /// The sender's device counters (drops on the way show there), for
    /// failure messages.
    fn sender_stats(&self) -> String {
        self.h
            .run(5, &["ip", "-s", "link", "show", "dev", &self.hd])
            .1
    }
}

/// The lines of the IP summary dump at `path` after `!data`, counted.
fn flows_in(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut flows = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('!')) {
        *flows.entry(line.to_string()).or_insert(0) += 1;
    }
    flows
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rclick-fanout-{name}-{}", tag()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Two FromDevice elements on one device, `kw0` and `kw1` their extra
/// keywords; `flows` flows of `per_flow` packets each. Checks that both
/// elements use the I/O method whose `method` handler starts with
/// `method`, that both received packets, that together they received each
/// packet sent exactly once, and that each flow went to only one of them.
/// Returns the elements' `fanout` handler values.
fn check_split(
    link: &Link,
    method: &str,
    kw0: &str,
    kw1: &str,
    flows: u16,
    per_flow: usize,
) -> [String; 2] {
    let dir = scratch("split");
    let dump = |i: usize| dir.join(format!("f{i}.ipsum"));
    let conf = format!(
        "f0 :: FromDevice({rd}, FORCE_IP true, {kw0}) -> c0 :: Counter
           -> ToIPSummaryDump({d0}, CONTENTS ip_src sport ip_dst dport ip_proto);
         f1 :: FromDevice({rd}, FORCE_IP true, {kw1}) -> c1 :: Counter
           -> ToIPSummaryDump({d1}, CONTENTS ip_src sport ip_dst dport ip_proto);",
        rd = link.rd,
        d0 = dump(0).display(),
        d1 = dump(1).display(),
    );
    let r = Running::start(&link.rt, &conf);
    let methods = [r.read("f0.method"), r.read("f1.method")];
    if !methods.iter().all(|m| m.starts_with(method)) {
        let chatter = r.finish();
        panic!(
            "{kw0} / {kw1}: methods {methods:?}, not {method}{}; chatter {chatter:?}",
            if method.starts_with("XDP") {
                " (AF_XDP fell back to AF_PACKET)"
            } else {
                ""
            }
        );
    }
    let fanout = [r.read("f0.fanout"), r.read("f1.fanout")];
    let want = link.send(flows, per_flow);
    let total = u64::from(flows) * per_flow as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.read_u64("c0.count") + r.read_u64("c1.count") < total && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Time for duplicates, if any, to arrive as well.
    std::thread::sleep(Duration::from_millis(200));
    let (c0, c1) = (r.read_u64("c0.count"), r.read_u64("c1.count"));
    let drops = [r.read("f0.drops"), r.read("f1.drops")];
    let chatter = r.finish();
    let ctx = format!(
        "{kw0} / {kw1}: methods {methods:?}, counts {c0} + {c1} of {total}, drops {drops:?}, chatter {chatter:?}, sender {}",
        link.sender_stats()
    );
    assert_eq!(c0 + c1, total, "{ctx}");
    assert!(c0 > 0 && c1 > 0, "one element got every flow: {ctx}");
    let (seen0, seen1) = (flows_in(&dump(0)), flows_in(&dump(1)));
    assert_eq!(seen0.values().sum::<u64>(), c0, "{ctx}: {seen0:?}");
    assert_eq!(seen1.values().sum::<u64>(), c1, "{ctx}: {seen1:?}");
    let both: Vec<&String> = seen0.keys().filter(|f| seen1.contains_key(*f)).collect();
    assert!(
        both.is_empty(),
        "flows seen by both elements: {both:?}; {ctx}"
    );
    let seen: BTreeSet<String> = seen0.keys().chain(seen1.keys()).cloned().collect();
    assert_eq!(seen, want, "{ctx}");
    for (flow, n) in seen0.iter().chain(seen1.iter()) {
        assert_eq!(*n, per_flow as u64, "flow {flow}: {ctx}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    fanout
}

/// Two FromDevice(..., FANOUT true) on one single-queue veth join one
/// PACKET_FANOUT group (the device's: id = its index) and the kernel
/// spreads 63 UDP flows over them by flow hash (an odd number, so that
/// round robin would split every flow: the test catches a mode that
/// ignores flows).
#[test]
fn fanout_spreads_flows_without_duplicates() {
    skip_if!(namespace_skip_reason());
    let link = Link::new(1);
    let fanout = check_split(&link, "LINUX", "FANOUT true", "FANOUT true", 63, 4);
    let index = link
        .rt
        .try_exec(&["cat", &format!("/sys/class/net/{}/ifindex", link.rd)])
        .expect("ifindex");
    let want = format!("hash {}", index.trim());
    assert_eq!(fanout, [want.clone(), want]);
}

/// FANOUT_ID and FANOUT_MODE given: the elements meet in that group; two
/// more elements on the device without FANOUT (one with `FANOUT_ROLLOVER
/// false`, which does not ask for fanout) are ordinary sockets that see
/// every frame.
#[test]
fn fanout_with_explicit_group_and_plain_listener() {
    skip_if!(namespace_skip_reason());
    let link = Link::new(1);
    let conf = format!(
        "f0 :: FromDevice({rd}, FORCE_IP true, FANOUT_ID 4242, FANOUT_MODE hash) -> c0 :: Counter -> Discard;
         f1 :: FromDevice({rd}, FORCE_IP true, FANOUT_ID 4242, FANOUT_MODE HASH) -> c1 :: Counter -> Discard;
         all :: FromDevice({rd}, FORCE_IP true) -> c :: Counter -> Discard;
         norollover :: FromDevice({rd}, FORCE_IP true, FANOUT_ROLLOVER false) -> cn :: Counter -> Discard;",
        rd = link.rd
    );
    let r = Running::start(&link.rt, &conf);
    assert_eq!(r.read("f0.fanout"), "hash 4242");
    assert_eq!(r.read("f1.fanout"), "hash 4242");
    assert_eq!(r.read("all.fanout"), "");
    assert_eq!(r.read("norollover.fanout"), "");
    link.send(32, 3);
    let counts = || {
        (
            r.read_u64("c0.count") + r.read_u64("c1.count"),
            r.read_u64("c.count"),
            r.read_u64("cn.count"),
        )
    };
    let done = |(a, b, c): (u64, u64, u64)| a >= 96 && b >= 96 && c >= 96;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(counts()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (c0, c1) = (r.read_u64("c0.count"), r.read_u64("c1.count"));
    let all = counts();
    let chatter = r.finish();
    assert_eq!(
        all,
        (96, 96, 96),
        "{c0} + {c1}; {chatter:?}; sender {}",
        link.sender_stats()
    );
    assert!(c0 > 0 && c1 > 0, "{c0} + {c1}");
}

/// The running kernel is at least `major.minor` (from
/// /proc/sys/kernel/osrelease; false if unreadable).
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// With OUTBOUND false (the default), frames the host sends on the device
/// never reach a FANOUT group's sockets: a member's own
/// PACKET_IGNORE_OUTGOING does not apply to the group, which must be made
/// with PACKET_FANOUT_FLAG_IGNORE_OUTGOING (Linux 6.2+). The router's
/// namespace sends 40 UDP datagrams out of the device (to an address whose
/// Ethernet address nobody has, so nothing answers); a listener with
/// OUTBOUND true sees them, while the members' `ignored_outgoing`
/// (outgoing frames that reached their rings and were discarded there)
/// stays 0. Inbound traffic sent afterwards follows the outgoing frames
/// through each ring in order, so once both members have read their share
/// of it, any outgoing frame the group had given them would have been read
/// (and counted) too. (A ToDevice cannot be the sender: it bypasses the
/// qdisc layer, and with it the copies to packet sockets.)
#[test]
fn fanout_group_ignores_outgoing_frames() {
    skip_if!(namespace_skip_reason());
    if !kernel_at_least(6, 2) {
        eprintln!("SKIP: PACKET_FANOUT_FLAG_IGNORE_OUTGOING needs Linux 6.2 or later");
        return;
    }
    const OWN: &str = "10.79.0.3";
    const NOBODY: &str = "10.79.0.9";
    let link = Link::new(1);
    link.rt
        .exec(&["ip", "addr", "add", &format!("{OWN}/24"), "dev", &link.rd]);
    link.rt.exec(&[
        "ip",
        "neigh",
        "replace",
        NOBODY,
        "lladdr",
        "02:00:00:00:00:99",
        "dev",
        &link.rd,
    ]);
    // Outgoing: IPv4 (offset 12) to NOBODY (offset 30).
    let conf = format!(
        "f0 :: FromDevice({rd}, FORCE_IP true, FANOUT true) -> c0 :: Counter -> Discard;
         f1 :: FromDevice({rd}, FORCE_IP true, FANOUT true) -> c1 :: Counter -> Discard;
         plain :: FromDevice({rd}, FORCE_IP true) -> c :: Counter -> Discard;
         out :: FromDevice({rd}, OUTBOUND true)
           -> Classifier(12/0800 30/0a4f0009) -> oc :: Counter -> Discard;",
        rd = link.rd
    );
    let r = Running::start(&link.rt, &conf);
    let sent = link
        .rt
        .spawn(|| {
            let s = UdpSocket::bind((OWN, 0)).expect("bind");
            for i in 0..40 {
                s.send_to(b"rclick outgoing", (NOBODY, 9)).expect("send");
                if i % 16 == 15 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        })
        .join();
    assert!(sent.is_ok(), "sender thread panicked");
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.read_u64("oc.count") < 40 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        r.read_u64("oc.count"),
        40,
        "outgoing frames seen with OUTBOUND true (out.count {})",
        r.read("out.count")
    );
    link.send(32, 2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while (r.read_u64("c0.count") + r.read_u64("c1.count") < 64 || r.read_u64("c.count") < 64)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (c0, c1, c) = (
        r.read_u64("c0.count"),
        r.read_u64("c1.count"),
        r.read_u64("c.count"),
    );
    let ignored = [
        r.read_u64("f0.ignored_outgoing"),
        r.read_u64("f1.ignored_outgoing"),
        r.read_u64("plain.ignored_outgoing"),
    ];
    let fanout = [r.read("f0.fanout"), r.read("f1.fanout")];
    let chatter = r.finish();
    let ctx = format!(
        "counts {c0} + {c1}, {c}; fanout {fanout:?}; chatter {chatter:?}; sender {}",
        link.sender_stats()
    );
    assert_eq!((c0 + c1, c), (64, 64), "{ctx}");
    assert!(c0 > 0 && c1 > 0, "one member got every flow: {ctx}");
    assert_eq!(
        ignored,
        [0, 0, 0],
        "outgoing frames reached the rings (f0, f1, plain): {ctx}"
    );
}

/// On Linux 6.2 and later, OUTBOUND is part of the group's settings (the
/// ignore-outgoing flag): a member with OUTBOUND true cannot join a group
/// made by members with OUTBOUND false, and initialization says why.
#[test]
fn fanout_members_must_agree_on_outbound() {
    skip_if!(namespace_skip_reason());
    if !kernel_at_least(6, 2) {
        eprintln!("SKIP: PACKET_FANOUT_FLAG_IGNORE_OUTGOING needs Linux 6.2 or later");
        return;
    }
    let link = Link::new(1);
    let conf = format!(
        "a :: FromDevice({rd}, FANOUT_ID 78) -> Discard;\n\
         b :: FromDevice({rd}, FANOUT_ID 78, OUTBOUND true) -> Discard;",
        rd = link.rd
    );
    let text = link
        .rt
        .spawn(move || router_error(&conf))
        .join()
        .expect("router thread");
    assert!(
        text.contains("fanout.click:2: While initializing 'b :: FromDevice'")
            && text.contains("cannot join PACKET_FANOUT group 78 (mode hash): Invalid argument")
            && text.contains("OUTBOUND"),
        "{text}"
    );
}

/// The default group id is the interface index, and a group id has 16
/// bits: on a device whose index is larger, FANOUT without FANOUT_ID fails
/// to initialize and says to give FANOUT_ID (the id was truncated before,
/// joining some other group); with FANOUT_ID the device works.
#[test]
fn fanout_default_id_needs_an_index_that_fits() {
    skip_if!(namespace_skip_reason());
    let ns = Netns::new("fi");
    let t = tag();
    let (a, b) = (format!("fi{t}"), format!("fj{t}"));
    ns.exec(&[
        "ip", "link", "add", "name", &a, "index", "70000", "type", "veth", "peer", "name", &b,
    ]);
    ns.exec(&["ip", "link", "set", &a, "up"]);
    ns.exec(&["ip", "link", "set", &b, "up"]);
    let conf = format!("f :: FromDevice({a}, FANOUT true) -> Discard;");
    let text = ns
        .spawn(move || router_error(&conf))
        .join()
        .expect("router thread");
    assert!(
        text.contains(&format!(
            "{a}: interface index 70000 does not fit a PACKET_FANOUT group id"
        )) && text.contains("give FANOUT_ID"),
        "{text}"
    );
    let conf = format!("f :: FromDevice({a}, FANOUT_ID 9) -> Discard;");
    let fanout = ns
        .spawn(move || {
            let mut r =
                try_from_config_with(&conf, &RouterOptions::default()).map_err(|e| e.join("\n"))?;
            let fanout = r.read_handler("f.fanout", None);
            r.cleanup();
            fanout
        })
        .join()
        .expect("router thread");
    assert_eq!(fanout.as_deref(), Ok("hash 9"));
}

/// METHOD XDP with one FromDevice per QUEUE on a two-queue veth: the
/// sender's transmit queue is picked by flow hash and veth delivers on the
/// matching receive queue, so the flows spread over the two AF_XDP sockets,
/// each flow on one.
#[test]
fn xdp_one_socket_per_queue_splits_flows() {
    skip_if!(namespace_skip_reason());
    let link = Link::new(2);
    // Both must really be AF_XDP sockets: after a fallback to AF_PACKET,
    // QUEUE's socket filter would split the flows just the same.
    let fanout = check_split(
        &link,
        "XDP ",
        "METHOD XDP, QUEUE 0",
        "METHOD XDP, QUEUE 1",
        63,
        4,
    );
    assert_eq!(fanout, [String::new(), String::new()]);
}

/// Building a router from `conf` fails; the errors, as text.
fn router_error(conf: &str) -> String {
    let reg = rclick_elements::registry();
    let outcome = rclick_lang::parse_router(
        conf,
        "fanout.click",
        &reg,
        &rclick_lang::ParseOptions::default(),
    );
    let spec = outcome.spec.expect("parses");
    let err = Router::new(spec, conf, &reg, &RouterOptions::default())
        .err()
        .unwrap_or_else(|| panic!("{conf} accepted"));
    err.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Bad fanout keywords are configuration errors (no device needed: the
/// configuration is checked before any socket is opened).
#[test]
fn bad_fanout_keywords_are_errors() {
    for (conf, want) in [
        (
            "FromDevice(eth0, FANOUT true, FANOUT_MODE flowhash) -> Discard;",
            "bad FANOUT_MODE",
        ),
        (
            "FromDevice(eth0, FANOUT_MODE 3) -> Discard;",
            "bad FANOUT_MODE",
        ),
        (
            "FromDevice(eth0, FANOUT false, FANOUT_MODE nope) -> Discard;",
            "bad FANOUT_MODE",
        ),
        ("FromDevice(eth0, FANOUT_ID 65536) -> Discard;", "FANOUT_ID"),
        ("FromDevice(eth0, FANOUT maybe) -> Discard;", "FANOUT"),
        (
            "FromDevice(eth0, FANOUT_MODE rollover, FANOUT_ROLLOVER true) -> Discard;",
            "FANOUT_ROLLOVER true cannot be combined with FANOUT_MODE rollover",
        ),
        (
            "FromDevice(eth0, FANOUT true, FANOUT_MODE ROLLOVER, FANOUT_ROLLOVER true) -> Discard;",
            "FANOUT_ROLLOVER true cannot be combined with FANOUT_MODE rollover",
        ),
        (
            "FromDevice(eth0, FANOUT true, METHOD XDP) -> Discard;",
            "with METHOD XDP",
        ),
        (
            "FromDevice(eth0, FANOUT true, QUEUE 1) -> Discard;",
            "QUEUE and FANOUT",
        ),
    ] {
        let text = router_error(conf);
        assert!(text.contains(want), "{conf}: {text}");
        assert!(
            text.contains("fanout.click:1: While configuring"),
            "{conf}: {text}"
        );
    }
}

/// Where the kernel refuses to join the group (here: the group already
/// exists with another mode), initialization fails with the element's
/// landmark and the kernel's reason, and the router does not start.
#[test]
fn fanout_refused_by_kernel_is_an_initialize_error() {
    skip_if!(namespace_skip_reason());
    let link = Link::new(1);
    let conf = format!(
        "a :: FromDevice({rd}, FANOUT_ID 77, FANOUT_MODE hash) -> Discard;\n\
         b :: FromDevice({rd}, FANOUT_ID 77, FANOUT_MODE lb) -> Discard;",
        rd = link.rd
    );
    let text = link
        .rt
        .spawn(move || router_error(&conf))
        .join()
        .expect("router thread");
    assert!(
        text.contains("fanout.click:2: While initializing 'b :: FromDevice'"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{}: cannot join PACKET_FANOUT group 77 (mode lb): Invalid argument",
            link.rd
        )),
        "{text}"
    );
    assert!(text.contains("Router could not be initialized"), "{text}");
    // Nothing was left running: `a`'s socket closed, and with it the
    // group, so group 77 can now be made with mode lb. (Retried for a
    // moment: a process another test thread is starting holds copies of
    // this process's descriptors until it execs, which can keep the
    // closed socket, and so the group, alive that long.)
    let lb = format!(
        "b :: FromDevice({rd}, FANOUT_ID 77, FANOUT_MODE lb) -> Discard;",
        rd = link.rd
    );
    let made = link
        .rt
        .spawn(move || {
            let mut last = String::new();
            for _ in 0..50 {
                match try_from_config_with(&lb, &RouterOptions::default()) {
                    Ok(mut r) => {
                        let fanout = r.read_handler("b.fanout", None);
                        r.cleanup();
                        return fanout;
                    }
                    Err(e) => last = e.join("\n"),
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(last)
        })
        .join()
        .expect("router thread");
    assert_eq!(made.as_deref(), Ok("lb 77"));
}

/// Hot swap: same-named FANOUT elements in the new configuration join the
/// group (while their predecessors are still in it) and carry on
/// splitting the flows; a swap that changes the group's mode is refused
/// by the kernel, so the running router stays as it was.
#[test]
fn fanout_across_hot_swap() {
    skip_if!(namespace_skip_reason());
    let link = Link::new(1);
    let rd = link.rd.clone();
    let conf = move |mode: &str, extra: &str| {
        format!(
            "f0 :: FromDevice({rd}, FORCE_IP true, FANOUT_MODE {mode}) -> c0 :: Counter -> Discard;
             f1 :: FromDevice({rd}, FORCE_IP true, FANOUT_MODE {mode}) -> c1 :: Counter -> Discard;
             {extra}"
        )
    };
    let c = conf.clone();
    let refused = link
        .rt
        .spawn(move || {
            let opts = RouterOptions {
                hotswap: true,
                ..Default::default()
            };
            let mut router = try_from_config_with(&c("hash", ""), &opts).expect("router");
            let lb = router.hotswap(&c("lb", ""));
            let fanout = router.read_handler("f0.fanout", None);
            router.cleanup();
            (lb.map_err(|d| format!("{d:?}")), fanout)
        })
        .join()
        .expect("router thread");
    match refused {
        (Err(why), Ok(fanout)) => {
            assert!(
                why.contains("cannot join PACKET_FANOUT group") && why.contains("(mode lb)"),
                "{why}"
            );
            assert!(fanout.starts_with("hash "), "{fanout}");
        }
        other => panic!("a swap to another mode was not refused: {other:?}"),
    }
    let r = Running::start(&link.rt, &conf("hash", ""));
    r.hotswap(&conf("hash", "Idle -> Discard;"));
    assert!(r.read("f0.fanout").starts_with("hash "));
    assert!(r.read("f1.fanout").starts_with("hash "));
    link.send(31, 3);
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.read_u64("c0.count") + r.read_u64("c1.count") < 93 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let (c0, c1) = (r.read_u64("c0.count"), r.read_u64("c1.count"));
    let chatter = r.finish();
    assert_eq!(
        c0 + c1,
        93,
        "{c0} + {c1}; {chatter:?}; sender {}",
        link.sender_stats()
    );
    assert!(c0 > 0 && c1 > 0, "{c0} + {c1}");
}
