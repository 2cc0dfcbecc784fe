//! # ControlSocket
//!
//! Opens a control socket that lets other programs call read and write
//! handlers.
//!
//! ## Synopsis
//! `ControlSocket(TCP, PORT[+] [, *keywords*])`
//! `ControlSocket(UNIX, FILENAME [, *keywords*])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Listens on TCP port PORT, or on the Unix-domain socket FILENAME, and
//! speaks Click's ControlSocket protocol, version 1.3, to every client that
//! connects. `PORT+` binds the first free port at or above PORT (read it
//! from the `port` handler). The driver's `-p` and `-u` options add
//! ControlSocket elements to the configuration.
//!
//! The server greets each client with `Click::ControlSocket/1.3`. Commands
//! are lines ended by CR, LF or CRLF; the command word is case-insensitive.
//! Handler names are `ELEMENT.HANDLER`, `N.HANDLER` (N counts elements from
//! 1), or `HANDLER`, `.HANDLER`, `0.HANDLER` for global handlers.
//!
//! - `READ H [PARAM...]` (alias `GET`): `200 Read handler 'H' OK`, then
//!   `DATA N` and exactly N bytes of value, with no CRLF after them.
//! - `READDATA H N`, `READUNTIL H [TERM]`: the parameter is the N bytes
//!   after the command line, or the lines up to one equal to TERM (blank
//!   line by default; trailing spaces ignored).
//! - `WRITE H [VALUE...]` (alias `SET`), `WRITEDATA H N`, `WRITEUNTIL H
//!   [TERM]`: `200 Write handler 'H' OK`, or `520-Write handler 'H' error:`
//!   followed by the messages, the last as `520 MESSAGE`.
//! - `CHECKREAD H`, `CHECKWRITE H`: whether the handler exists and is
//!   readable or writable.
//! - `LLRPC ELEMENT#HEX [N]`: answered `501` (no remote LLRPCs here).
//! - `QUIT` (alias `CLOSE`): `200 Goodbye!`, then the server closes.
//! - `HELP`: the command list as `200-` lines.
//!
//! Reply codes: 200 OK; 220 OK with warnings; 500 syntax error, wrong
//! argument count, not enough data or line too long; 501 unimplemented
//! command; 510 no such element; 511 no such handler, or not
//! readable/writable (CHECKREAD/CHECKWRITE); 520 write handler error; 521
//! data too large; 530 permission denied (READONLY, reading a write-only or
//! writing a read-only handler); 590 read handler error.
//!
//! Sockets are non-blocking and up to MAX_CLIENTS clients are served at
//! once without ever blocking packet processing. Each client is bounded: a
//! command line may be at most 1 MiB and READDATA/WRITEDATA/UNTIL data at
//! most 16 MiB (a larger line closes the connection after a `500 Line too
//! long` reply; larger data is skipped and answered with 521), and while
//! more than 256 KiB of replies wait for a client that does not read them,
//! the server stops reading and running its commands. All clients together
//! hold at most MAX_BUFFERED bytes of input and replies: past it, a client
//! reads at most 64 KiB more until there is room, and a READ whose value
//! (over 4 KiB) does not fit is answered `590` saying so. Error replies
//! carry at most 64 KiB of messages (the rest is counted). Handler values
//! are text: bytes that are not UTF-8 are replaced by U+FFFD.
//!
//! A client that neither sends nor takes a byte for IDLE_TIMEOUT (real
//! time; not applied under `--simtime`) is closed with a `590 Connection
//! closed: ...` line; clients that keep talking are never cut off, as in
//! Click. When MAX_CLIENTS clients are open, a new
//! connection closes the client idle the longest (if idle at least 1 s) to
//! make room, and otherwise gets the greeting and `590 Too many
//! connections` before it is closed. So idle connections cannot lock out
//! operators. With SECRET_FILE, it first closes the oldest unauthenticated
//! connection, however recently it talked, so that clients without the
//! secret cannot hold the slots.
//!
//! Who may call handlers: Click's protocol has no authentication. A TCP
//! socket binds 127.0.0.1 by default, so every local user can connect; a
//! Unix socket (`-u`) is governed by the file's permissions and is the
//! recommended way to restrict writes to one user or group (see
//! docs/security.md). With SECRET_FILE, every command but `AUTH`, `HELP`
//! and `QUIT` is answered `530 Authentication required` until the client
//! sends `AUTH SECRET` (`200 Authenticated`; a wrong secret gets `530
//! Authentication failed` and the connection is closed). Click's own tools
//! can use such a socket through the wrapper in
//! `clients/python/rclick_control.py` (`proxy` mode), which serves a Unix
//! socket and authenticates for them.
//!
//! Hot swap: a ControlSocket with the same name, socket type and port (or a
//! `PORT+` one) takes the listening socket and the open connections from
//! its predecessor, so clients, including the one that wrote `hotconfig`,
//! stay connected. A `hotconfig` (with `-R`) is prepared off the packet
//! path: packets and other clients keep being served while the new router
//! is built, and the writing client's reply (the usual `200` or `520`
//! lines) and its next commands wait until it is; those commands then run
//! on the new router. A `hotconfig` written while another is being prepared
//! is answered `520` (a hot swap is already being prepared).
//!
//! ## Keywords
//! - **READONLY** (boolean): refuse write handlers (`530`). Default false.
//! - **LOCALHOST** (boolean): bind a TCP socket to 127.0.0.1 only. Default
//!   true; false binds every interface.
//! - **VERBOSE** (boolean): print a message for each connection opened or
//!   closed, and the bound port. Default false.
//! - **RETRIES** (integer): if the socket cannot be bound, try again once a
//!   second this many times before stopping the router. Default 0.
//! - **RETRY_WARNINGS** (boolean): warn at each failed try. Default true.
//! - **PROXY**: not supported.
//! - **MAX_CLIENTS** (integer): most clients at once. Default 256.
//! - **IDLE_TIMEOUT** (seconds): close clients idle this long; 0 never.
//!   Default 300.
//! - **MAX_BUFFERED** (bytes): most input and reply bytes buffered for all
//!   clients together. Default 67108864 (64 MiB).
//! - **SECRET_FILE** (file name): require `AUTH SECRET` first, SECRET
//!   being the file's first line (at least 16 characters; the file must not
//!   be readable by group or others). rclick's extension. Default none.
//!
//! ## Handlers
//! - `port` (read): the bound TCP port, or the socket's file name.
//! - `clients` (read): open connections.
//! - `pending_output` (read): reply bytes queued for all other clients.
//! - `max_pending_output` (read): the most reply bytes ever queued for one
//!   client.
//! - `buffered` (read): input and reply bytes buffered for all other
//!   clients.
//! - `idle_closed` (read): clients closed for being idle.
//! - `rejected` (read): connections refused at MAX_CLIENTS.
//! - `refused_replies` (read): READ replies refused for want of room.
//!
//! `clients`, `pending_output`, `max_pending_output`, `buffered`,
//! `idle_closed`, `rejected` and `refused_replies` are rclick additions,
//! listed after Click's `port`.
//!
//! ## Example
//! ```click
//! ControlSocket(TCP, 7777+);
//! ControlSocket(UNIX, /tmp/click.sock, READONLY true);
//! ```

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use rclick_core::conf::Args;
use rclick_core::ctx::ElementView;
use rclick_core::element::{handlers_listing, hflags, HandlerSpec};
use rclick_core::{
    ConfigResult, Ctx, Element, Handler, InitCtx, Interest, TimerId, Timestamp, WriteStart,
};

