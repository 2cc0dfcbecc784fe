//! # ICMPRewriter
//!
//! Translates ICMP error messages about rewritten flows (RFC 5508).
//!
//! ## Synopsis
//! `ICMPRewriter(MAPS [, KEYWORDS])`
//!
//! ## Ports and processing
//! One push input; push output 0, and optional push output 1.
//!
//! ## Description
//! MAPS is a space-separated list of rewriter elements (IPRewriter,
//! TCPRewriter, UDPRewriter, ICMPPingRewriter). ICMPRewriter expects ICMP
//! error messages (destination unreachable, time exceeded, parameter
//! problem, source quench, redirect) quoting a packet that one of the
//! rewriters rewrote. It looks the quoted flow up in the rewriters' tables
//! and rewrites the message as the rewriters rewrite replies: the quoted IP
//! header's addresses, the quoted ports (or echo identifier), their
//! checksums, the ICMP checksum, and the outer destination address when it
//! was the quoted packet's rewritten source (with the destination IP
//! annotation). Translated messages leave by output 0.
//!
//! Other ICMP messages, errors about flows no rewriter knows, packets that
//! are not ICMP, and errors too short to quote an IP header and 8 bytes are
//! dropped and counted in `drops`. (Click's documentation sends the first
//! two kinds to output 1, but the Click 2.1 driver drops them; rclick does
//! as the driver does, which is also what RFC 5508 asks of a NAT for
//! errors it cannot translate. Output 1 may be connected and stays empty.)
//!
//! ## Keywords
//! - **DST_ANNO** (boolean): set the destination IP annotation when the
//!   destination changes. Default true.
//! - **REPLY_ANNO** (annotation): set this one-byte annotation from the
//!   mapping, as the rewriter's REPLY_ANNO does for replies.
//!
//! ## Handlers
//! - `drops` (read, rclick): packets dropped (untranslated, not ICMP, or
//!   malformed).
//!
//! ## Example
//! ```click
//! rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
//! FromDevice(eth1) -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(icmp type 3 or icmp type 11, -);
//! c[0] -> ICMPRewriter(rw) -> Discard;
//! c[1] -> [1]rw;
//! rw[0] -> Discard; rw[1] -> Discard;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, Args};
use rclick_core::wire::{IcmpHeader, Ipv4Header, UdpHeader};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::rewriter::{Rewriter, RewriterRef, RwKind};
use super::rewriter_base::*;
use crate::standard::paint::parse_anno;

#[derive(Default)]
pub struct ICMPRewriter {
    names: Vec<String>,
    elems: Vec<usize>,
    targets: Option<Vec<RewriterRef>>,
    dst_anno: bool,
    reply_anno: Option<usize>,
    drops: u64,
}

