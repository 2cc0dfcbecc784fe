//! ControlSocket over real sockets: a router runs in a background thread
//! (real time) and the tests speak protocol 1.3 to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rclick_core::RouterOptions;
use rclick_elements::testing::{config_errors_with, RouterThread};

const TIMEOUT: Duration = Duration::from_secs(5);

/// A router running in its own thread.
struct Running {
    router: RouterThread,
    port: u16,
}

impl Running {
    /// Starts `config`, in which `BASE` is replaced by a random high port;
    /// the element `cs` must be the TCP ControlSocket.
    fn start(config: &str, hotswap: bool) -> Running {
        Self::start_with(config, hotswap, "cs.port")
    }

    fn start_with(config: &str, hotswap: bool, port_handler: &str) -> Running {
        let text = config.replace("BASE", &random_base().to_string());
        let opts = RouterOptions {
            hotswap,
            capture_chatter: true,
            ..Default::default()
        };
        let router = RouterThread::start(&text, opts, port_handler, TIMEOUT);
        Running {
            port: router.port,
            router,
        }
    }

    fn connect(&self) -> Client {
        Client::tcp(self.port)
    }

    /// Stops the router and returns its chatter.
    fn finish(self) -> Vec<String> {
        self.router.finish()
    }
}

fn random_base() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix = nanos ^ (std::process::id().wrapping_mul(2_654_435_761));
    20000 + (mix % 30000) as u16
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

struct Client {
    r: BufReader<Box<dyn Stream>>,
}

impl Client {
    fn tcp(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        Self::greet(Box::new(s))
    }

    fn unix(path: &std::path::Path) -> Client {
        let s = UnixStream::connect(path).expect("connect unix");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        Self::greet(Box::new(s))
    }

    fn greet(s: Box<dyn Stream>) -> Client {
        let mut c = Client {
            r: BufReader::new(s),
        };
        assert_eq!(c.line(), "Click::ControlSocket/1.3");
        c
    }

    fn send(&mut self, bytes: &[u8]) {
        let w = self.r.get_mut();
        w.write_all(bytes).expect("send");
        w.flush().expect("flush");
    }

    /// One reply line, without CRLF (which must be there).
    fn line(&mut self) -> String {
        let mut buf = Vec::new();
        self.r.read_until(b'\n', &mut buf).expect("read line");
        assert!(
            buf.ends_with(b"\r\n"),
            "reply line not CRLF-terminated: {buf:?}"
        );
        buf.truncate(buf.len() - 2);
        String::from_utf8(buf).expect("utf-8 reply")
    }

    /// A whole reply: every line, `CODE-...` ones then the `CODE ...` one.
    fn reply(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        loop {
            let l = self.line();
            let last = l.as_bytes().get(3) == Some(&b' ');
            assert!(
                last || l.as_bytes().get(3) == Some(&b'-'),
                "malformed reply line {l:?}"
            );
            v.push(l);
            if last {
                return v;
            }
        }
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

    /// Sends one command line and returns the reply lines.
    fn cmd(&mut self, line: &str) -> Vec<String> {
        self.send(format!("{line}\r\n").as_bytes());
        self.reply()
    }

    /// READ that must succeed; the value.
    fn read(&mut self, h: &str) -> String {
        let r = self.cmd(&format!("READ {h}"));
        assert_eq!(r, vec![format!("200 Read handler '{h}' OK")]);
        String::from_utf8(self.data()).unwrap()
    }

    fn count(&mut self, h: &str) -> u64 {
        self.read(h).trim().parse().unwrap()
    }

    /// Whether the server has closed the connection (EOF or reset).
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0) | Err(_))
    }
}

const FLOWING: &str = "cs :: ControlSocket(TCP, BASE+); \
    src :: RatedSource(RATE 2000) -> c :: Counter -> Discard; \
    s :: Script(TYPE PASSIVE); i :: Idle -> q :: Queue -> Discard;";

