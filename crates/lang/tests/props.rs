//! Property tests: no input makes the parser panic or hang, and valid
//! configurations survive flatten → parse unchanged.
mod common;
use common::*;
use proptest::prelude::*;
use rclick_lang::{flatten, split_config_args, ParseOptions};

const CONFIGS: &[&str] = &[
    "",
    "1",
    "\"a, b\"",
    "'x)'",
    "A 1, B 2",
    "/* c */ 3",
    "\\<0a 0b>",
    "$undefined",
    "2,\n 3",
];
const PRIMS: &[&str] = &["Counter", "Tee", "Paint", "Null", "Queue", "Print"];

/// A random valid configuration: declared elements, chains between them
/// with ports, and pass-through compound instances inside chains.
fn valid_config() -> impl Strategy<Value = String> {
    let decl = (0..PRIMS.len(), 0..CONFIGS.len());
    let conn = (
        0usize..12,
        0u32..3,
        0u32..3,
        0usize..12,
        prop::option::of((0usize..2, 0..CONFIGS.len())),
    );
    (
        prop::collection::vec(decl, 1..12),
        prop::collection::vec(conn, 0..20),
        any::<bool>(),
    )
        .prop_map(|(decls, conns, anon)| {
            let mut s = String::from(
                "elementclass C0 { $a | input -> Counter($a) -> output }\n\
                 elementclass C1 { input -> t :: Tee; t[0] -> output; t[1] -> Discard }\n",
            );
            let n = decls.len();
            for (i, (c, cfg)) in decls.iter().enumerate() {
                let cfg = CONFIGS[*cfg];
                if cfg.is_empty() {
                    s.push_str(&format!("e{i} :: {};\n", PRIMS[*c]));
                } else {
                    s.push_str(&format!("e{i} :: {}({cfg});\n", PRIMS[*c]));
                }
            }
            for (a, p, q, b, via) in conns {
                let (a, b) = (a % n, b % n);
                match via {
                    None => s.push_str(&format!("e{a} [{p}] -> [{q}] e{b};\n")),
                    Some((0, cfg)) => {
                        let arg = match CONFIGS[cfg] {
                            "" => "1".to_string(),
                            c => c.replace(',', " "),
                        };
                        s.push_str(&format!("e{a} [{p}] -> C0({arg}) -> [{q}] e{b};\n"))
                    }
                    Some(_) => s.push_str(&format!("e{a} [{p}] -> C1 -> [{q}] e{b};\n")),
                }
            }
            if anon {
                s.push_str("Idle -> Counter(1) -> { input -> Null -> output } -> Discard;\n");
            }
            s
        })
}

const SOUP: &[&str] = &[
    "a",
    "b",
    "Counter",
    "Idle",
    "Discard",
    "Tee",
    "x/y",
    "@1",
    "::",
    "->",
    "=>",
    "||",
    "...",
    ";",
    ",",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "|",
    "$a",
    "${a}",
    "$",
    "1",
    "0-",
    "-",
    "elementclass",
    "require",
    "define",
    "provide",
    "input",
    "output",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "\n",
    "\r\n",
    "\n#",
    "\n# 3 \"f\"\n",
    "\\<",
    ">",
    "#line 9\n",
    "__REST__",
    "KW",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        max_shrink_iters: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn valid_configs_round_trip(src in valid_config()) {
        let o = parse(&src);
        prop_assert!(!o.has_errors(), "{}\n{}", src, render(&o.diagnostics));
        assert_roundtrip(&o.spec.unwrap(), &ParseOptions::default());
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(0..SOUP.len(), 0..60)) {
        let src: String = toks.iter().map(|&i| SOUP[i]).collect::<Vec<_>>().join(" ");
        let o = parse(&src);
        prop_assert_eq!(o.spec.is_some(), !o.has_errors());
        if let Some(spec) = o.spec {
            let _ = parse(&flatten(&spec));
        }
    }

    #[test]
    fn mutated_configs_never_panic(
        src in valid_config(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..SOUP.len(), 0usize..4), 1..6),
    ) {
        let mut s = src;
        for (at, tok, kind) in edits {
            let mut pos = at.index(s.len() + 1);
            while !s.is_char_boundary(pos) {
                pos -= 1;
            }
            match kind {
                0 => s.insert_str(pos, SOUP[tok]),
                1 => {
                    let mut end = (pos + tok).min(s.len());
                    while !s.is_char_boundary(end) {
                        end += 1;
                    }
                    s.replace_range(pos..end, "");
                }
                2 => {
                    let chunk: String = s[pos..].chars().take(tok + 1).collect();
                    s.insert_str(pos, &chunk);
                }
                _ => s.truncate(pos),
            }
        }
        let o = parse(&s);
        if let Some(spec) = o.spec {
            let _ = parse(&flatten(&spec));
        }
    }

    #[test]
    fn split_args_never_panics(s in ".{0,80}") {
        let space = |c| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
        for a in split_config_args(&s) {
            prop_assert_eq!(a.trim_start_matches(space), a.as_str());
            // Trailing space survives only inside a quote or `\<...>` block
            // left open at the end (as in Click).
            if !s.contains(['"', '\'', '\\']) {
                prop_assert_eq!(a.trim_end_matches(space), a.as_str());
            }
        }
    }
}
