// A 4-output Classifier on Ethernet type; InfiniteSource's default data
// ("Random bullshit...") has bytes 12-13 = 0x6120, so packets take the last
// (catch-all) output after every other pattern is tested.
// Runs under Click and rclick alike:  click classifier4.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(LIMIT $LIMIT, BURST $BURST, STOP true)
  -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[0] -> d0 :: Discard;
c[1] -> d1 :: Discard;
c[2] -> d2 :: Discard;
c[3] -> d :: Discard;
