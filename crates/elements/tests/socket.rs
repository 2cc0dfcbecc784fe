//! Socket over real loopback and Unix-domain sockets: routers run in a
//! background thread (real time) and the tests talk to them with std
//! sockets; the gateway test echoes a trace through a separate Python
//! process.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rclick_core::{Router, RouterOptions};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

const TIMEOUT: Duration = Duration::from_secs(10);

/// What a router thread hands back when it stops.
struct Finished {
    chatter: Vec<String>,
    /// The `after` handlers' values, in order.
    values: Vec<String>,
}

/// A router running in its own thread.
struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Finished>>,
    /// The `before` handlers' values, read after initialization.
    before: Vec<String>,
    after: Vec<String>,
}

fn build(text: &str) -> Result<Router, String> {
    build_opts(text, false)
}

fn build_opts(text: &str, hotswap: bool) -> Result<Router, String> {
    let opts = RouterOptions {
        capture_chatter: true,
        hotswap,
        ..Default::default()
    };
    rclick_elements::testing::try_from_config_with(text, &opts).map_err(|e| e.join("\n"))
}

impl Running {
    /// Starts `config`; reads the `before` handlers once it is
    /// initialized, and the `after` handlers when it is stopped.
    fn start(config: &str, before: &[&str], after: &[&str]) -> Running {
        let text = config.to_string();
        let before_h: Vec<String> = before.iter().map(|s| s.to_string()).collect();
        let after_h: Vec<String> = after.iter().map(|s| s.to_string()).collect();
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut router = match build(&text) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return Finished {
                        chatter: Vec::new(),
                        values: Vec::new(),
                    };
                }
            };
            let vals: Vec<String> = before_h
                .iter()
                .map(|h| router.read_handler(h, None).unwrap_or_else(|e| e))
                .collect();
            let _ = tx.send(Ok((router.stop_flag(), vals)));
            router.run();
            let values = after_h
                .iter()
                .map(|h| {
                    router
                        .read_handler(h, None)
                        .unwrap_or_else(|e| e)
                        .trim()
                        .to_string()
                })
                .collect();
            let chatter = router.take_chatter();
            router.cleanup();
            Finished { chatter, values }
        });
        let (stop, before) = rx
            .recv_timeout(TIMEOUT)
            .expect("router thread")
            .unwrap_or_else(|e| panic!("router failed: {e}"));
        Running {
            stop,
            thread: Some(thread),
            before,
            after: after.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Stops the router; returns the `after` values and its chatter.
    fn finish(mut self) -> Finished {
        self.stop.store(true, Ordering::Relaxed);
        let f = self
            .thread
            .take()
            .map(|t| t.join().expect("router thread panicked"))
            .expect("thread");
        assert_eq!(f.values.len(), self.after.len());
        f
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `127.0.0.1:PORT` -> PORT.
fn port_of(addr: &str) -> u16 {
    addr.trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("bad address {addr:?}"))
}

/// A fresh directory for Unix socket files, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "rclick-socket-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads exactly `n` bytes (or fails after the timeout).
fn read_n(s: &mut impl Read, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf).expect("read echo");
    buf
}

/// Whether anything arrives on `s` within `d` (false on timeout).
fn tcp_gets_data_within(s: &mut TcpStream, d: Duration) -> bool {
    s.set_read_timeout(Some(d)).unwrap();
    let mut b = [0u8; 1];
    let got = matches!(s.read(&mut b), Ok(n) if n > 0);
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    got
}

fn tcp_client(port: u16) -> TcpStream {
    let s =
        TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), TIMEOUT).expect("connect");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s
}

/// Payloads of assorted sizes, each distinct.
fn payloads(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            (0..(1 + i * 97 % 1400))
                .map(|j| (i * 31 + j) as u8)
                .collect()
        })
        .collect()
}

// ------------------------------------------------------------------ UDP

#[test]
fn udp_server_echoes_to_the_last_sender() {
    let r = Running::start(
        "s :: Socket(UDP, 127.0.0.1, 0) -> c :: Counter -> q :: Queue -> s;",
        &["s.local_address"],
        &["s.received", "s.sent", "s.drops", "c.count"],
    );
    let port = port_of(&r.before[0]);
    let a = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    a.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut buf = vec![0u8; 4096];
    for p in payloads(20) {
        a.send_to(&p, (Ipv4Addr::LOCALHOST, port)).unwrap();
        let (n, from) = a.recv_from(&mut buf).expect("echo");
        assert_eq!(from.port(), port, "the echo comes from the Socket");
        assert_eq!(&buf[..n], &p[..]);
    }
    // A second sender becomes the peer.
    let b = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    b.set_read_timeout(Some(TIMEOUT)).unwrap();
    b.send_to(b"second", (Ipv4Addr::LOCALHOST, port)).unwrap();
    let n = b.recv(&mut buf).expect("echo to the second sender");
    assert_eq!(&buf[..n], b"second");
    let f = r.finish();
    assert_eq!(f.values, ["21", "21", "0", "21"], "{:?}", f.chatter);
}

