//! The elements Click's example configurations (`conf/`) needed: Align,
//! AlignmentInfo, TimedSink, ClickyInfo, SchedOrderTest and FastUDPSource
//! in simulated time; network device names used as addresses (`lo`,
//! `lo:net`, `lo:gw`); and, in network namespaces (root only; skipped with
//! the reason otherwise), KernelTun and KernelTap answering through the
//! host stack, PollDevice receiving frames, and ToHost without FromHost
//! handing frames to the host through a TAP device of its own.

mod common;

use std::path::PathBuf;

use rclick_core::{RouterOptions, StopReason};
use rclick_elements::testing::{
    config_errors, from_config, from_config_with, read, try_from_config,
};

use common::netns::*;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rclick-conf-elems-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn timedsink_pulls_one_packet_per_interval() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 25, STOP false) -> q :: Queue(100) -> t :: TimedSink(0.1);
         DriverManager(wait 1.05s, stop);",
    );
    assert_eq!(r.run(), StopReason::Stopped);
    // Ten pulls at 0.1, 0.2, ... 1.0 s.
    assert_eq!(read(&mut r, "q.length").trim(), "15");
    assert_eq!(read(&mut r, "t.interval").trim(), "100ms");
    let mut r = from_config("Idle -> t :: TimedSink;");
    assert_eq!(read(&mut r, "t.interval").trim(), "500ms");
    assert!(r.write_handler("t.interval", "-1").is_err());
    r.write_handler("t.interval", "20us").unwrap();
    assert_eq!(read(&mut r, "t.interval").trim(), "20us");
    assert!(config_errors("Idle -> TimedSink(abc);").contains("INTERVAL"));
    assert!(config_errors("Idle -> TimedSink(1, 2);").contains("too many arguments"));
    assert!(config_errors("Idle -> TimedSink -> Discard;").contains("no output 0"));
}

#[test]
fn align_keeps_packets_intact_and_checks_its_arguments() {
    let out = tmp("align.pcap");
    let cfg = format!(
        "InfiniteSource(DATA \\<00 00 c0 ae 67 ef  00 00 00 00 00 00  08 00
           45 00 00 28  00 00 00 00  40 11 77 c3  01 00 00 01
           02 00 00 02  13 69 13 69  00 14 d6 41  55 44 50 20
           70 61 63 6b  65 74 21 0a>, LIMIT 5, STOP true)
           -> Strip(14) -> Align(4, 0) -> CheckIPHeader -> Unstrip(14)
           -> c :: Counter -> ToDump({}, ENCAP ETHER);",
        out.display()
    );
    let mut r = from_config(&cfg);
    r.run();
    assert_eq!(read(&mut r, "c.count").trim(), "5");
    drop(r);
    let pcap = std::fs::read(&out).unwrap();
    // Five 54-byte records after the 24-byte file header, each the frame.
    assert_eq!(pcap.len(), 24 + 5 * (16 + 54));
    assert_eq!(&pcap[24 + 16..24 + 16 + 6], &[0, 0, 0xc0, 0xae, 0x67, 0xef]);
    for (conf, want) in [
        (
            "Idle -> Align(3, 0) -> Discard;",
            "MODULUS must be 2, 4, or 8",
        ),
        (
            "Idle -> Align(16, 0) -> Discard;",
            "MODULUS must be 2, 4, or 8",
        ),
        (
            "Idle -> Align(4, 4) -> Discard;",
            "OFFSET must be smaller than MODULUS",
        ),
        ("Idle -> Align(4) -> Discard;", "OFFSET"),
    ] {
        assert!(config_errors(conf).contains(want), "{conf}");
    }
    assert!(try_from_config("Idle -> Align(8, 7) -> Align(4, -1) -> Discard;").is_ok());
}

