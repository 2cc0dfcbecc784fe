//! Standard elements: sources, sinks, queues, counters, schedulers,
//! classifiers, scripting.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/standard_modules.rs"));
