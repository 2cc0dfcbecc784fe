//! Network-namespace test scaffolding shared by the device and real-link
//! tests: commands with timeouts, namespaces deleted on drop, veth pairs,
//! and a router running in its own thread inside a namespace.
#![allow(dead_code)] // each test binary uses a different subset

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rclick_core::RouterOptions;
use rclick_elements::testing::try_from_config_with;

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A unique short tag for names (interface names are at most 15 bytes).
pub fn tag() -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{:x}{n}", std::process::id() % 0xfffff)
}

/// Runs `cmd` under `timeout`: whether it succeeded, and stdout + stderr.
pub fn run_t(secs: u32, cmd: &[&str]) -> (bool, String) {
    let secs = secs.to_string();
    match Command::new("timeout")
        .args(["-k", "2", &secs])
        .args(cmd)
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Err(e) => (false, format!("{}: {e}", cmd.join(" "))),
    }
}

/// Runs `cmd` (30 s at most): its output, or why it failed.
pub fn run(cmd: &[&str]) -> Result<String, String> {
    match run_t(30, cmd) {
        (true, out) => Ok(out),
        (false, out) => Err(format!("{} failed: {out}", cmd.join(" "))),
    }
}

pub fn must(cmd: &[&str]) {
    if let Err(e) = run(cmd) {
        panic!("{e}");
    }
}

