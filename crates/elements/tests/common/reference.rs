//! Where the reference Click driver is: `$RCLICK_REFERENCE_CLICK`, or
//! `../shared/reference/click/bin/click` beside the repository (CI has it
//! there). Tests that compare against it skip with the error's reason
//! when it is absent (a user's fresh clone).

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};

/// The reference Click binary, or why it is missing.
pub fn reference_click() -> Result<PathBuf, String> {
    let p = match std::env::var_os("RCLICK_REFERENCE_CLICK") {
        Some(p) => PathBuf::from(p),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/click/bin/click")
        }
    };
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "reference Click not found at {}; skipping",
            p.display()
        ))
    }
}

/// The reference Click binary for a part of a test that compares with it;
/// when it is absent, says so ("SKIP PART") and the test goes on without
/// that comparison.
pub fn reference_click_for_part() -> Option<PathBuf> {
    match reference_click() {
        Ok(p) => Some(p),
        Err(why) => {
            println!("SKIP PART: {why} the live comparison");
            None
        }
    }
}
