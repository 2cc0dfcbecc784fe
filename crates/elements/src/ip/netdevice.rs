//! Network device names as addresses: what Click's AddressInfo answers for
//! a name that no AddressInfo declares but that names a network device of
//! the host (`ICMPPingSource(eth0, ...)`, `ARPQuerier(eth0)`, `eth0:ip`,
//! `eth0:eth`, `eth0:gw`).
//!
//! The device's first IPv4 address and its netmask come from
//! `getifaddrs(3)`, its Ethernet address from the same list (the
//! `AF_PACKET` entry of an Ethernet device), and its gateway from the
//! kernel's IPv4 routing table (`/proc/net/route`: a default route out of
//! that device). The lookups run while elements are configured, never per
//! packet.

use std::net::Ipv4Addr;

use rclick_core::conf::Ipv4Prefix;
use rclick_core::wire::EtherAddr;

/// What the host says about one network device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceAddrs {
    pub name: String,
    /// The first IPv4 address and its netmask.
    pub ipv4: Option<(Ipv4Addr, Ipv4Addr)>,
    pub ether: Option<EtherAddr>,
}

/// Reads every device's addresses with `getifaddrs(3)`, in the kernel's
/// order. An error yields an empty list (the name is then simply not an
/// address).
fn read_devices() -> Vec<DeviceAddrs> {
    let mut out: Vec<DeviceAddrs> = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, alive
        // until freeifaddrs.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_name.is_null() || ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let idx = match out.iter().position(|d| d.name == name) {
            Some(i) => i,
            None => {
                out.push(DeviceAddrs {
                    name,
                    ..DeviceAddrs::default()
                });
                out.len() - 1
            }
        };
        // SAFETY: ifa_addr points to a sockaddr at least as long as its
        // family's structure.
        let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
        if family == libc::AF_INET && out[idx].ipv4.is_none() {
            // SAFETY: an AF_INET address is a sockaddr_in.
            let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
            let addr = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            let mask = if ifa.ifa_netmask.is_null() {
                Ipv4Addr::BROADCAST
            } else {
                // SAFETY: the netmask of an AF_INET entry is a sockaddr_in.
                let m = unsafe { &*(ifa.ifa_netmask as *const libc::sockaddr_in) };
                Ipv4Addr::from(u32::from_be(m.sin_addr.s_addr))
            };
            out[idx].ipv4 = Some((addr, mask));
        } else if family == libc::AF_PACKET && out[idx].ether.is_none() {
            // SAFETY: an AF_PACKET address is a sockaddr_ll.
            let sll = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_ll) };
            let ether_like =
                sll.sll_hatype == libc::ARPHRD_ETHER || sll.sll_hatype == libc::ARPHRD_IEEE80211;
            if ether_like && sll.sll_halen == 6 {
                let mut a = [0u8; 6];
                a.copy_from_slice(&sll.sll_addr[..6]);
                out[idx].ether = Some(EtherAddr(a));
            }
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// The addresses of device `name`, if the host (the calling thread's
/// network namespace) has such a device. Not cached: a router built in
/// another namespace, or after a device appeared, sees the devices as they
/// are.
pub fn device(name: &str) -> Option<DeviceAddrs> {
    if name.is_empty() || name.len() >= 16 || name.contains(['/', ' ', '.']) {
        return None;
    }
    read_devices().into_iter().find(|d| d.name == name)
}

/// The first IPv4 address of device `name`.
pub fn device_ipv4(name: &str) -> Option<Ipv4Addr> {
    device(name).and_then(|d| d.ipv4).map(|(a, _)| a)
}

/// The first IPv4 address of device `name` with its netmask.
pub fn device_ipv4_prefix(name: &str) -> Option<Ipv4Prefix> {
    device(name)
        .and_then(|d| d.ipv4)
        .map(|(addr, mask)| Ipv4Prefix { addr, mask })
}

/// The Ethernet address of device `name`.
pub fn device_ether(name: &str) -> Option<EtherAddr> {
    device(name).and_then(|d| d.ether)
}

/// The gateway of a default route out of device `name`, from the text of
/// `/proc/net/route`.
pub fn gateway_in_route_table(table: &str, name: &str) -> Option<Ipv4Addr> {
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // Iface Destination Gateway Flags RefCnt Use Metric Mask ...
        if f.len() < 8 || f[0] != name || f[1] != "00000000" || f[7] != "00000000" {
            return None;
        }
        // The kernel prints the address's bytes read as a native u32.
        let gw = u32::from_str_radix(f[2], 16).ok()?;
        let gw = Ipv4Addr::from(gw.to_ne_bytes());
        (!gw.is_unspecified()).then_some(gw)
    })
}

/// The gateway of device `name`: its default route's gateway, or else the
/// first host address of its network (as Click answers `NAME:gw`).
pub fn device_gateway(name: &str) -> Option<Ipv4Addr> {
    let dev = device(name)?;
    // The calling thread's namespace (a router thread may have entered
    // another one than the process's).
    if let Some(gw) = std::fs::read_to_string("/proc/thread-self/net/route")
        .or_else(|_| std::fs::read_to_string("/proc/net/route"))
        .ok()
        .and_then(|t| gateway_in_route_table(&t, name))
    {
        return Some(gw);
    }
    let (addr, mask) = dev.ipv4?;
    Some(Ipv4Addr::from((u32::from(addr) & u32::from(mask)) | 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_a_device() {
        // Every Linux host (and network namespace) has `lo`.
        let lo = device("lo").expect("lo");
        if let Some((a, m)) = lo.ipv4 {
            assert_eq!(a, Ipv4Addr::LOCALHOST);
            assert_eq!(m, Ipv4Addr::new(255, 0, 0, 0));
            assert_eq!(device_ipv4("lo"), Some(Ipv4Addr::LOCALHOST));
            assert_eq!(device_gateway("lo"), Some(Ipv4Addr::new(127, 0, 0, 1)));
        }
        // Loopback is not Ethernet.
        assert_eq!(device_ether("lo"), None);
    }

    #[test]
    fn unknown_names_are_not_devices() {
        assert_eq!(device("no-such-dev0"), None);
        assert_eq!(device(""), None);
        assert_eq!(device("1.2.3.4"), None);
        assert_eq!(device_ipv4("no-such-dev0"), None);
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn route_table_gateway() {
        let t =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                 eth1\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
                 eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
        assert_eq!(
            gateway_in_route_table(t, "eth0"),
            Some(Ipv4Addr::new(192, 168, 2, 1))
        );
        assert_eq!(gateway_in_route_table(t, "eth1"), None);
        assert_eq!(gateway_in_route_table(t, "eth2"), None);
        assert_eq!(gateway_in_route_table("", "eth0"), None);
    }
}
