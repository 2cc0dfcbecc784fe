//! # AddressTranslator
//!
//! Maps IPv6 addresses (and ports) between an inner and an outer side.
//!
//! ## Synopsis
//! `AddressTranslator(NSTATIC, [STATIC_PORTS, STATIC_MAPPING...,] DYNAMIC [, DYNAMIC_PORTS, DIRECTION, POOL...])`
//!
//! ## Ports and processing
//! Two push inputs, two push outputs: input 0 takes outward packets (from
//! the inner hosts), which leave translated on output 0; input 1 takes
//! inward packets, which leave on output 1. Processing `h/h`.
//!
//! ## Description
//! Click's positional arguments, in order:
//!
//! - NSTATIC (integer): the number of static mappings. When it is not 0,
//!   STATIC_PORTS (boolean) follows, then NSTATIC mappings, each
//!   `INNER_ADDR MAPPED_ADDR`, or `INNER_ADDR INNER_PORT MAPPED_ADDR
//!   MAPPED_PORT` with STATIC_PORTS true.
//! - DYNAMIC (boolean): whether mappings are made on the fly. When true,
//!   DYNAMIC_PORTS (boolean) and DIRECTION (boolean: false, mappings are
//!   made by outward packets; true, by inward ones) follow, then the POOL:
//!   with DYNAMIC_PORTS false, one or more addresses, each bound to the
//!   first address that needs one (an inner source with DIRECTION false, an
//!   outer-side destination with DIRECTION true) for the element's
//!   lifetime; with DYNAMIC_PORTS true, one argument `ADDR LOW HIGH`: every
//!   new outward flow (inner source, source port, destination, destination
//!   port) gets ADDR and the next free port of LOW..HIGH as its source.
//!
//! Outward packets get their source address (and port) replaced, inward
//! packets their destination address (and port), by the mapping found, in
//! order: static mappings, bound pool addresses, then a new binding or
//! port mapping when the packet travels in the allocating direction. The
//! TCP, UDP or ICMPv6 checksum is recomputed. Packets with no mapping,
//! packets whose next header (in the fixed header) is not TCP, UDP or
//! ICMPv6, truncated packets, and flows finding no free port are dropped
//! and counted. The IPv6 header is at the network header, or at the start
//! of the packet when that is not set. Mappings never expire, as in Click.
//!
//! Click 2.1 reads the ports of ICMPv6 packets from uninitialized
//! variables and leaves the checksum of ICMPv6 types other than 1 to 4, 128
//! and 129 stale; rclick maps ICMPv6 packets by address alone and fixes
//! every checksum.
//!
//! ## Keywords
//! None (positional arguments only, as in Click).
//!
//! ## Handlers
//! - `drops` (read): packets dropped (rclick extension).
//! - `mappings` (read): the bound pool addresses and port mappings, one
//!   per line (rclick extension).
//!
//! ## Example
//! ```click
//! at :: AddressTranslator(0, 1, 0, 0, ::1.0.0.1);
//! inner -> [0]at[0] -> ProtocolTranslator64 -> ...;
//! ... -> ProtocolTranslator46 -> [1]at[1] -> inner_rt;
//! ```

use std::collections::HashMap;
use std::net::Ipv6Addr;

use rclick_core::conf::{parse_bool, parse_i32, parse_ipv6, parse_u16, split_words};
use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::{PROTO_TCP, PROTO_UDP};
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_ICMPV6};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::fmt_ip6;
use crate::ip::ipcommon::net_off;

type Flow = (Ipv6Addr, u16, Ipv6Addr, u16);

#[derive(Clone, Copy)]
struct Static {
    inner: Ipv6Addr,
    inner_port: Option<u16>,
    mapped: Ipv6Addr,
    mapped_port: Option<u16>,
}

#[derive(Default)]
pub struct AddressTranslator {
    statics: Vec<Static>,
    dynamic: bool,
    dynamic_ports: bool,
    /// Allocation by inward packets.
    inward_alloc: bool,
    /// Pool addresses and the address each is bound to.
    pool: Vec<(Ipv6Addr, Option<Ipv6Addr>)>,
    maddr: Option<Ipv6Addr>,
    port_lo: u16,
    port_hi: u16,
    next_port: u32,
    /// Outward flow to (mapped address, mapped port).
    out_map: HashMap<Flow, (Ipv6Addr, u16)>,
    /// Inward flow (outer src, sport, mapped dst, mapped port) to the inner
    /// (address, port).
    in_map: HashMap<Flow, (Ipv6Addr, u16)>,
    drops: u64,
}

