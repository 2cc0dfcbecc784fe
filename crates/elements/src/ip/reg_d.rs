//! Registration of one group of IPv4 elements: header checks, annotations,
//! TTL and options, encapsulation, printing, ping, address names.

use rclick_core::Registry;

use super::*;

pub(crate) fn register(reg: &mut Registry) {
    reg.add("AddressInfo", || Box::<addressinfo::AddressInfo>::default());
    reg.add("CheckICMPHeader", || {
        Box::<checkicmpheader::CheckICMPHeader>::default()
    });
    reg.add("CheckIPHeader", || {
        Box::<checkipheader::CheckIPHeader>::default()
    });
    reg.add("CheckIPHeader2", || {
        Box::<checkipheader2::CheckIPHeader2>::default()
    });
    reg.add("CheckTCPHeader", || {
        Box::<checktcpheader::CheckTCPHeader>::default()
    });
    reg.add("CheckUDPHeader", || {
        Box::<checkudpheader::CheckUDPHeader>::default()
    });
    reg.add("DecIPTTL", || Box::<decipttl::DecIPTTL>::default());
    reg.add("DropBroadcasts", || {
        Box::<dropbroadcasts::DropBroadcasts>::default()
    });
    reg.add("EtherEncap", || Box::<etherencap::EtherEncap>::default());
    reg.add("EtherRewrite", || {
        Box::<etherrewrite::EtherRewrite>::default()
    });
    reg.add("FixIPSrc", || Box::<fixipsrc::FixIPSrc>::default());
    reg.add("GetIPAddress", || {
        Box::<getipaddress::GetIPAddress>::default()
    });
    reg.add("HostEtherFilter", || {
        Box::<hostetherfilter::HostEtherFilter>::default()
    });
    reg.add("ICMPPingResponder", || {
        Box::<icmppingresponder::ICMPPingResponder>::default()
    });
    reg.add("IPEncap", || Box::<ipencap::IPEncap>::default());
    reg.add("IPGWOptions", || Box::<ipgwoptions::IPGWOptions>::default());
    reg.add("IPInputCombo", || {
        Box::<ipinputcombo::IPInputCombo>::default()
    });
    reg.add("IPOutputCombo", || {
        Box::<ipoutputcombo::IPOutputCombo>::default()
    });
    reg.add("IPPrint", || Box::<ipprint::IPPrint>::default());
    reg.add("MarkIPHeader", || {
        Box::<markipheader::MarkIPHeader>::default()
    });
    reg.add("PortInfo", || Box::<portinfo::PortInfo>::default());
    reg.add("SetIPAddress", || {
        Box::<setipaddress::SetIPAddress>::default()
    });
    reg.add("StoreEtherAddress", || {
        Box::<storeetheraddress::StoreEtherAddress>::default()
    });
    reg.add("StoreIPAddress", || {
        Box::<storeipaddress::StoreIPAddress>::default()
    });
    reg.add("StripIPHeader", || {
        Box::<stripipheader::StripIPHeader>::default()
    });
    reg.add("UDPIPEncap", || Box::<udpipencap::UDPIPEncap>::default());
    reg.add("UnstripIPHeader", || {
        Box::<unstripipheader::UnstripIPHeader>::default()
    });
}
