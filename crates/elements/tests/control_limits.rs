//! ControlSocket against hostile clients (issue 13, items 7 and 8, and
//! "who may write"): idle clients cannot lock operators out, a full server
//! says so, buffered bytes are bounded per client and in total, error
//! replies are bounded, and SECRET_FILE mode requires AUTH.
//!
//! Limits are made small through keywords so the tests are quick; one
//! test runs at the default scale (300 connections).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rclick_core::RouterOptions;
use rclick_elements::testing::{config_errors_with, RouterThread};

const TIMEOUT: Duration = Duration::from_secs(10);

fn random_base() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix = nanos ^ (std::process::id().wrapping_mul(2_654_435_761));
    20000 + (mix % 30000) as u16
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "rclick-ctl-{tag}-{}-{}",
        std::process::id(),
        random_base()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Starts `config` (BASE replaced by a random port) with the TCP socket
/// `cs`, or reads `port_handler` for a Unix one.
fn start(config: &str, hotswap: bool) -> RouterThread {
    let text = config.replace("BASE", &random_base().to_string());
    let opts = RouterOptions {
        hotswap,
        capture_chatter: true,
        ..Default::default()
    };
    RouterThread::start(&text, opts, "cs.port", TIMEOUT)
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

struct Client {
    r: BufReader<Box<dyn Stream>>,
}

impl Client {
    fn tcp(port: u16) -> Client {
        let c = Self::tcp_raw(port);
        c.greeted()
    }

    /// Connected, greeting not read yet.
    fn tcp_raw(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        Client {
            r: BufReader::new(Box::new(s)),
        }
    }

    fn unix(path: &std::path::Path) -> Client {
        let s = UnixStream::connect(path).expect("connect unix");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        Client {
            r: BufReader::new(Box::new(s)),
        }
        .greeted()
    }

    fn greeted(mut self) -> Client {
        assert_eq!(self.line(), "Click::ControlSocket/1.3");
        self
    }

    fn send(&mut self, bytes: &[u8]) {
        let w = self.r.get_mut();
        w.write_all(bytes).expect("send");
        w.flush().expect("flush");
    }

    fn line(&mut self) -> String {
        let mut buf = Vec::new();
        self.r.read_until(b'\n', &mut buf).expect("read line");
        assert!(buf.ends_with(b"\r\n"), "not a CRLF line: {buf:?}");
        buf.truncate(buf.len() - 2);
        String::from_utf8(buf).expect("utf-8")
    }

    fn reply(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        loop {
            let l = self.line();
            let last = l.as_bytes().get(3) == Some(&b' ');
            v.push(l);
            if last {
                return v;
            }
        }
    }

    fn cmd(&mut self, line: &str) -> Vec<String> {
        self.send(format!("{line}\r\n").as_bytes());
        self.reply()
    }

    fn data(&mut self) -> Vec<u8> {
        let l = self.line();
        let n: usize = l
            .strip_prefix("DATA ")
            .unwrap_or_else(|| panic!("expected DATA, got {l:?}"))
            .parse()
            .unwrap();
        let mut buf = vec![0; n];
        self.r.read_exact(&mut buf).expect("data");
        buf
    }

    fn read(&mut self, h: &str) -> String {
        let r = self.cmd(&format!("READ {h}"));
        assert_eq!(r, vec![format!("200 Read handler '{h}' OK")]);
        String::from_utf8(self.data()).unwrap()
    }

    fn count(&mut self, h: &str) -> u64 {
        self.read(h).trim().parse().unwrap()
    }

    /// Whether the server closed the connection.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0) | Err(_))
    }
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn idle_clients_make_room_for_a_new_one() {
    let r = start(
        "cs :: ControlSocket(TCP, BASE+, MAX_CLIENTS 8); Idle -> c :: Counter -> Discard;",
        false,
    );
    let mut idle: Vec<Client> = (0..8).map(|_| Client::tcp(r.port)).collect();
    std::thread::sleep(Duration::from_millis(1100));
    // Before the fix, this connection was closed without a word.
    let mut op = Client::tcp(r.port);
    assert_eq!(op.read("c.count"), "0");
    assert_eq!(op.count("cs.idle_closed"), 1);
    assert_eq!(op.count("cs.rejected"), 0);
    // The evicted one (the oldest) was told why.
    let l = idle[0].line();
    assert!(
        l.starts_with("590 Connection closed: idle"),
        "evicted client got {l:?}"
    );
    assert!(idle[0].closed());
    assert_eq!(idle[1].read("c.count"), "0");
}

#[test]
fn a_full_server_says_so() {
    let r = start(
        "cs :: ControlSocket(TCP, BASE+, MAX_CLIENTS 4); Idle -> c :: Counter -> Discard;",
        false,
    );
    // Four clients that have just talked: none idle for a second.
    let mut busy: Vec<Client> = (0..4).map(|_| Client::tcp(r.port)).collect();
    let mut extra = Client::tcp(r.port);
    assert_eq!(
        extra.line(),
        "590 Too many connections (4 open, MAX_CLIENTS 4); try again later"
    );
    assert!(extra.closed());
    assert_eq!(busy[0].count("cs.rejected"), 1);
    assert_eq!(busy[0].count("cs.clients"), 4);
    for c in &mut busy {
        assert_eq!(c.read("c.count"), "0");
    }
}

#[test]
fn idle_timeout_spares_active_clients() {
    let r = start(
        "cs :: ControlSocket(TCP, BASE+, IDLE_TIMEOUT 1); Idle -> c :: Counter -> Discard;",
        false,
    );
    let mut idle = Client::tcp(r.port);
    let mut active = Client::tcp(r.port);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        assert_eq!(active.read("c.count"), "0");
        std::thread::sleep(Duration::from_millis(100));
    }
    let l = idle.line();
    assert_eq!(l, "590 Connection closed: idle for 1 s (IDLE_TIMEOUT)");
    assert!(idle.closed());
    assert_eq!(active.count("cs.idle_closed"), 1);
    assert_eq!(active.count("cs.clients"), 1);
}

