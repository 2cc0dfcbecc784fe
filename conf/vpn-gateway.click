// Site-to-site IPsec VPN gateway (issue 20): the SMP Click paper's Figures
// 5 and 6 (encryption and encapsulation inserted into the IP router's
// output to the outside world, the inverse on its input) on the IP router
// of the Click paper's Figure 8, with ESP tunnel mode (RFC 4303) and an
// AEAD algorithm (AES-GCM, RFC 4106; or ChaCha20-Poly1305, RFC 7634)
// instead of the paper's 3DES and HMAC-SHA1 (ESPTunnelEncap,
// ESPTunnelDecap).
//
// Run:  rclick conf/vpn-gateway.click NAME=VALUE ...
// Parameters (the defaults are gateway A of the example below):
//   INSIDE_DEV      device on the protected site                  (eth0)
//   INSIDE_IP       the gateway's address there                   (10.1.0.1)
//   INSIDE_ETH      the gateway's Ethernet address there          (00:00:c0:00:01:01)
//   INSIDE_NET      the protected local prefix                    (10.1.0.0/16)
//   OUTSIDE_DEV     device towards the Internet                   (eth1)
//   OUTSIDE_IP      the gateway's address there: the local tunnel
//                   endpoint                                      (192.0.2.1)
//   OUTSIDE_ETH     the gateway's Ethernet address there          (00:00:c0:00:02:01)
//   OUTSIDE_NET     the outside link's prefix                     (192.0.2.0/24)
//   OUTSIDE_GW      the next hop for everything not on a link     (192.0.2.254)
//   OUTSIDE_GW_ETH  Ethernet address of every outside next hop (a
//                   point-to-point uplink; no ARP on the outside)  (00:00:c0:00:02:fe)
//   PEER_IP         the remote tunnel endpoint                    (198.51.100.1)
//   REMOTE_NET      the protected remote prefix                   (10.2.0.0/16)
//   SPI_OUT, KEY_OUT  SPI and key of the outbound SA              (0x1001, ...)
//   SPI_IN, KEY_IN    SPI and key of the inbound SA               (0x2001, ...)
//                   Keys are hex: key then 4-byte salt, as RFC 4106 and
//                   Linux lay them out (AES-GCM-128: 20 bytes; AES-GCM-256
//                   and ChaCha20-Poly1305: 36 bytes). The defaults are
//                   published test keys: always pass your own.
//   ALG             aes128gcm16, aes256gcm16 or chacha20poly1305   (aes128gcm16)
//   ESN             extended sequence numbers, true or false        (false)
//   WINDOW          anti-replay window                              (128)
//   MTU             outside MTU                                     (1500)
//
// Example: gateway B of the same tunnel swaps the roles:
//   rclick conf/vpn-gateway.click INSIDE_IP=10.2.0.1 INSIDE_NET=10.2.0.0/16 \
//     INSIDE_ETH=00:00:c0:00:03:01 OUTSIDE_IP=198.51.100.1 \
//     OUTSIDE_NET=198.51.100.0/24 OUTSIDE_GW=198.51.100.254 \
//     OUTSIDE_ETH=00:00:c0:00:04:01 PEER_IP=192.0.2.1 REMOTE_NET=10.1.0.0/16 \
//     SPI_OUT=0x2001 KEY_OUT=<A's KEY_IN> SPI_IN=0x1001 KEY_IN=<A's KEY_OUT>
//
// Policy (RFC 4301 §4.4.1, §5.2): packets from INSIDE_NET to REMOTE_NET are
// protected; ESP from PEER_IP to OUTSIDE_IP is decapsulated and its inner
// packet forwarded only if it is from REMOTE_NET to INSIDE_NET; plaintext
// from the outside claiming a REMOTE_NET source is dropped. Everything
// else is routed as the plain IP router routes it. The counters are the
// handlers of enc (ESPTunnelEncap), dec (ESPTunnelDecap), spoofed and
// policy (Counters); rekey with enc.replace_sa and dec.replace_sa.

define($INSIDE_DEV eth0, $INSIDE_IP 10.1.0.1, $INSIDE_ETH 00:00:c0:00:01:01,
       $INSIDE_NET 10.1.0.0/16,
       $OUTSIDE_DEV eth1, $OUTSIDE_IP 192.0.2.1, $OUTSIDE_ETH 00:00:c0:00:02:01,
       $OUTSIDE_NET 192.0.2.0/24, $OUTSIDE_GW 192.0.2.254,
       $OUTSIDE_GW_ETH 00:00:c0:00:02:fe,
       $PEER_IP 198.51.100.1, $REMOTE_NET 10.2.0.0/16,
       $SPI_OUT 0x1001, $KEY_OUT 0x4c80cdefbb5d10da906ac73c3613a6342e443b68,
       $SPI_IN 0x2001, $KEY_IN 0xfeffe9928665731c6d6a8f9467308308cafebabe,
       $ALG aes128gcm16, $ESN false, $WINDOW 128, $MTU 1500)

// Shared IP input path and routing table (Figure 8). Output 3 is the
// tunnel.
ip :: Strip(14)
  -> CheckIPHeader
  -> GetIPAddress(16)
  -> rt :: StaticIPLookup(
       $INSIDE_IP/32 0,
       $OUTSIDE_IP/32 0,
       $INSIDE_NET 1,
       $REMOTE_NET 3,
       $OUTSIDE_NET 2,
       0.0.0.0/0 $OUTSIDE_GW 2);

