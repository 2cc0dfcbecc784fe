//! # IP6RouterAdvertiser
//!
//! Sends IPv6 router advertisements with prefix information, for hosts'
//! stateless address autoconfiguration (SLAAC).
//!
//! ## Synopsis
//! `IP6RouterAdvertiser(SRC, ETH, PREFIX [, keywords INTERVAL, LIFETIME, VALID_LIFETIME, PREFERRED_LIFETIME, HOP_LIMIT, MTU, MANAGED, OTHER, REACHABLE_TIME, RETRANS_TIMER, ACTIVE])`
//!
//! ## Ports and processing
//! One push input (router solicitations, with their Ethernet header); one
//! push output (router advertisements, Ethernet frames).
//!
//! ## Description
//! rclick's (Click 2.1 has no router advertisement element). Advertises
//! this router on one link as RFC 4861 section 6.2 describes: an
//! advertisement to the all-nodes address ff02::1 (Ethernet
//! 33-33-00-00-00-01) from SRC, the interface's link-local address (RFC
//! 4861 requires it), with hop limit 255, a source link-layer address
//! option (ETH), an MTU option when MTU is given, and one prefix
//! information option per PREFIX (on-link and autonomous flags set), from
//! which hosts form their addresses. Advertisements go out every INTERVAL
//! (the first three at most 16 s apart, as section 6.2.4 asks; the
//! interval is fixed, where the RFC draws each one at random between
//! MinRtrAdvInterval and MaxRtrAdvInterval so that routers on one link do
//! not fall into step) and in
//! answer to router solicitations on the input, at most one every 3 s
//! (MIN_DELAY_BETWEEN_RAS, section 6.2.6; an answer that would come
//! sooner is sent when the 3 s are up).
//!
//! Router solicitations are validated as section 6.1.1 asks (hop limit
//! 255, checksum, code 0, length, options, no source link-layer option
//! from `::`); invalid ones and other frames are counted in `drops`.
//!
//! Routers also answer neighbour solicitations for SRC: list it in the
//! interface's IP6NDAdvertiser, since hosts use it as their default router.
//!
//! ## Keywords
//! - **SRC** (IPv6 address): link-local source address.
//! - **ETH** (Ethernet address): the interface's Ethernet address.
//! - **PREFIX** (IPv6 prefixes): advertised prefixes, space-separated (a
//!   /64 each for SLAAC).
//! - **INTERVAL** (time): between unsolicited advertisements. Default
//!   200 s (RFC 4861's MaxRtrAdvInterval default is 600 s).
//! - **LIFETIME** (unsigned seconds): router lifetime; 0 means not a
//!   default router. Default 1800.
//! - **VALID_LIFETIME**, **PREFERRED_LIFETIME** (unsigned seconds): the
//!   prefixes' lifetimes. Defaults 2592000 and 604800.
//! - **HOP_LIMIT** (unsigned): hop limit hosts should use; default 64.
//! - **MTU** (unsigned): link MTU option; none by default.
//! - **MANAGED**, **OTHER** (bool): the M and O flags. Default false.
//! - **REACHABLE_TIME**, **RETRANS_TIMER** (unsigned milliseconds):
//!   advertised to hosts; 0 (unspecified) by default.
//! - **ACTIVE** (bool): send unsolicited advertisements. Default true.
//!
//! ## Handlers
//! - `sent` (read): advertisements sent.
//! - `solicitations` (read): valid router solicitations received.
//! - `drops` (read): invalid solicitations and other frames.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/86dd 20/3aff 54/85, ...);
//! c[0] -> IP6RouterAdvertiser(fe80::1, 02:00:00:00:00:01, 2001:db8:1::/64)
//!      -> Queue -> ToDevice(eth0);
//! ```

use std::net::Ipv6Addr;
use std::time::Duration;

use rclick_core::conf::{parse_bool, parse_seconds, parse_u32, split_words, Args};
use rclick_core::element::processing;
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ether::{ETHERTYPE_IP6, HEADER_LEN as ETHER_LEN};
use rclick_core::wire::icmpv6::{multicast_ether, ND_RA_FLAG_MANAGED, ND_RA_FLAG_OTHER};
use rclick_core::wire::ipv6::{HEADER_LEN as IP6_LEN, PROTO_ICMPV6};
use rclick_core::wire::{
    EtherAddr, EtherFrame, EthernetRepr, Icmpv6Header, Icmpv6Repr, Ipv6Header, Ipv6Repr,
    NdiscOption, PrefixInfo,
};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, TimerId, Timestamp,
};