#[test]
fn alignmentinfo_reports_do_not_stop_the_router() {
    // Click's test/standard/AlignmentInfo-01.clicktest.
    let mut r = from_config(
        "AlignmentInfo(src 8 2)
         AlignmentInfo(dst 8 2)
         src :: Idle -> dst :: Discard
         DriverManager(wait 0.1s, stop)",
    );
    assert_eq!(r.run(), StopReason::Stopped);
    assert!(r.take_chatter().is_empty());
    // Malformed and conflicting declarations are reported, and the router
    // is built all the same.
    let mut r = from_config(
        "x :: Idle -> Discard; y :: Idle -> Discard;
         AlignmentInfo(x 4 0, , y 4, nosuch 2 1);
         AlignmentInfo(x 4 2, y a b);",
    );
    let chatter: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
    let chatter = chatter.join("\n");
    for want in [
        "warning: empty configuration argument 1",
        "expected 'ELEMENTNAME CHUNK OFFSET [CHUNK OFFSET...]'",
        "conflicting AlignmentInfo for 'x'",
        "expected CHUNK",
        "expected OFFSET",
    ] {
        assert!(chatter.contains(want), "{want} not in {chatter}");
    }
    assert!(!chatter.contains("nosuch"), "{chatter}");
}

#[test]
fn clickyinfo_keeps_any_configuration() {
    let mut r = from_config(
        "ci :: ClickyInfo(STYLE #c { decorations: activity }, FOO bar); c2 :: ClickyInfo;",
    );
    assert_eq!(
        read(&mut r, "ci.config").trim(),
        "STYLE #c { decorations: activity }, FOO bar"
    );
    assert_eq!(read(&mut r, "c2.config").trim(), "");
    assert!(config_errors("Idle -> ClickyInfo;").contains("no input"));
}

#[test]
fn schedordertest_logs_the_run_order() {
    let mut r = from_config(
        "s1 :: SchedOrderTest(1, SIZE 40, STOP true);
         s2 :: SchedOrderTest(2, SIZE 20, LIMIT 5);
         s3 :: SchedOrderTest(3);",
    );
    assert_eq!(r.run(), StopReason::Stopped);
    let order = read(&mut r, "s1.order");
    let ids: Vec<&str> = order.split_whitespace().collect();
    // The largest SIZE, shared by all three; s2 ran five times.
    assert_eq!(ids.len(), 40);
    assert_eq!(ids.iter().filter(|&&i| i == "2").count(), 5);
    assert_eq!(&ids[..6], &["1", "2", "3", "1", "2", "3"]);
    assert_eq!(read(&mut r, "s3.order"), order);
    assert!(order.ends_with('\n'));
    assert!(config_errors("SchedOrderTest;").contains("ID"));
}

#[test]
fn fastudpsource_sends_valid_udp_at_its_rate() {
    // Real time: the rate is measured against the clock, and a pull source
    // without an empty notifier keeps simulated time from advancing.
    let real = RouterOptions {
        capture_chatter: true,
        ..RouterOptions::default()
    };
    let mut r = from_config_with(
        "f :: FastUDPSource(1000, 20, 70, 0:0:0:0:0:1, 1.0.0.1, 1234,
                            1:1:1:1:1:1, 2.0.0.2, 1234, true, 7)
           -> Unqueue -> Strip(14) -> CheckIPHeader -> CheckUDPHeader
           -> c :: Counter -> ps :: IPClassifier(src port 1234, src port 1235, src port 1236, -);
         ps[0] -> c0 :: Counter -> Discard; ps[1] -> c1 :: Counter -> Discard;
         ps[2] -> c2 :: Counter -> Discard; ps[3] -> Discard;
         DriverManager(wait 0.5s, stop);",
        &real,
    );
    r.run();
    assert_eq!(read(&mut r, "f.count").trim(), "20");
    // Every frame passed the IP and UDP checks (checksums included).
    assert_eq!(read(&mut r, "c.count").trim(), "20");
    // Ports grow by one every 7 packets.
    assert_eq!(read(&mut r, "c0.count").trim(), "7");
    assert_eq!(read(&mut r, "c1.count").trim(), "7");
    assert_eq!(read(&mut r, "c2.count").trim(), "6");
    // 20 packets at 1000/s take 19 ms: never faster than RATE (slower
    // when the machine is busy).
    let rate: u64 = read(&mut r, "f.rate").trim().parse().unwrap();
    assert!((50..=1100).contains(&rate), "{rate}");
    let mut r = from_config_with(
        "FastUDPSource(0, 3, 10, 0:0:0:0:0:1, 1.0.0.1, 1, 1:1:1:1:1:1, 2.0.0.2, 2)
           -> Unqueue -> l :: Counter -> Discard;
         DriverManager(wait 0.01s, stop);",
        &real,
    );
    r.run();
    // LENGTH below 60 is raised to 60, with a warning.
    let said: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
    assert_eq!(said, ["warning: packet length < 60, defaulting to 60"]);
    assert_eq!(read(&mut r, "l.byte_count").trim(), "180");
}

