//! The differential test: every `tests/diff/cases/*.case` is run under
//! rclick (as `click`) and under the reference Click 2.1, and the outputs
//! the case names are compared (format: tests/diff/README.md).
//!
//! Without the reference binary (`../shared/reference/click/bin/click`
//! from the repository root, or env `RCLICK_REFERENCE_CLICK`), it says so
//! and still checks that every case parses, that rclick runs each without
//! crashing or timing out, and each `%click-wrong` expectation.
//!
//! `DIFF_CASE=substring cargo test -p rclick --test differential` runs
//! the matching cases verbosely (commands and both drivers' output).

mod difftest;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use difftest::case::{self, Case};
use difftest::frames;
use difftest::run::{judge, judge_alone, run_driver, Outcome};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference_click() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("RCLICK_REFERENCE_CLICK") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "RCLICK_REFERENCE_CLICK={} is not a file",
                p.display()
            ))
        };
    }
    let p = repo_root().join("../shared/reference/click/bin/click");
    if p.is_file() {
        Ok(p.canonicalize().unwrap_or(p))
    } else {
        Err(format!(
            "the reference Click is absent ({}; set RCLICK_REFERENCE_CLICK to its path)",
            p.display()
        ))
    }
}

fn case_files() -> Vec<PathBuf> {
    let dir = repo_root().join("tests/diff/cases");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    v.sort();
    v
}

fn load(path: &Path) -> Result<Case, String> {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let src = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    case::parse(&name, &src).map_err(|e| format!("{}:{e}", path.display()))
}

fn all_cases() -> (Vec<Case>, Vec<String>) {
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for p in case_files() {
        match load(&p) {
            Ok(c) => ok.push(c),
            Err(e) => bad.push(e),
        }
    }
    (ok, bad)
}

/// A temp dir holding `bin/click` -> the freshly built rclick.
fn scratch() -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("rclick-diff-{}", std::process::id()));
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("click");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rclick"), &link).unwrap();
    (root, link)
}

fn show(who: &str, o: &Outcome) -> String {
    format!(
        "--- {who}: {}\n    status {}\n    stdout:\n{}    stderr:\n{}",
        o.command,
        o.status,
        indent(&o.stdout),
        indent(&o.stderr)
    )
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("      | {l}\n")).collect()
}

#[test]
fn differential() {
    let filter = std::env::var("DIFF_CASE").ok().filter(|s| !s.is_empty());
    let verbose = filter.is_some();
    let (cases, bad) = all_cases();
    let mut failures: Vec<String> = bad
        .iter()
        .map(|e| format!("case does not parse: {e}"))
        .collect();
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| filter.as_ref().is_none_or(|f| c.name.contains(f.as_str())))
        .collect();
    let reference = reference_click();
    match &reference {
        Ok(p) => println!(
            "differential: {} cases against {}",
            cases.len(),
            p.display()
        ),
        Err(why) => {
            println!(
                "SKIP PART: differential: comparing with Click: {why}; checking only that the {} cases parse and rclick runs them",
                cases.len()
            );
        }
    }
    let (root, rclick) = scratch();
    let queue = Mutex::new(cases.iter().collect::<Vec<_>>());
    let results: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some(case) = queue.lock().unwrap().pop() else {
                    break;
                };
                let dir = root.join(&case.name);
                let mut fails = Vec::new();
                let mut log = String::new();
                match run_driver(case, &rclick, &dir.join("rclick")) {
                    Err(e) => fails.push(format!("cannot run rclick: {e}")),
                    Ok(r) => match &reference {
                        Err(_) => {
                            log = show("rclick", &r);
                            fails = judge_alone(case, &r);
                        }
                        Ok(click) => match run_driver(case, click, &dir.join("click")) {
                            Err(e) => fails.push(format!("cannot run Click: {e}")),
                            Ok(c) => {
                                log = format!("{}\n{}", show("rclick", &r), show("click", &c));
                                fails = judge(case, &r, &c);
                            }
                        },
                    },
                }
                if verbose {
                    println!("=== {} ===\n{}\n{log}", case.name, case.info.trim_end());
                    if fails.is_empty() {
                        println!("ok {}", case.name);
                    }
                }
                if !fails.is_empty() {
                    fails.push(log);
                } else if !verbose {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                results.lock().unwrap().push((case.name.clone(), fails));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort();
    let mut failed = 0;
    for (name, fails) in &results {
        if fails.is_empty() {
            continue;
        }
        failed += 1;
        let mut msg = format!("FAIL {name}:");
        for f in fails {
            msg.push_str("\n  ");
            msg.push_str(&f.replace('\n', "\n  "));
        }
        failures.push(msg);
    }
    println!(
        "differential: {} cases, {} passed, {} failed{}",
        results.len(),
        results.len() - failed,
        failed,
        if reference.is_err() {
            " (rclick alone: reference absent)"
        } else {
            ""
        }
    );
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&root);
    } else {
        for f in &failures {
            println!("{f}\n");
        }
        panic!(
            "{} differential failures (outputs kept in {})",
            failures.len(),
            root.display()
        );
    }
}

