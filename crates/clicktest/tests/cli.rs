//! End-to-end tests of the `clicktest` binary, using only sh, echo, cat and
//! printf inside the test scripts.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

struct Run {
    code: i32,
    stdout: String,
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_clicktest"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run clicktest");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn passing_test_passes() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "pass.clicktest",
        "%info\nsimple\n%script\necho hello\ncat stdin\necho warn >&2\n\
         %stdin\nline in\n%expect stdout\nhello\nline {{[a-z]+}}\n%expect stderr\nwarn\n",
    );
    let r = run_in(d.path(), &["pass.clicktest"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("ok   pass.clicktest"), "{}", r.stdout);
    assert!(r.stdout.contains("1 successes, 0 failures, 0 skipped"));
    assert_eq!(
        last_line(&r.stdout),
        "clicktest: 1 passed, 0 failed, 0 skipped"
    );
}

#[test]
fn mismatch_fails_with_location() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "bad.clicktest",
        "%script\nprintf 'a\\nb\\nc\\n'\n%stdout\na\nx\nc\n",
    );
    let r = run_in(d.path(), &["bad.clicktest"]);
    assert_eq!(r.code, 1);
    let o = &r.stdout;
    assert!(o.contains("FAIL bad.clicktest"), "{o}");
    assert!(
        o.contains("bad.clicktest:3: standard output has unexpected value starting at line 2"),
        "{o}"
    );
    assert!(o.contains("bad.clicktest:5: stdout:2: expected 'x'"), "{o}");
    assert!(o.contains("bad.clicktest:5: stdout:2: but got  'b'"), "{o}");
    // Full outputs only with -V.
    assert!(!o.contains("--- actual stdout ---"), "{o}");
    assert_eq!(last_line(o), "clicktest: 0 passed, 1 failed, 0 skipped");

    let r = run_in(d.path(), &["-V", "bad.clicktest"]);
    assert!(r.stdout.contains("--- actual stdout ---"), "{}", r.stdout);
    assert!(r.stdout.contains("  | b\n"), "{}", r.stdout);
}

#[test]
fn missing_output_reports_end_of_file() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "short.clicktest",
        "%script\necho a\n%stdout\na\nb\n",
    );
    let r = run_in(d.path(), &["short.clicktest"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("but got  <end of file>"), "{}", r.stdout);
}

#[test]
fn script_failure_fails_and_shows_stderr() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "fail.clicktest",
        "%script\necho before\necho 'something broke' >&2\nfalse\necho after\n",
    );
    let r = run_in(d.path(), &["fail.clicktest"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("fail.clicktest:1: script failed (exit status 1)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("something broke"), "{}", r.stdout);
}

#[test]
fn require_failure_skips() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "req.clicktest",
        "%require\necho no such tool >&2\nfalse\n%script\nfalse\n%eot\n\
         %require -q\nexit 3\n%script\nfalse\n%eot\n\
         %require\ntrue\n%script\necho ran\n%stdout\nran\n",
    );
    let r = run_in(d.path(), &["req.clicktest"]);
    let o = &r.stdout;
    assert_eq!(r.code, 0, "{o}");
    assert!(o.contains("skip req.clicktest\n"), "{o}");
    assert!(
        o.contains("req.clicktest:1: requirement failed (exit status 1); test skipped"),
        "{o}"
    );
    assert!(o.contains("no such tool"), "{o}");
    assert!(o.contains("skip req.clicktest<2>\n"), "{o}");
    // -q suppresses the explanation.
    assert!(!o.contains("exit status 3"), "{o}");
    assert!(o.contains("ok   req.clicktest<3>"), "{o}");
    assert!(o.contains("1 successes, 0 failures, 2 skipped"), "{o}");
    assert_eq!(last_line(o), "clicktest: 1 passed, 0 failed, 2 skipped");
}

