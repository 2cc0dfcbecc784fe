// Per-flow fair queueing on the flow table's soft state (Router Plugins,
// Decasper et al., SIGCOMM 1998, section 6: DRR with a queue per flow).
//
// Packets from an Ethernet trace are checked, entered into the flow table
// (which marks each with its flow record), counted per flow, queued one
// queue per flow and served by Deficit Round Robin onto a RATE-limited
// link; a second FlowCounter on the same table counts what leaves per flow.
// A flow sending faster than its share loses packets from its own queue
// only; the others keep their share.
//
//   rclick --simtime conf/flow-fq.click IN=trace.pcap OUT=out.pcap RATE=1500
//   then read sent.flows, arrived.flows, q.drops (e.g. with -h)
// Tested by crates/elements/tests/flow_confs.rs.
define($IN flow-in.pcap, $OUT flow-out.pcap, $RATE 1500, $QUANTUM 1514)

ft :: FlowTable(CAPACITY 4096, TIMEOUT 30);

FromDump($IN, TIMING true, STOP true)
  -> Strip(14)
  -> CheckIPHeader
  -> ft
  -> arrived :: FlowCounter
  -> q :: FlowDRRQueue(QUANTUM $QUANTUM, CAPACITY 64, TOTAL 1024)
  -> RatedUnqueue($RATE)
  -> sent :: FlowCounter(TABLE ft)
  -> Unstrip(14)
  -> ToDump($OUT);
