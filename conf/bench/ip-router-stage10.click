// The ip-router.click path cut after its first 10 elements (FixIPSrc): per-element
// costs by difference (docs/benchmarks.md).
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
src
  -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[2]
  -> Paint(1)
  -> Strip(14)
  -> CheckIPHeader(INTERFACES 10.0.0.1/24 10.0.1.1/24)
  -> GetIPAddress(16)
  -> rt :: StaticIPLookup(10.0.0.1/32 0, 10.0.0.255/32 0, 10.0.0.0/32 0, 10.0.1.1/32 0, 10.0.1.255/32 0, 10.0.1.0/32 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 255.255.255.255/32 0.0.0.0 0, 0.0.0.0/32 0);
rt[2]
  -> DropBroadcasts
  -> pt :: PaintTee(2)
  -> IPGWOptions(10.0.1.1)
  -> FixIPSrc(10.0.1.1)
  -> d :: Discard;
c[0] -> x :: Discard; c[1] -> x; c[3] -> x; rt[0] -> x; rt[1] -> x; pt[1] -> x;
Script(write src.active true);