use super::server;

/// The greeting sent to every new client.
pub const GREETING: &str = "Click::ControlSocket/1.3\r\n";
/// Longest accepted command line.
pub const MAX_LINE: usize = 1 << 20;
/// Most data a READDATA/WRITEDATA/READUNTIL/WRITEUNTIL command may carry.
pub const MAX_DATA: usize = 16 << 20;
/// While this many reply bytes wait for a client, no more of its commands
/// run.
pub const OUT_LIMIT: usize = 256 << 10;
/// Input buffered per client at most.
const IN_LIMIT: usize = MAX_LINE + MAX_DATA + 4;
const READ_CHUNK: usize = 64 << 10;
const READ_PER_CALL: usize = 256 << 10;
const COMMANDS_PER_CALL: usize = 32;
const ACCEPTS_PER_CALL: usize = 16;
/// Default most clients at once (MAX_CLIENTS).
pub const DEFAULT_MAX_CLIENTS: usize = 256;
/// Default time after which a client that neither sends nor takes bytes
/// is closed (IDLE_TIMEOUT).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default most bytes buffered for all clients together, input and
/// output (MAX_BUFFERED).
pub const DEFAULT_MAX_BUFFERED: usize = 64 << 20;
/// At MAX_CLIENTS, a new connection closes the client idle the longest if
/// it has been idle at least this long.
pub const EVICT_IDLE: Duration = Duration::from_secs(1);
/// Input a client may always buffer, whatever the shared budget says.
const FREE_INPUT: usize = READ_CHUNK;
/// Replies this small are queued whatever the shared budget says (the
/// per-client backlog bound still holds).
const SMALL_REPLY: usize = 4 << 10;
/// Most bytes of messages in one error reply; the rest is summarized.
const MAX_MESSAGE_BYTES: usize = 64 << 10;

const CS_OK: u16 = 200;
const CS_SYNTAX: u16 = 500;
const CS_UNIMPLEMENTED: u16 = 501;
const CS_NO_SUCH_ELEMENT: u16 = 510;
const CS_NO_SUCH_HANDLER: u16 = 511;
const CS_HANDLER_ERROR: u16 = 520;
const CS_DATA_TOO_BIG: u16 = 521;
const CS_PERMISSION: u16 = 530;
const CS_UNSPECIFIED: u16 = 590;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Address {
    /// Configured port text (`7777` or `7777+`), port, whether `+`.
    Tcp {
        port: u16,
        plus: bool,
    },
    Unix(String),
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    fn fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l) => l.as_raw_fd(),
        }
    }

    /// Accepts one connection: the stream and a description of the peer.
    fn accept(&self) -> io::Result<(Stream, String)> {
        match self {
            Listener::Tcp(l) => {
                let (s, a) = l.accept()?;
                let _ = s.set_nodelay(true);
                Ok((Stream::Tcp(s), format!("{}.{}", a.ip(), a.port())))
            }
            Listener::Unix(l) => {
                let (s, _) = l.accept()?;
                Ok((Stream::Unix(s), String::new()))
            }
        }
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(true),
            Stream::Unix(s) => s.set_nonblocking(true),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        server::send(self.fd(), buf)
    }
}

/// One client connection and its bounded buffers.
struct Conn {
    stream: Stream,
    inbuf: Vec<u8>,
    inpos: usize,
    out: Vec<u8>,
    outpos: usize,
    /// No more commands will be read (EOF, QUIT, or a fatal error).
    in_closed: bool,
    /// The peer no longer takes output.
    out_closed: bool,
    /// Input bytes still to throw away (data too large).
    discard: usize,
    /// A command line ended with CR at the end of the input: drop a
    /// following LF.
    skip_lf: bool,
    /// READUNTIL/WRITEUNTIL waiting: how far past the command line the
    /// search for the terminator has already looked.
    until_resume: usize,
    /// When a byte last came in or went out (or the connection opened).
    last_active: Timestamp,
    /// When the connection was accepted.
    opened: Timestamp,
    /// SECRET_FILE mode: whether this client has said AUTH.
    authed: bool,
    /// A write being finished off the packet path (a `hotconfig` being
    /// prepared): its token and the handler name as the client wrote it.
    /// The client's next commands wait for its reply.
    awaiting: Option<(u64, String)>,
}

impl Conn {
    fn new(stream: Stream, now: Timestamp, authed: bool) -> Conn {
        Conn {
            stream,
            inbuf: Vec::new(),
            inpos: 0,
            out: GREETING.as_bytes().to_vec(),
            outpos: 0,
            in_closed: false,
            out_closed: false,
            discard: 0,
            skip_lf: false,
            until_resume: 0,
            last_active: now,
            opened: now,
            authed,
            awaiting: None,
        }
    }

    fn buffered(&self) -> usize {
        self.in_pending() + self.out_pending()
    }

    fn in_pending(&self) -> usize {
        self.inbuf.len() - self.inpos
    }

    fn out_pending(&self) -> usize {
        self.out.len() - self.outpos
    }

    /// Appends one reply line: `CODE MSG` or, continued, `CODE-MSG`.
    fn message(&mut self, code: u16, msg: &str, more: bool) {
        if self.out_closed {
            return;
        }
        let sep = if more { '-' } else { ' ' };
        self.out
            .extend_from_slice(format!("{code}{sep}{}\r\n", printable(msg)).as_bytes());
    }

    /// `CODE-HEAD:` then each line of `body`, the last as `CODE LINE`; or
    /// just `CODE HEAD` when the body is empty.
    /// Messages past MAX_MESSAGE_BYTES are counted, not sent.
    fn messages(&mut self, code: u16, head: &str, body: &str) {
        let mut lines: Vec<String> = Vec::new();
        let mut bytes = 0;
        let mut left = 0;
        for l in body.split('\n').filter(|l| !l.is_empty()) {
            if bytes + l.len() > MAX_MESSAGE_BYTES || left > 0 {
                left += 1;
                continue;
            }
            bytes += l.len();
            lines.push(l.to_string());
        }
        if left > 0 {
            lines.push(format!("({left} more lines not shown)"));
        }
        if lines.is_empty() {
            self.message(code, head, false);
            return;
        }
        self.message(code, &format!("{head}:"), true);
        for (i, l) in lines.iter().enumerate() {
            self.message(code, l, i + 1 < lines.len());
        }
    }

    fn data(&mut self, data: &[u8]) {
        if self.out_closed {
            return;
        }
        self.out
            .extend_from_slice(format!("DATA {}\r\n", data.len()).as_bytes());
        self.out.extend_from_slice(data);
    }

