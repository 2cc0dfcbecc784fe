//! # FromHost
//!
//! Creates a TAP device and emits the packets the host's own network stack
//! sends to it (the paper's FromLinux).
//!
//! ## Synopsis
//! `FromHost(DEVNAME [, DST, *keywords* ETHER, GATEWAY, HEADROOM, MTU, BURST])`
//!
//! ## Ports and processing
//! No inputs. Output 0 is push and emits Ethernet frames.
//!
//! ## Description
//! Opens `/dev/net/tun` and creates the TAP device DEVNAME (a name holding
//! `%d` lets the kernel pick the number; the `dev_name` handler tells the
//! result). The device gets the Ethernet address ETHER if given, the
//! address and mask DST (`10.0.0.1/24`) if given, MTU, and is brought up.
//! The host then sees an Ethernet link whose other end is the router: the
//! frames it sends there (ARP requests, IP packets routed to DST's network
//! or to GATEWAY) are emitted on output 0, with the network header and
//! destination IP annotation set for IP packets and the timestamp
//! annotation set to the arrival time.
//!
//! Frames written by ToHost elements with the same DEVNAME enter the host
//! stack as if received on this device (the paper's ToLinux).
//!
//! The device is not persistent: it disappears when the router exits.
//! FromHost sleeps in the driver's wait while the host sends nothing;
//! when frames arrive, a task reads them in bursts of BURST. The host's
//! checksum and segmentation offloads stay off on the device (no
//! `IFF_VNET_HDR`), so every frame is complete and at most MTU long.
//!
//! ## Keywords
//! - **DEVNAME** (string): the TAP device name.
//! - **DST** (IP prefix, or an AddressInfo name of one): address and mask
//!   given to the device.
//! - **ETHER** (Ethernet address): the device's address. Default: chosen by
//!   the kernel.
//! - **GATEWAY** (IP address): installs a default route via this address
//!   (`ip route replace default via GATEWAY dev DEVNAME`); must lie in DST.
//! - **HEADROOM** (integer): headroom of emitted packets. Default 64.
//! - **MTU** (integer): the device's MTU. Default 1500. (In Click, MTU only
//!   sizes the read buffer.)
//! - **BURST** (integer): frames read per task run. Default 32.
//!
//! ## Handlers
//! - `dev_name` (read): the device name.
//! - `count` (read): frames emitted.
//! - `reset_counts` (write): zeroes `count`.
//!
//! ## Example
//! ```click
//! FromHost(fake0, 192.0.2.1/24, ETHER 02:00:00:00:00:01)
//!   -> c :: Classifier(12/0806 20/0001, -);
//! c[0] -> ARPResponder(192.0.2.2 02:00:00:00:00:02) -> ToHost(fake0);
//! c[1] -> Discard;
//! ```

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use rclick_core::conf::{Args, Ipv4Prefix};
use rclick_core::element::processing;
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Interest, Packet, TaskId};

use super::fromdump::force_ip;
use super::pcap::dlt;
use super::tuntap::{add_default_route, open_tap, read_frame, setup_iface, IfaceSetup, TapShared};

pub struct FromHost {
    dev_name: String,
    /// The kernel's name for the device, once created.
    ifname: String,
    dst: Option<Ipv4Prefix>,
    gateway: Option<std::net::Ipv4Addr>,
    ether: Option<EtherAddr>,
    headroom: usize,
    mtu: u32,
    burst: usize,
    fd: Option<OwnedFd>,
    shared: Arc<TapShared>,
    task: Option<TaskId>,
    count: u64,
}

impl Default for FromHost {
    fn default() -> Self {
        FromHost {
            dev_name: String::new(),
            ifname: String::new(),
            dst: None,
            gateway: None,
            ether: None,
            headroom: 64,
            mtu: 1500,
            burst: 32,
            fd: None,
            shared: TapShared::new(),
            task: None,
            count: 0,
        }
    }
}

