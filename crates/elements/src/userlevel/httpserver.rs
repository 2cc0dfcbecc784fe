//! # HTTPServer
//!
//! Serves the live view of the router over HTTP: a web page drawing the
//! element graph with live counters, a JSON API for handlers, and
//! Prometheus metrics.
//!
//! ## Synopsis
//! `HTTPServer(ADDR [, *keywords*])`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Listens for HTTP/1.1 connections on ADDR, which is `PORT` (on
//! 127.0.0.1) or `HOST:PORT` (`HOST` an IPv4 address, `[IPV6]`,
//! `localhost`, or `*` for every interface). Port 0 picks a free port
//! (read it from the `port` handler). The driver's `--http ADDR` option
//! adds an HTTPServer element to the configuration.
//!
//! Resources:
//!
//! - `GET /`: the live page. It draws the element graph as SVG (elements as
//!   `name :: Class` boxes, push ports black, pull ports white, as in the
//!   Click paper), shows the numeric read handlers of each element updated
//!   every second (queue lengths as a bar), and lets the user click an
//!   element to read and write its handlers. The page needs no other site.
//! - `GET /api/router`: JSON: `generation` (changes when the router is
//!   replaced by hot swap), `elements` (each with `index`, `name`, `class`,
//!   `config`, `inputs` and `outputs` as `{"mode": "push"|"pull",
//!   "agnostic": bool}`, and `handlers` as `{"name", "flags", "read",
//!   "write", "param", "button", "checkbox"}`), `connections` (`from`,
//!   `from_name`, `from_port`, `to`, `to_name`, `to_port`), and
//!   `global_handlers`.
//! - `GET /api/handlers?names=a.count,b.length`: JSON
//!   `{"handlers": {"a.count": {"value": "42"}, "x.y": {"error": "..."}}}`;
//!   names are comma-separated and percent-decoded, at most 1000.
//! - `GET /api/counters`: JSON `{"generation": N, "elements": {"c":
//!   {"count": 42, ...}}}`: every element read handler whose value is a
//!   number.
//! - `GET /api/handler/ELEMENT.HANDLER[?param=P]`: reads one handler:
//!   `{"ok": true, "handler": "...", "value": "..."}`.
//! - `POST /api/handler/ELEMENT.HANDLER`: writes the handler with the
//!   request body as its value: `{"ok": true, "handler": "..."}`.
//!   A name without a dot is a global handler (`stop`, `hotconfig`). The
//!   request must carry `Authorization: Bearer TOKEN` (see below).
//! - `GET /metrics`: the Prometheus text exposition format (version
//!   0.0.4): every element read handler whose value is a number, as
//!   `rclick_handler{element="c",class="Counter",handler="count"} 42`.
//!
//! Errors are JSON `{"ok": false, "error": "MESSAGE"}` with status 404 for
//! an unknown element, handler or resource, 405 for a handler or resource
//! that does not support the method (reading a write-only handler, writing
//! a read-only one; with an `Allow` header), 401 for a write without the
//! token, 403 when read-only or for a cross-site request, 400 when the
//! handler reports an error or the request is malformed, 413 for a body
//! larger than MAX_BODY, 431 for a request head larger than 16 KiB, 411
//! for a chunked body, 408 for a head not received within HEAD_TIMEOUT, and
//! 503 when there is no room for another connection.
//!
//! Every response closes the connection (`Connection: close`). Sockets are
//! non-blocking and serve up to MAX_CLIENTS clients at once, at most
//! MAX_PER_ADDRESS from one address, without ever blocking packet
//! processing. A client must send its whole request head within
//! HEAD_TIMEOUT of connecting, however steadily its bytes come (slowloris),
//! and one that sends nothing for TIMEOUT is disconnected (both in real
//! time, and not applied under `--simtime`). When the server or an address
//! is full, a new connection closes a connection already answered, else the
//! oldest one whose request is unfinished (of that address, if the address
//! is full), so clients that send their requests promptly always get in;
//! when every connection is being sent its response, the new one is
//! answered 503. Numeric
//! handlers skip the standard `name`,
//! `class`, `config`, `ports` and `handlers`, handlers taking a parameter,
//! and reads that may change state.
//!
//! Who may write: reads are open to whoever can connect; every write needs
//! the token. With TOKEN_FILE, the server makes a random token when it
//! starts, writes it to that file (mode 0600: readable by the user only),
//! and, with VERBOSE, prints the page's URL with the token in its fragment
//! (`http://127.0.0.1:PORT/#token=...`): the page keeps the token (in the
//! browser's storage for this site, never in URLs) and sends it with its
//! writes.
//! Without TOKEN_FILE the server is read-only. Writes from a web page on
//! another site are refused: a POST whose `Origin` is not this server, as
//! its `Host` names it, is answered 403 (`localhost`, `127.0.0.1` and
//! `[::1]` are the same server when it is bound to loopback); and when
//! bound to a loopback address, requests whose `Host` is not a loopback
//! name or address are refused too (DNS rebinding). See docs/security.md.
//!
//! Hot swap: an HTTPServer with the same name and address takes the
//! listening socket and open connections from its predecessor, and, with
//! the same TOKEN_FILE, its token. A POST to `hotconfig` (with `-R`) is
//! prepared off the packet path: the response comes once the new router is
//! built, while packets and other clients keep being served; one written
//! while another is being prepared is answered 400 (a hot swap is already
//! being prepared).
//!
//! ## Keywords
//! - **TOKEN_FILE** (file name): allow writes carrying the token that the
//!   server writes to this file at start. Default none (read-only).
//! - **READONLY** (boolean): refuse handler writes (`403`). Default true
//!   without TOKEN_FILE, false with it; false needs TOKEN_FILE.
//! - **MAX_BODY** (integer): largest request body accepted, in bytes, at
//!   most 1073741824. Default 1048576.
//! - **TIMEOUT** (seconds): close connections idle this long. Default 30.
//! - **HEAD_TIMEOUT** (seconds): time from connecting to the end of the
//!   request head. Default 10.
//! - **MAX_CLIENTS** (integer): most connections at once. Default 256.
//! - **MAX_PER_ADDRESS** (integer): most connections from one client
//!   address. Default 64.
//! - **MAX_OUTPUT** (bytes): most response bytes waiting for all clients
//!   together; a response over 4 KiB that does not fit while others wait
//!   is answered 503. Default 67108864 (64 MiB).
//! - **VERBOSE** (boolean): print the URL the server listens on. Default
//!   false.
//!
//! ## Handlers
//! - `port` (read): the bound TCP port.
//! - `url` (read): the live page's address.
//! - `clients` (read): open connections.
//! - `requests` (read): requests answered so far.
//! - `writable` (read): whether writes are allowed (with the token).
//! - `evicted` (read): connections closed to make room for new ones.
//! - `refused` (read): connections answered 503 for want of room.
//! - `head_timeouts` (read): connections closed by HEAD_TIMEOUT.
//! - `refused_responses` (read): responses replaced by 503 for want of
//!   room (MAX_OUTPUT).
//!
//! ## Example
//! ```click
//! HTTPServer(8080);
//! HTTPServer(8080, TOKEN_FILE /run/user/1000/rclick-http.token);
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rclick_core::conf::Args;
use rclick_core::ctx::ElementView;
use rclick_core::element::{handlers_listing, hflags, HandlerSpec};
use rclick_core::ports::Mode;
use rclick_core::{
    ConfigResult, Ctx, Element, Handler, InitCtx, Interest, TimerId, Timestamp, WriteStart,
};
use serde_json::{json, Map, Value};

