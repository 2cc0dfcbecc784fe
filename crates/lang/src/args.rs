//! Splitting configuration strings into arguments and words, the way
//! Click's `cp_argvec` and `cp_spacevec` do, plus the small quoting helpers
//! the parser needs.

/// Split a configuration string into arguments as Click's `cp_argvec` does.
///
/// Arguments are separated by top-level commas. Double and single quotes
/// (and `\<...>` hex blocks) protect commas; parentheses do not. Comments
/// (`//` to end of line, `/* ... */`) outside quotes become a single space.
/// Each argument is trimmed of surrounding whitespace, and an empty last
/// argument is dropped, so `""` gives no arguments and `"a,"` gives `["a"]`.
pub fn split_config_args(config: &str) -> Vec<String> {
    let b = config.as_bytes();
    let mut args = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b',' => {
                args.push(finish_arg(&cur));
                cur.clear();
                i += 1;
            }
            b'"' => {
                let end = skip_double_quote(b, i + 1);
                cur.extend_from_slice(&b[i..end]);
                i = end;
            }
            b'\'' => {
                let end = skip_single_quote(b, i + 1);
                cur.extend_from_slice(&b[i..end]);
                i = end;
            }
            b'\\' if b.get(i + 1) == Some(&b'<') => {
                let end = skip_angle(b, i + 2);
                cur.extend_from_slice(&b[i..end]);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = skip_line_comment(b, i + 2);
                cur.push(b' ');
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i + 2);
                cur.push(b' ');
            }
            _ => {
                cur.push(c);
                i += 1;
            }
        }
    }
    let last = finish_arg(&cur);
    if !last.is_empty() {
        args.push(last);
    }
    args
}

fn finish_arg(bytes: &[u8]) -> String {
    // Slicing only ever happens at ASCII boundaries, so the bytes are UTF-8.
    String::from_utf8_lossy(bytes)
        .trim_matches(is_space_char)
        .to_string()
}

pub(crate) fn is_space_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// Position just after the closing `"` (or the end), starting inside.
pub(crate) fn skip_double_quote(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'<') => i = skip_angle(b, i + 2),
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

pub(crate) fn skip_single_quote(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if b[i] == b'\'' {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// Position just after the `>` closing a `\<...>` block; comments inside
/// the block are allowed and skipped.
pub(crate) fn skip_angle(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line_comment(b, i + 2),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i + 2),
            b'>' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Position after the end of the line (line terminator included).
pub(crate) fn skip_line_comment(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\n' => return i + 1,
            b'\r' => {
                return if b.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
            }
            _ => i += 1,
        }
    }
    b.len()
}

pub(crate) fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    while i + 1 < b.len() {
        if b[i] == b'*' && b[i + 1] == b'/' {
            return i + 2;
        }
        i += 1;
    }
    b.len()
}

/// Split text into whitespace-separated words, quotes protecting spaces
/// (Click's `cp_spacevec`). Comments are treated as whitespace.
pub(crate) fn split_words(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        // Skip whitespace and comments between words.
        loop {
            while i < b.len() && is_space(b[i]) {
                i += 1;
            }
            if b.get(i) == Some(&b'/') && b.get(i + 1) == Some(&b'/') {
                i = skip_line_comment(b, i + 2);
            } else if b.get(i) == Some(&b'/') && b.get(i + 1) == Some(&b'*') {
                i = skip_block_comment(b, i + 2);
            } else {
                break;
            }
        }
        if i >= b.len() {
            return words;
        }
        let start = i;
        while i < b.len() && !is_space(b[i]) {
            match b[i] {
                b'"' => i = skip_double_quote(b, i + 1),
                b'\'' => i = skip_single_quote(b, i + 1),
                b'\\' if b.get(i + 1) == Some(&b'<') => i = skip_angle(b, i + 2),
                b'/' if matches!(b.get(i + 1), Some(b'/') | Some(b'*')) => break,
                _ => i += 1,
            }
        }
        words.push(String::from_utf8_lossy(&b[start..i]).into_owned());
    }
}

