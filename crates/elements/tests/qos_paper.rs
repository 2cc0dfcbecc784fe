//! The Click paper's queueing configurations in `conf/` (issue 15), run on
//! traces made here, under simulated time: stochastic fair queueing
//! (`conf/sfq.click`, Figure 10) shares a bottleneck max-min fairly where
//! a FIFO does not; weighted RED (`conf/wred.click`, Figures 11 and 12)
//! drops the lower precedences first, each RED summing the queues it
//! finds by router context; the DiffServ router (`conf/diffserv.click`,
//! Figures 15 and 19) lets EF through at its metered rate under AF/BE
//! overload, drops EF beyond it, re-marks out-of-profile AF and shapes BE.
//!
//! Where the reference Click is present each configuration also runs
//! under it on the same trace. SFQ's output must be byte-identical. RED's
//! drops use Click's `random()`, seeded differently on every run, so
//! WRED's per-class counts are compared within a tolerance; DiffServ's
//! too, because Click's BandwidthRatedUnqueue wakes at other times than
//! rclick's after its queues ran empty (see the test).

use rclick_core::router::RouterOptions;
use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Router, StopReason};
use rclick_elements::testing::{from_config, from_config_with, read};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "common/reference.rs"]
mod common_reference;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rclick-qos-paper-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One flow of a synthetic trace: UDP from 10.0.0.`host`:`sport` to
/// 10.1.0.1:9, IP TOS byte `tos`, frames of `len` bytes, `pps` a second
/// from `start` to `end` seconds.
#[derive(Clone, Copy)]
struct Flow {
    host: u8,
    sport: u16,
    tos: u8,
    len: usize,
    pps: f64,
    start: f64,
    end: f64,
}

impl Flow {
    fn new(host: u8, sport: u16, tos: u8, pps: f64) -> Flow {
        Flow {
            host,
            sport,
            tos,
            len: 500,
            pps,
            start: 0.0,
            end: 10.0,
        }
    }
}

/// An Ethernet/IPv4/UDP frame with a correct IP checksum.
fn frame(f: &Flow) -> Vec<u8> {
    let mut p = vec![0u8; f.len.max(42)];
    p[0..6].copy_from_slice(&[0, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e]);
    p[6..12].copy_from_slice(&[0, 1, 2, 3, 4, 5]);
    p[12..14].copy_from_slice(&[0x08, 0x00]);
    let ip = &mut p[14..];
    let total = (f.len.max(42) - 14) as u16;
    ip[0] = 0x45;
    ip[1] = f.tos;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, f.host]);
    ip[16..20].copy_from_slice(&[10, 1, 0, 1]);
    let c = rclick_core::wire::checksum::checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip[20..22].copy_from_slice(&f.sport.to_be_bytes());
    ip[22..24].copy_from_slice(&9u16.to_be_bytes());
    ip[24..26].copy_from_slice(&(total - 20).to_be_bytes());
    p
}

/// Writes the flows as one pcap (microsecond timestamps from second
/// 1000), packets in time order; returns the packets per flow.
fn write_trace(path: &Path, flows: &[Flow]) -> Vec<u64> {
    let mut pkts: Vec<(u64, usize)> = Vec::new();
    let mut counts = vec![0u64; flows.len()];
    for (i, f) in flows.iter().enumerate() {
        let n = ((f.end - f.start) * f.pps).round() as u64;
        for k in 0..n {
            let us = ((f.start + k as f64 / f.pps) * 1e6).round() as u64;
            pkts.push((us, i));
        }
        counts[i] = n;
    }
    pkts.sort();
    let mut b = Vec::new();
    for w in [0xa1b2c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    // Version 2.4 is two u16s; the loop wrote them as one u32 (2 | 4 << 16).
    b[4..8].copy_from_slice(&[2, 0, 4, 0]);
    for (us, i) in pkts {
        let data = frame(&flows[i]);
        let sec = 1000 + us / 1_000_000;
        for w in [
            sec as u32,
            (us % 1_000_000) as u32,
            data.len() as u32,
            data.len() as u32,
        ] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&data);
    }
    std::fs::write(path, b).unwrap();
    counts
}

