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

use rclick_core::wire::checksum;
use rclick_core::Packet;

const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_MR_PROMISC: u16 = 1;
const TPACKET_V3: libc::c_int = 2;
const ETH_P_ALL: u16 = 0x0003;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// The packet's transport checksum is partial (only without a vnet header
/// does the kernel say so this way).
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;

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
        let ifindex = ifindex(ifname)?;
        let proto = if protocol == 0 { ETH_P_ALL } else { protocol };
        let sock_proto = if receive { proto.to_be() } else { 0 };
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
        .and_then(|s| s.bind(ifname, sock_proto).map(|_| s))
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
        const RET_K: u16 = 0x06;
        // SKF_AD_OFF + SKF_AD_QUEUE: the skb's queue_mapping.
        const AD_QUEUE: u32 = 0xfffff000u32.wrapping_add(20);
        let unrecorded = if queue == 0 { u32::MAX } else { 0 };
        let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        let prog = [
            insn(LD_W_ABS, 0, 0, AD_QUEUE),
            insn(JEQ_K, 2, 0, queue + 1),
            insn(JEQ_K, 0, 2, 0),
            insn(RET_K, 0, 0, unrecorded),
            insn(RET_K, 0, 0, u32::MAX),
            insn(RET_K, 0, 0, 0),
        ];
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
            return Err(format!(
                "cannot filter on queue {queue}: {}",
                errno_string()
            ));
        }
        Ok(())
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

/// Where the L3 and L4 headers of an Ethernet frame start, and the L4
/// protocol: (l3, l4, ipv6, proto).
fn locate(d: &[u8]) -> Option<(usize, usize, bool, u8)> {
    let mut l3 = 14;
    let mut et = u16::from_be_bytes([*d.get(12)?, *d.get(13)?]);
    if et == 0x8100 || et == 0x88a8 {
        et = u16::from_be_bytes([*d.get(16)?, *d.get(17)?]);
        l3 = 18;
    }
    match et {
        0x0800 => {
            let ihl = usize::from(d.get(l3)? & 0xf) * 4;
            if ihl < 20 || d.len() < l3 + ihl {
                return None;
            }
            Some((l3, l3 + ihl, false, d[l3 + 9]))
        }
        0x86dd if d.len() >= l3 + 40 => Some((l3, l3 + 40, true, d[l3 + 6])),
        _ => None,
    }
}

