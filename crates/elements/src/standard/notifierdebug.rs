//! # NotifierDebug
//!
//! Passes packets unchanged and reports the notifier signal it sees.
//!
//! ## Synopsis
//! `NotifierDebug`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Forwards packets unchanged. Its `signal` handler shows the notifier
//! signal a notified element in its place would use: in a pull context the
//! empty signal of the notifiers upstream (queues, PullSwitch, ...), in a
//! push context the full signal of the queues downstream.
//!
//! The format is Click's: `busy*` (some path has no notifier), `idle`
//! (nothing upstream can produce packets), or the basic signals joined by
//! `+`, grouped as Click stores them, 32 to a word per kind:
//! `empty.W/MASK:VALUE`, with MASK and VALUE in hexadecimal and `*` after a
//! word with an active signal. Signals are numbered per kind (`empty`,
//! `full`) in the order rclick creates them, which follows the elements'
//! configuration order as in Click.
//!
//! ## Handlers
//! - `signal` (read): the signal, as above.
//!
//! ## Example
//! ```click
//! q :: Queue -> n :: NotifierDebug -> Unqueue -> Discard;
//! // n.signal reads empty.0/1:0 while q is empty, empty.0/1:1* otherwise
//! ```

use rclick_core::conf::Args;
use rclick_core::element::Observe;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, NotifierSignal, Packet, SignalId};

#[derive(Default)]
pub struct NotifierDebug {
    signal: NotifierSignal,
    /// Each basic signal of `signal`: its id, kind and number in its kind.
    names: Vec<(SignalId, &'static str, u32)>,
}

impl NotifierDebug {
    fn unparse(&self, ctx: &Ctx) -> String {
        match &self.signal {
            NotifierSignal::Busy => "busy*".into(),
            NotifierSignal::Idle => "idle".into(),
            NotifierSignal::Signals(_) => {
                // (kind, word) -> (mask, value), in order of first sight.
                let mut words: Vec<(&str, u32, u32, u32)> = Vec::new();
                for &(id, kind, n) in &self.names {
                    let (w, bit) = (n / 32, 1u32 << (n % 32));
                    let on = ctx.signal_active(&NotifierSignal::Signals(vec![id]));
                    let slot = match words.iter().position(|x| x.0 == kind && x.1 == w) {
                        Some(i) => i,
                        None => {
                            words.push((kind, w, 0, 0));
                            words.len() - 1
                        }
                    };
                    words[slot].2 |= bit;
                    if on {
                        words[slot].3 |= bit;
                    }
                }
                words.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
                words
                    .iter()
                    .map(|(kind, w, mask, value)| {
                        let star = if *value != 0 { "*" } else { "" };
                        format!("{kind}.{w}/{mask:x}:{value:x}{star}")
                    })
                    .collect::<Vec<_>>()
                    .join("+")
            }
        }
    }
}

impl Observe for NotifierDebug {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    #[inline]
    fn observe(&mut self, _p: &Packet, _ctx: &mut Ctx) {}
}

const HANDLERS: &[Handler<NotifierDebug>] = &[Handler::read("signal", NotifierDebug::unparse)];

rclick_core::element_class!(NotifierDebug);

impl Element for NotifierDebug {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.signal = if ctx.input_is_pull(0) {
            ctx.upstream_empty_signal(0, None)
        } else {
            ctx.downstream_full_signal(0, None)
        };
        let NotifierSignal::Signals(ids) = &self.signal else {
            return Ok(());
        };
        // Every notifier signal of the router, with its kind, to number
        // them per kind in creation order.
        let me = ctx.element_index();
        let mut all: Vec<(SignalId, &'static str)> = Vec::new();
        let mut i = 0;
        loop {
            if i != me {
                let Some(sigs) = ctx.with_element(i, |e| (e.empty_notifier(), e.full_notifier()))
                else {
                    break;
                };
                all.extend(sigs.0.map(|s| (s, "empty")));
                all.extend(sigs.1.map(|s| (s, "full")));
            }
            i += 1;
        }
        all.sort_by_key(|x| x.0 .0);
        self.names = ids
            .iter()
            .map(|&id| {
                let kind = all.iter().find(|x| x.0 == id).map_or("empty", |x| x.1);
                let n = all.iter().filter(|x| x.1 == kind && x.0 .0 < id.0).count() as u32;
                (id, kind, n)
            })
            .collect();
        Ok(())
    }
}
