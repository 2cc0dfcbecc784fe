//! Click's 32-bit token bucket (include/click/tokenbucket.hh), reproduced
//! to the bit so rate-limited elements emit exactly as many packets by a
//! given simulated time as Click does.
//!
//! Tokens are fixed-point fractions of the capacity: a full bucket holds
//! `u32::MAX`, and one token is `token_scale = u32::MAX / capacity`. Time
//! is measured in jiffies (milliseconds at user level, as a wrapping `u32`,
//! Click's `click_jiffies()`), and the bucket refills by `tokens_per_tick`
//! per elapsed jiffy.

use rclick_core::time::Timestamp;

/// Jiffies per second at user level (Click's `CLICK_HZ`).
pub const HZ: u32 = 1000;
/// A full bucket's fraction (Click's `max_tokens`).
pub const MAX_TOKENS: u32 = u32::MAX;

/// Click's `click_jiffies()` at user level: the time in milliseconds,
/// truncated to 32 bits.
pub fn jiffies(t: Timestamp) -> u32 {
    t.nanos().div_euclid(1_000_000) as u64 as u32
}

/// Click's `Timestamp::make_jiffies`: a jiffy count as an interval.
pub fn jiffies_interval(j: u32) -> Timestamp {
    Timestamp(i64::from(j) * 1_000_000)
}

/// A token rate (Click's `TokenRateX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRate {
    tokens_per_tick: u32,
    token_scale: u32,
    time_until_full: u32,
}

impl Default for TokenRate {
    /// An idle rate.
    fn default() -> Self {
        TokenRate {
            tokens_per_tick: 0,
            token_scale: 1,
            time_until_full: u32::MAX,
        }
    }
}

impl TokenRate {
    /// A rate of `rate` tokens per second with room for `capacity` tokens.
    /// Idle if either is 0.
    pub fn new(mut rate: u32, mut capacity: u32) -> TokenRate {
        if capacity == 0 {
            rate = 0;
            capacity = MAX_TOKENS;
        }
        if rate != 0 {
            let min_capacity = (rate - 1) / HZ + 1;
            capacity = capacity.max(min_capacity);
        }
        let token_scale = MAX_TOKENS / capacity;
        let l = (u64::from(rate) * u64::from(token_scale) / u64::from(HZ)) as u32;
        if rate != 0 {
            let tpt = if l != 0 { l } else { 1 };
            TokenRate {
                tokens_per_tick: tpt,
                token_scale,
                time_until_full: (MAX_TOKENS - 1) / tpt + 1,
            }
        } else {
            TokenRate {
                tokens_per_tick: 0,
                token_scale,
                time_until_full: u32::MAX,
            }
        }
    }

    /// The rate in tokens per second, as Click computes it back.
    pub fn rate(&self) -> u32 {
        let l =
            u64::from(self.tokens_per_tick) * u64::from(HZ) + u64::from(self.tokens_per_tick / 2);
        let r = l / u64::from(self.token_scale);
        u32::try_from(r).unwrap_or(MAX_TOKENS)
    }

    pub fn capacity(&self) -> u32 {
        MAX_TOKENS / self.token_scale
    }

    pub fn is_idle(&self) -> bool {
        self.tokens_per_tick == 0
    }

    /// Scales a token count to a fraction of capacity; false (and
    /// `u32::MAX`) if it overflows.
    fn cvt(&self, t: u32) -> (bool, u32) {
        let prod = u64::from(t) * u64::from(self.token_scale);
        if prod >> 32 != 0 {
            (false, MAX_TOKENS)
        } else {
            (true, prod as u32)
        }
    }
}

/// A token bucket: a rate plus a counter (Click's `TokenBucketX`). A new
/// bucket is idle, empty, and has time point 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenBucket {
    rate: TokenRate,
    tokens: u32,
    time_point: u32,
}

impl TokenBucket {
    /// A bucket of `rate` tokens per second holding up to `capacity`,
    /// initially full (empty and idle if either is 0), time point 0.
    pub fn new(rate: u32, capacity: u32) -> TokenBucket {
        TokenBucket {
            rate: TokenRate::new(rate, capacity),
            tokens: if rate != 0 && capacity != 0 {
                MAX_TOKENS
            } else {
                0
            },
            time_point: 0,
        }
    }

    /// Makes the rate unlimited (every refill fills the bucket) or idle
    /// (refills add nothing); Click's `assign(bool)`.
    pub fn assign_unlimited(&mut self, unlimited: bool) {
        self.rate = if unlimited {
            TokenRate {
                tokens_per_tick: MAX_TOKENS,
                token_scale: 1,
                time_until_full: 0,
            }
        } else {
            TokenRate::default()
        };
    }

    pub fn is_full(&self) -> bool {
        self.tokens == MAX_TOKENS
    }

    pub fn is_empty(&self) -> bool {
        self.tokens == 0
    }

    pub fn clear(&mut self) {
        self.tokens = 0;
    }

    /// Sets rate and capacity, keeping the fraction of fullness.
    pub fn assign(&mut self, rate: u32, capacity: u32) {
        self.rate = TokenRate::new(rate, capacity);
    }

