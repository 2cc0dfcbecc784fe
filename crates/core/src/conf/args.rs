//! The keyword/positional argument reader (Click's `Args`).

use super::addr::{
    parse_ether, parse_ipv4, parse_ipv4_prefix, parse_ipv6, parse_ipv6_prefix, Ipv4Prefix,
    Ipv6Prefix,
};
use super::num::*;
use super::text::{parse_bytes, parse_string};
use crate::wire::EtherAddr;
use rclick_lang::args::{is_space, split_config_args as split_args};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

/// A type with a default textual syntax, used by [`Args::read`] and
/// friends when no explicit parser is given.
pub trait FromArg: Sized {
    /// Parses one argument value. The error is the message without the
    /// keyword prefix, e.g. `expected unsigned integer`.
    fn from_arg(s: &str) -> Result<Self, String>;
}

/// A parser's message as Click words it after the keyword: a malformed
/// integer is `invalid number`, any other malformed value `parse error`
/// (rclick's parsers say what they expected, e.g. `expected IP address`;
/// Click's `Args` does not). Other messages (`out of range, bound 255`)
/// are already Click's.
pub fn click_wording(msg: &str) -> &str {
    match msg {
        "expected unsigned integer" | "expected integer" => "invalid number",
        m if m.starts_with("expected ") => "parse error",
        m => m,
    }
}

/// The value a mandatory read returns when the argument is missing or
/// invalid. It is never meant to be used: [`Args::complete`] fails then.
pub trait Fallback {
    /// A placeholder value.
    fn fallback() -> Self;
}

macro_rules! from_arg {
    ($($t:ty => $f:expr;)*) => {$(
        impl FromArg for $t {
            fn from_arg(s: &str) -> Result<Self, String> {
                $f(s)
            }
        }
    )*};
}

from_arg! {
    bool => parse_bool;
    u8 => parse_u8;
    u16 => parse_u16;
    u32 => parse_u32;
    u64 => parse_u64;
    usize => parse_usize;
    i8 => parse_i8;
    i16 => parse_i16;
    i32 => parse_i32;
    i64 => parse_i64;
    isize => parse_isize;
    f64 => parse_f64;
    String => parse_string;
    Vec<u8> => parse_bytes;
    Duration => parse_seconds;
    Ipv4Addr => parse_ipv4;
    Ipv6Addr => parse_ipv6;
    Ipv4Prefix => parse_ipv4_prefix;
    Ipv6Prefix => parse_ipv6_prefix;
    EtherAddr => parse_ether;
    Bandwidth => |s| parse_bandwidth(s).map(Bandwidth);
}

macro_rules! fallback_default {
    ($($t:ty),*) => {$(
        impl Fallback for $t {
            fn fallback() -> Self {
                Default::default()
            }
        }
    )*};
}

fallback_default!(
    bool, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, String,
    Duration, EtherAddr, Bandwidth
);

impl<T> Fallback for Vec<T> {
    fn fallback() -> Self {
        Vec::new()
    }
}

impl<T> Fallback for Option<T> {
    fn fallback() -> Self {
        None
    }
}

impl<A: Fallback, B: Fallback> Fallback for (A, B) {
    fn fallback() -> Self {
        (A::fallback(), B::fallback())
    }
}

impl Fallback for Ipv4Addr {
    fn fallback() -> Self {
        Ipv4Addr::UNSPECIFIED
    }
}

impl Fallback for Ipv6Addr {
    fn fallback() -> Self {
        Ipv6Addr::UNSPECIFIED
    }
}

impl Fallback for Ipv4Prefix {
    fn fallback() -> Self {
        Ipv4Prefix::new(Ipv4Addr::UNSPECIFIED, 0)
    }
}

impl Fallback for Ipv6Prefix {
    fn fallback() -> Self {
        Ipv6Prefix::new(Ipv6Addr::UNSPECIFIED, 0)
    }
}

/// A bandwidth in bytes per second, parsed with [`parse_bandwidth`]
/// (`10Mbps`, `1kBps`, bare number = bytes per second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bandwidth(pub u64);

