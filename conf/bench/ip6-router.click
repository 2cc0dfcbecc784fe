// The IPv6 forwarding path (issue 17) on a 76-byte Ethernet/IPv6/UDP
// frame: CheckIP6Header, GetIP6Address, a LookupIP6Route of Click's conf/
// kind, DecIP6HLIM (which copies the source's shared packet, as in Click),
// and a new Ethernet header. The same path as conf/ip601.click's, without
// devices and neighbour discovery.
// Runs under Click and rclick alike:  click ip6-router.click LIMIT=10000000 BURST=32
define($LIMIT 1000000, $BURST 1)
src :: InfiniteSource(DATA \<000000c0000100000000000286dd60000000000e114020010db800000000000000000000000220010db800010000000000000000000204d2162e000e0000000000000000>, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> Strip(14)
  -> CheckIP6Header(3ffe:1ce1:2::ffff)
  -> GetIP6Address(24)
  -> rt :: LookupIP6Route(2001:db8::1/128 ::0 0,
                          2001:db8:0:0:200::1/128 ::0 0,
                          2001:db8::/48 ::0 1,
                          2001:db8:1::/48 fe80::1 1,
                          ::ffff:0:0/96 ::0 2,
                          ::0/0 fe80::2 1);
rt[0] -> local :: Discard;
rt[2] -> mapped :: Discard;
rt[1] -> dh :: DecIP6HLIM
  -> EtherEncap(0x86dd, 00:00:c0:00:00:01, 00:00:c0:00:00:02)
  -> d :: Discard;
dh[1] -> expired :: Discard;
