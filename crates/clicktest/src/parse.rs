//! Parser for the `.clicktest` file format.
//!
//! A file is a sequence of sections, each introduced by a line starting with
//! `%`. `%eot` ends one test and starts another in the same file; `%eof`
//! ends the file. The parser works on bytes because `%file +LEN` and
//! `%expectv` sections may hold arbitrary binary data.

use base64::Engine as _;
use std::fmt;

/// One test: a script plus its inputs and expected outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Test {
    /// Display name: the file name, with `<N>` appended for the Nth test
    /// (N >= 2) of a file that uses `%eot`.
    pub name: String,
    /// Path of the test file as given, used in `file:line` diagnostics.
    pub file: String,
    /// Line of the first section of this test.
    pub line: usize,
    /// The concatenated `%script` sections.
    pub script: String,
    /// Line of the first `%script` header (0 if there is none).
    pub script_line: usize,
    /// The `%require` prerequisites, if any.
    pub require: Option<Require>,
    /// Concatenated `%info` text.
    pub info: String,
    /// Concatenated `%desc` text.
    pub desc: String,
    /// Input files (`%file`, `%stdin`), in order of appearance.
    pub files: Vec<InputFile>,
    /// Expected outputs (`%expect`, `%expectv`, `%expectx`, `%stdout`,
    /// `%stderr`), in order of appearance; one entry per name, so a section
    /// naming two files yields two entries.
    pub expects: Vec<Expect>,
    /// Ignore patterns (`%ignore`, `%ignorex`, `%ignorev`).
    pub ignores: Vec<Ignore>,
}

/// `%require [-q]`: a script whose failure skips the test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Require {
    /// Shell text of all `%require` sections.
    pub script: String,
    /// Line of the first `%require` header.
    pub line: usize,
    /// `-q`: skip silently when the requirement fails.
    pub quiet: bool,
}

/// An input file created in the test directory before the script runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// File name relative to the test directory (`stdin` feeds the script).
    pub name: String,
    /// Contents after `-d`/`-e` processing.
    pub data: Vec<u8>,
    /// Line of the section header.
    pub line: usize,
}

/// How an expectation is compared with the actual output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectKind {
    /// `%expect`: line by line, literal text with `{{regex}}` parts.
    Pattern,
    /// `%expectx`: line by line, every line a regular expression.
    Regex,
    /// `%expectv`: byte-exact.
    Verbatim,
}

/// One expected output file (one alternate of it, if `-a` is used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// Output name: `stdout`, `stderr`, or a file in the test directory.
    pub name: String,
    /// Comparison mode.
    pub kind: ExpectKind,
    /// Expected contents after `-d`/`-e` processing.
    pub data: Vec<u8>,
    /// Line of the section header.
    pub line: usize,
    /// Line in the test file of the first byte of `data`, so diagnostics can
    /// point at the exact expected line.
    pub body_line: usize,
    /// `-a`: this is one of several acceptable alternates.
    pub alternate: bool,
    /// `-i`: regular-expression parts are case-insensitive.
    pub case_insensitive: bool,
    /// `-w`: ignore all whitespace differences.
    pub ignore_whitespace: bool,
}

/// How an ignore line is matched against output lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoreKind {
    /// `%ignore`: literal text with `{{regex}}` parts.
    Pattern,
    /// `%ignorex`: every line a regular expression.
    Regex,
    /// `%ignorev`: literal text.
    Literal,
}

/// Lines to drop from outputs before comparing them with `%expect` data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignore {
    /// Output this applies to; `None` means every output.
    pub target: Option<String>,
    /// Matching mode.
    pub kind: IgnoreKind,
    /// The pattern lines (blank lines already removed).
    pub lines: Vec<String>,
    /// `-i`: case-insensitive matching of regular-expression parts.
    pub case_insensitive: bool,
    /// Line of the section header.
    pub line: usize,
}

/// A syntax error in a test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

impl Test {
    /// True if the test defines an input file with this name.
    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.name == name)
    }

    /// Output names that have expectations, in order of first appearance.
    pub fn expected_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for e in &self.expects {
            if !names.contains(&e.name.as_str()) {
                names.push(&e.name);
            }
        }
        names
    }

    fn is_empty(&self) -> bool {
        self.script_line == 0
            && self.require.is_none()
            && self.info.is_empty()
            && self.desc.is_empty()
            && self.files.is_empty()
            && self.expects.is_empty()
            && self.ignores.is_empty()
    }
}

