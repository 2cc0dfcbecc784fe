//! `define`, compound parameters, command-line variables, expansion forms.
mod common;
use common::*;
use rclick_lang::ParseOptions;

fn configs(src: &str, opts: &ParseOptions) -> Vec<String> {
    let o = parse_with(src, opts);
    assert!(!o.has_errors(), "{}", render(&o.diagnostics));
    o.spec
        .unwrap()
        .elements
        .into_iter()
        .map(|e| e.config)
        .collect()
}

#[test]
fn define_and_forms() {
    let src = "define($a 1, $w x y z, $n 2);
c1 :: Counter($a); c2 :: Counter(${a}0); c3 :: Counter(${w[1]}); c4 :: Counter(${w[$n]});
c5 :: Counter(${w[9]}); c6 :: Counter(${nope-dflt}); c7 :: Counter($nope $(x) $$ $? $#);
c8 :: Counter('$a' \"$a\"); c9 :: Counter(\"${w}\");";
    assert_eq!(
        configs(src, &ParseOptions::default()),
        [
            "1",
            "10",
            "y",
            "z",
            "",
            "dflt",
            "$nope $(x) $$ $? $#",
            "'$a' \"1\"",
            "\"x y z\""
        ]
    );
}

#[test]
fn define_after_use_and_nested_values() {
    let src = "c :: Counter($b); define($a 5); define($b $a$a);";
    assert_eq!(configs(src, &ParseOptions::default()), ["55"]);
}

#[test]
fn values_are_quoted_inside_double_quotes() {
    let src = "define($q say \"hi\"); c :: Counter(\"$q\");";
    assert_eq!(
        configs(src, &ParseOptions::default()),
        ["\"say \\\"hi\\\"\""]
    );
}

#[test]
fn command_line_overrides_define() {
    let opts = ParseOptions {
        variables: vec![("a".into(), "9".into()), ("z".into(), "zz".into())],
        ..Default::default()
    };
    assert_eq!(
        configs("define($a 1); c :: Counter($a $z);", &opts),
        ["9 zz"]
    );
}

#[test]
fn compound_parameters_are_lexical() {
    let src = "define($g G);
elementclass Inner { $x | input -> Paint($x $g $y) -> output }
elementclass Outer { $y | define($local L$y); input -> Inner($local) -> output }
Idle -> Outer(7) -> Discard;";
    let cfgs = configs(src, &ParseOptions::default());
    // $y is Outer's, not visible lexically inside Inner: left as text.
    assert!(cfgs.contains(&"L7 G $y".to_string()), "{cfgs:?}");
}

#[test]
fn script_variables_survive() {
    let src = "s :: Script(set x 1, print $x, goto l $(eq $x 1));";
    assert_eq!(
        configs(src, &ParseOptions::default()),
        ["set x 1, print $x, goto l $(eq $x 1)"]
    );
}
