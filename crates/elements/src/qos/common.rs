//! Helpers shared by the QoS elements: Click's fixed-point and bandwidth
//! unparsing, its moving averages (`DirectEWMAX`, `RateEWMAX`), its uniform
//! rate (`GapRate`).

use rclick_core::element::handlers::config_with_keyword;
use rclick_core::time::Timestamp;
use rclick_core::{Ctx, Element, InitCtx};

/// Resolves QUEUES, a space-separated list of element names (RED, CoDel).
pub fn named_queues(ctx: &InitCtx, list: &str) -> Result<(Vec<usize>, Vec<String>), String> {
    let mut idx = Vec::new();
    let mut names = Vec::new();
    for name in list.split_ascii_whitespace() {
        match ctx.find_element(name) {
            Some(i) => {
                idx.push(i);
                names.push(name.to_string());
            }
            None => return Err(format!("no element named '{name}'")),
        }
    }
    Ok((idx, names))
}

/// The Storage elements nearest downstream of output 0 (or upstream of
/// input 0) by flow-based router context, unless `queues` already names
/// some; checks that each is a Storage element.
pub fn find_queues(
    ctx: &InitCtx,
    downstream: bool,
    queues: &mut Vec<usize>,
    names: &mut Vec<String>,
) -> Result<(), String> {
    if queues.is_empty() {
        let storage = |e: &dyn Element| e.has_interface("Storage");
        *queues = if downstream {
            ctx.downstream(Some(0), &storage)
        } else {
            ctx.upstream(Some(0), &storage)
        };
        *names = queues
            .iter()
            .map(|&i| ctx.element_name_of(i).unwrap_or_default().to_string())
            .collect();
    }
    if queues.is_empty() {
        return Err("no nearby Queues".into());
    }
    for (&q, name) in queues.iter().zip(names.iter()) {
        if ctx.with_element(q, |e| e.has_interface("Storage")) != Some(true) {
            return Err(format!("'{name}' is not a Storage element"));
        }
    }
    Ok(())
}

/// Packets held by `queues` now, and their total capacity.
pub fn queue_lengths(ctx: &Ctx, queues: &[usize]) -> (u64, u64) {
    let mut len = 0u64;
    let mut cap = 0u64;
    for &q in queues {
        if let Some(Some((l, c))) = ctx.with_element_mut(q, |e| e.storage()) {
            len += l as u64;
            cap = cap.saturating_add(c as u64);
        }
    }
    (len, cap)
}

/// The value of argument `keyword` in `config`, or of the positional
/// argument at `pos` (Click's `read_keyword_handler`).
pub fn keyword_arg(config: &str, keyword: &str, pos: usize) -> String {
    let args = rclick_core::conf::split_args(config);
    let kw = |a: &str| -> Option<String> {
        let rest = a.strip_prefix(keyword)?;
        rest.starts_with(|c: char| c.is_ascii_whitespace())
            .then(|| rest.trim().to_string())
    };
    if let Some(v) = args.iter().rev().find_map(|a| kw(a)) {
        return v;
    }
    // As Click's: a positional argument with a space in it (`0.100000 s`,
    // CoDel's own `config`) reads as empty.
    args.get(pos)
        .filter(|a| !a.trim().contains(|c: char| c.is_ascii_whitespace()))
        .cloned()
        .unwrap_or_default()
}

/// Click's `reconfigure_keyword_handler` for an element with a `config`
/// read handler of its own: Click starts from what that handler reads
/// (`Element::configuration()` calls it), not from the configuration as
/// written, so arguments the handler leaves out return to their defaults
/// (writing a RatedSplitter's `rate` forgets its BURST_SIZE). `base` is
/// the handler's text; the element is reconfigured with argument
/// `keyword` (or the positional argument at `position`) set to `value`.
pub fn reconfigure_from<E: Element>(
    element: &mut E,
    base: &str,
    keyword: &str,
    position: Option<usize>,
    value: &str,
    ctx: &mut Ctx,
) -> Result<(), String> {
    let new = config_with_keyword(base, keyword, position, value);
    let mut ictx = ctx.init_ctx();
    element
        .configure(&new, &mut ictx)
        .map_err(|errs| errs.to_string())?;
    ctx.set_config(&new);
    Ok(())
}

/// Click's `cp_unparse_real2`: the shortest decimal that reads back as the
/// fixed-point number `v` with `frac_bits` bits of fraction (Knuth's
/// algorithm from "A Simple Program Whose Proof Isn't").
pub fn unparse_real2(v: u64, frac_bits: u32) -> String {
    let frac_bits = frac_bits.min(32);
    let one = 1u64 << frac_bits;
    let int = v >> frac_bits;
    let frac = v & (one - 1);
    let mut s = int.to_string();
    if frac == 0 {
        return s;
    }
    s.push('.');
    let mut x = 10 * frac + 5;
    let mut delta = 10u64;
    loop {
        if delta > one {
            // Round the last digit.
            x = x + (one >> 1) - (delta >> 1);
        }
        s.push(char::from(b'0' + (x / one).min(9) as u8));
        x = 10 * (x % one);
        delta *= 10;
        if x <= delta {
            break;
        }
    }
    s
}

