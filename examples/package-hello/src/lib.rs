//! The `hello` element package: an example of element classes built
//! apart from rclick and loaded while it runs (docs/packages.md).
//!
//! Each element is written with the element kit exactly as a built-in
//! one (one file per class, `element_class!` beside the struct); this file
//! only makes the crate a package.

mod hellocounter;
mod hellotee;

rclick_core::export_package!("hello");
