//! Argument sweep (issue 13, "make it stay fixed"): every element class,
//! each of its arguments (positional and keyword) set to zero, negative,
//! huge and malformed values as well as plausible ones, in a router that
//! feeds it a few packets of several sizes (0, 14, 20, 42, 60 and 1500
//! bytes; valid Ethernet/IP/ARP frames and garbage) and drains its
//! outputs. A configuration error is fine; a panic, a hang or an
//! allocation beyond a bound fails, with the list of every failing
//! (class, argument, value). Each writable handler of each class is swept
//! with the same values after initialization.
//!
//! A debug build sweeps a subset of the values (all of them with
//! `RCLICK_SWEEP_FULL=1`); the release build (scripts/test) sweeps all.
//! `RCLICK_SWEEP_ONLY=Class1,Class2` limits the sweep to some classes.
//!
//! The arguments of a class are those its `configure` asks the element
//! kit for (`rclick_core::conf::args::introspect` notes each read), plus
//! the keywords its documentation header lists. Classes that read their
//! arguments without the kit get their first positional arguments swept.
//!
//! Each case runs in a thread of its own with a time bound, and the whole
//! sweep runs in child processes of this test binary, so a case that
//! aborts the process (stack overflow, failed allocation) is reported as a
//! failure and the sweep continues after it. A global allocator counts the
//! live bytes of each case's thread and refuses any single allocation over
//! 1 GiB there (which aborts, and is reported).

use rclick_core::conf::introspect::{self, ArgRead};
use rclick_core::element::handlers::hflags;
use rclick_elements::testing::{ipv4_packet, try_from_config};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------
// Allocation accounting.

struct Tracking;

/// A single allocation larger than this on a case thread is refused.
const HARD_LIMIT: usize = 1 << 30;
/// Peak live bytes a case may reach (its configuration text included).
const PEAK_LIMIT: i64 = 256 << 20;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
    static LIMITED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn grow(n: usize) -> bool {
    if n > HARD_LIMIT && LIMITED.try_with(|l| l.get()).unwrap_or(false) {
        return false;
    }
    let _ = LIVE.try_with(|l| {
        let v = l.get() + n as i64;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
    true
}

fn shrink(n: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get() - n as i64));
}

// SAFETY: forwards to the system allocator, only counting bytes (and
// refusing oversized requests, which callers see as allocation failure).
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !grow(new_size) {
            return std::ptr::null_mut();
        }
        shrink(layout.size());
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

// ---------------------------------------------------------------------
// What to sweep.

/// Classes that need the outside world, with the reason.
const SKIPPED: &[(&str, &str)] = &[
    ("FromDevice", "captures from a network device"),
    ("PollDevice", "captures from a network device"),
    ("ToDevice", "sends on a network device"),
    ("FromHost", "creates a kernel TUN/TAP device"),
    ("ToHost", "writes to a kernel TUN/TAP device"),
    ("ToHostSniffers", "writes to a kernel device's sniffers"),
    ("KernelTap", "creates a kernel TAP device"),
    ("KernelTun", "creates a kernel TUN device"),
    ("Socket", "opens network sockets"),
    ("McastSocket", "joins multicast groups"),
    ("ControlSocket", "listens on a socket"),
    ("HTTPServer", "listens on a socket"),
];

/// Base configurations for classes whose documented example does not
/// build on its own (it names other elements or files).
fn base_overrides(dir: &Path) -> BTreeMap<&'static str, Vec<String>> {
    let f = |name: &str| dir.join(name).display().to_string();
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    m.insert("FromDump", vec![format!("{}, STOP true", f("in.pcap"))]);
    m.insert("ToDump", vec![f("out.pcap")]);
    m.insert(
        "FromIPSummaryDump",
        vec![format!("{}, STOP true", f("in.ipsum"))],
    );
    m.insert("ToIPSummaryDump", vec![f("out.ipsum")]);
    m.insert("QueueYankTest", vec!["yq".into()]);
    m.insert(
        "EtherSpanTree",
        vec!["02:00:00:00:00:02, si, so, ss".into()],
    );
    // The example's default route fills the whole DIR-24-8 root table,
    // which is slow in a debug build for each of hundreds of cases.
    m.insert(
        "DirectIPLookup",
        vec!["10.0.0.0/16 10.0.0.1 0, 192.168.7.128/25 1".into()],
    );
    m
}