use super::server;

/// Largest request head (request line and headers).
pub const MAX_HEAD: usize = 16 << 10;
/// Default largest request body.
pub const DEFAULT_MAX_BODY: usize = 1 << 20;
/// The largest MAX_BODY accepted: 1 GiB.
pub const MAX_MAX_BODY: usize = 1 << 30;
/// Default most connections at once (MAX_CLIENTS).
pub const DEFAULT_MAX_CLIENTS: usize = 256;
/// Default most connections from one address (MAX_PER_ADDRESS).
pub const DEFAULT_MAX_PER_ADDRESS: usize = 64;
/// Default time a client has to send its whole request head
/// (HEAD_TIMEOUT).
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Default idle time after which a connection is closed (TIMEOUT).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default most response bytes waiting for all clients (MAX_OUTPUT).
pub const DEFAULT_MAX_OUTPUT: usize = 64 << 20;
/// Responses this small are queued whatever MAX_OUTPUT says.
const SMALL_RESPONSE: usize = 4 << 10;
/// Most handler names one `/api/handlers` request may ask for.
pub const MAX_NAMES: usize = 1000;
const MAX_HEADERS: usize = 64;
const READ_CHUNK: usize = 16 << 10;
const ACCEPTS_PER_CALL: usize = 32;
/// After a response, input is read and thrown away for this long (so the
/// client sees the response rather than a reset), at most this much.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 1 << 20;

const PAGE_HTML: &str = include_str!("liveview/index.html");
const PAGE_JS: &str = include_str!("liveview/live.js");
const PAGE_CSS: &str = include_str!("liveview/live.css");

/// Standard handlers never exported as numbers.
const META_HANDLERS: &[&str] = &["name", "class", "config", "ports", "handlers"];

/// The response to a write of handler `name`.
fn write_response(name: &str, r: Result<(), String>) -> Response {
    match r {
        Ok(()) => Response::json(200, &json!({"ok": true, "handler": name})),
        Err(e) => {
            let e = if e.trim().is_empty() {
                "error".to_string()
            } else {
                e.trim_end().to_string()
            };
            Response::error(400, &e)
        }
    }
}

/// Distinguishes router generations: each HTTPServer instance (hot swap
/// makes a new one) takes the next number.
static GENERATION: AtomicU64 = AtomicU64::new(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Reading the request.
    Request,
    /// The response is queued; when it is sent, half-close and linger.
    Respond,
    /// Response sent and write side shut: throwing input away until EOF.
    Linger,
}

struct Conn {
    stream: TcpStream,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    outpos: usize,
    phase: Phase,
    /// Time of the last progress (or, lingering, when it began).
    since: Timestamp,
    sent_continue: bool,
    eof: bool,
    /// The peer no longer takes output, or a fatal error happened.
    dead: bool,
    discarded: usize,
    peer: IpAddr,
    /// When the connection was accepted: the head is due HEAD_TIMEOUT
    /// later.
    opened: Timestamp,
    /// The request head has arrived whole.
    head_done: bool,
    /// A write being finished off the packet path (a `hotconfig` being
    /// prepared): its token, the handler name, and whether the request
    /// was a HEAD. The response waits for it.
    awaiting: Option<(u64, String, bool)>,
}

impl Conn {
    /// Still waiting for its request head: the connections a slowloris
    /// client holds, under HEAD_TIMEOUT.
    fn waiting_head(&self) -> bool {
        self.phase == Phase::Request && !self.head_done
    }

    /// Which connections go first when room is needed: those already
    /// answered (lingering), then unfinished requests, oldest first.
    /// Connections whose response is still being sent are never closed.
    fn eviction_rank(&self) -> Option<(u8, Timestamp)> {
        if self.awaiting.is_some() {
            return None;
        }
        match self.phase {
            Phase::Linger => Some((0, self.opened)),
            Phase::Request => Some((1, self.opened)),
            Phase::Respond => None,
        }
    }

    fn out_pending(&self) -> usize {
        self.out.len() - self.outpos
    }

    /// Reads what the socket has, keeping at most `limit` buffered (while
    /// lingering, throws it away).
    fn fill(&mut self, limit: usize) -> bool {
        let mut progressed = false;
        let mut buf = [0u8; READ_CHUNK];
        loop {
            let room = if self.phase == Phase::Linger {
                READ_CHUNK
            } else {
                limit.saturating_sub(self.inbuf.len()).min(READ_CHUNK)
            };
            if room == 0 || self.eof || self.dead {
                return progressed;
            }
            match self.stream.read(&mut buf[..room]) {
                Ok(0) => {
                    self.eof = true;
                    return progressed;
                }
                Ok(n) => {
                    progressed = true;
                    if self.phase == Phase::Linger {
                        self.discarded += n;
                        if self.discarded > LINGER_BYTES {
                            self.dead = true;
                        }
                    } else if self.phase == Phase::Request {
                        self.inbuf.extend_from_slice(&buf[..n]);
                    }
                    if n < room {
                        return progressed;
                    }
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => return progressed,
                    io::ErrorKind::Interrupted => continue,
                    _ => {
                        self.dead = true;
                        return progressed;
                    }
                },
            }
        }
    }

    /// Writes pending output until the socket would block.
    fn flush(&mut self) {
        while !self.dead && self.outpos < self.out.len() {
            match server::send(self.stream.as_raw_fd(), &self.out[self.outpos..]) {
                Ok(0) => break,
                Ok(n) => self.outpos += n,
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock => break,
                    io::ErrorKind::Interrupted => continue,
                    _ => self.dead = true,
                },
            }
        }
        if self.outpos == self.out.len() && !self.out.is_empty() {
            self.out = Vec::new();
            self.outpos = 0;
        }
    }
}

/// A response before serialization.
struct Response {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    allow: Option<&'static str>,
}

