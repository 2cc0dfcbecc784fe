//! The Router Plugins example configurations (conf/flow-fq.click and
//! conf/flow-bound-schedulers.click) run on traces made here, under
//! simulated time: per-flow fairness of the DRR scheduler on the flow
//! table's soft state, and flows bound to two scheduler instances by
//! filters, rebound at run time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rclick_core::{Router, RouterOptions};
use rclick_elements::testing::{self, ipv4_packet};
use rclick_lang::ParseOptions;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rclick-flow-confs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A packet of a trace: time in microseconds, source, destination, UDP
/// source port, payload length.
struct Pkt {
    us: u64,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    len: usize,
}

/// Writes an Ethernet pcap of UDP packets.
fn write_pcap(path: &Path, pkts: &[Pkt]) {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes());
    for p in pkts {
        let mut udp = vec![0u8; 8 + p.len];
        udp[0..2].copy_from_slice(&p.sport.to_be_bytes());
        udp[2..4].copy_from_slice(&9u16.to_be_bytes());
        udp[4..6].copy_from_slice(&((8 + p.len) as u16).to_be_bytes());
        let ip = ipv4_packet(p.src, p.dst, 17, 64, 0, &[], &udp);
        let mut frame = vec![0u8, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 0x08, 0x00];
        frame.extend_from_slice(&ip);
        let t = 1_000_000_000 + p.us;
        f.extend_from_slice(&((t / 1_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&((t % 1_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        f.extend_from_slice(&frame);
    }
    std::fs::write(path, f).unwrap();
}

/// Frames in a pcap file, as (source address, destination address).
fn read_pcap(path: &Path) -> Vec<([u8; 4], [u8; 4])> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[i + 8..i + 12].try_into().unwrap()) as usize;
        let fr = &b[i + 16..i + 16 + caplen];
        out.push((
            fr[26..30].try_into().unwrap(),
            fr[30..34].try_into().unwrap(),
        ));
        i += 16 + caplen;
    }
    out
}

/// `n` packets of one flow at `pps` from time 0, `len` bytes of payload.
fn flow(src: [u8; 4], dst: [u8; 4], sport: u16, pps: u64, n: u64, len: usize) -> Vec<Pkt> {
    (0..n)
        .map(|i| Pkt {
            us: i * 1_000_000 / pps,
            src,
            dst,
            sport,
            len,
        })
        .collect()
}

/// Builds `text` with the variables `vars` (as `NAME=value` on the
/// command line) under simulated time, and runs it to the end.
fn run_text(text: &str, vars: &[(&str, String)]) -> Router {
    let parse = ParseOptions {
        variables: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..Default::default()
    };
    let reg = rclick_elements::registry();
    let outcome = rclick_lang::parse_router(text, "conf", &reg, &parse);
    assert!(!outcome.has_errors(), "{:?}", outcome.diagnostics);
    let opts = RouterOptions {
        simtime: Some(rclick_core::time::DEFAULT_SIMTIME_START),
        parse,
        ..Default::default()
    };
    let mut r = Router::new(outcome.spec.unwrap(), text, &reg, &opts).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    r.run();
    r
}

fn run_conf(file: &str, vars: &[(&str, String)]) -> Router {
    let text = std::fs::read_to_string(repo_root().join("conf").join(file)).unwrap();
    run_text(&text, vars)
}

/// `FlowCounter.flows` as source address -> packets.
fn per_source(r: &mut Router, h: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for l in testing::read(r, h).lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        *m.entry(w[0].to_string()).or_insert(0) += w[6].parse::<u64>().unwrap();
    }
    m
}

