//! # SourceIPHashMapper
//!
//! An IPRewriter mapper that picks a pattern by hashing the source address.
//!
//! ## Synopsis
//! `SourceIPHashMapper(NNODES SEED, PATTERN1 ID1, ..., PATTERNn IDn)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each PATTERN is `SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`, as in
//! IPRewriter's `pattern` input spec, followed by a server ID (a
//! non-negative integer). For each new flow the source address is hashed
//! onto a ring holding NNODES points per server ID (placed by SEED),
//! and the pattern owning the next point is used: flows from one source
//! always get the same pattern, and adding a pattern moves few sources
//! (consistent hashing). The ring is rclick's own, so which source gets
//! which pattern differs from Click's.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! m :: SourceIPHashMapper(100 0xbadbeef, - - 10.0.0.1 - 0 1 0, - - 10.0.0.2 - 0 1 1);
//! rw :: IPRewriter(m, drop);
//! ```

use std::sync::{Arc, Mutex};

use rclick_core::conf::{parse_u32, split_args};
use rclick_core::{ConfigResult, Element, InitCtx};

use super::rewriter_base::{
    hash32, space_words, Mapper, MapperKind, Pattern, SharedMapper, SharedPattern,
};

pub struct SourceIPHashMapper {
    pub mapper: SharedMapper,
}

impl Default for SourceIPHashMapper {
    fn default() -> Self {
        SourceIPHashMapper {
            mapper: Arc::new(Mutex::new(Mapper {
                patterns: Vec::new(),
                kind: MapperKind::SourceHash { ring: Vec::new() },
            })),
        }
    }
}

/// Parses mapper patterns `SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT` (the
/// output ports are checked by the rewriter that uses the mapper).
pub fn parse_mapper_patterns(
    args: &[String],
    ctx: &InitCtx,
) -> Result<Vec<(SharedPattern, usize, usize)>, rclick_core::Errors> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let mut words = space_words(a);
        if words.len() <= 2 {
            errors.push(format!("pattern {i}: syntax error"));
            continue;
        }
        let ports = words.split_off(words.len() - 2);
        let named = |name: &str| super::rewriter_base::named_pattern(ctx, name);
        let pat = match Pattern::parse(&words, ctx, &named) {
            Ok(p) => p,
            Err(e) => {
                errors.push(format!("pattern {i}: {e}"));
                continue;
            }
        };
        let (Ok(f), Ok(r)) = (ports[0].parse::<usize>(), ports[1].parse::<usize>()) else {
            errors.push(format!("pattern {i}: bad output ports"));
            continue;
        };
        out.push((pat, f, r));
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors.into())
    }
}

rclick_core::element_class!(SourceIPHashMapper);

impl Element for SourceIPHashMapper {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::DEFAULT - 1
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let args = split_args(conf);
        let Some((first, rest)) = args.split_first() else {
            return Err("no hash seed given".into());
        };
        if rest.is_empty() {
            return Err("no patterns given".into());
        }
        let w = space_words(first);
        if w.len() != 2 {
            return Err("requires 2 config params: numnodes seed".into());
        }
        let nnodes = match parse_u32(&w[0]) {
            Ok(n) if n > 0 && n <= 10_000 => n,
            _ => return Err("number of nodes must be an integer (1 to 10000)".into()),
        };
        let seed = rclick_core::conf::parse_i32(&w[1])
            .map_err(|_| "hash seed must be an integer".to_string())? as u32;
        // Each pattern ends with its server ID.
        let mut ids = Vec::new();
        let mut pats = Vec::new();
        for a in rest {
            let mut words = space_words(a);
            match words.pop().map(|s| parse_u32(&s)) {
                Some(Ok(id)) if !words.is_empty() => {
                    ids.push(id);
                    pats.push(words.join(" "));
                }
                _ => return Err("bad server ID in pattern spec".into()),
            }
        }
        let patterns = parse_mapper_patterns(&pats, ctx)?;
        let mut ring = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            for n in 0..nnodes {
                let h = hash32(seed ^ hash32(id.wrapping_mul(0x1_0001) ^ n.wrapping_mul(0x9e37)));
                ring.push((h, i));
            }
        }
        ring.sort_unstable();
        let mut m = self.mapper.lock().unwrap_or_else(|e| e.into_inner());
        m.patterns = patterns;
        m.kind = MapperKind::SourceHash { ring };
        Ok(())
    }
}
