//! IPv6 longest-prefix-match benchmark: the route table of LookupIP6Route
//! and RadixIP6Lookup on the IPv6 part of a full Internet table and on a
//! 200,000-prefix synthetic table with its length distribution.
//!
//! Usage: `lpm6 [PREFIX-FILE]` (default: the shared full table,
//! `../shared/data/routes/internet-prefixes.txt.gz` from the project
//! root), or `lpm6 --count N [PREFIX-FILE]`: build the synthetic table and
//! do N lookups inside its prefixes, nothing else, for counting
//! instructions (run under callgrind with N and 2N; the difference over N
//! is the cost of one lookup).

use std::path::PathBuf;

use rclick_elements::ip6::lpmbench6::{
    bench, fill6, load_prefixes6, lookup_all, routed_addresses, synthetic,
};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let count = match args.iter().position(|a| a == "--count") {
        Some(i) if i + 1 < args.len() => {
            let n: usize = args[i + 1].parse().expect("--count N");
            args.drain(i..i + 2);
            Some(n)
        }
        _ => None,
    };
    let path = args.first().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/routes/internet-prefixes.txt.gz")
    });
    if !path.exists() {
        eprintln!("lpm6: {} not found; pass a prefix file", path.display());
        std::process::exit(1);
    }
    match count {
        None => print!("{}", bench(&path)),
        Some(n) => {
            let real = load_prefixes6(&path).expect("prefix file");
            let synth = synthetic(&real, 200_000, 3);
            let (t, _, _) = fill6(&synth);
            // The same 100,000 addresses whatever N, so that N and 2N
            // differ only in lookups.
            let addrs = routed_addresses(&synth, 100_000, 12);
            let mut sum = 0;
            let mut left = n;
            while left > 0 {
                let k = left.min(addrs.len());
                sum += lookup_all(&t, std::hint::black_box(&addrs[..k]));
                left -= k;
            }
            println!("{sum}");
        }
    }
}
