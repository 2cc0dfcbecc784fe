//! Interop with strongSwan's user-level ESP (issue 20): Debian's charon
//! with the `kernel-libipsec` backend (a TUN device, no kernel ESP) as an
//! independent ESP implementation, both directions, in network namespaces.
//!
//! strongSwan keys its SAs only through IKE (it has no manual keying) and
//! rclick has no IKE, so two charons negotiate an IKEv2 SA with a
//! pre-shared key and an AES-GCM-128 child SA over a veth pair (A in one
//! namespace initiates, B in the other responds); B logs the child SA's
//! keys (charon's `chd` log at level 4) and `swanctl --list-sas` names the
//! SPIs. kernel-libipsec in strongSwan 5.9.8 always encapsulates ESP in
//! UDP port 4500 (RFC 3948; raw ESP only from 5.9.11), so the test adds
//! and removes the 8-byte UDP header around rclick's ESP packets.
//!
//! - strongSwan encrypts, rclick decrypts: A pings B through the tunnel
//!   with a marked payload; the ESP packets A sends, captured on the link,
//!   go through ESPTunnelDecap with B's inbound SA: every one is
//!   authentic and holds A's echo request, payload intact.
//! - rclick encrypts, strongSwan decrypts: ESPTunnelEncap, with B's
//!   outbound SA (SEQ past what B used), protects an echo request from B's
//!   site to A's, sent to A as B would. A decrypts it, its kernel answers,
//!   and A encrypts the reply back to B, which rclick decrypts: the reply
//!   carries our identifier and payload, so strongSwan read what rclick
//!   wrote.
//!
//! Needs root, iproute2, iputils-ping, tcpdump and strongSwan's charon with
//! the kernel-libipsec and gcm plugins (Debian packages strongswan-charon,
//! libcharon-extra-plugins, libstrongswan-standard-plugins,
//! strongswan-swanctl); without them it prints why it is skipped and
//! passes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::netns::*;
use rclick_core::Packet;
use rclick_elements::testing::pcap_records;
use rclick_elements::testing::{ipv4_packet, read, try_from_config};

const CHARON: &str = "/usr/lib/ipsec/charon";
const PLUGINS: &str = "/usr/lib/ipsec/plugins";
const ADDR_A: [u8; 4] = [192, 168, 77, 1];
const ADDR_B: [u8; 4] = [192, 168, 77, 2];
const SITE_A: [u8; 4] = [10, 91, 1, 1];
const SITE_B: [u8; 4] = [10, 91, 2, 1];