#[test]
fn udp_client_sends_to_its_address_and_emits_replies() {
    // The peer stands in for the remote program; what it sends back comes
    // out of the Socket and goes, through a second client Socket, to an
    // observer.
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    peer.set_read_timeout(Some(TIMEOUT)).unwrap();
    let obs = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    obs.set_read_timeout(Some(TIMEOUT)).unwrap();
    let config = format!(
        "InfiniteSource(DATA \"ping\", LIMIT 3, STOP false)
           -> s :: Socket(UDP, 127.0.0.1, {}, CLIENT true)
           -> o :: Socket(UDP, 127.0.0.1, {});",
        peer.local_addr().unwrap().port(),
        obs.local_addr().unwrap().port()
    );
    let r = Running::start(&config, &[], &["s.sent", "s.received", "o.sent"]);
    let mut buf = [0u8; 64];
    let mut from = None;
    for _ in 0..3 {
        let (n, f) = peer.recv_from(&mut buf).expect("datagram from the router");
        assert_eq!(&buf[..n], b"ping");
        from = Some(f);
    }
    let from = from.unwrap();
    peer.send_to(b"reply one", from).unwrap();
    peer.send_to(b"reply two", from).unwrap();
    let n = obs.recv(&mut buf).expect("first reply forwarded");
    assert_eq!(&buf[..n], b"reply one");
    let n = obs.recv(&mut buf).expect("second reply forwarded");
    assert_eq!(&buf[..n], b"reply two");
    let f = r.finish();
    assert_eq!(f.values, ["3", "2", "2"], "{:?}", f.chatter);
}

#[test]
fn udp_client_with_zero_address_uses_the_destination_annotation() {
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    peer.set_read_timeout(Some(TIMEOUT)).unwrap();
    let config = format!(
        "InfiniteSource(DATA \"to-anno\", LIMIT 2, STOP false) -> SetIPAddress(127.0.0.1)
           -> s :: Socket(UDP, 0.0.0.0, {});",
        peer.local_addr().unwrap().port()
    );
    let r = Running::start(&config, &[], &["s.sent", "s.drops"]);
    let mut buf = [0u8; 64];
    for _ in 0..2 {
        let n = peer
            .recv(&mut buf)
            .expect("datagram sent to the annotation");
        assert_eq!(&buf[..n], b"to-anno");
    }
    let f = r.finish();
    assert_eq!(f.values, ["2", "0"]);
}

#[test]
fn udp_datagrams_longer_than_snaplen_are_cut_with_extra_length() {
    let obs = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    obs.set_read_timeout(Some(TIMEOUT)).unwrap();
    let config = format!(
        "s :: Socket(UDP, 127.0.0.1, 0, SNAPLEN 10) -> t :: Truncate(100)
           -> o :: Socket(UDP, 127.0.0.1, {});",
        obs.local_addr().unwrap().port()
    );
    let r = Running::start(&config, &["s.local_address"], &["s.received"]);
    let port = port_of(&r.before[0]);
    let a = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    a.send_to(b"0123456789abcdefghij", (Ipv4Addr::LOCALHOST, port))
        .unwrap();
    let mut buf = [0u8; 64];
    let n = obs.recv(&mut buf).expect("cut datagram");
    assert_eq!(&buf[..n], b"0123456789");
    let f = r.finish();
    assert_eq!(f.values, ["1"]);
}

#[test]
fn udp_echo_steady_state_allocates_nothing() {
    udp_echo_allocations("");
}

/// With ALLOW and DENY tables too: the verdict for the peer's address is
/// looked up once, not per datagram.
#[test]
fn udp_echo_with_allow_and_deny_allocates_nothing() {
    udp_echo_allocations(
        "deny :: RadixIPLookup(0.0.0.0/0 0); Idle -> deny -> Discard;
         allow :: DirectIPLookup(127.0.0.0/8 0); Idle -> allow -> Discard;",
    );
}

fn udp_echo_allocations(tables: &str) {
    // Router and peer share this thread, so the allocation count is the
    // router's (and the peer's, which allocates nothing either). The
    // InfiniteSource keeps the driver busy so it never sleeps in poll(2).
    let acl = if tables.is_empty() {
        ""
    } else {
        ", ALLOW allow, DENY deny"
    };
    let mut router = build(&format!(
        "{tables}
         s :: Socket(UDP, 127.0.0.1, 0{acl}) -> c :: Counter -> q :: Queue -> s;
         InfiniteSource -> Discard;"
    ))
    .unwrap();
    let port = port_of(&router.read_handler("s.local_address", None).unwrap());
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    peer.set_nonblocking(true).unwrap();
    let dest = std::net::SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let payload = [7u8; 600];
    let mut buf = [0u8; 2048];
    let mut round = |router: &mut Router| -> usize {
        for _ in 0..16 {
            peer.send_to(&payload, dest).unwrap();
        }
        let mut got = 0;
        for _ in 0..100 {
            router.run_limited(16);
            while let Ok(n) = peer.recv(&mut buf) {
                assert_eq!(n, payload.len());
                got += 1;
            }
            if got == 16 {
                break;
            }
        }
        got
    };
    for _ in 0..20 {
        round(&mut router);
    }
    let a0 = allocations();
    let mut got = 0;
    for _ in 0..100 {
        got += round(&mut router);
    }
    let a1 = allocations();
    assert_eq!(got, 1600);
    assert_eq!(a1 - a0, 0, "heap allocations while echoing 1600 datagrams");
}

// ------------------------------------------------------------------ TCP

#[test]
fn tcp_server_echoes_and_accepts_the_next_client_after_a_disconnect() {
    let r = Running::start(
        "s :: Socket(TCP, 127.0.0.1, 0) -> q :: Queue -> s;",
        &["s.local_address"],
        &["s.connections", "s.connected"],
    );
    let port = port_of(&r.before[0]);

    // Client 1: bytes come back in order, whatever the segmentation.
    let mut c1 = tcp_client(port);
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let writer = {
        let mut w = c1.try_clone().unwrap();
        let d = data.clone();
        std::thread::spawn(move || w.write_all(&d).unwrap())
    };
    let echoed = read_n(&mut c1, data.len());
    writer.join().unwrap();
    assert!(echoed == data, "echoed stream differs");

    // Client 2 connects while client 1 is served: Click serves one
    // connection at a time, so it waits in the backlog.
    let mut c2 = tcp_client(port);
    c2.write_all(b"waiting").unwrap();
    assert!(
        !tcp_gets_data_within(&mut c2, Duration::from_millis(300)),
        "a second connection was served at the same time"
    );
    // Client 1 hangs up: the server accepts client 2.
    drop(c1);
    assert_eq!(read_n(&mut c2, 7), b"waiting");
    c2.write_all(b" more").unwrap();
    assert_eq!(read_n(&mut c2, 5), b" more");
    drop(c2);

    let mut c3 = tcp_client(port);
    c3.write_all(b"third").unwrap();
    assert_eq!(read_n(&mut c3, 5), b"third");
    let f = r.finish();
    assert_eq!(f.values, ["3", "true"], "{:?}", f.chatter);
}

