//! Helpers for tests: build routers from element/connection lists or from
//! configuration text, with simulated time.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Router, RouterOptions};
use rclick_lang::RouterSpec;

/// A spec from `(name, class, config)` triples and `(from, from_port, to,
/// to_port)` connections by index.
pub fn spec(elems: &[(&str, &str, &str)], conns: &[(usize, usize, usize, usize)]) -> RouterSpec {
    RouterSpec::from_lists("test", elems, conns)
}

fn options() -> RouterOptions {
    RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        capture_chatter: true,
        ..Default::default()
    }
}

/// Builds a router (simulated time, chatter captured) or returns the
/// error messages, one string each.
pub fn try_build(s: RouterSpec) -> Result<Router, Vec<String>> {
    let reg = crate::registry();
    Router::new(s, "", &reg, &options()).map_err(|d| d.iter().map(|x| x.to_string()).collect())
}

/// Builds a router or panics with every error.
pub fn build(s: RouterSpec) -> Router {
    try_build(s).unwrap_or_else(|e| panic!("router failed:\n{}", e.join("\n")))
}

/// Parses configuration text (landmark `test`) and builds the router with
/// simulated time and captured chatter, or returns every error message.
pub fn try_from_config(text: &str) -> Result<Router, Vec<String>> {
    try_from_config_with(text, &options())
}

/// Like [`try_from_config`] with the given router options (for example
/// real time, or hotswap allowed).
pub fn try_from_config_with(text: &str, opts: &RouterOptions) -> Result<Router, Vec<String>> {
    let reg = crate::registry();
    let outcome =
        rclick_lang::parse_router(text, "test", &reg, &rclick_lang::ParseOptions::default());
    if outcome.has_errors() {
        return Err(outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.to_string())
            .collect());
    }
    let spec = outcome.spec.ok_or_else(|| vec!["no router".to_string()])?;
    Router::new(spec, text, &reg, opts).map_err(|d| d.iter().map(|x| x.to_string()).collect())
}

/// Every error message (one a line) of configuration text that must not
/// build (simulated time); panics if it builds.
pub fn config_errors(text: &str) -> String {
    config_errors_with(text, &options())
}

/// Like [`config_errors`] with the given router options.
pub fn config_errors_with(text: &str, opts: &RouterOptions) -> String {
    match try_from_config_with(text, opts) {
        Ok(_) => panic!("{text}: accepted"),
        Err(e) => e.join("\n"),
    }
}

/// Like [`try_from_config_with`], panicking with every error.
pub fn from_config_with(text: &str, opts: &RouterOptions) -> Router {
    try_from_config_with(text, opts).unwrap_or_else(|e| panic!("router failed:\n{}", e.join("\n")))
}

/// Like [`try_from_config`], panicking with every error.
pub fn from_config(text: &str) -> Router {
    try_from_config(text).unwrap_or_else(|e| panic!("router failed:\n{}", e.join("\n")))
}

/// Reads every handler of every element that reads without a parameter
/// and is not also a write handler, discarding the values: a fuzz run's
/// check that no read panics on the state it left.
pub fn read_every_handler(router: &mut Router) {
    for i in 0..router.nelements() {
        let Some(el) = router.element_name(i).map(str::to_string) else {
            continue;
        };
        for h in router.element_handlers(i) {
            if h.is_read()
                && !h.is_write()
                && h.flags & rclick_core::element::hflags::READ_PARAM == 0
            {
                let _ = router.read_handler(&format!("{el}.{}", h.name), None);
            }
        }
    }
}

/// Handler `handler` read as an unsigned number.
pub fn read_number(router: &mut Router, handler: &str) -> Result<u64, String> {
    router
        .read_handler(handler, None)?
        .trim()
        .parse()
        .map_err(|_| format!("{handler}: not a number"))
}

/// The bytes of the packets waiting in the Queue named `queue`, taken
/// out, in order.
pub fn drain_queue(router: &mut Router, queue: &str) -> Vec<Vec<u8>> {
    let i = router
        .find_element(queue)
        .unwrap_or_else(|| panic!("no element {queue}"));
    let mut out = Vec::new();
    while let Some(b) = router.pull_from(i, 0, 64) {
        if b.is_empty() {
            break;
        }
        out.extend(b.packets().iter().map(|p| p.data().to_vec()));
    }
    out
}

