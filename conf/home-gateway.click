// Residential NAPT gateway (issue 16): a home network (LAN) behind one
// public address (WAN), with the hybrid Manager model of the residential
// gateway design: the router handles every packet it can, and hands the
// ones it cannot decide (inbound packets that match no mapping) and copies
// of selected outbound ones (new TCP connections) to a user-level Manager
// program, wrapped in UDP. The Manager decides, reconfigures the router
// through the control socket (`rw.add_mapping`, `rw.remove_mapping`,
// `inbound.config`, ...) and may send a frame back to be processed again.
// docs/nat-gateway.md documents the channel and the Python Manager library
// (clients/python/rclick_manager.py).
//
// Run:  rclick -p 7777 conf/home-gateway.click NAME=VALUE ...
// Parameters:
//   LAN_DEV       device on the home network                     (eth0)
//   LAN_IP        the gateway's address there                    (192.168.1.1)
//   LAN_ETH       the Ethernet address of LAN_DEV                (00:00:c0:00:01:01)
//   LAN_NET       the home prefix                                (192.168.1.0/24)
//   WAN_DEV       device towards the Internet                    (eth1)
//   WAN_IP        the public address                             (192.0.2.1)
//   WAN_ETH       the Ethernet address of WAN_DEV                (00:00:c0:00:02:01)
//   WAN_NET       the WAN link's prefix                          (192.0.2.0/24)
//   WAN_GW        the next hop for everything not on the link    (192.0.2.254)
//   MTU           MTU of both links                              (1500)
//   MANAGER_IP, MANAGER_PORT
//                 where the Manager listens for UDP frames       (127.0.0.1, 7779)
//   CHANNEL_IP, CHANNEL_PORT
//                 the router's end of the Manager channel: its frames
//                 come from there, and the Manager accepts frames
//                 from there only (a port below 1024, which only
//                 root can bind)                                 (127.0.0.1, 778)
//   MANAGER_CLASS the outbound packets copied to the Manager (an
//                 IPClassifier pattern)                         (tcp opt syn and not tcp opt ack)
//   SNIFF_DEV     a dummy device for the sniffer tap (ToHostSniffers;
//                 created by the user: ip link add sniff0 type dummy;
//                 ip link set sniff0 mtu 65535 up)               (sniff0)
//
// DHCP is left to the host (or a DHCP server on the LAN). The LAN hosts use
// LAN_IP as their default gateway.
//
// NAPT: rw (IPRewriter) maps LAN TCP and UDP flows to WAN_IP with ports
// 1024-65535. The mapping is endpoint-independent (ENDPOINT_INDEPENDENT;
// RFC 4787 REQ-1 for UDP, RFC 5382 REQ-1 for TCP): a LAN address and port
// gets one external port for every destination, its own port when no other
// LAN endpoint holds it (port preservation), else a free one of the same
// parity while one is left (PORT_PARITY, RFC 4787 4.2.2: RTP even, RTCP
// odd), and no other LAN
// endpoint gets that port while a flow of the mapping lives. Filtering is
// address and port dependent, stricter than RFC 4787 REQ-8 recommends
// (endpoint-independent or address-dependent): a packet from the WAN comes
// back in only as the reply of a mapped flow (the exact remote address and
// port), or through a mapping the Manager installs. Timeouts: UDP 300 s
// refreshed by outbound traffic (REQ-5), TCP established 7440 s and
// transitory 300 s opening, 240 s closing (RFC 5382 REQ-5). FTP's PORT commands are rewritten
// (FTPPortMapper). Pings go through ping (ICMPPingRewriter): the echo
// identifier is kept when free, else another one is chosen (two LAN hosts
// pinging one server with the same identifier get distinct ones), and a
// query mapping lives 60 s after its last packet (RFC 5508's minimum for
// ICMP query mappings, section 3). ICMP errors about mapped flows are
// translated inside their payload by icmp_in and icmp_out (ICMPRewriter,
// RFC 5508). Fragments are reassembled on arrival on both sides
// (IPReassembler, as Linux's NAT does), so that every datagram is classified
// and translated whole (ICMPPingRewriter and the classifiers see only first
// fragments' headers); packets too big for the MTU are fragmented on the way
// out, or answered with "fragmentation needed" when DF is set. Hairpinning
// (RFC 4787 REQ-9): a LAN packet to WAN_IP goes through the NAPT and back in
// on the WAN side, with the sender's external address and port as its
// source.
//
// Bounded tables: rw holds at most 65536 mappings (TCP and UDP flows, about
// 250 per host for a LAN of 250 hosts), ping 4096. A new flow past the bound
// replaces the mapping closest to expiry, or, when every mapping is within
// its GUARANTEE (5 s), is refused and counted in rw.mapping_failures /
// ping.mapping_failures.
//
// Firewall: outbound TCP and UDP packets pass `outbound`, inbound packets
// `inbound` (IPFilters whose rules the Manager may rewrite through their
// `config` handlers; rules written there replace the defaults below, which
// the Python Manager's block_inbound_from keeps after its blocks). By
// default `inbound` drops, counting them in inbound_drops:
// - fragments. From the WAN device none arrive (reassembled before it);
//   the Manager channel has no reassembler, and a first fragment too
//   short for its ports would pass port rules unseen (RFC 1858);
// - packets whose source is the home prefix LAN_NET (spoofed from
//   outside);
// - sources no WAN host has (RFC 6890): "this network" 0/8, private 10/8,
//   172.16/12, 192.168/16 (RFC 1918), loopback 127/8, link-local
//   169.254/16, multicast 224/4 and reserved 240/4 (broadcast included),
//   except sources on the WAN link itself (WAN_NET: a gateway behind an
//   upstream router in private space still hears that router). Shared
//   address space 100.64/10 (a carrier-grade NAT's side) and the
//   documentation prefixes (this file's defaults use 192.0.2.0/24) pass.
// The rest is allowed: inbound TCP and UDP packets then need a mapping:
// an unsolicited one has none and goes to the Manager, which may install
// one (a port forward) and send the packet back; otherwise it is dropped
// there.
//
// Manager channel: each packet for the Manager is the UDP payload of one
// datagram from the router's `manager` Socket, bound to
// CHANNEL_IP:CHANNEL_PORT, to MANAGER_IP:MANAGER_PORT (the IP packet, from
// its IP header). The Manager handles datagrams from CHANNEL_IP:CHANNEL_PORT
// only, so other local processes cannot feed it frames. Datagrams the
// Manager sends back to that socket are IP packets the router processes as
// if they had arrived on the WAN side, after the TTL decrement (packets not
// to WAN_IP are dropped). They pass the inbound firewall again: the Socket
// takes datagrams from any local sender, and one forged by another process
// must not get past `inbound` through the Manager. The same packets are
// copied, with an Ethernet header, to the sniffers on SNIFF_DEV
// (ToHostSniffers: tcpdump -i sniff0 sees them, the host stack does not).
//
// Counters: lan_in, wan_in, to_manager, from_manager, dropped_inbound,
// inbound_drops (Counter), rw.table_size and the rewriters' tables.