impl Response {
    fn json(status: u16, v: &Value) -> Response {
        let mut body = serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec());
        body.push(b'\n');
        Response {
            status,
            content_type: "application/json",
            body,
            allow: None,
        }
    }

    fn error(status: u16, msg: &str) -> Response {
        Response::json(status, &json!({"ok": false, "error": msg}))
    }

    fn text(status: u16, content_type: &'static str, body: &str) -> Response {
        Response {
            status,
            content_type,
            body: body.as_bytes().to_vec(),
            allow: None,
        }
    }

    fn with_allow(mut self, allow: &'static str) -> Response {
        self.allow = Some(allow);
        self
    }

    fn serialize(&self, head_only: bool) -> Vec<u8> {
        let mut s = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        if let Some(a) = self.allow {
            let _ = write!(s, "Allow: {a}\r\n");
        }
        s.push_str("\r\n");
        let mut v = s.into_bytes();
        if !head_only {
            v.extend_from_slice(&self.body);
        }
        v
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// What a parsed request head says.
struct Head {
    method: String,
    target: String,
    content_length: usize,
    chunked: bool,
    expect_continue: bool,
    host: Option<String>,
    origin: Option<String>,
    authorization: Option<String>,
    head_len: usize,
}

enum Parse {
    Partial,
    Head(Head),
    Error(u16, String),
}

fn parse_head(buf: &[u8]) -> Parse {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > MAX_HEAD {
                Parse::Error(431, "request head too large".into())
            } else {
                Parse::Partial
            };
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Parse::Error(431, "too many header fields".into())
        }
        Err(e) => return Parse::Error(400, format!("malformed request: {e}")),
    };
    if n > MAX_HEAD {
        return Parse::Error(431, "request head too large".into());
    }
    let mut head = Head {
        method: req.method.unwrap_or("").to_string(),
        target: req.path.unwrap_or("").to_string(),
        content_length: 0,
        chunked: false,
        expect_continue: false,
        host: None,
        origin: None,
        authorization: None,
        head_len: n,
    };
    let mut seen_length = false;
    for h in req.headers.iter() {
        let value = String::from_utf8_lossy(h.value).trim().to_string();
        if h.name.eq_ignore_ascii_case("content-length") {
            match value.parse::<usize>() {
                Ok(l) if !seen_length || l == head.content_length => head.content_length = l,
                _ => return Parse::Error(400, "bad Content-Length".into()),
            }
            seen_length = true;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if !value.eq_ignore_ascii_case("identity") {
                head.chunked = true;
            }
        } else if h.name.eq_ignore_ascii_case("expect") {
            if value.eq_ignore_ascii_case("100-continue") {
                head.expect_continue = true;
            }
        } else if h.name.eq_ignore_ascii_case("host") {
            head.host = Some(value);
        } else if h.name.eq_ignore_ascii_case("origin") {
            head.origin = Some(value);
        } else if h.name.eq_ignore_ascii_case("authorization") {
            head.authorization = Some(value);
        }
    }
    Parse::Head(head)
}

/// Decodes `%XX` escapes (and `+` as space in queries).
fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of query parameter `key`, decoded.
fn query_param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (percent_decode(k, true) == key).then(|| percent_decode(v, true))
    })
}

/// A handler value as a number, if it is one: the trimmed text, as
/// Prometheus and JSON accept it.
pub fn numeric_value(v: &str) -> Option<&str> {
    let t = v.trim();
    let first = t.bytes().next()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    if !t
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite()).map(|_| t)
}

fn json_number(t: &str) -> Value {
    if let Ok(i) = t.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(u) = t.parse::<u64>() {
        return Value::from(u);
    }
    t.parse::<f64>().map(Value::from).unwrap_or(Value::Null)
}

/// Escapes a Prometheus label value: backslash, double quote, newline.
pub fn escape_label_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `host` (a Host header, port included) names a loopback host.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, p)| {
            if p.bytes().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        })
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Splits `HOST[:PORT]` (HOST maybe `[IPV6]`): lowercased host without
/// brackets or trailing dot, and the port if given.
fn host_port(s: &str) -> (String, Option<u16>) {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']').unwrap_or((rest, ""));
        (h, after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (s, None),
        }
    };
    let port = port.map(|p| p.parse::<u16>().unwrap_or(0));
    (host.trim_end_matches('.').to_ascii_lowercase(), port)
}

/// Whether a request's `Origin` is this server as the browser reached it
/// (`Host`): same scheme-default port and host, where `localhost`,
/// `127.0.0.1` and `[::1]` count as the same host when the server is bound
/// to loopback.
fn same_origin(origin: &str, host: Option<&str>, loopback: bool) -> bool {
    let Some(o) = origin.trim().strip_prefix("http://") else {
        return false;
    };
    let Some(host) = host else {
        return false;
    };
    let (oh, op) = host_port(o.trim_end_matches('/'));
    let (hh, hp) = host_port(host);
    if op.unwrap_or(80) != hp.unwrap_or(80) || oh.is_empty() {
        return false;
    }
    oh == hh || (loopback && is_loopback_host(&oh) && is_loopback_host(&hh))
}

/// A fresh write token: 32 random bytes in hex.
fn random_token() -> Result<String, String> {
    let mut b = [0u8; 32];
    let mut f = std::fs::File::open("/dev/urandom").map_err(|e| format!("/dev/urandom: {e}"))?;
    f.read_exact(&mut b)
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(b.iter().fold(String::with_capacity(64), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    }))
}

/// Writes `text` to `path`, replacing it, as a file only its owner may
/// read (mode 0600, created anew so no older permissions survive).
pub fn write_private_file(path: &str, text: &str) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Compares secrets in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in b.iter().enumerate() {
        diff |= usize::from(x ^ a.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Parses `PORT` or `HOST:PORT`.
fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(p) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(format!("ADDR '{s}' should be PORT or HOST:PORT"));
    };
    let Ok(port) = port.parse::<u16>() else {
        return Err(format!("bad port in '{s}'"));
    };
    let ip = match host {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        "*" | "" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        h => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .map_err(|_| format!("bad host '{h}' (give an IP address or localhost)"))?,
    };
    Ok(SocketAddr::new(ip, port))
}

/// A handler a request names.
struct Target {
    elem: Option<usize>,
    name: String,
    flags: u16,
}

