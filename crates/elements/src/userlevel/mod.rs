//! User-level elements: trace files, and (later) devices and sockets.

use rclick_core::Registry;

/// Adds the user-level element classes to `reg`.
pub fn register(_reg: &mut Registry) {}
