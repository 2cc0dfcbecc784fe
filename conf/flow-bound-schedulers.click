// Two scheduler instances on two interfaces, bound to flows by filters
// (Router Plugins, Decasper et al., SIGCOMM 1998: a gate at the
// scheduling point hands each flow to the instance bound to its most
// specific filter).
//
// Two input interfaces (painted 1 and 2) share one flow table. The
// scheduling gate binds flows by six-tuple filters: traffic for
// 10.0.1.0/24 to the DRR instance of interface A, traffic for
// 10.0.2.0/24 to the DRR instance of interface B (with a larger quantum),
// and everything else to a best-effort FIFO on interface B. Filters are
// changed at run time with the gate's handlers, e.g.
//   write gate.add_filter 0 src 192.168.0.7 dst 10.0.2.0/24 proto udp
// moves that host's UDP flows to interface A's scheduler (the most
// specific filter wins; cached bindings are dropped at once).
//
//   rclick --simtime conf/flow-bound-schedulers.click IN1=a.pcap IN2=b.pcap OUTA=a-out.pcap OUTB=b-out.pcap
// Tested by crates/elements/tests/flow_confs.rs.
define($IN1 flow-in1.pcap, $IN2 flow-in2.pcap, $OUTA flow-outa.pcap, $OUTB flow-outb.pcap,
       $RATEA 1000, $RATEB 1000)

ft :: FlowTable(CAPACITY 4096, TIMEOUT 30);

FromDump($IN1, TIMING true) -> Strip(14) -> Paint(1) -> CheckIPHeader -> ft;
FromDump($IN2, TIMING true) -> Strip(14) -> Paint(2) -> CheckIPHeader -> ft;

ft -> gate :: FlowGate(dst 10.0.1.0/24, dst 10.0.2.0/24, -);

// Interface A: one DRR instance.
gate[0] -> drrA :: FlowDRRQueue(QUANTUM 500, CAPACITY 64, TOTAL 1024)
  -> RatedUnqueue($RATEA) -> outA :: FlowCounter(TABLE ft) -> Unstrip(14) -> ToDump($OUTA);

// Interface B: a second DRR instance and a best-effort queue, by priority.
gate[1] -> drrB :: FlowDRRQueue(QUANTUM 1500, CAPACITY 64, TOTAL 1024);
gate[2] -> be :: Queue(256);
drrB -> [0]sched :: PrioSched;
be -> [1]sched;
sched -> RatedUnqueue($RATEB) -> outB :: FlowCounter(TABLE ft) -> Unstrip(14) -> ToDump($OUTB);
