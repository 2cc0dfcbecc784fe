// Handoff cost: InfiniteSource through 16 Null elements to Discard.
// Runs under Click and rclick alike:  click null16.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST, STOP true)
   -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null -> Null
  -> d :: Discard;
