// The IP router of ip-router.click with Router Plugins gates (issue 19):
// two FlowGates sharing a FlowTable (one after CheckIPHeader, where IP
// options and security are handled, one before the TTL decrement, where a
// scheduler would be bound), each with a specific filter and a wildcard.
// The first gate hashes the packet's six-tuple and marks the packet with
// its flow record; the second takes the record from the annotation. The
// packet (10.0.0.2:1234 -> 10.0.1.2:5678 UDP)
// matches g1's wildcard and g2's specific filter, from each flow record's
// cached binding; compare with ip-router.click for the framework's
// overhead (the paper's figure: about 8%):
//   scripts/instructions-per-packet ip-router 32
//   scripts/instructions-per-packet ip-router-flowgates 32
define($LIMIT 1000000, $BURST 1)
ft :: FlowTable(CAPACITY 65536);
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
src
  -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[2]
  -> Paint(1)
  -> Strip(14)
  -> CheckIPHeader(INTERFACES 10.0.0.1/24 10.0.1.1/24)
  -> g1 :: FlowGate(src 10.0.0.0/24 proto tcp dport 22, -, TABLE ft)
  -> GetIPAddress(16)
  -> rt :: StaticIPLookup(10.0.0.1/32 0, 10.0.0.255/32 0, 10.0.0.0/32 0, 10.0.1.1/32 0, 10.0.1.255/32 0, 10.0.1.0/32 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 255.255.255.255/32 0.0.0.0 0, 0.0.0.0/32 0);
rt[2]
  -> DropBroadcasts
  -> pt :: PaintTee(2)
  -> IPGWOptions(10.0.1.1)
  -> FixIPSrc(10.0.1.1)
  -> g2 :: FlowGate(dst 10.0.1.0/24 proto udp, -, TABLE ft)
  -> DecIPTTL
  -> IPFragmenter(1500)
  -> arpq :: ARPQuerier(10.0.1.1, 00:00:c0:00:01:01)
  -> d :: Discard;
g1[1] -> GetIPAddress(16) -> rt;
c[0] -> x :: Discard;
g2[1] -> x; c[1] -> x; c[3] -> x; rt[0] -> x; rt[1] -> x; pt[1] -> x;
Idle -> [1]arpq;
Script(write arpq.insert 10.0.1.2 00:00:0b:00:01:02, write src.active true);
