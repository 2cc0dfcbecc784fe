//! # KernelTun
//!
//! Exchanges IP packets with the host's own network stack through a TUN
//! device.
//!
//! ## Synopsis
//! `KernelTun(ADDR/MASK [, GATEWAY, *keywords* HEADROOM, ETHER, MTU, DEVNAME, BURST, IGNORE_QUEUE_OVERFLOWS])`
//!
//! ## Ports and processing
//! At most one agnostic input; output 0 (push) emits IP packets, optional
//! output 1 (push) emits what the host sent that is not an IP packet.
//!
//! ## Description
//! Creates a Linux TUN device (`/dev/net/tun`, no packet information
//! header) named DEVNAME, gives the host's end of it the address ADDR and
//! netmask MASK, sets its MTU and brings it up, so the host routes packets
//! for ADDR/MASK's network into the device. With a nonzero GATEWAY (on the
//! same network) a default route through GATEWAY over the device is
//! installed too. The device, and its routes, disappear when the router
//! exits.
//!
//! Packets the host sends into the device are emitted on output 0, with
//! the network header set (and, for IPv4, the destination IP annotation)
//! and the timestamp annotation set to the arrival time. As in Click,
//! IPv6 packets (the router solicitations the host sends on a new device)
//! leave by output 0 too; packets that are not IP at all, or whose header
//! is truncated, go to output 1, or are dropped when it is not connected. KernelTun sleeps in the driver's wait while the host sends
//! nothing, then reads up to BURST packets per task run.
//!
//! Packets arriving on the input (pushed, or pulled by KernelTun's task
//! when the input is pull) are IP packets handed to the host stack as if
//! received on the device. Packets the kernel refuses are dropped; the
//! first failure is reported (every one unless IGNORE_QUEUE_OVERFLOWS,
//! for full queues).
//!
//! KernelTap is the Ethernet version.
//!
//! ## Keywords
//! - **ADDR/MASK** (IP prefix): the host's address on the device, and the
//!   network routed through it.
//! - **GATEWAY** (IP address): if nonzero, installs a default route via
//!   this address over the device. Default none.
//! - **HEADROOM** (unsigned): headroom of emitted packets. Default 28.
//! - **ETHER** (Ethernet address): KernelTap only: the device's address.
//! - **MTU** (unsigned): the device's MTU. Default 1500.
//! - **DEVNAME** (string; DEV_NAME also accepted): the device name; `%d`
//!   lets the kernel number it. Default `tun%d` (KernelTap: `tap%d`).
//! - **BURST** (unsigned): packets read per task run. Default 1.
//! - **IGNORE_QUEUE_OVERFLOWS** (boolean): do not report writes refused
//!   because the device's queue is full. Default false.
//!
//! ## Handlers
//! - `dev_name` (read): the device's name.
//! - `packets` (read): packets read from the device and emitted.
//! - `selected_calls` (read): times the device woke the router.
//! - `drops` (read): input packets the device refused.
//!
//! ## Example
//! ```click
//! tun :: KernelTun(1.0.0.1/8);
//! ICMPPingSource(1.0.0.2, 1.0.0.1) -> Queue -> tun;
//! tun -> CheckIPHeader -> IPPrint(reply) -> Discard;
//! ```

use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use rclick_core::conf::Args;
use rclick_core::wire::EtherAddr;
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Interest, NotifierSignal, Packet, TaskId,
};

use super::fromdump::force_ip;
use super::pcap::dlt;
use super::tuntap::{add_default_route, open_tuntap, read_frame, setup_iface, IfaceSetup};
use crate::ip::address::{parse_ether_arg, parse_ipv4_arg, parse_ipv4_prefix_arg};
use rclick_core::conf::Ipv4Prefix;

pub struct KernelTun {
    /// TAP (Ethernet frames) rather than TUN (IP packets).
    tap: bool,
    dev_name: String,
    /// The kernel's name for the device, once created.
    ifname: String,
    prefix: Option<Ipv4Prefix>,
    gateway: Option<Ipv4Addr>,
    ether: Option<EtherAddr>,
    headroom: usize,
    mtu: u32,
    burst: usize,
    ignore_overflows: bool,
    fd: Option<OwnedFd>,
    read_task: Option<TaskId>,
    pull_task: Option<TaskId>,
    signal: NotifierSignal,
    packets: u64,
    selected_calls: u64,
    drops: u64,
    complained: bool,
}

impl KernelTun {
    pub fn new(tap: bool) -> KernelTun {
        KernelTun {
            tap,
            dev_name: String::new(),
            ifname: String::new(),
            prefix: None,
            gateway: None,
            ether: None,
            headroom: 28,
            mtu: 1500,
            burst: 1,
            ignore_overflows: false,
            fd: None,
            read_task: None,
            pull_task: None,
            signal: NotifierSignal::Busy,
            packets: 0,
            selected_calls: 0,
            drops: 0,
            complained: false,
        }
    }

