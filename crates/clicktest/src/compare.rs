//! Comparison of a test's actual outputs with its expectations.
//!
//! Rules (shared with Click's testie):
//! - `%expectv` is byte-exact.
//! - `%expect` and `%expectx` compare line by line; trailing blanks are
//!   ignored, blank lines are ignored on both sides, and output lines that
//!   match an applicable `%ignore*` pattern are dropped first.
//! - In `%expect`, `{{RE}}` is a regular expression, `{{?text}}` a comment,
//!   and the rest of the line literal; the whole line must match.
//! - In `%expectx`, each line is a regular expression matching the whole
//!   line.
//! - Several alternates (`-a`) may be given; any one matching suffices.

use crate::parse::{Expect, ExpectKind, Ignore, IgnoreKind};
// fancy-regex: Click's test files use Perl look-around (`(?!...)`) in
// `%ignorex` and `{{...}}` patterns, which the `regex` crate rejects.
use fancy_regex::Regex;
use std::fmt;

/// Where an output first diverged from its expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Output name (`stdout`, `stderr` or a file name).
    pub name: String,
    /// Header line of the expectation section (the alternate that matched
    /// furthest).
    pub section_line: usize,
    /// Line in the test file of the expected line that failed, if the
    /// expectation had not ended.
    pub expected_line: Option<usize>,
    /// 1-based line number in the actual output where they diverge.
    pub output_line: usize,
    /// The expected line, or `None` when the expectation ended first.
    pub expected: Option<String>,
    /// The actual line, or `None` when the output ended first.
    pub actual: Option<String>,
}

/// Why an output check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The output does not match any alternate.
    Mismatch(Mismatch),
    /// An expectation or ignore line is not a valid regular expression.
    BadPattern {
        /// Line in the test file.
        line: usize,
        /// The regex compiler's message.
        message: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Mismatch(m) => write!(
                f,
                "{} differs at line {}: expected {:?}, got {:?}",
                m.name, m.output_line, m.expected, m.actual
            ),
            CheckError::BadPattern { line, message } => {
                write!(f, "line {line}: bad regular expression: {message}")
            }
        }
    }
}

/// Matches one line of output against one expected or ignore line.
enum LineMatcher {
    Literal(String),
    /// `-w` without regex parts: equal once all whitespace is removed.
    NoSpace(String),
    Regex(Regex),
}

impl LineMatcher {
    fn matches(&self, line: &str) -> bool {
        match self {
            LineMatcher::Literal(s) => s == line,
            LineMatcher::NoSpace(s) => *s == strip_space(line),
            // A pattern that exhausts the backtracking limit does not match.
            LineMatcher::Regex(re) => re.is_match(line).unwrap_or(false),
        }
    }
}

