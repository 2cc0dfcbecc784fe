//! The pattern language of IP6Classifier and IP6Filter, compiled with the
//! IPv4 classifiers' machinery (`ip::ipfilter_compile`): patterns are
//! parsed here into boolean expressions over *atoms* (a masked header word
//! lies in a range), and the rule list compiles into the same decision
//! programs and bit-vector segments as IPClassifier's.
//!
//! # Header data
//! An atom reads a 32-bit word from the IP data or the transport data.
//! For IPv6 the IP data is a 48-byte copy made per packet on the stack
//! (no allocation): the 40-byte fixed header, then two bytes found by
//! walking the extension headers (hop-by-hop, routing, destination
//! options, fragment, AH): at byte 40 the upper-layer protocol, at byte 41
//! flags ([`TRANSPORT`]: the upper-layer header is present, the packet
//! being a first fragment or no fragment; [`FRAGMENT`]: a fragment header
//! was met). The transport data is the upper-layer header, wherever the
//! extension headers put it. A packet whose IPv6 header is cut short has
//! only the bytes present, so the tests past them fail.

use rclick_core::wire::ipv6::{
    HEADER_LEN, PROTO_AH, PROTO_DSTOPTS, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ICMPV6,
    PROTO_ROUTING, PROTO_TCP, PROTO_UDP,
};
use rclick_core::wire::{Ipv6ExtHeader, Ipv6FragHeader};
use rclick_core::{InitCtx, Packet};

use crate::ip::address::{parse_known_port, parse_port_arg};
use crate::ip::ipfilter_compile::{tokenize, Action, Atom, Base, Expr, Field, Rule};

/// Length of the IP data atoms read (see the module docs).
pub const SYN_LEN: usize = 48;
/// Flag: the upper-layer header is present.
pub const TRANSPORT: u8 = 1;
/// Flag: the packet has a fragment header.
pub const FRAGMENT: u8 = 2;

/// Walks the extension headers after a fixed header saying `nh`: the
/// upper-layer protocol, its offset in `payload`, and the flags.
fn walk(mut nh: u8, payload: &[u8]) -> (u8, usize, u8) {
    let mut at = 0;
    let mut flags = 0;
    // At most 64 headers: a chain longer than that is not a packet.
    for _ in 0..64 {
        let rest = &payload[at.min(payload.len())..];
        let len = match nh {
            PROTO_HOPOPTS | PROTO_ROUTING | PROTO_DSTOPTS => match Ipv6ExtHeader::new_checked(rest)
            {
                Ok(h) => {
                    nh = h.next_header();
                    h.header_len()
                }
                Err(_) => return (nh, at, flags),
            },
            PROTO_FRAGMENT => match Ipv6FragHeader::new_checked(rest) {
                Ok(h) => {
                    flags |= FRAGMENT;
                    if h.frag_offset() != 0 {
                        // Later fragments carry no upper-layer header.
                        return (h.next_header(), at, flags);
                    }
                    nh = h.next_header();
                    8
                }
                Err(_) => return (nh, at, flags),
            },
            PROTO_AH => {
                if rest.len() < 8 || rest.len() < (rest[1] as usize + 2) * 4 {
                    return (nh, at, flags);
                }
                nh = rest[0];
                (rest[1] as usize + 2) * 4
            }
            other => return (other, at, flags | TRANSPORT),
        };
        at += len;
    }
    (nh, at, flags)
}

/// The IP data and transport data of `p` for the atoms (see the module
/// docs); `buf` holds the IP data.
#[inline]
pub fn ip6_headers<'a>(p: &'a Packet, buf: &'a mut [u8; SYN_LEN]) -> (&'a [u8], &'a [u8]) {
    let Some(ip) = p.network_header() else {
        return (&[], &[]);
    };
    if ip.len() < HEADER_LEN {
        let n = ip.len();
        buf[..n].copy_from_slice(ip);
        return (&buf[..n], &[]);
    }
    buf[..HEADER_LEN].copy_from_slice(&ip[..HEADER_LEN]);
    let plen = u16::from_be_bytes([ip[4], ip[5]]) as usize;
    let payload = &ip[HEADER_LEN..(HEADER_LEN + plen).min(ip.len())];
    let (proto, at, flags) = walk(ip[6], payload);
    buf[40] = proto;
    buf[41] = flags;
    buf[42..].fill(0);
    let transp = if flags & TRANSPORT != 0 {
        payload.get(at..).unwrap_or(&[])
    } else {
        &[]
    };
    (&buf[..], transp)
}

