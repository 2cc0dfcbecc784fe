//! Linux AF_PACKET support for FromDevice and ToDevice: socket setup,
//! promiscuous membership, the TPACKET_V3 receive ring, batched sends with
//! `sendmmsg`, kernel statistics, and completion of offloaded packets
//! (partial checksums and GSO super-frames announced by `PACKET_VNET_HDR`).
//!
//! Kernel ABI used (include/uapi/linux/if_packet.h, virtio_net.h):
//! - a ring of `nblocks` blocks of `block_size` bytes; each block starts with
//!   `tpacket_block_desc` (`block_status` at byte 8, `num_pkts` at 12,
//!   `offset_to_first_pkt` at 16); the kernel hands a block to user space
//!   by setting `TP_STATUS_USER` and takes it back when user space writes
//!   `TP_STATUS_KERNEL`;
//! - each packet starts with a 48-byte `tpacket3_hdr` (`tp_next_offset`,
//!   `tp_sec`, `tp_nsec`, `tp_snaplen`, `tp_len`, `tp_status`, `tp_mac`,
//!   ...), followed by a `sockaddr_ll` (`sll_pkttype` at byte 10 of it);
//! - with `PACKET_VNET_HDR`, a 10-byte `virtio_net_hdr` sits just before the
//!   link-level header (at `tp_mac - 10`), in host byte order.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use std::net::{Ipv4Addr, Ipv6Addr};

use rclick_core::wire::ipv4::{PROTO_TCP, PROTO_UDP};
use rclick_core::wire::tcp::{TCP_CWR, TCP_FIN, TCP_PSH};
use rclick_core::wire::{
    checksum, ether, ipv6, udp, EtherFrame, Ipv4Header, Ipv6Header, PseudoHeader, TcpHeader,
    UdpHeader, VlanTag, ETHERTYPE_IP, ETHERTYPE_IP6,
};
use rclick_core::Packet;

const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_FANOUT: libc::c_int = 18;
const PACKET_FANOUT_FLAG_ROLLOVER: u32 = 0x1000;
/// Linux 6.2+: the group's hook skips frames the host sends (the group
/// counterpart of PACKET_IGNORE_OUTGOING, which a member's own hook obeys
/// but the group's does not).
const PACKET_FANOUT_FLAG_IGNORE_OUTGOING: u32 = 0x4000;
const PACKET_MR_PROMISC: u16 = 1;
const TPACKET_V3: libc::c_int = 2;
const ETH_P_ALL: u16 = 0x0003;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// The packet's transport checksum is partial (only without a vnet header
/// does the kernel say so this way).
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;
/// The kernel took an 802.1Q tag off the frame (VLAN receive offload) and
/// reports it in `tp_vlan_tci` (and `tp_vlan_tpid` with TPID_VALID).
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

/// `sll_pkttype` of packets the host sends.
pub const PACKET_OUTGOING: u8 = 4;

const TPACKET3_HDRLEN: usize = 48;
const VNET_HDR_LEN: usize = 10;
const VNET_F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_UDP: u8 = 3;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
const GSO_ECN: u8 = 0x80;

fn errno_string() -> String {
    io::Error::last_os_error().to_string()
}

/// The index of interface `name`.
pub fn ifindex(name: &str) -> Result<i32, String> {
    let c = std::ffi::CString::new(name).map_err(|_| format!("{name}: bad device name"))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(format!("{name}: no such device ({})", errno_string()))
    } else {
        Ok(idx as i32)
    }
}

/// The protocol a receiving socket binds to (network order): `protocol`
/// (host order), or every protocol for 0.
fn receive_proto(protocol: u16) -> u16 {
    if protocol == 0 { ETH_P_ALL } else { protocol }.to_be()
}

/// The running kernel's release (`uname -r`), or empty.
fn kernel_release() -> String {
    // SAFETY: utsname is plain data; zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is writable; uname fills it with NUL-terminated strings.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether kernel release `release` ("6.8.0-45-generic") is at least
/// `major.minor`; false when it cannot be read.
fn kernel_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// Classic BPF `ret #k`.
const BPF_RET_K: u16 = 0x06;

fn bpf_insn(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

fn setsockopt_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> bool {
    // SAFETY: passes a pointer to a live c_int and its size.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// How a `PACKET_FANOUT` group spreads frames over its sockets
/// (include/uapi/linux/if_packet.h, `PACKET_FANOUT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanoutMode {
    /// By the symmetric flow hash: each flow to one socket.
    Hash,
    /// Round robin.
    Lb,
    /// By the CPU the frame arrived on.
    Cpu,
    /// Fill one socket, then the next.
    Rollover,
    /// At random.
    Random,
    /// By the receive queue the device recorded.
    Qm,
}

impl FanoutMode {
    pub fn parse(s: &str) -> Option<FanoutMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "hash" => FanoutMode::Hash,
            "lb" => FanoutMode::Lb,
            "cpu" => FanoutMode::Cpu,
            "rollover" => FanoutMode::Rollover,
            "random" | "rnd" => FanoutMode::Random,
            "qm" | "queue" => FanoutMode::Qm,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            FanoutMode::Hash => "hash",
            FanoutMode::Lb => "lb",
            FanoutMode::Cpu => "cpu",
            FanoutMode::Rollover => "rollover",
            FanoutMode::Random => "random",
            FanoutMode::Qm => "qm",
        }
    }

    /// The kernel's `PACKET_FANOUT_*` value.
    fn kernel(self) -> u32 {
        match self {
            FanoutMode::Hash => 0,
            FanoutMode::Lb => 1,
            FanoutMode::Cpu => 2,
            FanoutMode::Rollover => 3,
            FanoutMode::Random => 4,
            FanoutMode::Qm => 5,
        }
    }
}

/// A `PACKET_FANOUT` group to join: sockets bound to the same device with
/// the same protocol, mode and flags, and the same id (per network
/// namespace), share the device's frames, each frame going to one socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fanout {
    pub id: u16,
    pub mode: FanoutMode,
    /// `PACKET_FANOUT_FLAG_ROLLOVER`: a frame whose socket is full goes to
    /// another socket of the group instead of being dropped. Not with mode
    /// `Rollover` (the kernel refuses the pair).
    pub rollover: bool,
    /// `PACKET_FANOUT_FLAG_IGNORE_OUTGOING`: the group does not take frames
    /// the host sends.
    pub ignore_outgoing: bool,
}

