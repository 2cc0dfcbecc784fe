//! # Socket
//!
//! Carries packets over a TCP, UDP or Unix-domain socket to and from
//! another program or host.
//!
//! ## Synopsis
//! `Socket(TCP, ADDR, PORT [, LOCAL_ADDR, LOCAL_PORT, *keywords*])`
//! `Socket(UDP, ADDR, PORT [, LOCAL_ADDR, LOCAL_PORT, *keywords*])`
//! `Socket(UNIX, FILENAME [, LOCAL_FILENAME, *keywords*])`
//! `Socket(UNIX_DGRAM, FILENAME [, LOCAL_FILENAME, *keywords*])`
//!
//! *keywords*: VERBOSE, SNAPLEN, HEADROOM, TIMESTAMP, NODELAY, CLIENT,
//! RCVBUF, SNDBUF, ALLOW, DENY, PROPER.
//!
//! ## Ports and processing
//! At most one input and at most one output. The input is agnostic; the
//! output is push. Packets do not flow through a Socket (flow code `x/y`):
//! input packets are sent to the remote program, and what arrives from it
//! is emitted on the output.
//!
//! ## Description
//! The socket type is `TCP` or `UDP` (IPv4; ADDR may be an AddressInfo
//! name, PORT a PortInfo or well-known service name), `UNIX` (stream) or
//! `UNIX_DGRAM` (datagram) with a file name.
//!
//! **Servers and clients.** A Socket is a server unless CLIENT is true. If
//! CLIENT is not given, a Socket with no output, or with LOCAL_ADDR /
//! LOCAL_PORT / LOCAL_FILENAME, is a client; any other Socket is a server.
//! A server binds ADDR:PORT (or FILENAME). A stream server listens and
//! serves one connection at a time: further connections wait in the
//! listen backlog until the current one closes, then the next is accepted.
//! A stream client binds the local address if given and connects to
//! ADDR:PORT (or FILENAME) during initialization; a refused connection is
//! an initialization error. A datagram server receives from anyone and
//! sends input packets to the last host or program that sent it a
//! datagram (input packets arriving before any datagram are dropped). A
//! datagram client sends input packets to ADDR:PORT (or FILENAME) and
//! emits every datagram it receives. A UDP client whose ADDR is `0.0.0.0`
//! sends each packet to the packet's destination IP annotation instead,
//! at PORT.
//!
//! **Framing.** Stream sockets carry raw bytes: packet boundaries are not
//! kept. Each input packet's bytes are written in order; each read from
//! the connection (at most SNAPLEN bytes) becomes one output packet. On
//! datagram sockets each packet is one datagram; a datagram longer than
//! SNAPLEN is cut to SNAPLEN bytes and its extra length annotation set to
//! the bytes cut. Empty packets are not sent, and empty datagrams are not
//! emitted.
//!
//! **Input.** A pull input is pulled by a task as fast as the socket takes
//! data, and only while a connection is open: while a stream Socket has no
//! connection, packets wait upstream. The task sleeps while the upstream
//! queues are empty or the socket is full. A push input never blocks the
//! router (Click blocks on the socket here): packets the socket cannot take
//! at once wait in a queue of up to 256 packets, and packets beyond that,
//! or pushed while no connection is open, are dropped and counted. The
//! driver wakes the Socket when a full socket has room again, except where
//! the kernel cannot tell (a Unix datagram receiver whose queue is full,
//! `ENOBUFS`): then sending is retried after 1 ms, doubling up to 64 ms.
//!
//! **Disconnection.** When the peer of a stream connection closes it (or
//! the connection fails), the Socket closes its end and drops the packets
//! still waiting for it. A server then accepts the next connection; a
//! client, as in Click, does not reconnect and drops what it is sent from
//! then on. Errors on a datagram socket (a refused or oversized datagram)
//! drop that one packet; the socket stays open.
//!
//! Sockets are non-blocking; the driver waits for them with the other
//! descriptors (`poll(2)`, or epoll for large sets), so an idle router sleeps. A stream
//! client whose connection is still in progress after one second of
//! initialization completes it in the background (input waits meanwhile);
//! if it then fails, the error is printed. At most 32 reads are done per
//! readiness event. A server removes a stale Unix socket file left at
//! FILENAME (no program accepting on it) before binding, and the socket
//! file it created is removed when the router stops, as is a client's
//! LOCAL_FILENAME.
//!
//! **Accept failures.** If a stream server cannot accept a waiting
//! connection for a reason that would not go away at once (the process
//! or system is out of descriptors, `EMFILE`/`ENFILE`, or out of memory,
//! `ENOBUFS`/`ENOMEM`), the connection stays in the backlog and the
//! Socket stops watching the listening socket for 100 ms, then tries
//! again, doubling the wait on each failure in a row up to 1.6 s. The
//! first failure is reported, then at most one message every 10 s (with
//! the number of failures in between), and `accepting connections again`
//! once a connection is accepted. (Click retries at once, in a loop.) A
//! connection that fails before it is accepted is skipped.
//!
//! **Hot swap.** A Socket in the new configuration with the same name, type
//! and mode (server or client) and the same addresses takes its
//! predecessor's sockets: the listening socket and the open connection
//! (stream), the socket itself (datagram, so a UDP Socket keeps its port
//! and a server its last sender), the Unix socket files it bound, the
//! packets waiting to be sent and the counters. A server's configured port
//! may also be the port a predecessor given port 0 was bound to, and a
//! server given port 0 keeps its predecessor's port. Peers notice
//! nothing. A Socket that takes nothing opens its socket once the
//! swap is done (the old router may hold the address until then); if a
//! server then cannot bind, the error is printed and it tries again every
//! second; if a client cannot connect, the error is printed and it stays
//! closed.
//!
//! ## Keywords
//! - **CLIENT** (boolean): client (connect) or server (bind and listen).
//!   Default: see above.
//! - **SNAPLEN** (integer): the longest packet emitted; bytes read per
//!   stream read. Default 2048.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 28.
//! - **TIMESTAMP** (boolean): set the timestamp annotation of emitted
//!   packets to the current time. Default true.
//! - **NODELAY** (boolean or integer): TCP only; disable the Nagle
//!   algorithm so that small writes leave at once. Default true.
//! - **RCVBUF**, **SNDBUF** (integer): the socket's receive and send buffer
//!   sizes in bytes (`SO_RCVBUF`, `SO_SNDBUF`). Default: the system's.
//! - **ALLOW**, **DENY** (element names): IPv4 route tables (RadixIPLookup,
//!   DirectIPLookup, LinearIPLookup, StaticIPLookup, LookupIPRoute). For a
//!   TCP server each connecting client's address, and for a UDP server each
//!   datagram's source address, is looked up: a match in ALLOW accepts it;
//!   otherwise a match in DENY refuses it (the connection is closed, the
//!   datagram dropped); otherwise it is accepted. Verdicts for up to 64
//!   recent source addresses are remembered until a table changes (through
//!   its handlers or a hot swap), so a steady flow of datagrams costs no
//!   lookups; with any other element that has a `lookup` handler, every
//!   address is looked up.
//! - **VERBOSE** (boolean): print a message when a connection is opened,
//!   refused or closed, and for socket errors. Default false.
//! - **PROPER** (boolean): PlanetLab's Proper port binding; accepted and
//!   ignored.
//!
//! ## Handlers
//! - `received` (read): packets emitted on the output.
//! - `sent` (read): packets sent on the socket.
//! - `drops` (read): input packets dropped (no connection or peer, queue
//!   full, refused by the socket, connection closed before they were sent).
//! - `connections` (read): connections opened (accepted or connected).
//! - `connected` (read): whether a connection is open; for a datagram
//!   socket, whether packets have somewhere to go.
//! - `local_address` (read): the bound address, `ADDR:PORT` (with the real
//!   port when PORT was 0) or the file name; empty if not bound.
//! - `remote_address` (read): where input packets go: the connected peer,
//!   the datagram server's last sender, or the client's destination.
//! - `reset_counts` (write): zeroes `received`, `sent`, `drops` and
//!   `connections`.
//!
//! Click's Socket has only the task handlers; the ones above are rclick's.
//! A Socket with a pull input also has the task handlers `scheduled`,
//! `tickets` and `home_thread`, as in Click.
//!
//! ## Example
//! ```click
//! // A UDP tunnel to a user-level program on port 9000: frames go out,
//! // and whatever the program sends back is written to a trace.
//! FromDump(in.pcap) -> q :: Queue
//!   -> s :: Socket(UDP, 127.0.0.1, 9000, CLIENT true)
//!   -> ToDump(out.pcap);
//!
//! // A TCP echo server (one client at a time).
//! e :: Socket(TCP, 0.0.0.0, 7000) -> Queue -> e;
//! ```