    /// Reads what the socket has, up to the input bound (`limit`: the
    /// per-client bound, or less when the shared budget is spent). Sets
    /// `in_closed` on end of file or error. Returns the bytes read.
    fn fill(&mut self, limit: usize) -> usize {
        if self.inpos > 0 {
            self.inbuf.drain(..self.inpos);
            self.inpos = 0;
        }
        let mut got = 0;
        while !self.in_closed && got < READ_PER_CALL {
            let room = limit.saturating_sub(self.inbuf.len()).min(READ_CHUNK);
            if room == 0 {
                break;
            }
            let old = self.inbuf.len();
            self.inbuf.resize(old + room, 0);
            let r = self.stream.read(&mut self.inbuf[old..]);
            match r {
                Ok(0) => {
                    self.inbuf.truncate(old);
                    self.in_closed = true;
                }
                Ok(n) => {
                    self.inbuf.truncate(old + n);
                    got += n;
                    if n < room {
                        break;
                    }
                }
                Err(e) => {
                    self.inbuf.truncate(old);
                    match e.kind() {
                        io::ErrorKind::WouldBlock => break,
                        io::ErrorKind::Interrupted => continue,
                        _ => {
                            self.in_closed = true;
                            self.out_closed = true;
                        }
                    }
                }
            }
        }
        if self.inbuf.capacity() > 2 * READ_CHUNK && self.inbuf.len() < READ_CHUNK {
            self.inbuf.shrink_to(READ_CHUNK);
        }
        got
    }

    /// Writes pending output until the socket would block. Returns the
    /// bytes sent.
    fn flush(&mut self) -> usize {
        let mut sent = 0;
        while !self.out_closed && self.outpos < self.out.len() {
            match self.stream.send(&self.out[self.outpos..]) {
                Ok(0) => break,
                Ok(n) => {
                    self.outpos += n;
                    sent += n;
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => break,
                    io::ErrorKind::Interrupted => continue,
                    _ => self.out_closed = true,
                },
            }
        }
        if self.out_closed || self.outpos == self.out.len() {
            self.out.clear();
            self.outpos = 0;
            if self.out.capacity() > 2 * OUT_LIMIT {
                self.out.shrink_to(OUT_LIMIT);
            }
        } else if self.outpos > 64 << 10 {
            self.out.drain(..self.outpos);
            self.outpos = 0;
        }
        sent
    }
}

/// Click's `String::printable`: control bytes as `^X`, high bytes as
/// `M-x`.
fn printable(s: &str) -> String {
    if s.bytes().all(|b| (32..127).contains(&b)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for &b in s.as_bytes() {
        let mut b = b;
        if b >= 128 {
            out.push_str("M-");
            b -= 128;
        }
        match b {
            0..=31 => {
                out.push('^');
                out.push((b + 64) as char);
            }
            127 => out.push_str("^?"),
            _ => out.push(b as char),
        }
    }
    out
}

/// Splits a command line into words (ASCII whitespace), keeping their
/// offsets so the rest of the line can be taken verbatim.
fn words(line: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        if start < i {
            v.push((start, i));
        }
    }
    v
}

/// Finds the end of the first line: (length of the line, length of its
/// terminator), or None when no terminator has arrived. A CR at the very
/// end counts as a terminator (with `true`: an LF may follow).
fn line_end(buf: &[u8]) -> Option<(usize, usize, bool)> {
    let pos = buf.iter().position(|&b| b == b'\r' || b == b'\n')?;
    if buf[pos] == b'\r' {
        match buf.get(pos + 1) {
            Some(b'\n') => Some((pos, 2, false)),
            Some(_) => Some((pos, 1, false)),
            None => Some((pos, 1, true)),
        }
    } else {
        Some((pos, 1, false))
    }
}

/// How a command ended.
enum Step {
    /// Done; also consume this many input bytes after the command line.
    Done(usize),
    /// Needs more input after the command line.
    NeedMore,
    /// Fatal for the connection: stop reading commands.
    Close,
}

/// Replies to a write of handler `h` (as the client named it).
fn write_reply(c: &mut Conn, h: &str, r: Result<(), String>) {
    match r {
        Ok(()) => c.message(CS_OK, &format!("Write handler '{h}' OK"), false),
        Err(e) => {
            let e = if e.trim().is_empty() {
                "error".to_string()
            } else {
                e
            };
            c.messages(CS_HANDLER_ERROR, &format!("Write handler '{h}' error"), &e)
        }
    }
}

/// The handler a command names.
struct Target {
    elem: Option<usize>,
    name: String,
    flags: u16,
}

pub struct ControlSocket {
    /// Built by a hot swap: a listener that cannot be bound must not stop
    /// the router (the old one is gone); it is retried instead.
    swapped_in: bool,
    address: Address,
    read_only: bool,
    localhost: bool,
    verbose: bool,
    retries: i32,
    retry_warnings: bool,
    listener: Option<Listener>,
    bound_port: u16,
    /// (device, inode) of the socket file we created, so cleanup removes
    /// only our own.
    unix_id: Option<(u64, u64)>,
    conns: BTreeMap<RawFd, Conn>,
    timer: Option<TimerId>,
    /// Name and index, known from initialize on.
    decl: String,
    index: usize,
    max_pending: usize,
    /// A connection taken out of `conns` while its commands run.
    busy_conn: bool,
    max_clients: usize,
    /// Zero: never.
    idle_timeout: Duration,
    max_buffered: usize,
    /// SECRET_FILE: the file, and the secret read from it at configure
    /// time. Clients must say `AUTH SECRET` before any other command.
    secret_file: Option<String>,
    secret: Option<Vec<u8>>,
    timer_armed: bool,
    /// Clients closed for being idle (timeout, or room for a new one).
    idle_closed: u64,
    /// Connections refused at MAX_CLIENTS.
    rejected: u64,
    /// Replies refused for want of buffer room.
    refused_replies: u64,
}

impl Default for ControlSocket {
    fn default() -> Self {
        ControlSocket {
            swapped_in: false,
            address: Address::Tcp {
                port: 0,
                plus: false,
            },
            read_only: false,
            localhost: true,
            verbose: false,
            retries: 0,
            retry_warnings: true,
            listener: None,
            bound_port: 0,
            unix_id: None,
            conns: BTreeMap::new(),
            timer: None,
            decl: String::new(),
            index: usize::MAX,
            max_pending: 0,
            busy_conn: false,
            max_clients: DEFAULT_MAX_CLIENTS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_buffered: DEFAULT_MAX_BUFFERED,
            secret_file: None,
            secret: None,
            timer_armed: false,
            idle_closed: 0,
            rejected: 0,
            refused_replies: 0,
        }
    }
}

impl ControlSocket {
    /// Binds and listens. Returns the listener's descriptor.
    fn bind(&mut self) -> Result<RawFd, String> {
        let listener = match &self.address {
            Address::Tcp { port, plus } => {
                let ip = if self.localhost {
                    Ipv4Addr::LOCALHOST
                } else {
                    Ipv4Addr::UNSPECIFIED
                };
                let mut p = *port;
                loop {
                    match TcpListener::bind(SocketAddrV4::new(ip, p)) {
                        Ok(l) => {
                            self.bound_port = l.local_addr().map(|a| a.port()).unwrap_or(p);
                            break Listener::Tcp(l);
                        }
                        Err(e) => {
                            let busy = e.kind() == io::ErrorKind::AddrInUse;
                            if !*plus || !busy || p == u16::MAX {
                                return Err(format!("bind: {}", os_reason(&e)));
                            }
                            p += 1;
                        }
                    }
                }
            }
            Address::Unix(path) => {
                // Replace a stale socket file, never another kind of file.
                if let Ok(md) = std::fs::symlink_metadata(path) {
                    if md.file_type().is_socket() {
                        let _ = std::fs::remove_file(path);
                    }
                }
                let l = UnixListener::bind(path).map_err(|e| format!("bind: {}", os_reason(&e)))?;
                self.unix_id = std::fs::symlink_metadata(path)
                    .ok()
                    .map(|m| (m.dev(), m.ino()));
                Listener::Unix(l)
            }
        };
        let nb = match &listener {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix(l) => l.set_nonblocking(true),
        };
        nb.map_err(|e| format!("fcntl: {}", os_reason(&e)))?;
        let fd = listener.fd();
        self.listener = Some(listener);
        Ok(fd)
    }

