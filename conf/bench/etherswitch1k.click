// A learning switch with 1000 MAC addresses in its table: 500 hosts behind
// port 0 send to 500 hosts spread over ports 1, 2 and 3 (traces written by
// scripts/gen-bench-etherswitch1k). The B hosts are learned first, from
// one frame each to itself (learned, then dropped: same port); when that
// trace ends (END_CALL), Unqueue starts (were it to start earlier, frames
// to unknown hosts would be flooded, and their copies join the ring). 500
// frames, from every A host to a B host, circulate through the switch
// from port 0: Queue -> Unqueue -> EtherSwitch -> Counter d -> back to the
// Queue, so the switch learns a source and finds a destination among 1000
// entries for every frame, and consecutive frames leave by different ports.
// Unqueue's LIMIT and d's COUNT_CALL end the run after LIMIT frames.
// Paths are relative to the repository root; run from there, under Click
// and rclick alike:  click conf/bench/etherswitch1k.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
learn :: FromDump(conf/bench/etherswitch1k-learn.pcap, END_CALL u.active true)
  -> port :: Classifier(9/01, 9/02, -);
FromDump(conf/bench/etherswitch1k-ring.pcap, STOP false)
  -> q :: Queue(2048)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> [0]sw :: EtherSwitch;
port[0] -> [1]sw;
port[1] -> [2]sw;
port[2] -> [3]sw;
d :: Counter(COUNT_CALL $LIMIT stop) -> q;
sw[0] -> x :: Discard;
sw[1] -> d;
sw[2] -> d;
sw[3] -> d;
