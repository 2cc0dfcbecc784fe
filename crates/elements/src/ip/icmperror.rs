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
//! The generated packet's IP header has TTL 200, TOS 0, a fresh ID, and
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

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_u32, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::packet::PacketType;
use rclick_core::wire::checksum;
use rclick_core::wire::ipv4::PROTO_ICMP;
use rclick_core::wire::Ipv4Header;
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::{parse_ipv4_arg, parse_ipv4_list_arg};
use super::ipcommon::net_off;

pub const ICMP_UNREACH: u8 = 3;
pub const ICMP_SOURCEQUENCH: u8 = 4;
pub const ICMP_REDIRECT: u8 = 5;
pub const ICMP_TIMXCEED: u8 = 11;
pub const ICMP_PARAMPROB: u8 = 12;
pub const ICMP_UNREACH_NEEDFRAG: u8 = 4;
pub const ICMP_PARAMPROB_ERRATPTR: u8 = 0;

const IPOPT_EOL: u8 = 0;
const IPOPT_NOP: u8 = 1;
const IPOPT_LSRR: u8 = 131;
const IPOPT_SSRR: u8 = 137;

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
    let table = match icmp_type {
        ICMP_UNREACH => UNREACH_CODES,
        ICMP_REDIRECT => REDIRECT_CODES,
        ICMP_TIMXCEED => TIMXCEED_CODES,
        ICMP_PARAMPROB => PARAMPROB_CODES,
        _ => &[],
    };
    table.iter().find(|(n, _)| *n == s).map(|&(_, v)| v)
}

/// Whether `t` is an ICMP error type (RFC 1812's list).
pub fn is_error_type(t: u8) -> bool {
    matches!(
        t,
        ICMP_UNREACH | ICMP_SOURCEQUENCH | ICMP_REDIRECT | ICMP_TIMXCEED | ICMP_PARAMPROB
    )
}

pub struct ICMPError {
    src: Ipv4Addr,
    icmp_type: u8,
    code: u8,
    bad_addrs: Vec<Ipv4Addr>,
    mtu: u32,
    pmtu: u32,
    use_fix_anno: bool,
    next_id: u16,
    /// Reused buffer for building errors (no allocation per packet).
    scratch: Vec<u8>,
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
            next_id: 1,
            scratch: Vec::new(),
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

