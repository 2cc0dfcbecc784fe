//! `udpgen`: a paced generator of one UDP flow of minimum-size Ethernet
//! frames, for `scripts/bench-forwarding` (Figure 17, forwarding rate vs
//! input rate).
//!
//! Usage (root or CAP_NET_RAW):
//!
//! ```text
//! udpgen --dev IFNAME --rate PPS [--seconds S] [--burst N]
//!        [--src-mac M] [--dst-mac M] [--src-ip A] [--dst-ip A] [--len BYTES]
//! ```
//!
//! Writes frames to IFNAME through an AF_PACKET socket with
//! `PACKET_QDISC_BYPASS` (no qdisc), with `sendmmsg`. Pacing is by the
//! clock: at each moment the number of frames due is `elapsed x rate`; the
//! generator sends what is due (at most `--burst` per system call) and
//! spins until the next frame is due, so at rates it can sustain the
//! frames leave one or a few at a time, not in bursts. If it falls behind
//! (preempted, or the rate is above what it can send), it catches up by at
//! most `4 x burst` frames and counts the rest as `missed`, so a stall does
//! not turn into a large burst. Frames the kernel refuses (`ENOBUFS`: the
//! receiving side's input queue is full) are counted as `refused` and not
//! retried.
//!
//! Runs until `--seconds` have passed (0: until SIGINT/SIGTERM) and prints
//! one line: `sent N refused N missed N seconds S rate PPS`.
//!
//! Default frame: 60 bytes (64 with the Ethernet CRC): Ethernet, IPv4
//! (TTL 64, valid header checksum), UDP 1234 -> 9 (checksum 0) and 18 zero
//! bytes of payload.
//!
//! Linux only; uses the C library that std links against, so the crate
//! needs no extra dependency.

use std::ffi::CString;
use std::io;
use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};
use std::process::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const AF_PACKET: c_int = 17;
const SOCK_RAW: c_int = 3;
const SOL_PACKET: c_int = 263;
const PACKET_QDISC_BYPASS: c_int = 20;
const PR_SET_TIMERSLACK: c_int = 29;
const SIGINT: c_int = 2;
const SIGTERM: c_int = 15;
const ENOBUFS: i32 = 105;
const EAGAIN: i32 = 11;
const EINTR: i32 = 4;

#[repr(C)]
struct SockaddrLl {
    sll_family: u16,
    sll_protocol: u16,
    sll_ifindex: c_int,
    sll_hatype: u16,
    sll_pkttype: u8,
    sll_halen: u8,
    sll_addr: [u8; 8],
}

#[repr(C)]
struct Iovec {
    base: *mut c_void,
    len: usize,
}

#[repr(C)]
struct Msghdr {
    name: *mut c_void,
    namelen: u32,
    iov: *mut Iovec,
    iovlen: usize,
    control: *mut c_void,
    controllen: usize,
    flags: c_int,
}

#[repr(C)]
struct Mmsghdr {
    hdr: Msghdr,
    len: c_uint,
}

extern "C" {
    fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int;
    fn bind(fd: c_int, addr: *const c_void, len: u32) -> c_int;
    fn setsockopt(fd: c_int, level: c_int, name: c_int, val: *const c_void, len: u32) -> c_int;
    fn sendmmsg(fd: c_int, msgs: *mut Mmsghdr, vlen: c_uint, flags: c_int) -> c_int;
    fn if_nametoindex(name: *const c_char) -> c_uint;
    fn prctl(option: c_int, arg2: c_ulong, ...) -> c_int;
    fn signal(sig: c_int, handler: extern "C" fn(c_int)) -> usize;
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: c_int) {
    STOP.store(true, Ordering::Relaxed);
}

struct Opts {
    dev: String,
    rate: f64,
    seconds: f64,
    burst: usize,
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    len: usize,
}

fn usage(msg: &str) -> ! {
    eprintln!("udpgen: {msg}");
    eprintln!(
        "usage: udpgen --dev IFNAME --rate PPS [--seconds S] [--burst N] [--src-mac M] \
         [--dst-mac M] [--src-ip A] [--dst-ip A] [--len BYTES]"
    );
    exit(2)
}

fn parse_mac(s: &str) -> [u8; 6] {
    let v: Vec<u8> = s
        .split(':')
        .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| usage(&format!("bad MAC {s}"))))
        .collect();
    v.try_into()
        .unwrap_or_else(|_| usage(&format!("bad MAC {s}")))
}

fn parse_ip(s: &str) -> [u8; 4] {
    let a: std::net::Ipv4Addr = s
        .parse()
        .unwrap_or_else(|_| usage(&format!("bad IPv4 {s}")));
    a.octets()
}

fn parse_args() -> Opts {
    let mut o = Opts {
        dev: String::new(),
        rate: 0.0,
        seconds: 0.0,
        burst: 16,
        src_mac: [2, 0, 0, 0, 0, 2],
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_ip: [10, 0, 0, 2],
        dst_ip: [10, 0, 1, 2],
        len: 60,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])))
        };
        let num = |v: String| -> f64 {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("bad number {v}")))
        };
        match args[i].as_str() {
            "--dev" => o.dev = val(),
            "--rate" => o.rate = num(val()),
            "--seconds" => o.seconds = num(val()),
            "--burst" => o.burst = num(val()) as usize,
            "--src-mac" => o.src_mac = parse_mac(&val()),
            "--dst-mac" => o.dst_mac = parse_mac(&val()),
            "--src-ip" => o.src_ip = parse_ip(&val()),
            "--dst-ip" => o.dst_ip = parse_ip(&val()),
            "--len" => o.len = num(val()) as usize,
            "-h" | "--help" => usage("a paced UDP frame generator"),
            a => usage(&format!("unknown argument {a}")),
        }
        i += 2;
    }
    if o.dev.is_empty() {
        usage("--dev is required");
    }
    if o.rate.is_nan() || o.rate <= 0.0 {
        usage("--rate must be positive");
    }
    if o.burst == 0 || o.burst > 1024 {
        usage("--burst must be 1..1024");
    }
    if !(42..=1514).contains(&o.len) {
        usage("--len must be 42..1514");
    }
    o
}

