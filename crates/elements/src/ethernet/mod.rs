//! Ethernet switching and VLAN elements: the learning switch and the 802.1D
//! spanning tree of the Click paper's switch (EtherSwitch, EtherSpanTree,
//! Suppressor), 802.1Q tagging (VLANEncap, VLANDecap, EtherVLANEncap, ...)
//! and Ethernet header helpers.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/ethernet_modules.rs"));
