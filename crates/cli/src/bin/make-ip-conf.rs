//! `make-ip-conf`: writes the Click paper's IP router (Figure 8) for N
//! interfaces, like Click's `make-ip-conf.pl`.
//!
//! ```text
//! make-ip-conf [--trace DIR] [--mtu N] [--combo] [--lookup CLASS]
//!              [--library FILE] [--ip6 IFNAME:ADDR6/PREFIXLEN ...]
//!              IFNAME:ADDR/PREFIXLEN:ETHER ...
//! ```
//!
//! Each interface is `name:ip/len:ether`, e.g. `eth0:10.0.0.1/24:00:00:c0:ae:67:ef`
//! (the Ethernet address may use `:` or `-`). With `--trace DIR`, the router
//! reads `DIR/NAME.in.pcap` per interface and writes what it sends to
//! `DIR/NAME.out.pcap` (and packets for the router itself to
//! `DIR/host.pcap`); without it, it uses FromDevice/ToDevice, and packets
//! for the router itself go to its host stack through a TAP device,
//! `fake0`, made by FromHost with the first interface's address (ToHost
//! delivers into it; what the host answers comes back out of FromHost and
//! is routed). The host stack knows only the first interface's network;
//! for it to answer on the others too, give fake0 their addresses and
//! routes (`ip addr add ADDR/32 dev fake0; ip route add NET dev fake0`).
//! In trace form each FromDump is followed by a HostEtherFilter, which sets
//! the packet-type annotation (broadcast, multicast, other host) as
//! FromDevice does and drops frames for other hosts like a
//! non-promiscuous interface.
//!
//! `--combo` uses the merged elements IPInputCombo and IPOutputCombo
//! (the paper's section 6.4) instead of the individual ones; the router
//! behaves identically. `--lookup CLASS` picks the route lookup element
//! (StaticIPLookup by default; RadixIPLookup, DirectIPLookup, ...).
//! `--library FILE` adds `require(library FILE)` and then declares the
//! lookup as `rt :: CLASS` with no arguments: FILE must define CLASS, with
//! the whole routing table (local routes included), as
//! `tools/make-fulltable-routes.py` does.
//!
//! `--ip6 IFNAME:ADDR6/PREFIXLEN` (once per interface, for any of them)
//! makes the router dual-stack: that interface also routes IPv6. Its
//! classifier's last output feeds an IPv6 path: neighbour discovery (an
//! IP6NDAdvertiser answering for ADDR6 and the interface's EUI-64
//! link-local address, an IP6NDSolicitor resolving next hops), router
//! advertisements of the interface's prefix (IP6RouterAdvertiser, so
//! hosts configure themselves by SLAAC), CheckIP6Header, GetIP6Address
//! and one LookupIP6Route `rt6` for all interfaces (local addresses to
//! output 0, where pings are answered; each prefix to its interface). On
//! the way out: DecIP6HLIM (time exceeded from the address of the
//! interface the packet came in on), and packets bigger than the MTU get
//! packet too big with the MTU (routers do not fragment IPv6).

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::ExitCode;

struct Interface {
    name: String,
    addr: Ipv4Addr,
    len: u8,
    ether: String,
    /// The interface's IPv6 address and prefix length (`--ip6`).
    ip6: Option<(Ipv6Addr, u8)>,
}

impl Interface {
    fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len as u32)
        }
    }
    fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & self.mask())
    }
    fn broadcast(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) | !self.mask())
    }

    /// The link-local address made from the Ethernet address (EUI-64,
    /// RFC 4291 appendix A), which hosts learn as their default router.
    fn link_local(&self) -> Ipv6Addr {
        let o: Vec<u8> = self
            .ether
            .split(':')
            .map(|x| u8::from_str_radix(x, 16).unwrap_or(0))
            .collect();
        Ipv6Addr::from([
            0xfe,
            0x80,
            0,
            0,
            0,
            0,
            0,
            0,
            o[0] ^ 2,
            o[1],
            o[2],
            0xff,
            0xfe,
            o[3],
            o[4],
            o[5],
        ])
    }
}

