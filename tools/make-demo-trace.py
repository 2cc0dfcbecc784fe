#!/usr/bin/env python3
"""Writes conf/demo/traffic.pcap: a deterministic mix of Ethernet frames
(ARP, IPv4 UDP/TCP/ICMP, IPv6, and a few malformed frames) for the demo
router and tests. Standard library only, so it runs anywhere.

Usage: tools/make-demo-trace.py [OUTPUT]
"""
import random
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def mac(i):
    return bytes([0x02, 0, 0, 0, 0, i])


def eth(dst, src, etype, payload):
    return dst + src + struct.pack("!H", etype) + payload


def ipv4(src, dst, proto, payload, ttl=64, ident=0):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0, ttl, proto, 0, bytes(src), bytes(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def udp(src, dst, sport, dport, data):
    length = 8 + len(data)
    pseudo = bytes(src) + bytes(dst) + struct.pack("!BBH", 0, 17, length)
    hdr = struct.pack("!HHHH", sport, dport, length, 0)
    c = csum(pseudo + hdr + data) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, c) + data


def tcp(src, dst, sport, dport, seq, flags, data=b""):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    pseudo = bytes(src) + bytes(dst) + struct.pack("!BBH", 0, 6, len(hdr) + len(data))
    c = csum(pseudo + hdr + data)
    return hdr[:16] + struct.pack("!H", c) + hdr[18:] + data


def icmp_echo(ident, seq, data):
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    c = csum(hdr + data)
    return struct.pack("!BBHHH", 8, 0, c, ident, seq) + data


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, bytes(spa), tha, bytes(tpa))


def ipv6_udp(src, dst, payload):
    hdr = struct.pack("!IHBB16s16s", 6 << 28, 8 + len(payload), 17, 64, src, dst)
    return hdr + struct.pack("!HHHH", 5000, 5001, 8 + len(payload), 0) + payload


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "conf/demo/traffic.pcap"
    rng = random.Random(1)
    bcast = b"\xff" * 6
    frames = []
    for i in range(400):
        a, b = rng.randrange(1, 8), rng.randrange(1, 8)
        src = [10, 0, 0, a]
        dst = [10, 0, 1, b]
        kind = rng.random()
        if kind < 0.08:
            frames.append(eth(bcast, mac(a), 0x0806, arp(1, mac(a), src, b"\0" * 6, dst)))
        elif kind < 0.12:
            frames.append(eth(mac(a), mac(b), 0x0806, arp(2, mac(b), dst, mac(a), src)))
        elif kind < 0.55:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
            frames.append(eth(mac(b), mac(a), 0x0800, ipv4(src, dst, 17, udp(src, dst, 1024 + i, 53 if i % 3 else 5000, data), ident=i)))
        elif kind < 0.85:
            frames.append(eth(mac(b), mac(a), 0x0800, ipv4(src, dst, 6, tcp(src, dst, 40000 + a, 80, i * 1000, 0x18, b"GET / HTTP/1.0\r\n\r\n"), ident=i)))
        elif kind < 0.93:
            frames.append(eth(mac(b), mac(a), 0x0800, ipv4(src, dst, 1, icmp_echo(7, i, b"ping" * 8), ttl=rng.choice([1, 64]), ident=i)))
        elif kind < 0.97:
            s6 = bytes([0xFD] + [0] * 14 + [a])
            d6 = bytes([0xFD] + [0] * 14 + [b])
            frames.append(eth(mac(b), mac(a), 0x86DD, ipv6_udp(s6, d6, b"v6 data")))
        else:
            # Malformed: truncated IPv4 header.
            frames.append(eth(mac(b), mac(a), 0x0800, ipv4(src, dst, 17, b"")[:12]))
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        t = 1_700_000_000
        for i, fr in enumerate(frames):
            usec = i * 2500
            f.write(struct.pack("<IIII", t + usec // 1_000_000, usec % 1_000_000, len(fr), len(fr)))
            f.write(fr)
    print(f"wrote {len(frames)} frames to {out}")


if __name__ == "__main__":
    main()