#[test]
fn transcript_of_every_command() {
    let r = Running::start(FLOWING, false);
    let mut c = r.connect();

    // READ / GET, with every handler name form, case-insensitively.
    assert_eq!(c.read("c.name"), "c");
    let n = c.cmd("get 2.name");
    assert_eq!(n, vec!["200 Read handler '2.name' OK"]);
    assert_eq!(c.data(), b"src");
    assert_eq!(c.read("version").trim(), rclick_core::VERSION);
    assert_eq!(c.read(".version").trim(), rclick_core::VERSION);
    assert_eq!(c.read("0.version").trim(), rclick_core::VERSION);
    // Parameters, spacing kept.
    assert_eq!(
        c.cmd("ReAd s.add 1  2"),
        vec!["200 Read handler 's.add' OK"]
    );
    assert_eq!(String::from_utf8(c.data()).unwrap().trim(), "3");
    // A parameter to a handler that takes none: Click's error.
    assert_eq!(
        c.cmd("READ c.count x"),
        vec![
            "590-Read handler 'c.count' error:",
            "590 read handler 'c.count' does not take parameters"
        ]
    );
    // The ControlSocket's own handlers.
    assert_eq!(c.count("cs.port"), r.port as u64);
    assert_eq!(c.count("cs.clients"), 1);
    let hs = c.read("cs.handlers");
    assert!(
        hs.contains("port\tr\n") && hs.contains("name\tr.\n"),
        "{hs}"
    );

    // WRITE / SET.
    assert_eq!(
        c.cmd("WRITE s.set x hello"),
        vec!["200 Write handler 's.set' OK"]
    );
    assert_eq!(
        c.cmd("set s.set y  two words"),
        vec!["200 Write handler 's.set' OK"]
    );
    assert_eq!(c.cmd("READ s.get y"), vec!["200 Read handler 's.get' OK"]);
    assert_eq!(c.data(), b"two words");

    // CHECKREAD / CHECKWRITE.
    assert_eq!(
        c.cmd("CHECKREAD c.count"),
        vec!["200 Read handler 'c.count' OK"]
    );
    assert_eq!(
        c.cmd("CHECKWRITE c.reset"),
        vec!["200 Write handler 'c.reset' OK"]
    );
    assert_eq!(
        c.cmd("checkwrite c.count"),
        vec!["511 Handler 'c.count' not writable"]
    );
    assert_eq!(
        c.cmd("CHECKREAD c.reset"),
        vec!["511 Handler 'c.reset' not readable"]
    );
    assert_eq!(
        c.cmd("CHECKREAD c.nosuch"),
        vec!["511 No handler named 'c.nosuch'"]
    );
    assert_eq!(
        c.cmd("CHECKREAD nosuch.count"),
        vec!["510 No element named 'nosuch'"]
    );

    // Errors.
    assert_eq!(
        c.cmd("READ nosuch.count"),
        vec!["510 No element named 'nosuch'"]
    );
    assert_eq!(c.cmd("READ 99.count"), vec!["510 No element named '99'"]);
    assert_eq!(
        c.cmd("READ c.nosuch"),
        vec!["511 No handler named 'c.nosuch'"]
    );
    assert_eq!(c.cmd("READ nosuch"), vec!["511 No handler named 'nosuch'"]);
    assert_eq!(
        c.cmd("WRITE c.count 5"),
        vec!["530 Handler 'c.count' read-only"]
    );
    assert_eq!(
        c.cmd("READ c.reset"),
        vec!["530 Handler 'c.reset' write-only"]
    );
    assert_eq!(
        c.cmd("WRITE q.capacity x"),
        vec![
            "520-Write handler 'q.capacity' error:".to_string(),
            "520 expected unsigned integer".to_string()
        ]
    );
    let e = c.cmd("READ s.get nosuchvar");
    assert_eq!(e[0], "590-Read handler 's.get' error:");
    assert!(e[1].starts_with("590 "), "{e:?}");
    assert_eq!(c.cmd("READ"), vec!["500 Wrong number of arguments"]);
    assert_eq!(c.cmd("WRITE"), vec!["500 Wrong number of arguments"]);
    assert_eq!(
        c.cmd("READDATA c.count"),
        vec!["500 Wrong number of arguments"]
    );
    assert_eq!(
        c.cmd("READDATA c.count x"),
        vec!["500 Syntax error in 'READDATA'"]
    );
    assert_eq!(c.cmd("CHECKREAD"), vec!["500 Wrong number of arguments"]);
    assert_eq!(
        c.cmd("FROB c.count"),
        vec!["501 Command 'FROB' unimplemented"]
    );
    assert_eq!(
        c.cmd("LLRPC c#1234"),
        vec!["501 Cannot call LLRPC 'c#1234' remotely"]
    );
    assert_eq!(
        c.cmd("LLRPC c#zz"),
        vec!["500 Syntax error in LLRPC name 'c#zz'"]
    );
    assert_eq!(
        c.cmd("LLRPC nosuch#1"),
        vec!["510 No element named 'nosuch'"]
    );
    assert_eq!(c.cmd("LLRPC c#1 x"), vec!["500 Syntax error in 'llrpc'"]);
    // Empty lines are ignored.
    c.send(b"\r\n\n");

    // HELP: 200- lines, last one 200 space.
    let help = c.cmd("help");
    assert_eq!(help[0], "200-Commands supported:");
    assert!(help.len() >= 10);
    assert!(help[..help.len() - 1].iter().all(|l| l.starts_with("200-")));
    assert!(help.last().unwrap().starts_with("200 QUIT"));

    // QUIT (with a stray argument: Click warns, then says goodbye).
    assert_eq!(
        c.cmd("QUIT now"),
        vec!["500 Bad command syntax".to_string()]
    );
    assert_eq!(c.reply(), vec!["200 Goodbye!"]);
    assert!(c.closed());

    let mut d = r.connect();
    assert_eq!(d.cmd("close"), vec!["200 Goodbye!"]);
    assert!(d.closed());
}

