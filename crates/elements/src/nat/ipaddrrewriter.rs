//! # IPAddrRewriter
//!
//! Rewrites packets' source addresses (basic NAT, no ports).
//!
//! ## Synopsis
//! `IPAddrRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! Rewrites the source address of every IP packet by a mapping keyed by
//! the source address alone; replies (packets whose destination is a
//! rewritten address) get the original address back as destination. The
//! input specs are IPRewriter's; only the source address of a pattern
//! matters (`pattern 1.0.0.1-1.0.0.254 - - - 0 1` spreads sources over a
//! range). The IP checksum, and the TCP or UDP checksum of first fragments,
//! are updated. Packets that are not IPv4 are dropped and counted.
//!
//! ## Keywords
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
//! rw :: IPAddrRewriter(pattern 1.0.0.1 - - - 0 1, drop);
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("IPAddrRewriter" => Rewriter::new(RwKind::IpAddr));
