//! Hot swap carries rate and time state (issue 13, item 11): an element of
//! the same name and class keeps its timer's phase, counts, rate clock,
//! reply statistics or packets in flight, instead of starting afresh at
//! the swap. Simulated time: the tests move the clock themselves.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Router, RouterOptions, Timestamp};

fn build(text: &str) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    rclick_elements::testing::from_config_with(text, &opts)
}

fn read(r: &mut Router, h: &str) -> String {
    r.read_handler(h, None)
        .unwrap_or_else(|e| panic!("{h}: {e}"))
}

fn num(r: &mut Router, h: &str) -> u64 {
    read(r, h).trim().parse().unwrap()
}

fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

/// Runs one driver iteration at a time until `done` holds; returns the
/// simulated time at which that iteration ran its timers, in seconds since
/// the start. (An iteration ends by moving the clock on to the next timer.)
fn run_until(r: &mut Router, mut done: impl FnMut(&mut Router) -> bool) -> f64 {
    for _ in 0..10_000 {
        let then = r.clock().now();
        r.run_limited(1);
        if done(r) {
            return (then - DEFAULT_SIMTIME_START).as_secs_f64();
        }
    }
    panic!("never happened");
}

/// The case: INTERVAL 1, swapped at t = 0.5: the next packet
/// leaves at t = 1 (it used to leave at 1.5: a fresh timer).
#[test]
fn timed_source_keeps_its_phase() {
    let conf = "s :: TimedSource(1, LIMIT 3) -> c :: Counter -> Discard;";
    let mut r = build(conf);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.5));
    r.hotswap(conf).unwrap();
    let t = run_until(&mut r, |r| num(r, "c.count") == 1);
    assert_eq!(t, 1.0, "first packet after a swap at 0.5");
    assert_eq!(num(&mut r, "s.count"), 1);
}

/// A new INTERVAL counts from the last packet (or the start), and LIMIT
/// counts packets sent before the swap.
#[test]
fn timed_source_new_interval_counts_from_the_last_packet() {
    let mut r = build("s :: TimedSource(1, LIMIT 3) -> c :: Counter -> Discard;");
    let half = "s :: TimedSource(0.5, LIMIT 3) -> c :: Counter -> Discard;";
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.25));
    r.hotswap(half).unwrap();
    let t = run_until(&mut r, |r| num(r, "c.count") == 1);
    assert_eq!(t, 0.5);
    // The driver now waits for 1.0; swapping then changes nothing.
    r.hotswap(half).unwrap();
    let t = run_until(&mut r, |r| num(r, "c.count") == 2);
    assert_eq!(t, 1.0);
    r.hotswap(half).unwrap();
    let t = run_until(&mut r, |r| num(r, "c.count") == 3);
    assert_eq!(t, 1.5);
    r.run_limited(100);
    assert_eq!(num(&mut r, "c.count"), 3, "LIMIT holds across swaps");
    assert_eq!(num(&mut r, "s.count"), 3);
}

/// A swap when the next packet is already overdue sends it at once.
#[test]
fn timed_source_overdue_at_the_swap_fires_at_once() {
    let conf = "s :: TimedSource(1) -> c :: Counter -> Discard;";
    let mut r = build(conf);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.9));
    // To INTERVAL 0.25: due 0.25 after the last packet (at 0), long past.
    r.hotswap("s :: TimedSource(0.25) -> c :: Counter -> Discard;")
        .unwrap();
    let t = run_until(&mut r, |r| num(r, "c.count") == 1);
    assert_eq!(t, 0.9);
    let t = run_until(&mut r, |r| num(r, "c.count") == 2);
    assert_eq!(t, 1.15);
}

#[test]
fn timed_sink_keeps_its_phase() {
    let conf = "Idle -> q :: Queue(10) -> s :: TimedSink(1);";
    let mut r = build(conf);
    let q = r.find_element("q").unwrap();
    for i in 0..4u8 {
        r.inject_packet(q, 0, Packet::from_slice(&[i; 20]));
    }
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.5));
    r.hotswap(conf).unwrap();
    assert_eq!(num(&mut r, "q.length"), 4);
    let t = run_until(&mut r, |r| num(r, "q.length") == 3);
    assert_eq!(t, 1.0, "first pull after a swap at 0.5");
    let t = run_until(&mut r, |r| num(r, "q.length") == 2);
    assert_eq!(t, 2.0);
}

