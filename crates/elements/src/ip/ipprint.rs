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
use std::net::Ipv4Addr;

use rclick_core::conf::{parse_bool, parse_word, Args};
use rclick_core::element::{hflags, HandlerSpec};
use rclick_core::packet::anno;
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::ip_proto_name;
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

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn addr(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

fn icmp_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "echo-reply",
        3 => "unreachable",
        4 => "sourcequench",
        5 => "redirect",
        8 => "echo",
        9 => "routeradvert",
        10 => "routersolicit",
        11 => "timeexceeded",
        12 => "parameterproblem",
        13 => "timestamp",
        14 => "timestamp-reply",
        15 => "inforeq",
        16 => "inforeq-reply",
        17 => "maskreq",
        18 => "maskreq-reply",
        _ => return None,
    })
}

fn icmp_code_name(t: u8, c: u8) -> Option<&'static str> {
    Some(match (t, c) {
        (3, 0) => "net",
        (3, 1) => "host",
        (3, 2) => "protocol",
        (3, 3) => "port",
        (3, 4) => "needfrag",
        (3, 5) => "srcroutefail",
        (3, 6) => "netunknown",
        (3, 7) => "hostunknown",
        (3, 8) => "isolated",
        (3, 9) => "netprohibited",
        (3, 10) => "hostprohibited",
        (3, 11) => "tosnet",
        (3, 12) => "toshost",
        (3, 13) => "filterprohibited",
        (3, 14) => "hostprecedence",
        (3, 15) => "precedencecutoff",
        (5, 0) => "net",
        (5, 1) => "host",
        (5, 2) => "tosnet",
        (5, 3) => "toshost",
        (11, 0) => "transit",
        (11, 1) => "reassembly",
        (12, 0) => "erroratptr",
        (12, 1) => "missingopt",
        (12, 2) => "length",
        _ => return None,
    })
}

impl IPPrint {
    fn tcp_line(&self, sa: &mut String, ip: &[u8], t: &[u8], plen: usize, first: bool) {
        let (src, dst) = (addr(ip, 12), addr(ip, 16));
        if t.len() < 4 || !first {
            let _ = write!(
                sa,
                "{src} > {dst}: {}",
                if first { "truncated-tcp" } else { "tcp" }
            );
            return;
        }
        let _ = write!(sa, "{src}.{} > {dst}.{}: ", be16(t, 0), be16(t, 2));
        if t.len() < 14 {
            sa.push_str("truncated-tcp");
            return;
        }
        let ip_len = be16(ip, 2) as i64;
        let hl = ((ip[0] & 0x0f) as i64) * 4;
        let off = ((t[12] >> 4) as i64) * 4;
        let mut seqlen = ip_len - hl - off;
        let flags = t[13];
        if flags & 0x02 != 0 {
            sa.push('S');
            seqlen += 1;
        }
        if flags & 0x01 != 0 {
            sa.push('F');
            seqlen += 1;
        }
        if flags & 0x04 != 0 {
            sa.push('R');
        }
        if flags & 0x08 != 0 {
            sa.push('P');
        }
        if flags & 0x0f == 0 {
            sa.push('.');
        }
        let seq = be32(t, 4);
        let _ = write!(
            sa,
            " {seq}:{}({seqlen},{plen},{ip_len})",
            seq.wrapping_add(seqlen as u32)
        );
        if flags & 0x10 != 0 {
            let _ = write!(sa, " ack {}", be32(t, 8));
        }
        if t.len() < 16 {
            sa.push_str("truncated-tcp");
            return;
        }
        let _ = write!(sa, " win {}", be16(t, 14));
    }

    fn udp_line(&self, sa: &mut String, ip: &[u8], t: &[u8], first: bool) {
        let (src, dst) = (addr(ip, 12), addr(ip, 16));
        if t.len() < 4 || !first {
            let _ = write!(
                sa,
                "{src} > {dst}: {}",
                if first { "truncated-udp" } else { "udp" }
            );
            return;
        }
        let _ = write!(sa, "{src}.{} > {dst}.{}: ", be16(t, 0), be16(t, 2));
        if t.len() < 8 {
            sa.push_str("truncated-udp");
            return;
        }
        let _ = write!(sa, "udp {}", be16(t, 4));
    }

