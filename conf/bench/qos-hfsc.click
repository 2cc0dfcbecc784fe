// HFSCSched over four leaves (two real-time, all link-sharing, one with an
// upper limit that never binds): the source's packets are dealt
// round-robin to four Queues, HFSCSched serves them, Unqueue pushes the
// result on. rclick only: Click has no H-FSC element.
//   rclick qos-hfsc.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
s :: HFSCSched(CLASS a INPUT 0 RT 100Gbps LS 100Gbps,
               CLASS b INPUT 1 RT 10Gbps 1ms 100Gbps LS 100Gbps,
               CLASS p LS 200Gbps,
               CLASS c PARENT p INPUT 2 LS 100Gbps UL 1000Gbps,
               CLASS e PARENT p INPUT 3 LS 100Gbps);
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST) -> sw :: RoundRobinSwitch;
sw[0] -> Queue(4096) -> [0]s;
sw[1] -> Queue(4096) -> [1]s;
sw[2] -> Queue(4096) -> [2]s;
sw[3] -> Queue(4096) -> [3]s;
s -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
