//! IPv4 elements: header checks and annotations, route lookup, the
//! forwarding path of the IP router, ARP, encapsulation, classification.

pub mod address;
pub mod addressinfo;
pub mod arpprint;
pub mod arpquerier;
pub mod arpresponder;
pub mod checkicmpheader;
pub mod checkipheader;
pub mod checkipheader2;
pub mod checktcpheader;
pub mod checkudpheader;
pub mod decipttl;
pub mod directiplookup;
pub mod dropbroadcasts;
pub mod etherencap;
pub mod etherrewrite;
pub mod fixipsrc;
pub mod getipaddress;
pub mod hostetherfilter;
pub mod icmperror;
pub mod icmppingresponder;
pub mod icmppingsource;
pub mod ipclassifier;
pub mod ipcommon;
pub mod ipencap;
pub mod ipfilter;
pub mod ipfilter_compile;
pub mod ipfragmenter;
pub mod ipgwoptions;
pub mod ipinputcombo;
pub mod ipoutputcombo;
pub mod ipprint;
pub mod ipreassembler;
pub mod lineariplookup;
pub mod lookupiproute;
pub mod lpmbench;
pub mod markipheader;
pub mod portinfo;
pub mod radixiplookup;
mod reg_d;
mod reg_e;
mod reg_f;
mod reg_g;
pub mod routetable;
pub mod setipaddress;
pub mod staticiplookup;
pub mod storeetheraddress;
pub mod storeipaddress;
pub mod stripipheader;
pub mod udpipencap;
pub mod unstripipheader;

use rclick_core::Registry;

/// Adds the IPv4 element classes to `reg`.
pub fn register(reg: &mut Registry) {
    reg_d::register(reg);
    reg_e::register(reg);
    reg_f::register(reg);
    reg_g::register(reg);
}