/// Section flags shared by `%file`, `%expect*` and `%ignore*`.
#[derive(Default)]
struct Flags {
    alternate: bool,
    delete_first: bool,
    base64: bool,
    case_insensitive: bool,
    whitespace: bool,
    length: Option<usize>,
}

/// Which family a data section belongs to, for flag validation and
/// defaults.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DataSection {
    File,
    Expect(ExpectKind),
    Ignore(IgnoreKind),
}

struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
    /// Line number of the line starting at `pos`.
    lineno: usize,
}

impl<'a> Parser<'a> {
    /// Returns the next line including its newline, advancing past it.
    fn next_line(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let len = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        self.pos += len;
        self.lineno += 1;
        Some(&rest[..len])
    }

    fn peek_is_header(&self) -> bool {
        self.data.get(self.pos) == Some(&b'%')
    }

    /// Reads a section body: every line up to the next `%` line, with a
    /// leading `\%` turned into `%`.
    fn read_body(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while !self.peek_is_header() {
            let Some(line) = self.next_line() else { break };
            if line.starts_with(b"\\%") {
                out.extend_from_slice(&line[1..]);
            } else {
                out.extend_from_slice(line);
            }
        }
        out
    }

    /// Reads exactly `len` raw bytes (`+LEN` sections).
    fn read_raw(&mut self, len: usize) -> Result<Vec<u8>, String> {
        let end = self.pos + len;
        if end > self.data.len() {
            return Err(format!(
                "section too short: +{len} bytes wanted, {} available",
                self.data.len() - self.pos
            ));
        }
        let body = self.data[self.pos..end].to_vec();
        self.lineno += body.iter().filter(|&&b| b == b'\n').count();
        // A body ending mid-line leaves the rest of that line to be read
        // (and ignored) as its own line, which bumps `lineno` then.
        self.pos = end;
        Ok(body)
    }
}

/// Parses the text of a `.clicktest` file into its tests.
///
/// `file` is the name used in diagnostics. Tests that contain no sections at
/// all (for instance after a final `%eot`) are dropped.
pub fn parse(file: &str, data: &[u8]) -> Result<Vec<Test>, ParseError> {
    let mut p = Parser {
        data,
        pos: 0,
        lineno: 0,
    };
    let mut tests = Vec::new();
    let mut cur = Test::default();

    let finish = |mut t: Test, tests: &mut Vec<Test>| -> Result<(), ParseError> {
        if t.is_empty() {
            return Ok(());
        }
        if t.script_line == 0 {
            return Err(ParseError {
                line: t.line,
                message: "test has no %script section".into(),
            });
        }
        t.file = file.to_string();
        t.name = if tests.is_empty() {
            file.to_string()
        } else {
            format!("{file}<{}>", tests.len() + 1)
        };
        tests.push(t);
        Ok(())
    };

    while let Some(line) = p.next_line() {
        let lineno = p.lineno;
        if !line.starts_with(b"%") {
            // Text outside sections (before the first one, or after a +LEN
            // body) is ignored, as testie does.
            continue;
        }
        let err = |message: String| ParseError {
            line: lineno,
            message,
        };
        let header = String::from_utf8_lossy(&line[1..]);
        let header = header.trim();
        let word_len = header
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(header.len());
        if word_len == 0 {
            return Err(err("bad '%' line: no section name".into()));
        }
        let command = header[..word_len].to_ascii_lowercase();
        let args: Vec<&str> = header[word_len..].split_whitespace().collect();
        if cur.is_empty() {
            cur.line = lineno;
        }

        match command.as_str() {
            "eot" => {
                finish(std::mem::take(&mut cur), &mut tests)?;
                p.read_body();
            }
            "eof" => break,
            "script" | "test" | "require" => {
                let is_require = command == "require";
                let quiet = match args.as_slice() {
                    [] => false,
                    ["-q"] if is_require => true,
                    _ => return Err(err(format!("bad arguments to %{command}"))),
                };
                let body = String::from_utf8_lossy(&p.read_body()).into_owned();
                if is_require {
                    let r = cur.require.get_or_insert_with(|| Require {
                        line: lineno,
                        ..Require::default()
                    });
                    r.script.push_str(&body);
                    r.quiet |= quiet;
                } else {
                    if cur.script_line == 0 {
                        cur.script_line = lineno;
                    }
                    cur.script.push_str(&body);
                }
            }
            "info" | "desc" | "cut" => {
                let body = String::from_utf8_lossy(&p.read_body()).into_owned();
                match command.as_str() {
                    "info" => cur.info.push_str(&body),
                    "desc" => cur.desc.push_str(&body),
                    _ => {}
                }
            }
            "file" | "stdin" | "input" => {
                let default = Some("stdin");
                data_section(&mut p, &mut cur, DataSection::File, &args, default, lineno)?;
            }
            "expect" | "stdout" | "output" | "stderr" => {
                let default = if command == "stderr" {
                    "stderr"
                } else {
                    "stdout"
                };
                let sec = DataSection::Expect(ExpectKind::Pattern);
                data_section(&mut p, &mut cur, sec, &args, Some(default), lineno)?;
            }
            "expectx" => {
                let sec = DataSection::Expect(ExpectKind::Regex);
                data_section(&mut p, &mut cur, sec, &args, Some("stdout"), lineno)?;
            }
            "expectv" | "expect_verbatim" | "verbatim" => {
                let sec = DataSection::Expect(ExpectKind::Verbatim);
                data_section(&mut p, &mut cur, sec, &args, Some("stdout"), lineno)?;
            }
            "ignore" | "ignorex" | "ignorev" => {
                let kind = match command.as_str() {
                    "ignore" => IgnoreKind::Pattern,
                    "ignorex" => IgnoreKind::Regex,
                    _ => IgnoreKind::Literal,
                };
                data_section(
                    &mut p,
                    &mut cur,
                    DataSection::Ignore(kind),
                    &args,
                    None,
                    lineno,
                )?;
            }
            _ => return Err(err(format!("unknown section '%{command}'"))),
        }
    }
    finish(cur, &mut tests)?;
    Ok(tests)
}

