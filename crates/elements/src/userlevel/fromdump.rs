//! # FromDump
//!
//! Reads packets from a tcpdump (pcap or pcapng) file.
//!
//! ## Synopsis
//! `FromDump(FILENAME [, TIMING, *keywords* STOP, ACTIVE, SAMPLE, FORCE_IP, START, START_AFTER, END, END_AFTER, INTERVAL, END_CALL, FILEPOS, BURST])`
//!
//! ## Ports and processing
//! No inputs. Output 0 is agnostic; optional output 1 is push and receives
//! non-IP packets when FORCE_IP is set. Push: a task emits packets. Pull:
//! each pull returns the next packets; FromDump is then a notifier, active
//! while it is active and has more packets.
//!
//! ## Description
//! Reads a file written by `tcpdump -w FILENAME`, ToDump, Wireshark or any
//! libpcap tool, and emits its packets. Both pcap byte orders, microsecond
//! and nanosecond pcap files, Linux's modified pcap format and pcapng
//! (section, interface, enhanced/simple/obsolete packet blocks; other
//! blocks are skipped) are read. FILENAME `-` reads standard input.
//!
//! Each packet's timestamp annotation is set from the file, and its extra
//! length annotation to the bytes that were not captured. A malformed or
//! truncated file is reported and reading stops there, as at the end of
//! the file.
//!
//! At the end of the file (or at the END time) FromDump calls its end
//! handler: with STOP true it stops the driver; with END_CALL it calls that
//! write handler; with END, END_AFTER or INTERVAL it becomes inactive.
//!
//! With TIMING true, packets are emitted at the pace of the original trace:
//! the first packet at once, later ones when the router clock has advanced
//! by their time offset from the first. Under simulated time the clock jumps
//! straight to each packet's time.
//!
//! Not supported: gzip/bzip2 compressed files, MMAP (accepted, ignored),
//! writing `filepos` backwards.
//!
//! ## Keywords
//! - **TIMING** (boolean): replay at the original pace. Default false.
//! - **STOP** (boolean): stop the driver at the end. Default false.
//! - **ACTIVE** (boolean): start emitting at once. Default true.
//! - **SAMPLE** (real 0..1): emit each packet with this probability
//!   (28-bit fixed point, deterministic generator). Default 1.
//! - **FORCE_IP** (boolean): emit only IP packets, with the network header
//!   and destination IP annotation set; others go to output 1 if present,
//!   else are dropped. Always on for raw-IP files. Default false.
//! - **START**, **END** (timestamp): emit packets from START; stop at the
//!   first packet at or after END.
//! - **START_AFTER**, **END_AFTER** (time): the same, relative to the
//!   first packet's timestamp.
//! - **INTERVAL** (time): stop at the first packet at least INTERVAL after
//!   the starting time.
//! - **END_CALL** (`HANDLER [VALUE]`): write handler to call at the end;
//!   the router is refused if HANDLER's element or write handler does not
//!   exist.
//! - **FILEPOS** (integer): start reading at this byte offset.
//! - **BURST** (integer): packets emitted per task run. Default 1.
//! - **MMAP** (boolean): accepted for compatibility; ignored.
//!
//! ## Handlers
//! - `count` (read): packets emitted. `reset_counts` (write) zeroes it.
//! - `active` (read/write): whether FromDump emits packets.
//! - `stop` (write): deactivate and stop the driver.
//! - `encap` (read): the file's link type (`ETHER`, `IP`, ...).
//! - `sampling_prob` (read): the SAMPLE probability.
//! - `filename`, `filesize` (`-` if unknown), `filepos`, `packet_filepos`
//!   (read): file name, length, current byte offset, offset of the last
//!   packet read. Writing `filepos` skips forward to that offset.
//! - `extend_interval` (write): extends the END time by a time interval and
//!   reactivates.
//! - `reset_timing` (write): restarts TIMING and relative times from the
//!   next packet.
//!
//! ## Example
//! ```click
//! FromDump(trace.pcap, STOP true, FORCE_IP true) -> c :: Counter -> Discard;
//! ```

