//! Registration of the IP classification elements.

use rclick_core::Registry;

use super::{ipclassifier, ipfilter};

pub(crate) fn register(reg: &mut Registry) {
    reg.add("IPClassifier", || {
        Box::<ipclassifier::IPClassifier>::default()
    });
    reg.add("IPFilter", || Box::<ipfilter::IPFilter>::default());
}
