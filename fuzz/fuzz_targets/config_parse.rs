//! Feed arbitrary text to the configuration parser: it must never panic or
//! hang, and whatever it accepts must flatten to text it accepts again with
//! the same elements and connections.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use rclick_lang::{flatten, parse_router, split_config_args, ParseOptions};

const CLASSES: &[&str] = &["Idle", "InfiniteSource", "Discard", "Counter", "Queue", "Tee", "Paint", "Null", "Print", "Script"];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let classes: HashSet<String> = CLASSES.iter().map(|s| s.to_string()).collect();
    let opts = ParseOptions {
        variables: vec![("cli".into(), "1".into())],
        provided: vec!["pkg".into()],
        ..Default::default()
    };
    let _ = split_config_args(&text);
    let outcome = parse_router(&text, "fuzz.click", &classes, &opts);
    for d in &outcome.diagnostics {
        let _ = d.render();
    }
    if let Some(spec) = outcome.spec {
        let flat = flatten(&spec);
        // Re-parsing must not panic; it may legitimately differ when a
        // configuration string was built from unbalanced variable values.
        let _ = parse_router(&flat, "flat.click", &classes, &opts);
    }
});