/// The network of `addr/len`.
fn network6(addr: Ipv6Addr, len: u8) -> Ipv6Addr {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    };
    Ipv6Addr::from(u128::from(addr) & mask)
}

/// Parses `--ip6 IFNAME:ADDR6/LEN`.
fn parse_ip6(s: &str) -> Result<(String, Ipv6Addr, u8), String> {
    let (name, net) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}': expected IFNAME:ADDR6/LEN"))?;
    let (addr, len) = net
        .split_once('/')
        .ok_or_else(|| format!("'{net}': expected ADDR6/LEN"))?;
    let addr: Ipv6Addr = addr
        .parse()
        .map_err(|_| format!("'{addr}': bad IPv6 address"))?;
    let len: u8 = len
        .parse()
        .ok()
        .filter(|l| *l <= 128)
        .ok_or_else(|| format!("'{len}': bad prefix length"))?;
    Ok((name.to_string(), addr, len))
}

fn parse_interface(s: &str) -> Result<Interface, String> {
    let mut parts = s.splitn(3, ':');
    let (Some(name), Some(net), Some(ether)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("'{s}': expected NAME:ADDR/LEN:ETHER"));
    };
    let (addr, len) = net
        .split_once('/')
        .ok_or_else(|| format!("'{net}': expected ADDR/LEN"))?;
    let addr: Ipv4Addr = addr
        .parse()
        .map_err(|_| format!("'{addr}': bad IPv4 address"))?;
    let len: u8 = len
        .parse()
        .ok()
        .filter(|l| *l <= 32)
        .ok_or_else(|| format!("'{len}': bad prefix length"))?;
    let octets: Vec<&str> = ether.split([':', '-']).collect();
    if octets.len() != 6
        || octets
            .iter()
            .any(|o| o.is_empty() || o.len() > 2 || u8::from_str_radix(o, 16).is_err())
    {
        return Err(format!("'{ether}': bad Ethernet address"));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(format!("'{name}': bad interface name"));
    }
    Ok(Interface {
        name: name.to_string(),
        addr,
        len,
        ether: octets.join(":"),
        ip6: None,
    })
}

/// What to generate besides the interfaces.
#[derive(Default)]
struct Options {
    trace: Option<String>,
    mtu: u32,
    combo: bool,
    lookup: Option<String>,
    library: Option<String>,
}

