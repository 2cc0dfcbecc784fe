//! ToHostSniffers on real devices, in a network namespace made for each
//! test: frames from a FromDump reach `tcpdump` on a sink device (`dummy`,
//! or `ifb` where the kernel has no dummy driver) byte for byte, and the
//! host stack does not act on them (an ICMP echo request for an address
//! configured on the device gets no reply, the kernel's ICMP and IP
//! counters stay at zero). A control on a veth pair shows the same frame
//! reaching the stack and being answered there, which is what the warning
//! about non-sink devices is for.
//!
//! Needs root, iproute2, coreutils' `timeout` and tcpdump; without them
//! each test prints why it is skipped and passes.

use std::time::{Duration, Instant};

mod common;

use common::netns::*;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// The router thread's allocation count so far.
fn router_allocations(r: &Running) -> u64 {
    r.on_router_thread(|| allocations().to_string())
        .parse()
        .expect("a count")
}

fn skip_reason() -> Option<String> {
    if !have(&["timeout", "--version"]) {
        return Some("timeout not installed (Debian package coreutils)".into());
    }
    if let Some(why) = namespace_skip_reason() {
        return Some(why);
    }
    if !have(&["tcpdump", "--version"]) {
        return Some("tcpdump not installed (Debian package tcpdump)".into());
    }
    None
}

macro_rules! require {
    () => {
        skip_if!(skip_reason())
    };
}

/// Creates device `name` in `ns` as a sink that drops what it is sent:
/// `dummy` if the kernel has it, else `ifb`. Returns the kind used.
fn sink_device(ns: &Netns, name: &str) -> Option<&'static str> {
    for kind in ["dummy", "ifb"] {
        if ns
            .try_exec(&["ip", "link", "add", name, "type", kind])
            .is_ok()
        {
            return Some(kind);
        }
        eprintln!("no {kind} devices in this kernel");
    }
    None
}

fn mac_of(ns: &Netns, dev: &str) -> [u8; 6] {
    let (_, out) = ns.run(5, &["cat", &format!("/sys/class/net/{dev}/address")]);
    let v: Vec<u8> = out
        .trim()
        .split(':')
        .map(|h| u8::from_str_radix(h, 16).expect("hex"))
        .collect();
    v.try_into().expect("6 bytes")
}

fn csum(d: &[u8]) -> u16 {
    let mut s: u32 = d
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet frame carrying an IPv4 packet (`proto`, `payload`) from
/// `src` to `dst`, checksums valid.
fn ip_frame(dmac: [u8; 6], src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dmac);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2]);
    f.extend_from_slice(&[8, 0]);
    let total = (20 + payload.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0x12, 0x34, 0, 0, 64, proto, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(payload);
    f
}

fn echo_request(dmac: [u8; 6], src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0x52, 0x43, 0, 1];
    icmp.extend((0..56u8).collect::<Vec<_>>());
    let c = csum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    ip_frame(dmac, src, dst, 1, &icmp)
}

fn udp(dmac: [u8; 6], src: [u8; 4], dst: [u8; 4], len: usize) -> Vec<u8> {
    let mut u = vec![0x30, 0x39, 0, 9];
    u.extend_from_slice(&((8 + len) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]); // no checksum
    u.extend((0..len).map(|i| (i * 7) as u8));
    ip_frame(dmac, src, dst, 17, &u)
}

fn arp_request(src: [u8; 4], target: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 8, 6]);
    f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 2]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&target);
    f
}

