//! Linux AF_XDP support for FromDevice and ToDevice (`METHOD XDP`): the
//! per-queue socket with its UMEM and four rings (built with the xdpilone
//! crate), and the one XDP program that steers a device's packets into the
//! sockets.
//!
//! **Why the program is written here.** An AF_XDP socket only receives what
//! an XDP program on the device redirects into it through an XSKMAP. The
//! program rclick needs is six instructions: look up the receive queue's
//! socket and redirect to it, or let the packet continue to the host stack
//! (`XDP_PASS`) when that queue has no socket. Loading it with aya or libbpf
//! would need a compiled BPF object and a BPF toolchain at build time; the
//! kernel ABI for loading six instructions (`bpf(2)` map create, program
//! load, map update, link create) is small and stable, so it is done here
//! with `libc::syscall`. The program is attached with a BPF *link*, so it
//! detaches when the router exits, however it exits.
//!
//! **Sharing a queue.** A device queue takes one AF_XDP socket. A router
//! usually has both a FromDevice and a ToDevice on each device, so the
//! socket is created once per (device, queue) and split in two halves: the
//! receive half (fill and RX rings, the first half of the UMEM frames) and
//! the transmit half (TX and completion rings, the second half). Each half
//! is owned by one element and used without locks; a process-wide registry
//! hands out the halves, and is touched only when elements initialize.
//!
//! **Copying.** Received bytes are copied from the UMEM frame into a pooled
//! packet and the frame goes straight back to the fill ring; sent packets
//! are copied into a free UMEM frame. A copy of a 64-byte frame costs a few
//! nanoseconds, far less than the system call per batch that copy-mode
//! AF_XDP needs anyway, and it keeps packet ownership simple.

use std::collections::HashMap;
use std::ffi::CString;
use std::num::NonZeroU32;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, Weak};

use rclick_core::Packet;
use xdpilone::xdp::XdpDesc;
use xdpilone::{
    CompletionQueue, FillQueue, IfInfo, RingRx, RingTx, Socket, SocketConfig, Umem, UmemConfig,
    User,
};

/// Bytes per UMEM frame; a frame holds one packet.
pub const FRAME_SIZE: u32 = 4096;
/// The longest frame received: the kernel keeps XDP_PACKET_HEADROOM (256
/// bytes) in front of each received packet.
pub const MAX_RX_LEN: u32 = FRAME_SIZE - 256;
/// Frames per half (receive, transmit); also each ring's size.
const FRAMES_PER_HALF: u32 = 2048;

/// How the XDP program is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpMode {
    /// Native (driver) mode if the driver has it, else generic.
    Auto,
    /// In the driver (veth, and drivers with XDP support).
    Native,
    /// Generic (SKB) mode: works on every device, slower.
    Generic,
}