fn strip_space(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

enum Part<'a> {
    Literal(&'a str),
    Regex(&'a str),
}

/// Splits an `%expect` line into literal text and `{{RE}}` parts, dropping
/// `{{?comment}}` parts. An unclosed `{{` is literal text.
fn split_parts(line: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        if start > 0 {
            parts.push(Part::Literal(&rest[..start]));
        }
        let re = &rest[start + 2..start + 2 + len];
        if !re.starts_with('?') {
            parts.push(Part::Regex(re));
        }
        rest = &rest[start + 2 + len + 2..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    parts
}

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| e.to_string())
}

/// Builds the matcher for an `%expect`/`%ignore` line with `{{RE}}` parts.
fn pattern_matcher(
    line: &str,
    case_insensitive: bool,
    ignore_whitespace: bool,
) -> Result<LineMatcher, String> {
    let has_regex = line.contains("{{") && line[line.find("{{").unwrap()..].contains("}}");
    if !has_regex {
        return Ok(if ignore_whitespace {
            LineMatcher::NoSpace(strip_space(line))
        } else {
            LineMatcher::Literal(line.to_string())
        });
    }
    let flags = if case_insensitive { "(?i:" } else { "(?:" };
    let mut re = String::from("^");
    if ignore_whitespace {
        re.push_str(r"\s*");
    }
    for part in split_parts(line) {
        match part {
            Part::Literal(text) if ignore_whitespace => {
                // Whitespace may appear, vanish or change anywhere.
                for c in text.chars().filter(|c| !c.is_whitespace()) {
                    re.push_str(&fancy_regex::escape(c.encode_utf8(&mut [0; 4])));
                    re.push_str(r"\s*");
                }
            }
            Part::Literal(text) => re.push_str(&fancy_regex::escape(text)),
            Part::Regex(r) => {
                // Compile each part alone first so a broken part is reported
                // as itself, not as a confusing error in the combined regex.
                compile(r)?;
                re.push_str(flags);
                re.push_str(r);
                re.push(')');
                if ignore_whitespace {
                    re.push_str(r"\s*");
                }
            }
        }
    }
    re.push('$');
    compile(&re).map(LineMatcher::Regex)
}

fn regex_matcher(line: &str, case_insensitive: bool) -> Result<LineMatcher, String> {
    let flags = if case_insensitive { "(?i)" } else { "" };
    compile(&format!("^{flags}(?:{line})$")).map(LineMatcher::Regex)
}

fn ignore_matchers(ignores: &[&Ignore]) -> Result<Vec<LineMatcher>, CheckError> {
    let mut out = Vec::new();
    for ig in ignores {
        for line in &ig.lines {
            let m = match ig.kind {
                IgnoreKind::Pattern => pattern_matcher(line, ig.case_insensitive, false),
                IgnoreKind::Regex => regex_matcher(line, ig.case_insensitive),
                IgnoreKind::Literal => Ok(LineMatcher::Literal(line.clone())),
            };
            out.push(m.map_err(|message| CheckError::BadPattern {
                line: ig.line,
                message,
            })?);
        }
    }
    Ok(out)
}

/// Result of comparing against one alternate: `Ok` or how far it got.
struct Attempt {
    progress: usize,
    mismatch: Mismatch,
}

/// Checks `actual` (the contents of output `name`) against every alternate
/// in `expects`, after dropping lines matched by `ignores`.
///
/// `expects` and `ignores` should already be restricted to this output. On
/// failure the mismatch of the alternate that matched the most lines is
/// returned, since that is the one the author most likely meant.
pub fn check_output(
    name: &str,
    expects: &[&Expect],
    ignores: &[&Ignore],
    actual: &[u8],
) -> Result<(), CheckError> {
    let mut best: Option<Attempt> = None;
    let mut ignore_cache: Option<Vec<LineMatcher>> = None;
    for exp in expects {
        if exp.data == actual {
            return Ok(());
        }
        let attempt = match exp.kind {
            ExpectKind::Verbatim => compare_verbatim(name, exp, actual),
            ExpectKind::Pattern | ExpectKind::Regex => {
                if ignore_cache.is_none() {
                    ignore_cache = Some(ignore_matchers(ignores)?);
                }
                compare_lines(name, exp, ignore_cache.as_deref().unwrap(), actual)?
            }
        };
        let Some(attempt) = attempt else {
            return Ok(());
        };
        let better = match &best {
            Some(b) => attempt.progress > b.progress,
            None => true,
        };
        if better {
            best = Some(attempt);
        }
    }
    match best {
        Some(b) => Err(CheckError::Mismatch(b.mismatch)),
        // No expectations at all: nothing to violate.
        None => Ok(()),
    }
}

fn compare_verbatim(name: &str, exp: &Expect, actual: &[u8]) -> Option<Attempt> {
    if exp.data == actual {
        return None;
    }
    let el: Vec<&[u8]> = exp.data.split_inclusive(|&b| b == b'\n').collect();
    let al: Vec<&[u8]> = actual.split_inclusive(|&b| b == b'\n').collect();
    let i = el
        .iter()
        .zip(&al)
        .position(|(e, a)| e != a)
        .unwrap_or(el.len().min(al.len()));
    let (e, a) = (el.get(i).copied(), al.get(i).copied());
    // When the lines differ only in their line ending, show the endings.
    let strip = |l: &[u8]| l.strip_suffix(b"\n").unwrap_or(l).to_vec();
    let same_text = matches!((e, a), (Some(e), Some(a)) if strip(e) == strip(a));
    let show = |l: &[u8]| {
        let l = if same_text { l.to_vec() } else { strip(l) };
        String::from_utf8_lossy(&l).into_owned()
    };
    let body_lines = exp.data[..el[..i].iter().map(|l| l.len()).sum::<usize>()]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    Some(Attempt {
        progress: i,
        mismatch: Mismatch {
            name: name.to_string(),
            section_line: exp.line,
            expected_line: e.map(|_| exp.body_line + body_lines),
            output_line: i + 1,
            expected: e.map(show),
            actual: a.map(show),
        },
    })
}

fn compare_lines(
    name: &str,
    exp: &Expect,
    ignores: &[LineMatcher],
    actual: &[u8],
) -> Result<Option<Attempt>, CheckError> {
    let exp_text = String::from_utf8_lossy(&exp.data);
    let mut expected: Vec<(usize, &str, LineMatcher)> = Vec::new();
    for (i, line) in exp_text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        let lineno = exp.body_line + i;
        let m = match exp.kind {
            ExpectKind::Regex => regex_matcher(line, exp.case_insensitive),
            _ => pattern_matcher(line, exp.case_insensitive, exp.ignore_whitespace),
        }
        .map_err(|message| CheckError::BadPattern {
            line: lineno,
            message,
        })?;
        expected.push((lineno, line, m));
    }

    let act_text = String::from_utf8_lossy(actual);
    let total_lines = act_text.lines().count();
    let actual_lines = act_text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end()))
        .filter(|(_, l)| !l.is_empty() && !ignores.iter().any(|m| m.matches(l)));

    let mut exp_iter = expected.iter();
    let mut progress = 0;
    let mut actual_iter = actual_lines;
    loop {
        match (exp_iter.next(), actual_iter.next()) {
            (None, None) => return Ok(None),
            (Some((_, _, m)), Some((_, a))) if m.matches(a) => progress += 1,
            (e, a) => {
                return Ok(Some(Attempt {
                    progress,
                    mismatch: Mismatch {
                        name: name.to_string(),
                        section_line: exp.line,
                        expected_line: e.map(|(n, _, _)| *n),
                        output_line: a.map_or(total_lines + 1, |(n, _)| n),
                        expected: e.map(|(_, l, _)| l.to_string()),
                        actual: a.map(|(_, l)| l.to_string()),
                    },
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(kind: ExpectKind, data: &str) -> Expect {
        Expect {
            name: "stdout".into(),
            kind,
            data: data.as_bytes().to_vec(),
            line: 10,
            body_line: 11,
            alternate: false,
            case_insensitive: false,
            ignore_whitespace: false,
        }
    }

    fn pat(data: &str) -> Expect {
        exp(ExpectKind::Pattern, data)
    }

    fn ign(kind: IgnoreKind, lines: &[&str]) -> Ignore {
        Ignore {
            target: None,
            kind,
            lines: lines.iter().map(|s| s.to_string()).collect(),
            case_insensitive: false,
            line: 20,
        }
    }

    fn check(e: &Expect, actual: &str) -> Result<(), CheckError> {
        check_output("stdout", &[e], &[], actual.as_bytes())
    }

    fn mismatch(r: Result<(), CheckError>) -> Mismatch {
        match r {
            Err(CheckError::Mismatch(m)) => m,
            other => panic!("expected mismatch, got {other:?}"),
        }
    }

    #[test]
    fn literal_lines() {
        assert!(check(&pat("a\nb\n"), "a\nb\n").is_ok());
        assert!(check(&pat("a\nb\n"), "a\nb").is_ok());
        let m = mismatch(check(&pat("a\nb\nc\n"), "a\nx\nc\n"));
        assert_eq!(m.output_line, 2);
        assert_eq!(m.expected_line, Some(12));
        assert_eq!(m.section_line, 10);
        assert_eq!(m.expected.as_deref(), Some("b"));
        assert_eq!(m.actual.as_deref(), Some("x"));
        // Regex metacharacters outside {{ }} are literal.
        assert!(check(&pat("a.b (x)*\n"), "a.b (x)*\n").is_ok());
        assert!(check(&pat("a.b\n"), "axb\n").is_err());
    }

    #[test]
    fn whitespace_rules() {
        // Trailing blanks and blank lines are ignored on both sides.
        assert!(check(&pat("a  \n\n\nb\n"), "\na\t\nb  \n\n\n").is_ok());
        assert!(check(&pat("a\r\nb\n"), "a\nb\r\n").is_ok());
        // Leading and inner whitespace matter without -w.
        assert!(check(&pat("a b\n"), " a b\n").is_err());
        assert!(check(&pat("a b\n"), "a  b\n").is_err());
    }

    #[test]
    fn ignore_whitespace_flag() {
        let mut e = pat("a b  c\nx: {{\\d+}} end\n");
        e.ignore_whitespace = true;
        assert!(check(&e, "  abc\nx:12end\n").is_ok());
        assert!(check(&e, "a  b\tc \n  x :  12  e n d\n").is_ok());
        assert!(check(&e, "abd\nx: 12 end\n").is_err());
        assert!(check(&e, "abc\nx: y end\n").is_err());
    }

    #[test]
    fn end_of_output() {
        let m = mismatch(check(&pat("a\nb\n"), "a\n"));
        assert_eq!(m.expected.as_deref(), Some("b"));
        assert_eq!(m.actual, None);
        assert_eq!(m.output_line, 2);
        let m = mismatch(check(&pat("a\n"), "a\nextra\n"));
        assert_eq!(m.expected, None);
        assert_eq!(m.expected_line, None);
        assert_eq!(m.actual.as_deref(), Some("extra"));
        assert_eq!(m.output_line, 2);
    }

    #[test]
    fn empty_expectation() {
        assert!(check(&pat(""), "").is_ok());
        assert!(check(&pat(""), "\n  \n\n").is_ok());
        let m = mismatch(check(&pat(""), "\nboom\n"));
        assert_eq!(m.actual.as_deref(), Some("boom"));
        assert_eq!(m.output_line, 2);
        let ig = ign(IgnoreKind::Literal, &["noise"]);
        assert!(check_output("stdout", &[&pat("")], &[&ig], b"noise\n").is_ok());
    }

    #[test]
    fn regex_parts() {
        let e = pat("ok:   {{\\d+}}\nexpired: {{[a-z]+}} x{{?comment}}y\n");
        assert!(check(&e, "ok:   64\nexpired: abc xy\n").is_ok());
        assert!(check(&e, "ok:   64a\nexpired: abc xy\n").is_err());
        // The whole line must match, not a substring.
        assert!(check(&pat("{{b}}\n"), "abc\n").is_err());
        assert!(check(&pat("a{{.*}}\n"), "abc\n").is_ok());
        // Alternation inside a part stays inside the part.
        assert!(check(&pat("x{{a|b}}y\n"), "xby\n").is_ok());
        assert!(check(&pat("x{{a|b}}y\n"), "b\n").is_err());
        // An unclosed {{ is literal.
        assert!(check(&pat("a{{b\n"), "a{{b\n").is_ok());
        // Comments alone.
        assert!(check(&pat("{{?just a note}}abc\n"), "abc\n").is_ok());
    }

    #[test]
    fn case_insensitive() {
        let mut e = pat("Hello {{world}}\n");
        assert!(check(&e, "Hello WORLD\n").is_err());
        e.case_insensitive = true;
        assert!(check(&e, "Hello WORLD\n").is_ok());
        // -i affects regex parts only; literal text stays exact.
        assert!(check(&e, "HELLO world\n").is_err());
        let mut x = exp(ExpectKind::Regex, "hel+o\n");
        x.case_insensitive = true;
        assert!(check(&x, "HELLO\n").is_ok());
    }

    #[test]
    fn expectx_lines() {
        let e = exp(ExpectKind::Regex, "a.c\n\\d+ items?\n");
        assert!(check(&e, "abc\n12 items\n").is_ok());
        assert!(check(&e, "abc\n12 items!\n").is_err());
        assert!(check(&e, "xabc\n12 items\n").is_err());
    }

    #[test]
    fn perl_lookahead_works_as_in_click_tests() {
        // Click's own tests ignore lines with negative look-ahead.
        let m = regex_matcher("(?!keep).*", false).unwrap();
        assert!(m.matches("drop this"));
        assert!(!m.matches("keep this"));
    }

    #[test]
    fn bad_regex_is_reported() {
        match check(&pat("a\n{{(}}\n"), "a\nb\n") {
            Err(CheckError::BadPattern { line, .. }) => assert_eq!(line, 12),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn alternates() {
        let a = pat("one\ntwo\n");
        let mut b = pat("one\nthree\nfour\n");
        b.line = 30;
        b.body_line = 31;
        assert!(check_output("stdout", &[&a, &b], &[], b"one\nthree\nfour\n").is_ok());
        assert!(check_output("stdout", &[&a, &b], &[], b"one\ntwo\n").is_ok());
        // The alternate that got furthest is reported.
        let m = mismatch(check_output(
            "stdout",
            &[&a, &b],
            &[],
            b"one\nthree\nfive\n",
        ));
        assert_eq!(m.section_line, 30);
        assert_eq!(m.expected.as_deref(), Some("four"));
        // Mixed kinds: a verbatim alternate can match too.
        let v = exp(ExpectKind::Verbatim, "raw  \n");
        assert!(check_output("stdout", &[&a, &v], &[], b"raw  \n").is_ok());
    }

    #[test]
    fn ignores() {
        let e = pat("a\nb\n");
        let out = b"a\nDEBUG 1\nnoise here\nb\nxyz 42\n";
        let igs = [
            ign(IgnoreKind::Pattern, &["DEBUG {{\\d+}}", "xyz {{.*}}"]),
            ign(IgnoreKind::Regex, &["noise.*"]),
        ];
        let refs: Vec<&Ignore> = igs.iter().collect();
        assert!(check_output("stdout", &[&e], &refs, out).is_ok());
        assert!(check_output("stdout", &[&e], &refs[..1], out).is_err());
        // %ignore lines are literal outside {{ }}; %ignorev entirely.
        let lit = ign(IgnoreKind::Pattern, &["a.c"]);
        assert!(check_output("stdout", &[&pat("")], &[&lit], b"abc\n").is_err());
        assert!(check_output("stdout", &[&pat("")], &[&lit], b"a.c\n").is_ok());
        let v = ign(IgnoreKind::Literal, &["{{x}}"]);
        assert!(check_output("stdout", &[&pat("")], &[&v], b"{{x}}\n").is_ok());
        assert!(check_output("stdout", &[&pat("")], &[&v], b"x\n").is_err());
        // Ignores apply to whole lines only.
        let part = ign(IgnoreKind::Regex, &["noi"]);
        assert!(check_output("stdout", &[&pat("")], &[&part], b"noise\n").is_err());
    }

    #[test]
    fn ignores_do_not_apply_to_expectv() {
        let v = exp(ExpectKind::Verbatim, "a\n");
        let ig = ign(IgnoreKind::Literal, &["junk"]);
        assert!(check_output("stdout", &[&v], &[&ig], b"a\njunk\n").is_err());
    }

    #[test]
    fn verbatim_is_byte_exact() {
        let v = exp(ExpectKind::Verbatim, "a \n\nb\n");
        assert!(check(&v, "a \n\nb\n").is_ok());
        let m = mismatch(check(&v, "a\n\nb\n"));
        assert_eq!(m.output_line, 1);
        assert_eq!(m.expected_line, Some(11));
        assert_eq!(m.expected.as_deref(), Some("a "));
        assert_eq!(m.actual.as_deref(), Some("a"));
        let m = mismatch(check(&v, "a \nb\n"));
        assert_eq!(m.output_line, 2);
        // Missing final newline shows the line endings.
        let m = mismatch(check(&v, "a \n\nb"));
        assert_eq!(m.output_line, 3);
        assert_eq!(m.expected.as_deref(), Some("b\n"));
        assert_eq!(m.actual.as_deref(), Some("b"));
        let m = mismatch(check(&v, "a \n\nb\nc\n"));
        assert_eq!(m.expected, None);
        assert_eq!(m.actual.as_deref(), Some("c"));
        // Binary data.
        let mut bin = exp(ExpectKind::Verbatim, "");
        bin.data = vec![0, 255, 10, 1];
        assert!(check_output("stdout", &[&bin], &[], &[0, 255, 10, 1]).is_ok());
        assert!(check_output("stdout", &[&bin], &[], &[0, 254, 10, 1]).is_err());
    }

    #[test]
    fn no_expectations_always_pass() {
        assert!(check_output("stdout", &[], &[], b"anything").is_ok());
    }
}
