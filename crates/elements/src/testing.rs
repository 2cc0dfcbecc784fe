//! Helpers for tests: build routers from element/connection lists or from
//! configuration text, with simulated time.

use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Router, RouterOptions};
use rclick_lang::RouterSpec;

/// A spec from `(name, class, config)` triples and `(from, from_port, to,
/// to_port)` connections by index.
pub fn spec(elems: &[(&str, &str, &str)], conns: &[(usize, usize, usize, usize)]) -> RouterSpec {
    RouterSpec::from_lists("test", elems, conns)
}

fn options() -> RouterOptions {
    RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        capture_chatter: true,
        ..Default::default()
    }
}

/// Builds a router (simulated time, chatter captured) or returns the
/// error messages, one string each.
pub fn try_build(s: RouterSpec) -> Result<Router, Vec<String>> {
    let reg = crate::registry();
    Router::new(s, "", &reg, &options()).map_err(|d| d.iter().map(|x| x.to_string()).collect())
}

/// Builds a router or panics with every error.
pub fn build(s: RouterSpec) -> Router {
    try_build(s).unwrap_or_else(|e| panic!("router failed:\n{}", e.join("\n")))
}

/// Parses configuration text (landmark `test`) and builds the router with
/// simulated time and captured chatter, or returns every error message.
pub fn try_from_config(text: &str) -> Result<Router, Vec<String>> {
    let reg = crate::registry();
    let outcome =
        rclick_lang::parse_router(text, "test", &reg, &rclick_lang::ParseOptions::default());
    if outcome.has_errors() {
        return Err(outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.to_string())
            .collect());
    }
    let spec = outcome.spec.ok_or_else(|| vec!["no router".to_string()])?;
    Router::new(spec, text, &reg, &options()).map_err(|d| d.iter().map(|x| x.to_string()).collect())
}

/// Like [`try_from_config`], panicking with every error.
pub fn from_config(text: &str) -> Router {
    try_from_config(text).unwrap_or_else(|e| panic!("router failed:\n{}", e.join("\n")))
}

/// Reads a handler as a string, panicking with the handler's error.
pub fn read(router: &mut Router, handler: &str) -> String {
    router
        .read_handler(handler, None)
        .unwrap_or_else(|e| panic!("{handler}: {e}"))
}
