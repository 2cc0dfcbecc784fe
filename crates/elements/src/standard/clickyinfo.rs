//! # ClickyInfo
//!
//! Holds display information for the Clicky GUI.
//!
//! ## Synopsis
//! `ClickyInfo(*keywords* STYLE, ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Does nothing in the router. Clicky, Click's graphical configuration
//! viewer, reads the configuration of ClickyInfo elements for style sheets
//! (STYLE: CSS-like rules saying how to draw elements and which handlers
//! to show) and other display settings. rclick accepts any configuration
//! and keeps it, readable through the `config` handler (and so through
//! the control socket and the HTTP handler API), but its live view does
//! not apply Clicky styles.
//!
//! ## Keywords
//! - **STYLE** (string): a Clicky style sheet, or `@import FILE`.
//! - Any other keyword or argument is accepted and kept.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ClickyInfo(STYLE #c { decorations: activity });
//! ```

use rclick_core::{ConfigResult, Element, InitCtx};

#[derive(Default)]
pub struct ClickyInfo;

rclick_core::element_class!(ClickyInfo);

impl Element for ClickyInfo {
    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, _conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Ok(())
    }
}
