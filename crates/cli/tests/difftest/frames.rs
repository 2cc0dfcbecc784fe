//! The frame language of `%pcap` sections and its pcap writer.
//!
//! A frame line is `[time=S.U] [repeat=N] [trunc=N] LAYER / LAYER / ...`;
//! each layer is a keyword and `key=value` fields. Lengths and checksums
//! are computed unless given. See tests/diff/README.md.

use std::collections::HashMap;

/// A parsed layer: keyword, its fields (in order) and bare flags.
#[derive(Debug, Clone)]
pub struct Layer {
    pub kind: String,
    pub fields: HashMap<String, String>,
    /// The payload of `data`, `hex` and `zeros`.
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct Frame {
    /// (seconds, microseconds) when given.
    pub time: Option<(u32, u32)>,
    pub repeat: u32,
    pub trunc: Option<usize>,
    pub layers: Vec<Layer>,
}

/// One pcap record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub sec: u32,
    /// Nanoseconds (files with microsecond stamps are scaled).
    pub nsec: u32,
    pub wire_len: u32,
    pub data: Vec<u8>,
}

const LAYER_FIELDS: &[(&str, &[&str])] = &[
    ("ether", &["src", "dst", "type"]),
    ("vlan", &["id", "pcp", "dei", "type"]),
    (
        "arp",
        &[
            "op", "sha", "spa", "tha", "tpa", "htype", "ptype", "hlen", "plen",
        ],
    ),
    (
        "ipv4",
        &[
            "src", "dst", "ttl", "proto", "id", "tos", "df", "mf", "rf", "off", "hl", "len",
            "csum", "opts", "v",
        ],
    ),
    (
        "ipv6",
        &["src", "dst", "hlim", "nh", "len", "tc", "flow", "v"],
    ),
    ("udp", &["sport", "dport", "len", "csum"]),
    (
        "tcp",
        &[
            "sport", "dport", "seq", "ack", "flags", "off", "win", "csum", "urp", "opts",
        ],
    ),
    ("icmp", &["type", "code", "id", "seq", "csum"]),
    ("icmp6", &["type", "code", "id", "seq", "csum"]),
];

const FLAGS: &[&str] = &["df", "mf", "rf"];

pub fn parse_frame(line: &str) -> Result<Frame, String> {
    // Layers are separated by a `/` word; quoted "/" is data.
    let mut frame = Frame {
        time: None,
        repeat: 1,
        trunc: None,
        layers: Vec::new(),
    };
    let raw = raw_words(line)?;
    let mut groups: Vec<Vec<(String, bool)>> = vec![Vec::new()];
    for (w, quoted) in raw {
        if w == "/" && !quoted {
            groups.push(Vec::new());
        } else {
            groups.last_mut().unwrap().push((w, quoted));
        }
    }
    for (gi, g) in groups.into_iter().enumerate() {
        let mut it = g.into_iter().peekable();
        if gi == 0 {
            // frame-level fields
            while let Some((w, false)) = it.peek() {
                let Some((k, v)) = w.split_once('=') else {
                    break;
                };
                match k {
                    "time" => {
                        let (s, u) = v.split_once('.').unwrap_or((v, "0"));
                        let sec = s.parse().map_err(|_| format!("bad time '{v}'"))?;
                        if u.len() > 6 {
                            return Err(format!("time '{v}': at most 6 decimals"));
                        }
                        let usec: u32 = format!("{u:0<6}")
                            .parse()
                            .map_err(|_| format!("bad time '{v}'"))?;
                        frame.time = Some((sec, usec));
                    }
                    "repeat" => {
                        frame.repeat = v.parse().map_err(|_| format!("bad repeat '{v}'"))?
                    }
                    "trunc" => {
                        frame.trunc = Some(v.parse().map_err(|_| format!("bad trunc '{v}'"))?)
                    }
                    _ => return Err(format!("unknown frame field '{k}'")),
                }
                it.next();
            }
        }
        let Some((kind, _)) = it.next() else {
            if gi == 0 {
                return Err("frame has no layers".into());
            }
            return Err("empty layer between '/'".into());
        };
        let mut layer = Layer {
            kind: kind.clone(),
            fields: HashMap::new(),
            payload: Vec::new(),
        };
        match kind.as_str() {
            "data" => {
                for (w, _) in it {
                    layer.payload.extend(unescape(&w)?);
                }
            }
            "hex" => {
                for (w, _) in it {
                    layer.payload.extend(hex(&w)?);
                }
            }
            "zeros" => {
                let n: Vec<_> = it.collect();
                if n.len() != 1 {
                    return Err("zeros N".into());
                }
                let c: usize = n[0].0.parse().map_err(|_| "zeros N".to_string())?;
                layer.payload = vec![0; c];
            }
            k => {
                let Some((_, allowed)) = LAYER_FIELDS.iter().find(|(n, _)| *n == k) else {
                    return Err(format!("unknown layer '{k}'"));
                };
                for (w, _) in it {
                    let (key, val) = match w.split_once('=') {
                        Some((a, b)) => (a.to_string(), b.to_string()),
                        None if FLAGS.contains(&w.as_str()) => (w.clone(), "1".to_string()),
                        None => return Err(format!("{k}: '{w}' is not key=value")),
                    };
                    if !allowed.contains(&key.as_str()) {
                        return Err(format!(
                            "{k}: unknown field '{key}' (fields: {})",
                            allowed.join(" ")
                        ));
                    }
                    layer.fields.insert(key, val);
                }
            }
        }
        frame.layers.push(layer);
    }
    // Check values by encoding once.
    encode(&frame)?;
    Ok(frame)
}

