//! IPv4 elements: header checks and annotations, route lookup, the
//! forwarding path of the IP router, ARP, encapsulation, classification.

mod reg_d;
mod reg_e;
mod reg_f;
mod reg_g;

use rclick_core::Registry;

/// Adds the IPv4 element classes to `reg`.
pub fn register(reg: &mut Registry) {
    reg_d::register(reg);
    reg_e::register(reg);
    reg_f::register(reg);
    reg_g::register(reg);
}
