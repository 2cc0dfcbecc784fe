//! Shared support for FromIPSummaryDump and ToIPSummaryDump: the field
//! table, parsing field values into packets, and formatting packets as
//! IP summary dump fields, in Click's text formats.

use std::net::Ipv4Addr;

use md5::Digest as _;
use rclick_core::packet::anno;
use rclick_core::wire::checksum;
use rclick_core::wire::icmp::{self, *};
use rclick_core::wire::ipv4::{
    self, IPOPT_EOL, IPOPT_LSRR, IPOPT_NOP, IPOPT_RR, IPOPT_SSRR, IPOPT_TS, IP_DF, IP_MF,
    IP_OFFMASK, PROTO_ICMP, PROTO_TCP, PROTO_UDP,
};
use rclick_core::wire::tcp::{self, TCPOPT_SACK};
use rclick_core::wire::udp;
use rclick_core::wire::udp::UdpRepr;
use rclick_core::wire::{
    IcmpHeader, Ipv4Header, Ipv4Repr, OptionsIter, TcpHeader, TcpOption, TcpRepr, UdpHeader,
};
use rclick_core::{Packet, Timestamp};

/// Version written in the `!IPSummaryDump` banner.
pub const MAJOR_VERSION: u32 = 1;
pub const MINOR_VERSION: u32 = 3;

/// Protocols with ports that wire has no header for.
const PROTO_DCCP: u8 = 33;
const PROTO_UDPLITE: u8 = 136;

/// One field of an IP summary dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    None,
    Timestamp,
    TsSec,
    TsUsec,
    TsUsec1,
    FirstTimestamp,
    IpSrc,
    IpDst,
    IpTos,
    IpDscp,
    IpEcn,
    IpTtl,
    IpFrag,
    IpFragoff,
    IpId,
    IpSum,
    IpProto,
    IpHl,
    IpLen,
    IpCaptureLen,
    IpOpt,
    Sport,
    Dport,
    TcpSeq,
    TcpAck,
    TcpFlags,
    TcpWindow,
    TcpUrp,
    TcpOff,
    TcpOpt,
    TcpNtopt,
    TcpSack,
    UdpLen,
    IcmpType,
    IcmpCode,
    IcmpTypeName,
    IcmpCodeName,
    IcmpFlowid,
    IcmpSeq,
    IcmpNextmtu,
    PayloadLen,
    Payload,
    PayloadMd5,
    PayloadMd5Hex,
    Count,
    Link,
    Paint,
    Direction,
    Aggregate,
}

/// Canonical field names, as written on `!data` lines.
const FIELDS: &[(&str, Field)] = &[
    ("none", Field::None),
    ("timestamp", Field::Timestamp),
    ("ts_sec", Field::TsSec),
    ("ts_usec", Field::TsUsec),
    ("ts_usec1", Field::TsUsec1),
    ("first_timestamp", Field::FirstTimestamp),
    ("ip_src", Field::IpSrc),
    ("ip_dst", Field::IpDst),
    ("ip_tos", Field::IpTos),
    ("ip_dscp", Field::IpDscp),
    ("ip_ecn", Field::IpEcn),
    ("ip_ttl", Field::IpTtl),
    ("ip_frag", Field::IpFrag),
    ("ip_fragoff", Field::IpFragoff),
    ("ip_id", Field::IpId),
    ("ip_sum", Field::IpSum),
    ("ip_proto", Field::IpProto),
    ("ip_hl", Field::IpHl),
    ("ip_len", Field::IpLen),
    ("ip_capture_len", Field::IpCaptureLen),
    ("ip_opt", Field::IpOpt),
    ("sport", Field::Sport),
    ("dport", Field::Dport),
    ("tcp_seq", Field::TcpSeq),
    ("tcp_ack", Field::TcpAck),
    ("tcp_flags", Field::TcpFlags),
    ("tcp_window", Field::TcpWindow),
    ("tcp_urp", Field::TcpUrp),
    ("tcp_off", Field::TcpOff),
    ("tcp_opt", Field::TcpOpt),
    ("tcp_ntopt", Field::TcpNtopt),
    ("tcp_sack", Field::TcpSack),
    ("udp_len", Field::UdpLen),
    ("icmp_type", Field::IcmpType),
    ("icmp_code", Field::IcmpCode),
    ("icmp_type_name", Field::IcmpTypeName),
    ("icmp_code_name", Field::IcmpCodeName),
    ("icmp_flowid", Field::IcmpFlowid),
    ("icmp_seq", Field::IcmpSeq),
    ("icmp_nextmtu", Field::IcmpNextmtu),
    ("payload_len", Field::PayloadLen),
    ("payload", Field::Payload),
    ("payload_md5", Field::PayloadMd5),
    ("payload_md5_hex", Field::PayloadMd5Hex),
    ("count", Field::Count),
    ("link", Field::Link),
    ("paint", Field::Paint),
    ("direction", Field::Direction),
    ("aggregate", Field::Aggregate),
];

/// Click's synonyms, plus `seq`, `ack` and `flags` (rclick extensions).
const SYNONYMS: &[(&str, &str)] = &[
    ("ts", "timestamp"),
    // Click 2.1 reads and writes `ntimestamp` as `timestamp`.
    ("ntimestamp", "timestamp"),
    ("utimestamp", "timestamp"),
    ("sec", "ts_sec"),
    ("usec", "ts_usec"),
    ("usec1", "ts_usec1"),
    ("first_ts", "first_timestamp"),
    ("first_utimestamp", "first_timestamp"),
    ("length", "ip_len"),
    ("ip_p", "ip_proto"),
    ("tcp_seqno", "tcp_seq"),
    ("tcp_ackno", "tcp_ack"),
    ("tcp_win", "tcp_window"),
    ("payload_length", "payload_len"),
    ("pkt_count", "count"),
    ("packet_count", "count"),
    ("agg", "aggregate"),
    ("seq", "tcp_seq"),
    ("ack", "tcp_ack"),
    ("flags", "tcp_flags"),
];

impl Field {
    /// The canonical name.
    pub fn name(self) -> &'static str {
        FIELDS
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("none", |(n, _)| n)
    }

    /// Whether FromIPSummaryDump can read this field.
    pub fn readable(self) -> bool {
        !matches!(
            self,
            Field::IpCaptureLen
                | Field::TcpNtopt
                | Field::FirstTimestamp
                | Field::PayloadMd5
                | Field::PayloadMd5Hex
        )
    }
}

/// Finds a field by name as Click does: exact names and synonyms; then
/// the name with its first space changed to `_`; then `ip_NAME` for a
/// name without `_`. `tcp seq`, `src` and `ip ttl` all work.
pub fn find_field(name: &str) -> Option<Field> {
    if let Some((_, f)) = FIELDS.iter().find(|(n, _)| *n == name) {
        return Some(*f);
    }
    if let Some((_, syn)) = SYNONYMS.iter().find(|(n, _)| *n == name) {
        return find_field(syn);
    }
    if let Some(i) = name.find(' ') {
        return find_field(&format!("{}_{}", &name[..i], &name[i + 1..]));
    }
    if !name.contains('_') && !name.is_empty() {
        let ip = format!("ip_{name}");
        if let Some((_, f)) = FIELDS.iter().find(|(n, _)| *n == ip) {
            return Some(*f);
        }
    }
    None
}

/// Parses a field list (`src dst "tcp seq"`): space-separated, quoted words
/// unquoted. Returns the fields or the unknown names.
pub fn parse_field_list(text: &str) -> Result<Vec<Field>, Vec<String>> {
    let mut fields = Vec::new();
    let mut bad = Vec::new();
    for w in rclick_core::conf::split_words(text) {
        let w = rclick_core::conf::unquote_string(&w);
        match find_field(&w) {
            Some(f) => fields.push(f),
            None => bad.push(w),
        }
    }
    if bad.is_empty() {
        Ok(fields)
    } else {
        Err(bad)
    }
}

// ---------------------------------------------------------------------
// Quoting

/// Click's `cp_quote`: a double-quoted C string; `\`, `"` and `$` are
/// escaped, tab/CR/LF as `\t \r \n`, other non-printables as octal.
pub fn cp_quote(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() + 2);
    s.push('"');
    for &b in data {
        match b {
            b'\\' | b'"' | b'$' => {
                s.push('\\');
                s.push(b as char);
            }
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            32..=126 => s.push(b as char),
            _ => {
                s.push('\\');
                s.push(char::from(b'0' + (b >> 6)));
                s.push(char::from(b'0' + ((b >> 3) & 7)));
                s.push(char::from(b'0' + (b & 7)));
            }
        }
    }
    s.push('"');
    s
}

