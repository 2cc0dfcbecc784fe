//! # RoundRobinIPMapper
//!
//! An IPRewriter mapper that hands out its patterns in turn.
//!
//! ## Synopsis
//! `RoundRobinIPMapper(PATTERN1, ..., PATTERNn)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each PATTERN is `SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`, as in
//! IPRewriter's `pattern` input spec. A rewriter whose input spec names
//! this element asks it for a pattern for each new flow; the patterns are
//! used in round-robin order, so the flows are spread over them (a simple
//! load balancer).
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! r :: RoundRobinIPMapper(- - 10.0.0.1 - 0 1, - - 10.0.0.2 - 0 1);
//! rw :: IPRewriter(r, drop);
//! ```

use std::sync::{Arc, Mutex};

use rclick_core::conf::split_args;
use rclick_core::{ConfigResult, Element, InitCtx};

use super::rewriter_base::{Mapper, MapperKind, SharedMapper};

pub struct RoundRobinIPMapper {
    pub mapper: SharedMapper,
}

impl Default for RoundRobinIPMapper {
    fn default() -> Self {
        RoundRobinIPMapper {
            mapper: Arc::new(Mutex::new(Mapper {
                patterns: Vec::new(),
                kind: MapperKind::RoundRobin { next: 0 },
            })),
        }
    }
}

rclick_core::element_class!(RoundRobinIPMapper);

impl Element for RoundRobinIPMapper {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::DEFAULT - 1
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let args = split_args(conf);
        let patterns = super::sourceiphashmapper::parse_mapper_patterns(&args, ctx)?;
        let mut m = self.mapper.lock().unwrap_or_else(|e| e.into_inner());
        m.patterns = patterns;
        m.kind = MapperKind::RoundRobin { next: 0 };
        Ok(())
    }
}
