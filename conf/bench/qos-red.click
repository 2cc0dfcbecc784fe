// RED in front of a queue (queue-unqueue.click plus RED): the thresholds
// are above the queue's capacity, so every packet passes and RED's cost is
// the average update and the decision. Runs under Click and rclick alike:
//   click qos-red.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST)
  -> r :: RED(5000, 10000, 0.02)
  -> q :: Queue(4096)
  -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