    /// Hot swap: continues `old`'s level and time point under this
    /// bucket's rate (tokens rescaled as [`TokenBucket::assign_adjust`]
    /// does), so a swapped-in element cannot start with a fresh burst.
    pub fn continue_from(&mut self, old: &TokenBucket) {
        let rate = self.rate;
        *self = *old;
        if old.rate.token_scale != rate.token_scale {
            let v = u64::from(self.tokens) * u64::from(rate.token_scale)
                / u64::from(old.rate.token_scale.max(1));
            self.tokens = u32::try_from(v).unwrap_or(MAX_TOKENS);
        }
        self.rate = rate;
    }

    /// Sets rate and capacity, keeping the token count roughly stable.
    pub fn assign_adjust(&mut self, rate: u32, capacity: u32) {
        let old = self.rate;
        self.rate = TokenRate::new(rate, capacity);
        if old.token_scale != self.rate.token_scale {
            let v = u64::from(self.tokens) * u64::from(self.rate.token_scale)
                / u64::from(old.token_scale);
            self.tokens = u32::try_from(v).unwrap_or(MAX_TOKENS);
        }
    }

    pub fn rate(&self) -> u32 {
        self.rate.rate()
    }

    pub fn capacity(&self) -> u32 {
        self.rate.capacity()
    }

    /// Whole tokens held.
    pub fn size(&self) -> u32 {
        self.tokens / self.rate.token_scale
    }

    pub fn set(&mut self, t: u32) {
        self.tokens = self.rate.cvt(t).1;
    }

    pub fn set_full(&mut self) {
        self.tokens = MAX_TOKENS;
    }

    pub fn contains(&self, t: u32) -> bool {
        let (ok, f) = self.rate.cvt(t);
        ok && f <= self.tokens
    }

    /// Refills for the time `now_jiffies`.
    pub fn refill_at(&mut self, now_jiffies: u32) {
        // Click's time_monotonic_difference: 0 if time went backwards.
        let diff = now_jiffies.saturating_sub(self.time_point);
        if diff >= self.rate.time_until_full {
            self.tokens = MAX_TOKENS;
        } else if diff > 0 {
            let new = self
                .tokens
                .wrapping_add(diff.wrapping_mul(self.rate.tokens_per_tick));
            self.tokens = if new < self.tokens { MAX_TOKENS } else { new };
        }
        self.time_point = now_jiffies;
    }

    /// Refills for the router time `now`.
    pub fn refill(&mut self, now: Timestamp) {
        self.refill_at(jiffies(now));
    }

    pub fn remove(&mut self, t: u32) {
        let f = self.rate.cvt(t).1;
        self.tokens = self.tokens.saturating_sub(f);
    }

    pub fn remove_if(&mut self, t: u32) -> bool {
        let (ok, f) = self.rate.cvt(t);
        if ok && f <= self.tokens {
            self.tokens -= f;
            true
        } else {
            false
        }
    }

    /// Jiffies until the bucket holds `t` tokens; `u32::MAX` if never.
    pub fn time_until_contains(&self, t: u32) -> u32 {
        let (ok, f) = self.rate.cvt(t);
        if !ok {
            return u32::MAX;
        }
        if f <= self.tokens || self.rate.time_until_full == 0 {
            return 0;
        }
        match (f - self.tokens - 1).checked_div(self.rate.tokens_per_tick) {
            Some(q) => q + 1,
            None => u32::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuing_keeps_level_and_time_under_the_new_rate() {
        let mut old = TokenBucket::default();
        old.assign(100, 10);
        old.refill_at(5000);
        old.remove_if(7);
        let mut new = TokenBucket::default();
        new.assign(100, 10);
        new.continue_from(&old);
        assert_eq!(new, old);
        // Twice the capacity: the same number of tokens, half the fullness.
        let mut bigger = TokenBucket::default();
        bigger.assign(100, 20);
        bigger.continue_from(&old);
        assert!(bigger.contains(3) && !bigger.contains(4));
        assert_eq!(bigger.capacity(), 20);
        // No fresh burst: a new bucket alone would fill on its first refill.
        bigger.refill_at(5000);
        assert!(!bigger.contains(4));
    }

    #[test]
    fn rate_ten_capacity_two() {
        let r = TokenRate::new(10, 2);
        assert_eq!(r.token_scale, 2_147_483_647);
        assert_eq!(r.tokens_per_tick, 21_474_836);
        assert_eq!(r.time_until_full, 201);
        assert_eq!(r.rate(), 10);
        assert_eq!(r.capacity(), 2);
    }

    #[test]
    fn first_refill_fills_and_waits_are_click_like() {
        let mut tb = TokenBucket::default();
        tb.assign(10, 2);
        tb.set(1);
        tb.refill_at(3_567_587_328);
        assert!(tb.remove_if(1));
        assert!(tb.remove_if(1));
        assert!(!tb.remove_if(1));
        assert_eq!(tb.time_until_contains(1), 101);
    }

    #[test]
    fn zero_rate_is_idle() {
        let mut tb = TokenBucket::default();
        tb.assign(0, 2);
        assert!(tb.rate.is_idle());
        tb.refill_at(5000);
        assert!(!tb.contains(1));
        assert_eq!(tb.time_until_contains(1), u32::MAX);
    }
}