pub struct HTTPServer {
    addr: SocketAddr,
    read_only: bool,
    max_clients: usize,
    max_per_address: usize,
    head_timeout: Duration,
    /// TOKEN_FILE: where the write token is written at start.
    token_file: Option<String>,
    /// The write token (hex), made at initialize.
    token: Option<String>,
    /// Connections closed to make room, refused, or timed out in the head.
    evicted: u64,
    refused: u64,
    head_timeouts: u64,
    max_output: usize,
    refused_responses: u64,
    max_body: usize,
    timeout: Duration,
    verbose: bool,
    listener: Option<TcpListener>,
    bound: Option<SocketAddr>,
    conns: BTreeMap<RawFd, Conn>,
    timer: Option<TimerId>,
    timer_armed: bool,
    index: usize,
    decl: String,
    generation: u64,
    requests: u64,
    /// A connection taken out of `conns` while its request runs.
    busy_conn: bool,
    /// Set by `write_api` when a write is answered later (its token and
    /// handler name), for `try_request` to park the connection.
    deferred: Option<(u64, String)>,
}

impl Default for HTTPServer {
    fn default() -> Self {
        HTTPServer {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            read_only: true,
            max_clients: DEFAULT_MAX_CLIENTS,
            max_per_address: DEFAULT_MAX_PER_ADDRESS,
            head_timeout: DEFAULT_HEAD_TIMEOUT,
            token_file: None,
            token: None,
            evicted: 0,
            refused: 0,
            head_timeouts: 0,
            max_output: DEFAULT_MAX_OUTPUT,
            refused_responses: 0,
            max_body: DEFAULT_MAX_BODY,
            timeout: DEFAULT_TIMEOUT,
            verbose: false,
            listener: None,
            bound: None,
            conns: BTreeMap::new(),
            timer: None,
            timer_armed: false,
            index: usize::MAX,
            decl: String::new(),
            generation: 0,
            requests: 0,
            busy_conn: false,
            deferred: None,
        }
    }
}

impl HTTPServer {
    fn bind(&mut self) -> Result<RawFd, String> {
        let l = TcpListener::bind(self.addr).map_err(|e| format!("bind {}: {e}", self.addr))?;
        l.set_nonblocking(true).map_err(|e| format!("fcntl: {e}"))?;
        self.bound = l.local_addr().ok();
        let fd = l.as_raw_fd();
        self.listener = Some(l);
        Ok(fd)
    }

    fn watch_listener(&self, ctx: &ElementView, fd: RawFd) {
        server::watch_listener(ctx, fd, self.verbose, &self.decl, || match &self.token {
            // The URL the user opens carries the token in its fragment,
            // which browsers never send: the page keeps it for its writes.
            Some(t) if !self.read_only => format!(
                "serving {}#token={t} (writes need the token; it is also in {})",
                self.url(),
                self.token_file.as_deref().unwrap_or("")
            ),
            _ => format!("serving {} (read-only)", self.url()),
        });
    }

    /// Makes the write token and writes it to TOKEN_FILE, readable by the
    /// user only.
    fn make_token(&mut self) -> Result<(), String> {
        let Some(path) = &self.token_file else {
            return Ok(());
        };
        let token = random_token()?;
        write_private_file(path, &format!("{token}\n"))
            .map_err(|e| format!("TOKEN_FILE {path}: {e}"))?;
        self.token = Some(token);
        Ok(())
    }

    /// Whether the request carries the write token.
    fn authorized(&self, head: &Head) -> bool {
        match (&self.token, &head.authorization) {
            (Some(t), Some(a)) => {
                let given = a.strip_prefix("Bearer ").unwrap_or("").trim();
                constant_time_eq(given.as_bytes(), t.as_bytes())
            }
            _ => false,
        }
    }

    fn url(&self) -> String {
        let a = self.bound.unwrap_or(self.addr);
        let host = match a.ip() {
            IpAddr::V4(v) if v.is_unspecified() => "127.0.0.1".to_string(),
            IpAddr::V6(v) if v.is_unspecified() => "[::1]".to_string(),
            IpAddr::V4(v) => v.to_string(),
            IpAddr::V6(v) => format!("[{v}]"),
        };
        format!("http://{host}:{}/", a.port())
    }

    /// Timeouts are real time; under simulated time, whose clock jumps to
    /// the next timer, connections are not timed out.
    fn arm_timer(&mut self, ctx: &Ctx) {
        if !self.timer_armed && !self.conns.is_empty() && !ctx.is_simulated() {
            if let Some(t) = self.timer {
                ctx.schedule_timer_after(t, Timestamp::from_secs_f64(0.5));
                self.timer_armed = true;
            }
        }
    }