#[test]
fn line_endings_pipelining_and_exact_data() {
    let r = Running::start(FLOWING, false);
    let mut c = r.connect();
    // CR, LF and CRLF endings, pipelined in one write: each DATA is exactly
    // n bytes, with the next reply right after it.
    c.send(b"READ c.name\rREAD src.name\nREAD q.name\r\nREAD i.name\r");
    for want in ["c", "src", "q", "i"] {
        let h = c.reply();
        assert_eq!(h.len(), 1);
        assert_eq!(c.data(), want.as_bytes());
    }
    // A CRLF split across writes after a lone CR is one line ending.
    c.send(b"READ c.name\r");
    std::thread::sleep(Duration::from_millis(50));
    c.send(b"\nREAD q.name\n");
    assert_eq!(c.reply(), vec!["200 Read handler 'c.name' OK"]);
    assert_eq!(c.data(), b"c");
    assert_eq!(c.reply(), vec!["200 Read handler 'q.name' OK"]);
    assert_eq!(c.data(), b"q");
    // A command split across writes.
    c.send(b"REA");
    std::thread::sleep(Duration::from_millis(50));
    c.send(b"D c.na");
    std::thread::sleep(Duration::from_millis(50));
    c.send(b"me\n");
    assert_eq!(c.reply(), vec!["200 Read handler 'c.name' OK"]);
    assert_eq!(c.data(), b"c");
}

