//! Linux TAP devices for FromHost and ToHost: creating the device through
//! `/dev/net/tun`, setting its Ethernet address, IPv4 address, MTU and
//! flags with interface ioctls, and the descriptor shared between a
//! FromHost and the ToHost elements writing to the same device.

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use rclick_core::Packet;

/// The TAP descriptor of one FromHost, shared with ToHost elements: set
/// when FromHost opens the device, -1 before and after.
#[derive(Debug)]
pub struct TapShared {
    fd: AtomicI32,
}

impl TapShared {
    pub fn new() -> Arc<TapShared> {
        Arc::new(TapShared {
            fd: AtomicI32::new(-1),
        })
    }

    pub fn fd(&self) -> Option<RawFd> {
        let fd = self.fd.load(Ordering::Acquire);
        (fd >= 0).then_some(fd)
    }

    pub fn set(&self, fd: RawFd) {
        self.fd.store(fd, Ordering::Release);
    }

    pub fn clear(&self) {
        self.fd.store(-1, Ordering::Release);
    }
}

/// `struct ifreq`: a 16-byte name and a 24-byte union.
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    data: [u8; 24],
}

impl IfReq {
    fn new(name: &str) -> Result<IfReq, String> {
        let b = name.as_bytes();
        if b.is_empty() || b.len() >= 16 || b.contains(&0) {
            return Err(format!("{name}: bad device name"));
        }
        let mut r = IfReq {
            name: [0; 16],
            data: [0; 24],
        };
        r.name[..b.len()].copy_from_slice(b);
        Ok(r)
    }

    fn name(&self) -> String {
        let end = self.name.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }
}