// ------------------------------------------------------------------ lowering

fn atom(base: Base, offset: u16, mask: u32, lo: u32, hi: u32) -> Expr {
    Expr::Atom(Atom {
        field: Field { base, offset, mask },
        lo,
        hi,
    })
}

fn and(mut v: Vec<Expr>) -> Expr {
    if v.len() == 1 {
        v.pop().unwrap_or(Expr::Const(true))
    } else {
        Expr::And(v)
    }
}

fn or(mut v: Vec<Expr>) -> Expr {
    if v.len() == 1 {
        v.pop().unwrap_or(Expr::Const(false))
    } else {
        Expr::Or(v)
    }
}

fn not(e: Expr) -> Expr {
    match e {
        Expr::Const(b) => Expr::Const(!b),
        Expr::Not(e) => *e,
        e => Expr::Not(Box::new(e)),
    }
}

/// A field: base, byte offset, mask (contiguous), and the largest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct F {
    base: Base,
    offset: u16,
    mask: u32,
}

impl F {
    const fn ip(offset: u16, mask: u32) -> F {
        F {
            base: Base::Ip,
            offset,
            mask,
        }
    }

    const fn tp(offset: u16, mask: u32) -> F {
        F {
            base: Base::Transp,
            offset,
            mask,
        }
    }

    fn shift(&self) -> u32 {
        self.mask.trailing_zeros()
    }

    fn max(&self) -> u32 {
        self.mask >> self.shift()
    }

    /// `field REL v`, with the relation's range written as atoms that all
    /// fail on a packet too short to hold the field.
    fn compare(&self, rel: Rel, v: u32) -> Result<Expr, String> {
        let (max, sh) = (self.max(), self.shift());
        if v > max {
            return Err(format!("value {v} too large (at most {max})"));
        }
        let range = |lo: u32, hi: u32| atom(self.base, self.offset, self.mask, lo << sh, hi << sh);
        Ok(match rel {
            Rel::Eq => range(v, v),
            Rel::Ne => {
                let mut v2 = Vec::new();
                if v > 0 {
                    v2.push(range(0, v - 1));
                }
                if v < max {
                    v2.push(range(v + 1, max));
                }
                if v2.is_empty() {
                    Expr::Const(false)
                } else {
                    or(v2)
                }
            }
            Rel::Lt if v == 0 => Expr::Const(false),
            Rel::Lt => range(0, v - 1),
            Rel::Le => range(0, v),
            Rel::Gt if v == max => Expr::Const(false),
            Rel::Gt => range(v + 1, max),
            Rel::Ge => range(v, max),
        })
    }
}

const TC: F = F::ip(0, 0x0ff0_0000);
const DSCP: F = F::ip(0, 0x0fc0_0000);
const ECN: F = F::ip(0, 0x0030_0000);
const FLOW: F = F::ip(0, 0x000f_ffff);
const PLEN: F = F::ip(4, 0xffff_0000);
const NXT: F = F::ip(4, 0x0000_ff00);
const HLIM: F = F::ip(4, 0x0000_00ff);
const UPPER: F = F::ip(40, 0xff00_0000);
const SPORT: F = F::tp(0, 0xffff_0000);
const DPORT: F = F::tp(0, 0x0000_ffff);
const ICMP_TYPE: F = F::tp(0, 0xff00_0000);
const ICMP_CODE: F = F::tp(0, 0x00ff_0000);
const TCP_WIN: F = F::tp(12, 0x0000_ffff);

fn is_ip6() -> Expr {
    atom(Base::Ip, 0, 0xf000_0000, 0x6000_0000, 0x6000_0000)
}

/// The upper-layer protocol is `p`, its header present.
fn upper_is(p: u8) -> Expr {
    and(vec![
        is_ip6(),
        atom(
            Base::Ip,
            40,
            0xff00_0000 | (u32::from(TRANSPORT) << 16),
            (u32::from(p) << 24) | (u32::from(TRANSPORT) << 16),
            (u32::from(p) << 24) | (u32::from(TRANSPORT) << 16),
        ),
    ])
}

