//! Arbitrary and adversarial packets through the IPRewriter family: none
//! may panic, every packet must leave by an output or be counted in an
//! element's `drops`, and no table may hold more mappings than its
//! MAPPING_CAPACITY. Shared by the `nat_traffic` fuzz target
//! (fuzz/fuzz_targets/nat_traffic.rs, nightly) and the stable tests in
//! tests/nat.rs, which replay its committed corpus (fuzz/corpus/nat_traffic)
//! and a run of generated inputs.
//!
//! One router holds an IPRewriter (sequential ports, 16 of them, capacity
//! 8, unmapped packets of input 1 passed to output 2), an IPRewriter with
//! ENDPOINT_INDEPENDENT and PORT_PARITY (8 ports, capacity 6), an
//! FTPPortMapper in front of a TCPRewriter (8 ports, capacity 6), an
//! ICMPPingRewriter (8 identifiers, capacity 4) and an ICMPRewriter over
//! the four; short timeouts and reap intervals, on simulated time.
//!
//! Input format: records `[flags][len][len bytes]`. `flags & 15` picks the
//! input (`INPUTS`, modulo its length); bit 7 multiplies `len` by 8 (long
//! packets). The packet's network header is set at offset 0 (as
//! CheckIPHeader would), unless bit 4 is set (then it has none). A record
//! with bit 5 set carries no bytes: it advances the clock by `len`
//! seconds and runs the timers (expiry, reaping). A record with bit 6 set
//! writes its bytes, as text, to the handler `WRITES[flags & 15]`
//! (mappings added and removed at run time).
#![allow(dead_code)]

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Router, RouterOptions, Timestamp};
use rclick_elements::nat::rewriter::Rewriter;
use rclick_elements::testing::{from_config_with, read_every_handler, read_number as num};

pub const CONFIG: &str = "
    rw :: IPRewriter(pattern 1.0.0.1 1024-1039# - - 0 1, pass 2,
                     MAPPING_CAPACITY 8, UDP_TIMEOUT 30, TCP_NODATA_TIMEOUT 20,
                     TCP_DONE_TIMEOUT 10, GUARANTEE 2, REAP_INTERVAL 15);
    ei :: IPRewriter(pattern 1.0.0.2 2048-2055 - - 0 1, drop,
                     MAPPING_CAPACITY 6, ENDPOINT_INDEPENDENT true, PORT_PARITY true,
                     UDP_TIMEOUT 40, GUARANTEE 3, REAP_INTERVAL 10);
    tw :: TCPRewriter(pattern 1.0.0.3 3000-3007# - - 0 1, drop,
                      MAPPING_CAPACITY 6, TCP_NODATA_TIMEOUT 25, REAP_INTERVAL 20);
    ftp :: FTPPortMapper(tw, tw, 0);
    pr :: ICMPPingRewriter(pattern 1.0.0.1 - 0-7# 0 1, drop, MAPPING_CAPACITY 4);
    icr :: ICMPRewriter(rw ei tw pr);

    Idle -> in0 :: Counter -> [0]rw;
    Idle -> in1 :: Counter -> [1]rw;
    Idle -> in2 :: Counter -> [0]ei;
    Idle -> in3 :: Counter -> [1]ei;
    Idle -> in4 :: Counter -> ftp -> [0]tw;
    Idle -> in5 :: Counter -> [1]tw;
    Idle -> in6 :: Counter -> [0]pr;
    Idle -> in7 :: Counter -> [1]pr;
    Idle -> in8 :: Counter -> icr;
    rw[0] -> o0 :: Counter -> Discard; rw[1] -> o1 :: Counter -> Discard;
    rw[2] -> o2 :: Counter -> Discard;
    ei[0] -> o3 :: Counter -> Discard; ei[1] -> o4 :: Counter -> Discard;
    tw[0] -> o5 :: Counter -> Discard; tw[1] -> o6 :: Counter -> Discard;
    pr[0] -> o7 :: Counter -> Discard; pr[1] -> o8 :: Counter -> Discard;
    icr[0] -> o9 :: Counter -> Discard; icr[1] -> o10 :: Counter -> Discard;
";

pub const INPUTS: usize = 9;
const OUTPUTS: usize = 11;
const DROPS: &[&str] = &["rw", "ei", "tw", "ftp", "pr", "icr"];
/// Each table and its MAPPING_CAPACITY.
const CAPACITIES: &[(&str, u64)] = &[("rw", 8), ("ei", 6), ("tw", 6), ("pr", 4)];

/// The handlers the write records go to.
pub const WRITES: &[&str] = &[
    "rw.add_mapping",
    "rw.remove_mapping",
    "ei.add_mapping",
    "ei.remove_mapping",
    "tw.add_mapping",
    "tw.remove_mapping",
    "rw.clear",
    "pr.clear",
];

/// At most this many packets per input.
const MAX_PACKETS: usize = 96;

pub fn router() -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    from_config_with(CONFIG, &opts)
}