impl FromHost {
    /// The device name as configured (before the kernel fills in `%d`).
    pub fn configured_name(&self) -> &str {
        &self.dev_name
    }

    /// The descriptor shared with ToHost.
    pub fn shared(&self) -> Arc<TapShared> {
        self.shared.clone()
    }

    /// Reads one frame. `None` when nothing is waiting (or on error).
    fn read_one(&mut self, ctx: &Ctx) -> Option<Packet> {
        let fd = self.fd.as_ref()?.as_raw_fd();
        // Room for an Ethernet header with one VLAN tag.
        let cap = self.mtu as usize + 18;
        read_frame(fd, self.headroom, cap)
            .map_err(|e| ctx.chatter(&format!("FromHost({}): read: {e}", self.ifname)))
            .ok()
            .flatten()
    }
}

const HANDLERS: &[Handler<FromHost>] = &[
    Handler::read("dev_name", |e, _| {
        if e.ifname.is_empty() {
            e.dev_name.clone()
        } else {
            e.ifname.clone()
        }
    }),
    Handler::data("count", |e| &e.count),
    Handler::button("reset_counts", |e, _, _| {
        e.count = 0;
        Ok(())
    }),
];

rclick_core::element_class!(FromHost);

impl Element for FromHost {
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "0/1"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        use crate::ip::address::{parse_ether_arg, parse_ipv4_arg, parse_ipv4_prefix_arg};
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        self.dev_name = args.read_mp("DEVNAME");
        self.dst = args.read_p_with("DST", |s| parse_ipv4_prefix_arg(s, ictx));
        self.gateway = args.read_with("GATEWAY", |s| parse_ipv4_arg(s, ictx));
        self.ether = args.read_with("ETHER", |s| parse_ether_arg(s, ictx));
        self.headroom = args.read_or("HEADROOM", 64usize);
        self.mtu = args.read_or("MTU", 1500u32);
        self.burst = args.read_or("BURST", 32usize);
        args.complete()?;
        if self.dev_name.is_empty() {
            return Err("must specify device name".into());
        }
        if self.headroom > 8192 {
            return Err("HEADROOM too large".into());
        }
        if !(68..=65535).contains(&self.mtu) {
            return Err("MTU out of range".into());
        }
        if self.burst == 0 {
            return Err("BURST out of range".into());
        }
        if let (Some(gw), Some(dst)) = (self.gateway, self.dst) {
            if !dst.contains(gw) {
                return Err("bad GATEWAY".into());
            }
        }
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let (fd, name) = open_tap(&self.dev_name)?;
        let setup = IfaceSetup {
            ether: self.ether.map(|e| e.0),
            addr: self.dst.map(|d| (d.addr, d.mask)),
            mtu: Some(self.mtu),
        };
        setup_iface(&name, &setup)?;
        if let Some(gw) = self.gateway {
            add_default_route(&name, gw)?;
        }
        ctx.add_select(fd.as_raw_fd(), Interest::READ);
        self.shared.set(fd.as_raw_fd());
        self.fd = Some(fd);
        self.ifname = name;
        self.task = Some(ctx.new_task(false));
        Ok(())
    }

    fn selected(&mut self, _fd: RawFd, _readable: bool, _writable: bool, ctx: &mut Ctx) {
        if let Some(t) = self.task {
            ctx.schedule_task(t);
        }
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        let mut n = 0;
        while n < self.burst {
            let Some(mut p) = self.read_one(ctx) else {
                break;
            };
            force_ip(&mut p, dlt::ETHER);
            p.set_timestamp_anno(ctx.now());
            ctx.emit(0, p);
            n += 1;
        }
        self.count += n as u64;
        if n == self.burst {
            ctx.fast_reschedule();
        }
        n > 0
    }

    fn cleanup(&mut self) {
        self.shared.clear();
        self.fd = None;
    }
}
