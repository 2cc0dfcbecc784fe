//! Flows (the Router Plugins design, Decasper et al., SIGCOMM 1998): gates
//! that bind flows to outputs by the most specific six-tuple filter
//! (`sixtuple.rs` for filters and their order, `bestmatch.rs` for the DAG of
//! per-field best matches), a flow table caching each flow's bindings and
//! per-flow soft state (`flowtable.rs`, `table.rs`), and elements keeping
//! per-flow state in it (per-flow counters, a per-flow DRR scheduler).

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/flow_modules.rs"));
