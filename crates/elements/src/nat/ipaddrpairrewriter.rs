//! # IPAddrPairRewriter
//!
//! Rewrites packets' source and destination addresses (no ports).
//!
//! ## Synopsis
//! `IPAddrPairRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! Rewrites IP packets by mappings keyed by the pair of source and
//! destination addresses, so that replies are rewritten back. The input
//! specs are IPRewriter's; a pattern's addresses matter, its ports not. The
//! IP checksum, and the TCP or UDP checksum of first fragments, are
//! updated. Packets that are not IPv4 are dropped and counted.
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
//! rw :: IPAddrPairRewriter(pattern 1.0.0.1 - 0 1, drop);
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("IPAddrPairRewriter" => Rewriter::new(RwKind::IpAddrPair));