// ARP responses are copied to the inside ARPQuerier.
arpt :: Tee(1);

// Inside: the protected site.
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($INSIDE_DEV) -> c0;
out0 :: Queue(1000) -> ToDevice($INSIDE_DEV);
c0[0] -> ARPResponder($INSIDE_IP $INSIDE_ETH) -> out0;
arpq0 :: ARPQuerier($INSIDE_IP, $INSIDE_ETH) -> out0;
c0[1] -> arpt;
arpt[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// Outside: answers ARP, sends every frame to OUTSIDE_GW_ETH.
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($OUTSIDE_DEV) -> c1;
out1 :: Queue(1000) -> ToDevice($OUTSIDE_DEV);
c1[0] -> ARPResponder($OUTSIDE_IP $OUTSIDE_ETH) -> out1;
c1[1] -> Discard;
// Plaintext from the outside must not claim a protected remote source.
c1[2] -> Paint(2) -> Strip(14) -> CheckIPHeader
  -> outpolicy :: IPClassifier(src net $REMOTE_NET, -);
outpolicy[0] -> spoofed :: Counter -> Discard;
outpolicy[1] -> Unstrip(14) -> ip;
c1[3] -> Discard;

// Local delivery: ESP from the peer is reassembled (the peer fragments
// ESP packets larger than its MTU, as this gateway does below) and
// decapsulated (Figure 6); the gateway answers pings; ICMP unreachables go
// to the encapsulator; the rest is dropped (no host stack here).
rt[0] -> local :: IPClassifier(ip proto 50 and src host $PEER_IP and dst host $OUTSIDE_IP,
                               icmp type echo,
                               icmp type unreachable and dst host $OUTSIDE_IP, -);
local[0] -> IPReassembler -> dec :: ESPTunnelDecap($SPI_IN, $KEY_IN, ALG $ALG, ESN $ESN, WINDOW $WINDOW)
  -> CheckIPHeader
  -> inpolicy :: IPClassifier(src net $REMOTE_NET and dst net $INSIDE_NET, -);
inpolicy[0] -> GetIPAddress(16) -> rt;
inpolicy[1] -> policy :: Counter -> Discard;
dec[1] -> Discard;
local[1] -> ICMPPingResponder -> rt;
local[3] -> Discard;

// Into the tunnel (Figure 5): encrypt and encapsulate, then route the ESP
// packet to the peer. The outer header copies the inner DSCP; inner
// packets with DF that do not fit the tunnel get an ICMP
// fragmentation-needed error with the tunnel's current path MTU (RFC 4301
// §8): enc writes its inner_mtu (1446 for MTU 1500) to tunerr.pmtu
// whenever it changes.
rt[3] -> enc :: ESPTunnelEncap($SPI_OUT, $KEY_OUT, $OUTSIDE_IP, $PEER_IP,
                                ALG $ALG, ESN $ESN, MTU $MTU,
                                PMTU_CALL tunerr.pmtu)
  -> rt;
enc[1] -> tunerr :: ICMPError($INSIDE_IP, unreachable, needfrag) -> rt;
// ICMP errors from the unprotected side (RFC 4301 §6.1.1): a
// fragmentation-needed message about our ESP packets lowers the tunnel's
// MTU (path MTU, RFC 4301 §8.2.1), and with it the MTU the errors above
// report; the others are counted and dropped.
local[2] -> [1]enc;

// Forwarding path for the inside.
rt[1] -> DropBroadcasts
  -> cp1 :: PaintTee(1)
  -> gio1 :: IPGWOptions($INSIDE_IP)
  -> FixIPSrc($INSIDE_IP)
  -> dt1 :: DecIPTTL
  -> fr1 :: IPFragmenter($MTU)
  -> [0]arpq0;
dt1[1] -> ICMPError($INSIDE_IP, timeexceeded) -> rt;
gio1[1] -> ICMPError($INSIDE_IP, parameterproblem) -> rt;
cp1[1] -> ICMPError($INSIDE_IP, redirect, host) -> rt;
fr1[1] -> ICMPError($INSIDE_IP, unreachable, needfrag, PMTU $MTU) -> rt;

// Forwarding path for the outside (tunnel packets included: an ESP packet
// larger than MTU without DF is fragmented here, RFC 4301 §8).
rt[2] -> DropBroadcasts
  -> cp2 :: PaintTee(2)
  -> gio2 :: IPGWOptions($OUTSIDE_IP)
  -> FixIPSrc($OUTSIDE_IP)
  -> dt2 :: DecIPTTL
  -> fr2 :: IPFragmenter($MTU)
  -> EtherEncap(0x0800, $OUTSIDE_ETH, $OUTSIDE_GW_ETH)
  -> out1;
dt2[1] -> ICMPError($OUTSIDE_IP, timeexceeded) -> rt;
gio2[1] -> ICMPError($OUTSIDE_IP, parameterproblem) -> rt;
cp2[1] -> ICMPError($OUTSIDE_IP, redirect, host) -> rt;
fr2[1] -> ICMPError($OUTSIDE_IP, unreachable, needfrag, PMTU $MTU) -> rt;