fn generate(ifs: &[Interface], o: &Options) -> String {
    let trace = o.trace.as_deref();
    let mtu = o.mtu;
    let mut c = String::new();
    let n = ifs.len();
    let _ = writeln!(
        c,
        "// The IP router of the Click paper (Figure 8), {n} interfaces."
    );
    let _ = writeln!(c, "// Generated by make-ip-conf; interfaces:");
    for (i, f) in ifs.iter().enumerate() {
        let _ = writeln!(c, "//   {i}: {} {}/{} {}", f.name, f.addr, f.len, f.ether);
    }
    c.push('\n');
    if let Some(lib) = &o.library {
        let _ = writeln!(c, "require(library {lib});");
        c.push('\n');
    }
    let interfaces: Vec<String> = ifs
        .iter()
        .map(|f| format!("{}/{}", f.addr, f.len))
        .collect();
    let interfaces = interfaces.join(" ");
    let lookup = o.lookup.as_deref().unwrap_or("StaticIPLookup");
    if o.combo {
        let _ = writeln!(c, "// Routing table (IPInputCombo per interface feeds it)");
        let _ = write!(c, "rt :: {lookup}");
    } else {
        let _ = writeln!(c, "// Shared IP input path and routing table");
        let _ = writeln!(c, "ip :: Strip(14)");
        let _ = writeln!(c, "  -> CheckIPHeader(INTERFACES {interfaces})");
        let _ = writeln!(c, "  -> GetIPAddress(16)");
        let _ = write!(c, "  -> rt :: {lookup}");
    }
    if o.library.is_some() {
        let _ = writeln!(c, ";");
    } else {
        let mut routes = Vec::new();
        for f in ifs {
            routes.push(format!("{}/32 0", f.addr));
            routes.push(format!("{}/32 0", f.broadcast()));
            routes.push(format!("{}/32 0", f.network()));
        }
        for (i, f) in ifs.iter().enumerate() {
            routes.push(format!("{}/{} {}", f.network(), f.len, i + 1));
        }
        routes.push("255.255.255.255/32 0.0.0.0 0".into());
        routes.push("0.0.0.0/32 0".into());
        let _ = writeln!(c, "(\n       {});", routes.join(",\n       "));
    }
    c.push('\n');
    let _ = writeln!(
        c,
        "// ARP responses are copied to each ARPQuerier and the host."
    );
    let _ = writeln!(c, "arpt :: Tee({});", n + 1);
    c.push('\n');
    for (i, f) in ifs.iter().enumerate() {
        let _ = writeln!(c, "// Input and output paths for {}", f.name);
        let _ = writeln!(
            c,
            "c{i} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);"
        );
        match trace {
            Some(dir) => {
                let _ = writeln!(
                    c,
                    "FromDump({dir}/{}.in.pcap, STOP true) -> hf{i} :: HostEtherFilter({}) -> c{i};",
                    f.name, f.ether
                );
                let _ = writeln!(c, "hf{i}[1] -> nothost{i} :: Discard;");
                let _ = writeln!(
                    c,
                    "out{i} :: Queue(200) -> ToDump({dir}/{}.out.pcap);",
                    f.name
                );
            }
            None => {
                let _ = writeln!(c, "FromDevice({}) -> c{i};", f.name);
                let _ = writeln!(
                    c,
                    "out{i} :: Queue(200) -> todevice{i} :: ToDevice({});",
                    f.name
                );
            }
        }
        let _ = writeln!(
            c,
            "c{i}[0] -> ar{i} :: ARPResponder({} {}) -> out{i};",
            f.addr, f.ether
        );
        let _ = writeln!(
            c,
            "arpq{i} :: ARPQuerier({}, {}) -> out{i};",
            f.addr, f.ether
        );
        let _ = writeln!(c, "c{i}[1] -> arpt;");
        let _ = writeln!(c, "arpt[{i}] -> [1]arpq{i};");
        if o.combo {
            let _ = writeln!(
                c,
                "c{i}[2] -> IPInputCombo({}, INTERFACES {interfaces}) -> rt;",
                i + 1
            );
        } else {
            let _ = writeln!(c, "c{i}[2] -> Paint({}) -> ip;", i + 1);
        }
        if f.ip6.is_some() {
            let _ = writeln!(c, "c{i}[3] -> v6c{i} :: {V6_CLASSIFIER};");
        } else {
            let _ = writeln!(c, "c{i}[3] -> Print(\"{} non-IP\") -> Discard;", f.name);
        }
        c.push('\n');
    }
    let _ = writeln!(c, "// Local delivery");
    match trace {
        Some(dir) => {
            let _ = writeln!(c, "toh :: ToDump({dir}/host.pcap);");
        }
        None => {
            // The router's own host stack: a TAP device, fake0, holds the
            // first interface's address. ToHost delivers into it (with
            // the destination 2:2:2:2:2:2 that rt[0]'s EtherEncap writes);
            // what the host sends comes out of FromHost, its ARP queries
            // are answered for every address, and its IP packets are
            // routed like any other.
            let f = &ifs[0];
            let _ = writeln!(
                c,
                "fh :: FromHost(fake0, {}/{}, ETHER 2:2:2:2:2:2);",
                f.addr, f.len
            );
            let _ = writeln!(c, "toh :: ToHost(fake0);");
            let _ = writeln!(c, "fhc :: Classifier(12/0806 20/0001, 12/0800, -);");
            let _ = writeln!(c, "fh -> fhc;");
            let _ = writeln!(c, "fhc[0] -> ARPResponder(0.0.0.0/0 1:1:1:1:1:1) -> toh;");
            let _ = writeln!(
                c,
                "fhc[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;"
            );
            let _ = writeln!(c, "fhc[2] -> Discard;");
        }
    }
    let _ = writeln!(c, "arpt[{n}] -> toh;");
    let _ = writeln!(
        c,
        "rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> toh;"
    );
    c.push('\n');
    for (i, f) in ifs.iter().enumerate() {
        let p = i + 1;
        let _ = writeln!(c, "// Forwarding path for {}", f.name);
        let a = f.addr;
        if o.combo {
            let _ = writeln!(
                c,
                "rt[{p}] -> oc{p} :: IPOutputCombo({p}, {a}, {mtu}) -> [0]arpq{i};"
            );
            let _ = writeln!(c, "oc{p}[1] -> ICMPError({a}, redirect, host) -> rt;");
            let _ = writeln!(c, "oc{p}[2] -> ICMPError({a}, parameterproblem) -> rt;");
            let _ = writeln!(c, "oc{p}[3] -> ICMPError({a}, timeexceeded) -> rt;");
            let _ = writeln!(c, "oc{p}[4] -> fr{p} :: IPFragmenter({mtu}) -> [0]arpq{i};");
        } else {
            let _ = writeln!(c, "rt[{p}] -> DropBroadcasts");
            let _ = writeln!(c, "  -> cp{p} :: PaintTee({p})");
            let _ = writeln!(c, "  -> gio{p} :: IPGWOptions({a})");
            let _ = writeln!(c, "  -> FixIPSrc({a})");
            let _ = writeln!(c, "  -> dt{p} :: DecIPTTL");
            let _ = writeln!(c, "  -> fr{p} :: IPFragmenter({mtu})");
            let _ = writeln!(c, "  -> [0]arpq{i};");
            let _ = writeln!(c, "dt{p}[1] -> ICMPError({a}, timeexceeded) -> rt;");
            let _ = writeln!(c, "gio{p}[1] -> ICMPError({a}, parameterproblem) -> rt;");
            let _ = writeln!(c, "cp{p}[1] -> ICMPError({a}, redirect, host) -> rt;");
        }
        let _ = writeln!(
            c,
            "fr{p}[1] -> ICMPError({a}, unreachable, needfrag, PMTU {mtu}) -> rt;"
        );
        c.push('\n');
    }
    if ifs.iter().any(|f| f.ip6.is_some()) {
        generate_ip6(&mut c, ifs, mtu);
    }
    if trace.is_some() {
        let _ = writeln!(c, "// Every trace read: drain the queues, then stop.");
        let lengths: Vec<String> = (0..n).map(|i| format!("$(out{i}.length)")).collect();
        let _ = writeln!(
            c,
            "DriverManager(wait_stop {n}, label drain, wait 1ms, goto drain $(ne 0 $(add {})), stop);",
            lengths.join(" ")
        );
    }
    c
}

