#!/usr/bin/env python3
"""Writes the input traces of conf/ip-router-2.click (the Figure 8 router in
trace form): conf/ip-router/eth0.in.pcap and eth1.in.pcap.

Standard library only. Every IPv4 packet carries a unique IP ident (its
case number, listed in CASES below), which crates/elements/tests/ip_router.rs
uses to find what the router did with it.

Usage: tools/make-router-trace.py [OUTDIR]   (default conf/ip-router)
"""

import os
import struct
import sys

R0_MAC = "00:00:c0:00:00:01"  # router eth0, 10.0.0.1/24
R1_MAC = "00:00:c0:00:01:01"  # router eth1, 10.0.1.1/24
R0_IP, R1_IP = "10.0.0.1", "10.0.1.1"
A_MAC, A_IP = "00:00:0a:00:00:02", "10.0.0.2"      # host on eth0
A2_MAC, A2_IP = "00:00:0a:00:00:03", "10.0.0.3"    # second host on eth0
B_MAC, B_IP = "00:00:0b:00:01:02", "10.0.1.2"      # host on eth1
BCAST_MAC = "ff:ff:ff:ff:ff:ff"


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return bytes(int(x) for x in s.split("."))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, ident, ttl=64, df=False, mf=False, frag=0,
         options=b"", bad_sum=False, total_len=None, version=4):
    assert len(options) % 4 == 0
    hl = 5 + len(options) // 4
    tl = total_len if total_len is not None else hl * 4 + len(payload)
    flags = (0x4000 if df else 0) | (0x2000 if mf else 0) | frag
    h = struct.pack("!BBHHHBBH4s4s", (version << 4) | hl, 0, tl, ident, flags,
                    ttl, proto, 0, ip(src), ip(dst)) + options
    s = csum(h)
    if bad_sum:
        s ^= 0x1234
    h = h[:10] + struct.pack("!H", s) + h[12:]
    return h + payload


def l4sum(src, dst, proto, seg):
    pseudo = ip(src) + ip(dst) + struct.pack("!BBH", 0, proto, len(seg))
    return csum(pseudo + seg)


def udp(src, dst, sport, dport, data):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    s = l4sum(src, dst, 17, seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", s) + seg[8:]


def tcp(src, dst, sport, dport, data):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, 0x18, 8192,
                      0, 0) + data
    s = l4sum(src, dst, 6, seg)
    return seg[:16] + struct.pack("!H", s) + seg[18:]


def icmp(typ, code, rest, data):
    m = struct.pack("!BBH", typ, code, 0) + rest + data
    return m[:2] + struct.pack("!H", csum(m)) + m[4:]


def ether(dst, src, etype, payload):
    f = mac(dst) + mac(src) + struct.pack("!H", etype) + payload
    return f + b"\0" * max(0, 60 - len(f))  # Ethernet minimum frame


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + mac(sha) + ip(spa) + \
        mac(tha) + ip(tpa)


def ip_frame(src_mac, dst_mac, pkt):
    return ether(dst_mac, src_mac, 0x0800, pkt)


def udp_pkt(src, dst, ident, data=None, **kw):
    data = data if data is not None else ("case %d" % ident).encode()
    return ipv4(src, dst, 17, udp(src, dst, 4000 + ident, 5000, data), ident, **kw)