/// For classes whose arguments have a syntax of their own: the first
/// argument is also swept as each template with `{}` replaced by a value.
const TEMPLATES: &[(&str, &[&str])] = &[
    (
        "IPFilter",
        &[
            "allow {}",
            "allow src host {}",
            "allow tcp port {}",
            "allow ip[{}] = 1",
            "allow ip[0:{}] = 1",
            "allow len > {}",
            "allow src net 10.0.0.0/{}",
        ],
    ),
    (
        "IPClassifier",
        &[
            "src host {}",
            "udp port {}",
            "ip[{}] = 1",
            "ip[0:{}] != 0",
            "ip proto {}",
            "icmp type {}",
        ],
    ),
    ("Classifier", &["{}/00", "12/{}", "12/0800%{}", "!{}/45"]),
    (
        "FlowGate",
        &[
            "src {}",
            "dst 10.0.0.0/{}",
            "proto {}",
            "sport {}",
            "dport 1-{}",
            "iif {}",
        ],
    ),
    (
        "LinearIPLookup",
        &["{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"],
    ),
    (
        "LookupIPRoute",
        &["{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"],
    ),
    (
        "RadixIPLookup",
        &["{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"],
    ),
    (
        "RadixIPsecLookup",
        &[
            "{} 0",
            "10.0.0.0/8 {}",
            "10.0.0.0/8 10.0.0.1 {}",
            "0.0.0.0/0 10.0.0.1 1 {} aaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbb 1 8",
            "0.0.0.0/0 10.0.0.1 1 5 {} bbbbbbbbbbbbbbbb 1 8",
            "0.0.0.0/0 10.0.0.1 1 5 aaaaaaaaaaaaaaaa {} 1 8",
            "0.0.0.0/0 10.0.0.1 1 5 aaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbb {} 8",
            "0.0.0.0/0 10.0.0.1 1 5 aaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbb 1 {}",
        ],
    ),
    (
        "RangeIPLookup",
        &["{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"],
    ),
    (
        "StaticIPLookup",
        &["{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"],
    ),
    (
        "DirectIPLookup",
        &["{} 0", "10.0.0.0/16 {}", "10.0.0.0/16 10.0.0.1 {}"],
    ),
    ("AddressInfo", &["n {}", "n 10.0.0.1 {}"]),
    ("PortInfo", &["p {}", "p {}/tcp", "p 80/{}"]),
    ("ARPResponder", &["{} 00:01:02:03:04:05", "10.0.0.1 {}"]),
    ("ScheduleInfo", &["x {}"]),
    ("AlignmentInfo", &["x {} 0", "x 4 {}"]),
    (
        "Script",
        &[
            "wait {}",
            "set a {}",
            "write x.{}",
            "goto {}",
            "loop {}",
            "print {}",
            "init a {}",
        ],
    ),
    (
        "DriverManager",
        &["wait {}", "wait_stop {}", "write x.{}", "wait_time {}"],
    ),
];

/// The sweep's values: zero, negative, huge, malformed, plausible.
fn values() -> Vec<String> {
    let mut v: Vec<String> = [
        "0",
        "-1",
        "-0.5",
        "65536",
        "262145",
        "1000000",
        "1000000000",
        "2147483647",
        "2147483648",
        "-2147483648",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "1e308",
        "-1e308",
        "1e-308",
        "nan",
        "inf",
        "0x7fffffff",
        "",
        "zz",
        "1.2.3.4.5",
        "::::",
        "(",
        ")",
        "\"unbalanced",
        "'",
        "\\<zz>",
        "\"(\"",
        "-",
        "10.0.0.1/99",
        "1",
        "14",
        "1500",
        "true",
        "10.0.0.1",
        "10.0.0.0/8",
        "00:01:02:03:04:05",
        "0.5",
        "2ms",
        "tcp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if cfg!(debug_assertions) && std::env::var_os("RCLICK_SWEEP_FULL").is_none() {
        // A debug build is ten times slower: it sweeps these (the release
        // build, which CI runs, sweeps them all).
        const DEBUG: &[&str] = &[
            "0",
            "-1",
            "262145",
            "1000000000",
            "-2147483648",
            "4294967295",
            "18446744073709551616",
            "1e308",
            "",
            "zz",
            "1.2.3.4.5",
            "::::",
            "(",
            "\"unbalanced",
            "1",
            "10.0.0.1",
        ];
        v.retain(|x| DEBUG.contains(&x.as_str()));
    }
    v.push("9".repeat(100_000));
    v.push(format!("\"{}\"", "A".repeat(200_000)));
    v.push("A".repeat(200_000));
    v
}