/// ICMPPingSource keeps its sequence numbers, its timer's phase and its
/// reply statistics (requests answered by an ICMPPingResponder loop).
#[test]
fn icmp_ping_source_keeps_sequence_phase_and_statistics() {
    let conf = "ps :: ICMPPingSource(1.0.0.1, 2.0.0.2, INTERVAL 1, VERBOSE false) \
                -> t :: Tee -> ICMPPingResponder -> ps; \
                t[1] -> q :: Queue(100) -> Discard(ACTIVE false);";
    let mut r = build(conf);
    let t = run_until(&mut r, |r| num(r, "ps.count") == 3);
    assert_eq!(t, 3.0);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(3.5));
    r.hotswap(conf).unwrap();
    let t = run_until(&mut r, |r| num(r, "q.length") == 4);
    assert_eq!(t, 4.0, "fourth request after a swap at 3.5");
    let summary = read(&mut r, "ps.summary");
    assert!(
        summary.starts_with("4 packets transmitted, 4 received, 0% packet loss"),
        "{summary}"
    );
    // Sequence numbers 1, 2, 3, 4: the queue holds them in order.
    let q = r.find_element("q").unwrap();
    let b = r.pull_from(q, 0, 64).unwrap();
    let seqs: Vec<u16> = b
        .packets()
        .iter()
        .map(|p| {
            let d = p.data();
            u16::from_be_bytes([d[26], d[27]])
        })
        .collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}

/// LinkUnqueue's packets in flight keep their arrival times.
#[test]
fn link_unqueue_keeps_packets_on_the_link() {
    // 1 s latency, 1000 B/s: a 100-byte packet arrives 1.1 s after it was
    // pulled.
    let conf =
        "Idle -> q :: Queue(10) -> l :: LinkUnqueue(1s, 1000Bps) -> c :: Counter -> Discard;";
    let mut r = build(conf);
    let q = r.find_element("q").unwrap();
    r.inject_packet(q, 0, Packet::from_slice(&[7; 100]));
    r.run_limited(1);
    assert_eq!(num(&mut r, "l.size"), 1);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.5));
    r.hotswap(conf).unwrap();
    assert_eq!(num(&mut r, "l.size"), 1, "the packet is still on the link");
    let t = run_until(&mut r, |r| num(r, "c.count") == 1);
    assert_eq!(t, 1.1);
}

/// FastUDPSource keeps its count and rate clock: no fresh burst after the
/// swap, and LIMIT counts packets from before it.
#[test]
fn fast_udp_source_keeps_count_and_rate_clock() {
    let conf = "f :: FastUDPSource(1000, 30, 60, 0:0:0:0:0:1, 1.0.0.1, 1234, \
                0:0:0:0:0:2, 2.0.0.2, 1234) -> Discard(ACTIVE false);";
    let mut r = build(conf);
    let f = r.find_element("f").unwrap();
    let pull = |r: &mut Router| r.pull_from(f, 0, 64).map_or(0, |b| b.len());
    assert_eq!(pull(&mut r), 1);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.01));
    assert_eq!(pull(&mut r), 10);
    r.hotswap(conf).unwrap();
    assert_eq!(num(&mut r, "f.count"), 11);
    assert_eq!(
        pull(&mut r),
        0,
        "the rate clock goes on: nothing is due yet"
    );
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.1));
    assert_eq!(pull(&mut r), 19, "LIMIT 30 counts the 11 sent before");
    assert_eq!(num(&mut r, "f.count"), 30);
}

#[test]
fn set_timestamp_delta_keeps_its_first_timestamp() {
    let conf = "Idle -> s :: SetTimestampDelta -> q :: Queue -> Discard(ACTIVE false);";
    let mut r = build(conf);
    let s = r.find_element("s").unwrap();
    let mut p = Packet::from_slice(&[1; 20]);
    p.set_timestamp_anno(secs(100.0));
    r.inject_packet(s, 0, p);
    r.hotswap(conf).unwrap();
    assert_eq!(read(&mut r, "s.first"), "100.000000");
    let s = r.find_element("s").unwrap();
    let mut p = Packet::from_slice(&[2; 20]);
    p.set_timestamp_anno(secs(102.5));
    r.inject_packet(s, 0, p);
    let q = r.find_element("q").unwrap();
    let b = r.pull_from(q, 0, 64).unwrap();
    let deltas: Vec<f64> = b
        .packets()
        .iter()
        .map(|p| p.timestamp_anno().as_secs_f64())
        .collect();
    assert_eq!(deltas, vec![0.0, 2.5]);
}

