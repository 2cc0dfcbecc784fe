// A push-to-pull-to-push hop: Queue then Unqueue. The run ends when the
// last packet reaches the sink (the source alone stopping the driver would
// leave packets queued), via Counter's COUNT_CALL.
// Runs under Click and rclick alike:  click queue-unqueue.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST)
  -> q :: Queue(4096)
  -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
