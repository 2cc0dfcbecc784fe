// Meter on the push path (queue-unqueue.click plus a Meter whose two
// outputs join again): its rate average and the decision per packet.
// Runs under Click and rclick alike:  click qos-meter.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST)
  -> m :: Meter(1000000Bps)
  -> q :: Queue(4096)
  -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
m[1] -> q;
