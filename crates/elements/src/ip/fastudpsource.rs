//! # FastUDPSource
//!
//! Generates identical UDP/IP/Ethernet packets at a fixed rate (a
//! benchmark source from Click's kernel module, at user level).
//!
//! ## Synopsis
//! `FastUDPSource(RATE, LIMIT, LENGTH, SRCETH, SRCIP, SPORT, DSTETH, DSTIP, DPORT [, CHECKSUM, INTERVAL, ACTIVE])`
//!
//! ## Ports and processing
//! No inputs; one pull output.
//!
//! ## Description
//! At initialization builds one Ethernet frame of LENGTH bytes (at least
//! 60; a smaller LENGTH is raised to 60 with a warning, as in Click)
//! holding an IPv4 header (TTL 250, ID 0, header checksum set) and a UDP
//! header from SRCIP:SPORT to DSTIP:DPORT, then zeros. Each pull hands out
//! that frame again, without copying it (the packets share one buffer, so
//! elements downstream must not write into them without copying, which
//! rclick's packets do on their own), at most RATE packets per second
//! spread evenly over time (RATE 0 means as fast as pulled), until LIMIT
//! packets have been sent (a negative LIMIT means no limit). With a
//! nonzero INTERVAL, both ports grow by one after every INTERVAL packets.
//! The UDP checksum is computed when CHECKSUM is true (default).
//!
//! In Click this element exists only in the Linux kernel module, where it
//! hands the same sk_buff to the driver again and again; here it feeds
//! ToDevice (or any pull path) the same way.
//!
//! ## Keywords
//! - **RATE** (unsigned): packets per second; 0 for no limit.
//! - **LIMIT** (integer): packets to send in all; negative for no limit.
//! - **LENGTH** (unsigned): frame length in bytes, Ethernet header
//!   included.
//! - **SRCETH**, **DSTETH** (Ethernet address), **SRCIP**, **DSTIP** (IP
//!   address), **SPORT**, **DPORT** (UDP port): the headers.
//! - **CHECKSUM** (boolean): compute the UDP checksum. Default true.
//! - **INTERVAL** (unsigned): increment both ports every INTERVAL packets;
//!   0 (default) never.
//! - **ACTIVE** (boolean): whether to send. Default true.
//!
//! On hot swap, a FastUDPSource of the same name carries over its count,
//! port increments and first packet time; the last packet time only if
//! the new LIMIT is reached too; and, with the same RATE, its rate clock,
//! only if both the old and the new source are active and the old one had
//! not reached its LIMIT (at most one packet owed carries over, so a swap
//! never releases a burst).
//!
//! ## Handlers
//! - `count` (read): packets sent.
//! - `rate` (read/write): reads the average rate achieved between the
//!   first and the last packet once LIMIT packets were sent (0 before, as
//!   in Click); writing sets RATE.
//! - `limit` (write): sets LIMIT.
//! - `active` (write): sets ACTIVE; activating also resets the count.
//! - `reset` (write): zeroes the count and restarts.
//!
//! ## Example
//! ```click
//! FastUDPSource(100000, 500000, 60, 0:0:0:0:0:1, 1.0.0.1, 1234,
//!               1:1:1:1:1:1, 2.0.0.2, 1234) -> ToDevice(eth0);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_i32, parse_u32, Args};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN as IP_LEN, PROTO_UDP};
use rclick_core::wire::udp::HEADER_LEN as UDP_LEN;
use rclick_core::wire::{EtherAddr, Ipv4Header, Ipv4Repr, UdpHeader, UdpRepr};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

use super::address::{parse_ether_arg, parse_ipv4_arg, parse_port_arg};

const ETHER_LEN: usize = 14;
const MIN_LENGTH: usize = 60;

pub struct FastUDPSource {
    rate: u32,
    limit: Option<u32>,
    length: usize,
    src_eth: EtherAddr,
    dst_eth: EtherAddr,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
    checksum: bool,
    interval: u32,
    active: bool,
    /// Port increments so far.
    incr: u16,
    count: u32,
    /// When the rate clock started, and packets sent since then.
    epoch: Option<Timestamp>,
    sent_since_epoch: u64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    packet: Option<Packet>,
}

