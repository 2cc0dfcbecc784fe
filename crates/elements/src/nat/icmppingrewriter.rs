//! # ICMPPingRewriter
//!
//! Rewrites ICMP echo requests and replies (addresses and identifier).
//!
//! ## Synopsis
//! `ICMPPingRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! Rewrites ICMP echo requests and their replies by mappings keyed by the
//! addresses and the echo identifier: a pattern's SPORT (a range) gives the
//! new identifier, so many inside hosts can ping through one address
//! (RFC 5508 query mappings). The input specs are IPRewriter's. Other
//! packets go to the input's `pass` output or are dropped. The IP and ICMP
//! checksums are updated.
//!
//! ## Keywords
//! - **DST_ANNO** (boolean): set the destination IP annotation; default true.
//! - **MAPPING_CAPACITY** (or CAPACITY), **TIMEOUT**, **GUARANTEE**,
//!   **REAP_INTERVAL**: as in IPRewriter (default timeout 300 seconds).
//!
//! ## Handlers
//! - `table` (read): the mappings, one line per direction.
//! - `nmappings` (read), `mapping_failures` (read): mappings made and
//!   refused; `table_size`, `size`, `mapping_count` (read): mappings in
//!   the table. `timeouts` (read, rclick): the timeout keywords and their
//!   values in seconds, one per line.
//! - `capacity` (read/write), `clear` (write), `patterns` (read),
//!   `patternN` (read/write): as in IPRewriter.
//! - `drops` (read, rclick): packets dropped by the element itself.
//!
//! ## Example
//! ```click
//! rw :: ICMPPingRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("ICMPPingRewriter" => Rewriter::new(RwKind::IcmpPing));
