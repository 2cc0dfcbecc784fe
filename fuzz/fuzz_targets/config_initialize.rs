//! Configurations through the whole check-and-initialize path (parse,
//! check, `Router::new` with the element registry, as `rclick --check`),
//! then a few packets and a bounded number of driver iterations: nothing
//! may panic, hang or exhaust memory. Inputs are raw text or choices for a
//! structured generator over the registered classes; classes that touch
//! the outside world are left out. The body is shared with the stable
//! replay test crates/elements/tests/fuzz_corpus.rs.
//!
//! Run with a time and memory budget per input, e.g.
//! `cargo +nightly fuzz run config_initialize -- -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/elements/tests/fuzz_bodies/mod.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| {
    bodies::config_initialize(data);
});
