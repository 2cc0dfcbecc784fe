//! Typed parsing of element configuration arguments, compatible with
//! Click's `Args` (args.hh) and `cp_*` functions (confparse.hh).
//!
//! * [`split_args`] splits a configuration string at top-level commas;
//!   [`unquote`] removes one level of quoting. These, and the rest of the
//!   lexing, are `rclick_lang::args`, shared with the language.
//! * `parse_*` functions parse one argument value; each returns
//!   `Err(message)` with the message Click would show after `KEYWORD: `.
//! * [`Args`] matches arguments to keywords and positions and collects
//!   every error.

mod addr;
mod args;
mod num;
mod text;

pub use addr::{
    parse_ether, parse_ipv4, parse_ipv4_addr_or_prefix, parse_ipv4_list, parse_ipv4_prefix,
    parse_ipv6, parse_ipv6_addr_or_prefix, parse_ipv6_prefix, Ipv4Prefix, Ipv6Prefix,
};
#[doc(hidden)]
pub use args::introspect;
pub use args::{Args, Bandwidth, Fallback, FromArg};
pub use num::{
    bandwidth_has_unit, parse_bandwidth, parse_bool, parse_decimal_fixed, parse_f64,
    parse_fixed_point, parse_i16, parse_i32, parse_i64, parse_i8, parse_isize, parse_seconds,
    parse_signed_timestamp, parse_timestamp, parse_u16, parse_u32, parse_u64, parse_u64_radix,
    parse_u8, parse_usize,
};
pub use rclick_lang::args::{
    split_config_args as split_args, split_words, uncomment, unquote, unquote_string,
};
pub use text::{
    is_word, parse_any, parse_bytes, parse_hex, parse_keyword, parse_string, parse_word,
};

#[cfg(test)]
mod tests;
