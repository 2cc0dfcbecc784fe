//! Click's tool mode (`click-flatten`, `ParseOptions::tool`): unknown class
//! names become classes of that name instead of errors, as Click's tools
//! (LexerT) read configurations. Expected messages are the reference
//! click-flatten's (Click's test/tools/lexer-01).
mod common;
use common::*;

use rclick_lang::{ParseOptions, ParseOutcome};

fn tool(text: &str) -> ParseOutcome {
    parse_with(
        text,
        &ParseOptions {
            tool: true,
            ..Default::default()
        },
    )
}

fn tool_errors(text: &str) -> Vec<String> {
    tool(text)
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn unknown_classes_are_classes() {
    let o = tool("a :: Nonexistent; a -> b :: Idle;\nX -> Idle;");
    assert!(!o.has_errors(), "{:?}", o.diagnostics);
    let spec = o.spec.unwrap();
    let classes: Vec<(&str, &str)> = spec
        .elements
        .iter()
        .map(|e| (e.name.as_str(), e.class.as_str()))
        .collect();
    assert_eq!(
        classes,
        [
            ("a", "Nonexistent"),
            ("b", "Idle"),
            ("X@3", "X"),
            ("Idle@4", "Idle")
        ]
    );
    // Outside tool mode the same text is refused.
    assert!(parse("a :: Nonexistent;").has_errors());
    assert!(parse("X -> Idle;").has_errors());
}

#[test]
fn made_up_class_then_used_as_element_name() {
    // Click's test/tools/lexer-01, its three configurations.
    assert_eq!(
        tool_errors("\nelementclass Foo {\n   A -> B;\n}\nA :: Idle;\n"),
        ["test.click:5: class 'A' used as element name"]
    );
    assert_eq!(
        tool_errors("\nelementclass Foo {\n   A :: A -> B;\n}\nA :: Idle;\n"),
        [
            "test.click:3: class 'A' used as element name",
            "test.click:5: class 'A' used as element name"
        ]
    );
    assert!(tool_errors("\nelementclass Foo {\n   A :: AA -> B;\n}\nA :: Idle;\n").is_empty());
}

#[test]
fn element_name_then_used_as_class() {
    assert_eq!(
        tool_errors("x :: Idle; y :: x;"),
        ["test.click:1: 'x' was previously used as an element name"]
    );
    // A synonym of an unknown class is a class too.
    assert!(tool_errors("elementclass S Nope; s :: S;").is_empty());
}
