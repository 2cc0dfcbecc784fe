//! # ToDevice
//!
//! Sends packets to a network device (Linux AF_PACKET, batched `sendmmsg`
//! with `PACKET_QDISC_BYPASS`).
//!
//! ## Synopsis
//! `ToDevice(DEVNAME [, *keywords* BURST, DEBUG, METHOD, QUEUE])`
//!
//! ## Ports and processing
//! One agnostic input. In Click's usual arrangement the input is pull
//! (`... -> Queue -> ToDevice(eth0)`): a task pulls bursts of packets and
//! sleeps while the upstream queue is empty. A push input sends each batch
//! at once. Optional push output 0 receives the packets after they were
//! sent; optional push output 1 receives packets the device refused.
//!
//! ## Description
//! Writes each packet, which must start with an Ethernet header, to
//! DEVNAME. Packets go out in batches of up to BURST with one `sendmmsg`
//! call, straight to the driver (`PACKET_QDISC_BYPASS`: no qdisc, so a
//! ToDevice on a busy link sees drops instead of queueing delay). When the
//! socket's send buffer is full, ToDevice keeps the unsent packets, waits
//! until the socket is writable (in `poll(2)` with the other descriptors,
//! not spinning), and then continues.
//!
//! Packets longer than the device's MTU allows are refused by the kernel
//! (`Message too long`) and counted as drops. FromDevice emits only
//! MTU-sized, checksum-complete packets, so forwarding between devices
//! needs no offload settings.
//!
//! ## Keywords
//! - **BURST** (integer): packets pulled and sent per task run. Default 32
//!   (Click's default is 1; larger bursts only batch the work).
//! - **DEBUG** (boolean): report every send error. Default false: the first
//!   few are reported.
//! - **METHOD** (word): `LINUX` or `PCAP`; both use AF_PACKET.
//! - **QUEUE** (integer): accepted for multi-queue configurations; the
//!   kernel picks the transmit queue.
//!
//! ## Handlers
//! - `count` (read): packets sent.
//! - `drops` (read): packets the device refused.
//! - `pulls` (read): pull attempts.
//! - `signal` (read): whether the upstream notifier signal is active.
//! - `q` (read): whether packets wait for the socket to become writable.
//! - `reset_counts` (write): zeroes `count`, `drops` and `pulls`.
//!
//! ## Example
//! ```click
//! FromDevice(veth0) -> Queue(1000) -> ToDevice(veth1, BURST 64);
//! ```

use std::io;
use std::os::fd::RawFd;

use rclick_core::conf::{parse_word, Args};
use rclick_core::element::HandlerSpec;
use rclick_core::{Batch, ConfigResult, Ctx, Element, InitCtx, Interest, NotifierSignal, TaskId};

use super::afpacket::PacketSocket;

pub struct ToDevice {
    ifname: String,
    burst: usize,
    debug: bool,
    sock: Option<PacketSocket>,
    task: Option<TaskId>,
    signal: NotifierSignal,
    /// Packets waiting for the socket to become writable.
    pending: Option<Batch>,
    count: u64,
    drops: u64,
    pulls: u64,
    complaints: u32,
}

impl Default for ToDevice {
    fn default() -> Self {
        ToDevice {
            ifname: String::new(),
            burst: 32,
            debug: false,
            sock: None,
            task: None,
            signal: NotifierSignal::Idle,
            pending: None,
            count: 0,
            drops: 0,
            pulls: 0,
            complaints: 0,
        }
    }
}

fn would_block(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EAGAIN)
}

