//! Replays the committed seed corpora of the `config_initialize` and
//! `hotswap_traffic` fuzz targets (fuzz/corpus/<target>/) through the same
//! code the fuzz targets run (tests/fuzz_bodies), on stable: every input a
//! fuzzer found interesting, and every crash it found (saved there once
//! fixed), stays fixed. Each input also runs under a time budget.

mod fuzz_bodies;

use std::path::PathBuf;
use std::time::{Duration, Instant};

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `body` on every corpus file; a panic names the file. An input
/// slower than `budget` (in a debug build) fails too.
fn replay(target: &str, body: fn(&[u8]), budget: Duration) {
    let files = corpus(target);
    assert!(!files.is_empty(), "no corpus for {target}");
    for f in &files {
        let data = std::fs::read(f).expect("corpus file");
        let start = Instant::now();
        let r = std::panic::catch_unwind(|| body(&data));
        if r.is_err() {
            panic!("{target}: {} panicked", f.display());
        }
        let took = start.elapsed();
        assert!(took < budget, "{target}: {} took {took:?}", f.display());
    }
    println!("{target}: replayed {} inputs", files.len());
}

#[test]
fn config_initialize_corpus() {
    replay(
        "config_initialize",
        fuzz_bodies::config_initialize,
        Duration::from_secs(20),
    );
}

#[test]
fn hotswap_traffic_corpus() {
    replay(
        "hotswap_traffic",
        fuzz_bodies::hotswap_traffic,
        Duration::from_secs(20),
    );
}

/// `n` pseudo-random bytes (xorshift64*) from `seed`.
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// The generator reaches initialize: most structured inputs parse, and
/// a good share of those build a router.
#[test]
fn generator_reaches_initialize() {
    let (mut parsed, mut built) = (0, 0);
    for seed in 0..300u32 {
        let mut data = random_bytes(seed as u64, 200);
        data[0] &= !1;
        let text = fuzz_bodies::config_text(&data, false);
        let reg = fuzz_bodies::registry();
        let outcome = rclick_lang::parse_router(&text, "gen", reg, &Default::default());
        if outcome.has_errors() {
            continue;
        }
        let Some(spec) = outcome.spec else {
            continue;
        };
        parsed += 1;
        if rclick_core::Router::new(spec, &text, reg, &fuzz_bodies::options(false)).is_ok() {
            built += 1;
        }
    }
    println!("{parsed} of 300 generated configurations parse, {built} initialize");
    assert!(
        parsed > 200,
        "only {parsed} of 300 generated configurations parse"
    );
    assert!(
        built > 30,
        "only {built} of 300 generated configurations initialize"
    );
}

/// Every excluded class is a registered class (so the list stays honest
/// when classes are renamed), and a configuration using one is refused.
#[test]
fn exclusions_are_real_classes() {
    let reg = fuzz_bodies::registry();
    for (class, _) in fuzz_bodies::EXCLUDED {
        assert!(reg.get(class).is_some(), "{class} is not registered");
        let text = format!("x :: {class};");
        let outcome = rclick_lang::parse_router(&text, "t", reg, &Default::default());
        let spec = outcome.spec.expect("parses");
        assert!(fuzz_bodies::excluded(&text, &spec).is_some(), "{class}");
    }
}

/// Cyclic configurations are recognised (the targets do not run them).
#[test]
fn cycles_are_recognised() {
    let reg = fuzz_bodies::registry();
    let spec = |t: &str| {
        rclick_lang::parse_router(t, "t", reg, &Default::default())
            .spec
            .expect("parses")
    };
    assert!(fuzz_bodies::has_cycle(&spec("a :: Null -> a;")));
    assert!(fuzz_bodies::has_cycle(&spec(
        "Idle -> a :: Null -> b :: Tee -> Discard; b[1] -> a;"
    )));
    assert!(!fuzz_bodies::has_cycle(&spec(
        "i :: Idle -> a :: Null -> b :: Tee -> Discard; b[1] -> Discard; i[1] -> b;"
    )));
}

/// Prints the configuration an input stands for:
/// `FUZZ_INPUT=path [FUZZ_SWAP=1] cargo test -p rclick-elements --test
/// fuzz_corpus show_input -- --ignored --nocapture`.
#[test]
#[ignore]
fn show_input() {
    let Ok(path) = std::env::var("FUZZ_INPUT") else {
        println!("set FUZZ_INPUT to a fuzz input file");
        return;
    };
    let data = std::fs::read(&path).expect("FUZZ_INPUT");
    let swap = std::env::var("FUZZ_SWAP").is_ok();
    println!("{}", fuzz_bodies::config_text(&data, swap));
}

/// Found by `hotswap_traffic`: a LinkUnqueue with a long latency and a
/// high bandwidth (`LinkUnqueue(0.04s, 10000Mbps)`) behind an endless
/// source filled its whole link in one task run — about 800,000 small
/// packets, gigabytes under the fuzzer, with nothing else running
/// meanwhile. A run now pulls at most 1024 packets; the link still fills,
/// over the following runs.
#[test]
fn a_fast_long_link_fills_over_several_runs() {
    let mut r = rclick_elements::testing::from_config(
        "s :: InfiniteSource(LENGTH 60) -> l :: LinkUnqueue(0.04s, 10000Mbps) -> Discard;",
    );
    let size = |r: &mut rclick_core::Router| -> usize {
        rclick_elements::testing::read(r, "l.size").parse().unwrap()
    };
    r.run_limited(1);
    let first = size(&mut r);
    // One iteration runs at most 64 tasks.
    assert!(
        first > 0 && first <= 64 * 1024,
        "{first} packets after one iteration"
    );
    r.run_limited(1);
    assert!(size(&mut r) > first, "the link stopped filling at {first}");
}