/// A Script in the middle of `wait` keeps its place and its timer when
/// its configuration is unchanged: `wait 1` swapped at 0.5 ends at 1 (it
/// used to start over, ending its first wait at 1.5). A changed script
/// starts afresh. (A busy source keeps the driver from moving the clock:
/// the test moves it.)
#[test]
fn unchanged_script_goes_on_waiting() {
    let conf = |n: u32| {
        format!(
            "s :: Script(export x 0, set x $(add $x {n}), wait 1, set x $(add $x 10), wait 1); \
             InfiniteSource -> Discard;"
        )
    };
    let at = |r: &mut Router, t: f64| {
        r.clock().advance_to(DEFAULT_SIMTIME_START + secs(t));
        r.run_limited(3);
    };
    let mut r = build(&conf(1));
    at(&mut r, 0.0);
    assert_eq!(read(&mut r, "s.x"), "1");
    at(&mut r, 0.5);
    r.hotswap(&conf(1)).unwrap();
    at(&mut r, 0.5);
    assert_eq!(read(&mut r, "s.x"), "1", "not run again from the start");
    at(&mut r, 0.99);
    assert_eq!(read(&mut r, "s.x"), "1");
    at(&mut r, 1.0);
    assert_eq!(read(&mut r, "s.x"), "11", "the wait ends when it was due");
    // A changed script starts over.
    r.hotswap(&conf(2)).unwrap();
    at(&mut r, 1.0);
    assert_eq!(read(&mut r, "s.x"), "2");
}

fn fast_udp(rate: u32, limit: i64, active: bool) -> String {
    format!(
        "f :: FastUDPSource({rate}, {limit}, 60, 0:0:0:0:0:1, 1.0.0.1, 1234, \
         0:0:0:0:0:2, 2.0.0.2, 1234, ACTIVE {active}) -> Discard(ACTIVE false);"
    )
}

/// Pulls `n` times without time passing; returns the packets handed out.
fn pull_n(r: &mut Router, n: usize) -> usize {
    let f = r.find_element("f").unwrap();
    (0..n)
        .map(|_| r.pull_from(f, 0, 64).map_or(0, |b| b.len()))
        .sum()
}

/// A source that had reached its LIMIT, swapped long after for the same
/// RATE with a bigger LIMIT, sends at RATE from the swap: it used to owe
/// (and send at once) every packet of the 60 s it was at its limit.
#[test]
fn fast_udp_source_at_its_limit_owes_nothing_after_a_swap() {
    let mut r = build(&fast_udp(1000, 10, true));
    assert_eq!(pull_n(&mut r, 1), 1);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(0.1));
    assert_eq!(pull_n(&mut r, 10), 9, "LIMIT 10");
    assert_eq!(read(&mut r, "f.rate"), "100", "10 packets in 0.1 s");
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(60.0));
    r.hotswap(&fast_udp(1000, 100_000, true)).unwrap();
    assert_eq!(num(&mut r, "f.count"), 10);
    assert_eq!(read(&mut r, "f.rate"), "0", "the new LIMIT is not reached");
    let b = pull_n(&mut r, 2000);
    assert!(b <= 1, "a burst of {b} packets after the swap");
    r.clock()
        .advance_to(DEFAULT_SIMTIME_START + secs(60.0) + secs(0.01));
    let b = pull_n(&mut r, 2000);
    assert!((9..=11).contains(&b), "{b} packets in 10 ms at RATE 1000");
}

/// An inactive source swapped for an active one with the same RATE
/// starts at RATE (it used to send the whole 30 s of debt at once).
#[test]
fn fast_udp_source_inactive_then_active_owes_nothing() {
    let mut r = build(&fast_udp(1000, -1, true));
    assert_eq!(pull_n(&mut r, 1), 1);
    r.write_handler("f.active", "false").unwrap();
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(30.0));
    r.hotswap(&fast_udp(1000, -1, true)).unwrap();
    let b = pull_n(&mut r, 2000);
    assert!(b <= 1, "a burst of {b} packets after the swap");
}

/// A running source not pulled for a while (its output blocked) owes at
/// most one packet after a swap, whatever the gap.
#[test]
fn fast_udp_source_debt_is_capped_at_one_packet() {
    let mut r = build(&fast_udp(1000, -1, true));
    assert_eq!(pull_n(&mut r, 1), 1);
    r.clock().advance_to(DEFAULT_SIMTIME_START + secs(5.0));
    r.hotswap(&fast_udp(1000, -1, true)).unwrap();
    let b = pull_n(&mut r, 2000);
    assert!(b <= 1, "a burst of {b} packets after the swap");
}

/// The new configuration's warnings are said when it is swapped in, as
/// the first configuration's are when the driver starts.
#[test]
fn hotswap_says_the_new_configurations_warnings() {
    let opts = RouterOptions {
        hotswap: true,
        capture_chatter: true,
        ..Default::default()
    };
    let mut r = rclick_elements::testing::from_config_with("Idle -> Discard;", &opts);
    r.hotswap("Idle -> Discard; Message(\"swapped in\"); Message(careful, WARNING);")
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        r.take_chatter(),
        [
            "hotconfig:1: While configuring 'Message@3 :: Message':",
            "  swapped in",
            "hotconfig:1: While configuring 'Message@4 :: Message':",
            "  warning: careful",
        ]
    );
    assert!(r.take_warnings().is_empty());
}
