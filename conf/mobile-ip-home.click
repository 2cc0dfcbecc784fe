// Mobile-IP home agent (the Click paper's Figure 14 extension of the IP
// router): on its home network (eth0, 10.0.0.1/24) the router answers ARP
// queries for the away mobile host 10.0.0.7 with its own Ethernet address
// (proxy ARP), tunnels packets for the mobile host to its care-of address
// 192.168.5.9 with IP-in-IP (IPEncap, protocol 4), and decapsulates
// tunnelled packets coming back from the care-of address (StripIPHeader)
// into the normal routing path. Trace form (runs now):
//   click conf/mobile-ip-home.click       (reads conf/mobile-ip/eth0.in.pcap,
//   eth1.in.pcap; writes *.out.pcap there)
// Replace FromDump/ToDump by FromDevice/ToDevice for a real router.

define($DIR conf/mobile-ip)
AddressInfo(
  home   10.0.0.1/24 00:00:c0:00:00:01,
  uplink 10.0.1.1/24 00:00:c0:00:01:01,
  mobile 10.0.0.7,
  careof 192.168.5.9
);

rt :: StaticIPLookup(
  10.0.0.1/32 0, 10.0.1.1/32 0, 10.0.0.255/32 0, 10.0.1.255/32 0,
  10.0.0.7/32 3,                       // the mobile host: into the tunnel
  10.0.0.0/24 1, 10.0.1.0/24 2,
  0.0.0.0/0 10.0.1.254 2);             // everything else upstream

ip :: Strip(14) -> CheckIPHeader(INTERFACES 10.0.0.1/24 10.0.1.1/24) -> GetIPAddress(16)
  // Tunnelled packets from the care-of address are unwrapped and routed.
  -> tun :: IPClassifier(ip proto 4 and src host careof and dst host uplink, -);
tun[0] -> StripIPHeader -> CheckIPHeader -> GetIPAddress(16) -> rt;
tun[1] -> rt;

arpt :: Tee(3);
toh :: ToDump($DIR/host.pcap);
arpt[2] -> toh;
rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> toh;

// Home network: proxy ARP for the mobile host.
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDump($DIR/eth0.in.pcap, STOP true) -> HostEtherFilter(home) -> c0;
out0 :: Queue(200) -> ToDump($DIR/eth0.out.pcap);
c0[0] -> ARPResponder(home, mobile 00:00:c0:00:00:01) -> out0;
arpq0 :: ARPQuerier(home) -> out0;
c0[1] -> arpt; arpt[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// Uplink.
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDump($DIR/eth1.in.pcap, STOP true) -> HostEtherFilter(uplink) -> c1;
out1 :: Queue(200) -> ToDump($DIR/eth1.out.pcap);
c1[0] -> ARPResponder(uplink) -> out1;
arpq1 :: ARPQuerier(uplink) -> out1;
c1[1] -> arpt; arpt[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip;
c1[3] -> Discard;

// Forwarding paths (Figure 8).
rt[1] -> DropBroadcasts -> cp1 :: PaintTee(1) -> gio1 :: IPGWOptions(10.0.0.1)
  -> FixIPSrc(10.0.0.1) -> dt1 :: DecIPTTL -> fr1 :: IPFragmenter(1500) -> [0]arpq0;
dt1[1] -> ICMPError(10.0.0.1, timeexceeded) -> rt;
fr1[1] -> ICMPError(10.0.0.1, unreachable, needfrag, PMTU 1500) -> rt;
gio1[1] -> ICMPError(10.0.0.1, parameterproblem) -> rt;
cp1[1] -> ICMPError(10.0.0.1, redirect, host) -> rt;

rt[2] -> DropBroadcasts -> cp2 :: PaintTee(2) -> gio2 :: IPGWOptions(10.0.1.1)
  -> FixIPSrc(10.0.1.1) -> dt2 :: DecIPTTL -> fr2 :: IPFragmenter(1500) -> [0]arpq1;
dt2[1] -> ICMPError(10.0.1.1, timeexceeded) -> rt;
fr2[1] -> ICMPError(10.0.1.1, unreachable, needfrag, PMTU 1500) -> rt;
gio2[1] -> ICMPError(10.0.1.1, parameterproblem) -> rt;
cp2[1] -> ICMPError(10.0.1.1, redirect, host) -> rt;

// The tunnel: packets for the mobile host are encapsulated from the home
// agent's uplink address to the care-of address and routed again.
rt[3] -> DecIPTTL -> IPEncap(4, uplink, careof) -> GetIPAddress(16) -> rt;

DriverManager(wait_stop 2, label drain, wait 1ms,
  goto drain $(ne 0 $(add $(out0.length) $(out1.length))), stop);