/// A pcap file (microsecond timestamps, Ethernet) holding `frames`.
fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut out = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    for v in [0u32, 0, 262_144, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (i, f) in frames.iter().enumerate() {
        for v in [1_000_000u32, i as u32, f.len() as u32, f.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(f);
    }
    std::fs::write(path, out).expect("write pcap");
}

/// The frames in a little-endian pcap file (as tcpdump `-w` writes here).
fn read_pcap(path: &std::path::Path) -> Vec<Vec<u8>> {
    let d = std::fs::read(path).expect("read tcpdump's pcap");
    assert!(d.len() >= 24, "short pcap file");
    let magic = u32::from_le_bytes(d[0..4].try_into().unwrap());
    assert!(
        magic == 0xa1b2_c3d4 || magic == 0xa1b2_3c4d,
        "pcap magic {magic:#x}"
    );
    let link = u32::from_le_bytes(d[20..24].try_into().unwrap());
    assert_eq!(link, 1, "link type (1 = Ethernet)");
    let mut frames = Vec::new();
    let mut i = 24;
    while i + 16 <= d.len() {
        let caplen = u32::from_le_bytes(d[i + 8..i + 12].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(d[i + 12..i + 16].try_into().unwrap()) as usize;
        assert_eq!(caplen, len, "tcpdump truncated a frame");
        frames.push(d[i + 16..i + 16 + caplen].to_vec());
        i += 16 + caplen;
    }
    frames
}

/// `Proto: Name Value` counters of /proc/net/snmp in `ns`.
fn snmp(ns: &Netns, proto: &str, name: &str) -> u64 {
    let text = ns.try_exec(&["cat", "/proc/net/snmp"]).expect("snmp");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{proto}:")))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let i = rows[0]
        .iter()
        .position(|&n| n == name)
        .unwrap_or_else(|| panic!("no {proto} {name}"));
    rows[1][i].parse().expect("number")
}

fn wait_for(what: &str, secs: u64, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !ok() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

const DEV_ADDR: [u8; 4] = [10, 61, 0, 1];
const PEER: [u8; 4] = [10, 61, 0, 2];

/// Sends `frames` through `FromDump -> ToHostSniffers(dev)` in `ns` while
/// tcpdump captures on `dev`; returns what tcpdump captured and the
/// router's chatter.
fn sniff(ns: &Netns, dev: &str, frames: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("rclick-sniffers-{}", tag()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("in.pcap");
    let captured = dir.join("out.pcap");
    write_pcap(&input, frames);
    let dump = Tcpdump::start(
        ns,
        30,
        &["-i", dev, "-n", "-U", "-w", captured.to_str().unwrap()],
    );
    let r = Running::start(
        ns,
        &format!(
            "FromDump({}) -> ths :: ToHostSniffers({dev});",
            input.display()
        ),
    );
    let n = frames.len() as u64;
    wait_for("the frames to be sent", 10, || {
        r.read_u64("ths.count") + r.read_u64("ths.drops") >= n
    });
    assert_eq!(r.read_u64("ths.count"), n, "ths.count");
    assert_eq!(r.read_u64("ths.drops"), 0, "ths.drops");
    // Time for the stack to answer, if it were going to.
    std::thread::sleep(Duration::from_millis(500));
    let _ = dump.stop();
    let chatter = r.finish();
    let got = read_pcap(&captured);
    let _ = std::fs::remove_dir_all(&dir);
    (got, chatter)
}

/// Frames reach tcpdump on a dummy (or ifb) device exactly as sent, and
/// the host stack does not answer the echo request addressed to the
/// device's own address.
#[test]
fn sniffers_see_the_frames_and_the_stack_does_not() {
    require!();
    let ns = Netns::new("sn");
    ns.disable_ipv6();
    let dev = format!("snf{}", tag());
    let Some(kind) = sink_device(&ns, &dev) else {
        eprintln!("SKIP: the kernel has neither dummy nor ifb devices");
        return;
    };
    ns.exec(&["ip", "addr", "add", "10.61.0.1/24", "dev", &dev]);
    ns.exec(&["ip", "link", "set", &dev, "mtu", "65535", "up"]);
    let mac = mac_of(&ns, &dev);
    let frames = vec![
        echo_request(mac, PEER, DEV_ADDR),
        arp_request(PEER, DEV_ADDR),
        udp(mac, PEER, DEV_ADDR, 100),
        // A jumbo frame (the device's MTU allows it) and a runt: sniffers
        // see them unpadded and whole.
        udp(mac, PEER, DEV_ADDR, 8972),
        vec![
            0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x88, 0xb5, 1, 2, 3,
        ],
        echo_request(mac, PEER, DEV_ADDR),
    ];
    let (got, chatter) = sniff(&ns, &dev, &frames);
    assert_eq!(
        got.len(),
        frames.len(),
        "frames captured on the {kind} device"
    );
    for (i, (g, f)) in got.iter().zip(&frames).enumerate() {
        assert_eq!(g, f, "frame {i} as captured");
    }
    assert!(
        !chatter.iter().any(|c| c.contains("warning")),
        "chatter: {chatter:?}"
    );
    // The stack did not see them: no IP input at all, no ICMP in or out
    // (an echo request that reached it would be answered: see the veth
    // control below), no neighbour learnt from the ARP request.
    assert_eq!(snmp(&ns, "Ip", "InReceives"), 0, "Ip InReceives");
    assert_eq!(snmp(&ns, "Icmp", "InMsgs"), 0, "Icmp InMsgs");
    assert_eq!(snmp(&ns, "Icmp", "OutMsgs"), 0, "Icmp OutMsgs");
    let (_, neigh) = ns.run(5, &["ip", "neigh", "show", "dev", &dev]);
    assert!(neigh.trim().is_empty(), "neighbours on {dev}: {neigh}");
}

/// The control: on a veth, which is not a sink, the element warns, and
/// the echo request goes through the pair into the stack, which answers
/// it (Icmp InEchos and OutEchoReps count it). tcpdump on the sending end
/// still sees the frame exactly.
#[test]
fn on_a_veth_the_frames_reach_the_stack_and_a_warning_says_so() {
    require!();
    let ns = Netns::new("sv");
    ns.disable_ipv6();
    let (v0, v1) = (format!("v0{}", tag()), format!("v1{}", tag()));
    ns.exec(&[
        "ip", "link", "add", &v0, "type", "veth", "peer", "name", &v1,
    ]);
    ns.exec(&["ip", "addr", "add", "10.61.0.1/24", "dev", &v0]);
    ns.exec(&["ip", "link", "set", &v0, "up"]);
    ns.exec(&["ip", "link", "set", &v1, "up"]);
    // The peer's address is known, so the reply is sent rather than held
    // for ARP.
    ns.exec(&[
        "ip",
        "neigh",
        "add",
        "10.61.0.2",
        "lladdr",
        "02:00:00:00:00:02",
        "dev",
        &v0,
    ]);
    let frames = vec![echo_request(mac_of(&ns, &v0), PEER, DEV_ADDR)];
    let (got, chatter) = sniff(&ns, &v1, &frames);
    // tcpdump on v1 sees the request going out and the reply coming in.
    assert!(got.len() >= 2, "captured {} frames", got.len());
    assert_eq!(got[0], frames[0], "the request as captured");
    assert_eq!(&got[1][34..35], &[0], "an echo reply (type 0) came back");
    assert_eq!(snmp(&ns, "Icmp", "InEchos"), 1, "Icmp InEchos");
    assert_eq!(snmp(&ns, "Icmp", "OutEchoReps"), 1, "Icmp OutEchoReps");
    assert!(
        chatter
            .iter()
            .any(|c| c.contains(&format!("warning: {v1} is a veth device"))),
        "chatter: {chatter:?}"
    );
}

/// ALLOW_NONEXISTENT: the router starts without the device, drops until
/// it appears, sends once it does, and finds it again after it is
/// deleted and recreated. TYPE IP puts an Ethernet header in front.
#[test]
fn allow_nonexistent_waits_for_the_device() {
    require!();
    let ns = Netns::new("sa");
    ns.disable_ipv6();
    let dev = format!("sna{}", tag());
    let r = Running::start(
        &ns,
        &format!(
            "RatedSource(\\<4500001c 00000000 40110000 0a3d0002 0a3d0001 30390009 0008 0000>, RATE 50)
             -> ths :: ToHostSniffers({dev}, TYPE IP, ALLOW_NONEXISTENT true);"
        ),
    );
    wait_for("drops while the device is missing", 5, || {
        r.read_u64("ths.drops") >= 3
    });
    assert_eq!(r.read_u64("ths.count"), 0);
    assert_eq!(r.read("ths.kind"), "");
    let Some(kind) = sink_device(&ns, &dev) else {
        eprintln!("SKIP: the kernel has neither dummy nor ifb devices");
        return;
    };
    ns.exec(&["ip", "link", "set", &dev, "up"]);
    let dump = Tcpdump::start(&ns, 30, &["-i", &dev, "-n", "-l", "-e", "-c", "2"]);
    wait_for("frames on the new device", 5, || {
        r.read_u64("ths.count") >= 3
    });
    assert_eq!(r.read("ths.kind"), kind);
    let text = dump.stop();
    assert!(
        text.contains("00:00:00:00:00:00 > 00:00:00:00:00:00, ethertype IPv4")
            && text.contains("10.61.0.2.12345 > 10.61.0.1.9: UDP, length 0"),
        "tcpdump: {text}"
    );
    // Deleted: sends fail, the element lets go of the device...
    ns.exec(&["ip", "link", "del", &dev]);
    let dropped = r.read_u64("ths.drops");
    wait_for("drops after the device went", 5, || {
        r.read_u64("ths.drops") >= dropped + 3
    });
    assert_eq!(r.read("ths.kind"), "");
    // ... and takes it again when it comes back.
    let count = r.read_u64("ths.count");
    sink_device(&ns, &dev).expect("device again");
    ns.exec(&["ip", "link", "set", &dev, "up"]);
    wait_for("frames on the recreated device", 5, || {
        r.read_u64("ths.count") >= count + 3
    });
    let chatter = r.finish();
    assert!(
        chatter
            .iter()
            .any(|c| c.contains(&format!("{dev} appeared"))),
        "chatter: {chatter:?}"
    );
}

/// Frames the device refuses (longer than its MTU) are dropped and the
/// first five failures reported; after that a failure costs no heap
/// allocation (the message is only made when it is printed).
#[test]
fn refused_frames_allocate_nothing_once_the_reports_stop() {
    if let Some(why) = namespace_skip_reason() {
        eprintln!("SKIP: {why}");
        return;
    }
    let ns = Netns::new("sf");
    ns.disable_ipv6();
    let dev = format!("snr{}", tag());
    if sink_device(&ns, &dev).is_none() {
        eprintln!("SKIP: the kernel has neither dummy nor ifb devices");
        return;
    }
    ns.exec(&["ip", "link", "set", &dev, "mtu", "1500", "up"]);
    let r = Running::start(
        &ns,
        &format!("RatedSource(LENGTH 2000, RATE 2000) -> ths :: ToHostSniffers({dev});"),
    );
    wait_for("the reports to stop", 5, || r.read_u64("ths.drops") >= 100);
    // Reading the counter allocates its answer (after reading it): one
    // read's cost is taken off the difference of two reads.
    let a = router_allocations(&r);
    let per_read = router_allocations(&r) - a;
    let d0 = r.read_u64("ths.drops");
    let a0 = router_allocations(&r);
    std::thread::sleep(Duration::from_millis(500));
    let a1 = router_allocations(&r);
    let dropped = r.read_u64("ths.drops") - d0;
    let allocs = a1 - a0 - per_read;
    eprintln!("{allocs} heap allocations for {dropped} refused frames");
    assert_eq!(r.read_u64("ths.count"), 0);
    assert!(dropped >= 200, "only {dropped} frames dropped in 500 ms");
    assert!(
        allocs < dropped / 20,
        "{allocs} heap allocations for {dropped} refused frames"
    );
    let chatter = r.finish();
    let reports = chatter
        .iter()
        .filter(|l| l.contains(&format!("ths: {dev}: ")))
        .count();
    assert_eq!(reports, 5, "chatter: {chatter:?}");
}

#[test]
fn bad_configurations_are_errors() {
    assert_rejected(&[
        ("Idle -> ToHostSniffers;", "missing DEVNAME"),
        ("Idle -> ToHostSniffers(x0, SNIFFERS false);", "SNIFFERS"),
        ("Idle -> ToHostSniffers(x0, TYPE ATM);", "TYPE"),
        ("Idle -> ToHostSniffers(no-such-device-x);", "no device"),
    ]);
}