/// Reads a handler as a string, panicking with the handler's error.
pub fn read(router: &mut Router, handler: &str) -> String {
    router
        .read_handler(handler, None)
        .unwrap_or_else(|e| panic!("{handler}: {e}"))
}

/// An IPv4 packet (identification 0x1234) with the given options (padded
/// with zeros to a multiple of 4) and payload, and a correct header
/// checksum.
pub fn ipv4_packet(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    ttl: u8,
    frag: u16,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let mut opts = options.to_vec();
    while !opts.len().is_multiple_of(4) {
        opts.push(0);
    }
    let hl = 20 + opts.len();
    let total = hl + payload.len();
    let mut p = vec![0u8; 20];
    p[0] = 0x40 | (hl / 4) as u8;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
    p[6..8].copy_from_slice(&frag.to_be_bytes());
    p[8] = ttl;
    p[9] = proto;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    p.extend_from_slice(&opts);
    p.extend_from_slice(payload);
    let c = rclick_core::wire::checksum::checksum(&p[..hl]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p
}

/// Writes the TCP or UDP checksum (at offset `at` of the segment) over
/// the IPv4 pseudo-header and the segment.
pub fn set_l4_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, seg: &mut [u8], at: usize) {
    use rclick_core::wire::checksum;
    seg[at] = 0;
    seg[at + 1] = 0;
    let ps = checksum::pseudo_header_v4(src, dst, proto, seg.len() as u16);
    let c = !(checksum::sum(seg, ps) as u16);
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// An IPv4 UDP datagram (TTL 64) carrying `data`, every checksum correct.
pub fn udp_ipv4(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, data: &[u8]) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(data);
    set_l4_checksum(src, dst, 17, &mut u, 6);
    ipv4_packet(src, dst, 17, 64, 0, &[], &u)
}

/// An IPv4 TCP segment (TTL 64, sequence number 1000, window 0xffff, no
/// options) with the given flags carrying `data`, every checksum correct.
pub fn tcp_ipv4(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    flags: u8,
    data: &[u8],
) -> Vec<u8> {
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&1000u32.to_be_bytes());
    t[12] = 5 << 4;
    t[13] = flags;
    t[14] = 0xff;
    t[15] = 0xff;
    t.extend_from_slice(data);
    set_l4_checksum(src, dst, 6, &mut t, 16);
    ipv4_packet(src, dst, 6, 64, 0, &[], &t)
}

/// A ClassBench filter rule: source and destination prefixes as
/// `(address, mask)`, port ranges as `(low, high)`, protocol as
/// `(value, mask)`.
pub struct ClassBenchRule {
    pub src: (u32, u32),
    pub dst: (u32, u32),
    pub sport: (u16, u16),
    pub dport: (u16, u16),
    pub proto: (u8, u8),
}

fn classbench_prefix(s: &str) -> Option<(u32, u32)> {
    let (a, l) = s.split_once('/')?;
    let addr = u32::from(a.parse::<std::net::Ipv4Addr>().ok()?);
    let len: u32 = l.parse().ok()?;
    let mask = if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    };
    Some((addr & mask, mask))
}

/// The rules of a ClassBench filter file (lines starting with `@`), or
/// `None` if any rule line is malformed.
pub fn parse_classbench(text: &str) -> Option<Vec<ClassBenchRule>> {
    let hex = |s: &str| u8::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let range = |s: &str| -> Option<(u16, u16)> {
        let (a, b) = s.split_once(':')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    text.lines()
        .filter(|l| l.starts_with('@'))
        .map(|l| {
            let f: Vec<&str> = l[1..].split('\t').collect();
            let (p, pm) = f.get(4)?.split_once('/')?;
            Some(ClassBenchRule {
                src: classbench_prefix(f.first()?)?,
                dst: classbench_prefix(f.get(1)?)?,
                sport: range(f.get(2)?)?,
                dport: range(f.get(3)?)?,
                proto: (hex(p)?, hex(pm)?),
            })
        })
        .collect()
}

/// The IPFilter pattern of a ClassBench rule.
pub fn classbench_pattern(r: &ClassBenchRule) -> String {
    let ip = |a: u32| std::net::Ipv4Addr::from(a).to_string();
    let mut parts = Vec::new();
    if r.src.1 != 0 {
        parts.push(format!("src net {}/{}", ip(r.src.0), r.src.1.count_ones()));
    }
    if r.dst.1 != 0 {
        parts.push(format!("dst net {}/{}", ip(r.dst.0), r.dst.1.count_ones()));
    }
    for (name, (lo, hi)) in [("src", r.sport), ("dst", r.dport)] {
        if (lo, hi) == (0, 65535) {
            continue;
        }
        if lo == hi {
            parts.push(format!("{name} port {lo}"));
        } else {
            parts.push(format!("{name} port >= {lo} && {name} port <= {hi}"));
        }
    }
    if r.proto.1 == 0xFF {
        parts.push(format!("ip proto {}", r.proto.0));
    }
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(" && ")
    }
}