use std::collections::VecDeque;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rclick_core::conf::{parse_bool, parse_u32, Args};
use rclick_core::packet::anno;
use rclick_core::wire::ipv4::{PROTO_TCP, PROTO_UDP};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Interest, NotifierSignal, Packet, TaskId,
    TimerId, Timestamp,
};

use crate::ip::address::{parse_ipv4_arg, parse_port_arg};
use crate::ip::routetable::changes_of;

/// Click's default headroom for packets a Socket makes.
const DEFAULT_HEADROOM: usize = 28;
const DEFAULT_SNAPLEN: usize = 2048;
const MAX_SNAPLEN: usize = 16 << 20;
/// Packets waiting for the socket (push input) at most.
const OUTQ_CAP: usize = 256;
/// Reads per readiness event at most.
const READ_BURST: usize = 32;
/// Packets pulled per task run at most.
const PULL_BURST: usize = 32;
/// How long initialization waits for a stream client's connection.
const CONNECT_WAIT_MS: i32 = 1000;
/// Listen backlog, as in Click.
const BACKLOG: i32 = 2;
const MAX_BACKOFF_MS: u32 = 64;
/// How long a server stops accepting after accept(2) fails in a way that
/// would repeat at once (EMFILE, ENFILE, ENOBUFS, ENOMEM); doubled on each
/// failure in a row up to ACCEPT_MAX_BACKOFF_MS.
const ACCEPT_BACKOFF_MS: u32 = 100;
const ACCEPT_MAX_BACKOFF_MS: u32 = 1600;
/// accept(2) failures are reported at most this often (seconds).
const ACCEPT_REPORT_SECS: f64 = 10.0;
/// A server that could not bind after a hot swap tries again this often
/// (seconds).
const REOPEN_SECS: f64 = 1.0;
/// ALLOW/DENY verdicts cached (source addresses; a power of two).
const ACL_SLOTS: usize = 64;
const NO_INTEREST: Interest = Interest {
    read: false,
    write: false,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Kind {
    #[default]
    Tcp,
    Udp,
    Unix,
    UnixDgram,
}

impl Kind {
    fn is_stream(self) -> bool {
        matches!(self, Kind::Tcp | Kind::Unix)
    }
}

/// A configured address.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Inet(Ipv4Addr, u16),
    Unix(String),
}

impl Default for Target {
    fn default() -> Self {
        Target::Inet(Ipv4Addr::UNSPECIFIED, 0)
    }
}

