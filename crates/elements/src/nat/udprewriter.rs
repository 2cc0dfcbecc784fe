//! # UDPRewriter
//!
//! Rewrites UDP (and TCP) packets' addresses and ports.
//!
//! ## Synopsis
//! `UDPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])`
//!
//! ## Ports and processing
//! One or more push inputs (one per INPUTSPEC); one or more push outputs.
//!
//! ## Description
//! An IPRewriter with one table for UDP, TCP and DCCP flows and one
//! timeout (see IPRewriter for the input specs). It tracks no TCP state.
//! DCCP packets get their checksum updated with their ports and addresses
//! (Click leaves it stale, so that receivers drop them).
//! Other protocols, non-first fragments (except those of a datagram whose
//! first fragment was rewritten, as in IPRewriter) and packets with fewer
//! than 8 transport bytes go to the input's `pass` output or are dropped.
//!
//! ## Keywords
//! - **UDP_TIMEOUT** (or TIMEOUT), **UDP_GUARANTEE** (or GUARANTEE)
//!   (seconds): defaults 300 and 5.
//! - **DST_ANNO**, **REPLY_ANNO**, **ENDPOINT_INDEPENDENT**, **PORT_PARITY**:
//!   as in IPRewriter.
//! - **MAPPING_CAPACITY** (or CAPACITY), **REAP_INTERVAL**: as in IPRewriter.
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
//! - `add_mapping`, `remove_mapping` (write, rclick): as in IPRewriter;
//!   PROTO is `udp` (or `tcp`, `dccp`: UDPRewriter keeps them in one table).
//!
//! ## Example
//! ```click
//! rw :: UDPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
//! ```

use super::rewriter::{Rewriter, RwKind};

rclick_core::element_class!("UDPRewriter" => Rewriter::new(RwKind::Udp));