#[test]
fn flow_fq_shares_the_link_fairly() {
    let d = scratch("fq");
    // One second: flow A offers 3000 pps, B and C 500 pps each, onto a
    // 1500 pps link. Fair shares: 500 each. A FIFO would give A 1125.
    let mut pkts = flow([10, 0, 0, 1], [10, 0, 1, 1], 1000, 3000, 3000, 100);
    pkts.extend(flow([10, 0, 0, 2], [10, 0, 1, 1], 1000, 500, 500, 100));
    pkts.extend(flow([10, 0, 0, 3], [10, 0, 1, 1], 1000, 500, 500, 100));
    pkts.sort_by_key(|p| p.us);
    let (inp, out) = (d.join("in.pcap"), d.join("out.pcap"));
    write_pcap(&inp, &pkts);
    let mut r = run_conf(
        "flow-fq.click",
        &[
            ("IN", inp.display().to_string()),
            ("OUT", out.display().to_string()),
            ("RATE", "1500".into()),
        ],
    );
    let arrived = per_source(&mut r, "arrived.flows");
    assert_eq!(arrived["10.0.0.1"], 3000);
    assert_eq!(arrived["10.0.0.2"], 500);
    let sent = per_source(&mut r, "sent.flows");
    let a = sent["10.0.0.1"];
    let (b, c) = (sent["10.0.0.2"], sent["10.0.0.3"]);
    assert!((440..=560).contains(&a), "A got {a}: {sent:?}");
    assert!(b >= 480 && c >= 480, "B {b} C {c}: {sent:?}");
    assert!(testing::read(&mut r, "q.drops").parse::<u64>().unwrap() > 2000);
    // The output trace holds what was sent (flushed when the router goes).
    drop(r);
    let frames = read_pcap(&out);
    assert_eq!(frames.len() as u64, a + b + c);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bound_schedulers_follow_the_filters() {
    let d = scratch("bound");
    // Interface 1: two flows to 10.0.1.0/24 (A's scheduler), one UDP flow
    // from 192.168.0.7 to 10.0.2.9. Interface 2: a flow to 10.0.2.0/24
    // (B's DRR) and one to 172.16.0.1 (best effort).
    let mut in1 = flow([192, 168, 0, 5], [10, 0, 1, 1], 1, 400, 400, 200);
    in1.extend(flow([192, 168, 0, 6], [10, 0, 1, 2], 1, 400, 400, 200));
    // (Starting 5 ms in, after the Script of the second run has run.)
    in1.extend(
        flow([192, 168, 0, 7], [10, 0, 2, 9], 7, 200, 200, 200)
            .into_iter()
            .map(|p| Pkt {
                us: p.us + 5000,
                ..p
            }),
    );
    in1.sort_by_key(|p| p.us);
    let mut in2 = flow([192, 168, 1, 5], [10, 0, 2, 1], 1, 300, 300, 200);
    in2.extend(flow([192, 168, 1, 6], [172, 16, 0, 1], 1, 100, 100, 200));
    in2.sort_by_key(|p| p.us);
    let p = |n: &str| d.join(n).display().to_string();
    write_pcap(&d.join("in1.pcap"), &in1);
    write_pcap(&d.join("in2.pcap"), &in2);
    let vars = [
        ("IN1", p("in1.pcap")),
        ("IN2", p("in2.pcap")),
        ("OUTA", p("a.pcap")),
        ("OUTB", p("b.pcap")),
        ("RATEA", "2000".into()),
        ("RATEB", "2000".into()),
    ];
    let mut r = run_conf("flow-bound-schedulers.click", &vars);
    assert_eq!(testing::read(&mut r, "gate.lookups"), "5");
    drop(r);
    let a = read_pcap(&d.join("a.pcap"));
    let b = read_pcap(&d.join("b.pcap"));
    assert!(
        a.iter().all(|(_, dst)| dst[..3] == [10, 0, 1]),
        "A carries 10.0.1/24 only"
    );
    assert_eq!(a.len(), 800);
    assert_eq!(b.len(), 600);
    assert_eq!(
        b.iter().filter(|(_, dst)| *dst == [172, 16, 0, 1]).count(),
        100
    );

    // Rebinding: 192.168.0.7's UDP flows to 10.0.2.0/24 go to A's
    // scheduler (the more specific filter wins over dst 10.0.2.0/24).
    let text =
        std::fs::read_to_string(repo_root().join("conf/flow-bound-schedulers.click")).unwrap();
    let text = text.replace(
        "ft -> gate :: FlowGate(dst 10.0.1.0/24, dst 10.0.2.0/24, -);",
        "ft -> gate :: FlowGate(dst 10.0.1.0/24, dst 10.0.2.0/24, -);
         Script(write gate.add_filter 0 src 192.168.0.7 dst 10.0.2.0/24 proto udp);",
    );
    let mut r = run_text(&text, &vars);
    assert!(testing::read(&mut r, "gate.filters")
        .contains("0 src 192.168.0.7/32 dst 10.0.2.0/24 proto udp"));
    drop(r);
    let a = read_pcap(&d.join("a.pcap"));
    assert_eq!(a.len(), 1000);
    assert_eq!(
        a.iter().filter(|(src, _)| *src == [192, 168, 0, 7]).count(),
        200
    );
    assert_eq!(read_pcap(&d.join("b.pcap")).len(), 400);
    std::fs::remove_dir_all(&d).ok();
}
