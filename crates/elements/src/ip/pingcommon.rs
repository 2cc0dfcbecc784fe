//! What ICMPPingSource and ICMP6PingSource share: the whole element
//! ([`PingSource`]), generic over the address family ([`PingFamily`]),
//! which only builds the request and reads a reply. The family-free part
//! is the timer and pull logic with LIMIT and STOP, the reply matching by
//! identifier and sequence number with its statistics, the handlers,
//! VERBOSE printing and the hot-swap carry-over.

use std::time::Duration;

use rclick_core::conf::{
    parse_bool, parse_i64, parse_seconds, parse_string, parse_u16, Args, Fallback,
};
use rclick_core::element::handlers::{read_from, specs_of, write_to};
use rclick_core::element::{hflags, HandlerSpec};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp,
};

/// A reply as the family reads it: an echo reply of the right protocol.
pub struct EchoReply<A> {
    /// ICMP identifier and sequence number.
    pub ident: u16,
    pub seq: u16,
    /// The payload bytes past the ICMP header, by the IP length field.
    pub bytes: usize,
    /// The reply's source address.
    pub src: A,
    /// Its TTL or hop limit.
    pub ttl: u8,
}

/// The address-family part of a ping source.
pub trait PingFamily: Send + 'static {
    type Addr: Copy + Send + Fallback + 'static;
    /// The class name, for messages.
    const CLASS: &'static str;
    /// The address before configuration.
    const UNSPECIFIED: Self::Addr;
    /// An address argument (addresses or AddressInfo names).
    fn parse_arg(s: &str, ctx: &InitCtx) -> Result<Self::Addr, String>;
    /// An address written to the `src`/`dst` handlers.
    fn parse_handler(s: &str) -> Result<Self::Addr, String>;
    /// An address as the handlers and VERBOSE print it.
    fn unparse(a: Self::Addr) -> String;
    /// The request packet, network header set, destination annotation DST.
    fn request(
        src: Self::Addr,
        dst: Self::Addr,
        ident: u16,
        seq: u16,
        data: &[u8],
    ) -> Option<Packet>;
    /// The echo reply `p` holds, if it is one (of any identifier).
    fn reply(p: &Packet) -> Option<EchoReply<Self::Addr>>;
}

#[derive(Default)]
pub struct Receiver {
    /// Send time (ns) per sequence number; negative once answered, 0 if
    /// never sent.
    sent: Vec<i64>,
    nreceived: u64,
    nduplicate: u64,
    time_min: u64,
    time_max: u64,
    time_sum: u64,
    time_sq_sum: u128,
}

/// A ping source of family `F` (ICMPPingSource, ICMP6PingSource).
pub struct PingSource<F: PingFamily> {
    src: F::Addr,
    dst: F::Addr,
    interval_ms: u64,
    ident: u16,
    limit: i64,
    data: Vec<u8>,
    active: bool,
    verbose: bool,
    stop: bool,
    count: u64,
    timer: Option<TimerId>,
    /// When the timer is due, while it is scheduled (hot swap keeps the
    /// phase).
    due: Option<Timestamp>,
    push_out: bool,
    receiver: Option<Receiver>,
    decl: String,
}

impl<F: PingFamily> Default for PingSource<F> {
    fn default() -> Self {
        PingSource {
            src: F::UNSPECIFIED,
            dst: F::UNSPECIFIED,
            interval_ms: 1000,
            ident: 0,
            limit: -1,
            data: Vec::new(),
            active: true,
            verbose: true,
            stop: false,
            count: 0,
            timer: None,
            due: None,
            push_out: true,
            receiver: None,
            decl: String::new(),
        }
    }
}

/// An interval in seconds that fits Click's 32-bit milliseconds (at most
/// 4294967.295 s): larger ones are "out of range", as in Click.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_seconds(s)?;
    if d.as_millis() > u32::MAX as u128 {
        return Err("out of range".into());
    }
    Ok(d)
}

