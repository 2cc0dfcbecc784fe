//! # ToHostSniffers
//!
//! Hands packets to the host's packet sniffers (tcpdump, Wireshark, any
//! packet socket) on a device, and to nothing else.
//!
//! ## Synopsis
//! `ToHostSniffers(DEVNAME [, *keywords* TYPE, ALLOW_NONEXISTENT, SNIFFERS])`
//!
//! ## Ports and processing
//! One push input; no outputs.
//!
//! ## Description
//! In Click's Linux kernel module, ToHostSniffers gives each packet to the
//! kernel's packet taps only, as if it had arrived on DEVNAME: `tcpdump -i
//! DEVNAME` shows it, the IP stack never sees it. A user-level router has
//! no such entry point, so this element transmits each frame on an
//! AF_PACKET socket bound to DEVNAME, a device that drops whatever it is
//! asked to send: a `dummy` device, or an `ifb` device where the kernel
//! has no dummy driver. The kernel copies every transmitted frame to the
//! sniffers on the device before the driver discards it, so sniffers see
//! exactly the frames the element received, and the host stack never
//! receives them: a packet addressed to one of the host's own addresses
//! is not answered, an ARP request not replied to. Unlike Click's, the
//! sniffers see the frames as sent by the host (tcpdump's `-Q out`, "Out"
//! with `-i any`), whatever the packet-type annotation says.
//!
//! The user creates the device (once, as root) and gives it no addresses:
//!
//! ```sh
//! ip link add sniff0 type dummy          # or: type ifb
//! ip link set sniff0 mtu 65535 up
//! ```
//!
//! The device must be up. Frames longer than its MTU plus the Ethernet
//! header are refused by the kernel and counted as drops, hence the large
//! MTU. At initialization the element asks the kernel what kind of device
//! DEVNAME is and warns if it is not `dummy` or `ifb`: on any other device
//! (a veth, a physical NIC) the frames would also leave through it.
//!
//! The frames go out without the qdisc bypass ToDevice uses: frames that
//! bypass the qdisc layer are not shown to sniffers. Frames that cannot be
//! sent (the device is down or missing, the frame is too long or shorter
//! than an Ethernet header, the socket's buffer is full) are dropped and
//! counted; the first five send failures are reported, later ones only
//! counted.
//!
//! A device deleted while the router runs is let go of, and every packet
//! is dropped from then on. With ALLOW_NONEXISTENT the element looks for
//! the device again at most once a second and sends to it once it is back
//! (recreated under the same name). Without ALLOW_NONEXISTENT it never
//! looks again, even if the device comes back: as in Click, where a
//! missing device is an initialization error, only a new router (a
//! restart or a hot swap) opens the device again.
//!
//! Click's DEVNAME is optional; here it is required. DEVNAME may not be an
//! Ethernet address.
//!
//! ## Keywords
//! - **TYPE** (word): `ETHER` (default): packets are Ethernet frames.
//!   `IP`: packets are IP packets, sent behind an Ethernet header with zero
//!   addresses and type 0x0800.
//! - **ALLOW_NONEXISTENT** (boolean): if DEVNAME does not exist at
//!   initialization, start anyway, drop packets, and try the device again
//!   at most once a second; likewise after the device is deleted. Default
//!   false: a missing device is an initialization error, and a device
//!   deleted later is not looked for again.
//! - **SNIFFERS** (boolean): accepted for Click compatibility; must be
//!   true (the default). For the host stack use ToHost.
//!
//! ## Handlers
//! - `dev_name` (read): the device name.
//! - `kind` (read): the device's kind as the kernel reports it (`dummy`,
//!   `ifb`, `veth`, ...; empty for a physical device or before the device
//!   is found).
//! - `count` (read): frames handed to the sniffers.
//! - `drops` (read): frames dropped.
//! - `reset_counts` (write): zeroes `count` and `drops`.
//!
//! ## Example
//! ```click
//! // Let tcpdump -i sniff0 watch what the router drops.
//! FromDevice(eth0) -> cl :: Classifier(12/0800, -);
//! cl[0] -> Queue -> ToDevice(eth1);
//! cl[1] -> ToHostSniffers(sniff0);
//! ```

use rclick_core::conf::{parse_word, Args};
use rclick_core::element::{processing, Sink};
use rclick_core::wire::{ether, EtherAddr, EtherFrame, EthernetRepr, ETHERTYPE_IP};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, PullTask, Timestamp};

use super::afpacket::PacketSocket;

