//! # AlignmentInfo
//!
//! Declares the alignment of packet data at element inputs.
//!
//! ## Synopsis
//! `AlignmentInfo(ELEMENT [MODULUS OFFSET ...], ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each argument names an element and then gives, for each of its inputs
//! in turn, a MODULUS and an OFFSET: packets arriving on that input have
//! data starting at an address congruent to OFFSET modulo MODULUS. Click's
//! `click-align` tool writes these declarations when it inserts Align
//! elements; elements could consult them to skip their own alignment
//! work. rclick's elements read headers through alignment-independent
//! views and consult none, so AlignmentInfo only checks and records its
//! declarations.
//!
//! A router may hold several AlignmentInfo elements. Declaring different
//! alignments for the same element (in one AlignmentInfo or across
//! several) is reported, as are malformed arguments; as in Click these
//! reports do not stop the router from initializing. A name that matches
//! no element is ignored, as in Click. Empty arguments draw a warning.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! AlignmentInfo(src 8 2, chk 4 0);
//! src :: FromDump(t.pcap) -> Strip(14) -> chk :: CheckIPHeader -> Discard;
//! ```

use rclick_core::conf::{parse_i32, split_args, split_words};
use rclick_core::{ConfigResult, Element, InitCtx};

/// What one AlignmentInfo declares: element index and (modulus, offset)
/// per input.
#[derive(Default)]
pub struct AlignmentInfo {
    decls: Vec<(usize, Vec<(i32, i32)>)>,
}

impl AlignmentInfo {
    /// The declared (modulus, offset) of input `port` of element `idx`.
    pub fn query(&self, idx: usize, port: usize) -> Option<(i32, i32)> {
        self.decls
            .iter()
            .find(|(i, _)| *i == idx)
            .and_then(|(_, v)| v.get(port).copied())
    }
}

rclick_core::element_class!(AlignmentInfo);

impl Element for AlignmentInfo {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    // Before the elements it describes, as Click's information elements.
    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::INFO
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut msgs: Vec<String> = Vec::new();
        // Declarations of earlier AlignmentInfo elements, for conflicts.
        let me = ctx.element_index();
        let mut earlier: Vec<(usize, Vec<(i32, i32)>)> = Vec::new();
        for i in 0..me {
            if ctx.element_class_of(i) == Some("AlignmentInfo") {
                if let Some(d) = ctx.with_element(i, |e| {
                    e.as_any()
                        .downcast_ref::<AlignmentInfo>()
                        .map(|a| a.decls.clone())
                }) {
                    earlier.extend(d.unwrap_or_default());
                }
            }
        }
        for (argno, arg) in split_args(conf).iter().enumerate() {
            let parts = split_words(arg);
            let Some(name) = parts.first() else {
                msgs.push(format!("warning: empty configuration argument {argno}"));
                continue;
            };
            let Some(idx) = ctx.find_element(name) else {
                continue;
            };
            if parts.len() % 2 != 1 {
                msgs.push("expected 'ELEMENTNAME CHUNK OFFSET [CHUNK OFFSET...]'".into());
            }
            let mut ports = Vec::new();
            for pair in parts[1..].chunks_exact(2) {
                let c = parse_i32(&pair[0]).unwrap_or_else(|_| {
                    msgs.push("expected CHUNK".into());
                    -1
                });
                let o = parse_i32(&pair[1]).unwrap_or_else(|_| {
                    msgs.push("expected OFFSET".into());
                    -1
                });
                ports.push((c, o));
            }
            let previous = self
                .decls
                .iter()
                .chain(earlier.iter())
                .find(|(i, _)| *i == idx)
                .map(|(_, v)| v.clone());
            if previous.is_some_and(|p| p != ports) {
                msgs.push(format!("conflicting AlignmentInfo for '{name}'"));
            }
            self.decls.retain(|(i, _)| *i != idx);
            self.decls.push((idx, ports));
        }
        // As in Click: reported, but the router still initializes.
        for m in &msgs {
            ctx.note(m);
        }
        Ok(())
    }
}
