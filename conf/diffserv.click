// A DiffServ edge router's output side built from elements, after the
// Click paper's Figures 15 and 19: classify by DSCP, meter, mark or drop,
// shape, and schedule.
//
//   rclick --simtime conf/diffserv.click IN=trace.pcap OUT=out.pcap \
//       LINK=2Mbps EF_RATE=400kbps AF_RATE=600kbps BE_RATE=300kbps
//
// Packets (IPv4 in Ethernet) are classified by their DSCP:
//
// - EF (46), expedited forwarding, is policed: a token-bucket meter
//   (BandwidthRatedSplitter) passes EF_RATE of it, and the rest is
//   dropped. What passes goes first (PrioSched input 0), so EF sees almost
//   no queueing and gets its rate however loaded the link is.
// - AF1x (10, 12, 14), assured forwarding class 1, is metered at AF_RATE:
//   in profile it is marked AF11 (10) and queued in af11; out of profile
//   it is re-marked AF12 (12) and queued in af12.
// - Everything else is best effort: re-marked 0, queued, and shaped to at
//   most BE_RATE (BandwidthShaper).
//
// What EF leaves of the link is shared by a StrideSched among af11, af12
// and best effort with tickets 4, 1 and 2: in-profile AF gets through
// first, out-of-profile AF and best effort share the rest (best effort up
// to its shaped rate). (Click's Meter and BandwidthMeter would not do as
// the policer: they send every packet to output 1 while the average rate
// is over the limit, instead of passing the rate and diverting the
// excess.)
//
// The trace is replayed at its own timing (run it under --simtime to do
// that instantly); what leaves the link of rate LINK is written to OUT.
// The link sends one packet at a time (a burst of 600 bytes, not the
// default 20 ms worth).

define($IN in.pcap, $OUT out.pcap, $LINK 2Mbps, $EF_RATE 400kbps,
       $AF_RATE 600kbps, $BE_RATE 300kbps, $QLEN 50);

prio :: PrioSched;
ss :: StrideSched(4, 1, 2);
af11 :: Queue($QLEN);
af12 :: Queue($QLEN);

FromDump($IN, STOP true, TIMING true)
  -> in :: Counter
  -> Strip(14)
  -> CheckIPHeader
  -> dscp :: IPClassifier(ip dscp 46, ip dscp 10 or ip dscp 12 or ip dscp 14, -);

// Expedited forwarding: policed, strict priority.
dscp[0] -> ef_in :: Counter -> ef_meter :: BandwidthRatedSplitter($EF_RATE)
  -> ef :: Queue($QLEN) -> [0]prio;
ef_meter[1] -> ef_drop :: Counter -> Discard;

// Assured forwarding class 1: in profile AF11, out of profile AF12.
dscp[1] -> af_in :: Counter -> af_meter :: BandwidthRatedSplitter($AF_RATE)
  -> SetIPDSCP(10) -> af11;
af_meter[1] -> SetIPDSCP(12) -> af_remarked :: Counter -> af12;

// Best effort: re-marked 0 and shaped.
dscp[2] -> be_in :: Counter -> SetIPDSCP(0) -> be :: Queue($QLEN)
  -> be_shaper :: BandwidthShaper($BE_RATE) -> [2]ss;

af11 -> [0]ss;
af12 -> [1]ss;
ss -> [1]prio;

prio -> BandwidthRatedUnqueue($LINK, BURST_BYTES 600) -> Unstrip(14) -> out :: Counter -> ToDump($OUT);
