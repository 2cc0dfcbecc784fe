//! `clicktest`: runs tests written in Click's `.clicktest` format.
//!
//! Each test runs in a fresh temporary directory: its `%file` sections are
//! written there, `%require` (if any) decides whether it runs at all, and
//! `%script` runs under `/bin/sh -e` in its own process group so a timeout
//! can kill everything it started. Outputs are then checked against the
//! `%expect*` sections by the library's comparison engine.

use clap::Parser;
use clicktest::{check_output, CheckError, Expect, Ignore, Test};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Write as _};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs .clicktest files (Click's testie format).
#[derive(Parser, Debug)]
#[command(name = "clicktest")]
struct Cli {
    /// Test files, or directories searched recursively for *.clicktest
    /// files. Arguments of the form VAR=VALUE set variables like -v.
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    paths: Vec<String>,

    /// Run N tests in parallel (at most 64).
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 1)]
    jobs: usize,

    /// Prepend DIR to PATH for the test scripts (repeatable).
    #[arg(long = "path", value_name = "DIR")]
    path: Vec<PathBuf>,

    /// Print only failures and the summary.
    #[arg(short = 'q', long)]
    quiet: bool,

    /// On failure, also print the full expected and actual outputs.
    #[arg(short = 'V', long)]
    verbose: bool,

    /// Keep each test's temporary directory and print where it is.
    #[arg(long)]
    preserve_temporaries: bool,

    /// Set environment variable VAR to VALUE for the scripts (repeatable).
    #[arg(short = 'v', long = "var", value_name = "VAR=VALUE")]
    vars: Vec<String>,

    /// Per-test timeout in seconds.
    #[arg(long, value_name = "S", default_value_t = 45.0)]
    timeout: f64,
}

/// Settings every test run shares.
struct Config {
    path_env: OsString,
    vars: Vec<(String, String)>,
    timeout: Duration,
    verbose: bool,
    quiet: bool,
    preserve: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass,
    Fail,
    Skip,
}

/// What one test printed and how it ended; collected per test so parallel
/// runs still print in file order.
struct Report {
    status: Status,
    text: String,
}

/// One unit of work: a parsed test, or a file that could not be read or
/// parsed (which counts as a failure).
enum Job {
    Test(Box<Test>),
    Broken {
        name: String,
        /// Full diagnostic line, `file:line: what`.
        message: String,
    },
}

fn is_var_setting(arg: &str) -> Option<(String, String)> {
    let (name, value) = arg.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

fn is_test_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("clicktest" | "testie")
    )
}

fn collect_dir(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_dir(&p, out)?;
        } else if is_test_file(&p) {
            out.push(p);
        }
    }
    Ok(())
}

fn load_jobs(paths: &[String]) -> Vec<Job> {
    let mut files: Vec<Result<PathBuf, Job>> = Vec::new();
    for arg in paths {
        let p = PathBuf::from(arg);
        if p.is_dir() {
            let mut found = Vec::new();
            match collect_dir(&p, &mut found) {
                Ok(()) => files.extend(found.into_iter().map(Ok)),
                Err(e) => files.push(Err(Job::Broken {
                    name: arg.clone(),
                    message: format!("{arg}: {e}"),
                })),
            }
        } else {
            files.push(Ok(p));
        }
    }

    let mut jobs = Vec::new();
    for f in files {
        let path = match f {
            Ok(p) => p,
            Err(job) => {
                jobs.push(job);
                continue;
            }
        };
        let name = path.display().to_string();
        match fs::read(&path) {
            Err(e) => jobs.push(Job::Broken {
                message: format!("{name}: {e}"),
                name,
            }),
            Ok(data) => match clicktest::parse(&name, &data) {
                Ok(tests) => jobs.extend(tests.into_iter().map(|t| Job::Test(Box::new(t)))),
                Err(e) => jobs.push(Job::Broken {
                    message: format!("{name}:{}: {}", e.line, e.message),
                    name,
                }),
            },
        }
    }
    jobs
}

enum RunResult {
    Exited(ExitStatus),
    TimedOut,
}