/// Click's `cp_unparse_microseconds`.
fn unparse_us(us: u64) -> String {
    if us > 0 && us < 1000 {
        return format!("{us}us");
    }
    let (i, f) = (us / 1_000_000, us % 1_000_000);
    if f == 0 {
        format!("{i}s")
    } else {
        let frac = format!("{f:06}");
        format!("{i}.{}s", frac.trim_end_matches('0'))
    }
}

impl<F: PingFamily> PingSource<F> {
    fn under_limit(&self) -> bool {
        self.limit < 0 || (self.count as i64) < self.limit
    }

    fn make_packet(&mut self, now: Timestamp) -> Option<Packet> {
        let seq = ((self.count % 0xffff) + 1) as u16;
        let mut p = F::request(self.src, self.dst, self.ident, seq, &self.data)?;
        p.set_timestamp_anno(now);
        if let Some(r) = self.receiver.as_mut() {
            if let Some(slot) = r.sent.get_mut(seq as usize) {
                *slot = now.nanos().max(1);
            }
        }
        Some(p)
    }

    fn receive(&mut self, p: &Packet, ctx: &mut Ctx) {
        let Some(reply) = F::reply(p) else { return };
        if reply.ident != self.ident {
            return;
        }
        let seq = reply.seq;
        let Some(r) = self.receiver.as_mut() else {
            return;
        };
        let Some(slot) = r.sent.get_mut(seq as usize) else {
            return;
        };
        if *slot == 0 {
            return;
        }
        if *slot < 0 {
            r.nduplicate += 1;
            *slot = -*slot;
        }
        let recv = if p.timestamp_anno().nanos() != 0 {
            p.timestamp_anno()
        } else {
            ctx.now()
        };
        // A reply stamped before its request counts 0; times saturate.
        let diff = (recv.nanos().saturating_sub(*slot).max(0) / 1000) as u64;
        if diff < r.time_min || r.nreceived == 0 {
            r.time_min = diff;
        }
        if diff > r.time_max || r.nreceived == 0 {
            r.time_max = diff;
        }
        r.time_sum = r.time_sum.saturating_add(diff);
        r.time_sq_sum = r
            .time_sq_sum
            .saturating_add((diff as u128) * (diff as u128));
        r.nreceived += 1;
        *slot = -*slot;
        if self.verbose {
            ctx.chatter(&format!(
                "{}: {} bytes from {}: icmp_seq={} ttl={} time={}.{:03} ms",
                self.decl,
                reply.bytes,
                F::unparse(reply.src),
                seq,
                reply.ttl,
                diff / 1000,
                diff % 1000
            ));
        }
    }

    fn summary(&self) -> String {
        let Some(r) = &self.receiver else {
            return String::new();
        };
        let mut s = format!(
            "{} packets transmitted, {} received",
            self.count,
            r.nreceived.saturating_sub(r.nduplicate)
        );
        if r.nduplicate > 0 {
            s.push_str(&format!(", +{} duplicates", r.nduplicate));
        }
        if self.count > 0 {
            let lost = (self.count as i64 - r.nreceived as i64 - r.nduplicate as i64) * 100
                / self.count as i64;
            s.push_str(&format!(", {lost}% packet loss\n"));
        }
        if r.nreceived > 0 {
            let n = r.nreceived;
            let avg = r.time_sum / n;
            let avg_sq = r.time_sq_sum / n as u128;
            let var = avg_sq.saturating_sub((avg as u128) * (avg as u128));
            let mdev = (var as f64).sqrt() as u64;
            let ms = |v: u64| format!("{}.{:03}", v / 1000, v % 1000);
            s.push_str(&format!(
                "rtt min/avg/max/mdev = {}/{}/{}/{}\n",
                ms(r.time_min),
                ms(avg),
                ms(r.time_max),
                ms(mdev)
            ));
        }
        s
    }

    fn arm(&mut self, ctx: &Ctx) {
        if let Some(t) = self.timer {
            if self.push_out && self.active && self.under_limit() && ctx.timer_expiry(t).is_none() {
                let when = ctx.now() + self.interval();
                ctx.schedule_timer_at(t, when);
                self.due = Some(when);
            }
        }
    }