    fn accept_all(&mut self, ctx: &mut Ctx) {
        for _ in 0..ACCEPTS_PER_CALL {
            let Some(l) = &self.listener else { return };
            let Some((stream, peer)) =
                server::accepted(l.accept(), ctx, &self.decl, |e| e.to_string())
            else {
                return;
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let peer = peer.ip();
            if !self.make_room(peer, ctx) {
                // Say why (a short write to a new socket), then close.
                self.refused += 1;
                let r = Response::error(503, "too many connections; try again later");
                let _ = server::send(stream.as_raw_fd(), &r.serialize(false));
                continue;
            }
            let _ = stream.set_nodelay(true);
            let fd = stream.as_raw_fd();
            let c = Conn {
                stream,
                inbuf: Vec::new(),
                out: Vec::new(),
                outpos: 0,
                phase: Phase::Request,
                since: Timestamp::now_real(),
                sent_continue: false,
                eof: false,
                dead: false,
                discarded: 0,
                peer,
                opened: Timestamp::now_real(),
                head_done: false,
                awaiting: None,
            };
            ctx.add_select(fd, Interest::READ);
            self.conns.insert(fd, c);
        }
    }

    /// Makes room for a connection from `peer` within MAX_PER_ADDRESS and
    /// MAX_CLIENTS, closing a connection already answered or the oldest one
    /// whose request is unfinished (of that address, or of any) if need be.
    /// Whether there is room.
    fn make_room(&mut self, peer: IpAddr, ctx: &mut Ctx) -> bool {
        let from_peer = self.conns.values().filter(|c| c.peer == peer).count();
        if from_peer >= self.max_per_address && !self.evict_oldest(Some(peer), ctx) {
            return false;
        }
        if self.conns.len() >= self.max_clients && !self.evict_oldest(None, ctx) {
            return false;
        }
        true
    }

    fn evict_oldest(&mut self, peer: Option<IpAddr>, ctx: &mut Ctx) -> bool {
        let victim = self
            .conns
            .iter()
            .filter(|(_, c)| peer.is_none_or(|p| c.peer == p))
            .filter_map(|(&fd, c)| c.eviction_rank().map(|r| (r, fd)))
            .min()
            .map(|(_, fd)| fd);
        match victim {
            Some(fd) => {
                ctx.remove_select(fd);
                self.conns.remove(&fd);
                self.evicted += 1;
                true
            }
            None => false,
        }
    }

    /// Moves a connection on after I/O: answers a complete request,
    /// half-closes after the response, and chooses what to wait for (or
    /// closes it).
    fn advance(&mut self, mut c: Conn, ctx: &mut Ctx) {
        if c.phase == Phase::Request && !c.dead && c.awaiting.is_none() {
            self.try_request(&mut c, ctx);
        }
        c.flush();
        if c.phase == Phase::Respond && c.out_pending() == 0 && !c.dead {
            let _ = c.stream.shutdown(Shutdown::Write);
            c.phase = Phase::Linger;
            c.since = Timestamp::now_real();
            c.inbuf = Vec::new();
        }
        let fd = c.stream.as_raw_fd();
        let done = c.dead
            || (c.phase == Phase::Linger && c.eof)
            || (c.phase == Phase::Request && c.eof && c.inbuf.is_empty());
        if done {
            ctx.remove_select(fd);
            return;
        }
        let interest = Interest {
            read: !c.eof && (c.phase != Phase::Request || c.inbuf.len() < self.in_limit()),
            write: c.out_pending() > 0,
        };
        if !interest.read && !interest.write {
            ctx.remove_select(fd);
            if c.awaiting.is_some() {
                // Half-closed while its write is prepared: still answered.
                self.conns.insert(fd, c);
            }
            return;
        }
        ctx.add_select(fd, interest);
        self.conns.insert(fd, c);
        self.arm_timer(ctx);
    }

    fn in_limit(&self) -> usize {
        MAX_HEAD + self.max_body + 1
    }

    fn respond(&mut self, c: &mut Conn, r: Response, head_only: bool) {
        self.requests += 1;
        let mut bytes = r.serialize(head_only);
        // Responses waiting for slow readers are bounded in total.
        let waiting: usize = self.conns.values().map(Conn::out_pending).sum();
        if bytes.len() > SMALL_RESPONSE && waiting > 0 && waiting + bytes.len() > self.max_output {
            self.refused_responses += 1;
            let msg = format!(
                "response of {} bytes refused: {waiting} bytes of responses wait for \
                 slow clients (MAX_OUTPUT {}); try again later",
                bytes.len(),
                self.max_output
            );
            bytes = Response::error(503, &msg).serialize(head_only);
        }
        c.out.extend_from_slice(&bytes);
        c.phase = Phase::Respond;
        c.inbuf = Vec::new();
    }

    fn try_request(&mut self, c: &mut Conn, ctx: &mut Ctx) {
        let head = match parse_head(&c.inbuf) {
            Parse::Partial => {
                if c.eof && !c.inbuf.is_empty() {
                    self.respond(c, Response::error(400, "incomplete request"), false);
                }
                return;
            }
            Parse::Error(status, msg) => {
                self.respond(c, Response::error(status, &msg), false);
                return;
            }
            Parse::Head(h) => h,
        };
        c.head_done = true;
        let head_only = head.method == "HEAD";
        if head.chunked {
            self.respond(
                c,
                Response::error(411, "chunked bodies are not supported; send Content-Length"),
                head_only,
            );
            return;
        }
        if head.content_length > self.max_body {
            let msg = format!(
                "request body of {} bytes is larger than the limit of {} bytes",
                head.content_length, self.max_body
            );
            self.respond(c, Response::error(413, &msg), head_only);
            return;
        }
        let have = c.inbuf.len() - head.head_len;
        if have < head.content_length {
            if c.eof {
                self.respond(
                    c,
                    Response::error(400, "incomplete request body"),
                    head_only,
                );
            } else if head.expect_continue && !c.sent_continue {
                c.sent_continue = true;
                c.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
            }
            return;
        }
        let body = c.inbuf[head.head_len..head.head_len + head.content_length].to_vec();
        let r = self.route(&head, &body, ctx);
        if let Some((token, name)) = self.deferred.take() {
            // Answered in `write_finished`.
            c.awaiting = Some((token, name, head_only));
            return;
        }
        self.respond(c, r, head_only);
    }

    fn route(&mut self, head: &Head, body: &[u8], ctx: &mut Ctx) -> Response {
        let loopback = self.bound.unwrap_or(self.addr).ip().is_loopback();
        if loopback {
            if let Some(h) = &head.host {
                if !is_loopback_host(h) {
                    return Response::error(403, &format!("refused Host '{h}'"));
                }
            }
        }
        let (path, query) = head
            .target
            .split_once('?')
            .unwrap_or((head.target.as_str(), ""));
        let method = head.method.as_str();
        let get = method == "GET" || method == "HEAD";
        let static_page = |ctype: &'static str, text: &str| {
            if get {
                Response::text(200, ctype, text)
            } else {
                Response::error(405, "use GET").with_allow("GET, HEAD")
            }
        };
        match path {
            "/" | "/index.html" => static_page("text/html; charset=utf-8", PAGE_HTML),
            "/live.js" => static_page("text/javascript; charset=utf-8", PAGE_JS),
            "/live.css" => static_page("text/css; charset=utf-8", PAGE_CSS),
            "/api/router" if get => Response::json(200, &self.router_json(ctx)),
            "/api/counters" if get => Response::json(200, &self.counters_json(ctx)),
            "/api/handlers" if get => self.handlers_api(query, ctx),
            "/metrics" if get => Response::text(
                200,
                "text/plain; version=0.0.4; charset=utf-8",
                &self.metrics(ctx),
            ),
            "/api/router" | "/api/counters" | "/api/handlers" | "/metrics" => {
                Response::error(405, "use GET").with_allow("GET, HEAD")
            }
            _ => {
                if let Some(name) = path.strip_prefix("/api/handler/") {
                    let name = percent_decode(name, false);
                    match method {
                        "GET" | "HEAD" => self.read_api(&name, query, ctx),
                        "POST" | "PUT" => {
                            if let Some(o) = &head.origin {
                                if !same_origin(o, head.host.as_deref(), loopback) {
                                    return Response::error(
                                        403,
                                        &format!("cross-origin write from '{o}' refused"),
                                    );
                                }
                            }
                            self.write_api(&name, body, head, ctx)
                        }
                        _ => Response::error(405, "use GET to read, POST to write")
                            .with_allow("GET, HEAD, POST"),
                    }
                } else {
                    Response::error(404, &format!("no resource '{path}'"))
                }
            }
        }
    }

    /// This element's handlers (its own are invisible through the router
    /// while it runs).
    fn specs_of(&self, elem: Option<usize>, ctx: &Ctx) -> Vec<HandlerSpec> {
        let mut specs = server::handler_specs(ctx, elem, self.index, self.handlers());
        specs.retain(|s| s.flags & hflags::PRIVATE == 0);
        specs
    }