/// Runs one input; panics (the fuzzer's failure) on a lost packet or a
/// table over its capacity. Returns the router, for the tests to look at
/// its counters. The invariants are checked after the packets, before
/// each handler write and after each clock step: not after every packet,
/// which would cost the fuzzer most of its speed, and loses nothing, the
/// counters being cumulative and only writes taking mappings away.
pub fn nat_traffic(data: &[u8]) -> Router {
    let mut r = router();
    let inputs: Vec<usize> = (0..INPUTS)
        .map(|i| r.find_element(&format!("in{i}")).expect("input counter"))
        .collect();
    let mut rest = data;
    let mut injected = 0;
    while rest.len() >= 2 && injected < MAX_PACKETS {
        let (flags, len) = (rest[0], usize::from(rest[1]));
        if flags & 0x20 != 0 {
            rest = &rest[2..];
            let now = r.clock().now();
            r.clock()
                .advance_to(now + Timestamp::from_sec_nsec(len as i64, 0));
            r.run_limited(2);
            check(&mut r).unwrap_or_else(|e| panic!("after {len} s: {e}"));
            continue;
        }
        let len = if flags & 0x80 != 0 { len * 8 } else { len }.min(rest.len() - 2);
        let bytes = &rest[2..2 + len];
        rest = &rest[2 + len..];
        if flags & 0x40 != 0 {
            check(&mut r).unwrap_or_else(|e| panic!("before a write: {e}"));
            let h = WRITES[usize::from(flags & 15) % WRITES.len()];
            let _ = r.write_handler(h, &String::from_utf8_lossy(bytes));
            continue;
        }
        let mut p = Packet::from_slice(bytes);
        if flags & 0x10 == 0 && !bytes.is_empty() {
            let hl = (usize::from(bytes[0] & 0x0f) * 4).min(bytes.len());
            p.set_network_header(0, hl);
        }
        r.inject_packet(inputs[usize::from(flags & 15) % INPUTS], 0, p);
        injected += 1;
    }
    check(&mut r).unwrap_or_else(|e| panic!("after {injected} packets: {e}"));
    // Every read handler reads without a panic.
    read_every_handler(&mut r);
    let _ = r.take_chatter();
    r
}

/// The accounting invariant and the capacity bounds.
pub fn check(r: &mut Router) -> Result<(), String> {
    let mut inn = 0;
    for i in 0..INPUTS {
        inn += num(r, &format!("in{i}.count"))?;
    }
    let mut out = 0;
    for o in 0..OUTPUTS {
        out += num(r, &format!("o{o}.count"))?;
    }
    let mut drops = 0;
    for e in DROPS {
        drops += num(r, &format!("{e}.drops"))?;
    }
    if inn != out + drops {
        return Err(format!("{inn} packets in, {out} out + {drops} dropped"));
    }
    for &(e, cap) in CAPACITIES {
        let size = num(r, &format!("{e}.size"))?;
        if size > cap {
            return Err(format!(
                "{e} holds {size} mappings > MAPPING_CAPACITY {cap}"
            ));
        }
    }
    let bindings = num(r, "ei.bindings")?;
    let size = num(r, "ei.size")?;
    if bindings > size {
        return Err(format!("ei: {bindings} bindings > {size} mappings"));
    }
    if r.with_element::<Rewriter, _>("tw", |rw| rw.seq_deltas_all_live()) != Some(true) {
        return Err("tw: a sequence delta outlived its connection".into());
    }
    Ok(())
}