    fn icmp_line(&self, sa: &mut String, ip: &[u8], t: &[u8], first: bool) {
        let _ = write!(sa, "{} > {}: ", addr(ip, 12), addr(ip, 16));
        if !first {
            sa.push_str("icmp");
            return;
        }
        if t.len() < 2 {
            sa.push_str("truncated-icmp");
            return;
        }
        let (ty, code) = (t[0], t[1]);
        match ty {
            0 | 8 => {
                sa.push_str(if ty == 0 {
                    "icmp echo-reply "
                } else {
                    "icmp echo "
                });
                if t.len() < 8 {
                    sa.push_str("truncated-icmp");
                    return;
                }
                // Click reads the fields in host order (little-endian)
                // and swaps them when SWAP is on.
                let (id_le, seq_le) = (
                    u16::from_le_bytes([t[4], t[5]]),
                    u16::from_le_bytes([t[6], t[7]]),
                );
                let f = |x: u16| if self.swap { x.swap_bytes() } else { x };
                let _ = write!(sa, "({}, {})", f(id_le), f(seq_le));
            }
            3 => {
                let code_s = icmp_code_name(3, code)
                    .map_or_else(|| format!("code {code}"), |s| s.to_string());
                let e = &t[t.len().min(8)..];
                if e.len() < 20 {
                    let _ = write!(sa, "icmp unreachable {code_s} ");
                    sa.push_str("truncated-icmp");
                    return;
                }
                let ehl = ((e[0] & 0x0f) as usize) * 4;
                let _ = write!(sa, "icmp {} unreachable {code_s}", addr(e, 16));
                match code {
                    2 => {
                        let _ = write!(sa, " {}", proto_str(e[9], false));
                    }
                    3 => {
                        let _ = write!(sa, " {}", proto_str(e[9], true));
                        if e.len() < ehl + 4 {
                            sa.push_str("truncated-icmp");
                            return;
                        }
                        let _ = write!(sa, "/{}", be16(e, ehl + 2));
                    }
                    4 => {
                        let mtu = be16(t, 6);
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
        let ip = &p.data()[off..];
        if ip.len() < 20 {
            sa.push_str("truncated-ip");
        } else {
            let ip_len = be16(ip, 2) as i64;
            let hl = ((ip[0] & 0x0f) as i64) * 4;
            let payload_len = ip_len - hl;
            let t: &[u8] = p.transport_header().unwrap_or(&[]);
            let tl = (t.len() as i64).min(payload_len.max(0)) as usize;
            let t = &t[..tl];
            let fw = be16(ip, 6);
            let first = fw & 0x1fff == 0;
            if self.print_id {
                let _ = write!(sa, "id {} ", be16(ip, 4));
            }
            if self.print_ttl {
                let _ = write!(sa, "ttl {} ", ip[8]);
            }
            if self.print_tos {
                let _ = write!(sa, "tos {} ", ip[1]);
            }
            if self.print_len {
                let _ = write!(sa, "length {ip_len} ");
            }
            match ip[9] {
                PROTO_TCP => self.tcp_line(&mut sa, ip, t, p.len(), first),
                PROTO_UDP => self.udp_line(&mut sa, ip, t, first),
                PROTO_ICMP => self.icmp_line(&mut sa, ip, t, first),
                n => {
                    let _ = write!(sa, "{} > {}: ip-proto-{n}", addr(ip, 12), addr(ip, 16));
                }
            }
            if fw & 0x3fff != 0 {
                let _ = write!(
                    sa,
                    " (frag {}:{payload_len}@{}{})",
                    be16(ip, 4),
                    ((fw & 0x1fff) as u32) << 3,
                    if fw & 0x2000 != 0 { "+" } else { "" }
                );
            }
            if self.contents > 0 {
                self.dump(&mut sa, p, ip, first);
            }
        }
        Some(sa)
    }

    fn dump(&self, sa: &mut String, p: &Packet, ip: &[u8], first: bool) {
        let data: &[u8] = if self.payload {
            let t = p.transport_header().unwrap_or(&[]);
            let skip = match ip[9] {
                PROTO_TCP if first => t.get(12).map_or(t.len(), |b| ((b >> 4) as usize) * 4),
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

impl SimpleAction for IPPrint {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        if self.active {
            if let Some(line) = self.line(&p) {
                ctx.chatter(&line);
            }
        }
        Some(p)
    }
}

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

    rclick_core::element_kind!(action);

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![HandlerSpec::read_write("active").with(hflags::CHECKBOX)]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "active" => Ok(self.active.to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "active" => {
                self.active = parse_bool(value.trim())?;
                Ok(())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }
}
