//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::HashSet;

use rclick_lang::{parse_router, Diagnostic, ParseOptions, ParseOutcome, RouterSpec};

pub const CLASSES: &[&str] = &[
    "Idle",
    "Discard",
    "Counter",
    "Queue",
    "Tee",
    "InfiniteSource",
    "Print",
    "Unqueue",
    "Classifier",
    "Strip",
    "Paint",
    "SimpleQueue",
    "RoundRobinSched",
    "PrioSched",
    "Null",
    "Script",
    "ToDump",
    "FromDump",
];

pub fn classes() -> HashSet<String> {
    CLASSES.iter().map(|s| s.to_string()).collect()
}

pub fn parse_with(text: &str, opts: &ParseOptions) -> ParseOutcome {
    parse_router(text, "test.click", &classes(), opts)
}

pub fn parse(text: &str) -> ParseOutcome {
    parse_with(text, &ParseOptions::default())
}

/// Parse, insisting on success.
pub fn ok(text: &str) -> RouterSpec {
    let o = parse(text);
    assert!(
        !o.has_errors(),
        "unexpected errors for {text:?}:\n{}",
        render(&o.diagnostics)
    );
    o.spec.expect("spec")
}

/// Error messages (Display form) of a failing parse.
pub fn errors(text: &str) -> Vec<String> {
    let o = parse(text);
    assert!(o.spec.is_none() == o.has_errors());
    o.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect()
}

pub fn warnings(text: &str) -> Vec<String> {
    let o = parse(text);
    o.diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .map(|d| d.to_string())
        .collect()
}

pub fn render(d: &[Diagnostic]) -> String {
    d.iter().map(|d| d.render()).collect::<Vec<_>>().join("\n")
}

/// Element names in router order.
pub fn names(spec: &RouterSpec) -> Vec<String> {
    spec.elements.iter().map(|e| e.name.clone()).collect()
}

/// Connections as "a [p] -> [q] b" strings, in spec order.
pub fn conns(spec: &RouterSpec) -> Vec<String> {
    spec.connections
        .iter()
        .map(|c| {
            format!(
                "{} [{}] -> [{}] {}",
                spec.elements[c.from].name, c.from_port, c.to_port, spec.elements[c.to].name
            )
        })
        .collect()
}

/// A spec without landmarks, for round-trip comparisons.
pub type Stripped = (
    Vec<(String, String, String)>,
    Vec<rclick_lang::Connection>,
    Vec<String>,
);

/// Spec without landmarks, for round-trip comparisons.
pub fn strip(spec: &RouterSpec) -> Stripped {
    (
        spec.elements
            .iter()
            .map(|e| (e.name.clone(), e.class.clone(), e.config.clone()))
            .collect(),
        spec.connections.clone(),
        spec.requirements.clone(),
    )
}

/// Assert that flattening and re-parsing gives the same spec.
pub fn assert_roundtrip(spec: &RouterSpec, opts: &ParseOptions) {
    let text = rclick_lang::flatten(spec);
    let o = parse_with(&text, opts);
    assert!(
        !o.has_errors(),
        "flattened text failed to parse:\n{text}\n{}",
        render(&o.diagnostics)
    );
    let again = o.spec.expect("spec");
    assert_eq!(
        strip(spec),
        strip(&again),
        "round trip changed the spec; text:\n{text}"
    );
    assert_eq!(rclick_lang::flatten(&again), text);
}