use crate::standard::handlercall;
use rclick_core::conf::{parse_fixed_point, parse_seconds, parse_timestamp, parse_u64, Args};
use rclick_core::packet::anno;
use rclick_core::wire::ether::{ETHERTYPE_VLAN, HEADER_LEN as ETHER_LEN, VLAN_TAG_LEN};
use rclick_core::wire::ipv6::HEADER_LEN as IPV6_LEN;
use rclick_core::wire::link::{
    CHdlcHeader, NullHeader, PppHeader, SllHeader, C_HDLC_HEADER_LEN, NULL_HEADER_LEN,
    SLL_HEADER_LEN,
};
use rclick_core::wire::{EtherFrame, Ipv4Header, Ipv6Header, VlanTag, ETHERTYPE_IP, ETHERTYPE_IP6};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, Timestamp};

use super::pcap::{dlt, unparse_linktype, DumpReader};
use super::tracereplay::{
    reader_element_methods, reader_handlers, trace_source, Replay, TraceReader, SAMPLING_SHIFT,
};

pub struct FromDump {
    filename: String,
    force_ip: bool,
    first_time: Option<Timestamp>,
    first_relative: bool,
    last_time: Timestamp,
    have_last_time: bool,
    /// END, END_AFTER or INTERVAL was given: reaching it deactivates.
    end_is_time: bool,
    last_relative: bool,
    last_interval: bool,
    have_any_times: bool,
    /// END_CALL: the handler (`elem.name`, unquoted) and its value.
    end_call: Option<(String, String)>,
    filepos: u64,

    reader: Option<DumpReader>,
    linktype: u32,
    pending: Option<(Packet, u32)>,
    /// No more packets (end of file, error or END reached).
    done: bool,
    timing_offset: Timestamp,
    replay: Replay,
}

impl Default for FromDump {
    fn default() -> Self {
        FromDump {
            filename: String::new(),
            force_ip: false,
            first_time: None,
            first_relative: false,
            last_time: Timestamp::ZERO,
            have_last_time: false,
            end_is_time: false,
            last_relative: false,
            last_interval: false,
            have_any_times: false,
            end_call: None,
            filepos: 0,
            reader: None,
            linktype: dlt::ETHER,
            pending: None,
            done: false,
            timing_offset: Timestamp::ZERO,
            replay: Replay::default(),
        }
    }
}

/// Whether the 16-bit type field at `at` names IPv4 or IPv6 (the link
/// headers other than Ethernet carry EtherTypes too).
/// Where the IP header starts under `linktype`, if the link header says
/// the packet is IP.
fn ip_offset(d: &[u8], linktype: u32) -> Option<usize> {
    match linktype {
        dlt::RAW => Some(0),
        dlt::ETHER => {
            let f = EtherFrame::new_checked(d).ok()?;
            if f.ethertype() == ETHERTYPE_IP || f.ethertype() == ETHERTYPE_IP6 {
                Some(ETHER_LEN)
            } else if f.ethertype() == ETHERTYPE_VLAN {
                let tag = VlanTag::new_checked(f.payload()).ok()?;
                (tag.ethertype() == ETHERTYPE_IP || tag.ethertype() == ETHERTYPE_IP6)
                    .then_some(ETHER_LEN + VLAN_TAG_LEN)
            } else {
                None
            }
        }
        dlt::LINUX_SLL => SllHeader::new_checked(d)
            .ok()?
            .is_ip()
            .then_some(SLL_HEADER_LEN),
        dlt::C_HDLC => CHdlcHeader::new_checked(d)
            .ok()?
            .is_ip()
            .then_some(C_HDLC_HEADER_LEN),
        dlt::NULL => NullHeader::new_checked(d)
            .ok()?
            .is_ip()
            .then_some(NULL_HEADER_LEN),
        dlt::PPP => {
            let h = PppHeader::new_checked(d).ok()?;
            h.is_ip().then(|| h.header_len())
        }
        _ => None,
    }
}