/// Issue 13 item 7 at its own scale: 300 idle connections, then an
/// operator.
#[test]
fn three_hundred_idle_connections_do_not_lock_out_the_operator() {
    let r = start(
        "cs :: ControlSocket(TCP, BASE+); Idle -> c :: Counter -> Discard;",
        false,
    );
    // Each is greeted; the last 44 are refused with a reply (or, if
    // connecting took over a second, make room by closing idle ones).
    let conns: Vec<Client> = (0..300).map(|_| Client::tcp(r.port)).collect();
    std::thread::sleep(Duration::from_millis(1100));
    let mut op = Client::tcp(r.port);
    assert_eq!(op.read("c.count"), "0");
    assert_eq!(op.count("cs.clients"), 256);
    let rejected = op.count("cs.rejected");
    let closed = op.count("cs.idle_closed");
    assert_eq!(
        rejected + closed,
        45,
        "{rejected} rejected, {closed} closed"
    );
    assert!(closed >= 1);
    drop(conns);
}

/// The handler `s.get v` returns a value of `size` bytes.
fn big_value(c: &mut Client, size: usize) {
    let mut cmd = format!("WRITEDATA s.set {}\r\nv ", size + 2).into_bytes();
    cmd.extend(std::iter::repeat_n(b'x', size));
    c.send(&cmd);
    assert_eq!(c.reply(), vec!["200 Write handler 's.set' OK"]);
}

/// Clients that send READs of a big value and never read the replies.
fn lazy_clients(path: &std::path::Path, n: usize, reads: usize) -> Vec<UnixStream> {
    (0..n)
        .map(|_| {
            let s = UnixStream::connect(path).unwrap();
            s.set_write_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let _ = (&s).write_all(&b"READ s.get v\r\n".repeat(reads));
            s
        })
        .collect()
}

fn settle(c: &mut Client, h: &str) -> u64 {
    // Let the server run every command it will take.
    let mut last = u64::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(150));
        let v = c.count(h);
        if v == last {
            return v;
        }
        last = v;
    }
}