use super::common::{parse_ipv6_arg, parse_ipv6_prefix_arg};
use super::nd::parse_rs;
use crate::ip::address::parse_ether_arg;

const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
const S: i64 = 1_000_000_000;
/// RFC 4861 section 10: MAX_INITIAL_RTR_ADVERT_INTERVAL, _ADVERTISEMENTS.
const MAX_INITIAL_INTERVAL: i64 = 16 * S;
const MAX_INITIAL_ADVERTISEMENTS: u32 = 3;
/// MIN_DELAY_BETWEEN_RAS.
const MIN_DELAY: i64 = 3 * S;

pub struct IP6RouterAdvertiser {
    src: Ipv6Addr,
    eth: EtherAddr,
    prefixes: Vec<(Ipv6Addr, u8)>,
    interval: i64,
    lifetime: u16,
    valid: u32,
    preferred: u32,
    hop_limit: u8,
    mtu: Option<u32>,
    flags: u8,
    reachable: u32,
    retrans: u32,
    active: bool,
    timer: Option<TimerId>,
    last_sent: Option<i64>,
    /// An answer to a solicitation is waiting for MIN_DELAY.
    answer_pending: bool,
    next_periodic: i64,
    sent: u64,
    solicitations: u64,
    drops: u64,
}

impl Default for IP6RouterAdvertiser {
    fn default() -> Self {
        IP6RouterAdvertiser {
            src: Ipv6Addr::UNSPECIFIED,
            eth: EtherAddr::default(),
            prefixes: Vec::new(),
            interval: 200 * S,
            lifetime: 1800,
            valid: 2_592_000,
            preferred: 604_800,
            hop_limit: 64,
            mtu: None,
            flags: 0,
            reachable: 0,
            retrans: 0,
            active: true,
            timer: None,
            last_sent: None,
            answer_pending: false,
            next_periodic: i64::MAX,
            sent: 0,
            solicitations: 0,
            drops: 0,
        }
    }
}

impl IP6RouterAdvertiser {
    /// The advertisement frame.
    pub fn advertisement(&self) -> Packet {
        let ra = Icmpv6Repr::RouterAdvert {
            hop_limit: self.hop_limit,
            flags: self.flags,
            router_lifetime: self.lifetime,
            reachable_time: self.reachable,
            retrans_time: self.retrans,
            source_ll: Some(self.eth),
            mtu: self.mtu,
            prefix_info: None,
        };
        let ilen = ra.buffer_len() + 32 * self.prefixes.len();
        let total = ETHER_LEN + IP6_LEN + ilen;
        let mut q = Packet::with_room(DEFAULT_HEADROOM - ETHER_LEN, &[], total);
        let Some(b) = q.put(total) else {
            return q;
        };
        let (eh, rest) = b.split_at_mut(ETHER_LEN);
        EthernetRepr {
            src: self.eth,
            dst: multicast_ether(ALL_NODES),
            ethertype: ETHERTYPE_IP6,
        }
        .emit(&mut EtherFrame::new_unchecked(eh));
        let (ih, cb) = rest.split_at_mut(IP6_LEN);
        Ipv6Repr {
            src: self.src,
            dst: ALL_NODES,
            next_header: PROTO_ICMPV6,
            payload_len: ilen,
            hop_limit: 255,
            ..Ipv6Repr::default()
        }
        .emit(&mut Ipv6Header::new_unchecked(ih));
        let fixed = ra.buffer_len();
        ra.emit(&mut Icmpv6Header::new_unchecked(&mut cb[..fixed]));
        let mut at = fixed;
        for &(prefix, len) in &self.prefixes {
            at += NdiscOption::PrefixInfo(PrefixInfo {
                prefix_len: len,
                on_link: true,
                autonomous: true,
                valid_lifetime: self.valid,
                preferred_lifetime: self.preferred,
                prefix,
            })
            .emit(&mut cb[at..]);
        }
        Icmpv6Header::new_unchecked(&mut *cb).fill_checksum(self.src, ALL_NODES);
        q.set_network_header(ETHER_LEN, IP6_LEN);
        q
    }

    fn send(&mut self, now: i64, ctx: &mut Ctx) {
        let q = self.advertisement();
        self.sent += 1;
        self.last_sent = Some(now);
        ctx.emit(0, q);
    }

    /// When the next unsolicited advertisement is due, from `now`.
    fn periodic_delay(&self) -> i64 {
        if self.sent < MAX_INITIAL_ADVERTISEMENTS as u64 {
            self.interval.min(MAX_INITIAL_INTERVAL)
        } else {
            self.interval
        }
    }