/// Finds the IP header for FORCE_IP; sets the network header and the
/// destination IP annotation. Returns whether the packet is IP.
pub fn force_ip(p: &mut Packet, linktype: u32) -> bool {
    let d = p.data();
    let Some(off) = ip_offset(d, linktype) else {
        return false;
    };
    let Some(ip) = d.get(off..) else {
        return false;
    };
    if let Ok(h) = Ipv4Header::new_checked(ip) {
        let (hl, dst) = (h.header_len(), h.dst());
        p.set_network_header(off, hl);
        p.set_dst_ip_anno(dst);
        true
    } else if Ipv6Header::new_checked(ip).is_ok() {
        p.set_network_header(off, IPV6_LEN);
        true
    } else {
        false
    }
}

fn force_ipable(linktype: u32) -> bool {
    matches!(
        linktype,
        dlt::RAW | dlt::ETHER | dlt::LINUX_SLL | dlt::C_HDLC | dlt::NULL | dlt::PPP
    )
}

enum Read {
    Packet(Packet, u32),
    /// Skipped (sampling, before START): try again.
    Again,
    End,
}

impl FromDump {
    /// The link type of the file, opening its header if FromDump has not
    /// been initialized yet (for ToDump's USE_ENCAP_FROM).
    pub fn encap_linktype(&self) -> Option<u32> {
        if self.reader.is_some() {
            return Some(self.linktype);
        }
        if self.filename == "-" {
            return None;
        }
        DumpReader::open(&self.filename).ok().map(|r| r.linktype())
    }

    fn prepare_times(&mut self, ts: Timestamp, ctx: &Ctx) {
        if self.first_relative {
            if let Some(f) = self.first_time.as_mut() {
                *f = *f + ts;
            }
        }
        if self.last_relative {
            self.last_time = self.last_time + ts;
        } else if self.last_interval {
            self.last_time = self.last_time + self.first_time.unwrap_or(ts);
        }
        self.first_relative = false;
        self.last_relative = false;
        self.last_interval = false;
        if self.replay.timing {
            self.timing_offset = ctx.now() - ts;
        }
        self.have_any_times = true;
    }

    fn read_one(&mut self, ctx: &mut Ctx) -> Read {
        if self.done {
            return Read::End;
        }
        let Some(reader) = self.reader.as_mut() else {
            return Read::End;
        };
        let (ts, len, linktype, data_len) = match reader.next_record() {
            Ok(Some(rec)) => (rec.ts, rec.len, rec.linktype, rec.data.len()),
            Ok(None) => {
                self.done = true;
                return Read::End;
            }
            Err(e) => {
                ctx.chatter(&format!("{}: {}: {e}", ctx.element_name(), self.filename));
                self.done = true;
                return Read::End;
            }
        };
        if !self.have_any_times {
            self.prepare_times(ts, ctx);
        }
        if let Some(f) = self.first_time {
            if ts < f {
                return Read::Again;
            }
            self.first_time = None;
        }
        if self.have_last_time && ts >= self.last_time {
            self.have_last_time = false;
            self.end_action(ctx);
            if !self.replay.active {
                return Read::End;
            }
            // Reactivated by the end call: go on with this packet.
        }
        if self.replay.sampled_out() {
            return Read::Again;
        }
        let Some(reader) = self.reader.as_ref() else {
            return Read::End;
        };
        let mut p = Packet::from_slice(reader.last_data());
        p.set_timestamp_anno(ts);
        let extra = len.saturating_sub(data_len as u32);
        p.set_anno_bytes(anno::EXTRA_LENGTH, &extra.to_ne_bytes());
        Read::Packet(p, linktype)
    }

