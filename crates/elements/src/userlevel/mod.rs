//! User-level elements: trace files, and (later) devices and sockets.

// Every file of this folder is a module (see build.rs).
include!(concat!(env!("OUT_DIR"), "/userlevel_modules.rs"));
