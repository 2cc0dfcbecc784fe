//! # McastSocket
//!
//! A multicast UDP socket transport (user-level).
//!
//! ## Synopsis
//! `McastSocket(MCASTIP, MCASTPORT [, SOURCEIP, SOURCEPORT, *keywords*])`
//!
//! *keywords*: LOOP, SNAPLEN, HEADROOM, TIMESTAMP, RCVBUF, SNDBUF.
//!
//! ## Ports and processing
//! At most one input and at most one output. The input is agnostic; the
//! output is push. Packets do not flow through a McastSocket (flow code
//! `x/y`): input packets are sent to the multicast group, and datagrams
//! received from the group are emitted on the output.
//!
//! ## Description
//! Each input packet is sent as one UDP datagram to MCASTIP:MCASTPORT (an
//! IPv4 multicast group, AddressInfo names allowed). The element joins the
//! group and emits every datagram sent to it (by any number of hosts or
//! processes, each with its own McastSocket or other socket) as a packet,
//! cut to SNAPLEN bytes if longer (its extra length annotation then holds
//! the bytes cut). Several processes on one host may use the same group
//! and port.
//!
//! With SOURCEIP (and optionally SOURCEPORT), datagrams are sent from that
//! address, and the group is joined and sent to on the interface holding
//! it; the element then drops the copies of its own datagrams that come
//! back to it. Without SOURCEIP, the routing table chooses the interface
//! and source, and with LOOP true (the default) the element receives its
//! own datagrams too; LOOP false stops the host from looping them back
//! (to any process on the host).
//!
//! Sending never blocks the router (Click blocks a pushed packet on a full
//! socket): a pull input is pulled by a task while the socket takes
//! datagrams, and waits for the socket when it is full; a packet pushed
//! while the socket is full is dropped and counted. Empty packets are not
//! sent. Errors sending one datagram drop it and are counted. Up to 32
//! datagrams are read per readiness event.
//!
//! ## Keywords
//! - **LOOP** (boolean): loop multicast datagrams back to this host
//!   (`IP_MULTICAST_LOOP`). Default true.
//! - **SNAPLEN** (integer): the longest packet emitted. Default 2048.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 28.
//! - **TIMESTAMP** (boolean): set the timestamp annotation of emitted
//!   packets to the current time. Default true.
//! - **RCVBUF**, **SNDBUF** (integer): the sockets' buffer sizes in bytes.
//!   Default: the system's.
//!
//! ## Handlers
//! - `sent`, `received` (read): datagrams sent and packets emitted (rclick
//!   extension).
//! - `drops` (read): input packets not sent (rclick extension).
//!
//! ## Example
//! ```click
//! RatedSource("hi", LIMIT 5, STOP true)
//!   -> McastSocket(233.252.0.0, 1234)
//!   -> Print(got, CONTENTS ASCII) -> Discard;
//! ```

use std::collections::VecDeque;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use rclick_core::conf::Args;
use rclick_core::packet::anno;
use rclick_core::wire::ipv4::PROTO_UDP;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Interest, NotifierSignal, Packet, TaskId,
    Timestamp,
};

use crate::ip::address::{parse_ipv4_arg, parse_port_arg};

const DEFAULT_HEADROOM: usize = 28;
const DEFAULT_SNAPLEN: usize = 2048;
const MAX_SNAPLEN: usize = 65535;
const READ_BURST: usize = 32;
const PULL_BURST: usize = 32;
/// Packets held while the socket is full (pull input only).
const HOLD_CAP: usize = 64;

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

fn check(r: i32) -> io::Result<()> {
    if r < 0 {
        Err(last_error())
    } else {
        Ok(())
    }
}

fn setsockopt<T>(fd: RawFd, level: i32, opt: i32, value: &T) -> io::Result<()> {
    // SAFETY: passes a pointer to a live value and its size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })
}

fn sockaddr(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all zero is a valid value.
    let mut a: libc::sockaddr_in = unsafe { zeroed() };
    a.sin_family = libc::AF_INET as libc::sa_family_t;
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from(ip).to_be();
    a
}