    /// The end handler: STOP, END_CALL, or going inactive.
    fn end_action(&mut self, ctx: &mut Ctx) {
        if self.replay.stop {
            self.replay.set_active(false, ctx);
            ctx.please_stop();
        } else if let Some((path, value)) = self.end_call.clone() {
            let (path, value) = (path.as_str(), value.as_str());
            let own = format!("{}.", ctx.element_name());
            let r = match path.strip_prefix(&own) {
                Some(h) => self.write_handler(h, value, ctx),
                None => ctx.call_write(path, value),
            };
            if let Err(e) = r {
                // Click chatters the handler's error as it is.
                ctx.chatter(&e);
            }
        } else if self.end_is_time {
            self.replay.set_active(false, ctx);
        }
    }

    fn packet_filepos(&self, _ctx: &Ctx) -> String {
        self.reader
            .as_ref()
            .map_or(0, |r| r.record_pos())
            .to_string()
    }

    fn filesize(&self, _ctx: &Ctx) -> String {
        match std::fs::metadata(&self.filename) {
            Ok(m) if m.is_file() && self.filename != "-" => m.len().to_string(),
            _ => "-".into(),
        }
    }

    fn filepos(&self, _ctx: &Ctx) -> String {
        self.reader.as_ref().map_or(0, |r| r.file_pos()).to_string()
    }

    fn set_filepos(&mut self, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let pos = parse_u64(value.trim())?;
        let r = self.reader.as_mut().ok_or("file not open")?;
        r.skip_to(pos)?;
        self.pending = None;
        self.done = false;
        Ok(())
    }

    fn extend_interval(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let d = parse_seconds(value.trim())
            .map_err(|_| "'extend_interval' takes a time interval".to_string())?;
        self.last_time = self.last_time + Timestamp::from_duration(d);
        if self.replay.stop || self.end_call.is_some() || self.end_is_time {
            self.have_last_time = true;
            self.replay.set_active(true, ctx);
        }
        Ok(())
    }

    fn reset_timing(&mut self, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        self.first_relative = false;
        self.last_relative = false;
        self.last_interval = false;
        self.have_any_times = false;
        Ok(())
    }
}

impl TraceReader for FromDump {
    fn next_ready(&mut self, ctx: &mut Ctx) -> Result<Packet, bool> {
        let mut tries = 0;
        loop {
            if self.pending.is_none() {
                match self.read_one(ctx) {
                    Read::Packet(p, lt) => self.pending = Some((p, lt)),
                    Read::Again => {
                        tries += 1;
                        if tries >= 64 {
                            return Err(true);
                        }
                        continue;
                    }
                    Read::End => return Err(false),
                }
            }
            let Some((mut p, lt)) = self.pending.take() else {
                return Err(false);
            };
            if self.replay.timing
                && self
                    .replay
                    .must_wait(p.timestamp_anno() + self.timing_offset, ctx)
            {
                self.pending = Some((p, lt));
                return Err(true);
            }
            if self.force_ip && !force_ip(&mut p, lt) {
                ctx.emit(1, p);
                tries += 1;
                if tries >= 64 {
                    return Err(true);
                }
                continue;
            }
            return Ok(p);
        }
    }

    fn holding(&self) -> bool {
        self.pending.is_some()
    }

    fn at_end(&mut self, ctx: &mut Ctx) {
        self.end_action(ctx);
    }
}

trace_source!(FromDump);

// Click's order (listed newest first).
const HANDLERS: &[Handler<FromDump>] = &[
    Handler::data("filename", |e| &e.filename),
    Handler::read("filesize", FromDump::filesize),
    Handler::read_write("filepos", FromDump::filepos, FromDump::set_filepos),
    reader_handlers::sampling_prob(),
    reader_handlers::active(),
    Handler::read("encap", |e, _| unparse_linktype(e.linktype).to_string()),
    reader_handlers::stop(),
    Handler::read("packet_filepos", FromDump::packet_filepos),
    Handler::write("extend_interval", FromDump::extend_interval),
    reader_handlers::count(),
    reader_handlers::reset_counts(),
    Handler::button("reset_timing", FromDump::reset_timing),
];