/// A short form of a value for reports.
fn show(v: &str) -> String {
    if v.len() > 40 {
        format!("{}...({} bytes)", &v[..20], v.len())
    } else {
        format!("{v:?}")
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn eth(ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0xff; 6];
    p.extend_from_slice(&[0, 1, 2, 3, 4, 5]);
    p.extend_from_slice(&ty.to_be_bytes());
    p.extend_from_slice(payload);
    p
}

/// Packet sources: `(source config, path before the element)`.
fn sources() -> Vec<(String, &'static str)> {
    let udp = ipv4_packet([10, 0, 0, 1], [10, 0, 0, 2], 17, 64, 0, &[], &{
        let mut u = vec![0x04, 0xd2, 0x00, 0x35, 0, 26, 0, 0];
        u.extend_from_slice(&[0x55; 18]);
        u
    });
    let tcp = ipv4_packet([192, 168, 1, 1], [10, 0, 0, 2], 6, 1, 0, &[], &{
        let mut t = vec![0u8; 20];
        t[0..4].copy_from_slice(&[0x30, 0x39, 0x00, 0x50]);
        t[12] = 0x50;
        t[13] = 0x12;
        t.resize(1500 - 14 - 20, 0x61);
        t
    });
    let icmp = ipv4_packet(
        [10, 0, 0, 2],
        [10, 0, 0, 1],
        1,
        64,
        0,
        &[0x94, 4, 0, 0],
        &[8, 0, 0xf7, 0xff, 0, 0, 0, 0],
    );
    let frag = ipv4_packet([10, 0, 0, 1], [224, 0, 0, 1], 17, 0, 0x2001, &[], &[1; 40]);
    let ip_only = ipv4_packet([10, 0, 0, 1], [10, 0, 0, 2], 253, 64, 0, &[], &[]);
    let mut arp = vec![0, 1, 8, 0, 6, 4, 0, 1, 0, 1, 2, 3, 4, 5, 10, 0, 0, 1];
    arp.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let mut truncated = eth(0x0800, &udp);
    // IP total length 1000, 40 bytes present.
    truncated[16..18].copy_from_slice(&1000u16.to_be_bytes());
    truncated.truncate(14 + 40);
    let mut garbage = Vec::new();
    let mut x: u32 = 0x1234_5678;
    for _ in 0..60 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        garbage.push(x as u8);
    }
    let mut bad_hl = eth(0x0800, &ip_only);
    bad_hl[14] = 0x4f;
    let mut v6 = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
    v6.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    v6.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    v6.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    let data = |b: &[u8]| format!("DATA \"\\<{}>\"", hex(b));
    vec![
        ("DATASIZE 0".to_string(), ""),
        (data(&eth(0x0800, &[])), ""),
        (data(&ip_only), ""),
        (data(&eth(0x0806, &arp)), ""),
        (data(&eth(0x0800, &udp)), ""),
        (data(&eth(0x0800, &tcp)), ""),
        (data(&garbage), ""),
        (data(&truncated), ""),
        (data(&bad_hl), ""),
        (data(&eth(0x86dd, &v6)), ""),
        (data(&eth(0x0800, &frag)), ""),
        (
            data(&eth(0x0800, &udp)),
            "-> Strip(LENGTH 14) -> CheckIPHeader -> GetIPAddress(16) -> Unstrip(LENGTH 14)",
        ),
        (
            data(&icmp),
            "-> MarkIPHeader(OFFSET 0) -> GetIPAddress(16) -> Paint(COLOR 1)",
        ),
        (
            data(&eth(0x0800, &tcp)),
            "-> MarkIPHeader(OFFSET 14) -> GetIPAddress(30)",
        ),
    ]
}

// ---------------------------------------------------------------------
// Element documentation: examples and keywords.

struct Doc {
    examples: Vec<String>,
    keywords: Vec<String>,
}

fn element_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            element_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The configuration strings of `class` in `text` (`Class(...)` with
/// balanced parentheses; `Class` alone gives "").
fn configs_in(text: &str, class: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(class) {
        let at = from + i;
        from = at + class.len();
        let before_ok = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let after = b.get(from).copied();
        if !before_ok || after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            continue;
        }
        if after == Some(b'(') {
            let mut depth = 0;
            let mut end = None;
            for (j, &c) in b[from..].iter().enumerate() {
                match c {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(from + j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(e) = end {
                out.push(text[from + 1..e].to_string());
            }
        } else {
            out.push(String::new());
        }
    }
    out
}

fn docs() -> BTreeMap<String, Doc> {
    let mut files = Vec::new();
    element_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut out = BTreeMap::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.strip_prefix("//!").unwrap_or(l))
            })
            .collect();
        let Some(class) = header.first().and_then(|l| l.strip_prefix("# ")) else {
            continue;
        };
        let mut section = "";
        let mut example = String::new();
        let mut keywords = Vec::new();
        for l in &header[1..] {
            if let Some(s) = l.strip_prefix("## ") {
                section = s;
                continue;
            }
            if section.starts_with("Example") {
                example.push_str(l);
                example.push('\n');
            }
            if section.starts_with("Keywords") && l.starts_with("- ") {
                let mut rest = *l;
                while let Some(i) = rest.find("**") {
                    let after = &rest[i + 2..];
                    let Some(j) = after.find("**") else { break };
                    let w = &after[..j];
                    if !w.is_empty()
                        && w.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    {
                        keywords.push(w.to_string());
                    }
                    rest = &after[j + 2..];
                }
            }
        }
        let examples = configs_in(&example, class);
        out.insert(class.to_string(), Doc { examples, keywords });
    }
    out
}