/// Whether `cmd` can be started at all (the tool is installed).
pub fn have(cmd: &[&str]) -> bool {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Why namespace tests cannot run here (not root, no `ip`, namespaces
/// refused), if they cannot.
pub fn namespace_skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if run(&["ip", "-V"]).is_err() {
        return Some("iproute2 (ip) not installed".into());
    }
    let probe = format!("rcprobe{}", tag());
    if let Err(e) = run(&["ip", "netns", "add", &probe]) {
        return Some(format!("cannot create network namespaces: {e}"));
    }
    let _ = run(&["ip", "netns", "del", &probe]);
    None
}

/// A network namespace, deleted on drop with every device inside it.
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn new(prefix: &str) -> Netns {
        let name = format!("rc{prefix}{}", tag());
        must(&["ip", "netns", "add", &name]);
        let ns = Netns { name };
        ns.exec(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    /// Turns IPv6 off (no router solicitations on the links).
    pub fn disable_ipv6(&self) {
        self.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        self.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
    }

    pub fn cmd<'a>(&'a self, cmd: &[&'a str]) -> Vec<&'a str> {
        let mut full = vec!["ip", "netns", "exec", self.name.as_str()];
        full.extend_from_slice(cmd);
        full
    }

    pub fn exec(&self, cmd: &[&str]) {
        must(&self.cmd(cmd));
    }

    pub fn try_exec(&self, cmd: &[&str]) -> Result<String, String> {
        run(&self.cmd(cmd))
    }

    /// Runs `cmd` in this namespace with a timeout of `secs`.
    pub fn run(&self, secs: u32, cmd: &[&str]) -> (bool, String) {
        run_t(secs, &self.cmd(cmd))
    }

    /// Runs `f` in a new thread that has entered this namespace.
    pub fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> JoinHandle<T> {
        let name = self.name.clone();
        std::thread::spawn(move || {
            enter(&name);
            f()
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = run(&["ip", "netns", "del", &self.name]);
    }
}

/// Moves the calling thread into namespace `name`.
pub fn enter(name: &str) {
    let f = std::fs::File::open(format!("/run/netns/{name}")).expect("open netns");
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a namespace descriptor; affects only this thread.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
}

/// A veth pair with one end in each namespace, both up; the `a` end gets
/// `addr` (with prefix length) when given.
pub fn veth(a_ns: &Netns, a: &str, addr: Option<&str>, b_ns: &Netns, b: &str) {
    must(&[
        "ip", "link", "add", a, "netns", &a_ns.name, "type", "veth", "peer", "name", b, "netns",
        &b_ns.name,
    ]);
    if let Some(addr) = addr {
        a_ns.exec(&["ip", "addr", "add", addr, "dev", a]);
    }
    a_ns.exec(&["ip", "link", "set", a, "up"]);
    b_ns.exec(&["ip", "link", "set", b, "up"]);
}

/// An Ethernet segment for more than two hosts: a Linux bridge in a
/// namespace of its own (deleted on drop with the bridge and every port;
/// the veth ends in the hosts' namespaces go with their peers). STP is off,
/// so a port forwards as soon as it is up.
pub struct Segment {
    pub ns: Netns,
    pub bridge: String,
}

impl Segment {
    pub fn new(prefix: &str) -> Segment {
        let ns = Netns::new(prefix);
        ns.disable_ipv6();
        let bridge = "br0".to_string();
        ns.exec(&[
            "ip",
            "link",
            "add",
            &bridge,
            "type",
            "bridge",
            "stp_state",
            "0",
        ]);
        ns.exec(&["ip", "link", "set", &bridge, "up"]);
        Segment { ns, bridge }
    }

    /// Plugs `host` into the segment: a veth pair whose end `dev` is in
    /// `host` (up, with `addr` when given) and whose other end is a bridge
    /// port.
    pub fn attach(&self, host: &Netns, dev: &str, addr: Option<&str>) {
        let port = format!("p{}", tag());
        veth(host, dev, addr, &self.ns, &port);
        self.ns
            .exec(&["ip", "link", "set", &port, "master", &self.bridge]);
    }
}

/// A `tcpdump` running in a namespace (under `timeout`), started and
/// known to be capturing (in immediate mode); `stop` interrupts it and
/// returns what it printed.
pub struct Tcpdump {
    child: Option<std::process::Child>,
    stdout: Option<JoinHandle<String>>,
}

impl Tcpdump {
    /// Starts `tcpdump ARGS` in `ns` for at most `secs` seconds and waits
    /// until it says it is listening. Add `-l` to ARGS for text output.
    pub fn start(ns: &Netns, secs: u32, args: &[&str]) -> Tcpdump {
        use std::io::{BufRead, BufReader, Read};
        // Immediate mode: each packet is handed over as it arrives, not in
        // ring blocks that an interrupt would leave unread.
        let mut cmd = vec!["tcpdump", "--immediate-mode"];
        cmd.extend_from_slice(args);
        let mut child = Command::new("timeout")
            .args(["-k", "2", &secs.to_string()])
            .args(ns.cmd(&cmd))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tcpdump");
        let err = child.stderr.take().expect("tcpdump stderr");
        let mut out = child.stdout.take().expect("tcpdump stdout");
        // Drained as it comes, so that tcpdump never waits on a full pipe.
        let stdout = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = out.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Vec::new();
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if line.contains("listening on") {
                    let _ = tx.send(Ok(()));
                }
                said.push(line);
            }
            let _ = tx.send(Err(said.join("\n")));
        });
        let dump = Tcpdump {
            child: Some(child),
            stdout: Some(stdout),
        };
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => dump,
            Ok(Err(said)) => panic!("tcpdump {}: {said}", args.join(" ")),
            Err(_) => panic!("tcpdump {} did not start", args.join(" ")),
        }
    }

    /// Interrupts tcpdump (it then flushes and exits) and returns its
    /// standard output.
    pub fn stop(mut self) -> String {
        let mut child = self.child.take().expect("running");
        // `timeout` passes SIGINT on to tcpdump. SAFETY: signals our own
        // child, which has not been reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let _ = child.wait();
        self.stdout
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Tcpdump {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SIGTERM, which `timeout` passes on (SIGKILL would leave
            // tcpdump running). SAFETY: signals our own unreaped child.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

/// The loss percentage in `ping`'s summary.
pub fn ping_loss(out: &str) -> Option<f64> {
    let i = out.find("% packet loss")?;
    let start = out[..i].rfind([' ', ','])? + 1;
    out[start..i].parse().ok()
}

type Reply = mpsc::Sender<Result<String, String>>;

enum Req {
    /// A read handler and its parameter.
    Read(String, Option<String>, Reply),
    /// The router thread's CPU time, in nanoseconds.
    Cpu(Reply),
    /// Hot swap to a new configuration.
    Swap(String, Reply),
    /// A function to run on the router's thread.
    Call(Box<dyn FnOnce() -> String + Send>, Reply),
    /// A write handler and its value.
    Write(String, String, Reply),
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A router running in its own thread inside a namespace.
pub struct Running {
    stop: Arc<AtomicBool>,
    req: mpsc::Sender<Req>,
    thread: Option<JoinHandle<Vec<String>>>,
}

impl Running {
    pub fn start(ns: &Netns, config: &str) -> Running {
        let text = config.to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (req_tx, req_rx) = mpsc::channel::<Req>();
        let thread = ns.spawn(move || {
            let opts = RouterOptions {
                capture_chatter: true,
                hotswap: true,
                ..Default::default()
            };
            let mut router = match try_from_config_with(&text, &opts) {
                Ok(r) => r,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.join("\n")));
                    return Vec::new();
                }
            };
            let _ = ready_tx.send(Ok(()));
            while !stop2.load(Ordering::Relaxed) {
                router.run_limited(4);
                while let Ok(r) = req_rx.try_recv() {
                    match r {
                        Req::Read(h, param, reply) => {
                            let _ = reply.send(router.read_handler(&h, param.as_deref()));
                        }
                        Req::Cpu(reply) => {
                            let _ = reply.send(Ok(thread_cpu_ns().to_string()));
                        }
                        Req::Call(f, reply) => {
                            let _ = reply.send(Ok(f()));
                        }
                        Req::Write(h, value, reply) => {
                            let r = router.write_handler(&h, &value).map(|()| String::new());
                            let _ = reply.send(r);
                        }
                        Req::Swap(text, reply) => {
                            let r = router.hotswap(&text).map(|()| String::new());
                            let _ = reply.send(r.map_err(|d| format!("{d:?}")));
                        }
                    }
                }
            }
            let chatter = router.take_chatter();
            router.cleanup();
            chatter
        });
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("router failed: {e}"),
            Err(e) => panic!("router thread: {e}"),
        }
        Running {
            stop,
            req: req_tx,
            thread: Some(thread),
        }
    }

    fn ask(&self, make: impl FnOnce(Reply) -> Req) -> String {
        let (tx, rx) = mpsc::channel();
        self.req.send(make(tx)).expect("router thread gone");
        rx.recv_timeout(Duration::from_secs(5))
            .expect("router thread answers")
            .unwrap_or_else(|e| panic!("handler: {e}"))
    }

    pub fn read(&self, handler: &str) -> String {
        self.ask(|tx| Req::Read(handler.to_string(), None, tx))
            .trim()
            .to_string()
    }

    /// Reads a handler that takes a parameter (`rt.lookup` `ADDR`).
    pub fn read_param(&self, handler: &str, param: &str) -> String {
        self.ask(|tx| Req::Read(handler.to_string(), Some(param.to_string()), tx))
            .trim()
            .to_string()
    }

    pub fn read_u64(&self, handler: &str) -> u64 {
        let v = self.read(handler);
        v.parse()
            .unwrap_or_else(|_| panic!("{handler} = {v:?}, not a number"))
    }

    /// Writes a handler; panics with the error if the write fails.
    #[allow(dead_code)] // not every test binary writes handlers
    pub fn write(&self, handler: &str, value: &str) {
        self.ask(|tx| Req::Write(handler.to_string(), value.to_string(), tx));
    }

    /// Hot swaps the router to `config`; panics with the errors if the
    /// swap is refused.
    pub fn hotswap(&self, config: &str) {
        self.ask(|tx| Req::Swap(config.to_string(), tx));
    }

    /// Runs `f` on the router's thread (between driver runs) and returns
    /// what it says: for reading thread-local state such as an allocation
    /// counter.
    pub fn on_router_thread(&self, f: impl FnOnce() -> String + Send + 'static) -> String {
        self.ask(|tx| Req::Call(Box::new(f), tx))
    }

    /// CPU time the router thread has used so far.
    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.ask(Req::Cpu).parse().expect("cpu ns"))
    }

    /// Stops the router and returns its chatter.
    pub fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .map(|t| t.join().expect("router thread panicked"))
            .unwrap_or_default()
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

/// Returns from the calling test, printing why, if `reason` (an
/// `Option<String>`) is `Some`.
#[allow(unused_macros)] // not every test binary skips tests
macro_rules! skip_if {
    ($reason:expr) => {
        if let Some(why) = $reason {
            eprintln!("SKIP: {why}");
            return;
        }
    };
}
#[allow(unused_imports)] // not every test binary skips tests
pub(crate) use skip_if;

/// Checks that each `(configuration, why)` that parses is rejected when
/// the router is built (configurations that do not parse are skipped).
pub fn assert_rejected(cases: &[(&str, &str)]) {
    let reg = rclick_elements::registry();
    for &(conf, why) in cases {
        let outcome =
            rclick_lang::parse_router(conf, "test", &reg, &rclick_lang::ParseOptions::default());
        let errs = outcome.has_errors();
        let Some(spec) = outcome.spec.filter(|_| !errs) else {
            continue;
        };
        let r = rclick_core::Router::new(spec, conf, &reg, &RouterOptions::default());
        assert!(r.is_err(), "{why}: {conf} was accepted");
    }
}

/// A process running in a namespace, killed on drop; its standard output
/// and error go to a log file, read by `output`.
pub struct Background {
    child: std::process::Child,
    log: std::path::PathBuf,
}

impl Background {
    pub fn start(ns: &Netns, log: std::path::PathBuf, cmd: &[&str]) -> Background {
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .args(cmd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn");
        Background { child, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the process (SIGTERM, then SIGKILL after 3 s) and returns its
    /// output.
    pub fn stop(mut self) -> String {
        // SAFETY: kill on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let t = std::time::Instant::now();
        while self.alive() && t.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.output()
    }

    /// Waits for the process to end by itself (at most `secs`), then kills
    /// it; says whether it ended, and its output.
    pub fn wait(mut self, secs: u64) -> (bool, String) {
        let t = std::time::Instant::now();
        while self.alive() && t.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let done = !self.alive();
        let _ = self.child.kill();
        let _ = self.child.wait();
        (done, self.output())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a namespace test that pings cannot run here, if it cannot: no
/// `timeout`, no namespaces (see `namespace_skip_reason`), or no `ping`.
pub fn ping_namespace_skip_reason() -> Option<String> {
    if !have(&["timeout", "--version"]) {
        return Some("timeout not installed (Debian package coreutils)".into());
    }
    if let Some(why) = namespace_skip_reason() {
        return Some(why);
    }
    if !run_t(5, &["ping", "-V"]).0 {
        return Some("ping not installed (Debian package iputils-ping)".into());
    }
    None
}
