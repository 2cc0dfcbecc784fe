//! # Counter
//!
//! Counts packets and bytes passing through.
//!
//! ## Synopsis
//! `Counter([*keywords*])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Passes packets unchanged, counting them and their bytes, and keeping a
//! recent arrival rate: an exponentially weighted moving average of the
//! packet and byte rates over 1/16-second epochs (weight 1/16 per epoch), read
//! from the router clock so `--simtime` runs are deterministic.
//!
//! With `-j N`, a Counter reached from several threads runs as one copy
//! per thread (no shared state); `count`, `byte_count` and the rates read
//! the sum of the copies, and `reset` clears them all. A Counter with
//! `COUNT_CALL` or `BYTE_COUNT_CALL` must see every packet, so it is not
//! copied: reaching it from two threads is refused.
//!
//! ## Keywords
//! - **COUNT_CALL** `N HANDLER [VALUE]`: call write handler HANDLER when the
//!   count reaches N.
//! - **BYTE_COUNT_CALL** `N HANDLER [VALUE]`: the same for the byte count.
//!
//! ## Handlers
//! - `count` (read): packets counted.
//! - `byte_count` (read): bytes counted.
//! - `rate` (read): recent rate, packets per second.
//! - `byte_rate`, `bit_rate` (read): recent rate in bytes and bits per second.
//! - `reset`, `reset_counts` (write): zero everything.
//! - `count_call` (read/write): the COUNT_CALL threshold; writing
//!   `N HANDLER [VALUE]` sets a new call.
//! - `byte_count_call` (write): sets a new BYTE_COUNT_CALL.
//!
//! Hot swap: a new Counter of the same name keeps the old one's counts
//! and rates.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap, STOP true) -> c :: Counter -> Discard;
//! ```
//! then `rclick -h c.count conf.click`.

use super::handlercall;
use rclick_core::conf::{parse_u64, split_words, Args};
use rclick_core::element::{hflags, Observe, PerThread};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Timestamp};

/// Length of one rate epoch: 1/16 s.
const EPOCH_NS: i64 = 1_000_000_000 / 16;
/// The moving average keeps 15/16 of its value each epoch.
const WEIGHT_SHIFT: u32 = 4;

#[derive(Default)]
struct Call {
    at: u64,
    handler: String,
    value: String,
    done: bool,
}

/// An EWMA of events per epoch, scaled by 2^16 for precision.
#[derive(Default, Clone, Copy)]
struct Ewma {
    avg: i64,
    epoch: i64,
    this_epoch: i64,
}

impl Ewma {
    fn roll(&mut self, now_epoch: i64) {
        if now_epoch <= self.epoch {
            return;
        }
        // Fold the finished epoch, then decay through empty epochs.
        let mut avg = self.avg;
        avg += ((self.this_epoch << 16) - avg) >> WEIGHT_SHIFT;
        let empty = (now_epoch - self.epoch - 1).min(64);
        for _ in 0..empty {
            avg -= avg >> WEIGHT_SHIFT;
        }
        self.avg = avg;
        self.epoch = now_epoch;
        self.this_epoch = 0;
    }

    /// Adds another average's events (a per-thread copy's), both brought
    /// to the later epoch first.
    fn absorb(&mut self, mut other: Ewma) {
        let epoch = self.epoch.max(other.epoch);
        self.roll(epoch);
        other.roll(epoch);
        self.avg += other.avg;
        self.this_epoch += other.this_epoch;
    }

    /// Events per second.
    fn per_second(&self, now_epoch: i64) -> f64 {
        let mut copy = *self;
        copy.roll(now_epoch);
        (copy.avg as f64 / 65536.0) * (1_000_000_000 / EPOCH_NS) as f64
    }
}

#[derive(Default)]
pub struct Counter {
    count: u64,
    byte_count: u64,
    packet_rate: Ewma,
    byte_rate: Ewma,
    /// From this time (ns) on a packet finds the rates' epoch over: the
    /// start of the epoch after the earlier of their two, saturated at the
    /// ends of the range ([`Counter::roll_time`]). Never later than that
    /// start (an earlier value costs only a roll that changes nothing), so
    /// it is recomputed wherever the epochs change.
    roll_at: i64,
    count_call: Option<Call>,
    byte_count_call: Option<Call>,
}

fn parse_call(s: &str) -> Result<Call, String> {
    let words = split_words(s);
    if words.len() < 2 {
        return Err("expected 'N HANDLER [VALUE]'".into());
    }
    let at = parse_u64(&words[0])?;
    let rest = s.trim_start()[words[0].len()..].trim();
    let (handler, value) = handlercall::parse(rest)?;
    Ok(Call {
        at,
        handler,
        value,
        done: false,
    })
}

fn epoch_of(t: Timestamp) -> i64 {
    t.nanos().div_euclid(EPOCH_NS)
}

