//! # ICMPError
//!
//! Generates ICMP error packets about the packets it receives.
//!
//! ## Synopsis
//! `ICMPError(SRC, TYPE [, CODE, BADADDRS, *keywords* MTU, PMTU, SET_FIX_ANNO])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output. Processing `a/a`.
//!
//! ## Description
//! Each input packet must be an IP packet with its network header set (it
//! is the packet the error is about). ICMPError drops it and, unless RFC
//! 1812 4.3.2.7 forbids an answer, emits a new ICMP error packet of type
//! TYPE and code CODE from address SRC back to the packet's source.
//!
//! No error is generated for: ICMP error messages (types 3, 4, 5, 11, 12),
//! packets whose IP destination is the limited broadcast address, a
//! multicast address or one of BADADDRS, packets that arrived as link-level
//! broadcast or multicast (the packet-type annotation), packets with an
//! invalid source (0/8, 127/8, multicast, class E, broadcast or BADADDRS),
//! fragments other than the first, and (for redirects) source-routed
//! packets.
//!
//! The error quotes as much of the offending packet, from its IP header
//! on, as fits in an MTU-byte ICMP packet (RFC 1812 4.3.2.3: 576 by
//! default); this always includes the IP header and the first 8 data
//! bytes that RFC 792 requires. If the packet carried a valid loose or
//! strict source route, the error carries the reversed route (RFC 1812
//! 4.3.2.6), except for a parameter problem about the route itself.
//!
//! Type-specific fields: a parameter problem (code 0) carries the pointer
//! from the ICMP parameter-problem annotation; a redirect carries the
//! gateway from the destination IP annotation; a fragmentation-needed
//! unreachable (code 4) carries the next-hop MTU given by PMTU.
//!
//! The generated packet's IP header has TTL 200, TOS 0, an ID from a counter shared by
//! every ICMPError of the process (as in Click; the first is 1), and
//! valid checksums. Its destination IP annotation is its destination, its
//! timestamp is the current router time, and, when SET_FIX_ANNO is true,
//! its fix-IP-source annotation is set so that FixIPSrc rewrites the source
//! to the outgoing interface's address.
//!
//! TYPE is a number or one of `unreachable`, `sourcequench`, `redirect`,
//! `timeexceeded`, `parameterproblem`. CODE is a number or a name that
//! depends on the type: `net`, `host`, `protocol`, `port`, `needfrag`,
//! `srcroutefail`, `netunknown`, `hostunknown`, `isolated`,
//! `netprohibited`, `hostprohibited`, `tosnet`, `toshost`,
//! `filterprohibited`, `hostprecedence`, `precedencecutoff`
//! (unreachable); `net`, `host`, `tosnet`, `toshost` (redirect);
//! `transit`, `reassembly` (timeexceeded); `erroratptr`, `missingopt`,
//! `length` (parameterproblem). CODE defaults to 0.
//!
//! ## Keywords
//! - **SRC** (IP address): source address of generated errors.
//! - **TYPE**, **CODE**: as above.
//! - **BADADDRS** (space-separated IP addresses): extra broadcast addresses
//!   never answered, e.g. the interfaces' directed broadcasts.
//! - **MTU** (unsigned): maximum size of a generated packet. Default 576.
//! - **PMTU** (unsigned): next-hop MTU reported in needfrag errors.
//!   Default 0.
//! - **SET_FIX_ANNO** (boolean): set the fix-IP-source annotation.
//!   Default true.
//!
//! ## Handlers
//! - `src` (read/write): the source address.
//! - `mtu`, `pmtu` (read/write): the MTU and PMTU values.
//!
//! ## Example
//! ```click
//! dt :: DecIPTTL;
//! dt[1] -> ICMPError(18.26.4.24, timeexceeded) -> rt;
//! frag :: IPFragmenter(1500);
//! frag[1] -> ICMPError(18.26.4.24, unreachable, needfrag, PMTU 1500) -> rt;
//! ```

