//! The standard elements on the element kit: their handler tables list and
//! behave as their hand-written handlers did, and their kinds (filter,
//! classify, observe, sink, source) move packets as their own loops did.

use rclick_elements::testing::{from_config, read};

fn count(r: &mut rclick_core::Router, h: &str) -> u64 {
    read(r, h).parse().unwrap()
}

/// The lines of `elem.handlers` among `names`, in table order (the
/// listing is newest first).
fn listed(r: &mut rclick_core::Router, elem: &str, names: &[&str]) -> Vec<String> {
    read(r, &format!("{elem}.handlers"))
        .lines()
        .rev()
        .filter(|l| names.contains(&l.split('\t').next().unwrap()))
        .map(str::to_string)
        .collect()
}

#[test]
fn handler_tables_keep_names_flags_and_order() {
    let mut r = from_config(
        "s :: InfiniteSource(ACTIVE false) -> p :: Paint(1) -> cp :: CheckPaint(1) \
         -> pt :: PaintTee(1) -> pr :: Print(ACTIVE false) -> q :: Queue -> u :: Unqueue \
         -> Discard; pt[1] -> Discard; \
         rsrc :: RatedSource(ACTIVE false) -> rs :: Queue -> ru :: RatedUnqueue(10) -> Discard; \
         ts :: TimedSource(ACTIVE false) -> Discard;",
    );
    let cases: &[(&str, &[&str])] = &[
        ("p", &["color\trw"]),
        ("cp", &["color\trw"]),
        ("pt", &["color\trw"]),
        ("pr", &["active\trw.c"]),
        (
            "q",
            &[
                "length\tr",
                "highwater_length\tr",
                "capacity\trw.",
                "drops\tr",
                "reset_counts\twb",
                "reset\twb",
            ],
        ),
        (
            "u",
            &[
                "active\trwc",
                "count\tr",
                "burst\trw",
                "limit\trw",
                "reset\twb",
                "reset_counts\twUb",
            ],
        ),
        ("ru", &["calls\tr", "rate\trw", "active\trwc"]),
        (
            "s",
            &[
                "count\tr",
                "reset\twb",
                "data\trw",
                "datasize\trw",
                "limit\trw",
                "burst\trw",
                "active\trw",
            ],
        ),
        (
            "ts",
            &[
                "data\trw%.",
                "limit\trw.",
                "interval\trw.",
                "active\trw.c",
                "count\tr",
                "headroom\trw.",
                "reset\twb",
            ],
        ),
        (
            "rsrc",
            &[
                "data\trw%.",
                "rate\trw",
                "limit\trw.",
                "active\trwc",
                "count\tr",
                "reset\twb",
                "length\trw",
                "datasize\trwD",
            ],
        ),
    ];
    for (elem, want) in cases {
        let names: Vec<&str> = want.iter().map(|l| l.split('\t').next().unwrap()).collect();
        assert_eq!(listed(&mut r, elem, &names), *want, "{elem}");
    }
}

#[test]
fn color_handlers_round_trip_and_reject() {
    let mut r = from_config(
        "InfiniteSource(ACTIVE false) -> p :: Paint(1) -> cp :: CheckPaint(2) \
         -> pt :: PaintTee(3) -> Discard; pt[1] -> Discard;",
    );
    for (e, old) in [("p", "1"), ("cp", "2"), ("pt", "3")] {
        assert_eq!(read(&mut r, &format!("{e}.color")), old);
        r.write_handler(&format!("{e}.color"), " 200 ").unwrap();
        assert_eq!(read(&mut r, &format!("{e}.color")), "200");
        assert!(r.write_handler(&format!("{e}.color"), "256").is_err());
        assert!(r.write_handler(&format!("{e}.nonesuch"), "1").is_err());
        assert_eq!(read(&mut r, &format!("{e}.color")), "200");
    }
}

/// CheckPaint as a filter: rejected packets leave by output 1, pushed or
/// pulled.
#[test]
fn checkpaint_sends_other_colors_to_output_1_in_push_and_pull() {
    for queue in ["", "-> Queue"] {
        let mut r = from_config(&format!(
            "InfiniteSource(LIMIT 6, BURST 6) -> rr :: RoundRobinSwitch; \
             rr[0] -> Paint(1) -> m :: Null; rr[1] -> Paint(2) -> m; \
             m {queue} -> cp :: CheckPaint(1) -> c0 :: Counter -> Discard; \
             cp[1] -> c1 :: Counter -> Discard;"
        ));
        r.run_limited(200);
        assert_eq!(
            (count(&mut r, "c0.count"), count(&mut r, "c1.count")),
            (3, 3),
            "{queue}"
        );
    }
}

