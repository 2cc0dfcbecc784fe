// A VLAN-aware learning switch: two access ports, in VLANs 10 and 20, and
// one 802.1Q trunk port carrying both VLANs tagged.
//
//   rclick conf/switch-vlan.click ACCESS10=eth1 ACCESS20=eth2 TRUNK=eth3
//
// Each VLAN has its own learning switch (EtherSwitch) whose port 0 is the
// VLAN's access port and port 1 the trunk. Untagged frames from an access
// port enter that VLAN; frames leaving by the trunk get the VLAN's tag
// (VLANEncap), and tagged frames from the trunk are sorted by VLAN ID
// (Classifier on the TCI, priority bits ignored) and lose their tag
// (VLANDecap) before entering their VLAN's switch. Frames on the trunk
// without a known tag (untagged, VLAN 0 priority tags, other VLANs, and
// 802.1ad 0x88a8 outer tags) are dropped. A double-tagged frame is sorted
// by its outer tag; its inner tag stays, priority bits and all. The
// priority (PCP) and DEI bits of a trunk tag do not matter for sorting and
// are not carried over: VLANEncap tags frames for the trunk with priority
// 0. Access ports take frames as they are, so a priority-tagged frame
// (VLAN 0) from an access host crosses the trunk under its VLAN's tag and
// arrives priority-tagged (tests: vlan_trunk_between_two_rclick_switches
// in crates/elements/tests/ethernet_netns.rs, with frames crafted by
// scapy; tests/diff/cases/ethernet-switch-vlan-trunk.case against Click).
// Add VLANs with a switch and a Classifier pattern each, and access
// ports by giving a VLAN's switch more ports.

define($ACCESS10 eth0, $ACCESS20 eth1, $TRUNK eth2, $TIMEOUT 300);

vlan10 :: EtherSwitch(TIMEOUT $TIMEOUT);
vlan20 :: EtherSwitch(TIMEOUT $TIMEOUT);

// Access ports.
FromDevice($ACCESS10, PROMISC true) -> [0]vlan10[0] -> Queue(1000) -> ToDevice($ACCESS10);
FromDevice($ACCESS20, PROMISC true) -> [0]vlan20[0] -> Queue(1000) -> ToDevice($ACCESS20);

// The trunk.
trunk_out :: Queue(1000) -> ToDevice($TRUNK);
FromDevice($TRUNK, PROMISC true)
  -> bytag :: Classifier(12/8100 14/000a%0fff, 12/8100 14/0014%0fff, -);
bytag[0] -> VLANDecap -> [1]vlan10;
bytag[1] -> VLANDecap -> [1]vlan20;
bytag[2] -> Discard;
vlan10[1] -> VLANEncap(VLAN_ID 10) -> trunk_out;
vlan20[1] -> VLANEncap(VLAN_ID 20) -> trunk_out;
