//! Repeated diagnostics of one cause are capped (issue 13): a few bytes of
//! configuration must not produce hundreds of thousands of error lines.

use rclick_lang::{cap_repeated, Diagnostic, Landmark, MAX_REPEATED_DIAGNOSTICS};

fn error(line: u32, message: &str) -> Diagnostic {
    Diagnostic::error(Landmark::new("f.click", line), message)
}

fn rendered(d: &[Diagnostic]) -> Vec<String> {
    d.iter().map(|d| d.to_string()).collect()
}

#[test]
fn a_few_of_each_cause_are_kept_in_order() {
    let mut d = vec![error(1, "a"), error(2, "b"), error(1, "a")];
    let before = d.clone();
    cap_repeated(&mut d);
    assert_eq!(d, before);
}

#[test]
fn many_of_one_cause_become_a_summary_after_the_first_few() {
    let mut d: Vec<Diagnostic> = (0..65536)
        .map(|p| error(3, &format!("'r :: RoundRobinSched' input {p} unused")))
        .collect();
    d.push(error(4, "something else"));
    cap_repeated(&mut d);
    let lines = rendered(&d);
    assert_eq!(lines.len(), MAX_REPEATED_DIAGNOSTICS + 2, "{lines:#?}");
    assert_eq!(lines[0], "f.click:3: 'r :: RoundRobinSched' input 0 unused");
    assert_eq!(
        lines[MAX_REPEATED_DIAGNOSTICS],
        "f.click:3: ... and 65526 more like this (the last: \
         'r :: RoundRobinSched' input 65535 unused)"
    );
    assert_eq!(lines.last().unwrap(), "f.click:4: something else");
}

#[test]
fn causes_on_other_lines_or_with_other_words_are_kept_apart() {
    let mut d = Vec::new();
    for i in 0..20 {
        d.push(error(1, &format!("x{i} input 1 unused")));
        d.push(error(2, &format!("x{i} input 1 unused")));
        d.push(error(1, &format!("x{i} output 1 unused")));
    }
    cap_repeated(&mut d);
    let lines = rendered(&d);
    assert_eq!(
        lines.len(),
        3 * (MAX_REPEATED_DIAGNOSTICS + 1),
        "{lines:#?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("... and 10 more like this"))
            .count(),
        3
    );
}