fn flag(f: u8) -> Expr {
    let m = u32::from(f) << 16;
    and(vec![is_ip6(), atom(Base::Ip, 40, m, m, m)])
}

/// `src`/`dst` address `a` under `mask` (contiguous prefix of `len`).
fn address(offset: u16, a: u128, len: u8) -> Expr {
    let mut v = vec![is_ip6()];
    for w in 0..4u16 {
        let shift = 96 - 32 * u32::from(w);
        let m = (crate::ip6::route6::mask6(len.into()) >> shift) as u32;
        if m == 0 {
            continue;
        }
        let val = (a >> shift) as u32 & m;
        v.push(atom(Base::Ip, offset + 4 * w, m, val, val));
    }
    and(v)
}

// ------------------------------------------------------------------ parser

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrcDst {
    Src,
    Dst,
    Or,
    And,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Host,
    Net,
    Port,
    Nxt,
    Proto,
    Flow,
    Tc,
    Dscp,
    Ecn,
    Hlim,
    Plen,
    Type,
    Code,
    Opt,
    Win,
}

/// The qualifiers of one primitive, inherited by a following bare value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Quals {
    sd: Option<SrcDst>,
    proto: Option<u8>,
    ty: Option<Ty>,
}

fn ty_word(w: &str) -> Option<Ty> {
    Some(match w {
        "host" => Ty::Host,
        "net" => Ty::Net,
        "port" => Ty::Port,
        "nxt" | "next" => Ty::Nxt,
        "proto" => Ty::Proto,
        "flow" => Ty::Flow,
        "tc" | "tos" => Ty::Tc,
        "dscp" => Ty::Dscp,
        "ecn" => Ty::Ecn,
        "hlim" | "ttl" => Ty::Hlim,
        "plen" => Ty::Plen,
        "type" => Ty::Type,
        "code" => Ty::Code,
        "opt" | "flags" => Ty::Opt,
        "win" => Ty::Win,
        _ => return None,
    })
}

fn proto_word(w: &str) -> Option<u8> {
    Some(match w {
        "tcp" => PROTO_TCP,
        "udp" => PROTO_UDP,
        "icmp6" | "icmpv6" | "ipv6-icmp" => PROTO_ICMPV6,
        _ => return None,
    })
}

/// Protocol numbers by name, for `nxt` and `proto` values.
fn proto_number(w: &str) -> Option<u32> {
    if let Ok(n) = rclick_core::conf::parse_u32(w) {
        return Some(n);
    }
    Some(match w {
        "hopopt" | "hbh" => 0,
        "tcp" => 6,
        "udp" => 17,
        "routing" | "ipv6-route" => 43,
        "fragment" | "frag" | "ipv6-frag" => 44,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "icmp6" | "icmpv6" | "ipv6-icmp" => 58,
        "none" | "ipv6-nonxt" => 59,
        "dstopts" | "ipv6-opts" => 60,
        "sctp" => 132,
        _ => return None,
    })
}

fn icmp6_type_number(w: &str) -> Option<u32> {
    if let Ok(n) = rclick_core::conf::parse_u32(w) {
        return Some(n);
    }
    Some(match w {
        "unreachable" | "dst-unreach" | "destination-unreachable" => 1,
        "packet-too-big" | "toobig" => 2,
        "time-exceeded" | "timeexceeded" => 3,
        "parameter-problem" | "paramprob" => 4,
        "echo-request" | "echo" => 128,
        "echo-reply" | "echoreply" => 129,
        "router-solicit" | "router-solicitation" => 133,
        "router-advert" | "router-advertisement" => 134,
        "neighbor-solicit" | "neighbour-solicit" | "neighbor-solicitation" => 135,
        "neighbor-advert" | "neighbour-advert" | "neighbor-advertisement" => 136,
        "redirect" => 137,
        _ => return None,
    })
}

fn tcp_opt(w: &str) -> Option<u32> {
    Some(match w {
        "fin" => 0x01,
        "syn" => 0x02,
        "rst" => 0x04,
        "psh" => 0x08,
        "ack" => 0x10,
        "urg" => 0x20,
        _ => return None,
    })
}

fn rel_word(w: &str) -> Option<Rel> {
    Some(match w {
        "==" | "=" => Rel::Eq,
        "!=" => Rel::Ne,
        "<" => Rel::Lt,
        "<=" => Rel::Le,
        ">" => Rel::Gt,
        ">=" => Rel::Ge,
        _ => return None,
    })
}

