//! Numbers, booleans, time intervals and bandwidths, with Click's syntax
//! (IntArg, BoolArg, DoubleArg, FixedPointArg, SecondsArg, BandwidthArg).

use rclick_lang::args::is_space;
use std::time::Duration;

/// Parses a boolean as Click's BoolArg does: `true`, `yes`, `1`, `t`, `y`
/// are true and `false`, `no`, `0`, `f`, `n` are false (case-sensitive;
/// Click does not accept `on`/`off`).
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "true" | "yes" | "1" | "t" | "y" => Ok(true),
        "false" | "no" | "0" | "f" | "n" => Ok(false),
        _ => Err("expected boolean".into()),
    }
}

/// Magnitude and sign of an integer, as written.
struct RawInt {
    negative: bool,
    magnitude: u128,
    overflow: bool,
}

/// Click's IntArg syntax: optional sign (`-` only when `signed`), then
/// `0x`/`0X` hex, `0b`/`0B` binary, leading-`0` octal or decimal digits,
/// with single underscores allowed between digits. `base` forces a base
/// (Click's IntArg(10)); a forced base 16 still accepts a `0x` prefix.
fn parse_raw_int(s: &str, signed: bool, base: Option<u32>) -> Option<RawInt> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(&c) = b.first() {
        if c == b'+' || (signed && c == b'-') {
            negative = c == b'-';
            i = 1;
        }
    }
    let has_prefix =
        |ch: u8| i + 2 < b.len() && b[i] == b'0' && b[i + 1].to_ascii_lowercase() == ch;
    let radix = match base {
        None | Some(16) if has_prefix(b'x') => {
            i += 2;
            16
        }
        None if has_prefix(b'b') => {
            i += 2;
            2
        }
        None if b.get(i) == Some(&b'0') => 8,
        None => 10,
        Some(r) => r,
    };
    let mut magnitude: u128 = 0;
    let mut overflow = false;
    let mut any = false;
    let mut prev_digit = false;
    while i < b.len() {
        if b[i] == b'_' && prev_digit {
            prev_digit = false;
        } else if let Some(d) = (b[i] as char).to_digit(radix) {
            match magnitude
                .checked_mul(u128::from(radix))
                .and_then(|m| m.checked_add(u128::from(d)))
            {
                Some(m) => magnitude = m,
                None => overflow = true,
            }
            any = true;
            prev_digit = true;
        } else {
            return None;
        }
        i += 1;
    }
    if !any || !prev_digit {
        return None;
    }
    Some(RawInt {
        negative,
        magnitude,
        overflow,
    })
}

macro_rules! unsigned_parsers {
    ($($(#[$doc:meta])* $name:ident: $t:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(s: &str) -> Result<$t, String> {
            let raw = parse_raw_int(s, false, None)
                .ok_or_else(|| String::from("expected unsigned integer"))?;
            if raw.overflow || raw.magnitude > <$t>::MAX as u128 {
                return Err(format!("out of range, bound {}", <$t>::MAX));
            }
            Ok(raw.magnitude as $t)
        }
    )*};
}

macro_rules! signed_parsers {
    ($($(#[$doc:meta])* $name:ident: $t:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(s: &str) -> Result<$t, String> {
            let raw = parse_raw_int(s, true, None)
                .ok_or_else(|| String::from("expected integer"))?;
            if raw.negative {
                let limit = (<$t>::MIN as i128).unsigned_abs();
                if raw.overflow || raw.magnitude > limit {
                    return Err(format!("out of range, bound {}", <$t>::MIN));
                }
                Ok((raw.magnitude as i128).wrapping_neg() as $t)
            } else {
                if raw.overflow || raw.magnitude > <$t>::MAX as u128 {
                    return Err(format!("out of range, bound {}", <$t>::MAX));
                }
                Ok(raw.magnitude as $t)
            }
        }
    )*};
}

unsigned_parsers! {
    /// Parses an unsigned 8-bit integer (Click IntArg syntax: decimal,
    /// `0x` hex, `0b` binary, leading-`0` octal, `_` between digits).
    parse_u8: u8;
    /// Parses an unsigned 16-bit integer (see [`parse_u8`] for syntax).
    parse_u16: u16;
    /// Parses an unsigned 32-bit integer (see [`parse_u8`] for syntax).
    parse_u32: u32;
    /// Parses an unsigned 64-bit integer (see [`parse_u8`] for syntax).
    parse_u64: u64;
    /// Parses a `usize` (see [`parse_u8`] for syntax).
    parse_usize: usize;
}