#[test]
fn switches_classify() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 5, BURST 5) -> rr :: RoundRobinSwitch; \
         rr[0] -> a0 :: Counter -> Discard; rr[1] -> a1 :: Counter -> Discard; \
         InfiniteSource(LIMIT 5, BURST 5) -> hs :: HashSwitch(0, 1); \
         hs[0] -> b0 :: Counter -> Discard; hs[1] -> b1 :: Counter -> Discard; \
         InfiniteSource(LIMIT 5, BURST 5) -> ss :: StaticSwitch(1); \
         ss[0] -> c0 :: Counter -> Discard; ss[1] -> c1 :: Counter -> Discard; \
         InfiniteSource(LIMIT 5, BURST 5) -> StaticSwitch(-1) -> d0 :: Counter -> Discard;",
    );
    r.run_limited(200);
    let got: Vec<u64> = ["a0", "a1", "b0", "b1", "c0", "c1", "d0"]
        .iter()
        .map(|c| count(&mut r, &format!("{c}.count")))
        .collect();
    // 'R' (82) hashes to output 1 of 2: (82 ^ 82 >> 4) & 1.
    assert_eq!(got, [3, 2, 0, 5, 0, 5, 0]);
}

/// PaintSwitch moves one-color batches whole and copies color 255 to every
/// output; a color naming no output drops the packet.
#[test]
fn paintswitch_copies_color_255_and_drops_unknown_colors() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 6, BURST 6) -> rr :: RoundRobinSwitch; \
         rr[0] -> Paint(0) -> ps :: PaintSwitch; rr[1] -> Paint(255) -> ps; \
         rr[2] -> Paint(5) -> ps; \
         ps[0] -> c0 :: Counter -> Discard; ps[1] -> c1 :: Counter -> Discard; \
         ps[2] -> c2 :: Counter -> Discard; \
         InfiniteSource(LIMIT 4, BURST 4) -> Paint(2) -> ps2 :: PaintSwitch; \
         ps2[0] -> d0 :: Counter -> Discard; ps2[1] -> d1 :: Counter -> Discard; \
         ps2[2] -> d2 :: Counter -> Discard;",
    );
    r.run_limited(200);
    let got: Vec<u64> = ["c0", "c1", "c2", "d0", "d1", "d2"]
        .iter()
        .map(|c| count(&mut r, &format!("{c}.count")))
        .collect();
    assert_eq!(got, [4, 2, 2, 0, 0, 4]);
}

#[test]
fn tees_clone_to_every_output() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 4, BURST 2) -> t :: Tee(3); \
         t[0] -> a0 :: Counter -> Discard; t[1] -> a1 :: Counter -> Discard; \
         t[2] -> a2 :: Counter -> Discard; \
         InfiniteSource(LIMIT 4, BURST 2) -> Queue -> pt :: PullTee(2); \
         pt[0] -> b0 :: Counter -> Discard; pt[1] -> b1 :: Counter -> Discard;",
    );
    r.run_limited(200);
    let got: Vec<u64> = ["a0", "a1", "a2", "b0", "b1"]
        .iter()
        .map(|c| count(&mut r, &format!("{c}.count")))
        .collect();
    assert_eq!(got, [4, 4, 4, 4, 4]);
}

/// As in Click, a BURST longer than a batch goes out in one task run: the
/// queue takes 50 and drops the rest before the source sees it full.
#[test]
fn infinitesource_sends_a_whole_long_burst_in_one_run() {
    let mut r = from_config("s :: InfiniteSource(BURST 100) -> q :: Queue(50) -> Idle;");
    r.run_limited(50);
    assert_eq!(count(&mut r, "s.count"), 100);
    assert_eq!(count(&mut r, "q.drops"), 50);
    assert_eq!(count(&mut r, "q.length"), 50);
}