/// Failures reported before the element falls silent.
const COMPLAINTS: u32 = 5;

#[derive(Default)]
pub struct ToHostSniffers {
    ifname: String,
    /// Packets are IP; an Ethernet header goes in front.
    ip: bool,
    allow_nonexistent: bool,
    sock: Option<PacketSocket>,
    kind: String,
    /// When the missing device was last looked for.
    last_try: Option<Timestamp>,
    count: u64,
    drops: u64,
    complaints: u32,
    /// Never started: the input is push.
    puller: PullTask,
}

/// What TYPE IP puts in front of each packet: no addresses, type IPv4.
const IP_ENCAP: EthernetRepr = EthernetRepr {
    dst: EtherAddr([0; 6]),
    src: EtherAddr([0; 6]),
    ethertype: ETHERTYPE_IP,
};

const HANDLERS: &[Handler<ToHostSniffers>] = &[
    Handler::read("dev_name", |e, _| e.ifname.clone()),
    Handler::read("kind", |e, _| e.kind.clone()),
    Handler::data("count", |e| &e.count),
    Handler::data("drops", |e| &e.drops),
    Handler::button("reset_counts", |e, _, _| {
        e.count = 0;
        e.drops = 0;
        Ok(())
    }),
];

impl ToHostSniffers {
    fn open(&mut self) -> Result<(), String> {
        let sock = PacketSocket::open(&self.ifname, 0, false)?;
        self.kind = link_kind(sock.ifindex).unwrap_or_default();
        self.sock = Some(sock);
        Ok(())
    }

    fn kind_warning(&self) -> Option<String> {
        match self.kind.as_str() {
            "dummy" | "ifb" => None,
            "" => Some(format!(
                "warning: {} is not a dummy or ifb device; frames sent to it leave the host",
                self.ifname
            )),
            k => Some(format!(
                "warning: {} is a {k} device, not dummy or ifb; frames sent to it do not stop at the sniffers",
                self.ifname
            )),
        }
    }

    /// Reports a failed send, the first COMPLAINTS times; the message is
    /// only made then, so later failures cost no allocation.
    fn complain(&mut self, e: &std::io::Error, ctx: &Ctx) {
        if self.complaints < COMPLAINTS {
            self.complaints += 1;
            ctx.chatter(&format!("{}: {}: {e}", ctx.element_name(), self.ifname));
        }
    }
}

impl Sink for ToHostSniffers {
    fn consume(&mut self, mut batch: Batch, ctx: &mut Ctx) {
        if self.sock.is_none() {
            let now = ctx.now();
            let due = self
                .last_try
                .is_none_or(|t| now.nanos() - t.nanos() >= Timestamp::NSEC_PER_SEC);
            if self.allow_nonexistent && due {
                self.last_try = Some(now);
                if self.open().is_ok() {
                    ctx.chatter(&format!("{}: {} appeared", ctx.element_name(), self.ifname));
                    if let Some(w) = self.kind_warning() {
                        ctx.chatter(&format!("{}: {w}", ctx.element_name()));
                    }
                }
            }
            if self.sock.is_none() {
                self.drops += batch.len() as u64;
                return;
            }
        }
        // Frames too short for an Ethernet header are not sent.
        let mut frames = Batch::new();
        for mut p in batch.drain() {
            if self.ip {
                let Some(header) = p.push(ether::HEADER_LEN) else {
                    self.drops += 1;
                    continue;
                };
                IP_ENCAP.emit(&mut EtherFrame::new_unchecked(header));
            }
            if p.len() < ether::HEADER_LEN {
                self.drops += 1;
            } else {
                frames.push(p);
            }
        }
        let mut start = 0;
        while start < frames.len() {
            let Some(sock) = self.sock.as_ref() else {
                return;
            };
            let (k, err) = sock.send_batch(&frames.packets()[start..]);
            self.count += k as u64;
            start += k;
            let Some(e) = err else {
                break;
            };
            // The frame at `start` failed; drop it and go on with the rest.
            self.drops += 1;
            start += 1;
            self.complain(&e, ctx);
            if matches!(e.raw_os_error(), Some(libc::ENXIO | libc::ENODEV)) {
                // The device is gone: drop the rest, look for it again later.
                self.drops += (frames.len() - start) as u64;
                self.sock = None;
                self.kind.clear();
            }
        }
    }
    fn pull_task(&self) -> &PullTask {
        &self.puller
    }
}

rclick_core::element_class!(ToHostSniffers);

