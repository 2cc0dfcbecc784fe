// nat-1m.click without the rewriter: the same trace loaded into the same
// ring, whose lap is Queue -> Unqueue -> Counter d -> IPMirror ->
// IPMirror -> Queue. nat-1m minus this is the rewriter's two passes per
// lap (forward and reply) over 1,000,000 flows.
// Paths are relative to the repository root; run from there, under Click
// and rclick alike:  click conf/bench/nat-1m-baseline.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
q :: Queue(1048576)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> d :: Counter(COUNT_CALL $LIMIT stop)
  -> IPMirror -> IPMirror -> q;
FromDump(conf/bench/nat-1m.pcap, END_CALL u.active true)
  -> Strip(14) -> MarkIPHeader -> q;