signed_parsers! {
    /// Parses a signed 8-bit integer (see [`parse_u8`]; `-` is allowed).
    parse_i8: i8;
    /// Parses a signed 16-bit integer (see [`parse_i8`]).
    parse_i16: i16;
    /// Parses a signed 32-bit integer (see [`parse_i8`]).
    parse_i32: i32;
    /// Parses a signed 64-bit integer (see [`parse_i8`]).
    parse_i64: i64;
    /// Parses an `isize` (see [`parse_i8`]).
    parse_isize: isize;
}

/// Parses an unsigned integer in a fixed base (2..=36), like Click's
/// `IntArg(base)`; base 16 also accepts a `0x` prefix.
pub fn parse_u64_radix(s: &str, base: u32) -> Result<u64, String> {
    if !(2..=36).contains(&base) {
        return Err("expected unsigned integer".into());
    }
    let raw = parse_raw_int(s, false, Some(base))
        .ok_or_else(|| String::from("expected unsigned integer"))?;
    if raw.overflow || raw.magnitude > u128::from(u64::MAX) {
        return Err(format!("out of range, bound {}", u64::MAX));
    }
    Ok(raw.magnitude as u64)
}

/// Parses a real number (Click's DoubleArg, i.e. `strtod` syntax:
/// `1`, `-2.5`, `.5`, `1e-3`, `inf`, `nan`). Leading spaces are rejected.
pub fn parse_f64(s: &str) -> Result<f64, String> {
    let bad = || String::from("expected real number");
    if s.is_empty() || s.bytes().next().is_some_and(is_space) {
        return Err(bad());
    }
    let v: f64 = s.parse().map_err(|_| bad())?;
    let lower = s.to_ascii_lowercase();
    let literal_inf = lower.contains("inf");
    if v.is_infinite() && !literal_inf {
        return Err(format!(
            "out of range, bound {}",
            if v < 0.0 { "-inf" } else { "inf" }
        ));
    }
    let mantissa = lower.split('e').next().unwrap_or("");
    if v == 0.0 && mantissa.bytes().any(|c| (b'1'..=b'9').contains(&c)) {
        return Err("underflow, rounded to 0".into());
    }
    Ok(v)
}

/// A decimal number as written: `digits * 10^exp10`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decimal {
    pub digits: u128,
    pub exp10: i64,
}

/// Keeps the mantissa well inside u128 so that multiplying by a unit
/// factor cannot overflow; digits past this are dropped (beyond 30
/// significant digits they cannot matter to any result we produce).
const DIGIT_LIMIT: u128 = 1_000_000_000_000_000_000_000_000_000_000;

/// Parses Click's unsigned real-number syntax (the whole string): optional
/// `+`, digits with single `_` between digits, at most
/// one `.`, at least one digit, optional exponent `e[+-]N`.
pub(crate) fn parse_decimal(s: &str) -> Option<Decimal> {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'+'));
    let first = i;
    let mut digits: u128 = 0;
    let mut exp10: i64 = 0;
    let mut seen_point = false;
    let mut any = false;
    let mut prev_digit = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            if digits < DIGIT_LIMIT {
                digits = digits * 10 + u128::from(c - b'0');
                if seen_point {
                    exp10 -= 1;
                }
            } else if !seen_point {
                exp10 += 1;
            }
            any = true;
            prev_digit = true;
        } else if c == b'_' && prev_digit {
            prev_digit = false;
        } else if c == b'.' && !seen_point && (prev_digit || i == first) {
            seen_point = true;
            prev_digit = false;
        } else {
            break;
        }
        i += 1;
    }
    if !any || (i > 0 && b[i - 1] == b'_') {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        let mut eneg = false;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            eneg = b[j] == b'-';
            j += 1;
        }
        let estart = j;
        let mut e: i64 = 0;
        while j < b.len() && b[j].is_ascii_digit() {
            e = (e * 10 + i64::from(b[j] - b'0')).min(1_000_000);
            j += 1;
        }
        if j > estart {
            exp10 += if eneg { -e } else { e };
            i = j;
        }
    }
    if i != b.len() {
        return None;
    }
    Some(Decimal { digits, exp10 })
}

fn pow10(k: u32) -> Option<u128> {
    10u128.checked_pow(k)
}