#[test]
fn tcp_peer_disconnects_do_not_stall_the_server() {
    let r = Running::start(
        "s :: Socket(TCP, 127.0.0.1, 0, VERBOSE true) -> q :: Queue(100000) -> s;
         RatedSource(RATE 200) -> c :: Counter -> Discard;",
        &["s.local_address"],
        &["c.count", "s.connections"],
    );
    let port = port_of(&r.before[0]);
    let t0 = Instant::now();
    for round in 0..5 {
        // Write a lot and vanish without reading: the router's writes fail
        // (EPIPE / ECONNRESET) or its reads see the end.
        let mut c = tcp_client(port);
        let big = vec![round as u8; 300_000];
        let _ = c.write_all(&big);
        let _ = c.shutdown(std::net::Shutdown::Both);
        drop(c);
    }
    // Abrupt reset (SO_LINGER 0 is not in std; close with unread data).
    {
        let mut c = tcp_client(port);
        c.write_all(b"echo me").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(c);
    }
    // A well-behaved client is still served.
    let mut ok = tcp_client(port);
    ok.write_all(b"still alive").unwrap();
    assert_eq!(read_n(&mut ok, 11), b"still alive");
    let elapsed = t0.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    let f = r.finish();
    assert_eq!(f.values[1], "7", "{:?}", f.chatter);
    // The rest of the router kept running (RatedSource at 200/s).
    let count: u64 = f.values[0].parse().unwrap();
    let expect = (elapsed.as_secs_f64() + 0.2) * 200.0;
    assert!(
        count as f64 > expect * 0.5,
        "RatedSource stalled: {count} packets in {elapsed:?}"
    );
    assert!(
        f.chatter.iter().any(|l| l.contains("closed connection")),
        "{:?}",
        f.chatter
    );
}

#[test]
fn tcp_client_connects_and_does_not_reconnect() {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let config = format!("s :: Socket(TCP, 127.0.0.1, {port}, CLIENT true) -> q :: Queue -> s;");
    let r = Running::start(&config, &["s.connected"], &["s.connections", "s.connected"]);
    assert_eq!(r.before[0].trim(), "true");
    let (mut c, _) = l.accept().expect("the router connects");
    c.set_read_timeout(Some(TIMEOUT)).unwrap();
    c.write_all(b"hello over tcp").unwrap();
    assert_eq!(read_n(&mut c, 14), b"hello over tcp");
    drop(c);
    // As in Click, a client does not connect again.
    l.set_nonblocking(true).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        matches!(l.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "the client reconnected"
    );
    let f = r.finish();
    assert_eq!(f.values, ["1", "false"]);
}

#[test]
fn tcp_client_local_address_and_push_input() {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    // LOCAL_ADDR/LOCAL_PORT make it a client even with an output.
    let config = format!(
        "InfiniteSource(DATA \"abc\", LIMIT 4, STOP false)
           -> s :: Socket(TCP, 127.0.0.1, {port}, 127.0.0.1, 0)
           -> Discard;"
    );
    let r = Running::start(&config, &["s.local_address"], &["s.sent"]);
    let (mut c, from) = l.accept().expect("the router connects");
    assert_eq!(from.port(), port_of(&r.before[0]));
    c.set_read_timeout(Some(TIMEOUT)).unwrap();
    assert_eq!(read_n(&mut c, 12), b"abcabcabcabc");
    let f = r.finish();
    assert_eq!(f.values, ["4"]);
}

/// Reads until nothing arrives within the stream's read timeout.
fn read_until_quiet(s: &mut impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(e) => panic!("read: {e}"),
        }
    }
    out
}

fn periodic_digits(v: &[u8]) -> bool {
    v.iter()
        .enumerate()
        .all(|(i, &b)| b == b'0' + (i % 10) as u8)
}

#[test]
fn tcp_slow_reader_pull_input_waits_and_push_input_drops() {
    let data = "0123456789".repeat(100);
    for (pull, n) in [(true, 3000usize), (false, 3000)] {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        let middle = if pull { "-> Queue(5000)" } else { "" };
        let config = format!(
            "InfiniteSource(DATA \"{data}\", LIMIT {n}, STOP false) {middle}
               -> s :: Socket(TCP, 127.0.0.1, {port}, SNDBUF 65536)
             RatedSource(RATE 200) -> c :: Counter -> Discard;"
        );
        let r = Running::start(&config, &[], &["s.sent", "s.drops", "c.count"]);
        let (mut c, _) = l.accept().unwrap();
        // Not reading: the socket fills up and the router must not block.
        std::thread::sleep(Duration::from_millis(400));
        c.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let got = read_until_quiet(&mut c);
        let f = r.finish();
        let sent: usize = f.values[0].parse().unwrap();
        let drops: usize = f.values[1].parse().unwrap();
        let ticks: usize = f.values[2].parse().unwrap();
        assert!(
            ticks >= 100,
            "the router stalled: {ticks} RatedSource packets"
        );
        assert_eq!(sent + drops, n, "pull {pull}");
        assert_eq!(got.len(), sent * data.len(), "pull {pull}");
        assert!(
            periodic_digits(&got),
            "bytes lost or repeated (pull {pull})"
        );
        if pull {
            assert_eq!(drops, 0);
        } else {
            assert!(drops > 0, "push input: expected drops with a full socket");
        }
    }
}

