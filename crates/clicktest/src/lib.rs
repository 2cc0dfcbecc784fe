//! Library half of `clicktest`: reading Click's `.clicktest` test format and
//! comparing a test's outputs against its expectations.
//!
//! The runner (`src/main.rs`) owns processes, temporary directories and
//! reporting; everything here is pure so it can be unit-tested without
//! running shell scripts.

pub mod compare;
pub mod parse;

pub use compare::{check_output, CheckError, Mismatch};
pub use parse::{
    parse, Expect, ExpectKind, Ignore, IgnoreKind, InputFile, ParseError, Require, Test,
};
