//! The canonical flattened configuration.
mod common;
use common::*;
use rclick_lang::{flatten, ParseOptions};

#[test]
fn format_and_chains() {
    let s = ok("t :: Tee; Idle -> t; t[1] -> [0] d :: Discard; t -> c :: Counter(5) -> d;");
    assert_eq!(
        flatten(&s),
        "t :: Tee;\nIdle@2 :: Idle;\nd :: Discard;\nc :: Counter(5);\n\nIdle@2 -> t\n    -> c\n    -> d;\nt [1] -> d;\n"
    );
    assert_roundtrip(&s, &ParseOptions::default());
}

#[test]
fn ports_printed_when_nonzero() {
    let s = ok("a :: Tee; b :: Counter; a [2] -> [3] b; b -> [1] a; Idle -> a;");
    assert_eq!(
        flatten(&s),
        "a :: Tee;\nb :: Counter;\nIdle@3 :: Idle;\n\nIdle@3 -> a;\nb -> [1] a;\na [2] -> [3] b;\n"
    );
    assert_roundtrip(&s, &ParseOptions::default());
}

#[test]
fn cycles_and_empty() {
    let s = ok("a :: Counter; b :: Counter; a -> b -> a;");
    assert_eq!(
        flatten(&s),
        "a :: Counter;\nb :: Counter;\n\nb -> a\n    -> b;\n"
    );
    assert_roundtrip(&s, &ParseOptions::default());
    assert_eq!(flatten(&ok("")), "");
}

#[test]
fn compounds_flatten_and_reparse() {
    let src = "elementclass F { $x | input -> c :: Counter($x) -> t :: Tee; t[0] -> output; t[1] -> [1] output }
f :: F(\"q, r\"); Idle -> f -> Discard; f[1] -> Discard;
Idle -> { input -> output } -> Discard;";
    let s = ok(src);
    let text = flatten(&s);
    assert!(text.contains("f/c :: Counter(\"q, r\");"), "{text}");
    assert_roundtrip(&s, &ParseOptions::default());
}

#[test]
fn ten_thousand_elements_fast() {
    let mut src = String::new();
    for i in 0..10_000 {
        src.push_str(&format!("e{i} :: Counter({i});\n"));
    }
    for i in 0..9_999 {
        src.push_str(&format!("e{i} -> e{};\n", i + 1));
    }
    src.push_str("Idle -> e0; e9999 -> Discard;\n");
    let start = std::time::Instant::now();
    let s = ok(&src);
    let text = flatten(&s);
    let elapsed = start.elapsed();
    assert_eq!(s.elements.len(), 10_002);
    // Generous for unoptimised test builds; release is far faster.
    assert!(elapsed.as_secs_f64() < 3.0, "{elapsed:?}");
    assert_eq!(text.matches("    -> ").count(), 10_000);
}
