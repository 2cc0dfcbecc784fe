// rclick demo: classify a trace by protocol, count each class, queue the
// classes and schedule them (ARP first, then the IP classes round-robin),
// and write the scheduled traffic to target/demo-out.pcap.
//
// Run from the repository root:   rclick conf/demo.click
// Draw it:                        rclick dot conf/demo.click | dot -Tpng > demo.png

define($TRACE conf/demo/traffic.pcap, $OUT target/demo-out.pcap)

src :: FromDump($TRACE, STOP true)
  -> cl :: Classifier(12/0806,          // ARP
                      12/0800 23/11,    // IPv4 UDP
                      12/0800 23/06,    // IPv4 TCP
                      12/0800 23/01,    // IPv4 ICMP
                      12/86dd,          // IPv6
                      -);               // everything else

cl[0] -> arp :: Counter -> q_arp :: Queue(64);
cl[1] -> udp :: Counter -> q_udp :: Queue(64);
cl[2] -> tcp :: Counter -> q_tcp :: Queue(64);
cl[3] -> icmp :: Counter -> q_icmp :: Queue(64);
cl[4] -> ip6 :: Counter -> q_ip6 :: Queue(64);
cl[5] -> other :: Counter -> Discard;

rr :: RoundRobinSched;
q_udp -> [0] rr;  q_tcp -> [1] rr;  q_icmp -> [2] rr;  q_ip6 -> [3] rr;

ps :: PrioSched;
q_arp -> [0] ps;  rr -> [1] ps;
ps -> out :: Counter -> ToDump($OUT);

// When the trace ends, let the scheduler drain the queues, then report.
DriverManager(
  wait_stop,
  label drain,
  wait 1ms,
  goto drain $(ne 0 $(add $(q_arp.length) $(q_udp.length) $(q_tcp.length) $(q_icmp.length) $(q_ip6.length))),
  print "rclick demo: $(src.count) frames from $TRACE",
  print "  ARP    $(arp.count)",
  print "  UDP    $(udp.count)",
  print "  TCP    $(tcp.count)",
  print "  ICMP   $(icmp.count)",
  print "  IPv6   $(ip6.count)",
  print "  other  $(other.count)",
  print "scheduled $(out.count) frames to $OUT (queue drops: $(add $(q_arp.drops) $(q_udp.drops) $(q_tcp.drops) $(q_icmp.drops) $(q_ip6.drops)))",
  stop);
