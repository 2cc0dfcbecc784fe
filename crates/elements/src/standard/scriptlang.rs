//! Text machinery shared by Script and DriverManager: Click's `$variable`
//! expansion (`cp_expand`), quoting (`cp_quote`), word splitting
//! (`cp_shift_spacevec`), and the expression functions Script offers as
//! read handlers (`add`, `eq`, `sprintf`, ...).

use super::clickrandom::{click_random, click_random_range};
use rclick_core::conf::{parse_bool, parse_f64, parse_i64, parse_u64, unquote};
use rclick_core::time::Timestamp;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Bytes to a string; invalid UTF-8 becomes U+FFFD.
pub fn bytes_string(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Removes one layer of quotes (Click's `cp_unquote`).
pub fn unq(s: &str) -> String {
    bytes_string(unquote(s))
}

/// Index just past the comment starting at `i` (`//` or `/*`).
fn skip_comment(b: &[u8], i: usize) -> usize {
    let mut j = i + 2;
    if b[i + 1] == b'/' {
        while j < b.len() && b[j] != b'\n' && b[j] != b'\r' {
            j += 1;
        }
        (j + 1).min(b.len())
    } else {
        while j + 1 < b.len() && !(b[j] == b'*' && b[j + 1] == b'/') {
            j += 1;
        }
        (j + 2).min(b.len())
    }
}

fn is_comment(b: &[u8], i: usize) -> bool {
    b[i] == b'/' && i + 1 < b.len() && (b[i + 1] == b'/' || b[i + 1] == b'*')
}

fn skip_space_comments(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if is_space(b[i]) {
            i += 1;
        } else if is_comment(b, i) {
            i = skip_comment(b, i);
        } else {
            break;
        }
    }
    i
}

/// Splits off the first space-separated word (quotes protect spaces and are
/// kept), returning it and the rest with leading space removed (Click's
/// `cp_shift_spacevec`).
pub fn shift_word(s: &str) -> (String, String) {
    let b = s.as_bytes();
    let start = skip_space_comments(b, 0);
    let mut i = start;
    let mut quote = 0u8;
    while i < b.len() {
        let c = b[i];
        if quote == 0 && (is_space(c) || is_comment(b, i)) {
            break;
        }
        match c {
            b'"' | b'\'' if quote == 0 => quote = c,
            q if q == quote && quote != 0 => quote = 0,
            b'\\' if quote == b'"' && i + 1 < b.len() => i += 1,
            b'\\' if quote == 0 && i + 1 < b.len() && b[i + 1] == b'<' => {
                while i < b.len() && b[i] != b'>' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let i = i.min(b.len());
    let word = s[start..i].to_string();
    let rest_start = skip_space_comments(b, i);
    (word, s[rest_start..].to_string())
}

/// All space-separated words of `s`.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s.to_string();
    loop {
        let (w, r) = shift_word(&rest);
        if w.is_empty() {
            return out;
        }
        out.push(w);
        rest = r;
    }
}

/// Double-quotes `s` so that unquoting gives it back (Click's `cp_quote`).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s.as_bytes() {
        match c {
            b'\\' | b'"' | b'$' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            c if !(32..127).contains(&c) => {
                out.push('\\');
                out.push((b'0' + (c >> 6)) as char);
                out.push((b'0' + ((c >> 3) & 7)) as char);
                out.push((b'0' + (c & 7)) as char);
            }
            c => out.push(c as char),
        }
    }
    out.push('"');
    out
}

/// Supplies the values of `$name` (`vtype` `b'a'`), `${name}` (`b'{'`) and
/// `$(handler ...)` (`b'('`) references.
pub trait VarSource {
    fn lookup(&mut self, name: &str, vtype: u8) -> Option<String>;
}

/// Click's `cp_expand`: replaces variable and handler references outside
/// single quotes. Inside double quotes (or anywhere, when `expand_quote`)
/// values are quoted so they survive a later unquote intact.
pub fn expand(config: &str, src: &mut dyn VarSource, expand_quote: bool, depth: usize) -> String {
    if !config.contains('$') {
        return config.to_string();
    }
    let b = config.as_bytes();
    let end = b.len();
    let mut out = String::new();
    let mut unint = 0usize;
    let mut quote_ch = 0u8;
    let mut s = 0usize;
    while s < end {
        match b[s] {
            b'\\' if s + 1 < end && quote_ch == b'"' => s += 1,
            b'\'' | b'"' => {
                if quote_ch == 0 {
                    quote_ch = b[s];
                } else if quote_ch == b[s] {
                    quote_ch = 0;
                }
            }
            b'/' if quote_ch == 0 && is_comment(b, s) => {
                s = skip_space_comments(b, s);
                continue;
            }
            b'$' if s + 1 < end && quote_ch != b'\'' && depth <= 10 => {
                let before = s;
                let vtype;
                let mut expand_name = false;
                let name: &str;
                if b[s + 1] == b'{' {
                    vtype = b'{';
                    let cstart = s + 2;
                    let mut j = cstart;
                    while j < end && b[j] != b'}' {
                        if b[j] == b'$' {
                            expand_name = true;
                        }
                        j += 1;
                    }
                    if j == end {
                        break;
                    }
                    name = &config[cstart..j];
                    s = j + 1;
                } else if b[s + 1] == b'(' {
                    vtype = b'(';
                    let cstart = s + 2;
                    let mut j = cstart;
                    let mut level = 1;
                    let mut nq = 0u8;
                    while j < end && level > 0 {
                        match b[j] {
                            b'(' if nq == 0 => level += 1,
                            b')' if nq == 0 => level -= 1,
                            b'"' | b'\'' => {
                                if nq == 0 {
                                    nq = b[j];
                                } else if nq == b[j] {
                                    nq = 0;
                                }
                            }
                            b'\\' if j + 1 < end && nq != b'\'' => j += 1,
                            b'$' if nq != b'\'' => expand_name = true,
                            _ => {}
                        }
                        j += 1;
                    }
                    if level > 0 || j == cstart {
                        break;
                    }
                    name = &config[cstart..j - 1];
                    s = j;
                } else if b[s + 1].is_ascii_alphanumeric() || b[s + 1] == b'_' {
                    vtype = b'a';
                    let cstart = s + 1;
                    let mut j = cstart;
                    while j < end && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                        j += 1;
                    }
                    name = &config[cstart..j];
                    s = j;
                } else if matches!(b[s + 1], b'?' | b'#' | b'$') {
                    vtype = b'a';
                    name = &config[s + 1..s + 2];
                    s += 2;
                } else {
                    s += 1;
                    continue;
                }
                out.push_str(&config[unint..before]);
                let vname = if expand_name {
                    expand(name, src, false, depth + 1)
                } else {
                    name.to_string()
                };
                unint = s;
                match src.lookup(&vname, vtype) {
                    None => {
                        if expand_name {
                            let (open, close) = if vtype == b'{' {
                                ("${", "}")
                            } else {
                                ("$(", ")")
                            };
                            out.push_str(open);
                            out.push_str(&vname);
                            out.push_str(close);
                        } else {
                            unint = before;
                        }
                    }
                    Some(text) => {
                        if quote_ch == b'"' || (expand_quote && quote_ch == 0) {
                            let q = quote(&text);
                            let inner = &q[1..q.len() - 1];
                            if quote_ch == b'"' {
                                out.push_str(inner);
                            } else {
                                out.push('"');
                                out.push_str(inner);
                                out.push('"');
                            }
                        } else {
                            out.push_str(&text);
                        }
                    }
                }
                continue;
            }
            _ => {}
        }
        s += 1;
    }
    out.push_str(&config[unint.min(end)..]);
    out
}