/// Words of a line with a flag saying whether they were quoted; a quoted
/// word keeps its escapes (decoded by `unescape`).
fn raw_words(s: &str) -> Result<Vec<(String, bool)>, String> {
    Ok(split_keep_quotes(s)?
        .into_iter()
        .map(
            |part| match part.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
                Some(inner) if part.len() >= 2 => (inner.to_string(), true),
                _ => (part, false),
            },
        )
        .collect())
}

fn split_keep_quotes(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            cur.push('"');
            loop {
                match chars.next() {
                    None => return Err("unterminated quote".into()),
                    Some('"') => {
                        cur.push('"');
                        break;
                    }
                    Some('\\') => {
                        cur.push('\\');
                        cur.push(chars.next().ok_or("unterminated quote")?);
                    }
                    Some(o) => cur.push(o),
                }
            }
        } else if c.is_whitespace() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// `data` text (quotes removed): `\n`, `\r`, `\t`, `\0`, `\"`, `\\`
/// and `\xHH` escapes are decoded.
fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'0' => out.push(0),
                b'x' if i + 3 < b.len() => {
                    let h = std::str::from_utf8(&b[i + 2..i + 4]).map_err(|e| e.to_string())?;
                    out.push(u8::from_str_radix(h, 16).map_err(|_| format!("bad \\x{h}"))?);
                    i += 4;
                    continue;
                }
                o => out.push(o),
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

pub fn hex(s: &str) -> Result<Vec<u8>, String> {
    let s: String = s
        .trim_start_matches("0x")
        .chars()
        .filter(|c| *c != ':' && *c != '_' && *c != '.')
        .collect();
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex '{s}'"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("bad hex '{s}'")))
        .collect()
}

fn num(v: &str) -> Result<u64, String> {
    let r = if let Some(h) = v.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else {
        v.parse()
    };
    r.map_err(|_| format!("bad number '{v}'"))
}

fn mac(v: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = v.split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("bad MAC '{v}'"));
    }
    let mut m = [0; 6];
    for (i, p) in parts.iter().enumerate() {
        m[i] = u8::from_str_radix(p, 16).map_err(|_| format!("bad MAC '{v}'"))?;
    }
    Ok(m)
}

fn ip4(v: &str) -> Result<[u8; 4], String> {
    v.parse::<std::net::Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("bad IPv4 address '{v}'"))
}

fn ip6(v: &str) -> Result<[u8; 16], String> {
    v.parse::<std::net::Ipv6Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("bad IPv6 address '{v}'"))
}

struct F<'a>(&'a Layer);

impl F<'_> {
    fn get(&self, k: &str) -> Option<&str> {
        self.0.fields.get(k).map(String::as_str)
    }
    fn n(&self, k: &str, default: u64, max: u64) -> Result<u64, String> {
        match self.get(k) {
            None => Ok(default),
            Some(v) => {
                let x = num(v)?;
                if x > max {
                    return Err(format!("{}: {k}={v} is out of range", self.0.kind));
                }
                Ok(x)
            }
        }
    }
    fn opt_n(&self, k: &str, max: u64) -> Result<Option<u64>, String> {
        self.get(k).map(|_| self.n(k, 0, max)).transpose()
    }
    fn flag(&self, k: &str) -> bool {
        self.get(k).is_some_and(|v| v != "0")
    }
    fn opts(&self) -> Result<Vec<u8>, String> {
        self.get("opts").map(hex).unwrap_or(Ok(Vec::new()))
    }
}