impl XdpMode {
    pub fn parse(s: &str) -> Option<XdpMode> {
        match s {
            "auto" | "AUTO" => Some(XdpMode::Auto),
            "native" | "NATIVE" | "drv" | "DRV" => Some(XdpMode::Native),
            "generic" | "GENERIC" | "skb" | "SKB" => Some(XdpMode::Generic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            XdpMode::Auto => "auto",
            XdpMode::Native => "native",
            XdpMode::Generic => "generic",
        }
    }
}

// ---------------------------------------------------------------------------
// The redirect program.

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// Sockets per device the map has room for (one per receive queue).
const MAX_QUEUES: u32 = 64;

/// `union bpf_attr`, as the 128 bytes rclick passes (the kernel requires
/// the bytes it does not know to be zero).
#[repr(C, align(8))]
struct BpfAttr([u8; 128]);

impl BpfAttr {
    fn new() -> BpfAttr {
        BpfAttr([0; 128])
    }
    fn u32_at(&mut self, off: usize, v: u32) -> &mut Self {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64_at(&mut self, off: usize, v: u64) -> &mut Self {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: libc::c_long, attr: &mut BpfAttr) -> Result<RawFd, std::io::Error> {
    // SAFETY: attr is a valid, fully initialized 128-byte bpf_attr; every
    // pointer stored in it refers to memory that outlives the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut BpfAttr,
            std::mem::size_of::<BpfAttr>(),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as RawFd)
    }
}

/// One `struct bpf_insn`.
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | u64::from(dst & 0xf) << 8
        | u64::from(src & 0xf) << 12
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

/// `redirect_map(xsks, ctx->rx_queue_index, XDP_PASS)`.
fn redirect_program(map_fd: RawFd) -> [u64; 6] {
    const LDX_W: u8 = 0x61; // r_dst = *(u32 *)(r_src + off)
    const LD_IMM64: u8 = 0x18;
    const MOV64_K: u8 = 0xb7;
    const CALL: u8 = 0x85;
    const EXIT: u8 = 0x95;
    const PSEUDO_MAP_FD: u8 = 1;
    const RX_QUEUE_INDEX: i16 = 16; // offsetof(struct xdp_md, rx_queue_index)
    const REDIRECT_MAP: i32 = 51;
    const XDP_PASS: i32 = 2;
    [
        insn(LDX_W, 2, 1, RX_QUEUE_INDEX, 0),
        insn(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        insn(MOV64_K, 3, 0, 0, XDP_PASS),
        insn(CALL, 0, 0, 0, REDIRECT_MAP),
        insn(EXIT, 0, 0, 0, 0),
    ]
}

/// The redirect program attached to one device, with its socket map.
pub struct XdpProgram {
    ifname: String,
    ifindex: u32,
    map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
    pub mode: XdpMode,
}

impl XdpProgram {
    fn attach(ifname: &str, ifindex: u32, mode: XdpMode) -> Result<XdpProgram, String> {
        let why = |what: &str, e: std::io::Error| {
            let hint = match e.raw_os_error() {
                Some(libc::EPERM) => " (needs root or CAP_BPF + CAP_NET_ADMIN)",
                Some(libc::EBUSY) | Some(libc::EEXIST) => {
                    " (another XDP program is attached to the device)"
                }
                Some(libc::ENOSYS) => " (kernel without BPF support)",
                Some(libc::EOPNOTSUPP) => " (the driver has no native XDP; try XDP_MODE generic)",
                _ => "",
            };
            format!("{ifname}: cannot {what}: {e}{hint}")
        };
        let mut a = BpfAttr::new();
        a.u32_at(0, BPF_MAP_TYPE_XSKMAP)
            .u32_at(4, 4)
            .u32_at(8, 4)
            .u32_at(12, MAX_QUEUES);
        // SAFETY: bpf returned a new descriptor that nothing else owns.
        let map = unsafe {
            OwnedFd::from_raw_fd(bpf(BPF_MAP_CREATE, &mut a).map_err(|e| why("create XSKMAP", e))?)
        };
        let prog = redirect_program(map.as_raw_fd());
        let license = c"GPL";
        let mut a = BpfAttr::new();
        a.u32_at(0, BPF_PROG_TYPE_XDP)
            .u32_at(4, prog.len() as u32)
            .u64_at(8, prog.as_ptr() as u64)
            .u64_at(16, license.as_ptr() as u64)
            .u32_at(68, BPF_XDP);
        let name = b"rclick_xsk";
        a.0[48..48 + name.len()].copy_from_slice(name);
        // SAFETY: as above.
        let prog_fd = unsafe {
            OwnedFd::from_raw_fd(
                bpf(BPF_PROG_LOAD, &mut a).map_err(|e| why("load the XDP program", e))?,
            )
        };
        let try_link = |flags: u32| {
            let mut a = BpfAttr::new();
            a.u32_at(0, prog_fd.as_raw_fd() as u32)
                .u32_at(4, ifindex)
                .u32_at(8, BPF_XDP)
                .u32_at(12, flags);
            bpf(BPF_LINK_CREATE, &mut a)
        };
        let (link, mode) = match mode {
            XdpMode::Native => (try_link(XDP_FLAGS_DRV_MODE), XdpMode::Native),
            XdpMode::Generic => (try_link(XDP_FLAGS_SKB_MODE), XdpMode::Generic),
            XdpMode::Auto => match try_link(XDP_FLAGS_DRV_MODE) {
                Ok(fd) => (Ok(fd), XdpMode::Native),
                // Only a driver without native XDP (or one refusing this
                // device's MTU) makes generic mode worth trying; EBUSY or
                // EPERM would fail there too, and say more here.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) | Some(libc::ERANGE)
                    ) =>
                {
                    (try_link(XDP_FLAGS_SKB_MODE), XdpMode::Generic)
                }
                Err(e) => (Err(e), XdpMode::Native),
            },
        };
        let link = link.map_err(|e| {
            why(
                &format!("attach the XDP program in {} mode", mode.name()),
                e,
            )
        })?;
        Ok(XdpProgram {
            ifname: ifname.to_string(),
            ifindex,
            map,
            _prog: prog_fd,
            // SAFETY: as above.
            _link: unsafe { OwnedFd::from_raw_fd(link) },
            mode,
        })
    }

    /// Stops steering `queue` to a socket: its packets go to the stack.
    fn remove(&self, queue: u32) {
        let key = queue;
        let mut a = BpfAttr::new();
        a.u32_at(0, self.map.as_raw_fd() as u32)
            .u64_at(8, &key as *const u32 as u64);
        let _ = bpf(BPF_MAP_DELETE_ELEM, &mut a);
    }

    /// Steers packets received on `queue` to socket `fd`.
    fn insert(&self, queue: u32, fd: RawFd) -> Result<(), String> {
        let key = queue;
        let value = fd as u32;
        let mut a = BpfAttr::new();
        a.u32_at(0, self.map.as_raw_fd() as u32)
            .u64_at(8, &key as *const u32 as u64)
            .u64_at(16, &value as *const u32 as u64);
        bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ()).map_err(|e| {
            format!(
                "{}: cannot add queue {queue}'s socket to the XSKMAP: {e}",
                self.ifname
            )
        })
    }
}

