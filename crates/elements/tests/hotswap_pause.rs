//! Hot swap must not pause forwarding while the new router is prepared
//! (issue 13, item 5): a router forwarding traffic receives a large
//! `hotconfig` over the ControlSocket and over HTTP, and a test element
//! on the packet path records the longest gap between two batches. The
//! new router is parsed and initialized on another thread; forwarding
//! pauses only for the final exchange (state transfer and switch), which
//! the router reports in its hot-swap statistics.
//!
//! The figures are printed (run with `--nocapture` to see them); the
//! bounds are generous, for a loaded 2-core machine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rclick_core::element::Observe;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Packet, Router, RouterOptions};

/// Elements in the chain that makes the new configuration large.
const CHAIN: usize = 20_000;

const TIMEOUT: Duration = Duration::from_secs(120);

/// Gap records, one slot per test (tests run in parallel threads).
struct Slot {
    /// Nanoseconds since `epoch()` of the last batch; 0 before the first.
    last: AtomicU64,
    /// Longest gap seen since the last reset, in nanoseconds.
    max_gap: AtomicU64,
    /// When (nanoseconds since `epoch()`) the longest gap ended.
    max_gap_end: AtomicU64,
    batches: AtomicU64,
}

static SLOTS: [Slot; 4] = [const {
    Slot {
        last: AtomicU64::new(0),
        max_gap: AtomicU64::new(0),
        max_gap_end: AtomicU64::new(0),
        batches: AtomicU64::new(0),
    }
}; 4];

/// The tests run one at a time: each keeps a core busy forwarding and
/// another building, and the machine has few.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

impl Slot {
    fn reset(&self) {
        self.last.store(0, Ordering::SeqCst);
        self.max_gap.store(0, Ordering::SeqCst);
        self.batches.store(0, Ordering::SeqCst);
    }

    fn max_gap(&self) -> Duration {
        Duration::from_nanos(self.max_gap.load(Ordering::SeqCst))
    }

    /// How long after `t` the longest gap ended (negative: before).
    fn gap_end_after(&self, t: Instant) -> f64 {
        let end = self.max_gap_end.load(Ordering::SeqCst) as f64 / 1e9;
        end - t.duration_since(epoch()).as_secs_f64()
    }
}

/// `GapMeter(SLOT)`: passes packets on, recording in `SLOTS[SLOT]` the
/// longest time between two batches. Its records live outside the
/// element, so they span hot swaps.
#[derive(Default)]
struct GapMeter {
    slot: usize,
}

impl Observe for GapMeter {
    fn observe_batch(&mut self, _batch: &Batch, _ctx: &mut Ctx) {
        let s = &SLOTS[self.slot];
        let now = (epoch().elapsed().as_nanos() as u64).max(1);
        let last = s.last.swap(now, Ordering::Relaxed);
        if last != 0 {
            let gap = now.saturating_sub(last);
            if s.max_gap.fetch_max(gap, Ordering::Relaxed) < gap {
                s.max_gap_end.store(now, Ordering::Relaxed);
            }
        }
        s.batches.fetch_add(1, Ordering::Relaxed);
    }

    fn observe(&mut self, _p: &Packet, _ctx: &mut Ctx) {}
}

impl Element for GapMeter {
    rclick_core::element_kind!(observe);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.slot = conf
            .trim()
            .parse()
            .ok()
            .filter(|&s| s < SLOTS.len())
            .ok_or("expected a slot number")?;
        Ok(())
    }
}

/// Cleanups of `Probe` elements, and the name of the thread of the last.
static PROBE_CLEANUPS: AtomicU64 = AtomicU64::new(0);
static PROBE_CLEANUP_THREAD: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// `Probe(MODE)`: a test element that misbehaves while it is built:
/// `panic_configure`, `panic_init` (panics there), `fail` (its
/// initialize fails) or `sleep MS` (its initialize takes that long).
#[derive(Default)]
struct Probe {
    mode: String,
}