struct Parser<'a, 'b> {
    toks: &'a [String],
    pos: usize,
    ctx: Option<&'a InitCtx<'b>>,
    prev: Quals,
    depth: usize,
}

type PResult<T> = Result<T, String>;

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn peek_at(&self, k: usize) -> Option<&str> {
        self.toks.get(self.pos + k).map(String::as_str)
    }

    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.depth += 1;
        if self.depth > 200 {
            return Err("expression nested too deeply".into());
        }
        let c = self.or_expr()?;
        let e = if self.peek() == Some("?") {
            self.pos += 1;
            let a = self.expr()?;
            if self.next().as_deref() != Some(":") {
                return Err("missing ':' in '?:' expression".into());
            }
            let b = self.expr()?;
            Expr::If(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth -= 1;
        Ok(e)
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut v = vec![self.and_expr()?];
        while matches!(self.peek(), Some("or" | "||")) {
            self.pos += 1;
            v.push(self.and_expr()?);
        }
        Ok(or(v))
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut v = vec![self.unary()?];
        loop {
            match self.peek() {
                Some("and" | "&&") => {
                    self.pos += 1;
                    v.push(self.unary()?);
                }
                None | Some("or" | "||" | ")" | "?" | ":") => break,
                Some(_) => v.push(self.unary()?),
            }
        }
        Ok(and(v))
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.peek() {
            Some("not" | "!") => {
                self.pos += 1;
                Ok(not(self.unary()?))
            }
            Some("(") => {
                self.pos += 1;
                let e = self.expr()?;
                if self.next().as_deref() != Some(")") {
                    return Err("missing ')'".into());
                }
                Ok(e)
            }
            Some(_) => self.primitive(),
            None => Err("missing expression".into()),
        }
    }

    fn primitive(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let mut q = Quals::default();
        // Qualifiers: src/dst (with `src or dst`, `src and dst`), ip6,
        // a protocol, a type.
        if let Some(w @ ("src" | "dst")) = self.peek().map(str::to_string).as_deref() {
            let first = if w == "src" { SrcDst::Src } else { SrcDst::Dst };
            self.pos += 1;
            q.sd = Some(first);
            if let (Some(op @ ("or" | "and")), Some(other @ ("src" | "dst"))) =
                (self.peek(), self.peek_at(1))
            {
                if other != w {
                    q.sd = Some(if op == "or" { SrcDst::Or } else { SrcDst::And });
                    self.pos += 2;
                }
            }
        }
        let mut ip6_word = false;
        if self.peek() == Some("ip6") {
            self.pos += 1;
            ip6_word = true;
        }
        if let Some(p) = self.peek().and_then(proto_word) {
            self.pos += 1;
            q.proto = Some(p);
        }
        if let Some(t) = self.peek().and_then(ty_word) {
            self.pos += 1;
            q.ty = Some(t);
        }
        let qualified = self.pos > start;
        // A lone `ip6`, `tcp`, ... or `frag`.
        if q.ty.is_none() && q.sd.is_none() {
            match self.peek() {
                Some("frag") if !qualified || ip6_word => {
                    self.pos += 1;
                    return Ok(flag(FRAGMENT));
                }
                Some("unfrag") if !qualified || ip6_word => {
                    self.pos += 1;
                    return Ok(and(vec![is_ip6(), not(flag(FRAGMENT))]));
                }
                Some("true") if !qualified => {
                    self.pos += 1;
                    return Ok(Expr::Const(true));
                }
                Some("false") if !qualified => {
                    self.pos += 1;
                    return Ok(Expr::Const(false));
                }
                _ => {}
            }
            if qualified && self.at_end_of_primitive() {
                self.prev = q;
                return Ok(match q.proto {
                    Some(p) => upper_is(p),
                    None => is_ip6(),
                });
            }
        }
        if !qualified {
            // A bare value repeats the previous primitive's qualifiers.
            let is_address = self.peek().is_some_and(|w| self.addr(w).is_ok());
            if self.prev == Quals::default() {
                // An address or prefix alone means `host` or `net`.
                q.ty = None;
            } else if is_address {
                // As in IPFilter: an address or prefix is a `host` or
                // `net` test whatever the previous primitive, keeping only
                // its src/dst (`tcp or 2001:db8::1`, `dst port 80 or
                // 2001:db8::/32`, `tcp host A or B`).
                q.sd = self.prev.sd;
            } else {
                q = self.prev;
            }
        }
        self.prev = q;
        let rel = match self.peek().and_then(rel_word) {
            Some(r) => {
                self.pos += 1;
                r
            }
            None => Rel::Eq,
        };
        let Some(val) = self.next() else {
            return Err("missing value".into());
        };
        self.lower(q, rel, &val)
    }

    fn at_end_of_primitive(&self) -> bool {
        matches!(
            self.peek(),
            None | Some("and" | "&&" | "or" | "||" | ")" | "?" | ":")
        ) || self.peek().is_some_and(|w| {
            matches!(w, "not" | "!" | "(" | "src" | "dst" | "ip6")
                || proto_word(w).is_some()
                || ty_word(w).is_some()
        })
    }

    fn addr(&self, w: &str) -> PResult<(u128, u8)> {
        let p = match self.ctx {
            Some(c) => crate::ip6::common::parse_ipv6_prefix_arg(w, c)?,
            None => rclick_core::conf::parse_ipv6_addr_or_prefix(w)?,
        };
        let len = p
            .prefix_len()
            .ok_or_else(|| format!("'{w}' is not a contiguous prefix"))?;
        Ok((u128::from(p.network()), len))
    }

    fn lower(&mut self, q: Quals, rel: Rel, val: &str) -> PResult<Expr> {
        let sd = q.sd.unwrap_or(SrcDst::Or);
        let both = |s: Expr, d: Expr| match sd {
            SrcDst::Src => s,
            SrcDst::Dst => d,
            SrcDst::Or => or(vec![s, d]),
            SrcDst::And => and(vec![s, d]),
        };
        let num = |w: &str| -> PResult<u32> {
            rclick_core::conf::parse_u32(w).map_err(|_| format!("expected a number, got '{w}'"))
        };
        let guard = |p: Option<u8>, e: Expr, default: &[u8]| -> Expr {
            match p {
                Some(p) => and(vec![upper_is(p), e]),
                None => and(vec![or(default.iter().map(|&p| upper_is(p)).collect()), e]),
            }
        };
        match q.ty {
            None | Some(Ty::Host) | Some(Ty::Net) => {
                if q.proto.is_some() && q.ty.is_none() {
                    return Err(format!("'{val}': a value needs a type here"));
                }
                if rel != Rel::Eq {
                    return Err("addresses take no relation".into());
                }
                let (a, len) = self.addr(val)?;
                if q.ty == Some(Ty::Host) && len != 128 {
                    return Err(format!("'{val}': 'host' takes an address"));
                }
                let e = both(address(8, a, len), address(24, a, len));
                Ok(match q.proto {
                    Some(p) => and(vec![upper_is(p), e]),
                    None => e,
                })
            }
            Some(Ty::Port) => {
                let proto = q.proto.unwrap_or(PROTO_TCP);
                if q.proto.is_some_and(|p| p != PROTO_TCP && p != PROTO_UDP) {
                    return Err("'port' needs tcp or udp".into());
                }
                let port = match self.ctx {
                    Some(c) => parse_port_arg(val, proto, c)?,
                    None => parse_known_port(val)?,
                };
                let e = both(
                    SPORT.compare(rel, port.into())?,
                    DPORT.compare(rel, port.into())?,
                );
                Ok(guard(q.proto, e, &[PROTO_TCP, PROTO_UDP]))
            }
            Some(t @ (Ty::Nxt | Ty::Proto)) => {
                let v = proto_number(val).ok_or_else(|| format!("unknown protocol '{val}'"))?;
                Ok(if t == Ty::Nxt {
                    and(vec![is_ip6(), NXT.compare(rel, v)?])
                } else {
                    and(vec![is_ip6(), UPPER.compare(rel, v)?])
                })
            }
            Some(Ty::Flow) => Ok(and(vec![is_ip6(), FLOW.compare(rel, num(val)?)?])),
            Some(Ty::Tc) => Ok(and(vec![is_ip6(), TC.compare(rel, num(val)?)?])),
            Some(Ty::Dscp) => Ok(and(vec![is_ip6(), DSCP.compare(rel, num(val)?)?])),
            Some(Ty::Ecn) => Ok(and(vec![is_ip6(), ECN.compare(rel, num(val)?)?])),
            Some(Ty::Hlim) => Ok(and(vec![is_ip6(), HLIM.compare(rel, num(val)?)?])),
            Some(Ty::Plen) => Ok(and(vec![is_ip6(), PLEN.compare(rel, num(val)?)?])),
            Some(t @ (Ty::Type | Ty::Code)) => {
                if q.proto.is_some_and(|p| p != PROTO_ICMPV6) {
                    return Err("'type' and 'code' need icmp6".into());
                }
                let (f, v) = if t == Ty::Type {
                    let v = icmp6_type_number(val)
                        .ok_or_else(|| format!("unknown ICMPv6 type '{val}'"))?;
                    (ICMP_TYPE, v)
                } else {
                    (ICMP_CODE, num(val)?)
                };
                Ok(and(vec![upper_is(PROTO_ICMPV6), f.compare(rel, v)?]))
            }
            Some(Ty::Opt) => {
                if q.proto.is_some_and(|p| p != PROTO_TCP) {
                    return Err("'opt' needs tcp".into());
                }
                let bit = tcp_opt(val).ok_or_else(|| format!("unknown TCP option '{val}'"))?;
                let m = bit << 16;
                Ok(and(vec![
                    upper_is(PROTO_TCP),
                    atom(Base::Transp, 12, m, m, m),
                ]))
            }
            Some(Ty::Win) => {
                if q.proto.is_some_and(|p| p != PROTO_TCP) {
                    return Err("'win' needs tcp".into());
                }
                Ok(and(vec![
                    upper_is(PROTO_TCP),
                    TCP_WIN.compare(rel, num(val)?)?,
                ]))
            }
        }
    }
}