define($LAN_DEV eth0, $LAN_IP 192.168.1.1, $LAN_ETH 00:00:c0:00:01:01,
       $LAN_NET 192.168.1.0/24,
       $WAN_DEV eth1, $WAN_IP 192.0.2.1, $WAN_ETH 00:00:c0:00:02:01,
       $WAN_NET 192.0.2.0/24, $WAN_GW 192.0.2.254,
       $MTU 1500,
       $MANAGER_IP 127.0.0.1, $MANAGER_PORT 7779,
       $CHANNEL_IP 127.0.0.1, $CHANNEL_PORT 778,
       $MANAGER_CLASS tcp opt syn and not tcp opt ack,
       $SNIFF_DEV sniff0);

// ---------------------------------------------------------------- rewriters

// The two output paths (fragmentation, next hop, ARP; below) and the
// Manager channel's entry.
to_wan :: IPFragmenter($MTU);
to_lan :: IPFragmenter($MTU);
to_manager_q :: Counter;

// Input 0: from the LAN; input 1: from the WAN. Output 0: toward the WAN;
// output 1: toward the LAN; output 2: inbound packets without a mapping
// (to the Manager).
rw :: IPRewriter(pattern $WAN_IP 1024-65535 - - 0 1, pass 2,
                 TCP_TIMEOUT 7440, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 300,
                 ENDPOINT_INDEPENDENT true, PORT_PARITY true,
                 MAPPING_CAPACITY 65536);
