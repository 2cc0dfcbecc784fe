//! Arbitrary and adversarial packets through the IPRewriter family
//! (IPRewriter with and without endpoint-independent mapping and port
//! parity, FTPPortMapper and TCPRewriter, ICMPPingRewriter, ICMPRewriter;
//! small port ranges and capacities, simulated time, mappings added and
//! removed through handlers): no panic, every packet accounted for, no
//! table over its capacity. The body and the input format are in
//! crates/elements/tests/nat_traffic (shared with the stable replay in
//! tests/nat.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/elements/tests/nat_traffic/mod.rs"]
mod nat_traffic;

fuzz_target!(|data: &[u8]| {
    let _ = nat_traffic::nat_traffic(data);
});
