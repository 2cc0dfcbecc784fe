// A push-to-pull-to-push hop: Queue then Unqueue.
// Runs under Click and rclick alike:  click queue-unqueue.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST, STOP true)
  -> q :: Queue(4096)
  -> u :: Unqueue(BURST $BURST)
  -> d :: Discard;
