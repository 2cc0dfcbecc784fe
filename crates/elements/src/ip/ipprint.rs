//! # IPPrint
//!
//! Pretty-prints IP packets, tcpdump style.
//!
//! ## Synopsis
//! `IPPrint([LABEL, keywords CONTENTS, PAYLOAD, MAXLENGTH, ID, TTL, TOS, LENGTH, TIMESTAMP, AGGREGATE, PAINT, SWAP, ACTIVE])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IP packets with the network header set (CheckIPHeader or
//! MarkIPHeader upstream); packets without one pass silently. For each
//! packet prints one line (through the router's chatter, like Click's
//! `click_chatter`), in Click's format:
//!
//! `LABEL: TIMESTAMP: [#AGG][paint P: ][id I ][ttl T ][tos S ][length L ]BODY[ (frag ID:LEN@OFF[+])]`
//!
//! where BODY is, for TCP, `SRC.SPORT > DST.DPORT: FLAGS SEQ:END(SEQLEN,PKTLEN,IPLEN) [ack A] win W`
//! (flags from `S F R P`, or `.`); for UDP, `SRC.SPORT > DST.DPORT: udp ULEN`;
//! for ICMP, `SRC > DST: icmp echo (ID, SEQ)`, `icmp echo-reply (ID, SEQ)`,
//! `icmp DST unreachable CODE ...` or `icmp TYPENAME [CODENAME]`; otherwise
//! `SRC > DST: ip-proto-N`. Truncated headers print `truncated-tcp`,
//! `truncated-udp`, `truncated-icmp`, `truncated-ip`. With CONTENTS or
//! PAYLOAD, the packet (or payload) bytes follow in hex (groups of 4 bytes,
//! 24 bytes a line) or ASCII (groups of 8, 48 a line), each line starting
//! with a newline and two spaces.
//!
//! ## Keywords
//! - **LABEL** (string): printed first, followed by `: `.
//! - **CONTENTS** (`NONE`, `HEX`, `ASCII`, or bool): print packet data.
//!   Default NONE.
//! - **PAYLOAD** (`NO`, `HEX`, `ASCII`, or bool): print the transport
//!   payload instead. At most one of CONTENTS and PAYLOAD.
//! - **MAXLENGTH** (integer): maximum bytes of data to print; -1 for all.
//!   Default 1500. (NBYTES is an old name.)
//! - **ID**, **TTL**, **TOS**, **LENGTH** (bool): print those IP fields.
//!   Default false.
//! - **TIMESTAMP** (bool): print the timestamp annotation. Default true.
//! - **AGGREGATE**, **PAINT** (bool): print those annotations. Default
//!   false.
//! - **SWAP** (bool): byte-swap ICMP echo identifiers and sequence numbers
//!   before printing. Default true, as in Click's code.
//! - **ACTIVE** (bool): print at all. Default true.
//!
//! ## Handlers
//! - `active` (read/write): the ACTIVE setting.
//!
//! ## Example
//! ```click
//! ... -> CheckIPHeader -> IPPrint(in, TTL true) -> ...;
//! ```

use std::fmt::Write;