#[test]
fn device_names_are_addresses() {
    // Every namespace has `lo` (127.0.0.1/8).
    let mut r = from_config(
        "p :: ICMPPingSource(lo, lo:gw, LIMIT 1) -> SetIPAddress(lo:ip) -> Discard;
         Idle -> a :: ARPQuerier(lo:ip, 00:01:02:03:04:05) -> Discard; Idle -> [1]a;
         AddressInfo(named 10.9.9.9/24);
         q :: ICMPPingSource(named, 1.2.3.4, LIMIT 1) -> Discard;",
    );
    assert_eq!(read(&mut r, "p.src").trim(), "127.0.0.1");
    // No default route out of lo: the first host of its network.
    assert_eq!(read(&mut r, "p.dst").trim(), "127.0.0.1");
    // AddressInfo names come first.
    assert_eq!(read(&mut r, "q.src").trim(), "10.9.9.9");
    let e = config_errors("ICMPPingSource(no-such-dev9, 1.2.3.4) -> Discard;");
    assert!(e.contains("SRC: parse error"), "{e}");
    // Loopback has no Ethernet address.
    let e = config_errors("Idle -> EtherEncap(0x0800, lo, lo:eth) -> Discard;");
    assert!(e.contains("SRC: parse error"), "{e}");
}

#[test]
fn device_names_give_ethernet_addresses_and_gateways() {
    skip_if!(namespace_skip_reason());
    let ns = Netns::new("da");
    let peer = Netns::new("db");
    let dev = format!("d{}", tag());
    veth(
        &ns,
        &dev,
        Some("10.61.0.5/24"),
        &peer,
        &format!("p{}", tag()),
    );
    ns.exec(&[
        "ip",
        "link",
        "set",
        "dev",
        &dev,
        "address",
        "02:61:00:00:00:05",
    ]);
    let conf = format!(
        "Idle -> e :: EtherEncap(0x0800, {dev}, {dev}:eth) -> Discard;
         p :: ICMPPingSource({dev}, {dev}:gw, LIMIT 1) -> Discard;
         Idle -> a :: ARPQuerier({dev}) -> Discard; Idle -> [1]a;
         f :: IPFilter(allow src net {dev}:net) -> Discard; Idle -> f;"
    );
    let r = Running::start(&ns, &conf);
    assert_eq!(r.read("e.src"), "02-61-00-00-00-05");
    assert_eq!(r.read("p.src"), "10.61.0.5");
    // No default route: the first host of the device's network.
    assert_eq!(r.read("p.dst"), "10.61.0.1");
    r.finish();
    // With a default route out of the device, its gateway.
    ns.exec(&[
        "ip",
        "route",
        "add",
        "default",
        "via",
        "10.61.0.254",
        "dev",
        &dev,
    ]);
    let r = Running::start(
        &ns,
        &format!("p :: ICMPPingSource({dev}, {dev}:gw, LIMIT 1) -> Discard;"),
    );
    assert_eq!(r.read("p.dst"), "10.61.0.254");
    r.finish();
}