def eth0_cases():
    """(frame) list arriving on eth0, from hosts A and A2."""
    f = []
    a = lambda pkt, dst=R0_MAC: f.append(ether(dst, A_MAC, 0x0800, pkt))
    # 1-2: ordinary forwarding A -> B (UDP, TCP); the router ARPs for B.
    a(udp_pkt(A_IP, B_IP, 1))
    a(ipv4(A_IP, B_IP, 6, tcp(A_IP, B_IP, 4002, 80, b"GET / HTTP/1.0\r\n\r\n"), 2))
    # 3: ping to the router itself -> host.
    a(ipv4(A_IP, R0_IP, 1, icmp(8, 0, struct.pack("!HH", 7, 1), b"ping"), 3))
    # 4: directed broadcast of eth1's network -> host.
    a(udp_pkt(A_IP, "10.0.1.255", 4))
    # 5-6: TTL 1 and 0 -> ICMP time exceeded to A, source 10.0.0.1.
    a(udp_pkt(A_IP, B_IP, 5, ttl=1))
    a(udp_pkt(A_IP, B_IP, 6, ttl=0))
    # 7-11: bad headers -> CheckIPHeader drops.
    a(udp_pkt(A_IP, B_IP, 7, bad_sum=True))
    a(udp_pkt(A_IP, B_IP, 8, total_len=200))          # longer than the frame
    a(udp_pkt(A_IP, B_IP, 9, total_len=12))           # shorter than the header
    a(udp_pkt("255.255.255.255", B_IP, 10))           # broadcast source
    a(udp_pkt("10.0.0.255", B_IP, 11))                # directed-broadcast source
    # 12: link-level broadcast -> DropBroadcasts.
    a(udp_pkt(A_IP, B_IP, 12), dst=BCAST_MAC)
    # 13: Record Route, room for 3 addresses -> 10.0.1.1 recorded.
    rr = bytes([7, 15, 4]) + b"\0" * 12 + b"\1"
    a(udp_pkt(A_IP, B_IP, 13, options=rr))
    # 14: Timestamp, flag 0 (timestamps only), room for 2.
    ts = bytes([68, 12, 5, 0]) + b"\0" * 8
    a(udp_pkt(A_IP, B_IP, 14, options=ts))
    # 15: Timestamp, flag 1 (address + timestamp), room for 1.
    ts1 = bytes([68, 12, 5, 1]) + b"\0" * 8
    a(udp_pkt(A_IP, B_IP, 15, options=ts1))
    # 16: full Timestamp option -> overflow counter 0 -> 1.
    tsf = bytes([68, 12, 13, 0]) + b"\x11\x11\x11\x11\x22\x22\x22\x22"
    a(udp_pkt(A_IP, B_IP, 16, options=tsf))
    # 17: Record Route with pointer 2 (bad) -> ICMP parameter problem, ptr 22.
    rrbad = bytes([7, 7, 2]) + b"\0" * 4 + b"\1"
    a(udp_pkt(A_IP, B_IP, 17, options=rrbad))
    # 18: 2000-byte datagram, no DF -> two fragments (1480 + 500 data bytes).
    a(udp_pkt(A_IP, B_IP, 18, data=bytes(range(256)) * 7 + bytes(1972 - 1792)))
    # 19: 2000-byte datagram with DF -> ICMP unreachable needfrag, MTU 1500.
    a(udp_pkt(A_IP, B_IP, 19, data=bytes(1972), df=True))
    # 20: A -> A2 through the router: forwarded back out eth0 + ICMP redirect.
    a(udp_pkt(A_IP, A2_IP, 20))
    # 21: TTL 1 ICMP error message -> no ICMP error about it (RFC 1812).
    a(ipv4(A_IP, B_IP, 1, icmp(3, 3, b"\0\0\0\0", b"\0" * 28), 21, ttl=1))
    # 22: TTL 1 non-first fragment -> no ICMP error about it.
    a(udp_pkt(A_IP, B_IP, 22, ttl=1, frag=100))
    # ARP query for the router's address -> ARPResponder answers.
    f.append(ether(BCAST_MAC, A_MAC, 0x0806, arp(1, A_MAC, A_IP, "00:00:00:00:00:00", R0_IP)))
    # ARP query for someone else -> ignored.
    f.append(ether(BCAST_MAC, A_MAC, 0x0806, arp(1, A_MAC, A_IP, "00:00:00:00:00:00", "10.0.0.77")))
    # IPv6 ethertype -> "non-IP" Print -> Discard.
    f.append(ether(R0_MAC, A_MAC, 0x86DD, b"\x60" + b"\0" * 39))
    # A frame for another host -> HostEtherFilter drops it.
    f.append(ether("00:00:0a:00:00:99", A_MAC, 0x0800, udp_pkt(A_IP, B_IP, 23)))
    # 24: a runt frame (shorter than an IP header after Ethernet).
    f.append(mac(R0_MAC) + mac(A_MAC) + b"\x08\x00" + b"\x45\x00")
    # Late ARP replies from A and A2 answer the router's queries.
    for m, i in ((A_MAC, A_IP), (A2_MAC, A2_IP)):
        f.append(ether(R0_MAC, m, 0x0806, arp(2, m, i, R0_MAC, R0_IP)))
    # 25: after resolution, A -> B goes straight through.
    a(udp_pkt(A_IP, B_IP, 25))
    return f


def eth1_cases():
    f = []
    b = lambda pkt: f.append(ether(R1_MAC, B_MAC, 0x0800, pkt))
    # 101-108: B -> A (held until A's ARP reply on eth0).
    for n in range(101, 109):
        b(udp_pkt(B_IP, A_IP, n))
    # 109: ping to the router's eth1 address -> host.
    b(ipv4(B_IP, R1_IP, 1, icmp(8, 0, struct.pack("!HH", 9, 1), b"ping"), 109))
    # 110: B -> A with TTL 2 -> forwarded with TTL 1.
    b(udp_pkt(B_IP, A_IP, 110, ttl=2))
    # 111: B -> a network without a route -> dropped by the lookup.
    b(udp_pkt(B_IP, "192.168.7.7", 111))
    # B's late ARP reply to the router's query.
    f.append(ether(R1_MAC, B_MAC, 0x0806, arp(2, B_MAC, B_IP, R1_MAC, R1_IP)))
    return f


def write_pcap(path, frames, t0):
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            t = t0 + i * 1000
            out.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(fr), len(fr)))
            out.write(fr)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "conf/ip-router"
    os.makedirs(outdir, exist_ok=True)
    write_pcap(os.path.join(outdir, "eth0.in.pcap"), eth0_cases(), 1700000000 * 1000000)
    write_pcap(os.path.join(outdir, "eth1.in.pcap"), eth1_cases(), 1700000000 * 1000000 + 500)


if __name__ == "__main__":
    main()
