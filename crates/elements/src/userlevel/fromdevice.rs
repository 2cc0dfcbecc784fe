//! # FromDevice
//!
//! Reads packets live from a network device (Linux AF_PACKET with a
//! memory-mapped TPACKET_V3 ring, or AF_XDP with `METHOD XDP`).
//!
//! ## Synopsis
//! `FromDevice(DEVNAME [, PROMISC, SNAPLEN, *keywords* SNIFFER, FORCE_IP, METHOD, CAPTURE, BPF_FILTER, PROTOCOL, OUTBOUND, HEADROOM, ENCAP, BURST, TIMESTAMP, QUEUE, XDP_MODE, ZEROCOPY, FANOUT, FANOUT_ID, FANOUT_MODE, FANOUT_ROLLOVER])`
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
//! router sleeps in the driver's wait (`poll(2)`, or epoll for large sets);
//! when the ring has frames, a task drains it in
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
//! Outgoing frames (sent by the host's stack or other programs' sockets)
//! are not received unless OUTBOUND is true. Frames a ToDevice sends are
//! not received even then: ToDevice bypasses the qdisc layer, where Linux
//! copies outgoing frames to packet sockets.
//!
//! **AF_XDP (`METHOD XDP`).** FromDevice attaches a six-instruction XDP
//! program to DEVNAME that redirects the frames arriving on receive queue
//! QUEUE (default 0) into an AF_XDP socket, and reads them from the
//! socket's RX ring; frames on other queues continue to the host stack.
//! The program is attached with a BPF link and goes away when the router
//! exits. XDP_MODE picks native (driver) or generic attachment; the default
//! tries native first, which veth supports. ZEROCOPY asks for zero-copy
//! sockets (drivers with AF_XDP zero-copy only); by default rclick tries
//! zero-copy and uses copy mode where the driver has none. A ToDevice with
//! METHOD XDP on the same device and queue shares the socket. Compared
//! with AF_PACKET, frames come one by one without the ring's block timeout
//! (lower latency under light load) and without offload metadata: a veth
//! peer sends TCP with checksum offload, so FromDevice recognizes partial
//! checksums (the field holds just the pseudo-header sum) and completes
//! them. While an XDP program is attached, Linux turns segmentation
//! offload off on the veth peer, so no super-frames arrive. If the kernel
//! refuses any step (no AF_XDP, no BPF, a program already attached, a
//! queue in use), FromDevice says why and falls back to AF_PACKET; the
//! `method` handler tells which is in use. AF_XDP needs root (CAP_NET_ADMIN
//! and CAP_BPF). PROMISC, OUTBOUND and PROTOCOL apply to AF_PACKET only;
//! the timestamp annotation is the time of reading, and the packet type
//! annotation is derived from the destination address.
//! On hot swap, a same-named FromDevice (or ToDevice) on the same device
//! and queue takes the socket over from its predecessor.
//!
//! **Parallel input (FANOUT).** Several FromDevice elements with FANOUT
//! on the same device share its frames instead of each receiving a copy:
//! their AF_PACKET sockets join one Linux `PACKET_FANOUT` group, and the
//! kernel hands each frame to one socket of the group. With the default
//! FANOUT_MODE `hash`, the choice is by a symmetric hash of the flow
//! (addresses and ports, so both directions of a connection hash alike):
//! every packet of a flow goes to the same element, in order, so per-flow
//! state needs no sharing between the elements (or the threads running
//! them). That holds while the group's members stay the same: the kernel
//! picks a member by the hash modulo the number of members, so whenever a
//! member joins or leaves (the elements joining one by one as the router
//! starts, a hot swap's new sockets joining and its old ones leaving,
//! another process joining or leaving the group), most flows move to
//! another element, and packets of a flow may then be handled by two
//! elements at once or out of order. The group is the device's (its id is
//! the interface index; where the index exceeds 65535, FANOUT_ID must be
//! given) unless FANOUT_ID names another; elements that should share must
//! agree on FANOUT_MODE, FANOUT_ROLLOVER, OUTBOUND and PROTOCOL (the
//! kernel refuses a mismatch, and FromDevice then fails to initialize,
//! saying why). Group ids are per network namespace, not per program:
//! other programs, or other rclick processes, that join the same id share
//! the device's frames with the group (a packet capture tool may use the
//! interface index as its default id too), and a group of another program
//! with that id on another device, or with other settings, makes the join
//! fail; give FANOUT_ID to keep clear of them. A FromDevice without FANOUT
//! still gets a copy of every frame. With OUTBOUND false, the group is
//! made with `PACKET_FANOUT_FLAG_IGNORE_OUTGOING` (Linux 6.2 and later),
//! so frames the host sends on the device never reach its sockets. Older
//! kernels ignore the flag (or refuse it, and FromDevice joins without
//! it): there the group hands its members their share of outgoing frames
//! as well, which FromDevice reads and discards (extra copies, counted in
//! `ignored_outgoing`). A socket joins the group before it takes any
//! frame (until then a socket filter drops everything), so no frame is
//! received by two elements of a group; a frame the kernel assigns to it
//! in the instant between joining and lifting that filter is lost. IP
//! fragments carry no ports, so a fragmented datagram is hashed by its
//! addresses alone and may reach another element than its flow's
//! unfragmented packets. FANOUT is for AF_PACKET: with METHOD XDP, run one
//! FromDevice per receive QUEUE instead (the device spreads flows over its
//! queues, by RSS on hardware, by the sender's transmit queue on veth). It
//! cannot be combined with QUEUE (`FANOUT_MODE qm` spreads by queue).
//! On hot swap, the new configuration's sockets join the group while the
//! old ones are still members, so a swap cannot change the mode of a group
//! in use (the kernel refuses, and the swap with it; use another
//! FANOUT_ID), and frames the kernel gave the old sockets that the old
//! router has not read when it stops are lost.
//!
//! **Overload.** Where the kernel's receive work (the copy into the ring)
//! runs in the NET_RX softirq on the router's CPU, it preempts the router
//! whenever frames arrive: past its peak an AF_PACKET router forwards less
//! the more it is offered (receive livelock; on this project's veth
//! benchmark, 0.55-0.6 of its peak). Threaded NAPI makes that work a thread
//! the scheduler shares fairly with the router, and the rate then holds at
//! about 0.9 of the peak: `echo 1 > /sys/class/net/DEV/threaded` (veth
//! needs `ethtool -K DEV gro on` for a NAPI instance of its own). AF_XDP
//! with native XDP on veth already runs in that thread. See
//! docs/benchmarks.md, "Forwarding rate vs input rate".
//! An AF_XDP frame holds at most 3840 bytes (4096-byte UMEM frames less
//! the kernel's 256-byte headroom); the kernel drops longer frames, counted
//! in `kernel_drops`, and FromDevice warns at start when the device's MTU
//! allows them. In generic mode the veth peer keeps segmentation offload,
//! so bulk TCP arrives in super-frames that do not fit: use native mode,
//! or turn GRO/TSO off on the peer (`ethtool -K DEV tso off gso off`).
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
//!   Members of a FANOUT group must agree on it.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 64.
//! - **FORCE_IP** (boolean): emit only IP packets, with the network header
//!   and destination IP annotation set; others go to output 1 if present.
//! - **TIMESTAMP** (boolean): set the timestamp annotation from the kernel.
//!   Default true.
//! - **METHOD**, **CAPTURE** (word): `LINUX` or `PCAP` (both AF_PACKET), or
//!   `XDP` (AF_XDP). Default `LINUX`.
//! - **XDP_MODE** (word): `auto`, `native` or `generic`: how the XDP
//!   program is attached with METHOD XDP. Default `auto` (native, else
//!   generic).
//! - **ZEROCOPY** (boolean): with METHOD XDP, require (true) or refuse
//!   (false) a zero-copy socket. Default: zero-copy where the driver has it.
//! - **ENCAP** (word): only `ETHER` is supported.
//! - **BPF_FILTER** (string): accepted; ignored with a warning (as Click
//!   ignores it outside METHOD PCAP).
//! - **SNIFFER** (boolean): accepted; ignored.
//! - **QUEUE** (integer): the receive queue. With METHOD XDP, the socket
//!   is bound to this queue (default 0); run one FromDevice per queue to
//!   cover a multi-queue device. With AF_PACKET, only frames the device
//!   received on this queue are taken (a socket filter on the queue
//!   number); without QUEUE, frames from every queue.
//! - **FANOUT** (boolean): join the device's PACKET_FANOUT group, sharing
//!   its frames with the group's other sockets (see above). Default false,
//!   or true when FANOUT_ID, FANOUT_MODE or `FANOUT_ROLLOVER true` is
//!   given.
//! - **FANOUT_ID** (integer 0..65535): the group to join. Default: the
//!   device's interface index (an error where it exceeds 65535). Another
//!   program may use the same id.
//! - **FANOUT_MODE** (word): how the kernel picks a group member for each
//!   frame: `hash` (by flow; the default), `lb` (round robin), `cpu` (by
//!   the receiving CPU), `rollover` (fill one socket, then the next),
//!   `random`, or `qm` (by the device's receive queue).
//! - **FANOUT_ROLLOVER** (boolean): when the chosen socket's ring is full,
//!   give the frame to another member instead of dropping it (flows then
//!   stray under overload). Default false. Not with FANOUT_MODE
//!   `rollover`, which does that already.
//!
//! ## Handlers
//! - `count` (read): frames received.
//! - `ignored_outgoing` (read): frames the host sent that the kernel
//!   delivered although OUTBOUND is false, which FromDevice discarded (on
//!   Linux before 4.20, or with FANOUT before 6.2; otherwise 0).
//! - `kernel_drops` (read): frames the kernel dropped because the ring was
//!   full (PACKET_STATISTICS, accumulated; with AF_XDP, the socket's
//!   `rx_dropped` plus `rx_ring_full`).
//! - `drops` (read): `kernel_drops` plus frames FromDevice itself dropped
//!   (malformed or unsplittable offloaded frames).
//! - `encap` (read): `ETHER`.
//! - `method` (read): the I/O in use: `LINUX`, or `XDP native copy`
//!   (mode and zero-copy as attached).
//! - `xdp_stats` (read): with AF_XDP, the socket's kernel counters
//!   (`rx_dropped`: no free frame to copy into, or too long;
//!   `rx_ring_full`: the RX ring was full; `rx_fill_empty`: times the
//!   kernel found the fill ring empty) and `frames`, the receive frames
//!   accounted for in the rings (2048 when idle).
//! - `fanout` (read): the group joined, as `MODE ID` (`hash 4`;
//!   `hash+rollover 4` with FANOUT_ROLLOVER); empty without FANOUT.
//! - `reset_counts` (write): zeroes `count`, `ignored_outgoing` and the
//!   drop counters.
//!
//! ## Example
//! ```click
//! FromDevice(eth0, PROMISC true) -> Queue -> ToDevice(eth1);
//! FromDevice(eth2, METHOD XDP, QUEUE 0) -> Queue -> ToDevice(eth3, METHOD XDP);
//! // Two elements sharing eth4's frames by flow:
//! FromDevice(eth4, FANOUT true) -> c0 :: Counter -> Discard;
//! FromDevice(eth4, FANOUT true) -> c1 :: Counter -> Discard;
//! ```