// ---------------------------------------------------------------------------
// The socket, its UMEM, and its two halves.

/// The UMEM area: anonymous, page-aligned memory.
struct Area {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the area is plain memory; the halves that use it touch disjoint
// frames.
unsafe impl Send for Area {}
unsafe impl Sync for Area {}

impl Area {
    fn new(len: usize) -> Result<Area, String> {
        // SAFETY: an anonymous private mapping has no preconditions.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "cannot map the UMEM: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Area {
            ptr: NonNull::new(p.cast()).ok_or("mmap returned null")?,
            len,
        })
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly the mapping made in new.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// What both halves share. Field order is drop order: the socket goes
/// before the memory it registered.
struct PortCore {
    user: User,
    _socket: Socket,
    _umem: Umem,
    program: Mutex<Option<Arc<XdpProgram>>>,
    fd: RawFd,
    zerocopy: bool,
    area: Area,
}

// SAFETY: after setup the Umem and Socket are only kept alive, never used;
// the halves touch disjoint frames of the area and User only answers
// getsockopt(XDP_STATISTICS).
unsafe impl Send for PortCore {}
unsafe impl Sync for PortCore {}

/// Reads one frame's bytes.
fn frame_bytes(area: &Area, addr: u64, len: u32) -> Option<&[u8]> {
    let end = addr.checked_add(u64::from(len))?;
    if end > area.len as u64 {
        return None;
    }
    // SAFETY: in bounds of the mapping (checked above); the kernel wrote
    // this frame before publishing its descriptor, and does not touch it
    // until rclick returns it to the fill ring.
    Some(unsafe { std::slice::from_raw_parts(area.ptr.as_ptr().add(addr as usize), len as usize) })
}

/// Kernel statistics of an AF_XDP socket.
#[derive(Clone, Copy, Debug, Default)]
pub struct XskStats {
    /// Frames the kernel could not deliver: no free frame (the fill ring
    /// was empty), or too long for a frame.
    pub rx_dropped: u64,
    /// Frames dropped because the RX ring was full.
    pub rx_ring_full: u64,
    pub rx_fill_empty: u64,
}

/// The receive half: fill and RX rings.
pub struct XskRx {
    fill: FillQueue,
    rx: RingRx,
    core: Arc<PortCore>,
    refill: Vec<u64>,
}

/// The transmit half: TX and completion rings and the free frames.
pub struct XskTx {
    comp: CompletionQueue,
    tx: RingTx,
    core: Arc<PortCore>,
    free: Vec<u64>,
}

impl XskRx {
    pub fn fd(&self) -> RawFd {
        self.core.fd
    }

