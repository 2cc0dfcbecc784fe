//! # ScheduleInfo
//!
//! Sets the scheduling share of elements' tasks.
//!
//! ## Synopsis
//! `ScheduleInfo(ELEMENT PARAM, ...)`
//!
//! ## Ports and processing
//! No inputs or outputs.
//!
//! ## Description
//! Each argument is an element name and a real number. Tasks of that
//! element (or of the elements inside a compound of that name) get PARAM
//! times the default number of tickets (1024), so an element with PARAM 2
//! runs twice as often as one with PARAM 1 when both are busy. Names are
//! relative to the compound the ScheduleInfo is in. ScheduleInfo elements
//! are configured before all others, so the tickets apply to tasks created
//! when the other elements initialize. Empty arguments are ignored.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ScheduleInfo(src1 2, src2 0.5);
//! ```

use rclick_core::conf::{parse_fixed_point, split_args, split_words};
use rclick_core::{ConfigResult, Element, InitCtx};

/// Fraction bits of a ScheduleInfo parameter (Click's FRAC_BITS).
const FRAC_BITS: u32 = 10;

#[derive(Default)]
pub struct ScheduleInfo;

rclick_core::element_class!(ScheduleInfo);

impl Element for ScheduleInfo {
    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::INFO
    }

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let prefix = match ctx.element_name().rfind('/') {
            Some(i) => ctx.element_name()[..=i].to_string(),
            None => String::new(),
        };
        let mut errors = Vec::new();
        for arg in split_args(conf) {
            let parts = split_words(&arg);
            if parts.is_empty() {
                continue;
            }
            match (
                parts.len(),
                parts.get(1).map(|p| parse_fixed_point(p, FRAC_BITS)),
            ) {
                (2, Some(Ok(mt))) => {
                    let param = f64::from(mt) / f64::from(1u32 << FRAC_BITS);
                    ctx.set_schedule_info(&format!("{prefix}{}", parts[0]), param);
                }
                _ => errors.push("expected 'ELEMENTNAME PARAM'".to_string()),
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into())
        }
    }
}