use std::cell::Cell;
use std::os::fd::RawFd;

use rclick_core::conf::{parse_word, Args};
use rclick_core::element::processing;
use rclick_core::packet::{anno, PacketType};
use rclick_core::wire::{EtherAddr, EtherFrame};
use rclick_core::{
    ConfigResult, Ctx, Element, Handler, InitCtx, Interest, TaskId, TimerId, Timestamp,
};

use super::afpacket::{
    complete_if_partial, materialize, Fanout, FanoutMode, PacketSocket, RingGeometry, RxRing,
    PACKET_OUTGOING,
};
use super::afxdp::{self, RxPort, XdpMode};
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
    queue: u32,
    /// QUEUE was given: AF_PACKET takes only that queue's frames.
    only_queue: bool,
    /// METHOD XDP was asked for.
    want_xdp: bool,
    xdp_mode: XdpMode,
    zerocopy: Option<bool>,
    /// FANOUT: join a PACKET_FANOUT group (id None: from the device index).
    fanout: Option<(Option<u16>, FanoutMode, bool)>,
    /// The group joined, for the `fanout` handler.
    joined: Option<Fanout>,
    sock: Option<PacketSocket>,
    ring: Option<RxRing>,
    xsk: Option<RxPort>,
    mac: Option<[u8; 6]>,
    /// A hot-swap successor waiting for its predecessor's AF_XDP socket.
    awaiting_xsk: Option<TimerId>,
    task: Option<TaskId>,
    count: u64,
    own_drops: u64,
    /// Outgoing frames the kernel delivered although OUTBOUND is false.
    ignored_outgoing: u64,
    kernel_drops: Cell<u64>,
    /// PollDevice: the task polls the ring without sleeping.
    poll: bool,
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
            queue: 0,
            only_queue: false,
            want_xdp: false,
            xdp_mode: XdpMode::Auto,
            zerocopy: None,
            fanout: None,
            joined: None,
            sock: None,
            ring: None,
            xsk: None,
            mac: None,
            awaiting_xsk: None,
            task: None,
            count: 0,
            own_drops: 0,
            ignored_outgoing: 0,
            kernel_drops: Cell::new(0),
            poll: false,
        }
    }
}