// The pattern's SPORT is the echo identifier.
ping :: ICMPPingRewriter(pattern $WAN_IP 0-65535 - - 0 1, drop,
                         TIMEOUT 60, MAPPING_CAPACITY 4096);
icmp_in :: ICMPRewriter(rw ping);
icmp_out :: ICMPRewriter(rw ping);

// ---------------------------------------------------------------- LAN side

lan_c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($LAN_DEV) -> lan_in :: Counter -> lan_c;
lan_q :: Queue(1000) -> ToDevice($LAN_DEV);
lan_c[0] -> ARPResponder($LAN_IP $LAN_ETH) -> lan_q;
lan_arpq :: ARPQuerier($LAN_IP, $LAN_ETH) -> lan_q;
lan_c[1] -> [1]lan_arpq;
lan_c[3] -> Discard;

lan_ip :: IPClassifier(
    dst host $LAN_IP and icmp type echo,    // pings to the gateway
    dst host $LAN_IP,                       // other traffic to the gateway
    src net $LAN_NET,                       // to be forwarded
    -);
lan_c[2] -> Strip(14) -> CheckIPHeader(INTERFACES $LAN_IP/32)
    -> IPReassembler -> lan_ip;
lan_ip[0] -> ICMPPingResponder -> to_lan;
lan_ip[1] -> Discard;
lan_ip[3] -> Discard;
// The TTL is decremented before the translation, so that "time exceeded"
// quotes the packet as the LAN host sent it (traceroute's first hop).
lan_ip[2] -> lan_ttl :: DecIPTTL -> lan_fwd :: IPClassifier(
    icmp type echo,                         // pings out
    icmp,                                   // ICMP errors about inbound flows
    tcp or udp,                             // the NAPT
    -);
lan_ttl[1] -> ICMPError($LAN_IP, timeexceeded) -> to_lan;
lan_fwd[0] -> [0]ping;
lan_fwd[1] -> icmp_out;
lan_fwd[3] -> Discard;
outbound :: IPFilter(allow all);
lan_fwd[2] -> outbound -> lan_tap :: Tee(2) -> ftp_c :: IPClassifier(tcp dst port 21, -);
// FTP control connections: PORT commands name the data connection's
// outside address and port, with the sequence-number deltas (active FTP;
// passive FTP needs nothing more than the NAPT).
ftp_c[0] -> FTPPortMapper(rw, rw, 0) -> [0]rw;
ftp_c[1] -> [0]rw;

// Copies of selected new outbound connections to the Manager.
lan_tap[1] -> manager_class :: IPClassifier($MANAGER_CLASS, -) -> to_manager_q;
manager_class[1] -> Discard;

// ---------------------------------------------------------------- WAN side

wan_c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($WAN_DEV) -> wan_in :: Counter -> wan_c;
wan_q :: Queue(1000) -> ToDevice($WAN_DEV);
wan_c[0] -> ARPResponder($WAN_IP $WAN_ETH) -> wan_q;
wan_arpq :: ARPQuerier($WAN_IP, $WAN_ETH) -> wan_q;
wan_c[1] -> [1]wan_arpq;
wan_c[3] -> Discard;

