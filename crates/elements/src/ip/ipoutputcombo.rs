//! # IPOutputCombo
//!
//! The IP router's per-interface output path in one element:
//! DropBroadcasts, PaintTee, IPGWOptions, FixIPSrc, DecIPTTL and the
//! fragmentation check.
//!
//! ## Synopsis
//! `IPOutputCombo(COLOR, IPADDR, MTU)`
//!
//! ## Ports and processing
//! One push input, five push outputs. Processing `h/h`.
//!
//! ## Description
//! A merged element (the Click paper's section on merging elements)
//! equivalent to
//!
//! ```text
//! elementclass IPOutputCombo { $COLOR, $IPADDR, $MTU |
//!   input -> DropBroadcasts
//!         -> p :: PaintTee($COLOR)
//!         -> g :: IPGWOptions($IPADDR)
//!         -> FixIPSrc($IPADDR)
//!         -> d :: DecIPTTL
//!         -> l :: CheckLength($MTU)
//!         -> [0]output;
//!   p[1] -> [1]output; g[1] -> [2]output;
//!   d[1] -> [3]output; l[1] -> [4]output;
//! }
//! ```
//!
//! Input packets need their network header set (CheckIPHeader or
//! IPInputCombo). Link-level broadcast and multicast packets (packet-type
//! annotation) are dropped. A packet whose paint annotation equals COLOR
//! is copied to output 1 (for an ICMP redirect: it leaves on the interface
//! it arrived on). Record Route and Timestamp options are processed with
//! address IPADDR; a bad option sends the packet to output 2 with the ICMP
//! parameter-problem annotation set. If the fix-IP-source annotation is
//! set, the source becomes IPADDR. Packets with TTL 0 or 1 go to output 3;
//! others get their TTL decremented (incremental checksum update).
//! Finally packets longer than MTU bytes (from the IP header on) go to
//! output 4, normally an IPFragmenter, and the rest to output 0.
//!
//! Each step runs the same code as the corresponding element.
//!
//! ## Keywords
//! - **COLOR** (0-255): this interface's paint color.
//! - **IPADDR** (IP address): this interface's address.
//! - **MTU** (unsigned): this interface's MTU.
//!
//! ## Handlers
//! - `drops` (read): link-level broadcasts dropped plus packets without a
//!   valid IP header dropped.
//! - `option_drops` (read): packets sent to output 2 (bad options).
//! - `ttl_drops` (read): packets sent to output 3 (TTL expired).
//! - `color` (read): COLOR.
//! - `mtu` (read): MTU.
//!
//! Click's IPOutputCombo has no handlers of its own: these are rclick
//! additions.
//!
//! ## Example
//! ```click
//! rt[1] -> oc :: IPOutputCombo(1, 18.26.4.24, 1500) -> arpq :: ARPQuerier(18.26.4.24, 00:00:c0:ae:67:ef);
//! oc[1] -> ICMPError(18.26.4.24, redirect, host) -> rt;
//! oc[2] -> ICMPError(18.26.4.24, parameterproblem) -> rt;
//! oc[3] -> ICMPError(18.26.4.24, timeexceeded) -> rt;
//! oc[4] -> fr :: IPFragmenter(1500) -> arpq;
//! fr[1] -> ICMPError(18.26.4.24, unreachable, needfrag) -> rt;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::element::dispatch_push;
use rclick_core::element::kinds::FilterOrDrop;
use rclick_core::element::{processing, Dispatch, Filter};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::decipttl::DecIPTTL;
use super::dropbroadcasts::DropBroadcasts;
use super::fixipsrc::FixIPSrc;
use super::ipcommon::net_off;
use super::ipgwoptions::IPGWOptions;
use crate::standard::painttee::PaintTee;

/// The forwarding steps of one interface, run in sequence on one packet.
#[derive(Default)]
pub struct IPOutputCombo {
    dropb: DropBroadcasts,
    painttee: PaintTee,
    gwopts: IPGWOptions,
    fixsrc: FixIPSrc,
    dec: DecIPTTL,
    color: u8,
    mtu: usize,
    /// Packets DecIPTTL dropped for lack of an IP header.
    bad_drops: u64,
}

impl Dispatch for IPOutputCombo {
    #[inline]
    fn dispatch(&mut self, p: Packet, ctx: &mut Ctx) -> Option<(usize, Packet)> {
        let p = self.dropb.action(p, ctx)?;
        // PaintTee's copy leaves on output 1, which is also ours.
        let p = self.painttee.action(p, ctx)?;
        let p = match self.gwopts.filter(p, ctx) {
            Ok(p) => p,
            Err(p) => return Some((2, p)),
        };
        let p = self.fixsrc.action(p, ctx)?;
        let p = match self.dec.filter_or_drop(p, ctx) {
            Some(Ok(p)) => p,
            None => {
                self.bad_drops += 1;
                return None;
            }
            Some(Err(p)) => return Some((3, p)),
        };
        let ip_len = p.len() - net_off(&p).unwrap_or(0);
        Some((if ip_len > self.mtu { 4 } else { 0 }, p))
    }
}

const HANDLERS: &[Handler<IPOutputCombo>] = &[
    Handler::read("drops", |e, _| (e.dropb.drops + e.bad_drops).to_string()),
    Handler::data("option_drops", |e| &e.gwopts.drops),
    Handler::read("ttl_drops", |e, _| (e.dec.drops - e.bad_drops).to_string()),
    Handler::data("color", |e| &e.color),
    Handler::data("mtu", |e| &e.mtu),
];

rclick_core::element_class!(IPOutputCombo);

impl Element for IPOutputCombo {
    fn port_count(&self) -> &'static str {
        "1/5"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let color: u8 = args.read_mp("COLOR");
        let addr: Ipv4Addr = args.read_mp_with("IPADDR", |s| parse_ipv4_arg(s, ictx));
        let mtu: u32 = args.read_mp("MTU");
        args.complete()?;
        self.dropb.configure("", ctx)?;
        self.painttee.configure(&color.to_string(), ctx)?;
        self.gwopts.configure(&addr.to_string(), ctx)?;
        self.fixsrc.configure(&addr.to_string(), ctx)?;
        self.dec.configure("", ctx)?;
        self.color = color;
        self.mtu = mtu as usize;
        Ok(())
    }

    rclick_core::handlers!(HANDLERS);

    // Not the dispatch kind: PaintTee's copy leaves on output 1 while the
    // packet is processed, so each packet must leave before the next is
    // processed, as in Click, or the copies would overtake the originals
    // where outputs 0 and 1 meet again. A batch without a packet of the
    // redirect color (the usual case) makes no copy: nothing leaves while
    // it is processed, so it is processed whole and, when its survivors
    // all take one output, moves on in one handoff.
    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        if !batch.packets().iter().any(|p| self.painttee.copies(p)) {
            dispatch_push(batch, ctx, |p, ctx| self.dispatch(p, ctx));
            return;
        }
        for p in batch {
            if let Some((output, p)) = self.dispatch(p, ctx) {
                ctx.emit(output, p);
            }
        }
    }
}