const HANDLERS: &[Handler<ICMPRewriter>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(ICMPRewriter);

/// The old and new 16-bit words of the parts of an ICMP error that change.
struct Words {
    old: [u16; 8],
    new: [u16; 8],
    n: usize,
}

impl Words {
    fn push(&mut self, old: u16, new: u16) {
        if self.n < 8 {
            self.old[self.n] = old;
            self.new[self.n] = new;
            self.n += 1;
        }
    }
}

fn addr_words(a: u32) -> [u16; 2] {
    [(a >> 16) as u16, a as u16]
}

impl ICMPRewriter {
    fn targets(&mut self, ctx: &Ctx) -> &[RewriterRef] {
        if self.targets.is_none() {
            let mut v = Vec::new();
            for &i in &self.elems {
                if let Some(Some(r)) = ctx.with_element_mut(i, |e| {
                    e.as_any().downcast_ref::<Rewriter>().map(|r| r.reference())
                }) {
                    v.push(r);
                }
            }
            self.targets = Some(v);
        }
        self.targets.as_deref().unwrap_or(&[])
    }

    /// Looks up the flow a quoted packet belongs to: the new quoted flow
    /// and the mapping's reply annotation.
    fn find(&mut self, ctx: &Ctx, proto: u8, key: &FlowId) -> Option<(FlowId, u8)> {
        for t in self.targets(ctx) {
            let map = match (t.kind, proto) {
                (RwKind::Ip, IP_PROTO_TCP) | (RwKind::Tcp, IP_PROTO_TCP) => t.maps[0],
                (RwKind::Ip, IP_PROTO_UDP) => t.maps[1],
                (RwKind::Udp, IP_PROTO_TCP | IP_PROTO_UDP) => t.maps[0],
                (RwKind::IcmpPing, IP_PROTO_ICMP) => t.maps[0],
                _ => continue,
            };
            let table = lock_table(&t.table);
            if let Some((f, d)) = table.lookup(map, key) {
                let fl = table.flow(f);
                return Some((fl.rewritten(d).reverse(), fl.reply_anno));
            }
        }
        None
    }

    /// An ICMP message that is not translated: dropped, as Click 2.1 does.
    fn untranslated(&mut self) -> Option<(usize, Packet)> {
        self.drops += 1;
        None
    }

    /// Output for a packet, or `None` (dropped).
    fn process(&mut self, mut p: Packet, ctx: &Ctx) -> Option<(usize, Packet)> {
        let Some(info) = ip_info(&p) else {
            self.drops += 1;
            return None;
        };
        if info.proto != IP_PROTO_ICMP {
            self.drops += 1;
            return None;
        }
        let Some(Ok(icmp)) = p.data().get(info.l4_off..).map(IcmpHeader::new_checked) else {
            self.drops += 1;
            return None;
        };
        if !matches!(icmp.icmp_type(), 3 | 4 | 5 | 11 | 12) {
            return self.untranslated();
        }
        let q_off = info.l4_off + 8;
        let Some(Ok(qip)) = p.data().get(q_off..).map(Ipv4Header::new_checked) else {
            self.drops += 1;
            return None;
        };
        let t_off = q_off + qip.header_len();
        if p.len() < t_off + 8 {
            self.drops += 1;
            return None;
        }
        let qproto = qip.protocol();
        let (qs, qd, qcsum) = (u32::from(qip.src()), u32::from(qip.dst()), qip.checksum());
        let Some(Ok(qt)) = p.data().get(t_off..).map(UdpHeader::new_checked) else {
            self.drops += 1;
            return None;
        };
        let (sp, dp) = (qt.src_port(), qt.dst_port());
        // The flow of the quoted packet, reversed: the key of the replies.
        let (key, ping_type) = match qproto {
            IP_PROTO_TCP | IP_PROTO_UDP => (FlowId::new(qd, dp, qs, sp), 0),
            IP_PROTO_ICMP => {
                let Some(Ok(qi)) = p.data().get(t_off..).map(IcmpHeader::new_checked) else {
                    return self.untranslated();
                };
                match qi.icmp_type() {
                    8 => (FlowId::new(qd, 0, qs, qi.ident()), 8),
                    0 => (FlowId::new(qd, qi.ident(), qs, 0), 0),
                    _ => return self.untranslated(),
                }
            }
            _ => return self.untranslated(),
        };
        let Some((nf, anno)) = self.find(ctx, qproto, &key) else {
            return self.untranslated();
        };
        let mut w = Words {
            old: [0; 8],
            new: [0; 8],
            n: 0,
        };
        let data = p.writable();
        // The quoted transport header.
        let mut l4_csum = None;
        if let Some(t) = data.get_mut(t_off..) {
            if qproto == IP_PROTO_ICMP {
                if let Ok(mut qi) = IcmpHeader::new_checked(t) {
                    let (old_id, new_id) = if ping_type == 8 {
                        (qi.ident(), nf.sport)
                    } else {
                        (qi.ident(), nf.dport)
                    };
                    let oc = qi.checksum();
                    let nc = apply_delta(oc, csum_delta(&[old_id], &[new_id]), false);
                    qi.set_ident(new_id);
                    qi.set_checksum(nc);
                    w.push(oc, nc);
                    w.push(old_id, new_id);
                }
            } else {
                let delta = csum_delta(
                    &concat_words([addr_words(qs), addr_words(qd), [sp, dp]]),
                    &concat_words([
                        addr_words(nf.saddr),
                        addr_words(nf.daddr),
                        [nf.sport, nf.dport],
                    ]),
                );
                // The quoted TCP checksum, whenever its bytes are quoted
                // (a quote often ends inside a header with options, whose
                // data offset then points past the message).
                if qproto == IP_PROTO_TCP && t.len() >= 18 {
                    let oc = u16::from_be_bytes([t[16], t[17]]);
                    let nc = apply_delta(oc, delta, false);
                    t[16..18].copy_from_slice(&nc.to_be_bytes());
                    l4_csum = Some((oc, nc));
                }
                if let Ok(mut u) = UdpHeader::new_checked(t) {
                    if qproto == IP_PROTO_UDP && u.checksum() != 0 {
                        let oc = u.checksum();
                        let nc = apply_udp_delta(oc, delta, false);
                        u.set_checksum(nc);
                        l4_csum = Some((oc, nc));
                    }
                    u.set_src_port(nf.sport);
                    u.set_dst_port(nf.dport);
                }
                w.push(sp, nf.sport);
                w.push(dp, nf.dport);
            }
        }
        if let Some((o, n)) = l4_csum {
            w.push(o, n);
        }
        // The quoted IP header.
        if let Some(Ok(mut q)) = data.get_mut(q_off..).map(Ipv4Header::new_checked) {
            let ow = concat_words([addr_words(qs), addr_words(qd)]);
            let nw = concat_words([addr_words(nf.saddr), addr_words(nf.daddr)]);
            q.set_src(Ipv4Addr::from(nf.saddr));
            q.set_dst(Ipv4Addr::from(nf.daddr));
            let nc = apply_delta(qcsum, csum_delta(&ow[..4], &nw[..4]), false);
            q.set_checksum(nc);
            w.push(qcsum, nc);
            for i in 0..4 {
                w.push(ow[i], nw[i]);
            }
        }
        // The ICMP checksum.
        if let Some(Ok(mut ih)) = data.get_mut(info.l4_off..).map(IcmpHeader::new_checked) {
            let c = apply_delta(
                ih.checksum(),
                csum_delta(&w.old[..w.n], &w.new[..w.n]),
                false,
            );
            ih.set_checksum(c);
        }
        // The outer destination, when it was the quoted source.
        let mut new_dst = None;
        if info.daddr == qs {
            if let Some(Ok(mut ip)) = data.get_mut(info.ip_off..).map(Ipv4Header::new_checked) {
                let c = apply_delta(
                    ip.checksum(),
                    csum_delta(&addr_words(qs), &addr_words(nf.saddr)),
                    false,
                );
                ip.set_dst(Ipv4Addr::from(nf.saddr));
                ip.set_checksum(c);
                new_dst = Some(nf.saddr);
            }
        }
        if let (Some(d), true) = (new_dst, self.dst_anno) {
            p.set_dst_ip_anno(Ipv4Addr::from(d));
        }
        if let Some(a) = self.reply_anno {
            if let Some(b) = p.anno_mut().get_mut(a) {
                *b = anno;
            }
        }
        Some((0, p))
    }
}

/// Flattens pairs of address and port words into the first 2N of six
/// words (on the stack: no allocation per packet).
fn concat_words<const N: usize>(pairs: [[u16; 2]; N]) -> [u16; 6] {
    let mut w = [0u16; 6];
    for (i, p) in pairs.iter().enumerate().take(3) {
        w[2 * i] = p[0];
        w[2 * i + 1] = p[1];
    }
    w
}

impl Element for ICMPRewriter {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        "h/h"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        // A space-separated list: the raw argument, not one word.
        let maps: String = args.read_mp_with("MAPS", |s| Ok(s.to_string()));
        let dst_anno = args.read_or_with("DST_ANNO", parse_bool, true);
        let reply_anno = args.read_with("REPLY_ANNO", |s| parse_anno(s, 1));
        args.complete()?;
        let mut errors = Vec::new();
        let mut elems = Vec::new();
        let names = space_words(&maps);
        for n in &names {
            match ctx.find_element(n) {
                Some(i) => {
                    let ok = ctx
                        .with_element(i, |e| e.as_any().is::<Rewriter>())
                        .unwrap_or(false);
                    if ok {
                        elems.push(i);
                    } else {
                        errors.push(format!("element '{n}' is not an IP rewriter"));
                    }
                }
                None => errors.push(format!("no element named '{n}'")),
            }
        }
        if errors.is_empty() && elems.is_empty() {
            errors.push("no IP rewriters supplied".into());
        }
        if !errors.is_empty() {
            return Err(errors.into());
        }
        self.names = names;
        self.elems = elems;
        self.targets = None;
        self.dst_anno = dst_anno;
        self.reply_anno = reply_anno;
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: rclick_core::Batch, ctx: &mut Ctx) {
        for p in batch.drain() {
            if let Some((o, p)) = self.process(p, ctx) {
                ctx.emit(o, p);
            }
        }
    }
}