    fn interval(&self) -> Timestamp {
        Timestamp(self.interval_ms as i64 * 1_000_000)
    }

    fn handler_table(&self) -> &'static [Handler<Self>] {
        if self.receiver.is_some() {
            Self::HANDLERS
        } else {
            &Self::HANDLERS[..Self::HANDLERS.len() - RECEIVER_HANDLERS]
        }
    }

    fn write_active(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.active = parse_bool(value.trim()).map_err(|_| "type mismatch".to_string())?;
        match self.timer {
            Some(t) if self.active && self.push_out && ctx.timer_expiry(t).is_none() => {
                ctx.schedule_timer_at(t, ctx.now());
                self.due = Some(ctx.now());
            }
            Some(t) if !self.active => {
                ctx.unschedule_timer(t);
                self.due = None;
            }
            _ => {}
        }
        Ok(())
    }

    fn write_limit(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.limit =
            parse_i64(value.trim()).map_err(|_| "'limit' should be integer".to_string())?;
        self.arm(ctx);
        Ok(())
    }

    fn write_interval(&mut self, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let d = parse_interval(value.trim())
            .map_err(|_| "'interval' should be an interval".to_string())?;
        self.interval_ms = d.as_millis() as u64;
        Ok(())
    }

    fn reset_counts(&mut self, _value: &str, ctx: &mut Ctx) -> Result<(), String> {
        self.count = 0;
        if let Some(r) = self.receiver.as_mut() {
            let sent = std::mem::take(&mut r.sent);
            *r = Receiver {
                sent,
                ..Receiver::default()
            };
            r.sent.fill(0);
        }
        self.arm(ctx);
        Ok(())
    }

    fn rtt(&self, f: fn(&Receiver) -> u64) -> String {
        unparse_us(self.receiver.as_ref().map_or(0, f))
    }

    fn parse_addr(value: &str) -> Result<F::Addr, String> {
        F::parse_handler(value.trim()).map_err(|_| "syntax error".to_string())
    }

    const HANDLERS: &'static [Handler<Self>] = &[
        Handler::flagged(
            hflags::CHECKBOX,
            Handler::data_write("active", |e| &e.active, Self::write_active),
        ),
        Handler::flagged(
            hflags::CALM,
            Handler::read_write(
                "src",
                |e, _| F::unparse(e.src),
                |e, v, _| {
                    e.src = Self::parse_addr(v)?;
                    Ok(())
                },
            ),
        ),
        Handler::flagged(
            hflags::CALM,
            Handler::read_write(
                "dst",
                |e, _| F::unparse(e.dst),
                |e, v, _| {
                    e.dst = Self::parse_addr(v)?;
                    Ok(())
                },
            ),
        ),
        Handler::data("count", |e| &e.count),
        Handler::flagged(hflags::CALM, Handler::write("limit", Self::write_limit)),
        Handler::write("interval", Self::write_interval),
        Handler::button("reset_counts", Self::reset_counts),
        Handler::read("summary", |e, _| e.summary()),
        Handler::read("rtt_min", |e, _| e.rtt(|r| r.time_min)),
        Handler::read("rtt_avg", |e, _| e.rtt(|r| r.time_sum / r.nreceived.max(1))),
        Handler::read("rtt_max", |e, _| e.rtt(|r| r.time_max)),
    ];
}

/// How many handlers at the end of the table need the input.
const RECEIVER_HANDLERS: usize = 4;