use rclick_core::conf::{parse_bool, parse_word, Args};
use rclick_core::element::{hflags, Observe};
use rclick_core::packet::anno;
use rclick_core::wire::icmp::{
    ICMP_ECHO, ICMP_ECHOREPLY, ICMP_UNREACH, ICMP_UNREACH_NEEDFRAG, ICMP_UNREACH_PORT,
    ICMP_UNREACH_PROTOCOL,
};
use rclick_core::wire::ipv4::{MIN_HEADER_LEN, PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::tcp::{TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN};
use rclick_core::wire::{IcmpHeader, Ipv4Header, TcpHeader, UdpHeader};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::ip_proto_name;
use super::icmperror::{icmp_code_name, icmp_type_name};
use super::ipcommon::net_off;

pub struct IPPrint {
    label: String,
    /// 0 none, 1 hex, 2 ascii.
    contents: u8,
    payload: bool,
    bytes: i64,
    print_id: bool,
    print_timestamp: bool,
    print_paint: bool,
    print_tos: bool,
    print_ttl: bool,
    print_len: bool,
    print_aggregate: bool,
    swap: bool,
    active: bool,
}

impl Default for IPPrint {
    fn default() -> Self {
        IPPrint {
            label: String::new(),
            contents: 0,
            payload: false,
            bytes: 1500,
            print_id: false,
            print_timestamp: true,
            print_paint: false,
            print_tos: false,
            print_ttl: false,
            print_len: false,
            print_aggregate: false,
            swap: true,
            active: true,
        }
    }
}

/// An IPv4 header of at least the fixed 20 bytes. Click prints whatever
/// the version and header length say, so the view is not checked further;
/// only the fixed fields are read.
type Ip<'a> = Ipv4Header<&'a [u8]>;

/// Tcpdump's `SRC > DST: ` for the transport's ports, or the
/// `SRC > DST: WHAT` line of a transport header too short to hold them (or
/// a later fragment, which has none).
fn ports_or_bare(sa: &mut String, ip: &Ip, t: &[u8], first: bool, what: &str) -> bool {
    let (src, dst) = (ip.src(), ip.dst());
    if t.len() < 4 || !first {
        let _ = write!(
            sa,
            "{src} > {dst}: {}{what}",
            if first { "truncated-" } else { "" }
        );
        return false;
    }
    // Both transports start with the two ports.
    let u = UdpHeader::new_unchecked(t);
    let _ = write!(sa, "{src}.{} > {dst}.{}: ", u.src_port(), u.dst_port());
    true
}

impl IPPrint {
    fn tcp_line(&self, sa: &mut String, ip: &Ip, t: &[u8], plen: usize, first: bool) {
        if !ports_or_bare(sa, ip, t, first, "tcp") {
            return;
        }
        if t.len() < 14 {
            sa.push_str("truncated-tcp");
            return;
        }
        // The fields up to the flags are there; the window may not be.
        let th = TcpHeader::new_unchecked(t);
        let ip_len = ip.total_len() as i64;
        let mut seqlen = ip_len - ip.header_len() as i64 - th.header_len() as i64;
        let flags = th.flags() as u16;
        if flags & TCP_SYN != 0 {
            sa.push('S');
            seqlen += 1;
        }
        if flags & TCP_FIN != 0 {
            sa.push('F');
            seqlen += 1;
        }
        if flags & TCP_RST != 0 {
            sa.push('R');
        }
        if flags & TCP_PSH != 0 {
            sa.push('P');
        }
        if flags & (TCP_SYN | TCP_FIN | TCP_RST | TCP_PSH) == 0 {
            sa.push('.');
        }
        let seq = th.seq();
        let _ = write!(
            sa,
            " {seq}:{}({seqlen},{plen},{ip_len})",
            seq.wrapping_add(seqlen as u32)
        );
        if flags & TCP_ACK != 0 {
            let _ = write!(sa, " ack {}", th.ack());
        }
        if t.len() < 16 {
            sa.push_str("truncated-tcp");
            return;
        }
        let _ = write!(sa, " win {}", th.window());
    }

    fn udp_line(&self, sa: &mut String, ip: &Ip, t: &[u8], first: bool) {
        if !ports_or_bare(sa, ip, t, first, "udp") {
            return;
        }
        match UdpHeader::new_checked(t) {
            Ok(u) => {
                let _ = write!(sa, "udp {}", u.len());
            }
            Err(_) => sa.push_str("truncated-udp"),
        }
    }

    fn icmp_line(&self, sa: &mut String, ip: &Ip, t: &[u8], first: bool) {
        let _ = write!(sa, "{} > {}: ", ip.src(), ip.dst());
        if !first {
            sa.push_str("icmp");
            return;
        }
        if t.len() < 2 {
            sa.push_str("truncated-icmp");
            return;
        }
        // Type and code are there; the rest is checked where it is read.
        let icmp = IcmpHeader::new_unchecked(t);
        let (ty, code) = (icmp.icmp_type(), icmp.code());
        match ty {
            ICMP_ECHOREPLY | ICMP_ECHO => {
                sa.push_str(if ty == ICMP_ECHOREPLY {
                    "icmp echo-reply "
                } else {
                    "icmp echo "
                });
                let Ok(icmp) = IcmpHeader::new_checked(t) else {
                    sa.push_str("truncated-icmp");
                    return;
                };
                // Click reads the fields in host order (little-endian)
                // and swaps them when SWAP is on.
                let f = |x: u16| if self.swap { x } else { x.swap_bytes() };
                let _ = write!(sa, "({}, {})", f(icmp.ident()), f(icmp.seq()));
            }
            ICMP_UNREACH => {
                let code_s = icmp_code_name(ty, code)
                    .map_or_else(|| format!("code {code}"), |s| s.to_string());
                let quoted = &t[t.len().min(8)..];
                if quoted.len() < MIN_HEADER_LEN {
                    let _ = write!(sa, "icmp unreachable {code_s} ");
                    sa.push_str("truncated-icmp");
                    return;
                }
                let e = Ipv4Header::new_unchecked(quoted);
                let _ = write!(sa, "icmp {} unreachable {code_s}", e.dst());
                match code {
                    ICMP_UNREACH_PROTOCOL => {
                        let _ = write!(sa, " {}", proto_str(e.protocol(), false));
                    }
                    ICMP_UNREACH_PORT => {
                        let _ = write!(sa, " {}", proto_str(e.protocol(), true));
                        match quoted.get(e.header_len()..).filter(|l4| l4.len() >= 4) {
                            Some(l4) => {
                                let _ = write!(sa, "/{}", UdpHeader::new_unchecked(l4).dst_port());
                            }
                            None => sa.push_str("truncated-icmp"),
                        }
                    }
                    ICMP_UNREACH_NEEDFRAG => {
                        let mtu = IcmpHeader::new_unchecked(t).next_hop_mtu();
                        if mtu != 0 {
                            let _ = write!(sa, " (mtu {mtu})");
                        }
                    }
                    _ => {}
                }
            }
            _ => {
                sa.push_str("icmp ");
                match icmp_type_name(ty) {
                    Some(n) => sa.push_str(n),
                    None => {
                        let _ = write!(sa, "type {ty}");
                    }
                }
                if let Some(c) = icmp_code_name(ty, code) {
                    let _ = write!(sa, " {c}");
                } else if code != 0 {
                    let _ = write!(sa, " code {code}");
                }
            }
        }
    }

    fn line(&self, p: &Packet) -> Option<String> {
        let off = net_off(p)?;
        let mut sa = String::with_capacity(128);
        if !self.label.is_empty() {
            let _ = write!(sa, "{}: ", self.label);
        }
        if self.print_timestamp {
            let _ = write!(sa, "{}: ", p.timestamp_anno());
        }
        if self.print_aggregate {
            let a: [u8; 4] = p.anno_bytes(anno::AGGREGATE);
            let _ = write!(sa, "#{}", u32::from_ne_bytes(a));
        }
        if self.print_paint {
            let _ = write!(
                sa,
                "{}{}",
                if self.print_aggregate { "." } else { "paint " },
                p.paint_anno()
            );
        }
        if self.print_aggregate || self.print_paint {
            sa.push_str(": ");
        }
        let bytes = &p.data()[off..];
        if bytes.len() < MIN_HEADER_LEN {
            sa.push_str("truncated-ip");
            return Some(sa);
        }
        let ip = Ipv4Header::new_unchecked(bytes);
        let ip_len = ip.total_len() as i64;
        let payload_len = ip_len - ip.header_len() as i64;
        let t: &[u8] = p.transport_header().unwrap_or(&[]);
        let tl = (t.len() as i64).min(payload_len.max(0)) as usize;
        let t = &t[..tl];
        let first = ip.frag_offset() == 0;
        if self.print_id {
            let _ = write!(sa, "id {} ", ip.ident());
        }
        if self.print_ttl {
            let _ = write!(sa, "ttl {} ", ip.ttl());
        }
        if self.print_tos {
            let _ = write!(sa, "tos {} ", ip.tos());
        }
        if self.print_len {
            let _ = write!(sa, "length {ip_len} ");
        }
        match ip.protocol() {
            PROTO_TCP => self.tcp_line(&mut sa, &ip, t, p.len(), first),
            PROTO_UDP => self.udp_line(&mut sa, &ip, t, first),
            PROTO_ICMP => self.icmp_line(&mut sa, &ip, t, first),
            n => {
                let _ = write!(sa, "{} > {}: ip-proto-{n}", ip.src(), ip.dst());
            }
        }
        if ip.is_fragment() {
            let _ = write!(
                sa,
                " (frag {}:{payload_len}@{}{})",
                ip.ident(),
                ip.frag_offset(),
                if ip.more_frags() { "+" } else { "" }
            );
        }
        if self.contents > 0 {
            self.dump(&mut sa, p, &ip, first);
        }
        Some(sa)
    }

    fn dump(&self, sa: &mut String, p: &Packet, ip: &Ip, first: bool) {
        let data: &[u8] = if self.payload {
            let t = p.transport_header().unwrap_or(&[]);
            let skip = match ip.protocol() {
                // Click trusts the data offset once its byte is there.
                PROTO_TCP if first && t.len() > 12 => TcpHeader::new_unchecked(t).header_len(),
                PROTO_TCP if first => t.len(),
                PROTO_UDP if first => 8,
                _ => 0,
            };
            t.get(skip..).unwrap_or(&[])
        } else {
            p.data()
        };
        let n = if self.bytes < 0 {
            data.len()
        } else {
            data.len().min(self.bytes as usize)
        };
        for (i, b) in data[..n].iter().enumerate() {
            if self.contents == 1 {
                if i % 24 == 0 {
                    sa.push_str("\n  ");
                } else if i % 4 == 0 {
                    sa.push(' ');
                }
                let _ = write!(sa, "{b:02x}");
            } else {
                if i % 48 == 0 {
                    sa.push_str("\n  ");
                } else if i % 8 == 0 {
                    sa.push(' ');
                }
                sa.push(if (32..=126).contains(b) {
                    *b as char
                } else {
                    '.'
                });
            }
        }
    }
}

fn proto_str(p: u8, prepend: bool) -> String {
    match ip_proto_name(p) {
        Some(n) => n.to_string(),
        None if prepend => format!("protocol {p}"),
        None => p.to_string(),
    }
}

impl Observe for IPPrint {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        if self.active {
            if let Some(line) = self.line(p) {
                ctx.chatter(&line);
            }
        }
    }
}