/// Whether a call is armed and `value` has reached it: the per-batch test,
/// inline (the call itself is rare).
#[inline(always)]
fn due(call: &Option<Call>, value: u64) -> bool {
    call.as_ref().is_some_and(|c| !c.done && value >= c.at)
}

impl Counter {
    /// The start of the epoch after the rates' (the earlier of their two),
    /// in ns, saturated: beyond the range of a timestamp it is `i64::MAX`
    /// (reached only by a time whose epoch rolls nothing) or `i64::MIN`
    /// (reached by every time, as the exact start would be).
    fn roll_time(&self) -> i64 {
        let epoch = self.packet_rate.epoch.min(self.byte_rate.epoch);
        epoch.saturating_add(1).saturating_mul(EPOCH_NS)
    }

    /// Fresh averages (the `reset` handler).
    fn clear_rates(&mut self) {
        self.packet_rate = Ewma::default();
        self.byte_rate = Ewma::default();
        self.roll_at = self.roll_time();
    }

    /// Counts `n` packets of `bytes` bytes at time `now` into the rates:
    /// the two averages roll into a new epoch together, and a packet in
    /// the epoch they are in costs one compare.
    #[inline(always)]
    fn count_rates(&mut self, now: Timestamp, n: u64, bytes: u64) {
        if now.nanos() >= self.roll_at {
            let epoch = epoch_of(now);
            self.packet_rate.roll(epoch);
            self.byte_rate.roll(epoch);
            self.roll_at = self.roll_time();
        }
        self.packet_rate.this_epoch += n as i64;
        self.byte_rate.this_epoch += bytes as i64;
    }

    #[cold]
    #[inline(never)]
    fn fire(call: &mut Option<Call>, value: u64, ctx: &mut Ctx) {
        if let Some(c) = call {
            if !c.done && value >= c.at {
                c.done = true;
                let (h, v) = (c.handler.clone(), c.value.clone());
                // The Counter's own handler (`c.reset`) cannot run while
                // the Counter runs: it runs as soon as the Counter returns.
                let own = handlercall::element_of(&h)
                    .is_some_and(|e| ctx.find_element(e) == Some(ctx.element_index()));
                // An error is ignored, as Click ignores it (the call
                // runs with a silent error handler). An element up the
                // call stack (the Discard pulling through this Counter)
                // cannot be written now: the call runs as soon as it
                // returns, where Click would have run it at once.
                if own {
                    ctx.call_write_later(&h, &v);
                } else if let Err(e) = ctx.call_write(&h, &v) {
                    if e.contains("is busy") {
                        ctx.call_write_later(&h, &v);
                    }
                }
            }
        }
    }

    fn rate(rate: &Ewma, scale: f64, ctx: &Ctx) -> String {
        format_rate(rate.per_second(epoch_of(ctx.now())) * scale)
    }

    /// `count_call`/`byte_count_call` writes: a new `N HANDLER [VALUE]`,
    /// armed afresh. The handler is checked as at initialization. As in
    /// Click, a call whose handler fails the check is refused, but its
    /// count is kept: the old call (if any) keeps its handler and whether
    /// it fired, with the new count.
    fn set_call(&mut self, bytes: bool, value: &str, ctx: &Ctx) -> Result<(), String> {
        let call = parse_call(value)?;
        if let Err(e) = handlercall::check_write(&call.handler, self, ctx) {
            if let Some(old) = self.call_mut(bytes) {
                old.at = call.at;
            }
            return Err(e);
        }
        *self.call_mut(bytes) = Some(call);
        Ok(())
    }

    fn call_mut(&mut self, bytes: bool) -> &mut Option<Call> {
        if bytes {
            &mut self.byte_count_call
        } else {
            &mut self.count_call
        }
    }

    fn reset(&mut self, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        self.count = 0;
        self.byte_count = 0;
        self.clear_rates();
        for c in [&mut self.count_call, &mut self.byte_count_call]
            .into_iter()
            .flatten()
        {
            c.done = false;
        }
        Ok(())
    }
}

const HANDLERS: &[Handler<Counter>] = &[
    Handler::data("count", |e| &e.count),
    Handler::data("byte_count", |e| &e.byte_count),
    Handler::read("rate", |e, ctx| Counter::rate(&e.packet_rate, 1.0, ctx)),
    Handler::read("bit_rate", |e, ctx| Counter::rate(&e.byte_rate, 8.0, ctx)),
    Handler::read("byte_rate", |e, ctx| Counter::rate(&e.byte_rate, 1.0, ctx)),
    Handler::button("reset", Counter::reset),
    Handler::flagged(
        hflags::UNCOMMON,
        Handler::button("reset_counts", Counter::reset),
    ),
    Handler::read_write(
        "count_call",
        |e, _| {
            e.count_call
                .as_ref()
                .map_or(String::new(), |c| c.at.to_string())
        },
        |e, v, ctx| e.set_call(false, v, ctx),
    ),
    Handler::write("byte_count_call", |e, v, ctx| e.set_call(true, v, ctx)),
];

