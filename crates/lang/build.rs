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
    let hash = source_hash(&dir, &["src", "Cargo.toml", "build.rs"]);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("source_hash.txt"), format!("{hash:016x}")).expect("write hash");
}

/// FNV-1a (64 bits) over every file under `roots`, in sorted path order,
/// each framed by its relative path and length.
fn source_hash(base: &Path, roots: &[&str]) -> u64 {
    let mut files = Vec::new();
    for r in roots {
        collect(&base.join(r), &mut files);
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in files {
        let rel = f
            .strip_prefix(base)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        let data = std::fs::read(&f).unwrap_or_default();
        eat(rel.as_bytes());
        eat(&(data.len() as u64).to_le_bytes());
        eat(&data);
    }
    h
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        if let Ok(rd) = std::fs::read_dir(p) {
            for e in rd.flatten() {
                collect(&e.path(), out);
            }
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}