use std::cell::Cell;
use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_u32, Args};
use rclick_core::packet::{PacketType, DEFAULT_HEADROOM};
use rclick_core::wire::icmp::{
    is_error, HEADER_LEN as ICMP_HEADER_LEN, ICMP_PARAMPROB, ICMP_PARAMPROB_ERRATPTR,
    ICMP_REDIRECT, ICMP_TIMXCEED, ICMP_UNREACH, ICMP_UNREACH_NEEDFRAG,
};
use rclick_core::wire::ipv4::{
    IPOPT_EOL, IPOPT_LSRR, IPOPT_SSRR, MAX_HEADER_LEN, MIN_HEADER_LEN, PROTO_ICMP,
};
use rclick_core::wire::{IcmpHeader, IcmpRepr, Ipv4Header, Ipv4Repr, RawOption};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::address::{parse_ipv4_arg, parse_ipv4_list_arg};
use super::ipcommon::ip_hdr;

/// Click's ICMP type names (ipnameinfo.cc).
const ICMP_TYPES: &[(&str, u8)] = &[
    ("echo", 8),
    ("echo-reply", 0),
    ("inforeq", 15),
    ("inforeq-reply", 16),
    ("maskreq", 17),
    ("maskreq-reply", 18),
    ("parameterproblem", 12),
    ("redirect", 5),
    ("routeradvert", 9),
    ("routersolicit", 10),
    ("sourcequench", 4),
    ("timeexceeded", 11),
    ("timestamp", 13),
    ("timestamp-reply", 14),
    ("unreachable", 3),
];

const UNREACH_CODES: &[(&str, u8)] = &[
    ("filterprohibited", 13),
    ("host", 1),
    ("hostprecedence", 14),
    ("hostprohibited", 10),
    ("hostunknown", 7),
    ("isolated", 8),
    ("needfrag", 4),
    ("net", 0),
    ("netprohibited", 9),
    ("netunknown", 6),
    ("port", 3),
    ("precedencecutoff", 15),
    ("protocol", 2),
    ("srcroutefail", 5),
    ("toshost", 12),
    ("tosnet", 11),
];

const REDIRECT_CODES: &[(&str, u8)] = &[("host", 1), ("net", 0), ("toshost", 3), ("tosnet", 2)];
const TIMXCEED_CODES: &[(&str, u8)] = &[("reassembly", 1), ("transit", 0)];
const PARAMPROB_CODES: &[(&str, u8)] = &[("erroratptr", 0), ("length", 2), ("missingopt", 1)];

/// Parses an ICMP type: a number 0-255 or one of Click's type names.
pub fn parse_icmp_type(s: &str) -> Result<u8, String> {
    if let Ok(n) = parse_u32(s) {
        return u8::try_from(n).map_err(|_| "ICMP type must be between 0 and 255".to_string());
    }
    ICMP_TYPES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| "expected ICMP type".to_string())
}

/// Parses an ICMP code for `icmp_type`: a number 0-255 or a code name.
pub fn parse_icmp_code(icmp_type: u8, s: &str) -> Option<u8> {
    if let Ok(n) = parse_u32(s) {
        return u8::try_from(n).ok();
    }
    code_table(icmp_type)
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
}

fn code_table(icmp_type: u8) -> &'static [(&'static str, u8)] {
    match icmp_type {
        ICMP_UNREACH => UNREACH_CODES,
        ICMP_REDIRECT => REDIRECT_CODES,
        ICMP_TIMXCEED => TIMXCEED_CODES,
        ICMP_PARAMPROB => PARAMPROB_CODES,
        _ => &[],
    }
}

/// Click's name for ICMP type `t`, if it has one.
pub fn icmp_type_name(t: u8) -> Option<&'static str> {
    ICMP_TYPES.iter().find(|&&(_, v)| v == t).map(|&(n, _)| n)
}

/// Click's name for code `c` of ICMP type `t`, if it has one.
pub fn icmp_code_name(t: u8, c: u8) -> Option<&'static str> {
    code_table(t)
        .iter()
        .find(|&&(_, v)| v == c)
        .map(|&(n, _)| n)
}

thread_local! {
    /// The IP ID of the next generated error. As in Click, one counter
    /// serves every ICMPError element (Click's is a static class member),
    /// so two ICMPErrors never stamp the same ID in a row, and it survives
    /// a hot swap; the first error gets ID 1. A router runs on one thread,
    /// so a per-thread counter is Click's per-process one, and routers
    /// built side by side in one test process do not disturb each other.
    static NEXT_ID: Cell<u16> = const { Cell::new(1) };
}