    pub fn mode(&self) -> Option<XdpMode> {
        self.core.program.lock().ok()?.as_ref().map(|p| p.mode)
    }

    pub fn zerocopy(&self) -> bool {
        self.core.zerocopy
    }

    /// Whether received frames are waiting.
    pub fn ready(&self) -> bool {
        self.rx.available() > 0
    }

    /// Takes up to `max` frames, hands each to `f` as bytes, and returns the
    /// frames to the fill ring. Returns how many were taken.
    pub fn receive(&mut self, max: u32, mut f: impl FnMut(&[u8])) -> u32 {
        let mask = !(u64::from(FRAME_SIZE) - 1);
        let mut n = 0;
        let mut rd = self.rx.receive(max);
        while let Some(XdpDesc { addr, len, .. }) = rd.read() {
            if let Some(bytes) = frame_bytes(&self.core.area, addr, len) {
                f(bytes);
            }
            self.refill.push(addr & mask);
            n += 1;
        }
        rd.release();
        drop(rd);
        self.refill_frames();
        if self.fill.needs_wakeup() {
            self.fill.wake();
        }
        n
    }

    /// Returns used frames to the fill ring. A reservation can come back
    /// short (xdpilone serves it from a cached view of the kernel's
    /// consumer, refreshed only when that view shows no room at all), so
    /// this reserves again until every frame is back; the ring has a slot
    /// for every receive frame, so only a frame the kernel has not yet
    /// released could wait, and it stays in `refill` for the next call.
    /// Dropping the short remainder instead leaked a frame per short
    /// reservation until the socket starved under overload.
    fn refill_frames(&mut self) {
        let mut placed = 0;
        while placed < self.refill.len() {
            let mut wf = self.fill.fill((self.refill.len() - placed) as u32);
            let k = wf.insert(self.refill[placed..].iter().copied()) as usize;
            wf.commit();
            if k == 0 {
                break;
            }
            placed += k;
        }
        self.refill.drain(..placed);
    }

    /// Receive frames accounted for: in the fill ring, in the RX ring, or
    /// waiting to go back. With no traffic in flight this is every receive
    /// frame (2048); fewer means frames were lost.
    pub fn frames_accounted(&self) -> usize {
        self.fill.pending() as usize + self.rx.available() as usize + self.refill.len()
    }

    pub fn stats(&self) -> XskStats {
        match self.core.user.statistics_v2() {
            Ok(s) => XskStats {
                rx_dropped: s.rx_dropped,
                rx_ring_full: s.rx_ring_full,
                rx_fill_empty: s.rx_fill_ring_empty_descs,
            },
            Err(_) => XskStats::default(),
        }
    }
}

impl XskTx {
    pub fn fd(&self) -> RawFd {
        self.core.fd
    }

    fn reclaim(&mut self) {
        let want = self.comp.available();
        if want == 0 {
            return;
        }
        let mut rd = self.comp.complete(want);
        while let Some(addr) = rd.read() {
            self.free.push(addr);
        }
        rd.release();
    }

    /// Queues as many of `pkts` as there are free frames for, and starts
    /// transmission. Returns how many were taken. Every packet must be
    /// 1..=FRAME_SIZE bytes long (the caller sorts out the others: the
    /// kernel would swallow an empty descriptor without completing it).
    pub fn send(&mut self, pkts: &[Packet]) -> usize {
        self.reclaim();
        let room = pkts.len().min(self.free.len());
        let area = &self.core.area;
        let mut taken = 0;
        // As on the fill ring, a reservation can come back short; the
        // second round sees the kernel's current consumer.
        for _ in 0..2 {
            if taken >= room {
                break;
            }
            let mut w = self.tx.transmit((room - taken) as u32);
            let mut inserted = 0;
            for p in &pkts[taken..room] {
                let data = p.data();
                let Some(&addr) = self.free.last() else {
                    break;
                };
                if data.is_empty() || data.len() > FRAME_SIZE as usize {
                    break;
                }
                // SAFETY: addr is a free transmit frame of FRAME_SIZE bytes
                // inside the area; the kernel does not read it until the
                // descriptor is committed.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        area.ptr.as_ptr().add(addr as usize),
                        data.len(),
                    );
                }
                if !w.insert_once(XdpDesc {
                    addr,
                    len: data.len() as u32,
                    options: 0,
                }) {
                    break;
                }
                self.free.pop();
                inserted += 1;
            }
            w.commit();
            drop(w);
            if inserted == 0 {
                break;
            }
            taken += inserted;
        }
        self.kick(taken);
        taken
    }

    /// Starts transmission. In copy mode each `sendto` makes the kernel
    /// send at most 32 descriptors, so it kicks until the ring is empty
    /// (or the device stops taking frames).
    fn kick(&mut self, queued: usize) {
        if self.core.zerocopy {
            if self.tx.needs_wakeup() {
                self.tx.wake();
            }
            return;
        }
        for _ in 0..queued / 32 + 2 {
            if self.tx.pending() == 0 {
                break;
            }
            self.tx.wake();
        }
    }

    /// Whether frames wait in the TX ring for the kernel.
    pub fn backlog(&self) -> bool {
        self.tx.pending() > 0
    }

    /// Gives the kernel another chance to send what waits in the TX ring.
    pub fn flush(&mut self) {
        self.reclaim();
        self.kick(0);
    }
}