/// Splits a data line into fields: white space separates, double and
/// single quotes (with backslash escapes in double quotes) group.
pub fn split_line(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        let mut quote = 0u8;
        while i < b.len() {
            let c = b[i];
            if quote != 0 {
                if c == b'\\' && quote == b'"' {
                    i += 2;
                    continue;
                }
                if c == quote {
                    quote = 0;
                }
            } else if c == b'"' || c == b'\'' {
                quote = c;
            } else if c.is_ascii_whitespace() {
                break;
            }
            i += 1;
        }
        let end = i.min(b.len());
        out.push(&line[start..end]);
    }
    out
}

// ---------------------------------------------------------------------
// Parsing values

/// Values of one dump line, ready to become a packet.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub ts: Option<Timestamp>,
    pub ts_sec: Option<u32>,
    pub ts_usec: Option<u32>,
    pub ts_usec1: Option<u64>,
    pub src: Option<Ipv4Addr>,
    pub dst: Option<Ipv4Addr>,
    pub tos: Option<u8>,
    pub dscp: Option<u8>,
    pub ecn: Option<u8>,
    pub ttl: Option<u8>,
    pub frag: Option<u16>,
    pub fragoff: Option<u16>,
    pub id: Option<u16>,
    pub sum: Option<u16>,
    pub proto: Option<u8>,
    pub hl: Option<u32>,
    pub len: Option<u32>,
    pub ip_opt: Option<Vec<u8>>,
    pub sport: Option<u16>,
    pub dport: Option<u16>,
    pub seq: Option<u32>,
    pub ack: Option<u32>,
    pub flags: Option<u16>,
    pub window: Option<u16>,
    pub urp: Option<u16>,
    pub tcp_opt: Option<Vec<u8>>,
    /// TCP header length in bytes (`tcp_off`).
    pub tcp_off: Option<u32>,
    pub udp_len: Option<u16>,
    pub icmp_type: Option<u8>,
    pub icmp_code: Option<String>,
    pub icmp_flowid: Option<u16>,
    pub icmp_seq: Option<u16>,
    pub icmp_nextmtu: Option<u16>,
    pub payload_len: Option<u32>,
    pub payload: Option<Vec<u8>>,
    pub count: Option<u32>,
    pub link: Option<u8>,
    pub aggregate: Option<u32>,
}

/// Parses an unsigned integer in C syntax (decimal, `0x` hex, leading-0
/// octal), at most `max`.
fn parse_uint(s: &str, max: u64) -> Result<u64, String> {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(format!("expected integer, got '{s}'"));
    }
    match u64::from_str_radix(digits, radix) {
        Ok(v) if v <= max => Ok(v),
        _ => Err(format!("'{s}' out of range (max {max})")),
    }
}

/// Leading unsigned decimal digits of `s`: the value and the rest.
fn leading_uint(s: &str) -> Option<(u64, &str)> {
    let n = s.bytes().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    s[..n].parse::<u64>().ok().map(|v| (v, &s[n..]))
}

/// `SEC[.FRAC]` with up to nine fraction digits.
pub fn parse_timestamp_text(s: &str) -> Result<Timestamp, String> {
    let bad = || format!("bad timestamp '{s}'");
    let (sec, frac) = match s.split_once('.') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    // Click reads ".1" as 0.1 seconds.
    if (sec.is_empty() && frac.is_empty()) || !sec.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let sec: i64 = if sec.is_empty() {
        0
    } else {
        sec.parse().map_err(|_| bad())?
    };
    if sec > i64::from(u32::MAX) {
        return Err(bad());
    }
    let mut nsec: i64 = 0;
    for (i, b) in frac.bytes().enumerate() {
        if i < 9 {
            nsec = nsec * 10 + i64::from(b - b'0');
        }
    }
    for _ in frac.len()..9 {
        nsec *= 10;
    }
    Ok(Timestamp::from_sec_nsec(sec, nsec))
}

/// Click's ICMP type names.
const ICMP_TYPES: &[(&str, u8)] = &[
    ("echo-reply", ICMP_ECHOREPLY),
    ("unreachable", ICMP_UNREACH),
    ("sourcequench", ICMP_SOURCEQUENCH),
    ("redirect", ICMP_REDIRECT),
    ("echo", ICMP_ECHO),
    ("routeradvert", ICMP_ROUTERADVERT),
    ("routersolicit", ICMP_ROUTERSOLICIT),
    ("timeexceeded", ICMP_TIMXCEED),
    ("parameterproblem", ICMP_PARAMPROB),
    ("timestamp", ICMP_TSTAMP),
    ("timestamp-reply", ICMP_TSTAMPREPLY),
    ("inforeq", ICMP_IREQ),
    ("inforeq-reply", ICMP_IREQREPLY),
    ("maskreq", ICMP_MASKREQ),
    ("maskreq-reply", ICMP_MASKREPLY),
];

/// Click's ICMP code names, by type.
fn icmp_codes(icmp_type: u8) -> &'static [(&'static str, u8)] {
    match icmp_type {
        ICMP_UNREACH => &[
            ("net", ICMP_UNREACH_NET),
            ("host", ICMP_UNREACH_HOST),
            ("protocol", ICMP_UNREACH_PROTOCOL),
            ("port", ICMP_UNREACH_PORT),
            ("needfrag", ICMP_UNREACH_NEEDFRAG),
            ("srcroutefail", ICMP_UNREACH_SRCFAIL),
            ("netunknown", ICMP_UNREACH_NET_UNKNOWN),
            ("hostunknown", ICMP_UNREACH_HOST_UNKNOWN),
            ("isolated", ICMP_UNREACH_ISOLATED),
            ("netprohibited", ICMP_UNREACH_NET_PROHIB),
            ("hostprohibited", ICMP_UNREACH_HOST_PROHIB),
            ("tosnet", ICMP_UNREACH_TOSNET),
            ("toshost", ICMP_UNREACH_TOSHOST),
            ("filterprohibited", ICMP_UNREACH_FILTER_PROHIB),
            ("hostprecedence", ICMP_UNREACH_HOST_PRECEDENCE),
            ("precedencecutoff", ICMP_UNREACH_PRECEDENCE_CUTOFF),
        ],
        ICMP_REDIRECT => &[
            ("net", ICMP_REDIRECT_NET),
            ("host", ICMP_REDIRECT_HOST),
            ("tosnet", ICMP_REDIRECT_TOSNET),
            ("toshost", ICMP_REDIRECT_TOSHOST),
        ],
        ICMP_TIMXCEED => &[
            ("transit", ICMP_TIMXCEED_INTRANS),
            ("reassembly", ICMP_TIMXCEED_REASS),
        ],
        ICMP_PARAMPROB => &[
            ("erroratptr", ICMP_PARAMPROB_ERRATPTR),
            ("missingopt", ICMP_PARAMPROB_OPTABSENT),
            ("length", ICMP_PARAMPROB_LENGTH),
        ],
        _ => &[],
    }
}

fn icmp_type_name(t: u8) -> Option<&'static str> {
    ICMP_TYPES.iter().find(|(_, v)| *v == t).map(|(n, _)| *n)
}

fn icmp_code_name(t: u8, c: u8) -> Option<&'static str> {
    icmp_codes(t).iter().find(|(_, v)| *v == c).map(|(n, _)| *n)
}

/// TCP flags: a number, `.` for none, or letters `FSRPAUECN` (`W`/`Y` for
/// CWR and `X` for ECE, as in old dumps).
pub fn parse_tcp_flags(s: &str) -> Result<u16, String> {
    if s.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
        return parse_uint(s, 0x1ff).map(|v| v as u16);
    }
    if s == "." {
        return Ok(0);
    }
    let mut v = 0u16;
    for c in s.chars() {
        let bit = match c {
            'F' => 0,
            'S' => 1,
            'R' => 2,
            'P' => 3,
            'A' => 4,
            'U' => 5,
            'E' | 'X' => 6,
            'C' | 'W' | 'Y' => 7,
            'N' => 8,
            _ => return Err(format!("bad TCP flags '{s}'")),
        };
        v |= 1 << bit;
    }
    Ok(v)
}

pub fn unparse_tcp_flags(v: u16) -> String {
    if v == 0 {
        return ".".into();
    }
    "FSRPAUECN"
        .chars()
        .enumerate()
        .filter(|(i, _)| v & (1 << i) != 0)
        .map(|(_, c)| c)
        .collect()
}

