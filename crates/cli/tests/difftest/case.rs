//! The `.case` file parser (format: tests/diff/README.md).

use std::fmt;

/// One input pcap: `%pcap NAME [linktype=..] [snaplen=..]` and its frames.
#[derive(Debug, Clone)]
pub struct PcapInput {
    pub name: String,
    pub linktype: u32,
    pub snaplen: u32,
    /// Frame lines, continuations joined, each with its line number.
    pub frames: Vec<(usize, String)>,
}

/// `%click-wrong NAME`, `%why`, `%expect NAME`: where Click is wrong for
/// output `name`, rclick must produce `expect` (text lines or frame lines).
#[derive(Debug, Clone)]
pub struct ClickWrong {
    pub name: String,
    pub why: String,
    pub expect: Vec<(usize, String)>,
    pub expect_linktype: u32,
}

#[derive(Debug, Clone)]
pub struct Filter {
    pub regex: fancy_regex::Regex,
    pub replacement: String,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub info: String,
    pub config: String,
    pub args: Vec<String>,
    pub pcaps: Vec<PcapInput>,
    pub files: Vec<(String, String)>,
    pub compare: Vec<String>,
    pub filters: Vec<Filter>,
    pub click_wrong: Vec<ClickWrong>,
}

#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

fn err<T>(line: usize, msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        msg: msg.into(),
    })
}

/// Splits a line into words; double-quoted words may hold spaces
/// (`\"` and `\\` escape inside them). Quotes are removed.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err("unterminated quote".into()),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e) => cur.push(e),
                            None => return Err("unterminated quote".into()),
                        },
                        Some(o) => cur.push(o),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

pub const COMPARE_WORDS: [&str; 3] = ["status", "stdout", "stderr"];

/// Parses link type names or numbers.
pub fn linktype(v: &str) -> Option<u32> {
    Some(match v {
        "ether" | "ethernet" | "en10mb" => 1,
        "raw" | "ip" => 101,
        "null" => 0,
        "loop" => 108,
        "sll" | "linux_sll" => 113,
        "fddi" => 10,
        "802_11" | "wifi" => 105,
        _ => return v.parse().ok(),
    })
}

fn header_options(line: usize, words: &[String]) -> Result<(u32, u32), ParseError> {
    let (mut lt, mut snap) = (1, 65535);
    for w in words {
        match w.split_once('=') {
            Some(("linktype", v)) => match linktype(v) {
                Some(l) => lt = l,
                None => return err(line, format!("unknown linktype '{v}'")),
            },
            Some(("snaplen", v)) => match v.parse() {
                Ok(s) => snap = s,
                Err(_) => return err(line, format!("bad snaplen '{v}'")),
            },
            _ => return err(line, format!("unknown option '{w}'")),
        }
    }
    Ok((lt, snap))
}

/// Body lines of a section: (line number, text), trailing blank lines
/// removed.
type Body = Vec<(usize, String)>;

fn trimmed(mut body: Body) -> Body {
    while body.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        body.pop();
    }
    body
}