    /// Builds the error about the IP packet `ip` (network header onward),
    /// or returns `None` when no error may be sent.
    fn build(&mut self, ip: &[u8], anno_pointer: u8, gateway: Ipv4Addr) -> Option<usize> {
        let h = Ipv4Header::new_checked(ip).ok()?;
        let hlen = h.header_len();
        if h.protocol() == PROTO_ICMP {
            // Too short to tell, or an error itself: never answer.
            if hlen + 4 > ip.len() || is_error_type(ip[hlen]) {
                return None;
            }
        }
        if !self.unicast(h.dst()) || !self.valid_source(h.src()) {
            return None;
        }
        if h.frag_offset() != 0 {
            return None;
        }
        let mut route = source_route(&ip[..hlen]);
        if let Some(at) = route {
            if self.icmp_type == ICMP_REDIRECT {
                return None;
            }
            let ptr = anno_pointer as usize;
            let olen = ip[at + 1] as usize;
            if self.icmp_type == ICMP_PARAMPROB
                && self.code == ICMP_PARAMPROB_ERRATPTR
                && at <= ptr
                && ptr < at + olen
            {
                route = None;
            }
        }

        // IP header, with the reversed source route if any.
        let buf = &mut self.scratch;
        buf.clear();
        buf.extend_from_slice(&[0u8; 20]);
        if let Some(at) = route {
            let ptr = ip[at + 2] as usize;
            let olen = ptr - 1;
            buf.push(ip[at]);
            buf.push(olen as u8);
            buf.push(4);
            // Addresses already visited, most recent first.
            let mut a = at + ptr - 5;
            while a >= at + 3 {
                buf.extend_from_slice(&ip[a..a + 4]);
                a -= 4;
            }
            buf.push(IPOPT_EOL);
            while !buf.len().is_multiple_of(4) {
                buf.push(IPOPT_EOL);
            }
        }
        let nhl = buf.len();
        // ICMP header.
        let mut icmp = [0u8; 8];
        icmp[0] = self.icmp_type;
        icmp[1] = self.code;
        if self.icmp_type == ICMP_PARAMPROB && self.code == ICMP_PARAMPROB_ERRATPTR {
            icmp[4] = anno_pointer;
        }
        if self.icmp_type == ICMP_REDIRECT {
            icmp[4..8].copy_from_slice(&gateway.octets());
        }
        if self.icmp_type == ICMP_UNREACH && self.code == ICMP_UNREACH_NEEDFRAG {
            icmp[6..8].copy_from_slice(&(self.pmtu as u16).to_be_bytes());
        }
        buf.extend_from_slice(&icmp);
        // Quote as much as fits in MTU bytes (always the header + 8).
        let room = (self.mtu as usize)
            .max(nhl + 8 + hlen + 8)
            .min(65535)
            .saturating_sub(nhl + 8);
        let xlen = room.min(ip.len());
        buf.extend_from_slice(&ip[..xlen]);
        let c = checksum::checksum(&buf[nhl..]);
        buf[nhl + 2..nhl + 4].copy_from_slice(&c.to_be_bytes());

        let total = buf.len();
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        buf[0] = 0x40 | (nhl / 4) as u8;
        buf[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        buf[4..6].copy_from_slice(&id.to_be_bytes());
        buf[8] = 200;
        buf[9] = PROTO_ICMP;
        buf[12..16].copy_from_slice(&self.src.octets());
        buf[16..20].copy_from_slice(&h.src().octets());
        let c = checksum::checksum(&buf[..nhl]);
        buf[10..12].copy_from_slice(&c.to_be_bytes());
        Some(nhl)
    }
}

/// Offset (within the IP header `hdr`) of a well-formed LSRR or SSRR
/// option, if the header has one.
fn source_route(hdr: &[u8]) -> Option<usize> {
    let mut i = 20;
    while i < hdr.len() {
        let t = hdr[i];
        if t == IPOPT_NOP {
            i += 1;
            continue;
        }
        if t == IPOPT_EOL || i + 1 >= hdr.len() {
            return None;
        }
        let len = hdr[i + 1] as usize;
        if len < 2 || i + len > hdr.len() {
            return None;
        }
        if (t == IPOPT_LSRR || t == IPOPT_SSRR) && len >= 3 {
            let ptr = hdr[i + 2] as usize;
            if ptr >= 4 && ptr.is_multiple_of(4) && ptr <= len + 1 {
                return Some(i);
            }
        }
        i += len;
    }
    None
}

impl SimpleAction for ICMPError {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let off = net_off(&p)?;
        if matches!(
            p.packet_type_anno(),
            PacketType::Broadcast | PacketType::Multicast
        ) {
            return None;
        }
        let nhl = self.build(&p.data()[off..], p.icmp_param_prob_anno(), p.dst_ip_anno())?;
        let mut q = Packet::with_room(rclick_core::packet::DEFAULT_HEADROOM, &self.scratch, 0);
        q.set_network_header(0, nhl);
        let dst = Ipv4Addr::new(
            self.scratch[16],
            self.scratch[17],
            self.scratch[18],
            self.scratch[19],
        );
        q.set_dst_ip_anno(dst);
        if self.use_fix_anno {
            q.set_fix_ip_src_anno(true);
        }
        q.set_timestamp_anno(ctx.now());
        Some(q)
    }
}

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
        if !is_error_type(icmp_type) {
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

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read_write("src"),
            HandlerSpec::read_write("mtu"),
            HandlerSpec::read_write("pmtu"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "src" => Ok(self.src.to_string()),
            "mtu" => Ok(self.mtu.to_string()),
            "pmtu" => Ok(self.pmtu.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "src" => {
                self.src = rclick_core::conf::parse_ipv4(v)?;
            }
            "mtu" => self.mtu = parse_u32(v)?,
            "pmtu" => self.pmtu = parse_u32(v)?,
            _ => return Err(format!("no '{name}' handler")),
        }
        Ok(())
    }

    rclick_core::element_kind!(action);
}
