//! Tokens of the Click language, produced on demand: configuration strings
//! are not tokens but raw text, so the parser asks for them explicitly
//! ([`Lexer::lex_config`]) right after an opening parenthesis.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::args::{
    is_space, skip_backslash, skip_comment, skip_double_quote, skip_single_quote, unquote_string,
};
use crate::{Diagnostic, Landmark, Severity};

/// A source position: the landmark users see plus where the bytes are, so
/// diagnostics can quote the line.
#[derive(Clone, Debug)]
pub(crate) struct Loc {
    pub lm: Landmark,
    pub fid: u32,
    pub off: u32,
}

/// Sources read so far, indexed by `Loc::fid`.
#[derive(Default)]
pub(crate) struct Sources {
    pub texts: Vec<Arc<str>>,
}

impl Sources {
    pub fn add(&mut self, text: Arc<str>) -> u32 {
        self.texts.push(text);
        (self.texts.len() - 1) as u32
    }

    /// Build a diagnostic at `loc`, quoting its physical source line.
    pub fn diag(&self, sev: Severity, loc: &Loc, msg: impl Into<String>) -> Diagnostic {
        make_diag(
            self.texts.get(loc.fid as usize).map(|t| &**t),
            sev,
            loc,
            msg,
        )
    }
}

/// Build a diagnostic at `loc`, quoting its line from `text` when given.
pub(crate) fn make_diag(
    text: Option<&str>,
    sev: Severity,
    loc: &Loc,
    msg: impl Into<String>,
) -> Diagnostic {
    {
        let d = Diagnostic {
            severity: sev,
            landmark: loc.lm.clone(),
            message: msg.into(),
            source_line: None,
            column: None,
            hint: None,
            plain_landmark: true,
        };
        match text {
            Some(text) => {
                let (line, col) = line_at(text, loc.off as usize);
                d.with_source(line, Some(col))
            }
            None => d,
        }
    }
}