impl Fanout {
    /// The PACKET_FANOUT option value: id, mode and flags.
    fn option(self, ignore_outgoing: bool) -> u32 {
        let mut flags = 0;
        if self.rollover {
            flags |= PACKET_FANOUT_FLAG_ROLLOVER;
        }
        if ignore_outgoing {
            flags |= PACKET_FANOUT_FLAG_IGNORE_OUTGOING;
        }
        u32::from(self.id) | ((self.mode.kernel() | flags) << 16)
    }
}

impl std::fmt::Display for Fanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.mode.name())?;
        if self.rollover {
            f.write_str("+rollover")?;
        }
        write!(f, " {}", self.id)
    }
}

/// An AF_PACKET raw socket bound to one interface.
pub struct PacketSocket {
    fd: OwnedFd,
    pub ifindex: i32,
    /// `PACKET_VNET_HDR` is on: received frames carry a virtio_net_hdr.
    pub vnet_hdr: bool,
}

impl PacketSocket {
    /// Opens a nonblocking packet socket on `ifname`. `protocol` (host
    /// order) is the ethertype to receive, 0 for all; `receive` false binds
    /// for sending only (no packets are queued to the socket).
    pub fn open(ifname: &str, protocol: u16, receive: bool) -> Result<PacketSocket, String> {
        let sock_proto = if receive { receive_proto(protocol) } else { 0 };
        Self::create(ifname, sock_proto).and_then(|s| s.bind(ifname, sock_proto).map(|_| s))
    }

    /// Opens a nonblocking packet socket for `ifname` that receives nothing
    /// until [`bind_in_fanout`](Self::bind_in_fanout) binds it: options and
    /// the ring can be set up before the first frame arrives.
    pub fn open_unbound(ifname: &str) -> Result<PacketSocket, String> {
        Self::create(ifname, 0)
    }