/// Ethernet + IPv4 + UDP, `len` bytes in all.
fn frame(o: &Opts) -> Vec<u8> {
    let mut f = vec![0u8; o.len];
    f[0..6].copy_from_slice(&o.dst_mac);
    f[6..12].copy_from_slice(&o.src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (o.len - 14) as u16;
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[8] = 64; // TTL
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&o.src_ip);
    ip[16..20].copy_from_slice(&o.dst_ip);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&1234u16.to_be_bytes());
    udp[2..4].copy_from_slice(&9u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f
}

fn open(dev: &str) -> io::Result<c_int> {
    let name = CString::new(dev).map_err(|_| io::Error::other("bad device name"))?;
    // SAFETY: plain system calls on values owned here.
    unsafe {
        let ifindex = if_nametoindex(name.as_ptr());
        if ifindex == 0 {
            return Err(io::Error::other(format!("{dev}: no such device")));
        }
        // Protocol 0: the socket only sends, nothing is delivered to it.
        let fd = socket(AF_PACKET, SOCK_RAW, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let addr = SockaddrLl {
            sll_family: AF_PACKET as u16,
            sll_protocol: 0,
            sll_ifindex: ifindex as c_int,
            sll_hatype: 0,
            sll_pkttype: 0,
            sll_halen: 0,
            sll_addr: [0; 8],
        };
        if bind(
            fd,
            &addr as *const SockaddrLl as *const c_void,
            std::mem::size_of::<SockaddrLl>() as u32,
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        let one: c_int = 1;
        if setsockopt(
            fd,
            SOL_PACKET,
            PACKET_QDISC_BYPASS,
            &one as *const c_int as *const c_void,
            4,
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }
}

fn main() {
    let o = parse_args();
    let fd = open(&o.dev).unwrap_or_else(|e| {
        eprintln!("udpgen: {}: {e}", o.dev);
        exit(1)
    });
    // SAFETY: installing an async-signal-safe handler (one atomic store);
    // a 1 ns timer slack makes short sleeps precise.
    unsafe {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        prctl(PR_SET_TIMERSLACK, 1);
    }
    let mut buf = frame(&o);
    let mut iov: Vec<Iovec> = (0..o.burst)
        .map(|_| Iovec {
            base: buf.as_mut_ptr() as *mut c_void,
            len: buf.len(),
        })
        .collect();
    let mut msgs: Vec<Mmsghdr> = (0..o.burst)
        .map(|i| Mmsghdr {
            hdr: Msghdr {
                name: std::ptr::null_mut(),
                namelen: 0,
                iov: &mut iov[i] as *mut Iovec,
                iovlen: 1,
                control: std::ptr::null_mut(),
                controllen: 0,
                flags: 0,
            },
            len: 0,
        })
        .collect();

    let ns_per_frame = 1e9 / o.rate;
    let max_behind = 4 * o.burst as u64;
    let (mut sent, mut refused, mut missed) = (0u64, 0u64, 0u64);
    // Slots handed out so far (sent + refused + missed).
    let mut slots = 0u64;
    let start = Instant::now();
    let end = (o.seconds > 0.0).then(|| start + Duration::from_secs_f64(o.seconds));
    let mut error: Option<io::Error> = None;
    while !STOP.load(Ordering::Relaxed) {
        let now = Instant::now();
        if end.is_some_and(|e| now >= e) {
            break;
        }
        let elapsed = now.duration_since(start).as_nanos() as f64;
        let due = (elapsed / ns_per_frame) as u64 + 1;
        if due <= slots {
            // Wait for the next frame: sleep if it is far, else spin.
            let wait_ns = (slots as f64) * ns_per_frame - elapsed;
            if wait_ns > 200_000.0 {
                std::thread::sleep(Duration::from_nanos((wait_ns - 100_000.0) as u64));
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        let mut behind = due - slots;
        if behind > max_behind {
            missed += behind - max_behind;
            slots += behind - max_behind;
            behind = max_behind;
        }
        let n = behind.min(o.burst as u64) as usize;
        // SAFETY: msgs[..n] point at iov entries that point at `buf`, all
        // alive for the call.
        let r = unsafe { sendmmsg(fd, msgs.as_mut_ptr(), n as c_uint, 0) };
        if r > 0 {
            sent += r as u64;
            slots += r as u64;
        } else {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // The frame went to the device and was refused (veth: the
                // peer's input queue is full); do not retry it.
                Some(ENOBUFS) => {
                    refused += 1;
                    slots += 1;
                }
                Some(EAGAIN) | Some(EINTR) => {}
                _ => {
                    error = Some(e);
                    break;
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "sent {sent} refused {refused} missed {missed} seconds {secs:.3} rate {:.0}",
        sent as f64 / secs
    );
    if let Some(e) = error {
        eprintln!("udpgen: {}: sendmmsg: {e}", o.dev);
        exit(1);
    }
}