impl FromDevice {
    /// PollDevice: a FromDevice whose task polls the device.
    pub fn polling() -> FromDevice {
        FromDevice {
            poll: true,
            ..FromDevice::default()
        }
    }

    /// PollDevice's arguments (Click's kernel element:
    /// `PollDevice(DEVNAME [, PROMISC, BURST, *keywords* TIMESTAMP, QUIET,
    /// ALLOW_NONEXISTENT, HEADROOM])`, plus FromDevice's keywords).
    fn configure_polling(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let devname: String = args.read_mp("DEVNAME");
        let promisc: Option<bool> = args.read_p("PROMISC");
        let burst: Option<usize> = args.read_p("BURST");
        let _quiet: bool = args.read_or("QUIET", false);
        let _allow: bool = args.read_or("ALLOW_NONEXISTENT", false);
        let mut rest = args.take_rest();
        args.complete()?;
        let mut conf = vec![devname];
        if let Some(p) = promisc {
            conf.push(format!("PROMISC {p}"));
        }
        if let Some(b) = burst {
            conf.push(format!("BURST {b}"));
        }
        conf.append(&mut rest);
        self.poll = false;
        let r = self.configure(&conf.join(", "), ctx);
        self.poll = true;
        r
    }

    /// The device this element reads.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    fn kernel_drops(&self) -> u64 {
        if let Some(p) = self.xsk.as_ref() {
            // AF_XDP counters are cumulative; kernel_drops holds the value
            // at the last reset, negated.
            let st = p.stats();
            return (st.rx_dropped + st.rx_ring_full).wrapping_add(self.kernel_drops.get());
        }
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
        let mut outgoing = 0u64;
        while n < self.burst {
            let got = ring.next(|frame| {
                if frame.pkttype == PACKET_OUTGOING && !outbound {
                    outgoing += 1;
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
        self.ignored_outgoing += outgoing;
        n
    }
}

/// The default PACKET_FANOUT group id of device `name`: its interface
/// index, which must fit the id's 16 bits.
fn default_fanout_id(name: &str, index: i32) -> Result<u16, String> {
    u16::try_from(index).map_err(|_| {
        format!(
            "{name}: interface index {index} does not fit a PACKET_FANOUT group id \
             (0 to 65535), so it cannot be the default group; give FANOUT_ID"
        )
    })
}

/// The packet type of a frame received without the kernel's word on it
/// (AF_XDP), from its destination and the device's address `mac`.
#[inline]
fn packet_type(frame: &[u8], mac: Option<[u8; 6]>) -> PacketType {
    let dst = EtherFrame::new_checked(frame).map_or(EtherAddr::default(), |f| f.dst());
    if dst.is_broadcast() {
        PacketType::Broadcast
    } else if dst.is_group() {
        PacketType::Multicast
    } else if mac.is_some_and(|m| m != dst.0) {
        PacketType::OtherHost
    } else {
        PacketType::Host
    }
}

/// The device's Ethernet address, to tell frames for this host from
/// frames for others (AF_XDP gives no packet type).
fn device_mac(ifname: &str) -> Option<[u8; 6]> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{ifname}/address")).ok()?;
    let mut mac = [0u8; 6];
    let mut parts = text.trim().split(':');
    for b in &mut mac {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    Some(mac)
}

impl FromDevice {
    /// Takes up to BURST frames from the AF_XDP socket. Returns how many.
    fn drain_xdp(&mut self, ctx: &mut Ctx) -> usize {
        let Some(port) = self.xsk.as_mut() else {
            return 0;
        };
        let (headroom, snaplen, timestamp, fip, mac) = (
            self.headroom,
            self.snaplen,
            self.timestamp,
            self.force_ip,
            self.mac,
        );
        let now = ctx.now();
        let mut emitted = 0u64;
        let n = port.receive(self.burst as u32, |bytes| {
            let take = bytes.len().min(snaplen);
            let mut p = rclick_core::Packet::with_room(headroom, &bytes[..take], 0);
            complete_if_partial(p.writable());
            if bytes.len() > take {
                p.set_anno_bytes(
                    anno::EXTRA_LENGTH,
                    &((bytes.len() - take) as u32).to_ne_bytes(),
                );
            }
            if timestamp {
                p.set_timestamp_anno(now);
            }
            p.set_packet_type_anno(packet_type(bytes, mac));
            emitted += 1;
            if !fip || force_ip(&mut p, dlt::ETHER) {
                ctx.emit(0, p);
            } else {
                ctx.emit(1, p);
            }
        });
        self.count += emitted;
        n as usize
    }

    /// Opens the AF_PACKET socket and its ring; returns the descriptor to
    /// watch.
    fn open_af_packet(&mut self, chatter: &dyn Fn(&str)) -> Result<RawFd, String> {
        let name = &self.ifname;
        let fanout = match self.fanout {
            Some((id, mode, rollover)) => Some(Fanout {
                // Default: the device's own group, so that every FANOUT
                // element on the device meets in it.
                id: match id {
                    Some(id) => id,
                    None => default_fanout_id(name, super::afpacket::ifindex(name)?)?,
                },
                mode,
                rollover,
                ignore_outgoing: !self.outbound,
            }),
            None => None,
        };
        // With fanout, the socket binds (and starts receiving) only once
        // the ring is ready, and joins the group at once.
        let mut sock = match fanout {
            Some(_) => PacketSocket::open_unbound(name)?,
            None => PacketSocket::open(name, self.protocol, true)?,
        };
        sock.enable_vnet_hdr();
        if !self.outbound {
            sock.ignore_outgoing();
        }
        if self.only_queue {
            sock.only_queue(self.queue)
                .map_err(|e| format!("{name}: {e}"))?;
        }
        if self.promisc {
            if let Err(e) = sock.set_promisc() {
                chatter(&format!("warning: cannot set promiscuous mode: {e}"));
            }
        }
        let ring =
            RxRing::new(&sock, RingGeometry::default()).map_err(|e| format!("{name}: {e}"))?;
        if let Some(f) = fanout {
            sock.bind_in_fanout(name, self.protocol, f)?;
            self.joined = Some(f);
        }
        let fd = sock.fd();
        self.sock = Some(sock);
        self.ring = Some(ring);
        Ok(fd)
    }

    /// Warns when the device's MTU allows frames longer than an AF_XDP
    /// frame holds (the kernel drops those, counted in `kernel_drops`).
    fn check_mtu(&self, chatter: &dyn Fn(&str)) {
        let mtu = std::fs::read_to_string(format!("/sys/class/net/{}/mtu", self.ifname))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if let Some(mtu) = mtu.filter(|&m| m + 18 > afxdp::MAX_RX_LEN) {
            chatter(&format!(
                "warning: {} has MTU {mtu}; AF_XDP receives frames of at most {} bytes and the kernel drops longer ones",
                self.ifname,
                afxdp::MAX_RX_LEN
            ));
        }
    }

    /// Opens the AF_XDP socket, or falls back to AF_PACKET with a message
    /// saying why. A hot-swap successor whose predecessor still holds the
    /// socket waits for it (take_state, or the timer once the swap is done).
    fn open_xdp(&mut self, ctx: &mut InitCtx) -> Result<bool, String> {
        match afxdp::claim_rx(&self.ifname, self.queue, self.xdp_mode, self.zerocopy) {
            Ok(port) => {
                ctx.add_select(port.fd(), Interest::READ);
                self.xsk = Some(port);
                let name = ctx.element_name().to_string();
                self.check_mtu(&|m| ctx.chatter(&format!("{name}: {m}")));
                Ok(true)
            }
            Err(afxdp::ClaimError::Busy(_)) if ctx.is_hotswap_successor() => {
                let t = ctx.new_timer();
                ctx.schedule_timer_at(t, ctx.now());
                self.awaiting_xsk = Some(t);
                Ok(true)
            }
            Err(e) => {
                ctx.chatter(&format!(
                    "{}: warning: AF_XDP unavailable, using AF_PACKET: {e}",
                    ctx.element_name()
                ));
                Ok(false)
            }
        }
    }

    /// Which I/O method is in use, for the `method` handler.
    fn method(&self) -> String {
        match &self.xsk {
            Some(p) => format!(
                "XDP {} {}",
                p.mode().map_or("?", XdpMode::name),
                if p.zerocopy() { "zerocopy" } else { "copy" }
            ),
            None if self.awaiting_xsk.is_some() => "XDP (waiting)".into(),
            None => "LINUX".into(),
        }
    }

    fn xdp_stats(&self) -> String {
        match self.xsk.as_ref() {
            Some(p) => {
                let st = p.stats();
                format!(
                    "rx_dropped {}\nrx_ring_full {}\nrx_fill_empty {}\nframes {}\n",
                    st.rx_dropped,
                    st.rx_ring_full,
                    st.rx_fill_empty,
                    p.frames_accounted()
                )
            }
            None => String::new(),
        }
    }

    fn reset_counts(&mut self) {
        self.kernel_drops();
        self.count = 0;
        self.own_drops = 0;
        self.ignored_outgoing = 0;
        self.kernel_drops.set(0);
        if self.xsk.is_some() {
            let now = self.kernel_drops();
            self.kernel_drops.set(0u64.wrapping_sub(now));
        }
    }
}

const HANDLERS: &[Handler<FromDevice>] = &[
    Handler::data("count", |e| &e.count),
    Handler::data("ignored_outgoing", |e| &e.ignored_outgoing),
    Handler::read("drops", |e, _| (e.kernel_drops() + e.own_drops).to_string()),
    Handler::read("kernel_drops", |e, _| {
        if e.sock.is_some() || e.xsk.is_some() {
            e.kernel_drops().to_string()
        } else {
            "??".into()
        }
    }),
    Handler::read("method", |e, _| e.method()),
    Handler::read("fanout", |e, _| {
        e.joined.map_or_else(String::new, |f| f.to_string())
    }),
    Handler::read("xdp_stats", |e, _| e.xdp_stats()),
    Handler::read("encap", |_, _| "ETHER".into()),
    Handler::button("reset_counts", |e, _, _| {
        e.reset_counts();
        Ok(())
    }),
];

rclick_core::element_class!(FromDevice);

impl Element for FromDevice {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        if self.poll {
            return self.configure_polling(conf, _ctx);
        }
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
        let queue: Option<u32> = args.read("QUEUE");
        self.only_queue = queue.is_some();
        let xdp_mode = args.read_with("XDP_MODE", parse_word);
        self.zerocopy = args.read("ZEROCOPY");
        let fanout: Option<bool> = args.read("FANOUT");
        let fanout_id: Option<u16> = args.read("FANOUT_ID");
        let fanout_mode = args.read_with("FANOUT_MODE", parse_word);
        let fanout_rollover: Option<bool> = args.read("FANOUT_ROLLOVER");
        args.complete()?;
        self.queue = queue.unwrap_or(0);
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
            Some("XDP") => self.want_xdp = true,
            Some(_) => return Err("bad METHOD (expected LINUX, PCAP or XDP)".into()),
        }
        if let Some(m) = xdp_mode {
            self.xdp_mode =
                XdpMode::parse(&m).ok_or("bad XDP_MODE (expected auto, native or generic)")?;
        }
        let mode = match fanout_mode.as_deref() {
            None => FanoutMode::Hash,
            Some(m) => FanoutMode::parse(m)
                .ok_or("bad FANOUT_MODE (expected hash, lb, cpu, rollover, random or qm)")?,
        };
        // FANOUT_ID, FANOUT_MODE or FANOUT_ROLLOVER true ask for fanout
        // unless FANOUT is false (FANOUT_ROLLOVER false asks for nothing).
        let fanout_asked =
            fanout_id.is_some() || fanout_mode.is_some() || fanout_rollover == Some(true);
        self.fanout = None;
        if fanout.unwrap_or(fanout_asked) {
            if self.want_xdp {
                return Err(
                    "FANOUT is for AF_PACKET; with METHOD XDP, use one FromDevice per QUEUE".into(),
                );
            }
            if self.only_queue {
                return Err(
                    "QUEUE and FANOUT cannot be combined (FANOUT_MODE qm spreads frames by queue)"
                        .into(),
                );
            }
            let rollover = fanout_rollover.unwrap_or(false);
            if rollover && mode == FanoutMode::Rollover {
                // The kernel refuses the rollover flag on a rollover group.
                return Err(
                    "FANOUT_ROLLOVER true cannot be combined with FANOUT_MODE rollover \
                     (that mode already moves frames on when a socket is full)"
                        .into(),
                );
            }
            self.fanout = Some((fanout_id, mode, rollover));
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
        self.burst = burst.min(rclick_core::batch::BATCH_CAPACITY);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if self.want_xdp {
            self.mac = device_mac(&self.ifname);
            if self.open_xdp(ctx)? {
                self.task = Some(ctx.new_task(false));
                return Ok(());
            }
        }
        let name = ctx.element_name().to_string();
        let fd = self.open_af_packet(&|m| ctx.chatter(&format!("{name}: {m}")))?;
        if self.poll {
            self.task = Some(ctx.new_task(true));
            return Ok(());
        }
        ctx.add_select(fd, Interest::READ);
        self.task = Some(ctx.new_task(false));
        Ok(())
    }

    fn selected(&mut self, _fd: RawFd, _readable: bool, _writable: bool, ctx: &mut Ctx) {
        if let Some(p) = self.xsk.as_ref() {
            if p.ready() {
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                }
            }
            return;
        }
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
        let n = if self.xsk.is_some() {
            self.drain_xdp(ctx)
        } else {
            self.drain(ctx)
        };
        if n > 0 || self.poll {
            ctx.fast_reschedule();
        }
        n > 0
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<FromDevice>() else {
            return false;
        };
        if self.awaiting_xsk.is_none() || old.ifname != self.ifname || old.queue != self.queue {
            return false;
        }
        let Some(port) = old.xsk.take() else {
            return false;
        };
        ctx.add_select(port.fd(), Interest::READ);
        self.xsk = Some(port);
        self.awaiting_xsk = None;
        true
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        // A hot-swap successor that got no socket from a predecessor opens
        // its own now that the old router is gone.
        if self.awaiting_xsk != Some(timer) || self.xsk.is_some() {
            return;
        }
        self.awaiting_xsk = None;
        let name = ctx.element_name().to_string();
        let fd = match afxdp::claim_rx(&self.ifname, self.queue, self.xdp_mode, self.zerocopy) {
            Ok(port) => {
                let fd = port.fd();
                self.xsk = Some(port);
                Ok(fd)
            }
            Err(e) => {
                ctx.chatter(&format!(
                    "{name}: warning: AF_XDP unavailable, using AF_PACKET: {e}"
                ));
                self.open_af_packet(&|m| ctx.chatter(&format!("{name}: {m}")))
            }
        };
        match fd {
            Ok(fd) => {
                ctx.add_select(fd, Interest::READ);
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                }
            }
            Err(e) => ctx.chatter(&format!("{name}: {e}")),
        }
    }