#[test]
fn unix_dgram_full_receiver_holds_the_pull_input() {
    let dir = TempDir::new("full");
    let peer_path = dir.path("peer.sock");
    let peer = UnixDatagram::bind(&peer_path).unwrap();
    let n = 3000;
    let config = format!(
        "InfiniteSource(DATA \"x\", LIMIT {n}, STOP false) -> Queue(5000)
           -> s :: Socket(UNIX_DGRAM, {peer_path})
         RatedSource(RATE 200) -> c :: Counter -> Discard;"
    );
    let r = Running::start(&config, &[], &["s.sent", "s.drops", "c.count"]);
    // The receiver's queue fills; the Socket retries later without
    // losing packets or blocking the router.
    std::thread::sleep(Duration::from_millis(400));
    peer.set_read_timeout(Some(Duration::from_millis(1000)))
        .unwrap();
    let mut buf = [0u8; 16];
    let mut got = 0;
    while got < n {
        match peer.recv(&mut buf) {
            Ok(1) => got += 1,
            Ok(k) => panic!("datagram of {k} bytes"),
            Err(_) => break,
        }
    }
    let f = r.finish();
    assert_eq!(got, n, "{:?}", f.values);
    assert_eq!(f.values[..2], [n.to_string(), "0".to_string()]);
    let ticks: usize = f.values[2].parse().unwrap();
    assert!(
        ticks >= 60,
        "the router stalled: {ticks} RatedSource packets"
    );
}

#[test]
fn tcp_allow_and_deny_tables() {
    let r = Running::start(
        "deny :: RadixIPLookup(0.0.0.0/0 0); Idle -> deny -> Discard;
         allow :: RadixIPLookup(10.0.0.0/8 0); Idle -> allow -> Discard;
         s :: Socket(TCP, 127.0.0.1, 0, ALLOW allow, DENY deny) -> q :: Queue -> s;
         allow2 :: RadixIPLookup(127.0.0.1/32 0); Idle -> allow2 -> Discard;
         t :: Socket(TCP, 127.0.0.1, 0, ALLOW allow2, DENY deny) -> Queue -> t;",
        &["s.local_address", "t.local_address"],
        &["s.connections", "t.connections"],
    );
    // Denied: the connection is closed at once.
    let mut c = tcp_client(port_of(&r.before[0]));
    let _ = c.write_all(b"x");
    let mut b = [0u8; 4];
    assert!(
        matches!(c.read(&mut b), Ok(0) | Err(_)),
        "a denied client was served"
    );
    // Allowed by ALLOW before DENY is consulted.
    let mut c = tcp_client(port_of(&r.before[1]));
    c.write_all(b"in").unwrap();
    assert_eq!(read_n(&mut c, 2), b"in");
    let f = r.finish();
    assert_eq!(f.values, ["0", "1"]);
}

// ------------------------------------------------------------------ Unix

#[test]
fn unix_stream_server_echoes_and_removes_its_file() {
    let dir = TempDir::new("unix");
    let path = dir.path("s.sock");
    // A stale socket file from an earlier run is replaced.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(Path::new(&path).exists());
    let r = Running::start(
        &format!("s :: Socket(UNIX, \"{path}\") -> q :: Queue -> s;"),
        &["s.local_address"],
        &["s.connections"],
    );
    assert_eq!(r.before[0].trim(), path);
    for round in 0..2 {
        let mut c = UnixStream::connect(&path).expect("connect");
        c.set_read_timeout(Some(TIMEOUT)).unwrap();
        let msg = format!("unix round {round}");
        c.write_all(msg.as_bytes()).unwrap();
        assert_eq!(read_n(&mut c, msg.len()), msg.as_bytes());
    }
    let f = r.finish();
    assert_eq!(f.values, ["2"]);
    assert!(!Path::new(&path).exists(), "socket file left behind");
}

