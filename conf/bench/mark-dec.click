// A header-writing element on the source's shared packet: Strip, MarkIPHeader
// and DecIPTTL on the 60-byte Ethernet/IPv4/UDP frame of ip-router.click.
// InfiniteSource sends clones of one packet, so DecIPTTL's TTL write copies
// the packet first, under Click and rclick alike (the copy is part of the cost).
// Runs under Click and rclick alike:  click mark-dec.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> Strip(14)
  -> MarkIPHeader
  -> dec :: DecIPTTL
  -> d :: Discard;
dec[1] -> expired :: Discard;
