//! `rclick-bench`: times the Click-compatible benchmark configurations in
//! `conf/bench/` in-process and prints ns/packet and Mpps, at batch sizes
//! (BURST) 1 and 32.
//!
//! Usage: `cargo run --release -p rclick-bench -- [--packets N] [--repeat R] [--burst B] [FILTER]`
//!
//! Each configuration runs `InfiniteSource(LIMIT N, BURST b, STOP true)`
//! into a graph ending in Discard; the time of the whole run divided by N is
//! the cost per packet. The best of R runs is reported (the machine is
//! shared, so the minimum is the least disturbed). Per-element handoff cost
//! is derived from the Null chains: (null16 - null1) / 15.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rclick_core::{Router, RouterOptions, StopReason};
use rclick_lang::ParseOptions;

fn conf_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.join("../../conf/bench")
}

fn run_once(text: &str, file: &str, packets: u64, burst: usize) -> Result<f64, String> {
    let registry = rclick_elements::registry();
    let opts = ParseOptions {
        variables: vec![
            ("LIMIT".into(), packets.to_string()),
            ("BURST".into(), burst.to_string()),
        ],
        ..Default::default()
    };
    let outcome = rclick_lang::parse_router(text, file, &registry, &opts);
    if outcome.has_errors() {
        return Err(outcome
            .diagnostics
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n"));
    }
    let spec = outcome.spec.ok_or("no router")?;
    let mut router =
        Router::new(spec, text, &registry, &RouterOptions::default()).map_err(|d| {
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })?;
    let start = Instant::now();
    let reason = router.run();
    let elapsed = start.elapsed().as_secs_f64();
    if reason != StopReason::Stopped {
        return Err(format!("run ended with {reason:?}"));
    }
    let count: u64 = router
        .read_handler("d.count", None)?
        .trim()
        .parse()
        .map_err(|e| format!("d.count: {e}"))?;
    if count != packets {
        return Err(format!("d.count = {count}, expected {packets}"));
    }
    Ok(elapsed * 1e9 / packets as f64)
}

fn main() {
    let mut packets: u64 = 5_000_000;
    let mut repeat = 5;
    let mut filter: Option<String> = None;
    let mut bursts: Vec<usize> = vec![1, 32];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--packets" => packets = args.next().and_then(|v| v.parse().ok()).unwrap_or(packets),
            "--repeat" => repeat = args.next().and_then(|v| v.parse().ok()).unwrap_or(repeat),
            "--burst" => {
                bursts = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .into_iter()
                    .collect()
            }
            _ => filter = Some(a),
        }
    }
    let names = [
        "source-discard",
        "null1",
        "null8",
        "null16",
        "queue-unqueue",
        "classifier4",
        // One header write on the source's shared packet (copy included),
        // and a 100-rule IPFilter matched late (issue 21, side by side with
        // Click: scripts/bench-vs-click).
        "mark-dec",
        "ipfilter100",
        // The Figure 8 forwarding path, plain and merged, and its prefixes
        // for per-element costs (docs/benchmarks.md).
        "ip-router",
        "ip-router-combo",
        // The same router with a FlowTable and two FlowGates (issue 19).
        "ip-router-flowgates",
        "ip-router-stage00",
        "ip-router-stage01",
        "ip-router-stage02",
        "ip-router-stage03",
        "ip-router-stage04",
        "ip-router-stage05",
        "ip-router-stage06",
        "ip-router-stage07",
        "ip-router-stage08",
        "ip-router-stage09",
        "ip-router-stage10",
        "ip-router-stage11",
        "ip-router-stage12",
    ];
    // Any other configuration of conf/bench runs when named exactly.
    let other: Vec<&str> = filter
        .as_deref()
        .filter(|f| !names.contains(f) && conf_dir().join(format!("{f}.click")).is_file())
        .into_iter()
        .collect();
    let names: &[&str] = if other.is_empty() { &names } else { &other };
    println!("| configuration | BURST | ns/packet | Mpps |");
    println!("|---|---:|---:|---:|");
    let mut results: Vec<(String, usize, f64)> = Vec::new();
    for &name in names {
        let exact = filter.as_deref().is_some_and(|f| names.contains(&f));
        if filter
            .as_deref()
            .is_some_and(|f| if exact { name != f } else { !name.contains(f) })
        {
            continue;
        }
        let path = conf_dir().join(format!("{name}.click"));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                continue;
            }
        };
        for &burst in &bursts {
            // Warm the pools and caches, then keep the best of `repeat`.
            let _ = run_once(&text, name, packets / 10, burst);
            let mut best = f64::INFINITY;
            for _ in 0..repeat {
                match run_once(&text, name, packets, burst) {
                    Ok(ns) => best = best.min(ns),
                    Err(e) => {
                        eprintln!("{name} BURST {burst}: {e}");
                        break;
                    }
                }
            }
            if best.is_finite() {
                println!("| {name} | {burst} | {best:.2} | {:.1} |", 1e3 / best);
                results.push((name.to_string(), burst, best));
            }
        }
    }
    let get = |n: &str, b: usize| results.iter().find(|r| r.0 == n && r.1 == b).map(|r| r.2);
    for burst in [1usize, 32] {
        if let (Some(a), Some(b)) = (get("null1", burst), get("null16", burst)) {
            println!(
                "\nPer-element handoff at BURST {burst}: (null16 - null1) / 15 = {:.2} ns/packet",
                (b - a) / 15.0
            );
        }
    }
}