/// A socket address in the form the system calls take, kept without
/// allocation (datagram peers change per packet).
#[derive(Clone, Copy)]
struct SockAddr {
    ss: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl SockAddr {
    /// Room for any address (for `recvfrom` and `accept`).
    fn blank() -> SockAddr {
        SockAddr {
            // SAFETY: sockaddr_storage is plain old data; all zeroes is valid.
            ss: unsafe { zeroed() },
            len: size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    fn inet(ip: Ipv4Addr, port: u16) -> SockAddr {
        let mut a = SockAddr::blank();
        // SAFETY: sockaddr_storage is large and aligned enough for any
        // sockaddr type.
        let sin =
            unsafe { &mut *(&mut a.ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
        sin.sin_family = libc::AF_INET as libc::sa_family_t;
        sin.sin_port = port.to_be();
        sin.sin_addr = libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        };
        a.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        a
    }

    /// A Unix address; `path` is shorter than `sun_path` (checked when
    /// configuring).
    fn unix(path: &str) -> SockAddr {
        let mut a = SockAddr::blank();
        // SAFETY: as in `inet`.
        let sun =
            unsafe { &mut *(&mut a.ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_un>() };
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, &s) in sun.sun_path.iter_mut().zip(path.as_bytes()) {
            *d = s as libc::c_char;
        }
        let base = size_of::<libc::sa_family_t>();
        a.len = (base + path.len() + 1) as libc::socklen_t;
        a
    }

    fn of(t: &Target) -> SockAddr {
        match t {
            Target::Inet(ip, port) => SockAddr::inet(*ip, *port),
            Target::Unix(p) => SockAddr::unix(p),
        }
    }

    fn ptr(&self) -> *const libc::sockaddr {
        (&self.ss as *const libc::sockaddr_storage).cast()
    }

    fn ptr_mut(&mut self) -> *mut libc::sockaddr {
        (&mut self.ss as *mut libc::sockaddr_storage).cast()
    }

    /// The IPv4 address and port, for an AF_INET address.
    fn inet_parts(&self) -> Option<(Ipv4Addr, u16)> {
        if self.ss.ss_family as i32 != libc::AF_INET {
            return None;
        }
        // SAFETY: the family says this is a sockaddr_in.
        let sin =
            unsafe { &*(&self.ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
        Some((
            Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
            u16::from_be(sin.sin_port),
        ))
    }

    /// `ADDR:PORT` or the Unix file name (empty for an unnamed socket).
    fn describe(&self) -> String {
        if let Some((ip, port)) = self.inet_parts() {
            return format!("{ip}:{port}");
        }
        if self.ss.ss_family as i32 == libc::AF_UNIX {
            // SAFETY: the family says this is a sockaddr_un.
            let sun = unsafe {
                &*(&self.ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_un>()
            };
            let n = (self.len as usize)
                .saturating_sub(size_of::<libc::sa_family_t>())
                .min(sun.sun_path.len());
            let bytes: Vec<u8> = sun.sun_path[..n]
                .iter()
                .map(|&c| c as u8)
                .take_while(|&c| c != 0)
                .collect();
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        String::new()
    }

    /// Whether the address names something a datagram can be sent to (an
    /// unbound Unix socket's address is just the family).
    fn is_named(&self) -> bool {
        self.len as usize > size_of::<libc::sa_family_t>()
    }
}

/// strerror text for an OS error, as Click prints it.
fn reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

fn setsockopt_int(fd: RawFd, level: i32, opt: i32, value: i32) -> io::Result<()> {
    // SAFETY: passes a pointer to a live i32 and its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&value as *const i32).cast(),
            size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_error())
    } else {
        Ok(())
    }
}

/// The pending error of a socket (`SO_ERROR`), as an io::Error, or None.
fn socket_error(fd: RawFd) -> Option<io::Error> {
    let mut v: i32 = 0;
    let mut len = size_of::<i32>() as libc::socklen_t;
    // SAFETY: passes a pointer to a live i32 and its size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut v as *mut i32).cast(),
            &mut len,
        )
    };
    if r < 0 {
        Some(last_error())
    } else if v != 0 {
        Some(io::Error::from_raw_os_error(v))
    } else {
        None
    }
}

fn bind_fd(fd: RawFd, a: &SockAddr) -> io::Result<()> {
    // SAFETY: `a` holds a valid address of length `a.len`.
    if unsafe { libc::bind(fd, a.ptr(), a.len) } < 0 {
        Err(last_error())
    } else {
        Ok(())
    }
}

fn local_addr(fd: RawFd) -> Option<SockAddr> {
    let mut a = SockAddr::blank();
    // SAFETY: `a` has room for any address; `len` says how much.
    if unsafe { libc::getsockname(fd, a.ptr_mut(), &mut a.len) } < 0 {
        None
    } else {
        Some(a)
    }
}

fn peer_addr(fd: RawFd) -> Option<SockAddr> {
    let mut a = SockAddr::blank();
    // SAFETY: as in local_addr.
    if unsafe { libc::getpeername(fd, a.ptr_mut(), &mut a.len) } < 0 {
        None
    } else {
        Some(a)
    }
}

/// Waits up to `ms` for `fd` to become writable; whether it did.
fn wait_writable(fd: RawFd, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms as u64);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) };
        if n > 0 {
            return true;
        }
        if n == 0 || last_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// The identity of a Unix socket file we created, so only that file is
/// removed at the end.
struct BoundFile {
    path: String,
    dev: u64,
    ino: u64,
}

/// What a write of one packet came to.
enum Wrote {
    Done,
    /// The socket is full; `true` if the driver will say when it has room,
    /// `false` if only retrying later will tell (ENOBUFS, Unix datagram
    /// receivers).
    Blocked(bool),
    /// The packet was not sent and is dropped.
    Failed,
}

/// What a failed accept(2) calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AcceptError {
    /// Nothing to accept after all (EAGAIN, EINTR), or the connection was
    /// reset before it was accepted (ECONNABORTED): wait for readiness.
    Quiet,
    /// The pending connection failed with a network error that accept(2)
    /// passes on (see its manual page); it is gone, the next one may work.
    Connection,
    /// The listener stays readable but accept(2) would fail again at once
    /// (EMFILE, ENFILE, ENOBUFS, ENOMEM, anything unexpected): stop
    /// watching the listener and try again later.
    Pause,
}

fn classify_accept_error(errno: i32) -> AcceptError {
    match errno {
        // EWOULDBLOCK is EAGAIN on Linux.
        libc::EAGAIN | libc::EINTR | libc::ECONNABORTED => AcceptError::Quiet,
        e if e == libc::EWOULDBLOCK => AcceptError::Quiet,
        libc::ENETDOWN
        | libc::EPROTO
        | libc::ENOPROTOOPT
        | libc::EHOSTDOWN
        | libc::ENONET
        | libc::EHOSTUNREACH
        | libc::EOPNOTSUPP
        | libc::ENETUNREACH
        | libc::EPERM => AcceptError::Connection,
        _ => AcceptError::Pause,
    }
}

/// The wait before accepting again after `cur` ms (0: the first failure).
fn next_accept_backoff(cur: u32) -> u32 {
    if cur == 0 {
        ACCEPT_BACKOFF_MS
    } else {
        cur.saturating_mul(2).min(ACCEPT_MAX_BACKOFF_MS)
    }
}

/// ALLOW/DENY verdicts for recent source addresses, kept while neither
/// table changes (route tables count their changes; other `lookup`
/// elements cannot say, and then nothing is cached).
#[derive(Default)]
struct AclCache {
    /// The tables' change counters (None for no table).
    counters: [Option<Arc<AtomicU64>>; 2],
    /// The counters' values the cached verdicts were made under.
    seen: [u64; 2],
    cacheable: bool,
    /// Direct-mapped by address: the address and 1 (denied) or 2
    /// (allowed); 0 for an empty slot.
    slots: Vec<(u32, u8)>,
}

impl AclCache {
    fn new(tables: [Option<usize>; 2], ctx: &InitCtx) -> AclCache {
        let mut c = AclCache {
            cacheable: true,
            ..Default::default()
        };
        for (i, t) in tables.into_iter().enumerate() {
            let Some(idx) = t else { continue };
            match ctx.with_element(idx, changes_of).flatten() {
                Some(counter) => {
                    c.seen[i] = counter.load(Ordering::Acquire);
                    c.counters[i] = Some(counter);
                }
                None => c.cacheable = false,
            }
        }
        if c.cacheable {
            c.slots = vec![(0, 0); ACL_SLOTS];
        }
        c
    }

    fn slot(addr: u32) -> usize {
        (addr.wrapping_mul(0x9e37_79b1) >> (32 - ACL_SLOTS.trailing_zeros())) as usize
    }

    /// The cached verdict for `addr`, if any still holds.
    fn get(&mut self, addr: u32) -> Option<bool> {
        if !self.cacheable {
            return None;
        }
        for (i, c) in self.counters.iter().enumerate() {
            if let Some(c) = c {
                let v = c.load(Ordering::Acquire);
                if v != self.seen[i] {
                    self.seen[i] = v;
                    self.slots.fill((0, 0));
                }
            }
        }
        match self.slots[Self::slot(addr)] {
            (a, v) if v != 0 && a == addr => Some(v == 2),
            _ => None,
        }
    }

    fn put(&mut self, addr: u32, allowed: bool) {
        if self.cacheable {
            self.slots[Self::slot(addr)] = (addr, if allowed { 2 } else { 1 });
        }
    }
}

/// What the Socket needs of Ctx and InitCtx: descriptor interest and
/// messages.
trait Host {
    fn set_interest(&self, fd: RawFd, i: Interest);
    fn say(&self, msg: &str);
}

impl Host for Ctx<'_> {
    fn set_interest(&self, fd: RawFd, i: Interest) {
        self.add_select(fd, i);
    }
    fn say(&self, msg: &str) {
        self.chatter(msg);
    }
}

impl Host for InitCtx<'_> {
    fn set_interest(&self, fd: RawFd, i: Interest) {
        self.add_select(fd, i);
    }
    fn say(&self, msg: &str) {
        self.chatter(msg);
    }
}

#[derive(Default)]
pub struct Socket {
    kind: Kind,
    remote: Target,
    local: Option<Target>,
    client: bool,
    verbose: bool,
    snaplen: usize,
    headroom: usize,
    timestamp: bool,
    nodelay: bool,
    rcvbuf: Option<i32>,
    sndbuf: Option<i32>,
    allow: Option<usize>,
    deny: Option<usize>,
    has_output: bool,
    has_input: bool,
    pull_input: bool,
    decl: String,

    /// Listening socket of a stream server.
    listener: Option<OwnedFd>,
    /// The connection (stream) or the socket itself (datagram).
    conn: Option<OwnedFd>,
    /// A stream client's connect() is still in progress.
    connecting: bool,
    /// Where a client sends (and connects to).
    remote_sa: Option<SockAddr>,
    /// A datagram server's last sender.
    peer: Option<SockAddr>,
    bound_file: Option<BoundFile>,
    outq: VecDeque<Packet>,
    /// Waiting for room in the socket.
    blocked: bool,
    /// Waiting by timer rather than readiness.
    blocked_timer: bool,
    backoff_ms: u32,
    scratch: Vec<u8>,
    task: Option<TaskId>,
    timer: Option<TimerId>,
    signal: NotifierSignal,
    /// Registered interest, to touch the driver's table only on changes.
    sel_listen: Option<(RawFd, Interest)>,
    sel_conn: Option<(RawFd, Interest)>,
    complaints: u32,
    /// The listener is not watched after an accept(2) failure that would
    /// repeat; `ltimer` tries again.
    accept_paused: bool,
    accept_backoff_ms: u32,
    /// accept(2) failures not reported yet, when the next report may be
    /// printed, and whether the current run of failures was reported.
    accept_unreported: u64,
    accept_report_at: Option<Timestamp>,
    accept_reported: bool,
    /// For the listener (accept retries) and for opening after a hot swap.
    ltimer: Option<TimerId>,
    /// A hot-swap successor that has neither taken its predecessor's
    /// socket nor opened its own yet.
    open_pending: bool,
    open_failures: u32,
    acl: AclCache,