    /// Resolves `ELEMENT.HANDLER` (or a global `HANDLER`), or says why not
    /// (status 404).
    fn resolve(&self, full: &str, ctx: &Ctx) -> Result<Target, Response> {
        let canonical = full.strip_prefix('.').unwrap_or(full);
        let (elem, hname) = match canonical.split_once('.') {
            Some((ename, hname)) => match ctx.find_element(ename) {
                Some(i) if !ename.is_empty() => (Some(i), hname),
                _ => return Err(Response::error(404, &format!("no element named '{ename}'"))),
            },
            None => (None, canonical),
        };
        let spec = self
            .specs_of(elem, ctx)
            .into_iter()
            .find(|s| s.name == hname && s.flags & (hflags::READ | hflags::WRITE) != 0);
        match spec {
            Some(s) => Ok(Target {
                elem,
                name: hname.to_string(),
                flags: s.flags,
            }),
            None => Err(Response::error(404, &format!("no handler named '{full}'"))),
        }
    }

    fn read_target(
        &self,
        t: &Target,
        param: Option<&str>,
        ctx: &mut Ctx,
    ) -> Result<String, String> {
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

    fn read_api(&self, name: &str, query: &str, ctx: &mut Ctx) -> Response {
        let t = match self.resolve(name, ctx) {
            Ok(t) => t,
            Err(r) => return r,
        };
        if t.flags & hflags::READ == 0 {
            return Response::error(405, &format!("handler '{name}' is write-only"))
                .with_allow("POST");
        }
        let param = query_param(query, "param");
        match self.read_target(&t, param.as_deref(), ctx) {
            Ok(v) => Response::json(200, &json!({"ok": true, "handler": name, "value": v})),
            Err(e) => {
                let status = if param.is_some() { 400 } else { 500 };
                Response::error(status, &e)
            }
        }
    }

    fn write_api(&mut self, name: &str, body: &[u8], head: &Head, ctx: &mut Ctx) -> Response {
        let t = match self.resolve(name, ctx) {
            Ok(t) => t,
            Err(r) => return r,
        };
        if t.flags & hflags::WRITE == 0 {
            return Response::error(405, &format!("handler '{name}' is read-only"))
                .with_allow("GET, HEAD");
        }
        if self.read_only {
            let why = if self.token_file.is_none() {
                "this server is read-only: writes need a token (start rclick with \
                 --http-token FILE, or give HTTPServer a TOKEN_FILE)"
            } else {
                "this server is read-only (READONLY true)"
            };
            return Response::error(403, why);
        }
        if !self.authorized(head) {
            return Response::error(
                401,
                "this write needs the token: send 'Authorization: Bearer TOKEN' \
                 (the token is in the server's TOKEN_FILE, and in the URL it printed)",
            );
        }
        let value = String::from_utf8_lossy(body);
        match ctx.write_handler_start(t.elem, &t.name, &value) {
            WriteStart::Done(r) => write_response(name, r),
            WriteStart::Pending(token) => {
                self.deferred = Some((token, name.to_string()));
                Response::error(500, "answered later")
            }
        }
    }

    fn handlers_api(&self, query: &str, ctx: &mut Ctx) -> Response {
        let Some(names) = query_param(query, "names") else {
            return Response::error(400, "give the handlers as ?names=a.count,b.length");
        };
        let names: Vec<&str> = names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.len() > MAX_NAMES {
            return Response::error(400, &format!("at most {MAX_NAMES} handlers at once"));
        }
        let mut out = Map::new();
        for n in names {
            let v = match self.resolve(n, ctx) {
                Err(_)
                    if n.split_once('.')
                        .is_some_and(|(e, _)| ctx.find_element(e).is_none()) =>
                {
                    json!({"error": format!("no element named '{}'", n.split('.').next().unwrap_or(""))})
                }
                Err(_) => json!({"error": format!("no handler named '{n}'")}),
                Ok(t) if t.flags & hflags::READ == 0 => {
                    json!({"error": format!("handler '{n}' is write-only")})
                }
                Ok(t) => match self.read_target(&t, None, ctx) {
                    Ok(v) => json!({"value": v}),
                    Err(e) => json!({"error": e}),
                },
            };
            out.insert(n.to_string(), v);
        }
        Response::json(200, &json!({"handlers": out}))
    }

    fn handler_json(h: &HandlerSpec) -> Value {
        json!({
            "name": h.name,
            "flags": h.flag_string(),
            "read": h.flags & hflags::READ != 0,
            "write": h.flags & hflags::WRITE != 0,
            "param": h.flags & hflags::READ_PARAM != 0,
            "button": h.flags & hflags::BUTTON != 0,
            "checkbox": h.flags & hflags::CHECKBOX != 0,
        })
    }

    fn router_json(&self, ctx: &Ctx) -> Value {
        let ports = |v: &[(Mode, bool)]| -> Value {
            v.iter()
                .map(|(m, a)| {
                    json!({"mode": if *m == Mode::Pull { "pull" } else { "push" }, "agnostic": a})
                })
                .collect()
        };
        let mut elements = Vec::new();
        for i in 0..ctx.nelements() {
            let (ins, outs) = ctx.port_modes_at(i).unwrap_or_default();
            let handlers: Vec<Value> = self
                .specs_of(Some(i), ctx)
                .iter()
                .map(Self::handler_json)
                .collect();
            elements.push(json!({
                "index": i,
                "name": ctx.element_name_at(i).unwrap_or(""),
                "class": ctx.element_class_at(i).unwrap_or(""),
                "config": ctx.element_config_at(i).unwrap_or_default(),
                "inputs": ports(&ins),
                "outputs": ports(&outs),
                "handlers": handlers,
            }));
        }
        let connections: Vec<Value> = ctx
            .connections()
            .into_iter()
            .map(|((f, fp), (t, tp))| {
                json!({
                    "from": f, "from_name": ctx.element_name_at(f).unwrap_or(""), "from_port": fp,
                    "to": t, "to_name": ctx.element_name_at(t).unwrap_or(""), "to_port": tp,
                })
            })
            .collect();
        let globals: Vec<Value> = self
            .specs_of(None, ctx)
            .iter()
            .map(Self::handler_json)
            .collect();
        json!({
            "generation": self.generation,
            "elements": elements,
            "connections": connections,
            "global_handlers": globals,
        })
    }

    /// Every element read handler whose value is a number: (element index,
    /// handler name, number text).
    fn numeric_handlers(&self, ctx: &mut Ctx) -> Vec<(usize, String, String)> {
        let mut v = Vec::new();
        for i in 0..ctx.nelements() {
            for h in self.specs_of(Some(i), ctx) {
                let skip = hflags::READ_PARAM | hflags::DEPRECATED | hflags::PRIVATE;
                if h.flags & hflags::READ == 0
                    || h.flags & skip != 0
                    || META_HANDLERS.contains(&h.name.as_str())
                {
                    continue;
                }
                let t = Target {
                    elem: Some(i),
                    name: h.name.clone(),
                    flags: h.flags,
                };
                if let Ok(val) = self.read_target(&t, None, ctx) {
                    if let Some(n) = numeric_value(&val) {
                        v.push((i, h.name, n.to_string()));
                    }
                }
            }
        }
        v
    }

    fn counters_json(&self, ctx: &mut Ctx) -> Value {
        let mut elements = Map::new();
        for (i, h, n) in self.numeric_handlers(ctx) {
            let name = ctx.element_name_at(i).unwrap_or("").to_string();
            if let Value::Object(m) = elements
                .entry(name)
                .or_insert_with(|| Value::Object(Map::new()))
            {
                m.insert(h, json_number(&n));
            }
        }
        json!({"generation": self.generation, "elements": elements})
    }

    /// The Prometheus text exposition format (0.0.4).
    fn metrics(&self, ctx: &mut Ctx) -> String {
        let mut s = String::from(
            "# HELP rclick_handler Numeric element read handler values.\n\
             # TYPE rclick_handler gauge\n",
        );
        for (i, h, n) in self.numeric_handlers(ctx) {
            let _ = writeln!(
                s,
                "rclick_handler{{element=\"{}\",class=\"{}\",handler=\"{}\"}} {n}",
                escape_label_value(ctx.element_name_at(i).unwrap_or("")),
                escape_label_value(ctx.element_class_at(i).unwrap_or("")),
                escape_label_value(&h),
            );
        }
        s.push_str(
            "# HELP rclick_elements Elements in the running router.\n\
             # TYPE rclick_elements gauge\n",
        );
        let _ = writeln!(s, "rclick_elements {}", ctx.nelements());
        s
    }

    fn close_all(&mut self) {
        self.listener = None;
        for (_, mut c) in std::mem::take(&mut self.conns) {
            c.flush();
        }
    }
}

const HANDLERS: &[Handler<HTTPServer>] = &[
    Handler::read("port", |e, _| e.bound.unwrap_or(e.addr).port().to_string()),
    Handler::read("url", |e, _| e.url()),
    Handler::read("clients", |e, _| server::clients(&e.conns, e.busy_conn)),
    Handler::data("requests", |e| &e.requests),
    Handler::read("writable", |e, _| (!e.read_only).to_string()),
    Handler::data("evicted", |e| &e.evicted),
    Handler::data("refused", |e| &e.refused),
    Handler::data("head_timeouts", |e| &e.head_timeouts),
    Handler::data("refused_responses", |e| &e.refused_responses),
];

rclick_core::element_class!(HTTPServer);

impl Element for HTTPServer {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let addr: String = args.read_mp("ADDR");
        let read_only: Option<bool> = args.read("READONLY");
        let token_file: Option<String> = args.read("TOKEN_FILE");
        let max_body: usize = args.read("MAX_BODY").unwrap_or(DEFAULT_MAX_BODY);
        let timeout: Duration = args.read("TIMEOUT").unwrap_or(DEFAULT_TIMEOUT);
        let head_timeout: Duration = args.read("HEAD_TIMEOUT").unwrap_or(DEFAULT_HEAD_TIMEOUT);
        let max_clients: usize = args.read("MAX_CLIENTS").unwrap_or(DEFAULT_MAX_CLIENTS);
        let max_output: usize = args.read("MAX_OUTPUT").unwrap_or(DEFAULT_MAX_OUTPUT);
        let max_per_address: usize = args
            .read("MAX_PER_ADDRESS")
            .unwrap_or(DEFAULT_MAX_PER_ADDRESS);
        let verbose = args.read("VERBOSE").unwrap_or(false);
        let parsed = if addr.is_empty() {
            None
        } else {
            match parse_addr(&addr) {
                Ok(a) => Some(a),
                Err(e) => {
                    args.error(e);
                    None
                }
            }
        };
        if timeout.is_zero() {
            args.error("TIMEOUT must be positive");
        }
        if head_timeout.is_zero() {
            args.error("HEAD_TIMEOUT must be positive");
        }
        if max_clients == 0 || max_per_address == 0 {
            args.error("MAX_CLIENTS and MAX_PER_ADDRESS must be positive");
        }
        // A request is buffered whole: the head plus the body must fit in
        // memory (and their sum in a usize).
        if max_body > MAX_MAX_BODY {
            args.error(format!("MAX_BODY: at most {MAX_MAX_BODY} bytes"));
        }
        if read_only == Some(false) && token_file.is_none() {
            args.error("READONLY false needs TOKEN_FILE: every write must carry the token");
        }
        args.complete()?;
        self.read_only = read_only.unwrap_or(token_file.is_none());
        self.token_file = token_file;
        self.head_timeout = head_timeout;
        self.max_clients = max_clients;
        self.max_per_address = max_per_address;
        self.max_output = max_output;
        if let Some(a) = parsed {
            self.addr = a;
        }
        self.max_body = max_body;
        self.timeout = timeout;
        self.verbose = verbose;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.generation = GENERATION.fetch_add(1, Ordering::Relaxed);
        let started = server::start(ctx, "HTTPServer");
        self.decl = started.decl;
        self.index = started.index;
        self.timer = Some(started.timer);
        if started.successor {
            self.timer_armed = true;
            return Ok(());
        }
        self.make_token()?;
        let fd = self.bind()?;
        self.watch_listener(ctx, fd);
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<HTTPServer>() else {
            return false;
        };
        if self.listener.is_some() || old.listener.is_none() || self.addr != old.addr {
            return false;
        }
        self.listener = old.listener.take();
        self.bound = old.bound;
        self.conns = std::mem::take(&mut old.conns);
        self.requests = old.requests;
        self.evicted = old.evicted;
        self.refused = old.refused;
        self.head_timeouts = old.head_timeouts;
        self.refused_responses = old.refused_responses;
        // The same token file keeps the same token (the user's page holds
        // it); a new file gets a new one.
        if self.token_file.is_some() && self.token_file == old.token_file {
            self.token = old.token.clone();
        } else if let Err(e) = self.make_token() {
            ctx.chatter(&format!("{}: {e}", self.decl));
            self.read_only = true;
        }
        let listener = self.listener.as_ref().map(|l| l.as_raw_fd());
        server::rewatch(ctx, listener, &self.conns, |c| Interest {
            read: !c.eof,
            write: c.out_pending() > 0,
        });
        true
    }

