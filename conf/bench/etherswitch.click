// A learning switch forwarding to a learned port: EtherSwitch with three
// ports, the destination learned on port 1 from one frame first.
// Runs under Click and rclick alike:  click etherswitch.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<02000000000202000000000108004500002e00010000401165bb0a0000020a00010204d2162e001acfb6000000000000000000000000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true, ACTIVE false)
learn :: InfiniteSource(DATA \<02000000000102000000000208004500002e00010000401165bb0a0000010a00000204d2162e001acfb6000000000000000000000000000000000000>, LIMIT 1, STOP false)
src -> [0]sw :: EtherSwitch;
learn -> [1]sw;
Idle -> [2]sw;
sw[0] -> x :: Discard;
sw[1] -> d :: Discard;
sw[2] -> x;
Script(wait 0.01s, write src.active true);