impl Default for FastUDPSource {
    fn default() -> Self {
        FastUDPSource {
            rate: 0,
            limit: None,
            length: MIN_LENGTH,
            src_eth: EtherAddr([0; 6]),
            dst_eth: EtherAddr([0; 6]),
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            sport: 0,
            dport: 0,
            checksum: true,
            interval: 0,
            active: true,
            incr: 0,
            count: 0,
            epoch: None,
            sent_since_epoch: 0,
            first: None,
            last: None,
            packet: None,
        }
    }
}

impl FastUDPSource {
    /// Builds the frame with the current ports.
    fn build(&mut self) {
        let mut p = Packet::zeroed(self.length);
        let d = p.writable();
        d[..6].copy_from_slice(&self.dst_eth.0);
        d[6..12].copy_from_slice(&self.src_eth.0);
        d[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let ip_total = self.length - ETHER_LEN;
        let ip = Ipv4Repr {
            src: self.src,
            dst: self.dst,
            protocol: PROTO_UDP,
            payload_len: ip_total - IP_LEN,
            ttl: 250,
            ident: 0,
            ..Ipv4Repr::default()
        };
        let udp = UdpRepr {
            src_port: self.sport.wrapping_add(self.incr),
            dst_port: self.dport.wrapping_add(self.incr),
            payload_len: ip_total - IP_LEN - UDP_LEN,
        };
        let (iph, rest) = d[ETHER_LEN..].split_at_mut(IP_LEN);
        ip.emit(&mut Ipv4Header::new_unchecked(iph));
        udp.emit(&mut UdpHeader::new_unchecked(&mut rest[..]));
        if self.checksum {
            UdpHeader::new_unchecked(&mut rest[..]).fill_checksum(self.src, self.dst);
        }
        p.set_network_header(ETHER_LEN, IP_LEN);
        p.set_dst_ip_anno(self.dst);
        self.packet = Some(p);
    }

    fn reset(&mut self) {
        self.count = 0;
        self.first = None;
        self.last = None;
        self.incr = 0;
        self.epoch = None;
        self.sent_since_epoch = 0;
        self.build();
    }

    /// Packets the rate allows now.
    fn allowed(&mut self, now: Timestamp) -> u64 {
        if self.rate == 0 {
            return u64::MAX;
        }
        let epoch = *self.epoch.get_or_insert(now);
        let elapsed = now.nanos().saturating_sub(epoch.nanos()).max(0) as u128;
        let due = elapsed * u128::from(self.rate) / 1_000_000_000 + 1;
        (due as u64).saturating_sub(self.sent_since_epoch)
    }

    fn achieved_rate(&self) -> String {
        match (self.first, self.last) {
            (Some(f), Some(l)) => {
                let ns = (l.nanos() - f.nanos()).max(1) as u128;
                (u128::from(self.count) * 1_000_000_000 / ns).to_string()
            }
            _ => "0".to_string(),
        }
    }
}

const HANDLERS: &[Handler<FastUDPSource>] = &[
    Handler::data("count", |e| &e.count),
    Handler::read_write(
        "rate",
        |e, _| e.achieved_rate(),
        |e, v, _| {
            e.rate = parse_u32(v.trim()).map_err(|_| "rate parameter must be integer >= 0")?;
            e.epoch = None;
            e.sent_since_epoch = 0;
            Ok(())
        },
    ),
    Handler::write("limit", |e, v, _| {
        let l = parse_i32(v.trim()).map_err(|_| "limit parameter must be integer >= 0")?;
        e.limit = u32::try_from(l).ok();
        Ok(())
    }),
    Handler::write("active", |e, v, _| {
        e.active = parse_bool(v.trim()).map_err(|_| "active parameter must be boolean")?;
        if e.active {
            e.reset();
        }
        Ok(())
    }),
    Handler::button("reset", |e, _, _| {
        e.reset();
        Ok(())
    }),
];

rclick_core::element_class!(FastUDPSource);

impl Element for FastUDPSource {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn processing(&self) -> &'static str {
        "l/l"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.rate = args.read_mp("RATE");
        let limit: i32 = args.read_mp("LIMIT");
        let length: u32 = args.read_mp("LENGTH");
        self.src_eth = args.read_mp_with("SRCETH", |s| parse_ether_arg(s, ictx));
        self.src = args.read_mp_with("SRCIP", |s| parse_ipv4_arg(s, ictx));
        self.sport = args.read_mp_with("SPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        self.dst_eth = args.read_mp_with("DSTETH", |s| parse_ether_arg(s, ictx));
        self.dst = args.read_mp_with("DSTIP", |s| parse_ipv4_arg(s, ictx));
        self.dport = args.read_mp_with("DPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        self.checksum = args.read_p_or("CHECKSUM", true);
        self.interval = args.read_p_or("INTERVAL", 0u32);
        self.active = args.read_p_or("ACTIVE", true);
        args.complete()?;
        self.limit = u32::try_from(limit).ok();
        self.length = length as usize;
        if self.length < MIN_LENGTH {
            // Click says it bare, with no element name or context line.
            ctx.say_bare(format_args!(
                "warning: packet length < {MIN_LENGTH}, defaulting to {MIN_LENGTH}"
            ));
            self.length = MIN_LENGTH;
        }
        if self.length > 65535 + ETHER_LEN {
            return Err("LENGTH too large".into());
        }
        Ok(())
    }

    fn initialize(&mut self, _ctx: &mut InitCtx) -> ConfigResult {
        self.reset();
        Ok(())
    }

    /// Hot swap: the count (LIMIT counts packets sent by both), the time
    /// of the first packet, the port increments carry over; the time of
    /// the last packet only if the new LIMIT is reached too (so `rate`
    /// reads 0 until the new LIMIT is reached, as without a swap). The
    /// rate clock carries over only with the same RATE, when both the old
    /// and the new source are active and the old one was still sending
    /// (not at its LIMIT); the debt it carries is capped at one packet,
    /// so a swap never releases a burst. Otherwise the clock starts at the
    /// first pull, as writing `rate` does.
    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(o) = old.as_any().downcast_ref::<FastUDPSource>() else {
            return false;
        };
        self.count = o.count;
        self.first = o.first;
        self.last = if self.limit.is_some_and(|l| self.count >= l) {
            o.last
        } else {
            None
        };
        self.incr = o.incr;
        let old_sending = o.active && o.limit.is_none_or(|l| o.count < l);
        if self.rate == o.rate && self.rate != 0 && self.active && old_sending {
            if let Some(epoch) = o.epoch {
                self.epoch = Some(epoch);
                self.sent_since_epoch = o.sent_since_epoch;
                if self.allowed(ctx.now()) > 1 {
                    // More than one packet owed: restart the clock now
                    // (one packet due at once, then the rate).
                    self.epoch = Some(ctx.now());
                    self.sent_since_epoch = 0;
                }
            }
        }
        self.build();
        true
    }

    fn pull(&mut self, _port: usize, max: usize, ctx: &mut Ctx) -> Option<Batch> {
        if !self.active {
            return None;
        }
        let left = self
            .limit
            .map_or(u64::MAX, |l| u64::from(l.saturating_sub(self.count)));
        let now = ctx.now();
        let n = (max as u64).min(left).min(self.allowed(now)) as usize;
        if n == 0 {
            return None;
        }
        let mut batch = Batch::new();
        for _ in 0..n {
            let Some(proto) = self.packet.as_ref() else {
                break;
            };
            batch.push(proto.clone());
            self.count = self.count.wrapping_add(1);
            self.sent_since_epoch += 1;
            if self.count == 1 {
                self.first = Some(now);
            }
            if self.limit.is_some_and(|l| self.count >= l) {
                self.last = Some(now);
            }
            if self.interval > 0 && self.count.is_multiple_of(self.interval) {
                self.incr = self.incr.wrapping_add(1);
                self.build();
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}
