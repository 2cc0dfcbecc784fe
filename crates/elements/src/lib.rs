//! The rclick element library, grouped by domain as in Click's
//! `elements/` tree.

pub mod ip;
pub mod standard;
pub mod testing;
pub mod userlevel;

use rclick_core::Registry;

/// A registry holding every element class in this library.
pub fn registry() -> Registry {
    let mut reg = Registry::new();
    standard::register(&mut reg);
    ip::register(&mut reg);
    userlevel::register(&mut reg);
    reg
}
