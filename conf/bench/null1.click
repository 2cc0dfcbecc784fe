// Handoff cost: InfiniteSource through 1 Null elements to Discard.
// Runs under Click and rclick alike:  click null1.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST, STOP true)
   -> Null
  -> d :: Discard;