pub fn csum_add(mut s: u32, b: &[u8]) -> u32 {
    for c in b.chunks(2) {
        s += (u32::from(c[0]) << 8) | u32::from(*c.get(1).unwrap_or(&0));
    }
    s
}

pub fn csum_fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The pseudo-header sum for a transport layer inside `ip`.
fn pseudo(ip: Option<&Layer>, proto: u8, len: usize) -> Result<u32, String> {
    let Some(ip) = ip else { return Ok(0) };
    let f = F(ip);
    let mut s = 0;
    if ip.kind == "ipv4" {
        s = csum_add(s, &ip4(f.get("src").unwrap_or("10.0.0.1"))?);
        s = csum_add(s, &ip4(f.get("dst").unwrap_or("10.0.0.2"))?);
    } else {
        s = csum_add(s, &ip6(f.get("src").unwrap_or("fe80::1"))?);
        s = csum_add(s, &ip6(f.get("dst").unwrap_or("fe80::2"))?);
    }
    Ok(s + u32::from(proto) + len as u32)
}

fn next_type(next: Option<&Layer>, table: &[(&str, u64)], default: u64) -> u64 {
    next.and_then(|l| table.iter().find(|(k, _)| *k == l.kind).map(|(_, v)| *v))
        .unwrap_or(default)
}