/// The physical line around `off` and the column of `off` in it. Very long
/// lines are cut to a window around the offset, so quoting stays cheap.
fn line_at(text: &str, off: usize) -> (String, usize) {
    const WINDOW: usize = 160;
    let b = text.as_bytes();
    let mut off = off.min(b.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let lo = off.saturating_sub(WINDOW);
    let hi = (off + WINDOW).min(b.len());
    let mut start = b[lo..off]
        .iter()
        .rposition(|&c| c == b'\n' || c == b'\r')
        .map_or(lo, |p| lo + p + 1);
    let mut end = b[off..hi]
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .map_or(hi, |p| off + p);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let start = start.min(off);
    (text[start..end.max(off)].to_string(), off - start)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tk {
    Ident,
    Var,
    Arrow,
    DArrow,
    DColon,
    DBar,
    Dots,
    ElementClass,
    Require,
    Provide,
    Define,
    /// Any other single character (`;`, `,`, `(`, ...); the text holds it.
    Char(u8),
    Eof,
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub kind: Tk,
    pub text: String,
    pub loc: Loc,
    /// Lexer state before this token, so that pushed-back tokens can be
    /// un-read when the parser switches to raw configuration text.
    save: (usize, u32, Arc<str>),
}

impl Token {
    pub fn is(&self, c: u8) -> bool {
        self.kind == Tk::Char(c)
    }
}

pub(crate) struct Lexer {
    src: Arc<str>,
    pos: usize,
    fid: u32,
    file: Arc<str>,
    orig_file: Arc<str>,
    line: u32,
    pending: VecDeque<Token>,
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'@'
}

impl Lexer {
    pub fn new(src: Arc<str>, file: Arc<str>, fid: u32) -> Self {
        Lexer {
            src,
            pos: 0,
            fid,
            orig_file: file.clone(),
            file,
            line: 1,
            pending: VecDeque::new(),
        }
    }

    pub fn diag(&self, sev: Severity, loc: &Loc, msg: impl Into<String>) -> Diagnostic {
        make_diag(Some(&self.src), sev, loc, msg)
    }

    pub fn loc_here(&self) -> Loc {
        Loc {
            lm: Landmark {
                file: self.file.clone(),
                line: self.line,
            },
            fid: self.fid,
            off: self.pos as u32,
        }
    }

    fn loc_at(&self, off: usize) -> Loc {
        Loc {
            lm: Landmark {
                file: self.file.clone(),
                line: self.line,
            },
            fid: self.fid,
            off: off as u32,
        }
    }

    pub fn unlex(&mut self, t: Token) {
        self.pending.push_front(t);
    }

    pub fn peek(&mut self, diags: &mut Vec<Diagnostic>) -> &Token {
        if self.pending.is_empty() {
            let t = self.lex_raw(diags);
            self.pending.push_back(t);
        }
        &self.pending[0]
    }

    pub fn next(&mut self, diags: &mut Vec<Diagnostic>) -> Token {
        match self.pending.pop_front() {
            Some(t) => t,
            None => self.lex_raw(diags),
        }
    }

    fn newline_at(&mut self, i: usize) -> usize {
        let b = self.src.as_bytes();
        self.line = self.line.wrapping_add(1);
        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
            i + 2
        } else {
            i + 1
        }
    }

    /// Skip the `//` comment starting at `i`, through the end of the line.
    fn skip_line(&mut self, i: usize) -> usize {
        let b = self.src.as_bytes();
        let end = skip_comment(b, i);
        if end > i && matches!(b[end - 1], b'\n' | b'\r') {
            self.line = self.line.wrapping_add(1);
        }
        end
    }

    fn count_lines(&mut self, from: usize, to: usize) {
        let b = self.src.as_bytes();
        let mut i = from;
        while i < to {
            match b[i] {
                b'\n' => self.line = self.line.wrapping_add(1),
                b'\r' => {
                    self.line = self.line.wrapping_add(1);
                    if i + 1 < to && b[i + 1] == b'\n' {
                        i += 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Handle a `#` line starting at `i`; returns the position of the line
    /// terminator (not consumed), so the caller counts the line.
    fn line_directive(&mut self, i: usize, diags: &mut Vec<Diagnostic>) -> usize {
        let b = self.src.as_bytes();
        let mut s = i + 1;
        while s < b.len() && matches!(b[s], b' ' | b'\t') {
            s += 1;
        }
        if b[s..].starts_with(b"line") && matches!(b.get(s + 4), Some(b' ') | Some(b'\t')) {
            s += 5;
            while s < b.len() && matches!(b[s], b' ' | b'\t') {
                s += 1;
            }
        }
        if s >= b.len() || !b[s].is_ascii_digit() {
            diags.push(self.diag(
                Severity::Error,
                &self.loc_at(i),
                "unknown preprocessor directive",
            ));
            let mut e = s;
            while e < b.len() && !matches!(b[e], b'\n' | b'\r') {
                e += 1;
            }
            return e;
        }
        let mut n: u32 = 0;
        while s < b.len() && b[s].is_ascii_digit() {
            n = n.saturating_mul(10).saturating_add(u32::from(b[s] - b'0'));
            s += 1;
        }
        // The terminating newline will count one more line.
        self.line = n.wrapping_sub(1);
        while s < b.len() && matches!(b[s], b' ' | b'\t') {
            s += 1;
        }
        if s < b.len() && b[s] == b'"' {
            let start = s + 1;
            s += 1;
            while s < b.len() && !matches!(b[s], b'"' | b'\n' | b'\r') {
                if b[s] == b'\\' && s + 1 < b.len() && !matches!(b[s + 1], b'\n' | b'\r') {
                    s += 1;
                }
                s += 1;
            }
            let name = unquote_string(&format!("\"{}\"", &self.src[start..s.min(b.len())]));
            self.file = if name.is_empty() {
                self.orig_file.clone()
            } else {
                Arc::from(name)
            };
        }
        while s < b.len() && !matches!(b[s], b'\n' | b'\r') {
            s += 1;
        }
        s
    }

    fn lex_raw(&mut self, diags: &mut Vec<Diagnostic>) -> Token {
        let save = (self.pos, self.line, self.file.clone());
        let src = self.src.clone();
        let b = src.as_bytes();
        let mut s = self.pos;
        loop {
            while s < b.len() && is_space(b[s]) {
                if matches!(b[s], b'\n' | b'\r') {
                    s = self.newline_at(s);
                } else {
                    s += 1;
                }
            }
            if s >= b.len() {
                self.pos = b.len();
                return Token {
                    kind: Tk::Eof,
                    text: String::new(),
                    loc: self.loc_at(s),
                    save,
                };
            }
            if b[s] == b'/' && s + 1 < b.len() && b[s + 1] == b'/' {
                s = self.skip_line(s);
            } else if b[s] == b'/' && s + 1 < b.len() && b[s + 1] == b'*' {
                let end = skip_comment(b, s);
                self.count_lines(s, end);
                s = end;
            } else if b[s] == b'#' && (s == 0 || matches!(b[s - 1], b'\n' | b'\r')) {
                s = self.line_directive(s, diags);
            } else {
                break;
            }
        }
        let start = s;
        let loc = self.loc_at(start);
        let tok = |kind: Tk, end: usize, this: &mut Lexer| {
            this.pos = end;
            Token {
                kind,
                text: this.src[start..end].to_string(),
                loc: loc.clone(),
                save: save.clone(),
            }
        };
        if is_word(b[s]) {
            s += 1;
            loop {
                while s < b.len() && is_word(b[s]) {
                    s += 1;
                }
                if s + 1 < b.len() && b[s] == b'/' && is_word(b[s + 1]) {
                    s += 1;
                } else {
                    break;
                }
            }
            let kind = match &self.src[start..s] {
                "elementclass" => Tk::ElementClass,
                "require" => Tk::Require,
                "provide" => Tk::Provide,
                "define" => Tk::Define,
                _ => Tk::Ident,
            };
            return tok(kind, s, self);
        }
        if b[s] == b'$' {
            let mut e = s + 1;
            while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                e += 1;
            }
            if e > s + 1 {
                self.pos = e;
                return Token {
                    kind: Tk::Var,
                    text: self.src[s + 1..e].to_string(),
                    loc,
                    save,
                };
            }
        }
        if s + 1 < b.len() {
            let two = match (b[s], b[s + 1]) {
                (b'-', b'>') => Some(Tk::Arrow),
                (b'=', b'>') => Some(Tk::DArrow),
                (b':', b':') => Some(Tk::DColon),
                (b'|', b'|') => Some(Tk::DBar),
                _ => None,
            };
            if let Some(k) = two {
                return tok(k, s + 2, self);
            }
        }
        if b[s..].starts_with(b"...") {
            return tok(Tk::Dots, s + 3, self);
        }
        let len = utf8_len(b[s]).min(b.len() - s);
        let mut end = s + len;
        while !self.src.is_char_boundary(end) {
            end += 1;
        }
        tok(Tk::Char(b[s]), end, self)
    }

    /// Read a configuration string: called just after `(`; stops before the
    /// matching `)` (or at end of input). Parentheses inside quotes,
    /// comments and `\<...>` don't count. Line directives at the start of a
    /// line are honoured and removed from the text.
    pub fn lex_config(&mut self, diags: &mut Vec<Diagnostic>) -> (String, Loc) {
        if let Some(t) = self.pending.front() {
            // Un-read tokens the parser looked ahead at.
            let (pos, line, file) = t.save.clone();
            self.pos = pos;
            self.line = line;
            self.file = file;
            self.pending.clear();
        }
        let loc = self.loc_here();
        let src = self.src.clone();
        let b = src.as_bytes();
        let mut out = String::new();
        let mut seg = self.pos;
        let mut s = self.pos;
        let mut depth = 1usize;
        while s < b.len() {
            match b[s] {
                b'(' => {
                    depth += 1;
                    s += 1;
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    s += 1;
                }
                b'\n' | b'\r' => s = self.newline_at(s),
                b'#' if s > 0 && matches!(b[s - 1], b'\n' | b'\r') => {
                    out.push_str(&src[seg..s]);
                    s = self.line_directive(s, diags);
                    seg = s;
                }
                b'/' if b.get(s + 1) == Some(&b'/') => s = self.skip_line(s),
                b'/' if b.get(s + 1) == Some(&b'*') => {
                    let end = skip_comment(b, s);
                    self.count_lines(s, end);
                    s = end;
                }
                b'"' => {
                    let end = skip_double_quote(b, s);
                    self.count_lines(s, end);
                    s = end;
                }
                b'\'' => {
                    let end = skip_single_quote(b, s);
                    self.count_lines(s, end);
                    s = end;
                }
                b'\\' if b.get(s + 1) == Some(&b'<') => {
                    let end = skip_backslash(b, s);
                    self.count_lines(s, end);
                    s = end;
                }
                _ => s += 1,
            }
        }
        let s = s.min(b.len());
        out.push_str(&src[seg..s]);
        self.pos = s;
        (out, loc)
    }
}

/// Length of the UTF-8 sequence that `first` starts (1 for a stray
/// continuation byte).
fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<(Tk, String, u32)> {
        let mut d = Vec::new();
        let mut l = Lexer::new(Arc::from(s), Arc::from("f"), 0);
        let mut v = Vec::new();
        loop {
            let t = l.next(&mut d);
            if t.kind == Tk::Eof {
                return v;
            }
            v.push((t.kind, t.text, t.loc.lm.line));
        }
    }

    #[test]
    fn identifiers_and_operators() {
        let t = toks("a/b c//d\ne/ f@1 -> => :: || ... $x ${");
        let k: Vec<_> = t.iter().map(|x| (x.0, x.1.as_str())).collect();
        assert_eq!(
            k,
            vec![
                (Tk::Ident, "a/b"),
                (Tk::Ident, "c"),
                (Tk::Ident, "e"),
                (Tk::Char(b'/'), "/"),
                (Tk::Ident, "f@1"),
                (Tk::Arrow, "->"),
                (Tk::DArrow, "=>"),
                (Tk::DColon, "::"),
                (Tk::DBar, "||"),
                (Tk::Dots, "..."),
                (Tk::Var, "x"),
                (Tk::Char(b'$'), "$"),
                (Tk::Char(b'{'), "{"),
            ]
        );
        assert_eq!(t[2].2, 2);
    }

    #[test]
    fn line_endings_and_directives() {
        let t = toks("a\r\nb\rc\n/* x\n */ d\n# 10 \"g.click\"\ne\n#line 3\nf");
        let lines: Vec<u32> = t.iter().map(|x| x.2).collect();
        assert_eq!(lines, vec![1, 2, 3, 5, 10, 3]);
    }

    #[test]
    fn config_strings() {
        let mut d = Vec::new();
        let src = "a(1, \")\" /* ) */ (x) \\<29>) b";
        let mut l = Lexer::new(Arc::from(src), Arc::from("f"), 0);
        assert_eq!(l.next(&mut d).text, "a");
        assert!(l.next(&mut d).is(b'('));
        let (c, _) = l.lex_config(&mut d);
        assert_eq!(c, "1, \")\" /* ) */ (x) \\<29>");
        assert!(l.next(&mut d).is(b')'));
        assert_eq!(l.next(&mut d).text, "b");
    }
}