    fn watch_listener(&self, ctx: &ElementView, fd: RawFd) {
        server::watch_listener(ctx, fd, self.verbose, &self.decl, || match &self.address {
            Address::Tcp { .. } => format!("listening on TCP port {}", self.bound_port),
            Address::Unix(p) => format!("listening on {p}"),
        });
    }

    /// Binding failed: warn and retry later, or give up.
    fn bind_failed(&mut self, msg: &str, chatter: &dyn Fn(&str)) -> bool {
        if self.retries > 0 {
            self.retries -= 1;
            if self.retry_warnings {
                let left = self.retries + 1;
                chatter(&format!(
                    "{}: warning: {msg} ({left} {} left)",
                    self.decl,
                    if left == 1 { "try" } else { "tries" }
                ));
            }
            true
        } else {
            false
        }
    }

    fn accept_all(&mut self, ctx: &mut Ctx) {
        for _ in 0..ACCEPTS_PER_CALL {
            let Some(l) = &self.listener else { return };
            let Some((stream, peer)) = server::accepted(l.accept(), ctx, &self.decl, os_reason)
            else {
                return;
            };
            if stream.set_nonblocking().is_err() {
                continue;
            }
            if self.conns.len() >= self.max_clients && !self.evict_idlest(ctx) {
                // Say why before closing (the socket is new: the short
                // reply fits its buffer). Dropping the stream closes it.
                self.rejected += 1;
                let _ = stream.send(
                    format!(
                        "{GREETING}590 Too many connections ({} open, MAX_CLIENTS {}); try again later\r\n",
                        self.conns.len(),
                        self.max_clients
                    )
                    .as_bytes(),
                );
                if self.verbose {
                    ctx.chatter(&format!("{}: too many connections", self.decl));
                }
                continue;
            }
            let fd = stream.fd();
            if self.verbose {
                if peer.is_empty() {
                    ctx.chatter(&format!("{}: opened connection {fd}", self.decl));
                } else {
                    ctx.chatter(&format!(
                        "{}: opened connection {fd} from {peer}",
                        self.decl
                    ));
                }
            }
            let mut c = Conn::new(stream, Timestamp::now_real(), self.secret.is_none());
            c.flush();
            self.finish(c, false, ctx);
        }
        self.arm_timer(ctx);
    }

    /// Makes room for a new client: in SECRET_FILE mode, by closing the
    /// oldest unauthenticated connection (however recently it talked:
    /// without the secret, talking must not hold a slot; the oldest, so
    /// that a client that has just connected has time to say AUTH); else
    /// by closing the one idle the longest, if it has been idle at least
    /// EVICT_IDLE.
    fn evict_idlest(&mut self, ctx: &mut Ctx) -> bool {
        let now = Timestamp::now_real();
        if let Some((&fd, _)) = self
            .conns
            .iter()
            .filter(|(_, c)| !c.authed && c.awaiting.is_none())
            .min_by_key(|(_, c)| c.opened)
        {
            self.close_idle(fd, "not authenticated while the server was full", ctx);
            return true;
        }
        let Some((&fd, c)) = self
            .conns
            .iter()
            .filter(|(_, c)| c.awaiting.is_none())
            .min_by_key(|(_, c)| c.last_active)
        else {
            return false;
        };
        if now < c.last_active + EVICT_IDLE {
            return false;
        }
        let idle = (now - c.last_active).as_secs_f64();
        self.close_idle(
            fd,
            &format!("idle {idle:.0} s while the server was full"),
            ctx,
        );
        true
    }

    /// Closes an idle client, telling it why.
    fn close_idle(&mut self, fd: RawFd, why: &str, ctx: &mut Ctx) {
        if let Some(mut c) = self.conns.remove(&fd) {
            c.message(CS_UNSPECIFIED, &format!("Connection closed: {why}"), false);
            c.flush();
            ctx.remove_select(fd);
            self.idle_closed += 1;
            if self.verbose {
                ctx.chatter(&format!("{}: closed idle connection {fd}", self.decl));
            }
        }
    }

    /// Closes clients idle for IDLE_TIMEOUT, lets starved clients read
    /// again, and sets the timer for the next check.
    fn sweep(&mut self, ctx: &mut Ctx) {
        if !self.idle_timeout.is_zero() {
            let now = Timestamp::now_real();
            let limit = Timestamp::from_duration(self.idle_timeout);
            let expired: Vec<RawFd> = self
                .conns
                .iter()
                .filter(|(_, c)| c.awaiting.is_none() && now >= c.last_active + limit)
                .map(|(&fd, _)| fd)
                .collect();
            let secs = self.idle_timeout.as_secs_f64();
            for fd in expired {
                self.close_idle(fd, &format!("idle for {secs} s (IDLE_TIMEOUT)"), ctx);
            }
        }
        self.arm_timer(ctx);
    }

    /// Sets the timer for the next idle check while clients are open.
    /// Idleness is real time; under simulated time, whose clock jumps to
    /// the next timer, clients are not timed out.
    fn arm_timer(&mut self, ctx: &Ctx) {
        if self.timer_armed
            || self.conns.is_empty()
            || self.listener.is_none()
            || self.idle_timeout.is_zero()
            || ctx.is_simulated()
        {
            return;
        }
        let Some(t) = self.timer else { return };
        let now = Timestamp::now_real();
        let oldest = self.conns.values().map(|c| c.last_active).min();
        let due = oldest.unwrap_or(now) + Timestamp::from_duration(self.idle_timeout);
        // Not sooner than 10 ms from now.
        let wait = if due > now {
            due - now
        } else {
            Timestamp::from_secs_f64(0.0)
        };
        let wait = wait.max(Timestamp::from_secs_f64(0.01));
        ctx.schedule_timer_after(t, wait);
        self.timer_armed = true;
    }

    /// Bytes buffered for every client in `conns`.
    fn buffered_total(&self) -> usize {
        self.conns.values().map(Conn::buffered).sum()
    }

    /// The input bound for `c` now: IN_LIMIT, or FREE_INPUT while the
    /// shared budget is spent.
    fn in_limit(&self, c: &Conn) -> usize {
        if self.buffered_total() + c.buffered() < self.max_buffered {
            IN_LIMIT
        } else {
            FREE_INPUT.max(c.inbuf.len().min(IN_LIMIT))
        }
    }

    /// Whether `c` waits for more input than the spent budget lets it
    /// buffer: its partial command is then refused.
    fn starved(&self, c: &Conn) -> bool {
        c.in_pending() >= FREE_INPUT && self.buffered_total() + c.buffered() >= self.max_buffered
    }

