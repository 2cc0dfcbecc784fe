//! IPFilter benchmark: builds IPFilter from the ClassBench rule sets (1k and
//! 10k rules) and reports Mpps and ns/packet over packets derived from the
//! rules, in batches of 32, in memory.
//!
//! Usage: `ipfilter [CLASSBENCH-DIR [SET...]]` (default: the shared sets,
//! `../shared/data/classbench` from the project root; every set). Besides
//! the ClassBench sets, `hostport10k` and `hostport100k` are synthetic
//! sets of `src host X and dst port P` rules with distinct X and P.
//! `IPFILTER_BOX_WORDS_PER_RULE=N` and `IPFILTER_VECTORS=dense` or
//! `compressed` recompile the filter measured alone with that bit-vector
//! budget or vector form (see `CompileOptions`); `IPFILTER_ROUNDS=N` sets
//! the rounds over the packet pool (for counting instructions).
//!
//! Two numbers per set: `classify` is the compiled filter alone on
//! prebuilt packets; `element` pushes batches of 32 (cloned from a prebuilt
//! pool) through a router `IPFilter -> Discard`, so it includes the
//! handoff to Discard and the packet clones.

use std::path::PathBuf;
use std::time::Instant;

use rclick_core::{Batch, Packet, Router, RouterOptions};
use rclick_elements::ip::ipfilter::IPFilter;
use rclick_elements::ip::ipfilter_compile::{
    parse_filter, CompileOptions, Compiled, StaticNames, VectorForm,
};
use rclick_elements::testing::{
    classbench_pattern as pattern, parse_classbench, ClassBenchRule as CbRule, Rng,
};

fn load(path: &std::path::Path) -> Option<Vec<CbRule>> {
    parse_classbench(&std::fs::read_to_string(path).ok()?)
}

/// A TCP/UDP/other packet inside a random rule.
fn packet(rules: &[CbRule], rng: &mut Rng) -> Packet {
    let r = &rules[rng.below(rules.len() as u64) as usize];
    let addr = |n: (u32, u32), rng: &mut Rng| n.0 | (rng.next_u64() as u32 & !n.1);
    let port =
        |(lo, hi): (u16, u16), rng: &mut Rng| lo + rng.below(hi as u64 - lo as u64 + 1) as u16;
    let proto = if r.proto.1 == 0xFF {
        r.proto.0
    } else {
        [6u8, 17, 1][rng.below(3) as usize]
    };
    let mut v = vec![0u8; 40];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&40u16.to_be_bytes());
    v[8] = 64;
    v[9] = proto;
    v[12..16].copy_from_slice(&addr(r.src, rng).to_be_bytes());
    v[16..20].copy_from_slice(&addr(r.dst, rng).to_be_bytes());
    v[20..22].copy_from_slice(&port(r.sport, rng).to_be_bytes());
    v[22..24].copy_from_slice(&port(r.dport, rng).to_be_bytes());
    let mut p = Packet::from_slice(&v);
    p.set_network_header(0, 20);
    p
}

const BATCH: usize = 32;
const POOL: usize = 4096;