/// Words of a configuration that could name element classes (comments
/// removed).
fn config_words(config: &str) -> BTreeSet<String> {
    let mut s = String::new();
    let mut rest = config;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap();
            s.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '@'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn class_coverage() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rclick"))
        .args(["-q", "-e", "", "-h", "classes"])
        .output()
        .expect("run rclick -h classes");
    assert!(out.status.success(), "rclick -h classes failed");
    let classes: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(classes.len() > 10, "too few classes: {classes:?}");
    let exempt_path = repo_root().join("tests/diff/exempt.txt");
    let exempt_src = std::fs::read_to_string(&exempt_path).unwrap_or_default();
    let mut exempt = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    for (i, line) in exempt_src.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (class, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if reason.trim().is_empty() {
            problems.push(format!("exempt.txt:{}: {class} has no reason", i + 1));
        }
        if !classes.iter().any(|c| c == class) {
            problems.push(format!(
                "exempt.txt:{}: {class} is not an rclick class",
                i + 1
            ));
        }
        exempt.insert(class.to_string(), reason.trim().to_string());
    }
    let (cases, bad) = all_cases();
    assert!(bad.is_empty(), "cases that do not parse: {bad:#?}");
    let mut used = BTreeSet::new();
    for c in &cases {
        used.extend(config_words(&c.config));
        for (_, body) in &c.files {
            // element classes in files read by the configuration (rare)
            if body.contains("::") {
                used.extend(config_words(body));
            }
        }
    }
    let (mut covered, mut uncovered) = (0, Vec::new());
    for c in &classes {
        if used.contains(c) {
            covered += 1;
            if exempt.contains_key(c) {
                problems.push(format!(
                    "{c} is exempt but used by a case: drop it from exempt.txt"
                ));
            }
        } else if !exempt.contains_key(c) {
            uncovered.push(c.clone());
        }
    }
    println!(
        "class coverage: {covered} covered by cases, {} exempt, {} total",
        exempt.len(),
        classes.len()
    );
    for (c, why) in &exempt {
        println!("  exempt {c}: {why}");
    }
    for c in &uncovered {
        problems.push(format!(
            "{c} is used by no case and not in tests/diff/exempt.txt"
        ));
    }
    assert!(
        problems.is_empty(),
        "class coverage:\n  {}",
        problems.join("\n  ")
    );
}