    /// Whether a reply of `size` bytes may be queued for `c` (which is out
    /// of `conns`).
    fn room_for(&self, c: &Conn, size: usize) -> bool {
        size <= SMALL_REPLY || self.buffered_total() + c.buffered() + size <= self.max_buffered
    }

    /// Puts a connection back after work on it, choosing what to wait for,
    /// or closes it.
    fn finish(&mut self, c: Conn, more: bool, ctx: &mut Ctx) {
        let fd = c.stream.fd();
        self.max_pending = self.max_pending.max(c.out_pending());
        // A client that has sent its last command stays until that command
        // is answered, even one waiting for a hot swap to be prepared.
        let done =
            c.out_closed || (c.in_closed && !more && c.out_pending() == 0 && c.awaiting.is_none());
        if done {
            ctx.remove_select(fd);
            drop(c);
            if self.verbose {
                ctx.chatter(&format!("{}: closed connection {fd}", self.decl));
            }
            return;
        }
        let interest = Interest {
            read: !c.in_closed && c.out_pending() < OUT_LIMIT && c.in_pending() < IN_LIMIT,
            write: c.out_pending() > 0 || more,
        };
        ctx.add_select(fd, interest);
        self.conns.insert(fd, c);
        self.arm_timer(ctx);
    }

    /// Runs the client's complete commands. Returns whether commands may
    /// remain that were not run (output backlog or the per-call cap).
    fn process(&mut self, c: &mut Conn, ctx: &mut Ctx) -> bool {
        let mut ran = 0;
        loop {
            if c.discard > 0 {
                let k = c.discard.min(c.in_pending());
                c.inpos += k;
                c.discard -= k;
                if c.discard > 0 {
                    if c.in_closed {
                        c.inpos = c.inbuf.len();
                    }
                    return false;
                }
            }
            if c.skip_lf && c.in_pending() > 0 {
                if c.inbuf[c.inpos] == b'\n' {
                    c.inpos += 1;
                }
                c.skip_lf = false;
            }
            if c.in_pending() == 0 || c.awaiting.is_some() {
                return false;
            }
            if c.out_closed {
                c.inpos = c.inbuf.len();
                return false;
            }
            if c.out_pending() >= OUT_LIMIT || ran >= COMMANDS_PER_CALL {
                return true;
            }
            let avail = &c.inbuf[c.inpos..];
            let (len, term, cr_at_end) = match line_end(avail) {
                Some(x) => x,
                None if c.in_closed => (avail.len(), 0, false),
                None if avail.len() > MAX_LINE || self.starved(c) => {
                    c.message(CS_SYNTAX, "Line too long", false);
                    c.in_closed = true;
                    c.inpos = c.inbuf.len();
                    return false;
                }
                None => return false,
            };
            if len > MAX_LINE {
                c.message(CS_SYNTAX, "Line too long", false);
                c.in_closed = true;
                c.inpos = c.inbuf.len();
                return false;
            }
            let line = avail[..len].to_vec();
            let after = c.inpos + len + term;
            match self.command(c, &line, after, ctx) {
                Step::Done(extra) => {
                    c.inpos = (after + extra).min(c.inbuf.len());
                    c.until_resume = 0;
                    c.skip_lf = cr_at_end && extra == 0;
                    ran += 1;
                }
                Step::NeedMore if c.in_closed => {
                    c.message(CS_SYNTAX, "Not enough data", false);
                    c.inpos = c.inbuf.len();
                    return false;
                }
                // Wait for the data (a lone CR at the end is looked at
                // again then, in case an LF follows it).
                Step::NeedMore => return false,
                Step::Close => {
                    c.in_closed = true;
                    c.inpos = c.inbuf.len();
                    return false;
                }
            }
        }
    }