    received: u64,
    sent: u64,
    drops: u64,
    connections: u64,
}

impl Socket {
    fn conn_fd(&self) -> Option<RawFd> {
        self.conn.as_ref().map(|f| f.as_raw_fd())
    }

    /// Whether input packets can be written now (a connection is open and
    /// not waiting for room).
    fn ready_to_send(&self) -> bool {
        self.conn.is_some() && !self.connecting && !self.blocked
    }

    fn complain(&mut self, ctx: &Ctx, msg: &str) {
        if self.verbose || self.complaints < 5 {
            self.complaints += 1;
            ctx.chatter(&format!("{}: {msg}", self.decl));
        }
    }

    /// Brings the driver's interest in our descriptors up to date.
    fn sync_selects(&mut self, sel: &dyn Host) {
        let want_listen = self.listener.as_ref().map(|l| {
            let i = if self.conn.is_none() && !self.accept_paused {
                Interest::READ
            } else {
                NO_INTEREST
            };
            (l.as_raw_fd(), i)
        });
        let want_conn = self.conn.as_ref().map(|c| {
            let i = Interest {
                read: !self.connecting,
                write: self.connecting || (self.blocked && !self.blocked_timer),
            };
            (c.as_raw_fd(), i)
        });
        for (cur, want) in [
            (&mut self.sel_listen, want_listen),
            (&mut self.sel_conn, want_conn),
        ] {
            if *cur == want {
                continue;
            }
            if let Some((fd, _)) = *cur {
                if want.is_none_or(|(f, _)| f != fd) {
                    sel.set_interest(fd, NO_INTEREST);
                }
            }
            if let Some((fd, i)) = want {
                sel.set_interest(fd, i);
            }
            *cur = want;
        }
    }

    /// Closes a stream connection; drops what waited for it.
    fn close_conn(&mut self, ctx: &mut Ctx) {
        if let Some(fd) = self.conn.take() {
            let raw = fd.as_raw_fd();
            if self.sel_conn.is_some_and(|(f, _)| f == raw) {
                ctx.remove_select(raw);
                self.sel_conn = None;
            }
            drop(fd);
            if self.verbose {
                ctx.chatter(&format!("{}: closed connection {raw}", self.decl));
            }
        }
        self.connecting = false;
        self.drops += self.outq.len() as u64;
        self.outq.clear();
        self.blocked = false;
        self.blocked_timer = false;
        if let Some(t) = self.timer {
            ctx.unschedule_timer(t);
        }
        self.sync_selects(ctx);
    }

    /// Whether the ALLOW/DENY tables let `ip` in (Click's `allowed`). The
    /// verdict is cached while the tables stay the same, so a steady
    /// stream from the same sources asks the tables (and allocates the
    /// handler's answer) only once per source.
    fn allowed(&mut self, ip: Ipv4Addr, ctx: &mut Ctx) -> bool {
        let addr = u32::from(ip);
        if let Some(v) = self.acl.get(addr) {
            return v;
        }
        let mut hit = |idx: Option<usize>| {
            idx.is_some_and(|i| {
                ctx.read_handler_at(Some(i), "lookup", Some(&ip.to_string()))
                    .ok()
                    .and_then(|v| v.split_whitespace().next()?.parse::<i64>().ok())
                    .is_some_and(|port| port >= 0)
            })
        };
        let v = hit(self.allow) || !hit(self.deny);
        self.acl.put(addr, v);
        v
    }

    /// accept(2) failed in a way that would repeat at once: stop watching
    /// the listener and try again after a while, backing off; report the
    /// failure at most every ACCEPT_REPORT_SECS.
    fn pause_accept(&mut self, e: &io::Error, ctx: &mut Ctx) {
        self.accept_paused = true;
        self.accept_backoff_ms = next_accept_backoff(self.accept_backoff_ms);
        self.accept_unreported += 1;
        let now = ctx.now();
        if self.accept_report_at.is_none_or(|t| now >= t) {
            let more = self.accept_unreported - 1;
            let mut msg = format!(
                "{}: accept: {}; not accepting for {} ms",
                self.decl,
                reason(e),
                self.accept_backoff_ms
            );
            if more > 0 {
                msg.push_str(&format!(" ({more} more failures since the last report)"));
            }
            ctx.chatter(&msg);
            self.accept_unreported = 0;
            self.accept_reported = true;
            self.accept_report_at = Some(now + Timestamp::from_secs_f64(ACCEPT_REPORT_SECS));
        }
        if let Some(t) = self.ltimer {
            ctx.schedule_timer_after(
                t,
                Timestamp::from_secs_f64(self.accept_backoff_ms as f64 / 1e3),
            );
        }
    }

    /// Accepts one connection if none is open.
    fn accept(&mut self, ctx: &mut Ctx) {
        if self.conn.is_some() {
            return;
        }
        let Some(l) = self.listener.as_ref().map(|l| l.as_raw_fd()) else {
            return;
        };
        let mut from = SockAddr::blank();
        // SAFETY: `from` has room for any address.
        let fd = unsafe {
            libc::accept4(
                l,
                from.ptr_mut(),
                &mut from.len,
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            let e = last_error();
            match classify_accept_error(e.raw_os_error().unwrap_or(0)) {
                AcceptError::Quiet => {}
                AcceptError::Connection => {
                    if self.verbose {
                        ctx.chatter(&format!("{}: accept: {}", self.decl, reason(&e)));
                    }
                }
                AcceptError::Pause => self.pause_accept(&e, ctx),
            }
            return;
        }
        if self.accept_backoff_ms > 0 {
            if self.accept_reported {
                ctx.chatter(&format!("{}: accepting connections again", self.decl));
            }
            self.accept_backoff_ms = 0;
            self.accept_reported = false;
        }
        // SAFETY: accept4 returned a new descriptor that we now own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        if let Some((ip, port)) = from.inet_parts() {
            let ok = (self.allow.is_none() && self.deny.is_none()) || self.allowed(ip, ctx);
            if self.verbose {
                ctx.chatter(&format!(
                    "{}: {} connection {raw} from {ip}:{port}",
                    self.decl,
                    if ok { "opened" } else { "denied" }
                ));
            }
            if !ok {
                return;
            }
            if self.nodelay {
                let _ = setsockopt_int(raw, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
            }
        } else if self.verbose {
            ctx.chatter(&format!(
                "{}: opened connection {raw} from {}",
                self.decl,
                from.describe()
            ));
        }
        self.conn = Some(fd);
        self.connections += 1;
        self.backoff_ms = 0;
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }

    /// A stream client's background connect() finished.
    fn finish_connect(&mut self, ctx: &mut Ctx) {
        let Some(fd) = self.conn_fd() else { return };
        match socket_error(fd) {
            None => {
                self.connecting = false;
                self.connections += 1;
                if self.verbose {
                    ctx.chatter(&format!(
                        "{}: opened connection {fd} to {}",
                        self.decl,
                        self.remote_sa.map(|a| a.describe()).unwrap_or_default()
                    ));
                }
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                } else {
                    self.flush(ctx);
                }
            }
            Some(e) => {
                ctx.chatter(&format!("{}: connect: {}", self.decl, reason(&e)));
                self.close_conn(ctx);
            }
        }
    }