impl Element for Probe {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        self.mode = conf.trim().to_string();
        if self.mode == "panic_configure" {
            panic!("boom in configure");
        }
        Ok(())
    }

    fn initialize(&mut self, _ctx: &mut InitCtx) -> ConfigResult {
        match self.mode.as_str() {
            "panic_init" => panic!("boom in initialize"),
            "fail" => return Err("Probe fails, as asked".into()),
            _ => {}
        }
        if let Some(ms) = self.mode.strip_prefix("sleep ") {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap_or(0)));
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        PROBE_CLEANUPS.fetch_add(1, Ordering::SeqCst);
        *PROBE_CLEANUP_THREAD.lock().unwrap() = std::thread::current().name().map(str::to_string);
    }
}

fn registry() -> rclick_core::element::Registry {
    let mut reg = rclick_elements::registry();
    reg.add("GapMeter", || Box::new(GapMeter::default()));
    reg.add("Probe", || Box::new(Probe::default()));
    reg
}

/// A router on this thread (real time, hot swap allowed).
fn local_router(text: &str) -> Router {
    let reg = registry();
    let opts = RouterOptions {
        hotswap: true,
        capture_chatter: true,
        ..Default::default()
    };
    let outcome = rclick_lang::parse_router(text, "test", &reg, &opts.parse);
    Router::new(
        outcome.spec.expect("configuration parses"),
        text,
        &reg,
        &opts,
    )
    .unwrap_or_else(|e| panic!("router failed: {e:?}"))
}

/// The traffic both configurations share: the same names, so the swap
/// carries counts over.
fn traffic(slot: usize) -> String {
    format!("src :: InfiniteSource(LENGTH 64) -> g :: GapMeter({slot}) -> c :: Counter -> d :: Discard;")
}

/// `traffic` plus a chain of `CHAIN` Nulls (and `server`).
fn large_config(slot: usize, server: &str) -> String {
    let mut s = format!("{server}\n{}\nIdle", traffic(slot));
    for i in 0..CHAIN {
        s.push_str(&format!(" -> n{i} :: Null"));
    }
    s.push_str(" -> Discard;\n");
    s
}

/// A router running in its own thread; `finish` stops it and returns it
/// (through its thread) for a last look.
struct Running {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<(Vec<String>, Vec<Duration>)>>,
    port: u16,
}

impl Running {
    fn start(text: &str, port_handler: &str) -> Running {
        let text = text.to_string();
        let port_handler = port_handler.to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let reg = registry();
            let opts = RouterOptions {
                hotswap: true,
                capture_chatter: true,
                ..Default::default()
            };
            let outcome = rclick_lang::parse_router(&text, "test", &reg, &opts.parse);
            let spec = outcome.spec.expect("configuration parses");
            let mut router = Router::new(spec, &text, &reg, &opts)
                .unwrap_or_else(|e| panic!("router failed: {e:?}"));
            let port = router
                .read_handler(&port_handler, None)
                .expect("port handler")
                .trim()
                .parse::<u16>()
                .expect("port");
            tx.send((router.stop_flag(), port)).unwrap();
            router.run();
            let installs = router.hotswap_install_times().to_vec();
            let chatter = router.take_chatter();
            router.cleanup();
            (chatter, installs)
        });
        let (stop, port) = rx.recv_timeout(TIMEOUT).expect("router thread");
        Running {
            stop,
            thread: Some(thread),
            port,
        }
    }

    fn finish(mut self) -> (Vec<String>, Vec<Duration>) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("router thread panicked")
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

fn random_base() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix = nanos ^ (std::process::id().wrapping_mul(2_654_435_761));
    20000 + (mix % 30000) as u16
}

/// A ControlSocket client.
struct Client {
    r: BufReader<TcpStream>,
}

impl Client {
    fn connect(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut c = Client {
            r: BufReader::new(s),
        };
        assert_eq!(c.line(), "Click::ControlSocket/1.3");
        c
    }

    fn send(&mut self, bytes: &[u8]) {
        self.r.get_mut().write_all(bytes).expect("send");
    }