impl<F: PingFamily> Element for PingSource<F> {
    fn port_count(&self) -> &'static str {
        "0-1/1"
    }

    fn processing(&self) -> &'static str {
        "h/a"
    }

    fn flow_code(&self) -> &'static str {
        "x/y"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: F::Addr = args.read_mp_with("SRC", |s| F::parse_arg(s, ictx));
        let dst: F::Addr = args.read_mp_with("DST", |s| F::parse_arg(s, ictx));
        let interval: Duration =
            args.read_or_with("INTERVAL", parse_interval, Duration::from_secs(1));
        let ident = args.read_or_with("IDENTIFIER", parse_u16, 0);
        let data = args.read_or_with("DATA", parse_string, String::new());
        let limit = args.read_or_with("LIMIT", parse_i64, -1);
        let active = args.read_or_with("ACTIVE", parse_bool, true);
        let verbose = args.read_or_with("VERBOSE", parse_bool, true);
        let stop = args.read_or_with("STOP", parse_bool, false);
        args.complete()?;
        self.src = src;
        self.dst = dst;
        self.interval_ms = interval.as_millis() as u64;
        self.ident = ident;
        self.data = data.into_bytes();
        self.limit = limit;
        self.active = active;
        self.verbose = verbose;
        self.stop = stop;
        self.decl = format!("{} :: {}", ctx.element_name(), F::CLASS);
        if self.interval_ms == 0 {
            ctx.warning("INTERVAL so small that it is zero");
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.count = 0;
        self.push_out = ctx.output_is_push(0);
        let t = ctx.new_timer();
        self.timer = Some(t);
        if self.limit != 0 && self.active && self.push_out {
            let when = ctx.now() + self.interval();
            ctx.schedule_timer_at(t, when);
            self.due = Some(when);
        }
        if ctx.ninputs() == 1 {
            self.receiver = Some(Receiver {
                sent: vec![0; 65536],
                ..Receiver::default()
            });
        }
        Ok(())
    }

    /// Hot swap: the count (so sequence numbers go on) and the timer's
    /// phase carry over: the next request leaves one (new) INTERVAL after
    /// the predecessor's last one, or at once if that time has passed.
    /// With the same IDENTIFIER and both having an input, the reply
    /// statistics and the send times of requests not yet answered carry
    /// over too (and the predecessor prints no summary). Click starts
    /// afresh.
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any_mut().downcast_mut::<Self>() else {
            return false;
        };
        self.count = o.count;
        if self.receiver.is_some() && o.receiver.is_some() && self.ident == o.ident {
            self.receiver = o.receiver.take();
        }
        if let (Some(t), Some(due)) = (self.timer, o.due) {
            // Only if this one armed its timer (active, push, under LIMIT).
            if self.due.is_some() && o.active {
                let when = Timestamp(due.nanos() - o.interval().nanos() + self.interval().nanos());
                let when = when.max(ctx.now());
                ctx.schedule_timer_at(t, when);
                self.due = Some(when);
            }
        }
        true
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        self.due = None;
        if !self.active {
            return;
        }
        if !self.under_limit() {
            // Reached before this run: a hot swap's carried-over count.
            if self.stop {
                ctx.please_stop();
            }
            return;
        }
        if let Some(p) = self.make_packet(ctx.now()) {
            ctx.emit(0, p);
        }
        self.count += 1;
        if self.under_limit() {
            self.arm(ctx);
        } else if self.stop {
            ctx.please_stop();
        }
    }

    fn pull(&mut self, _port: usize, _max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if self.under_limit() {
            let p = self.make_packet(ctx.now());
            self.count += 1;
            p.map(Batch::single)
        } else {
            if self.stop {
                ctx.please_stop();
            }
            None
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        for p in batch {
            self.receive(&p, ctx);
        }
    }

    fn cleanup(&mut self) {
        if self.verbose && self.receiver.is_some() {
            // As Click's chatter: every line carries the prefix (the rtt
            // line too) and ends with a newline.
            for line in self.summary().lines() {
                eprintln!("{}: {line}", self.decl);
            }
        }
    }

    // The reply statistics exist only with an input: the handler set
    // depends on the configuration.
    fn handlers(&self) -> Vec<HandlerSpec> {
        specs_of(self.handler_table())
    }

    fn read_handler(&self, name: &str, param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        read_from(self.handler_table(), self, name, param, ctx)
    }

    fn write_handler(&mut self, name: &str, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        write_to(self.handler_table(), self, name, value, ctx)
    }
}