/// Remove one level of quoting from a word: `"..."` with C escapes and
/// `'...'` literally; unquoted text is returned unchanged.
pub(crate) fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                let end = skip_single_quote(b, i + 1);
                let inner_end = if end > i + 1 && b[end - 1] == b'\'' {
                    end - 1
                } else {
                    end
                };
                out.extend_from_slice(&b[i + 1..inner_end.max(i + 1)]);
                i = end;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        let (bytes, next) = unescape(b, i + 1);
                        out.extend_from_slice(&bytes);
                        i = next;
                    } else {
                        out.push(b[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decode one escape whose character starts at `i` (after the backslash).
fn unescape(b: &[u8], i: usize) -> (Vec<u8>, usize) {
    let c = b[i];
    match c {
        b'n' => (vec![b'\n'], i + 1),
        b't' => (vec![b'\t'], i + 1),
        b'r' => (vec![b'\r'], i + 1),
        b'a' => (vec![7], i + 1),
        b'b' => (vec![8], i + 1),
        b'f' => (vec![12], i + 1),
        b'v' => (vec![11], i + 1),
        b'\n' => (vec![], i + 1),
        b'\r' => (
            vec![],
            if b.get(i + 1) == Some(&b'\n') {
                i + 2
            } else {
                i + 1
            },
        ),
        b'0'..=b'7' => {
            let mut v: u32 = 0;
            let mut j = i;
            while j < b.len() && j < i + 3 && (b'0'..=b'7').contains(&b[j]) {
                v = v * 8 + u32::from(b[j] - b'0');
                j += 1;
            }
            (vec![(v & 0xff) as u8], j)
        }
        b'x' => {
            let mut v: u32 = 0;
            let mut j = i + 1;
            while j < b.len() && j < i + 3 && b[j].is_ascii_hexdigit() {
                v = v * 16 + (b[j] as char).to_digit(16).unwrap_or(0);
                j += 1;
            }
            (vec![(v & 0xff) as u8], j)
        }
        b'<' => {
            let end = skip_angle(b, i + 1);
            let inner_end = if end > i + 1 && b[end - 1] == b'>' {
                end - 1
            } else {
                end
            };
            let mut bytes = Vec::new();
            let mut nib: Option<u8> = None;
            for &h in &b[i + 1..inner_end.max(i + 1)] {
                if let Some(d) = (h as char).to_digit(16) {
                    match nib.take() {
                        Some(hi) => bytes.push(hi * 16 + d as u8),
                        None => nib = Some(d as u8),
                    }
                }
            }
            (bytes, end)
        }
        _ => {
            // Copy one whole UTF-8 character so the output stays valid.
            let len = utf8_len(c);
            let end = (i + len).min(b.len());
            (b[i..end].to_vec(), end)
        }
    }
}

pub(crate) fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
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

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn argvec_basics() {
        assert_eq!(split_config_args(""), Vec::<String>::new());
        assert_eq!(split_config_args("   "), Vec::<String>::new());
        assert_eq!(split_config_args("a"), v(&["a"]));
        assert_eq!(split_config_args(" a , b "), v(&["a", "b"]));
        assert_eq!(split_config_args("a,"), v(&["a"]));
        assert_eq!(split_config_args(","), v(&[""]));
        assert_eq!(split_config_args("a,,b"), v(&["a", "", "b"]));
        assert_eq!(split_config_args("a, "), v(&["a"]));
    }

    #[test]
    fn argvec_quotes_protect_parens_dont() {
        assert_eq!(split_config_args("\"a,b\", c"), v(&["\"a,b\"", "c"]));
        assert_eq!(split_config_args("'a,b', c"), v(&["'a,b'", "c"]));
        assert_eq!(split_config_args("f(a,b)"), v(&["f(a", "b)"]));
        assert_eq!(
            split_config_args("\"a\\\",b\", c"),
            v(&["\"a\\\",b\"", "c"])
        );
        assert_eq!(split_config_args("\\<00, 01>, x"), v(&["\\<00, 01>", "x"]));
    }

    #[test]
    fn argvec_comments_become_space() {
        assert_eq!(split_config_args("a // x, y\n, b"), v(&["a", "b"]));
        assert_eq!(split_config_args("a/* , */b, c"), v(&["a b", "c"]));
        assert_eq!(split_config_args("\"//,\", c"), v(&["\"//,\"", "c"]));
    }

    #[test]
    fn words_and_unquote() {
        assert_eq!(
            split_words(" a  \"b c\" 'd e' "),
            v(&["a", "\"b c\"", "'d e'"])
        );
        assert_eq!(unquote("\"a\\nb\""), "a\nb");
        assert_eq!(unquote("'a\\n'"), "a\\n");
        assert_eq!(unquote("plain"), "plain");
        assert_eq!(unquote("\"\\x41\\101\""), "AA");
        assert_eq!(unquote("\"\\<41 42>\""), "AB");
        assert_eq!(escape_in_double_quotes("a\"b\\$"), "a\\\"b\\\\\\$");
    }
}