#[test]
fn infinitesource_stops_once_at_its_limit() {
    use rclick_core::StopReason;
    let mut r = from_config("InfiniteSource(LIMIT 0, STOP true) -> Discard;");
    assert_eq!(r.run_limited(100), StopReason::Stopped);
    // Pulled, the limit is found by the pull after the last packet.
    let mut r = from_config(
        "s :: InfiniteSource(LIMIT 5, STOP true) -> Unqueue -> c :: Counter -> Discard;",
    );
    assert_eq!(r.run_limited(100), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 5);
    // A handler write lets the source run, and stop, again.
    let mut r = from_config(
        "s :: InfiniteSource(LIMIT 3, STOP true) -> c :: Counter -> Discard; \
         DriverManager(wait_stop, write s.limit 5, wait_stop, read c.count);",
    );
    assert_eq!(r.run_limited(100), StopReason::Stopped);
    assert_eq!(count(&mut r, "c.count"), 5);
}

#[test]
fn infinitesource_handlers_write_and_reject() {
    let mut r = from_config("s :: InfiniteSource(ACTIVE false, DATA \"ab\") -> Discard;");
    assert_eq!(read(&mut r, "s.data"), "ab");
    // Taken as is, spaces and quotes included, as Click does.
    r.write_handler("s.data", " \"xyz\" ").unwrap();
    assert_eq!(read(&mut r, "s.data"), " \"xyz\" ");
    // BURST must be at least 1: 0 is refused with Click's message.
    assert_eq!(
        r.write_handler("s.burst", "0").unwrap_err(),
        "burstsize parameter must be integer >= 1"
    );
    assert_eq!(read(&mut r, "s.burst"), "1");
    r.write_handler("s.datasize", "8").unwrap();
    assert_eq!(read(&mut r, "s.datasize"), "8");
    assert!(r.write_handler("s.limit", "x").is_err());
    assert!(r.write_handler("s.active", "maybe").is_err());
    r.write_handler("s.limit", "2").unwrap();
    r.write_handler("s.active", "true").unwrap();
    r.run_limited(50);
    assert_eq!(count(&mut r, "s.count"), 2);
    r.write_handler("s.reset", "").unwrap();
    assert_eq!(count(&mut r, "s.count"), 0);
}

/// Unqueue as a sink whose consumption is sending on: BURST and LIMIT
/// bound each run, and a handler write wakes it.
#[test]
fn unqueue_pulls_to_its_limit_and_wakes_on_writes() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 10, BURST 10) -> Queue -> u :: Unqueue(BURST 3, LIMIT 7) \
         -> c :: Counter -> Discard;",
    );
    r.run_limited(100);
    assert_eq!((count(&mut r, "u.count"), count(&mut r, "c.count")), (7, 7));
    r.write_handler("u.limit", "9").unwrap();
    r.run_limited(100);
    assert_eq!((count(&mut r, "u.count"), count(&mut r, "c.count")), (9, 9));
    r.write_handler("u.reset", "").unwrap();
    r.run_limited(100);
    assert_eq!(
        (count(&mut r, "u.count"), count(&mut r, "c.count")),
        (1, 10)
    );
    // reset_counts is reset's synonym.
    r.write_handler("u.reset_counts", "").unwrap();
    assert_eq!(count(&mut r, "u.count"), 0);
    // As in Click: BURST 0 pulls nothing, a negative BURST as many as
    // there are; unparsable writes are syntax errors and change nothing.
    let mut z = from_config(
        "InfiniteSource(LIMIT 5, BURST 5) -> Queue -> u :: Unqueue(BURST 0) -> Discard;",
    );
    z.run_limited(100);
    assert_eq!(count(&mut z, "u.count"), 0);
    z.write_handler("u.burst", "-1").unwrap();
    z.run_limited(100);
    assert_eq!(count(&mut z, "u.count"), 5);
    r.write_handler("u.burst", "0").unwrap();
    assert_eq!(read(&mut r, "u.burst"), "0");
    r.write_handler("u.burst", "-3").unwrap();
    assert_eq!(read(&mut r, "u.burst"), "2147483647");
    assert_eq!(
        r.write_handler("u.active", "maybe").unwrap_err(),
        "syntax error"
    );
    assert_eq!(r.write_handler("u.limit", "x").unwrap_err(), "syntax error");
    assert_eq!(
        r.write_handler("u.burst", "2.5").unwrap_err(),
        "syntax error"
    );
    assert_eq!(read(&mut r, "u.burst"), "2147483647");
}