#[test]
fn kerneltun_and_kerneltap_exchange_pings_with_the_host() {
    skip_if!(namespace_skip_reason());
    let ns = Netns::new("kt");
    // Click's conf/test-tun.click: the host answers pings from 1.0.0.2.
    let tun = format!("tn{}", tag());
    let r = Running::start(
        &ns,
        &format!(
            "tun :: KernelTun(1.0.0.1/8, DEVNAME {tun});
             ICMPPingSource(1.0.0.2, 1.0.0.1, INTERVAL 0.05) -> Queue -> tun;
             tun -> CheckIPHeader -> ip :: IPClassifier(icmp echo-reply, -);
             ip[0] -> ok :: Counter -> Discard; ip[1] -> Discard;
             tun[1] -> Discard;"
        ),
    );
    let addr = ns
        .try_exec(&["ip", "-o", "addr", "show", "dev", &tun])
        .unwrap();
    assert!(addr.contains("1.0.0.1/8"), "{addr}");
    assert_eq!(r.read("tun.dev_name"), tun);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while r.read_u64("ok.count") < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(r.read_u64("ok.count") >= 3, "no echo replies from the host");
    assert!(r.read_u64("tun.packets") >= 3);
    r.finish();
    assert!(ns.try_exec(&["ip", "link", "show", "dev", &tun]).is_err());

    // Click's conf/test-tap.click, with ARP.
    let tap = format!("tp{}", tag());
    let r = Running::start(
        &ns,
        &format!(
            "AddressInfo(tap_local 1:1:1:1:1:1, tap_remote 2:2:2:2:2:2);
             tap :: KernelTap(1.0.0.1/8, ETHER tap_remote, DEVNAME {tap});
             ICMPPingSource(1.0.0.2, 1.0.0.1, INTERVAL 0.05)
               -> out :: EtherEncap(0x0800, tap_local, tap_remote) -> tap;
             tap -> c :: Classifier(12/0800, 12/0806, -);
             c[0] -> Strip(14) -> CheckIPHeader -> ipc :: IPClassifier(icmp echo-reply, -);
             ipc[0] -> ok :: Counter -> Discard; ipc[1] -> Discard;
             c[1] -> ARPResponder(0/0 tap_local) -> tap;
             c[2] -> Discard;"
        ),
    );
    let link = ns
        .try_exec(&["ip", "-o", "link", "show", "dev", &tap])
        .unwrap();
    assert!(link.contains("02:02:02:02:02:02"), "{link}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while r.read_u64("ok.count") < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        r.read_u64("ok.count") >= 3,
        "no echo replies through the TAP"
    );
    r.finish();
    assert_rejected(&[
        (
            "KernelTun(1.0.0.1/8, 2.0.0.1) -> Discard;",
            "gateway off the network",
        ),
        ("KernelTun(1.0.0.1/8, MTU 10) -> Discard;", "MTU too small"),
        ("KernelTun(1.0.0.1/8, BURST 0) -> Discard;", "BURST 0"),
        ("KernelTun() -> Discard;", "no address"),
    ]);
}

#[test]
fn polldevice_receives_frames_and_tohost_without_fromhost_reaches_the_host() {
    skip_if!(namespace_skip_reason());
    let ns = Netns::new("pd");
    let peer = Netns::new("pp");
    let (dev, pdev) = (format!("d{}", tag()), format!("p{}", tag()));
    veth(&ns, &dev, Some("10.62.0.1/24"), &peer, &pdev);
    peer.exec(&["ip", "addr", "add", "10.62.0.2/24", "dev", &pdev]);
    peer.exec(&["ip", "link", "set", &pdev, "up"]);
    let r = Running::start(
        &ns,
        &format!(
            "pd :: PollDevice({dev}, false, 8) -> c :: Classifier(12/0806, -);
             c[0] -> ac :: Counter -> Discard;
             c[1] -> Discard;
             ICMPPingSource(10.62.0.9, 10.62.0.1, INTERVAL 0.05)
               -> EtherEncap(0x0800, 02:00:00:00:00:09, {dev}) -> th :: ToHost({dev});"
        ),
    );
    // The peer's ARP requests for an absent address reach PollDevice.
    let _ = peer.try_exec(&["ping", "-c", "2", "-i", "0.2", "-W", "1", "10.62.0.77"]);
    assert!(r.read_u64("pd.count") >= 1, "PollDevice received nothing");
    assert!(r.read_u64("ac.count") >= 1);
    // ToHost made a TAP device with the device's Ethernet address, and
    // the host received the pings there.
    let links = ns.try_exec(&["ip", "-o", "link", "show"]).unwrap();
    let tap = links
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .find(|n| n.starts_with("tohost"))
        .unwrap_or_else(|| panic!("no tohost device: {links}"))
        .to_string();
    let mac = |d: &str| {
        let l = ns
            .try_exec(&["ip", "-o", "link", "show", "dev", d])
            .unwrap();
        l.split("link/ether ")
            .nth(1)
            .unwrap_or("")
            .split(' ')
            .next()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(mac(&tap), mac(&dev));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while r.read_u64("th.count") < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(r.read_u64("th.count") >= 3);
    assert_eq!(r.read_u64("th.drops"), 0);
    let stats = ns
        .try_exec(&["ip", "-s", "-o", "link", "show", "dev", &tap])
        .unwrap();
    assert!(stats.contains("RX:"), "{stats}");
    r.finish();
    // With a FromHost of another name, ToHost is still an error.
    assert_rejected(&[(
        "FromHost(fake9, 10.0.0.1/8) -> Discard; Idle -> ToHost(other);",
        "no FromHost of that name",
    )]);
}
