// nat-newflows.click without the rewriter: the same 10,000 frames in the
// same ring, Queue -> Unqueue -> Counter d -> Queue.
// Paths are relative to the repository root; run from there, under Click
// and rclick alike:  click conf/bench/nat-newflows-baseline.click LIMIT=1000000 BURST=32
define($LIMIT 1000000, $BURST 1)
q :: Queue(10240)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> d :: Counter(COUNT_CALL $LIMIT stop)
  -> q;
FromDump(conf/bench/nat-10k.pcap, END_CALL u.active true)
  -> Strip(14) -> MarkIPHeader -> q;
