//! Click's argument lexing, the one implementation for the whole
//! workspace: the language uses it for `define`, `require`, compound
//! arguments and scanning configuration strings, and rclick-core's `conf`
//! for configuring elements.
//!
//! Splitting configuration strings into arguments and words, and removing
//! comments and quotes, as Click's `cp_argvec`, `cp_spacevec`,
//! `cp_uncomment`, `cp_unquote` and `cp_string` do; and the reverse,
//! quoting a value so it reads back as itself.
//!
//! All scanning works on bytes: every delimiter is ASCII, so cutting at a
//! delimiter never splits a UTF-8 sequence, and unquoting may legitimately
//! produce arbitrary bytes (`\xFF`, `\<ff>`). The `skip_*` helpers take the
//! index of the character that opens what they skip (`/`, `\\`, a quote)
//! and return the index just past it.

/// Click's notion of white space: C `isspace` in the "C" locale.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// [`is_space`] for a `char`.
pub(crate) fn is_space_char(c: char) -> bool {
    c.is_ascii() && is_space(c as u8)
}

pub(crate) fn is_comment_start(s: &[u8], i: usize) -> bool {
    s[i] == b'/' && i + 1 < s.len() && (s[i + 1] == b'/' || s[i + 1] == b'*')
}

/// Returns the index just past the comment that starts at `i`.
/// A line comment swallows its newline (`\n`, `\r` or `\r\n`); an unclosed
/// block comment runs to the end.
pub(crate) fn skip_comment(s: &[u8], i: usize) -> usize {
    let mut j = i + 2;
    if s[i + 1] == b'/' {
        while j < s.len() && s[j] != b'\n' && s[j] != b'\r' {
            j += 1;
        }
        if j + 1 < s.len() && s[j] == b'\r' && s[j + 1] == b'\n' {
            j += 1;
        }
        (j + 1).min(s.len())
    } else {
        while j + 1 < s.len() && !(s[j] == b'*' && s[j + 1] == b'/') {
            j += 1;
        }
        (j + 2).min(s.len())
    }
}

/// Skips a backslash sequence starting at `i`, including a whole `\<...>`
/// block (whose contents may hold comments that could contain `>`).
pub(crate) fn skip_backslash(s: &[u8], i: usize) -> usize {
    if i + 1 >= s.len() {
        i + 1
    } else if s[i + 1] == b'<' {
        let mut j = i + 2;
        while j < s.len() {
            if s[j] == b'>' {
                return j + 1;
            } else if is_comment_start(s, j) {
                j = skip_comment(s, j);
            } else {
                j += 1;
            }
        }
        s.len()
    } else if s[i + 1] == b'\r' && i + 2 < s.len() && s[i + 2] == b'\n' {
        i + 3
    } else {
        i + 2
    }
}

pub(crate) fn skip_double_quote(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            b'\\' => j = skip_backslash(s, j),
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    s.len()
}

pub(crate) fn skip_single_quote(s: &[u8], i: usize) -> usize {
    match s[i + 1..].iter().position(|&b| b == b'\'') {
        Some(p) => i + 1 + p + 1,
        None => s.len(),
    }
}

fn skip_comment_space(s: &[u8], mut i: usize) -> usize {
    while i < s.len() {
        if is_space(s[i]) {
            i += 1;
        } else if is_comment_start(s, i) {
            i = skip_comment(s, i);
        } else {
            break;
        }
    }
    i
}

/// Skips one quoted/unquoted token (a quote, a `\<...>` block, or one byte).
fn skip_token(s: &[u8], i: usize) -> usize {
    match s[i] {
        b'\'' => skip_single_quote(s, i),
        b'"' => skip_double_quote(s, i),
        b'\\' if i + 1 < s.len() && s[i + 1] == b'<' => skip_backslash(s, i),
        _ => i + 1,
    }
}

/// Uncomments from `start`, stopping at a top-level comma when
/// `stop_at_comma`. Runs of space touching a comment collapse into one
/// space; other inner spacing is preserved (as Click does, so that quoted
/// text round-trips). Returns the text and the stop position.
fn partial_uncomment(s: &[u8], start: usize, stop_at_comma: bool) -> (Vec<u8>, usize) {
    let mut i = skip_comment_space(s, start);
    let mut out = Vec::new();
    let (mut left, mut right) = (i, i);
    let mut closed = false;
    while i < s.len() {
        if is_space(s[i]) {
            i += 1;
        } else if is_comment_start(s, i) {
            i = skip_comment(s, i);
            closed = true;
        } else if s[i] == b',' && stop_at_comma {
            break;
        } else {
            if closed {
                out.extend_from_slice(&s[left..right]);
                out.push(b' ');
                left = i;
                closed = false;
            }
            i = skip_token(s, i);
            right = i;
        }
    }
    out.extend_from_slice(&s[left..right]);
    (out, i)
}