impl AddressTranslator {
    /// The new (address, port) for the inner end of a packet travelling
    /// outward (`out`: the inner source) or inward (the mapped destination).
    fn map(
        &mut self,
        outward: bool,
        addr: Ipv6Addr,
        port: u16,
        peer: Ipv6Addr,
        peer_port: u16,
        ports: bool,
    ) -> Option<(Ipv6Addr, u16)> {
        for s in &self.statics {
            if outward && s.inner == addr && s.inner_port.is_none_or(|p| !ports || p == port) {
                return Some((s.mapped, s.mapped_port.filter(|_| ports).unwrap_or(port)));
            }
            if !outward && s.mapped == addr && s.mapped_port.is_none_or(|p| !ports || p == port) {
                return Some((s.inner, s.inner_port.filter(|_| ports).unwrap_or(port)));
            }
        }
        if !self.dynamic {
            return None;
        }
        let allocating = outward != self.inward_alloc;
        if !self.dynamic_ports || !ports {
            // Address pool: entries are mapped addresses (outward
            // allocation) or inner addresses (inward allocation).
            for &(p, bound) in &self.pool {
                let Some(b) = bound else { continue };
                let (inner, mapped) = if self.inward_alloc { (p, b) } else { (b, p) };
                if outward && inner == addr {
                    return Some((mapped, port));
                }
                if !outward && mapped == addr {
                    return Some((inner, port));
                }
            }
            if !allocating || self.dynamic_ports {
                return None;
            }
            let slot = self.pool.iter_mut().find(|(_, b)| b.is_none())?;
            slot.1 = Some(addr);
            return Some((slot.0, port));
        }
        if outward {
            if let Some(&m) = self.out_map.get(&(addr, port, peer, peer_port)) {
                return Some(m);
            }
        } else if let Some(&m) = self.in_map.get(&(peer, peer_port, addr, port)) {
            return Some(m);
        }
        if !allocating {
            return None;
        }
        let maddr = self.maddr?;
        let span = u32::from(self.port_hi) - u32::from(self.port_lo) + 1;
        if self.next_port >= span {
            return None;
        }
        let mport = (u32::from(self.port_lo) + self.next_port) as u16;
        self.next_port += 1;
        if outward {
            self.out_map
                .insert((addr, port, peer, peer_port), (maddr, mport));
            self.in_map
                .insert((peer, peer_port, maddr, mport), (addr, port));
        } else {
            self.in_map
                .insert((peer, peer_port, addr, port), (maddr, mport));
            self.out_map
                .insert((maddr, mport, peer, peer_port), (addr, port));
        }
        Some((maddr, mport))
    }

    fn translate(&mut self, p: &mut Packet, outward: bool) -> bool {
        let off = net_off(p).unwrap_or(0);
        let d = &p.data()[off..];
        if d.len() < HEADER_LEN || d[0] >> 4 != 6 {
            return false;
        }
        let plen = u16::from_be_bytes([d[4], d[5]]) as usize;
        let nh = d[6];
        if d.len() < HEADER_LEN + plen {
            return false;
        }
        let min = match nh {
            PROTO_TCP => 20,
            PROTO_UDP => 8,
            PROTO_ICMPV6 => 4,
            _ => return false,
        };
        if plen < min {
            return false;
        }
        let l4 = &d[HEADER_LEN..HEADER_LEN + plen];
        let ports = nh != PROTO_ICMPV6;
        let (sport, dport) = if ports {
            (
                u16::from_be_bytes([l4[0], l4[1]]),
                u16::from_be_bytes([l4[2], l4[3]]),
            )
        } else {
            (0, 0)
        };
        let mut a = [0u8; 16];
        a.copy_from_slice(&d[8..24]);
        let src = Ipv6Addr::from(a);
        a.copy_from_slice(&d[24..40]);
        let dst = Ipv6Addr::from(a);
        let found = if outward {
            self.map(true, src, sport, dst, dport, ports)
        } else {
            self.map(false, dst, dport, src, sport, ports)
        };
        let Some((addr, port)) = found else {
            return false;
        };
        let b = &mut p.writable()[off..off + HEADER_LEN + plen];
        let (a_at, p_at) = if outward { (8, 0) } else { (24, 2) };
        b[a_at..a_at + 16].copy_from_slice(&addr.octets());
        if ports {
            b[HEADER_LEN + p_at..HEADER_LEN + p_at + 2].copy_from_slice(&port.to_be_bytes());
        }
        let sum_at = HEADER_LEN
            + match nh {
                PROTO_TCP => 16,
                PROTO_UDP => 6,
                _ => 2,
            };
        b[sum_at..sum_at + 2].fill(0);
        let mut s = [0u8; 16];
        s.copy_from_slice(&b[8..24]);
        let mut t = [0u8; 16];
        t.copy_from_slice(&b[24..40]);
        let mut c =
            checksum::pseudo_checksum(Ipv6Addr::from(s), Ipv6Addr::from(t), nh, &b[HEADER_LEN..]);
        if c == 0 && nh == PROTO_UDP {
            c = 0xffff;
        }
        b[sum_at..sum_at + 2].copy_from_slice(&c.to_be_bytes());
        true
    }