    /// Runs one command line. `after` is where the data following the line
    /// starts in `c.inbuf`.
    fn command(&mut self, c: &mut Conn, line: &[u8], after: usize, ctx: &mut Ctx) -> Step {
        let w = words(line);
        let Some(&(s0, e0)) = w.first() else {
            return Step::Done(0);
        };
        let word = |i: usize| String::from_utf8_lossy(&line[w[i].0..w[i].1]).into_owned();
        let rest = |i: usize| -> String {
            if w.len() > i {
                String::from_utf8_lossy(&line[w[i].0..w[w.len() - 1].1]).into_owned()
            } else {
                String::new()
            }
        };
        let cmd = String::from_utf8_lossy(&line[s0..e0]).to_ascii_uppercase();
        if let Some(secret) = &self.secret {
            if cmd == "AUTH" {
                let given = if w.len() == 2 {
                    &line[w[1].0..w[1].1]
                } else {
                    &b""[..]
                };
                if constant_time_eq(given, secret) {
                    c.authed = true;
                    c.message(CS_OK, "Authenticated", false);
                    return Step::Done(0);
                }
                c.authed = false;
                c.message(CS_PERMISSION, "Authentication failed", false);
                return Step::Close;
            }
            if !c.authed && !matches!(cmd.as_str(), "QUIT" | "CLOSE" | "HELP") {
                c.message(
                    CS_PERMISSION,
                    "Authentication required (send AUTH SECRET first)",
                    false,
                );
                return Step::Done(0);
            }
        }
        match cmd.as_str() {
            "READ" | "GET" | "WRITE" | "SET" => {
                if w.len() < 2 {
                    c.message(CS_SYNTAX, "Wrong number of arguments", false);
                    return Step::Done(0);
                }
                let h = word(1);
                let data = rest(2);
                if cmd == "READ" || cmd == "GET" {
                    self.read_command(c, &h, &data, ctx);
                } else {
                    self.write_command(c, &h, &data, ctx);
                }
                Step::Done(0)
            }
            "READDATA" | "WRITEDATA" | "SETDATA" => {
                if w.len() != 3 {
                    c.message(CS_SYNTAX, "Wrong number of arguments", false);
                    return Step::Done(0);
                }
                let h = word(1);
                let Ok(n) = word(2).parse::<usize>() else {
                    c.message(CS_SYNTAX, &format!("Syntax error in '{cmd}'"), false);
                    return Step::Done(0);
                };
                if n > MAX_DATA {
                    let kind = if cmd == "READDATA" { "read" } else { "write" };
                    c.message(
                        CS_DATA_TOO_BIG,
                        &format!("Data too large for {kind} handler '{h}'"),
                        false,
                    );
                    let have = c.inbuf.len() - after;
                    c.discard = n - have.min(n);
                    return Step::Done(have.min(n));
                }
                if c.inbuf.len() - after < n {
                    if self.starved(c) {
                        let kind = if cmd == "READDATA" { "read" } else { "write" };
                        c.message(
                            CS_DATA_TOO_BIG,
                            &format!(
                                "Data too large for {kind} handler '{h}' now: MAX_BUFFERED {} bytes are buffered for clients",
                                self.max_buffered
                            ),
                            false,
                        );
                        let have = c.inbuf.len() - after;
                        c.discard = n - have;
                        return Step::Done(have);
                    }
                    return Step::NeedMore;
                }
                let data = String::from_utf8_lossy(&c.inbuf[after..after + n]).into_owned();
                if cmd == "READDATA" {
                    self.read_command(c, &h, &data, ctx);
                } else {
                    self.write_command(c, &h, &data, ctx);
                }
                Step::Done(n)
            }
            "READUNTIL" | "WRITEUNTIL" => {
                if w.len() < 2 {
                    c.message(CS_SYNTAX, "Wrong number of arguments", false);
                    return Step::Done(0);
                }
                let h = word(1);
                let until = rest(2);
                let until = until.as_bytes();
                // Scan the lines after the command line for the terminator,
                // resuming where an earlier attempt stopped.
                let buf = &c.inbuf[after..];
                let mut s = c.until_resume.min(buf.len());
                loop {
                    let begin = s;
                    let mut end = s;
                    while s < buf.len() && buf[s] != b'\n' && buf[s] != b'\r' {
                        if !buf[s].is_ascii_whitespace() {
                            end = s + 1;
                        }
                        s += 1;
                    }
                    if s == buf.len() {
                        c.until_resume = begin;
                        if buf.len() > MAX_DATA || self.starved(c) {
                            c.message(
                                CS_DATA_TOO_BIG,
                                &format!(
                                    "Data too large for {} handler '{h}'",
                                    if cmd == "READUNTIL" { "read" } else { "write" }
                                ),
                                false,
                            );
                            return Step::Close;
                        }
                        return Step::NeedMore;
                    }
                    if buf[s] == b'\r' && buf.get(s + 1) == Some(&b'\n') {
                        s += 2;
                    } else {
                        s += 1;
                    }
                    if &buf[begin..end] == until {
                        let data = String::from_utf8_lossy(&buf[..begin]).into_owned();
                        if cmd == "READUNTIL" {
                            self.read_command(c, &h, &data, ctx);
                        } else {
                            self.write_command(c, &h, &data, ctx);
                        }
                        return Step::Done(s);
                    }
                }
            }
            "CHECKREAD" | "CHECKWRITE" => {
                if w.len() != 2 {
                    c.message(CS_SYNTAX, "Wrong number of arguments", false);
                } else {
                    self.check_command(c, &word(1), cmd == "CHECKWRITE", ctx);
                }
                Step::Done(0)
            }
            "LLRPC" => {
                if w.len() != 2 && w.len() != 3 {
                    c.message(CS_SYNTAX, "Wrong number of arguments", false);
                    return Step::Done(0);
                }
                let mut n = 0usize;
                if w.len() == 3 {
                    match word(2).parse::<usize>() {
                        Ok(x) => n = x,
                        Err(_) => {
                            c.message(CS_SYNTAX, "Syntax error in 'llrpc'", false);
                            return Step::Done(0);
                        }
                    }
                }
                if n > MAX_DATA {
                    c.message(CS_DATA_TOO_BIG, "Data too large for LLRPC", false);
                    let have = c.inbuf.len() - after;
                    c.discard = n - have.min(n);
                    return Step::Done(have.min(n));
                }
                if c.inbuf.len() - after < n {
                    if self.starved(c) {
                        c.message(CS_DATA_TOO_BIG, "Data too large for LLRPC", false);
                        let have = c.inbuf.len() - after;
                        c.discard = n - have;
                        return Step::Done(have);
                    }
                    return Step::NeedMore;
                }
                self.llrpc_command(c, &word(1), ctx);
                Step::Done(n)
            }
            "QUIT" | "CLOSE" => {
                if w.len() != 1 {
                    c.message(CS_SYNTAX, "Bad command syntax", false);
                }
                c.message(CS_OK, "Goodbye!", false);
                Step::Close
            }
            "HELP" => {
                for (i, l) in HELP.iter().enumerate() {
                    c.message(CS_OK, l, i + 1 < HELP.len() || self.secret.is_some());
                }
                if self.secret.is_some() {
                    c.message(
                        CS_OK,
                        "AUTH secret             authenticate (SECRET_FILE)",
                        false,
                    );
                }
                Step::Done(0)
            }
            _ => {
                c.message(
                    CS_UNIMPLEMENTED,
                    &format!("Command '{cmd}' unimplemented"),
                    false,
                );
                Step::Done(0)
            }
        }
    }

    /// This element's handler list (its own handlers are invisible through
    /// the router while it runs).
    fn specs_of(&self, elem: Option<usize>, ctx: &Ctx) -> Vec<HandlerSpec> {
        server::handler_specs(ctx, elem, self.index, self.handlers())
    }

    /// Resolves a handler name as Click's ControlSocket does, or replies
    /// with 510/511.
    fn parse_handler(&self, c: &mut Conn, full: &str, ctx: &Ctx) -> Option<Target> {
        let canonical = if let Some(r) = full.strip_prefix('.') {
            r
        } else if let Some(r) = full.strip_prefix("0.") {
            r
        } else {
            full
        };
        let (elem, hname) = match canonical.split_once('.') {
            Some((ename, hname)) => {
                let found = if ename.is_empty() {
                    None
                } else {
                    ctx.find_element(ename)
                };
                match found {
                    Some(i) => (Some(i), hname),
                    None => {
                        c.message(
                            CS_NO_SUCH_ELEMENT,
                            &format!("No element named '{ename}'"),
                            false,
                        );
                        return None;
                    }
                }
            }
            None => (None, canonical),
        };
        let spec = self
            .specs_of(elem, ctx)
            .into_iter()
            .find(|s| s.name == hname && s.flags & hflags::PRIVATE == 0);
        match spec {
            Some(s) if s.flags & (hflags::READ | hflags::WRITE) != 0 => Some(Target {
                elem,
                name: hname.to_string(),
                flags: s.flags,
            }),
            _ => {
                c.message(
                    CS_NO_SUCH_HANDLER,
                    &format!("No handler named '{full}'"),
                    false,
                );
                None
            }
        }
    }

    fn call_read(&self, t: &Target, param: &str, ctx: &mut Ctx) -> Result<String, String> {
        let param = (!param.is_empty()).then_some(param);
        if t.elem == Some(self.index) {
            if t.name == "handlers" {
                return Ok(handlers_listing(&self.specs_of(t.elem, ctx)));
            }
            if self.handlers().iter().any(|h| h.name == t.name) {
                return self.read_handler(&t.name, param, ctx);
            }
        }
        ctx.read_handler_at(t.elem, &t.name, param)
    }

    fn read_command(&mut self, c: &mut Conn, h: &str, param: &str, ctx: &mut Ctx) {
        let Some(t) = self.parse_handler(c, h, ctx) else {
            return;
        };
        if t.flags & hflags::READ == 0 {
            c.message(CS_PERMISSION, &format!("Handler '{h}' write-only"), false);
            return;
        }
        match self.call_read(&t, param, ctx) {
            Ok(v) if !self.room_for(c, v.len() + h.len() + 48) => {
                self.refused_replies += 1;
                let msg = format!(
                    "reply of {} bytes refused: {} bytes already buffered for clients \
                     (MAX_BUFFERED {}); read pending replies, or try again later",
                    v.len(),
                    self.buffered_total() + c.buffered(),
                    self.max_buffered
                );
                c.messages(CS_UNSPECIFIED, &format!("Read handler '{h}' error"), &msg);
            }
            Ok(v) => {
                c.message(CS_OK, &format!("Read handler '{h}' OK"), false);
                c.data(v.as_bytes());
            }
            Err(e) => c.messages(CS_UNSPECIFIED, &format!("Read handler '{h}' error"), &e),
        }
    }

