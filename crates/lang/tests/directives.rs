//! Line endings and `#` line directives.
mod common;
use common::*;

#[test]
fn crlf_and_cr_count_lines() {
    let e = errors("Idle\r\n->\r\n x;");
    assert_eq!(e, ["test.click:3: undeclared element 'x'"]);
    let e = errors("Idle\r->\r x;");
    assert_eq!(e, ["test.click:3: undeclared element 'x'"]);
    let e = errors("/* a\n b */ Idle // c\n -> x;");
    assert_eq!(e, ["test.click:3: undeclared element 'x'"]);
}

#[test]
fn line_directives() {
    let e = errors("# 20 \"foo.click\"\nIdle -> x;\n#line 5\nIdle -> y;\n# 1 \"\"\nIdle -> z;");
    assert_eq!(
        e,
        [
            "foo.click:20: undeclared element 'x'",
            "foo.click:5: undeclared element 'y'",
            "test.click:1: undeclared element 'z'"
        ]
    );
    // Only at the start of a line.
    let e = errors("Idle -> Discard; # 5\n");
    assert_eq!(
        e,
        [
            "test.click:1: syntax error near '#'",
            "test.click:1: undeclared element '5'"
        ]
    );
}

#[test]
fn directives_inside_config_strings() {
    let o = parse("c :: Counter(1,\n# 40 \"x.click\"\n2); Idle -> q;");
    let e: Vec<String> = o.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(e, ["x.click:40: undeclared element 'q'"]);
    let o = parse("c :: Counter(1,\n# 40 \"x.click\"\n2);");
    assert_eq!(o.spec.unwrap().elements[0].config, "1,\n\n2");
}

#[test]
fn element_landmarks() {
    let s = ok("a :: Idle;\n\nb :: Discard;\na -> b;");
    assert_eq!(s.elements[1].landmark.to_string(), "test.click:3");
    assert_eq!(s.connection_landmarks[0].line, 4);
}
