//! The Python Manager library (clients/python/rclick_manager.py) on its
//! own: its unit tests (clients/python/tests/test_rclick_manager.py: frame
//! parsing, port forwards admitted with a mapping and the packet sent
//! back, refusals, callbacks, hairpinned packets, rule writes), against a
//! recording stand-in for the control socket and real UDP sockets. No root
//! needed; the library against a running gateway is tested in
//! nat_links.rs. Skips (printing why) without python3.

use std::path::Path;
use std::process::Command;

#[test]
fn python_manager_library_unit_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tests = root.join("clients/python/tests");
    let out = match Command::new("python3")
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(&tests)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            println!("SKIP: python3 not available: {e}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // Not a vacuous pass: the suite ran its tests.
    let ran: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    assert!(ran >= 10, "only {ran} tests ran:\n{text}");
}
