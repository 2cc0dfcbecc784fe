//! Network address and port translation: the IPRewriter family (Click's
//! rewriters, their patterns and mappers) and the machinery they share.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/nat_modules.rs"));