/// Process groups of scripts currently running, so an interrupted
/// clicktest can take them down too: they are in their own groups, so a
/// terminal's Ctrl-C does not reach them. Fixed-size atomics because a
/// signal handler may neither lock nor allocate.
static ACTIVE_GROUPS: [AtomicI32; MAX_JOBS] = [const { AtomicI32::new(0) }; MAX_JOBS];

/// Upper bound on `-j`, the number of slots in `ACTIVE_GROUPS`.
const MAX_JOBS: usize = 64;

fn register_group(pgid: i32) -> Option<usize> {
    ACTIVE_GROUPS.iter().position(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

extern "C" fn on_fatal_signal(sig: libc::c_int) {
    for slot in &ACTIVE_GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            kill_group(pgid);
        }
    }
    // SAFETY: _exit is async-signal-safe; nothing else is touched here.
    unsafe { libc::_exit(128 + sig) }
}

fn install_signal_handlers() {
    let handler: extern "C" fn(libc::c_int) = on_fatal_signal;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only does async-signal-safe work (atomic
        // loads, kill, _exit).
        unsafe {
            libc::signal(sig, handler as libc::sighandler_t);
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid only sends a signal to that
    // process group; it touches no memory of ours.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Runs `./SCRIPT` with `/bin/sh -e` in `dir`, in a new process group,
/// enforcing the timeout. Leftover background processes of the group are
/// killed afterwards too, so they cannot disturb later tests.
fn run_shell(
    dir: &Path,
    script: &str,
    stdin: Stdio,
    stdout: Stdio,
    stderr: Stdio,
    cfg: &Config,
) -> io::Result<RunResult> {
    let mut child = Command::new("/bin/sh")
        .arg("-e")
        // "./" because sh would read a leading '+' as an option.
        .arg(format!("./{script}"))
        .current_dir(dir)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .env("PATH", &cfg.path_env)
        .envs(cfg.vars.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .spawn()?;
    let pgid = child.id() as i32;
    let slot = register_group(pgid);
    let result = wait_with_timeout(&mut child, pgid, cfg.timeout);
    if let Some(i) = slot {
        ACTIVE_GROUPS[i].store(0, Ordering::SeqCst);
    }
    result
}

fn wait_with_timeout(
    child: &mut std::process::Child,
    pgid: i32,
    timeout: Duration,
) -> io::Result<RunResult> {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            kill_group(pgid);
            return Ok(RunResult::Exited(status));
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(pgid);
            let _ = child.wait();
            return Ok(RunResult::TimedOut);
        }
        std::thread::sleep(delay.min(deadline - now));
        delay = (delay * 2).min(Duration::from_millis(50));
    }
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// Makes a line printable: control characters (other than tab) are escaped
/// so a stray `\r` or NUL cannot garble the terminal.
fn show(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn output_label(name: &str) -> String {
    match name {
        "stdout" => "standard output".into(),
        "stderr" => "standard error".into(),
        _ => format!("file {name}"),
    }
}

/// Appends `data` to `out` as a block, making sure it ends with a newline.
fn dump(out: &mut String, title: &str, data: &[u8]) {
    let _ = writeln!(out, "  --- {title} ---");
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = writeln!(out, "  | {}", show(line));
    }
    let _ = writeln!(out, "  ---");
}

fn stderr_excerpt(out: &mut String, prefix: &str, stderr: &[u8], verbose: bool) {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let keep = if verbose { lines.len() } else { 10 };
    if lines.len() > keep {
        let _ = writeln!(out, "{prefix}  ... ({} earlier lines)", lines.len() - keep);
    }
    for l in &lines[lines.len().saturating_sub(keep)..] {
        let _ = writeln!(out, "{prefix}  {}", show(l));
    }
}

fn run_test(test: &Test, cfg: &Config) -> Report {
    let mut text = String::new();
    let dir = match tempfile::Builder::new().prefix("clicktest-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(
                text,
                "{}: cannot create temporary directory: {e}",
                test.name
            );
            return Report {
                status: Status::Fail,
                text,
            };
        }
    };
    let status = match execute(test, dir.path(), cfg, &mut text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(text, "{}: internal error: {e}", test.name);
            Status::Fail
        }
    };
    if cfg.preserve {
        let kept = dir.keep();
        let _ = writeln!(
            text,
            "{}: temporaries preserved in {}",
            test.name,
            kept.display()
        );
    }
    Report { status, text }
}