/// An IPv6 interface's classifier (after the IPv4 one): neighbour
/// solicitations, neighbour advertisements, router solicitations, other
/// IPv6, the rest.
const V6_CLASSIFIER: &str =
    "Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd 20/3aff 54/85, 12/86dd, -)";

/// The IPv6 half of a dual-stack router: a path per `--ip6` interface,
/// fed by its classifier's last output and sharing its queue `out{i}`.
fn generate_ip6(c: &mut String, ifs: &[Interface], mtu: u32) {
    let n = ifs.len();
    let _ = writeln!(c, "// IPv6: routing table (local addresses to 0)");
    let mut routes = Vec::new();
    for f in ifs {
        if let Some((a, _)) = f.ip6 {
            routes.push(format!("{a}/128 0"));
        }
    }
    for (i, f) in ifs.iter().enumerate() {
        if let Some((a, len)) = f.ip6 {
            routes.push(format!("{}/{len} {}", network6(a, len), i + 1));
        }
    }
    let _ = writeln!(c, "rt6 :: LookupIP6Route({});", routes.join(", "));
    let _ = writeln!(
        c,
        "rt6[0] -> ping6 :: ICMP6PingResponder -> GetIP6Address(24) -> rt6;"
    );
    let _ = writeln!(c, "ping6[1] -> Discard;");
    // rt6 has an output per interface up to the last with IPv6; an
    // interface without IPv6 before that has no route to its output, but
    // the output must be connected for the router to initialize.
    let last6 = ifs.iter().rposition(|f| f.ip6.is_some()).unwrap_or(0);
    for (i, f) in ifs.iter().enumerate().take(last6) {
        if f.ip6.is_none() {
            let _ = writeln!(c, "rt6[{}] -> Discard;", i + 1);
        }
    }
    // Errors come from the address of the interface a packet came in on
    // (its paint, 1 to n); an interface without IPv6 lends the first one
    // that has it.
    let fallback = ifs.iter().find_map(|f| f.ip6).map(|(a, _)| a);
    let source = |i: usize| ifs[i].ip6.map(|(a, _)| a).or(fallback);
    for kind in ["hlim", "big"] {
        let _ = writeln!(c, "err_{kind} :: PaintSwitch;");
        let _ = writeln!(c, "err_{kind}[0] -> Discard;");
        for i in 0..n {
            let p = i + 1;
            let Some(a) = source(i) else { continue };
            let (ty, code, extra) = if kind == "hlim" {
                (3, 0, String::new())
            } else {
                (2, 0, format!(", MTU {mtu}"))
            };
            let _ = writeln!(
                c,
                "err_{kind}[{p}] -> ICMP6Error({a}, {ty}, {code}{extra}) -> rt6;"
            );
        }
    }
    c.push('\n');
    for (i, f) in ifs.iter().enumerate() {
        let Some((a, len)) = f.ip6 else { continue };
        let p = i + 1;
        let ll = f.link_local();
        let e = &f.ether;
        let net = network6(a, len);
        let _ = writeln!(c, "// IPv6 on {}: {a}/{len}, link-local {ll}", f.name);
        let _ = writeln!(c, "nds{i} :: IP6NDSolicitor({a}, {e}) -> out{i};");
        let _ = writeln!(
            c,
            "v6c{i}[0] -> ndt{i} :: Tee -> IP6NDAdvertiser({a} {ll} {e}) -> out{i};"
        );
        let _ = writeln!(c, "ndt{i}[1] -> [1]nds{i};");
        let _ = writeln!(c, "v6c{i}[1] -> [1]nds{i};");
        let _ = writeln!(
            c,
            "v6c{i}[2] -> IP6RouterAdvertiser({ll}, {e}, {net}/{len}) -> out{i};"
        );
        let _ = writeln!(
            c,
            "v6c{i}[3] -> Paint({p}) -> Strip(14) -> CheckIP6Header({a}) -> GetIP6Address(24) -> rt6;"
        );
        let _ = writeln!(c, "v6c{i}[4] -> Print(\"{} non-IP\") -> Discard;", f.name);
        let _ = writeln!(
            c,
            "rt6[{p}] -> dh{p} :: DecIP6HLIM -> mtu{p} :: CheckLength({mtu}) -> nds{i};"
        );
        let _ = writeln!(c, "dh{p}[1] -> err_hlim;");
        let _ = writeln!(c, "mtu{p}[1] -> err_big;");
        c.push('\n');
    }
}