    fn write_command(&mut self, c: &mut Conn, h: &str, value: &str, ctx: &mut Ctx) {
        let Some(t) = self.parse_handler(c, h, ctx) else {
            return;
        };
        if t.flags & hflags::WRITE == 0 {
            c.message(CS_PERMISSION, &format!("Handler '{h}' read-only"), false);
            return;
        }
        if self.read_only {
            c.message(
                CS_PERMISSION,
                &format!("Permission denied for '{h}'"),
                false,
            );
            return;
        }
        match ctx.write_handler_start(t.elem, &t.name, value) {
            WriteStart::Done(r) => write_reply(c, h, r),
            // Prepared off the packet path: answered in `write_finished`.
            WriteStart::Pending(token) => c.awaiting = Some((token, h.to_string())),
        }
    }

    fn check_command(&mut self, c: &mut Conn, h: &str, write: bool, ctx: &mut Ctx) {
        let Some(t) = self.parse_handler(c, h, ctx) else {
            return;
        };
        let ok = t.flags & if write { hflags::WRITE } else { hflags::READ } != 0;
        if write && self.read_only && ok {
            c.message(
                CS_PERMISSION,
                &format!("Permission denied for '{h}'"),
                false,
            );
        } else if ok {
            let kind = if write { "Write" } else { "Read" };
            c.message(CS_OK, &format!("{kind} handler '{h}' OK"), false);
        } else {
            let what = if write { "writable" } else { "readable" };
            c.message(
                CS_NO_SUCH_HANDLER,
                &format!("Handler '{h}' not {what}"),
                false,
            );
        }
    }

    fn llrpc_command(&mut self, c: &mut Conn, name: &str, ctx: &mut Ctx) {
        let (ename, num) = name.split_once('#').unwrap_or(("", name));
        let num = num.strip_prefix("0x").unwrap_or(num);
        if num.is_empty() || u32::from_str_radix(num, 16).is_err() {
            c.message(
                CS_SYNTAX,
                &format!("Syntax error in LLRPC name '{name}'"),
                false,
            );
            return;
        }
        if self
            .parse_handler(c, &format!("{ename}.name"), ctx)
            .is_none()
        {
            return;
        }
        c.message(
            CS_UNIMPLEMENTED,
            &format!("Cannot call LLRPC '{name}' remotely"),
            false,
        );
    }

    fn close_all(&mut self) {
        // The listener first, so nobody connects to a dying socket.
        self.close_listener();
        for (_, mut c) in std::mem::take(&mut self.conns) {
            c.flush();
        }
    }

    fn close_listener(&mut self) {
        if let Some(l) = self.listener.take() {
            let is_unix = matches!(l, Listener::Unix(_));
            drop(l);
            if let (true, Address::Unix(path), Some(id)) = (is_unix, &self.address, self.unix_id) {
                // Remove the socket file only if it is still ours.
                if let Ok(md) = std::fs::symlink_metadata(path) {
                    if (md.dev(), md.ino()) == id {
                        let _ = std::fs::remove_file(path);
                    }
                }
            }
        }
        self.unix_id = None;
    }

    fn pending_output(&self) -> usize {
        self.conns.values().map(Conn::out_pending).sum()
    }
}

