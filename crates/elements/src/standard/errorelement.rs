//! # Error
//!
//! Always fails to initialize.
//!
//! ## Synopsis
//! `Error(...)`
//!
//! ## Ports and processing
//! Any number of agnostic inputs and outputs; no packet flows from any
//! input to any output.
//!
//! ## Description
//! Accepts any configuration string and any connections without complaint,
//! then fails to initialize, so the router does not run. Useful to keep a
//! configuration from running without causing spurious errors about
//! arguments or ports. Click prints no message of its own for it.
//!
//! ## Keywords
//! None; every argument is ignored.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! src :: InfiniteSource -> Error -> Discard;
//! ```

use rclick_core::{ConfigResult, Element, Errors, InitCtx};

#[derive(Default)]
pub struct ErrorElement;

rclick_core::element_class!("Error" => ErrorElement);

impl Element for ErrorElement {
    fn port_count(&self) -> &'static str {
        "-/-"
    }

    fn flow_code(&self) -> &'static str {
        "x/y"
    }

    fn configure(&mut self, _conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Ok(())
    }

    fn initialize(&mut self, _ctx: &mut InitCtx) -> ConfigResult {
        Err(Errors::new())
    }
}
