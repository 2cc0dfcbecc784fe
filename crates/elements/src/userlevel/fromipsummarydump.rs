//! # FromIPSummaryDump
//!
//! Reads packets from an IP summary dump file.
//!
//! ## Synopsis
//! `FromIPSummaryDump(FILENAME [, *keywords* DATA, STOP, ACTIVE, ZERO, CHECKSUM, SAMPLE, PROTO, MULTIPACKET, TIMING, FIELDS, CONTENTS, DEFAULT_FIELDS, DEFAULT_CONTENTS, ALLOW_NONEXISTENT, BURST])`
//!
//! ## Ports and processing
//! No inputs; one agnostic output. Push: a task emits packets. Pull: each
//! pull returns the next packets; FromIPSummaryDump is then a notifier,
//! active while it is active and has more lines.
//!
//! ## Description
//! Reads packet descriptions from FILENAME, a file written by
//! ToIPSummaryDump or the `ipsumdump` tool, and emits an IPv4 packet for
//! each. FILENAME `-` reads standard input; instead of a file, the DATA
//! keyword gives the dump's text in the configuration.
//!
//! The file is text: `!`-lines give information (`!IPSummaryDump 1.3`,
//! `!creator "..."`, and `!data FIELD FIELD...`, which names the fields of
//! the lines that follow); `#` starts a comment line; every other line
//! describes one packet with space-separated field values, `-` meaning
//! "absent". Field names are Click's: `timestamp` (`ts`, `ntimestamp`),
//! `ts_sec`, `ts_usec`, `ts_usec1`, `ip_src` (`src`), `ip_dst` (`dst`),
//! `ip_tos`, `ip_dscp`, `ip_ecn`, `ip_ttl`, `ip_frag`, `ip_fragoff`,
//! `ip_id`, `ip_sum`, `ip_proto` (`proto`; `T`, `U`, `I` or a number),
//! `ip_hl`, `ip_len` (`len`, `length`), `ip_opt`, `sport`, `dport`,
//! `tcp_seq`, `tcp_ack`, `tcp_flags` (letters `FSRPAUECN`, `.` or a
//! number), `tcp_window`, `tcp_urp`, `tcp_off` (header length in bytes), `tcp_opt`, `tcp_sack`, `udp_len`,
//! `icmp_type`, `icmp_code`, `icmp_type_name`, `icmp_code_name`,
//! `icmp_flowid`, `icmp_seq`, `icmp_nextmtu`, `payload_len`, `payload` (a
//! double-quoted C string), `count`, `link`, `direction`, `aggregate`.
//! A space in a name is read as `_`, and a name without `_` also matches
//! `ip_NAME`; `seq`, `ack` and `flags` are accepted for the TCP fields. An
//! unknown field on a `!data` line is reported and its column ignored.
//!
//! Each packet has a 20-byte IP header (more with `ip_opt`/`ip_hl`),
//! version 4, TTL 100 and protocol PROTO unless the line says otherwise,
//! and, in a first fragment of TCP, UDP, DCCP or ICMP, that protocol's
//! header (TCP 20 bytes plus options or `tcp_off`, UDP 8, DCCP 12, ICMP 8
//! or 20 for timestamps), zero where the line gives no field, cut short
//! where the IP length ends inside it. The payload follows. The IP length
//! is `ip_len`, else the headers plus `payload_len`, else the packet
//! length. As in Click, without CHECKSUM the packet holds only its headers
//! and payload (the rest of the IP length goes in the extra length
//! annotation) and no checksum is set (the IP checksum is `ip_sum` or 0);
//! with CHECKSUM the packet is filled with zeros up to the IP length and
//! the IP, TCP, UDP and ICMP checksums are set. The network and transport
//! headers, destination IP annotation, timestamp annotation (from the
//! timestamp fields), paint (`link`), aggregate and extra-packets
//! (`count`) annotations are set.
//!
//! A line whose values do not parse is reported (the first ten, with file
//! and line number), counted in `bad_lines`, and skipped. Binary dumps
//! (`!binary`) are not supported: reading stops with an error message.
//!
//! ## Keywords
//! - **STOP** (boolean): stop the driver at the end of the file. Default
//!   false.
//! - **ACTIVE** (boolean): start emitting at once. Default true.
//! - **ZERO** (boolean): accepted for compatibility; packet bytes not set
//!   by the dump are always zero. Default true.
//! - **CHECKSUM** (boolean): set TCP, UDP and ICMP checksums. Default false.
//! - **SAMPLE** (real 0..1): emit each packet with this probability.
//!   Default 1.
//! - **PROTO** (byte): IP protocol when a line gives none. Default 6.
//! - **MULTIPACKET** (boolean): emit `count` packets for each line.
//!   Default false.
//! - **TIMING** (boolean): emit packets at the pace of their timestamps.
//!   Default false.
//! - **DATA** (string): the dump's text, instead of FILENAME.
//! - **FIELDS**, **CONTENTS**, **DEFAULT_FIELDS**, **DEFAULT_CONTENTS**
//!   (string): the fields until a `!data` line says otherwise.
//! - **ALLOW_NONEXISTENT** (boolean): a missing file is an empty dump.
//!   Default false.
//! - **BURST** (integer): packets emitted per task run. Default 1.
//!
//! ## Handlers
//! - `count` (read): packets emitted. `reset_counts` (write) zeroes it.
//! - `bad_lines` (read): malformed lines skipped.
//! - `active` (read/write): whether packets are emitted.
//! - `stop` (write): deactivate and stop the driver.
//! - `encap` (read): `IP`.
//! - `sampling_prob` (read): the SAMPLE probability.
//! - `filename` (read): the file name.
//!
//! ## Example
//! ```click
//! FromIPSummaryDump(trace.txt, STOP true) -> CheckIPHeader -> Print(ok) -> Discard;
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader};

