//! # DriverManager
//!
//! A Script that manages driver stop events.
//!
//! ## Synopsis
//! `DriverManager(INSTRUCTIONS...)`
//!
//! ## Ports and processing
//! None.
//!
//! ## Description
//! DriverManager is a Script whose default TYPE is DRIVER. Driver stop
//! events (a source's `STOP true` running out, a Script `stop`, a write to
//! the global `stop` handler) normally stop the driver. With a
//! DriverManager, each stop event instead steps its script: `pause`
//! (`wait_stop [N]`) waits for the next N stop events, `wait TIME` waits on
//! the router clock (or until a stop event), and the driver stops only when
//! the script executes `stop` or ends. All Script instructions (`print`,
//! `read`, `write`, `set`, `goto`, ...) are available. With no instructions
//! it stops at the first stop event.
//!
//! A DriverManager whose script does not start with a blocking instruction
//! runs right away, as if a stop event had occurred.
//!
//! ## Keywords
//! - **TYPE** (word): as for Script; defaults to DRIVER.
//!
//! ## Handlers
//! As for Script (`step`, `goto`, `run`, the expression functions, ...).
//!
//! ## Example
//! ```click
//! src :: InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard;
//! DriverManager(wait_stop, read c.count, wait 0.1s, stop);
//! ```

use super::script::Script;

/// A DriverManager instance.
pub fn new() -> Script {
    Script::new("DriverManager")
}

rclick_core::element_class!("DriverManager" => new());