// ---------------------------------------------------------------------
// Routers around one element.

/// Port counts allowed by a Click port-count string side (`-`, `N`,
/// `N-`, `N-M`, `=`), as a small candidate list.
fn counts(side: &str) -> Vec<usize> {
    let range = |s: &str| -> (usize, usize) {
        if s == "-" {
            return (0, 4);
        }
        match s.split_once('-') {
            Some((a, "")) => {
                let a = a.parse().unwrap_or(0);
                (a, a + 3)
            }
            Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(0)),
            None => {
                let a = s.parse().unwrap_or(0);
                (a, a)
            }
        }
    };
    let (lo, hi) = range(side);
    (lo..=hi.min(lo + 4)).collect()
}

fn port_options(port_count: &str) -> Vec<(usize, usize)> {
    let (i, o) = port_count
        .split_once('/')
        .unwrap_or((port_count, port_count));
    let ins = counts(i);
    let mut out = Vec::new();
    for &n in &ins {
        let outs = if o.starts_with('=') {
            vec![n]
        } else {
            counts(o)
        };
        for m in outs {
            out.push((n, m));
        }
    }
    out.sort_by_key(|&(n, m)| (n + m, n));
    out
}

fn mode(processing: &str, input: bool, port: usize) -> u8 {
    let (i, o) = processing
        .split_once('/')
        .unwrap_or((processing, processing));
    let s = if input { i } else { o }.as_bytes();
    if s.is_empty() {
        return b'a';
    }
    s[port.min(s.len() - 1)]
}

#[derive(Clone)]
struct Shape {
    class: String,
    nin: usize,
    nout: usize,
    processing: String,
}

/// A queue for elements that name one (QueueYankTest), and the
/// suppressors and switch EtherSpanTree names.
const EXTRA: &str = "Idle -> yq :: SimpleQueue(CAPACITY 5) -> Discard(BURST 7);\n\
    Idle -> si :: Suppressor -> ss :: EtherSwitch -> so :: Suppressor -> Idle;\n\
    Idle -> [1]si[1] -> [1]ss[1] -> [1]so[1] -> Idle;\n";

/// The configuration with the element between Idle elements (to find
/// its port counts and arguments cheaply).
fn idle_config(shape: &Shape, conf: &str) -> String {
    let mut s = format!("x :: {}({conf});\n{EXTRA}", shape.class);
    for p in 0..shape.nin {
        s.push_str(&format!("Idle -> [{p}]x;\n"));
    }
    for p in 0..shape.nout {
        s.push_str(&format!("x[{p}] -> Idle;\n"));
    }
    s
}

/// The configuration with packet sources on each input (through a Queue
/// for a pull input) and a Discard on each output.
fn sweep_config(shape: &Shape, conf: &str, srcs: &[(String, &str)]) -> String {
    let mut s = format!("x :: {}({conf});\n{EXTRA}", shape.class);
    for p in 0..shape.nin {
        let target = if mode(&shape.processing, true, p) == b'l' {
            s.push_str(&format!("q{p} :: Queue(CAPACITY 997) -> [{p}]x;\n"));
            format!("q{p}")
        } else {
            format!("[{p}]x")
        };
        for (src, path) in srcs {
            s.push_str(&format!(
                "InfiniteSource({src}, LIMIT 2, BURST 2) {path} -> {target};\n"
            ));
        }
    }
    for p in 0..shape.nout {
        s.push_str(&format!("x[{p}] -> Discard(BURST 7);\n"));
    }
    s
}

fn split(conf: &str) -> Vec<String> {
    rclick_lang::split_config_args(conf)
}

fn is_keyword_arg(a: &str) -> bool {
    let b = a.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    let w = b
        .iter()
        .take_while(|&&c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'?' | b'!')
        })
        .count();
    w < b.len() && (b[w] == b' ' || b[w] == b'\t' || b[w] == b'\n') && !a[w..].trim().is_empty()
}