use rclick_core::conf::{parse_any, parse_fixed_point, Args};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

use super::ipsumdump::{
    build_packet, parse_field, parse_field_list, split_line, BuildOptions, Field, Record,
    MINOR_VERSION,
};
use super::tracereplay::{
    reader_element_methods, reader_handlers, trace_source, Replay, TraceReader, SAMPLING_SHIFT,
};

const MAX_BAD_LINE_MESSAGES: u64 = 10;

pub struct FromIPSummaryDump {
    filename: String,
    checksum: bool,
    default_proto: u8,
    multipacket: bool,
    /// Fields from DEFAULT_CONTENTS or the latest `!data` line.
    fields: Vec<Field>,
    /// DATA: the dump's text, read instead of a file.
    data: Option<String>,
    /// ALLOW_NONEXISTENT: a missing file is an empty dump.
    allow_nonexistent: bool,
    minor_version: u32,

    reader: Option<Box<dyn BufRead + Send>>,
    line_no: u64,
    done: bool,
    /// The packet made from the last line and how many copies of it are
    /// still to be emitted (MULTIPACKET).
    pending: Option<(Packet, u32)>,
    bad_lines: u64,
    complained_no_fields: bool,
    timing_offset: Option<Timestamp>,
    replay: Replay,
}

impl Default for FromIPSummaryDump {
    fn default() -> Self {
        FromIPSummaryDump {
            filename: String::new(),
            checksum: false,
            default_proto: 6,
            multipacket: false,
            fields: Vec::new(),
            data: None,
            allow_nonexistent: false,
            minor_version: MINOR_VERSION,
            reader: None,
            line_no: 0,
            done: false,
            pending: None,
            bad_lines: 0,
            complained_no_fields: false,
            timing_offset: None,
            replay: Replay::default(),
        }
    }
}

