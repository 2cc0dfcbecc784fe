//! # ToHost
//!
//! Hands packets to the host's own network stack through the TAP device of
//! a FromHost (the paper's ToLinux).
//!
//! ## Synopsis
//! `ToHost([DEVNAME])`
//!
//! ## Ports and processing
//! One push input; no outputs.
//!
//! ## Description
//! Click's user-level ToHost has no device of its own, and neither has
//! this one: it writes each packet, an Ethernet frame, to the TAP device
//! created by the FromHost element with the same DEVNAME, and the host
//! receives it as if it had arrived on that device. Without DEVNAME, the
//! configuration must hold exactly one FromHost, which is used. It is an
//! error if no FromHost matches.
//!
//! **Configurations written for Click's kernel module**, where ToHost
//! hands packets to the Linux stack directly, have no FromHost. When the
//! configuration holds no FromHost at all, ToHost creates a TAP device of
//! its own (`tohost0`, `tohost1`, ...: up, without addresses, gone when the
//! router exits; ToHost says which on standard error) and writes the frames there: the host stack receives them
//! as if they had arrived on that device, delivers those addressed to one
//! of its own addresses and forwards the others when IP forwarding is on.
//! With DEVNAME naming a network device, the TAP device takes that
//! device's Ethernet address, so frames addressed to DEVNAME are taken as
//! addressed to the host. The difference from the kernel module: the host
//! sees the packets arrive on the TAP device, not on DEVNAME (reverse-path
//! filtering, `rp_filter` 1, may drop those whose source it routes through
//! DEVNAME). With FromHost elements in the configuration but none of the
//! same DEVNAME, ToHost is an error as before.
//!
//! Frames shorter than an Ethernet header, frames written while the device
//! is closed and frames the kernel refuses are dropped and counted.
//!
//! ## Keywords
//! - **DEVNAME** (string): the FromHost's device name, as configured there.
//!
//! ## Handlers
//! - `dev_name` (read): the device name.
//! - `count` (read): frames handed to the host.
//! - `drops` (read): frames dropped.
//! - `reset_counts` (write): zeroes `count` and `drops`.
//!
//! ## Example
//! ```click
//! FromHost(fake0, 192.0.2.1/24) -> Strip(14) -> CheckIPHeader
//!   -> ICMPPingResponder
//!   -> EtherEncap(0x0800, 02:00:00:00:00:02, 02:00:00:00:00:01)
//!   -> ToHost(fake0);
//! ```

use std::sync::Arc;

use rclick_core::conf::Args;
use rclick_core::element::{processing, Sink};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, PullTask};

use rclick_core::wire::ether;

use super::fromhost::FromHost;
use super::tuntap::{open_tap, setup_iface, IfaceSetup, TapShared};

#[derive(Default)]
pub struct ToHost {
    dev_name: Option<String>,
    /// The TAP device of a ToHost without FromHost (kernel-module
    /// configurations), and its name.
    own_tap: Option<(std::os::fd::OwnedFd, String)>,
    tap: Option<Arc<TapShared>>,
    count: u64,
    drops: u64,
    complained: bool,
    /// Never started: the input is push.
    puller: PullTask,
}

const HANDLERS: &[Handler<ToHost>] = &[
    Handler::read("dev_name", |e, _| e.dev_name.clone().unwrap_or_default()),
    Handler::data("count", |e| &e.count),
    Handler::data("drops", |e| &e.drops),
    Handler::button("reset_counts", |e, _, _| {
        e.count = 0;
        e.drops = 0;
        Ok(())
    }),
];

impl Sink for ToHost {
    fn consume(&mut self, mut batch: Batch, ctx: &mut Ctx) {
        let fd = self.tap.as_ref().and_then(|t| t.fd());
        for p in batch.drain() {
            let Some(fd) = fd else {
                self.drops += 1;
                continue;
            };
            if p.len() < ether::HEADER_LEN {
                self.drops += 1;
                continue;
            }
            let d = p.data();
            // SAFETY: writes `d.len()` bytes from a live slice.
            let w = unsafe { libc::write(fd, d.as_ptr().cast(), d.len()) };
            if w == d.len() as isize {
                self.count += 1;
            } else {
                self.drops += 1;
                if !self.complained {
                    self.complained = true;
                    ctx.chatter(&format!(
                        "ToHost({}): write failed: {}",
                        self.dev_name.as_deref().unwrap_or(""),
                        std::io::Error::last_os_error()
                    ));
                }
            }
        }
    }
    fn pull_task(&self) -> &PullTask {
        &self.puller
    }
}

impl ToHost {
    /// A ToHost without FromHost: a TAP device of its own (see the
    /// description).
    fn open_own_tap(&mut self, ctx: &InitCtx) -> ConfigResult {
        use std::os::fd::AsRawFd;
        let ether = self
            .dev_name
            .as_deref()
            .and_then(crate::ip::netdevice::device_ether);
        let (fd, name) = open_tap("tohost%d")?;
        let setup = IfaceSetup {
            ether: ether.map(|e| e.0),
            addr: None,
            mtu: Some(65521),
        };
        setup_iface(&name, &setup)?;
        ctx.chatter(&format!(
            "{}: no FromHost: handing packets to the host through TAP device {name}",
            ctx.element_name()
        ));
        let shared = TapShared::new();
        shared.set(fd.as_raw_fd());
        self.tap = Some(shared);
        self.own_tap = Some((fd, name));
        Ok(())
    }
}

rclick_core::element_class!(ToHost);

impl Element for ToHost {
    rclick_core::element_kind!(sink);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/0"
    }

    fn processing(&self) -> &'static str {
        processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.dev_name = args.read_p("DEVNAME");
        args.complete()?;
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let mut found: Vec<(String, Arc<TapShared>)> = Vec::new();
        let mut found_none = true;
        let mut idx = 0;
        while let Some(class) = ctx.element_class_of(idx) {
            if class == "FromHost" {
                let got = ctx.with_element(idx, |e| {
                    e.as_any()
                        .downcast_ref::<FromHost>()
                        .map(|f| (f.configured_name().to_string(), f.shared()))
                });
                if let Some(Some(f)) = got {
                    found.push(f);
                    found_none = false;
                }
            }
            idx += 1;
        }
        let pick = match &self.dev_name {
            Some(name) => found.into_iter().find(|(n, _)| n == name),
            None if found.len() == 1 => found.pop(),
            None if found.is_empty() => return self.open_own_tap(ctx),
            None => return Err("several FromHost elements: give ToHost a DEVNAME".into()),
        };
        match pick {
            None if found_none => self.open_own_tap(ctx),
            Some((name, tap)) => {
                self.dev_name = Some(name);
                self.tap = Some(tap);
                Ok(())
            }
            None => Err(format!(
                "ToHost({}) requires a FromHost with the same device name",
                self.dev_name.as_deref().unwrap_or("")
            )
            .into()),
        }
    }

    fn cleanup(&mut self) {
        self.tap = None;
        self.own_tap = None;
    }
}
