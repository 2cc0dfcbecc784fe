//! Inputs the fuzzer found. Each must be answered with diagnostics, quickly.

use std::collections::HashSet;

use rclick_lang::{parse_router, ParseOptions};

fn classes() -> HashSet<String> {
    ["Idle", "Discard", "Paint", "Print", "Counter"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Self-referential `define`s and `${w[N]}` indexing once did quadratic
/// work (25 s for 346 bytes); a work budget per expansion now stops it with
/// an error.
#[test]
fn self_referential_defines_hit_the_expansion_budget() {
    let bytes = include_bytes!("fixtures/fuzz-slow-expansion.click");
    let text = String::from_utf8_lossy(bytes);
    let outcome = parse_router(&text, "fuzz", &classes(), &ParseOptions::default());
    assert!(outcome.has_errors());
    assert!(
        outcome
            .diagnostics
            .iter()
            .any(|d| d.message == "variable expansion too large"),
        "{:?}",
        outcome
            .diagnostics
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    );
}

/// A legitimate large expansion stays within the budget.
#[test]
fn large_legitimate_expansion_is_fine() {
    let words: Vec<String> = (0..2000).map(|i| format!("w{i}")).collect();
    let text = format!(
        "define($w {}) x :: Counter; y :: Idle -> x -> Discard; z :: Print(\"${{w[1999]}} $w\") ;",
        words.join(" ")
    );
    let outcome = parse_router(&text, "t", &classes(), &ParseOptions::default());
    assert!(!outcome.has_errors(), "{:?}", outcome.diagnostics);
}