impl FromIPSummaryDump {
    fn complain(&mut self, ctx: &Ctx, msg: &str) {
        self.bad_lines += 1;
        if self.bad_lines <= MAX_BAD_LINE_MESSAGES {
            ctx.chatter(&format!(
                "{}: {}:{}: {msg}",
                ctx.element_name(),
                self.filename,
                self.line_no
            ));
            if self.bad_lines == MAX_BAD_LINE_MESSAGES {
                ctx.chatter(&format!(
                    "{}: (further malformed lines not reported)",
                    ctx.element_name()
                ));
            }
        }
    }

    /// Handles a `!` line.
    fn bang_line(&mut self, line: &str, ctx: &Ctx) {
        let mut words = line.splitn(2, |c: char| c.is_ascii_whitespace());
        let cmd = words.next().unwrap_or("");
        let rest = words.next().unwrap_or("").trim();
        match cmd {
            "!proto" => match super::ipsumdump::parse_ip_proto(rest) {
                Some(p) => self.default_proto = p,
                None => ctx.chatter(&format!(
                    "{}: {}:{}: bad protocol in !proto",
                    ctx.element_name(),
                    self.filename,
                    self.line_no
                )),
            },
            "!data" | "!contents" => {
                match parse_field_list(rest) {
                    Ok(f) => self.fields = f,
                    Err(_) => {
                        // Unknown fields: warn and ignore their columns.
                        let mut fields = Vec::new();
                        for w in rclick_core::conf::split_words(rest) {
                            let w = rclick_core::conf::unquote_string(&w);
                            match super::ipsumdump::find_field(&w) {
                                Some(f) => fields.push(f),
                                None => {
                                    ctx.chatter(&format!(
                                        "{}: {}:{}: warning: unknown content type '{w}'",
                                        ctx.element_name(),
                                        self.filename,
                                        self.line_no
                                    ));
                                    fields.push(Field::None);
                                }
                            }
                        }
                        self.fields = fields;
                    }
                }
                for f in self.fields.iter_mut().filter(|f| !f.readable()) {
                    *f = Field::None;
                }
                self.complained_no_fields = false;
            }
            "!IPSummaryDump" => {
                let v = rest.split_once('.').and_then(|(a, b)| {
                    Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
                });
                match v {
                    Some((1, minor)) if minor <= MINOR_VERSION => self.minor_version = minor,
                    Some((major, minor)) => {
                        ctx.chatter(&format!(
                            "{}: {}: warning: unexpected IPSummaryDump version {major}.{minor}",
                            ctx.element_name(),
                            self.filename
                        ));
                        self.minor_version = MINOR_VERSION;
                    }
                    None => {}
                }
            }
            "!binary" => {
                ctx.chatter(&format!(
                    "{}: {}:{}: binary IP summary dumps are not supported",
                    ctx.element_name(),
                    self.filename,
                    self.line_no
                ));
                self.done = true;
            }
            // !creator, !host, !starttime, !runtime, !drops, ...: ignored.
            _ => {}
        }
    }

