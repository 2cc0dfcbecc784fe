// Baseline: InfiniteSource straight into Discard.
// Runs under Click and rclick alike:  click source-discard.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST, STOP true)
  -> d :: Discard;
