//! # CheckIPHeader2
//!
//! Checks IP headers, without checking checksums.
//!
//! ## Synopsis
//! `CheckIPHeader2([OFFSET, keywords OFFSET, INTERFACES, BADSRC, GOODDST, VERBOSE, DETAILS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Exactly like CheckIPHeader, except that it never checks the IP header
//! checksum (a CHECKSUM keyword is accepted and ignored). Useful when
//! checksums are known to be valid, or for traces whose checksums were
//! zeroed.
//!
//! ## Keywords
//! As CheckIPHeader: OFFSET, INTERFACES, BADSRC, GOODDST, VERBOSE, DETAILS.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): per-reason counts, as
//!   CheckIPHeader.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap) -> Strip(14) -> CheckIPHeader2 -> IPPrint -> Discard;
//! ```

use super::checkipheader::CheckIPHeader;

// One element with the checksum check switched off for good: the class
// differs from CheckIPHeader only in its name and that default.
rclick_core::element_class!("CheckIPHeader2" => CheckIPHeader::without_checksum());