    fn run_timer(&mut self, _timer: TimerId, ctx: &mut Ctx) {
        self.timer_armed = false;
        if self.listener.is_none() {
            // A hot-swap successor that no predecessor handed a listener
            // (and token) to: make the token now, as `initialize` does for
            // a first router.
            if self.token.is_none() && !self.read_only {
                if let Err(e) = self.make_token() {
                    ctx.chatter(&format!("{}: {e}", self.decl));
                    self.read_only = true;
                }
            }
            match self.bind() {
                Ok(fd) => self.watch_listener(ctx, fd),
                Err(e) => {
                    // Only a hot-swap successor binds here (a first router
                    // binds in `initialize` and fails to start): the old
                    // router is gone, so this one runs on and retries.
                    ctx.chatter(&format!(
                        "{}: {e}; the router runs on without it, retrying every {} s",
                        self.decl,
                        server::REBIND_INTERVAL_SECS
                    ));
                    if let Some(t) = self.timer {
                        self.timer_armed = true;
                        ctx.schedule_timer_after(
                            t,
                            Timestamp::from_secs_f64(server::REBIND_INTERVAL_SECS),
                        );
                    }
                    return;
                }
            }
        }
        let now = Timestamp::now_real();
        let idle = Timestamp::from_secs_f64(self.timeout.as_secs_f64());
        let linger = Timestamp::from_secs_f64(LINGER.as_secs_f64());
        // Slow request heads: 408, then closed, however steadily bytes come.
        let head = Timestamp::from_duration(self.head_timeout);
        let late: Vec<RawFd> = self
            .conns
            .iter()
            .filter(|(_, c)| c.waiting_head() && now >= c.opened + head)
            .map(|(&fd, _)| fd)
            .collect();
        for fd in late {
            if let Some(c) = self.conns.remove(&fd) {
                self.head_timeouts += 1;
                let r = Response::error(408, "request head not received in time (HEAD_TIMEOUT)");
                let _ = server::send(c.stream.as_raw_fd(), &r.serialize(false));
                ctx.remove_select(fd);
            }
        }
        let expired: Vec<RawFd> = self
            .conns
            .iter()
            .filter(|(_, c)| c.awaiting.is_none())
            .filter(|(_, c)| {
                let limit = if c.phase == Phase::Linger {
                    linger
                } else {
                    idle
                };
                now >= c.since + limit
            })
            .map(|(&fd, _)| fd)
            .collect();
        for fd in expired {
            ctx.remove_select(fd);
            self.conns.remove(&fd);
        }
        self.arm_timer(ctx);
    }

