// IPRewriter making a new mapping for every packet (issue 16: new flows
// per second). The 10,000 frames of conf/bench/nat-10k.pcap (written by
// scripts/gen-bench-nat) circulate: Queue -> Unqueue -> Counter d -> rw ->
// Queue, and the rewriter gives each packet the next free source address
// of 1.0.0.1-1.255.255.254 (sequential: `#`), so the packet comes back as
// a flow never seen: every lap is a table miss, a new mapping in both
// directions (with its place in the expiry heap; the capacity is the
// default, 2^31 - 1, so nothing is evicted) and the rewrite. The table
// grows by one mapping per lap (16 million addresses: LIMIT up to about
// 16 million). nat-newflows-baseline.click is the ring without the
// rewriter.
// Paths are relative to the repository root; run from there, under Click
// and rclick alike:  click conf/bench/nat-newflows.click LIMIT=1000000 BURST=32
define($LIMIT 1000000, $BURST 1)
q :: Queue(10240)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> d :: Counter(COUNT_CALL $LIMIT stop)
  -> rw :: IPRewriter(pattern 1.0.0.1-1.255.255.254# - 0 0)
  -> q;
FromDump(conf/bench/nat-10k.pcap, END_CALL u.active true)
  -> Strip(14) -> MarkIPHeader -> q;
