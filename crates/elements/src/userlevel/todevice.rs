//! # ToDevice
//!
//! Sends packets to a network device (Linux AF_PACKET, batched `sendmmsg`
//! with `PACKET_QDISC_BYPASS`; or AF_XDP with `METHOD XDP`).
//!
//! ## Synopsis
//! `ToDevice(DEVNAME [, *keywords* BURST, DEBUG, METHOD, QUEUE, ZEROCOPY])`
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
//! until the socket is writable (in the driver's wait with the
//! other descriptors, not spinning), and then continues.
//!
//! Because the frames skip the qdisc layer, packet sniffers on DEVNAME
//! (tcpdump in the router's namespace) do not see what ToDevice sends;
//! capture on the link's far end, or use ToHostSniffers or ToDump.
//!
//! Packets longer than the device's MTU allows are refused by the kernel
//! (`Message too long`) and counted as drops. FromDevice emits only
//! MTU-sized, checksum-complete packets, so forwarding between devices
//! needs no offload settings.
//!
//! **AF_XDP (`METHOD XDP`).** Packets are copied into free frames of an
//! AF_XDP socket bound to queue QUEUE (default 0) of DEVNAME and queued on
//! its TX ring; a `sendto` starts transmission (copy mode sends 32 frames
//! per call, so a larger batch takes a few), and frames come back through
//! the completion ring. A FromDevice with METHOD XDP on the same device and
//! queue shares the socket. When no frame is free, a pull input retries
//! after 200 µs (frames still waiting in the TX ring are pushed on then
//! too); a push input drops. Empty packets and packets longer than 4096
//! bytes (one UMEM frame) are dropped to output 1. If the
//! kernel refuses AF_XDP, ToDevice says why and uses AF_PACKET.
//!
//! ## Keywords
//! - **BURST** (integer): packets pulled and sent per task run. Default 32
//!   (Click's default is 1; larger bursts only batch the work).
//! - **DEBUG** (boolean): report every send error. Default false: the first
//!   few are reported.
//! - **METHOD** (word): `LINUX` or `PCAP` (both AF_PACKET), or `XDP`
//!   (AF_XDP). Default `LINUX`.
//! - **QUEUE** (integer): with METHOD XDP, the queue the socket is bound
//!   to (default 0). With AF_PACKET, accepted; the kernel picks the
//!   transmit queue.
//! - **ZEROCOPY** (boolean): with METHOD XDP, require (true) or refuse
//!   (false) a zero-copy socket. Default: zero-copy where the driver has it.
//!
//! ## Handlers
//! - `count` (read): packets sent.
//! - `drops` (read): packets the device refused.
//! - `pulls` (read): pull attempts.
//! - `signal` (read): whether the upstream notifier signal is active.
//! - `q` (read): whether packets wait for the socket to become writable.
//! - `method` (read): `LINUX` or `XDP`.
//! - `reset_counts` (write): zeroes `count`, `drops` and `pulls`.
//!
//! ## Example
//! ```click
//! FromDevice(veth0) -> Queue(1000) -> ToDevice(veth1, BURST 64);
//! ```

use std::io;
use std::os::fd::RawFd;

use rclick_core::conf::{parse_word, Args};
use rclick_core::{
    Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Interest, NotifierSignal, TaskId, TimerId,
};

use super::afpacket::PacketSocket;
use super::afxdp::{self, TxPort};

pub struct ToDevice {
    ifname: String,
    burst: usize,
    debug: bool,
    queue: u32,
    want_xdp: bool,
    zerocopy: Option<bool>,
    sock: Option<PacketSocket>,
    xsk: Option<TxPort>,
    /// A hot-swap successor waiting for its predecessor's AF_XDP socket.
    awaiting_xsk: Option<TimerId>,
    /// AF_XDP: retries a send that found no free frame, in case no
    /// readiness event comes (copy-mode transmission needs a kick).
    retry: Option<TimerId>,
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
            queue: 0,
            want_xdp: false,
            zerocopy: None,
            sock: None,
            xsk: None,
            awaiting_xsk: None,
            retry: None,
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
    fn send_all(&mut self, batch: Batch, ctx: &mut Ctx) -> Option<Batch> {
        if self.xsk.is_some() {
            return self.send_xdp(batch, ctx);
        }
        self.send_packet_socket(batch, ctx)
    }

    /// AF_XDP: copies what fits into free UMEM frames; the rest waits.
    fn send_xdp(&mut self, mut batch: Batch, ctx: &mut Ctx) -> Option<Batch> {
        let max = afxdp::FRAME_SIZE as usize;
        if batch
            .packets()
            .iter()
            .any(|p| p.is_empty() || p.len() > max)
        {
            let mut sendable = Batch::new();
            for p in batch.drain() {
                if p.is_empty() || p.len() > max {
                    self.drops += 1;
                    if self.debug || self.complaints < 5 {
                        self.complaints += 1;
                        ctx.chatter(&format!(
                            "ToDevice({}): {}-byte packet does not fit an AF_XDP frame",
                            self.ifname,
                            p.len()
                        ));
                    }
                    ctx.emit(1, p);
                } else {
                    sendable.push(p);
                }
            }
            batch = sendable;
        }
        let port = self.xsk.as_mut()?;
        let k = port.send(batch.packets());
        self.count += k as u64;
        if port.backlog() {
            // Frames the device did not take yet: try again soon even if
            // no more packets come.
            if let Some(t) = self.retry {
                ctx.schedule_timer_after(t, rclick_core::Timestamp::from_sec_nsec(0, 200_000));
            }
        }
        let mut rest = Batch::new();
        for (i, p) in batch.drain().enumerate() {
            if i < k {
                ctx.emit(0, p);
            } else {
                rest.push(p);
            }
        }
        (!rest.is_empty()).then_some(rest)
    }