fn main() -> ExitCode {
    let mut o = Options {
        mtu: 1500,
        ..Default::default()
    };
    let mut ifs = Vec::new();
    let mut ip6 = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--ip6" => match args.next().as_deref().map(parse_ip6) {
                Some(Ok(x)) => ip6.push(x),
                Some(Err(e)) => {
                    eprintln!("make-ip-conf: {e}");
                    return ExitCode::from(1);
                }
                None => {
                    eprintln!("make-ip-conf: --ip6 expects IFNAME:ADDR6/PREFIXLEN");
                    return ExitCode::from(1);
                }
            },
            "--trace" => o.trace = args.next(),
            "--combo" => o.combo = true,
            "--lookup" => o.lookup = args.next(),
            "--library" => o.library = args.next(),
            "--mtu" => match args.next().and_then(|v| v.parse().ok()) {
                Some(m) if m >= 68 => o.mtu = m,
                _ => {
                    eprintln!("make-ip-conf: --mtu expects an integer of at least 68");
                    return ExitCode::from(1);
                }
            },
            "-h" | "--help" => {
                println!(
                    "Usage: make-ip-conf [--trace DIR] [--mtu N] [--combo] [--lookup CLASS] [--library FILE] [--ip6 IFNAME:ADDR6/PREFIXLEN ...] IFNAME:ADDR/PREFIXLEN:ETHER ..."
                );
                println!("Writes the Click paper's IP router (Figure 8) for the given interfaces.");
                return ExitCode::SUCCESS;
            }
            _ => match parse_interface(&a) {
                Ok(f) => ifs.push(f),
                Err(e) => {
                    eprintln!("make-ip-conf: {e}");
                    return ExitCode::from(1);
                }
            },
        }
    }
    if ifs.is_empty() {
        eprintln!("make-ip-conf: no interfaces given (try --help)");
        return ExitCode::from(1);
    }
    for (name, addr, len) in ip6 {
        match ifs.iter_mut().find(|f| f.name == name) {
            Some(f) if f.ip6.is_none() => f.ip6 = Some((addr, len)),
            Some(_) => {
                eprintln!("make-ip-conf: --ip6 given twice for {name}");
                return ExitCode::from(1);
            }
            None => {
                eprintln!("make-ip-conf: --ip6 names {name}, which is not an interface");
                return ExitCode::from(1);
            }
        }
    }
    print!("{}", generate(&ifs, &o));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interfaces_parse() {
        let f = parse_interface("eth0:10.0.0.1/24:00-00-c0-ae-67-ef").unwrap();
        assert_eq!(f.network(), Ipv4Addr::new(10, 0, 0, 0));
        assert_eq!(f.broadcast(), Ipv4Addr::new(10, 0, 0, 255));
        assert_eq!(f.ether, "00:00:c0:ae:67:ef");
        assert!(parse_interface("eth0:10.0.0.1:00:00:c0:ae:67:ef").is_err());
        assert!(parse_interface("eth0:10.0.0.1/33:00:00:c0:ae:67:ef").is_err());
        assert!(parse_interface("eth0:10.0.0.1/24:00:00:c0:ae:67").is_err());
    }

    #[test]
    fn routes_and_paths_per_interface() {
        let ifs = vec![
            parse_interface("a:10.0.0.1/24:00:00:00:00:00:01").unwrap(),
            parse_interface("b:10.0.1.1/24:00:00:00:00:00:02").unwrap(),
        ];
        let o = Options {
            trace: Some("tr".into()),
            mtu: 1500,
            ..Default::default()
        };
        let c = generate(&ifs, &o);
        assert!(c.contains("10.0.0.0/24 1,\n"));
        assert!(c.contains("10.0.1.0/24 2,\n"));
        assert!(c.contains("arpt :: Tee(3);"));
        assert!(c.contains(
            "FromDump(tr/b.in.pcap, STOP true) -> hf1 :: HostEtherFilter(00:00:00:00:00:02) -> c1;"
        ));
        assert!(c.contains("dt2[1] -> ICMPError(10.0.1.1, timeexceeded) -> rt;"));
        assert!(c.contains("wait_stop 2"));
        assert!(c.contains("ICMPError(10.0.1.1, unreachable, needfrag, PMTU 1500)"));
        let m = generate(
            &ifs,
            &Options {
                combo: true,
                mtu: 576,
                ..Default::default()
            },
        );
        assert!(m.contains("c0[2] -> IPInputCombo(1, INTERFACES 10.0.0.1/24 10.0.1.1/24) -> rt;"));
        assert!(m.contains("rt[2] -> oc2 :: IPOutputCombo(2, 10.0.1.1, 576) -> [0]arpq1;"));
        assert!(m.contains("oc2[4] -> fr2 :: IPFragmenter(576) -> [0]arpq1;"));
        assert!(!m.contains("CheckIPHeader(INTERFACES"));
        // Device form: the host stack is a TAP device paired with ToHost.
        assert!(m.contains("fh :: FromHost(fake0, 10.0.0.1/24, ETHER 2:2:2:2:2:2);"));
        assert!(m.contains("toh :: ToHost(fake0);"));
        assert!(m.contains("fhc[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;"));
        assert!(!c.contains("FromHost"));
        let l = generate(
            &ifs,
            &Options {
                mtu: 1500,
                lookup: Some("FullTable".into()),
                library: Some("t.click".into()),
                ..Default::default()
            },
        );
        assert!(
            l.starts_with("require(library t.click);") || l.contains("\nrequire(library t.click);")
        );
        assert!(l.contains("-> rt :: FullTable;"));
    }

    #[test]
    fn dual_stack_interfaces() {
        let mut ifs = vec![
            parse_interface("a:10.0.0.1/24:02:00:00:00:0a:01").unwrap(),
            parse_interface("b:10.0.1.1/24:02:00:00:00:0b:01").unwrap(),
            parse_interface("c:10.0.2.1/24:02:00:00:00:0c:01").unwrap(),
        ];
        let (_, a, len) = parse_ip6("a:2001:db8:a::1/64").unwrap();
        ifs[0].ip6 = Some((a, len));
        let (name, b, len) = parse_ip6("b:2001:db8:b::1/64").unwrap();
        assert_eq!(name, "b");
        ifs[1].ip6 = Some((b, len));
        assert!(parse_ip6("b:2001:db8:b::1").is_err());
        assert!(parse_ip6("b:2001:db8:b::1/129").is_err());
        assert_eq!(
            ifs[1].link_local(),
            "fe80::ff:fe00:b01".parse::<Ipv6Addr>().unwrap()
        );
        let c = generate(
            &ifs,
            &Options {
                mtu: 1500,
                trace: Some("tr".into()),
                ..Default::default()
            },
        );
        assert!(c.contains(
            "rt6 :: LookupIP6Route(2001:db8:a::1/128 0, 2001:db8:b::1/128 0, 2001:db8:a::/64 1, 2001:db8:b::/64 2);"
        ));
        assert!(c.contains("c1[3] -> v6c1 :: Classifier(12/86dd"));
        // An interface without --ip6 keeps IPv4 only.
        assert!(c.contains("c2[3] -> Print(\"c non-IP\") -> Discard;"));
        assert!(!c.contains("v6c2"));
        assert!(c.contains(
            "IP6RouterAdvertiser(fe80::ff:fe00:b01, 02:00:00:00:0b:01, 2001:db8:b::/64)"
        ));
        assert!(c.contains("rt6[2] -> dh2 :: DecIP6HLIM -> mtu2 :: CheckLength(1500) -> nds1;"));
        // Errors about packets from c (no IPv6 of its own) come from a's address.
        assert!(c.contains("err_hlim[3] -> ICMP6Error(2001:db8:a::1, 3, 0) -> rt6;"));
        assert!(c.contains("err_big[2] -> ICMP6Error(2001:db8:b::1, 2, 0, MTU 1500) -> rt6;"));
    }
}
