//! # FromDevice
//!
//! Reads packets live from a network device (Linux AF_PACKET, memory-mapped
//! TPACKET_V3 ring).
//!
//! ## Synopsis
//! `FromDevice(DEVNAME [, PROMISC, SNAPLEN, *keywords* SNIFFER, FORCE_IP, METHOD, CAPTURE, BPF_FILTER, PROTOCOL, OUTBOUND, HEADROOM, ENCAP, BURST, TIMESTAMP, QUEUE])`
//!
//! ## Ports and processing
//! No inputs. Output 0 is push and emits the frames received, from the
//! Ethernet header on. Optional output 1 (push) receives non-IP frames when
//! FORCE_IP is set.
//!
//! ## Description
//! Opens an AF_PACKET socket bound to DEVNAME with a TPACKET_V3 receive
//! ring (16 blocks of 256 KiB) and emits every frame the device receives.
//! The socket is registered with the driver: while the device is idle the
//! router sleeps in `poll(2)`; when the ring has frames, a task drains it in
//! bursts of BURST frames and reschedules itself until the ring is empty.
//! The kernel hands a partly filled ring block to user space after at most
//! 1 ms, which bounds the added latency under light traffic.
//!
//! The router does not stop the host's own stack from seeing the packets
//! (SNIFFER is accepted but ignored); give the device no addresses, or
//! disable IP forwarding, if the host must not act on them.
//!
//! **Offloads.** FromDevice asks the kernel for a virtio-net header with
//! each frame (`PACKET_VNET_HDR`). Frames the host or a peer namespace sent
//! through a virtual device (veth, tap, bridge) often carry a partial
//! TCP/UDP checksum (CHECKSUM_PARTIAL) or are GSO super-frames of up to 64
//! KiB. FromDevice completes partial checksums and splits TCP (IPv4/IPv6)
//! and UDP (USO) super-frames into MTU-sized segments with correct headers
//! and checksums, so every emitted packet is an ordinary, wire-valid frame
//! and downstream elements and ToDevice need no offload knowledge. Users
//! need not turn offloads off. Only UFO frames (GSO type UDP, deprecated in
//! Linux) cannot be split and are dropped (counted in `drops`).
//!
//! Outgoing frames (sent by the host, or by a ToDevice on the same device)
//! are not received unless OUTBOUND is true.
//!
//! ## Keywords
//! - **DEVNAME** (string): the device name.
//! - **PROMISC** (boolean): put the device in promiscuous mode while the
//!   router runs. Default false.
//! - **SNAPLEN** (integer 14..65535): longest packet emitted; longer frames
//!   are cut and their extra length annotation set. Default 2046.
//! - **BURST** (integer): frames taken from the ring per task run. Default
//!   32 (Click's default is 1; larger bursts only batch the work).
//! - **PROTOCOL** (integer): receive only frames with this ethertype. Default
//!   0, all.
//! - **OUTBOUND** (boolean): also emit frames the host sends. Default false.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 64.
//! - **FORCE_IP** (boolean): emit only IP packets, with the network header
//!   and destination IP annotation set; others go to output 1 if present.
//! - **TIMESTAMP** (boolean): set the timestamp annotation from the kernel.
//!   Default true.
//! - **METHOD**, **CAPTURE** (word): `LINUX` or `PCAP`; both use AF_PACKET.
//! - **ENCAP** (word): only `ETHER` is supported.
//! - **BPF_FILTER** (string): accepted; ignored with a warning (as Click
//!   ignores it outside METHOD PCAP).
//! - **SNIFFER** (boolean): accepted; ignored.
//! - **QUEUE** (integer): accepted for configurations written for
//!   multi-queue devices; AF_PACKET receives from every queue, so any value
//!   is the same as none.
//!
//! ## Handlers
//! - `count` (read): frames received.
//! - `kernel_drops` (read): frames the kernel dropped because the ring was
//!   full (PACKET_STATISTICS, accumulated).
//! - `drops` (read): `kernel_drops` plus frames FromDevice itself dropped
//!   (malformed or unsplittable offloaded frames).
//! - `encap` (read): `ETHER`.
//! - `reset_counts` (write): zeroes `count` and the drop counters.
//!
//! ## Example
//! ```click
//! FromDevice(eth0, PROMISC true) -> Queue -> ToDevice(eth1);
//! ```