fn parse_flags(args: &[&str], sec: DataSection) -> Result<(Flags, Vec<String>), String> {
    let mut flags = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if let Some(n) = a.strip_prefix('+') {
            flags.length = Some(n.parse().map_err(|_| format!("bad length '{a}'"))?);
        } else if let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) {
            for c in letters.chars() {
                match c {
                    'a' => flags.alternate = true,
                    'd' => flags.delete_first = true,
                    'e' => flags.base64 = true,
                    'i' => flags.case_insensitive = true,
                    'w' => flags.whitespace = true,
                    _ => return Err(format!("unknown flag '-{c}'")),
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    let bad = |flag: &str| Err(format!("flag '{flag}' not allowed here"));
    match sec {
        DataSection::File => {
            if flags.alternate {
                return bad("-a");
            }
            if flags.case_insensitive {
                return bad("-i");
            }
            if flags.whitespace {
                return bad("-w");
            }
        }
        DataSection::Expect(kind) => {
            if kind == ExpectKind::Verbatim && flags.case_insensitive {
                return bad("-i");
            }
            if kind != ExpectKind::Pattern && flags.whitespace {
                return bad("-w");
            }
        }
        DataSection::Ignore(kind) => {
            if flags.alternate {
                return bad("-a");
            }
            if flags.base64 {
                return bad("-e");
            }
            if flags.whitespace {
                return bad("-w");
            }
            if kind == IgnoreKind::Literal && flags.case_insensitive {
                return bad("-i");
            }
        }
    }
    let names = args[i..].iter().map(|s| s.to_string()).collect();
    Ok((flags, names))
}

fn check_name(name: &str, sec: DataSection) -> Result<(), String> {
    let path = std::path::Path::new(name);
    let safe = !name.is_empty()
        && path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !safe {
        return Err(format!("bad file name '{name}'"));
    }
    let meaningless = match sec {
        DataSection::File => name == "stdout" || name == "stderr",
        DataSection::Expect(_) | DataSection::Ignore(_) => name == "stdin",
    };
    if meaningless {
        return Err(format!("'{name}' is not meaningful here"));
    }
    Ok(())
}

fn data_section(
    p: &mut Parser<'_>,
    cur: &mut Test,
    sec: DataSection,
    args: &[&str],
    default_name: Option<&str>,
    lineno: usize,
) -> Result<(), ParseError> {
    let err = |message: String| ParseError {
        line: lineno,
        message,
    };
    let (flags, mut names) = parse_flags(args, sec).map_err(err)?;
    if names.is_empty() {
        names.extend(default_name.map(str::to_string));
    }
    for n in &names {
        check_name(n, sec).map_err(err)?;
    }

    let body_line = lineno + 1;
    let mut body = match flags.length {
        Some(len) => p.read_raw(len).map_err(err)?,
        None => p.read_body(),
    };
    if flags.delete_first {
        body = delete_first_chars(&body);
    }
    if flags.base64 {
        let compact: Vec<u8> = body
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        body = base64::engine::general_purpose::STANDARD
            .decode(&compact)
            .map_err(|e| err(format!("bad base64 data: {e}")))?;
    }

    match sec {
        DataSection::File => {
            for name in names {
                if cur.has_file(&name) {
                    return Err(err(format!("'%file {name}' already defined")));
                }
                cur.files.push(InputFile {
                    name,
                    data: body.clone(),
                    line: lineno,
                });
            }
        }
        DataSection::Expect(kind) => {
            for name in names {
                if !flags.alternate && cur.expects.iter().any(|e| e.name == name) {
                    return Err(err(format!(
                        "expectation for '{name}' already defined (use -a for alternates)"
                    )));
                }
                cur.expects.push(Expect {
                    name,
                    kind,
                    data: body.clone(),
                    line: lineno,
                    body_line,
                    alternate: flags.alternate,
                    case_insensitive: flags.case_insensitive,
                    ignore_whitespace: flags.whitespace,
                });
            }
        }
        DataSection::Ignore(kind) => {
            let lines: Vec<String> = String::from_utf8_lossy(&body)
                .lines()
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.is_empty())
                .collect();
            let targets: Vec<Option<String>> = if names.is_empty() {
                vec![None]
            } else {
                names
                    .into_iter()
                    .map(|n| (n != "all").then_some(n))
                    .collect()
            };
            for target in targets {
                cur.ignores.push(Ignore {
                    target,
                    kind,
                    lines: lines.clone(),
                    case_insensitive: flags.case_insensitive,
                    line: lineno,
                });
            }
        }
    }
    Ok(())
}

/// `-d`: drops the first character of every line, so bodies can contain
/// lines that start with `%`. Empty lines stay empty.
fn delete_first_chars(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    for line in body.split_inclusive(|&b| b == b'\n') {
        if line.first().is_some_and(|&b| b != b'\n') {
            // Drop a whole UTF-8 character, not just its first byte.
            let skip = match line[0] {
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                b if b >= 0xC0 => 2,
                _ => 1,
            }
            .min(line.len());
            out.extend_from_slice(&line[skip..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Test {
        let mut t = parse("t.clicktest", text.as_bytes()).unwrap();
        assert_eq!(t.len(), 1);
        t.remove(0)
    }

    #[test]
    fn basic_sections() {
        let t = one("%info\nabout\n%script\necho hi\n%stdin\nin\n%expect stdout\nhi\n");
        assert_eq!(t.info, "about\n");
        assert_eq!(t.script, "echo hi\n");
        assert_eq!(t.script_line, 3);
        assert_eq!(t.files.len(), 1);
        assert_eq!(t.files[0].name, "stdin");
        assert_eq!(t.files[0].data, b"in\n");
        assert_eq!(t.expects[0].name, "stdout");
        assert_eq!(t.expects[0].kind, ExpectKind::Pattern);
        assert_eq!(t.expects[0].data, b"hi\n");
        assert_eq!(t.expects[0].line, 7);
        assert_eq!(t.expects[0].body_line, 8);
    }

    #[test]
    fn keywords_case_insensitive_and_scripts_concatenate() {
        let t = one("%SCRIPT\na\n%Desc\nd\n%script\nb\n%STDOUT\nx\n%stderr\ny\n");
        assert_eq!(t.script, "a\nb\n");
        assert_eq!(t.desc, "d\n");
        assert_eq!(t.expects[0].name, "stdout");
        assert_eq!(t.expects[1].name, "stderr");
    }

    #[test]
    fn escaped_percent() {
        let t = one("%script\nprintf '%%s'\n\\%not a section\n%file f\n\\%x\n");
        assert_eq!(t.script, "printf '%%s'\n%not a section\n");
        assert_eq!(t.files[0].data, b"%x\n");
    }

    #[test]
    fn delete_first() {
        let t = one("%script\ntrue\n%file -d f\n %a\n\nxb\n%expect -d out\n.%y\n");
        assert_eq!(t.files[0].data, b"%a\n\nb\n");
        assert_eq!(t.expects[0].data, b"%y\n");
    }

    #[test]
    fn base64_body() {
        let t = one("%script\ntrue\n%file -e bin\nAAEC\n/w==\n");
        assert_eq!(t.files[0].data, vec![0, 1, 2, 255]);
        assert!(parse("t", b"%script\ntrue\n%file -e f\n!!!\n").is_err());
    }

    #[test]
    fn raw_length_section() {
        let text = "%script\ntrue\n%file +5 raw\n%a\nb\n\n%expectv +3 out\nxyz\n%stdout\nq\n";
        let t = one(text);
        assert_eq!(t.files[0].data, b"%a\nb\n");
        assert_eq!(t.expects[0].kind, ExpectKind::Verbatim);
        assert_eq!(t.expects[0].data, b"xyz");
        // The newline after "xyz" is garbage; the section after it still
        // gets the right line number.
        assert_eq!(t.expects[1].line, 9);
        assert!(parse("t", b"%script\ntrue\n%file +50 f\nshort\n").is_err());
    }

    #[test]
    fn multiple_names_and_defaults() {
        let t = one("%script\ntrue\n%expect a b\nx\n%file\nin\n%expectx\n.*\n");
        let names: Vec<_> = t.expects.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "stdout"]);
        assert_eq!(t.expects[2].kind, ExpectKind::Regex);
        assert_eq!(t.files[0].name, "stdin");
        assert_eq!(t.expected_names(), ["a", "b", "stdout"]);
    }

    #[test]
    fn alternates_and_duplicates() {
        let t = one("%script\ntrue\n%expect\na\n%expect -a\nb\n%expectv -a stdout\nc\n");
        assert_eq!(t.expects.len(), 3);
        assert!(t.expects[1].alternate);
        assert_eq!(t.expected_names(), ["stdout"]);
        let e = parse("t", b"%script\ntrue\n%stdout\na\n%stdout\nb\n").unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("already defined"));
        assert!(parse("t", b"%script\ntrue\n%file f\na\n%file f\nb\n").is_err());
    }

    #[test]
    fn flags() {
        let t = one("%script\ntrue\n%expect -a -i -w stdout\nx\n%expect -ai err\ny\n");
        let e = &t.expects[0];
        assert!(e.alternate && e.case_insensitive && e.ignore_whitespace);
        assert!(t.expects[1].alternate && t.expects[1].case_insensitive);
        assert!(parse("t", b"%script\ntrue\n%file -a f\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%expectv -i\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%expect -z\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%file stdout\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%expect stdin\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%file ../x\nx\n").is_err());
        assert!(parse("t", b"%script\ntrue\n%file /etc/x\nx\n").is_err());
    }

    #[test]
    fn require_and_ignores() {
        let t = one(
            "%require -q\ntest -x /bin/sh\n%script\ntrue\n%ignore\nfoo{{.*}}\n\n\
             %ignorex stderr\nbar.*\n%ignorev all\nlit\n",
        );
        let r = t.require.as_ref().unwrap();
        assert!(r.quiet);
        assert_eq!(r.line, 1);
        assert_eq!(r.script, "test -x /bin/sh\n");
        assert_eq!(t.ignores.len(), 3);
        assert_eq!(t.ignores[0].target, None);
        assert_eq!(t.ignores[0].kind, IgnoreKind::Pattern);
        assert_eq!(t.ignores[0].lines, ["foo{{.*}}"]);
        assert_eq!(t.ignores[1].target.as_deref(), Some("stderr"));
        assert_eq!(t.ignores[1].kind, IgnoreKind::Regex);
        assert_eq!(t.ignores[2].target, None);
        assert_eq!(t.ignores[2].kind, IgnoreKind::Literal);
    }

    #[test]
    fn eot_and_eof() {
        let text = "# comment\n%script\necho 1\n%eot\n%script\necho 2\n%eot\n\n%eof\n%script\nno\n";
        let tests = parse("f.clicktest", text.as_bytes()).unwrap();
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[0].name, "f.clicktest");
        assert_eq!(tests[1].name, "f.clicktest<2>");
        assert_eq!(tests[1].script, "echo 2\n");
        assert_eq!(tests[1].script_line, 5);
        assert_eq!(tests[1].line, 5);
    }

    #[test]
    fn errors() {
        let e = parse("t", b"%script\ntrue\n%bogus\nx\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(parse("t", b"%info\nno script\n").is_err());
        assert!(parse("t", b"% \n").is_err());
        assert!(parse("t", b"%script -x\ntrue\n").is_err());
        assert!(parse("t", b"").unwrap().is_empty());
    }
}
