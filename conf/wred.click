// Weighted RED built from elements: the Click paper's Figures 11 and 12.
//
//   rclick --simtime conf/wred.click IN=trace.pcap OUT=out.pcap RATE=1Mbps
//
// A Classifier sorts IPv4-in-Ethernet packets by IP precedence (the top
// three bits of the TOS byte): 4 to 7 (high), 2 and 3 (medium), 0 and 1
// (low). Each class has its own RED element with its own parameters: the
// lower the precedence, the lower the thresholds and the higher MAX_P, so
// as the queue builds up low-precedence packets are dropped first, then
// medium ones, and high-precedence ones only when the queue is long (the
// paper's Figure 12). The three REDs feed one HashSwitch that spreads
// flows over two Queues served in turn (Figure 11's second
// configuration): each RED finds both Queues by flow-based router
// context, downstream through the HashSwitch, and judges the sum of their
// lengths (its `queues` handler lists them). Packets a RED drops leave by
// its output 1 and are counted per class.
//
// The trace is replayed at its own timing (run it under --simtime to do
// that instantly); what leaves the bottleneck of RATE is written to OUT.

define($IN in.pcap, $OUT out.pcap, $RATE 1Mbps, $QLEN 100);

split :: HashSwitch(26, 12);
rr :: RoundRobinSched;

FromDump($IN, STOP true, TIMING true)
  -> in :: Counter
  -> prec :: Classifier(15/80%80, 15/40%c0, -);

prec[0] -> red_hi :: RED(30, 60, 0.02) -> split;
prec[1] -> red_mid :: RED(15, 30, 0.05) -> split;
prec[2] -> red_lo :: RED(5, 15, 0.1) -> split;
red_hi[1] -> drop_hi :: Counter -> Discard;
red_mid[1] -> drop_mid :: Counter -> Discard;
red_lo[1] -> drop_lo :: Counter -> Discard;

split[0] -> q0 :: Queue($QLEN) -> [0]rr;
split[1] -> q1 :: Queue($QLEN) -> [1]rr;

rr -> BandwidthRatedUnqueue($RATE) -> out :: Counter -> ToDump($OUT);