use std::cell::Cell;
use std::os::fd::RawFd;

use rclick_core::conf::{parse_word, Args};
use rclick_core::element::{processing, HandlerSpec};
use rclick_core::packet::{anno, PacketType};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Interest, TaskId, Timestamp};

use super::afpacket::{materialize, PacketSocket, RingGeometry, RxRing, PACKET_OUTGOING};
use super::fromdump::force_ip;
use super::pcap::dlt;

pub struct FromDevice {
    ifname: String,
    promisc: bool,
    snaplen: usize,
    burst: usize,
    protocol: u16,
    outbound: bool,
    headroom: usize,
    force_ip: bool,
    timestamp: bool,
    sock: Option<PacketSocket>,
    ring: Option<RxRing>,
    task: Option<TaskId>,
    count: u64,
    own_drops: u64,
    kernel_drops: Cell<u64>,
}

impl Default for FromDevice {
    fn default() -> Self {
        FromDevice {
            ifname: String::new(),
            promisc: false,
            snaplen: 2046,
            burst: 32,
            protocol: 0,
            outbound: false,
            headroom: 64,
            force_ip: false,
            timestamp: true,
            sock: None,
            ring: None,
            task: None,
            count: 0,
            own_drops: 0,
            kernel_drops: Cell::new(0),
        }
    }
}

impl FromDevice {
    /// The device this element reads.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    fn kernel_drops(&self) -> u64 {
        if let Some((_, d)) = self.sock.as_ref().and_then(|s| s.take_stats()) {
            self.kernel_drops.set(self.kernel_drops.get() + d);
        }
        self.kernel_drops.get()
    }

    /// Takes up to BURST frames from the ring. Returns how many.
    fn drain(&mut self, ctx: &mut Ctx) -> usize {
        let Some(ring) = self.ring.as_mut() else {
            return 0;
        };
        let mut n = 0;
        let (headroom, snaplen, outbound, timestamp, fip) = (
            self.headroom,
            self.snaplen,
            self.outbound,
            self.timestamp,
            self.force_ip,
        );
        let mut dropped = 0u64;
        let mut emitted = 0u64;
        while n < self.burst {
            let got = ring.next(|frame| {
                if frame.pkttype == PACKET_OUTGOING && !outbound {
                    return;
                }
                let ts = Timestamp::from_sec_nsec(i64::from(frame.sec), i64::from(frame.nsec));
                let ok = materialize(frame, headroom, |mut p| {
                    let len = p.len();
                    let extra = frame.wire_len as usize - len.min(frame.wire_len as usize);
                    let mut extra = if frame.vnet.is_some_and(|v| v.gso_type != 0) {
                        0
                    } else {
                        extra
                    };
                    if len > snaplen {
                        p.take(len - snaplen);
                        extra += len - snaplen;
                    }
                    if extra > 0 {
                        p.set_anno_bytes(anno::EXTRA_LENGTH, &(extra as u32).to_ne_bytes());
                    }
                    if timestamp {
                        p.set_timestamp_anno(ts);
                    }
                    p.set_packet_type_anno(match frame.pkttype {
                        1 => PacketType::Broadcast,
                        2 => PacketType::Multicast,
                        3 => PacketType::OtherHost,
                        4 => PacketType::Outgoing,
                        5 => PacketType::Loopback,
                        _ => PacketType::Host,
                    });
                    emitted += 1;
                    if !fip || force_ip(&mut p, dlt::ETHER) {
                        ctx.emit(0, p);
                    } else {
                        ctx.emit(1, p);
                    }
                });
                if !ok {
                    dropped += 1;
                }
            });
            if got.is_none() {
                break;
            }
            n += 1;
        }
        self.count += emitted;
        self.own_drops += dropped;
        n
    }
}