/// `base` with positional argument `index` set to `value`.
fn with_positional(base: &str, index: usize, value: &str) -> String {
    let mut args = split(base);
    let npos = args.iter().take_while(|a| !is_keyword_arg(a)).count();
    if index < npos {
        args[index] = value.to_string();
    } else {
        let mut at = npos;
        while at < index {
            args.insert(at, String::new());
            at += 1;
        }
        args.insert(index, value.to_string());
    }
    args.join(", ")
}

/// `base` with keyword `kw` set to `value`.
fn with_keyword(base: &str, kw: &str, value: &str) -> String {
    let mut args: Vec<String> = split(base)
        .into_iter()
        .filter(|a| !(is_keyword_arg(a) && a.split_whitespace().next() == Some(kw)))
        .collect();
    args.push(format!("{kw} {value}"));
    args.join(", ")
}

// ---------------------------------------------------------------------
// Cases.

/// A class's base configuration with one argument set to a value.
type Substitute = Box<dyn Fn(&str) -> String>;

#[derive(Clone)]
enum Action {
    /// Build and run the configuration.
    Run,
    /// Build, run, write handler `x.NAME` with the value, run again.
    Write(String, String),
}

#[derive(Clone)]
struct Case {
    class: String,
    arg: String,
    value: String,
    config: String,
    action: Action,
}

struct Plan {
    cases: Vec<Case>,
    /// (class, arguments swept) per class.
    args: Vec<(String, usize)>,
    notes: Vec<String>,
}

fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic".into())
    })
}

fn write_inputs(dir: &Path) {
    // A pcap file with two Ethernet frames.
    let mut pcap = Vec::new();
    pcap.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    pcap.extend_from_slice(&2u16.to_le_bytes());
    pcap.extend_from_slice(&4u16.to_le_bytes());
    pcap.extend_from_slice(&[0; 8]);
    pcap.extend_from_slice(&65535u32.to_le_bytes());
    pcap.extend_from_slice(&1u32.to_le_bytes());
    for (i, frame) in [
        eth(
            0x0800,
            &ipv4_packet([10, 0, 0, 1], [10, 0, 0, 2], 17, 64, 0, &[], &[0; 8]),
        ),
        vec![1, 2, 3],
    ]
    .iter()
    .enumerate()
    {
        pcap.extend_from_slice(&(1000 + i as u32).to_le_bytes());
        pcap.extend_from_slice(&0u32.to_le_bytes());
        pcap.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        pcap.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        pcap.extend_from_slice(frame);
    }
    std::fs::write(dir.join("in.pcap"), pcap).expect("write pcap");
    std::fs::write(
        dir.join("in.ipsum"),
        "!data timestamp ip_src ip_dst proto sport dport ip_len\n\
         1000.5 10.0.0.1 10.0.0.2 T 1234 80 60\n\
         1001 1.2.3.4 5.6.7.8 U 53 53 1500\n\
         garbage line\n",
    )
    .expect("write ipsum");
}

