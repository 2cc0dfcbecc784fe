// The ip-router.click path cut after its first 2 elements (Paint): per-element
// costs by difference (docs/benchmarks.md).
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
src
  -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[2]
  -> Paint(1)
  -> d :: Discard;
c[0] -> x :: Discard; c[1] -> x; c[3] -> x;
Script(write src.active true);