/// Returns `round_half_up(|d| * factor * 10^power)`, or `None` on overflow.
pub(crate) fn scale_decimal(d: &Decimal, factor: u128, power: i64) -> Option<u128> {
    let mut digits = d.digits;
    let mut t = d.exp10.saturating_add(power);
    let num = loop {
        match digits.checked_mul(factor) {
            Some(n) => break n,
            None => {
                digits /= 10;
                t += 1;
            }
        }
    };
    if num == 0 {
        return Some(0);
    }
    if t >= 0 {
        let m = pow10(u32::try_from(t).ok()?)?;
        num.checked_mul(m)
    } else {
        let k = t.unsigned_abs();
        // num < 2^128 < 0.5 * 10^39, so anything divided by 10^39 or more
        // rounds to zero.
        if k > 38 {
            return Some(0);
        }
        let den = pow10(k as u32)?;
        let (q, r) = (num / den, num % den);
        Some(if r >= den - r { q + 1 } else { q })
    }
}

/// Parses an unsigned real as fixed point with `frac_bits` bits of fraction
/// (Click's FixedPointArg): `0.5` with 16 bits gives `0x8000`.
pub fn parse_fixed_point(s: &str, frac_bits: u32) -> Result<u32, String> {
    let d = parse_decimal(s).ok_or_else(|| String::from("expected real number"))?;
    if frac_bits > 32 {
        return Err("expected real number".into());
    }
    match scale_decimal(&d, 1u128 << frac_bits, 0) {
        Some(v) if v <= u128::from(u32::MAX) => Ok(v as u32),
        _ => Err("out of range".into()),
    }
}

/// Parses an unsigned real as an integer count of `10^-frac_digits` units
/// (Click's DecimalFixedPointArg): `1.5` with 3 digits gives `1500`.
pub fn parse_decimal_fixed(s: &str, frac_digits: u32) -> Result<u64, String> {
    let d = parse_decimal(s).ok_or_else(|| String::from("expected real number"))?;
    match scale_decimal(&d, 1, i64::from(frac_digits)) {
        Some(v) if v <= u128::from(u64::MAX) => Ok(v as u64),
        _ => Err("out of range".into()),
    }
}

/// A unit suffix: text, power of ten and factor.
type Unit = (&'static str, i64, u128);

/// Order matters: the first suffix that ends the string wins.
const SECONDS_UNITS: &[Unit] = &[
    ("s", 0, 1),
    ("sec", 0, 1),
    ("m", 0, 60),
    ("min", 0, 60),
    ("h", 0, 3600),
    ("hr", 0, 3600),
    ("d", 0, 86400),
    ("day", 0, 86400),
];
const SECONDS_PREFIXES: &[(u8, i64)] = &[(b'm', -3), (b'u', -6), (b'n', -9)];

const BANDWIDTH_UNITS: &[Unit] = &[
    ("baud", -3, 125),
    ("bps", -3, 125),
    ("b/s", -3, 125),
    ("Bps", 0, 1),
    ("B/s", 0, 1),
];
const BANDWIDTH_PREFIXES: &[(u8, i64)] = &[(b'k', 3), (b'K', 3), (b'M', 6), (b'G', 9)];

/// Splits a trailing unit (with optional one-letter prefix directly before
/// it, and optional space before that) off `s`. Returns the number part,
/// its power of ten, factor, and whether a unit was present.
fn split_unit<'a>(
    s: &'a str,
    units: &[Unit],
    prefixes: &[(u8, i64)],
) -> (&'a str, i64, u128, bool) {
    for &(suffix, power, factor) in units {
        if let Some(mut rest) = s.strip_suffix(suffix) {
            let mut power = power;
            if let Some(&last) = rest.as_bytes().last() {
                if let Some(&(_, delta)) = prefixes.iter().find(|p| p.0 == last) {
                    power += delta;
                    rest = &rest[..rest.len() - 1];
                }
            }
            let rest = rest.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
            return (rest, power, factor, true);
        }
    }
    (s, 0, 1, false)
}

fn duration_from_nanos(ns: u128) -> Option<Duration> {
    let secs = u64::try_from(ns / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (ns % 1_000_000_000) as u32))
}

/// Parses a non-negative time interval (Click's SecondsArg): a real number
/// with optional unit `s`/`sec`, `ms`/`msec`, `us`/`usec`, `ns`/`nsec`,
/// `m`/`min`, `h`/`hr`, `d`/`day` (space allowed before the unit);
/// no unit means seconds. Rounded to the nearest nanosecond.
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    let (num, power, factor, _) = split_unit(s, SECONDS_UNITS, SECONDS_PREFIXES);
    let d = parse_decimal(num).ok_or_else(|| String::from("expected time in seconds"))?;
    scale_decimal(&d, factor, power + 9)
        .and_then(duration_from_nanos)
        .ok_or_else(|| String::from("out of range"))
}

