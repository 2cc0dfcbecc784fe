//! # RandomSample
//!
//! Passes each packet on with a given probability.
//!
//! ## Synopsis
//! `RandomSample([P, SAMPLE, DROP, ACTIVE])`
//!
//! ## Ports and processing
//! One agnostic input; output 0 agnostic, optional output 1 push (for
//! the packets not sampled).
//!
//! ## Description
//! Sends each packet to output 0 with probability P (SAMPLE), and the
//! others to output 1 if it exists, else drops them. DROP gives the
//! probability of not sampling instead (DROP 0.25 is SAMPLE 0.75).
//! Probabilities are fixed point with 28 bits of fraction, as Click's.
//! With ACTIVE false every packet goes to output 0.
//!
//! Each packet takes one draw of Click's generator (the C library's
//! `random()`, see RandomSeed): with the same seed, the packets chosen are
//! Click's. Without a RandomSeed the generator starts from seed 1, so a
//! configuration samples the same packets on every run (Click seeds from
//! true randomness).
//!
//! ## Keyword arguments
//! - `P`, `SAMPLE` (real between 0 and 1; default 1): sampling probability.
//! - `DROP` (real between 0 and 1): probability of not sampling.
//! - `ACTIVE` (boolean, default true).
//!
//! ## Handlers
//! - `sampling_prob`, `drop_prob` (read/write): the probabilities.
//! - `active` (read/write).
//! - `drops` (read): packets not sampled.
//! - `config` (read): `SAMPLE p, ACTIVE b`.
//!
//! ## Example
//! ```click
//! // About one packet in a hundred to the trace.
//! FromDevice(eth0) -> RandomSample(0.01) -> ToDump(sample.pcap);
//! ```

use rclick_core::conf::{parse_fixed_point, Args};
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::element::hflags;
use rclick_core::element::kinds::Filter;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::clickrandom::click_random;
use crate::userlevel::tracereplay::unparse_fixed;

/// Bits of fraction of the probabilities (Click's SAMPLING_SHIFT).
const SHIFT: u32 = 28;
const ONE: u32 = 1 << SHIFT;

pub struct RandomSample {
    sampling_prob: u32,
    active: bool,
    drops: u64,
}

impl Default for RandomSample {
    fn default() -> Self {
        RandomSample {
            sampling_prob: ONE,
            active: true,
            drops: 0,
        }
    }
}

impl Filter for RandomSample {
    fn filter(&mut self, p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        if !self.active || (click_random() & (ONE - 1)) < self.sampling_prob {
            Ok(p)
        } else {
            self.drops += 1;
            Err(p)
        }
    }
}

fn prob(s: &str) -> Result<u32, String> {
    parse_fixed_point(s, SHIFT).map_err(|e| format!("{e} (expected real number)"))
}

rclick_core::element_class!(RandomSample);

const HANDLERS: &[Handler<RandomSample>] = &[
    Handler::read_write(
        "sampling_prob",
        |e, _| unparse_fixed(e.sampling_prob, SHIFT),
        |e, v, ctx| reconfigure_keyword(e, "SAMPLE", None, v, ctx),
    ),
    Handler::flagged(
        hflags::CHECKBOX,
        Handler::read_write(
            "active",
            |e, _| e.active.to_string(),
            |e, v, ctx| reconfigure_keyword(e, "ACTIVE", None, v, ctx),
        ),
    ),
    Handler::data("drops", |e| &e.drops),
    Handler::read_write(
        "drop_prob",
        |e, _| unparse_fixed(ONE - e.sampling_prob, SHIFT),
        |e, v, ctx| reconfigure_keyword(e, "DROP", None, v, ctx),
    ),
    Handler::read("config", |e, _| {
        format!(
            "SAMPLE {}, ACTIVE {}",
            unparse_fixed(e.sampling_prob, SHIFT),
            e.active
        )
    }),
];

impl Element for RandomSample {
    rclick_core::element_kind!(filter);
    rclick_core::filter_ports!();
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let p = args.read_p_with("P", prob);
        let sample = args.read_with("SAMPLE", prob);
        let drop = args.read_with("DROP", prob);
        let active = args.read::<bool>("ACTIVE");
        args.complete()?;
        // As Click: SAMPLE wins over P, DROP counts only when neither is
        // given.
        let sampling = match (sample.or(p), drop) {
            (Some(s), _) => s,
            (None, Some(d)) if d <= ONE => ONE - d,
            (None, Some(d)) => d,
            (None, None) => ONE,
        };
        if sampling > ONE {
            return Err("sampling probability must be between 0 and 1".into());
        }
        self.sampling_prob = sampling;
        self.active = active.unwrap_or(true);
        Ok(())
    }
}
