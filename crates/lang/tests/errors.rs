//! Every error message of click-language.md, worded as Click words it.
mod common;
use common::*;

fn has(errs: &[String], want: &str) {
    assert!(
        errs.iter().any(|e| e == want),
        "missing {want:?} in {errs:#?}"
    );
}

#[test]
fn syntax_errors() {
    has(
        &errors("a :: Idle -> ;"),
        "test.click:1: syntax error near ';'",
    );
    has(
        &errors("Idle -> Discard;\n}"),
        "test.click:2: syntax error near '}'",
    );
    has(
        &errors("provide(x);"),
        "test.click:1: syntax error near 'provide'",
    );
    // An unclosed configuration parenthesis is reported where it opened
    // (Click reports "expected ')'" at the end of the file).
    has(
        &errors("a :: Counter(1,\n\n2;\nIdle -> Discard;\n"),
        "test.click:1: unclosed '(': expected ')'",
    );
    has(
        &errors("elementclass F { input -> output"),
        "test.click:1: expected '}'",
    );
    has(
        &errors("Idle -> (input -> Counter -> output"),
        "test.click:1: expected ')'",
    );
}

#[test]
fn class_and_element_errors() {
    has(
        &errors("x :: Foo;"),
        "test.click:1: unknown element class 'Foo'",
    );
    has(
        &errors("Idle -> x;"),
        "test.click:1: undeclared element 'x'",
    );
    has(
        &errors("Counter :: Counter;"),
        "test.click:1: class 'Counter' used as element name",
    );
    let e = errors("x :: Idle;\nx :: Discard;");
    has(&e, "test.click:2: redeclaration of element 'x'");
    has(&e, "test.click:1: element 'x' previously declared here");
    has(
        &errors("1/a :: Idle;"),
        "test.click:1: element name '1/a' has all-digit component",
    );
    has(
        &errors("22 :: Idle;"),
        "test.click:1: element name '22' has all-digit component",
    );
}

#[test]
fn connection_errors() {
    has(
        &errors("a, b :: Idle; c, d :: Discard; a, b -> c, d;"),
        "test.click:1: syntax error: many-to-many connections require '=>'",
    );
    has(
        &errors("a, b, c :: Idle; d, e :: Discard; a, b, c => d, e;"),
        "test.click:1: connection mismatch: 3 outputs connected to 2 inputs",
    );
    has(
        &errors("t :: Tee; q :: Counter; t[0-] => [0-] q;"),
        "test.click:1: at most one expandable port allowed per connection",
    );
}

#[test]
fn ignored_ports_and_configurations_are_errors() {
    // Click 2.1 reports these as errors (not warnings) and runs nothing.
    for (src, want) in [
        (
            "[1] a :: Idle -> Discard;",
            "test.click:1: input ports ignored at start of chain",
        ),
        (
            "Idle -> d :: Discard [2];",
            "test.click:1: output ports ignored at end of chain",
        ),
        (
            "c :: Counter; Idle -> c(5) -> Discard;",
            "test.click:1: configuration string ignored on element reference",
        ),
        (
            "Idle -> Discard; [3] ;",
            "test.click:1: stranded port ignored",
        ),
    ] {
        has(&errors(src), want);
        assert!(parse(src).spec.is_none(), "{src}");
    }
}

#[test]
fn compound_errors() {
    has(
        &errors("elementclass F { $a, $a | input -> output }"),
        "test.click:1: parameter '$a' multiply defined",
    );
    has(
        &errors("elementclass F { $a | define($a 1); input -> output }"),
        "test.click:1: parameter '$a' multiply defined",
    );
    has(
        &errors("define($a 1, $a 2);"),
        "test.click:1: parameter '$a' multiply defined",
    );
    has(
        &errors("elementclass F { X $a, $b | input -> output }"),
        "test.click:1: compound element parameters out of order",
    );
    has(
        &errors("elementclass F { __REST__ $a, X $b | input -> output }"),
        "test.click:1: compound element parameters out of order",
    );
    has(
        &errors("elementclass F { ... || input -> output }"),
        "test.click:1: '...' should occur last, after one or more compounds",
    );
    has(
        &errors("elementclass F { input -> output || ... }"),
        "test.click:1: cannot extend unknown element class 'F'",
    );
    has(
        &errors("define(a 1);"),
        "test.click:1: bad 'define' declaration: not a variable",
    );
    has(
        &errors("define($ 1);"),
        "test.click:1: bad 'define' declaration: not a variable",
    );
}