fn in_addr(ip: Ipv4Addr) -> libc::in_addr {
    libc::in_addr {
        s_addr: u32::from(ip).to_be(),
    }
}

fn udp_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) with constant arguments.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(last_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: RawFd, a: &libc::sockaddr_in) -> io::Result<()> {
    // SAFETY: `a` is a valid sockaddr_in of the given size.
    check(unsafe {
        libc::bind(
            fd,
            (a as *const libc::sockaddr_in).cast(),
            size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })
}

fn local_addr(fd: RawFd) -> Option<(Ipv4Addr, u16)> {
    // SAFETY: sockaddr_in is plain data.
    let mut a: libc::sockaddr_in = unsafe { zeroed() };
    let mut len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `a` has room for `len` bytes.
    let r = unsafe { libc::getsockname(fd, (&mut a as *mut libc::sockaddr_in).cast(), &mut len) };
    (r == 0).then(|| {
        (
            Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
            u16::from_be(a.sin_port),
        )
    })
}

pub struct McastSocket {
    group: Ipv4Addr,
    port: u16,
    source: Option<Ipv4Addr>,
    source_port: u16,
    loop_back: bool,
    snaplen: usize,
    headroom: usize,
    timestamp: bool,
    rcvbuf: Option<i32>,
    sndbuf: Option<i32>,
    has_input: bool,
    has_output: bool,
    recv: Option<OwnedFd>,
    send: Option<OwnedFd>,
    /// The send socket's address, to recognize our own datagrams (only
    /// with SOURCEIP).
    self_addr: Option<(Ipv4Addr, u16)>,
    dest: libc::sockaddr_in,
    scratch: Vec<u8>,
    task: Option<TaskId>,
    signal: NotifierSignal,
    /// Pulled packets waiting for room in a full socket.
    held: VecDeque<Packet>,
    blocked: bool,
    sent: u64,
    received: u64,
    drops: u64,
}

impl Default for McastSocket {
    fn default() -> Self {
        McastSocket {
            group: Ipv4Addr::UNSPECIFIED,
            port: 0,
            source: None,
            source_port: 0,
            loop_back: true,
            snaplen: DEFAULT_SNAPLEN,
            headroom: DEFAULT_HEADROOM,
            timestamp: true,
            rcvbuf: None,
            sndbuf: None,
            has_input: false,
            has_output: false,
            recv: None,
            send: None,
            self_addr: None,
            dest: sockaddr(Ipv4Addr::UNSPECIFIED, 0),
            scratch: Vec::new(),
            task: None,
            signal: NotifierSignal::default(),
            held: VecDeque::new(),
            blocked: false,
            sent: 0,
            received: 0,
            drops: 0,
        }
    }
}

/// What sending one packet did.
enum Sent {
    Done,
    /// The socket is full: try again when it is writable.
    Full,
}

impl McastSocket {
    fn open(&mut self) -> io::Result<()> {
        let any = Ipv4Addr::UNSPECIFIED;
        let iface = self.source.unwrap_or(any);
        // Receiving: bound to the group's address and port, shared with
        // other sockets of this host, joined on the interface.
        let recv = udp_socket()?;
        let rfd = recv.as_raw_fd();
        setsockopt(rfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32)?;
        setsockopt(rfd, libc::SOL_SOCKET, libc::SO_REUSEPORT, &1i32)?;
        if let Some(n) = self.rcvbuf {
            setsockopt(rfd, libc::SOL_SOCKET, libc::SO_RCVBUF, &n)?;
        }
        bind(rfd, &sockaddr(self.group, self.port))?;
        let mreq = libc::ip_mreq {
            imr_multiaddr: in_addr(self.group),
            imr_interface: in_addr(iface),
        };
        setsockopt(rfd, libc::IPPROTO_IP, libc::IP_ADD_MEMBERSHIP, &mreq)?;
        // Sending: from SOURCEIP:SOURCEPORT when given.
        let send = udp_socket()?;
        let sfd = send.as_raw_fd();
        if let Some(n) = self.sndbuf {
            setsockopt(sfd, libc::SOL_SOCKET, libc::SO_SNDBUF, &n)?;
        }
        setsockopt(
            sfd,
            libc::IPPROTO_IP,
            libc::IP_MULTICAST_LOOP,
            &i32::from(self.loop_back),
        )?;
        if self.source.is_some() {
            setsockopt(
                sfd,
                libc::IPPROTO_IP,
                libc::IP_MULTICAST_IF,
                &in_addr(iface),
            )?;
        }
        bind(sfd, &sockaddr(iface, self.source_port))?;
        self.self_addr = if self.source.is_some() {
            local_addr(sfd)
        } else {
            None
        };
        self.dest = sockaddr(self.group, self.port);
        self.recv = Some(recv);
        self.send = Some(send);
        Ok(())
    }

    fn send_one(&mut self, p: &Packet) -> Sent {
        let Some(fd) = self.send.as_ref().map(|s| s.as_raw_fd()) else {
            self.drops += 1;
            return Sent::Done;
        };
        if p.is_empty() {
            return Sent::Done;
        }
        loop {
            let d = p.data();
            // SAFETY: `d` is readable for its length; `dest` is a valid
            // sockaddr_in.
            let r = unsafe {
                libc::sendto(
                    fd,
                    d.as_ptr().cast(),
                    d.len(),
                    0,
                    (&self.dest as *const libc::sockaddr_in).cast(),
                    size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            if r >= 0 {
                self.sent += 1;
                return Sent::Done;
            }
            match last_error().kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Sent::Full,
                _ => {
                    self.drops += 1;
                    return Sent::Done;
                }
            }
        }
    }

    fn read_some(&mut self, ctx: &mut Ctx) {
        let Some(fd) = self.recv.as_ref().map(|s| s.as_raw_fd()) else {
            return;
        };
        let now = if self.timestamp {
            ctx.now()
        } else {
            Timestamp::ZERO
        };
        for _ in 0..READ_BURST {
            // SAFETY: sockaddr_in is plain data.
            let mut from: libc::sockaddr_in = unsafe { zeroed() };
            let mut flen = size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let buf = &mut self.scratch;
            // SAFETY: `buf` is writable for its length and `from` has room
            // for an IPv4 address.
            let n = unsafe {
                libc::recvfrom(
                    fd,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_TRUNC,
                    (&mut from as *mut libc::sockaddr_in).cast(),
                    &mut flen,
                )
            };
            if n < 0 {
                match last_error().kind() {
                    io::ErrorKind::Interrupted => continue,
                    _ => return,
                }
            }
            let n = n as usize;
            let sender = (
                Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr)),
                u16::from_be(from.sin_port),
            );
            if self.self_addr == Some(sender) || n == 0 || !self.has_output {
                continue;
            }
            let len = n.min(self.snaplen);
            let mut p = Packet::with_room(self.headroom, &self.scratch[..len], 0);
            if n > len {
                p.set_anno_bytes(anno::EXTRA_LENGTH, &((n - len) as u32).to_ne_bytes());
            }
            if self.timestamp {
                p.set_timestamp_anno(now);
            }
            self.received += 1;
            ctx.emit(0, p);
        }
    }

    fn set_blocked(&mut self, blocked: bool, ctx: &Ctx) {
        if blocked == self.blocked {
            return;
        }
        self.blocked = blocked;
        if let Some(s) = &self.send {
            ctx.add_select(
                s.as_raw_fd(),
                if blocked {
                    Interest::WRITE
                } else {
                    Interest {
                        read: false,
                        write: false,
                    }
                },
            );
        }
    }
}