#[test]
fn nothing_ran_is_not_success() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "s.clicktest",
        "%require -q\nfalse\n%script\ntrue\n",
    );
    let r = run_in(d.path(), &["s.clicktest"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        last_line(&r.stdout),
        "clicktest: 0 passed, 0 failed, 1 skipped"
    );
    fs::create_dir(d.path().join("empty")).unwrap();
    let r = run_in(d.path(), &["empty"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        last_line(&r.stdout),
        "clicktest: 0 passed, 0 failed, 0 skipped"
    );
}

#[test]
fn timeout_fails_and_kills_process_group() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("bg.pid");
    write(
        d.path(),
        "slow.clicktest",
        "%script\nsleep 30 &\necho $! > \"$PIDFILE\"\nsleep 30\n",
    );
    let start = std::time::Instant::now();
    let var = format!("PIDFILE={}", pidfile.display());
    let r = run_in(d.path(), &["--timeout", "1", "-v", &var, "slow.clicktest"]);
    assert!(start.elapsed().as_secs() < 20);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("script timed out after 1 s"),
        "{}",
        r.stdout
    );
    let pid = fs::read_to_string(&pidfile).unwrap();
    let proc_dir = format!("/proc/{}", pid.trim());
    // The background sleep was in the test's process group, so it must be
    // gone (allow a moment for the kernel to reap it).
    let mut alive = true;
    for _ in 0..50 {
        let state = fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
        // A zombie ("Z") waiting for init to reap it counts as dead.
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            alive = false;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive, "background process {} survived", pid.trim());
}

#[test]
fn directory_sorted_with_quiet_and_jobs() {
    let d = tempfile::tempdir().unwrap();
    let sub = d.path().join("suite");
    fs::create_dir_all(sub.join("nested")).unwrap();
    write(&sub, "b.clicktest", "%script\necho b\n%stdout\nb\n");
    write(&sub, "a.clicktest", "%script\necho a\n%stdout\na\n");
    write(&sub, "c.clicktest", "%script\necho c\n%stdout\nnot c\n");
    write(&sub, "notes.txt", "%script\nfalse\n");
    write(
        &sub.join("nested"),
        "d.clicktest",
        "%script\necho d\n%stdout\nd\n",
    );
    let r = run_in(d.path(), &["suite"]);
    let o = &r.stdout;
    let order: Vec<&str> = o
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("FAIL"))
        .collect();
    assert_eq!(
        order,
        [
            "ok   suite/a.clicktest",
            "ok   suite/b.clicktest",
            "FAIL suite/c.clicktest",
            "ok   suite/nested/d.clicktest"
        ],
        "{o}"
    );
    assert_eq!(r.code, 1);

    let r = run_in(d.path(), &["-q", "-j", "3", "suite"]);
    let o = &r.stdout;
    assert!(!o.contains("ok "), "{o}");
    assert!(o.contains("FAIL suite/c.clicktest"), "{o}");
    assert!(o.contains("3 successes, 1 failures, 0 skipped"), "{o}");
    assert_eq!(last_line(o), "clicktest: 3 passed, 1 failed, 0 skipped");
}

#[test]
fn parallel_output_keeps_order() {
    let d = tempfile::tempdir().unwrap();
    // The first test is the slowest, so without reordering it would print
    // last.
    write(
        d.path(),
        "1.clicktest",
        "%script\nsleep 1\necho 1\n%stdout\n1\n",
    );
    write(d.path(), "2.clicktest", "%script\necho 2\n%stdout\n2\n");
    write(d.path(), "3.clicktest", "%script\necho 3\n%stdout\n3\n");
    let r = run_in(
        d.path(),
        &["-j", "3", "1.clicktest", "2.clicktest", "3.clicktest"],
    );
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().take(3).collect();
    assert_eq!(
        lines,
        ["ok   1.clicktest", "ok   2.clicktest", "ok   3.clicktest"]
    );
}