/// The records of a pcap file: (timestamp in ns, bytes).
fn read_pcap(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(b.len() >= 24, "{}: short pcap", path.display());
    let nanos = match &b[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] => false,
        [0x4d, 0x3c, 0xb2, 0xa1] => true,
        m => panic!("{}: magic {m:?}", path.display()),
    };
    let u32at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= b.len() {
        let (sec, frac, cap) = (u32at(i) as u64, u32at(i + 4) as u64, u32at(i + 8) as usize);
        let ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        out.push((ns, b[i + 16..i + 16 + cap].to_vec()));
        i += 16 + cap;
    }
    out
}

/// The UDP source port of a frame (the flow key of these traces).
fn sport(frame: &[u8]) -> u16 {
    u16::from_be_bytes([frame[34], frame[35]])
}

fn simtime() -> RouterOptions {
    RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        capture_chatter: true,
        ..RouterOptions::default()
    }
}

/// Runs configuration file `conf` (from the repository root) under
/// simulated time with `vars` until it stops.
fn run_conf(conf: &str, vars: &[(&str, String)]) -> Router {
    let text = std::fs::read_to_string(root().join(conf)).expect(conf);
    let mut opts = simtime();
    opts.parse.variables = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    // The testing helpers parse without variables: parse here.
    let reg = rclick_elements::registry();
    let outcome = rclick_lang::parse_router(&text, conf, &reg, &opts.parse);
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{conf}: {errors:?}");
    let mut r = Router::new(outcome.spec.expect(conf), &text, &reg, &opts).unwrap_or_else(|e| {
        panic!(
            "{conf}: {:?}",
            e.iter().map(|d| d.to_string()).collect::<Vec<_>>()
        )
    });
    assert_eq!(r.run_limited(50_000_000), StopReason::Stopped, "{conf}");
    r
}