    /// Reads what the socket has (up to READ_BURST packets) and emits it.
    fn read_some(&mut self, ctx: &mut Ctx) {
        let stream = self.kind.is_stream();
        let now = if self.timestamp {
            ctx.now()
        } else {
            Timestamp::ZERO
        };
        for _ in 0..READ_BURST {
            let Some(fd) = self.conn_fd() else { return };
            let mut from = SockAddr::blank();
            let buf = &mut self.scratch;
            // SAFETY: `buf` is writable for `buf.len()` bytes and `from` has
            // room for any address.
            let n = unsafe {
                if stream {
                    libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0)
                } else {
                    libc::recvfrom(
                        fd,
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        libc::MSG_TRUNC,
                        from.ptr_mut(),
                        &mut from.len,
                    )
                }
            };
            if n < 0 {
                let e = last_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return,
                    _ if stream => {
                        if self.verbose {
                            ctx.chatter(&format!("{}: {}", self.decl, reason(&e)));
                        }
                        self.close_conn(ctx);
                        return;
                    }
                    _ => {
                        self.complain(ctx, &reason(&e));
                        return;
                    }
                }
            }
            let n = n as usize;
            if n == 0 {
                if stream {
                    // The peer closed the connection.
                    self.close_conn(ctx);
                    return;
                }
                continue;
            }
            if !stream && !self.client {
                if let Some((ip, port)) = from.inet_parts() {
                    if (self.allow.is_some() || self.deny.is_some()) && !self.allowed(ip, ctx) {
                        if self.verbose {
                            ctx.chatter(&format!(
                                "{}: dropped datagram from {ip}:{port}",
                                self.decl
                            ));
                        }
                        continue;
                    }
                }
                self.peer = from.is_named().then_some(from);
            }
            let len = n.min(self.snaplen);
            if self.has_output {
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
            if stream && n < self.snaplen {
                // Most likely drained; the driver says if not.
                return;
            }
        }
    }

    /// Writes one packet (the rest of it, for a stream).
    fn write_packet(&mut self, p: &mut Packet, ctx: &mut Ctx) -> Wrote {
        let Some(fd) = self.conn_fd() else {
            return Wrote::Failed;
        };
        if self.kind.is_stream() {
            while !p.is_empty() {
                let d = p.data();
                // SAFETY: sends from a live slice of the given length.
                let n = unsafe { libc::send(fd, d.as_ptr().cast(), d.len(), libc::MSG_NOSIGNAL) };
                if n >= 0 {
                    p.pull(n as usize);
                    continue;
                }
                let e = last_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => return Wrote::Blocked(true),
                    Some(libc::ENOBUFS) => return Wrote::Blocked(false),
                    _ => {
                        if self.verbose {
                            ctx.chatter(&format!("{}: {}", self.decl, reason(&e)));
                        }
                        self.close_conn(ctx);
                        return Wrote::Failed;
                    }
                }
            }
            return Wrote::Done;
        }
        if p.is_empty() {
            return Wrote::Done;
        }
        let dest = if self.client {
            match (&self.remote, self.remote_sa) {
                (Target::Inet(ip, port), _) if ip.is_unspecified() => {
                    SockAddr::inet(p.dst_ip_anno(), *port)
                }
                (_, Some(a)) => a,
                (_, None) => return Wrote::Failed,
            }
        } else {
            match self.peer {
                Some(a) => a,
                None => return Wrote::Failed,
            }
        };
        loop {
            let d = p.data();
            // SAFETY: sends from a live slice to a valid address.
            let n = unsafe {
                libc::sendto(
                    fd,
                    d.as_ptr().cast(),
                    d.len(),
                    libc::MSG_NOSIGNAL,
                    dest.ptr(),
                    dest.len,
                )
            };
            if n >= 0 {
                return Wrote::Done;
            }
            let e = last_error();
            return match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Readiness does not tell when an unconnected Unix datagram
                // socket's receiver has room again.
                Some(libc::EAGAIN) => Wrote::Blocked(self.kind == Kind::Udp),
                Some(libc::ENOBUFS) => Wrote::Blocked(false),
                _ => {
                    let msg = format!("sending to {}: {}", dest.describe(), reason(&e));
                    self.complain(ctx, &msg);
                    Wrote::Failed
                }
            };
        }
    }

    /// Notes that the socket is full, and arranges to be told when to try
    /// again.
    fn block(&mut self, by_poll: bool, ctx: &mut Ctx) {
        self.blocked = true;
        self.blocked_timer = !by_poll;
        if !by_poll {
            self.backoff_ms = (self.backoff_ms * 2).clamp(1, MAX_BACKOFF_MS);
            if let Some(t) = self.timer {
                ctx.schedule_timer_after(t, Timestamp::from_secs_f64(self.backoff_ms as f64 / 1e3));
            }
        }
    }

    /// Writes queued packets until the socket is full. Whether the queue
    /// emptied.
    fn flush(&mut self, ctx: &mut Ctx) -> bool {
        while let Some(mut p) = self.outq.pop_front() {
            match self.write_packet(&mut p, ctx) {
                Wrote::Done => {
                    self.sent += 1;
                    self.backoff_ms = 0;
                }
                Wrote::Blocked(by_poll) => {
                    self.outq.push_front(p);
                    self.block(by_poll, ctx);
                    return false;
                }
                Wrote::Failed => self.drops += 1,
            }
        }
        true
    }

    /// Sends or queues one input packet (the socket is not blocked).
    fn send_or_queue(&mut self, mut p: Packet, ctx: &mut Ctx) {
        if !self.ready_to_send() {
            if self.conn.is_some() && self.outq.len() < OUTQ_CAP {
                self.outq.push_back(p);
            } else {
                self.drops += 1;
            }
            return;
        }
        match self.write_packet(&mut p, ctx) {
            Wrote::Done => {
                self.sent += 1;
                self.backoff_ms = 0;
            }
            Wrote::Blocked(by_poll) => {
                self.outq.push_back(p);
                self.block(by_poll, ctx);
            }
            Wrote::Failed => self.drops += 1,
        }
    }

    /// The socket has room again (writable, or the retry timer fired).
    fn unblocked(&mut self, ctx: &mut Ctx) {
        self.blocked = false;
        self.blocked_timer = false;
        if !self.flush(ctx) {
            return;
        }
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }

    fn remove_bound_file(&mut self) {
        if let Some(b) = self.bound_file.take() {
            if let Ok(md) = std::fs::symlink_metadata(&b.path) {
                if md.file_type().is_socket() && md.dev() == b.dev && md.ino() == b.ino {
                    let _ = std::fs::remove_file(&b.path);
                }
            }
        }
    }

    fn remember_bound_file(&mut self, path: &str) {
        if let Ok(md) = std::fs::symlink_metadata(path) {
            self.bound_file = Some(BoundFile {
                path: path.to_string(),
                dev: md.dev(),
                ino: md.ino(),
            });
        }
    }

    /// Removes a Unix socket file that nothing accepts on any more.
    fn remove_stale_socket_file(&self, path: &str) {
        let Ok(md) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !md.file_type().is_socket() {
            return;
        }
        let ty = if self.kind.is_stream() {
            libc::SOCK_STREAM
        } else {
            libc::SOCK_DGRAM
        };
        // SAFETY: plain socket(2) call.
        let probe = unsafe { libc::socket(libc::AF_UNIX, ty | libc::SOCK_CLOEXEC, 0) };
        if probe < 0 {
            return;
        }
        // SAFETY: we own the new descriptor.
        let probe = unsafe { OwnedFd::from_raw_fd(probe) };
        let a = SockAddr::unix(path);
        // SAFETY: valid address of the given length.
        let r = unsafe { libc::connect(probe.as_raw_fd(), a.ptr(), a.len) };
        if r < 0 && last_error().raw_os_error() == Some(libc::ECONNREFUSED) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Drops what a failed `open` left.
    fn abandon_open(&mut self) {
        self.conn = None;
        self.listener = None;
        self.connecting = false;
        self.remote_sa = None;
        self.remove_bound_file();
    }

    /// Whether this hot-swap successor can take `old`'s sockets: the same
    /// type, mode and addresses. A server's configured address may also be
    /// the one `old` is actually bound to (`old` was given port 0), and a
    /// server given port 0 takes any port on its address.
    fn can_take_from(&self, old: &Socket) -> bool {
        if self.kind != old.kind || self.client != old.client || self.local != old.local {
            return false;
        }
        if self.remote == old.remote {
            return true;
        }
        if self.client {
            return false;
        }
        match (&self.remote, old.bound_target()) {
            (Target::Inet(ip, 0), Some(Target::Inet(bip, _))) => *ip == bip,
            (want, Some(bound)) => *want == bound,
            (_, None) => false,
        }
    }

    /// Where the socket is bound, as a configured address.
    fn bound_target(&self) -> Option<Target> {
        let fd = self.listener.as_ref().or(self.conn.as_ref())?;
        let a = local_addr(fd.as_raw_fd())?;
        Some(match a.inet_parts() {
            Some((ip, port)) => Target::Inet(ip, port),
            None => Target::Unix(a.describe()),
        })
    }

    /// A hot-swap successor that took nothing from a predecessor opens its
    /// socket once the swap is done. A server that cannot bind tries again
    /// every REOPEN_SECS; a client that cannot connect stays closed, as
    /// after a lost connection.
    fn deferred_open(&mut self, ctx: &mut Ctx) {
        match self.open(ctx, false) {
            Ok(()) => {
                self.open_pending = false;
                if self.open_failures > 0 {
                    ctx.chatter(&format!("{}: opened after the hot swap", self.decl));
                }
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                }
            }
            Err(e) => {
                self.abandon_open();
                if self.client {
                    self.open_pending = false;
                    ctx.chatter(&format!("{}: {e}", self.decl));
                    return;
                }
                if self.open_failures == 0 {
                    ctx.chatter(&format!(
                        "{}: {e}; trying again every {REOPEN_SECS} s",
                        self.decl
                    ));
                }
                self.open_failures = self.open_failures.saturating_add(1);
                if let Some(t) = self.ltimer {
                    ctx.schedule_timer_after(t, Timestamp::from_secs_f64(REOPEN_SECS));
                }
            }
        }
    }

    /// Opens, configures, binds and listens or connects the socket. A
    /// stream client waits up to CONNECT_WAIT_MS for its connection if
    /// `wait`, else completes it in the background.
    fn open(&mut self, ctx: &dyn Host, wait: bool) -> Result<(), String> {
        let (family, ty) = match self.kind {
            Kind::Tcp => (libc::AF_INET, libc::SOCK_STREAM),
            Kind::Udp => (libc::AF_INET, libc::SOCK_DGRAM),
            Kind::Unix => (libc::AF_UNIX, libc::SOCK_STREAM),
            Kind::UnixDgram => (libc::AF_UNIX, libc::SOCK_DGRAM),
        };
        // SAFETY: plain socket(2) call.
        let fd = unsafe { libc::socket(family, ty | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(format!("socket: {}", reason(&last_error())));
        }
        // SAFETY: we own the new descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        let opt = |name: &str, level, o, v| {
            setsockopt_int(raw, level, o, v)
                .map_err(|e| format!("setsockopt({name}): {}", reason(&e)))
        };
        if self.kind == Kind::Tcp && self.nodelay {
            opt("TCP_NODELAY", libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
        }
        if let Some(v) = self.sndbuf {
            opt("SO_SNDBUF", libc::SOL_SOCKET, libc::SO_SNDBUF, v)?;
        }
        if let Some(v) = self.rcvbuf {
            opt("SO_RCVBUF", libc::SOL_SOCKET, libc::SO_RCVBUF, v)?;
        }
        let remote = SockAddr::of(&self.remote);
        if !self.client {
            if self.kind == Kind::Tcp {
                // Rebind at once after a restart (TIME_WAIT).
                opt("SO_REUSEADDR", libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
            }
            if let Target::Unix(path) = &self.remote {
                self.remove_stale_socket_file(path);
            }
            bind_fd(raw, &remote).map_err(|e| format!("bind: {}", reason(&e)))?;
            if let Target::Unix(path) = &self.remote {
                let path = path.clone();
                self.remember_bound_file(&path);
            }
            if self.kind.is_stream() {
                // SAFETY: plain listen(2) on our socket.
                if unsafe { libc::listen(raw, BACKLOG) } < 0 {
                    return Err(format!("listen: {}", reason(&last_error())));
                }
                if self.verbose {
                    ctx.say(&format!(
                        "{}: listening for connections on {} ({raw})",
                        self.decl,
                        local_addr(raw).map(|a| a.describe()).unwrap_or_default()
                    ));
                }
                self.listener = Some(fd);
            } else {
                self.conn = Some(fd);
            }
            return Ok(());
        }
        if let Some(local) = &self.local {
            if let Target::Unix(path) = local {
                self.remove_stale_socket_file(path);
            }
            bind_fd(raw, &SockAddr::of(local)).map_err(|e| format!("bind: {}", reason(&e)))?;
            if let Target::Unix(path) = local {
                let path = path.clone();
                self.remember_bound_file(&path);
            }
        }
        self.remote_sa = Some(remote);
        if self.kind.is_stream() {
            // SAFETY: valid address of the given length.
            let r = unsafe { libc::connect(raw, remote.ptr(), remote.len) };
            if r < 0 {
                let e = last_error();
                if e.raw_os_error() != Some(libc::EINPROGRESS) {
                    return Err(format!("connect: {}", reason(&e)));
                }
                if wait && wait_writable(raw, CONNECT_WAIT_MS) {
                    if let Some(e) = socket_error(raw) {
                        return Err(format!("connect: {}", reason(&e)));
                    }
                } else {
                    self.connecting = true;
                    if self.verbose {
                        ctx.say(&format!(
                            "{}: still connecting to {}",
                            self.decl,
                            remote.describe()
                        ));
                    }
                }
            }
            if !self.connecting {
                self.connections += 1;
                if self.verbose {
                    ctx.say(&format!(
                        "{}: opened connection {raw} to {}",
                        self.decl,
                        remote.describe()
                    ));
                }
            }
        }
        self.conn = Some(fd);
        Ok(())
    }
}

/// NODELAY: Click reads an integer; its documentation says boolean.
fn parse_nodelay(s: &str) -> Result<bool, String> {
    parse_bool(s)
        .or_else(|_| parse_u32(s).map(|n| n != 0))
        .map_err(|_| "expected boolean".to_string())
}

fn parse_bufsize(s: &str) -> Result<i32, String> {
    let n = parse_u32(s)?;
    i32::try_from(n).map_err(|_| "buffer size too large".to_string())
}

/// Unix socket file names must fit `sun_path` with a terminating NUL.
fn check_path(what: &str, p: &str) -> Result<(), String> {
    // SAFETY: only used to size the field.
    let max = unsafe { zeroed::<libc::sockaddr_un>() }.sun_path.len();
    if p.len() >= max {
        Err(format!("{what} filename '{p}' too long"))
    } else if p.as_bytes().contains(&0) {
        Err(format!("{what} filename must not contain NUL bytes"))
    } else {
        Ok(())
    }
}

const HANDLERS: &[Handler<Socket>] = &[
    Handler::data("received", |e| &e.received),
    Handler::data("sent", |e| &e.sent),
    Handler::data("drops", |e| &e.drops),
    Handler::data("connections", |e| &e.connections),
    Handler::read("connected", |e, _| e.connected().to_string()),
    Handler::read("local_address", |e, _| e.local_address()),
    Handler::read("remote_address", |e, _| e.remote_address()),
    Handler::button("reset_counts", |e, _, _| {
        e.received = 0;
        e.sent = 0;
        e.drops = 0;
        e.connections = 0;
        Ok(())
    }),
];

impl Socket {
    fn connected(&self) -> bool {
        let open = self.conn.is_some() && !self.connecting;
        let somewhere = self.kind.is_stream() || self.client || self.peer.is_some();
        open && somewhere
    }

    fn local_address(&self) -> String {
        self.listener
            .as_ref()
            .or(self.conn.as_ref())
            .and_then(|f| local_addr(f.as_raw_fd()))
            .filter(|a| a.is_named() && a.inet_parts().is_none_or(|(_, p)| p != 0))
            .map(|a| a.describe())
            .unwrap_or_default()
    }

    fn remote_address(&self) -> String {
        let a = if self.kind.is_stream() {
            match (&self.conn, self.connecting) {
                (Some(c), false) => peer_addr(c.as_raw_fd()),
                _ => None,
            }
        } else if self.client {
            self.remote_sa
        } else {
            self.peer
        };
        a.map(|a| a.describe()).unwrap_or_default()
    }
}

rclick_core::element_class!(Socket);

impl Element for Socket {
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
        let socktype: String = args.read_mp("TYPE");
        self.verbose = args.read_or("VERBOSE", false);
        let snaplen: u32 = args.read_or("SNAPLEN", DEFAULT_SNAPLEN as u32);
        let headroom: u32 = args.read_or("HEADROOM", DEFAULT_HEADROOM as u32);
        self.timestamp = args.read_or("TIMESTAMP", true);
        self.rcvbuf = args.read_with("RCVBUF", parse_bufsize);
        self.sndbuf = args.read_with("SNDBUF", parse_bufsize);
        self.nodelay = args.read_or_with("NODELAY", parse_nodelay, true);
        let client: Option<bool> = args.read("CLIENT");
        let _proper: Option<bool> = args.read("PROPER");
        let allow: Option<String> = args.read("ALLOW");
        let deny: Option<String> = args.read("DENY");
        let kind = match socktype.to_ascii_uppercase().as_str() {
            "TCP" => Some(Kind::Tcp),
            "UDP" => Some(Kind::Udp),
            "UNIX" => Some(Kind::Unix),
            "UNIX_DGRAM" => Some(Kind::UnixDgram),
            "" => None,
            _ => {
                // As in Click, the rest of the arguments are not looked at.
                let mut errs = args.errors().to_vec();
                errs.push(format!("unknown socket type '{socktype}'"));
                return Err(errs.into());
            }
        };
        let mut remote = None;
        let mut local = None;
        match kind {
            Some(k @ (Kind::Tcp | Kind::Udp)) => {
                let proto = if k == Kind::Tcp { PROTO_TCP } else { PROTO_UDP };
                let ip = args.read_mp_with("ADDR", |s| parse_ipv4_arg(s, ictx));
                let port: u16 = args.read_mp_with("PORT", |s| parse_port_arg(s, proto, ictx));
                let lip = args.read_p_with("LOCAL_ADDR", |s| parse_ipv4_arg(s, ictx));
                let lport = args.read_p_with("LOCAL_PORT", |s| parse_port_arg(s, proto, ictx));
                remote = Some(Target::Inet(ip, port));
                if lip.is_some() || lport.is_some() {
                    local = Some(Target::Inet(
                        lip.unwrap_or(Ipv4Addr::UNSPECIFIED),
                        lport.unwrap_or(0),
                    ));
                }
            }
            Some(_) => {
                let f: String = args.read_mp("FILENAME");
                let lf: Option<String> = args.read_p("LOCAL_FILENAME");
                if !f.is_empty() {
                    if let Err(e) = check_path("remote", &f) {
                        args.error(e);
                    }
                }
                if let Some(lf) = &lf {
                    if let Err(e) = check_path("local", lf) {
                        args.error(e);
                    }
                }
                remote = Some(Target::Unix(f));
                local = lf.map(Target::Unix);
            }
            None => {}
        }
        if snaplen == 0 || snaplen as usize > MAX_SNAPLEN {
            args.error("SNAPLEN out of range");
        }
        if headroom > 8192 {
            args.error("HEADROOM too large");
        }
        let table = |kw: &str, name: Option<String>, args: &mut Args| -> Option<usize> {
            let name = name?;
            let Some(idx) = ictx.find_element(&name) else {
                args.error(format!("{kw}: no element named '{name}'"));
                return None;
            };
            let is_table = ictx
                .with_element(idx, |e| {
                    e.handlers()
                        .iter()
                        .any(|h| h.name == "lookup" && h.is_read())
                })
                .unwrap_or(false);
            if !is_table {
                args.error(format!("{name} is not an IPRouteTable"));
                return None;
            }
            Some(idx)
        };
        self.allow = table("ALLOW", allow, &mut args);
        self.deny = table("DENY", deny, &mut args);
        args.complete()?;
        self.kind = kind.unwrap_or_default();
        self.remote = remote.unwrap_or_default();
        self.has_output = ctx.noutputs() > 0;
        self.has_input = ctx.ninputs() > 0;
        // Click: a Socket with no output is a client unless told otherwise;
        // so is one given a local address (as Click documents).
        self.client = client.unwrap_or(!self.has_output || local.is_some());
        self.local = if self.client { local } else { None };
        self.snaplen = snaplen as usize;
        self.headroom = headroom as usize;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.decl = format!("{} :: Socket", ctx.element_name());
        self.scratch = vec![0; self.snaplen];
        self.outq = VecDeque::with_capacity(OUTQ_CAP);
        self.acl = AclCache::new([self.allow, self.deny], ctx);
        self.timer = Some(ctx.new_timer());
        let ltimer = ctx.new_timer();
        self.ltimer = Some(ltimer);
        if self.has_input && ctx.input_is_pull(0) {
            self.pull_input = true;
            let t = ctx.new_task(true);
            self.signal = ctx.upstream_empty_signal(0, Some(t));
            self.task = Some(t);
        }
        if ctx.is_hotswap_successor() {
            // The predecessor's sockets arrive in take_state; if they do
            // not, open once the swap is done (the predecessor may hold
            // the address until then).
            self.open_pending = true;
            ctx.schedule_timer_at(ltimer, ctx.now());
            return Ok(());
        }
        if let Err(e) = self.open(ctx, true) {
            self.abandon_open();
            return Err(e.into());
        }
        self.sync_selects(ctx);
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<Socket>() else {
            return false;
        };
        if !self.open_pending
            || (old.listener.is_none() && old.conn.is_none())
            || !self.can_take_from(old)
        {
            return false;
        }
        self.open_pending = false;
        self.listener = old.listener.take();
        self.conn = old.conn.take();
        self.bound_file = old.bound_file.take();
        self.connecting = std::mem::take(&mut old.connecting);
        self.remote_sa = old.remote_sa;
        self.peer = old.peer.take();
        // The new queue has the same capacity.
        self.outq = std::mem::take(&mut old.outq);
        self.blocked = old.blocked;
        self.blocked_timer = old.blocked_timer;
        self.backoff_ms = old.backoff_ms;
        self.complaints = old.complaints;
        self.received = old.received;
        self.sent = old.sent;
        self.drops = old.drops;
        self.connections = old.connections;
        // Options of the new configuration apply to the sockets taken.
        for fd in [&self.listener, &self.conn].into_iter().flatten() {
            let raw = fd.as_raw_fd();
            if let Some(v) = self.sndbuf {
                let _ = setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, v);
            }
            if let Some(v) = self.rcvbuf {
                let _ = setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, v);
            }
        }
        if self.kind == Kind::Tcp {
            if let Some(c) = &self.conn {
                let on = i32::from(self.nodelay);
                let _ = setsockopt_int(c.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, on);
            }
        }
        if self.blocked && self.blocked_timer {
            if let Some(t) = self.timer {
                let after = Timestamp::from_secs_f64(self.backoff_ms.max(1) as f64 / 1e3);
                ctx.schedule_timer_at(t, ctx.now() + after);
            }
        }
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
        self.sync_selects(ctx);
        true
    }

    fn push(&mut self, _port: usize, mut batch: Batch, ctx: &mut Ctx) {
        for p in batch.drain() {
            self.send_or_queue(p, ctx);
        }
        self.sync_selects(ctx);
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        // Woken again when a connection opens or the socket has room.
        if !self.ready_to_send() {
            return false;
        }
        let mut worked = false;
        if !self.outq.is_empty() {
            worked = true;
            if !self.flush(ctx) {
                self.sync_selects(ctx);
                return true;
            }
        }
        let Some(mut batch) = ctx.pull(0, PULL_BURST) else {
            if ctx.signal_active(&self.signal) {
                ctx.fast_reschedule();
            }
            return worked;
        };
        for p in batch.drain() {
            if self.ready_to_send() {
                self.send_or_queue(p, ctx);
            } else if self.conn.is_some() {
                // Blocked: keep the rest of the batch for later.
                self.outq.push_back(p);
            } else {
                self.drops += 1;
            }
        }
        if self.ready_to_send() {
            ctx.fast_reschedule();
        }
        self.sync_selects(ctx);
        true
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        if Some(timer) == self.ltimer {
            if self.open_pending {
                self.deferred_open(ctx);
            } else if self.accept_paused {
                self.accept_paused = false;
                self.accept(ctx);
            }
        } else if self.blocked && self.blocked_timer {
            self.unblocked(ctx);
        }
        self.sync_selects(ctx);
    }

    fn selected(&mut self, fd: RawFd, readable: bool, writable: bool, ctx: &mut Ctx) {
        if self.listener.as_ref().is_some_and(|l| l.as_raw_fd() == fd) {
            if readable {
                self.accept(ctx);
            }
        } else if self.conn_fd() == Some(fd) {
            if self.connecting {
                if readable || writable {
                    self.finish_connect(ctx);
                }
            } else {
                if writable && self.blocked && !self.blocked_timer {
                    self.unblocked(ctx);
                }
                if readable {
                    self.read_some(ctx);
                }
            }
        } else {
            // Not ours any more.
            ctx.remove_select(fd);
        }
        self.sync_selects(ctx);
    }

    fn cleanup(&mut self) {
        self.outq.clear();
        self.conn = None;
        if let Some(l) = self.listener.take() {
            // SAFETY: shutdown(2) on our own descriptor (Click does this in
            // case the process forked).
            unsafe { libc::shutdown(l.as_raw_fd(), libc::SHUT_RDWR) };
        }
        self.remove_bound_file();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_round_trips() {
        let a = SockAddr::inet(Ipv4Addr::new(10, 1, 2, 3), 4567);
        assert_eq!(a.inet_parts(), Some((Ipv4Addr::new(10, 1, 2, 3), 4567)));
        assert_eq!(a.describe(), "10.1.2.3:4567");
        let u = SockAddr::unix("/tmp/x.sock");
        assert_eq!(u.inet_parts(), None);
        assert_eq!(u.describe(), "/tmp/x.sock");
        assert!(u.is_named());
        let mut unnamed = SockAddr::unix("");
        unnamed.len = size_of::<libc::sa_family_t>() as libc::socklen_t;
        assert!(!unnamed.is_named());
    }

    #[test]
    fn nodelay_takes_booleans_and_integers() {
        assert_eq!(parse_nodelay("true"), Ok(true));
        assert_eq!(parse_nodelay("0"), Ok(false));
        assert_eq!(parse_nodelay("2"), Ok(true));
        assert!(parse_nodelay("maybe").is_err());
    }

    #[test]
    fn long_unix_paths_are_refused() {
        assert!(check_path("remote", "/tmp/ok.sock").is_ok());
        let long = format!("/tmp/{}", "x".repeat(200));
        assert!(check_path("remote", &long)
            .unwrap_err()
            .contains("too long"));
    }

    #[test]
    fn accept_errors_that_would_repeat_pause_the_listener() {
        for e in [
            libc::EMFILE,
            libc::ENFILE,
            libc::ENOBUFS,
            libc::ENOMEM,
            libc::EBADF,
        ] {
            assert_eq!(classify_accept_error(e), AcceptError::Pause, "errno {e}");
        }
        for e in [
            libc::EAGAIN,
            libc::EWOULDBLOCK,
            libc::EINTR,
            libc::ECONNABORTED,
        ] {
            assert_eq!(classify_accept_error(e), AcceptError::Quiet, "errno {e}");
        }
        for e in [
            libc::EPROTO,
            libc::ENETDOWN,
            libc::EHOSTUNREACH,
            libc::EPERM,
        ] {
            assert_eq!(
                classify_accept_error(e),
                AcceptError::Connection,
                "errno {e}"
            );
        }
        let mut b = 0;
        let waits: Vec<u32> = (0..7)
            .map(|_| {
                b = next_accept_backoff(b);
                b
            })
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 1600, 1600]);
    }

    #[test]
    fn acl_cache_forgets_when_a_table_changes() {
        let counter = Arc::new(AtomicU64::new(7));
        let mut c = AclCache {
            counters: [Some(counter.clone()), None],
            seen: [7, 0],
            cacheable: true,
            slots: vec![(0, 0); ACL_SLOTS],
        };
        let a = u32::from(Ipv4Addr::new(10, 0, 0, 1));
        let b = u32::from(Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(c.get(a), None);
        c.put(a, true);
        c.put(b, false);
        assert_eq!(c.get(a), Some(true));
        assert_eq!(c.get(b), Some(false));
        // Address 0 is not mistaken for an empty slot's.
        assert_eq!(c.get(0), None);
        counter.fetch_add(1, Ordering::Release);
        assert_eq!(c.get(a), None);
        assert_eq!(c.get(b), None);
        // Uncacheable tables cache nothing.
        let mut u = AclCache::default();
        u.put(a, true);
        assert_eq!(u.get(a), None);
    }

    #[test]
    fn reason_drops_the_os_error_suffix() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(reason(&e), "Connection refused");
    }
}
