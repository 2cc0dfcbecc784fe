//! # Classifier
//!
//! Classifies packets by contents.
//!
//! ## Synopsis
//! `Classifier(PATTERN1, ..., PATTERNN)`
//!
//! ## Ports and processing
//! One push input; N push outputs, one per pattern.
//!
//! ## Description
//! Sends each packet to the output of the first pattern it matches, and
//! drops packets that match no pattern.
//!
//! A pattern is a space-separated list of clauses `OFFSET/VALUE` or
//! `OFFSET/VALUE%MASK`. OFFSET is a decimal byte offset into the packet;
//! VALUE and MASK are hex with an even number of digits (the MASK, if given,
//! has as many digits as the VALUE). A `?` digit in VALUE or MASK means
//! "don't care about this nibble". Only bits set in the mask are compared.
//! A clause may be preceded by `!`, in which case it must not match. The
//! pattern `-` matches every packet. A packet too short to hold a compared
//! byte fails that clause (so a `!` clause matches it).
//!
//! The patterns are compiled into a decision program of 32-bit masked word
//! comparisons in which tests shared by several patterns are made once and
//! tests whose outcome is already known are skipped. Matching reads the
//! packet bytes in place and allocates nothing. A warning is printed for
//! any output no packet can reach.
//!
//! ## Keywords
//! None: every argument is a pattern.
//!
//! ## Handlers
//! - `program` (read): the compiled program, one step per line, as Click
//!   prints it: `STEP OFFSET/VALUE%MASK  yes->TARGET  no->TARGET`, where a
//!   target is `step N`, an output `[N]`, or `[X]` for drop; then the safe
//!   length (bytes a packet needs for no length check) and the alignment
//!   offset.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
//! c[0] -> arpq :: Discard; c[1] -> arpr :: Discard;
//! c[2] -> ip :: Discard; c[3] -> other :: Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::{hflags, Classify, Errors};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::classifier_program::Program;

#[derive(Default)]
pub struct Classifier {
    prog: Program,
}

impl Classifier {
    /// The compiled program (after configuration).
    pub fn program(&self) -> &Program {
        &self.prog
    }
}

/// The pattern arguments of a classifier with one pattern per output
/// (Classifier, IPClassifier): Click rejects any other count.
pub fn one_pattern_per_output(conf: &str, ctx: &InitCtx) -> Result<Vec<String>, Errors> {
    let mut args = Args::new(conf);
    let patterns = args.take_rest();
    args.complete()?;
    let n = ctx.noutputs();
    if patterns.len() != n {
        return Err(format!("need {n} arguments, one per output port").into());
    }
    Ok(patterns)
}

const HANDLERS: &[Handler<Classifier>] = &[Handler::flagged(
    hflags::CALM,
    Handler::read("program", |e, _| e.prog.unparse()),
)];

impl Classify for Classifier {
    #[inline]
    fn classify(&mut self, p: &Packet, _ctx: &mut Ctx) -> Option<usize> {
        self.prog.classify(p.data())
    }
}

rclick_core::element_class!(Classifier);

impl Classifier {
    /// The classify kind's push, out of line so that the one-packet path
    /// in `push` saves no registers for it.
    #[inline(never)]
    fn push_batch(&mut self, batch: Batch, ctx: &mut Ctx) {
        rclick_core::element::kinds::classify_push(batch, ctx, |p, ctx| self.classify(p, ctx))
    }
}

impl Element for Classifier {
    // A batch of one (every packet at BURST 1) needs none of the kind's
    // record of outputs: its one classification sends the whole batch.
    // Here rather than in the kind's `classify_push`: there, the second
    // call site put IPFilter's larger classification out of line in the
    // batch loop (ipfilter100 at BURST 32 rose from 616 to 636
    // instructions a packet).
    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        if let [p] = batch.packets() {
            if let Some(o) = self.prog.classify(p.data()) {
                ctx.emit_batch(o, batch);
            }
            return;
        }
        self.push_batch(batch, ctx);
    }
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let patterns = one_pattern_per_output(conf, ctx)?;
        let prog = Program::compile(&patterns)?;
        let reachable = prog.reachable_outputs();
        for i in 0..ctx.noutputs() as u32 {
            if !reachable.contains(&i) {
                ctx.warning(format!("output {i} matches no packets"));
            }
        }
        self.prog = prog;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