#[test]
fn readdata_writedata_and_until() {
    let r = Running::start(FLOWING, false);
    let mut c = r.connect();
    // WRITEDATA: the payload holds CRLFs, command-looking text, a NUL and
    // multi-byte UTF-8; none of it is taken as a command.
    let value = "line1\r\nREAD c.count\r\n\0tab\tend é";
    let payload = format!("v {value}");
    let mut msg = format!("WRITEDATA s.set {}\r\n", payload.len()).into_bytes();
    msg.extend_from_slice(payload.as_bytes());
    msg.extend_from_slice(b"READDATA s.get 1\r\nv");
    c.send(&msg);
    assert_eq!(c.reply(), vec!["200 Write handler 's.set' OK"]);
    assert_eq!(c.reply(), vec!["200 Read handler 's.get' OK"]);
    assert_eq!(c.data(), value.as_bytes());

    // Data arriving in pieces.
    c.send(b"writedata s.set 7\r\nw a");
    std::thread::sleep(Duration::from_millis(50));
    c.send(b"bcde");
    assert_eq!(c.reply(), vec!["200 Write handler 's.set' OK"]);
    assert_eq!(c.cmd("READ s.get w"), vec!["200 Read handler 's.get' OK"]);
    assert_eq!(c.data(), b"abcde");

    // WRITEUNTIL / READUNTIL: lines up to the terminator (trailing spaces
    // ignored), default a blank line.
    c.send(b"WRITEUNTIL s.set EOF\r\nu one\r\ntwo\nEOF  \r\n");
    assert_eq!(c.reply(), vec!["200 Write handler 's.set' OK"]);
    assert_eq!(c.cmd("READ s.get u"), vec!["200 Read handler 's.get' OK"]);
    assert_eq!(c.data(), b"one\r\ntwo\n");
    c.send(b"READUNTIL s.get\r\nu\r\n\r\nREAD c.name\r\n");
    assert_eq!(c.reply(), vec!["200 Read handler 's.get' OK"]);
    assert_eq!(c.data(), b"one\r\ntwo\n");
    assert_eq!(c.reply(), vec!["200 Read handler 'c.name' OK"]);
    assert_eq!(c.data(), b"c");

    // READDATA with zero bytes.
    assert_eq!(
        c.cmd("READDATA c.name 0"),
        vec!["200 Read handler 'c.name' OK"]
    );
    assert_eq!(c.data(), b"c");

    // Data too large: 521 at once, the data skipped, the connection goes on.
    let n = rclick_elements::userlevel::controlsocket::MAX_DATA + 1;
    assert_eq!(
        c.cmd(&format!("WRITEDATA s.set {n}")),
        vec![format!("521 Data too large for write handler 's.set'")]
    );
    let junk = vec![b'\n'; n];
    c.send(&junk);
    assert_eq!(c.read("c.name"), "c");
}

#[test]
fn not_enough_data_when_the_client_stops_sending() {
    let r = Running::start(FLOWING, false);
    let s = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    (&s).write_all(b"WRITEDATA s.set 100\r\nshort").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut all = String::new();
    (&s).read_to_string(&mut all).unwrap();
    assert_eq!(all, "Click::ControlSocket/1.3\r\n500 Not enough data\r\n");
}

#[test]
fn readonly_refuses_writes() {
    let r = Running::start(
        "cs :: ControlSocket(TCP, BASE+, READONLY true); Idle -> c :: Counter -> Discard;",
        false,
    );
    let mut c = r.connect();
    assert_eq!(
        c.cmd("WRITE c.reset"),
        vec!["530 Permission denied for 'c.reset'"]
    );
    assert_eq!(
        c.cmd("CHECKWRITE c.reset"),
        vec!["530 Permission denied for 'c.reset'"]
    );
    assert_eq!(c.read("c.count").trim(), "0");
}