/// Sum of the TCP/UDP pseudo-header for a packet whose IP header starts at
/// `l3`, with an L4 length of `l4len`.
fn pseudo_sum(d: &[u8], l3: usize, v6: bool, proto: u8, l4len: usize) -> u32 {
    if v6 {
        let mut acc = checksum::sum(&d[l3 + 8..l3 + 40], 0);
        acc = checksum::sum(&(l4len as u32).to_be_bytes(), acc);
        checksum::sum(&[0, proto], acc)
    } else {
        let s = [d[l3 + 12], d[l3 + 13], d[l3 + 14], d[l3 + 15]];
        let t = [d[l3 + 16], d[l3 + 17], d[l3 + 18], d[l3 + 19]];
        checksum::pseudo_header_v4(s, t, proto, l4len as u16)
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
    let Some((_, l4, _, proto)) = locate(d) else {
        return false;
    };
    match proto {
        6 => complete_csum(d, l4, 16),
        17 => complete_csum(d, l4, 6),
        _ => false,
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
    let Some((l3, l4, v6, proto)) = locate(d) else {
        return false;
    };
    let off = match proto {
        6 => 16,
        17 => 6,
        _ => return false,
    };
    let l4len = if v6 {
        usize::from(u16::from_be_bytes([d[l3 + 4], d[l3 + 5]]))
    } else {
        usize::from(u16::from_be_bytes([d[l3 + 2], d[l3 + 3]])).saturating_sub(l4 - l3)
    };
    if l4len < off + 2 || l4 + l4len > d.len() {
        return false;
    }
    let field = u16::from_be_bytes([d[l4 + off], d[l4 + off + 1]]);
    if field != pseudo_sum(d, l3, v6, proto, l4len) as u16 {
        return false;
    }
    complete_csum(&mut d[..l4 + l4len], l4, off)
}

/// Recomputes the full L4 checksum of a frame laid out as `locate` says.
fn fill_l4_csum(d: &mut [u8], l3: usize, l4: usize, v6: bool, proto: u8) {
    let field = l4 + if proto == 6 { 16 } else { 6 };
    if field + 2 > d.len() {
        return;
    }
    d[field] = 0;
    d[field + 1] = 0;
    let ps = pseudo_sum(d, l3, v6, proto, d.len() - l4);
    let mut c = !(checksum::sum(&d[l4..], ps) as u16);
    if c == 0 && proto == 17 {
        c = 0xffff;
    }
    d[field..field + 2].copy_from_slice(&c.to_be_bytes());
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
        return match gso {
            GSO_TCPV4 | GSO_TCPV6 | GSO_UDP_L4 => {
                segment(d, usize::from(vnet.gso_size), headroom, &mut out)
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
    out(p);
    true
}

/// Software GSO: splits a TCP or UDP super-frame into segments of at most
/// `mss` payload bytes.
pub fn segment(d: &[u8], mss: usize, headroom: usize, out: &mut impl FnMut(Packet)) -> bool {
    let Some((l3, l4, v6, proto)) = locate(d) else {
        return false;
    };
    let hdrs = match proto {
        6 if d.len() >= l4 + 20 => l4 + usize::from(d[l4 + 12] >> 4) * 4,
        17 if d.len() >= l4 + 8 => l4 + 8,
        _ => return false,
    };
    if hdrs > d.len() || mss == 0 {
        return false;
    }
    let payload = &d[hdrs..];
    let nseg = payload.len().div_ceil(mss).max(1);
    let seq = if proto == 6 {
        u32::from_be_bytes([d[l4 + 4], d[l4 + 5], d[l4 + 6], d[l4 + 7]])
    } else {
        0
    };
    let ip_id = u16::from_be_bytes([d[l3 + 4], d[l3 + 5]]);
    for i in 0..nseg {
        let lo = (i * mss).min(payload.len());
        let hi = ((i + 1) * mss).min(payload.len());
        let chunk = &payload[lo..hi];
        let mut p = Packet::with_room(headroom, &d[..hdrs], chunk.len());
        p.put(chunk.len()).copy_from_slice(chunk);
        let w = p.writable();
        if v6 {
            let plen = (w.len() - l3 - 40) as u16;
            w[l3 + 4..l3 + 6].copy_from_slice(&plen.to_be_bytes());
        } else {
            let tot = (w.len() - l3) as u16;
            w[l3 + 2..l3 + 4].copy_from_slice(&tot.to_be_bytes());
            if proto == 6 {
                let id = ip_id.wrapping_add(i as u16);
                w[l3 + 4..l3 + 6].copy_from_slice(&id.to_be_bytes());
            }
            w[l3 + 10] = 0;
            w[l3 + 11] = 0;
            let c = checksum::checksum(&w[l3..l4]);
            w[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
        }
        if proto == 6 {
            let s = seq.wrapping_add(lo as u32);
            w[l4 + 4..l4 + 8].copy_from_slice(&s.to_be_bytes());
            if i + 1 < nseg {
                w[l4 + 13] &= !0x09; // FIN, PSH only on the last segment
            }
            if i > 0 {
                w[l4 + 13] &= !0x80; // CWR only on the first
            }
        } else {
            let ulen = (w.len() - l4) as u16;
            w[l4 + 4..l4 + 6].copy_from_slice(&ulen.to_be_bytes());
        }
        fill_l4_csum(w, l3, l4, v6, proto);
        out(p);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn l4_ok(d: &[u8]) -> bool {
        let (l3, l4, v6, proto) = locate(d).unwrap();
        let ps = pseudo_sum(d, l3, v6, proto, d.len() - l4);
        checksum::sum(&d[l4..], ps) == 0xffff
    }

    #[test]
    fn partial_checksum_recognized_without_a_vnet_header() {
        let mut full = tcp_frame(100);
        fill_l4_csum(&mut full, 14, 34, false, 6);
        assert!(l4_ok(&full));
        // What a sender with checksum offload hands over: the field holds
        // the pseudo-header sum.
        let mut partial = full.clone();
        let l4len = partial.len() - 34;
        let ps = pseudo_sum(&partial, 14, false, 6, l4len) as u16;
        partial[50..52].copy_from_slice(&ps.to_be_bytes());
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
        let mut d = tcp_frame(33);
        let ps = pseudo_sum(&d, 14, false, 6, d.len() - 34);
        d[50..52].copy_from_slice(&(ps as u16).to_be_bytes());
        assert!(complete_csum(&mut d, 34, 16));
        assert!(l4_ok(&d));
        let mut e = tcp_frame(33);
        e[50..52].copy_from_slice(&(ps as u16).to_be_bytes());
        assert!(complete_csum_by_parsing(&mut e));
        assert_eq!(d, e);
    }

    #[test]
    fn tcp_segmentation() {
        let d = tcp_frame(3000);
        let mut segs = Vec::new();
        assert!(segment(&d, 1448, 64, &mut |p| segs.push(p)));
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
}