/// Runs `conf` under the reference Click with `vars` (`None`, with the
/// reason printed, when Click is absent).
fn run_click(conf: &str, vars: &[(&str, String)], handlers: &[&str]) -> Option<String> {
    let click = match common_reference::reference_click() {
        Ok(c) => c,
        Err(why) => {
            println!("SKIP PART: {why}");
            return None;
        }
    };
    let mut cmd = std::process::Command::new(click);
    cmd.arg("--simtime").arg(root().join(conf));
    for (k, v) in vars {
        cmd.arg(format!("{k}={v}"));
    }
    for h in handlers {
        cmd.arg("-h").arg(h);
    }
    let out = cmd.output().expect("run Click");
    assert!(
        out.status.success(),
        "Click on {conf}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn count(r: &mut Router, h: &str) -> u64 {
    read(r, h)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{h}: {e}"))
}

/// Packets per source port in a pcap's records.
fn by_sport(records: &[(u64, Vec<u8>)]) -> BTreeMap<u16, u64> {
    let mut m = BTreeMap::new();
    for (_, f) in records {
        *m.entry(sport(f)).or_insert(0) += 1;
    }
    m
}

/// Panics at the first record where Click's output and rclick's differ.
fn same_records(click: &[(u64, Vec<u8>)], ours: &[(u64, Vec<u8>)]) {
    for (i, (c, o)) in click.iter().zip(ours).enumerate() {
        assert!(
            c == o,
            "record {i}: Click {} port {}, rclick {} port {}",
            c.0,
            sport(&c.1),
            o.0,
            sport(&o.1)
        );
    }
    assert_eq!(click.len(), ours.len(), "packets out: Click vs rclick");
}

// ------------------------------------------------------------------ SFQ

/// Source ports whose flows (from host 1) hash to `n` different outputs
/// of the SFQ's `HashSwitch(26, 12)` with 8 outputs, asked of a
/// HashSwitch itself.
fn distinct_bucket_ports(n: usize) -> Vec<u16> {
    let mut cfg = String::from("Idle -> hs :: HashSwitch(26, 12);\n");
    for i in 0..8 {
        cfg.push_str(&format!("hs[{i}] -> c{i} :: Counter -> Discard;\n"));
    }
    let mut r = from_config(&cfg);
    let hs = r.find_element("hs").unwrap();
    let mut used = Vec::new();
    let mut ports = Vec::new();
    for sport in 1000u16.. {
        let before: Vec<u64> = (0..8)
            .map(|i| count(&mut r, &format!("c{i}.count")))
            .collect();
        let f = Flow::new(1, sport, 0, 1.0);
        r.inject_packet(hs, 0, rclick_core::Packet::from_slice(&frame(&f)));
        let b = (0..8)
            .find(|&i| count(&mut r, &format!("c{i}.count")) > before[i])
            .unwrap();
        if !used.contains(&b) {
            used.push(b);
            ports.push(sport);
            if ports.len() == n {
                return ports;
            }
        }
    }
    unreachable!()
}

/// Four flows through a 1 Mbit/s bottleneck (250 frames of 500 bytes a
/// second), offered 500, 250, 40 and 20 frames a second for 10 s. SFQ
/// gives the max-min fair shares: the two small flows everything, the two
/// big ones (250 - 60) / 2 = 95 a second each, within 5%. A FIFO (one
/// Queue of the same total capacity) gives the big flows shares in
/// proportion to what they send instead, and starves the small ones.
#[test]
fn sfq_shares_a_bottleneck_fairly() {
    let ports = distinct_bucket_ports(4);
    let rates = [500.0, 250.0, 40.0, 20.0];
    let flows: Vec<Flow> = ports
        .iter()
        .zip(rates)
        .enumerate()
        .map(|(i, (&p, pps))| Flow {
            // Odd start times: no arrival ties with the bottleneck's pulls
            // (which the two drivers order differently).
            start: 0.0011 + 0.0007 * i as f64,
            ..Flow::new(1, p, 0, pps)
        })
        .collect();
    let dir = tempdir("sfq");
    let trace = dir.join("in.pcap");
    let sent = write_trace(&trace, &flows);
    let vars = |out: &Path| {
        vec![
            ("IN", trace.display().to_string()),
            ("OUT", out.display().to_string()),
            ("RATE", "1Mbps".to_string()),
        ]
    };
    let out = dir.join("out.pcap");
    let mut r = run_conf("conf/sfq.click", &vars(&out));
    assert_eq!(count(&mut r, "in.count"), sent.iter().sum::<u64>());
    let nout = count(&mut r, "out.count");
    drop(r); // ToDump flushes.
    let recs = read_pcap(&out);
    assert_eq!(recs.len() as u64, nout);
    let got = by_sport(&recs);
    let secs = 10.0;
    for (i, &p) in ports.iter().enumerate() {
        let rate = got.get(&p).copied().unwrap_or(0) as f64 / secs;
        let fair = if rates[i] < 95.0 { rates[i] } else { 95.0 };
        assert!(
            (rate / fair - 1.0).abs() < 0.05,
            "SFQ flow {i} (offered {}/s): {rate}/s, fair share {fair}/s",
            rates[i]
        );
    }

    // The same trace through one FIFO of the same capacity.
    let fifo_out = dir.join("fifo.pcap");
    let mut r = from_config_with(
        &format!(
            "FromDump({}, STOP true, TIMING true) -> Queue(160) -> BandwidthRatedUnqueue(1Mbps) -> ToDump({});",
            trace.display(),
            fifo_out.display()
        ),
        &simtime(),
    );
    assert_eq!(r.run_limited(50_000_000), StopReason::Stopped);
    drop(r);
    let fifo = by_sport(&read_pcap(&fifo_out));
    let share = |m: &BTreeMap<u16, u64>, i: usize| m.get(&ports[i]).copied().unwrap_or(0) as f64;
    assert!(
        share(&fifo, 0) > 1.4 * share(&got, 0),
        "FIFO gives the biggest flow {} vs SFQ {}",
        share(&fifo, 0),
        share(&got, 0)
    );
    assert!(
        share(&fifo, 3) < 0.8 * share(&got, 3),
        "FIFO gives the smallest flow {} vs SFQ {}",
        share(&fifo, 3),
        share(&got, 3)
    );

    // Click: the same packets, byte for byte, with the same timestamps.
    let click_out = dir.join("click.pcap");
    if run_click("conf/sfq.click", &vars(&click_out), &[]).is_some() {
        let theirs = read_pcap(&click_out);
        assert_eq!(theirs.len(), recs.len(), "packets out: Click vs rclick");
        same_records(&theirs, &recs);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ----------------------------------------------------------------- WRED

/// The WRED trace: two flows in each precedence class (TOS 0xa0, 0x40,
/// 0x00), each class offered 125 frames of 500 bytes a second for 10 s,
/// 1.5 times the 1 Mbit/s bottleneck. Source ports 2000 + 10 * class +
/// flow.
fn wred_flows() -> Vec<Flow> {
    let mut flows = Vec::new();
    for (class, tos) in [0xa0u8, 0x40, 0x00].into_iter().enumerate() {
        for k in 0..2u16 {
            flows.push(Flow {
                start: 0.0011 + 0.0007 * (2 * class + k as usize) as f64,
                ..Flow::new(1 + k as u8, 2000 + 10 * class as u16 + k, tos, 62.5)
            });
        }
    }
    flows
}

/// Frames delivered per precedence class (high, medium, low).
fn per_class(records: &[(u64, Vec<u8>)]) -> [u64; 3] {
    let mut n = [0u64; 3];
    for (_, f) in records {
        n[((sport(f) - 2000) / 10) as usize] += 1;
    }
    n
}

/// Under a 1.5x overload the queues settle where the low class's RED
/// drops most of its packets: the drops are ordered low > medium > high,
/// the high class gets nearly all of its packets through, and the low
/// class loses more than half of them. Each RED watches both Queues (the
/// sum), found downstream through the HashSwitch.
#[test]
fn wred_drops_lower_precedence_first() {
    let dir = tempdir("wred");
    let trace = dir.join("in.pcap");
    let sent = write_trace(&trace, &wred_flows());
    let offered = sent[0] + sent[1];
    let vars = |out: &Path| {
        vec![
            ("IN", trace.display().to_string()),
            ("OUT", out.display().to_string()),
        ]
    };
    let out = dir.join("out.pcap");
    let mut r = run_conf("conf/wred.click", &vars(&out));
    for red in ["red_hi", "red_mid", "red_lo"] {
        assert_eq!(read(&mut r, &format!("{red}.queues")), "q0\nq1\n", "{red}");
    }
    let drops = [
        count(&mut r, "drop_hi.count"),
        count(&mut r, "drop_mid.count"),
        count(&mut r, "drop_lo.count"),
    ];
    drop(r);
    let got = per_class(&read_pcap(&out));
    eprintln!("WRED drops high/medium/low: {drops:?}");
    assert!(
        drops[2] > drops[1] && drops[1] > drops[0],
        "drops high/medium/low {drops:?}"
    );
    assert!(
        got[0] as f64 >= 0.95 * offered as f64,
        "high class: {got:?} of {offered}"
    );
    assert!(
        (got[2] as f64) < 0.5 * offered as f64,
        "low class: {got:?} of {offered}"
    );
    // Nothing but the REDs dropped much: the queues stayed short of full.
    let lost: u64 = 3 * offered - got.iter().sum::<u64>() - drops.iter().sum::<u64>();
    assert!(lost < 3 * offered / 50, "{lost} packets lost elsewhere");

    // Click: its random() is seeded differently on every run, so only the
    // per-class counts are compared, within 5% of the offered load.
    let click_out = dir.join("click.pcap");
    if let Some(text) = run_click(
        "conf/wred.click",
        &vars(&click_out),
        &[
            "drop_hi.count",
            "drop_mid.count",
            "drop_lo.count",
            "red_lo.queues",
        ],
    ) {
        // Click's router context finds the same two queues.
        assert!(text.contains("red_lo.queues:\nq0\nq1\n"), "{text}");
        let theirs = per_class(&read_pcap(&click_out));
        eprintln!("WRED delivered per class: rclick {got:?}, Click {theirs:?} (of {offered} each)");
        for c in 0..3 {
            let d = (theirs[c] as f64 - got[c] as f64).abs();
            assert!(
                d < 0.05 * offered as f64,
                "class {c}: Click {theirs:?}, rclick {got:?}\n{text}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------- DiffServ

/// Frames of `len` bytes carry `len - 14` bytes of IP: the rates below
/// are in IP packets a second, as the meters, shaper and link count.
fn ip_pps(bits_per_sec: f64, frame_len: usize) -> f64 {
    bits_per_sec / 8.0 / (frame_len - 14) as f64
}

/// Over a 2 Mbit/s link, AF (DSCP 10) and best effort each offered
/// 2 Mbit/s, and EF (DSCP 46) offered half its 400 kbit/s rate for 5 s,
/// then twice it: EF gets everything through while within its rate and
/// exactly its rate (within 10%) beyond it, the excess dropped by its
/// meter; AF gets its 600 kbit/s in profile through as AF11 and the rest
/// only as re-marked AF12, best effort is shaped to 300 kbit/s and
/// re-marked 0, and the link stays full. No random decision is involved,
/// but the order of service drifts from Click's (see below), so Click's
/// output is compared by counts per class and mark, not byte for byte.
#[test]
fn diffserv_router_meters_marks_shapes_and_schedules() {
    let len = 500;
    let mut flows = Vec::new();
    // EF: two flows, 25 frames a second each, then 100 each.
    for (k, (start, end, pps)) in [(0.0, 5.0, 25.0), (5.0, 10.0, 100.0)]
        .into_iter()
        .enumerate()
    {
        for f in 0..2u16 {
            flows.push(Flow {
                start: start + 0.0013 + 0.0007 * f64::from(f),
                end,
                ..Flow::new(1 + f as u8, 3000 + 10 * k as u16 + f, 46 << 2, pps)
            });
        }
    }
    // AF11 and best effort: 250 frames a second on each of two flows.
    for (class, tos) in [(1u16, 10u8 << 2), (2, 0)] {
        for f in 0..2u16 {
            flows.push(Flow {
                start: 0.0016 + 0.0007 * f64::from(2 * class + f),
                ..Flow::new(3 + f as u8, 3000 + 100 * class + f, tos, 250.0)
            });
        }
    }
    let dir = tempdir("diffserv");
    let trace = dir.join("in.pcap");
    let sent = write_trace(&trace, &flows);
    let vars = |out: &Path| {
        vec![
            ("IN", trace.display().to_string()),
            ("OUT", out.display().to_string()),
        ]
    };
    let out = dir.join("out.pcap");
    let mut r = run_conf("conf/diffserv.click", &vars(&out));
    let ef_drop = count(&mut r, "ef_drop.count");
    let af_in = count(&mut r, "af_in.count");
    let af_remarked = count(&mut r, "af_remarked.count");
    drop(r);
    let recs = read_pcap(&out);

    // Delivered, by source port range and by the DSCP they left with.
    let (mut ef1, mut ef2, mut af11, mut af12, mut be) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (_, f) in &recs {
        let (p, d) = (sport(f), f[15] >> 2);
        match (p, d) {
            (3000..=3001, 46) => ef1 += 1,
            (3010..=3011, 46) => ef2 += 1,
            (3100..=3101, 10) => af11 += 1,
            (3100..=3101, 12) => af12 += 1,
            (3200..=3201, 0) => be += 1,
            _ => panic!("port {p} left with DSCP {d}"),
        }
    }
    eprintln!(
        "DiffServ: EF {ef1}/{} then {ef2}/{} (meter dropped {ef_drop}), AF11 {af11}, AF12 {af12} (re-marked {af_remarked} of {af_in}), BE {be}, total {}",
        sent[0] + sent[1],
        sent[2] + sent[3],
        recs.len()
    );
    let within = |what: &str, got: u64, want: f64, tol: f64| {
        assert!(
            (got as f64 / want - 1.0).abs() < tol,
            "{what}: {got}, expected {want:.0} within {}%",
            tol * 100.0
        );
    };
    // EF within its rate: all of it.
    assert_eq!(ef1, sent[0] + sent[1], "EF within profile");
    // EF at twice its rate: its rate, the rest dropped by the meter.
    within("EF over profile", ef2, 5.0 * ip_pps(400e3, len), 0.10);
    assert_eq!(ef2 + ef_drop, sent[2] + sent[3], "EF: delivered + policed");
    // AF: the profile through as AF11, the excess re-marked AF12.
    within("AF11", af11, 10.0 * ip_pps(600e3, len), 0.10);
    assert!(
        af12 > 0 && af_remarked > af12,
        "AF12 {af12} of {af_remarked}"
    );
    assert_eq!(af_in, sent[4] + sent[5]);
    // Best effort: shaped.
    within("BE", be, 10.0 * ip_pps(300e3, len), 0.10);
    // The link is full.
    within("link", recs.len() as u64, 10.0 * ip_pps(2e6, len), 0.05);

    // Click: the same counts per class and mark, within 2% of what was
    // delivered (they are equal today). Not byte for byte: when the
    // link's queues run empty, Click's BandwidthRatedUnqueue wakes at
    // other times than rclick's (on FromDump -> Queue ->
    // BandwidthRatedUnqueue(200kbps) with this trace's best-effort
    // packets, Click sends the third at 22.8 ms and rclick at 22.1 ms), so
    // the order of service drifts. (With the link's default 20 ms burst
    // the counts differ too: Click delivers 931 AF11 packets, dropping 607
    // at af11, where rclick delivers 1546 and drops none. The cause, found
    // on a smaller case, tests/diff/cases/qos-stridesched-shaper-spin.case
    // (there with a 2500-byte burst, which Click spins through faster):
    // Click's BandwidthShaper has no empty notifier, so Click's
    // BandwidthRatedUnqueue, with tokens to spare and a non-empty queue
    // behind the shaper, pulls again and again in vain (32.6 million times
    // in the small case's first simulated second with the default burst,
    // 3.7 million with 2500 bytes), and each failed pull makes StrideSched
    // advance every input's pass by its own stride: the 32-bit passes of
    // inputs with different tickets drift apart and their signed
    // comparison wraps, so the order of service follows the spin count,
    // not the tickets. Click is wrong there; rclick's shaper is an empty
    // notifier, its unqueue sleeps, and the tickets hold. With a
    // one-packet burst the unqueue rarely spins and the two agree
    // (qos-stridesched-shaper.case).)
    let click_out = dir.join("click.pcap");
    if run_click("conf/diffserv.click", &vars(&click_out), &[]).is_some() {
        let tally = |recs: &[(u64, Vec<u8>)]| {
            let mut m: BTreeMap<(u16, u8), u64> = BTreeMap::new();
            for (_, f) in recs {
                *m.entry((sport(f) / 10 * 10, f[15] >> 2)).or_insert(0) += 1;
            }
            m
        };
        let (theirs, ours) = (tally(&read_pcap(&click_out)), tally(&recs));
        eprintln!("DiffServ per (port group, DSCP): Click {theirs:?}, rclick {ours:?}");
        let keys: std::collections::BTreeSet<_> = theirs.keys().chain(ours.keys()).collect();
        for k in keys {
            let (a, b) = (
                theirs.get(k).copied().unwrap_or(0),
                ours.get(k).copied().unwrap_or(0),
            );
            assert!(
                (a as f64 - b as f64).abs() <= 0.02 * recs.len() as f64,
                "{k:?}: Click {a}, rclick {b}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
