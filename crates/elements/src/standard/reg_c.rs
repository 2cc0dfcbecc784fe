//! Registration of one group of standard elements.

use rclick_core::Registry;

pub(crate) fn register(reg: &mut Registry) {
    reg.add("Classifier", || {
        Box::<super::classifier::Classifier>::default()
    });
}
