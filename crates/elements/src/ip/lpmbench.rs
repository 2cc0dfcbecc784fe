//! Support for measuring the route-lookup structures on a full Internet
//! table: loading a prefix list (plain or gzipped, one CIDR prefix per
//! line; IPv6 lines are skipped), deterministic next hops, and
//! [`bench_full_table`], which reports insertion time, memory and lookup
//! speed for each structure.

use std::io::{BufRead, BufReader, Read};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Instant;

use super::routetable::{len_mask, Dir24_8, Lpm, Radix16_4, Route, RouteTable, StrideTrie};

/// Reads the IPv4 prefixes of a prefix list, as `(network, length)` with
/// host bits cleared, in file order. Lines that are empty, IPv6 or not
/// prefixes are skipped.
pub fn load_prefixes(path: &Path) -> std::io::Result<Vec<(u32, u8)>> {
    let file = std::fs::File::open(path)?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut out = Vec::new();
    for line in BufReader::with_capacity(1 << 16, reader).lines() {
        let line = line?;
        let line = line.trim();
        if line.contains(':') {
            continue;
        }
        let Some((a, l)) = line.split_once('/') else {
            continue;
        };
        let (Ok(a), Ok(l)) = (a.parse::<Ipv4Addr>(), l.parse::<u8>()) else {
            continue;
        };
        if l <= 32 {
            out.push((u32::from(a) & len_mask(u32::from(l)), l));
        }
    }
    Ok(out)
}

/// A deterministic pseudo-random 64-bit mixer (splitmix64).
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The route used for a prefix of the full table: one of 8 outputs and,
/// for three quarters of the prefixes, one of 32 gateways (about 100
/// distinct next hops, as in a router with a few dozen peers).
pub fn route_for(addr: u32, len: u8) -> Route {
    let h = mix64(u64::from(addr) << 8 | u64::from(len));
    let port = (h & 7) as i32;
    let gw = if (h >> 3) & 3 == 0 {
        Ipv4Addr::UNSPECIFIED
    } else {
        Ipv4Addr::new(192, 0, 2, 1 + ((h >> 5) & 31) as u8)
    };
    Route::new(Ipv4Addr::from(addr), len, gw, port)
}

/// `n` pseudo-random addresses from `seed`.
pub fn random_addresses(n: usize, seed: u64) -> Vec<u32> {
    (0..n as u64).map(|i| mix64(seed ^ i) as u32).collect()
}

fn fill<L: Lpm>(prefixes: &[(u32, u8)]) -> (RouteTable<L>, f64, usize) {
    let t0 = Instant::now();
    let mut t = RouteTable::<L>::new();
    let mut dups = 0;
    for &(a, l) in prefixes {
        if t.add(route_for(a, l), false).is_err() {
            dups += 1;
        }
    }
    (t, t0.elapsed().as_secs_f64(), dups)
}

/// Nanoseconds per lookup over `addrs`, best of three passes, and a
/// checksum so the work is not optimised away.
fn time_lookups(f: impl Fn(u32) -> u32, addrs: &[u32]) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut sum = 0u64;
    for _ in 0..3 {
        let t0 = Instant::now();
        let mut s = 0u64;
        for &a in addrs {
            s = s.wrapping_add(u64::from(f(a)));
        }
        let ns = t0.elapsed().as_nanos() as f64 / addrs.len() as f64;
        best = best.min(ns);
        sum = std::hint::black_box(s);
    }
    (best, sum)
}

/// Nanoseconds per lookup when each address depends on the previous
/// result, so lookups cannot overlap: the latency of one lookup.
fn time_dependent(f: impl Fn(u32) -> u32, addrs: &[u32]) -> f64 {
    let t0 = Instant::now();
    let mut prev = 0u32;
    for &a in addrs {
        prev = f(a ^ (prev & 1));
    }
    std::hint::black_box(prev);
    t0.elapsed().as_nanos() as f64 / addrs.len() as f64
}

fn report<L: Lpm>(
    out: &mut String,
    name: &str,
    prefixes: &[(u32, u8)],
    random: &[u32],
    routed: &[u32],
) {
    let (t, secs, dups) = fill::<L>(prefixes);
    let m = t.memory();
    let (ns_rand, c1) = time_lookups(|a| t.lpm().lookup(a), random);
    let (ns_routed, c2) = time_lookups(|a| t.lpm().lookup(a), routed);
    let (ns_full, _) = time_lookups(|a| t.lookup(a).port as u32, random);
    let ns_dep = time_dependent(|a| t.lpm().lookup(a), random);
    out.push_str(&format!(
        "{name:<28} insert {:>6.3} s ({:.0} ns/route, {dups} duplicates)  \
         lookup memory {:>6.1} MiB + route list {:>5.1} MiB  [{}]\n\
         {:<28} random {:>6.1} ns/lookup ({:>6.1} M/s)  routed-only {:>6.1} ns ({:>6.1} M/s)  \
         with next hop {:>6.1} ns  dependent (latency) {:>6.1} ns  (check {:x})\n",
        secs,
        secs * 1e9 / prefixes.len().max(1) as f64,
        m.lookup as f64 / 1048576.0,
        m.control as f64 / 1048576.0,
        t.lpm().describe(),
        "",
        ns_rand,
        1e3 / ns_rand,
        ns_routed,
        1e3 / ns_routed,
        ns_full,
        ns_dep,
        c1 ^ c2,
    ));
}

/// Loads the prefix list at `path` into each lookup structure and reports
/// insertion time, memory, and lookup speed on 4 million random addresses
/// and on 4 million addresses drawn inside routed prefixes.
pub fn bench_full_table(path: &Path) -> String {
    let t0 = Instant::now();
    let prefixes = match load_prefixes(path) {
        Ok(p) => p,
        Err(e) => return format!("{}: {e}\n", path.display()),
    };
    let mut out = format!(
        "{}: {} IPv4 prefixes, read in {:.2} s\n",
        path.display(),
        prefixes.len(),
        t0.elapsed().as_secs_f64()
    );
    const N: usize = 4 << 20;
    let random = random_addresses(N, 0x5eed);
    let routed: Vec<u32> = (0..N as u64)
        .map(|i| {
            let h = mix64(i ^ 0xabcdef);
            let (a, l) = prefixes[(h % prefixes.len().max(1) as u64) as usize];
            a | ((h >> 32) as u32 & !len_mask(u32::from(l)))
        })
        .collect();
    report::<Dir24_8>(
        &mut out,
        "DirectIPLookup (DIR-24-8)",
        &prefixes,
        &random,
        &routed,
    );
    report::<Radix16_4>(
        &mut out,
        "RadixIPLookup (16-4-4-4-4)",
        &prefixes,
        &random,
        &routed,
    );
    report::<StrideTrie<16, 8>>(&mut out, "StrideTrie 16-8-8", &prefixes, &random, &routed);
    report::<StrideTrie<8, 4>>(
        &mut out,
        "StrideTrie 8-4x6 (Click radix)",
        &prefixes,
        &random,
        &routed,
    );
    out
}