fn bytes_to_string(b: Vec<u8>) -> String {
    match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Splits a configuration string into arguments at top-level commas
/// (Click's `cp_argvec`).
///
/// Double and single quotes and `\<...>` blocks protect commas; parentheses
/// do not. Comments become a single space, each argument is trimmed, and an
/// empty final argument is dropped: `""` gives `[]`, `"a,"` gives `["a"]`,
/// `"a,,b"` gives `["a", "", "b"]`.
pub fn split_config_args(config: &str) -> Vec<String> {
    let s = config.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        let (arg, stop) = partial_uncomment(s, pos, true);
        pos = stop;
        if !arg.is_empty() || pos < s.len() {
            out.push(bytes_to_string(arg));
        }
        pos += 1;
    }
    out
}

/// Splits a string into words at unquoted white space, dropping comments
/// (Click's `cp_spacevec`). Quotes are kept in the words.
pub fn split_words(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_comment_space(b, 0);
    while i < b.len() {
        let start = i;
        while i < b.len() && !is_space(b[i]) && !is_comment_start(b, i) {
            i = skip_token(b, i);
        }
        out.push(bytes_to_string(b[start..i].to_vec()));
        i = skip_comment_space(b, i);
    }
    out
}

/// Removes comments and trims the string; runs of space next to a comment
/// become one space (Click's `cp_uncomment`).
pub fn uncomment(s: &str) -> String {
    bytes_to_string(partial_uncomment(s.as_bytes(), 0, false).0)
}

