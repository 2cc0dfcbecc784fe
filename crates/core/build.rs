//! Writes `fingerprint.rs`: what the element-package ABI fingerprint says
//! about this build (see `src/package/abi.rs` and docs/packages.md): the
//! compiler, the target and its features, this crate's version and a
//! hash of its sources, and its enabled features. The rest of the
//! fingerprint (panic strategy, loom) is read with `cfg!` in
//! the crate itself, where it describes the crate as compiled.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../lang/source_hash.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let src = source_hash(&dir, &["src", "Cargo.toml", "build.rs"]);
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let vv = Command::new(&rustc)
        .arg("-vV")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let field = |k: &str| {
        vv.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let rustc_id = format!(
        "{} {} {}",
        field("release:"),
        field("commit-hash:"),
        field("LLVM version:")
    );
    let target = std::env::var("TARGET").unwrap_or_default();
    let mut tf: Vec<String> = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    tf.sort();
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_lowercase()))
        .collect();
    features.sort();
    let mut out = String::new();
    let mut c = |name: &str, v: &str| {
        writeln!(out, "pub(crate) const {name}: &str = {v:?};").unwrap();
    };
    c("CORE_SOURCE_HASH", &format!("{src:016x}"));
    c("RUSTC_ID", &rustc_id);
    c("TARGET", &target);
    c("TARGET_FEATURES", &tf.join(","));
    c("FEATURES", &features.join(","));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("fingerprint.rs"), out).expect("write fingerprint.rs");
}

include!("../lang/source_hash.rs");