fn write_input(dir: &Path, name: &str, data: &[u8]) -> io::Result<()> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, data)
}

fn execute(test: &Test, dir: &Path, cfg: &Config, text: &mut String) -> io::Result<Status> {
    let file = &test.file;

    if let Some(req) = &test.require {
        fs::write(dir.join("+require+"), &req.script)?;
        let err_path = dir.join("+require-stderr+");
        let result = run_shell(
            dir,
            "+require+",
            Stdio::null(),
            Stdio::null(),
            File::create(&err_path)?.into(),
            cfg,
        )?;
        let why = match result {
            RunResult::Exited(s) if s.success() => None,
            RunResult::Exited(s) => Some(describe_status(s)),
            RunResult::TimedOut => Some("timeout".into()),
        };
        if let Some(why) = why {
            if !req.quiet || cfg.verbose {
                let prefix = format!("{file}:{}:", req.line);
                let _ = writeln!(text, "{prefix} requirement failed ({why}); test skipped");
                let stderr = fs::read(&err_path).unwrap_or_default();
                stderr_excerpt(text, &prefix, &stderr, cfg.verbose);
            }
            return Ok(Status::Skip);
        }
    }

    for f in &test.files {
        write_input(dir, &f.name, &f.data)?;
    }
    fs::write(dir.join("+script+"), &test.script)?;

    let stdin: Stdio = if test.has_file("stdin") {
        File::open(dir.join("stdin"))?.into()
    } else {
        Stdio::null()
    };
    let result = run_shell(
        dir,
        "+script+",
        stdin,
        File::create(dir.join("stdout"))?.into(),
        File::create(dir.join("stderr"))?.into(),
        cfg,
    )?;
    let stdout = fs::read(dir.join("stdout")).unwrap_or_default();
    let stderr = fs::read(dir.join("stderr")).unwrap_or_default();

    let prefix = format!("{file}:{}:", test.script_line);
    match result {
        RunResult::TimedOut => {
            let _ = writeln!(
                text,
                "{prefix} script timed out after {} s; its process group was killed",
                cfg.timeout.as_secs_f64()
            );
            stderr_excerpt(text, &prefix, &stderr, cfg.verbose);
            if cfg.verbose {
                dump(text, "stdout", &stdout);
            }
            return Ok(Status::Fail);
        }
        RunResult::Exited(s) if !s.success() => {
            let _ = writeln!(text, "{prefix} script failed ({})", describe_status(s));
            stderr_excerpt(text, &prefix, &stderr, cfg.verbose);
            if cfg.verbose {
                dump(text, "stdout", &stdout);
            }
            return Ok(Status::Fail);
        }
        RunResult::Exited(_) => {}
    }

    let mut status = Status::Pass;
    for name in test.expected_names() {
        let expects: Vec<&Expect> = test.expects.iter().filter(|e| e.name == name).collect();
        let ignores: Vec<&Ignore> = test
            .ignores
            .iter()
            .filter(|i| i.target.is_none() || i.target.as_deref() == Some(name))
            .collect();
        let actual = match name {
            "stdout" => stdout.clone(),
            "stderr" => stderr.clone(),
            _ => match fs::read(dir.join(name)) {
                Ok(d) => d,
                Err(e) => {
                    let _ = writeln!(
                        text,
                        "{file}:{}: file {name} was not created by the script ({e})",
                        expects[0].line
                    );
                    status = Status::Fail;
                    continue;
                }
            },
        };
        match check_output(name, &expects, &ignores, &actual) {
            Ok(()) => {}
            Err(CheckError::BadPattern { line, message }) => {
                let _ = writeln!(text, "{file}:{line}: bad regular expression: {message}");
                status = Status::Fail;
            }
            Err(CheckError::Mismatch(m)) => {
                status = Status::Fail;
                let _ = writeln!(
                    text,
                    "{file}:{}: {} has unexpected value starting at line {}",
                    m.section_line,
                    output_label(name),
                    m.output_line
                );
                let at = format!(
                    "{file}:{}: {name}:{}:",
                    m.expected_line.unwrap_or(m.section_line),
                    m.output_line
                );
                let fmt = |s: &Option<String>| match s {
                    Some(s) => format!("'{}'", show(s)),
                    None => "<end of file>".into(),
                };
                let _ = writeln!(text, "{at} expected {}", fmt(&m.expected));
                let _ = writeln!(text, "{at} but got  {}", fmt(&m.actual));
                if cfg.verbose {
                    for e in &expects {
                        dump(
                            text,
                            &format!("expected {name} ({file}:{})", e.line),
                            &e.data,
                        );
                    }
                    dump(text, &format!("actual {name}"), &actual);
                }
            }
        }
    }
    if status == Status::Fail && cfg.verbose && !test.expects.iter().any(|e| e.name == "stderr") {
        dump(text, "stderr", &stderr);
    }
    Ok(status)
}