    fn send_packet_socket(&mut self, mut batch: Batch, ctx: &mut Ctx) -> Option<Batch> {
        let Some(sock) = self.sock.as_ref() else {
            // No socket at all (a hot-swap successor still waiting for
            // its predecessor's): nothing can be sent.
            self.drops += batch.len() as u64;
            for p in batch.drain() {
                ctx.emit(1, p);
            }
            return None;
        };
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
        if self.xsk.is_some() {
            // Not EPOLLOUT: an AF_XDP socket is writable while its TX ring
            // is half empty, which says nothing about free frames, and
            // would wake the router in a loop.
            if let Some(t) = self.retry {
                ctx.schedule_timer_after(t, rclick_core::Timestamp::from_sec_nsec(0, 200_000));
            }
        } else if let Some(s) = self.sock.as_ref() {
            ctx.add_select(s.fd(), Interest::WRITE);
        }
    }

    fn method(&self) -> String {
        match &self.xsk {
            Some(_) => "XDP".into(),
            None if self.awaiting_xsk.is_some() => "XDP (waiting)".into(),
            None => "LINUX".into(),
        }
    }
}

const HANDLERS: &[Handler<ToDevice>] = &[
    Handler::data("count", |e| &e.count),
    Handler::data("drops", |e| &e.drops),
    Handler::data("pulls", |e| &e.pulls),
    Handler::read("signal", |e, ctx| ctx.signal_active(&e.signal).to_string()),
    Handler::read("q", |e, _| e.pending.is_some().to_string()),
    Handler::read("method", |e, _| e.method()),
    Handler::button("reset_counts", |e, _, _| {
        e.count = 0;
        e.drops = 0;
        e.pulls = 0;
        Ok(())
    }),
];

rclick_core::element_class!(ToDevice);

impl Element for ToDevice {
    rclick_core::handlers!(HANDLERS);

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
        let queue: Option<u32> = args.read("QUEUE");
        self.zerocopy = args.read("ZEROCOPY");
        args.complete()?;
        self.queue = queue.unwrap_or(0);
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        if burst == 0 {
            return Err("bad BURST".into());
        }
        match method.as_deref() {
            None | Some("LINUX") | Some("PCAP") => {}
            Some("XDP") => self.want_xdp = true,
            Some(_) => return Err("bad METHOD (expected LINUX, PCAP or XDP)".into()),
        }
        self.burst = burst.min(rclick_core::batch::BATCH_CAPACITY);
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let mut use_xdp = false;
        if self.want_xdp {
            match afxdp::claim_tx(&self.ifname, self.queue, self.zerocopy) {
                Ok(port) => {
                    self.xsk = Some(port);
                    use_xdp = true;
                }
                Err(afxdp::ClaimError::Busy(_)) if ctx.is_hotswap_successor() => {
                    let t = ctx.new_timer();
                    ctx.schedule_timer_at(t, ctx.now());
                    self.awaiting_xsk = Some(t);
                    use_xdp = true;
                }
                Err(e) => ctx.chatter(&format!(
                    "{}: warning: AF_XDP unavailable, using AF_PACKET: {e}",
                    ctx.element_name()
                )),
            }
        }
        if !use_xdp {
            let sock = PacketSocket::open(&self.ifname, 0, false)?;
            sock.qdisc_bypass();
            self.sock = Some(sock);
        }
        if self.want_xdp {
            self.retry = Some(ctx.new_timer());
        }
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

    fn selected(&mut self, fd: RawFd, readable: bool, writable: bool, ctx: &mut Ctx) {
        // Readable here means an error or hang-up: retrying shows it.
        if writable || readable {
            ctx.remove_select(fd);
            if let Some(t) = self.task {
                ctx.schedule_task(t);
            }
        }
    }

    fn take_state(&mut self, old: &mut dyn Element, ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<ToDevice>() else {
            return false;
        };
        if self.awaiting_xsk.is_none() || old.ifname != self.ifname || old.queue != self.queue {
            return false;
        }
        let Some(port) = old.xsk.take() else {
            return false;
        };
        self.xsk = Some(port);
        self.awaiting_xsk = None;
        // Packets the predecessor could not send yet go out first.
        self.pending = old.pending.take();
        if self.pending.is_some() {
            if let Some(t) = self.task {
                ctx.schedule_task(t);
            }
        }
        true
    }

    fn run_timer(&mut self, timer: TimerId, ctx: &mut Ctx) {
        if self.retry == Some(timer) {
            if let Some(p) = self.xsk.as_mut() {
                p.flush();
                if p.backlog() {
                    ctx.schedule_timer_after(
                        timer,
                        rclick_core::Timestamp::from_sec_nsec(0, 200_000),
                    );
                }
            }
            if self.pending.is_some() {
                if let Some(t) = self.task {
                    ctx.schedule_task(t);
                }
            }
            return;
        }
        if self.awaiting_xsk != Some(timer) || self.xsk.is_some() {
            return;
        }
        self.awaiting_xsk = None;
        match afxdp::claim_tx(&self.ifname, self.queue, self.zerocopy) {
            Ok(port) => self.xsk = Some(port),
            Err(e) => {
                ctx.chatter(&format!(
                    "{}: warning: AF_XDP unavailable, using AF_PACKET: {e}",
                    ctx.element_name()
                ));
                match PacketSocket::open(&self.ifname, 0, false) {
                    Ok(sock) => {
                        sock.qdisc_bypass();
                        self.sock = Some(sock);
                    }
                    Err(e) => ctx.chatter(&format!("{}: {e}", ctx.element_name())),
                }
            }
        }
    }

    fn cleanup(&mut self) {
        self.pending = None;
        self.xsk = None;
        self.sock = None;
    }
}