#[test]
fn unix_dgram_server_and_client() {
    let dir = TempDir::new("dgram");
    let srv = dir.path("srv.sock");
    let peer_path = dir.path("peer.sock");
    let cli = dir.path("cli.sock");
    let obs_path = dir.path("obs.sock");
    let peer = UnixDatagram::bind(&peer_path).unwrap();
    peer.set_read_timeout(Some(TIMEOUT)).unwrap();
    let obs = UnixDatagram::bind(&obs_path).unwrap();
    obs.set_read_timeout(Some(TIMEOUT)).unwrap();
    // s: an echo server. c: a client bound to cli.sock, sending to the
    // peer; what the peer sends back goes to the observer.
    let config = format!(
        "s :: Socket(UNIX_DGRAM, {srv}) -> Queue -> s;
         InfiniteSource(DATA \"dgram\", LIMIT 2, STOP false)
           -> c :: Socket(UNIX_DGRAM, {peer_path}, {cli})
           -> o :: Socket(UNIX_DGRAM, {obs_path});"
    );
    let r = Running::start(&config, &[], &["s.received", "c.sent", "c.received"]);
    let me = UnixDatagram::bind(dir.path("me.sock")).unwrap();
    me.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut buf = [0u8; 256];
    for p in payloads(5) {
        let p = &p[..p.len().min(200)];
        me.send_to(p, &srv).unwrap();
        let n = me.recv(&mut buf).expect("echo");
        assert_eq!(&buf[..n], p);
    }
    for _ in 0..2 {
        let (n, from) = peer.recv_from(&mut buf).expect("from the client");
        assert_eq!(&buf[..n], b"dgram");
        assert_eq!(from.as_pathname(), Some(Path::new(&cli)));
    }
    peer.send_to(b"back", &cli).unwrap();
    let n = obs.recv(&mut buf).expect("forwarded reply");
    assert_eq!(&buf[..n], b"back");
    let f = r.finish();
    assert_eq!(f.values, ["5", "2", "1"]);
    assert!(!Path::new(&srv).exists() && !Path::new(&cli).exists());
}

// ------------------------------------------------------------------ ALLOW/DENY

#[test]
fn udp_allow_and_deny_follow_table_changes() {
    let mut r = build(
        "deny :: RadixIPLookup(0.0.0.0/0 0); Idle -> deny -> Discard;
         allow :: RadixIPLookup(127.0.0.1/32 0); Idle -> allow -> Discard;
         s :: Socket(UDP, 127.0.0.1, 0, ALLOW allow, DENY deny) -> c :: Counter -> q :: Queue -> s;",
    )
    .unwrap();
    let port = port_of(&r.read_handler("s.local_address", None).unwrap());
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    peer.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    // Whether `msg` is echoed within `wait`.
    let mut echoes = |r: &mut Router, msg: &[u8], wait: Duration| -> bool {
        peer.send_to(msg, (Ipv4Addr::LOCALHOST, port)).unwrap();
        let end = Instant::now() + wait;
        while Instant::now() < end {
            r.run_limited(4);
            if let Ok(n) = peer.recv(&mut buf) {
                assert_eq!(&buf[..n], msg);
                return true;
            }
        }
        false
    };
    let quick = Duration::from_millis(300);
    assert!(echoes(&mut r, b"allowed", TIMEOUT));
    assert!(echoes(&mut r, b"allowed twice", TIMEOUT));
    // The remembered verdict does not outlive the route.
    r.write_handler("allow.remove", "127.0.0.1/32").unwrap();
    assert!(!echoes(&mut r, b"denied", quick));
    assert!(!echoes(&mut r, b"denied twice", quick));
    r.write_handler("allow.add", "127.0.0.0/8 0").unwrap();
    assert!(echoes(&mut r, b"allowed again", TIMEOUT));
    r.write_handler("allow.flush", "").unwrap();
    r.write_handler("deny.flush", "").unwrap();
    assert!(echoes(&mut r, b"no tables", TIMEOUT));
    assert_eq!(r.read_handler("c.count", None).unwrap().trim(), "4");
}

// ------------------------------------------------------------------ accept failures

const EMFILE_CHILD: &str = "RCLICK_SOCKET_TEST_EMFILE_CHILD";

fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A TCP server out of descriptors (EMFILE) neither spins on its readable
/// listener nor floods messages: it stops watching the listener, reports
/// once, and accepts the waiting client once descriptors are free again.
/// The descriptor table is filled in a child process (this test run again
/// alone), so that no other test is starved of descriptors.
#[test]
fn tcp_server_out_of_descriptors_backs_off() {
    if std::env::var_os(EMFILE_CHILD).is_some() {
        emfile_child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "tcp_server_out_of_descriptors_backs_off",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(EMFILE_CHILD, "1")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("EMFILE child passed"),
        "child failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

fn emfile_child() {
    let r = Running::start(
        "s :: Socket(TCP, 127.0.0.1, 0) -> q :: Queue -> s;",
        &["s.local_address"],
        &["s.connections"],
    );
    let port = port_of(&r.before[0]);
    // A low limit, so that filling the table is quick.
    let open_now = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(64) as libc::rlim_t;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid rlimit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_cur.min(open_now + 32);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    let mut hold = Vec::with_capacity(4096);
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => hold.push(f),
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => break,
            Err(e) => panic!("open: {e}"),
        }
    }
    // One descriptor for the client; then the table is full and the
    // router's accept(2) fails with EMFILE.
    assert!(hold.pop().is_some(), "no descriptor to spare");
    let mut c = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect");
    let cpu0 = process_cpu();
    std::thread::sleep(Duration::from_millis(700));
    let cpu = process_cpu() - cpu0;
    drop(hold);
    c.set_read_timeout(Some(TIMEOUT)).unwrap();
    c.write_all(b"accepted at last").unwrap();
    assert_eq!(read_n(&mut c, 16), b"accepted at last");
    let f = r.finish();
    let reports: Vec<&String> = f
        .chatter
        .iter()
        .filter(|l| l.contains("accept: Too many open files"))
        .collect();
    assert_eq!(
        reports.len(),
        1,
        "{} accept reports, the first: {:?}",
        reports.len(),
        reports.first()
    );
    assert!(
        reports[0].contains("not accepting for 100 ms"),
        "{:?}",
        reports[0]
    );
    assert!(
        f.chatter
            .iter()
            .any(|l| l.contains("accepting connections again")),
        "{:?}",
        f.chatter
    );
    assert_eq!(f.values, ["1"]);
    assert!(
        cpu < Duration::from_millis(200),
        "the router spun: {cpu:?} of CPU in 700 ms"
    );
    println!("EMFILE child passed (CPU {cpu:?} in 700 ms)");
}

// ------------------------------------------------------------------ hot swap

/// Runs `r` until `done` (or fails after TIMEOUT).
fn pump(r: &mut Router, what: &str, mut done: impl FnMut(&mut Router) -> bool) {
    let end = Instant::now() + TIMEOUT;
    while !done(r) {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        r.run_limited(4);
    }
}

/// Writes `msg` on the non-blocking stream `c` and runs `r` until it comes
/// back.
fn echo_via(r: &mut Router, c: &mut (impl Read + Write), msg: &[u8]) {
    c.write_all(msg).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    pump(r, "the echo", |_| {
        match c.read(&mut buf) {
            Ok(0) => panic!("connection closed"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
        got.len() >= msg.len()
    });
    assert_eq!(got, msg);
}

fn swap(r: &mut Router, text: &str) {
    r.hotswap(text)
        .unwrap_or_else(|d| panic!("hot swap refused: {d:?}"));
}

fn handler(r: &mut Router, h: &str) -> String {
    r.read_handler(h, None).unwrap().trim().to_string()
}

/// A port nothing listens on (just now).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn tcp_server_keeps_its_port_and_connection_across_hot_swap() {
    let mut r = build_opts("s :: Socket(TCP, 127.0.0.1, 0) -> q :: Queue -> s;", true).unwrap();
    let port = port_of(&handler(&mut r, "s.local_address"));
    let mut c = tcp_client(port);
    c.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut c, b"before the swap");
    // The port given explicitly now, and another path through the router.
    swap(
        &mut r,
        &format!("s :: Socket(TCP, 127.0.0.1, {port}) -> Null -> q :: Queue -> s;"),
    );
    assert_eq!(port_of(&handler(&mut r, "s.local_address")), port);
    assert_eq!(handler(&mut r, "s.connected"), "true");
    echo_via(&mut r, &mut c, b"after the swap");
    // Port 0 again: the same listener still.
    swap(&mut r, "s :: Socket(TCP, 127.0.0.1, 0) -> q :: Queue -> s;");
    assert_eq!(port_of(&handler(&mut r, "s.local_address")), port);
    echo_via(&mut r, &mut c, b"after the second swap");
    assert_eq!(handler(&mut r, "s.connections"), "1");
    // The listener is served after the swaps: the next client is accepted
    // once this one hangs up.
    drop(c);
    let mut c2 = tcp_client(port);
    c2.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut c2, b"the next client");
    assert_eq!(handler(&mut r, "s.connections"), "2");
    let chatter = r.take_chatter();
    assert!(chatter.is_empty(), "{chatter:?}");
}