struct Slot {
    rx: Option<XskRx>,
    tx: Option<XskTx>,
    core: Weak<PortCore>,
}

/// Halves not yet claimed, by (device, queue).
static PORTS: Mutex<Option<HashMap<(String, u32), Slot>>> = Mutex::new(None);
/// Programs attached, by device.
static PROGRAMS: Mutex<Option<HashMap<String, Weak<XdpProgram>>>> = Mutex::new(None);

/// Opens the socket for (`ifname`, `queue`): zero-copy if `zerocopy` is
/// true, copy mode if false, and zero-copy falling back to copy (veth and
/// most virtual devices have no zero-copy) if None.
/// An error opening a socket: whether the queue was busy, and why.
type OpenError = (bool, String);

fn open_port(
    ifname: &str,
    queue: u32,
    zerocopy: Option<bool>,
) -> Result<(XskRx, XskTx), OpenError> {
    match zerocopy {
        Some(z) => open_port_mode(ifname, queue, z),
        None => open_port_mode(ifname, queue, true).or_else(|e| {
            if e.0 {
                Err(e)
            } else {
                open_port_mode(ifname, queue, false)
            }
        }),
    }
}

fn open_port_mode(ifname: &str, queue: u32, zerocopy: bool) -> Result<(XskRx, XskTx), OpenError> {
    open_port_inner(ifname, queue, zerocopy)
}