fn main() -> ExitCode {
    let cli = Cli::parse();

    let mut vars = Vec::new();
    for v in &cli.vars {
        match is_var_setting(v) {
            Some(kv) => vars.push(kv),
            None => {
                eprintln!("clicktest: bad variable setting '{v}' (want VAR=VALUE)");
                return ExitCode::from(2);
            }
        }
    }
    let mut paths = Vec::new();
    for p in &cli.paths {
        match is_var_setting(p) {
            Some(kv) if !Path::new(p).exists() => vars.push(kv),
            _ => paths.push(p.clone()),
        }
    }
    if !(cli.timeout > 0.0 && cli.timeout.is_finite()) {
        eprintln!("clicktest: --timeout must be a positive number of seconds");
        return ExitCode::from(2);
    }

    // Scripts run in their own temporary directories, so relative --path
    // entries must be made absolute here.
    let mut path_dirs: Vec<PathBuf> = Vec::new();
    for p in &cli.path {
        match std::path::absolute(p) {
            Ok(abs) => path_dirs.push(abs),
            Err(e) => {
                eprintln!("clicktest: --path {}: {e}", p.display());
                return ExitCode::from(2);
            }
        }
    }
    if let Some(old) = std::env::var_os("PATH") {
        path_dirs.extend(std::env::split_paths(&old));
    }
    let path_env = match std::env::join_paths(&path_dirs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("clicktest: bad --path: {e}");
            return ExitCode::from(2);
        }
    };

    let cfg = Config {
        path_env,
        vars,
        timeout: Duration::from_secs_f64(cli.timeout),
        verbose: cli.verbose,
        quiet: cli.quiet,
        preserve: cli.preserve_temporaries,
    };

    install_signal_handlers();
    let jobs = load_jobs(&paths);
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, String, Report)>();
    let stdout = io::stdout();

    std::thread::scope(|s| {
        for _ in 0..cli.jobs.clamp(1, jobs.len().clamp(1, MAX_JOBS)) {
            let tx = tx.clone();
            let (jobs, next, cfg) = (&jobs, &next, &cfg);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let (name, report) = match job {
                    Job::Test(t) => (t.name.clone(), run_test(t, cfg)),
                    Job::Broken { name, message } => (
                        name.clone(),
                        Report {
                            status: Status::Fail,
                            text: format!("{message}\n"),
                        },
                    ),
                };
                if tx.send((i, name, report)).is_err() {
                    break;
                }
            });
        }
        drop(tx);

        // Print in job order even when tests finish out of order.
        let mut pending = BTreeMap::new();
        let mut printed = 0;
        for (i, name, report) in rx {
            pending.insert(i, (name, report));
            while let Some((name, report)) = pending.remove(&printed) {
                printed += 1;
                let tag = match report.status {
                    Status::Pass => {
                        passed += 1;
                        "ok  "
                    }
                    Status::Fail => {
                        failed += 1;
                        "FAIL"
                    }
                    Status::Skip => {
                        skipped += 1;
                        "skip"
                    }
                };
                if cfg.quiet && report.status != Status::Fail {
                    continue;
                }
                let mut out = stdout.lock();
                let _ = writeln!(out, "{tag} {name}");
                let _ = out.write_all(report.text.as_bytes());
                let _ = out.flush();
            }
        }
    });

    let mut out = stdout.lock();
    let _ = writeln!(
        out,
        "{passed} successes, {failed} failures, {skipped} skipped"
    );
    let _ = writeln!(
        out,
        "clicktest: {passed} passed, {failed} failed, {skipped} skipped"
    );
    let _ = out.flush();
    if failed == 0 && passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