fn next_icmp_error_id() -> u16 {
    NEXT_ID.with(|c| {
        let id = c.get();
        c.set(id.wrapping_add(1));
        id
    })
}

pub struct ICMPError {
    src: Ipv4Addr,
    icmp_type: u8,
    code: u8,
    bad_addrs: Vec<Ipv4Addr>,
    mtu: u32,
    pmtu: u32,
    use_fix_anno: bool,
}

impl Default for ICMPError {
    fn default() -> Self {
        ICMPError {
            src: Ipv4Addr::UNSPECIFIED,
            icmp_type: ICMP_UNREACH,
            code: 0,
            bad_addrs: Vec::new(),
            mtu: 576,
            pmtu: 0,
            use_fix_anno: true,
        }
    }
}

impl ICMPError {
    fn unicast(&self, a: Ipv4Addr) -> bool {
        let h = u32::from(a);
        h != 0xffff_ffff && (h & 0xf000_0000) != 0xe000_0000 && !self.bad_addrs.contains(&a)
    }

    fn valid_source(&self, a: Ipv4Addr) -> bool {
        let net = a.octets()[0];
        self.unicast(a) && net != 0 && net != 127 && (net & 0xf0) != 0xf0
    }

    fn is_pointer_problem(&self) -> bool {
        self.icmp_type == ICMP_PARAMPROB && self.code == ICMP_PARAMPROB_ERRATPTR
    }

    /// Whether RFC 1812 4.3.2.7 lets us answer the datagram `h`.
    fn may_answer(&self, h: &Ipv4Header<&[u8]>) -> bool {
        if h.protocol() == PROTO_ICMP {
            // Too short to tell, or an error itself: never answer.
            let icmp = &h.clone().into_inner()[h.header_len()..];
            if icmp.len() < 4 || is_error(IcmpHeader::new_unchecked(icmp).icmp_type()) {
                return false;
            }
        }
        self.unicast(h.dst()) && self.valid_source(h.src()) && h.frag_offset() == 0
    }

    /// The message about the datagram quoted by `quoted` (its header
    /// first), given the packet's parameter-problem pointer and gateway
    /// annotations.
    fn message<'a>(&self, quoted: &'a [u8], pointer: u8, gateway: Ipv4Addr) -> IcmpRepr<'a> {
        let code = self.code;
        match self.icmp_type {
            ICMP_UNREACH => IcmpRepr::DstUnreachable {
                code,
                next_hop_mtu: if code == ICMP_UNREACH_NEEDFRAG {
                    self.pmtu as u16
                } else {
                    0
                },
                quoted,
            },
            ICMP_TIMXCEED => IcmpRepr::TimeExceeded { code, quoted },
            ICMP_PARAMPROB => IcmpRepr::ParamProblem {
                code,
                pointer: if self.is_pointer_problem() {
                    pointer
                } else {
                    0
                },
                quoted,
            },
            ICMP_REDIRECT => IcmpRepr::Redirect {
                code,
                gateway,
                quoted,
            },
            icmp_type => IcmpRepr::Other {
                icmp_type,
                code,
                rest: [0; 4],
                data: quoted,
            },
        }
    }
}

/// A well-formed loose or strict source route option of `h`, if it has
/// one (offsets relative to the options area).
fn source_route<'a>(h: &'a Ipv4Header<&[u8]>) -> Option<RawOption<'a>> {
    for o in h.options_iter() {
        let o = o.ok()?;
        if o.kind == IPOPT_EOL {
            return None;
        }
        if matches!(o.kind, IPOPT_LSRR | IPOPT_SSRR) {
            if let Some(&ptr) = o.data.first() {
                let ptr = ptr as usize;
                if ptr >= 4 && ptr.is_multiple_of(4) && ptr <= o.data.len() + 3 {
                    return Some(o);
                }
            }
        }
    }
    None
}

/// Writes into `out` the route the answer takes back (RFC 1812 4.3.2.6):
/// the hops `route` has visited, most recent first, with the pointer at
/// the first. Returns the option's length.
fn reversed_route(route: &RawOption, out: &mut [u8]) -> usize {
    let ptr = route.data[0] as usize;
    let len = ptr - 1;
    out[0] = route.kind;
    out[1] = len as u8;
    out[2] = 4;
    let visited = route.data[1..ptr - 3].chunks_exact(4).rev();
    for (to, hop) in out[3..len].chunks_exact_mut(4).zip(visited) {
        to.copy_from_slice(hop);
    }
    len
}