#[test]
fn compound_port_errors() {
    let src =
        "elementclass F { input -> Counter -> output }\nIdle -> f :: F -> Discard;\nIdle -> [1] f;";
    has(&errors(src), "test.click:2: 'f' has no input 1");
    let src = "elementclass F { input -> Counter -> output; input [1] -> Discard }\nIdle -> f :: F -> Discard;";
    has(&errors(src), "test.click:2: 'f' input 1 unused");
    let src = "elementclass F { input -> Counter -> output }\nIdle -> f :: F;";
    has(&errors(src), "test.click:2: 'f' output 0 unused");
    let src = "elementclass F { input -> Counter -> output }\nIdle -> f :: F -> Discard; f[1] -> Discard;";
    has(&errors(src), "test.click:2: 'f' has no output 1");
    let src = "elementclass F { input -> Counter -> [1] output; Idle -> output }\nIdle -> f :: F -> Discard; f[1] -> Discard;";
    assert!(!parse(src).has_errors(), "{:?}", errors(src));
    let src = "elementclass F { input -> Counter -> [1] output }";
    has(&errors(src), "test.click:1: 'F' output 0 missing");
    let src = "elementclass F { Idle -> input; input -> output }";
    has(
        &errors(src),
        "test.click:1: 'F' pseudoelement 'input' may only be used as output",
    );
}

#[test]
fn overload_no_match() {
    let src = "elementclass F { input -> output || $a | input -> Counter($a) -> output }\nIdle -> F(1, 2) -> Discard;";
    let e = errors(src);
    has(
        &e,
        "test.click:2: no match for 'F[2 arguments, 1 input, 1 output]'",
    );
    // Click's candidate list follows, each at its definition.
    has(&e, "test.click:1: candidates are:");
    has(&e, "test.click:1:   F[1 input, 1 output]");
    has(&e, "test.click:1:   F(<arg>)[1 input, 1 output]");
}

#[test]
fn requirements() {
    has(
        &errors("require(package foo);"),
        "test.click:1: requirement 'foo' not available",
    );
    has(
        &errors("require(bar);"),
        "test.click:1: requirement 'bar' not available",
    );
    has(
        &errors("require(library nonexistent.click);"),
        "test.click:1: library 'nonexistent.click' not found in CLICKPATH/conf",
    );
}

#[test]
fn preprocessor() {
    has(
        &errors("#define X 1\nIdle -> Discard;"),
        "test.click:1: unknown preprocessor directive",
    );
    has(
        &errors("# 10 \"other.click\"\nIdle -> x;"),
        "other.click:10: undeclared element 'x'",
    );
}

#[test]
fn reports_all_errors() {
    let e = errors("a :: Foo;\nb :: Bar;\nIdle -> zz;\nc :: Idle; c :: Idle;");
    assert_eq!(e.len(), 5, "{e:#?}");
}

#[test]
fn diagnostics_carry_source_and_hints() {
    let o = parse("counter :: Counter;\nIdle -> countr -> Discard;");
    let d = o
        .diagnostics
        .iter()
        .find(|d| d.message == "undeclared element 'countr'")
        .unwrap();
    assert_eq!(d.source_line.as_deref(), Some("Idle -> countr -> Discard;"));
    assert_eq!(d.column, Some(8));
    assert_eq!(d.hint.as_deref(), Some("did you mean 'counter'?"));
    assert!(d.render().contains("        ^"));
    let o = parse("c :: Countr;");
    let d = &o.diagnostics[0];
    assert_eq!(d.message, "unknown element class 'Countr'");
    assert_eq!(d.column, Some(5));
    assert_eq!(d.hint.as_deref(), Some("did you mean 'Counter'?"));
}

/// A class Click has and rclick lacks is not reported as a typo: the hint
/// says it is not in rclick yet, for a declaration and for a bare name. A
/// misspelt class name used as an element gets the class as a suggestion.
#[test]
fn click_classes_rclick_lacks_are_named_as_such() {
    for src in ["r :: RED(5, 50, 0.02);", "Idle -> RED -> Discard;"] {
        let o = parse(src);
        let d = &o.diagnostics[0];
        assert!(d.message.contains("'RED'"), "{src}: {}", d.message);
        let hint = d.hint.as_deref().unwrap_or_default();
        assert!(
            hint.contains("Click element class that rclick does not have yet"),
            "{src}: {hint}"
        );
    }
    let o = parse("Idle -> Countr -> Discard;");
    assert_eq!(
        o.diagnostics[0].hint.as_deref(),
        Some("did you mean 'Counter'?")
    );
    // A name Click does not know either gets no such hint.
    let o = parse("x :: Frobnicate;");
    assert!(o.diagnostics[0].hint.is_none());
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{}Idle{}", "(".repeat(10_000), ")".repeat(10_000));
    let o = parse(&deep);
    assert!(o.has_errors());
    let deep = format!(
        "elementclass X {}{}",
        "{ input -> ".repeat(5000),
        "} -> output ".repeat(5000)
    );
    let o = parse(&deep);
    assert!(o.has_errors());
}
