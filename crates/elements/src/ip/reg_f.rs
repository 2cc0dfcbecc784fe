//! Registration of the ICMP error, fragmentation, reassembly, ARP and ping
//! elements.

use rclick_core::Registry;

use super::{
    arpprint, arpquerier, arpresponder, icmperror, icmppingsource, ipfragmenter, ipreassembler,
};

pub(crate) fn register(reg: &mut Registry) {
    reg.add("ICMPError", || Box::<icmperror::ICMPError>::default());
    reg.add("IPFragmenter", || {
        Box::<ipfragmenter::IPFragmenter>::default()
    });
    reg.add("IPReassembler", || {
        Box::<ipreassembler::IPReassembler>::default()
    });
    reg.add("ARPQuerier", || Box::<arpquerier::ARPQuerier>::default());
    reg.add("ARPResponder", || {
        Box::<arpresponder::ARPResponder>::default()
    });
    reg.add("ARPPrint", || Box::<arpprint::ARPPrint>::default());
    reg.add("ICMPPingSource", || {
        Box::<icmppingsource::ICMPPingSource>::default()
    });
}