impl Element for ToHostSniffers {
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
        self.ifname = args.read_mp("DEVNAME");
        let sniffers: bool = args.read_or("SNIFFERS", true);
        let ty = args.read_with("TYPE", parse_word);
        self.allow_nonexistent = args.read_or("ALLOW_NONEXISTENT", false);
        args.complete()?;
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        if !sniffers {
            return Err(
                "SNIFFERS false is ToHost's job; ToHostSniffers only feeds sniffers".into(),
            );
        }
        self.ip = match ty.as_deref() {
            None | Some("ETHER") => false,
            Some("IP") => true,
            Some(_) => return Err("bad TYPE (expected ETHER or IP)".into()),
        };
        Ok(())
    }

    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        match self.open() {
            Ok(()) => {
                if let Some(w) = self.kind_warning() {
                    ctx.chatter(&format!("{}: {w}", ctx.element_name()));
                }
                Ok(())
            }
            Err(e) if self.allow_nonexistent => {
                ctx.chatter(&format!(
                    "{}: {e}; dropping packets until it appears",
                    ctx.element_name()
                ));
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn cleanup(&mut self) {
        self.sock = None;
    }
}

/// The kind of link `ifindex` (`IFLA_INFO_KIND`: "dummy", "ifb", "veth",
/// ...), asked of the kernel over rtnetlink; `None` if it has none (a
/// physical device) or the kernel did not say.
pub fn link_kind(ifindex: i32) -> Option<String> {
    const RTM_GETLINK: u16 = 18;
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const IFLA_LINKINFO: u16 = 18;
    const IFLA_INFO_KIND: u16 = 1;
    const NLMSG_HDRLEN: usize = 16;
    const IFINFOMSG_LEN: usize = 16;
    // SAFETY: plain socket(2) call.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return None;
    }
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: `fd` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // nlmsghdr (len, type, flags, seq, pid) + ifinfomsg (family, pad,
    // type, index, flags, change), native byte order.
    let mut req = [0u8; NLMSG_HDRLEN + IFINFOMSG_LEN];
    let req_len = req.len() as u32;
    req[0..4].copy_from_slice(&req_len.to_ne_bytes());
    req[4..6].copy_from_slice(&RTM_GETLINK.to_ne_bytes());
    req[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    req[NLMSG_HDRLEN] = libc::AF_UNSPEC as u8;
    req[NLMSG_HDRLEN + 4..NLMSG_HDRLEN + 8].copy_from_slice(&ifindex.to_ne_bytes());
    // A receive timeout, so that a silent kernel cannot hang initialization.
    let tv = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: passes a live timeval and its size; sends `req`'s bytes.
    let sent = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
        libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0)
    };
    if sent != req.len() as isize {
        return None;
    }
    let mut buf = vec![0u8; 32 * 1024];
    // SAFETY: receives into `buf`, writable for its length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < (NLMSG_HDRLEN + IFINFOMSG_LEN) as isize {
        return None;
    }
    let msg = &buf[..n as usize];
    let u16_at = |d: &[u8], i: usize| u16::from_ne_bytes([d[i], d[i + 1]]);
    let len = (u32::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]) as usize).min(msg.len());
    if u16_at(msg, 4) != RTM_NEWLINK {
        return None;
    }
    // Walks rtattrs (u16 length including the 4-byte header, u16 type,
    // payload padded to 4 bytes); returns the payload of type `want`.
    fn attr(d: &[u8], want: u16) -> Option<&[u8]> {
        let mut i = 0;
        while i + 4 <= d.len() {
            let alen = u16::from_ne_bytes([d[i], d[i + 1]]) as usize;
            let ty = u16::from_ne_bytes([d[i + 2], d[i + 3]]) & 0x3fff;
            if alen < 4 || i + alen > d.len() {
                return None;
            }
            if ty == want {
                return Some(&d[i + 4..i + alen]);
            }
            i += (alen + 3) & !3;
        }
        None
    }
    let attrs = &msg[NLMSG_HDRLEN + IFINFOMSG_LEN..len];
    let kind = attr(attr(attrs, IFLA_LINKINFO)?, IFLA_INFO_KIND)?;
    let kind = kind.split(|&b| b == 0).next()?;
    Some(String::from_utf8_lossy(kind).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_encapsulation_is_the_old_header() {
        let mut h = [0xaau8; 14];
        IP_ENCAP.emit(&mut EtherFrame::new_unchecked(&mut h[..]));
        assert_eq!(h, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0]);
    }
}
