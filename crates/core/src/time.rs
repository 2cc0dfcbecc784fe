//! Time: timestamps and the router's clock.
//!
//! Every element reads time through the router's [`Clock`], never the system
//! clock directly, so that `--simtime` runs are deterministic: under
//! simulated time the clock only moves when the driver jumps it to the next
//! timer.

use std::fmt;
use std::ops::{Add, Sub};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::time::Duration;

/// A point in time (or an interval), in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub const ZERO: Timestamp = Timestamp(0);
    pub const NSEC_PER_SEC: i64 = 1_000_000_000;

    pub fn from_secs_f64(s: f64) -> Timestamp {
        Timestamp((s * 1e9).round() as i64)
    }

    pub fn from_sec_nsec(sec: i64, nsec: i64) -> Timestamp {
        Timestamp(sec * Self::NSEC_PER_SEC + nsec)
    }

    pub fn from_duration(d: Duration) -> Timestamp {
        Timestamp(d.as_nanos().min(i64::MAX as u128) as i64)
    }

    pub fn nanos(self) -> i64 {
        self.0
    }

    pub fn sec(self) -> i64 {
        self.0.div_euclid(Self::NSEC_PER_SEC)
    }

    pub fn subsec_nanos(self) -> i64 {
        self.0.rem_euclid(Self::NSEC_PER_SEC)
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    pub fn to_duration(self) -> Duration {
        Duration::from_nanos(self.0.max(0) as u64)
    }

    /// The system's real time now. One `clock_gettime` (a vDSO call, no
    /// system call) and a multiply: `SystemTime::now()` and its `Duration`
    /// arithmetic cost about 200 instructions more, paid by elements that
    /// read the clock once per batch, which at BURST 1 is once per packet.
    #[inline]
    pub fn now_real() -> Timestamp {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) } != 0 {
            return Timestamp::ZERO;
        }
        // time_t and c_long are i64 here but narrower on 32-bit targets.
        #[allow(clippy::unnecessary_cast)]
        Timestamp(
            (ts.tv_sec as i64)
                .saturating_mul(1_000_000_000)
                .saturating_add(ts.tv_nsec as i64),
        )
    }
}

impl Timestamp {
    /// This duration times `f` (to the nanosecond).
    pub fn scaled(self, f: f64) -> Timestamp {
        Timestamp((self.0 as f64 * f).round() as i64)
    }
}

impl Add for Timestamp {
    type Output = Timestamp;
    fn add(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_add(o.0))
    }
}

impl Sub for Timestamp {
    type Output = Timestamp;
    fn sub(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_sub(o.0))
    }
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Duration) -> Timestamp {
        self + Timestamp::from_duration(d)
    }
}

/// As Click (built with nanosecond timestamps, as the reference is) prints
/// them: `SEC.USEC` (six digits after the point) when the time is a whole
/// number of microseconds, as every pcap and summary-dump time is, else
/// `SEC.NSEC` (nine). `{:#}` always prints nine. A negative time prints as
/// a minus sign and its magnitude (half a second before the epoch is
/// `-0.500000`), as Click does.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mag = self.0.unsigned_abs();
        let (s, ns) = (mag / 1_000_000_000, mag % 1_000_000_000);
        let sign = if self.0 < 0 { "-" } else { "" };
        if f.alternate() || ns % 1000 != 0 {
            write!(f, "{sign}{s}.{ns:09}")
        } else {
            write!(f, "{sign}{s}.{:06}", ns / 1000)
        }
    }
}

/// The router's clock. Real time, or simulated time that advances only when
/// the driver says so (Click's `--simtime`).
///
/// Every router thread reads and refreshes it, so its fields are atomics
/// (relaxed: each is a value on its own, and a load or store of one costs
/// what a plain one does). The warp is set only by the `timewarp` handler,
/// which runs with the other threads stopped.
#[derive(Debug)]
pub struct Clock {
    simulated: bool,
    now: AtomicI64,
    /// Click's time warp: real time runs `warp` times faster from
    /// `warp_base` (real time, router time); 1 and unset when never set.
    warp_bits: AtomicU64,
    warped: AtomicBool,
    warp_base_real: AtomicI64,
    warp_base: AtomicI64,
}