const HANDLERS: &[Handler<McastSocket>] = &[
    Handler::data("sent", |e| &e.sent),
    Handler::data("received", |e| &e.received),
    Handler::data("drops", |e| &e.drops),
];

rclick_core::element_class!(McastSocket);

impl Element for McastSocket {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0-1/0-1"
    }

    fn processing(&self) -> &'static str {
        "a/h"
    }

    fn flow_code(&self) -> &'static str {
        "x/y"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let group: Ipv4Addr = args.read_mp_with("MCASTIP", |s| parse_ipv4_arg(s, ictx));
        let port: u16 = args.read_mp_with("MCASTPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        let source: Option<Ipv4Addr> = args.read_p_with("SOURCEIP", |s| parse_ipv4_arg(s, ictx));
        let source_port: Option<u16> =
            args.read_p_with("SOURCEPORT", |s| parse_port_arg(s, PROTO_UDP, ictx));
        self.loop_back = args.read_or("LOOP", true);
        let snaplen: u32 = args.read_or("SNAPLEN", DEFAULT_SNAPLEN as u32);
        let headroom: u32 = args.read_or("HEADROOM", DEFAULT_HEADROOM as u32);
        self.timestamp = args.read_or("TIMESTAMP", true);
        let rcvbuf: Option<u32> = args.read("RCVBUF");
        let sndbuf: Option<u32> = args.read("SNDBUF");
        args.complete()?;
        if !group.is_multicast() {
            return Err(format!("MCASTIP {group} is not a multicast address").into());
        }
        if snaplen == 0 || snaplen as usize > MAX_SNAPLEN {
            return Err(format!("SNAPLEN must be between 1 and {MAX_SNAPLEN}").into());
        }
        let buf = |v: Option<u32>, what: &str| -> Result<Option<i32>, String> {
            v.map(|n| i32::try_from(n).map_err(|_| format!("{what} too large")))
                .transpose()
        };
        self.rcvbuf = buf(rcvbuf, "RCVBUF")?;
        self.sndbuf = buf(sndbuf, "SNDBUF")?;
        self.group = group;
        self.port = port;
        self.source = source.filter(|s| !s.is_unspecified());
        self.source_port = source_port.unwrap_or(0);
        self.snaplen = snaplen as usize;
        self.headroom = headroom as usize;
        self.has_input = ctx.ninputs() > 0;
        self.has_output = ctx.noutputs() > 0;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.scratch = vec![0; self.snaplen];
        self.held = VecDeque::with_capacity(HOLD_CAP);
        if self.has_input && ctx.input_is_pull(0) {
            let t = ctx.new_task(true);
            self.signal = ctx.upstream_empty_signal(0, Some(t));
            self.task = Some(t);
        }
        self.open()
            .map_err(|e| format!("{}:{}: {e}", self.group, self.port))?;
        if let Some(r) = &self.recv {
            ctx.add_select(r.as_raw_fd(), Interest::READ);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, _ctx: &mut Ctx) {
        for p in batch.drain() {
            if let Sent::Full = self.send_one(&p) {
                self.drops += 1;
            }
        }
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if self.blocked {
            return false;
        }
        let mut worked = false;
        while let Some(p) = self.held.pop_front() {
            worked = true;
            if let Sent::Full = self.send_one(&p) {
                self.held.push_front(p);
                self.set_blocked(true, ctx);
                return true;
            }
        }
        let Some(mut batch) = ctx.pull(0, PULL_BURST) else {
            if ctx.signal_active(&self.signal) {
                ctx.fast_reschedule();
            }
            return worked;
        };
        let mut full = false;
        for p in batch.drain() {
            if full || matches!(self.send_one(&p), Sent::Full) {
                full = true;
                if self.held.len() < HOLD_CAP {
                    self.held.push_back(p);
                } else {
                    self.drops += 1;
                }
            }
        }
        if full {
            self.set_blocked(true, ctx);
        } else {
            ctx.fast_reschedule();
        }
        true
    }

    fn selected(&mut self, fd: RawFd, readable: bool, writable: bool, ctx: &mut Ctx) {
        if self.recv.as_ref().is_some_and(|r| r.as_raw_fd() == fd) {
            if readable {
                self.read_some(ctx);
            }
        } else if self.send.as_ref().is_some_and(|s| s.as_raw_fd() == fd) {
            if writable && self.blocked {
                self.set_blocked(false, ctx);
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                }
            }
        } else {
            ctx.remove_select(fd);
        }
    }

    fn cleanup(&mut self) {
        self.held.clear();
        self.recv = None;
        self.send = None;
    }
}
