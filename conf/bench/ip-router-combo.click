// Figure 8 forwarding path (eth0 -> eth1) on a 60-byte UDP frame, in memory.
// Generated with the other ip-router*.click bench files; runs under Click too:
//   click ip-router-combo.click LIMIT=1000000 BURST=32
// The same path with IPInputCombo and IPOutputCombo (the paper's merged elements).
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000a00000208004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
src -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[2] -> IPInputCombo(1, INTERFACES 10.0.0.1/24 10.0.1.1/24)
  -> rt :: StaticIPLookup(10.0.0.1/32 0, 10.0.0.255/32 0, 10.0.0.0/32 0, 10.0.1.1/32 0, 10.0.1.255/32 0, 10.0.1.0/32 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 255.255.255.255/32 0.0.0.0 0, 0.0.0.0/32 0);
rt[2] -> oc :: IPOutputCombo(2, 10.0.1.1, 1500)
  -> arpq :: ARPQuerier(10.0.1.1, 00:00:c0:00:01:01)
  -> d :: Discard;
c[0] -> x :: Discard; c[1] -> x; c[3] -> x; rt[0] -> x; rt[1] -> x;
oc[1] -> x; oc[2] -> x; oc[3] -> x; oc[4] -> x;
Idle -> [1]arpq;
Script(write arpq.insert 10.0.1.2 00:00:0b:00:01:02, write src.active true);
