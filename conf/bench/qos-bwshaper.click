// BandwidthShaper on the pull path (queue-unqueue.click plus a shaper at
// a rate no run reaches, 4 GB/s): its rate check per packet. Runs under
// Click and rclick alike:  click qos-bwshaper.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST)
  -> q :: Queue(4096)
  -> s :: BandwidthShaper(4000000000Bps)
  -> u :: Unqueue(BURST $BURST)
  -> c :: Counter(COUNT_CALL $LIMIT stop)
  -> d :: Discard;