    /// Reads lines until one yields packets (in `pending`) or the file
    /// ends. Returns false at the end.
    fn read_record(&mut self, ctx: &mut Ctx) -> bool {
        let mut buf = Vec::new();
        loop {
            if self.done {
                return false;
            }
            let Some(reader) = self.reader.as_mut() else {
                return false;
            };
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) => {
                    self.done = true;
                    return false;
                }
                Ok(_) => {}
                Err(e) => {
                    ctx.chatter(&format!("{}: {}: {e}", ctx.element_name(), self.filename));
                    self.done = true;
                    return false;
                }
            }
            self.line_no += 1;
            let text = String::from_utf8_lossy(&buf);
            let line = text.trim_end_matches(['\n', '\r']);
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.starts_with('!') {
                let l = trimmed.to_string();
                self.bang_line(&l, ctx);
                continue;
            }
            if self.fields.is_empty() {
                if !self.complained_no_fields {
                    self.complained_no_fields = true;
                    ctx.chatter(&format!(
                        "{}: {}:{}: no '!data' line before packet data",
                        ctx.element_name(),
                        self.filename,
                        self.line_no
                    ));
                }
                self.bad_lines += 1;
                continue;
            }
            let values = split_line(line);
            let mut rec = Record::default();
            let mut err = None;
            for (f, v) in self.fields.iter().zip(values.iter()) {
                if let Err(e) = parse_field(*f, v, self.minor_version, &mut rec) {
                    err = Some(format!("{}: {e}", f.name()));
                    break;
                }
            }
            let opts = BuildOptions {
                default_proto: self.default_proto,
                checksum: self.checksum,
            };
            let result = match err {
                Some(e) => Err(e),
                None => build_packet(&rec, &opts),
            };
            match result {
                Ok(mut p) => {
                    let n = if self.multipacket {
                        rec.count.unwrap_or(1)
                    } else {
                        1
                    };
                    if n == 0 {
                        continue;
                    }
                    if self.multipacket {
                        p.set_anno_bytes(rclick_core::packet::anno::EXTRA_PACKETS, &[0; 4]);
                    }
                    self.pending = Some((p, n));
                    return true;
                }
                Err(e) => {
                    let msg = format!("bad line ({e})");
                    self.complain(ctx, &msg);
                }
            }
        }
    }

    /// One copy of the pending packet, `Ok(None)` if sampling dropped it.
    fn next_copy(&mut self, ctx: &mut Ctx) -> Result<Option<Packet>, bool> {
        if self.pending.is_none() && !self.read_record(ctx) {
            return Err(false);
        }
        if self.replay.timing {
            if let Some((p, _)) = self.pending.as_ref() {
                let ts = p.timestamp_anno();
                let off = *self.timing_offset.get_or_insert_with(|| ctx.now() - ts);
                if self.replay.must_wait(ts + off, ctx) {
                    return Err(true);
                }
            }
        }
        let sampled_out = self.replay.sampled_out();
        let p = match self.pending.take() {
            Some((p, n)) if n > 1 => {
                let q = p.deep_copy();
                self.pending = Some((p, n - 1));
                q
            }
            Some((p, _)) => p,
            None => return Err(false),
        };
        Ok((!sampled_out).then_some(p))
    }
}

impl TraceReader for FromIPSummaryDump {
    fn next_ready(&mut self, ctx: &mut Ctx) -> Result<Packet, bool> {
        for _ in 0..64 {
            match self.next_copy(ctx) {
                Ok(Some(p)) => return Ok(p),
                Ok(None) => continue,
                Err(wait) => return Err(wait),
            }
        }
        // Many packets sampled away: let others run.
        Err(true)
    }

    fn holding(&self) -> bool {
        self.pending.is_some()
    }

    fn at_end(&mut self, ctx: &mut Ctx) {
        if self.replay.stop {
            self.replay.active = false;
            ctx.please_stop();
        }
    }
}

trace_source!(FromIPSummaryDump);

const HANDLERS: &[Handler<FromIPSummaryDump>] = &[
    reader_handlers::count(),
    reader_handlers::reset_counts(),
    Handler::data("bad_lines", |e| &e.bad_lines),
    reader_handlers::sampling_prob(),
    reader_handlers::active(),
    Handler::read("encap", |_, _| "IP".into()),
    reader_handlers::stop(),
    Handler::data("filename", |e| &e.filename),
];

rclick_core::element_class!(FromIPSummaryDump);

