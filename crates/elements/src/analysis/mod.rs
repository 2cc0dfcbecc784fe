//! Trace analysis elements: timestamp adjustment and filtering, merging
//! traces by time, counting by aggregate.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/analysis_modules.rs"));