/// IPFilter compilations that between them exercise every segment kind:
/// the default, bit vectors for every box-form run, unoptimized decision
/// programs only, and bit vectors with a budget so small that runs split
/// into segments of one or a few rules.
pub fn ipfilter_compile_variants() -> [crate::ip::ipfilter_compile::CompileOptions; 4] {
    use crate::ip::ipfilter_compile::CompileOptions;
    [
        CompileOptions::default(),
        CompileOptions {
            box_threshold: 1,
            optimize: true,
            ..CompileOptions::default()
        },
        CompileOptions {
            box_threshold: usize::MAX,
            optimize: false,
            ..CompileOptions::default()
        },
        CompileOptions {
            box_threshold: 1,
            box_words_per_rule: 3,
            box_words_floor: 0,
            box_vectors: crate::ip::ipfilter_compile::VectorForm::Compressed,
            ..CompileOptions::default()
        },
    ]
}

/// A small deterministic xorshift generator (the seed must not be zero).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 if `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A router running in real time in a thread of its own; stopped (and
/// its thread joined) when dropped.
pub struct RouterThread {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<String>>>,
    /// The value of the port handler once the router was initialized (0
    /// if it could not be read as a port).
    pub port: u16,
}

impl RouterThread {
    /// Starts configuration `text` with `opts` and waits up to `timeout`
    /// for it to initialize, then reads `port_handler`; panics if the
    /// router fails.
    pub fn start(
        text: &str,
        opts: RouterOptions,
        port_handler: &str,
        timeout: std::time::Duration,
    ) -> RouterThread {
        let text = text.to_string();
        let port_handler = port_handler.to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut router = match try_from_config_with(&text, &opts) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e.join("\n")));
                    return Vec::new();
                }
            };
            let port = router
                .read_handler(&port_handler, None)
                .ok()
                .and_then(|p| p.trim().parse::<u16>().ok())
                .unwrap_or(0);
            let _ = tx.send(Ok((router.stop_flag(), port)));
            router.run();
            let chatter = router.take_chatter();
            router.cleanup();
            chatter
        });
        let (stop, port) = rx
            .recv_timeout(timeout)
            .expect("router thread")
            .unwrap_or_else(|e| panic!("router failed: {e}"));
        RouterThread {
            stop,
            thread: Some(thread),
            port,
        }
    }

    /// Stops the router and returns its chatter.
    pub fn finish(mut self) -> Vec<String> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .take()
            .map(|t| t.join().expect("router thread panicked"))
            .unwrap_or_default()
    }
}

impl Drop for RouterThread {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The packet data of each record of a pcap file (classic or nanosecond
/// format, either byte order), for tests reading what ToDump or tcpdump
/// wrote; an unreadable or truncated file gives the whole records before
/// the damage.
pub fn pcap_records(path: &std::path::Path) -> Vec<Vec<u8>> {
    let b = std::fs::read(path).unwrap_or_default();
    let mut out = Vec::new();
    if b.len() < 24 {
        return out;
    }
    let le = b[0] == 0xd4 || b[0] == 0x4d;
    let u32at = |i: usize| {
        let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut i = 24;
    while i + 16 <= b.len() {
        let n = u32at(i + 8) as usize;
        if n > b.len() - i - 16 {
            break;
        }
        out.push(b[i + 16..i + 16 + n].to_vec());
        i += 16 + n;
    }
    out
}
