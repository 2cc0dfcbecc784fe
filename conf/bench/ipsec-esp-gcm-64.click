// rclick's RFC 4303 ESP tunnel (ESPTunnelEncap, ESPTunnelDecap; AES-GCM-128,
// ESN), both directions, on the 64-byte packet of ipsec-click-aes-64.click:
// the modern counterpart of Click's IPsec path, for comparison (issue 20).
// rclick only (Click has no ESPTunnelEncap):
//   rclick ipsec-esp-gcm-64.click LIMIT=1000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<450000400000000040114770121a0705121a080503e807d0002c0000000000000000000000000000000000000000000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> ESPTunnelEncap(0x1001, 0123456789abcdef0123456789abcdef01020304, 18.26.4.24, 18.26.4.1, ALG aes128gcm16, ESN true)
  -> ESPTunnelDecap(0x1001, 0123456789abcdef0123456789abcdef01020304, ALG aes128gcm16, ESN true)
  -> d :: Discard;