/// The bytes of a frame (before truncation).
pub fn encode(frame: &Frame) -> Result<Vec<u8>, String> {
    let ls = &frame.layers;
    let mut payload: Vec<u8> = Vec::new();
    for i in (0..ls.len()).rev() {
        let l = &ls[i];
        let f = F(l);
        let next = ls.get(i + 1);
        let ip_before = ls[..i]
            .iter()
            .rev()
            .find(|x| x.kind == "ipv4" || x.kind == "ipv6");
        let mut h: Vec<u8> = Vec::new();
        match l.kind.as_str() {
            "data" | "hex" | "zeros" => h.extend_from_slice(&l.payload),
            "ether" => {
                h.extend(mac(f.get("dst").unwrap_or("00:0a:0b:0c:0d:0e"))?);
                h.extend(mac(f.get("src").unwrap_or("00:01:02:03:04:05"))?);
                let t = ETHERTYPES;
                let ty = f.n("type", next_type(next, t, 0x0800), 0xffff)?;
                h.extend((ty as u16).to_be_bytes());
            }
            "vlan" => {
                let tci =
                    (f.n("pcp", 0, 7)? << 13) | (f.n("dei", 0, 1)? << 12) | f.n("id", 1, 4095)?;
                h.extend((tci as u16).to_be_bytes());
                let ty = f.n("type", next_type(next, ETHERTYPES, 0x0800), 0xffff)?;
                h.extend((ty as u16).to_be_bytes());
            }
            "arp" => {
                h.extend((f.n("htype", 1, 0xffff)? as u16).to_be_bytes());
                h.extend((f.n("ptype", 0x0800, 0xffff)? as u16).to_be_bytes());
                h.push(f.n("hlen", 6, 255)? as u8);
                h.push(f.n("plen", 4, 255)? as u8);
                h.extend((f.n("op", 1, 0xffff)? as u16).to_be_bytes());
                h.extend(mac(f.get("sha").unwrap_or("00:01:02:03:04:05"))?);
                h.extend(ip4(f.get("spa").unwrap_or("10.0.0.1"))?);
                h.extend(mac(f.get("tha").unwrap_or("00:00:00:00:00:00"))?);
                h.extend(ip4(f.get("tpa").unwrap_or("10.0.0.2"))?);
            }
            "ipv4" => {
                let mut opts = f.opts()?;
                while !opts.len().is_multiple_of(4) {
                    opts.push(0);
                }
                let hl = f.n("hl", 5 + opts.len() as u64 / 4, 15)?;
                let hlen = 20 + opts.len();
                let total = f.n("len", (hlen + payload.len()) as u64, 0xffff)?;
                let proto = f.n(
                    "proto",
                    next_type(
                        next,
                        &[
                            ("udp", 17),
                            ("tcp", 6),
                            ("icmp", 1),
                            ("ipv4", 4),
                            ("ipv6", 41),
                            ("icmp6", 58),
                        ],
                        255,
                    ),
                    255,
                )?;
                let frag = (u64::from(f.flag("rf")) << 15)
                    | (u64::from(f.flag("df")) << 14)
                    | (u64::from(f.flag("mf")) << 13)
                    | f.n("off", 0, 0x1fff)?;
                h.push(((f.n("v", 4, 15)? << 4) | hl) as u8);
                h.push(f.n("tos", 0, 255)? as u8);
                h.extend((total as u16).to_be_bytes());
                h.extend((f.n("id", 0, 0xffff)? as u16).to_be_bytes());
                h.extend((frag as u16).to_be_bytes());
                h.push(f.n("ttl", 64, 255)? as u8);
                h.push(proto as u8);
                h.extend([0, 0]);
                h.extend(ip4(f.get("src").unwrap_or("10.0.0.1"))?);
                h.extend(ip4(f.get("dst").unwrap_or("10.0.0.2"))?);
                h.extend(&opts);
                let c = match f.opt_n("csum", 0xffff)? {
                    Some(c) => c as u16,
                    None => csum_fold(csum_add(0, &h)),
                };
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            "ipv6" => {
                let nh = f.n(
                    "nh",
                    next_type(
                        next,
                        &[
                            ("udp", 17),
                            ("tcp", 6),
                            ("icmp6", 58),
                            ("ipv4", 4),
                            ("ipv6", 41),
                            ("icmp", 1),
                        ],
                        59,
                    ),
                    255,
                )?;
                let word = (f.n("v", 6, 15)? << 28)
                    | (f.n("tc", 0, 255)? << 20)
                    | f.n("flow", 0, 0xfffff)?;
                h.extend((word as u32).to_be_bytes());
                h.extend((f.n("len", payload.len() as u64, 0xffff)? as u16).to_be_bytes());
                h.push(nh as u8);
                h.push(f.n("hlim", 64, 255)? as u8);
                h.extend(ip6(f.get("src").unwrap_or("fe80::1"))?);
                h.extend(ip6(f.get("dst").unwrap_or("fe80::2"))?);
            }
            "udp" => {
                let len = f.n("len", 8 + payload.len() as u64, 0xffff)?;
                h.extend((f.n("sport", 1234, 0xffff)? as u16).to_be_bytes());
                h.extend((f.n("dport", 53, 0xffff)? as u16).to_be_bytes());
                h.extend((len as u16).to_be_bytes());
                h.extend([0, 0]);
                let c = match f.opt_n("csum", 0xffff)? {
                    Some(c) => c as u16,
                    None => {
                        let mut s = pseudo(ip_before, 17, len as usize)?;
                        s = csum_add(s, &h);
                        s = csum_add(s, &payload);
                        match csum_fold(s) {
                            0 => 0xffff,
                            c => c,
                        }
                    }
                };
                h[6..8].copy_from_slice(&c.to_be_bytes());
            }
            "tcp" => {
                let mut opts = f.opts()?;
                while !opts.len().is_multiple_of(4) {
                    opts.push(0);
                }
                let off = f.n("off", 5 + opts.len() as u64 / 4, 15)?;
                let mut flags = 0u8;
                for c in f.get("flags").unwrap_or("A").chars() {
                    flags |= match c {
                        'F' => 0x01,
                        'S' => 0x02,
                        'R' => 0x04,
                        'P' => 0x08,
                        'A' => 0x10,
                        'U' => 0x20,
                        'E' => 0x40,
                        'C' => 0x80,
                        '.' | '0' => 0,
                        o => return Err(format!("tcp: unknown flag '{o}' (FSRPAUEC)")),
                    };
                }
                h.extend((f.n("sport", 1234, 0xffff)? as u16).to_be_bytes());
                h.extend((f.n("dport", 80, 0xffff)? as u16).to_be_bytes());
                h.extend((f.n("seq", 1, u32::MAX as u64)? as u32).to_be_bytes());
                h.extend((f.n("ack", 0, u32::MAX as u64)? as u32).to_be_bytes());
                h.push((off << 4) as u8);
                h.push(flags);
                h.extend((f.n("win", 65535, 0xffff)? as u16).to_be_bytes());
                h.extend([0, 0]);
                h.extend((f.n("urp", 0, 0xffff)? as u16).to_be_bytes());
                h.extend(&opts);
                let c = match f.opt_n("csum", 0xffff)? {
                    Some(c) => c as u16,
                    None => {
                        let mut s = pseudo(ip_before, 6, h.len() + payload.len())?;
                        s = csum_add(s, &h);
                        s = csum_add(s, &payload);
                        csum_fold(s)
                    }
                };
                h[16..18].copy_from_slice(&c.to_be_bytes());
            }
            "icmp" | "icmp6" => {
                h.push(f.n("type", if l.kind == "icmp" { 8 } else { 128 }, 255)? as u8);
                h.push(f.n("code", 0, 255)? as u8);
                h.extend([0, 0]);
                h.extend((f.n("id", 0, 0xffff)? as u16).to_be_bytes());
                h.extend((f.n("seq", 0, 0xffff)? as u16).to_be_bytes());
                let c = match f.opt_n("csum", 0xffff)? {
                    Some(c) => c as u16,
                    None => {
                        let mut s = if l.kind == "icmp6" {
                            pseudo(ip_before, 58, h.len() + payload.len())?
                        } else {
                            0
                        };
                        s = csum_add(s, &h);
                        s = csum_add(s, &payload);
                        csum_fold(s)
                    }
                };
                h[2..4].copy_from_slice(&c.to_be_bytes());
            }
            k => return Err(format!("unknown layer '{k}'")),
        }
        h.extend_from_slice(&payload);
        payload = h;
    }
    Ok(payload)
}

const ETHERTYPES: &[(&str, u64)] = &[
    ("ipv4", 0x0800),
    ("ipv6", 0x86dd),
    ("arp", 0x0806),
    ("vlan", 0x8100),
];

/// The records of `lines`: frames without `time=` follow the previous
/// record by 1 ms (the first at 1000.000000); `repeat=N` writes N copies
/// 1 ms apart.
pub fn records(lines: &[(usize, String)]) -> Result<Vec<Record>, String> {
    let mut out = Vec::new();
    let mut next: (u32, u32) = (1000, 0);
    for (n, line) in lines {
        let fr = parse_frame(line).map_err(|e| format!("line {n}: {e}"))?;
        let bytes = encode(&fr).map_err(|e| format!("line {n}: {e}"))?;
        let mut t = fr.time.unwrap_or(next);
        for _ in 0..fr.repeat {
            let cap = fr.trunc.map_or(bytes.len(), |c| c.min(bytes.len()));
            out.push(Record {
                sec: t.0,
                nsec: t.1 * 1000,
                wire_len: bytes.len() as u32,
                data: bytes[..cap].to_vec(),
            });
            t = step(t);
        }
        next = t;
    }
    Ok(out)
}

fn step((s, u): (u32, u32)) -> (u32, u32) {
    if u + 1000 >= 1_000_000 {
        (s + 1, u + 1000 - 1_000_000)
    } else {
        (s, u + 1000)
    }
}

/// A little-endian microsecond pcap file.
pub fn pcap_bytes(linktype: u32, snaplen: u32, recs: &[Record]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0xa1b2c3d4u32.to_le_bytes());
    b.extend(2u16.to_le_bytes());
    b.extend(4u16.to_le_bytes());
    b.extend([0; 8]);
    b.extend(snaplen.to_le_bytes());
    b.extend(linktype.to_le_bytes());
    for r in recs {
        b.extend(r.sec.to_le_bytes());
        b.extend((r.nsec / 1000).to_le_bytes());
        b.extend((r.data.len() as u32).to_le_bytes());
        b.extend(r.wire_len.to_le_bytes());
        b.extend(&r.data);
    }
    b
}

