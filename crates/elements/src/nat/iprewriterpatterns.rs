//! # IPRewriterPatterns
//!
//! Names rewrite patterns for IPRewriter-like elements.
//!
//! ## Synopsis
//! `IPRewriterPatterns(NAME PATTERN, ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each argument is a name followed by a pattern `SADDR SPORT DADDR DPORT`
//! (see IPRewriter). A rewriter's input spec `pattern NAME FOUTPUT ROUTPUT`
//! uses the named pattern; rewriters naming the same pattern share it, and
//! so share its range of ports or addresses and its sequential rover.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! IPRewriterPatterns(to_world 1.0.0.1 1024-65535 - -);
//! rw :: IPRewriter(pattern to_world 0 1, drop);
//! ```

use rclick_core::conf::split_args;
use rclick_core::element::configure_phase;
use rclick_core::{ConfigResult, Element, InitCtx};

use super::rewriter_base::{space_words, Pattern, SharedPattern};

#[derive(Default)]
pub struct IPRewriterPatterns {
    patterns: Vec<(String, SharedPattern)>,
}

impl IPRewriterPatterns {
    /// The pattern called `name`.
    pub fn get(&self, name: &str) -> Option<SharedPattern> {
        self.patterns
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.clone())
    }
}

rclick_core::element_class!(IPRewriterPatterns);

impl Element for IPRewriterPatterns {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure_phase(&self) -> i32 {
        configure_phase::INFO
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut errors = Vec::new();
        let mut patterns = Vec::new();
        for arg in split_args(conf) {
            let words = space_words(&arg);
            if words.is_empty() {
                continue;
            }
            if words.len() < 2 {
                errors.push(format!("expected 'NAME PATTERN', got '{arg}'"));
                continue;
            }
            let none = |_: &str| None;
            match Pattern::parse(&words[1..], ictx, &none) {
                Ok(p) => patterns.push((words[0].clone(), p)),
                Err(e) => errors.push(format!("{}: {e}", words[0])),
            }
        }
        if !errors.is_empty() {
            return Err(errors.into());
        }
        self.patterns = patterns;
        Ok(())
    }
}