fn skip_reason() -> Option<String> {
    if let Some(why) = namespace_skip_reason() {
        return Some(why);
    }
    for (what, path) in [
        (
            "charon (Debian package strongswan-charon)",
            CHARON.to_string(),
        ),
        (
            "the kernel-libipsec plugin (Debian package libcharon-extra-plugins)",
            format!("{PLUGINS}/libstrongswan-kernel-libipsec.so"),
        ),
        (
            "the gcm plugin (Debian package libstrongswan-standard-plugins)",
            format!("{PLUGINS}/libstrongswan-gcm.so"),
        ),
    ] {
        if !Path::new(&path).exists() {
            return Some(format!("{what} not installed"));
        }
    }
    if !have(&["swanctl", "--version"]) {
        return Some("swanctl not installed (Debian package strongswan-swanctl)".into());
    }
    if !have(&["tcpdump", "--version"]) {
        return Some("tcpdump not installed".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun for kernel-libipsec".into());
    }
    if !run_t(5, &["ping", "-V"]).0 {
        return Some("ping not installed (Debian package iputils-ping)".into());
    }
    None
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// A charon in namespace `ns`, its files in `dir`; killed on drop.
struct Charon {
    child: Child,
    dir: PathBuf,
    ns: String,
}

impl Charon {
    fn start(ns: &Netns, dir: &Path, me: [u8; 4], peer: [u8; 4], lts: &str, rts: &str) -> Charon {
        std::fs::create_dir_all(dir).unwrap();
        let d = dir.display();
        std::fs::write(
            dir.join("strongswan.conf"),
            format!(
                "charon {{
  load = random nonce aes gcm sha1 sha2 hmac gmp kdf kernel-libipsec kernel-netlink socket-default vici
  plugins {{
    kernel-libipsec {{ load = yes }}
    vici {{ socket = unix://{d}/charon.vici }}
  }}
  filelog {{
    log {{ path = {d}/charon.log
           default = 1
           chd = 4
           flush_line = yes }}
  }}
}}
"
            ),
        )
        .unwrap();
        let (me, peer) = (dotted(me), dotted(peer));
        let (id_a, id_b) = (dotted(ADDR_A), dotted(ADDR_B));
        std::fs::write(
            dir.join("swanctl.conf"),
            format!(
                "connections {{
  c {{
    version = 2
    local_addrs = {me}
    remote_addrs = {peer}
    proposals = aes128-sha256-modp2048
    local {{ auth = psk
            id = {me} }}
    remote {{ auth = psk
             id = {peer} }}
    children {{
      t {{ local_ts = {lts}
          remote_ts = {rts}
          esp_proposals = aes128gcm16
          mode = tunnel }}
    }}
  }}
}}
secrets {{
  ike-1 {{ id-a = {id_a}
          id-b = {id_b}
          secret = \"rclick interop test, not a secret\" }}
}}
"
            ),
        )
        .unwrap();
        // A private /run: charon's pid file and the default sockets must
        // not meet another charon's.
        let script = format!(
            "mount -t tmpfs none /run && STRONGSWAN_CONF={d}/strongswan.conf exec {CHARON}"
        );
        let child = Command::new("ip")
            .args([
                "netns", "exec", &ns.name, "unshare", "-m", "sh", "-c", &script,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("charon");
        let c = Charon {
            child,
            dir: dir.to_path_buf(),
            ns: ns.name.clone(),
        };
        let t0 = Instant::now();
        while !dir.join("charon.vici").exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "charon did not start: {}",
                c.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        c.swanctl(&["--load-all", "--file", &format!("{d}/swanctl.conf")]);
        c
    }

    fn swanctl(&self, args: &[&str]) -> String {
        let uri = format!("unix://{}/charon.vici", self.dir.display());
        let mut cmd = vec!["ip", "netns", "exec", &self.ns, "swanctl"];
        cmd.extend_from_slice(args);
        cmd.extend_from_slice(&["--uri", &uri]);
        let (ok, out) = run_t(30, &cmd);
        assert!(ok, "swanctl {args:?}: {out}\n{}", self.log());
        out
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("charon.log")).unwrap_or_default()
    }

    /// The key charon logged as `encryption {who} key` (key then salt).
    fn key(&self, who: &str) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("encryption {who} key => 20 bytes")))
            .unwrap_or_else(|| panic!("no {who} key in the log:\n{log}"));
        let mut hex = String::new();
        for l in &lines[at + 1..at + 3] {
            // "05[CHD]    0: A9 55 ... 97  .U\..." : the bytes between
            // the offset and the two-space gap before the text.
            let body = l.split_once(": ").map_or("", |x| x.1);
            let bytes = body.split("  ").next().unwrap_or("");
            hex.extend(bytes.split_whitespace());
        }
        assert_eq!(hex.len(), 40, "key of {who}: {hex}");
        hex.to_ascii_lowercase()
    }
}

impl Drop for Charon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn checksum(b: &[u8]) -> [u8; 2] {
    rclick_core::wire::checksum::checksum(b).to_be_bytes()
}

/// An ICMP echo request or reply (`ty` 8 or 0).
fn echo(src: [u8; 4], dst: [u8; 4], ty: u8, id: u16, payload: &[u8]) -> Vec<u8> {
    let mut icmp = vec![ty, 0, 0, 0];
    icmp.extend(id.to_be_bytes());
    icmp.extend(1u16.to_be_bytes());
    icmp.extend(payload);
    let c = checksum(&icmp);
    icmp[2..4].copy_from_slice(&c);
    ipv4_packet(src, dst, 1, 64, 0, &[], &icmp)
}

/// ESP in UDP (RFC 3948) to plain ESP: the IP header with protocol 50,
/// the UDP header gone. `None` for IKE (non-ESP marker) and keepalives.
fn unwrap_udp(ip: &[u8]) -> Option<Vec<u8>> {
    let hl = usize::from(ip.first()? & 0x0f) * 4;
    if ip.get(9) != Some(&17) || ip.len() < hl + 8 + 8 || ip[hl + 8..hl + 12] == [0; 4] {
        return None;
    }
    let mut out = ip[..hl].to_vec();
    out.extend(&ip[hl + 8..]);
    let len = out.len() as u16;
    out[2..4].copy_from_slice(&len.to_be_bytes());
    out[9] = 50;
    out[10..12].fill(0);
    let c = checksum(&out[..hl]);
    out[10..12].copy_from_slice(&c);
    Some(out)
}

