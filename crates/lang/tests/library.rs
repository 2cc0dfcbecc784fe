//! `require(...)`: packages, compact_config and library includes.
mod common;
use common::*;
use rclick_lang::{parse_router, ParseOptions};
use std::path::PathBuf;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rclick-lang-{}-{}", tag, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn packages_and_compact_config() {
    let opts = ParseOptions {
        provided: vec!["foo".into()],
        ..Default::default()
    };
    let o = parse_with(
        "require(package foo, compact_config); require(foo); Idle -> Discard;",
        &opts,
    );
    let s = o.spec.unwrap();
    assert_eq!(s.requirements, ["foo", "compact_config"]);
    assert_roundtrip(&s, &opts);
    assert!(rclick_lang::flatten(&s).starts_with("require(package foo, compact_config);\n\n"));
}

#[test]
fn library_included_once_beside_file_then_path() {
    let dir = tempdir("lib");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        dir.join("a.click"),
        "elementclass A { input -> Counter -> output }\nla :: Idle;\n",
    )
    .unwrap();
    std::fs::write(
        sub.join("b.click"),
        "require(library ../a.click);\nelementclass B { input -> Paint -> output }\n",
    )
    .unwrap();
    let main = dir.join("main.click");
    let text = "require(library a.click, library a.click);\nrequire(library b.click);\nla -> A -> B -> Discard;";
    std::fs::write(&main, text).unwrap();
    let opts = ParseOptions {
        library_path: vec![sub.clone()],
        ..Default::default()
    };
    let o = parse_router(text, main.to_str().unwrap(), &classes(), &opts);
    assert!(!o.has_errors(), "{}", render(&o.diagnostics));
    let s = o.spec.unwrap();
    assert_eq!(
        names(&s),
        ["la", "Discard@4", "A@2/Counter@1", "B@3/Paint@1"]
    );
    assert!(s.elements[0].landmark.file.ends_with("a.click"));
    assert!(s.requirements.is_empty());
    // Errors inside a library carry its name.
    std::fs::write(dir.join("bad.click"), "\n\nIdle -> nope;\n").unwrap();
    let o = parse_router(
        "require(library bad.click);",
        main.to_str().unwrap(),
        &classes(),
        &ParseOptions::default(),
    );
    let e: Vec<String> = o.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(e.len(), 1);
    assert!(
        e[0].ends_with("bad.click:3: undeclared element 'nope'"),
        "{e:?}"
    );
    let e = errors("elementclass X { require(library a.click); input -> output }");
    assert_eq!(
        e,
        ["test.click:1: 'require library' must be used at file scope"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
