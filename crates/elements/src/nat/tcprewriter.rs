//! # TCPRewriter
//!
//! Rewrites TCP packets' addresses and ports.
//!
//! ## Synopsis
//! `TCPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! An IPRewriter for TCP only (see IPRewriter for the input specs): other
//! protocols, non-first fragments (except those of a datagram whose first
//! fragment was rewritten, as in IPRewriter) and packets with fewer than 8
//! transport bytes go to the input's `pass` output or are dropped. Mappings track
//! TCP state and expire as IPRewriter's TCP mappings do.
//!
//! ## Keywords
//! - **TCP_TIMEOUT** (or TIMEOUT), **TCP_DONE_TIMEOUT**,
//!   **TCP_NODATA_TIMEOUT**, **TCP_GUARANTEE** (seconds): as in IPRewriter.
//! - **DST_ANNO**, **REPLY_ANNO**, **ENDPOINT_INDEPENDENT**, **PORT_PARITY**:
//!   as in IPRewriter.
//! - **MAPPING_CAPACITY** (or CAPACITY), **TIMEOUT**, **GUARANTEE**,
//!   **REAP_INTERVAL**: as in IPRewriter (default timeout 300 seconds).
//!
//! ## Handlers
//! - `table` (read): the mappings, one line per direction.
//! - `lookup` (read with parameter `SADDR SPORT DADDR DPORT`): the
//!   rewritten flow of a mapping, or nothing.
//! - `nmappings` (read), `mapping_failures` (read): mappings made and
//!   refused; `table_size`, `size`, `mapping_count` (read): mappings in
//!   the table. `timeouts` (read, rclick): the timeout keywords and their
//!   values in seconds, one per line.
//! - `capacity` (read/write), `clear` (write), `patterns` (read),
//!   `patternN` (read/write): as in IPRewriter.
//! - `drops` (read, rclick): packets dropped by the element itself.
//! - `add_mapping`, `remove_mapping` (write, rclick): as in IPRewriter;
//!   PROTO is `tcp` only.
//!
//! ## Example
//! ```click
//! rw :: TCPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("TCPRewriter" => Rewriter::new(RwKind::Tcp));
