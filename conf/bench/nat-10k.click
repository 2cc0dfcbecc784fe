// IPRewriter with 10,000 established UDP flows (issue 16). The trace
// (scripts/gen-bench-nat writes it: one 60-byte frame per flow) goes
// through the rewriter once as it loads, making the mappings, and then
// circulates: Queue -> Unqueue -> Counter d -> rw, forward: the flow to
// 1.0.0.1, its port kept -> IPMirror -> rw, reply: back to the flow,
// reversed -> IPMirror -> Queue. So one lap (d counts laps) is two table
// hits, one per direction, each with the rewrite of four fields and two
// incremental checksums and the expiry refresh; the frames visit the
// flows in turn, every one before the first comes again.
// nat-10k-baseline.click is the same ring without the rewriter.
// Unqueue starts when the trace has loaded (END_CALL); its LIMIT and d's
// COUNT_CALL end the run after LIMIT laps.
// Paths are relative to the repository root; run from there, under Click
// and rclick alike:  click conf/bench/nat-10k.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
q :: Queue(10240)
  -> u :: Unqueue(BURST $BURST, LIMIT $LIMIT, ACTIVE false)
  -> d :: Counter(COUNT_CALL $LIMIT stop)
  -> [0]rw :: IPRewriter(pattern 1.0.0.1 1024-65535 - - 0 1, drop);
rw[0] -> IPMirror -> [1]rw;
rw[1] -> IPMirror -> q;
FromDump(conf/bench/nat-10k.pcap, END_CALL u.active true)
  -> Strip(14) -> MarkIPHeader -> [0]rw;