#[test]
fn replies_to_lazy_clients_are_bounded_in_total() {
    let dir = tempdir("lazy");
    let path = dir.join("cs.sock");
    let limit = 2_000_000u64;
    let r = RouterThread::start(
        &format!(
            "cs :: ControlSocket(UNIX, {}, MAX_BUFFERED {limit}); s :: Script(TYPE PASSIVE); Idle -> c :: Counter -> Discard;",
            path.display()
        ),
        RouterOptions::default(),
        "c.count",
        TIMEOUT,
    );
    let mut good = Client::unix(&path);
    big_value(&mut good, 600_000);
    // Eight clients each ask for 40 copies (24 MB) and read nothing.
    let lazy = lazy_clients(&path, 8, 40);
    settle(&mut good, "cs.buffered");
    let buffered = good.count("cs.buffered");
    assert!(
        buffered <= limit + 8 * 4096,
        "{buffered} bytes buffered, limit {limit}"
    );
    assert!(good.count("cs.refused_replies") > 0);
    // Small reads still work; a big one is answered, data or a clear error.
    assert_eq!(good.read("c.count"), "0");
    let r1 = good.cmd("READ s.get v");
    if r1[0].starts_with("200") {
        assert_eq!(good.data().len(), 600_000);
    } else {
        assert_eq!(r1[0], "590-Read handler 's.get' error:");
        assert!(
            r1[1].starts_with("590 reply of 600000 bytes refused"),
            "{r1:?}"
        );
    }
    // A lazy client that finally reads sees whole replies, then errors.
    let mut l0 = Client {
        r: BufReader::new(Box::new(lazy[0].try_clone().unwrap())),
    }
    .greeted();
    let mut saw_error = false;
    for _ in 0..40 {
        let rep = l0.reply();
        if rep[0].starts_with("200") {
            assert_eq!(l0.data().len(), 600_000);
        } else {
            assert!(rep.last().unwrap().contains("refused"), "{rep:?}");
            saw_error = true;
        }
    }
    let _ = saw_error;
    drop(l0);
    drop(lazy);
    wait_until("lazy clients gone", || good.count("cs.clients") == 1);
    assert_eq!(good.count("cs.buffered"), 0);
    drop(r);
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 13 item 8 at the default bound: 20 clients reading a 4 MiB value
/// and never reading replies held 20 x 4 MiB before; now at most 64 MiB.
#[test]
fn default_bound_holds_for_twenty_lazy_clients() {
    use rclick_elements::userlevel::controlsocket::DEFAULT_MAX_BUFFERED;
    let dir = tempdir("lazy20");
    let path = dir.join("cs.sock");
    let r = RouterThread::start(
        &format!(
            "cs :: ControlSocket(UNIX, {}); s :: Script(TYPE PASSIVE); Idle -> c :: Counter -> Discard;",
            path.display()
        ),
        RouterOptions::default(),
        "c.count",
        TIMEOUT,
    );
    let mut good = Client::unix(&path);
    big_value(&mut good, 4 << 20);
    let lazy = lazy_clients(&path, 20, 4);
    settle(&mut good, "cs.buffered");
    let buffered = good.count("cs.buffered") as usize;
    assert!(
        buffered <= DEFAULT_MAX_BUFFERED + 20 * 4096,
        "{buffered} bytes buffered"
    );
    assert!(good.count("cs.refused_replies") > 0);
    assert_eq!(good.read("c.count"), "0");
    drop(lazy);
    wait_until("lazy clients gone", || good.count("cs.clients") == 1);
    drop(r);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn partial_input_is_bounded_in_total() {
    let limit = 1_000_000u64;
    let r = start(
        &format!(
            "cs :: ControlSocket(TCP, BASE+, MAX_BUFFERED {limit}); s :: Script(TYPE PASSIVE);"
        ),
        false,
    );
    // Four clients start 10 MB writes and send 900 KB of each.
    let writers: Vec<TcpStream> = (0..4)
        .map(|_| {
            let s = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
            s.set_write_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut m = b"WRITEDATA s.set 10000000\r\nv ".to_vec();
            m.extend(std::iter::repeat_n(b'y', 900_000));
            let _ = (&s).write_all(&m);
            s
        })
        .collect();
    let mut c = Client::tcp(r.port);
    settle(&mut c, "cs.buffered");
    let buffered = c.count("cs.buffered");
    assert!(
        buffered <= limit + 5 * (64 << 10),
        "{buffered} bytes buffered, limit {limit}"
    );
    assert!(c.read("s.name").starts_with('s'));
    drop(writers);
    wait_until("writers gone", || c.count("cs.clients") == 1);
    assert_eq!(c.count("cs.buffered"), 0);
}

#[test]
fn error_replies_are_bounded() {
    let r = start(
        "cs :: ControlSocket(TCP, BASE+); Idle -> c :: Counter -> Discard;",
        true,
    );
    let mut c = Client::tcp(r.port);
    // Errors that quote long names (the parser gives up after some).
    let bad: String = (0..4000)
        .map(|i| format!("x{i} :: NoSuchClass{}{i};\n", "y".repeat(2000)))
        .collect();
    let mut cmd = format!("WRITEDATA hotconfig {}\r\n", bad.len()).into_bytes();
    cmd.extend_from_slice(bad.as_bytes());
    c.send(&cmd);
    let rep = c.reply();
    let bytes: usize = rep.iter().map(|l| l.len() + 2).sum();
    assert!(
        rep[0].starts_with("520-Write handler 'hotconfig' error"),
        "{:?}",
        &rep[..2]
    );
    assert!(bytes < 70 << 10, "{bytes} bytes of error reply");
    assert!(
        rep.last().unwrap().ends_with("more lines not shown)"),
        "{:?}",
        rep.last()
    );
    assert_eq!(c.read("c.count"), "0");
}

fn secret_file(dir: &std::path::Path, text: &str, mode: u32) -> PathBuf {
    let f = dir.join(format!("secret-{mode:o}"));
    std::fs::write(&f, text).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
    f
}

#[test]
fn secret_mode_requires_auth() {
    let dir = tempdir("secret");
    let f = secret_file(&dir, "0123456789abcdef0123\n", 0o600);
    let r = start(
        &format!(
            "cs :: ControlSocket(TCP, BASE+, SECRET_FILE {}); Idle -> c :: Counter -> Discard;",
            f.display()
        ),
        false,
    );
    // The greeting is Click's; nothing runs before AUTH.
    let mut c = Client::tcp(r.port);
    assert_eq!(
        c.cmd("READ c.count"),
        vec!["530 Authentication required (send AUTH SECRET first)"]
    );
    assert_eq!(
        c.cmd("WRITE c.reset"),
        vec!["530 Authentication required (send AUTH SECRET first)"]
    );
    let help = c.cmd("HELP");
    assert_eq!(
        help.last().unwrap(),
        "200 AUTH secret             authenticate (SECRET_FILE)"
    );
    assert_eq!(
        c.cmd("AUTH 0123456789abcdef0123"),
        vec!["200 Authenticated"]
    );
    assert_eq!(c.read("c.count"), "0");
    // A wrong secret ends the connection.
    let mut bad = Client::tcp(r.port);
    assert_eq!(
        bad.cmd("AUTH 0123456789abcdef0124"),
        vec!["530 Authentication failed"]
    );
    assert!(bad.closed());
    let mut bad = Client::tcp(r.port);
    assert_eq!(bad.cmd("AUTH"), vec!["530 Authentication failed"]);
    assert!(bad.closed());
    drop(r);
    // Without SECRET_FILE, AUTH is unknown, as in Click.
    let r = start("cs :: ControlSocket(TCP, BASE+);", false);
    let mut c = Client::tcp(r.port);
    assert_eq!(c.cmd("AUTH x"), vec!["501 Command 'AUTH' unimplemented"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_limits_and_secret_files() {
    let dir = tempdir("badsecret");
    let open = secret_file(&dir, "0123456789abcdef0123\n", 0o644);
    let short = secret_file(&dir, "short\n", 0o600);
    for (conf, msg) in [
        (
            "ControlSocket(TCP, 1, MAX_CLIENTS 0)".to_string(),
            "MAX_CLIENTS must be positive".to_string(),
        ),
        (
            "ControlSocket(TCP, 1, MAX_BUFFERED 10)".into(),
            "MAX_BUFFERED must be at least".into(),
        ),
        (
            format!("ControlSocket(TCP, 1, SECRET_FILE {})", open.display()),
            "readable by others (mode 644)".into(),
        ),
        (
            format!("ControlSocket(TCP, 1, SECRET_FILE {})", short.display()),
            "at least 16 characters".into(),
        ),
        (
            "ControlSocket(TCP, 1, SECRET_FILE /nonexistent/x)".into(),
            "No such file or directory".into(),
        ),
    ] {
        let err = config_errors_with(&conf, &RouterOptions::default());
        assert!(err.contains(&msg), "{conf}: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Idleness is real time: under simulated time (whose clock jumps to the
/// next timer) an idle client is not timed out at once.
#[test]
fn simulated_time_does_not_cut_off_clients() {
    let text =
        "cs :: ControlSocket(TCP, BASE+, IDLE_TIMEOUT 0.3); Idle -> c :: Counter -> Discard;"
            .replace("BASE", &random_base().to_string());
    let opts = RouterOptions {
        simtime: Some(rclick_core::time::DEFAULT_SIMTIME_START),
        ..Default::default()
    };
    let r = RouterThread::start(&text, opts, "cs.port", TIMEOUT);
    let mut c = Client::tcp(r.port);
    // Idle past IDLE_TIMEOUT in real time too: with a timeout timer under
    // simulated time (which fires at once, again and again), the sweep
    // would close it. (150 ms, as before, was within the timeout either
    // way, so the test could not fail.)
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(c.read("c.count"), "0");
    assert_eq!(c.count("cs.idle_closed"), 0);
}

/// SECRET_FILE mode: clients that have not authenticated cannot lock out
/// those who can by talking to a full server (an empty line now and then).
/// At MAX_CLIENTS, a new connection closes the oldest unauthenticated
/// connection, whether or not it has been idle a second; authenticated
/// clients that keep talking are kept.
#[test]
fn unauthenticated_talkers_cannot_lock_out_the_operator() {
    let dir = tempdir("lockout");
    let f = secret_file(&dir, "0123456789abcdef0123\n", 0o600);
    let r = start(
        &format!(
            "cs :: ControlSocket(TCP, BASE+, SECRET_FILE {}, MAX_CLIENTS 4); \
             Idle -> c :: Counter -> Discard;",
            f.display()
        ),
        false,
    );
    let mut op = Client::tcp(r.port);
    assert_eq!(
        op.cmd("AUTH 0123456789abcdef0123"),
        vec!["200 Authenticated"]
    );
    // Three who do not know the secret and keep talking (an empty line
    // runs nothing but is activity).
    let mut talkers: Vec<Client> = (0..3).map(|_| Client::tcp(r.port)).collect();
    for t in talkers.iter_mut().rev() {
        t.send(b"\r\n");
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(op.count("cs.clients"), 4);
    // Before the fix: "590 Too many connections", however long it tried.
    let mut op2 = Client::tcp(r.port);
    assert_eq!(
        op2.cmd("AUTH 0123456789abcdef0123"),
        vec!["200 Authenticated"]
    );
    assert_eq!(op2.read("c.count"), "0");
    assert_eq!(op2.count("cs.rejected"), 0);
    assert_eq!(op2.count("cs.idle_closed"), 1);
    // The first talker (the oldest, though it talked last) made room, and
    // was told why.
    let l = talkers[0].line();
    assert!(l.starts_with("590 Connection closed: "), "{l:?}");
    assert!(talkers[0].closed());
    // More connections close the other talkers, then each other; the
    // authenticated clients stay.
    let _more: Vec<Client> = (0..4).map(|_| Client::tcp(r.port)).collect();
    assert_eq!(op.count("cs.idle_closed"), 5);
    assert_eq!(op2.read("c.count"), "0");
    assert_eq!(op.count("cs.rejected"), 0);
    let _ = std::fs::remove_dir_all(dir);
}
