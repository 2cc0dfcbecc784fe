// conf/bench/etherswitch1k.click without its EtherSwitch: the same 500
// frames circulate Queue -> Unqueue -> Counter d -> Queue, so that the
// difference between the two is the switch's cost per frame.
// Run from the repository root, under Click and rclick alike:
//   click conf/bench/etherswitch1k-noswitch.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
FromDump(conf/bench/etherswitch1k-ring.pcap, STOP false)
  -> q :: Queue(2048)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> d :: Counter(COUNT_CALL $LIMIT stop)
  -> q;
Script(wait 0.05s, write u.active true);
