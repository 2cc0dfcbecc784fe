//! Longest-prefix-match benchmark: loads a full Internet table into each
//! route-lookup structure and reports insertion time, memory, and lookup
//! speed.
//!
//! Usage: `lpm [PREFIX-FILE]` (default: the shared full table,
//! `../shared/data/routes/internet-prefixes.txt.gz` from the project root).

use std::path::PathBuf;

fn main() {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/data/routes/internet-prefixes.txt.gz")
        });
    if !path.exists() {
        eprintln!("lpm: {} not found; pass a prefix file", path.display());
        std::process::exit(1);
    }
    print!("{}", rclick_elements::ip::lpmbench::bench_full_table(&path));
}