/// Slot states besides "unread" (0 = unread, positional-looking; n > 0 =
/// unread, starts with an n-byte keyword).
const USED_POSITIONALLY: isize = -1;
const USED_AS_KEYWORD: isize = -2;

#[derive(Clone, Copy, Default)]
struct Flags {
    positional: bool,
    mandatory: bool,
    first_match: bool,
}

const KEYWORD: Flags = Flags {
    positional: false,
    mandatory: false,
    first_match: false,
};
const POSITIONAL: Flags = Flags {
    positional: true,
    ..KEYWORD
};
const MANDATORY: Flags = Flags {
    mandatory: true,
    ..KEYWORD
};
const MANDATORY_POSITIONAL: Flags = Flags {
    positional: true,
    mandatory: true,
    first_match: false,
};

/// Length of the keyword that starts `arg`, or 0 if it has none.
///
/// As in Click, a keyword is a word matching `[A-Za-z_][A-Za-z0-9_:.?!]*`
/// followed by white space and a non-empty value; case does not matter
/// for detection, only for matching.
fn keyword_len(arg: &str) -> usize {
    let b = arg.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return 0;
    }
    let word = 1 + b[1..]
        .iter()
        .take_while(|&&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'?' | b'!')
        })
        .count();
    let space = b[word..].iter().take_while(|&&c| is_space(c)).count();
    if space == 0 || word + space == b.len() {
        0
    } else {
        word
    }
}

/// Reads an element's configuration arguments by keyword and position,
/// collecting every error (Click's `Args`).
///
/// An argument is a *keyword argument* when it starts with a word
/// (`[A-Za-z_][A-Za-z0-9_:.?!]*`) followed by white space and a value, as in
/// `LENGTH 14`; its value is the rest, trimmed. Other arguments are
/// positional. Reads consume arguments:
///
/// * `read*_p*` reads take the next positional argument, in call order, if
///   the keyword is not given. Positional reading stops at the first
///   argument already consumed as a keyword, so positionals come first.
///   An argument that looks like a keyword is not taken positionally,
///   except by a mandatory read whose keyword is absent.
/// * When a keyword is repeated, the last occurrence wins (except for
///   [`read_all`](Args::read_all)).
/// * An empty positional argument (as in `Foo(, 5)`) counts as not given.
///
/// ```
/// use rclick_core::conf::Args;
/// let mut args = Args::new("14, BURST 2, STOP true");
/// let len: u32 = args.read_mp("LENGTH");
/// let burst: Option<u32> = args.read_p("BURST");
/// let stop = args.read_or("STOP", false);
/// assert!(args.complete().is_ok());
/// assert_eq!((len, burst, stop), (14, Some(2), true));
/// ```
#[derive(Debug, Clone)]
pub struct Args {
    args: Vec<String>,
    state: Vec<isize>,
    errors: Vec<String>,
}

impl Args {
    /// Splits a configuration string (see [`split_args`]) and prepares to
    /// read it.
    pub fn new(config: &str) -> Self {
        Self::from_vec(split_args(config))
    }

    /// Prepares to read already split arguments.
    pub fn from_vec(args: Vec<String>) -> Self {
        let state = args.iter().map(|a| keyword_len(a) as isize).collect();
        Args {
            args,
            state,
            errors: Vec::new(),
        }
    }

