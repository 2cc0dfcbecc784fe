//! String-valued arguments (Click's StringArg, WordArg, KeywordArg, AnyArg).

use rclick_lang::args::{is_space, string_token_end, unquote};

/// Parses a possibly quoted string (Click's StringArg / `cp_string`) and
/// returns its bytes: one token that ends at the first unquoted white
/// space, then unquoted. `"a b"` gives `a b`; `a b` and an empty argument
/// are errors (write `""` for an empty string).
pub fn parse_bytes(s: &str) -> Result<Vec<u8>, String> {
    let end = string_token_end(s.as_bytes());
    if end == 0 || end != s.len() {
        return Err("expected string".into());
    }
    Ok(unquote(s))
}

/// [`parse_bytes`] as a `String`; invalid UTF-8 (from escapes such as
/// `\xFF`) is an error, so use [`parse_bytes`] for binary data.
pub fn parse_string(s: &str) -> Result<String, String> {
    String::from_utf8(parse_bytes(s)?).map_err(|_| "expected text, not binary data".into())
}

/// Whether `s` is a Click "word": one or more printable ASCII characters
/// other than quotes, backslash and comma.
pub fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| (b'!'..=b'~').contains(&c) && !matches!(c, b'"' | b'\'' | b'\\' | b','))
}

/// Parses a word (Click's WordArg): a string as in [`parse_string`] whose
/// unquoted value is a [word](is_word).
pub fn parse_word(s: &str) -> Result<String, String> {
    match parse_bytes(s) {
        Ok(b) => match String::from_utf8(b) {
            Ok(w) if is_word(&w) => Ok(w),
            _ => Err("expected word".into()),
        },
        Err(_) => Err("expected word".into()),
    }
}

/// Parses a keyword (Click's KeywordArg): one or more characters from
/// `[A-Za-z0-9_.:?!]`, unquoted.
pub fn parse_keyword(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'?' | b'!'));
    if ok {
        Ok(s.to_string())
    } else {
        Err("expected keyword".into())
    }
}

/// Accepts any argument text unchanged (Click's AnyArg), quotes included.
pub fn parse_any(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

/// Parses hex digits into bytes (`0800`, `08 00`, `de:ad:be:ef`);
/// white space and `:` between byte pairs are ignored. An odd number of
/// digits is an error.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let bad = || String::from("expected hex data");
    let mut out = Vec::new();
    let mut high: Option<u8> = None;
    for c in s.bytes() {
        if let Some(d) = (c as char).to_digit(16) {
            match high.take() {
                Some(h) => out.push(h << 4 | d as u8),
                None => high = Some(d as u8),
            }
        } else if (is_space(c) || c == b':') && high.is_none() {
            continue;
        } else {
            return Err(bad());
        }
    }
    if high.is_some() {
        return Err(bad());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings() {
        assert_eq!(parse_string("abc"), Ok("abc".into()));
        assert_eq!(parse_string("\"a b\""), Ok("a b".into()));
        assert_eq!(parse_string("'a, b'"), Ok("a, b".into()));
        assert_eq!(parse_string("\"\""), Ok("".into()));
        assert_eq!(parse_string("x\"y z\"'w'"), Ok("xy zw".into()));
        assert_eq!(parse_string("\\<41 42>"), Ok("AB".into()));
        assert_eq!(parse_string("a\\nb"), Ok("a\\nb".into()));
        assert_eq!(parse_string("(a)"), Ok("(a)".into()));
        for bad in ["", "a b", " a", "a ", "\"a\" b"] {
            assert_eq!(parse_string(bad), Err("expected string".into()), "{bad:?}");
        }
        assert_eq!(parse_bytes("\"\\xff\\x00\""), Ok(vec![0xff, 0]));
        assert_eq!(
            parse_string("\"\\xff\""),
            Err("expected text, not binary data".into())
        );
    }

    #[test]
    fn words() {
        assert_eq!(parse_word("eth0"), Ok("eth0".into()));
        assert_eq!(parse_word("\"eth0\""), Ok("eth0".into()));
        assert_eq!(parse_word("a/b:c"), Ok("a/b:c".into()));
        for bad in ["", "a b", "\"a b\"", "\"a,b\"", "'\\'", "\"\"", "é"] {
            assert_eq!(parse_word(bad), Err("expected word".into()), "{bad:?}");
        }
        assert_eq!(parse_keyword("ABC_1.x:?!"), Ok("ABC_1.x:?!".into()));
        for bad in ["", "a b", "a-b", "\"a\""] {
            assert_eq!(
                parse_keyword(bad),
                Err("expected keyword".into()),
                "{bad:?}"
            );
        }
        assert_eq!(parse_any("\"x y\""), Ok("\"x y\"".into()));
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex("0800"), Ok(vec![8, 0]));
        assert_eq!(parse_hex("de ad:BE EF"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(parse_hex(""), Ok(vec![]));
        for bad in ["0", "0 8", "xy", "0x08", "08-00"] {
            assert_eq!(parse_hex(bad), Err("expected hex data".into()), "{bad:?}");
        }
    }
}
