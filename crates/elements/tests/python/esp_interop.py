#!/usr/bin/env python3
"""An independent ESP peer for crates/elements/tests/ipsec.rs: scapy's
ipsec layer (SecurityAssociation) encrypts or decrypts the packets of a
raw-IP pcap file.

  esp_interop.py encrypt ALG SPI KEYHEX SRC DST ESN IN.pcap OUT.pcap [SEQ]
      IN holds inner IPv4 packets; OUT gets ESP tunnel-mode packets from
      SRC to DST (sequence numbers from SEQ, default 1).
  esp_interop.py decrypt ALG SPI KEYHEX ESN IN.pcap OUT.pcap
      IN holds ESP tunnel-mode packets; OUT gets the inner packets.

ALG is scapy's name (AES-GCM, CHACHA20-POLY1305); KEYHEX is the key then
the 4-byte salt, as rclick and Linux take it; ESN is 0 or 1 (with ESN the
high half of the sequence number comes from the packet's position: these
tests stay below 2^32 packets per high half).
Exit status 3 means scapy is missing (the caller skips).
"""
import sys

try:
    from scapy.all import IP, raw, rdpcap, wrpcap
    from scapy.layers.ipsec import ESP, SecurityAssociation
except ImportError as e:  # pragma: no cover
    print(f"scapy unavailable: {e}", file=sys.stderr)
    sys.exit(3)

DLT_RAW = 101


def main(argv):
    mode, alg, spi, key = argv[1], argv[2], int(argv[3], 0), bytes.fromhex(argv[4])
    if mode == "encrypt":
        src, dst, esn, inp, out = argv[5], argv[6], argv[7] == "1", argv[8], argv[9]
        seq = int(argv[10], 0) if len(argv) > 10 else 1
        sa = SecurityAssociation(ESP, spi=spi, seq_num=seq & 0xFFFFFFFF,
                                 crypt_algo=alg, crypt_key=key,
                                 tunnel_header=IP(src=src, dst=dst),
                                 esn_en=esn, esn=seq >> 32)
        pkts = []
        for p in rdpcap(inp):
            inner = IP(raw(p))
            pkts.append(IP(raw(sa.encrypt(inner))))
        wrpcap(out, pkts, linktype=DLT_RAW)
    elif mode == "decrypt":
        esn, inp, out = argv[5] == "1", argv[6], argv[7]
        sa = SecurityAssociation(ESP, spi=spi, crypt_algo=alg, crypt_key=key,
                                 tunnel_header=IP(), esn_en=esn, esn=0)
        pkts = []
        for p in rdpcap(inp):
            outer = IP(raw(p))
            pkts.append(IP(raw(sa.decrypt(outer))))
        wrpcap(out, pkts, linktype=DLT_RAW)
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