fn plan(dir: &Path) -> Plan {
    let reg = rclick_elements::registry();
    let docs = docs();
    let overrides = base_overrides(dir);
    let skipped: BTreeSet<&str> = SKIPPED.iter().map(|(c, _)| *c).collect();
    let values = values();
    let srcs = sources();
    let mut cases = Vec::new();
    let mut args_count = Vec::new();
    let mut notes = Vec::new();
    let only: Option<Vec<String>> = std::env::var("RCLICK_SWEEP_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let names: Vec<String> = reg
        .names()
        .filter(|n| only.as_ref().is_none_or(|o| o.iter().any(|x| x == n)))
        .map(str::to_string)
        .collect();
    for class in names {
        if skipped.contains(class.as_str()) {
            continue;
        }
        let Some(ec) = reg.get(&class) else { continue };
        let elem = (ec.create)();
        let port_count = elem.port_count().to_string();
        let processing = elem.processing().to_string();
        drop(elem);
        let doc = docs.get(&class);
        let mut bases: Vec<String> = overrides.get(class.as_str()).cloned().unwrap_or_default();
        if let Some(d) = doc {
            bases.extend(d.examples.iter().cloned());
        }
        bases.push(String::new());
        // Find a base configuration and port counts that build.
        let mut chosen: Option<(String, Shape, Vec<ArgRead>, Vec<String>)> = None;
        let mut first: Option<(String, Shape, Vec<ArgRead>, String)> = None;
        'find: for base in &bases {
            for (nin, nout) in port_options(&port_count) {
                let shape = Shape {
                    class: class.clone(),
                    nin,
                    nout,
                    processing: processing.clone(),
                };
                let text = idle_config(&shape, base);
                let (built, reads) = introspect::recording(|| catch(|| try_from_config(&text)));
                let mine: Vec<ArgRead> = reads
                    .into_iter()
                    .filter(|r| r.args == split(base))
                    .collect();
                match built {
                    Ok(Ok(r)) => {
                        let writable: Vec<String> = r
                            .find_element("x")
                            .map(|i| {
                                r.element_handlers(i)
                                    .into_iter()
                                    .filter(|h| h.flags & hflags::WRITE != 0)
                                    .map(|h| h.name)
                                    .collect()
                            })
                            .unwrap_or_default();
                        drop(r);
                        chosen = Some((base.clone(), shape, mine, writable));
                        break 'find;
                    }
                    Ok(Err(e)) => {
                        if first.is_none() {
                            first = Some((base.clone(), shape, mine, e.join(" | ")));
                        }
                    }
                    Err(p) => {
                        cases.push(Case {
                            class: class.clone(),
                            arg: "(base)".into(),
                            value: base.clone(),
                            config: text.clone(),
                            action: Action::Run,
                        });
                        notes.push(format!("{class}: base configuration panicked: {p}"));
                        if first.is_none() {
                            first = Some((base.clone(), shape, mine, p));
                        }
                    }
                }
            }
        }
        let (base, shape, reads, writable) = match chosen {
            Some(c) => c,
            None => {
                let Some((base, shape, reads, err)) = first else {
                    continue;
                };
                notes.push(format!(
                    "{class}: no base configuration builds ({err}); sweeping {base:?}"
                ));
                (base, shape, reads, Vec::new())
            }
        };
        // The arguments: positional reads in order, then keywords.
        let mut positional: Vec<String> = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        for r in &reads {
            if r.positional {
                if !positional.contains(&r.keyword) {
                    positional.push(r.keyword.clone());
                }
            } else if !keywords.contains(&r.keyword) {
                keywords.push(r.keyword.clone());
            }
        }
        if let Some(d) = doc {
            for k in &d.keywords {
                if !keywords.contains(k) && !positional.contains(k) {
                    keywords.push(k.clone());
                }
            }
        }
        let mut swept: Vec<(String, Substitute)> = Vec::new();
        if positional.is_empty() && reads.is_empty() {
            // Parsed without the kit: sweep the first positions.
            let n = split(&base).len().clamp(1, 2);
            for i in 0..n {
                let b = base.clone();
                swept.push((
                    format!("#{i}"),
                    Box::new(move |v| with_positional(&b, i, v)),
                ));
            }
        }
        // Values inside the arguments of classes with a syntax of their own.
        for (c, templates) in TEMPLATES {
            if *c == class {
                for t in *templates {
                    let (b, t) = (base.clone(), t.to_string());
                    swept.push((
                        format!("#0 as {t:?}"),
                        Box::new(move |v| with_positional(&b, 0, &t.replace("{}", v))),
                    ));
                }
            }
        }
        for (i, kw) in positional.iter().enumerate() {
            let b = base.clone();
            swept.push((kw.clone(), Box::new(move |v| with_positional(&b, i, v))));
        }
        for kw in keywords.iter().filter(|k| !positional.contains(k)) {
            let (b, k) = (base.clone(), kw.clone());
            swept.push((kw.clone(), Box::new(move |v| with_keyword(&b, &k, v))));
        }
        args_count.push((class.clone(), swept.len()));
        for (arg, make) in &swept {
            for v in &values {
                cases.push(Case {
                    class: class.clone(),
                    arg: arg.clone(),
                    value: v.clone(),
                    config: sweep_config(&shape, &make(v), &srcs),
                    action: Action::Run,
                });
            }
        }
        let base_config = sweep_config(&shape, &base, &srcs);
        for h in &writable {
            // Route table handlers take routes: values inside them too.
            let templates: &[&str] = match h.as_str() {
                "add" | "set" | "remove" => {
                    &["{}", "{} 0", "10.0.0.0/8 {}", "10.0.0.0/8 10.0.0.1 {}"]
                }
                "ctrl" => &["{}", "add {} 0", "set 10.0.0.0/8 {}", "remove {}"],
                _ => &["{}"],
            };
            for t in templates {
                for v in &values {
                    let value = t.replace("{}", v);
                    cases.push(Case {
                        class: class.clone(),
                        arg: if *t == "{}" {
                            format!("handler {h}")
                        } else {
                            format!("handler {h} as {t:?}")
                        },
                        value: v.clone(),
                        config: base_config.clone(),
                        action: Action::Write(h.clone(), value),
                    });
                }
            }
        }
    }
    Plan {
        cases,
        args: args_count,
        notes,
    }
}

const ITERATIONS: u64 = 200;
const CASE_TIMEOUT: Duration = Duration::from_secs(20);