    /// Finds the argument for `kw` and marks it (and any other occurrences
    /// of the keyword) consumed; returns its value text.
    fn find(&mut self, kw: &str, flags: Flags) -> Option<String> {
        introspect::note(&self.args, kw, flags);
        let mut got: Option<usize> = None;
        let mut got_kw = 0;
        // -1: not yet known; -2: the first unconsumed slot was a keyword,
        // so no positional argument remains.
        let mut position: isize = -1;
        for i in 0..self.args.len() {
            let st = self.state[i];
            if position == -1 && st != USED_POSITIONALLY {
                position = if st >= 0 { i as isize } else { -2 };
            }
            if st > 0
                && st as usize == kw.len()
                && self.args[i].as_bytes().starts_with(kw.as_bytes())
            {
                got = Some(i);
                got_kw = st as usize;
                self.state[i] = USED_AS_KEYWORD;
                if flags.first_match {
                    break;
                }
            }
        }
        if flags.positional && position >= 0 {
            let p = position as usize;
            let st = self.state[p];
            if st >= 0 && ((got.is_none() && flags.mandatory) || st == 0) {
                // Click consumes the positional slot even when a later
                // keyword supplies the value; the keyword wins.
                if !matches!(got, Some(g) if g >= p) {
                    got = Some(p);
                    got_kw = 0;
                }
                self.state[p] = USED_POSITIONALLY;
            }
        }
        let text = match got {
            Some(g) if got_kw > 0 => self.args[g][got_kw..]
                .trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8))
                .to_string(),
            Some(g) => self.args[g].clone(),
            None => String::new(),
        };
        if text.is_empty() {
            if flags.mandatory {
                self.errors.push(format!("{kw}: required argument missing"));
            }
            return None;
        }
        Some(text)
    }

    fn read_impl<T>(
        &mut self,
        kw: &str,
        flags: Flags,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let text = self.find(kw, flags)?;
        match parse(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.push(format!("{kw}: {}", click_wording(&e)));
                None
            }
        }
    }

    /// Optional keyword-only argument.
    pub fn read<T: FromArg>(&mut self, kw: &str) -> Option<T> {
        self.read_impl(kw, KEYWORD, T::from_arg)
    }

    /// Optional argument, by keyword or next position.
    pub fn read_p<T: FromArg>(&mut self, kw: &str) -> Option<T> {
        self.read_impl(kw, POSITIONAL, T::from_arg)
    }

    /// Mandatory keyword-only argument.
    pub fn read_m<T: FromArg + Fallback>(&mut self, kw: &str) -> T {
        self.read_impl(kw, MANDATORY, T::from_arg)
            .unwrap_or_else(T::fallback)
    }

    /// Mandatory argument, by keyword or next position.
    pub fn read_mp<T: FromArg + Fallback>(&mut self, kw: &str) -> T {
        self.read_impl(kw, MANDATORY_POSITIONAL, T::from_arg)
            .unwrap_or_else(T::fallback)
    }

    /// Keyword-only argument with a default for when it is absent (or
    /// invalid, which is also reported as an error).
    pub fn read_or<T: FromArg>(&mut self, kw: &str, default: T) -> T {
        self.read_impl(kw, KEYWORD, T::from_arg).unwrap_or(default)
    }

    /// Argument by keyword or next position, with a default.
    pub fn read_p_or<T: FromArg>(&mut self, kw: &str, default: T) -> T {
        self.read_impl(kw, POSITIONAL, T::from_arg)
            .unwrap_or(default)
    }

    /// [`read`](Args::read) with an explicit parser, e.g. `parse_bandwidth`.
    pub fn read_with<T>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        self.read_impl(kw, KEYWORD, parser)
    }

    /// [`read_p`](Args::read_p) with an explicit parser.
    pub fn read_p_with<T>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        self.read_impl(kw, POSITIONAL, parser)
    }

    /// [`read_m`](Args::read_m) with an explicit parser.
    pub fn read_m_with<T: Fallback>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
    ) -> T {
        self.read_impl(kw, MANDATORY, parser)
            .unwrap_or_else(T::fallback)
    }

    /// [`read_mp`](Args::read_mp) with an explicit parser.
    pub fn read_mp_with<T: Fallback>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
    ) -> T {
        self.read_impl(kw, MANDATORY_POSITIONAL, parser)
            .unwrap_or_else(T::fallback)
    }

    /// [`read_or`](Args::read_or) with an explicit parser.
    pub fn read_or_with<T>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
        default: T,
    ) -> T {
        self.read_impl(kw, KEYWORD, parser).unwrap_or(default)
    }

    /// [`read_p_or`](Args::read_p_or) with an explicit parser.
    pub fn read_p_or_with<T>(
        &mut self,
        kw: &str,
        parser: impl FnOnce(&str) -> Result<T, String>,
        default: T,
    ) -> T {
        self.read_impl(kw, POSITIONAL, parser).unwrap_or(default)
    }

    /// Every occurrence of a repeated keyword, in order (keyword only).
    pub fn read_all<T: FromArg>(&mut self, kw: &str) -> Vec<T> {
        self.read_all_with(kw, T::from_arg)
    }

    /// [`read_all`](Args::read_all) with an explicit parser.
    pub fn read_all_with<T>(
        &mut self,
        kw: &str,
        parser: impl Fn(&str) -> Result<T, String>,
    ) -> Vec<T> {
        let flags = Flags {
            first_match: true,
            ..KEYWORD
        };
        let mut out = Vec::new();
        // Keyword values are never empty, so `find` returns None only once
        // no occurrence is left; each call consumes one, so this ends.
        while let Some(text) = self.find(kw, flags) {
            match parser(&text) {
                Ok(v) => out.push(v),
                Err(e) => self.errors.push(format!("{kw}: {}", click_wording(&e))),
            }
        }
        out
    }

    /// Whether keyword `kw` was given (without consuming it).
    pub fn has_keyword(&self, kw: &str) -> bool {
        self.args.iter().zip(&self.state).any(|(a, &st)| {
            st > 0 && st as usize == kw.len() && a.as_bytes().starts_with(kw.as_bytes())
        })
    }

    /// Takes every argument not consumed yet, in order and verbatim
    /// (keyword-looking ones included), e.g. for Classifier patterns.
    pub fn take_rest(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (a, st) in self.args.iter().zip(self.state.iter_mut()) {
            if *st >= 0 {
                out.push(a.clone());
                *st = USED_POSITIONALLY;
            }
        }
        out
    }

    /// Records an element-specific error (printed as given).
    pub fn error(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }

    /// Records an error about argument `kw`, printed as `KW: message`.
    pub fn error_for(&mut self, kw: &str, message: &str) {
        self.errors.push(format!("{kw}: {message}"));
    }

    /// Errors recorded so far (not counting unread arguments).
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Whether no error has been recorded so far.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// Finishes reading: every argument must have been consumed. Returns
    /// all errors: parse errors and missing arguments in read order, then
    /// `KW: unknown argument` for each unread keyword argument, then
    /// `too many arguments` if positional ones remain.
    pub fn complete(mut self) -> Result<(), Vec<String>> {
        let mut too_many = false;
        for (a, &st) in self.args.iter().zip(&self.state) {
            if st == 0 {
                too_many = true;
            } else if st > 0 {
                self.errors
                    .push(format!("{}: unknown argument", &a[..st as usize]));
            }
        }
        if too_many {
            self.errors.push("too many arguments".into());
        }
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors)
        }
    }

    /// Finishes reading without requiring every argument to be used
    /// (Click's `consume`): returns the unread arguments, or the errors.
    pub fn consume(mut self) -> Result<Vec<String>, Vec<String>> {
        let rest = self.take_rest();
        if self.errors.is_empty() {
            Ok(rest)
        } else {
            Err(self.errors)
        }
    }
}