/// Parses a timestamp (Click's TimestampArg): same syntax as
/// [`parse_seconds`], typically seconds since the epoch such as
/// `1189383079.180265331`.
pub fn parse_timestamp(s: &str) -> Result<Duration, String> {
    parse_seconds(s).map_err(|e| {
        if e == "out of range" {
            e
        } else {
            "expected timestamp".into()
        }
    })
}

/// Parses a possibly negative timestamp (Click's `TimestampArg(true)`):
/// returns whether it is negative, and its magnitude. `-0` is not negative.
pub fn parse_signed_timestamp(s: &str) -> Result<(bool, Duration), String> {
    match s.strip_prefix('-') {
        Some(rest) if !rest.starts_with(['-', '+']) => {
            let d = parse_timestamp(rest)?;
            Ok((!d.is_zero(), d))
        }
        _ => parse_timestamp(s).map(|d| (false, d)),
    }
}

/// Parses a bandwidth as bytes per second (Click's BandwidthArg): a real
/// number with optional unit `bps`, `b/s` or `baud` (bits per second) or
/// `Bps`, `B/s` (bytes per second), each optionally prefixed by `k`/`K`
/// (10^3), `M` (10^6) or `G` (10^9). No unit means bytes per second.
/// `10Mbps` is 1 250 000. Rounded to the nearest byte per second.
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let (num, power, factor, _) = split_unit(s, BANDWIDTH_UNITS, BANDWIDTH_PREFIXES);
    let d = parse_decimal(num).ok_or_else(|| String::from("expected bandwidth"))?;
    match scale_decimal(&d, factor, power) {
        Some(v) if v <= u128::from(u64::MAX) => Ok(v as u64),
        _ => Err("out of range".into()),
    }
}