    fn line(&mut self) -> String {
        let mut buf = String::new();
        self.r.read_line(&mut buf).expect("read line");
        assert!(buf.ends_with("\r\n"), "reply line {buf:?}");
        buf.truncate(buf.len() - 2);
        buf
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

    fn read(&mut self, h: &str) -> String {
        self.send(format!("READ {h}\r\n").as_bytes());
        assert_eq!(self.reply(), vec![format!("200 Read handler '{h}' OK")]);
        self.data()
    }

    /// `DATA N` and the N bytes after it.
    fn data(&mut self) -> String {
        let l = self.line();
        let n: usize = l.strip_prefix("DATA ").unwrap().parse().unwrap();
        let mut buf = vec![0; n];
        self.r.read_exact(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    fn writedata(&mut self, h: &str, value: &str) {
        let mut msg = format!("WRITEDATA {h} {}\r\n", value.len()).into_bytes();
        msg.extend_from_slice(value.as_bytes());
        self.send(&msg);
    }
}

/// Waits until packets flow (the gap meter has seen batches), then clears
/// its record.
fn wait_for_traffic(slot: &Slot) {
    let t0 = Instant::now();
    while slot.batches.load(Ordering::SeqCst) < 1000 {
        assert!(t0.elapsed() < TIMEOUT, "no traffic");
        std::thread::sleep(Duration::from_millis(5));
    }
    slot.reset();
}

/// Checks and prints one swap's figures: the reply took `took` (the whole
/// preparation), forwarding paused at most `gap`, and the router's final
/// exchange took `install`.
fn check_pause(how: &str, took: Duration, gap: Duration, end: f64, installs: &[Duration]) {
    let install = installs.iter().max().copied().unwrap_or_default();
    println!(
        "{how}: {CHAIN}-element hotconfig answered in {took:.3?}; longest forwarding \
         pause {gap:.3?} (ended {:.1} ms after the write was sent); final exchange \
         (state transfer and switch) {install:.3?}",
        end * 1000.0
    );
    assert_eq!(installs.len(), 1, "one swap installed");
    // Generous: the pause is the exchange plus whatever the (shared,
    // loaded) machine adds, and must be well short of the preparation
    // (before, the pause was the preparation: 0.2 s in a release build),
    // but at least 100 ms.
    let bound = install * 3
        + Duration::from_millis(250)
            .min(took / 3)
            .max(Duration::from_millis(100));
    assert!(
        gap <= bound,
        "{how}: forwarding paused {gap:?}, more than the bound {bound:?} \
         (final exchange {install:?}; preparation {took:?})"
    );
}

#[test]
fn a_large_hot_swap_over_the_control_socket_pauses_forwarding_only_for_the_exchange() {
    let _serial = serial();
    let slot = &SLOTS[0];
    let server = format!("cs :: ControlSocket(TCP, {}+);", random_base());
    let r = Running::start(&format!("{server}\n{}", traffic(0)), "cs.port");
    let mut c = Client::connect(r.port);
    wait_for_traffic(slot);
    // For reference: the longest pause in half a second without a swap
    // (what the machine's other work costs).
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "ControlSocket: longest forwarding pause in 0.5 s without a swap: {:.3?}",
        slot.max_gap()
    );
    slot.reset();

    let big = large_config(0, &server);
    let t0 = Instant::now();
    // With a command right behind it: that one waits for the answer, and
    // runs on the new router.
    c.writedata("hotconfig", &big);
    c.send(b"READ list\r\n");
    assert_eq!(c.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    let took = t0.elapsed();
    assert_eq!(c.reply(), vec!["200 Read handler 'list' OK"]);
    let list = c.data();
    assert!(list.starts_with(&format!("{}\n", CHAIN + 7)), "{list:.40}");
    std::thread::sleep(Duration::from_millis(50));
    let gap = slot.max_gap();
    let end = slot.gap_end_after(t0);
    assert!(slot.batches.load(Ordering::SeqCst) > 0);
    drop(c);
    let (_, installs) = r.finish();
    check_pause("ControlSocket", took, gap, end, &installs);
}

#[test]
fn a_large_hot_swap_over_http_pauses_forwarding_only_for_the_exchange() {
    let _serial = serial();
    let slot = &SLOTS[1];
    let token_file =
        std::env::temp_dir().join(format!("rclick-hotswap-pause-{}.token", std::process::id()));
    let server = format!(
        "http :: HTTPServer(0, TOKEN_FILE {});",
        token_file.display()
    );
    let r = Running::start(&format!("{server}\n{}", traffic(1)), "http.port");
    let token = std::fs::read_to_string(&token_file).expect("token file");
    wait_for_traffic(slot);

    let big = large_config(1, &server);
    let t0 = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let req = format!(
        "POST /api/handler/hotconfig HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{big}",
        token.trim(),
        big.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    let took = t0.elapsed();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.ends_with("{\"handler\":\"hotconfig\",\"ok\":true}") || reply.contains("\"ok\":true"),
        "{reply}"
    );
    std::thread::sleep(Duration::from_millis(50));
    let gap = slot.max_gap();
    let end = slot.gap_end_after(t0);
    let (_, installs) = r.finish();
    let _ = std::fs::remove_file(&token_file);
    check_pause("HTTPServer", took, gap, end, &installs);
}

/// One hot swap is prepared at a time: a `hotconfig` written while another
/// is being built is refused (not queued), with Click's error reply shape;
/// the first is answered and installed, and a later one works again. A
/// configuration that fails leaves the running router as it was.
#[test]
fn a_second_hotconfig_while_one_is_prepared_is_refused() {
    let _serial = serial();
    let slot = &SLOTS[2];
    let server = format!("cs :: ControlSocket(TCP, {}+);", random_base());
    let r = Running::start(&format!("{server}\n{}", traffic(2)), "cs.port");
    let mut a = Client::connect(r.port);
    let mut b = Client::connect(r.port);
    wait_for_traffic(slot);

    a.writedata("hotconfig", &large_config(2, &server));
    // Wait until the router has taken in the whole request (the build has
    // then started; it takes far longer than what follows).
    std::thread::sleep(Duration::from_millis(20));
    let t0 = Instant::now();
    while b.read("cs.buffered").trim() != "0" {
        assert!(t0.elapsed() < TIMEOUT, "the request never got in");
        std::thread::sleep(Duration::from_millis(1));
    }
    let small = format!("{server} {} x :: Idle -> Discard;", traffic(2));
    b.writedata("hotconfig", &small);
    assert_eq!(
        b.reply(),
        vec![
            "520-Write handler 'hotconfig' error:".to_string(),
            "520 a hot swap is already being prepared; write 'hotconfig' again once it is \
             answered"
                .to_string(),
        ]
    );
    // The old router still answers meanwhile.
    assert!(b.read("list").starts_with("5\n"));
    assert_eq!(a.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    assert!(b.read("list").starts_with(&format!("{}\n", CHAIN + 7)));

    // A failing one: the error comes back, the router is unchanged.
    b.writedata("hotconfig", &format!("{server} x :: NoSuchClass;"));
    let reply = b.reply();
    assert_eq!(reply[0], "520-Write handler 'hotconfig' error:");
    assert!(reply.iter().any(|l| l.contains("NoSuchClass")), "{reply:?}");
    assert!(b.read("list").starts_with(&format!("{}\n", CHAIN + 7)));

    // Now the small one goes through, counts carried over.
    let before: u64 = b.read("c.count").trim().parse().unwrap();
    b.writedata("hotconfig", &small);
    assert_eq!(b.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    assert_eq!(b.read("list"), "7\ncs\nsrc\ng\nc\nd\nx\nDiscard@7\n");
    let after: u64 = b.read("c.count").trim().parse().unwrap();
    assert!(after >= before, "count carried over: {before} then {after}");
    let (_, installs) = r.finish();
    assert_eq!(installs.len(), 2);
}

/// A client that closes its sending side right after its `hotconfig` (as
/// `nc -N` does) is still answered when the new router is ready, over the
/// ControlSocket and over HTTP.
#[test]
fn a_half_closed_client_still_gets_its_answer() {
    let _serial = serial();
    let server = format!(
        "cs :: ControlSocket(TCP, {}+); http :: HTTPServer(0, TOKEN_FILE {});",
        random_base(),
        std::env::temp_dir()
            .join(format!("rclick-hotswap-half-{}.token", std::process::id()))
            .display()
    );
    let token_file =
        std::env::temp_dir().join(format!("rclick-hotswap-half-{}.token", std::process::id()));
    let r = Running::start(&format!("{server}\n{}", traffic(3)), "cs.port");
    let http_port: u16 = {
        let mut c = Client::connect(r.port);
        c.read("http.port").trim().parse().unwrap()
    };

    let mut c = Client::connect(r.port);
    c.writedata("hotconfig", &large_config(3, &server));
    c.r.get_ref().shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(c.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    let mut rest = String::new();
    c.r.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "then the connection closes");

    let token = std::fs::read_to_string(&token_file).expect("token file");
    let big = large_config(3, &server);
    let mut s = TcpStream::connect(("127.0.0.1", http_port)).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    let req = format!(
        "POST /api/handler/hotconfig HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{big}",
        token.trim(),
        big.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let (_, installs) = r.finish();
    let _ = std::fs::remove_file(&token_file);
    assert_eq!(installs.len(), 2);
}

/// A panic in an element's `configure` or `initialize` while a
/// `hotconfig` is built off the packet path comes back to the client as an
/// error carrying the panic's message (it used to be "failed
/// unexpectedly"), and the running router goes on.
#[test]
fn a_panic_while_building_is_answered_with_its_message() {
    let _serial = serial();
    let base = format!(
        "cs :: ControlSocket(TCP, {}+);\n{}",
        random_base(),
        traffic(0)
    );
    let r = Running::start(&base, "cs.port");
    let mut c = Client::connect(r.port);
    for (mode, msg) in [
        ("panic_configure", "boom in configure"),
        ("panic_init", "boom in initialize"),
    ] {
        c.writedata("hotconfig", &format!("{base} p :: Probe({mode});"));
        let reply = c.reply();
        assert_eq!(
            reply[0], "520-Write handler 'hotconfig' error:",
            "{reply:?}"
        );
        assert!(
            reply
                .iter()
                .any(|l| l.contains(msg) && l.contains("panicked")),
            "{reply:?}"
        );
        assert!(c.read("list").starts_with("5\n"), "the old router goes on");
    }
    let (_, installs) = r.finish();
    assert!(installs.is_empty());
}

/// The same on the router's own thread (`Router::hotswap`, as Script and
/// simulated time use): the panic is an error, not the end of the router.
#[test]
fn a_panic_while_building_in_process_is_an_error() {
    let _serial = serial();
    let mut r = local_router("Idle -> Discard;");
    for (mode, msg) in [
        ("panic_configure", "boom in configure"),
        ("panic_init", "boom in initialize"),
    ] {
        let err = r
            .hotswap(&format!("p :: Probe({mode}); Idle -> Discard;"))
            .expect_err("a panicking build fails");
        let text: Vec<String> = err.iter().map(|d| d.to_string()).collect();
        assert!(text.iter().any(|l| l.contains(msg)), "{text:?}");
    }
    assert_eq!(
        r.read_handler("list", None).unwrap(),
        "2\nIdle@1\nDiscard@2\n"
    );
    r.hotswap("x :: Idle -> Discard;").unwrap();
    assert!(r.read_handler("list", None).unwrap().starts_with("2\nx\n"));
}

/// A router stopped while a `hotconfig` is being built answers the client
/// with an error (it used to close the connection without a word) and
/// waits for the build, so the successor is cleaned up before the router
/// is gone, on the router's thread (not later on the build thread).
#[test]
fn a_router_stopped_while_building_answers_and_cleans_up_the_successor() {
    let _serial = serial();
    let base = format!(
        "cs :: ControlSocket(TCP, {}+);\n{}",
        random_base(),
        traffic(1)
    );
    let r = Running::start(&base, "cs.port");
    let mut c = Client::connect(r.port);
    PROBE_CLEANUPS.store(0, Ordering::SeqCst);
    *PROBE_CLEANUP_THREAD.lock().unwrap() = None;
    c.writedata("hotconfig", &format!("{base} p :: Probe(sleep 1000);"));
    std::thread::sleep(Duration::from_millis(300));
    let (_, installs) = r.finish();
    assert!(installs.is_empty());
    assert_eq!(
        PROBE_CLEANUPS.load(Ordering::SeqCst),
        1,
        "the successor was cleaned up before the router thread ended"
    );
    assert_ne!(
        PROBE_CLEANUP_THREAD.lock().unwrap().as_deref(),
        Some("rclick-hotswap"),
        "cleaned up on the router's thread"
    );
    assert_eq!(
        c.reply(),
        vec![
            "520-Write handler 'hotconfig' error:".to_string(),
            "520 router stopped before the hot swap was ready".to_string(),
        ]
    );
}

static TEST_SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn test_signal_handler(_sig: libc::c_int) {
    TEST_SIGNALS.fetch_add(1, Ordering::SeqCst);
}

fn test_handler_addr() -> libc::sighandler_t {
    test_signal_handler as *const () as libc::sighandler_t
}

/// Puts the test's own handler on `sig` (standing in for the driver's).
fn install_test_handler(sig: i32) {
    // SAFETY: a zeroed sigaction with a handler is valid.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = test_handler_addr();
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

fn current_handler(sig: i32) -> libc::sighandler_t {
    // SAFETY: reads the action into a local.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old);
        old.sa_sigaction
    }
}

/// A SIGNAL Script in a configuration being built off the packet path
/// does not take its signal while the old router still runs (a signal
/// then reached the new script too, or only it); it takes it once
/// installed, and gives back the handler it found when it goes.
#[test]
fn a_signal_script_takes_its_signal_only_once_installed() {
    let _serial = serial();
    let sig = libc::SIGUSR2;
    install_test_handler(sig);
    let base = format!(
        "cs :: ControlSocket(TCP, {}+);\n{}",
        random_base(),
        traffic(2)
    );
    let r = Running::start(&base, "cs.port");
    let mut c = Client::connect(r.port);
    c.writedata(
        "hotconfig",
        &format!("{base} sig :: Script(TYPE SIGNAL SIGUSR2, print \"new script\"); p :: Probe(sleep 800);"),
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        current_handler(sig),
        test_handler_addr(),
        "taken during the build"
    );
    let before = TEST_SIGNALS.load(Ordering::SeqCst);
    // SAFETY: raising a signal this test handles.
    unsafe { libc::raise(sig) };
    assert_eq!(TEST_SIGNALS.load(Ordering::SeqCst), before + 1);
    assert_eq!(c.reply(), vec!["200 Write handler 'hotconfig' OK"]);
    let t0 = Instant::now();
    while current_handler(sig) == test_handler_addr() {
        assert!(
            t0.elapsed() < TIMEOUT,
            "the installed script never took its signal"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = r.finish();
    assert_eq!(current_handler(sig), test_handler_addr(), "given back");
    // SAFETY: restores the default action.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// A hot swap to a configuration with a SIGNAL Script that fails to build
/// leaves the signal's handler as it was (it used to leave the default
/// action, so the next signal killed the process); one that is installed
/// and later swapped out gives the handler back too.
#[test]
fn a_failed_hot_swap_leaves_the_signal_handler_alone() {
    let _serial = serial();
    let sig = libc::SIGUSR2;
    install_test_handler(sig);
    let mut r = local_router("Idle -> Discard;");
    let script = "sig :: Script(TYPE SIGNAL SIGUSR2, print \"new script\");";
    assert!(r
        .hotswap(&format!("{script} p :: Probe(fail); Idle -> Discard;"))
        .is_err());
    assert_eq!(current_handler(sig), test_handler_addr());
    r.hotswap(&format!("{script} Idle -> Discard;")).unwrap();
    r.run_limited(3);
    assert_ne!(
        current_handler(sig),
        test_handler_addr(),
        "the script has it"
    );
    r.hotswap("Idle -> Discard;").unwrap();
    assert_eq!(current_handler(sig), test_handler_addr(), "given back");
    drop(r);
    // SAFETY: restores the default action.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}