    fn class(&self) -> &'static str {
        if self.tap {
            "KernelTap"
        } else {
            "KernelTun"
        }
    }

    /// Reads one packet; `None` when nothing is waiting (or on error).
    fn read_one(&mut self, ctx: &Ctx) -> Option<Packet> {
        let fd = self.fd.as_ref()?.as_raw_fd();
        // Room for a frame of MTU bytes behind an Ethernet header with one
        // VLAN tag.
        let cap = self.mtu as usize + 18;
        read_frame(fd, self.headroom, cap)
            .map_err(|e| ctx.chatter(&format!("{}({}): read: {e}", self.class(), self.ifname)))
            .ok()
            .flatten()
    }

    /// Hands `batch` to the host.
    fn write_batch(&mut self, mut batch: Batch, ctx: &Ctx) {
        let Some(fd) = self.fd.as_ref().map(|f| f.as_raw_fd()) else {
            self.drops += batch.len() as u64;
            return;
        };
        for p in batch.drain() {
            let d = p.data();
            // SAFETY: writes `d.len()` bytes from a live slice.
            let w = unsafe { libc::write(fd, d.as_ptr().cast(), d.len()) };
            if w != d.len() as isize {
                self.drops += 1;
                let e = std::io::Error::last_os_error();
                let overflow = e.raw_os_error() == Some(libc::ENOBUFS)
                    || e.raw_os_error() == Some(libc::EAGAIN);
                let quiet = overflow && self.ignore_overflows;
                if !self.complained && !quiet {
                    self.complained = true;
                    ctx.chatter(&format!("{}({}): write: {e}", self.class(), self.ifname));
                }
            }
        }
    }
}

const HANDLERS: &[Handler<KernelTun>] = &[
    Handler::read("dev_name", |e, _| {
        if e.ifname.is_empty() {
            e.dev_name.clone()
        } else {
            e.ifname.clone()
        }
    }),
    Handler::data("packets", |e| &e.packets),
    Handler::data("selected_calls", |e| &e.selected_calls),
    Handler::data("drops", |e| &e.drops),
];

rclick_core::element_class!("KernelTun" => KernelTun::new(false));

impl Element for KernelTun {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0-1/1-2"
    }

    fn processing(&self) -> &'static str {
        "a/h"
    }

    fn flow_code(&self) -> &'static str {
        "x/y"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let prefix = args.read_mp_with("ADDR", |s| parse_ipv4_prefix_arg(s, ctx));
        let gateway = args.read_p_with("GATEWAY", |s| parse_ipv4_arg(s, ctx));
        self.headroom = args.read_or("HEADROOM", 28usize);
        let ether = args.read_with("ETHER", |s| parse_ether_arg(s, ctx));
        self.mtu = args.read_or("MTU", 1500u32);
        let devname: Option<String> = args.read("DEVNAME");
        let dev_name: Option<String> = args.read("DEV_NAME");
        self.burst = args.read_or("BURST", 1usize);
        self.ignore_overflows = args.read_or("IGNORE_QUEUE_OVERFLOWS", false);
        args.complete()?;
        self.prefix = Some(prefix);
        self.gateway = gateway.filter(|g| !g.is_unspecified());
        self.ether = ether;
        self.dev_name = devname
            .or(dev_name)
            .unwrap_or_else(|| if self.tap { "tap%d" } else { "tun%d" }.to_string());
        if self.headroom > 8192 {
            return Err("HEADROOM too large".into());
        }
        if !(68..=65535).contains(&self.mtu) {
            return Err("MTU out of range".into());
        }
        if self.burst == 0 {
            return Err("BURST out of range".into());
        }
        self.burst = self.burst.min(rclick_core::batch::BATCH_CAPACITY);
        if let (Some(gw), Some(p)) = (self.gateway, self.prefix) {
            if !p.contains(gw) {
                return Err("GATEWAY must be on the device's network".into());
            }
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let (fd, name) = open_tuntap(&self.dev_name, self.tap)?;
        let setup = IfaceSetup {
            ether: if self.tap {
                self.ether.map(|e| e.0)
            } else {
                None
            },
            addr: self.prefix.map(|p| (p.addr, p.mask)),
            mtu: Some(self.mtu),
        };
        setup_iface(&name, &setup)?;
        if let Some(gw) = self.gateway {
            add_default_route(&name, gw)?;
        }
        ctx.add_select(fd.as_raw_fd(), Interest::READ);
        self.fd = Some(fd);
        self.ifname = name;
        self.read_task = Some(ctx.new_task(false));
        if ctx.ninputs() > 0 && ctx.input_is_pull(0) {
            let t = ctx.new_task(true);
            self.signal = ctx.upstream_empty_signal(0, Some(t));
            self.pull_task = Some(t);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        self.write_batch(batch, ctx);
    }

    fn selected(&mut self, _fd: RawFd, _readable: bool, _writable: bool, ctx: &mut Ctx) {
        self.selected_calls += 1;
        if let Some(t) = self.read_task {
            ctx.schedule_task(t);
        }
    }

    fn run_task(&mut self, task: TaskId, ctx: &mut Ctx) -> bool {
        if Some(task) == self.pull_task {
            return match ctx.pull(0, self.burst.max(8)) {
                Some(b) => {
                    self.write_batch(b, ctx);
                    ctx.fast_reschedule();
                    true
                }
                None => {
                    if ctx.signal_active(&self.signal) {
                        ctx.fast_reschedule();
                    }
                    false
                }
            };
        }
        let mut n = 0;
        while n < self.burst {
            let Some(mut p) = self.read_one(ctx) else {
                break;
            };
            n += 1;
            p.set_timestamp_anno(ctx.now());
            if self.tap {
                force_ip(&mut p, dlt::ETHER);
                ctx.emit(0, p);
            } else if force_ip(&mut p, dlt::RAW) {
                ctx.emit(0, p);
            } else if ctx.noutputs() > 1 {
                ctx.emit(1, p);
            }
        }
        self.packets += n as u64;
        if n == self.burst {
            ctx.fast_reschedule();
        }
        n > 0
    }

    fn cleanup(&mut self) {
        self.fd = None;
    }
}
