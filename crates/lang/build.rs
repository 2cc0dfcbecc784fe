//! Writes `source_hash.txt`: a hash of this crate's sources, which
//! `rclick-core` puts into the ABI fingerprint that element packages are
//! checked against (docs/packages.md). A package built against other
//! sources of the language crate is refused at load time.

use std::path::{Path, PathBuf};

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=source_hash.rs");
    let hash = source_hash(&dir, &["src", "Cargo.toml", "build.rs", "source_hash.rs"]);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("source_hash.txt"), format!("{hash:016x}")).expect("write hash");
}

include!("source_hash.rs");