impl PerThread for Counter {
    const SUMMED: &'static [&'static str] =
        &["count", "byte_count", "rate", "bit_rate", "byte_rate"];

    /// A Counter that calls a handler at a count must see every packet:
    /// it cannot be split.
    fn fresh_copy(&self) -> Option<Self> {
        if self.count_call.is_some() || self.byte_count_call.is_some() {
            return None;
        }
        Some(Counter::default())
    }

    fn absorb(&mut self, copy: Self) {
        self.count += copy.count;
        self.byte_count += copy.byte_count;
        self.packet_rate.absorb(copy.packet_rate);
        self.byte_rate.absorb(copy.byte_rate);
        self.roll_at = self.roll_time();
    }
}

impl Observe for Counter {
    // Counts a batch at once, then fires the calls whose count it reached;
    // push and pull both come here. Inline, into the kind's
    // `push_in_chain`: a call of its own, with its register saves, is a
    // sixth of a one-packet count.
    #[inline(always)]
    fn observe_batch(&mut self, batch: &Batch, ctx: &mut Ctx) {
        // One packet (every batch at BURST 1) needs no summing loop.
        let bytes: u64 = match batch.packets() {
            [p] => p.len() as u64,
            ps => ps.iter().map(|p| p.len() as u64).sum(),
        };
        let n = batch.len() as u64;
        self.count += n;
        self.byte_count += bytes;
        self.count_rates(ctx.recent(), n, bytes);
        if due(&self.count_call, self.count) {
            Self::fire(&mut self.count_call, self.count, ctx);
        }
        if due(&self.byte_count_call, self.byte_count) {
            Self::fire(&mut self.byte_count_call, self.byte_count, ctx);
        }
    }
}

rclick_core::element_class!(Counter);

impl Element for Counter {
    rclick_core::per_thread!();
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.count_call = args.read_with("COUNT_CALL", parse_call);
        self.byte_count_call = args.read_with("BYTE_COUNT_CALL", parse_call);
        args.complete()?;
        Ok(())
    }

    /// Click checks the calls' handlers here, refusing the router when one
    /// does not exist or cannot be written.
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        for c in [&self.count_call, &self.byte_count_call]
            .into_iter()
            .flatten()
        {
            handlercall::check_write_at_initialize(&c.handler, self, ctx)?;
        }
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        match old.as_any().downcast_ref::<Counter>() {
            Some(o) => {
                self.count = o.count;
                self.byte_count = o.byte_count;
                self.packet_rate = o.packet_rate;
                self.byte_rate = o.byte_rate;
                self.roll_at = self.roll_time();
                true
            }
            None => false,
        }
    }
}

fn format_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting through the saved roll time leaves the rates as rolling
    /// them to each packet's `epoch_of` does (a roll to an epoch not later
    /// changes nothing): across epoch boundaries, backwards in time, for
    /// negative times, at the ends of the range, and after a reset.
    #[test]
    fn rates_roll_as_each_packets_epoch_says() {
        let mut times = vec![0, 1, -1, i64::MIN, i64::MIN + 1, i64::MAX - 1, i64::MAX];
        for k in [-3i64, -1, 0, 1, 2, 1_000_000, i64::MAX / EPOCH_NS] {
            for d in [-1, 0, 1] {
                times.push(k.saturating_mul(EPOCH_NS).saturating_add(d));
            }
        }
        let mut sequences: Vec<Vec<i64>> = vec![times.clone()];
        let mut sorted = times.clone();
        sorted.sort_unstable();
        sequences.push(sorted.clone());
        sequences.push(sorted.iter().rev().copied().collect());
        for start in [i64::MIN, -EPOCH_NS - 1, 0, EPOCH_NS - 1, i64::MAX] {
            sequences.push(sorted.iter().map(|&t| t.max(start)).collect());
        }
        for seq in &sequences {
            let mut c = Counter::default();
            let (mut packets, mut bytes) = (Ewma::default(), Ewma::default());
            for (i, &t) in seq.iter().enumerate() {
                if i == seq.len() / 2 {
                    c.clear_rates();
                    (packets, bytes) = (Ewma::default(), Ewma::default());
                }
                let size = 60 + i as u64;
                c.count_rates(Timestamp(t), 1, size);
                let epoch = epoch_of(Timestamp(t));
                packets.roll(epoch);
                bytes.roll(epoch);
                packets.this_epoch += 1;
                bytes.this_epoch += size as i64;
                for (got, want) in [(&c.packet_rate, &packets), (&c.byte_rate, &bytes)] {
                    assert_eq!(
                        (got.avg, got.epoch, got.this_epoch),
                        (want.avg, want.epoch, want.this_epoch),
                        "time {t} in {seq:?}"
                    );
                }
            }
        }
    }
}