#[test]
fn tcp_client_keeps_its_connection_across_hot_swap() {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    let config = format!("c :: Socket(TCP, 127.0.0.1, {port}, CLIENT true) -> q :: Queue -> c;");
    let mut r = build_opts(&config, true).unwrap();
    let (mut a, _) = l.accept().expect("the router connects");
    a.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut a, b"client before");
    swap(&mut r, &config.replace("-> q", "-> Null -> q"));
    echo_via(&mut r, &mut a, b"client after");
    // No second connection was made.
    l.set_nonblocking(true).unwrap();
    assert!(
        matches!(l.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
        "the successor connected again"
    );
    assert_eq!(handler(&mut r, "c.connections"), "1");
}

#[test]
fn udp_socket_keeps_its_port_and_peer_across_hot_swap() {
    let mut r = build_opts("u :: Socket(UDP, 127.0.0.1, 0) -> q :: Queue -> u;", true).unwrap();
    let port = port_of(&handler(&mut r, "u.local_address"));
    let peer = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    peer.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let mut echo = |r: &mut Router, msg: &[u8]| {
        peer.send_to(msg, (Ipv4Addr::LOCALHOST, port)).unwrap();
        let mut n = 0;
        pump(r, "the datagram echo", |_| match peer.recv(&mut buf) {
            Ok(k) => {
                n = k;
                true
            }
            Err(_) => false,
        });
        assert_eq!(&buf[..n], msg);
    };
    echo(&mut r, b"udp before");
    swap(
        &mut r,
        "u :: Socket(UDP, 127.0.0.1, 0) -> Null -> q :: Queue -> u;",
    );
    assert_eq!(port_of(&handler(&mut r, "u.local_address")), port);
    // The last sender is still where replies go.
    assert_eq!(
        port_of(&handler(&mut r, "u.remote_address")),
        peer.local_addr().unwrap().port()
    );
    echo(&mut r, b"udp after");
    assert_eq!(handler(&mut r, "u.received"), "2");
}

#[test]
fn unix_servers_keep_their_files_across_hot_swap() {
    use std::os::unix::fs::MetadataExt;
    let dir = TempDir::new("swap");
    let path = dir.path("s.sock");
    let dpath = dir.path("d.sock");
    let config = format!(
        "s :: Socket(UNIX, {path}) -> q :: Queue -> s;
         d :: Socket(UNIX_DGRAM, {dpath}) -> dq :: Queue -> d;"
    );
    let mut r = build_opts(&config, true).unwrap();
    let ino = |p: &str| std::fs::metadata(p).expect("socket file").ino();
    let (ino_s, ino_d) = (ino(&path), ino(&dpath));
    let mut c = UnixStream::connect(&path).unwrap();
    c.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut c, b"unix before");
    swap(&mut r, &config.replace("-> q", "-> Null -> q"));
    assert_eq!((ino(&path), ino(&dpath)), (ino_s, ino_d));
    echo_via(&mut r, &mut c, b"unix after");
    let me = UnixDatagram::bind(dir.path("me.sock")).unwrap();
    me.set_nonblocking(true).unwrap();
    me.send_to(b"dgram after", &dpath).unwrap();
    let mut buf = [0u8; 64];
    let mut n = 0;
    pump(&mut r, "the datagram echo", |_| match me.recv(&mut buf) {
        Ok(k) => {
            n = k;
            true
        }
        Err(_) => false,
    });
    assert_eq!(&buf[..n], b"dgram after");
    r.cleanup();
    drop(r);
    assert!(
        !Path::new(&path).exists() && !Path::new(&dpath).exists(),
        "socket files left behind"
    );
}

