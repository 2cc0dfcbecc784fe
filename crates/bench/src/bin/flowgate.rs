//! FlowGate benchmark (Router Plugins gates, issue 19): the cost per
//! packet of a gate answering from its flow's cached binding against a
//! gate looking every packet up in its filters, on ClassBench filter sets
//! and a trace with heavy-tailed flow lengths.
//!
//! Usage: `flowgate [--rounds R] [--tries T] [--mode all|cached|warm|full|base|dag|brute]
//! [CLASSBENCH-DIR [SET...]]` (default: the shared sets,
//! `../shared/data/classbench` from the project root; acl1, fw1, ipc1 at
//! 1k and 10k).
//!
//! The trace (deterministic, seeded): 8192 flows whose lengths follow a
//! Pareto law (shape 1.2, at least 1 packet, at most 2000; mean about 6),
//! up to 512 of them active at once, interleaved at random; three flows in
//! four are keyed inside a random filter of the set, one in four at
//! random. Packets are 40-byte TCP/UDP/other IPv4 headers.
//!
//! Modes, each pushing the trace through a router in batches of 32
//! (packet clones of a prebuilt pool):
//! - `cached`: `FlowGate(TABLE ft)` with a FlowTable off the path: the gate
//!   hashes the six-tuple, finds the flow's record and uses its cached
//!   binding (a full lookup for each flow's first packet: the table is
//!   cleared before each round over the trace);
//! - `warm`: the same, but the table is not cleared between rounds (after
//!   a first round that is not measured): every packet belongs to a known
//!   flow, so this is the cost of the cached path alone;
//! - `full`: `FlowGate` without a table: a DAG lookup per packet;
//! - `base`: the same router with a Null instead of the gate (the cost of
//!   clones, batches and Discard, to subtract).
//!
//! and, outside a router, `dag` (the DAG lookup alone on prebuilt keys)
//! and `brute` (the brute-force scan, 1k sets only). Times are best of 5
//! and only rough on a shared machine; for instruction counts run one
//! mode and set under valgrind with `--tries 1` and two round counts and
//! divide the difference by the trace's packets
//! (scripts/flowgate-instructions does that).

use std::path::PathBuf;
use std::time::Instant;

use rclick_core::{Batch, Packet, Router, RouterOptions};
use rclick_elements::flow::bestmatch::BestMatch;
use rclick_elements::flow::sixtuple::{brute_force, mask, parse_classbench, Key, Spec};
use rclick_elements::testing::Rng;

const BATCH: usize = 32;
const FLOWS: usize = 8192;
const ACTIVE: usize = 512;

/// A key inside `f`.
fn key_in(f: &Spec, rng: &mut Rng) -> Key {
    let port = |(lo, hi): (u16, u16), rng: &mut Rng| lo + rng.below(u64::from(hi - lo) + 1) as u16;
    Key {
        src: f.src | (rng.next_u64() as u32 & !mask(f.src_len)),
        dst: f.dst | (rng.next_u64() as u32 & !mask(f.dst_len)),
        proto: f.proto.unwrap_or([6u8, 17, 1][rng.below(3) as usize]),
        sport: port(f.sport, rng),
        dport: port(f.dport, rng),
        iif: 0,
    }
}

fn packet_of(k: &Key) -> Packet {
    let mut v = vec![0u8; 40];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&40u16.to_be_bytes());
    v[8] = 64;
    v[9] = k.proto;
    v[12..16].copy_from_slice(&k.src.to_be_bytes());
    v[16..20].copy_from_slice(&k.dst.to_be_bytes());
    v[20..22].copy_from_slice(&k.sport.to_be_bytes());
    v[22..24].copy_from_slice(&k.dport.to_be_bytes());
    let mut p = Packet::from_slice(&v);
    p.set_network_header(0, 20);
    p
}

/// The trace's keys, in packet order.
fn trace(filters: &[Spec]) -> Vec<Key> {
    let mut rng = Rng(0x5eed_f10e_u64 ^ filters.len() as u64);
    let mut lengths: Vec<usize> = Vec::with_capacity(FLOWS);
    for _ in 0..FLOWS {
        // Pareto(x_m = 1, alpha = 1.2) by inversion.
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let len = (1.0 / (1.0 - u).max(1e-12)).powf(1.0 / 1.2);
        lengths.push((len as usize).clamp(1, 2000));
    }
    let mut keys: Vec<Key> = Vec::with_capacity(FLOWS);
    for i in 0..FLOWS {
        let f = if i % 4 == 3 {
            Spec::ANY
        } else {
            filters[rng.below(filters.len() as u64) as usize]
        };
        keys.push(key_in(&f, &mut rng));
    }
    let mut out = Vec::new();
    let mut active: Vec<(usize, usize)> = Vec::new();
    let mut next = 0;
    loop {
        while active.len() < ACTIVE && next < FLOWS {
            active.push((next, lengths[next]));
            next += 1;
        }
        if active.is_empty() {
            break;
        }
        let i = rng.below(active.len() as u64) as usize;
        out.push(keys[active[i].0]);
        active[i].1 -= 1;
        if active[i].1 == 0 {
            active.swap_remove(i);
        }
    }
    out
}