    fn mappings(&self) -> String {
        let mut lines = Vec::new();
        for &(p, b) in &self.pool {
            if let Some(b) = b {
                lines.push(format!("{} <-> {}", fmt_ip6(b), fmt_ip6(p)));
            }
        }
        let mut flows: Vec<_> = self.out_map.iter().collect();
        flows.sort_by_key(|(k, _)| (u128::from(k.0), k.1, u128::from(k.2), k.3));
        for (k, v) in flows {
            lines.push(format!(
                "{} {} > {} {} => {} {}",
                fmt_ip6(k.0),
                k.1,
                fmt_ip6(k.2),
                k.3,
                fmt_ip6(v.0),
                v.1
            ));
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

const HANDLERS: &[Handler<AddressTranslator>] = &[
    Handler::read("mappings", |e, _| e.mappings()),
    Handler::data("drops", |e| &e.drops),
];

rclick_core::element_class!(AddressTranslator);

fn arg<'a>(args: &'a [String], i: usize, what: &str) -> Result<&'a str, String> {
    args.get(i)
        .map(String::as_str)
        .ok_or_else(|| format!("missing argument {i} ({what})"))
}

fn addr(s: &str) -> Result<Ipv6Addr, String> {
    parse_ipv6(s).map_err(|_| format!("expected IPv6 address, not '{s}'"))
}

impl Element for AddressTranslator {
    fn port_count(&self) -> &'static str {
        "2/2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let args: Vec<String> = rclick_core::conf::split_args(conf);
        let mut t = AddressTranslator::default();
        let n = parse_i32(arg(&args, 0, "number of static mappings")?)?;
        if !(0..=65536).contains(&n) {
            return Err("number of static mappings out of range".into());
        }
        let mut i = 1;
        if n > 0 {
            let with_ports = parse_bool(arg(&args, 1, "static port mapping")?)?;
            for k in 0..n as usize {
                let a = arg(&args, 2 + k, "static mapping")?;
                let w = split_words(a);
                let want = if with_ports { 4 } else { 2 };
                if w.len() != want {
                    return Err(format!("static mapping '{a}': expected {want} words").into());
                }
                t.statics.push(if with_ports {
                    Static {
                        inner: addr(&w[0])?,
                        inner_port: Some(parse_u16(&w[1])?),
                        mapped: addr(&w[2])?,
                        mapped_port: Some(parse_u16(&w[3])?),
                    }
                } else {
                    Static {
                        inner: addr(&w[0])?,
                        inner_port: None,
                        mapped: addr(&w[1])?,
                        mapped_port: None,
                    }
                });
            }
            i = n as usize + 2;
        }
        t.dynamic = parse_bool(arg(&args, i, "dynamic mapping")?)?;
        if t.dynamic {
            t.dynamic_ports = parse_bool(arg(&args, i + 1, "dynamic port mapping")?)?;
            t.inward_alloc = parse_bool(arg(&args, i + 2, "allocation direction")?)?;
            let rest = args.get(i + 3..).unwrap_or(&[]);
            if t.dynamic_ports {
                let a = arg(&args, i + 3, "mapped address and ports")?;
                let w = split_words(a);
                if w.len() != 3 || rest.len() != 1 {
                    return Err("expected 'ADDR LOW HIGH' for dynamic port mapping".into());
                }
                t.maddr = Some(addr(&w[0])?);
                t.port_lo = parse_u16(&w[1])?;
                t.port_hi = parse_u16(&w[2])?;
                if t.port_lo == 0 || t.port_hi < t.port_lo {
                    return Err("bad port range".into());
                }
            } else {
                for a in rest {
                    t.pool.push((addr(a.trim())?, None));
                }
            }
        } else if args.len() > i + 1 {
            return Err("too many arguments".into());
        }
        *self = t;
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, ctx: &mut Ctx) {
        for mut p in batch {
            if self.translate(&mut p, port == 0) {
                ctx.emit(port.min(1), p);
            } else {
                self.drops += 1;
            }
        }
    }

    rclick_core::handlers!(HANDLERS);
}