const HANDLERS: &[Handler<IPPrint>] = &[Handler::flagged(
    hflags::CHECKBOX,
    Handler::data_rw("active", |e| &e.active, |e| &mut e.active),
)];

fn parse_contents(s: &str) -> Result<u8, String> {
    if let Ok(b) = parse_bool(s) {
        return Ok(b as u8);
    }
    match s.to_ascii_uppercase().as_str() {
        "NONE" => Ok(0),
        "HEX" => Ok(1),
        "ASCII" => Ok(2),
        _ => Err(format!(
            "bad contents value '{s}'; should be 'NONE', 'HEX', or 'ASCII'"
        )),
    }
}

fn parse_payload(s: &str) -> Result<u8, String> {
    match s.to_ascii_uppercase().as_str() {
        "NO" | "FALSE" => Ok(0),
        "YES" | "TRUE" | "HEX" => Ok(1),
        "ASCII" => Ok(2),
        _ => Err(format!(
            "bad payload value '{s}'; should be 'false', 'hex', or 'ascii'"
        )),
    }
}

rclick_core::element_class!(IPPrint);

impl Element for IPPrint {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let label: Option<String> = args.read_p("LABEL");
        let contents = args.read_with("CONTENTS", |s| {
            parse_word(s).and_then(|w| parse_contents(&w))
        });
        let payload = args.read_with("PAYLOAD", |s| parse_word(s).and_then(|w| parse_payload(&w)));
        let mut bytes: i64 = args.read_or("MAXLENGTH", 1500);
        if let Some(b) = args.read::<i64>("NBYTES") {
            bytes = b;
        }
        let mut e = IPPrint {
            label: label.unwrap_or_default(),
            bytes,
            print_id: args.read_or("ID", false),
            print_timestamp: args.read_or("TIMESTAMP", true),
            print_paint: args.read_or("PAINT", false),
            print_tos: args.read_or("TOS", false),
            print_ttl: args.read_or("TTL", false),
            swap: args.read_or("SWAP", true),
            print_len: args.read_or("LENGTH", false),
            print_aggregate: args.read_or("AGGREGATE", false),
            active: args.read_or("ACTIVE", true),
            ..Default::default()
        };
        let _channel = args.read_with("CHANNEL", parse_word);
        args.complete()?;
        let contents = contents.unwrap_or(0);
        let payload = payload.unwrap_or(0);
        if payload > 0 && contents > 0 {
            return Err("specify at most one of PAYLOAD and CONTENTS".into());
        } else if payload > 0 {
            e.contents = payload;
            e.payload = true;
        } else {
            e.contents = contents;
        }
        *self = e;
        Ok(())
    }

    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);
}