rclick_core::element_class!(FromDump);

impl Element for FromDump {
    rclick_core::element_kind!(source);
    rclick_core::handlers!(HANDLERS);
    reader_element_methods!();

    fn port_count(&self) -> &'static str {
        "0/1-2"
    }

    fn processing(&self) -> &'static str {
        "a/ah"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.filename = args.read_mp("FILENAME");
        self.replay.timing = args.read_p_or("TIMING", false);
        self.replay.stop = args.read_or("STOP", false);
        self.replay.active = args.read_or("ACTIVE", true);
        let sample = args.read_with("SAMPLE", |s| parse_fixed_point(s, SAMPLING_SHIFT));
        self.force_ip = args.read_or("FORCE_IP", false);
        let ts = |s: &str| parse_timestamp(s).map(Timestamp::from_duration);
        let secs = |s: &str| parse_seconds(s).map(Timestamp::from_duration);
        let start = args.read_with("START", ts);
        let start_after = args.read_with("START_AFTER", secs);
        let end = args.read_with("END", ts);
        let end_after = args.read_with("END_AFTER", secs);
        let interval = args.read_with("INTERVAL", secs);
        // `HANDLER [VALUE]`: the whole argument, words and all; the first
        // word, unquoted, names the handler (Click's HandlerCall).
        let end_call = args.read_with("END_CALL", handlercall::parse);
        self.filepos = args.read_or("FILEPOS", 0u64);
        self.replay.burst = args.read_or("BURST", 1usize).max(1);
        let _mmap: bool = args.read_or("MMAP", false);
        args.complete()?;
        self.replay.configure(sample, ctx);

        let set = |t: &Option<Timestamp>| t.is_some_and(|t| t != Timestamp::ZERO);
        if set(&start) && set(&start_after) {
            return Err("START and START_AFTER are mutually exclusive".into());
        }
        self.first_relative = false;
        self.first_time = if set(&start) {
            start
        } else if set(&start_after) {
            self.first_relative = true;
            start_after
        } else {
            None
        };
        if [&end, &end_after, &interval]
            .iter()
            .filter(|t| set(t))
            .count()
            > 1
        {
            return Err("END, END_AFTER, and INTERVAL are mutually exclusive".into());
        }
        self.last_relative = false;
        self.last_interval = false;
        let last = if set(&end) {
            end
        } else if set(&end_after) {
            self.last_relative = true;
            end_after
        } else if set(&interval) {
            self.last_interval = true;
            interval
        } else {
            None
        };
        self.have_last_time = last.is_some();
        self.end_is_time = last.is_some();
        self.last_time = last.unwrap_or(Timestamp::ZERO);
        if self.replay.stop && end_call.is_some() {
            return Err("END_CALL and STOP are mutually exclusive".into());
        }
        // Click resolves the call's element here and its handler at
        // initialization; either failing refuses the configuration.
        if let Some((path, _)) = &end_call {
            handlercall::check_element_at_configure("END_CALL", path, ctx)?;
        }
        self.end_call = end_call;
        self.have_any_times = false;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.replay.initialize(ctx);
        // END_CALL must name a write handler (Click refuses the router
        // otherwise, where a late failure would only be chattered).
        if let Some((path, _)) = &self.end_call {
            handlercall::check_write_at_initialize(path, self, ctx)?;
        }
        let mut reader = DumpReader::open(&self.filename)?;
        self.linktype = reader.linktype();
        if self.force_ip {
            if !force_ipable(self.linktype) {
                return Err(format!(
                    "{}: unknown linktype {}; can't force IP packets",
                    self.filename, self.linktype
                )
                .into());
            }
        } else if self.linktype == dlt::RAW {
            self.force_ip = true;
        }
        if self.filepos != 0 {
            reader
                .skip_to(self.filepos)
                .map_err(|e| format!("{}: {e}", self.filename))?;
        }
        self.reader = Some(reader);
        Ok(())
    }
}