/// Outcome of one case: `ok`, `conf` (configuration error) or a failure.
fn run_case(case: &Case) -> Result<&'static str, String> {
    let built = catch(|| try_from_config(&case.config))?;
    let mut r = match built {
        Err(errors) => {
            if errors.is_empty() || errors.iter().all(|e| e.trim().is_empty()) {
                return Err("configuration failed without a message".into());
            }
            return Ok("conf");
        }
        Ok(r) => r,
    };
    catch(move || {
        r.run_limited(ITERATIONS);
        let x = r.find_element("x").unwrap_or(0);
        if let Action::Write(h, v) = &case.action {
            let _ = r.write_handler(&format!("x.{h}"), v);
            r.run_limited(ITERATIONS);
        }
        for h in r.element_handlers(x) {
            if h.flags & hflags::READ != 0 {
                let _ = r.read_handler(&format!("x.{}", h.name), None);
            }
        }
        drop(r);
    })?;
    Ok("ok")
}

/// Sweeps cases `from..to` of the plan, writing one line per event to
/// `out` (not to stdout, which elements such as `ToDump(-)` write to).
fn child(from: usize, to: usize, (stride, phase): (usize, usize), out: &Path) {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        // Also on stderr, for a panic that aborts the process.
        eprintln!("panicked: {msg} at {at}");
        let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(format!("{msg} at {at}")));
    }));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .expect("sweep output");
    let mut say = |line: String| {
        use std::io::Write;
        let _ = writeln!(file, "{line}");
        let _ = file.flush();
    };
    let dir = std::env::current_dir().expect("cwd");
    write_inputs(&dir);
    let plan = plan(&dir);
    say(format!("SWEEP|TOTAL|{}", plan.cases.len()));
    if to == 0 {
        for (class, n) in &plan.args {
            say(format!("SWEEP|ARGS|{class}|{n}"));
        }
        for n in &plan.notes {
            say(format!("SWEEP|NOTE|{n}"));
        }
    }
    for (k, case) in plan.cases.iter().enumerate().take(to).skip(from) {
        if k % stride != phase {
            continue;
        }
        let who = format!("{}|{}|{}", case.class, case.arg, show(&case.value));
        say(format!("SWEEP|START|{k}|{who}"));
        let c = case.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                LIMITED.with(|l| l.set(true));
                let out = run_case(&c);
                let peak = PEAK.with(|p| p.get());
                let _ = tx.send((out, peak));
            })
            .expect("spawn case");
        let t0 = Instant::now();
        let res = rx.recv_timeout(CASE_TIMEOUT);
        let ms = t0.elapsed().as_millis();
        match res {
            Ok((Ok(_), peak)) if peak > PEAK_LIMIT => say(format!(
                "SWEEP|CASE|{k}|FAIL|{who}|{peak} bytes live at peak"
            )),
            Ok((Ok(kind), _)) => say(format!("SWEEP|CASE|{k}|{kind}|{who}|{ms}")),
            Ok((Err(p), _)) => say(format!(
                "SWEEP|CASE|{k}|FAIL|{who}|panic: {}",
                p.replace(['\n', '|'], " ")
            )),
            Err(_) => {
                say(format!(
                    "SWEEP|CASE|{k}|FAIL|{who}|no result within {CASE_TIMEOUT:?}"
                ));
                // The case's thread may spin forever: the parent goes on
                // in a new process.
                std::process::exit(3);
            }
        }
    }
    say("SWEEP|DONE".into());
}

#[derive(Default)]
struct Tally {
    total: usize,
    classes: usize,
    args: usize,
    ran: usize,
    conf: usize,
    failures: Vec<String>,
    notes: Vec<String>,
    /// The slowest cases that passed: (milliseconds, case).
    slowest: Vec<(u64, String)>,
}