    fn create(ifname: &str, sock_proto: u16) -> Result<PacketSocket, String> {
        let ifindex = ifindex(ifname)?;
        // SAFETY: plain socket(2) call.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                i32::from(sock_proto),
            )
        };
        if raw < 0 {
            return Err(format!("{ifname}: socket: {}", errno_string()));
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(PacketSocket {
            fd,
            ifindex,
            vnet_hdr: false,
        })
    }

    /// Binds an [`open_unbound`](Self::open_unbound) socket to receive
    /// `protocol` (host order; 0 for all) and joins it to the fanout group
    /// `fanout`. Until it has joined, a filter drops every frame, so the
    /// socket never holds a copy of a frame the group also delivers.
    ///
    /// With `fanout.ignore_outgoing`, the group is asked to skip outgoing
    /// frames; a kernel before 6.2 that refuses the flag (EINVAL) is asked
    /// again without it (its group then delivers outgoing frames too). On
    /// 6.2 and later, EINVAL means the group differs, and is reported.
    pub fn bind_in_fanout(
        &self,
        ifname: &str,
        protocol: u16,
        fanout: Fanout,
    ) -> Result<(), String> {
        self.set_filter(&[bpf_insn(BPF_RET_K, 0, 0, 0)])
            .map_err(|e| format!("{ifname}: SO_ATTACH_FILTER: {e}"))?;
        self.bind(ifname, receive_proto(protocol))?;
        let join = |ignore_outgoing: bool| {
            let arg = fanout.option(ignore_outgoing);
            if setsockopt_int(self.fd(), SOL_PACKET, PACKET_FANOUT, arg as libc::c_int) {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        let mut joined = join(fanout.ignore_outgoing);
        if fanout.ignore_outgoing
            && joined
                .as_ref()
                .is_err_and(|e| e.raw_os_error() == Some(libc::EINVAL))
            && !kernel_at_least(&kernel_release(), 6, 2)
        {
            joined = join(false);
        }
        if let Err(err) = joined {
            let why = match err.raw_os_error() {
                Some(libc::EINVAL) => {
                    "; the group exists with another mode, FANOUT_ROLLOVER, OUTBOUND, \
                     PROTOCOL or device, or the kernel lacks this mode"
                }
                Some(libc::ENOSPC) => "; the group is full",
                Some(libc::ENOPROTOOPT) => "; the kernel has no PACKET_FANOUT",
                _ => "",
            };
            return Err(format!(
                "{ifname}: cannot join PACKET_FANOUT group {} (mode {}): {err}{why}",
                fanout.id,
                fanout.mode.name()
            ));
        }
        // The value is ignored, but the kernel wants an int's worth.
        if !setsockopt_int(self.fd(), libc::SOL_SOCKET, libc::SO_DETACH_FILTER, 0) {
            return Err(format!("{ifname}: SO_DETACH_FILTER: {}", errno_string()));
        }
        Ok(())
    }

    /// Attaches the classic BPF socket filter `prog`.
    fn set_filter(&self, prog: &[libc::sock_filter]) -> Result<(), String> {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: fprog points at `prog`, which outlives the call; the
        // kernel copies the program.
        let r = unsafe {
            libc::setsockopt(
                self.fd(),
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                (&fprog as *const libc::sock_fprog).cast(),
                std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(errno_string());
        }
        Ok(())
    }

    fn bind(&self, ifname: &str, proto_be: u16) -> Result<(), String> {
        // SAFETY: sockaddr_ll is plain data; zero is a valid value.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_protocol = proto_be;
        sa.sll_ifindex = self.ifindex;
        // SAFETY: `sa` is a valid sockaddr_ll of the given size.
        let r = unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(format!("{ifname}: bind: {}", errno_string()));
        }
        Ok(())
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Asks for a virtio_net_hdr before each received frame. Must precede
    /// the ring setup. Returns whether the kernel agreed.
    pub fn enable_vnet_hdr(&mut self) -> bool {
        self.vnet_hdr = setsockopt_int(self.fd(), SOL_PACKET, PACKET_VNET_HDR, 1);
        self.vnet_hdr
    }

    /// Stops the kernel from looping the host's own outgoing packets back
    /// to this socket (Linux 4.20+). Returns whether it worked.
    pub fn ignore_outgoing(&self) -> bool {
        setsockopt_int(self.fd(), SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    }

    /// Keeps only frames the device received on `queue`: a classic BPF
    /// socket filter on the receive queue the driver recorded
    /// (`queue_mapping` holds queue + 1). Devices that record none (veth,
    /// and single-queue devices) deliver everything as queue 0.
    pub fn only_queue(&self, queue: u32) -> Result<(), String> {
        const LD_W_ABS: u16 = 0x20;
        const JEQ_K: u16 = 0x15;
        // SKF_AD_OFF + SKF_AD_QUEUE: the skb's queue_mapping.
        const AD_QUEUE: u32 = 0xfffff000u32.wrapping_add(20);
        let unrecorded = if queue == 0 { u32::MAX } else { 0 };
        let prog = [
            bpf_insn(LD_W_ABS, 0, 0, AD_QUEUE),
            bpf_insn(JEQ_K, 2, 0, queue + 1),
            bpf_insn(JEQ_K, 0, 2, 0),
            bpf_insn(BPF_RET_K, 0, 0, unrecorded),
            bpf_insn(BPF_RET_K, 0, 0, u32::MAX),
            bpf_insn(BPF_RET_K, 0, 0, 0),
        ];
        self.set_filter(&prog)
            .map_err(|e| format!("cannot filter on queue {queue}: {e}"))
    }

    /// Sends straight to the driver, skipping the qdisc layer.
    pub fn qdisc_bypass(&self) -> bool {
        setsockopt_int(self.fd(), SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    }

    /// Adds promiscuous membership for the socket's lifetime (the kernel
    /// drops it when the socket closes, so the device's own setting comes
    /// back).
    pub fn set_promisc(&self) -> Result<(), String> {
        // SAFETY: packet_mreq is plain data.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = self.ifindex;
        mr.mr_type = PACKET_MR_PROMISC;
        // SAFETY: passes a live packet_mreq and its size.
        let r = unsafe {
            libc::setsockopt(
                self.fd(),
                SOL_PACKET,
                PACKET_ADD_MEMBERSHIP,
                (&mr as *const libc::packet_mreq).cast(),
                std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(errno_string());
        }
        Ok(())
    }

    /// Reads and clears the socket's pending error (`SO_ERROR`).
    pub fn take_error(&self) -> Option<io::Error> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `v` is writable for `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        (r == 0 && v != 0).then(|| io::Error::from_raw_os_error(v))
    }

    /// `PACKET_STATISTICS`: (packets, drops) since the previous call (the
    /// kernel resets its counters on every read).
    pub fn take_stats(&self) -> Option<(u64, u64)> {
        let mut buf = [0u32; 3];
        let mut len = std::mem::size_of_val(&buf) as libc::socklen_t;
        // SAFETY: `buf` is writable for `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                SOL_PACKET,
                PACKET_STATISTICS,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        (r == 0).then(|| (u64::from(buf[0]), u64::from(buf[1])))
    }

    /// Sends `pkts` with as few `sendmmsg` calls as possible. Returns how
    /// many were sent and, if it stopped early, the error that stopped it
    /// (for the packet at that index).
    pub fn send_batch(&self, pkts: &[Packet]) -> (usize, Option<io::Error>) {
        const MAX: usize = 64;
        let mut sent = 0;
        while sent < pkts.len() {
            let n = (pkts.len() - sent).min(MAX);
            // SAFETY: iovec and mmsghdr are plain data; zero is valid.
            let mut iov: [libc::iovec; MAX] = unsafe { std::mem::zeroed() };
            let mut msgs: [libc::mmsghdr; MAX] = unsafe { std::mem::zeroed() };
            for i in 0..n {
                let d = pkts[sent + i].data();
                iov[i].iov_base = d.as_ptr() as *mut libc::c_void;
                iov[i].iov_len = d.len();
                msgs[i].msg_hdr.msg_iov = &mut iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            // SAFETY: `msgs[..n]` point at iovecs describing live packet
            // data that outlives the call; the kernel only reads it.
            let r = unsafe { libc::sendmmsg(self.fd(), msgs.as_mut_ptr(), n as libc::c_uint, 0) };
            if r < 0 {
                return (sent, Some(io::Error::last_os_error()));
            }
            if r == 0 {
                return (sent, Some(io::Error::from_raw_os_error(libc::EAGAIN)));
            }
            sent += r as usize;
        }
        (sent, None)
    }
}

/// Geometry of the receive ring.
#[derive(Clone, Copy, Debug)]
pub struct RingGeometry {
    pub block_size: u32,
    pub nblocks: u32,
    /// How long (ms) the kernel waits before handing a partly filled block
    /// to user space: the latency bound when traffic is light.
    pub retire_ms: u32,
}

impl Default for RingGeometry {
    fn default() -> Self {
        // 256 KiB blocks hold a 64 KiB GSO super-frame with room to spare.
        RingGeometry {
            block_size: 1 << 18,
            nblocks: 16,
            retire_ms: 1,
        }
    }
}

/// One received frame, borrowed from the ring.
pub struct Frame<'a> {
    /// The captured bytes, from the link-level header on.
    pub data: &'a [u8],
    /// The length on the wire.
    pub wire_len: u32,
    pub sec: u32,
    pub nsec: u32,
    pub pkttype: u8,
    pub status: u32,
    /// `tp_vlan_tci` and `tp_vlan_tpid`: the tag the kernel removed, when
    /// `status` says so.
    pub vlan_tci: u16,
    pub vlan_tpid: u16,
    /// The virtio_net_hdr: (flags, gso_type, gso_size, csum_start,
    /// csum_offset), when vnet headers are on.
    pub vnet: Option<VnetHdr>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

/// A memory-mapped TPACKET_V3 receive ring.
pub struct RxRing {
    base: *mut u8,
    geo: RingGeometry,
    block: u32,
    /// Index of the next packet in the current block, and its offset.
    pkt: u32,
    off: usize,
    vnet: bool,
}

// SAFETY: the mapping is owned by the ring and only accessed through it.
unsafe impl Send for RxRing {}

fn rd32(p: *const u8) -> u32 {
    // SAFETY: callers pass pointers inside the mapping with 4 bytes valid.
    unsafe { std::ptr::read_unaligned(p.cast::<u32>()) }
}

fn rd16(p: *const u8) -> u16 {
    // SAFETY: as for rd32, with 2 bytes.
    unsafe { std::ptr::read_unaligned(p.cast::<u16>()) }
}

impl RxRing {
    /// Switches `sock` to TPACKET_V3 and maps a receive ring.
    pub fn new(sock: &PacketSocket, geo: RingGeometry) -> Result<RxRing, String> {
        let fd = sock.fd();
        if !setsockopt_int(fd, SOL_PACKET, PACKET_VERSION, TPACKET_V3) {
            return Err(format!("PACKET_VERSION: {}", errno_string()));
        }
        let frame_size: u32 = 2048;
        let req: [u32; 7] = [
            geo.block_size,
            geo.nblocks,
            frame_size,
            geo.block_size / frame_size * geo.nblocks,
            geo.retire_ms,
            0,
            0,
        ];
        // SAFETY: `req` has the layout of tpacket_req3 (seven u32s).
        let r = unsafe {
            libc::setsockopt(
                fd,
                SOL_PACKET,
                PACKET_RX_RING,
                req.as_ptr().cast(),
                std::mem::size_of_val(&req) as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(format!("PACKET_RX_RING: {}", errno_string()));
        }
        let len = geo.block_size as usize * geo.nblocks as usize;
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!("mmap: {}", errno_string()));
        }
        Ok(RxRing {
            base: base.cast(),
            geo,
            block: 0,
            pkt: 0,
            off: 0,
            vnet: sock.vnet_hdr,
        })
    }

    fn block_ptr(&self) -> *mut u8 {
        // SAFETY: `block < nblocks`, so the offset stays in the mapping.
        unsafe {
            self.base
                .add(self.block as usize * self.geo.block_size as usize)
        }
    }

    fn status(&self) -> &AtomicU32 {
        // SAFETY: block_status is a 4-byte aligned u32 at byte 8 of the
        // block descriptor, shared with the kernel: access it atomically.
        unsafe { &*(self.block_ptr().add(8).cast::<AtomicU32>()) }
    }

    fn release_block(&mut self) {
        self.status().store(TP_STATUS_KERNEL, Ordering::Release);
        self.block = (self.block + 1) % self.geo.nblocks;
        self.pkt = 0;
        self.off = 0;
    }

    /// Whether a frame is waiting.
    pub fn ready(&self) -> bool {
        self.status().load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Hands the next frame to `f`, then returns it to the kernel (the
    /// frame's block goes back once its last frame is read). `None` when
    /// the ring holds nothing for user space.
    pub fn next<R>(&mut self, f: impl FnOnce(&Frame<'_>) -> R) -> Option<R> {
        let mut f = Some(f);
        loop {
            if self.status().load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                return None;
            }
            let blk = self.block_ptr();
            let bsize = self.geo.block_size as usize;
            // SAFETY: the descriptor fields are inside the block.
            let num = rd32(unsafe { blk.add(12) });
            if self.pkt == 0 {
                self.off = rd32(unsafe { blk.add(16) }) as usize;
            }
            if self.pkt >= num || self.off + TPACKET3_HDRLEN + 20 > bsize {
                self.release_block();
                continue;
            }
            // SAFETY: `off + TPACKET3_HDRLEN + 20 <= bsize` was checked.
            let h = unsafe { blk.add(self.off) };
            let next = rd32(h) as usize;
            let sec = rd32(unsafe { h.add(4) });
            let nsec = rd32(unsafe { h.add(8) });
            let snaplen = rd32(unsafe { h.add(12) }) as usize;
            let wire_len = rd32(unsafe { h.add(16) });
            let status = rd32(unsafe { h.add(20) });
            let mac = rd16(unsafe { h.add(24) }) as usize;
            // hv1: tp_rxhash (28), tp_vlan_tci (32, 32 bits), tp_vlan_tpid (36).
            let vlan_tci = rd32(unsafe { h.add(32) }) as u16;
            let vlan_tpid = rd16(unsafe { h.add(36) });
            // sockaddr_ll follows the header; sll_pkttype is its byte 10.
            // SAFETY: within the bound checked above.
            let pkttype = unsafe { *h.add(TPACKET3_HDRLEN + 10) };
            self.pkt += 1;
            let last = self.pkt >= num || next == 0;
            let cur_off = self.off;
            self.off += next;
            // A frame reaching past its block would be a kernel bug; skip
            // rather than read out of bounds.
            let fits = mac >= VNET_HDR_LEN && cur_off + mac + snaplen <= bsize;
            let result = (fits).then_some(()).and_then(|_| {
                let f = f.take()?;
                // SAFETY: `[cur_off + mac, + snaplen)` lies in the block, which
                // user space owns until it is released below.
                let data = unsafe { std::slice::from_raw_parts(h.add(mac), snaplen) };
                let vnet = self.vnet.then(|| {
                    // SAFETY: `mac >= VNET_HDR_LEN`; the header precedes data.
                    let v = unsafe { h.add(mac - VNET_HDR_LEN) };
                    // SAFETY: 10 bytes before `data`, within the block.
                    let (flags, gso_type) = unsafe { (*v, *v.add(1)) };
                    VnetHdr {
                        flags,
                        gso_type,
                        gso_size: rd16(unsafe { v.add(4) }),
                        csum_start: rd16(unsafe { v.add(6) }),
                        csum_offset: rd16(unsafe { v.add(8) }),
                    }
                });
                Some(f(&Frame {
                    data,
                    wire_len,
                    sec,
                    nsec,
                    pkttype,
                    status,
                    vlan_tci,
                    vlan_tpid,
                    vnet,
                }))
            });
            if last {
                self.release_block();
            }
            if let Some(r) = result {
                return Some(r);
            }
        }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        let len = self.geo.block_size as usize * self.geo.nblocks as usize;
        // SAFETY: unmaps exactly the region mapped in `new`.
        unsafe { libc::munmap(self.base.cast(), len) };
    }
}

// ------------------------------------------------------------ offloads

/// The IP addresses of a frame, for its transport pseudo-header.
#[derive(Clone, Copy)]
enum Addrs {
    V4(Ipv4Addr, Ipv4Addr),
    V6(Ipv6Addr, Ipv6Addr),
}

impl Addrs {
    /// Sum of the pseudo-header of `len` bytes of transport `proto`.
    fn pseudo_sum(&self, proto: u8, len: usize) -> u32 {
        match *self {
            Addrs::V4(s, d) => Ipv4Addr::pseudo_sum(s, d, proto, len),
            Addrs::V6(s, d) => Ipv6Addr::pseudo_sum(s, d, proto, len),
        }
    }

    /// Recomputes the full checksum of the TCP or UDP header and payload
    /// `l4`.
    fn fill_l4_csum(&self, proto: u8, l4: &mut [u8]) {
        match *self {
            Addrs::V4(s, d) => fill_l4_with(l4, proto, s, d),
            Addrs::V6(s, d) => fill_l4_with(l4, proto, s, d),
        }
    }
}

/// Where the IP and transport headers of an Ethernet frame start, as its
/// headers say.
#[derive(Clone, Copy)]
struct Located {
    l3: usize,
    l4: usize,
    proto: u8,
    /// Transport length according to the IP header (it may exceed the
    /// frame).
    l4len: usize,
    v6: bool,
}

impl Located {
    /// The addresses of frame `d`, read only when a checksum needs them
    /// (most frames FromDevice sees need none).
    fn addrs(&self, d: &[u8]) -> Addrs {
        if self.v6 {
            let ip = Ipv6Header::new_unchecked(&d[self.l3..]);
            Addrs::V6(ip.src(), ip.dst())
        } else {
            let ip = Ipv4Header::new_unchecked(&d[self.l3..]);
            Addrs::V4(ip.src(), ip.dst())
        }
    }
}

fn fill_l4_with<A: PseudoHeader>(l4: &mut [u8], proto: u8, src: A, dst: A) {
    if proto == PROTO_TCP {
        TcpHeader::new_unchecked(l4).fill_checksum(src, dst);
    } else {
        UdpHeader::new_unchecked(l4).fill_checksum(src, dst);
    }
}

/// Finds the IPv4 or IPv6 header of an Ethernet frame, behind at most one
/// VLAN tag, and the transport header after it.
fn locate(d: &[u8]) -> Option<Located> {
    let eth = EtherFrame::new_checked(d).ok()?;
    let (ethertype, l3) = if eth.is_tagged() {
        let tag = VlanTag::new_checked(eth.payload()).ok()?;
        (tag.ethertype(), ether::HEADER_LEN + ether::VLAN_TAG_LEN)
    } else {
        (eth.ethertype(), ether::HEADER_LEN)
    };
    match ethertype {
        ETHERTYPE_IP => {
            let ip = Ipv4Header::new_checked(&d[l3..]).ok()?;
            let hl = ip.header_len();
            Some(Located {
                l3,
                l4: l3 + hl,
                proto: ip.protocol(),
                l4len: usize::from(ip.total_len()).saturating_sub(hl),
                v6: false,
            })
        }
        ETHERTYPE_IP6 => {
            let ip = Ipv6Header::new_checked(&d[l3..]).ok()?;
            Some(Located {
                l3,
                l4: l3 + ipv6::HEADER_LEN,
                proto: ip.next_header(),
                l4len: usize::from(ip.payload_len()),
                v6: true,
            })
        }
        _ => None,
    }
}

/// Offset of the checksum field in a TCP or UDP header.
fn csum_offset(proto: u8) -> Option<usize> {
    match proto {
        PROTO_TCP => Some(16),
        PROTO_UDP => Some(6),
        _ => None,
    }
}

/// Completes a partial checksum: the field at `start + offset` holds the
/// pseudo-header sum; the checksum covers `start..`.
pub fn complete_csum(d: &mut [u8], start: usize, offset: usize) -> bool {
    let at = start + offset;
    if at + 2 > d.len() {
        return false;
    }
    let mut c = !(checksum::sum(&d[start..], 0) as u16);
    if c == 0 {
        c = 0xffff;
    }
    d[at..at + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// Completes the TCP or UDP checksum of an Ethernet frame whose transport
/// checksum the kernel left partial, finding the headers itself (used when
/// no vnet header says where they are).
pub fn complete_csum_by_parsing(d: &mut [u8]) -> bool {
    let Some(at) = locate(d) else {
        return false;
    };
    match csum_offset(at.proto) {
        Some(off) => complete_csum(d, at.l4, off),
        None => false,
    }
}

/// Completes a TCP/UDP checksum left partial by a sender that offloaded it,
/// recognized without help from the kernel: a partial checksum field holds
/// exactly the folded pseudo-header sum. AF_XDP delivers frames without the
/// kernel's CHECKSUM_PARTIAL note, so frames from a veth peer with checksum
/// offload on arrive this way. Only the pseudo-header is summed unless the
/// field matches; a valid checksum that happens to equal the pseudo-header
/// sum is recomputed to the same value. Returns whether it completed one.
pub fn complete_if_partial(d: &mut [u8]) -> bool {
    let Some(at) = locate(d) else {
        return false;
    };
    let Some(off) = csum_offset(at.proto) else {
        return false;
    };
    let Some(l4) = d.get(at.l4..at.l4 + at.l4len) else {
        return false;
    };
    let field = match at.proto {
        PROTO_TCP => TcpHeader::new_checked(l4).map(|t| t.checksum()),
        _ => UdpHeader::new_checked(l4).map(|u| u.checksum()),
    };
    if field.ok() != Some(at.addrs(d).pseudo_sum(at.proto, at.l4len) as u16) {
        return false;
    }
    complete_csum(&mut d[..at.l4 + at.l4len], at.l4, off)
}

/// Turns a received frame into ordinary packets: completes a partial
/// checksum, or splits a TCP/UDP GSO super-frame into MTU-sized segments
/// with full headers and checksums. Calls `out` for each packet; returns
/// false (and emits nothing) when the frame cannot be made whole.
pub fn materialize(frame: &Frame<'_>, headroom: usize, mut out: impl FnMut(Packet)) -> bool {
    let d = frame.data;
    let vnet = frame.vnet.unwrap_or_default();
    let gso = vnet.gso_type & !GSO_ECN;
    if gso != GSO_NONE && vnet.gso_size > 0 {
        if (frame.wire_len as usize) > d.len() {
            return false;
        }
        // Each segment gets back the tag the kernel took off the super-frame
        // (the headers were located on the untagged frame).
        let mut tagged_ok = true;
        let mut out_tagged = |mut p: Packet| {
            if frame.status & TP_STATUS_VLAN_VALID == 0 || reinsert_vlan_tag(&mut p, frame) {
                out(p);
            } else {
                tagged_ok = false;
            }
        };
        return match gso {
            GSO_TCPV4 | GSO_TCPV6 | GSO_UDP_L4 => {
                segment(d, usize::from(vnet.gso_size), headroom, &mut out_tagged) && tagged_ok
            }
            // UFO (IP fragmentation of UDP) is not done in user space.
            GSO_UDP => false,
            _ => false,
        };
    }
    let mut p = Packet::with_room(headroom, d, 0);
    if vnet.flags & VNET_F_NEEDS_CSUM != 0 {
        if !complete_csum(
            p.writable(),
            usize::from(vnet.csum_start),
            usize::from(vnet.csum_offset),
        ) {
            return false;
        }
    } else if frame.vnet.is_none() && frame.status & TP_STATUS_CSUMNOTREADY != 0 {
        complete_csum_by_parsing(p.writable());
    }
    if frame.status & TP_STATUS_VLAN_VALID != 0 && !reinsert_vlan_tag(&mut p, frame) {
        return false;
    }
    out(p);
    true
}

/// Puts back the 802.1Q tag the kernel's VLAN receive offload moved into
/// the ring header (as libpcap does), after the two addresses.
fn reinsert_vlan_tag(p: &mut Packet, frame: &Frame<'_>) -> bool {
    if p.len() < 12 || p.push(ether::VLAN_TAG_LEN).is_none() {
        return false;
    }
    let tpid = if frame.status & TP_STATUS_VLAN_TPID_VALID != 0 && frame.vlan_tpid != 0 {
        frame.vlan_tpid
    } else {
        ether::ETHERTYPE_VLAN
    };
    let d = p.writable();
    d.copy_within(ether::VLAN_TAG_LEN..ether::VLAN_TAG_LEN + 12, 0);
    d[12..14].copy_from_slice(&tpid.to_be_bytes());
    d[14..16].copy_from_slice(&frame.vlan_tci.to_be_bytes());
    true
}

/// Software GSO: splits a TCP or UDP super-frame into segments of at most
/// `mss` payload bytes.
pub fn segment(d: &[u8], mss: usize, headroom: usize, out: &mut impl FnMut(Packet)) -> bool {
    let Some(at) = locate(d) else {
        return false;
    };
    let (l3, l4) = (at.l3, at.l4);
    let tcp = at.proto == PROTO_TCP;
    // The TCP sequence number, or 0 for UDP, and where the payload starts.
    let (seq, hdrs) = match at.proto {
        PROTO_TCP => match TcpHeader::new_checked(&d[l4..]) {
            Ok(t) => (t.seq(), l4 + t.header_len()),
            Err(_) => return false,
        },
        PROTO_UDP if UdpHeader::new_checked(&d[l4..]).is_ok() => (0, l4 + udp::HEADER_LEN),
        _ => return false,
    };
    if mss == 0 {
        return false;
    }
    let addrs = at.addrs(d);
    let ip_id = if at.v6 {
        0
    } else {
        Ipv4Header::new_unchecked(&d[l3..l4]).ident()
    };
    let payload = &d[hdrs..];
    let nseg = payload.len().div_ceil(mss).max(1);
    for i in 0..nseg {
        let lo = (i * mss).min(payload.len());
        let hi = ((i + 1) * mss).min(payload.len());
        let chunk = &payload[lo..hi];
        let mut p = Packet::with_room(headroom, &d[..hdrs], chunk.len());
        // A segment is at most one MSS: within MAX_PACKET_LEN.
        let Some(room) = p.put(chunk.len()) else {
            continue;
        };
        room.copy_from_slice(chunk);
        let w = p.writable();
        let (ip, rest) = w.split_at_mut(l4);
        let l4len = rest.len();
        if at.v6 {
            Ipv6Header::new_unchecked(&mut ip[l3..]).set_payload_len(l4len as u16);
        } else {
            let mut h = Ipv4Header::new_unchecked(&mut ip[l3..]);
            h.set_total_len((l4 - l3 + l4len) as u16);
            if tcp {
                h.set_ident(ip_id.wrapping_add(i as u16));
            }
            h.fill_checksum();
        }
        if tcp {
            let mut t = TcpHeader::new_unchecked(&mut *rest);
            t.set_seq(seq.wrapping_add(lo as u32));
            if i + 1 < nseg {
                // FIN and PSH only on the last segment.
                t.clear_flags((TCP_FIN | TCP_PSH) as u8);
            }
            if i > 0 {
                // CWR only on the first.
                t.clear_flags(TCP_CWR as u8);
            }
        } else {
            UdpHeader::new_unchecked(&mut *rest).set_len(l4len as u16);
        }
        addrs.fill_l4_csum(at.proto, rest);
        out(p);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fanout_modes_and_names() {
        // The kernel's PACKET_FANOUT_* numbers (include/uapi/linux/if_packet.h).
        for (word, kernel) in [
            ("hash", 0),
            ("LB", 1),
            ("cpu", 2),
            ("rollover", 3),
            ("random", 4),
            ("qm", 5),
        ] {
            let m = FanoutMode::parse(word).expect(word);
            assert_eq!(m.kernel(), kernel, "{word}");
            assert_eq!(FanoutMode::parse(m.name()), Some(m));
        }
        assert_eq!(FanoutMode::parse("cbpf"), None);
        assert_eq!(FanoutMode::parse(""), None);
        let f = Fanout {
            id: 7,
            mode: FanoutMode::Hash,
            rollover: true,
            ignore_outgoing: true,
        };
        assert_eq!(f.to_string(), "hash+rollover 7");
        // id in the low 16 bits, mode and flags above.
        assert_eq!(f.option(true), 0x5000_0007);
        assert_eq!(f.option(false), 0x1000_0007);
        let f = Fanout {
            rollover: false,
            ..f
        };
        assert_eq!(f.to_string(), "hash 7");
        assert_eq!(f.option(true), 0x4000_0007);
        let f = Fanout {
            id: 0xfffe,
            mode: FanoutMode::Rollover,
            ..f
        };
        assert_eq!(f.to_string(), "rollover 65534");
        assert_eq!(f.option(false), 0x0003_fffe);
    }

    #[test]
    fn kernel_versions() {
        assert!(kernel_at_least("6.2.0", 6, 2));
        assert!(kernel_at_least("6.18.44-fc-v595", 6, 2));
        assert!(kernel_at_least("10.0", 6, 2));
        assert!(!kernel_at_least("6.1.55-generic", 6, 2));
        assert!(!kernel_at_least("5.15.0-91-generic", 6, 2));
        assert!(!kernel_at_least("", 6, 2));
        assert!(!kernel_at_least("6", 6, 2));
        assert!(kernel_at_least(&kernel_release(), 2, 6));
    }

    fn tcp_frame(payload: usize) -> Vec<u8> {
        let mut d = vec![0u8; 14 + 20 + 20 + payload];
        d[12] = 0x08;
        d[14] = 0x45;
        let tot = (20 + 20 + payload) as u16;
        d[16..18].copy_from_slice(&tot.to_be_bytes());
        d[22] = 64;
        d[23] = 6;
        d[26..30].copy_from_slice(&[10, 0, 0, 1]);
        d[30..34].copy_from_slice(&[10, 0, 0, 2]);
        d[34 + 4..34 + 8].copy_from_slice(&1000u32.to_be_bytes());
        d[34 + 12] = 5 << 4;
        d[34 + 13] = 0x18; // PSH|ACK
        for (i, b) in d[54..].iter_mut().enumerate() {
            *b = i as u8;
        }
        d
    }

    /// The segments of `d`, which must split.
    fn segments(d: &[u8], mss: usize, headroom: usize) -> Vec<Packet> {
        let mut segs = Vec::new();
        assert!(segment(d, mss, headroom, &mut |p| segs.push(p)));
        segs
    }

    /// `full` as a sender with checksum offload hands it over: the
    /// transport checksum field (at `field`) holds the pseudo-header sum.
    fn partial_of(full: &[u8], field: usize) -> Vec<u8> {
        let at = locate(full).unwrap();
        let ps = at.addrs(full).pseudo_sum(at.proto, full.len() - at.l4) as u16;
        let mut d = full.to_vec();
        d[field..field + 2].copy_from_slice(&ps.to_be_bytes());
        d
    }

    /// Fills the transport checksum of a whole frame.
    fn fill(d: &mut [u8]) {
        let at = locate(d).unwrap();
        at.addrs(d).fill_l4_csum(at.proto, &mut d[at.l4..]);
    }

    fn l4_ok(d: &[u8]) -> bool {
        let at = locate(d).unwrap();
        let ps = at.addrs(d).pseudo_sum(at.proto, d.len() - at.l4);
        checksum::sum(&d[at.l4..], ps) == 0xffff
    }

    #[test]
    fn partial_checksum_recognized_without_a_vnet_header() {
        let mut full = tcp_frame(100);
        fill(&mut full);
        assert!(l4_ok(&full));
        let mut partial = partial_of(&full, 50);
        assert!(!l4_ok(&partial));
        assert!(complete_if_partial(&mut partial));
        assert_eq!(partial, full);
        // A complete checksum is left alone, and so is a corrupt one that
        // does not look partial.
        let mut same = full.clone();
        assert!(!complete_if_partial(&mut same));
        assert_eq!(same, full);
        let mut corrupt = full.clone();
        corrupt[50] ^= 0x55;
        assert!(!complete_if_partial(&mut corrupt));
        assert!(!l4_ok(&corrupt));
    }

    #[test]
    fn partial_checksum_completed() {
        let mut d = partial_of(&tcp_frame(33), 50);
        let mut e = d.clone();
        assert!(complete_csum(&mut d, 34, 16));
        assert!(l4_ok(&d));
        assert!(complete_csum_by_parsing(&mut e));
        assert_eq!(d, e);
    }

    #[test]
    fn tcp_segmentation() {
        let d = tcp_frame(3000);
        let segs = segments(&d, 1448, 64);
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for (i, p) in segs.iter().enumerate() {
            let s = p.data();
            assert!(checksum::verify(&s[14..34]));
            assert!(l4_ok(s));
            let seq = u32::from_be_bytes([s[38], s[39], s[40], s[41]]);
            assert_eq!(seq, 1000 + (i as u32) * 1448);
            assert_eq!(s[47] & 0x08 != 0, i == 2, "PSH only on the last");
            assert_eq!(u16::from_be_bytes([s[16], s[17]]) as usize, s.len() - 14);
            joined.extend_from_slice(&s[54..]);
        }
        assert_eq!(joined, d[54..]);
    }

    #[test]
    fn truncated_frames_rejected() {
        let d = tcp_frame(10);
        assert!(!segment(&d[..30], 1448, 64, &mut |_| {}));
        assert!(locate(&d[..20]).is_none());
    }

    /// A VLAN-tagged IPv6 frame carrying TCP, built by hand so that the
    /// offsets the wire views find are checked against known ones.
    fn tcp6_vlan_frame(payload: usize) -> Vec<u8> {
        let mut d = vec![0u8; 18 + 40 + 20 + payload];
        d[12..14].copy_from_slice(&[0x81, 0x00]);
        d[14..16].copy_from_slice(&[0x00, 0x07]);
        d[16..18].copy_from_slice(&[0x86, 0xdd]);
        d[18] = 0x60;
        d[22..24].copy_from_slice(&((20 + payload) as u16).to_be_bytes());
        d[24] = 6;
        d[25] = 64;
        d[26 + 15] = 1;
        d[42 + 15] = 2;
        d[58 + 4..58 + 8].copy_from_slice(&7u32.to_be_bytes());
        d[58 + 12] = (5 << 4) | 0x0e; // reserved bits set: kept by GSO
        d[58 + 13] = 0x89; // CWR|PSH|FIN
        for (i, b) in d[78..].iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        d
    }

    fn udp_frame(payload: usize) -> Vec<u8> {
        let mut d = vec![0u8; 14 + 20 + 8 + payload];
        d[12] = 0x08;
        d[14] = 0x45;
        d[16..18].copy_from_slice(&((20 + 8 + payload) as u16).to_be_bytes());
        d[18..20].copy_from_slice(&0x1234u16.to_be_bytes());
        d[22] = 64;
        d[23] = 17;
        d[26..30].copy_from_slice(&[10, 0, 0, 1]);
        d[30..34].copy_from_slice(&[10, 0, 0, 2]);
        d[38..40].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        for (i, b) in d[42..].iter_mut().enumerate() {
            *b = i as u8;
        }
        d
    }

    #[test]
    fn vlan_tag_removed_by_the_kernel_is_put_back() {
        let mut d = vec![0xffu8; 6];
        d.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0x00]);
        let frame = |status, tpid| Frame {
            data: &d,
            wire_len: d.len() as u32,
            sec: 0,
            nsec: 0,
            pkttype: 0,
            status,
            vlan_tci: 0xa00a,
            vlan_tpid: tpid,
            vnet: None,
        };
        let mut got = Vec::new();
        assert!(materialize(&frame(TP_STATUS_VLAN_VALID, 0), 64, |p| got.push(p)));
        assert!(materialize(
            &frame(TP_STATUS_VLAN_VALID | TP_STATUS_VLAN_TPID_VALID, 0x88a8),
            64,
            |p| got.push(p)
        ));
        assert!(materialize(&frame(0, 0), 64, |p| got.push(p)));
        assert_eq!(
            &got[0].data()[12..18],
            &[0x81, 0x00, 0xa0, 0x0a, 0x08, 0x00]
        );
        assert_eq!(&got[0].data()[..12], &d[..12]);
        assert_eq!(&got[1].data()[12..16], &[0x88, 0xa8, 0xa0, 0x0a]);
        assert_eq!(got[2].data(), &d[..]);
    }

    #[test]
    fn vlan_tag_removed_by_the_kernel_is_put_back_on_every_gso_segment() {
        // A TCP super-frame whose tag the kernel moved to the ring header:
        // software segmentation must put it back on each segment, or they
        // all leave in the native VLAN.
        let d = tcp_frame(3000);
        let frame = Frame {
            data: &d,
            wire_len: d.len() as u32,
            sec: 0,
            nsec: 0,
            pkttype: 0,
            status: TP_STATUS_VLAN_VALID | TP_STATUS_VLAN_TPID_VALID,
            vlan_tci: 0x2064,
            vlan_tpid: 0x8100,
            vnet: Some(VnetHdr {
                flags: 0,
                gso_type: GSO_TCPV4,
                gso_size: 1448,
                csum_start: 0,
                csum_offset: 0,
            }),
        };
        let mut got = Vec::new();
        assert!(materialize(&frame, 64, |p| got.push(p)));
        assert_eq!(got.len(), 3);
        let mut joined = Vec::new();
        for p in &got {
            let s = p.data();
            assert_eq!(&s[..12], &d[..12]);
            assert_eq!(&s[12..18], &[0x81, 0x00, 0x20, 0x64, 0x08, 0x00]);
            assert!(checksum::verify(&s[18..38]));
            joined.extend_from_slice(&s[58..]);
        }
        assert_eq!(joined, d[54..]);
    }

    #[test]
    fn vlan_ipv6_located() {
        let d = tcp6_vlan_frame(10);
        let at = locate(&d).unwrap();
        assert_eq!((at.l3, at.l4, at.proto, at.l4len), (18, 58, 6, 30));
        assert!(at.v6);
        // A tag with nothing after it is no frame to work on.
        assert!(locate(&d[..17]).is_none());
        assert!(locate(&d[..57]).is_none());
    }

    #[test]
    fn vlan_ipv6_partial_checksum_completed() {
        let mut full = tcp6_vlan_frame(51);
        fill(&mut full);
        assert!(l4_ok(&full));
        let mut partial = partial_of(&full, 58 + 16);
        assert!(complete_if_partial(&mut partial));
        assert_eq!(partial, full);
    }

    #[test]
    fn ipv6_tcp_segmentation_keeps_reserved_bits() {
        let d = tcp6_vlan_frame(2500);
        let segs = segments(&d, 1000, 0);
        assert_eq!(segs.len(), 3);
        for (i, p) in segs.iter().enumerate() {
            let s = p.data();
            assert!(l4_ok(s));
            assert_eq!(
                usize::from(u16::from_be_bytes([s[22], s[23]])),
                s.len() - 58
            );
            assert_eq!(
                u32::from_be_bytes([s[62], s[63], s[64], s[65]]),
                7 + 1000 * i as u32
            );
            assert_eq!(s[70], (5 << 4) | 0x0e);
            let want = match i {
                0 => 0x80,
                2 => 0x09,
                _ => 0x00,
            };
            assert_eq!(s[71], want, "flags of segment {i}");
        }
    }

    #[test]
    fn udp_segmentation() {
        let d = udp_frame(250);
        let segs = segments(&d, 100, 0);
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for p in &segs {
            let s = p.data();
            assert!(checksum::verify(&s[14..34]));
            assert!(l4_ok(s));
            assert_eq!(
                usize::from(u16::from_be_bytes([s[16], s[17]])),
                s.len() - 14
            );
            assert_eq!(
                usize::from(u16::from_be_bytes([s[38], s[39]])),
                s.len() - 34
            );
            // UDP segments keep the IP ID.
            assert_eq!(u16::from_be_bytes([s[18], s[19]]), 0x1234);
            joined.extend_from_slice(&s[42..]);
        }
        assert_eq!(joined, d[42..]);
    }
}
