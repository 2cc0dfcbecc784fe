//! IPv6 elements: header checks and annotations, route lookup, the
//! forwarding path of the IPv6 router, ICMPv6 errors and echo, and
//! neighbour discovery.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/ip6_modules.rs"));
