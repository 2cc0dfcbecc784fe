// DRRSched over four queues: the source's packets are dealt round-robin
// to four Queues, DRRSched serves them, Unqueue pushes the result on. The
// cost beyond queue-unqueue.click is the switch, the scheduler and the
// extra queues. Runs under Click and rclick alike:
//   click qos-drr.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
s :: DRRSched;
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST) -> sw :: RoundRobinSwitch;
sw[0] -> Queue(4096) -> [0]s;
sw[1] -> Queue(4096) -> [1]s;
sw[2] -> Queue(4096) -> [2]s;
sw[3] -> Queue(4096) -> [3]s;
s -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
