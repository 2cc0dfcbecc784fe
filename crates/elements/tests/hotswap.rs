//! Hot swap: a running router is replaced by a new configuration; elements
//! of the same name take the old ones' state (queued packets in order,
//! counts), and a configuration that fails to initialize leaves the old
//! router untouched.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Router, RouterOptions, StopReason};

const A: &str = "src :: InfiniteSource(BURST 4) -> in :: Counter -> q :: Queue(500) \
                 -> u :: Unqueue(BURST 2) -> out :: Counter -> Discard;";
const B: &str = "src :: InfiniteSource(BURST 4) -> in :: Counter -> Null -> q :: Queue(500) \
                 -> u :: Unqueue(BURST 3) -> Null -> out :: Counter -> d :: Discard;";

fn build(text: &str) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        ..Default::default()
    };
    rclick_elements::testing::from_config_with(text, &opts)
}

fn num(r: &mut Router, h: &str) -> u64 {
    r.read_handler(h, None).unwrap().trim().parse().unwrap()
}

#[test]
fn hundred_swaps_under_load_lose_nothing() {
    let mut r = build(A);
    for i in 0..100 {
        assert_eq!(r.run_limited(40), StopReason::Limit);
        let next = if i % 2 == 0 { B } else { A };
        // Alternate between the handler (as -R and a control socket use it)
        // and the direct call.
        if i % 4 < 2 {
            r.write_handler("hotconfig", next).unwrap();
        } else {
            r.hotswap(next).unwrap();
        }
        assert_eq!(r.spec().elements.len(), if i % 2 == 0 { 8 } else { 6 });
    }
    // Stop the source and drain the queue.
    r.write_handler("src.active", "false").unwrap();
    assert_eq!(r.run(), StopReason::Quiescent);
    let (inn, out, drops, len) = (
        num(&mut r, "in.count"),
        num(&mut r, "out.count"),
        num(&mut r, "q.drops"),
        num(&mut r, "q.length"),
    );
    assert!(inn > 10_000, "only {inn} packets entered");
    assert_eq!(len, 0);
    assert_eq!(inn, out + drops, "in {inn}, out {out}, queue drops {drops}");
}

#[test]
fn queue_packets_move_in_order() {
    let mut r = build(
        "src :: InfiniteSource(ACTIVE false) -> q :: Queue(100) -> d :: Discard(ACTIVE false);",
    );
    let q = r.find_element("q").unwrap();
    for i in 0..10u8 {
        r.inject_packet(q, 0, rclick_core::Packet::from_slice(&[i]));
    }
    // A smaller queue keeps the oldest packets that fit and counts the rest
    // as drops.
    r.hotswap("src :: InfiniteSource(ACTIVE false) -> Null -> q :: Queue(4) -> d :: Discard(ACTIVE false);").unwrap();
    assert_eq!(num(&mut r, "q.length"), 4);
    assert_eq!(num(&mut r, "q.drops"), 6);
    let q = r.find_element("q").unwrap();
    let b = r.pull_from(q, 0, 64).unwrap();
    let order: Vec<u8> = b.packets().iter().map(|p| p.data()[0]).collect();
    assert_eq!(order, vec![0, 1, 2, 3]);
}

#[test]
fn failed_swap_keeps_old_router_running() {
    let mut r = build(A);
    r.run_limited(20);
    let before = num(&mut r, "in.count");
    let err = r
        .write_handler("hotconfig", "src :: InfiniteSource -> q :: Queue -> Bogus;")
        .unwrap_err();
    assert!(
        err.contains("unknown element class 'Bogus'") || err.contains("undeclared element 'Bogus'"),
        "{err}"
    );
    let err = r
        .write_handler("hotconfig", "src :: InfiniteSource(LIMIT x) -> Discard;")
        .unwrap_err();
    assert!(
        err.contains("While configuring 'src :: InfiniteSource'"),
        "{err}"
    );
    // Still the old router, still counting.
    assert_eq!(r.spec().elements.len(), 6);
    r.run_limited(20);
    assert!(num(&mut r, "in.count") > before);
}

#[test]
fn hotconfig_requires_allow_reconfigure() {
    let reg = rclick_elements::registry();
    let spec = rclick_lang::parse_router(A, "test", &reg, &Default::default())
        .spec
        .unwrap();
    let mut r = Router::new(spec, A, &reg, &RouterOptions::default()).unwrap();
    let err = r.write_handler("hotconfig", A).unwrap_err();
    assert!(err.contains("-R (--allow-reconfigure)"), "{err}");
}

/// A hot swap carries RatedSource's count and token bucket: LIMIT holds
/// across swaps (each swap used to reset the count, and a fresh bucket
/// released a burst), and swapping to a new RATE keeps the level.
#[test]
fn rated_source_keeps_count_and_bucket_across_swaps() {
    let conf = |rate: u32| {
        format!("s :: RatedSource(RATE {rate}, LIMIT 50) -> c :: Counter -> d :: Discard;")
    };
    let mut r = build(&conf(1000));
    for i in 0..200 {
        r.run_limited(3);
        r.hotswap(&conf(if i % 2 == 0 { 2000 } else { 1000 }))
            .unwrap();
    }
    r.run_limited(10_000);
    assert_eq!(num(&mut r, "c.count"), 50);
    assert_eq!(num(&mut r, "s.count"), 50);
}
