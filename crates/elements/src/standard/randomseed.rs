//! # RandomSeed
//!
//! Seeds Click's `click_random` number stream.
//!
//! ## Synopsis
//! `RandomSeed([SEED])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Sets the seed of the random number stream Click's elements draw from
//! (`click_random`, the C library's `random()`), so that a configuration's
//! random choices repeat from run to run. Without SEED the stream is
//! seeded from the clock.
//!
//! In rclick, most elements with random choices (RandomSample, RED, ...)
//! have generators of their own, seeded from their names, and do not
//! follow RandomSeed. The elements that draw from Click's stream, and so
//! give Click's numbers for the same seed, are those whose output depends
//! on it byte for byte: IPsecESPEncap's IVs. Each such element draws from
//! its own copy of the stream, starting at the seed; Click's share one.
//! The seed is process-wide, as in Click.
//!
//! ## Keywords
//! - `SEED`: unsigned 32-bit integer.
//!
//! ## Handlers
//! - `seed` (read/write): reads the configured seed; writing reseeds the
//!   stream.
//!
//! ## Example
//! ```click
//! RandomSeed(1);
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx};

use crate::ipsec::legacy;

#[derive(Default)]
pub struct RandomSeed {
    seed: Option<u32>,
}

fn write_seed(_e: &mut RandomSeed, v: &str, _ctx: &mut Ctx) -> Result<(), String> {
    let s = parse_u32(v.trim()).map_err(|_| "SEED: invalid number".to_string())?;
    legacy::set_click_seed(s);
    Ok(())
}

const HANDLERS: &[Handler<RandomSeed>] = &[Handler::flagged(
    hflags::CALM,
    Handler::read_write(
        "seed",
        |e, _| e.seed.map(|s| s.to_string()).unwrap_or_default(),
        write_seed,
    ),
)];

rclick_core::element_class!(RandomSeed);

impl Element for RandomSeed {
    rclick_core::handlers!(HANDLERS);

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let seed: Option<u32> = args.read_p("SEED");
        args.complete()?;
        self.seed = seed;
        if let Some(s) = seed {
            legacy::set_click_seed(s);
        }
        Ok(())
    }
}
