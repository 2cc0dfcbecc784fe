//! Sources, switches, schedulers, paint and header elements (group A),
//! checked on hand-built router specs under simulated time.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Router, StopReason, Timestamp};
use rclick_elements::testing::{build, spec, try_build};

fn errors(s: rclick_lang::RouterSpec) -> Vec<String> {
    try_build(s).err().unwrap_or_default()
}

fn count(r: &mut Router, h: &str) -> u64 {
    r.read_handler(h, None)
        .unwrap_or_else(|e| panic!("{h}: {e}"))
        .trim()
        .parse()
        .unwrap()
}

/// Simulated time elapsed since the start, in milliseconds.
fn elapsed_ms(r: &Router) -> f64 {
    (r.clock().now() - DEFAULT_SIMTIME_START).nanos() as f64 / 1e6
}

fn idx(r: &Router, name: &str) -> usize {
    r.find_element(name).unwrap()
}

fn paints(r: &mut Router, elem: &str, max: usize) -> Vec<u8> {
    let i = idx(r, elem);
    match r.pull_from(i, 0, max) {
        Some(b) => b.packets().iter().map(|p| p.anno()[16]).collect(),
        None => vec![],
    }
}

// ------------------------------------------------------------ RatedSource

/// RatedSource(RATE 10) behind Click's token bucket: capacity 2, full at
/// start (2 packets at once), then one every 101 ms (rounding of 1/10 s in
/// 1 ms ticks), then every 100 ms. The 12th packet leaves at 1001 ms and
/// the next run stops the driver.
#[test]
fn ratedsource_rate10_timeline_matches_click() {
    let mut r = build(spec(
        &[
            ("src", "RatedSource", "RATE 10, LIMIT 12, STOP true"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 12);
    assert_eq!(count(&mut r, "src.count"), 12);
    assert_eq!(elapsed_ms(&r), 1001.0);
}

/// A TimedSource with LIMIT 0 and STOP stops the driver at its first tick.
fn rated_by(rate_conf: &str, stop_at: &str) -> Router {
    let mut r = build(spec(
        &[
            ("src", "RatedSource", rate_conf),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
            ("stopper", "TimedSource", stop_at),
            ("d2", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (3, 0, 4, 0)],
    ));
    assert_eq!(r.run_limited(10_000_000), StopReason::Stopped);
    r
}

#[test]
fn ratedsource_counts_by_simulated_time() {
    // 0, 0, 101, 201, ..., 901 ms.
    let mut r = rated_by("RATE 10", "1.0005, LIMIT 0, STOP true");
    assert_eq!(count(&mut r, "c.count"), 11);
    assert_eq!(r.read_handler("src.rate", None).unwrap(), "10");
    // RATE 1000: capacity 10, one token per ms: 10 at once, then 1000 more.
    let mut r = rated_by("RATE 1000", "1.0005, LIMIT 0, STOP true");
    assert_eq!(count(&mut r, "c.count"), 1010);
    assert_eq!(r.read_handler("src.rate", None).unwrap(), "1000");
    // RATE 0 is idle in Click: only the one token given at initialization.
    let mut r = rated_by("RATE 0", "1.0005, LIMIT 0, STOP true");
    assert_eq!(count(&mut r, "c.count"), 1);
}

#[test]
fn ratedsource_bandwidth_and_length() {
    // 690 bytes/s of 69-byte packets is 10 packets/s.
    let mut r = rated_by("BANDWIDTH 690Bps", "1.0005, LIMIT 0, STOP true");
    assert_eq!(r.read_handler("src.rate", None).unwrap(), "10");
    let mut r = rated_by("LENGTH 100, RATE 5", "1.0005, LIMIT 0, STOP true");
    assert_eq!(
        count(&mut r, "c.byte_count"),
        100 * count(&mut r, "c.count")
    );
    assert_eq!(r.read_handler("src.length", None).unwrap(), "100");
}

#[test]
fn ratedsource_pull_mode_sleeps_between_tokens() {
    let mut r = build(spec(
        &[
            ("src", "RatedSource", "RATE 10"),
            ("u", "Unqueue", ""),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
            ("stopper", "TimedSource", "1.0005, LIMIT 0, STOP true"),
            ("d2", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (4, 0, 5, 0)],
    ));
    // A busy-polling Unqueue would keep simulated time from advancing and
    // hit the iteration limit instead.
    assert_eq!(r.run_limited(100_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 11);
}

#[test]
fn ratedsource_handlers() {
    let mut r = build(spec(
        &[
            ("src", "RatedSource", "\"hello\", 10, -1, false"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
            ("stopper", "TimedSource", "1.0005, LIMIT 0, STOP true"),
            ("d2", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (3, 0, 4, 0)],
    ));
    assert_eq!(r.read_handler("src.active", None).unwrap(), "false");
    assert_eq!(r.read_handler("src.data", None).unwrap(), "hello");
    assert_eq!(r.read_handler("src.limit", None).unwrap(), "-1");
    r.write_handler("src.rate", "300").unwrap();
    assert_eq!(r.read_handler("src.rate", None).unwrap(), "300");
    r.write_handler("src.limit", "7").unwrap();
    r.write_handler("src.active", "true").unwrap();
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 7);
    assert_eq!(count(&mut r, "c.byte_count"), 35);
    assert!(r.write_handler("src.rate", "fast").is_err());
    r.write_handler("src.reset", "").unwrap();
    assert_eq!(count(&mut r, "src.count"), 0);
}

#[test]
fn ratedsource_bad_arguments() {
    let e = errors(spec(
        &[("src", "RatedSource", "RATE -3"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    ));
    assert!(e.iter().any(|m| m.contains("RATE")), "{e:?}");
    let e = errors(spec(
        &[("src", "RatedSource", "FOO 1"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("FOO: unknown argument")),
        "{e:?}"
    );
}

// ----------------------------------------------------------- RatedUnqueue

fn rated_unqueue(conf: &str, n: u32, stop: Option<&str>) -> Router {
    let mut elems = vec![
        ("src", "InfiniteSource", format!("LIMIT {n}")),
        ("q", "Queue", "1000".to_string()),
        ("ru", "RatedUnqueue", conf.to_string()),
        ("c", "Counter", String::new()),
        ("d", "Discard", String::new()),
    ];
    let mut conns = vec![(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (3, 0, 4, 0)];
    if let Some(s) = stop {
        elems.push(("stopper", "TimedSource", s.to_string()));
        elems.push(("d2", "Discard", String::new()));
        conns.push((5, 0, 6, 0));
    }
    let e: Vec<(&str, &str, &str)> = elems.iter().map(|(a, b, c)| (*a, *b, c.as_str())).collect();
    build(spec(&e, &conns))
}

/// RatedUnqueue(10): capacity max(10 * 20 ms, 1) = 1 token; full at start,
/// then one packet every 101 ms (Click's tick rounding).
#[test]
fn ratedunqueue_counts_by_simulated_time() {
    let mut r = rated_unqueue("10", 100, Some("1.0005, LIMIT 0, STOP true"));
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 10);
    assert_eq!(r.read_handler("ru.rate", None).unwrap(), "10");
    // RATE 1000, BURST_SIZE 5: 5 at once, then one per ms.
    let mut r = rated_unqueue(
        "1000, BURST_SIZE 5",
        5000,
        Some("0.1005, LIMIT 0, STOP true"),
    );
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 105);
}

#[test]
fn ratedunqueue_sleeps_when_queue_empty() {
    let mut r = rated_unqueue("10", 5, None);
    assert_eq!(r.run_limited(1_000_000), StopReason::Quiescent);
    assert_eq!(count(&mut r, "c.count"), 5);
    // Packets at 0, 101, ..., 404 ms; the task wakes at 505 ms for the
    // next token, finds the queue empty and sleeps on its signal.
    assert_eq!(elapsed_ms(&r), 505.0);
    assert_eq!(r.read_handler("ru.scheduled", None).unwrap(), "false");
    let calls = r.read_handler("ru.calls", None).unwrap();
    assert!(calls.contains("5 pushes"), "{calls}");
}

#[test]
fn ratedunqueue_handlers_and_errors() {
    let mut r = rated_unqueue("10", 5, None);
    r.write_handler("ru.rate", "500").unwrap();
    assert_eq!(r.read_handler("ru.rate", None).unwrap(), "500");
    r.write_handler("ru.active", "false").unwrap();
    assert_eq!(r.read_handler("ru.active", None).unwrap(), "false");
    assert_eq!(r.run_limited(1_000_000), StopReason::Quiescent);
    assert_eq!(count(&mut r, "c.count"), 0);
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("q", "Queue", ""),
            ("ru", "RatedUnqueue", "10, BURST_SIZE 3, BURST_DURATION 1"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("cannot specify both BURST_DURATION and BURST_SIZE")),
        "{e:?}"
    );
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("q", "Queue", ""),
            ("ru", "RatedUnqueue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    assert!(e.iter().any(|m| m.contains("RATE")), "{e:?}");
}

// ------------------------------------------------------------ TimedSource

#[test]
fn timedsource_ticks_and_stops() {
    let mut r = build(spec(
        &[
            ("ts", "TimedSource", "0.1, \"xyz\", LIMIT 5, STOP true"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    assert_eq!(r.run_limited(100_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 5);
    assert_eq!(count(&mut r, "c.byte_count"), 15);
    // Packets at 100..500 ms; the 600 ms tick finds LIMIT reached.
    assert_eq!(elapsed_ms(&r), 600.0);
    assert_eq!(r.read_handler("ts.interval", None).unwrap(), "100ms");
    r.write_handler("ts.interval", "1.5").unwrap();
    assert_eq!(r.read_handler("ts.interval", None).unwrap(), "1.500000s");
    assert!(r.write_handler("ts.interval", "0").is_err());
    let e = errors(spec(
        &[("ts", "TimedSource", "soon"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    ));
    assert!(e.iter().any(|m| m.contains("INTERVAL")), "{e:?}");
}

// ------------------------------------------------------------------- Idle

#[test]
fn idle_drops_and_never_wakes_pullers() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 5, STOP true"),
            ("i", "Idle", ""),
            ("i2", "Idle", ""),
            ("u", "Unqueue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (2, 0, 3, 0), (3, 0, 4, 0)],
    ));
    assert_eq!(r.run_limited(100_000), StopReason::Stopped);
    assert_eq!(count(&mut r, "d.count"), 0);
    assert_eq!(r.read_handler("u.scheduled", None).unwrap(), "false");
}

// ---------------------------------------------------------------- PullTee

#[test]
fn pulltee_copies_pulled_packets() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 10"),
            ("q", "Queue", ""),
            ("t", "PullTee", "2"),
            ("u", "Unqueue", ""),
            ("c0", "Counter", ""),
            ("c1", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (2, 0, 3, 0),
            (3, 0, 4, 0),
            (2, 1, 5, 0),
            (4, 0, 6, 0),
            (5, 0, 6, 0),
        ],
    ));
    assert_eq!(r.run_limited(100_000), StopReason::Quiescent);
    assert_eq!(count(&mut r, "c0.count"), 10);
    assert_eq!(count(&mut r, "c1.count"), 10);
    assert_eq!(r.port_modes(idx(&r, "t")).1.len(), 2);
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("q", "Queue", ""),
            ("t", "PullTee", "3"),
            ("u", "Unqueue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (3, 0, 4, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("1 outputs implies 1 arms")),
        "{e:?}"
    );
}

// ------------------------------------------------------------------ paint

/// A source of 10 packets through `mid` (a list of elements chained in
/// order), whose last element's outputs 0 and 1 go to counters c0, c1.
fn paint_chain(mid: &[(&str, &str, &str)], two_outputs: bool) -> Router {
    let mut elems = vec![("src", "InfiniteSource", "LIMIT 10, STOP true")];
    elems.extend_from_slice(mid);
    let last = elems.len() - 1;
    elems.push(("c0", "Counter", ""));
    elems.push(("c1", "Counter", ""));
    elems.push(("d", "Discard", ""));
    let (c0, c1, d) = (last + 1, last + 2, last + 3);
    let mut conns: Vec<(usize, usize, usize, usize)> =
        (0..last).map(|i| (i, 0, i + 1, 0)).collect();
    conns.push((last, 0, c0, 0));
    if two_outputs {
        conns.push((last, 1, c1, 0));
    } else {
        conns.push((last + 20, 0, c1, 0));
        conns.pop();
    }
    conns.push((c0, 0, d, 0));
    conns.push((c1, 0, d, 0));
    let mut r = if two_outputs {
        build(spec(&elems, &conns))
    } else {
        // c1 has no input: feed it from an Idle.
        elems.push(("idle", "Idle", ""));
        conns.push((d + 1, 0, c1, 0));
        build(spec(&elems, &conns))
    };
    assert_eq!(r.run_limited(100_000), StopReason::Stopped);
    r
}

#[test]
fn paint_and_checkpaint() {
    let mut r = paint_chain(&[("p", "Paint", "3"), ("cp", "CheckPaint", "3")], true);
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (10, 0)
    );
    assert_eq!(r.read_handler("p.color", None).unwrap(), "3");
    let mut r = paint_chain(&[("p", "Paint", "2"), ("cp", "CheckPaint", "3")], true);
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (0, 10)
    );
    // Without output 1, failing packets are dropped.
    let mut r = paint_chain(&[("p", "Paint", "2"), ("cp", "CheckPaint", "3")], false);
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (0, 0)
    );
    // Another annotation byte, by name and by offset.
    let mut r = paint_chain(
        &[
            ("p", "Paint", "7, ANNO ICMP_PARAMPROB"),
            ("cp", "CheckPaint", "0"),
            ("cp2", "CheckPaint", "7, 17"),
        ],
        true,
    );
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (10, 0)
    );
}

#[test]
fn paint_handler_and_errors() {
    let mut r = paint_chain(&[("p", "Paint", "1"), ("cp", "CheckPaint", "4")], true);
    r.write_handler("p.color", "4").unwrap();
    assert!(r.write_handler("p.color", "256").is_err());
    let i = idx(&r, "p");
    for _ in 0..3 {
        r.inject_packet(i, 0, Packet::from_slice(b"x"));
    }
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (3, 10)
    );
    for conf in ["300", "", "1, ANNO 48", "1, ANNO DST_IP", "1, 2, 3"] {
        let e = errors(spec(
            &[
                ("src", "InfiniteSource", ""),
                ("p", "Paint", conf),
                ("d", "Discard", ""),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0)],
        ));
        assert!(
            e.iter()
                .any(|m| m.contains("While configuring 'p :: Paint'")),
            "{conf}: {e:?}"
        );
    }
}

#[test]
fn painttee_copies_matching_packets() {
    let mut r = paint_chain(&[("p", "Paint", "1"), ("pt", "PaintTee", "1")], true);
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (10, 10)
    );
    let mut r = paint_chain(&[("p", "Paint", "1"), ("pt", "PaintTee", "2")], true);
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (10, 0)
    );
}

#[test]
fn paintswitch_routes_by_color() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 40, STOP true"),
            ("rr", "RoundRobinSwitch", ""),
            ("p0", "Paint", "0"),
            ("p1", "Paint", "1"),
            ("p255", "Paint", "255"),
            ("p5", "Paint", "5"),
            ("ps", "PaintSwitch", ""),
            ("c0", "Counter", ""),
            ("c1", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 1, 3, 0),
            (1, 2, 4, 0),
            (1, 3, 5, 0),
            (2, 0, 6, 0),
            (3, 0, 6, 0),
            (4, 0, 6, 0),
            (5, 0, 6, 0),
            (6, 0, 7, 0),
            (6, 1, 8, 0),
            (7, 0, 9, 0),
            (8, 0, 9, 0),
        ],
    ));
    assert_eq!(r.run_limited(100_000), StopReason::Stopped);
    // 10 each of colors 0, 1, 255 (to both) and 5 (dropped).
    assert_eq!(
        (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
        (20, 20)
    );
}

// --------------------------------------------------------------- switches

fn switch_router(class: &str, conf: &str, n: usize) -> Result<Router, Vec<String>> {
    let mut elems = vec![("sw", class, conf)];
    let names = ["c0", "c1", "c2", "c3"];
    for name in names.iter().take(n) {
        elems.push((name, "Counter", ""));
    }
    elems.push(("d", "Discard", ""));
    elems.push(("idle", "Idle", ""));
    let mut conns = vec![(n + 2, 0, 0, 0)];
    for i in 0..n {
        conns.push((0, i, i + 1, 0));
        conns.push((i + 1, 0, n + 1, 0));
    }
    try_build(spec(&elems, &conns))
}

fn counts(r: &mut Router, n: usize) -> Vec<u64> {
    (0..n).map(|i| count(r, &format!("c{i}.count"))).collect()
}

fn inject(r: &mut Router, data: &[u8], times: usize) {
    let i = idx(r, "sw");
    for _ in 0..times {
        r.inject_packet(i, 0, Packet::from_slice(data));
    }
}

#[test]
fn switch_output_and_handler() {
    let mut r = switch_router("Switch", "1", 2).unwrap();
    inject(&mut r, b"a", 3);
    assert_eq!(counts(&mut r, 2), vec![0, 3]);
    r.write_handler("sw.switch", "0").unwrap();
    inject(&mut r, b"a", 2);
    assert_eq!(counts(&mut r, 2), vec![2, 3]);
    r.write_handler("sw.switch", "5").unwrap();
    assert_eq!(r.read_handler("sw.switch", None).unwrap(), "-1");
    inject(&mut r, b"a", 2);
    assert_eq!(counts(&mut r, 2), vec![2, 3]);
    assert!(r.write_handler("sw.switch", "x").is_err());
    let e = switch_router("Switch", "2", 2).err().unwrap();
    assert!(e.iter().any(|m| m.contains("output must be < 2")), "{e:?}");
    let mut r = switch_router("Switch", "", 2).unwrap();
    inject(&mut r, b"a", 1);
    assert_eq!(counts(&mut r, 2), vec![1, 0]);
}

#[test]
fn staticswitch_fixed_output() {
    let mut r = switch_router("StaticSwitch", "1", 2).unwrap();
    inject(&mut r, b"a", 4);
    assert_eq!(counts(&mut r, 2), vec![0, 4]);
    let mut r = switch_router("StaticSwitch", "-1", 2).unwrap();
    inject(&mut r, b"a", 4);
    assert_eq!(counts(&mut r, 2), vec![0, 0]);
    let e = switch_router("StaticSwitch", "", 2).err().unwrap();
    assert!(e.iter().any(|m| m.contains("OUTPUT")), "{e:?}");
}

#[test]
fn roundrobinswitch_rotates_per_packet() {
    let mut r = switch_router("RoundRobinSwitch", "", 3).unwrap();
    inject(&mut r, b"a", 7);
    assert_eq!(counts(&mut r, 3), vec![3, 2, 2]);
    let i = idx(&r, "sw");
    let mut b = rclick_core::Batch::new();
    for _ in 0..5 {
        b.push(Packet::from_slice(b"b"));
    }
    r.inject(i, 0, b);
    // The rotation continues from output 1: 1, 2, 0, 1, 2.
    assert_eq!(counts(&mut r, 3), vec![4, 4, 4]);
}

#[test]
fn hashswitch_matches_click_hash() {
    let mut r = switch_router("HashSwitch", "1, 1", 2).unwrap();
    inject(&mut r, &[9, 0x00], 1); // d = 0 -> 0
    inject(&mut r, &[9, 0x01], 1); // d = 1 -> 1
    inject(&mut r, &[9, 0x10], 1); // (16 ^ 1) & 1 = 1
    inject(&mut r, &[9, 0x11], 1); // (17 ^ 1) & 1 = 0
    inject(&mut r, &[9], 1); // too short -> 0
    assert_eq!(counts(&mut r, 2), vec![3, 2]);
    let mut r = switch_router("HashSwitch", "0, 2", 3).unwrap();
    inject(&mut r, &[2, 3], 1); // 5 % 3 = 2
    inject(&mut r, &[2, 2], 1); // 4 % 3 = 1
    assert_eq!(counts(&mut r, 3), vec![0, 1, 1]);
    let e = switch_router("HashSwitch", "0, 0", 2).err().unwrap();
    assert!(e.iter().any(|m| m.contains("length must be > 0")), "{e:?}");
    let e = switch_router("HashSwitch", "0", 2).err().unwrap();
    assert!(e.iter().any(|m| m.contains("LENGTH")), "{e:?}");
}

// ------------------------------------------------------------- schedulers

/// Two painted sources (n0 packets of color 0, n1 of color 1) into queues
/// feeding `sched`, whose output goes to an Idle (so tests pull by hand).
fn sched_router(class: &str, conf: &str, n0: u32, n1: u32) -> Router {
    let l0 = format!("LIMIT {n0}");
    let l1 = format!("LIMIT {n1}");
    let mut r = build(spec(
        &[
            ("s0", "InfiniteSource", &l0),
            ("p0", "Paint", "0"),
            ("q0", "Queue", ""),
            ("s1", "InfiniteSource", &l1),
            ("p1", "Paint", "1"),
            ("q1", "Queue", ""),
            ("ps", class, conf),
            ("idle", "Idle", ""),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (3, 0, 4, 0),
            (4, 0, 5, 0),
            (2, 0, 6, 0),
            (5, 0, 6, 1),
            (6, 0, 7, 0),
        ],
    ));
    assert_eq!(r.run_limited(100_000), StopReason::Quiescent);
    r
}

#[test]
fn priosched_prefers_input_0() {
    let mut r = sched_router("PrioSched", "", 5, 5);
    assert_eq!(paints(&mut r, "ps", 64), vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    let mut r = sched_router("PrioSched", "", 0, 3);
    assert_eq!(paints(&mut r, "ps", 2), vec![1, 1]);
    assert_eq!(paints(&mut r, "ps", 2), vec![1]);
    assert_eq!(paints(&mut r, "ps", 2), Vec::<u8>::new());
}

#[test]
fn roundrobinsched_alternates() {
    let mut r = sched_router("RoundRobinSched", "", 5, 2);
    assert_eq!(paints(&mut r, "ps", 3), vec![0, 1, 0]);
    assert_eq!(paints(&mut r, "ps", 64), vec![1, 0, 0, 0]);
    let e = errors(spec(
        &[("ps", "RoundRobinSched", "3"), ("idle", "Idle", "")],
        &[(0, 0, 1, 0)],
    ));
    assert!(e.iter().any(|m| m.contains("too many arguments")), "{e:?}");
}

#[test]
fn stridesched_shares_by_tickets() {
    let mut r = sched_router("StrideSched", "3, 1", 100, 100);
    let got = paints(&mut r, "ps", 40);
    assert_eq!(got.len(), 40);
    assert_eq!(got.iter().filter(|&&c| c == 0).count(), 30);
    assert_eq!(&got[..8], &[0, 0, 0, 1, 0, 0, 0, 1]);
    assert_eq!(r.read_handler("ps.tickets0", None).unwrap(), "3");
    // Input 1 only.
    r.write_handler("ps.tickets0", "0").unwrap();
    assert_eq!(paints(&mut r, "ps", 5), vec![1; 5]);
    assert!(r.write_handler("ps.tickets1", "-1").is_err());
    assert!(r.write_handler("ps.tickets1", "x").is_err());
    // Over the maximum: reduced with a warning.
    r.write_handler("ps.tickets0", "100000").unwrap();
    assert_eq!(r.read_handler("ps.tickets0", None).unwrap(), "32768");
    // An empty input is skipped.
    let mut r = sched_router("StrideSched", "1, 1", 0, 4);
    assert_eq!(paints(&mut r, "ps", 64), vec![1, 1, 1, 1]);
}

#[test]
fn stridesched_bad_arguments() {
    let conns = [(0, 0, 2, 0), (1, 0, 2, 1), (2, 0, 3, 0)];
    let elems = |conf: &'static str| {
        vec![
            ("q0", "Idle", ""),
            ("q1", "Idle", ""),
            ("ss", "StrideSched", conf),
            ("idle", "Idle", ""),
        ]
    };
    let e = errors(spec(&elems("1"), &conns));
    assert!(
        e.iter()
            .any(|m| m.contains("need 2 arguments, one per input port")),
        "{e:?}"
    );
    let e = errors(spec(&elems("x, 1"), &conns));
    assert!(
        e.iter()
            .any(|m| m.contains("argument 0 should be number of tickets (integer)")),
        "{e:?}"
    );
    let e = errors(spec(&elems("1, -2"), &conns));
    assert!(
        e.iter()
            .any(|m| m.contains("argument 1 (number of tickets) must be >= 0")),
        "{e:?}"
    );
}

// ------------------------------------------------------------ ScheduleInfo

#[test]
fn scheduleinfo_sets_tickets() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 1"),
            ("d", "Discard", ""),
            ("si", "ScheduleInfo", "src 2, , other 0.5"),
        ],
        &[(0, 0, 1, 0)],
    ));
    assert_eq!(r.read_handler("src.tickets", None).unwrap(), "2048");
    let e = errors(spec(
        &[
            ("si", "ScheduleInfo", "src"),
            ("src", "InfiniteSource", ""),
            ("d", "Discard", ""),
        ],
        &[(1, 0, 2, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("expected 'ELEMENTNAME PARAM'")),
        "{e:?}"
    );
}

// --------------------------------------------------------- header elements

/// `class(conf)` in front of a queue; returns the router and injects `p`.
fn through(class: &str, conf: &str, p: Packet) -> Packet {
    let mut r = build(spec(
        &[
            ("e", class, conf),
            ("q", "Queue", ""),
            ("idle", "Idle", ""),
            ("in", "Idle", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (3, 0, 0, 0)],
    ));
    let e = idx(&r, "e");
    r.inject_packet(e, 0, p);
    let q = idx(&r, "q");
    let mut b = r.pull_from(q, 0, 1).expect("a packet");
    b.pop().unwrap()
}

#[test]
fn strip_unstrip_truncate() {
    let p = through("Strip", "2", Packet::from_slice(b"abcdef"));
    assert_eq!(p.data(), b"cdef");
    let mut p = p;
    p.unstrip(0);
    let r = {
        let mut r = build(spec(
            &[
                ("s", "Strip", "2"),
                ("u", "Unstrip", "2"),
                ("q", "Queue", ""),
                ("idle", "Idle", ""),
                ("in", "Idle", ""),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (4, 0, 0, 0)],
        ));
        let s = idx(&r, "s");
        r.inject_packet(s, 0, Packet::from_slice(b"abcdef"));
        let q = idx(&r, "q");
        r.pull_from(q, 0, 1).unwrap().pop().unwrap()
    };
    assert_eq!(r.data(), b"abcdef");
    // Strip more than the length empties the packet.
    assert_eq!(through("Strip", "10", Packet::from_slice(b"abc")).len(), 0);
    // Unstrip beyond the headroom still grows the packet.
    assert_eq!(
        through("Unstrip", "200", Packet::from_slice(b"abc")).len(),
        203
    );

    let p = through("Truncate", "3", Packet::from_slice(b"abcdef"));
    assert_eq!(p.data(), b"abc");
    assert_eq!(u32::from_ne_bytes(p.anno_bytes::<4>(28)), 3);
    let p = through(
        "Truncate",
        "3, EXTRA_LENGTH false",
        Packet::from_slice(b"abcdef"),
    );
    assert_eq!(p.data(), b"abc");
    assert_eq!(u32::from_ne_bytes(p.anno_bytes::<4>(28)), 0);
    assert_eq!(
        through("Truncate", "10", Packet::from_slice(b"ab")).data(),
        b"ab"
    );

    let mut p = Packet::from_slice(b"llllIPIP");
    p.set_network_header(4, 4);
    assert_eq!(through("StripToNetworkHeader", "", p).data(), b"IPIP");
    let p = through("StripToNetworkHeader", "", Packet::from_slice(b"none"));
    assert_eq!(p.data(), b"none");

    for (class, conf) in [
        ("Strip", ""),
        ("Strip", "x"),
        ("Truncate", "4294967296"),
        ("Unstrip", ""),
    ] {
        let e = errors(spec(
            &[("e", class, conf), ("d", "Discard", ""), ("in", "Idle", "")],
            &[(0, 0, 1, 0), (2, 0, 0, 0)],
        ));
        let want = format!("While configuring 'e :: {class}'");
        assert!(
            e.iter().any(|m| m.contains(&want)),
            "{class}({conf}): {e:?}"
        );
    }
}

#[test]
fn settimestamp_now_fixed_and_first() {
    let p = through("SetTimestamp", "", Packet::from_slice(b"a"));
    assert_eq!(p.timestamp_anno(), DEFAULT_SIMTIME_START);
    let p = through("SetTimestamp", "5.25", Packet::from_slice(b"a"));
    assert_eq!(p.timestamp_anno(), Timestamp::from_sec_nsec(5, 250_000_000));
    let p = through("SetTimestamp", "5.25, FIRST true", Packet::from_slice(b"a"));
    assert_eq!(p.timestamp_anno(), Timestamp::ZERO);
    assert_eq!(i64::from_ne_bytes(p.anno_bytes::<8>(32)), 5_250_000_000);
    let e = errors(spec(
        &[
            ("e", "SetTimestamp", "DELTA true"),
            ("d", "Discard", ""),
            ("in", "Idle", ""),
        ],
        &[(0, 0, 1, 0), (2, 0, 0, 0)],
    ));
    assert!(e.iter().any(|m| m.contains("SetTimestampDelta")), "{e:?}");
}

// --------------------------------------------------------- InfiniteSource

/// DATASIZE longer than DATA repeats DATA (as Click; rclick padded with
/// zeros); an empty DATA gives zeros (Click loops forever making it). The
/// data and datasize handlers rebuild the packet the same way.
#[test]
fn infinitesource_datasize_repeats_data() {
    let mut r = rclick_elements::testing::from_config(
        "a :: InfiniteSource(DATA \\<010203>, DATASIZE 8, ACTIVE false) -> qa :: Queue -> Idle;
         e :: InfiniteSource(DATA \"\", DATASIZE 4, ACTIVE false) -> qe :: Queue -> Idle;",
    );
    let pull = |r: &mut Router, src: &str, q: &str| {
        let qi = idx(r, q);
        while r.pull_from(qi, 0, 64).is_some() {}
        r.write_handler(&format!("{src}.active"), "true").unwrap();
        r.run_limited(1);
        r.write_handler(&format!("{src}.active"), "false").unwrap();
        let b = r.pull_from(qi, 0, 1).expect("a packet");
        b.packets()[0].data().to_vec()
    };
    assert_eq!(pull(&mut r, "a", "qa"), [1, 2, 3, 1, 2, 3, 1, 2]);
    assert_eq!(pull(&mut r, "e", "qe"), [0, 0, 0, 0]);
    r.write_handler("a.data", "xy").unwrap();
    r.write_handler("a.datasize", "5").unwrap();
    assert_eq!(pull(&mut r, "a", "qa")[..], b"xyxyx"[..]);
}