/// A pcap file's header (linktype, snaplen) and records, in either byte
/// order, micro- or nanosecond timestamps (both read as nanoseconds;
/// `nano` says which the file holds).
#[derive(Debug)]
pub struct Pcap {
    pub linktype: u32,
    pub snaplen: u32,
    pub nano: bool,
    pub records: Vec<Record>,
    /// Bytes after the last whole record (a truncated file).
    pub trailing: usize,
}

pub fn read_pcap(b: &[u8]) -> Option<Pcap> {
    if b.len() < 24 {
        return None;
    }
    let magic = u32::from_le_bytes(b[0..4].try_into().ok()?);
    let (le, nano) = match magic {
        0xa1b2c3d4 => (true, false),
        0xa1b23c4d => (true, true),
        0xd4c3b2a1 => (false, false),
        0x4d3cb2a1 => (false, true),
        _ => return None,
    };
    let u = |o: usize| -> u32 {
        let a: [u8; 4] = b[o..o + 4].try_into().unwrap_or([0; 4]);
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut p = Pcap {
        linktype: u(20),
        snaplen: u(16),
        nano,
        records: Vec::new(),
        trailing: 0,
    };
    let mut i = 24;
    while i + 16 <= b.len() {
        let cap = u(i + 8) as usize;
        if i + 16 + cap > b.len() {
            break;
        }
        p.records.push(Record {
            sec: u(i),
            nsec: if nano {
                u(i + 4)
            } else {
                u(i + 4).wrapping_mul(1000)
            },
            wire_len: u(i + 12),
            data: b[i + 16..i + 16 + cap].to_vec(),
        });
        i += 16 + cap;
    }
    p.trailing = b.len() - i;
    Some(p)
}

#[cfg(test)]
mod tests {}
