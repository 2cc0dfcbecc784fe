// IPRewriter on an established flow: every packet is the same UDP flow of
// the 60-byte frame of ip-router.click, so after the first packet each one
// is a table lookup, the rewrite with incremental checksums, and the
// expiry refresh. Click's InfiniteSource sends clones of one packet, so
// Click's rewriter copies the packet first (as DecIPTTL does in
// mark-dec.click); rclick's InfiniteSource emits copies. nat-baseline.click
// is the same path without the rewriter.
// Runs under Click and rclick alike:  click nat-established.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> Strip(14)
  -> MarkIPHeader
  -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535 - - 0 0)
  -> d :: Discard;
