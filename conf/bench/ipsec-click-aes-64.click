// Click's IPsec gateway path (conf/ipsec-router.click) with IPsecAES, both
// directions, on a 64-byte IPv4/UDP packet: RadixIPsecLookup puts the packet
// in the tunnel (SPI and SA annotations), IPsecESPEncap, IPsecAuthHMACSHA1(0),
// IPsecAES(1) and IPsecEncap(50) make the ESP packet; StripIPHeader,
// IPsecAES(0), IPsecAuthHMACSHA1(1) and IPsecESPUnencap take it back.
// InfiniteSource sends clones of one packet, so IPsecESPEncap copies it first,
// under Click and rclick alike. Runs under Click and rclick alike (issue 20):
//   click ipsec-click-aes-64.click LIMIT=1000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<450000400000000040114770121a0705121a080503e807d0002c0000000000000000000000000000000000000000000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> MarkIPHeader
  -> GetIPAddress(16)
  -> rt :: RadixIPsecLookup(18.26.4.24/32 0,
         18.26.8.0/24 18.26.4.1 1 234 0123456789abcdef fedcba9876543210 1 64);
rt[0] -> Discard;
rt[1] -> IPsecESPEncap -> IPsecAuthHMACSHA1(0) -> IPsecAES(1) -> IPsecEncap(50)
  -> StripIPHeader -> IPsecAES(0) -> au :: IPsecAuthHMACSHA1(1) -> IPsecESPUnencap
  -> d :: Discard;