/// Whether a bandwidth string carries a unit; Click warns "no units on
/// bandwidth, assuming Bps" in some contexts when it does not.
pub fn bandwidth_has_unit(s: &str) -> bool {
    split_unit(s, BANDWIDTH_UNITS, BANDWIDTH_PREFIXES).3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bools() {
        for t in ["true", "yes", "1", "t", "y"] {
            assert_eq!(parse_bool(t), Ok(true), "{t}");
        }
        for f in ["false", "no", "0", "f", "n"] {
            assert_eq!(parse_bool(f), Ok(false), "{f}");
        }
        for bad in ["", "on", "off", "TRUE", "True", "2", " true", "yess"] {
            assert_eq!(parse_bool(bad), Err("expected boolean".into()), "{bad}");
        }
    }

    #[test]
    fn unsigned() {
        assert_eq!(parse_u32("0"), Ok(0));
        assert_eq!(parse_u32("14"), Ok(14));
        assert_eq!(parse_u32("+14"), Ok(14));
        assert_eq!(parse_u32("0x1F"), Ok(31));
        assert_eq!(parse_u32("0X1f"), Ok(31));
        assert_eq!(parse_u32("0b101"), Ok(5));
        assert_eq!(parse_u32("017"), Ok(15));
        assert_eq!(parse_u32("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_u32("0x_1"), Err("expected unsigned integer".into()));
        assert_eq!(parse_u32("0xF_F"), Ok(255));
        assert_eq!(parse_u32("4294967295"), Ok(u32::MAX));
        assert_eq!(
            parse_u32("4294967296"),
            Err("out of range, bound 4294967295".into())
        );
        assert_eq!(parse_u8("255"), Ok(255));
        assert_eq!(parse_u8("256"), Err("out of range, bound 255".into()));
        assert_eq!(parse_u16("65536"), Err("out of range, bound 65535".into()));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_u64("999999999999999999999999999999999999999999999999"),
            Err(format!("out of range, bound {}", u64::MAX))
        );
        assert_eq!(parse_usize("12"), Ok(12));
        for bad in [
            "", "-1", "-0", "1.5", "08", "0x", "0b", "0b2", "abc", "1_", "_1", "1__0", " 1", "1 ",
            "++1", "+", "0xg", "1e3",
        ] {
            assert_eq!(
                parse_u32(bad),
                Err("expected unsigned integer".into()),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn signed() {
        assert_eq!(parse_i32("-14"), Ok(-14));
        assert_eq!(parse_i32("-0x10"), Ok(-16));
        assert_eq!(parse_i32("-0"), Ok(0));
        assert_eq!(parse_i32("2147483647"), Ok(i32::MAX));
        assert_eq!(parse_i32("-2147483648"), Ok(i32::MIN));
        assert_eq!(
            parse_i32("2147483648"),
            Err("out of range, bound 2147483647".into())
        );
        assert_eq!(
            parse_i32("-2147483649"),
            Err("out of range, bound -2147483648".into())
        );
        assert_eq!(parse_i8("-128"), Ok(-128));
        assert_eq!(parse_i8("128"), Err("out of range, bound 127".into()));
        assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(
            parse_i64("-9223372036854775809"),
            Err(format!("out of range, bound {}", i64::MIN))
        );
        assert_eq!(parse_isize("-5"), Ok(-5));
        assert_eq!(parse_i16("+-1"), Err("expected integer".into()));
        assert_eq!(parse_i16("--1"), Err("expected integer".into()));
        assert_eq!(parse_i16("-"), Err("expected integer".into()));
    }

    #[test]
    fn radix() {
        assert_eq!(parse_u64_radix("10", 10), Ok(10));
        assert_eq!(parse_u64_radix("010", 10), Ok(10));
        assert_eq!(parse_u64_radix("ff", 16), Ok(255));
        assert_eq!(parse_u64_radix("0xff", 16), Ok(255));
        assert_eq!(
            parse_u64_radix("0x10", 10),
            Err("expected unsigned integer".into())
        );
        assert_eq!(
            parse_u64_radix("1", 1),
            Err("expected unsigned integer".into())
        );
        assert_eq!(parse_u64_radix("z", 36), Ok(35));
    }

    #[test]
    fn reals() {
        assert_eq!(parse_f64("1"), Ok(1.0));
        assert_eq!(parse_f64("-2.5"), Ok(-2.5));
        assert_eq!(parse_f64(".5"), Ok(0.5));
        assert_eq!(parse_f64("1e-3"), Ok(0.001));
        assert_eq!(parse_f64("inf"), Ok(f64::INFINITY));
        assert!(parse_f64("nan").unwrap().is_nan());
        assert_eq!(parse_f64("1e400"), Err("out of range, bound inf".into()));
        assert_eq!(parse_f64("-1e400"), Err("out of range, bound -inf".into()));
        assert_eq!(parse_f64("1e-400"), Err("underflow, rounded to 0".into()));
        assert_eq!(parse_f64("0e-400"), Ok(0.0));
        for bad in ["", " 1", "1 ", "abc", "1.2.3", "1x"] {
            assert_eq!(
                parse_f64(bad),
                Err("expected real number".into()),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn decimals() {
        let d = |s: &str, k| parse_decimal_fixed(s, k);
        assert_eq!(d("1.5", 3), Ok(1500));
        assert_eq!(d("0.0005", 3), Ok(1));
        assert_eq!(d("0.0004", 3), Ok(0));
        assert_eq!(d("1e3", 0), Ok(1000));
        assert_eq!(d("10.", 0), Ok(10));
        assert_eq!(d(".1", 1), Ok(1));
        assert_eq!(d("0.000_000_01e10", 0), Ok(100));
        assert_eq!(d("1_000.5", 1), Ok(10005));
        assert_eq!(d("1e", 0), Err("expected real number".into()));
        assert_eq!(d("1e+", 0), Err("expected real number".into()));
        assert_eq!(d(".", 0), Err("expected real number".into()));
        assert_eq!(d("-1", 0), Err("expected real number".into()));
        assert_eq!(d("1._5", 0), Err("expected real number".into()));
        assert_eq!(d("1_.5", 0), Err("expected real number".into()));
        assert_eq!(d("1e30", 0), Err("out of range".into()));
        assert_eq!(d("1e999999999999", 0), Err("out of range".into()));
        assert_eq!(d("1e-999999999999", 0), Ok(0));
        assert_eq!(
            d("123456789012345678901234567890123456789012345", 0),
            Err("out of range".into())
        );
        assert_eq!(
            d("0.123456789012345678901234567890123456789012345", 9),
            Ok(123456789)
        );
        assert_eq!(parse_fixed_point("0.5", 16), Ok(0x8000));
        assert_eq!(parse_fixed_point("1", 16), Ok(0x10000));
        assert_eq!(parse_fixed_point("0.25", 2), Ok(1));
        assert_eq!(parse_fixed_point("65536", 16), Err("out of range".into()));
        assert_eq!(parse_fixed_point("0.5", 32), Ok(0x8000_0000));
        assert_eq!(
            parse_fixed_point("1", 33),
            Err("expected real number".into())
        );
    }

    #[test]
    fn seconds() {
        let ms = |n| Duration::from_millis(n);
        assert_eq!(parse_seconds("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_seconds("1.5"), Ok(ms(1500)));
        assert_eq!(parse_seconds("10ms"), Ok(ms(10)));
        assert_eq!(parse_seconds("10 ms"), Ok(ms(10)));
        assert_eq!(parse_seconds("10msec"), Ok(ms(10)));
        assert_eq!(parse_seconds("2us"), Ok(Duration::from_micros(2)));
        assert_eq!(parse_seconds("2usec"), Ok(Duration::from_micros(2)));
        assert_eq!(parse_seconds("3ns"), Ok(Duration::from_nanos(3)));
        assert_eq!(parse_seconds("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_seconds("1sec"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_seconds("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_seconds("1min"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_seconds("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_seconds("1 hr"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_seconds("1d"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_seconds("1.5day"), Ok(Duration::from_secs(129600)));
        assert_eq!(parse_seconds("3.6e6 msec"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_seconds("60m"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_seconds("0.0000000005"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_seconds("0.0000000004"), Ok(Duration::ZERO));
        assert_eq!(
            parse_seconds("1189383079.180265331"),
            Ok(Duration::new(1189383079, 180265331))
        );
        for bad in [
            "", "s", "ms", "-1", "1 m s", "1x", "1hs", "1 s s", "1ps", "1 M",
        ] {
            assert_eq!(
                parse_seconds(bad),
                Err("expected time in seconds".into()),
                "{bad:?}"
            );
        }
        assert_eq!(parse_seconds("1e30"), Err("out of range".into()));
        assert_eq!(
            parse_seconds("18446744073709551615"),
            Ok(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            parse_seconds("18446744073709551616"),
            Err("out of range".into())
        );
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1.25"), Ok(Duration::from_millis(1250)));
        assert_eq!(parse_timestamp("x"), Err("expected timestamp".into()));
        assert_eq!(
            parse_signed_timestamp("-1.5"),
            Ok((true, Duration::from_millis(1500)))
        );
        assert_eq!(
            parse_signed_timestamp("1.5"),
            Ok((false, Duration::from_millis(1500)))
        );
        assert_eq!(parse_signed_timestamp("-0"), Ok((false, Duration::ZERO)));
        assert_eq!(
            parse_signed_timestamp("--1"),
            Err("expected timestamp".into())
        );
        assert_eq!(
            parse_signed_timestamp("-+1"),
            Err("expected timestamp".into())
        );
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10Mbps"), Ok(1_250_000));
        assert_eq!(parse_bandwidth("10 Mbps"), Ok(1_250_000));
        assert_eq!(parse_bandwidth("1Gbps"), Ok(125_000_000));
        assert_eq!(parse_bandwidth("40Gbps"), Ok(5_000_000_000));
        assert_eq!(parse_bandwidth("1000Bps"), Ok(1000));
        assert_eq!(parse_bandwidth("1kBps"), Ok(1000));
        assert_eq!(parse_bandwidth("1KBps"), Ok(1000));
        assert_eq!(parse_bandwidth("1MB/s"), Ok(1_000_000));
        assert_eq!(parse_bandwidth("8b/s"), Ok(1));
        assert_eq!(parse_bandwidth("9600baud"), Ok(1200));
        assert_eq!(parse_bandwidth("1000"), Ok(1000));
        assert_eq!(parse_bandwidth("1.5kbps"), Ok(188));
        assert_eq!(parse_bandwidth("4bps"), Ok(1));
        assert_eq!(parse_bandwidth("3bps"), Ok(0));
        assert_eq!(parse_bandwidth("1e30GBps"), Err("out of range".into()));
        for bad in [
            "", "bps", "10k", "10 M bps", "10mbps", "10Tbps", "ten", "-1Bps", "10kb",
        ] {
            assert_eq!(
                parse_bandwidth(bad),
                Err("expected bandwidth".into()),
                "{bad:?}"
            );
        }
        assert!(bandwidth_has_unit("1kbps"));
        assert!(!bandwidth_has_unit("1000"));
    }
}