impl Element for FromIPSummaryDump {
    rclick_core::element_kind!(source);
    rclick_core::handlers!(HANDLERS);
    reader_element_methods!();

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let filename: Option<String> = args.read_p("FILENAME");
        self.replay.stop = args.read_or("STOP", false);
        self.replay.active = args.read_or("ACTIVE", true);
        let _zero: bool = args.read_or("ZERO", true);
        self.checksum = args.read_or("CHECKSUM", false);
        let sample = args.read_with("SAMPLE", |s| parse_fixed_point(s, SAMPLING_SHIFT));
        self.default_proto = args.read_or("PROTO", 6u8);
        self.multipacket = args.read_or("MULTIPACKET", false);
        self.replay.timing = args.read_or("TIMING", false);
        // Click reads CONTENTS, FIELDS, DEFAULT_CONTENTS and DEFAULT_FIELDS
        // alike: the fields until a `!data` line says otherwise.
        let mut default_contents = None;
        for kw in ["DEFAULT_CONTENTS", "DEFAULT_FIELDS", "CONTENTS", "FIELDS"] {
            if let Some(c) = args.read_with(kw, parse_any) {
                default_contents = Some((c, kw));
            }
        }
        self.replay.burst = args.read_or("BURST", 1usize).max(1);
        self.allow_nonexistent = args.read_or("ALLOW_NONEXISTENT", false);
        let data: Option<String> = args.read("DATA");
        args.complete()?;
        match (filename, data) {
            (Some(_), Some(_)) => return Err("FILENAME and DATA conflict".into()),
            (Some(f), None) => {
                self.filename = f;
                self.data = None;
            }
            (None, Some(d)) => {
                self.filename = "<data>".into();
                self.data = Some(d);
            }
            (None, None) => return Err("FILENAME: required argument missing".into()),
        }
        self.replay.configure(sample, ctx);

        let parse = |text: &str, kw: &str| -> Result<Vec<Field>, String> {
            let f = parse_field_list(text).map_err(|bad| {
                format!(
                    "{kw}: unknown content type{} {}",
                    if bad.len() > 1 { "s" } else { "" },
                    bad.iter()
                        .map(|b| format!("'{b}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            if f.is_empty() {
                return Err(format!("{kw}: no contents specified"));
            }
            if let Some(x) = f.iter().find(|f| !f.readable()) {
                return Err(format!("{kw}: field '{}' cannot be read", x.name()));
            }
            Ok(f)
        };
        self.fields.clear();
        if let Some((c, kw)) = default_contents {
            self.fields = parse(&c, kw)?;
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.replay.initialize(ctx);
        let mut reader: Box<dyn BufRead + Send> = if let Some(d) = &self.data {
            Box::new(std::io::Cursor::new(d.clone().into_bytes()))
        } else if self.filename == "-" {
            Box::new(BufReader::new(std::io::stdin()))
        } else {
            match File::open(&self.filename) {
                Ok(f) => Box::new(BufReader::new(f)),
                Err(e) if self.allow_nonexistent && e.kind() == std::io::ErrorKind::NotFound => {
                    self.reader = None;
                    self.done = true;
                    return Ok(());
                }
                Err(e) => return Err(format!("{}: {e}", self.filename).into()),
            }
        };
        // Check the first line: a banner, `!creator` or `!data` (else warn).
        let peek = reader
            .fill_buf()
            .map_err(|e| format!("{}: {e}", self.filename))?;
        if peek.is_empty() && self.filename != "-" {
            return Err(format!("{}: empty file", self.filename).into());
        }
        let first: Vec<u8> = peek.iter().take(16).copied().collect();
        let ok = [
            &b"!IPSummaryDump"[..],
            b"!creator",
            b"!data",
            b"!contents",
            b"!proto",
            b"!flowid",
        ]
        .iter()
        .any(|p| first.starts_with(p));
        if !ok && !peek.is_empty() && self.fields.is_empty() {
            ctx.chatter(&format!(
                "{}: {}: warning: missing banner line; is this an IP summary dump?",
                ctx.element_name(),
                self.filename
            ));
        }
        // Compressed files are not supported; say so instead of reading
        // garbage.
        if first.starts_with(&[0x1f, 0x8b]) || first.starts_with(b"BZh") {
            return Err(format!("{}: compressed dumps are not supported", self.filename).into());
        }
        self.reader = Some(reader);
        self.line_no = 0;
        self.done = false;
        Ok(())
    }
}
