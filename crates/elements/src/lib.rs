//! The rclick element library, grouped by domain as in Click's
//! `elements/` tree.

pub mod analysis;
pub mod ethernet;
pub mod flow;
pub mod ip;
pub mod ip6;
pub mod ipsec;
pub mod nat;
pub mod qos;
pub mod standard;
pub mod testing;
pub mod userlevel;

use rclick_core::Registry;

/// A registry holding every element class in this library (and in any
/// other element crate linked into the program): each element file
/// registers its class with `rclick_core::element_class!`.
pub fn registry() -> Registry {
    Registry::linked()
}