/// Click's `cp_unparse_real10`: `v / 10^digits` in decimal, without
/// trailing zeros.
pub fn unparse_real10(v: u64, digits: u32) -> String {
    let one = 10u64.pow(digits);
    let int = v / one;
    let frac = v % one;
    if frac == 0 {
        return int.to_string();
    }
    let f = format!("{frac:0width$}", width = digits as usize);
    format!("{int}.{}", f.trim_end_matches('0'))
}

/// Click's `BandwidthArg::unparse`: a rate in bytes per second as Click
/// prints it (`0.08kbps`, `1.6008Mbps`, `600.3MBps`).
pub fn unparse_bandwidth(x: u32) -> String {
    let x = u64::from(x);
    if x >= 0x2000_0000 {
        format!("{}MBps", unparse_real10(x, 6))
    } else if x >= 125_000_000 {
        format!("{}Gbps", unparse_real10(x * 8, 9))
    } else if x >= 125_000 {
        format!("{}Mbps", unparse_real10(x * 8, 6))
    } else {
        format!("{}kbps", unparse_real10(x * 8, 3))
    }
}

/// Scale of Click's EWMAs here: 10 bits of fraction.
pub const EWMA_SCALE: u32 = 10;

/// Click's `DirectEWMAX<StabilityEWMAXParameters<10, uint64_t, int64_t>>`:
/// a moving average with 10 bits of fraction and alpha 2^-stability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectEwma {
    avg: u64,
    stability: u32,
}

impl DirectEwma {
    pub fn new(stability: u32) -> DirectEwma {
        DirectEwma { avg: 0, stability }
    }

    pub fn stability(&self) -> u32 {
        self.stability
    }

    pub fn set_stability(&mut self, s: u32) {
        self.stability = s;
    }

    pub fn clear(&mut self) {
        self.avg = 0;
    }

    pub fn scaled_average(&self) -> u64 {
        self.avg
    }

    /// The average rounded to an integer.
    pub fn unscaled_average(&self) -> u64 {
        (self.avg + (1 << (EWMA_SCALE - 1))) >> EWMA_SCALE
    }

    fn compensation(&self) -> u64 {
        if self.stability == 0 {
            0
        } else {
            1 << (self.stability - 1)
        }
    }

    fn step(&mut self, x_scaled: u64) {
        let d = (x_scaled.wrapping_sub(self.avg) as i64) >> self.stability.min(63);
        self.avg = self.avg.wrapping_add(d as u64);
    }

    /// Adds an observation.
    pub fn update(&mut self, x: u64) {
        let xs = (x << EWMA_SCALE).wrapping_add(self.compensation());
        self.step(xs);
    }

    /// Adds `n` identical observations.
    pub fn update_n(&mut self, x: u64, n: u64) {
        let xs = x << EWMA_SCALE;
        if n >= 100 {
            self.avg = xs;
        } else {
            let xs = xs.wrapping_add(self.compensation());
            for _ in 0..n {
                self.step(xs);
            }
        }
    }

    pub fn unparse(&self) -> String {
        unparse_real2(self.avg, EWMA_SCALE)
    }
}

/// Click's `RateEWMA` (`RateEWMAX<RateEWMAXParameters<4, 10>>`): a rate in
/// events per jiffy (millisecond), averaged with alpha 1/16 and 10 bits of
/// fraction, in 32-bit arithmetic as Click's.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateEwma {
    epoch: u32,
    current: u32,
    avg: u32,
}

impl RateEwma {
    const STABILITY: u32 = 4;
    const COMPENSATION: u32 = 1 << (Self::STABILITY - 1);

    /// Starts measuring at jiffy `now`.
    pub fn new(now: u32) -> RateEwma {
        RateEwma {
            epoch: now,
            current: 0,
            avg: 0,
        }
    }

    fn step(&mut self, x: u32) {
        let xs = (x << EWMA_SCALE).wrapping_add(Self::COMPENSATION);
        let d = (xs.wrapping_sub(self.avg) as i32) >> Self::STABILITY;
        self.avg = self.avg.wrapping_add(d as u32);
    }

    fn step_n(&mut self, x: u32, n: u32) {
        if n >= 100 {
            self.avg = x << EWMA_SCALE;
        } else {
            for _ in 0..n {
                self.step(x);
            }
        }
    }

    /// Adds `delta` events at jiffy `now`.
    pub fn update(&mut self, delta: u32, now: u32) {
        if now != self.epoch {
            let c = self.current;
            self.step(c);
            if self.epoch.wrapping_add(1) != now {
                self.step_n(0, now.wrapping_sub(self.epoch).wrapping_sub(1));
            }
            self.current = 0;
            self.epoch = now;
        }
        self.current = self.current.wrapping_add(delta);
    }