/// Compares secrets in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in b.iter().enumerate() {
        diff |= usize::from(x ^ a.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Reads the shared secret: the file's first line, at least 16 bytes,
/// the file readable by its owner only.
pub fn read_secret_file(path: &str) -> Result<Vec<u8>, String> {
    let md =
        std::fs::metadata(path).map_err(|e| format!("SECRET_FILE {path}: {}", os_reason(&e)))?;
    if md.mode() & 0o077 != 0 {
        return Err(format!(
            "SECRET_FILE {path}: readable by others (mode {:o}); chmod 600 it",
            md.mode() & 0o777
        ));
    }
    let text = std::fs::read(path).map_err(|e| format!("SECRET_FILE {path}: {}", os_reason(&e)))?;
    let line: Vec<u8> = text
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if line.len() < 16 {
        return Err(format!(
            "SECRET_FILE {path}: the secret must be at least 16 characters"
        ));
    }
    Ok(line)
}

const HELP: &[&str] = &[
    "Commands supported:",
    "READ handler [arg...]   call read handler, return DATA",
    "READDATA handler len    call read handler with len data bytes, return DATA",
    "READUNTIL handler term  call read handler, take data until term, return DATA",
    "WRITE handler [arg...]  call write handler",
    "WRITEDATA handler len   call write handler, pass len data bytes",
    "WRITEUNTIL handler term call write handler, take data until term",
    "CHECKREAD handler       check if read handler is valid",
    "CHECKWRITE handler      check if write handler is valid",
    "LLRPC elt#number [len]  call LLRPC, pass len data bytes, return DATA",
    "QUIT                    close connection",
];

/// An OS error as Click prints it (`strerror` text without the code).
fn os_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

// rclick's additions first, so that they are listed after Click's `port`.
const HANDLERS: &[Handler<ControlSocket>] = &[
    Handler::read("clients", |e, _| server::clients(&e.conns, e.busy_conn)),
    Handler::read("pending_output", |e, _| e.pending_output().to_string()),
    Handler::data("max_pending_output", |e| &e.max_pending),
    Handler::read("buffered", |e, _| e.buffered_total().to_string()),
    Handler::data("idle_closed", |e| &e.idle_closed),
    Handler::data("rejected", |e| &e.rejected),
    Handler::data("refused_replies", |e| &e.refused_replies),
    Handler::read("port", |e, _| match &e.address {
        Address::Tcp { .. } => e.bound_port.to_string(),
        Address::Unix(p) => p.clone(),
    }),
];

rclick_core::element_class!(ControlSocket);

impl Element for ControlSocket {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let socktype: String = args.read_mp("TYPE");
        let read_only = args.read("READONLY").unwrap_or(false);
        let proxy: Option<String> = args.read("PROXY");
        let verbose = args.read("VERBOSE").unwrap_or(false);
        let retries: i32 = args.read("RETRIES").unwrap_or(0);
        let retry_warnings = args.read("RETRY_WARNINGS").unwrap_or(true);
        let localhost = args.read("LOCALHOST").unwrap_or(true);
        let max_clients: usize = args.read("MAX_CLIENTS").unwrap_or(DEFAULT_MAX_CLIENTS);
        let idle_timeout: Duration = args.read("IDLE_TIMEOUT").unwrap_or(DEFAULT_IDLE_TIMEOUT);
        let max_buffered: usize = args.read("MAX_BUFFERED").unwrap_or(DEFAULT_MAX_BUFFERED);
        let secret_file: Option<String> = args.read("SECRET_FILE");
        let socktype = socktype.to_ascii_uppercase();
        let address = match socktype.as_str() {
            "TCP" => {
                let p: String = args.read_mp("PORT");
                let (num, plus) = match p.strip_suffix('+') {
                    Some(n) => (n, true),
                    None => (p.as_str(), false),
                };
                match num.parse::<u32>() {
                    Ok(n) if n <= 65535 && (!plus || n > 0) => Some(Address::Tcp {
                        port: n as u16,
                        plus,
                    }),
                    _ if p.is_empty() => None,
                    _ => {
                        args.error("PORT requires TCP port");
                        None
                    }
                }
            }
            "UNIX" => {
                let f: String = args.read_mp("FILENAME");
                if f.len() >= 108 {
                    args.error("filename too long");
                    None
                } else if f.is_empty() {
                    None
                } else {
                    Some(Address::Unix(f))
                }
            }
            "" => None,
            other => {
                args.error(format!("unknown socket type '{other}'"));
                None
            }
        };
        if proxy.is_some() {
            args.error("PROXY is not supported");
        }
        if max_clients == 0 {
            args.error("MAX_CLIENTS must be positive");
        }
        if max_buffered < SMALL_REPLY {
            args.error(format!("MAX_BUFFERED must be at least {SMALL_REPLY}"));
        }
        let secret = match &secret_file {
            Some(f) => match read_secret_file(f) {
                Ok(s) => Some(s),
                Err(e) => {
                    args.error(e);
                    None
                }
            },
            None => None,
        };
        args.complete()?;
        self.max_clients = max_clients;
        self.idle_timeout = idle_timeout;
        self.max_buffered = max_buffered;
        self.secret_file = secret_file;
        self.secret = secret;
        if let Some(a) = address {
            self.address = a;
        }
        self.read_only = read_only;
        self.verbose = verbose;
        self.retries = retries;
        self.retry_warnings = retry_warnings;
        self.localhost = localhost;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let started = server::start(ctx, "ControlSocket");
        let timer = started.timer;
        self.decl = started.decl;
        self.index = started.index;
        self.timer = Some(timer);
        self.swapped_in = started.successor;
        if started.successor {
            return Ok(());
        }
        match self.bind() {
            Ok(fd) => {
                self.watch_listener(ctx, fd);
                Ok(())
            }
            Err(msg) => {
                let chatter = |m: &str| ctx.chatter(m);
                if self.bind_failed(&msg, &chatter) {
                    ctx.schedule_timer_at(timer, ctx.now() + Timestamp::from_secs_f64(1.0));
                    Ok(())
                } else {
                    Err(msg.into())
                }
            }
        }
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<ControlSocket>() else {
            return false;
        };
        if self.listener.is_some() || old.listener.is_none() {
            return false;
        }
        let compatible = match (&self.address, &old.address) {
            (Address::Tcp { plus: true, .. }, Address::Tcp { .. }) => {
                self.localhost == old.localhost
            }
            (Address::Tcp { port: a, .. }, Address::Tcp { port: b, .. }) => {
                a == b && self.localhost == old.localhost
            }
            (Address::Unix(a), Address::Unix(b)) => a == b,
            _ => false,
        };
        if !compatible {
            return false;
        }
        // Clients authenticated with another secret must say it again.
        let same_secret = self.secret == old.secret;
        self.listener = old.listener.take();
        self.bound_port = old.bound_port;
        self.unix_id = old.unix_id.take();
        self.conns = std::mem::take(&mut old.conns);
        if !same_secret {
            let open = self.secret.is_none();
            for c in self.conns.values_mut() {
                c.authed = open;
            }
        }
        self.max_pending = old.max_pending;
        self.idle_closed = old.idle_closed;
        self.rejected = old.rejected;
        self.refused_replies = old.refused_replies;
        let listener = self.listener.as_ref().map(Listener::fd);
        server::rewatch(ctx, listener, &self.conns, |c| Interest {
            read: !c.in_closed,
            // Run any commands left over right away.
            write: true,
        });
        true
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        self.timer_armed = false;
        if self.listener.is_some() {
            self.sweep(ctx);
            return;
        }
        match self.bind() {
            Ok(fd) => self.watch_listener(ctx, fd),
            Err(msg) => {
                let chatter = |m: &str| ctx.chatter(m);
                if self.bind_failed(&msg, &chatter) {
                    if let Some(t) = self.timer {
                        ctx.schedule_timer_after(t, Timestamp::from_secs_f64(1.0));
                    }
                } else if self.swapped_in {
                    ctx.chatter(&format!(
                        "{}: {msg}; the router runs on without it, retrying every {} s",
                        self.decl,
                        server::REBIND_INTERVAL_SECS
                    ));
                    if let Some(t) = self.timer {
                        ctx.schedule_timer_after(
                            t,
                            Timestamp::from_secs_f64(server::REBIND_INTERVAL_SECS),
                        );
                    }
                } else {
                    ctx.chatter(&format!("{}: {msg}", self.decl));
                    ctx.please_stop();
                }
            }
        }
    }

    fn selected(&mut self, fd: RawFd, readable: bool, _writable: bool, ctx: &mut Ctx) {
        if self.listener.as_ref().is_some_and(|l| l.fd() == fd) {
            self.accept_all(ctx);
            return;
        }
        let Some(mut c) = server::take_conn(&mut self.conns, fd, ctx) else {
            return;
        };
        let now = Timestamp::now_real();
        if readable && !c.in_closed {
            let limit = self.in_limit(&c);
            if c.fill(limit) > 0 {
                c.last_active = now;
            }
        } else if readable && !c.out_closed {
            // Input is over (QUIT, error): throw away whatever still comes
            // so that a hang-up is noticed.
            let mut buf = [0u8; 4096];
            if let Err(e) = c.stream.read(&mut buf) {
                if !matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) {
                    c.out_closed = true;
                }
            }
        }
        if c.flush() > 0 {
            c.last_active = now;
        }
        self.busy_conn = true;
        let more = self.process(&mut c, ctx);
        self.busy_conn = false;
        self.max_pending = self.max_pending.max(c.out_pending());
        if c.flush() > 0 {
            c.last_active = now;
        }
        self.finish(c, more, ctx);
    }

    fn write_finished(&mut self, token: u64, result: Result<(), String>, ctx: &mut Ctx) {
        let Some((&fd, c)) = self
            .conns
            .iter_mut()
            .find(|(_, c)| c.awaiting.as_ref().is_some_and(|a| a.0 == token))
        else {
            // The client has gone.
            return;
        };
        let Some((_, h)) = c.awaiting.take() else {
            return;
        };
        write_reply(c, &h, result);
        if c.flush() > 0 {
            c.last_active = Timestamp::now_real();
        }
        // Its next commands run when it is next selected: on this router
        // after an error, on the new one (which takes the connection) after
        // a swap.
        ctx.add_select(
            fd,
            Interest {
                read: !c.in_closed,
                write: true,
            },
        );
    }

    fn cleanup(&mut self) {
        self.close_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_like_click() {
        assert_eq!(printable("a\tb"), "a^Ib");
        assert_eq!(printable("x\u{7f}"), "x^?");
        assert_eq!(printable("é"), "M-CM-)");
    }

    #[test]
    fn line_ends() {
        assert_eq!(line_end(b"abc"), None);
        assert_eq!(line_end(b"ab\r\nc"), Some((2, 2, false)));
        assert_eq!(line_end(b"ab\rc"), Some((2, 1, false)));
        assert_eq!(line_end(b"ab\r"), Some((2, 1, true)));
        assert_eq!(line_end(b"ab\nc"), Some((2, 1, false)));
    }

    #[test]
    fn words_keep_offsets() {
        assert_eq!(
            words(b"  READ  a.b  x  y "),
            vec![(2, 6), (8, 11), (13, 14), (16, 17)]
        );
    }
}