impl ToDevice {
    /// Sends `batch`; returns what could not be sent because the socket
    /// would block.
    fn send_all(&mut self, mut batch: Batch, ctx: &mut Ctx) -> Option<Batch> {
        let sock = self.sock.as_ref()?;
        loop {
            if batch.is_empty() {
                return None;
            }
            let (k, err) = sock.send_batch(batch.packets());
            let blocked = err.as_ref().is_some_and(would_block);
            let mut rest = Batch::new();
            for (i, p) in batch.drain().enumerate() {
                if i < k {
                    self.count += 1;
                    ctx.emit(0, p);
                } else if i == k && !blocked {
                    self.drops += 1;
                    if self.debug || self.complaints < 5 {
                        self.complaints += 1;
                        if let Some(e) = err.as_ref() {
                            ctx.chatter(&format!("ToDevice({}): {e}", self.ifname));
                        }
                    }
                    ctx.emit(1, p);
                } else {
                    rest.push(p);
                }
            }
            match err {
                None => return None,
                Some(_) if blocked => return Some(rest),
                Some(_) => batch = rest,
            }
        }
    }

    fn wait_writable(&mut self, ctx: &mut Ctx) {
        if let Some(s) = self.sock.as_ref() {
            ctx.add_select(s.fd(), Interest::WRITE);
        }
    }
}

impl Element for ToDevice {
    fn port_count(&self) -> &'static str {
        "1/0-2"
    }

    fn processing(&self) -> &'static str {
        "a/h"
    }

    fn flow_code(&self) -> &'static str {
        "x/x"
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        self.ifname = args.read_mp("DEVNAME");
        self.debug = args.read_or("DEBUG", false);
        let method = args.read_with("METHOD", parse_word);
        let burst: usize = args.read_or("BURST", 32usize);
        let _queue: Option<u32> = args.read("QUEUE");
        args.complete()?;
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        if burst == 0 {
            return Err("bad BURST".into());
        }
        match method.as_deref() {
            None | Some("LINUX") | Some("PCAP") => {}
            Some(_) => return Err("bad METHOD".into()),
        }
        self.burst = burst.min(rclick_core::batch::BATCH_CAPACITY);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let sock = PacketSocket::open(&self.ifname, 0, false)?;
        sock.qdisc_bypass();
        self.sock = Some(sock);
        if ctx.input_is_pull(0) {
            let t = ctx.new_task(true);
            self.signal = ctx.upstream_empty_signal(0, Some(t));
            self.task = Some(t);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, ctx: &mut Ctx) {
        // A push input cannot wait: what the socket cannot take is dropped.
        if let Some(rest) = self.send_all(batch, ctx) {
            self.drops += rest.len() as u64;
        }
    }

    fn run_task(&mut self, _task: TaskId, ctx: &mut Ctx) -> bool {
        if let Some(p) = self.pending.take() {
            if let Some(rest) = self.send_all(p, ctx) {
                self.pending = Some(rest);
                self.wait_writable(ctx);
                return false;
            }
        }
        self.pulls += 1;
        let got = ctx.pull(0, self.burst);
        let worked = got.is_some();
        if let Some(b) = got {
            if let Some(rest) = self.send_all(b, ctx) {
                self.pending = Some(rest);
                self.wait_writable(ctx);
                return true;
            }
        }
        if worked || ctx.signal_active(&self.signal) {
            ctx.fast_reschedule();
        }
        worked
    }

    fn selected(&mut self, fd: RawFd, _readable: bool, writable: bool, ctx: &mut Ctx) {
        if writable {
            ctx.remove_select(fd);
            if let Some(t) = self.task {
                ctx.schedule_task(t);
            }
        }
    }

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read("count"),
            HandlerSpec::read("drops"),
            HandlerSpec::read("pulls"),
            HandlerSpec::read("signal"),
            HandlerSpec::read("q"),
            HandlerSpec::button("reset_counts"),
        ]
    }

    fn read_handler(&self, name: &str, _param: Option<&str>, ctx: &Ctx) -> Result<String, String> {
        match name {
            "count" => Ok(self.count.to_string()),
            "drops" => Ok(self.drops.to_string()),
            "pulls" => Ok(self.pulls.to_string()),
            "signal" => Ok(ctx.signal_active(&self.signal).to_string()),
            "q" => Ok(self.pending.is_some().to_string()),
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, _value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "reset_counts" => {
                self.count = 0;
                self.drops = 0;
                self.pulls = 0;
                Ok(())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn cleanup(&mut self) {
        self.pending = None;
        self.sock = None;
    }
}