    fn cleanup(&mut self) {
        self.joined = None;
        self.xsk = None;
        self.ring = None;
        self.sock = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdp_packet_types() {
        let mac = Some([2, 0, 0, 0, 0, 1]);
        let frame = |dst: [u8; 6]| {
            let mut f = vec![0u8; 60];
            f[..6].copy_from_slice(&dst);
            f
        };
        assert_eq!(packet_type(&frame([0xff; 6]), mac), PacketType::Broadcast);
        assert_eq!(
            packet_type(&frame([0x01, 0, 0x5e, 0, 0, 1]), mac),
            PacketType::Multicast
        );
        assert_eq!(
            packet_type(&frame([2, 0, 0, 0, 0, 1]), mac),
            PacketType::Host
        );
        assert_eq!(
            packet_type(&frame([2, 0, 0, 0, 0, 2]), mac),
            PacketType::OtherHost
        );
        assert_eq!(
            packet_type(&frame([2, 0, 0, 0, 0, 2]), None),
            PacketType::Host
        );
        assert_eq!(packet_type(&[0xff; 4], mac), PacketType::OtherHost);
    }

    #[test]
    fn default_fanout_ids() {
        assert_eq!(default_fanout_id("eth0", 4), Ok(4));
        assert_eq!(default_fanout_id("eth0", 65535), Ok(65535));
        for index in [65536, 70000, -1] {
            let e = default_fanout_id("eth0", index).expect_err("too big");
            assert!(
                e.contains(&format!("eth0: interface index {index}"))
                    && e.ends_with("give FANOUT_ID"),
                "{e}"
            );
        }
    }
}