#[test]
fn a_server_without_a_predecessor_binds_after_the_swap() {
    let (p1, p2) = (free_port(), free_port());
    let mut r = build_opts(
        &format!("s :: Socket(TCP, 127.0.0.1, {p1}) -> q :: Queue -> s;"),
        true,
    )
    .unwrap();
    // A new name: the old router holds the port until the swap is done.
    swap(
        &mut r,
        &format!("t :: Socket(TCP, 127.0.0.1, {p1}) -> q :: Queue -> t;"),
    );
    pump(&mut r, "t to bind", |r| {
        handler(r, "t.local_address") == format!("127.0.0.1:{p1}")
    });
    let mut c = tcp_client(p1);
    c.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut c, b"renamed");
    drop(c);
    // The same name on another port: the old listener is not taken, the
    // new port is bound and the old one released.
    swap(
        &mut r,
        &format!("t :: Socket(TCP, 127.0.0.1, {p2}) -> q :: Queue -> t;"),
    );
    pump(&mut r, "t to bind the new port", |r| {
        handler(r, "t.local_address") == format!("127.0.0.1:{p2}")
    });
    let mut c = tcp_client(p2);
    c.set_nonblocking(true).unwrap();
    echo_via(&mut r, &mut c, b"moved");
    assert!(
        TcpStream::connect((Ipv4Addr::LOCALHOST, p1)).is_err(),
        "the old port is still open"
    );
    let chatter = r.take_chatter();
    assert!(chatter.is_empty(), "{chatter:?}");
}

// ------------------------------------------------------------------ errors

fn config_errors(text: &str) -> String {
    match rclick_elements::testing::try_from_config(text) {
        Ok(_) => panic!("configuration was accepted: {text}"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn bad_configurations_are_reported() {
    let cases: &[(&str, &str)] = &[
        (
            "Socket(FOO, 1.2.3.4, 80) -> Discard;",
            "unknown socket type 'FOO'",
        ),
        ("Socket() -> Discard;", "TYPE: required argument missing"),
        (
            "Socket(TCP, 127.0.0.1) -> Discard;",
            "PORT: required argument missing",
        ),
        ("Socket(UDP) -> Discard;", "ADDR: required argument missing"),
        (
            "Socket(UDP, no.such.host, 53) -> Discard;",
            "ADDR: parse error",
        ),
        (
            "Socket(UDP, 127.0.0.1, 70000) -> Discard;",
            "PORT: port out of range",
        ),
        (
            "Socket(UDP, 127.0.0.1, nosuchservice) -> Discard;",
            "PORT: parse error",
        ),
        (
            "Socket(UNIX) -> Discard;",
            "FILENAME: required argument missing",
        ),
        (
            "Socket(TCP, 127.0.0.1, 80, SNAPLEN 0) -> Discard;",
            "SNAPLEN out of range",
        ),
        (
            "Socket(TCP, 127.0.0.1, 80, CLIENT maybe) -> Discard;",
            "CLIENT: parse error",
        ),
        (
            "Socket(TCP, 127.0.0.1, 80, ALLOW nosuch) -> Discard;",
            "ALLOW: no element named 'nosuch'",
        ),
        (
            "i :: Idle -> Discard; Socket(TCP, 127.0.0.1, 80, DENY i) -> Discard;",
            "i is not an IPRouteTable",
        ),
        ("Socket(TCP, 127.0.0.1, 80, FROB 1) -> Discard;", "FROB"),
    ];
    for (config, want) in cases {
        let got = config_errors(config);
        assert!(got.contains(want), "{config}\nwanted {want:?}\ngot:\n{got}");
    }
    let long = format!("Socket(UNIX, /tmp/{}) -> Discard;", "x".repeat(120));
    assert!(config_errors(&long).contains("too long"));
}

#[test]
fn socket_errors_fail_initialization() {
    // Connection refused: nothing listens on the port any more.
    let port = {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        l.local_addr().unwrap().port()
    };
    let got = config_errors(&format!("Idle -> Socket(TCP, 127.0.0.1, {port});"));
    assert!(got.contains("connect: Connection refused"), "{got}");
    // The address is taken.
    let taken = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let got = config_errors(&format!("Socket(UDP, 127.0.0.1, {port}) -> Discard;"));
    assert!(got.contains("bind: Address already in use"), "{got}");
    // A live Unix socket is not taken over.
    let dir = TempDir::new("live");
    let path = dir.path("live.sock");
    let _live = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let got = config_errors(&format!("Socket(UNIX, {path}) -> Discard;"));
    assert!(got.contains("bind: Address already in use"), "{got}");
    // A Unix stream client with nobody at the other end.
    let got = config_errors(&format!(
        "Idle -> Socket(UNIX, {});",
        dir.path("nobody.sock")
    ));
    assert!(got.contains("connect: No such file or directory"), "{got}");
}

#[test]
fn ports_and_processing_follow_click() {
    // Push input (InfiniteSource), pull input (Queue), no input; no output.
    let r = rclick_elements::testing::try_from_config(
        "a :: Socket(UDP, 127.0.0.1, 0);
         Idle -> b :: Socket(UDP, 127.0.0.1, 9, CLIENT true);
         Idle -> Queue -> c :: Socket(UDP, 127.0.0.1, 9, CLIENT true) -> Discard;",
    );
    let mut r = r.unwrap_or_else(|e| panic!("{e:?}"));
    assert!(rclick_elements::testing::read(&mut r, "a.ports").starts_with("0 input"));
    assert!(rclick_elements::testing::read(&mut r, "c.handlers").contains("scheduled"));
    // Two inputs is one too many.
    let got = config_errors("Idle -> [1]Socket(UDP, 127.0.0.1, 9) -> Discard;");
    assert!(
        got.contains("has no input 1") || got.contains("input 1"),
        "{got}"
    );
}

// ------------------------------------------------------------------ gateway

/// The echo program: a separate user-level process that receives each
/// frame in a UDP datagram, flips the bits of its last byte, and sends it
/// back to whoever sent it. It prints its port, then serves until told
/// `quit` or idle for 30 s.
const MANAGER_PY: &str = r#"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
except OSError:
    pass
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(30)
n = 0
while True:
    try:
        data, peer = s.recvfrom(65536)
    except socket.timeout:
        break
    if data == b"quit":
        break
    b = bytearray(data)
    b[-1] ^= 0xFF
    s.sendto(bytes(b), peer)
    n += 1
print(n, flush=True)
"#;

/// A Rust stand-in when python3 is missing.
fn spawn_rust_manager() -> (u16, Box<dyn FnOnce() -> usize>) {
    let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = s.local_addr().unwrap().port();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let t = std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut n = 0;
        while let Ok((len, peer)) = s.recv_from(&mut buf) {
            if &buf[..len] == b"quit" {
                break;
            }
            buf[len - 1] ^= 0xFF;
            s.send_to(&buf[..len], peer).unwrap();
            n += 1;
        }
        n
    });
    (port, Box::new(move || t.join().unwrap()))
}

fn spawn_python_manager(dir: &TempDir) -> Option<(u16, Box<dyn FnOnce() -> usize>)> {
    use std::io::BufRead;
    let script = dir.path("manager.py");
    std::fs::write(&script, MANAGER_PY).unwrap();
    let mut child = std::process::Command::new("python3")
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).ok()?;
    let port: u16 = line.trim().parse().ok()?;
    Some((
        port,
        Box::new(move || {
            let mut line = String::new();
            let _ = out.read_line(&mut line);
            let _ = child.wait();
            line.trim().parse().unwrap_or(0)
        }),
    ))
}

