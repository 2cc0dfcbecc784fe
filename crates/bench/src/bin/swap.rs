//! `swap`: hot-swap latency for a 50-element configuration (the Click
//! paper: under 0.1 s on a 700 MHz Pentium III). Measures the whole
//! `hotconfig` path: parse, configure, initialize, state transfer from
//! same-named elements (queued packets, counts), and the switch.
//!
//! Usage: `cargo run --release -p rclick-bench --bin swap [SWAPS]`

use std::time::Instant;

use rclick_core::{Router, RouterOptions, StopReason};

/// Ten lanes of source -> Counter -> Queue -> Unqueue -> Discard: 50
/// elements. `variant` changes the queue capacities so consecutive
/// configurations differ.
fn config(variant: usize) -> String {
    let mut s = String::new();
    for i in 0..10 {
        s.push_str(&format!(
            "s{i} :: InfiniteSource(BURST 8) -> c{i} :: Counter -> q{i} :: Queue({}) -> u{i} :: Unqueue -> d{i} :: Discard;\n",
            500 + variant % 2 * 100
        ));
    }
    s
}

fn main() {
    let swaps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let reg = rclick_elements::registry();
    let text = config(0);
    let spec = rclick_lang::parse_router(&text, "swap", &reg, &Default::default())
        .spec
        .expect("parses");
    assert_eq!(spec.elements.len(), 50);
    let opts = RouterOptions {
        hotswap: true,
        ..Default::default()
    };
    let mut router = Router::new(spec, &text, &reg, &opts).unwrap_or_else(|d| panic!("{d:?}"));
    let mut times = Vec::with_capacity(swaps);
    for i in 0..swaps {
        // Let traffic build up queue contents to transfer.
        assert_eq!(router.run_limited(20), StopReason::Limit);
        let next = config(i + 1);
        let t = Instant::now();
        router
            .write_handler("hotconfig", &next)
            .unwrap_or_else(|e| panic!("{e}"));
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    println!("hot swap of a 50-element configuration, {swaps} swaps under traffic:");
    println!(
        "  median {:.0} us, mean {:.0} us, p99 {:.0} us, max {:.0} us",
        times[times.len() / 2],
        mean,
        times[times.len() * 99 / 100],
        times[times.len() - 1]
    );
    let queued: u64 = (0..10)
        .map(|i| {
            router
                .read_handler(&format!("q{i}.length"), None)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    println!("  packets queued across the last swap and kept: {queued}");
}
