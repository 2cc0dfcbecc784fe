//! Runtime behaviour checked on hand-built router specs (independent of the
//! language crate): dispatch order, pull with notifiers, stopping, checks.

use rclick_core::StopReason;
use rclick_elements::testing::{build, spec, try_build};

fn errors(s: rclick_lang::RouterSpec) -> Vec<String> {
    try_build(s).err().unwrap_or_default()
}

#[test]
fn push_chain_counts_and_stops() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 100, BURST 7, STOP true"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    assert_eq!(r.run(), StopReason::Stopped);
    assert_eq!(r.read_handler("c.count", None).unwrap(), "100");
    assert_eq!(r.read_handler("d.count", None).unwrap(), "100");
    assert_eq!(r.read_handler("c.byte_count", None).unwrap(), "6900");
}

#[test]
fn end_call_runs_from_a_lone_sources_reruns() {
    // The source is the only task: its runs after the first take the task
    // loop's lone path, which must still run the handler call its fifth
    // run asks for once it has returned (Counter's reset, after the fifth
    // packet went through).
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 5, END_CALL c.reset"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    r.run_limited(50);
    assert_eq!(r.read_handler("d.count", None).unwrap(), "5");
    assert_eq!(r.read_handler("c.count", None).unwrap(), "0");
    assert_eq!(r.read_handler("src.count", None).unwrap(), "5");
}

#[test]
fn queue_unqueue_pull_path_drains_and_sleeps() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 50, BURST 5"),
            ("q", "Queue", "10"),
            ("u", "Unqueue", "BURST 3"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (3, 0, 4, 0)],
    ));
    // No STOP: the run ends when nothing can happen any more, which also
    // proves the Unqueue task went to sleep on the empty queue.
    assert_eq!(r.run(), StopReason::Quiescent);
    let drops: u64 = r.read_handler("q.drops", None).unwrap().parse().unwrap();
    let count: u64 = r.read_handler("c.count", None).unwrap().parse().unwrap();
    assert_eq!(drops + count, 50);
    assert_eq!(r.read_handler("q.length", None).unwrap(), "0");
    assert_eq!(r.read_handler("u.scheduled", None).unwrap(), "false");
}

#[test]
fn pull_discard_behind_queue() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 20"),
            ("q", "Queue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(r.read_handler("d.count", None).unwrap(), "20");
}

#[test]
fn tee_clones_in_output_order() {
    let mut r = build(spec(
        &[
            ("src", "InfiniteSource", "LIMIT 3, STOP true"),
            ("t", "Tee", ""),
            ("a", "Counter", ""),
            ("b", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 1, 3, 0),
            (2, 0, 4, 0),
            (3, 0, 4, 0),
        ],
    ));
    r.run();
    assert_eq!(r.read_handler("a.count", None).unwrap(), "3");
    assert_eq!(r.read_handler("b.count", None).unwrap(), "3");
    assert_eq!(r.read_handler("d.count", None).unwrap(), "6");
}

#[test]
fn push_pull_mismatch_reported() {
    // Queue's pull output into Counter (agnostic) into Queue (push input):
    // the Counter is in a mixed context.
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("q", "Queue", ""),
            ("c", "Counter", ""),
            ("q2", "Queue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (3, 0, 4, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m
                .contains("agnostic 'c :: Counter' in mixed context: pull input 0, push output 0")),
        "{e:?}"
    );
    // Direct pull output to push input.
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("q", "Queue", ""),
            ("q2", "Queue", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    assert!(
        e.iter().any(|m| m
                // Click names no file:line for a push/pull conflict.
                == "'q :: Queue' pull output 0 connected to 'q2 :: Queue' push input 0"),
        "{e:?}"
    );
}

#[test]
fn port_and_reuse_errors_reported_together() {
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("a", "Discard", ""),
            ("b", "Discard", ""),
            ("n", "Null", ""),
        ],
        &[(0, 0, 1, 0), (0, 0, 2, 0), (3, 1, 1, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("'n :: Null' has no output 1")),
        "{e:?}"
    );
    let e = errors(spec(
        &[
            ("src", "InfiniteSource", ""),
            ("a", "Discard", ""),
            ("b", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (0, 0, 2, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("illegal reuse of 'src :: InfiniteSource' push output 0")),
        "{e:?}"
    );
}

#[test]
fn configure_errors_have_click_shape() {
    let e = errors(spec(
        &[("src", "InfiniteSource", "LIMIT x"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    ));
    assert_eq!(
        e.first().map(String::as_str),
        Some("test:1: While configuring 'src :: InfiniteSource':"),
        "{e:?}"
    );
    assert!(e[1].starts_with("  ") && e[1].contains("LIMIT"), "{e:?}");
    assert_eq!(
        e.last().map(String::as_str),
        Some("Router could not be initialized!")
    );
}

#[test]
fn routers_build_from_configuration_text() {
    let mut r = rclick_elements::testing::from_config(
        "src :: InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> Discard;",
    );
    r.run();
    assert_eq!(rclick_elements::testing::read(&mut r, "c.count"), "5");
    let e = rclick_elements::testing::try_from_config("x :: Nope;")
        .err()
        .unwrap_or_default();
    assert_eq!(e, vec!["test:1: unknown element class 'Nope'"]);
}

/// Click's full notifier: a source in front of a full Queue sleeps until
/// the queue has room, so nothing is dropped and (under simulated time)
/// the clock can advance to the slow consumer's next timer. Without it
/// the source spins forever and the run never reaches the Script's stop.
#[test]
fn sources_sleep_while_the_queue_is_full() {
    let mut r = rclick_elements::testing::from_config(
        "src :: InfiniteSource -> q :: Queue(10) -> RatedUnqueue(100) -> c :: Counter -> Discard;
         Script(wait 1, stop);",
    );
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    let count: u64 = rclick_elements::testing::read(&mut r, "c.count")
        .parse()
        .unwrap();
    assert!(
        (95..=115).contains(&count),
        "{count} packets in 1 s at 100/s"
    );
    assert_eq!(rclick_elements::testing::read(&mut r, "q.drops"), "0");
    assert_eq!(rclick_elements::testing::read(&mut r, "q.length"), "10");
}