#[test]
fn path_and_variables() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let tool = bin.join("mytool");
    fs::write(&tool, "#!/bin/sh\necho \"mytool $*\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();
    write(
        d.path(),
        "p.clicktest",
        "%script\nmytool x y\necho \"$GREETING $OTHER\"\n%stdout\nmytool x y\nhi there\n",
    );
    // A relative --path must still work from the test's own directory.
    let r = run_in(
        d.path(),
        &[
            "--path",
            "bin",
            "-v",
            "GREETING=hi",
            "p.clicktest",
            "OTHER=there",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn input_and_output_sections() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "%script\n\
         cat data > out1\n\
         cat -- pct\n\
         cat bin | od -An -tx1 | tr -s ' ' >&2\n\
         cat raw\n\
         printf 'x  \\n\\n'\n\
         echo 'DEBUG: noise 17'\n\
         printf 'exact\\n' > v.txt\n\
         printf 'Count: 42\\n' > x.txt\n\
         %file data\n\
         one\n\
         two\n\
         %file -d pct\n\
         .%not a section\n\
         %file -e bin\n\
         AAH/\n\
         %file +8 raw\n",
    );
    text.push_str("%raw\nab\n\n");
    text.push_str(
        "%expect out1\n\
         one\n\
         {{t.o}}\n\
         %expect stdout\n\
         \\%not a section\n\
         \\%raw\n\
         ab\n\
         x\n\
         %ignorex\n\
         DEBUG: .*\n\
         %expect -w stderr\n\
         00 01ff\n\
         %expectv v.txt\n\
         exact\n\
         %expectx x.txt\n\
         count: \\d+\n\
         %expectx -a x.txt\n\
         Count: \\d+\n",
    );
    write(d.path(), "io.clicktest", &text);
    let r = run_in(d.path(), &["io.clicktest"]);
    assert_eq!(r.code, 0, "{}", r.stdout);

    // Byte-exact %expectv catches a trailing blank that %expect forgives.
    write(
        d.path(),
        "v.clicktest",
        "%script\nprintf 'a \\n'\n%expectv\na\n",
    );
    let r = run_in(d.path(), &["v.clicktest"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("expected 'a'"), "{}", r.stdout);
    assert!(r.stdout.contains("but got  'a '"), "{}", r.stdout);
}

#[test]
fn missing_output_file_fails() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "m.clicktest",
        "%script\ntrue\n%expect result\nx\n",
    );
    let r = run_in(d.path(), &["m.clicktest"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("m.clicktest:3: file result was not created"),
        "{}",
        r.stdout
    );
}

#[test]
fn syntax_errors_fail() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "s.clicktest", "%script\ntrue\n%expcet\nx\n");
    write(d.path(), "ok.clicktest", "%script\ntrue\n");
    let r = run_in(d.path(), &["s.clicktest", "ok.clicktest", "nope.clicktest"]);
    let o = &r.stdout;
    assert_eq!(r.code, 1);
    assert!(
        o.contains("s.clicktest:3: unknown section '%expcet'"),
        "{o}"
    );
    assert!(o.contains("FAIL nope.clicktest"), "{o}");
    assert_eq!(last_line(o), "clicktest: 1 passed, 2 failed, 0 skipped");
}

#[test]
fn preserve_temporaries() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "k.clicktest", "%script\necho kept > marker\n");
    let r = run_in(d.path(), &["--preserve-temporaries", "k.clicktest"]);
    assert_eq!(r.code, 0);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("temporaries preserved in "))
        .expect("preserved line");
    let dir = line.rsplit("preserved in ").next().unwrap();
    let marker = Path::new(dir).join("marker");
    assert_eq!(fs::read_to_string(&marker).unwrap(), "kept\n");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn each_test_gets_a_fresh_directory() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "f.clicktest",
        "%script\ntest ! -e leftover\necho x > leftover\n%eot\n\
         %script\ntest ! -e leftover\necho x > leftover\n",
    );
    let r = run_in(d.path(), &["f.clicktest"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        last_line(&r.stdout),
        "clicktest: 2 passed, 0 failed, 0 skipped"
    );
}

#[test]
fn interrupt_kills_running_scripts() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("bg.pid");
    write(
        d.path(),
        "slow.clicktest",
        "%script\nsleep 30 &\necho $! > \"$PIDFILE\"\nwait\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_clicktest"))
        .args(["-v", &format!("PIDFILE={}", pidfile.display())])
        .arg("slow.clicktest")
        .current_dir(d.path())
        // A killed clicktest cannot remove its temporaries; keep them in
        // our own temporary directory.
        .env("TMPDIR", d.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut pid = String::new();
    for _ in 0..100 {
        pid = fs::read_to_string(&pidfile).unwrap_or_default();
        if pid.ends_with('\n') {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!pid.is_empty(), "script never started");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    let stat = format!("/proc/{}/stat", pid.trim());
    let mut gone = false;
    for _ in 0..50 {
        let state = fs::read_to_string(&stat).unwrap_or_default();
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            gone = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(gone, "background process {} survived", pid.trim());
}
