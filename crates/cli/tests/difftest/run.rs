//! Running a case under one driver, and judging a case.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::case::{self, Case};
use super::compare::{file_diff, filtered_lines, records_diff, text_diff};
use super::frames::{pcap_bytes, read_pcap, records};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// What one driver did.
#[derive(Debug)]
pub struct Outcome {
    pub dir: PathBuf,
    pub command: String,
    /// Exit code, or `signal N`, or `timeout`.
    pub status: String,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub crashed: bool,
}

impl Outcome {
    pub fn output(&self, name: &str) -> Option<Vec<u8>> {
        match name {
            "status" => Some(format!("{}\n", self.status).into_bytes()),
            "stdout" => Some(self.stdout.clone().into_bytes()),
            "stderr" => Some(self.stderr.clone().into_bytes()),
            f => std::fs::read(self.dir.join(f)).ok(),
        }
    }
}

/// Writes the case's inputs into `dir` (fresh).
pub fn prepare(case: &Case, dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join("config.click"), &case.config).map_err(|e| e.to_string())?;
    for (name, body) in &case.files {
        std::fs::write(dir.join(name), body).map_err(|e| e.to_string())?;
    }
    for p in &case.pcaps {
        let recs = records(&p.frames)?;
        std::fs::write(dir.join(&p.name), pcap_bytes(p.linktype, p.snaplen, &recs))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Runs `driver ARGS config.click` in `dir` with stdin /dev/null.
pub fn run_driver(case: &Case, driver: &Path, dir: &Path) -> Result<Outcome, String> {
    prepare(case, dir)?;
    let out_path = dir.with_extension("stdout");
    let err_path = dir.with_extension("stderr");
    let stdout = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let stderr = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(driver);
    cmd.args(&case.args)
        .arg("config.click")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .env_remove("RCLICK_DIAGNOSTICS")
        .env_remove("CLICKPATH")
        .env("LC_ALL", "C");
    let command = format!(
        "cd {} && {}{} config.click",
        dir.display(),
        driver.display(),
        case.args
            .iter()
            .map(|a| if a.contains(' ') || a.is_empty() {
                format!(" '{a}'")
            } else {
                format!(" {a}")
            })
            .collect::<String>()
    );
    let mut child = cmd.spawn().map_err(|e| format!("{command}: {e}"))?;
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => break s,
            None if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                timed_out = true;
                break child.wait().map_err(|e| e.to_string())?;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let stdout =
        String::from_utf8_lossy(&std::fs::read(&out_path).unwrap_or_default()).into_owned();
    let stderr =
        String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
    let (status_s, signalled) = match (status.code(), status.signal()) {
        _ if timed_out => ("timeout".to_string(), false),
        (Some(c), _) => (c.to_string(), false),
        (None, Some(s)) => (format!("signal {s}"), true),
        (None, None) => ("unknown".to_string(), true),
    };
    let crashed = signalled || status.code() == Some(101) || stderr.contains("panicked at");
    Ok(Outcome {
        dir: dir.to_path_buf(),
        command,
        status: status_s,
        stdout,
        stderr,
        timed_out,
        crashed,
    })
}

/// Compares output `name` of rclick with its `%expect`ed value.
fn expect_diff(
    case: &Case,
    w: &case::ClickWrong,
    actual: Option<&[u8]>,
    who: &str,
) -> Option<String> {
    let Some(actual) = actual else {
        return Some(format!("{who} did not write {}", w.name));
    };
    if case::is_pcap_name(&w.name) {
        let want = match records(&case::expect_frames(w)) {
            Ok(r) => r,
            Err(e) => return Some(format!("%expect: {e}")),
        };
        let Some(p) = read_pcap(actual) else {
            return Some(format!("{who}'s {} is not a pcap file", w.name));
        };
        if p.linktype != w.expect_linktype {
            return Some(format!(
                "{who}'s {}: linktype {} vs expected {}",
                w.name, p.linktype, w.expect_linktype
            ));
        }
        records_diff(who, &p.records, "expected", &want)
    } else {
        let got = filtered_lines(&String::from_utf8_lossy(actual), &case.filters);
        let want: Vec<String> = w.expect.iter().map(|(_, l)| l.clone()).collect();
        text_diff(who, &got, "expected", &want)
    }
}

/// Judges rclick alone (no reference): no crash or timeout, and every
/// `%click-wrong` output equals its `%expect`.
pub fn judge_alone(case: &Case, r: &Outcome) -> Vec<String> {
    let mut fails = Vec::new();
    if r.timed_out {
        fails.push(format!("rclick timed out after {}s", TIMEOUT.as_secs()));
    }
    if r.crashed {
        fails.push(format!(
            "rclick crashed (status {}):\n{}",
            r.status,
            tail(&r.stderr)
        ));
    }
    for w in &case.click_wrong {
        if let Some(d) = expect_diff(case, w, r.output(&w.name).as_deref(), "rclick") {
            fails.push(format!(
                "{} (click-wrong; rclick must produce the %expect): {d}",
                w.name
            ));
        }
    }
    fails
}

/// Judges rclick against the reference Click.
pub fn judge(case: &Case, r: &Outcome, c: &Outcome) -> Vec<String> {
    let mut fails = judge_alone(case, r);
    if c.timed_out {
        fails.push(format!(
            "reference Click timed out after {}s",
            TIMEOUT.as_secs()
        ));
    }
    for name in &case.compare {
        let (ro, co) = (r.output(name), c.output(name));
        if let Some(w) = case.click_wrong.iter().find(|w| &w.name == name) {
            if expect_diff(case, w, co.as_deref(), "click").is_none() {
                fails.push(format!(
                    "{name}: marked %click-wrong but Click now produces the %expect (drop the %click-wrong)"
                ));
            }
            continue;
        }
        let d = match name.as_str() {
            "status" | "stdout" | "stderr" => {
                let a = filtered_lines(
                    &String::from_utf8_lossy(&ro.unwrap_or_default()),
                    &case.filters,
                );
                let b = filtered_lines(
                    &String::from_utf8_lossy(&co.unwrap_or_default()),
                    &case.filters,
                );
                text_diff("rclick", &a, "click", &b)
            }
            _ => file_diff(
                "rclick",
                ro.as_deref(),
                "click",
                co.as_deref(),
                &case.filters,
            ),
        };
        if let Some(d) = d {
            fails.push(format!("{name} differs: {d}"));
        }
    }
    fails
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