#[test]
fn many_clients_at_once() {
    let r = Running::start(FLOWING, false);
    let port = r.port;
    let threads: Vec<_> = (0..16)
        .map(|k| {
            std::thread::spawn(move || {
                let mut c = Client::tcp(port);
                let mut last = 0;
                for i in 0..40 {
                    let v = c.count("c.count");
                    assert!(v >= last);
                    last = v;
                    let name = format!("k{k}");
                    assert_eq!(
                        c.cmd(&format!("WRITE s.set {name} {i}")),
                        vec!["200 Write handler 's.set' OK"]
                    );
                    assert_eq!(
                        c.cmd(&format!("READ s.get {name}")),
                        vec!["200 Read handler 's.get' OK"]
                    );
                    assert_eq!(c.data(), i.to_string().as_bytes());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let mut c = r.connect();
    assert_eq!(c.count("cs.clients"), 1);
}

#[test]
fn unix_socket_and_port_plus() {
    let dir = std::env::temp_dir().join(format!(
        "rclick-cs-{}-{}",
        std::process::id(),
        random_base()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ctl.sock");
    // Occupy the base port: PORT+ takes the next free one.
    let base = random_base();
    let held = std::net::TcpListener::bind(("127.0.0.1", base));
    let config = format!(
        "cs :: ControlSocket(TCP, {base}+, VERBOSE true); u :: ControlSocket(UNIX, {}); \
         Idle -> c :: Counter -> Discard;",
        path.display()
    );
    let r = Running::start(&config, false);
    if held.is_ok() {
        assert!(r.port > base, "port {} base {base}", r.port);
    }
    let mut c = Client::unix(&path);
    assert_eq!(c.read("u.port"), path.display().to_string());
    assert_eq!(c.count("cs.port"), r.port as u64);
    assert_eq!(c.read("c.count").trim(), "0");
    drop(c);
    let chatter = r.finish();
    assert!(
        chatter
            .iter()
            .any(|l| l.contains(&format!("listening on TCP port {}", r_port(&chatter)))),
        "{chatter:?}"
    );
    assert!(!path.exists(), "socket file left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

fn r_port(chatter: &[String]) -> String {
    chatter
        .iter()
        .find_map(|l| l.split("listening on TCP port ").nth(1))
        .unwrap_or("?")
        .to_string()
}

#[test]
fn hot_swap_keeps_the_connection() {
    let r = Running::start(
        "cs :: ControlSocket(TCP, BASE+); src :: RatedSource(RATE 2000) -> c :: Counter -> Discard;",
        true,
    );
    let mut c = r.connect();
    let mut other = r.connect();
    assert_eq!(c.read("list"), "4\ncs\nsrc\nc\nDiscard@4\n");

    // A bad configuration: errors, and the old router keeps running.
    let bad = "cs :: ControlSocket(TCP, 1+); x :: NoSuchClass;";
    let reply = c.cmd(&format!("WRITE hotconfig {bad}"));
    assert_eq!(reply[0], "520-Write handler 'hotconfig' error:");
    assert!(reply.iter().any(|l| l.contains("NoSuchClass")), "{reply:?}");
    assert!(reply.last().unwrap().starts_with("520 "));
    assert_eq!(c.read("list"), "4\ncs\nsrc\nc\nDiscard@4\n");

    // A good one, with newlines: WRITEDATA.
    let new = "cs :: ControlSocket(TCP, 1+);\nsrc :: RatedSource(RATE 2000)\n  -> c2 :: Counter -> Discard;\n";
    let mut msg = format!("WRITEDATA hotconfig {}\r\n", new.len()).into_bytes();
    msg.extend_from_slice(new.as_bytes());
    c.send(&msg);
    assert_eq!(c.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    // Same connections, new router.
    assert_eq!(c.read("list"), "4\ncs\nsrc\nc2\nDiscard@4\n");
    assert_eq!(other.read("list"), "4\ncs\nsrc\nc2\nDiscard@4\n");
    assert_eq!(c.count("cs.port"), r.port as u64);
    assert_eq!(c.count("cs.clients"), 2);
    let a = c.count("c2.count");
    std::thread::sleep(Duration::from_millis(100));
    assert!(c.count("c2.count") > a, "packets flow in the new router");
    // New clients are accepted on the same port.
    let mut n = r.connect();
    assert_eq!(n.read("c2.name"), "c2");

    // Swap to a configuration without a ControlSocket named cs: a new one
    // named cs2 binds the port once the old one is gone; existing
    // connections close.
    let next = format!(
        "cs2 :: ControlSocket(TCP, {}); Idle -> c3 :: Counter -> Discard;",
        r.port
    );
    let mut msg = format!("WRITEDATA hotconfig {}\r\n", next.len()).into_bytes();
    msg.extend_from_slice(next.as_bytes());
    c.send(&msg);
    assert_eq!(c.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    assert!(c.closed());
    let start = Instant::now();
    loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", r.port)) {
            s.set_read_timeout(Some(TIMEOUT)).unwrap();
            let mut c = Client::greet(Box::new(s));
            assert_eq!(c.read("c3.name"), "c3");
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "cs2 never bound the port");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_without_newlines_is_cut_off() {
    let r = Running::start(
        "cs :: ControlSocket(TCP, BASE+); InfiniteSource(DATASIZE 64) -> c :: Counter -> Discard;",
        false,
    );
    let port = r.port;
    let mut good = r.connect();
    let hostile = std::thread::spawn(move || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_write_timeout(Some(TIMEOUT)).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0usize;
        let mut err = None;
        for _ in 0..10 {
            match (&s).write_all(&chunk) {
                Ok(()) => sent += chunk.len(),
                Err(e) => {
                    err = Some(e.kind());
                    break;
                }
            }
        }
        // Whatever was written, the server answers with an error and closes.
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut got = Vec::new();
        let _ = (&s).read_to_end(&mut got);
        (sent, err, String::from_utf8_lossy(&got).into_owned())
    });
    // Meanwhile the other client is answered and packets flow.
    let mut last = good.count("c.count");
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(30));
        let v = good.count("c.count");
        assert!(v > last, "packets stopped: {v} <= {last}");
        last = v;
    }
    let started = Instant::now();
    let (sent, err, got) = hostile.join().unwrap();
    assert!(started.elapsed() < TIMEOUT);
    // Cut off: the write failed before 10 MB went through, or the reply says
    // why (a reset may swallow the message).
    assert!(
        err.is_some() || got.contains("500 Line too long"),
        "sent {sent}, err {err:?}, got {got:?}"
    );
    assert!(sent < 10 << 20 || got.contains("500 Line too long"));
    let v = good.count("c.count");
    assert!(v > last);
    // The hostile client is gone.
    let start = Instant::now();
    while good.count("cs.clients") != 1 {
        assert!(start.elapsed() < TIMEOUT, "hostile client still open");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_client_that_never_reads_holds_bounded_memory() {
    use rclick_elements::userlevel::controlsocket::OUT_LIMIT;
    let r = Running::start(
        "cs :: ControlSocket(TCP, BASE+); src :: RatedSource(RATE 5000) -> c :: Counter -> Discard;",
        false,
    );
    let port = r.port;
    let done = Arc::new(AtomicBool::new(false));
    let done2 = done.clone();
    // Sends up to 3 million commands (39 MB, more than kernel buffers hold)
    // whose replies (1 KB and more each) it never reads; stops when the
    // server stops taking them.
    let lazy = std::thread::spawn(move || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_write_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let batch = b"READ classes\n".repeat(1000);
        let mut sent = 0;
        for _ in 0..3000 {
            if done2.load(Ordering::Relaxed) || (&s).write_all(&batch).is_err() {
                break;
            }
            sent += 1000;
        }
        while !done2.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
        (s, sent)
    });
    std::thread::sleep(Duration::from_millis(1500));
    let mut c = r.connect();
    let a = c.count("c.count");
    let pending = c.count("cs.pending_output") as usize;
    let max = c.count("cs.max_pending_output") as usize;
    assert!(max > 0);
    let classes_len = c.read("classes").len();
    assert!(
        max <= OUT_LIMIT + classes_len + 64,
        "max pending {max} > limit {OUT_LIMIT}"
    );
    assert!(pending <= max);
    std::thread::sleep(Duration::from_millis(100));
    assert!(c.count("c.count") > a, "packets stopped");
    done.store(true, Ordering::Relaxed);
    let (s, sent) = lazy.join().unwrap();
    assert!(
        sent < 3_000_000,
        "the server took every command without reading"
    );
    drop(s);
    let start = Instant::now();
    while c.count("cs.clients") != 1 {
        assert!(start.elapsed() < TIMEOUT, "lazy client still open");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.count("cs.pending_output"), 0);
}

#[test]
fn disconnect_in_the_middle_of_a_reply() {
    let r = Running::start(FLOWING, false);
    for _ in 0..5 {
        let s = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
        (&s).write_all(&b"READ classes\r\n".repeat(2000)).unwrap();
        let mut b = [0u8; 100];
        let _ = (&s).read(&mut b);
        drop(s);
    }
    // A client that vanishes between a command and its data.
    let s = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    (&s).write_all(b"WRITEDATA s.set 1000\r\nabc").unwrap();
    drop(s);
    let mut c = r.connect();
    let start = Instant::now();
    while c.count("cs.clients") != 1 {
        assert!(start.elapsed() < TIMEOUT, "dead clients still open");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.read("c.name"), "c");
}

#[test]
fn bad_configurations() {
    for (conf, msg) in [
        ("ControlSocket(FOO, 1)", "unknown socket type 'FOO'"),
        ("ControlSocket(TCP, 70000)", "PORT requires TCP port"),
        ("ControlSocket(TCP, x+)", "PORT requires TCP port"),
        ("ControlSocket(TCP)", "PORT: required argument missing"),
        ("ControlSocket(TCP, 1, PROXY x)", "PROXY is not supported"),
    ] {
        let err = config_errors_with(conf, &RouterOptions::default());
        assert!(err.contains(msg), "{conf}: {err}");
    }
}
