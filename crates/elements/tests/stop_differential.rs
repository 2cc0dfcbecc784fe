//! Issue 21: when a source with `STOP true` ends the run, how many packets
//! have gone past the Queue behind it. Click asks the driver to stop on the
//! source's run that finds no packet left, and stops when the task run
//! under way returns; the tasks that ran before then (an Unqueue, a pulling
//! Discard or ToDump) have moved what they move per run, and the rest stays
//! queued. So `d.count` depends on the source's BURST, on how many packets
//! the puller takes per run, and on LIMIT, and rclick must agree exactly.
//!
//! Each configuration runs in-process under rclick (simulated time, as
//! `--simtime`) and under the reference Click 2.1 with `--simtime`, and the
//! handlers `src.count`, `q.length` and `d.count` must read the same. Skips
//! with a printed reason if the reference Click is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use rclick_core::StopReason;
use rclick_elements::testing::{from_config, read};

#[path = "common/reference.rs"]
mod reference;
use reference::reference_click;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rclick-stop-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const HANDLERS: [&str; 3] = ["src.count", "q.length", "d.count"];

/// The handler values after an rclick run to the end.
fn ours(conf: &str) -> Vec<String> {
    let mut r = from_config(conf);
    assert_eq!(
        r.run(),
        StopReason::Stopped,
        "{conf}: did not stop by itself"
    );
    let v = HANDLERS
        .iter()
        .map(|h| read(&mut r, h).trim().to_string())
        .collect();
    r.cleanup();
    v
}

/// The handler values Click prints at exit (`-h` for each: `NAME:` then
/// the value, then a blank line).
fn theirs(click: &Path, conf: &str) -> Vec<String> {
    let mut cmd = Command::new(click);
    cmd.arg("--simtime").arg("-e").arg(conf);
    for h in HANDLERS {
        cmd.arg("-h").arg(h);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{conf}: Click failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    HANDLERS
        .iter()
        .map(|h| {
            let i = lines
                .iter()
                .position(|l| *l == format!("{h}:"))
                .unwrap_or_else(|| panic!("{conf}: no {h} in Click's output:\n{text}"));
            lines.get(i + 1).unwrap_or(&"").trim().to_string()
        })
        .collect()
}

/// The element chains between `src :: InfiniteSource(...)` and the end,
/// each holding `q :: Queue` and the final sink `d`.
fn tails() -> Vec<String> {
    let dump = tmp("out.pcap");
    let sum = tmp("out.txt");
    let mut v = Vec::new();
    for ub in [1, 4, 8, 32, 64] {
        v.push(format!("q :: Queue -> Unqueue(BURST {ub}) -> d :: Discard"));
        v.push(format!(
            "q :: Queue(16) -> Unqueue(BURST {ub}) -> Counter -> d :: Discard"
        ));
        v.push(format!(
            "q :: Queue -> Unqueue(BURST {ub}) -> d :: ToDump({})",
            dump.display()
        ));
    }
    v.push("q :: Queue -> d :: Discard".into());
    v.push("q :: Queue -> Unqueue(BURST 8) -> Queue -> Unqueue(BURST 2) -> d :: Discard".into());
    v.push("q :: Queue -> RatedUnqueue(RATE 1000000000) -> d :: Discard".into());
    v.push("q :: Queue -> RatedUnqueue(RATE 1000) -> d :: Discard".into());
    // Writers with a pull input drain it with a task, one packet per run.
    v.push(format!("q :: Queue -> d :: ToDump({})", dump.display()));
    // (Click's ToIPSummaryDump has no `count` handler: a Counter counts
    // what it pulls.)
    v.push(format!(
        "q :: Queue -> d :: Counter -> ToIPSummaryDump({}, CONTENTS ip_src)",
        sum.display()
    ));
    v
}

#[test]
fn stop_behind_queue_matches_click() {
    let click = match reference_click() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIP: {why}");
            return;
        }
    };
    let mut failures = Vec::new();
    let mut compared = 0;
    for tail in tails() {
        for limit in [5, 10, 1000, 1001] {
            for burst in [1, 4, 8, 32] {
                let conf = format!(
                    "src :: InfiniteSource(LIMIT {limit}, STOP true, BURST {burst}) -> {tail};"
                );
                let (a, b) = (ours(&conf), theirs(&click, &conf));
                compared += 1;
                if a != b {
                    failures.push(format!("{conf}\n  rclick {a:?}\n  Click  {b:?}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} configurations differ from Click:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{compared} configurations agree with Click");
}

/// The same without the reference binary: the counts Click 2.1 was seen
/// to give (so a change to the driver's stop shows here too).
#[test]
fn stop_behind_queue_known_counts() {
    let cases = [
        // Unqueue takes 1 a run: one per source run of 8 gets through.
        (
            "q :: Queue -> Unqueue -> d :: Discard",
            1000,
            8,
            ["1000", "875", "125"],
        ),
        (
            "q :: Queue -> Unqueue(BURST 8) -> d :: Discard",
            1000,
            8,
            ["1000", "0", "1000"],
        ),
        (
            "q :: Queue -> Unqueue(BURST 8) -> d :: Discard",
            1000,
            32,
            ["1000", "744", "256"],
        ),
        (
            "q :: Queue -> Unqueue(BURST 32) -> d :: Discard",
            1001,
            32,
            ["1001", "0", "1001"],
        ),
        (
            "q :: Queue -> d :: Discard",
            1001,
            8,
            ["1001", "875", "126"],
        ),
    ];
    for (tail, limit, burst, want) in cases {
        let conf =
            format!("src :: InfiniteSource(LIMIT {limit}, STOP true, BURST {burst}) -> {tail};");
        assert_eq!(ours(&conf), want, "{conf}");
    }
    // A pulling ToDump takes one packet a run, as Click's.
    let conf = format!(
        "src :: InfiniteSource(LIMIT 1001, STOP true, BURST 8) -> q :: Queue -> d :: ToDump({});",
        tmp("known.pcap").display()
    );
    assert_eq!(ours(&conf), ["1001", "875", "126"], "{conf}");
}
