// nat-established.click without the rewriter: the same source, Strip and
// MarkIPHeader, with a DecIPTTL where IPRewriter was: an element that
// writes the IP header too, so that Click makes its private copy of
// InfiniteSource's shared packet here as its IPRewriter does (rclick's
// InfiniteSource hands out copies already). nat-established minus this
// row is the rewriting beyond a one-field header write with its checksum
// update: lookup, rewrite of four fields and two checksums, expiry
// refresh.
// Runs under Click and rclick alike:  click nat-baseline.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> Strip(14)
  -> MarkIPHeader
  -> DecIPTTL
  -> d :: Discard;