fn open_port_inner(ifname: &str, queue: u32, zerocopy: bool) -> Result<(XskRx, XskTx), OpenError> {
    let failed = |m: String| (false, m);
    let c = CString::new(ifname).map_err(|_| failed(format!("bad device name {ifname:?}")))?;
    let mut info = IfInfo::invalid();
    info.from_name(&c)
        .map_err(|e| failed(format!("{ifname}: no such device ({e})")))?;
    info.set_queue(queue);
    let frames = 2 * FRAMES_PER_HALF;
    let area = Area::new((frames * FRAME_SIZE) as usize).map_err(failed)?;
    let config = UmemConfig {
        fill_size: FRAMES_PER_HALF,
        complete_size: FRAMES_PER_HALF,
        frame_size: FRAME_SIZE,
        headroom: 0,
        flags: 0,
    };
    let slice = NonNull::slice_from_raw_parts(area.ptr, area.len);
    // SAFETY: the area is page-aligned, of the given length, and kept alive
    // (in PortCore) longer than the Umem and every ring.
    let umem = unsafe { Umem::new(config, slice) }.map_err(|e| {
        failed(format!(
            "{ifname}: cannot create an AF_XDP socket ({e}); the kernel may lack AF_XDP"
        ))
    })?;
    let socket = Socket::with_shared(&info, &umem)
        .map_err(|e| failed(format!("{ifname}: AF_XDP socket: {e}")))?;
    let device = umem
        .fq_cq(&socket)
        .map_err(|e| failed(format!("{ifname}: AF_XDP fill/completion rings: {e}")))?;
    let size = NonZeroU32::new(FRAMES_PER_HALF);
    let mode_flag = if zerocopy {
        SocketConfig::XDP_BIND_ZEROCOPY
    } else {
        SocketConfig::XDP_BIND_COPY
    };
    let user = umem
        .rx_tx(
            &socket,
            &SocketConfig {
                rx_size: size,
                tx_size: size,
                bind_flags: SocketConfig::XDP_BIND_NEED_WAKEUP | mode_flag,
            },
        )
        .map_err(|e| failed(format!("{ifname}: AF_XDP rings: {e}")))?;
    let rx = user
        .map_rx()
        .map_err(|e| failed(format!("{ifname}: AF_XDP RX ring: {e}")))?;
    let tx = user
        .map_tx()
        .map_err(|e| failed(format!("{ifname}: AF_XDP TX ring: {e}")))?;
    umem.bind(&user).map_err(|e| {
        (
            e.get_raw() == libc::EBUSY,
            format!(
                "{ifname}: cannot bind AF_XDP socket to queue {queue} in {} mode: {e}",
                if zerocopy { "zero-copy" } else { "copy" }
            ),
        )
    })?;
    let (mut fill, comp) = device.into_parts();
    // Every receive frame starts in the fill ring.
    {
        let mut wf = fill.fill(FRAMES_PER_HALF);
        wf.insert((0..FRAMES_PER_HALF).map(|i| u64::from(i * FRAME_SIZE)));
        wf.commit();
    }
    let fd = rx.as_raw_fd();
    // Not inherited by programs the router starts (FromHost runs `ip`).
    // SAFETY: fcntl on a descriptor this socket owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    let core = Arc::new(PortCore {
        user,
        _socket: socket,
        _umem: umem,
        program: Mutex::new(None),
        fd,
        zerocopy,
        area,
    });
    let free = (FRAMES_PER_HALF..2 * FRAMES_PER_HALF)
        .map(|i| u64::from(i * FRAME_SIZE))
        .collect();
    Ok((
        XskRx {
            fill,
            rx,
            core: core.clone(),
            refill: Vec::with_capacity(FRAMES_PER_HALF as usize),
        },
        XskTx {
            comp,
            tx,
            core,
            free,
        },
    ))
}

/// Why a half could not be claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// The queue's socket is in use: by another element of this router (a
    /// hot-swap predecessor, say), or another program bound to the queue.
    Busy(String),
    /// Anything else: no AF_XDP, no permission, no such device, ...
    Failed(String),
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::Busy(m) | ClaimError::Failed(m) => f.write_str(m),
        }
    }
}

impl From<String> for ClaimError {
    fn from(m: String) -> ClaimError {
        ClaimError::Failed(m)
    }
}

fn with_slot<R>(
    ifname: &str,
    queue: u32,
    zerocopy: Option<bool>,
    take: impl FnOnce(&mut Slot) -> Option<R>,
) -> Result<R, ClaimError> {
    let mut ports = PORTS
        .lock()
        .map_err(|_| ClaimError::Failed("AF_XDP registry poisoned".into()))?;
    let ports = ports.get_or_insert_with(HashMap::new);
    let key = (ifname.to_string(), queue);
    if ports.get(&key).is_some_and(|s| s.core.strong_count() == 0) {
        ports.remove(&key);
    }
    if !ports.contains_key(&key) {
        let (rx, tx) = open_port(ifname, queue, zerocopy).map_err(|(busy, m)| {
            if busy {
                ClaimError::Busy(m)
            } else {
                ClaimError::Failed(m)
            }
        })?;
        let core = Arc::downgrade(&rx.core);
        ports.insert(
            key.clone(),
            Slot {
                rx: Some(rx),
                tx: Some(tx),
                core,
            },
        );
    }
    let slot = ports.get_mut(&key).expect("inserted above");
    let got = take(slot);
    if slot.rx.is_none() && slot.tx.is_none() {
        ports.remove(&key);
    }
    got.ok_or_else(|| {
        ClaimError::Busy(format!(
            "{ifname} queue {queue}: the AF_XDP socket is already used by another element of this kind"
        ))
    })
}

/// A claimed receive half. Dropping it stops the redirection of its queue
/// (packets go to the host stack again) and gives the half back, so a later
/// element can claim it; the socket closes when neither half is claimed,
/// and the program detaches with the device's last socket.
pub struct RxPort {
    key: (String, u32),
    half: Option<XskRx>,
}