/// Which arguments elements ask for, for the test that sweeps every
/// argument of every class with hostile values
/// (crates/elements/tests/argument_sweep.rs). Off unless a test turns it
/// on for its thread; then each read of [`Args`] is noted.
#[doc(hidden)]
pub mod introspect {
    use std::cell::RefCell;

    /// One read: the arguments being read, the keyword asked for, and
    /// whether the read may take it by position and must find it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ArgRead {
        pub args: Vec<String>,
        pub keyword: String,
        pub positional: bool,
        pub mandatory: bool,
    }

    thread_local! {
        static READS: RefCell<Option<Vec<ArgRead>>> = const { RefCell::new(None) };
    }

    /// Runs `f`, returning what it returned and every read it made.
    pub fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<ArgRead>) {
        READS.with(|r| *r.borrow_mut() = Some(Vec::new()));
        let out = f();
        let reads = READS.with(|r| r.borrow_mut().take()).unwrap_or_default();
        (out, reads)
    }

    pub(super) fn note(args: &[String], kw: &str, flags: super::Flags) {
        let _ = READS.try_with(|r| {
            if let Some(v) = r.borrow_mut().as_mut() {
                v.push(ArgRead {
                    args: args.to_vec(),
                    keyword: kw.to_string(),
                    positional: flags.positional,
                    mandatory: flags.mandatory,
                });
            }
        });
    }
}