/// Plain ESP to ESP in UDP from port 4500 to port 4500.
fn wrap_udp(ip: &[u8]) -> Vec<u8> {
    let hl = usize::from(ip[0] & 0x0f) * 4;
    let esp = &ip[hl..];
    let mut out = ip[..hl].to_vec();
    out.extend(4500u16.to_be_bytes());
    out.extend(4500u16.to_be_bytes());
    out.extend(((esp.len() + 8) as u16).to_be_bytes());
    out.extend([0, 0]);
    out.extend(esp);
    let len = out.len() as u16;
    out[2..4].copy_from_slice(&len.to_be_bytes());
    out[9] = 17;
    out[10..12].fill(0);
    let c = checksum(&out[..hl]);
    out[10..12].copy_from_slice(&c);
    out
}

/// Sends whole IPv4 packets from namespace `ns` (a raw socket with the
/// header included).
fn send_raw(ns: &Netns, pkts: Vec<Vec<u8>>) {
    ns.spawn(move || {
        // SAFETY: plain socket calls on a descriptor owned here.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW);
            assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
            for p in &pkts {
                let mut sa: libc::sockaddr_in = std::mem::zeroed();
                sa.sin_family = libc::AF_INET as libc::sa_family_t;
                sa.sin_addr.s_addr = u32::from_ne_bytes([p[16], p[17], p[18], p[19]]);
                let n = libc::sendto(
                    fd,
                    p.as_ptr().cast(),
                    p.len(),
                    0,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                );
                assert_eq!(n, p.len() as isize, "{}", std::io::Error::last_os_error());
            }
            libc::close(fd);
        }
    })
    .join()
    .unwrap();
}

/// The SPIs B's `swanctl --list-sas` shows: (inbound, outbound).
fn spis(list: &str) -> (String, String) {
    let find = |dir: &str| {
        list.lines()
            .find_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.first() == Some(&dir)).then(|| w[1].trim_end_matches(',').to_string())
            })
            .unwrap_or_else(|| panic!("no '{dir}' SPI in:\n{list}"))
    };
    (find("in"), find("out"))
}

