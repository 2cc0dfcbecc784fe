//! Registration of one group of standard elements.

use rclick_core::Registry;

pub(crate) fn register(_reg: &mut Registry) {}
