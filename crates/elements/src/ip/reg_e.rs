//! Registration of the IPv4 route-lookup elements.

use rclick_core::Registry;

use super::{directiplookup, lineariplookup, lookupiproute, radixiplookup, staticiplookup};

pub(crate) fn register(reg: &mut Registry) {
    reg.add("LookupIPRoute", || {
        Box::<lookupiproute::LookupIPRoute>::default()
    });
    reg.add("StaticIPLookup", || {
        Box::<staticiplookup::StaticIPLookup>::default()
    });
    reg.add("LinearIPLookup", || {
        Box::<lineariplookup::LinearIPLookup>::default()
    });
    reg.add("RadixIPLookup", || {
        Box::<radixiplookup::RadixIPLookup>::default()
    });
    reg.add("DirectIPLookup", || {
        Box::<directiplookup::DirectIPLookup>::default()
    });
}