    fn selected(&mut self, fd: RawFd, readable: bool, _writable: bool, ctx: &mut Ctx) {
        if self.listener.as_ref().is_some_and(|l| l.as_raw_fd() == fd) {
            self.accept_all(ctx);
            self.arm_timer(ctx);
            return;
        }
        let Some(mut c) = server::take_conn(&mut self.conns, fd, ctx) else {
            return;
        };
        let before = c.out_pending();
        if readable && c.fill(self.in_limit()) && c.phase != Phase::Linger {
            c.since = Timestamp::now_real();
        }
        c.flush();
        if c.out_pending() < before && c.phase != Phase::Linger {
            c.since = Timestamp::now_real();
        }
        self.busy_conn = true;
        self.advance(c, ctx);
        self.busy_conn = false;
    }

    fn write_finished(&mut self, token: u64, result: Result<(), String>, ctx: &mut Ctx) {
        let Some(fd) = self
            .conns
            .iter()
            .find(|(_, c)| c.awaiting.as_ref().is_some_and(|a| a.0 == token))
            .map(|(&fd, _)| fd)
        else {
            // The client has gone.
            return;
        };
        let Some(mut c) = self.conns.remove(&fd) else {
            return;
        };
        let Some((_, name, head_only)) = c.awaiting.take() else {
            return;
        };
        self.respond(&mut c, write_response(&name, result), head_only);
        c.since = Timestamp::now_real();
        self.advance(c, ctx);
    }

    fn cleanup(&mut self) {
        self.close_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(numeric_value("42\n"), Some("42"));
        assert_eq!(numeric_value(" -1.5e3 "), Some("-1.5e3"));
        assert_eq!(
            numeric_value("18446744073709551615"),
            Some("18446744073709551615")
        );
        assert_eq!(numeric_value("inf"), None);
        assert_eq!(numeric_value("NaN"), None);
        assert_eq!(numeric_value("true"), None);
        assert_eq!(numeric_value("1.2.3.4"), None);
        assert_eq!(numeric_value(""), None);
        assert_eq!(numeric_value("10 20"), None);
    }

    #[test]
    fn label_escapes() {
        assert_eq!(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }

    #[test]
    fn addresses() {
        assert_eq!(
            parse_addr("8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            parse_addr("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse().unwrap()
        );
        assert_eq!(
            parse_addr("localhost:81").unwrap(),
            "127.0.0.1:81".parse().unwrap()
        );
        assert_eq!(parse_addr("[::1]:82").unwrap(), "[::1]:82".parse().unwrap());
        assert_eq!(parse_addr("*:83").unwrap(), "0.0.0.0:83".parse().unwrap());
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("99999").is_err());
        assert!(parse_addr("x").is_err());
    }

    #[test]
    fn hosts() {
        assert!(is_loopback_host("127.0.0.1:8080"));
        assert!(is_loopback_host("localhost"));
        assert!(is_loopback_host("[::1]:80"));
        assert!(!is_loopback_host("evil.example:8080"));
        assert!(!is_loopback_host("10.0.0.1"));
    }

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%2Eb+c%", true), "a.b c%");
        assert_eq!(percent_decode("%zz%4", false), "%zz%4");
        assert_eq!(
            query_param("x=1&names=a.count%2Cb.length", "names").as_deref(),
            Some("a.count,b.length")
        );
    }

    #[test]
    fn heads() {
        match parse_head(b"POST /x HTTP/1.1\r\nContent-Length: 5\r\nHost: a\r\n\r\nhello") {
            Parse::Head(h) => {
                assert_eq!(h.method, "POST");
                assert_eq!(h.content_length, 5);
                assert_eq!(h.host.as_deref(), Some("a"));
            }
            _ => panic!("expected a head"),
        }
        assert!(matches!(parse_head(b"GET / HTTP/1.1\r\n"), Parse::Partial));
        assert!(matches!(
            parse_head(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            Parse::Error(400, _)
        ));
        assert!(matches!(
            parse_head(b"\x01\x02 / HTTP/1.1\r\n\r\n"),
            Parse::Error(400, _)
        ));
    }
}