    fn reschedule(&mut self, ctx: &mut Ctx) {
        let Some(t) = self.timer else {
            return;
        };
        let mut next = if self.active {
            self.next_periodic
        } else {
            i64::MAX
        };
        if self.answer_pending {
            let at = self.last_sent.map_or(0, |l| l + MIN_DELAY);
            next = next.min(at);
        }
        if next == i64::MAX {
            ctx.unschedule_timer(t);
        } else {
            ctx.schedule_timer_at(t, Timestamp(next));
        }
    }
}

const HANDLERS: &[Handler<IP6RouterAdvertiser>] = &[
    Handler::data("sent", |e| &e.sent),
    Handler::data("solicitations", |e| &e.solicitations),
    Handler::data("drops", |e| &e.drops),
];

rclick_core::element_class!(IP6RouterAdvertiser);

fn secs_u32(s: &str) -> Result<u32, String> {
    parse_u32(s)
}

impl Element for IP6RouterAdvertiser {
    fn port_count(&self) -> &'static str {
        "1/1"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: Ipv6Addr = args.read_mp_with("SRC", |s| parse_ipv6_arg(s, ictx));
        let eth: EtherAddr = args.read_mp_with("ETH", |s| parse_ether_arg(s, ictx));
        let prefixes: Vec<(Ipv6Addr, u8)> = args.read_mp_with("PREFIX", |text| {
            let mut v = Vec::new();
            for w in split_words(text) {
                let p = parse_ipv6_prefix_arg(&w, ictx)?;
                let len = p.prefix_len().ok_or("not a contiguous prefix")?;
                v.push((p.network(), len));
            }
            Ok(v)
        });
        let interval = args.read_or_with("INTERVAL", parse_seconds, Duration::from_secs(200));
        let lifetime = args.read_or_with("LIFETIME", secs_u32, 1800);
        let valid = args.read_or_with("VALID_LIFETIME", secs_u32, 2_592_000);
        let preferred = args.read_or_with("PREFERRED_LIFETIME", secs_u32, 604_800);
        let hop_limit = args.read_or_with("HOP_LIMIT", parse_u32, 64);
        let mtu = args.read_with("MTU", parse_u32);
        let managed = args.read_or_with("MANAGED", parse_bool, false);
        let other = args.read_or_with("OTHER", parse_bool, false);
        let reachable = args.read_or_with("REACHABLE_TIME", parse_u32, 0);
        let retrans = args.read_or_with("RETRANS_TIMER", parse_u32, 0);
        let active = args.read_or_with("ACTIVE", parse_bool, true);
        args.complete()?;
        if !src.is_unicast_link_local() {
            return Err("SRC must be a link-local address (RFC 4861 section 6.1.2)".into());
        }
        if interval < Duration::from_secs(4) {
            return Err("INTERVAL must be at least 4 s".into());
        }
        self.src = src;
        self.eth = eth;
        self.prefixes = prefixes;
        self.interval = i64::try_from(interval.as_nanos()).unwrap_or(i64::MAX);
        self.lifetime = u16::try_from(lifetime).map_err(|_| "LIFETIME too large".to_string())?;
        self.valid = valid;
        self.preferred = preferred.min(valid);
        self.hop_limit = u8::try_from(hop_limit).map_err(|_| "HOP_LIMIT too large".to_string())?;
        self.mtu = mtu;
        self.flags =
            if managed { ND_RA_FLAG_MANAGED } else { 0 } | if other { ND_RA_FLAG_OTHER } else { 0 };
        self.reachable = reachable;
        self.retrans = retrans;
        self.active = active;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_timer();
        self.timer = Some(t);
        if self.active {
            // The first advertisement goes out at once.
            let now = ctx.now().nanos();
            self.next_periodic = now;
            ctx.schedule_timer_at(t, Timestamp(now));
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        let now = ctx.now().nanos();
        for p in batch {
            match parse_rs(p.data()) {
                Ok(_) => {
                    self.solicitations += 1;
                    match self.last_sent {
                        Some(l) if now < l + MIN_DELAY => self.answer_pending = true,
                        _ => self.send(now, ctx),
                    }
                }
                Err(_) => self.drops += 1,
            }
        }
        self.reschedule(ctx);
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        let now = ctx.now().nanos();
        let answer_due = self.answer_pending && self.last_sent.is_none_or(|l| now >= l + MIN_DELAY);
        if (self.active && now >= self.next_periodic) || answer_due {
            self.answer_pending = false;
            self.send(now, ctx);
            if self.active && now >= self.next_periodic {
                self.next_periodic = now.saturating_add(self.periodic_delay());
            }
        }
        self.reschedule(ctx);
    }

    rclick_core::handlers!(HANDLERS);
}
