//! Support for measuring the IPv6 route table of LookupIP6Route and
//! RadixIP6Lookup ([`super::route6::RouteTable6`], its [`Trie6`]) on a
//! full-size table: the IPv6 prefixes of a prefix list (plain or gzipped,
//! one CIDR prefix per line; IPv4 lines skipped), a deterministic
//! synthetic table of any size drawn from that list's prefix-length
//! distribution, and [`bench`], which reports insertion time, memory and
//! lookup speed. The `lpm6` binary of rclick-bench runs it.
//!
//! [`Trie6`]: super::route6::Trie6

use std::io::{BufRead, BufReader, Read};
use std::net::Ipv6Addr;
use std::path::Path;
use std::time::Instant;

use super::route6::{mask6, Route6, RouteTable6};
use crate::ip::lpmbench::mix64;

/// Reads the IPv6 prefixes of a prefix list as `(network, length)` with
/// host bits cleared, in file order.
pub fn load_prefixes6(path: &Path) -> std::io::Result<Vec<(u128, u8)>> {
    let file = std::fs::File::open(path)?;
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut out = Vec::new();
    for line in BufReader::with_capacity(1 << 16, reader).lines() {
        let line = line?;
        let Some((a, l)) = line.trim().split_once('/') else {
            continue;
        };
        let (Ok(a), Ok(l)) = (a.parse::<Ipv6Addr>(), l.parse::<u8>()) else {
            continue;
        };
        if l <= 128 {
            out.push((u128::from(a) & mask6(l.into()), l));
        }
    }
    Ok(out)
}

/// `n` distinct prefixes whose lengths follow those of `model` (by index
/// into it), at random addresses in 2000::/3, deterministic in `seed`.
pub fn synthetic(model: &[(u128, u8)], n: usize, seed: u64) -> Vec<(u128, u8)> {
    let mut seen = std::collections::HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    let mut i = 0u64;
    while out.len() < n && !model.is_empty() {
        let h = mix64(seed ^ i);
        let len = model[(h % model.len() as u64) as usize].1.max(3);
        let r = (u128::from(mix64(h)) << 64) | u128::from(mix64(h ^ 0x5555));
        let a = ((r >> 3) | (1u128 << 125)) & mask6(len.into());
        if seen.insert((a, len)) {
            out.push((a, len));
        }
        i += 1;
    }
    out
}

/// The route of a prefix: one of 8 ports, a gateway for three quarters.
pub fn route_for6(addr: u128, len: u8) -> Route6 {
    let h = mix64((addr >> 64) as u64 ^ (addr as u64).rotate_left(17) ^ u64::from(len));
    let gw = if (h >> 3) & 3 == 0 {
        0
    } else {
        u128::from(Ipv6Addr::new(
            0xfe80,
            0,
            0,
            0,
            0,
            0,
            0,
            1 + ((h >> 5) & 31) as u16,
        ))
    };
    Route6 {
        addr,
        len,
        gw,
        port: (h & 7) as i32,
    }
}

/// A table holding `prefixes`, the seconds it took, and duplicates.
pub fn fill6(prefixes: &[(u128, u8)]) -> (RouteTable6, f64, usize) {
    let t0 = Instant::now();
    let mut t = RouteTable6::default();
    let mut dups = 0;
    for &(a, l) in prefixes {
        if t.add(route_for6(a, l), false).is_err() {
            dups += 1;
        }
    }
    (t, t0.elapsed().as_secs_f64(), dups)
}

/// `n` addresses inside the prefixes (random host bits), deterministic.
pub fn routed_addresses(prefixes: &[(u128, u8)], n: usize, seed: u64) -> Vec<u128> {
    (0..n as u64)
        .map(|i| {
            let h = mix64(seed ^ i);
            let (a, l) = prefixes[(h % prefixes.len().max(1) as u64) as usize];
            let r = (u128::from(mix64(h)) << 64) | u128::from(mix64(!h));
            a | (r & !mask6(l.into()))
        })
        .collect()
}

/// `n` random addresses in 2000::/3.
pub fn random_addresses6(n: usize, seed: u64) -> Vec<u128> {
    (0..n as u64)
        .map(|i| {
            let h = mix64(seed ^ i);
            let r = (u128::from(mix64(h)) << 64) | u128::from(h);
            (r >> 3) | (1u128 << 125)
        })
        .collect()
}

/// Sum of the ports found for `addrs` (the work `lpm6 --count` does).
pub fn lookup_all(t: &RouteTable6, addrs: &[u128]) -> i64 {
    addrs.iter().map(|&a| i64::from(t.lookup(a).port)).sum()
}

fn time_lookups(t: &RouteTable6, addrs: &[u128]) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        std::hint::black_box(lookup_all(t, addrs));
        best = best.min(t0.elapsed().as_nanos() as f64 / addrs.len() as f64);
    }
    best
}

fn time_dependent(t: &RouteTable6, addrs: &[u128]) -> f64 {
    let t0 = Instant::now();
    let mut prev = 0u128;
    for &a in addrs {
        prev = t.lookup(a ^ (prev & 1)).port as u128;
    }
    std::hint::black_box(prev);
    t0.elapsed().as_nanos() as f64 / addrs.len() as f64
}

fn report(out: &mut String, name: &str, prefixes: &[(u128, u8)]) {
    let (t, secs, dups) = fill6(prefixes);
    let random = random_addresses6(2_000_000, 11);
    let routed = routed_addresses(prefixes, 2_000_000, 12);
    // Every routed address must find a route.
    let misses = routed
        .iter()
        .take(100_000)
        .filter(|&&a| t.lookup(a).port < 0)
        .count();
    let (ns_random, ns_routed) = (time_lookups(&t, &random), time_lookups(&t, &routed));
    out.push_str(&format!(
        "{name}: {} prefixes ({dups} duplicates), insert {secs:.3} s ({:.0} ns/route), \
         trie {} nodes, {:.1} MiB\n  random in 2000::/3 {:.1} ns/lookup ({:.1} M/s), \
         inside prefixes {:.1} ns ({:.1} M/s), dependent (latency) {:.1} ns, misses {misses}\n",
        prefixes.len(),
        secs * 1e9 / prefixes.len().max(1) as f64,
        t.trie().nodes(),
        t.trie().memory() as f64 / 1048576.0,
        ns_random,
        1e3 / ns_random,
        ns_routed,
        1e3 / ns_routed,
        time_dependent(&t, &routed),
    ));
}

/// The prefix-length histogram of `prefixes`, for the report.
fn lengths(prefixes: &[(u128, u8)]) -> String {
    let mut h = [0usize; 129];
    for &(_, l) in prefixes {
        h[l as usize] += 1;
    }
    let mut s = String::new();
    for (l, &n) in h.iter().enumerate() {
        if n * 100 >= prefixes.len() {
            s.push_str(&format!(
                " /{l}:{:.0}%",
                n as f64 * 100.0 / prefixes.len() as f64
            ));
        }
    }
    s
}

/// Loads the IPv6 prefixes of `path` and a 200,000-prefix synthetic table
/// with their length distribution, and reports on both.
pub fn bench(path: &Path) -> String {
    let real = match load_prefixes6(path) {
        Ok(p) => p,
        Err(e) => return format!("lpm6: {}: {e}\n", path.display()),
    };
    let mut out = format!(
        "{}: {} IPv6 prefixes; lengths of 1% or more:{}\n",
        path.display(),
        real.len(),
        lengths(&real)
    );
    report(&mut out, "real table", &real);
    let synth = synthetic(&real, 200_000, 3);
    report(&mut out, "synthetic 200,000", &synth);
    out
}