/// A claimed transmit half; see [`RxPort`].
pub struct TxPort {
    key: (String, u32),
    half: Option<XskTx>,
}

impl std::ops::Deref for RxPort {
    type Target = XskRx;
    fn deref(&self) -> &XskRx {
        self.half.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for RxPort {
    fn deref_mut(&mut self) -> &mut XskRx {
        self.half.as_mut().expect("present until dropped")
    }
}

impl std::ops::Deref for TxPort {
    type Target = XskTx;
    fn deref(&self) -> &XskTx {
        self.half.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for TxPort {
    fn deref_mut(&mut self) -> &mut XskTx {
        self.half.as_mut().expect("present until dropped")
    }
}

impl Drop for RxPort {
    fn drop(&mut self) {
        let Some(half) = self.half.take() else {
            return;
        };
        let program = half.core.program.lock().ok().and_then(|mut p| p.take());
        if let Some(p) = program {
            p.remove(self.key.1);
        }
        give_back(&self.key, |s| s.rx = Some(half));
    }
}

impl Drop for TxPort {
    fn drop(&mut self) {
        if let Some(half) = self.half.take() {
            give_back(&self.key, |s| s.tx = Some(half));
        }
    }
}

/// Returns a half to the registry; closes the socket (drops the slot) if
/// the other half is unclaimed too.
fn give_back(key: &(String, u32), put: impl FnOnce(&mut Slot)) {
    let closing = {
        let Ok(mut guard) = PORTS.lock() else {
            return;
        };
        let ports = guard.get_or_insert_with(HashMap::new);
        let slot = ports.entry(key.clone()).or_insert_with(|| Slot {
            rx: None,
            tx: None,
            core: Weak::new(),
        });
        put(slot);
        if let Some(core) = slot
            .rx
            .as_ref()
            .map(|h| &h.core)
            .or(slot.tx.as_ref().map(|h| &h.core))
        {
            slot.core = Arc::downgrade(core);
        }
        let unused = slot.rx.is_some() && slot.tx.is_some();
        if unused {
            ports.remove(key)
        } else {
            None
        }
    };
    // The socket closes outside the lock.
    drop(closing);
}

/// The receive half of (`ifname`, `queue`), with the redirect program
/// attached to the device (or already attached for another queue). A
/// program already attached for this device by an earlier claim keeps its
/// mode: `mode` applies to the first claim only.
pub fn claim_rx(
    ifname: &str,
    queue: u32,
    mode: XdpMode,
    zerocopy: Option<bool>,
) -> Result<RxPort, ClaimError> {
    if cfg!(target_endian = "big") {
        return Err(ClaimError::Failed(
            "the AF_XDP redirect program is encoded for little-endian hosts only".into(),
        ));
    }
    let half = with_slot(ifname, queue, zerocopy, |s| s.rx.take())?;
    let port = RxPort {
        key: (ifname.to_string(), queue),
        half: Some(half),
    };
    let index = super::afpacket::ifindex(ifname)? as u32;
    let program = {
        let mut progs = PROGRAMS
            .lock()
            .map_err(|_| ClaimError::Failed("AF_XDP registry poisoned".into()))?;
        let progs = progs.get_or_insert_with(HashMap::new);
        // A device deleted and created again under the same name has a new
        // index and no program.
        match progs
            .get(ifname)
            .and_then(Weak::upgrade)
            .filter(|p| p.ifindex == index)
        {
            Some(p) => p,
            None => {
                let p = Arc::new(XdpProgram::attach(ifname, index, mode)?);
                progs.insert(ifname.to_string(), Arc::downgrade(&p));
                p
            }
        }
    };
    program.insert(queue, port.fd())?;
    if let Ok(mut g) = port.core.program.lock() {
        *g = Some(program);
    }
    Ok(port)
}

/// The transmit half of (`ifname`, `queue`).
pub fn claim_tx(ifname: &str, queue: u32, zerocopy: Option<bool>) -> Result<TxPort, ClaimError> {
    let half = with_slot(ifname, queue, zerocopy, |s| s.tx.take())?;
    Ok(TxPort {
        key: (ifname.to_string(), queue),
        half: Some(half),
    })
}