fn router(gate: &str) -> Result<Router, String> {
    let more = if gate == "Null" {
        ""
    } else {
        "g[1] -> d; g[2] -> d; g[3] -> d;"
    };
    let conf = format!(
        "ft :: FlowTable(CAPACITY 65536, TIMEOUT 0); Idle -> g :: {gate};
         g[0] -> d :: Discard; {more}\n"
    );
    let registry = rclick_elements::registry();
    let outcome = rclick_lang::parse_router(&conf, "flowgate", &registry, &Default::default());
    let spec = outcome.spec.ok_or("parse failed")?;
    Router::new(spec, &conf, &registry, &RouterOptions::default()).map_err(|d| {
        d.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// ns/packet pushing `pool` `rounds` times through `g` of `r`.
fn push_rounds(r: &mut Router, pool: &[Packet], rounds: usize, tries: usize, clear: bool) -> f64 {
    let g = r.find_element("g").unwrap_or(0);
    let mut best = f64::MAX;
    for _ in 0..tries {
        let t = Instant::now();
        for _ in 0..rounds {
            // Each round starts with an empty flow table, so every flow's
            // first packet is a full lookup, as in the trace.
            if clear {
                let _ = r.write_handler("ft.clear", "");
            }
            for chunk in pool.chunks(BATCH) {
                let mut b = Batch::new();
                for p in chunk {
                    b.push(p.clone());
                }
                r.inject(g, 0, b);
            }
        }
        best = best.min(t.elapsed().as_secs_f64() / (rounds * pool.len()) as f64);
    }
    best * 1e9
}

fn bench_set(
    name: &str,
    filters: &[Spec],
    mode: &str,
    rounds: usize,
    tries: usize,
) -> Result<(), String> {
    let keys = trace(filters);
    let pool: Vec<Packet> = keys.iter().map(packet_of).collect();
    let assigned: String = filters
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{} {f}\n", i % 4))
        .collect();
    let mut line = format!(
        "{name:>9} {:>5} filters, trace {} packets in {FLOWS} flows",
        filters.len(),
        keys.len()
    );
    let all = mode == "all";
    if all || mode == "dag" {
        let t = Instant::now();
        let dag = BestMatch::new(filters.to_vec());
        let build = t.elapsed().as_secs_f64() * 1e3;
        let mut sink = 0usize;
        let mut best = f64::MAX;
        for _ in 0..tries {
            let t = Instant::now();
            for _ in 0..rounds {
                for k in &keys {
                    sink = sink.wrapping_add(dag.lookup(k).unwrap_or(7));
                }
            }
            best = best.min(t.elapsed().as_secs_f64() / (rounds * keys.len()) as f64);
        }
        std::hint::black_box(sink);
        line += &format!("  dag build {build:.1} ms, lookup {:.1} ns", best * 1e9);
    }
    if (all && filters.len() <= 2000) || mode == "brute" {
        let n = keys.len().min(20_000);
        let t = Instant::now();
        let mut sink = 0usize;
        for k in &keys[..n] {
            sink = sink.wrapping_add(brute_force(filters, k).unwrap_or(7));
        }
        std::hint::black_box(sink);
        line += &format!(
            ", brute {:.0} ns",
            t.elapsed().as_secs_f64() * 1e9 / n as f64
        );
    }
    let with_gate = |gate: &str, label: &str| -> Result<f64, String> {
        let mut r = router(gate)?;
        if gate.starts_with("FlowGate") {
            r.write_handler("g.filters", &assigned)?;
        }
        if label == "warm" {
            // One round first, so that every flow of the trace is known.
            push_rounds(&mut r, &pool, 1, 1, false);
        }
        let ns = push_rounds(&mut r, &pool, rounds, tries, label != "warm");
        let mut extra = String::new();
        if label == "cached" || label == "warm" {
            let read = |r: &mut Router, h: &str| r.read_handler(h, None).unwrap_or_default();
            extra = format!(
                " (lookups {}, cached {})",
                read(&mut r, "g.lookups").trim(),
                read(&mut r, "g.cached").trim()
            );
        }
        println!("{name:>9}   {label:>6}: {ns:.1} ns/packet{extra}");
        Ok(ns)
    };
    println!("{line}");
    if all || mode == "base" {
        with_gate("Null", "base")?;
    }
    if all || mode == "cached" {
        with_gate("FlowGate(TABLE ft)", "cached")?;
    }
    if all || mode == "warm" {
        with_gate("FlowGate(TABLE ft)", "warm")?;
    }
    if all || mode == "full" {
        with_gate("FlowGate", "full")?;
    }
    Ok(())
}

fn main() {
    let mut rounds: Option<usize> = None;
    let mut tries = 5;
    let mut mode = "all".to_string();
    let mut rest: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()),
            "--tries" => tries = args.next().and_then(|v| v.parse().ok()).unwrap_or(tries),
            "--mode" => mode = args.next().unwrap_or(mode),
            _ => rest.push(a),
        }
    }
    let dir = rest.first().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/classbench")
    });
    if !dir.exists() {
        eprintln!(
            "flowgate: {} not found; pass the ClassBench directory",
            dir.display()
        );
        std::process::exit(1);
    }
    let only = &rest[rest.len().min(1)..];
    for name in [
        "acl1_1k", "fw1_1k", "ipc1_1k", "acl1_10k", "fw1_10k", "ipc1_10k",
    ] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let Some(filters) = std::fs::read_to_string(dir.join(name))
            .ok()
            .and_then(|t| parse_classbench(&t).ok())
        else {
            println!("{name:>9}: missing or unreadable, skipped");
            continue;
        };
        if let Err(e) = bench_set(name, &filters, &mode, rounds.unwrap_or(4), tries) {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
    }
}