impl Element for FromDevice {
    fn port_count(&self) -> &'static str {
        "0/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.ifname = args.read_mp("DEVNAME");
        self.promisc = args.read_p_or("PROMISC", false);
        let snaplen: u32 = args.read_p_or("SNAPLEN", 2046u32);
        let _sniffer: bool = args.read_or("SNIFFER", true);
        self.force_ip = args.read_or("FORCE_IP", false);
        let method = args.read_with("METHOD", parse_word);
        let capture = args.read_with("CAPTURE", parse_word);
        let bpf: Option<String> = args.read("BPF_FILTER");
        self.protocol = args.read_or("PROTOCOL", 0u16);
        self.outbound = args.read_or("OUTBOUND", false);
        let headroom: usize = args.read_or("HEADROOM", 64usize);
        let encap = args.read_with("ENCAP", parse_word);
        let burst: usize = args.read_or("BURST", 32usize);
        self.timestamp = args.read_or("TIMESTAMP", true);
        let _queue: Option<u32> = args.read("QUEUE");
        args.complete()?;
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        if !(14..=65535).contains(&snaplen) {
            return Err("SNAPLEN out of range".into());
        }
        if headroom > 8190 {
            return Err("HEADROOM out of range".into());
        }
        if burst == 0 {
            return Err("BURST out of range".into());
        }
        match method.or(capture).as_deref() {
            None | Some("LINUX") | Some("PCAP") => {}
            Some(_) => return Err("bad METHOD".into()),
        }
        if encap.as_deref().is_some_and(|e| e != "ETHER") {
            return Err("bad encapsulation type".into());
        }
        if bpf.is_some_and(|b| !b.is_empty()) {
            _ctx.chatter(&format!(
                "{}: warning: BPF_FILTER not supported, ignored",
                _ctx.element_name()
            ));
        }
        self.snaplen = snaplen as usize;
        self.headroom = headroom;
        self.burst = burst;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let name = &self.ifname;
        let mut sock = PacketSocket::open(name, self.protocol, true)?;
        sock.enable_vnet_hdr();
        if !self.outbound {
            sock.ignore_outgoing();
        }
        if self.promisc {
            if let Err(e) = sock.set_promisc() {
                ctx.chatter(&format!(
                    "{}: warning: cannot set promiscuous mode: {e}",
                    ctx.element_name()
                ));
            }
        }
        let ring =
            RxRing::new(&sock, RingGeometry::default()).map_err(|e| format!("{name}: {e}"))?;
        ctx.add_select(sock.fd(), Interest::READ);
        self.task = Some(ctx.new_task(false));
        self.sock = Some(sock);
        self.ring = Some(ring);
        Ok(())
    }

    fn selected(&mut self, _fd: RawFd, _readable: bool, _writable: bool, ctx: &mut Ctx) {
        // Hand the work to the task, which runs in turn with other tasks
        // and keeps draining while frames keep coming.
        if self.ring.as_ref().is_some_and(|r| r.ready()) {
            if let Some(t) = self.task {
                ctx.schedule_task(t);
            }
        } else if let Some(s) = self.sock.as_ref() {
            // Readable with an empty ring: a pending socket error (device
            // went down). Reading it clears it, so poll sleeps again.
            if let Some(e) = s.take_error() {
                ctx.chatter(&format!("{}: {}: {e}", ctx.element_name(), self.ifname));
            }
        }
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        let n = self.drain(ctx);
        if n > 0 {
            ctx.fast_reschedule();
        }
        n > 0
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read("count"),
            HandlerSpec::read("drops"),
            HandlerSpec::read("kernel_drops"),
            HandlerSpec::read("encap"),
            HandlerSpec::button("reset_counts"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "count" => Ok(self.count.to_string()),
            "kernel_drops" if self.sock.is_some() => Ok(self.kernel_drops().to_string()),
            "kernel_drops" => Ok("??".into()),
            "drops" => Ok((self.kernel_drops() + self.own_drops).to_string()),
            "encap" => Ok("ETHER".into()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "reset_counts" => {
                self.kernel_drops();
                self.count = 0;
                self.own_drops = 0;
                self.kernel_drops.set(0);
                Ok(())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn cleanup(&mut self) {
        self.ring = None;
        self.sock = None;
    }
}