/// Parses one pattern (`-`, `any` and `all` match everything).
pub fn parse_pattern(text: &str, ctx: Option<&InitCtx>) -> Result<Expr, String> {
    let toks = tokenize(text);
    if toks.is_empty() || (toks.len() == 1 && matches!(toks[0].as_str(), "-" | "any" | "all")) {
        return Ok(Expr::Const(true));
    }
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        ctx,
        prev: Quals::default(),
        depth: 0,
    };
    let e = p.expr()?;
    if let Some(w) = p.peek() {
        return Err(format!("garbage after expression at '{w}'"));
    }
    Ok(e)
}

/// IP6Classifier's patterns: pattern `i` sends to output `i`.
pub fn parse_classifier6(
    patterns: &[String],
    ctx: Option<&InitCtx>,
) -> Result<Vec<Rule>, Vec<String>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (i, pat) in patterns.iter().enumerate() {
        match parse_pattern(pat, ctx) {
            Ok(expr) => rules.push(Rule {
                action: Action::Output(i),
                expr,
            }),
            Err(e) => errors.push(format!("pattern {i}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

/// IP6Filter's `ACTION PATTERN` arguments (`allow`, `deny`/`drop`, or an
/// output number) for an element with `noutputs` outputs.
pub fn parse_filter6(
    args: &[String],
    noutputs: usize,
    ctx: Option<&InitCtx>,
) -> Result<Vec<Rule>, Vec<String>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let arg = arg.trim();
        let (first, rest) = arg
            .split_once(|c: char| c.is_ascii_whitespace())
            .unwrap_or((arg, ""));
        let action = match first {
            "allow" if noutputs == 0 => {
                errors.push(format!(
                    "pattern {i}: 'allow' is meaningless, element has zero outputs"
                ));
                continue;
            }
            "allow" => Action::Output(0),
            "deny" | "drop" => Action::Drop,
            w => match rclick_core::conf::parse_u32(w) {
                Ok(n) if (n as usize) < noutputs => Action::Output(n as usize),
                Ok(n) => {
                    errors.push(format!("pattern {i}: slot '{n}' out of range"));
                    continue;
                }
                Err(_) => {
                    errors.push(format!("pattern {i}: unknown slot ID '{w}'"));
                    continue;
                }
            },
        };
        match parse_pattern(rest, ctx) {
            Ok(expr) => rules.push(Rule { action, expr }),
            Err(e) => errors.push(format!("pattern {i}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}