fn hex_value(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// Expands the backslash escape at `i` (inside double quotes, or a bare
/// `\<...>`), appending to `out`; returns the index after it.
fn process_backslash(s: &[u8], i: usize, out: &mut Vec<u8>) -> usize {
    if i + 1 >= s.len() {
        out.push(b'\\');
        return s.len();
    }
    let simple = |c: u8| -> Option<u8> {
        Some(match c {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            _ => return None,
        })
    };
    match s[i + 1] {
        b'\r' if i + 2 < s.len() && s[i + 2] == b'\n' => i + 3,
        b'\r' | b'\n' => i + 2,
        b'0'..=b'7' => {
            let mut j = i + 1;
            let mut c: u32 = 0;
            while j < s.len() && j < i + 4 && (b'0'..=b'7').contains(&s[j]) {
                c = c * 8 + u32::from(s[j] - b'0');
                j += 1;
            }
            // Like C, \777 keeps only the low byte.
            out.push(c as u8);
            j
        }
        b'x' => {
            let mut j = i + 2;
            let mut c: u32 = 0;
            while let Some(d) = s.get(j).and_then(|&b| hex_value(b)) {
                c = (c << 4 | d) & 0xff;
                j += 1;
            }
            out.push(c as u8);
            j
        }
        b'<' => {
            let mut j = i + 2;
            let mut c: u32 = 0;
            let mut nibbles = 0;
            while j < s.len() {
                if s[j] == b'>' {
                    return j + 1;
                } else if let Some(d) = hex_value(s[j]) {
                    c = c << 4 | d;
                    nibbles += 1;
                    if nibbles == 2 {
                        out.push(c as u8);
                        c = 0;
                        nibbles = 0;
                    }
                } else if is_comment_start(s, j) {
                    j = skip_comment(s, j);
                    continue;
                }
                // Anything else (spaces, stray characters) is ignored.
                j += 1;
            }
            s.len()
        }
        c => {
            if let Some(e) = simple(c) {
                out.push(e);
            } else {
                out.push(c);
            }
            i + 2
        }
    }
}

/// Removes one level of quoting, returning raw bytes (Click's `cp_unquote`).
///
/// Comments are removed first (see [`uncomment`]). `"..."` expands C escapes
/// (`\n \t \r \\ \" \' \a \b \f \v`, octal `\NNN`, `\xHH`), `\<hex>` blocks
/// (spaces and comments allowed inside) and drops backslash-newline;
/// `'...'` is literal; a bare `\<...>` outside quotes is data too. Adjacent
/// pieces concatenate: `"a"'b'c` gives `abc`. An unterminated quote runs to
/// the end of the string.
pub fn unquote(s: &str) -> Vec<u8> {
    let (x, _) = partial_uncomment(s.as_bytes(), 0, false);
    let mut out = Vec::with_capacity(x.len());
    let mut quote: u8 = 0;
    let mut start = 0;
    let mut i = 0;
    while i < x.len() {
        match x[i] {
            q @ (b'"' | b'\'') => {
                if quote == 0 || quote == q {
                    out.extend_from_slice(&x[start..i]);
                    start = i + 1;
                    quote = if quote == 0 { q } else { 0 };
                }
                i += 1;
            }
            b'\\' if i + 1 < x.len() && (quote == b'"' || (quote == 0 && x[i + 1] == b'<')) => {
                out.extend_from_slice(&x[start..i]);
                i = process_backslash(&x, i, &mut out);
                start = i;
            }
            _ => i += 1,
        }
    }
    out.extend_from_slice(&x[start.min(x.len())..]);
    out
}

/// [`unquote`] as a `String`; invalid UTF-8 is replaced by U+FFFD.
pub fn unquote_string(s: &str) -> String {
    bytes_to_string(unquote(s))
}

/// Index just past the first "string" token: everything up to the first
/// unquoted white space.
pub fn string_token_end(s: &[u8]) -> usize {
    let mut i = 0;
    while i < s.len() && !is_space(s[i]) {
        i = match s[i] {
            b'\\' if i + 1 < s.len() && s[i + 1] != b'<' => i + 1,
            _ => skip_token(s, i),
        };
    }
    i.min(s.len())
}

/// Quote `s` so that it reads back as itself inside double quotes, without
/// the surrounding quotes (Click's `cp_expand_in_quotes`).
pub(crate) fn escape_in_double_quotes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '$' => out.push_str("\\$"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Quote `s` for use as a single word if it is not one already.
pub(crate) fn quote_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/' | b'@' | b':' | b'+')
        });
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", escape_in_double_quotes(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn split_basic() {
        assert_eq!(split_config_args(""), Vec::<String>::new());
        assert_eq!(split_config_args("   "), Vec::<String>::new());
        assert_eq!(split_config_args("a"), v(&["a"]));
        assert_eq!(split_config_args("a,"), v(&["a"]));
        assert_eq!(split_config_args("a, "), v(&["a"]));
        assert_eq!(split_config_args("a,,b"), v(&["a", "", "b"]));
        assert_eq!(split_config_args(","), v(&[""]));
        assert_eq!(split_config_args(",a"), v(&["", "a"]));
        assert_eq!(split_config_args("a, b, c"), v(&["a", "b", "c"]));
        assert_eq!(split_config_args("  a  b ,c"), v(&["a  b", "c"]));
    }

    #[test]
    fn split_quotes_and_parens() {
        assert_eq!(split_config_args("\"x, y\" // ?"), v(&["\"x, y\""]));
        assert_eq!(split_config_args("'x, y', z"), v(&["'x, y'", "z"]));
        assert_eq!(split_config_args("f(a, b)"), v(&["f(a", "b)"]));
        assert_eq!(
            split_config_args("\"a\\\", b\", c"),
            v(&["\"a\\\", b\"", "c"])
        );
        assert_eq!(split_config_args("\\<00, 01>, c"), v(&["\\<00, 01>", "c"]));
        assert_eq!(
            split_config_args("\"unterminated, x"),
            v(&["\"unterminated, x"])
        );
    }

    #[test]
    fn split_comments() {
        assert_eq!(split_config_args("  a /*?*/ b,  c, "), v(&["a b", "c"]));
        assert_eq!(split_config_args("a // c, d\n, e"), v(&["a", "e"]));
        assert_eq!(split_config_args("a /* , */, b"), v(&["a", "b"]));
        assert_eq!(
            split_config_args("\"/* x */\", b"),
            v(&["\"/* x */\"", "b"])
        );
        assert_eq!(split_config_args("a/*x*/b"), v(&["a b"]));
        assert_eq!(split_config_args("a /* unterminated"), v(&["a"]));
        assert_eq!(split_config_args("a //"), v(&["a"]));
        assert_eq!(split_config_args("/"), v(&["/"]));
        assert_eq!(
            split_config_args("\\<0 /* , > */ 1>, x"),
            v(&["\\<0 /* , > */ 1>", "x"])
        );
    }

    #[test]
    fn words() {
        assert_eq!(split_words("a  b, c"), v(&["a", "b,", "c"]));
        assert_eq!(split_words("  'a /*?*/ b'c"), v(&["'a /*?*/ b'c"]));
        assert_eq!(split_words("a/*x*/b // y"), v(&["a", "b"]));
        assert_eq!(split_words(""), Vec::<String>::new());
    }

    #[test]
    fn uncomment_examples() {
        assert_eq!(uncomment("  a   b  "), "a   b");
        assert_eq!(uncomment("  a /* Comment */       b  "), "a b");
        assert_eq!(uncomment("  \" /*???  */ \"  "), "\" /*???  */ \"");
    }

    #[test]
    fn unquote_basic() {
        assert_eq!(unquote_string("abc"), "abc");
        assert_eq!(unquote_string("\"a\"'b'c"), "abc");
        assert_eq!(unquote_string("'\\n'"), "\\n");
        assert_eq!(
            unquote_string("\"\\n\" abc /* 123 */ '/* def */'"),
            "\n abc /* def */"
        );
        assert_eq!(unquote_string("\"\""), "");
        assert_eq!(unquote_string("''"), "");
        assert_eq!(unquote_string("\"it's\""), "it's");
        assert_eq!(unquote_string("'say \"hi\"'"), "say \"hi\"");
        assert_eq!(unquote_string("a\\nb"), "a\\nb");
        assert_eq!(unquote_string("\"open"), "open");
    }

    #[test]
    fn unquote_escapes() {
        let e = |s: &str| unquote(s);
        assert_eq!(e("\"\\n\\t\\r\\\\\\\"\\'\""), b"\n\t\r\\\"'".to_vec());
        assert_eq!(e("\"\\a\\b\\f\\v\\0\""), vec![7, 8, 12, 11, 0]);
        assert_eq!(e("\"\\x41\\x4a\\x4A\""), b"AJJ".to_vec());
        assert_eq!(e("\"\\xg\""), vec![0, b'g']);
        assert_eq!(e("\"\\101\\1012\""), b"AA2".to_vec());
        assert_eq!(e("\"\\777\""), vec![0xff]);
        assert_eq!(e("\"a\\\nb\""), b"ab".to_vec());
        assert_eq!(e("\"a\\\r\nb\""), b"ab".to_vec());
        assert_eq!(e("\"\\$\\,\\q\""), b"$,q".to_vec());
        assert_eq!(e("\"x\\\""), b"x\"".to_vec());
        assert_eq!(e("\"\\"), b"\\".to_vec());
    }

    #[test]
    fn unquote_hex_blocks() {
        assert_eq!(
            unquote_string("\"\\<48656c6C 6f 2 /* And finally */ 1>\""),
            "Hello!"
        );
        assert_eq!(unquote("\\<00 01 ff>"), vec![0, 1, 0xff]);
        assert_eq!(unquote("x\\<41>y"), b"xAy".to_vec());
        assert_eq!(unquote("'\\<41>'"), b"\\<41>".to_vec());
        assert_eq!(unquote("\\<414>"), b"A".to_vec());
        assert_eq!(unquote("\\<41"), b"A".to_vec());
        assert_eq!(unquote("\\<4 // >\n1>"), b"A".to_vec());
        assert_eq!(unquote("\"\\<ff>\"").len(), 1);
        assert_eq!(unquote_string("\"\\<ff>\""), "\u{fffd}");
    }

    #[test]
    fn string_token() {
        assert_eq!(string_token_end(b"abc def"), 3);
        assert_eq!(string_token_end(b"\"a b\" c"), 5);
        assert_eq!(string_token_end(b"'a b'c d"), 6);
        assert_eq!(string_token_end(b"\\<0 1> x"), 6);
        assert_eq!(string_token_end(b"a\\ b"), 2);
        assert_eq!(string_token_end(b""), 0);
    }

    #[test]
    fn non_ascii() {
        assert_eq!(split_config_args("é, ü/*x*/ö"), v(&["é", "ü ö"]));
        assert_eq!(unquote_string("\"\\é\""), "é");
        assert_eq!(unquote_string("'ß'"), "ß");
    }

    #[test]
    fn more_splitting() {
        assert_eq!(split_config_args(" a , b "), v(&["a", "b"]));
        assert_eq!(split_config_args("\"//,\", c"), v(&["\"//,\"", "c"]));
        assert_eq!(
            split_words(" a  \"b c\" 'd e' "),
            v(&["a", "\"b c\"", "'d e'"])
        );
    }

    /// Where the language's own lexer used to differ from this one (and
    /// from Click): space around a comment, `\x` with more than two
    /// digits, hex-looking comments in `\<...>`, a bare `\<...>`, and
    /// trailing space inside a quote left open.
    #[test]
    fn clicks_behaviour_where_the_lexers_differed() {
        assert_eq!(split_config_args("a  /* x */  b, c"), v(&["a b", "c"]));
        assert_eq!(unquote("\"\\x141\""), vec![0x41]);
        assert_eq!(unquote_string("\"\\<41 /* bad */ 42>\""), "AB");
        assert_eq!(unquote_string("\\<41>"), "A");
        assert_eq!(split_config_args("'a "), v(&["'a "]));
        assert_eq!(split_config_args("a, 'b "), v(&["a", "'b "]));
    }

    #[test]
    fn quoting_reads_back() {
        assert_eq!(escape_in_double_quotes("a\"b\\$"), "a\\\"b\\\\\\$");
        for s in ["plain", "two words", "a\"b\\c$d", "tab\there", "\u{7f}é"] {
            assert_eq!(unquote_string(&quote_word(s)), s);
        }
    }
}
