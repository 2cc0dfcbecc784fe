//! # ToIPSummaryDump
//!
//! Writes packet summary information to an IP summary dump file.
//!
//! ## Synopsis
//! `ToIPSummaryDump(FILENAME [, *keywords* CONTENTS, VERBOSE, BANNER, MULTIPACKET, BAD_PACKETS, CAREFUL_TRUNC, BINARY])`
//!
//! ## Ports and processing
//! One agnostic input; zero or one agnostic output. Pushed packets are
//! written and passed on to the output (if any). When the input is pull
//! and there is no output, a task pulls packets, one per run as in Click,
//! and writes and frees them, sleeping while the upstream queues are empty.
//!
//! ## Description
//! Writes one line of text for each packet to FILENAME (`-` is standard
//! output), with the fields CONTENTS names, separated by spaces; a field
//! that does not apply to a packet (`sport` of an ICMP packet, say) is
//! written as `-`. The file starts with `!IPSummaryDump 1.3`, an optional
//! `!creator "BANNER"` line, and a `!data` line listing the fields'
//! canonical names. FromIPSummaryDump reads such files back.
//!
//! The fields and their formats are Click's: `timestamp` (`ts`,
//! `SEC.USEC`; `ntimestamp` is the same, as in Click 2.1), `ts_sec`, `ts_usec`, `ts_usec1`,
//! `first_timestamp`, `ip_src` (`src`), `ip_dst` (`dst`), `ip_tos`,
//! `ip_dscp`, `ip_ecn` (`no`, `ect1`, `ect2`, `ce`), `ip_ttl`, `ip_frag`
//! (`F` first fragment, `f` later fragment, `!` don't fragment, `.`),
//! `ip_fragoff` (offset in bytes, `+` for MF, `!` for DF), `ip_id`,
//! `ip_sum`, `ip_proto` (`T`, `U`, `I` or a number), `ip_hl`, `ip_len`
//! (`len`), `ip_capture_len`, `ip_opt` (`rr{...}`, `lsrr{...}`, `ts{...}`,
//! `N=B:B`; `.` for none), `sport`, `dport`, `tcp_seq`, `tcp_ack`,
//! `tcp_flags` (`FSRPAUECN` letters, `.` for none), `tcp_window`,
//! `tcp_urp`, `tcp_off` (TCP header length in bytes), `tcp_opt`
//! (`mss1460;sackok;ts1:2;wscale7;sack1-2`),
//! `tcp_ntopt` (without timestamps), `tcp_sack`, `udp_len`, `icmp_type`,
//! `icmp_code`, `icmp_type_name`, `icmp_code_name`, `icmp_flowid`,
//! `icmp_seq`, `icmp_nextmtu`, `payload_len`, `payload` (a double-quoted C
//! string), `payload_md5` (the payload's MD5 digest in Click's 22-character
//! text form: six bits per character, least significant first, from
//! `a-z A-Z 0-9 _ @`), `payload_md5_hex` (the digest in hex; both `-` when
//! the payload is not wholly captured), `count` (1 + extra packets annotation), `link` (paint),
//! `direction` (`>` for paint 0, `<` for 1), `aggregate`. A space in a
//! field name is read as `_`, and a name without `_` also matches
//! `ip_NAME`. An unknown field is a configuration error.
//!
//! Output is buffered and flushed when the router is torn down or the
//! `flush` handler is called.
//!
//! ## Keywords
//! - **CONTENTS** (string, also **FIELDS**): space-separated field names.
//!   Default `timestamp ip_src`.
//! - **VERBOSE** (boolean): also write `!host` and `!starttime` lines.
//!   Default false.
//! - **BANNER** (string): write `!creator "BANNER"`.
//! - **MULTIPACKET** (boolean): when CONTENTS has no `count`, write a
//!   packet with extra packets annotation N as N+1 lines. Default false.
//! - **BAD_PACKETS** (boolean): before the line of a packet with a bad IP
//!   header, or too short for a field the line wants, write a `!bad
//!   MESSAGE` line saying why (`IP version 6`, `truncated IP missing 16`,
//!   `truncated TCP header`, `truncated TCP/UDP header capture`,
//!   `fragmented ICMP header`, ...: the first problem found). The line
//!   follows, with `-` for the fields the packet lacks. Default false.
//! - **CAREFUL_TRUNC** (boolean): accepted for compatibility. Default true.
//! - **BINARY** (boolean): binary dumps are not supported; true is an
//!   error.
//!
//! ## Handlers
//! - `count` (read): lines written. `reset_counts` (write) zeroes it.
//! - `filename` (read): the file name (`<stdout>` for `-`).
//! - `flush` (write): flushes the output.
//!
//! ## Example
//! ```click
//! FromIPSummaryDump(in.txt, STOP true)
//!   -> ToIPSummaryDump(-, CONTENTS timestamp src dst proto len);
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};

