//! Declares every `.rs` file of each domain folder (`src/standard`, `src/ip`,
//! `src/userlevel`, ...) as a module of that domain, so that adding an
//! element is adding its file: there is no module list to edit, and no file
//! can be forgotten. Each domain's `mod.rs` includes the generated list.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: a build script
    // compiled in another checkout (a copied target directory) must list
    // this checkout's files.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let src = Path::new(&manifest_dir).join("src");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let mut domains: Vec<_> = std::fs::read_dir(&src)
        .expect("read src")
        .flatten()
        .filter(|e| e.path().join("mod.rs").is_file())
        .map(|e| e.path())
        .collect();
    domains.sort();
    // Cargo scans a watched directory recursively: a new, renamed or removed
    // file, or a new domain folder, reruns this script. The path is relative
    // to the package, so a target directory copied to another checkout
    // watches that checkout's files (an absolute path kept watching the
    // original's, and the copy compiled the original's element sources).
    println!("cargo:rerun-if-changed=src");
    for dir in domains {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("read domain")
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs") && !p.ends_with("mod.rs"))
            // Editor lock and backup files (`.#x.rs`, `._x.rs`) are not modules.
            .filter(|p| {
                p.file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(is_module_name)
            })
            .collect();
        files.sort();
        let mut list = String::new();
        for f in files {
            let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            writeln!(
                list,
                "#[path = {:?}]\npub mod {stem};",
                f.display().to_string()
            )
            .unwrap();
        }
        let domain = dir
            .file_name()
            .and_then(|s| s.to_str())
            .expect("domain name");
        std::fs::write(Path::new(&out).join(format!("{domain}_modules.rs")), list)
            .expect("write module list");
    }
}

fn is_module_name(stem: &str) -> bool {
    let mut chars = stem.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
