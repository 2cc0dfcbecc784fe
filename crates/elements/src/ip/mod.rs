//! IPv4 elements: header checks and annotations, route lookup, the
//! forwarding path of the IP router, ARP, encapsulation, classification.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/ip_modules.rs"));