#[test]
fn queue_capacity_write_trims_and_reports() {
    let mut r = from_config("InfiniteSource(LIMIT 10, BURST 10) -> q :: Queue -> Idle;");
    r.run_limited(50);
    assert_eq!(count(&mut r, "q.length"), 10);
    r.write_handler("q.capacity", "4").unwrap();
    assert_eq!(count(&mut r, "q.length"), 4);
    assert_eq!(read(&mut r, "q.capacity"), "4");
    assert_eq!(read(&mut r, "q.config"), "CAPACITY 4");
    assert_eq!(count(&mut r, "q.highwater_length"), 10);
    r.write_handler("q.reset_counts", "").unwrap();
    assert_eq!(count(&mut r, "q.highwater_length"), 4);
    assert!(r.write_handler("q.capacity", "x").is_err());
    r.write_handler("q.reset", "").unwrap();
    assert_eq!(count(&mut r, "q.length"), 0);
}

/// Lowering a Queue's capacity, by its `capacity` handler or by a live
/// reconfiguration, keeps the packets at the head and discards the newest
/// beyond it, uncounted, as Click's SimpleQueue::live_reconfigure does
/// (MixedQueue too); FrontDropQueue keeps the newest, as Click's.
#[test]
fn queue_capacity_lowered_keeps_the_head_or_the_newest() {
    for (class, handler, want) in [
        ("Queue", "capacity", ["01", "02"]),
        ("Queue", "config", ["01", "02"]),
        ("MixedQueue", "capacity", ["01", "02"]),
        ("MixedQueue", "config", ["01", "02"]),
        ("FrontDropQueue", "capacity", ["04", "05"]),
        ("FrontDropQueue", "config", ["04", "05"]),
    ] {
        let mixed = if class == "MixedQueue" {
            "Idle -> [1]q;"
        } else {
            ""
        };
        let mut r = from_config(&format!(
            "q :: {class}(5) -> u :: Unqueue(ACTIVE false) -> Print(x) -> Discard; {mixed}
             InfiniteSource(\\<01>, LIMIT 1) -> q; InfiniteSource(\\<02>, LIMIT 1) -> q;
             InfiniteSource(\\<03>, LIMIT 1) -> q; InfiniteSource(\\<04>, LIMIT 1) -> q;
             InfiniteSource(\\<05>, LIMIT 1) -> q;"
        ));
        r.run_limited(100);
        assert_eq!(count(&mut r, "q.length"), 5, "{class} {handler}");
        r.write_handler(&format!("q.{handler}"), "2").unwrap();
        assert_eq!(count(&mut r, "q.length"), 2, "{class} {handler}");
        assert_eq!(count(&mut r, "q.drops"), 0, "{class} {handler}");
        r.write_handler("u.active", "true").unwrap();
        r.run_limited(100);
        let printed: Vec<String> = r.take_chatter();
        let want: Vec<String> = want.iter().map(|b| format!("x:    1 | {b}")).collect();
        assert_eq!(printed, want, "{class} {handler}");
    }
}

/// A live reconfiguration that gives a full Queue room raises its full
/// signal, as Click's FullNoteQueue does: the source asleep on it runs
/// again (a pull from a queue that is not full does not raise it).
#[test]
fn queue_reconfigured_larger_wakes_its_sleeping_source() {
    let mut r = from_config(
        "s :: InfiniteSource(LIMIT 10) -> q :: Queue(2) \
         -> u :: Unqueue(ACTIVE false) -> c :: Counter -> Discard;",
    );
    r.run_limited(100);
    assert_eq!(count(&mut r, "q.length"), 2);
    assert_eq!(read(&mut r, "s.scheduled"), "false");
    r.write_handler("q.config", "5").unwrap();
    assert_eq!(read(&mut r, "s.scheduled"), "true");
    r.write_handler("u.active", "true").unwrap();
    r.run_limited(1000);
    assert_eq!(count(&mut r, "c.count"), 10);
    assert_eq!(count(&mut r, "q.drops"), 0);
    // A reconfiguration that fails changes nothing.
    assert!(r.write_handler("q.config", "CAPACITY x").is_err());
    assert_eq!(count(&mut r, "q.capacity"), 5);
    assert!(r.write_handler("q.config", "3, BOGUS 1").is_err());
    assert_eq!(count(&mut r, "q.capacity"), 5);
}