/// Runs a child over cases `from..to` (`to` 0: only the plan's summary),
/// again after each case that kills it.
fn sweep_range(
    exe: &Path,
    dir: &Path,
    (stride, phase): (usize, usize),
    mut from: usize,
    to: usize,
) -> Tally {
    let id = if to == 0 { 0 } else { phase + 1 };
    let mut t = Tally::default();
    for attempt in 0.. {
        let out = dir.join(format!("out-{id}-{attempt}"));
        let err = dir.join(format!("err-{id}-{attempt}"));
        let mut child = std::process::Command::new(exe)
            .args([
                "--exact",
                "argument_sweep",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("RCLICK_SWEEP_FROM", from.to_string())
            .env("RCLICK_SWEEP_TO", to.to_string())
            .env("RCLICK_SWEEP_STRIDE", stride.to_string())
            .env("RCLICK_SWEEP_PHASE", phase.to_string())
            .env("RCLICK_SWEEP_OUT", &out)
            .env("RUST_BACKTRACE", "0")
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .expect("spawn sweep child");
        // Killed when its output stops growing for two minutes (each case
        // has its own, shorter, bound inside the child).
        let (mut len, mut since) = (0u64, Instant::now());
        let mut killed = false;
        let status = loop {
            if let Some(st) = child.try_wait().expect("wait for sweep child") {
                break st;
            }
            let now_len = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            if now_len != len {
                (len, since) = (now_len, Instant::now());
            } else if since.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                killed = true;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let mut started: Option<(usize, String)> = None;
        let mut last: Option<usize> = None;
        let mut done = false;
        for line in text.lines() {
            let f: Vec<&str> = line.splitn(8, '|').collect();
            match f.as_slice() {
                ["SWEEP", "TOTAL", n] => t.total = n.parse().unwrap_or(0),
                ["SWEEP", "ARGS", _, n] => {
                    t.classes += 1;
                    t.args += n.parse::<usize>().unwrap_or(0);
                }
                ["SWEEP", "NOTE", n] => t.notes.push(n.to_string()),
                ["SWEEP", "START", k, rest @ ..] => {
                    started = k.parse().ok().map(|k| (k, rest.join(" | ")))
                }
                ["SWEEP", "CASE", k, kind, rest @ ..] => {
                    match *kind {
                        "ok" | "conf" => {
                            if *kind == "ok" {
                                t.ran += 1;
                            } else {
                                t.conf += 1;
                            }
                            let ms: u64 = rest.last().and_then(|m| m.parse().ok()).unwrap_or(0);
                            t.slowest
                                .push((ms, rest[..rest.len().saturating_sub(1)].join(" | ")));
                            t.slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
                            t.slowest.truncate(5);
                        }
                        _ => t.failures.push(rest.join(" | ")),
                    }
                    started = None;
                    last = k.parse().ok();
                }
                ["SWEEP", "DONE"] => done = true,
                _ => {}
            }
        }
        if done {
            break;
        }
        let err = std::fs::read_to_string(&err).unwrap_or_default();
        let telling: Vec<&str> = err
            .lines()
            .filter(|l| {
                [
                    "panicked",
                    "memory allocation",
                    "overflow",
                    "abort",
                    "error",
                ]
                .iter()
                .any(|w| l.contains(w))
            })
            .collect();
        let lines: Vec<&str> = if telling.is_empty() {
            err.lines().filter(|l| !l.trim().is_empty()).collect()
        } else {
            telling
        };
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        if let Some((k, who)) = started {
            t.failures.push(format!(
                "{who} | process died ({status}{}): {tail}",
                if killed { ", killed" } else { "" }
            ));
            from = k + 1;
        } else if let (Some(k), Some(3)) = (last, status.code()) {
            from = k + 1;
        } else {
            t.failures.push(format!(
                "sweep child failed outside a case ({status}): {tail}"
            ));
            break;
        }
        if from >= to {
            break;
        }
    }
    t
}

#[test]
fn argument_sweep() {
    if let Ok(out) = std::env::var("RCLICK_SWEEP_OUT") {
        let var = |name: &str| -> usize {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}"))
        };
        child(
            var("RCLICK_SWEEP_FROM"),
            var("RCLICK_SWEEP_TO"),
            (var("RCLICK_SWEEP_STRIDE").max(1), var("RCLICK_SWEEP_PHASE")),
            Path::new(&out),
        );
        return;
    }
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("rclick-argument-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let exe = std::env::current_exe().expect("test binary");
    let summary = sweep_range(&exe, &dir, (1, 0), 0, 0);
    for n in &summary.notes {
        println!("note: {n}");
    }
    let total = summary.total;
    let jobs = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let (exe, dir) = (&exe, &dir);
                s.spawn(move || sweep_range(exe, dir, (jobs, j), 0, total))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("sweep thread"))
            .collect()
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut failures = summary.failures;
    let (mut ran, mut conf) = (0, 0);
    let mut slowest = Vec::new();
    for t in tallies {
        ran += t.ran;
        conf += t.conf;
        failures.extend(t.failures);
        slowest.extend(t.slowest);
    }
    slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (ms, case) in slowest.iter().take(5) {
        println!("slow case: {ms} ms: {case}");
    }
    println!(
        "argument sweep: {} classes ({} skipped), {} arguments, {total} cases \
         ({conf} configuration errors, {ran} runs), {} failures, {jobs} processes, in {:?}",
        summary.classes,
        SKIPPED.len(),
        summary.args,
        failures.len(),
        started.elapsed()
    );
    for (c, why) in SKIPPED {
        println!("skipped {c}: {why}");
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