/// `ip_frag`/`ip_fragoff` text: `.`, `!`, `F`, `f`, or an offset with
/// `+` (MF) and `!` (DF) suffixes. Returns the IP fragment word.
fn parse_frag(s: &str, minor_version: u32) -> Result<u16, String> {
    match s {
        "." => return Ok(0),
        "!" => return Ok(IP_DF),
        "F" => return Ok(IP_MF),
        "f" => return Ok(100),
        _ => {}
    }
    let bad = || format!("bad fragment '{s}'");
    let (mut off, rest) = leading_uint(s).ok_or_else(bad)?;
    if minor_version > 0 {
        off >>= 3;
    }
    if off > u64::from(IP_OFFMASK) {
        return Err(bad());
    }
    let mut v = off as u16;
    for c in rest.chars() {
        match c {
            '!' => v |= IP_DF,
            '+' => v |= IP_MF,
            _ => return Err(bad()),
        }
    }
    Ok(v)
}

/// Parses `s` as `field` into `rec`. `-` (absent) leaves the record alone.
pub fn parse_field(
    field: Field,
    s: &str,
    minor_version: u32,
    rec: &mut Record,
) -> Result<(), String> {
    if s == "-" {
        return Ok(());
    }
    let u8v = |s: &str| parse_uint(s, 0xff).map(|v| v as u8);
    let u16v = |s: &str| parse_uint(s, 0xffff).map(|v| v as u16);
    let u32v = |s: &str| parse_uint(s, 0xffff_ffff).map(|v| v as u32);
    let addr = |s: &str| -> Result<Ipv4Addr, String> {
        rclick_core::conf::parse_ipv4(s).map_err(|_| format!("bad IP address '{s}'"))
    };
    match field {
        Field::None
        | Field::IpCaptureLen
        | Field::TcpNtopt
        | Field::FirstTimestamp
        | Field::PayloadMd5
        | Field::PayloadMd5Hex => {}
        Field::Timestamp => rec.ts = Some(parse_timestamp_text(s)?),
        Field::TsSec => rec.ts_sec = Some(u32v(s)?),
        Field::TsUsec => rec.ts_usec = Some(u32v(s)?),
        Field::TsUsec1 => rec.ts_usec1 = Some(parse_uint(s, u64::MAX)?),
        Field::IpSrc => rec.src = Some(addr(s)?),
        Field::IpDst => rec.dst = Some(addr(s)?),
        Field::IpTos => rec.tos = Some(u8v(s)?),
        Field::IpDscp => {
            let v = u8v(s)?;
            if v > 63 {
                return Err(format!("bad DSCP '{s}'"));
            }
            rec.dscp = Some(v);
        }
        Field::IpEcn => {
            rec.ecn = Some(match s {
                "0" | "no" => 0,
                "1" | "ect1" | "ECT(1)" => 1,
                "2" | "ect2" | "ECT(0)" => 2,
                "3" | "ce" | "CE" => 3,
                _ => return Err(format!("bad ECN '{s}'")),
            })
        }
        Field::IpTtl => rec.ttl = Some(u8v(s)?),
        Field::IpFrag => rec.frag = Some(parse_frag(s, minor_version)?),
        Field::IpFragoff => rec.fragoff = Some(parse_frag(s, minor_version)?),
        Field::IpId => rec.id = Some(u16v(s)?),
        Field::IpSum => rec.sum = Some(u16v(s)?),
        Field::IpProto => {
            rec.proto = Some(parse_ip_proto(s).ok_or_else(|| format!("bad IP protocol '{s}'"))?)
        }
        Field::IpHl => {
            let v = parse_uint(s, 60)? as u32;
            if v < 20 {
                return Err(format!("bad IP header length '{s}'"));
            }
            rec.hl = Some(v);
        }
        Field::IpLen => rec.len = Some(parse_uint(s, 0xffff)? as u32),
        Field::IpOpt => rec.ip_opt = Some(parse_ip_opt(s)?),
        Field::Sport => rec.sport = Some(u16v(s)?),
        Field::Dport => rec.dport = Some(u16v(s)?),
        Field::TcpSeq => rec.seq = Some(u32v(s)?),
        Field::TcpAck => rec.ack = Some(u32v(s)?),
        Field::TcpFlags => rec.flags = Some(parse_tcp_flags(s)?),
        Field::TcpWindow => rec.window = Some(u16v(s)?),
        Field::TcpUrp => rec.urp = Some(u16v(s)?),
        Field::TcpOff => {
            let v = parse_uint(s, 60)? as u32;
            if v < 20 || !v.is_multiple_of(4) {
                return Err(format!("bad TCP header length '{s}'"));
            }
            rec.tcp_off = Some(v);
        }
        Field::TcpOpt | Field::TcpSack => {
            let mut o = parse_tcp_opt(s)?;
            if let Some(prev) = rec.tcp_opt.as_mut() {
                prev.append(&mut o);
                if prev.len() > 40 {
                    return Err("TCP options too long".into());
                }
            } else {
                rec.tcp_opt = Some(o);
            }
        }
        Field::UdpLen => rec.udp_len = Some(u16v(s)?),
        Field::IcmpType | Field::IcmpTypeName => {
            rec.icmp_type = Some(match ICMP_TYPES.iter().find(|(n, _)| *n == s) {
                Some((_, v)) => *v,
                None => u8v(s).map_err(|_| format!("bad ICMP type '{s}'"))?,
            })
        }
        Field::IcmpCode | Field::IcmpCodeName => rec.icmp_code = Some(s.to_string()),
        Field::IcmpFlowid => rec.icmp_flowid = Some(u16v(s)?),
        Field::IcmpSeq => rec.icmp_seq = Some(u16v(s)?),
        Field::IcmpNextmtu => rec.icmp_nextmtu = Some(u16v(s)?),
        Field::PayloadLen => rec.payload_len = Some(parse_uint(s, 0xffff)? as u32),
        Field::Payload => {
            let bytes =
                rclick_core::conf::parse_bytes(s).map_err(|_| format!("bad payload {s}"))?;
            rec.payload = Some(bytes);
        }
        Field::Count => rec.count = Some(u32v(s)?),
        // Both the PAINT annotation, as in Click.
        Field::Link | Field::Paint => rec.link = Some(u8v(s)?),
        Field::Direction => {
            rec.link = Some(match s {
                ">" => 0,
                "<" => 1,
                _ => u8v(s)?,
            })
        }
        Field::Aggregate => rec.aggregate = Some(u32v(s)?),
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Options

/// Drops leading NOPs past 40 bytes; more than 40 is an error.
fn finish_options(mut o: Vec<u8>, what: &str) -> Result<Vec<u8>, String> {
    while o.len() > 40 && o[0] == 1 {
        o.remove(0);
    }
    if o.len() > 40 {
        return Err(format!("{what} options too long"));
    }
    Ok(o)
}

/// `NUM` or `NUM=B:B:...`: an option with raw bytes.
fn parse_raw_option<'a>(s: &'a str, out: &mut Vec<u8>) -> Option<&'a str> {
    let (v, mut rest) = leading_uint(s)?;
    if v > 255 {
        return None;
    }
    out.push(v as u8);
    if let Some(r) = rest.strip_prefix('=') {
        if r.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
            let pos0 = out.len();
            out.push(0);
            rest = r;
            loop {
                let (b, r2) = leading_uint(rest)?;
                if b > 255 {
                    return None;
                }
                out.push(b as u8);
                rest = r2;
                match rest.strip_prefix(':') {
                    Some(r3) if r3.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) => {
                        rest = r3
                    }
                    _ => break,
                }
            }
            let len = out.len() - pos0 + 1;
            if len > 255 {
                return None;
            }
            out[pos0] = len as u8;
        }
    }
    Some(rest)
}

/// Appends `o`, encoded.
fn push_tcp_option(out: &mut Vec<u8>, o: TcpOption) {
    let at = out.len();
    out.resize(at + o.buffer_len(), 0);
    o.emit(&mut out[at..]);
}