/// Builds a small Ethernet/IPv4/UDP trace with frames of assorted sizes.
fn write_trace(path: &str, n: usize) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    for i in 0..n {
        let payload = 18 + (i * 131) % 1400;
        let mut f = vec![0u8; 14 + 20 + 8 + payload];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        let ip_len = (20 + 8 + payload) as u16;
        f[16..18].copy_from_slice(&ip_len.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&(1000 + i as u16).to_be_bytes());
        f[36..38].copy_from_slice(&53u16.to_be_bytes());
        f[38..40].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        for (j, b) in f[42..].iter_mut().enumerate() {
            *b = (i + j) as u8;
        }
        out.extend_from_slice(&(i as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&f);
        frames.push(f);
    }
    std::fs::write(path, out).unwrap();
    frames
}

fn read_trace(path: &str) -> Vec<Vec<u8>> {
    let mut r = rclick_elements::userlevel::pcap::DumpReader::open(path).expect("open trace");
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().expect("read trace") {
        v.push(rec.data.to_vec());
    }
    v
}

/// The gateway "Manager" model: the router wraps each frame of a trace in
/// a UDP datagram to a user-level program, which sends it back (with its
/// last byte changed); the router writes what comes back to a trace.
#[test]
fn gateway_frames_round_trip_through_an_external_program() {
    let dir = TempDir::new("gateway");
    let input = dir.path("in.pcap");
    let output = dir.path("out.pcap");
    let mut frames = write_trace(&input, 300);
    // The shipped demo trace too, if present.
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf/demo/traffic.pcap");
    let demo_frames = if demo.exists() {
        read_trace(&demo.to_string_lossy())
    } else {
        eprintln!("SKIP PART: the demo trace: {} not found", demo.display());
        Vec::new()
    };

    let (port, finish): (u16, Box<dyn FnOnce() -> usize>) = match spawn_python_manager(&dir) {
        Some(m) => m,
        None => {
            eprintln!("python3 not available: the manager runs as a Rust thread");
            spawn_rust_manager()
        }
    };

    let mut config = format!(
        "FromDump({input}, STOP false) -> q :: Queue(10000) -> RatedUnqueue(RATE 4000)
           -> m :: Socket(UDP, 127.0.0.1, {port}, CLIENT true, RCVBUF 1000000)
           -> c :: Counter -> ToDump({output});"
    );
    let mut want = frames.len();
    if !demo_frames.is_empty() {
        config.push_str(&format!(
            "FromDump({}, STOP false) -> q;",
            demo.to_string_lossy()
        ));
        want += demo_frames.len();
    }
    let mut router = build(&config).unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        router.run_limited(200);
        let got: usize = router
            .read_handler("c.count", None)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if got >= want || Instant::now() > deadline {
            break;
        }
    }
    let sent = router.read_handler("m.sent", None).unwrap();
    let drops = router.read_handler("m.drops", None).unwrap();
    let chatter = router.take_chatter();
    router.cleanup();
    drop(router);
    let quit = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    quit.send_to(b"quit", (Ipv4Addr::LOCALHOST, port)).unwrap();
    let echoed = finish();
    eprintln!("manager echoed {echoed} frames; the router sent {sent}, dropped {drops}");

    let back = read_trace(&output);
    assert_eq!(
        back.len(),
        want,
        "frames back {} of {want}; sent {sent} drops {drops}; manager echoed {echoed}; {chatter:?}",
        back.len()
    );
    assert_eq!(echoed, want);
    // The two traces interleave in the queue; each keeps its order.
    let mut expect_demo = demo_frames.into_iter().peekable();
    let mut expect_mine = frames.drain(..).peekable();
    for (i, mut f) in back.into_iter().enumerate() {
        let last = f.len() - 1;
        f[last] ^= 0xFF;
        if expect_mine.peek() == Some(&f) {
            expect_mine.next();
        } else if expect_demo.peek() == Some(&f) {
            expect_demo.next();
        } else {
            panic!("frame {i} came back out of order or changed");
        }
    }
    assert!(expect_mine.next().is_none() && expect_demo.next().is_none());
}