/// Runs `pkts` through `elem` (one ESP element, output 0 to a pcap) and
/// returns what left, with the element's handler reader.
fn through(
    elem: &str,
    pkts: &[Vec<u8>],
    dir: &Path,
    check: impl FnOnce(&mut rclick_core::Router),
) -> Vec<Vec<u8>> {
    let out = dir.join(format!("out-{}.pcap", pkts.len()));
    let _ = std::fs::remove_file(&out);
    let text = format!(
        "Idle -> e :: {elem} -> ToDump({}, ENCAP IP, SNAPLEN 0, UNBUFFERED true) -> Discard;
         e[1] -> Discard;",
        out.display()
    );
    let mut r = try_from_config(&text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    let e = r.find_element("e").unwrap();
    for p in pkts {
        r.inject_packet(e, 0, Packet::from_slice(p));
    }
    check(&mut r);
    pcap_records(&out)
}

#[test]
fn strongswan_libipsec_interop_both_directions() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP: {why}");
        return;
    }
    let t = tag();
    let dir = std::env::temp_dir().join(format!("rclick-ipsec-strongswan-{t}"));
    let (na, nb) = (Netns::new("ipsa"), Netns::new("ipsb"));
    let (va, vb) = (format!("ipsa{t}"), format!("ipsb{t}"));
    veth(&na, &va, Some("192.168.77.1/24"), &nb, &vb);
    nb.exec(&["ip", "addr", "add", "192.168.77.2/24", "dev", &vb]);
    na.exec(&[
        "ip",
        "addr",
        "add",
        &format!("{}/32", dotted(SITE_A)),
        "dev",
        "lo",
    ]);
    nb.exec(&[
        "ip",
        "addr",
        "add",
        &format!("{}/32", dotted(SITE_B)),
        "dev",
        "lo",
    ]);
    let a = Charon::start(
        &na,
        &dir.join("a"),
        ADDR_A,
        ADDR_B,
        "10.91.1.0/24",
        "10.91.2.0/24",
    );
    let b = Charon::start(
        &nb,
        &dir.join("b"),
        ADDR_B,
        ADDR_A,
        "10.91.2.0/24",
        "10.91.1.0/24",
    );
    let up = a.swanctl(&["--initiate", "--child", "t"]);
    assert!(up.contains("CHILD_SA t{1} established"), "{up}");
    let list = b.swanctl(&["--list-sas"]);
    assert!(list.contains("TUNNEL-in-UDP, ESP:AES_GCM_16-128"), "{list}");
    let (b_in, b_out) = spis(&list);
    let (k_ab, k_ba) = (b.key("initiator"), b.key("responder"));

    let cap = dir.join("link.pcap");
    let dump = Tcpdump::start(
        &nb,
        60,
        &[
            "-i",
            &vb,
            "-w",
            &cap.display().to_string(),
            "-U",
            "udp",
            "port",
            "4500",
        ],
    );
    // strongSwan to strongSwan first: the tunnel works.
    let (ok, out) = na.run(
        20,
        &[
            "ping",
            "-c",
            "3",
            "-W",
            "2",
            "-s",
            "56",
            "-p",
            "72636c69636b",
            "-I",
            &dotted(SITE_A),
            &dotted(SITE_B),
        ],
    );
    assert!(ok, "ping through strongSwan's tunnel: {out}");
    // rclick encrypts an echo request from B's site with B's outbound SA,
    // past the sequence numbers B used (3 replies).
    let payload: Vec<u8> = (0..48u8).map(|i| i ^ 0xa5).collect();
    let request = echo(SITE_B, SITE_A, 8, 0x7263, &payload);
    let esp = through(
        &format!(
            "ESPTunnelEncap(0x{b_out}, 0x{k_ba}, {}, {}, SEQ 100)",
            dotted(ADDR_B),
            dotted(ADDR_A)
        ),
        std::slice::from_ref(&request),
        &dir,
        |r| assert_eq!(read(r, "e.packets"), "1"),
    );
    assert_eq!(esp.len(), 1);
    send_raw(&nb, vec![wrap_udp(&esp[0])]);
    std::thread::sleep(Duration::from_secs(2));
    dump.stop();

    // Everything A sent as ESP, decrypted by rclick with B's inbound SA.
    let from_a: Vec<Vec<u8>> = pcap_records(&cap)
        .iter()
        .filter_map(|f| f.get(14..))
        .filter(|ip| ip.len() > 20 && ip[12..16] == ADDR_A)
        .filter_map(unwrap_udp)
        .collect();
    assert!(from_a.len() >= 4, "{} ESP packets from A", from_a.len());
    let inner = through(
        &format!("ESPTunnelDecap(0x{b_in}, 0x{k_ab}, WINDOW 1024)"),
        &from_a,
        &dir,
        |r| {
            assert_eq!(read(r, "e.auth_failures"), "0");
            assert_eq!(read(r, "e.packets"), from_a.len().to_string());
        },
    );
    let requests = inner
        .iter()
        .filter(|p| p[9] == 1 && p[20] == 8 && p[12..16] == SITE_A && p[16..20] == SITE_B)
        .filter(|p| p[28..].windows(6).any(|w| w == b"rclick"))
        .count();
    assert_eq!(requests, 3, "A's echo requests, payload intact");
    let replies: Vec<&Vec<u8>> = inner
        .iter()
        .filter(|p| p[9] == 1 && p[20] == 0 && p[24..26] == [0x72, 0x63])
        .collect();
    assert_eq!(replies.len(), 1, "A answered rclick's request");
    assert_eq!(&replies[0][12..20], &[SITE_A, SITE_B].concat()[..]);
    assert_eq!(
        &replies[0][28..],
        &payload[..],
        "the payload rclick encrypted"
    );
    let la = a.swanctl(&["--list-sas"]);
    let a_in = la
        .lines()
        .find(|l| l.split_whitespace().next() == Some("in"))
        .unwrap_or_default();
    assert!(
        a_in.contains(" 4 packets"),
        "A's inbound SA took 3 replies and rclick's request:\n{la}"
    );
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
}
