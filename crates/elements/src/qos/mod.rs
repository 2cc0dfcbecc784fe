//! Quality of service: active queue management (RED, AdaptiveRED, CoDel), queue variants
//! (FrontDropQueue, MixedQueue, QuickNoteQueue), meters and rated
//! splitters, shapers and delays, and packet schedulers (DRRSched).

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/qos_modules.rs"));