/// The generator's bytes against hand-computed frames.
#[test]
fn frame_language() {
    let f = frames::parse_frame(
        "time=1.5 ether src=00:01:02:03:04:05 dst=ff:ff:ff:ff:ff:ff / ipv4 src=10.0.0.1 dst=10.0.0.2 id=7 / udp sport=1 dport=2 / data \"ab\"",
    )
    .unwrap();
    assert_eq!(f.time, Some((1, 500000)));
    let b = frames::encode(&f).unwrap();
    assert_eq!(b.len(), 14 + 20 + 8 + 2);
    assert_eq!(&b[0..6], &[0xff; 6]);
    assert_eq!(&b[12..14], &[0x08, 0x00]);
    assert_eq!(&b[14..16], &[0x45, 0x00]);
    assert_eq!(&b[16..18], &[0, 30]); // total length
    assert_eq!(b[23], 17); // protocol
                           // A valid IP header sums to 0xffff; so does UDP with its pseudo-header.
    assert_eq!(frames::csum_fold(frames::csum_add(0, &b[14..34])), 0);
    let mut ps = frames::csum_add(0, &b[26..34]);
    ps += 17 + 10;
    assert_eq!(frames::csum_fold(frames::csum_add(ps, &b[34..])), 0);
    assert_eq!(&b[38..40], &[0, 10]); // UDP length
    assert_eq!(&b[42..], b"ab");
    // Given fields win; trunc and repeat shape the records.
    let recs = frames::records(&[(
        1,
        "repeat=2 trunc=20 ether / ipv4 len=99 csum=0x1234 ttl=1 / zeros 4".to_string(),
    )])
    .unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(
        (recs[0].sec, recs[0].nsec, recs[1].nsec),
        (1000, 0, 1_000_000)
    );
    assert_eq!((recs[0].data.len(), recs[0].wire_len), (20, 38));
    let full = frames::encode(
        &frames::parse_frame("ether / ipv4 len=99 csum=0x1234 ttl=1 / zeros 4").unwrap(),
    )
    .unwrap();
    assert_eq!(&full[16..18], &[0, 99]);
    assert_eq!(&full[24..26], &[0x12, 0x34]);
    // TCP flags and data offset; an ICMP echo checksum.
    let t =
        frames::encode(&frames::parse_frame("ipv4 / tcp flags=SA opts=020405b4").unwrap()).unwrap();
    assert_eq!((t[32] >> 4, t[33]), (6, 0x12));
    let i = frames::encode(&frames::parse_frame("ipv4 / icmp type=8 id=1 seq=2 / data x").unwrap())
        .unwrap();
    assert_eq!(frames::csum_fold(frames::csum_add(0, &i[20..])), 0);
    // Errors are reported.
    assert!(frames::parse_frame("ether / bogus x=1").is_err());
    assert!(frames::parse_frame("ipv4 ttl=300").is_err());
    assert!(frames::parse_frame("udp nope=1").is_err());
    // A pcap round trip.
    let p = frames::read_pcap(&frames::pcap_bytes(101, 2000, &recs)).unwrap();
    assert_eq!((p.linktype, p.snaplen, p.records), (101, 2000, recs));
}

#[test]
fn case_parser() {
    let src = "## comment\n%info\nchecks x\n\n%config\nIdle -> Discard;\n## not config\n%args\n--simtime -h x.count\n%compare\nstatus stderr out.pcap\n%filter /tmp/\\S+ => TMP\n%pcap in.pcap linktype=raw\nipv4 / udp \\\n  / data \"a b\"\n%file f.txt\nline\n%click-wrong out.pcap\n%why\nClick crashes\n%expect out.pcap linktype=raw\nipv4 / udp\n";
    let c = case::parse("t", src).unwrap();
    assert_eq!(c.config, "Idle -> Discard;\n");
    assert_eq!(c.args, ["--simtime", "-h", "x.count"]);
    assert_eq!(c.compare, ["status", "stderr", "out.pcap"]);
    assert_eq!(c.pcaps[0].linktype, 101);
    assert_eq!(c.pcaps[0].frames.len(), 1);
    assert_eq!(c.files, [("f.txt".to_string(), "line\n".to_string())]);
    assert_eq!(c.click_wrong[0].why, "Click crashes");
    assert_eq!(c.filters.len(), 1);
    for bad in [
        "%config\nx\n",                                                // no info
        "%info\nx\n",                                                  // no config
        "%info\nx\n%config\ny\n%bogus\n",                              // unknown section
        "%info\nx\n%config\ny\n%pcap a.pcap\nether / nope\n",          // bad frame
        "%info\nx\n%config\ny\n%click-wrong stdout\n%expect stdout\n", // no why
        "%info\nx\n%config\ny\n%compare\nstatus\n%click-wrong stdout\n%why\nw\n%expect stdout\n", // not compared
        "text first\n%info\nx\n%config\ny\n",
    ] {
        assert!(case::parse("t", bad).is_err(), "should not parse: {bad:?}");
    }
}