fn bench_set(name: &str, rules: &[CbRule]) -> Result<(), String> {
    let args: Vec<String> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{} {}", if i % 2 == 0 { "allow" } else { "1" }, pattern(r)))
        .collect();
    let conf = format!(
        "InfiniteSource(ACTIVE false) -> f :: IPFilter({});\nf[0] -> Discard; f[1] -> Discard;\n",
        args.join(",\n")
    );
    let registry = rclick_elements::registry();
    let outcome = rclick_lang::parse_router(&conf, name, &registry, &Default::default());
    let spec = outcome.spec.ok_or("parse failed")?;
    let t0 = Instant::now();
    let mut router =
        Router::new(spec, &conf, &registry, &RouterOptions::default()).map_err(|d| {
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })?;
    let build = t0.elapsed();
    let f = router.find_element("f").ok_or("no f")?;
    let mut rng = Rng(0x1234_5678_9abc_def1 ^ rules.len() as u64);
    let pool: Vec<Packet> = (0..POOL).map(|_| packet(rules, &mut rng)).collect();

    // The compiled filter alone (with the bit-vector budget from the
    // environment, if set, for comparing budgets).
    let mut compiled = router
        .with_element::<IPFilter, _>("f", |e| e.compiled().cloned())
        .flatten()
        .ok_or("no compiled filter")?;
    let words = std::env::var("IPFILTER_BOX_WORDS_PER_RULE")
        .ok()
        .and_then(|v| v.parse().ok());
    let form = match std::env::var("IPFILTER_VECTORS").as_deref() {
        Ok("dense") => Some(VectorForm::Dense),
        Ok("compressed") => Some(VectorForm::Compressed),
        _ => None,
    };
    if words.is_some() || form.is_some() {
        let parsed = parse_filter(&args, 2, &StaticNames).map_err(|e| e.join("; "))?;
        let d = CompileOptions::default();
        let opts = CompileOptions {
            box_words_per_rule: words.unwrap_or(d.box_words_per_rule),
            box_vectors: form.unwrap_or(d.box_vectors),
            ..d
        };
        let t = Instant::now();
        compiled = Compiled::new(&parsed.rules, opts);
        println!(
            "{name:>10}: recompiled with {:?} in {:.1} ms",
            (opts.box_words_per_rule, opts.box_vectors),
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    // Fewer rounds for large filters (100k rules take microseconds each).
    let rounds = std::env::var("IPFILTER_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((2_000_000 / rules.len().max(10_000)).clamp(2, 200));
    let mut best = f64::MAX;
    let mut sink = 0usize;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..rounds {
            for chunk in pool.chunks(BATCH) {
                for p in chunk {
                    sink = sink.wrapping_add(compiled.classify_packet(p).unwrap_or(7));
                }
            }
        }
        best = best.min(t.elapsed().as_secs_f64() / (rounds * POOL) as f64);
    }
    let classify_ns = best * 1e9;

    // Through the element in a router.
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..rounds / 2 {
            for chunk in pool.chunks(BATCH) {
                let mut b = Batch::new();
                for p in chunk {
                    b.push(p.clone());
                }
                router.inject(f, 0, b);
            }
        }
        best = best.min(t.elapsed().as_secs_f64() / (rounds / 2 * POOL) as f64);
    }
    let element_ns = best * 1e9;
    let kinds = compiled.segment_kinds();
    let nbv = kinds.iter().filter(|k| **k == "bitvector").count();
    println!(
        "{name:>10} {:>6} rules  build {:>7.1} ms  {:>7.2} MiB  classify {:>7.1} ns/pkt {:>7.2} Mpps  element {:>7.1} ns/pkt {:>7.2} Mpps  [{} segments, {nbv} bit-vector]",
        rules.len(),
        build.as_secs_f64() * 1e3,
        compiled.heap_bytes() as f64 / (1 << 20) as f64,
        classify_ns,
        1e3 / classify_ns,
        element_ns,
        1e3 / element_ns,
        kinds.len(),
    );
    std::hint::black_box(sink);
    Ok(())
}

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/classbench")
        });
    if !dir.exists() {
        eprintln!(
            "ipfilter: {} not found; pass the ClassBench directory",
            dir.display()
        );
        std::process::exit(1);
    }
    println!(
        "IPFilter on ClassBench sets, {POOL} packets derived from the rules, batches of {BATCH}"
    );
    let only: Vec<String> = std::env::args().skip(2).collect();
    for name in [
        "acl1_1k", "fw1_1k", "ipc1_1k", "acl1_10k", "fw1_10k", "ipc1_10k",
    ] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let Some(rules) = load(&dir.join(name)) else {
            println!("{name:>10}: missing or unreadable, skipped");
            continue;
        };
        if let Err(e) = bench_set(name, &rules) {
            println!("{name:>10}: {e}");
        }
    }
    // `src host X and dst port P` with distinct X and P (issue 13): the
    // rules each test their own host, so unsplit bit vectors would take
    // memory quadratic in the rule count.
    for n in [10_000usize, 100_000] {
        let name = format!("hostport{}k", n / 1000);
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        if let Err(e) = bench_set(&name, &host_port_rules(n)) {
            println!("{name:>10}: {e}");
        }
    }
}

/// `n` rules `src host X and dst port P`, as ClassBench rules (a /32
/// source, any destination, destination port P, TCP or UDP).
pub fn host_port_rules(n: usize) -> Vec<CbRule> {
    (0..n)
        .map(|i| {
            let p = 1 + (i * 13 % 65535) as u16;
            CbRule {
                src: (0x0a00_0001 + 7 * i as u32, u32::MAX),
                dst: (0, 0),
                sport: (0, 65535),
                dport: (p, p),
                proto: (0, 0),
            }
        })
        .collect()
}