fn ioctl(fd: RawFd, req: libc::c_ulong, ifr: &mut IfReq) -> io::Result<()> {
    // SAFETY: every request used here reads or writes a `struct ifreq`,
    // which `ifr` is, exclusively borrowed for the call.
    let r = unsafe { libc::ioctl(fd, req as _, ifr as *mut IfReq) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Creates (or attaches to) TAP device `name`, without packet information
/// headers, nonblocking. Returns the descriptor and the kernel's name for
/// the device (a name with `%d` is filled in).
pub fn open_tap(name: &str) -> Result<(OwnedFd, String), String> {
    open_tuntap(name, true)
}

/// Creates (or attaches to) TUN device `name` (IP packets, `tap` false) or
/// TAP device `name` (Ethernet frames, `tap` true), without packet
/// information headers, nonblocking. Returns the descriptor and the
/// kernel's name for the device.
pub fn open_tuntap(name: &str, tap: bool) -> Result<(OwnedFd, String), String> {
    let mut ifr = IfReq::new(name)?;
    // SAFETY: open(2) with a constant NUL-terminated path.
    let raw = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if raw < 0 {
        return Err(format!("open /dev/net/tun: {}", io::Error::last_os_error()));
    }
    // SAFETY: `raw` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let kind = if tap { libc::IFF_TAP } else { libc::IFF_TUN };
    let flags = (kind | libc::IFF_NO_PI) as i16;
    ifr.data[..2].copy_from_slice(&flags.to_ne_bytes());
    ioctl(fd.as_raw_fd(), libc::TUNSETIFF as libc::c_ulong, &mut ifr)
        .map_err(|e| format!("{name}: TUNSETIFF: {e}"))?;
    Ok((fd, ifr.name()))
}

/// Settings applied to a device after it is created.
#[derive(Clone, Debug, Default)]
pub struct IfaceSetup {
    pub ether: Option<[u8; 6]>,
    pub addr: Option<(Ipv4Addr, Ipv4Addr)>,
    pub mtu: Option<u32>,
}

fn inet_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2) call.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(format!("socket: {}", io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn sockaddr_in_bytes(a: Ipv4Addr) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
    b[4..8].copy_from_slice(&a.octets());
    b
}

/// Applies `setup` to device `name` and brings it up.
pub fn setup_iface(name: &str, setup: &IfaceSetup) -> Result<(), String> {
    let s = inet_socket()?;
    let fd = s.as_raw_fd();
    if let Some(mac) = setup.ether {
        let mut ifr = IfReq::new(name)?;
        ifr.data[..2].copy_from_slice(&1u16.to_ne_bytes()); // ARPHRD_ETHER
        ifr.data[2..8].copy_from_slice(&mac);
        ioctl(fd, libc::SIOCSIFHWADDR as libc::c_ulong, &mut ifr)
            .map_err(|e| format!("{name}: setting Ethernet address: {e}"))?;
    }
    if let Some(mtu) = setup.mtu {
        let mut ifr = IfReq::new(name)?;
        ifr.data[..4].copy_from_slice(&(mtu as i32).to_ne_bytes());
        ioctl(fd, libc::SIOCSIFMTU as libc::c_ulong, &mut ifr)
            .map_err(|e| format!("{name}: setting MTU: {e}"))?;
    }
    if let Some((addr, mask)) = setup.addr {
        let mut ifr = IfReq::new(name)?;
        ifr.data[..16].copy_from_slice(&sockaddr_in_bytes(addr));
        ioctl(fd, libc::SIOCSIFADDR as libc::c_ulong, &mut ifr)
            .map_err(|e| format!("{name}: setting address: {e}"))?;
        let mut ifr = IfReq::new(name)?;
        ifr.data[..16].copy_from_slice(&sockaddr_in_bytes(mask));
        ioctl(fd, libc::SIOCSIFNETMASK as libc::c_ulong, &mut ifr)
            .map_err(|e| format!("{name}: setting netmask: {e}"))?;
    }
    let mut ifr = IfReq::new(name)?;
    ioctl(fd, libc::SIOCGIFFLAGS as libc::c_ulong, &mut ifr)
        .map_err(|e| format!("{name}: SIOCGIFFLAGS: {e}"))?;
    let mut flags = i16::from_ne_bytes([ifr.data[0], ifr.data[1]]);
    flags |= (libc::IFF_UP | libc::IFF_RUNNING) as i16;
    ifr.data[..2].copy_from_slice(&flags.to_ne_bytes());
    ioctl(fd, libc::SIOCSIFFLAGS as libc::c_ulong, &mut ifr)
        .map_err(|e| format!("{name}: bringing up: {e}"))?;
    Ok(())
}

/// Makes `gateway` the default route through device `name` (FromHost's
/// and KernelTun's GATEWAY), with the `ip` tool as Click does.
pub fn add_default_route(name: &str, gateway: Ipv4Addr) -> Result<(), String> {
    let status = std::process::Command::new("ip")
        .args(["route", "replace", "default", "via"])
        .arg(gateway.to_string())
        .args(["dev", name])
        .status()
        .map_err(|e| format!("{name}: ip route: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{name}: adding the default route via {gateway} failed"
        ))
    }
}

/// Reads one frame of at most `cap` bytes from a TUN/TAP descriptor into
/// a packet with `headroom`. `Ok(None)` when nothing is waiting.
pub fn read_frame(fd: RawFd, headroom: usize, cap: usize) -> io::Result<Option<Packet>> {
    let mut p = Packet::with_room(headroom, &[], cap);
    let Some(buf) = p.put(cap) else {
        return Ok(None);
    };
    // SAFETY: `buf` is writable for `buf.len()` bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EAGAIN) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    if n == 0 {
        return Ok(None);
    }
    p.take(cap - n as usize);
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifreq_names() {
        assert!(IfReq::new("").is_err());
        assert!(IfReq::new("a-very-long-name-x").is_err());
        assert_eq!(IfReq::new("tap0").unwrap().name(), "tap0");
    }

    #[test]
    fn shared_fd() {
        let s = TapShared::new();
        assert_eq!(s.fd(), None);
        s.set(7);
        assert_eq!(s.fd(), Some(7));
        s.clear();
        assert_eq!(s.fd(), None);
    }
}
