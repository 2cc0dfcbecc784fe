// Stochastic fair queueing built from elements: the Click paper's
// Figure 10 "virtual queue".
//
//   rclick --simtime conf/sfq.click IN=trace.pcap OUT=out.pcap RATE=1Mbps
//
// A HashSwitch spreads packets over eight Queues by a hash of their flow
// identifier (the IPv4 source and destination addresses and the UDP/TCP
// ports: 12 bytes from byte 26 of an Ethernet frame whose IP header has
// no options), and a RoundRobinSched takes one packet from each non-empty
// Queue in turn. The compound has a push input and a pull output, so it
// stands wherever a Queue would, here in front of a bottleneck of RATE.
// Flows that hash to different Queues share the bottleneck fairly (by
// packets): a flow sending more than its share fills only its own Queue
// and loses its own packets there, while flows sending less than their
// share get everything through. Flows that hash to the same Queue share
// its part (that is the "stochastic"); Click's HashSwitch sums the bytes
// (folded for 2, 4 or 8 outputs), so its buckets are easy to predict.
//
// The trace is replayed at its own timing (run it under --simtime to do
// that instantly); what leaves the bottleneck is written to OUT, with the
// timestamps it was read with.

define($IN in.pcap, $OUT out.pcap, $RATE 1Mbps, $QLEN 20);

elementclass SFQ { $qlen |
  input -> hs :: HashSwitch(26, 12);
  rr :: RoundRobinSched -> output;
  hs[0] -> q0 :: Queue($qlen) -> [0]rr;
  hs[1] -> q1 :: Queue($qlen) -> [1]rr;
  hs[2] -> q2 :: Queue($qlen) -> [2]rr;
  hs[3] -> q3 :: Queue($qlen) -> [3]rr;
  hs[4] -> q4 :: Queue($qlen) -> [4]rr;
  hs[5] -> q5 :: Queue($qlen) -> [5]rr;
  hs[6] -> q6 :: Queue($qlen) -> [6]rr;
  hs[7] -> q7 :: Queue($qlen) -> [7]rr;
}

FromDump($IN, STOP true, TIMING true)
  -> in :: Counter
  -> sfq :: SFQ($QLEN)
  -> BandwidthRatedUnqueue($RATE)
  -> out :: Counter
  -> ToDump($OUT);