/// TCP options text (`mss1460;sackok;ts1:2;wscale7;sack1-5;nop;eol;N=b:b`,
/// separated by `;` or `,`), as option bytes (unpadded). `.` is none.
pub fn parse_tcp_opt(s: &str) -> Result<Vec<u8>, String> {
    if s == "." || s.is_empty() {
        return Ok(Vec::new());
    }
    let bad = || format!("bad TCP options '{s}'");
    let mut out: Vec<u8> = Vec::new();
    let mut rest = s;
    // Start of the SACK option being extended, if the last item was one.
    let mut sack_at: Option<usize> = None;
    loop {
        let mut this_sack = None;
        if let Some(r) = rest.strip_prefix("mss") {
            let (v, r) = leading_uint(r).ok_or_else(bad)?;
            if v > 0xffff {
                return Err(bad());
            }
            push_tcp_option(&mut out, TcpOption::Mss(v as u16));
            rest = r;
        } else if let Some(r) = rest.strip_prefix("wscale") {
            let (v, r) = leading_uint(r).ok_or_else(bad)?;
            if v > 255 {
                return Err(bad());
            }
            push_tcp_option(&mut out, TcpOption::WindowScale(v as u8));
            rest = r;
        } else if let Some(r) = rest.strip_prefix("sackok") {
            push_tcp_option(&mut out, TcpOption::SackPermitted);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("sack") {
            let (a, r) = leading_uint(r).ok_or_else(bad)?;
            let r = r
                .strip_prefix('-')
                .or_else(|| r.strip_prefix(':'))
                .ok_or_else(bad)?;
            let (b, r) = leading_uint(r).ok_or_else(bad)?;
            if a > 0xffff_ffff || b > 0xffff_ffff {
                return Err(bad());
            }
            // Consecutive sack items grow one SACK option (up to four
            // blocks) in place; wire's TcpOption::Sack is read from
            // bytes, not built from blocks.
            let at = match sack_at {
                Some(at) if out[at + 1] <= 34 => at,
                _ => {
                    out.extend_from_slice(&[TCPOPT_SACK, 2]);
                    out.len() - 2
                }
            };
            out.extend_from_slice(&(a as u32).to_be_bytes());
            out.extend_from_slice(&(b as u32).to_be_bytes());
            out[at + 1] += 8;
            this_sack = Some(at);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("ts") {
            let (a, r) = leading_uint(r).ok_or_else(bad)?;
            let r = r.strip_prefix(':').ok_or_else(bad)?;
            let (b, r) = leading_uint(r).ok_or_else(bad)?;
            if a > 0xffff_ffff || b > 0xffff_ffff {
                return Err(bad());
            }
            if out.is_empty() {
                push_tcp_option(&mut out, TcpOption::NoOp);
                push_tcp_option(&mut out, TcpOption::NoOp);
            }
            push_tcp_option(
                &mut out,
                TcpOption::Timestamp {
                    tsval: a as u32,
                    tsecr: b as u32,
                },
            );
            rest = r;
        } else if let Some(r) = rest.strip_prefix("nop") {
            push_tcp_option(&mut out, TcpOption::NoOp);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("eol") {
            push_tcp_option(&mut out, TcpOption::EndOfList);
            rest = r;
        } else if rest.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
            rest = parse_raw_option(rest, &mut out).ok_or_else(bad)?;
        } else {
            return Err(bad());
        }
        sack_at = this_sack;
        if rest.is_empty() {
            return finish_options(out, "TCP").map_err(|_| bad());
        }
        match rest.as_bytes()[0] {
            b';' | b',' => rest = &rest[1..],
            _ => return Err(bad()),
        }
    }
}

/// Which TCP options `unparse_tcp_opt` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TcpOptMask {
    /// Everything but padding (`tcp_opt`).
    All,
    /// Everything but padding and timestamps (`tcp_ntopt`).
    NoTimestamp,
    /// SACK and SACK-permitted (`tcp_sack`).
    Sack,
}

/// Click's text form of TCP options; `.` when nothing is printed, `?` for
/// malformed options.
pub fn unparse_tcp_opt(opt: &[u8], mask: TcpOptMask) -> String {
    let mut items: Vec<String> = Vec::new();
    for o in OptionsIter::new(opt) {
        let Ok(o) = o.and_then(TcpOption::from_raw) else {
            return "?".into();
        };
        let show = match o {
            TcpOption::SackPermitted | TcpOption::Sack(_) => true,
            TcpOption::Timestamp { .. } => mask == TcpOptMask::All,
            _ => mask != TcpOptMask::Sack,
        };
        if !show {
            continue;
        }
        match o {
            TcpOption::EndOfList | TcpOption::NoOp => {}
            TcpOption::Mss(v) => items.push(format!("mss{v}")),
            TcpOption::WindowScale(v) => items.push(format!("wscale{v}")),
            TcpOption::SackPermitted => items.push("sackok".into()),
            TcpOption::Sack(blocks) => {
                items.extend(blocks.iter().map(|(l, r)| format!("sack{l}-{r}")));
            }
            TcpOption::Timestamp { tsval, tsecr } => items.push(format!("ts{tsval}:{tsecr}")),
            TcpOption::Unknown { kind, data } => items.push(raw_option_text(kind, data)),
        }
    }
    if items.is_empty() {
        ".".into()
    } else {
        items.join(";")
    }
}

/// An option wire does not decode: `KIND=B:B:...`.
fn raw_option_text(kind: u8, data: &[u8]) -> String {
    let mut s = kind.to_string();
    for (k, b) in data.iter().enumerate() {
        s.push(if k == 0 { '=' } else { ':' });
        s.push_str(&b.to_string());
    }
    s
}

/// IP options text (`rr{1.2.3.4}+2`, `lsrr{1.0.0.1,^2.0.0.2}`,
/// `ssrr{...}`, `nop`, `eol`, `N=b:b`, separated by `;` or `,`), as
/// option bytes (unpadded). `.` is none. Timestamp options are not read.
pub fn parse_ip_opt(s: &str) -> Result<Vec<u8>, String> {
    if s == "." || s.is_empty() {
        return Ok(Vec::new());
    }
    let bad = || format!("bad IP options '{s}'");
    let mut out: Vec<u8> = Vec::new();
    let mut rest = s;
    loop {
        let route = [
            ("rr{", IPOPT_RR),
            ("lsrr{", IPOPT_LSRR),
            ("ssrr{", IPOPT_SSRR),
        ]
        .iter()
        .find_map(|(p, k)| rest.strip_prefix(p).map(|r| (r, *k)));
        if let Some((r, kind)) = route {
            let at = out.len();
            out.extend_from_slice(&[kind, 0, 0]);
            let mut pointer: Option<usize> = None;
            let mut r = r;
            loop {
                if let Some(r2) = r.strip_prefix('^') {
                    if pointer.is_none() {
                        pointer = Some(out.len() - at + 1);
                        r = r2;
                    }
                }
                if !r.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
                    break;
                }
                for k in 0..4 {
                    let (v, r2) = leading_uint(r).ok_or_else(bad)?;
                    if v > 255 {
                        return Err(bad());
                    }
                    out.push(v as u8);
                    r = r2;
                    if k < 3 {
                        r = r.strip_prefix('.').ok_or_else(bad)?;
                    }
                }
                if let Some(r2) = r.strip_prefix(',') {
                    r = r2;
                }
            }
            r = r.strip_prefix('}').ok_or_else(bad)?;
            out[at + 2] = pointer.unwrap_or(out.len() - at + 1) as u8;
            if let Some(r2) = r.strip_prefix('+') {
                let (n, r3) = leading_uint(r2).ok_or_else(bad)?;
                if n >= 64 {
                    return Err(bad());
                }
                out.resize(out.len() + n as usize * 4, 0);
                r = r3;
            }
            let len = out.len() - at;
            if len > 255 {
                return Err(bad());
            }
            out[at + 1] = len as u8;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("nop") {
            out.push(IPOPT_NOP);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("eol") {
            out.push(IPOPT_EOL);
            rest = r;
        } else if rest.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
            rest = parse_raw_option(rest, &mut out).ok_or_else(bad)?;
        } else {
            return Err(bad());
        }
        if rest.is_empty() {
            return finish_options(out, "IP").map_err(|_| bad());
        }
        match rest.as_bytes()[0] {
            b';' | b',' => rest = &rest[1..],
            _ => return Err(bad()),
        }
    }
}

fn dotted(b: &[u8]) -> String {
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// Click's text form of IP options (without padding); `.` when empty, `?`
/// for malformed options.
pub fn unparse_ip_opt(opt: &[u8]) -> String {
    let mut items: Vec<String> = Vec::new();
    for raw in OptionsIter::new(opt) {
        let Ok(raw) = raw else {
            return "?".into();
        };
        let kind = raw.kind;
        match kind {
            IPOPT_EOL => break,
            IPOPT_NOP => continue,
            _ => {}
        }
        // The whole option, type and length bytes included, which the
        // pointers below count from.
        let len = 2 + raw.data.len();
        let o = &opt[raw.offset..raw.offset + len];
        match kind {
            IPOPT_RR | IPOPT_LSRR | IPOPT_SSRR if len >= 3 && o[2] >= 4 => {
                let ptr = usize::from(o[2]) - 1;
                let mut s = String::from(match kind {
                    IPOPT_RR => "rr",
                    IPOPT_LSRR => "lsrr",
                    _ => "ssrr",
                });
                s.push('{');
                let mut k = 3;
                let mut sep = "";
                while k + 4 <= len {
                    if k == ptr {
                        if kind == IPOPT_RR {
                            break;
                        }
                        sep = "^";
                    }
                    s.push_str(sep);
                    s.push_str(&dotted(&o[k..k + 4]));
                    sep = ",";
                    k += 4;
                }
                if k == len && k == ptr && kind != IPOPT_RR {
                    s.push('^');
                }
                s.push('}');
                if k + 4 <= len && k == ptr && kind == IPOPT_RR {
                    s.push_str(&format!("+{}", (len - k) / 4));
                }
                items.push(s);
            }
            IPOPT_TS if len >= 4 && o[2] >= 5 => {
                let flag = o[3] & 0xf;
                let ptr = usize::from(o[2]) - 1;
                let size = if (1..=3).contains(&flag) { 8 } else { 4 };
                let mut s = String::from("ts");
                match flag {
                    0 => {}
                    1 => s.push_str(".ip"),
                    3 => s.push_str(".preip"),
                    f => s.push_str(&format!(".{f}")),
                }
                s.push('{');
                let mut k = 4;
                let mut sep = "";
                while k + size <= len {
                    if k == ptr {
                        if flag != 3 {
                            break;
                        }
                        sep = "^";
                    }
                    s.push_str(sep);
                    if flag != 0 {
                        s.push_str(&dotted(&o[k..k + 4]));
                        s.push('=');
                        k += 4;
                    }
                    if flag == 3 && k > ptr {
                        s.pop();
                    } else {
                        let v = u32::from_be_bytes([o[k], o[k + 1], o[k + 2], o[k + 3]]);
                        if v & 0x8000_0000 != 0 {
                            s.push('!');
                        }
                        s.push_str(&(v & 0x7fff_ffff).to_string());
                    }
                    sep = ",";
                    k += 4;
                }
                if k == len && k == ptr {
                    s.push('^');
                }
                s.push('}');
                if k + size <= len && k == ptr {
                    s.push_str(&format!("+{}", (len - k) / size));
                }
                if o[3] & 0xf0 != 0 {
                    s.push_str(&format!("++{}", o[3] >> 4));
                }
                items.push(s);
            }
            IPOPT_RR | IPOPT_LSRR | IPOPT_SSRR | IPOPT_TS => return "?".into(),
            _ => items.push(raw_option_text(kind, raw.data)),
        }
    }
    if items.is_empty() {
        ".".into()
    } else {
        items.join(";")
    }
}

// ---------------------------------------------------------------------
// Building packets

/// Settings for synthesizing packets.
#[derive(Clone, Copy, Debug)]
pub struct BuildOptions {
    pub default_proto: u8,
    pub checksum: bool,
}

fn pad4(mut v: Vec<u8>) -> Vec<u8> {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
    v
}

fn icmp_header_len(t: Option<u8>) -> usize {
    match t {
        Some(ICMP_TSTAMP | ICMP_TSTAMPREPLY) => 20,
        _ => icmp::HEADER_LEN,
    }
}

/// An IP protocol as a dump writes it: `T`, `U`, `I`, a number, or a
/// name (`tcp`, `udp`, `icmp`, ...).
pub fn parse_ip_proto(s: &str) -> Option<u8> {
    match s {
        "T" => Some(PROTO_TCP),
        "U" => Some(PROTO_UDP),
        "I" => Some(PROTO_ICMP),
        "tcp" => Some(PROTO_TCP),
        "udp" => Some(PROTO_UDP),
        "icmp" => Some(PROTO_ICMP),
        "dccp" => Some(PROTO_DCCP),
        "udplite" => Some(PROTO_UDPLITE),
        _ => parse_uint(s, 255).ok().map(|v| v as u8),
    }
}

fn has_ports(proto: u8) -> bool {
    matches!(proto, PROTO_TCP | PROTO_UDP | PROTO_DCCP | PROTO_UDPLITE)
}

/// Whether an ICMP type carries an identifier and sequence number.
fn icmp_has_flow(t: u8) -> bool {
    matches!(
        t,
        ICMP_ECHOREPLY | ICMP_ECHO | ICMP_TSTAMP | ICMP_TSTAMPREPLY | ICMP_IREQ | ICMP_IREQREPLY
    )
}

/// The timestamp of a record: `timestamp`, else `ts_sec`/`ts_usec`, else
/// `ts_usec1`, else zero.
pub fn record_timestamp(rec: &Record) -> Timestamp {
    if let Some(t) = rec.ts {
        t
    } else if rec.ts_sec.is_some() || rec.ts_usec.is_some() {
        Timestamp::from_sec_nsec(
            i64::from(rec.ts_sec.unwrap_or(0)),
            i64::from(rec.ts_usec.unwrap_or(0)) * 1000,
        )
    } else if let Some(u) = rec.ts_usec1 {
        Timestamp::from_sec_nsec((u / 1_000_000) as i64, (u % 1_000_000) as i64 * 1000)
    } else {
        Timestamp::ZERO
    }
}

/// Synthesizes an IPv4 packet from a record: IP header (with options),
/// the transport header the protocol and fields call for, the payload,
/// zero padding up to the IP length. Sets the network and transport
/// headers, the destination IP, timestamp, paint, aggregate and
/// extra-packets annotations.
/// The TTL of a packet whose dump line gives none (Click's).
const DEFAULT_TTL: u8 = 100;

pub fn build_packet(rec: &Record, opts: &BuildOptions) -> Result<Packet, String> {
    let proto = rec.proto.unwrap_or(opts.default_proto);
    let fragword = rec.fragoff.or(rec.frag).unwrap_or(0);
    let first_frag = fragword & IP_OFFMASK == 0;

    // IP header and options.
    let mut ipopt = pad4(rec.ip_opt.clone().unwrap_or_default());
    if let Some(hl) = rec.hl {
        let want = ((hl as usize + 3) & !3).min(ipv4::MAX_HEADER_LEN);
        while ipv4::MIN_HEADER_LEN + ipopt.len() < want {
            ipopt.push(0);
        }
    }
    let mut hl = ipv4::MIN_HEADER_LEN + ipopt.len();

    // Transport header: a first fragment of TCP, UDP, UDP-Lite, DCCP or
    // ICMP always gets one (zero fields where the dump gives none), as in
    // Click; it is cut short where the IP length ends before it.
    let mut th: Vec<u8> = Vec::new();
    if first_frag {
        match proto {
            PROTO_TCP => {
                th = vec![0u8; tcp::MIN_HEADER_LEN];
                th.extend(pad4(rec.tcp_opt.clone().unwrap_or_default()));
                // `tcp_off` sets the header length; options it leaves
                // room for are zero (end of options).
                if let Some(off) = rec.tcp_off {
                    th.resize((off as usize).max(tcp::MIN_HEADER_LEN), 0);
                }
            }
            PROTO_UDP | PROTO_UDPLITE => th = vec![0u8; udp::HEADER_LEN],
            PROTO_ICMP => th = vec![0u8; icmp_header_len(rec.icmp_type)],
            PROTO_DCCP => th = vec![0u8; 12],
            _ => {}
        }
    }
    let want_len = match (rec.len, rec.payload_len) {
        (Some(l), _) => Some(l as usize),
        _ => None,
    };
    let payload = rec.payload.clone().unwrap_or_default();
    // Where the payload starts within the transport part: Click's payload
    // follows TCP and UDP headers, and starts at the transport header for
    // other protocols.
    let payload_off_in_th = |th: &Vec<u8>| match proto {
        PROTO_TCP | PROTO_UDP | PROTO_UDPLITE if first_frag => th.len(),
        _ => 0,
    };

    // When both lengths are known and the IP length leaves room, grow the
    // TCP and then IP headers with end-of-option padding (as Click does),
    // unless the line gave that header's options (`.` says there are
    // none): then the difference stays in the extra-length annotation.
    if let (Some(len), Some(plen)) = (
        rec.len,
        rec.payload_len
            .or(rec.payload.as_ref().map(|p| p.len() as u32)),
    ) {
        let have = hl + payload_off_in_th(&th) + plen as usize;
        let mut delta = (len as usize).saturating_sub(have);
        if delta > 0
            && proto == PROTO_TCP
            && first_frag
            && th.len() == tcp::MIN_HEADER_LEN
            && rec.tcp_opt.is_none()
        {
            let grow = (delta & !3).min(tcp::MAX_HEADER_LEN - tcp::MIN_HEADER_LEN);
            th.resize(tcp::MIN_HEADER_LEN + grow, 0);
            delta -= grow;
        }
        if delta > 0 && hl == ipv4::MIN_HEADER_LEN && rec.ip_opt.is_none() {
            let grow = (delta & !3).min(ipv4::MAX_HEADER_LEN - ipv4::MIN_HEADER_LEN);
            ipopt.resize(grow, 0);
            hl = ipv4::MIN_HEADER_LEN + grow;
        }
    }

    // How much of the transport header the packet holds.
    let th_kept = match want_len {
        Some(w) if w < hl + th.len() => w.saturating_sub(hl),
        _ => th.len(),
    };
    let poff = payload_off_in_th(&th);
    let mut body = th.clone();
    if body.len() < poff + payload.len() {
        body.resize(poff + payload.len(), 0);
    }
    let built = hl + body.len();
    let ip_len = match (rec.len, rec.payload_len) {
        (Some(l), _) => l as usize,
        (None, Some(pl)) => hl + poff + pl as usize,
        (None, None) => built,
    };
    if ip_len > 0xffff || built > 0xffff {
        return Err("packet longer than 65535 bytes".into());
    }
    // The packet holds the headers and payload; only with CHECKSUM is it
    // filled with zeros up to the IP length (as in Click), else the rest
    // is counted in the extra length annotation.
    let total = if opts.checksum {
        built.max(ip_len)
    } else {
        built
    };
    let mut data = vec![0u8; total];
    data[hl..hl + body.len()].copy_from_slice(&body);

    // IP header. A dump may give a length shorter than the header, which
    // a Repr cannot hold: the view then writes it over the Repr's.
    let src = rec.src.unwrap_or(Ipv4Addr::UNSPECIFIED);
    let dst = rec.dst.unwrap_or(Ipv4Addr::UNSPECIFIED);
    let mut tos = rec.tos.unwrap_or(0);
    if let Some(d) = rec.dscp {
        tos = (tos & 3) | (d << 2);
    }
    if let Some(e) = rec.ecn {
        tos = (tos & !3) | (e & 3);
    }
    let ip = Ipv4Repr {
        src,
        dst,
        protocol: proto,
        payload_len: ip_len.saturating_sub(hl),
        ttl: rec.ttl.unwrap_or(DEFAULT_TTL),
        tos,
        ident: rec.id.unwrap_or(0),
        dont_frag: fragword & IP_DF != 0,
        more_frags: fragword & IP_MF != 0,
        frag_offset: (fragword & IP_OFFMASK) * 8,
        options: &ipopt,
    };
    {
        let mut h = Ipv4Header::new_unchecked(&mut data[..hl]);
        ip.emit(&mut h);
        if ip_len < hl {
            h.set_total_len(ip_len as u16);
        }
        // Click sets the IP checksum only with CHECKSUM (which overrides
        // an `ip_sum` the line gives).
        if opts.checksum {
            h.fill_checksum();
        } else {
            h.set_checksum(rec.sum.unwrap_or(0));
        }
    }

    // Transport header.
    let tl = th.len();
    if tl > 0 {
        let t = &mut data[hl..hl + tl];
        match proto {
            PROTO_TCP => TcpRepr {
                src_port: rec.sport.unwrap_or(0),
                dst_port: rec.dport.unwrap_or(0),
                seq: rec.seq.unwrap_or(0),
                ack: rec.ack.unwrap_or(0),
                flags: rec.flags.unwrap_or(0),
                window: rec.window.unwrap_or(0),
                urgent: rec.urp.unwrap_or(0),
                options: &th[tcp::MIN_HEADER_LEN..],
                payload_len: 0,
            }
            .emit(&mut TcpHeader::new_unchecked(t)),
            PROTO_UDP | PROTO_UDPLITE => {
                // The length may be shorter than the header, which a Repr
                // cannot hold.
                let ul = rec.udp_len.unwrap_or((ip_len.saturating_sub(hl)) as u16);
                let mut u = UdpHeader::new_unchecked(t);
                UdpRepr {
                    src_port: rec.sport.unwrap_or(0),
                    dst_port: rec.dport.unwrap_or(0),
                    payload_len: usize::from(ul).saturating_sub(udp::HEADER_LEN),
                }
                .emit(&mut u);
                u.set_len(ul);
            }
            PROTO_ICMP => {
                // Any type and code with any of the identifier, sequence
                // and next-hop MTU fields, as the dump says: more than an
                // IcmpRepr's messages, so the view's setters.
                let ty = rec.icmp_type.unwrap_or(0);
                let mut h = IcmpHeader::new_unchecked(t);
                h.set_type(ty);
                if let Some(c) = &rec.icmp_code {
                    let code = match icmp_codes(ty).iter().find(|(n, _)| n == c) {
                        Some((_, v)) => *v,
                        None => {
                            parse_uint(c, 255).map_err(|_| format!("bad ICMP code '{c}'"))? as u8
                        }
                    };
                    h.set_code(code);
                }
                // The MTU takes the sequence number's place, and is
                // written first since it zeroes the identifier's.
                let mtu = rec.icmp_nextmtu.filter(|_| {
                    (rec.icmp_type.is_none() || ty == ICMP_UNREACH)
                        && (h.code() == ICMP_UNREACH_NEEDFRAG || rec.icmp_code.is_none())
                });
                if let Some(v) = mtu {
                    h.set_next_hop_mtu(v);
                }
                if rec.icmp_type.is_none() || icmp_has_flow(ty) {
                    if let Some(v) = rec.icmp_flowid {
                        h.set_ident(v);
                    }
                    if let (Some(v), None) = (rec.icmp_seq, mtu) {
                        h.set_seq(v);
                    }
                }
            }
            _ => {
                // DCCP: only its ports, where UDP has them.
                let mut ports = UdpHeader::new_unchecked(t);
                ports.set_src_port(rec.sport.unwrap_or(0));
                ports.set_dst_port(rec.dport.unwrap_or(0));
            }
        }
    }
    // The payload goes in after the transport fields (for protocols other
    // than TCP and UDP it starts at the transport header, as in Click).
    data[hl + poff..hl + poff + payload.len()].copy_from_slice(&payload);

    // Transport checksums, over the IP payload.
    if opts.checksum && tl > 0 && ip_len <= total && ip_len >= hl + tl {
        let seg = &mut data[hl..ip_len];
        match proto {
            PROTO_TCP => TcpHeader::new_unchecked(seg).fill_checksum(src, dst),
            PROTO_UDP => {
                // The whole IP payload, whatever the UDP length says (a
                // dump may give both).
                UdpHeader::new_unchecked(&mut *seg).set_checksum(0);
                let ph = checksum::pseudo_header_v4(
                    src.octets(),
                    dst.octets(),
                    PROTO_UDP,
                    seg.len() as u16,
                );
                let c = match !(checksum::sum(seg, ph) as u16) {
                    0 => 0xffff,
                    c => c,
                };
                UdpHeader::new_unchecked(seg).set_checksum(c);
            }
            PROTO_ICMP => IcmpHeader::new_unchecked(seg).fill_checksum(),
            _ => {}
        }
    }

    // An IP length ending inside the transport header cuts it there.
    let mut total = total;
    if th_kept < th.len() && payload.is_empty() {
        total = total.min(hl + th_kept);
        data.truncate(total);
    }
    let mut p = Packet::with_room(rclick_core::packet::DEFAULT_HEADROOM, &data, 0);
    p.set_network_header(0, hl);
    if ip_len > total {
        p.set_anno_bytes(anno::EXTRA_LENGTH, &((ip_len - total) as u32).to_ne_bytes());
    }
    p.set_dst_ip_anno(dst);
    p.set_timestamp_anno(record_timestamp(rec));
    if let Some(l) = rec.link {
        p.set_paint_anno(l);
    }
    if let Some(a) = rec.aggregate {
        p.set_anno_bytes(anno::AGGREGATE, &a.to_ne_bytes());
    }
    if let Some(c) = rec.count {
        let extra = c.saturating_sub(1);
        p.set_anno_bytes(anno::EXTRA_PACKETS, &extra.to_ne_bytes());
    }
    Ok(p)
}

// ---------------------------------------------------------------------
// Formatting packets

/// The fixed part of a header as captured: zero-filled past the end of
/// the capture, so that a wire view over it cannot panic, with the
/// captured length to say which of its fields were captured (a truncated
/// capture still prints the fields it holds, as Click's does).
struct Captured {
    bytes: [u8; 20],
    len: usize,
}

impl Captured {
    fn new(b: &[u8]) -> Self {
        let mut bytes = [0u8; 20];
        let n = b.len().min(bytes.len());
        bytes[..n].copy_from_slice(&b[..n]);
        Captured {
            bytes,
            len: b.len(),
        }
    }

    /// The bytes, when the capture reaches `need`.
    fn upto(&self, need: usize) -> Option<&[u8]> {
        (self.len >= need).then_some(&self.bytes[..])
    }
}

/// What ToIPSummaryDump found in a packet.
pub struct PacketView<'a> {
    p: &'a Packet,
    /// The valid IPv4 header and everything after it.
    ip: Option<&'a [u8]>,
    ip_fixed: Option<Captured>,
    /// The transport header and everything after it (first fragments).
    th: Option<&'a [u8]>,
    th_fixed: Option<Captured>,
    /// Offset of the network header in the data.
    nh_off: usize,
    /// Why the packet is bad, for `!bad` lines.
    pub bad: Option<String>,
}

impl<'a> PacketView<'a> {
    pub fn new(p: &'a Packet) -> Self {
        let mut v = PacketView {
            p,
            ip: None,
            ip_fixed: None,
            th: None,
            th_fixed: None,
            nh_off: 0,
            bad: None,
        };
        let (Some(nh), Some(off)) = (p.network_header(), p.network_offset()) else {
            v.bad = Some("no IP header".into());
            return v;
        };
        if off < 0 {
            v.bad = Some("no IP header".into());
            return v;
        }
        v.nh_off = off as usize;
        if nh.len() < ipv4::MIN_HEADER_LEN {
            v.bad = Some("truncated IP header capture".into());
            // Fields within the captured part are still printed.
            v.ip = Some(nh);
            v.ip_fixed = Some(Captured::new(nh));
            return v;
        }
        let h = Ipv4Header::new_unchecked(nh);
        if h.version() != 4 {
            v.bad = Some(format!("IP version {}", h.version()));
            return v;
        }
        let hl = h.header_len();
        if hl < ipv4::MIN_HEADER_LEN {
            v.bad = Some(format!("IP header length {}", hl / 4));
            return v;
        }
        let ip_len = usize::from(h.total_len());
        if ip_len < hl {
            v.bad = Some(format!("IP length {ip_len}"));
            return v;
        }
        v.ip = Some(nh);
        v.ip_fixed = Some(Captured::new(nh));
        if nh.len() < hl {
            v.bad = Some("truncated IP header capture".into());
            return v;
        }
        // A capture shorter than the IP length that the extra length
        // annotation does not account for (Click's "careful" check).
        let have = nh.len() as u64 + u64::from(v.extra_length());
        if have < ip_len as u64 {
            v.bad = Some(format!("truncated IP missing {}", ip_len as u64 - have));
        }
        if h.frag_offset() == 0 {
            if let (Some(th), Some(toff)) = (p.transport_header(), p.transport_offset()) {
                if toff >= off {
                    v.th = Some(th);
                    v.th_fixed = Some(Captured::new(th));
                }
            }
        }
        v
    }

    /// Click's `!bad` message for a field the packet is too short to hold
    /// (the first such field of a line names the problem), or `None`
    /// when the field is there or belongs to another protocol.
    pub fn missing(&self, f: Field) -> Option<String> {
        let ip = self.iph(ipv4::MIN_HEADER_LEN)?;
        let proto = ip.protocol();
        let tcp_off = || {
            self.th_fixed
                .as_ref()
                .and_then(|t| t.upto(13))
                .map_or(13, |t| TcpHeader::new_unchecked(t).header_len().max(13))
        };
        let (name, need) = match f {
            Field::Sport | Field::Dport if matches!(proto, PROTO_TCP | PROTO_UDP) => {
                ("TCP/UDP", if f == Field::Sport { 2 } else { 4 })
            }
            Field::TcpSeq if proto == PROTO_TCP => ("TCP", 8),
            Field::TcpAck if proto == PROTO_TCP => ("TCP", 12),
            Field::TcpFlags | Field::TcpOff if proto == PROTO_TCP => ("TCP", 14),
            Field::TcpWindow if proto == PROTO_TCP => ("TCP", 16),
            Field::TcpUrp if proto == PROTO_TCP => ("TCP", 20),
            Field::TcpOpt | Field::TcpNtopt | Field::TcpSack if proto == PROTO_TCP => {
                ("TCP", tcp_off())
            }
            Field::UdpLen if proto == PROTO_UDP => ("UDP", 6),
            Field::IcmpType | Field::IcmpTypeName if proto == PROTO_ICMP => ("ICMP", 1),
            Field::IcmpCode | Field::IcmpCodeName if proto == PROTO_ICMP => ("ICMP", 2),
            // The identifier and sequence number only for types that have
            // them, the MTU only for "fragmentation needed".
            Field::IcmpFlowid | Field::IcmpSeq
                if proto == PROTO_ICMP
                    && self.icmp(1).is_some_and(|i| icmp_has_flow(i.icmp_type())) =>
            {
                ("ICMP", if f == Field::IcmpFlowid { 6 } else { 8 })
            }
            Field::IcmpNextmtu
                if proto == PROTO_ICMP
                    && self.icmp(2).is_some_and(|i| {
                        i.icmp_type() == ICMP_UNREACH && i.code() == ICMP_UNREACH_NEEDFRAG
                    }) =>
            {
                ("ICMP", 8)
            }
            _ => return None,
        };
        if ip.frag_offset() != 0 {
            return Some(format!("fragmented {name} header"));
        }
        let tlen = self.th.map_or(0, |t| t.len());
        if tlen >= need {
            return None;
        }
        // Click zeroes the extra length of a packet with a good IP header
        // before this test, so a truncated header is never "capture" here.
        Some(format!("truncated {name} header"))
    }

    /// The IPv4 header, when the capture holds its bytes up to `need`.
    fn iph(&self, need: usize) -> Option<Ipv4Header<&[u8]>> {
        Some(Ipv4Header::new_unchecked(
            self.ip_fixed.as_ref()?.upto(need)?,
        ))
    }

    fn proto(&self) -> Option<u8> {
        Some(self.iph(10)?.protocol())
    }

    /// The transport header's fixed part, up to `need`, when the IP
    /// protocol is one of `protos`.
    fn th(&self, protos: &[u8], need: usize) -> Option<&[u8]> {
        if !protos.contains(&self.proto()?) {
            return None;
        }
        self.th_fixed.as_ref()?.upto(need)
    }

    fn tcp(&self, need: usize) -> Option<TcpHeader<&[u8]>> {
        Some(TcpHeader::new_unchecked(self.th(&[PROTO_TCP], need)?))
    }

    fn udp(&self, need: usize) -> Option<UdpHeader<&[u8]>> {
        Some(UdpHeader::new_unchecked(
            self.th(&[PROTO_UDP, PROTO_UDPLITE], need)?,
        ))
    }

    fn icmp(&self, need: usize) -> Option<IcmpHeader<&[u8]>> {
        Some(IcmpHeader::new_unchecked(self.th(&[PROTO_ICMP], need)?))
    }

    fn extra_length(&self) -> u32 {
        u32::from_ne_bytes(self.p.anno_bytes::<4>(anno::EXTRA_LENGTH))
    }

    /// Payload offset and length in the packet data (Click's
    /// `payload_info`), before clipping to the captured data.
    fn payload_info(&self) -> (usize, usize) {
        let Some(ip) = self.iph(ipv4::MIN_HEADER_LEN) else {
            return (0, self.p.len());
        };
        let ip_len = usize::from(ip.total_len());
        let toff = self
            .p
            .transport_offset()
            .map_or(self.nh_off + ip.header_len(), |t| t.max(0) as usize);
        let nlen = ip_len + self.nh_off;
        let mut off = toff;
        if ip.frag_offset() == 0 {
            let tlen = self.p.len().saturating_sub(toff);
            match ip.protocol() {
                PROTO_TCP => {
                    // Without the data offset, a header without options
                    // (as Click).
                    let thl = if tlen >= 13 {
                        let t = Captured::new(&self.p.data()[toff..]);
                        TcpHeader::new_unchecked(&t.bytes[..]).header_len()
                    } else {
                        tcp::MIN_HEADER_LEN
                    };
                    if off + thl <= nlen || ip_len == 0 {
                        off += thl;
                    }
                }
                PROTO_UDP | PROTO_UDPLITE if off + udp::HEADER_LEN <= nlen || ip_len == 0 => {
                    off += udp::HEADER_LEN
                }
                _ => {}
            }
        }
        (off, (ip_len + self.nh_off).saturating_sub(off))
    }

    /// The field's text, or `None` for `-`.
    pub fn field(&self, f: Field) -> Option<String> {
        let ts = self.p.timestamp_anno();
        Some(match f {
            Field::None => return None,
            // A negative time as Click writes it: `-0.900000`.
            Field::Timestamp => {
                if ts < Timestamp::default() {
                    format!("-{}", Timestamp::default() - ts)
                } else {
                    format!("{ts}")
                }
            }
            Field::TsSec => ts.sec().to_string(),
            Field::TsUsec => (ts.subsec_nanos() / 1000).to_string(),
            Field::TsUsec1 => (ts.sec() * 1_000_000 + ts.subsec_nanos() / 1000).to_string(),
            Field::FirstTimestamp => {
                let b = self.p.anno_bytes::<8>(anno::FIRST_TIMESTAMP);
                let t = Timestamp::from_sec_nsec(0, i64::from_ne_bytes(b));
                format!("{t}")
            }
            Field::IpSrc => self.iph(16)?.src().to_string(),
            Field::IpDst => self.iph(20)?.dst().to_string(),
            Field::IpTos => self.iph(2)?.tos().to_string(),
            Field::IpDscp => self.iph(2)?.dscp().to_string(),
            Field::IpEcn => match self.iph(2)?.ecn() {
                0 => "no",
                1 => "ect1",
                2 => "ect2",
                _ => "ce",
            }
            .to_string(),
            Field::IpTtl => self.iph(9)?.ttl().to_string(),
            Field::IpFrag => {
                let w = self.iph(8)?.frag_word();
                if w & (IP_MF | IP_OFFMASK) != 0 {
                    if w & IP_OFFMASK == 0 {
                        "F"
                    } else {
                        "f"
                    }
                } else if w & IP_DF != 0 {
                    "!"
                } else {
                    "."
                }
                .to_string()
            }
            Field::IpFragoff => {
                let h = self.iph(8)?;
                let mut s = h.frag_offset().to_string();
                if h.more_frags() {
                    s.push('+');
                }
                if h.dont_frag() {
                    s.push('!');
                }
                s
            }
            Field::IpId => self.iph(6)?.ident().to_string(),
            Field::IpSum => self.iph(12)?.checksum().to_string(),
            Field::IpProto => match self.proto()? {
                PROTO_TCP => "T".into(),
                PROTO_UDP => "U".into(),
                PROTO_ICMP => "I".into(),
                n => n.to_string(),
            },
            Field::IpHl => self.iph(1)?.header_len().to_string(),
            Field::IpLen => match self.iph(4) {
                Some(ip) => ip.total_len().to_string(),
                None => (self.p.len() as u64 + u64::from(self.extra_length())).to_string(),
            },
            Field::IpCaptureLen => match (self.iph(4), self.ip) {
                (Some(h), Some(ip)) => usize::from(h.total_len()).min(ip.len()).to_string(),
                _ => self.p.len().to_string(),
            },
            Field::IpOpt => {
                if self.iph(ipv4::MIN_HEADER_LEN)?.header_len() <= ipv4::MIN_HEADER_LEN {
                    ".".into()
                } else {
                    unparse_ip_opt(Ipv4Header::new_checked(self.ip?).ok()?.options())
                }
            }
            Field::Sport | Field::Dport => {
                if !has_ports(self.iph(ipv4::MIN_HEADER_LEN)?.protocol()) {
                    return None;
                }
                let need = if f == Field::Sport { 2 } else { 4 };
                // Every protocol with ports has them where UDP does.
                let ports = UdpHeader::new_unchecked(self.th_fixed.as_ref()?.upto(need)?);
                if f == Field::Sport {
                    ports.src_port().to_string()
                } else {
                    ports.dst_port().to_string()
                }
            }
            Field::TcpSeq => self.tcp(8)?.seq().to_string(),
            Field::TcpAck => self.tcp(12)?.ack().to_string(),
            Field::TcpFlags => unparse_tcp_flags(self.tcp(14)?.flags_with_ns()),
            Field::TcpWindow => self.tcp(16)?.window().to_string(),
            Field::TcpUrp => self.tcp(20)?.urgent().to_string(),
            Field::TcpOff => self.tcp(13)?.header_len().to_string(),
            Field::TcpOpt | Field::TcpNtopt | Field::TcpSack => {
                if self.tcp(13)?.header_len() <= tcp::MIN_HEADER_LEN {
                    return Some(".".into());
                }
                let t = TcpHeader::new_checked(self.th?).ok()?;
                let mask = match f {
                    Field::TcpOpt => TcpOptMask::All,
                    Field::TcpNtopt => TcpOptMask::NoTimestamp,
                    _ => TcpOptMask::Sack,
                };
                unparse_tcp_opt(t.options(), mask)
            }
            // Click's udp_len is UDP's only (not UDP-Lite's).
            Field::UdpLen => {
                if self.proto()? != PROTO_UDP {
                    return None;
                }
                self.udp(6)?.len().to_string()
            }
            Field::IcmpType => self.icmp(1)?.icmp_type().to_string(),
            Field::IcmpCode => self.icmp(2)?.code().to_string(),
            Field::IcmpTypeName => {
                let t = self.icmp(1)?.icmp_type();
                icmp_type_name(t).map_or_else(|| t.to_string(), str::to_string)
            }
            Field::IcmpCodeName => {
                let i = self.icmp(2)?;
                icmp_code_name(i.icmp_type(), i.code())
                    .map_or_else(|| i.code().to_string(), str::to_string)
            }
            Field::IcmpFlowid | Field::IcmpSeq => {
                if !icmp_has_flow(self.icmp(1)?.icmp_type()) {
                    return None;
                }
                if f == Field::IcmpFlowid {
                    self.icmp(6)?.ident().to_string()
                } else {
                    self.icmp(8)?.seq().to_string()
                }
            }
            Field::IcmpNextmtu => {
                let i = self.icmp(2)?;
                if i.icmp_type() != ICMP_UNREACH || i.code() != ICMP_UNREACH_NEEDFRAG {
                    return None;
                }
                self.icmp(8)?.next_hop_mtu().to_string()
            }
            Field::PayloadLen => {
                let (_, len) = self.payload_info();
                let mut len = len as u64;
                if self.ip.is_none() {
                    len += u64::from(self.extra_length());
                }
                len.to_string()
            }
            Field::Payload => {
                let (off, len) = self.payload_info();
                let d = self.p.data();
                let off = off.min(d.len());
                let end = (off + len).min(d.len());
                cp_quote(&d[off..end])
            }
            Field::PayloadMd5 | Field::PayloadMd5Hex => {
                let (off, len) = self.payload_info();
                let d = self.p.data();
                let off = off.min(d.len());
                // Only a payload wholly captured has a digest.
                if off + len > d.len() {
                    return None;
                }
                let end = off + len;
                let digest: [u8; 16] = md5::Md5::digest(&d[off..end]).into();
                if f == Field::PayloadMd5Hex {
                    digest.iter().map(|b| format!("{b:02x}")).collect()
                } else {
                    md5_text_digest(&digest)
                }
            }
            Field::Count => {
                let e = u32::from_ne_bytes(self.p.anno_bytes::<4>(anno::EXTRA_PACKETS));
                (u64::from(e) + 1).to_string()
            }
            Field::Link | Field::Paint => self.p.paint_anno().to_string(),
            Field::Direction => match self.p.paint_anno() {
                0 => ">".into(),
                1 => "<".into(),
                n => n.to_string(),
            },
            Field::Aggregate => {
                u32::from_ne_bytes(self.p.anno_bytes::<4>(anno::AGGREGATE)).to_string()
            }
        })
    }
}

/// Click's text form of an MD5 digest: 22 characters, each six bits of
/// the digest taken least significant bit first, from the alphabet
/// `a-z A-Z 0-9 _ @`.
pub fn md5_text_digest(digest: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@";
    let mut out = String::with_capacity(22);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in digest {
        acc |= u32::from(b) << bits;
        bits += 8;
        while bits >= 6 {
            out.push(char::from(ALPHABET[(acc & 63) as usize]));
            acc >>= 6;
            bits -= 6;
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[(acc & 63) as usize]));
    }
    out
}

/// One dump line (without the newline) for `p`.
pub fn format_line(p: &Packet, fields: &[Field]) -> String {
    let view = PacketView::new(p);
    let mut s = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        match view.field(*f) {
            Some(v) => s.push_str(&v),
            None => s.push('-'),
        }
    }
    s
}
