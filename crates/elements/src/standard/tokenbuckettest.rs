//! # TokenBucketTest
//!
//! Checks rclick's token bucket at initialization.
//!
//! ## Synopsis
//! `TokenBucketTest`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! A regression-test element, as in Click: when the router initializes it
//! runs the checks of Click's TokenBucketTest against rclick's token bucket
//! (the one RatedSource and RatedUnqueue use, reproduced from Click's to
//! the bit): rates and capacities as assigned, removing tokens from a full
//! bucket, refilling over jiffies, capacities raised to fit the rate,
//! `time_until_contains` agreeing with refills tick by tick, and unlimited
//! and idle rates. If every check holds it prints
//! `LANDMARK: While initializing 'NAME :: TokenBucketTest':` and
//! `  All tests pass!`; otherwise initialization fails naming the check.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! TokenBucketTest;
//! ```

use rclick_core::conf::Args;
use rclick_core::{ConfigResult, Element, InitCtx};

use super::tokenbucket::{TokenBucket, HZ, MAX_TOKENS};

#[derive(Default)]
pub struct TokenBucketTest;

macro_rules! check {
    ($e:expr) => {
        if !$e {
            return Err(format!(
                "{}:{}: test `{}' failed",
                file!(),
                line!(),
                stringify!($e)
            ));
        }
    };
}

/// Click's checks, in its order.
fn run_checks(now_jiffies: u32) -> Result<(), String> {
    let mut tb = TokenBucket::default();
    tb.assign(1024, 2048);
    check!(tb.rate() >= 1022 && tb.rate() <= 1026);
    check!(tb.capacity() >= 2046 && tb.capacity() <= 2050);
    tb.set_full();
    tb.refill_at(0);
    check!(tb.remove_if(1024));
    check!(tb.remove_if(1024));
    check!(!tb.remove_if(1024));
    tb.refill_at(HZ * 99 / 100);
    check!(!tb.remove_if(1024));
    tb.refill_at(HZ);
    check!(tb.remove_if(1024));
    check!(!tb.remove_if(1024));

    // The capacity is raised to hold one tick's tokens.
    let mut tb2 = TokenBucket::new(1024 * 1024 * 1024, 1);
    check!(tb2.is_full());
    check!(tb2.remove_if(1000));

    let mut tb3 = TokenBucket::new(1, 1024 * 1024 * 1024);
    check!(tb3.remove_if(2 * (u32::MAX / HZ)));

    // The rate ends up very slightly below 2.
    let mut tb4 = TokenBucket::new(2, 1);
    tb4.refill_at(0);
    tb4.clear();
    let t = tb4.time_until_contains(1);
    tb4.refill_at(t);
    check!(tb4.contains(1));

    tb4.refill_at(0);
    tb4.clear();
    let done_at = tb4.time_until_contains(1);
    let mut cur = 0u32;
    while cur < done_at {
        check!(cur == done_at - 1 || !tb4.contains(1));
        check!(tb4.time_until_contains(1) <= done_at - cur);
        cur += 1;
        tb4.refill_at(cur);
    }
    check!(tb4.contains(1));

    tb4.assign_unlimited(true);
    check!(tb4.rate() == MAX_TOKENS);
    check!(tb4.capacity() == MAX_TOKENS);

    for _ in 0..2 {
        tb4.assign_unlimited(false);
        tb4.clear();
        tb4.refill_at(now_jiffies);
        check!(tb4.rate() == 0);
        check!(tb4.capacity() == MAX_TOKENS);
        check!(tb4.is_empty());

        tb4.assign(0, 1024);
        check!(tb4.rate() == 0);
        check!(tb4.capacity() == 1024);
    }
    Ok(())
}

rclick_core::element_class!(TokenBucketTest);

impl Element for TokenBucketTest {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        run_checks(super::tokenbucket::jiffies(ctx.now()))?;
        ctx.chatter(&format!(
            "{}: While initializing '{} :: TokenBucketTest':",
            ctx.landmark(),
            ctx.element_name()
        ));
        ctx.chatter("  All tests pass!");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn checks_pass_at_any_time() {
        for now in [0, 1, 1000, 3_567_587_328, u32::MAX] {
            assert_eq!(super::run_checks(now), Ok(()));
        }
    }
}
