// The ip-router.click path cut after its first 0 elements (source only): per-element
// costs by difference (docs/benchmarks.md).
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
src
  -> d :: Discard;
Script(write src.active true);
