//! The element reference (docs/elements.md) is generated from the `//!`
//! header of each element file. This test regenerates it and fails if the
//! committed file is stale or if a registered class has no documented file.
//! Run with `UPDATE_DOCS=1` to rewrite the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn element_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            element_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (class name, domain, markdown body) for each documented element file.
fn documented(src: &Path) -> BTreeMap<String, (String, String)> {
    let mut files = Vec::new();
    element_files(src, &mut files);
    let mut docs = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read element file");
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.strip_prefix("//!").unwrap_or(l))
            })
            .collect();
        let Some(first) = header.first() else {
            continue;
        };
        let Some(class) = first.strip_prefix("# ") else {
            continue;
        };
        if !class.chars().next().is_some_and(|c| c.is_ascii_uppercase()) || class.contains(' ') {
            continue;
        }
        let domain = f
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Demote headings one level so each class is a section of the page.
        let body: Vec<String> = header[1..]
            .iter()
            .map(|l| {
                if l.starts_with('#') {
                    format!("#{l}")
                } else {
                    l.to_string()
                }
            })
            .collect();
        docs.insert(
            class.to_string(),
            (domain, body.join("\n").trim().to_string()),
        );
    }
    docs
}

fn render(docs: &BTreeMap<String, (String, String)>) -> String {
    let mut out = String::from(
        "# rclick element reference\n\n\
         Generated from the documentation header of each element's source file by\n\
         `crates/elements/tests/element_docs.rs` (`UPDATE_DOCS=1 cargo test -p rclick-elements --test element_docs`).\n\
         Do not edit by hand.\n\n",
    );
    let mut by_domain: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (class, (domain, _)) in docs {
        by_domain.entry(domain.as_str()).or_default().push(class);
    }
    for (domain, classes) in &by_domain {
        out.push_str(&format!(
            "- **{domain}**: {}\n",
            classes
                .iter()
                .map(|c| format!("[{c}](#{})", c.to_lowercase()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for (class, (domain, body)) in docs {
        out.push_str(&format!("\n## {class}\n\n*{domain}*\n\n{body}\n"));
    }
    out
}

#[test]
fn element_reference_is_current_and_complete() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = documented(&root.join("src"));
    let reg = rclick_elements::registry();
    let missing: Vec<&str> = reg.names().filter(|n| !docs.contains_key(*n)).collect();
    assert!(
        missing.is_empty(),
        "registered classes without a documented element file: {missing:?}"
    );
    for (class, (_, body)) in &docs {
        for section in [
            "## Synopsis",
            "## Ports and processing",
            "## Description",
            "## Example",
        ] {
            assert!(
                body.contains(&format!("#{section}")),
                "{class}: documentation lacks '{section}'"
            );
        }
    }
    let text = render(&docs);
    let path = root.join("../../docs/elements.md");
    if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &text).expect("write docs/elements.md");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(current == text, "docs/elements.md is stale: run UPDATE_DOCS=1 cargo test -p rclick-elements --test element_docs");
}
