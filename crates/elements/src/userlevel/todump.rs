//! # ToDump
//!
//! Writes packets to a tcpdump (pcap) file.
//!
//! ## Synopsis
//! `ToDump(FILENAME [, SNAPLEN, ENCAP, *keywords* USE_ENCAP_FROM, EXTRA_LENGTH, UNBUFFERED, NANO])`
//!
//! ## Ports and processing
//! One agnostic input; zero or one agnostic output. Pushed packets are
//! written and passed on to the output (if any). When the input is pull
//! and there is no output, a task pulls packets, one per run as in Click,
//! writes and frees them, sleeping while the upstream queues are empty.
//!
//! ## Description
//! Writes each packet to FILENAME in `tcpdump -w` (pcap) format, readable
//! by tcpdump, Wireshark or FromDump. FILENAME `-` writes standard output.
//! At most SNAPLEN bytes of each packet are written (the default is 2000;
//! 0 means the whole packet). The packet's timestamp annotation is written
//! as its time, or the router clock's time if it has none. The recorded
//! wire length is the packet length plus, with EXTRA_LENGTH, its extra
//! length annotation. The file is buffered and flushed when the router is
//! torn down (or after each packet with UNBUFFERED). A write error is
//! reported once and writing stops.
//!
//! ## Keywords
//! - **SNAPLEN** (integer): bytes written per packet. Default 2000.
//! - **ENCAP** (word): link type recorded in the file: `ETHER` (default),
//!   `IP`, `FDDI`, `ATM`, `802_11`, `SLL`, `AIRONET`, `HDLC`, `PPP_HDLC`,
//!   `PPP`, `SUNATM`, `PRISM`, `NULL`.
//! - **USE_ENCAP_FROM** (element names): take the link type from these
//!   FromDump elements, which must agree. At most one of ENCAP and
//!   USE_ENCAP_FROM.
//! - **EXTRA_LENGTH** (boolean): add the extra length annotation to the
//!   recorded wire length. Default true.
//! - **UNBUFFERED** (boolean): flush after each packet. Default false.
//! - **NANO** (boolean): write a nanosecond-resolution file (pcap magic
//!   `a1b23c4d`). Default true, as in Click 2.1 built with nanosecond
//!   timestamps (its default).
//!
//! ## Handlers
//! - `count` (read): packets written.
//! - `reset_counts` (write): zeroes `count`.
//! - `filename` (read): the file name (`<stdout>` for `-`).
//!
//! ## Example
//! ```click
//! FromDump(in.pcap, STOP true) -> Classifier(12/0800) -> ToDump(ip.pcap);
//! ```

use rclick_core::conf::{parse_word, split_words, Args};
use rclick_core::element::Observe;
use rclick_core::packet::anno;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

use super::fromdump::FromDump;
use super::pcap::{dlt, parse_linktype, unparse_linktype, DumpWriter};
use super::tracereplay::{self, trace_writer, writer_element_methods, writer_handlers, Writing};

pub struct ToDump {
    filename: String,
    snaplen: u32,
    linktype: u32,
    use_encap_from: Vec<String>,
    extra_length: bool,
    unbuffered: bool,
    nano: bool,
    writer: Option<DumpWriter>,
    writing: Writing,
}

impl Default for ToDump {
    fn default() -> Self {
        ToDump {
            filename: String::new(),
            snaplen: 2000,
            linktype: dlt::ETHER,
            use_encap_from: Vec::new(),
            extra_length: true,
            unbuffered: false,
            nano: false,
            writer: None,
            writing: Writing::default(),
        }
    }
}

impl ToDump {
    fn write_packet(&mut self, p: &Packet, ctx: &Ctx) {
        if !self.writing.active {
            return;
        }
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        let mut ts = p.timestamp_anno();
        if ts == Timestamp::ZERO {
            ts = ctx.now();
        }
        let data = p.data();
        let extra = if self.extra_length {
            u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH))
        } else {
            0
        };
        let len = (data.len() as u32).saturating_add(extra);
        let n = data.len().min(self.snaplen as usize);
        match w.write(ts, len, &data[..n]) {
            Ok(()) => self.writing.count += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                self.writing.active = false;
                ctx.chatter(&format!("ToDump({}): {e}", self.filename));
            }
        }
    }
}

impl Observe for ToDump {
    // Looks and records only: a chain moves on past it untested.
    const QUIET: bool = true;

    fn observe(&mut self, p: &Packet, ctx: &mut Ctx) {
        self.write_packet(p, ctx);
    }
}

trace_writer!(ToDump);

const HANDLERS: &[Handler<ToDump>] = &[
    Handler::data("filename", |e| &e.filename),
    writer_handlers::count(),
    writer_handlers::reset_counts(),
];

rclick_core::element_class!(ToDump);

impl Element for ToDump {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(HANDLERS);
    writer_element_methods!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.filename = args.read_mp("FILENAME");
        let snaplen: u32 = args.read_p_or("SNAPLEN", 2000u32);
        let encap = args.read_p_with("ENCAP", parse_word);
        let use_from: Option<String> = args.read("USE_ENCAP_FROM");
        self.extra_length = args.read_or("EXTRA_LENGTH", true);
        self.unbuffered = args.read_or("UNBUFFERED", false);
        self.nano = args.read_or("NANO", true);
        args.complete()?;
        self.snaplen = if snaplen == 0 { u32::MAX } else { snaplen };
        match (encap, use_from) {
            (Some(_), Some(_)) => {
                return Err("specify at most one of 'ENCAP' and 'USE_ENCAP_FROM'".into())
            }
            (None, Some(names)) => {
                self.use_encap_from = split_words(&names);
                if self.use_encap_from.is_empty() {
                    return Err("element names missing after 'USE_ENCAP_FROM'".into());
                }
            }
            (Some(e), None) => {
                self.linktype = parse_linktype(&e).ok_or("bad encapsulation type")?;
            }
            (None, None) => self.linktype = dlt::ETHER,
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if !self.use_encap_from.is_empty() {
            let mut found: Vec<(String, u32)> = Vec::new();
            for name in &self.use_encap_from {
                let idx = ctx
                    .find_element(name)
                    .ok_or_else(|| format!("'{name}' does not name an element"))?;
                let lt = ctx
                    .with_element(idx, |e| {
                        e.as_any()
                            .downcast_ref::<FromDump>()
                            .and_then(|f| f.encap_linktype())
                    })
                    .flatten()
                    .ok_or_else(|| format!("'{name}' has no 'encap' read handler"))?;
                found.push((name.clone(), lt));
            }
            if found.iter().any(|f| f.1 != found[0].1) {
                let mut msg = vec!["source encapsulation types disagree:".to_string()];
                for (n, lt) in &found {
                    msg.push(format!("  {n} has {}", unparse_linktype(*lt)));
                }
                return Err(msg.into());
            }
            self.linktype = found[0].1;
        }
        let w = DumpWriter::create(
            &self.filename,
            self.snaplen,
            self.linktype,
            self.nano,
            self.unbuffered,
        )?;
        self.writer = Some(w);
        self.filename = tracereplay::output_name(&self.filename);
        self.writing.initialize(ctx);
        Ok(())
    }
}
