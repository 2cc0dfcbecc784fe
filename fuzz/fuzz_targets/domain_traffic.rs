//! Arbitrary packets through the domain routers (IPv6 forwarding and
//! neighbour discovery, NAT, the learning switch with VLANs, QoS): no
//! panic, and no packet lost where the elements count their drops. The
//! body and the input format are in crates/elements/tests/domain_traffic
//! (shared with the stable replay, tests/domain_fuzz.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/elements/tests/domain_traffic/mod.rs"]
mod domain_traffic;

fuzz_target!(|data: &[u8]| {
    domain_traffic::domain_traffic(data);
});