fn text(body: &Body) -> String {
    let mut s = String::new();
    for (_, l) in body {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// Joins lines ending in `\` with the next; drops blank lines.
fn frame_lines(body: &Body) -> Body {
    let mut out: Body = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (n, l) in body {
        let (num, mut acc) = pending.take().unwrap_or((*n, String::new()));
        let t = l.trim_end();
        if let Some(stripped) = t.strip_suffix('\\') {
            acc.push_str(stripped);
            acc.push(' ');
            pending = Some((num, acc));
        } else {
            acc.push_str(t);
            if !acc.trim().is_empty() {
                out.push((num, acc));
            }
        }
    }
    if let Some((num, acc)) = pending {
        if !acc.trim().is_empty() {
            out.push((num, acc));
        }
    }
    out
}

pub fn parse(name: &str, src: &str) -> Result<Case, ParseError> {
    // Sections: (line, header words, body)
    let mut sections: Vec<(usize, String, String, Body)> = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let n = i + 1;
        if line.starts_with("##") {
            continue;
        }
        if let Some(rest) = line.strip_prefix('%') {
            let rest = rest.trim_end();
            let (kw, arg) = match rest.find(char::is_whitespace) {
                Some(p) => (&rest[..p], rest[p..].trim()),
                None => (rest, ""),
            };
            sections.push((n, kw.to_string(), arg.to_string(), Vec::new()));
        } else if let Some(s) = sections.last_mut() {
            s.3.push((n, line.to_string()));
        } else if !line.trim().is_empty() {
            return err(n, "text before the first % section");
        }
    }
    let mut case = Case {
        name: name.to_string(),
        info: String::new(),
        config: String::new(),
        args: Vec::new(),
        pcaps: Vec::new(),
        files: Vec::new(),
        compare: Vec::new(),
        filters: Vec::new(),
        click_wrong: Vec::new(),
    };
    let (mut have_info, mut have_config, mut have_compare) = (false, false, false);
    let mut outputs_named: Vec<String> = Vec::new();
    let mut pending_wrong: Option<ClickWrong> = None;
    for (n, kw, arg, body) in sections {
        let body = trimmed(body);
        let one_line = |what: &str| -> Result<String, ParseError> {
            let mut parts: Vec<String> = Vec::new();
            if !arg.is_empty() {
                parts.push(arg.clone());
            }
            for (_, l) in &body {
                if !l.trim().is_empty() {
                    parts.push(l.trim().to_string());
                }
            }
            if parts.len() > 1 {
                return err(n, format!("%{what} takes one line"));
            }
            Ok(parts.pop().unwrap_or_default())
        };
        match kw.as_str() {
            "info" => {
                let t = text(&body);
                if t.trim().is_empty() && arg.is_empty() {
                    return err(n, "%info is empty");
                }
                case.info = format!("{arg}{}{t}", if arg.is_empty() { "" } else { "\n" });
                have_info = true;
            }
            "config" => {
                if have_config {
                    return err(n, "second %config");
                }
                case.config = text(&body);
                have_config = true;
            }
            "args" => {
                let l = one_line("args")?;
                case.args = split_words(&l).map_err(|e| ParseError { line: n, msg: e })?;
            }
            "pcap" => {
                let words = split_words(&arg).map_err(|e| ParseError { line: n, msg: e })?;
                let Some(fname) = words.first() else {
                    return err(n, "%pcap needs a file name");
                };
                let (linktype, snaplen) = header_options(n, &words[1..])?;
                case.pcaps.push(PcapInput {
                    name: fname.clone(),
                    linktype,
                    snaplen,
                    frames: frame_lines(&body),
                });
            }
            "file" => {
                if arg.is_empty() || arg.contains('/') {
                    return err(n, "%file needs a plain file name");
                }
                case.files.push((arg.clone(), text(&body)));
            }
            "compare" => {
                let l = one_line("compare")?;
                for w in l.split_whitespace() {
                    if w.contains('/') || w == "config.click" {
                        return err(n, format!("cannot compare '{w}'"));
                    }
                    outputs_named.push(w.to_string());
                    case.compare.push(w.to_string());
                }
                have_compare = true;
            }
            "filter" => {
                let Some((re, rep)) = arg.split_once(" => ") else {
                    return err(n, "%filter REGEX => REPLACEMENT");
                };
                if !body.is_empty() {
                    return err(n, "%filter has no body");
                }
                let regex = fancy_regex::Regex::new(re).map_err(|e| ParseError {
                    line: n,
                    msg: format!("bad regex: {e}"),
                })?;
                case.filters.push(Filter {
                    regex,
                    replacement: rep.to_string(),
                });
            }
            "click-wrong" => {
                if pending_wrong.is_some() {
                    return err(n, "%click-wrong without %why/%expect before it");
                }
                if arg.is_empty() {
                    return err(n, "%click-wrong needs an output name");
                }
                if !body.is_empty() {
                    return err(n, "%click-wrong has no body (say why in %why)");
                }
                pending_wrong = Some(ClickWrong {
                    name: arg.clone(),
                    why: String::new(),
                    expect: Vec::new(),
                    expect_linktype: 1,
                });
            }
            "why" => {
                let Some(w) = pending_wrong.as_mut() else {
                    return err(n, "%why outside a %click-wrong");
                };
                w.why = format!("{arg} {}", text(&body)).trim().to_string();
                if w.why.is_empty() {
                    return err(n, "%why is empty");
                }
            }
            "expect" => {
                let words = split_words(&arg).map_err(|e| ParseError { line: n, msg: e })?;
                let Some(mut w) = pending_wrong.take() else {
                    return err(n, "%expect outside a %click-wrong");
                };
                if words.first() != Some(&w.name) {
                    return err(n, format!("%expect names '{}', not '{}'", arg, w.name));
                }
                if w.why.is_empty() {
                    return err(n, "%click-wrong needs a %why before %expect");
                }
                w.expect_linktype = header_options(n, &words[1..])?.0;
                w.expect = body;
                case.click_wrong.push(w);
            }
            other => return err(n, format!("unknown section %{other}")),
        }
    }
    if let Some(w) = pending_wrong {
        return err(0, format!("%click-wrong {} lacks its %why/%expect", w.name));
    }
    if !have_info {
        return err(0, "no %info");
    }
    if !have_config {
        return err(0, "no %config");
    }
    if !have_compare {
        case.compare = vec!["status".into(), "stdout".into()];
    }
    for w in &case.click_wrong {
        if !case.compare.contains(&w.name) {
            return err(0, format!("%click-wrong {} is not in %compare", w.name));
        }
    }
    for p in &case.pcaps {
        for (line, f) in &p.frames {
            crate::difftest::frames::parse_frame(f).map_err(|e| ParseError {
                line: *line,
                msg: e,
            })?;
        }
    }
    for w in &case.click_wrong {
        if !COMPARE_WORDS.contains(&w.name.as_str()) && !w.expect.is_empty() && looks_like_frames(w)
        {
            for (line, f) in frame_lines(&w.expect) {
                crate::difftest::frames::parse_frame(&f)
                    .map_err(|e| ParseError { line, msg: e })?;
            }
        }
    }
    Ok(case)
}

/// An `%expect` for an output whose name ends in `.pcap`/`.dump` holds
/// frames in the generator language; any other, literal text lines.
pub fn looks_like_frames(w: &ClickWrong) -> bool {
    is_pcap_name(&w.name)
}

pub fn is_pcap_name(name: &str) -> bool {
    name.ends_with(".pcap") || name.ends_with(".dump") || name.ends_with(".tcpdump")
}

pub fn expect_frames(w: &ClickWrong) -> Body {
    frame_lines(&w.expect)
}
