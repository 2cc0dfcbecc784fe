//! Registration of one group of IPv4 elements.

use rclick_core::Registry;

pub(crate) fn register(_reg: &mut Registry) {}