/// C's `%.{prec}g`.
pub fn fmt_g(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let p = prec.max(1);
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mant), sign, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{:.*}", decimals, x))
    }
}

/// Click's `String(double)`.
pub fn fmt_double(x: f64) -> String {
    fmt_g(x, 12)
}

fn int_arg(s: &str) -> Option<i64> {
    parse_i64(s).ok()
}

fn double_arg(s: &str) -> Option<f64> {
    parse_f64(s).ok()
}

fn bool_arg(s: &str) -> Option<bool> {
    parse_bool(s.trim()).ok()
}

fn unparse_bool(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

#[derive(Clone, Copy, PartialEq)]
enum Arith {
    Add,
    Sub,
    Min,
    Max,
    Mul,
    Div,
    Idiv,
}

fn arithmetic(what: Arith, param: &str) -> Result<String, String> {
    let mut accum: i64 = if matches!(what, Arith::Add | Arith::Sub) {
        0
    } else {
        1
    };
    let mut daccum: f64 = accum as f64;
    let mut use_d = matches!(what, Arith::Div | Arith::Idiv);
    let mut first = true;
    for word in words(param) {
        if !use_d {
            match int_arg(&word) {
                Some(arg) => {
                    accum = if first {
                        arg
                    } else {
                        match what {
                            Arith::Add => accum.wrapping_add(arg),
                            Arith::Sub => accum.wrapping_sub(arg),
                            Arith::Min => accum.min(arg),
                            Arith::Max => accum.max(arg),
                            Arith::Mul => accum.wrapping_mul(arg),
                            Arith::Div | Arith::Idiv => accum,
                        }
                    };
                    first = false;
                    continue;
                }
                None => {
                    use_d = true;
                    daccum = accum as f64;
                }
            }
        }
        let darg = double_arg(&word).ok_or("expected list of numbers")?;
        daccum = if first {
            darg
        } else {
            match what {
                Arith::Add => daccum + darg,
                Arith::Sub => daccum - darg,
                Arith::Min => daccum.min(darg),
                Arith::Max => daccum.max(darg),
                Arith::Mul => daccum * darg,
                Arith::Div | Arith::Idiv => daccum / darg,
            }
        };
        first = false;
    }
    if what == Arith::Idiv {
        if !daccum.is_finite() {
            return Err("division by zero".into());
        }
        return Ok((daccum as i64).to_string());
    }
    Ok(if use_d {
        fmt_double(daccum)
    } else {
        accum.to_string()
    })
}

fn two_words(param: &str) -> Option<(String, String)> {
    let (a, rest) = shift_word(param);
    let (b, rest) = shift_word(&rest);
    (!a.is_empty() && !b.is_empty() && rest.is_empty()).then_some((a, b))
}

fn modrem(is_mod: bool, param: &str) -> Result<String, String> {
    let (a, b) = two_words(param).ok_or("expected two numbers")?;
    match (int_arg(&a), int_arg(&b)) {
        (Some(x), Some(y)) => {
            if y == 0 {
                return Err("division by zero".into());
            }
            Ok(x.wrapping_rem(y).to_string())
        }
        _ => {
            if is_mod {
                return Err("expected two numbers".into());
            }
            match (double_arg(&a), double_arg(&b)) {
                (Some(x), Some(y)) => Ok(fmt_double(x % y)),
                _ => Err("expected two numbers".into()),
            }
        }
    }
}

fn negabs(neg: bool, param: &str) -> Result<String, String> {
    let p = param.trim();
    if let Some(x) = int_arg(p) {
        return Ok(if neg || x < 0 { x.wrapping_neg() } else { x }.to_string());
    }
    let d = double_arg(p).ok_or("expected one number")?;
    Ok(fmt_double(if neg { -d } else { d.abs() }))
}

fn compare(op: &str, param: &str) -> Result<String, String> {
    use std::cmp::Ordering;
    let (a, b) = two_words(param).ok_or("expected two numbers")?;
    let ord = match (int_arg(&a), int_arg(&b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => match (double_arg(&a), double_arg(&b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(unquote(&a).cmp(&unquote(&b))),
        },
    };
    let r = match (op, ord) {
        ("eq", Some(o)) => o == Ordering::Equal,
        ("ne", Some(o)) => o != Ordering::Equal,
        ("lt", Some(o)) => o == Ordering::Less,
        ("le", Some(o)) => o != Ordering::Greater,
        ("gt", Some(o)) => o == Ordering::Greater,
        ("ge", Some(o)) => o != Ordering::Less,
        // NaN compares unequal to everything.
        (op, _) => op == "ne",
    };
    Ok(unparse_bool(r))
}

fn pad(body: String, width: usize, left: bool, zero: bool, sign_len: usize) -> String {
    let n = body.chars().count();
    if n >= width {
        return body;
    }
    let fill = width - n;
    if left {
        format!("{body}{}", " ".repeat(fill))
    } else if zero {
        let (sign, digits) = body.split_at(sign_len);
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

/// Script's `sprintf`: a C format string and space-separated arguments.
pub fn sprintf(param: &str) -> Result<String, String> {
    let (fmt_word, mut rest) = shift_word(param);
    let fmt = unq(&fmt_word);
    let f = fmt.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let next_arg = |rest: &mut String| -> String {
        let (w, r) = shift_word(rest);
        *rest = r;
        w
    };
    while i < f.len() {
        if f[i] != b'%' {
            let start = i;
            while i < f.len() && f[i] != b'%' {
                i += 1;
            }
            out.push_str(&fmt[start..i]);
            continue;
        }
        i += 1;
        let (mut left, mut zero, mut plus, mut space, mut alt) =
            (false, false, false, false, false);
        while i < f.len() && matches!(f[i], b'0' | b'#' | b'-' | b' ' | b'+') {
            match f[i] {
                b'-' => left = true,
                b'0' => zero = true,
                b'+' => plus = true,
                b' ' => space = true,
                _ => alt = true,
            }
            i += 1;
        }
        let mut width = 0usize;
        if i < f.len() && f[i] == b'*' {
            let w = int_arg(&next_arg(&mut rest)).ok_or("syntax error")?;
            if w < 0 {
                left = true;
            }
            width = w.unsigned_abs() as usize;
            i += 1;
        } else {
            while i < f.len() && f[i].is_ascii_digit() {
                width = width * 10 + (f[i] - b'0') as usize;
                i += 1;
            }
        }
        let mut prec: Option<usize> = None;
        if i < f.len() && f[i] == b'.' {
            i += 1;
            if i < f.len() && f[i] == b'*' {
                let p = int_arg(&next_arg(&mut rest))
                    .filter(|p| *p >= 0)
                    .ok_or("syntax error")?;
                prec = Some(p as usize);
                i += 1;
            } else {
                let mut p = 0usize;
                while i < f.len() && f[i].is_ascii_digit() {
                    p = p * 10 + (f[i] - b'0') as usize;
                    i += 1;
                }
                prec = Some(p);
            }
        }
        let mut short = false;
        while i < f.len() && matches!(f[i], b'h' | b'l' | b'L' | b'q') {
            short = f[i] == b'h';
            i += 1;
        }
        let Some(&conv) = f.get(i) else {
            return Err("syntax error".into());
        };
        i += 1;
        match conv {
            b'd' | b'i' => {
                let mut v = int_arg(&next_arg(&mut rest)).ok_or("syntax error")?;
                if short {
                    v = i64::from(v as i16);
                }
                let mut digits = v.unsigned_abs().to_string();
                if let Some(p) = prec {
                    if digits.len() < p {
                        digits = format!("{}{digits}", "0".repeat(p - digits.len()));
                    }
                    if p == 0 && v == 0 {
                        digits.clear();
                    }
                }
                let sign = if v < 0 {
                    "-"
                } else if plus {
                    "+"
                } else if space {
                    " "
                } else {
                    ""
                };
                out.push_str(&pad(
                    format!("{sign}{digits}"),
                    width,
                    left,
                    zero && prec.is_none(),
                    sign.len(),
                ));
            }
            b'u' | b'x' | b'X' | b'o' => {
                let w = next_arg(&mut rest);
                let mut v = parse_u64(&w)
                    .ok()
                    .or_else(|| int_arg(&w).map(|x| x as u64))
                    .ok_or("syntax error")?;
                if short {
                    v = u64::from(v as u16);
                }
                let mut digits = match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = prec {
                    if digits.len() < p {
                        digits = format!("{}{digits}", "0".repeat(p - digits.len()));
                    }
                    if p == 0 && v == 0 {
                        digits.clear();
                    }
                }
                let prefix = match conv {
                    b'x' if alt && v != 0 => "0x",
                    b'X' if alt && v != 0 => "0X",
                    b'o' if alt && !digits.starts_with('0') => "0",
                    _ => "",
                };
                out.push_str(&pad(
                    format!("{prefix}{digits}"),
                    width,
                    left,
                    zero && prec.is_none(),
                    prefix.len(),
                ));
            }
            b's' => {
                let mut s = unq(&next_arg(&mut rest));
                if let Some(p) = prec {
                    s = s.chars().take(p).collect();
                }
                out.push_str(&pad(s, width, left, false, 0));
            }
            b'%' => out.push('%'),
            _ => return Err("syntax error".into()),
        }
    }
    if !rest.trim().is_empty() {
        return Err("syntax error".into());
    }
    Ok(out)
}

/// The expression functions every Script offers as read handlers taking a
/// parameter (plus `now`, which takes none).
pub const FUNCTIONS: &[&str] = &[
    "add", "sub", "min", "max", "mul", "div", "idiv", "mod", "rem", "neg", "abs", "eq", "ne", "gt",
    "ge", "lt", "le", "not", "sprintf", "first", "random", "and", "or", "nand", "nor", "if", "in",
    "length", "unquote", "htons", "htonl", "ntohs", "ntohl", "cat", "catq", "kill",
];

/// A signal by name (`INT`, `SIGUSR1`, any case) or number.
pub fn signal_number(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return (1..64).contains(&n).then_some(n);
    }
    let upper = name.to_ascii_uppercase();
    let n = upper.strip_prefix("SIG").unwrap_or(&upper);
    Some(match n {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" => libc::SIGABRT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "PIPE" => libc::SIGPIPE,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        "CHLD" => libc::SIGCHLD,
        "CONT" => libc::SIGCONT,
        "STOP" => libc::SIGSTOP,
        "TSTP" => libc::SIGTSTP,
        "TTIN" => libc::SIGTTIN,
        "TTOU" => libc::SIGTTOU,
        "WINCH" => libc::SIGWINCH,
        _ => return None,
    })
}

/// Evaluates expression function `name` on `param`. `None` if `name` is
/// not a function.
pub fn call_function(name: &str, param: &str, now: Timestamp) -> Option<Result<String, String>> {
    let r = match name {
        "add" => arithmetic(Arith::Add, param),
        "sub" => arithmetic(Arith::Sub, param),
        "min" => arithmetic(Arith::Min, param),
        "max" => arithmetic(Arith::Max, param),
        "mul" => arithmetic(Arith::Mul, param),
        "div" => arithmetic(Arith::Div, param),
        "idiv" => arithmetic(Arith::Idiv, param),
        "mod" => modrem(true, param),
        "rem" => modrem(false, param),
        "neg" => negabs(true, param),
        "abs" => negabs(false, param),
        "eq" | "ne" | "gt" | "ge" | "lt" | "le" => compare(name, param),
        "not" => bool_arg(param)
            .map(|b| unparse_bool(!b))
            .ok_or_else(|| "syntax error".to_string()),
        "sprintf" => sprintf(param),
        "first" => Ok(shift_word(param).0),
        "and" | "or" | "nand" | "nor" => (|| {
            let zero = matches!(name, "and" | "nand");
            let mut cur = zero;
            let mut rest = param.to_string();
            while cur == zero && !rest.trim().is_empty() {
                let (w, r) = shift_word(&rest);
                rest = r;
                let x = bool_arg(&w).ok_or("syntax error")?;
                cur = if zero { cur && x } else { cur || x };
            }
            if matches!(name, "nand" | "nor") {
                cur = !cur;
            }
            Ok(unparse_bool(cur))
        })(),
        "if" => (|| {
            let (c, rest) = shift_word(param);
            let c = bool_arg(&c).ok_or("syntax error")?;
            let (a, rest) = shift_word(&rest);
            Ok(if c { a } else { shift_word(&rest).0 })
        })(),
        "in" => {
            let (w, mut rest) = shift_word(param);
            let w = unquote(&w);
            let mut found = false;
            while !w.is_empty() && !rest.is_empty() && !found {
                let (x, r) = shift_word(&rest);
                rest = r;
                found = unquote(&x) == w;
            }
            Ok(unparse_bool(found))
        }
        "now" => Ok(now.to_string()),
        "random" => (|| {
            // Click's: N1 and N2 are unsigned 32-bit integers, drawn with
            // Click's generator (see RandomSeed).
            let ws = words(param);
            let bad = || "bad N".to_string();
            let num = |w: &str| {
                parse_u64(w)
                    .ok()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(bad)
            };
            match ws.len() {
                0 => Ok(click_random().to_string()),
                1 => {
                    let n = num(&ws[0])?;
                    if n == 0 {
                        return Err(bad());
                    }
                    Ok(click_random_range(0, n - 1).to_string())
                }
                2 => {
                    let (a, b) = (num(&ws[0])?, num(&ws[1])?);
                    if b < a {
                        return Err(bad());
                    }
                    Ok(click_random_range(a, b).to_string())
                }
                _ => Err("too many arguments".into()),
            }
        })(),
        "length" => Ok(param.len().to_string()),
        "unquote" => Ok(unq(param)),
        "htons" | "ntohs" => int_arg(param.trim())
            .map(|x| (x as u16).to_be().to_string())
            .ok_or_else(|| "syntax error".to_string()),
        "htonl" | "ntohl" => int_arg(param.trim())
            .map(|x| (x as u32).to_be().to_string())
            .ok_or_else(|| "syntax error".to_string()),
        // `kill SIGNAL [PID...]`: sends SIGNAL to each PID (this process
        // when none is given).
        "kill" => (|| {
            let ws = words(param);
            let (sig, pids) = ws.split_first().ok_or_else(|| "syntax error".to_string())?;
            let sig = signal_number(sig).ok_or_else(|| "bad signal".to_string())?;
            let own = [std::process::id().to_string()];
            let pids = if pids.is_empty() { &own[..] } else { pids };
            for pid in pids {
                let pid: i32 = pid.parse().map_err(|_| "bad process ID".to_string())?;
                // SAFETY: kill(2) takes plain integers.
                if unsafe { libc::kill(pid, sig) } != 0 {
                    return Err(format!("kill: {}", std::io::Error::last_os_error()));
                }
            }
            Ok(String::new())
        })(),
        "cat" | "catq" => {
            let file = unq(param.trim());
            if file.is_empty() {
                Err("bad FILE".to_string())
            } else {
                match std::fs::read(&file) {
                    Ok(b) => {
                        let s = bytes_string(b);
                        Ok(if name == "catq" { quote(&s) } else { s })
                    }
                    Err(e) => Err(format!("{file}: {e}")),
                }
            }
        }
        _ => return None,
    };
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vars;
    impl VarSource for Vars {
        fn lookup(&mut self, name: &str, vtype: u8) -> Option<String> {
            match (name, vtype) {
                ("x", _) => Some("a b".into()),
                ("add 1 2", b'(') => Some("3".into()),
                _ => None,
            }
        }
    }

    #[test]
    fn expansion_follows_quotes() {
        assert_eq!(expand("v $x w", &mut Vars, false, 0), "v a b w");
        assert_eq!(expand("'$x'", &mut Vars, false, 0), "'$x'");
        assert_eq!(expand("\"$x\"", &mut Vars, false, 0), "\"a b\"");
        assert_eq!(expand("$x", &mut Vars, true, 0), "\"a b\"");
        assert_eq!(expand("$(add 1 2)$y", &mut Vars, false, 0), "3$y");
        assert_eq!(expand("${x}!", &mut Vars, false, 0), "a b!");
    }

    #[test]
    fn numbers_format_like_c() {
        assert_eq!(fmt_g(6.0, 12), "6");
        assert_eq!(fmt_g(0.1, 12), "0.1");
        assert_eq!(fmt_g(1e20, 12), "1e+20");
        assert_eq!(fmt_g(2.5e-7, 12), "2.5e-07");
        assert_eq!(
            sprintf("\"%05x|%-4d|%s\" 127 7 hi").unwrap(),
            "0007f|7   |hi"
        );
        assert_eq!(sprintf("\"%+d %%\" 5").unwrap(), "+5 %");
    }
}