#[test]
fn schedulers_pull_one_by_one_and_by_priority() {
    // Round robin: colors 1, 2, 1. Priority: input 0's four first, then two
    // of input 1.
    for (sched, n, want) in [("RoundRobinSched", 3, (2, 1)), ("PrioSched", 6, (4, 2))] {
        let mut r = from_config(&format!(
            "InfiniteSource(LIMIT 4, BURST 4) -> Paint(1) -> q0 :: Queue; \
             InfiniteSource(LIMIT 4, BURST 4) -> Paint(2) -> q1 :: Queue; \
             q0 -> [0] s :: {sched}; q1 -> [1] s; \
             s -> Unqueue(BURST {n}, LIMIT {n}) -> c :: CheckPaint(1) -> c1 :: Counter -> Discard; \
             c[1] -> c2 :: Counter -> Discard;"
        ));
        r.run_limited(100);
        let got = (count(&mut r, "c1.count"), count(&mut r, "c2.count"));
        assert_eq!(got, want, "{sched}");
    }
}

/// TimedSource's and RatedSource's writes keep their own messages, and
/// their `data` takes the value as is (Click's raw data handlers).
#[test]
fn timed_and_rated_source_writes_and_messages() {
    let mut r = from_config(
        "ts :: TimedSource(ACTIVE false) -> Discard; \
         rs :: RatedSource(ACTIVE false) -> Discard; \
         pr :: Print(ACTIVE false) -> Discard; InfiniteSource(ACTIVE false) -> pr;",
    );
    for e in ["ts", "rs"] {
        r.write_handler(&format!("{e}.data"), " ab ").unwrap();
        assert_eq!(read(&mut r, &format!("{e}.data")), " ab ");
        r.write_handler(&format!("{e}.limit"), "7").unwrap();
        assert_eq!(read(&mut r, &format!("{e}.limit")), "7");
    }
    let err = |r: &mut rclick_core::Router, h: &str, v: &str| r.write_handler(h, v).unwrap_err();
    assert!(err(&mut r, "ts.headroom", "x").contains("bad headroom"));
    assert!(err(&mut r, "ts.active", "x").contains("bad active"));
    assert!(err(&mut r, "ts.interval", "x").contains("bad interval"));
    assert!(r.write_handler("ts.limit", "x").is_err());
    r.write_handler("ts.headroom", "8").unwrap();
    assert_eq!(read(&mut r, "ts.headroom"), "8");
    for h in ["rate", "limit", "active", "length", "datasize"] {
        assert!(
            err(&mut r, &format!("rs.{h}"), "x").contains("syntax error"),
            "{h}"
        );
    }
    r.write_handler("rs.limit", "-5").unwrap();
    assert_eq!(read(&mut r, "rs.limit"), "-1");
    r.write_handler("rs.length", "12").unwrap();
    assert_eq!(read(&mut r, "rs.datasize"), "12");
    r.write_handler("rs.rate", "500").unwrap();
    assert_eq!(read(&mut r, "rs.rate"), "500");
    assert_eq!(read(&mut r, "pr.active"), "false");
    r.write_handler("pr.active", " true ").unwrap();
    assert_eq!(read(&mut r, "pr.active"), "true");
    assert!(r.write_handler("pr.active", "maybe").is_err());
}

/// A pushing InfiniteSource whose BURST does not divide its LIMIT asks the
/// driver to stop once, not twice: the second request used to end the run
/// before the other source had finished.
#[test]
fn infinitesource_stops_once_when_burst_does_not_divide_limit() {
    let mut r = rclick_elements::testing::from_config(
        "InfiniteSource(LIMIT 10, BURST 4, STOP true) -> Discard;\n\
         InfiniteSource(LIMIT 1000, STOP true) -> cb :: Counter -> Discard;\n\
         DriverManager(wait_stop 2, stop);",
    );
    r.run_limited(1_000_000);
    assert_eq!(rclick_elements::testing::read(&mut r, "cb.count"), "1000");
}