/// Click's default simulated start time: 1e9 seconds.
pub const DEFAULT_SIMTIME_START: Timestamp = Timestamp(1_000_000_000 * 1_000_000_000);

impl Clock {
    fn starting_at(simulated: bool, start: Timestamp) -> Clock {
        Clock {
            simulated,
            now: AtomicI64::new(start.0),
            warp_bits: AtomicU64::new(1.0f64.to_bits()),
            warped: AtomicBool::new(false),
            warp_base_real: AtomicI64::new(0),
            warp_base: AtomicI64::new(0),
        }
    }

    pub fn real() -> Clock {
        Clock::starting_at(false, Timestamp::now_real())
    }

    pub fn simulated(start: Timestamp) -> Clock {
        Clock::starting_at(true, start)
    }

    pub fn is_simulated(&self) -> bool {
        self.simulated
    }

    /// The current time. Real clocks read the system clock each call.
    #[inline]
    pub fn now(&self) -> Timestamp {
        if !self.simulated {
            let real = Timestamp::now_real();
            let now = if self.warped.load(Relaxed) {
                let base_real = Timestamp(self.warp_base_real.load(Relaxed));
                let base = Timestamp(self.warp_base.load(Relaxed));
                base + (real - base_real).scaled(self.warp_factor())
            } else {
                real
            };
            self.now.store(now.0, Relaxed);
            return now;
        }
        Timestamp(self.now.load(Relaxed))
    }

    /// Click's `timewarp`: real time runs `factor` (> 0) times faster
    /// from now on. No effect on a simulated clock.
    pub fn set_warp(&self, factor: f64) {
        if self.simulated || factor.is_nan() || factor <= 0.0 {
            return;
        }
        let now = self.now();
        self.warp_base_real.store(Timestamp::now_real().0, Relaxed);
        self.warp_base.store(now.0, Relaxed);
        self.warp_bits.store(factor.to_bits(), Relaxed);
        self.warped.store(true, Relaxed);
    }

    /// The time warp factor (1 unless set).
    pub fn warp_factor(&self) -> f64 {
        f64::from_bits(self.warp_bits.load(Relaxed))
    }

    /// The real time that `d` of router time takes.
    pub fn real_delay(&self, d: Timestamp) -> Timestamp {
        if self.warped.load(Relaxed) {
            d.scaled(1.0 / self.warp_factor())
        } else {
            d
        }
    }

    /// The time last read, without a system call: for hot paths that only
    /// need the driver iteration's time.
    #[inline]
    pub fn recent(&self) -> Timestamp {
        Timestamp(self.now.load(Relaxed))
    }

    /// Moves simulated time forward (never backward). No effect on a real
    /// clock.
    pub fn advance_to(&self, t: Timestamp) {
        if self.simulated {
            self.now.fetch_max(t.0, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_click_style() {
        assert_eq!(Timestamp::from_sec_nsec(1, 5_000).to_string(), "1.000005");
        assert_eq!(
            format!("{:#}", Timestamp::from_sec_nsec(1, 5)),
            "1.000000005"
        );
        // Not a whole number of microseconds: nine digits, as Click.
        assert_eq!(Timestamp::from_sec_nsec(1, 5).to_string(), "1.000000005");
        // Negative: sign and magnitude, as Click prints them.
        assert_eq!(Timestamp(-1000).to_string(), "-0.000001");
        assert_eq!(Timestamp(-1).to_string(), "-0.000000001");
        assert_eq!(Timestamp(-500_000_000).to_string(), "-0.500000");
        assert_eq!(Timestamp(-1_500_000_000).to_string(), "-1.500000");
        assert_eq!(format!("{:#}", Timestamp(-2_000_000_000)), "-2.000000000");
        assert_eq!(Timestamp(i64::MIN).to_string(), "-9223372036.854775808");
    }

    #[test]
    fn simulated_clock_only_moves_forward() {
        let c = Clock::simulated(DEFAULT_SIMTIME_START);
        c.advance_to(Timestamp(5));
        assert_eq!(c.now(), DEFAULT_SIMTIME_START);
        c.advance_to(DEFAULT_SIMTIME_START + Timestamp(10));
        assert_eq!(c.now(), DEFAULT_SIMTIME_START + Timestamp(10));
    }
}