impl SimpleAction for ICMPError {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let h = ip_hdr(&p)?;
        if matches!(
            p.packet_type_anno(),
            PacketType::Broadcast | PacketType::Multicast
        ) || !self.may_answer(&h)
        {
            return None;
        }
        let mut route = source_route(&h);
        if let Some(o) = &route {
            if self.icmp_type == ICMP_REDIRECT {
                return None;
            }
            // A problem with the route itself is not answered along it.
            let at = MIN_HEADER_LEN + o.offset;
            let ptr = p.icmp_param_prob_anno() as usize;
            if self.is_pointer_problem() && (at..at + o.data.len() + 2).contains(&ptr) {
                route = None;
            }
        }
        let mut opts = [0u8; MAX_HEADER_LEN - MIN_HEADER_LEN];
        let olen = route.map_or(0, |o| reversed_route(&o, &mut opts));
        let mut iph = Ipv4Repr {
            src: self.src,
            dst: h.src(),
            protocol: PROTO_ICMP,
            ttl: 200,
            ident: next_icmp_error_id(),
            options: &opts[..olen],
            ..Ipv4Repr::default()
        };
        // Quote as much as fits in MTU bytes: always the header and the 8
        // bytes RFC 792 asks for.
        let nhl = iph.header_len();
        let ip = h.clone().into_inner();
        let room = (self.mtu as usize)
            .max(nhl + ICMP_HEADER_LEN + h.header_len() + 8)
            .min(65535)
            .saturating_sub(nhl + ICMP_HEADER_LEN);
        let icmp = self.message(
            &ip[..room.min(ip.len())],
            p.icmp_param_prob_anno(),
            p.dst_ip_anno(),
        );
        iph.payload_len = icmp.buffer_len();

        let total = iph.buffer_len();
        let mut q = Packet::with_room(DEFAULT_HEADROOM, &[], total);
        let (ib, cb) = q.put(total)?.split_at_mut(nhl);
        iph.emit(&mut Ipv4Header::new_unchecked(ib));
        icmp.emit(&mut IcmpHeader::new_unchecked(cb));
        q.set_network_header(0, nhl);
        q.set_dst_ip_anno(iph.dst);
        if self.use_fix_anno {
            q.set_fix_ip_src_anno(true);
        }
        q.set_timestamp_anno(ctx.now());
        Some(q)
    }
}

const HANDLERS: &[Handler<ICMPError>] = &[
    Handler::data_rw("src", |e| &e.src, |e| &mut e.src),
    Handler::data_rw("mtu", |e| &e.mtu, |e| &mut e.mtu),
    Handler::data_rw("pmtu", |e| &e.pmtu, |e| &mut e.pmtu),
];

rclick_core::element_class!(ICMPError);

impl Element for ICMPError {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let src: Ipv4Addr = args.read_mp_with("SRC", |s| parse_ipv4_arg(s, ictx));
        let icmp_type: u8 = args.read_mp_with("TYPE", parse_icmp_type);
        let code_str: String = args
            .read_p_with("CODE", |s| Ok(s.to_string()))
            .unwrap_or_else(|| "0".into());
        let bad_addrs = args
            .read_p_with("BADADDRS", |s| parse_ipv4_list_arg(s, ictx))
            .unwrap_or_default();
        let mtu: u32 = args.read_or("MTU", 576);
        let pmtu: u32 = args.read_or("PMTU", 0);
        let fix = args.read_or_with("SET_FIX_ANNO", parse_bool, true);
        args.complete()?;
        if !is_error(icmp_type) {
            return Err(format!("ICMP type {icmp_type} is not an error type").into());
        }
        let Some(code) = parse_icmp_code(icmp_type, &code_str) else {
            return Err("argument 2 takes ICMP code (integer between 0 and 255)".into());
        };
        self.src = src;
        self.icmp_type = icmp_type;
        self.code = code;
        self.bad_addrs = bad_addrs;
        self.mtu = mtu;
        self.pmtu = pmtu;
        self.use_fix_anno = fix;
        Ok(())
    }

    rclick_core::handlers!(HANDLERS);
    rclick_core::element_kind!(action);
}