use rclick_core::conf::{parse_any, Args};
use rclick_core::element::Observe;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::ipsumdump::{cp_quote, format_line, parse_field_list, Field, PacketView};
use super::ipsumdump::{MAJOR_VERSION, MINOR_VERSION};
use super::tracereplay::{self, trace_writer, writer_element_methods, writer_handlers, Writing};

#[derive(Default)]
pub struct ToIPSummaryDump {
    filename: String,
    fields: Vec<Field>,
    verbose: bool,
    banner: Option<String>,
    multipacket: bool,
    bad_packets: bool,
    writer: Option<BufWriter<Box<dyn Write + Send>>>,
    writing: Writing,
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl ToIPSummaryDump {
    fn write_text(&mut self, text: &str, ctx: &Ctx) {
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        if let Err(e) = w.write_all(text.as_bytes()) {
            self.writing.active = false;
            ctx.chatter(&format!("{}: {}: {e}", ctx.element_name(), self.filename));
        }
    }

    fn write_packet(&mut self, p: &Packet, ctx: &Ctx) {
        if !self.writing.active {
            return;
        }
        let mut text = String::new();
        if self.bad_packets {
            let view = PacketView::new(p);
            let bad = view
                .bad
                .clone()
                .or_else(|| self.fields.iter().find_map(|f| view.missing(*f)));
            if let Some(bad) = bad {
                text.push_str("!bad ");
                text.push_str(&bad);
                text.push('\n');
            }
        }
        let mut lines = 1u64;
        {
            text.push_str(&format_line(p, &self.fields));
            text.push('\n');
            if self.multipacket {
                let extra = u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_PACKETS));
                if extra > 0 {
                    // Each copy says count 1; the lines are identical.
                    let one = text.clone();
                    for _ in 0..extra {
                        text.push_str(&one);
                    }
                    lines += u64::from(extra);
                }
            }
        }
        self.write_text(&text, ctx);
        if self.writing.active {
            self.writing.count += lines;
        }
    }

    fn flush(&mut self, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match self.writer.as_mut() {
            Some(w) => w.flush().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

impl Observe for ToIPSummaryDump {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        self.write_packet(p, ctx);
    }
}

trace_writer!(ToIPSummaryDump);

const HANDLERS: &[Handler<ToIPSummaryDump>] = &[
    writer_handlers::count(),
    writer_handlers::reset_counts(),
    Handler::data("filename", |e| &e.filename),
    Handler::button("flush", ToIPSummaryDump::flush),
];

rclick_core::element_class!(ToIPSummaryDump);

impl Element for ToIPSummaryDump {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);
    writer_element_methods!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.filename = args.read_mp("FILENAME");
        let contents = args.read_with("CONTENTS", parse_any);
        let fields = args.read_with("FIELDS", parse_any);
        self.verbose = args.read_or("VERBOSE", false);
        self.banner = args.read("BANNER");
        self.multipacket = args.read_or("MULTIPACKET", false);
        self.bad_packets = args.read_or("BAD_PACKETS", false);
        let _careful: bool = args.read_or("CAREFUL_TRUNC", true);
        let binary: bool = args.read_or("BINARY", false);
        args.complete()?;
        if binary {
            return Err("BINARY: binary IP summary dumps are not supported".into());
        }
        let text = match (contents, fields) {
            (Some(_), Some(_)) => {
                return Err("specify at most one of 'CONTENTS' and 'FIELDS'".into());
            }
            (Some(c), None) | (None, Some(c)) => c,
            (None, None) => "timestamp ip_src".to_string(),
        };
        self.fields = parse_field_list(&text).map_err(|bad| {
            bad.iter()
                .map(|b| format!("unknown content type '{b}'"))
                .collect::<Vec<_>>()
        })?;
        if self.fields.is_empty() {
            return Err("no contents specified".into());
        }
        if self.fields.contains(&Field::Count) {
            self.multipacket = false;
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let out: Box<dyn Write + Send> = if self.filename == "-" {
            Box::new(std::io::stdout())
        } else {
            Box::new(File::create(&self.filename).map_err(|e| format!("{}: {e}", self.filename))?)
        };
        self.filename = tracereplay::output_name(&self.filename);
        let mut header = format!("!IPSummaryDump {MAJOR_VERSION}.{MINOR_VERSION}\n");
        if let Some(b) = &self.banner {
            header.push_str(&format!("!creator {}\n", cp_quote(b.as_bytes())));
        }
        if self.verbose {
            if let Some(h) = hostname() {
                header.push_str(&format!("!host {h}\n"));
            }
            header.push_str(&format!(
                "!starttime {}\n",
                rclick_core::Timestamp::now_real()
            ));
        }
        header.push_str("!data ");
        let names: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
        header.push_str(&names.join(" "));
        header.push('\n');
        let mut w = BufWriter::new(out);
        w.write_all(header.as_bytes())
            .map_err(|e| format!("{}: {e}", self.filename))?;
        self.writer = Some(w);
        self.writing.initialize(ctx);
        Ok(())
    }
}
