//! Fuzzed configurations hot-swapped into a running router that carries
//! traffic (`InfiniteSource -> c :: Counter -> Queue -> Unqueue ->
//! Discard`): no panic; a failed swap leaves the old router untouched and
//! forwarding; a successful one leaves a router that runs; swapping the
//! base back in forwards again. The body is shared with the stable replay
//! test crates/elements/tests/fuzz_corpus.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/elements/tests/fuzz_bodies/mod.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| {
    bodies::hotswap_traffic(data);
});