inbound :: IPFilter(1 ip frag,
                     1 src net $LAN_NET,
                     allow src net $WAN_NET,
                     1 src net 0.0.0.0/8 or src net 10.0.0.0/8
                         or src net 127.0.0.0/8 or src net 169.254.0.0/16
                         or src net 172.16.0.0/12 or src net 192.168.0.0/16
                         or src net 224.0.0.0/4 or src net 240.0.0.0/4,
                     allow all);
inbound[1] -> inbound_drops :: Counter -> Discard;
// After the firewall: paint 0, packets from the WAN device; paint 1,
// packets the Manager sent back (below).
inbound_from :: PaintSwitch;
wan_ip :: IPClassifier(
    dst host $WAN_IP and icmp type echo,        // pings to the gateway
    dst host $WAN_IP,                           // to be translated
    -);
wan_c[2] -> Strip(14) -> CheckIPHeader(INTERFACES $WAN_IP/32)
    -> IPReassembler -> inbound -> inbound_from;
inbound_from[0] -> wan_ip;
wan_ip[0] -> ICMPPingResponder -> to_wan;
wan_ip[1] -> wan_ttl :: DecIPTTL -> wan_fwd :: IPClassifier(
    icmp type echo-reply,                       // replies to LAN pings
    icmp,                                       // ICMP errors about LAN flows
    tcp or udp,                                 // replies, port forwards
    -);
wan_ttl[1] -> ICMPError($WAN_IP, timeexceeded) -> to_wan;
wan_fwd[0] -> [1]ping;
wan_fwd[1] -> icmp_in;
wan_fwd[2] -> [1]rw;
wan_fwd[3] -> dropped_inbound :: Counter -> Discard;
wan_ip[2] -> dropped_inbound;

// ---------------------------------------------------------------- NAPT outputs

// Outbound: a packet for the public address itself (hairpinning) goes
// back in on the WAN side; the rest leaves by the WAN.
rw[0] -> hairpin :: IPClassifier(dst host $WAN_IP, -);
hairpin[0] -> [1]rw;
hairpin[1] -> to_wan;
ping[0] -> to_wan;
icmp_out[0] -> to_wan;
rw[1] -> to_lan;
ping[1] -> to_lan;
icmp_in[0] -> to_lan;

// Unsolicited inbound packets: to the Manager.
rw[2] -> to_manager_q;

// A packet too big for the MTU with DF set has been translated already:
// the "fragmentation needed" about it goes through the ICMP translator of
// its direction, which sends it to the right host with the quoted packet
// as that host sent it.
to_wan -> wan_rt :: StaticIPLookup($WAN_NET 0, 0.0.0.0/0 $WAN_GW 0)
    -> [0]wan_arpq;
to_wan[1] -> ICMPError($WAN_IP, unreachable, needfrag, PMTU $MTU) -> icmp_in;

to_lan -> [0]lan_arpq;
to_lan[1] -> ICMPError($WAN_IP, unreachable, needfrag, PMTU $MTU) -> icmp_out;

// ---------------------------------------------------------------- Manager

to_manager_q -> to_manager :: Tee(2);
to_manager[0] -> manager :: Socket(UDP, $MANAGER_IP, $MANAGER_PORT,
                                   $CHANNEL_IP, $CHANNEL_PORT, CLIENT true);
to_manager[1] -> EtherEncap(0x0800, $WAN_ETH, $LAN_ETH)
    -> ToHostSniffers($SNIFF_DEV, ALLOW_NONEXISTENT true);
// They come back after the TTL decrement they had on their first pass
// (through wan_ttl or, hairpinned, lan_ttl): a packet crosses the gateway
// with its TTL decremented once. They pass the inbound firewall again
// (painted 1, so that they skip wan_ip and wan_ttl after it): the Socket
// emits datagrams from any local sender, not only the Manager.
manager -> from_manager :: Counter -> CheckIPHeader -> Paint(1) -> inbound;
inbound_from[1] -> from_manager_ip :: IPClassifier(dst host $WAN_IP, -);
from_manager_ip[0] -> wan_fwd;
from_manager_ip[1] -> dropped_inbound;