    /// Events per jiffy, with 10 bits of fraction.
    pub fn scaled_average(&self) -> u32 {
        self.avg
    }
}

/// Click's `GapRate`: a uniform rate of events per second, checked against
/// a per-second event count, catching up at most a second's worth of lag.
#[derive(Clone, Copy, Debug)]
pub struct GapRate {
    ugap: u32,
    sec_count: i32,
    tv_sec: i64,
    rate: u32,
}

impl Default for GapRate {
    fn default() -> Self {
        let mut g = GapRate {
            ugap: 0,
            sec_count: 0,
            tv_sec: -1,
            rate: 0,
        };
        g.init_rate(0);
        g
    }
}

impl GapRate {
    const UGAP_SHIFT: u32 = 12;
    pub const MAX_RATE: u32 = 1_000_000 << Self::UGAP_SHIFT;

    fn init_rate(&mut self, r: u32) {
        self.rate = r;
        self.ugap = Self::MAX_RATE.checked_div(r).unwrap_or(Self::MAX_RATE + 1);
    }

    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Sets the rate (at most `MAX_RATE`), keeping the count in step with
    /// the current second.
    pub fn set_rate(&mut self, r: u32, now: Timestamp) {
        let r = r.min(Self::MAX_RATE);
        if self.rate != r {
            self.init_rate(r);
            if self.tv_sec >= 0 && r != 0 {
                self.sec_count = ((usec(now) << Self::UGAP_SHIFT) / self.ugap) as i32;
            }
        }
    }

    /// Forgets the true rate's history.
    pub fn reset(&mut self) {
        self.tv_sec = -1;
    }

    /// Whether the user's count is behind the true rate at `now`.
    pub fn need_update(&mut self, now: Timestamp) -> bool {
        let u = usec(now) << Self::UGAP_SHIFT;
        let need = u / self.ugap;
        if self.tv_sec < 0 {
            self.tv_sec = now.sec();
            let rem = u.wrapping_sub(need.wrapping_mul(self.ugap));
            self.sec_count = need as i32 + i32::from(rem > self.ugap / 2);
        } else if now.sec() > self.tv_sec {
            self.tv_sec = now.sec();
            if self.sec_count > 0 {
                self.sec_count = self.sec_count.wrapping_sub(self.rate as i32);
            }
        }
        need as i32 >= self.sec_count
    }

    /// Counts `delta` events.
    pub fn update_with(&mut self, delta: i32) {
        self.sec_count = self.sec_count.wrapping_add(delta);
    }

    /// When `need_update` will next be true (`None` if never or unknown).
    pub fn expiry(&self) -> Option<Timestamp> {
        if self.tv_sec < 0 || self.rate == 0 {
            return None;
        }
        if self.sec_count < 0 {
            return Some(Timestamp::from_sec_nsec(self.tv_sec, 0));
        }
        let mut sec = self.tv_sec;
        let mut count = self.sec_count as u32;
        if count >= self.rate {
            sec += i64::from(count / self.rate);
            count %= self.rate;
        }
        // Rounded up: at the floor, `need_update` may still say no.
        let us = (u64::from(count) * u64::from(self.ugap)).div_ceil(1 << Self::UGAP_SHIFT);
        Some(Timestamp::from_sec_nsec(sec, us as i64 * 1000))
    }
}

/// The microseconds within the second of `t`.
fn usec(t: Timestamp) -> u32 {
    (t.subsec_nanos() / 1000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real2_is_clicks_shortest_form() {
        assert_eq!(unparse_real2(10_000, 10), "9.766");
        assert_eq!(unparse_real2(0, 10), "0");
        assert_eq!(unparse_real2(3 << 10, 10), "3");
        assert_eq!(unparse_real2(512, 10), "0.5");
        // 0.02 as 16-bit fixed point is 1311.
        assert_eq!(unparse_real2(1311, 16), "0.02");
        assert_eq!(unparse_real2(21843, 16), "0.3333");
    }

    #[test]
    fn bandwidths_unparse_as_click() {
        assert_eq!(unparse_bandwidth(9), "0.072kbps");
        assert_eq!(unparse_bandwidth(1000), "8kbps");
        assert_eq!(unparse_bandwidth(125_061), "1.000488Mbps");
        assert_eq!(unparse_bandwidth(125_062_500), "1.0005Gbps");
        assert_eq!(unparse_bandwidth(600_300_000), "600.3MBps");
    }

    #[test]
    fn gap_rate_spaces_events() {
        let mut g = GapRate::default();
        g.set_rate(1000, Timestamp(0));
        let mut sent = 0;
        for us in (0..1_000_000i64).step_by(100) {
            let now = Timestamp::from_sec_nsec(5, us * 1000);
            while g.need_update(now) {
                g.update_with(1);
                sent += 1;
            }
        }
        assert!((999..=1001).contains(&sent), "{sent}");
    }
}
