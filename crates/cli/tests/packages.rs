//! Element packages (docs/packages.md): examples/package-hello is built
//! with cargo (the toolchain running this test, into target/packages, so
//! its dependencies build once), then loaded by the real `rclick` binary:
//! by `require(package "hello")` with `-C DIR` and with CLICKPATH, and at
//! run time over the control socket (`load_package`), followed by hot
//! swaps that use its classes, the plugin control path
//! (`create_instance`, `free_instance`) and `unload_package`, refused
//! while an element of the package exists. A package built for another
//! rclick (a fixture whose header carries an altered fingerprint) is
//! refused with the field that differs; packets made in the package are
//! freed by the router and the reverse.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const RCLICK: &str = env!("CARGO_BIN_EXE_rclick");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where packages are built: `target/packages` of the workspace (or of
/// CARGO_TARGET_DIR), kept between runs.
fn target_dir() -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    base.join("packages")
}

/// The profile of this test (and of the rclick binary it runs): packages
/// are built in it, so that their dependencies are built once per profile
/// (a release package would load into a debug rclick too).
fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Builds the crate in `dir` with cargo; returns the directory holding
/// its library.
fn cargo_build(dir: &Path, env: &[(&str, &str)]) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir());
    if profile() == "release" {
        cmd.arg("--release");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t0 = Instant::now();
    let out = cmd.output().expect("run cargo");
    eprintln!(
        "built {} in {:.1} s",
        dir.display(),
        t0.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "cargo build of {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir().join(profile())
}

/// The hello package's build directory (built once per test process).
fn hello() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = cargo_build(&root().join("examples/package-hello"), &[]);
        assert!(
            d.join("libhello.so").is_file(),
            "no libhello.so in {}",
            d.display()
        );
        d
    })
}

fn rclick(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(RCLICK);
    cmd.args(args).env_remove("CLICKPATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run rclick")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const COUNT_CONF: &str = "require(package \"hello\");
    InfiniteSource(LIMIT 7, STOP true) -> c :: HelloCounter -> Discard;";

#[test]
fn require_loads_from_clickpath_flag_and_environment() {
    let dir = hello().to_str().unwrap().to_string();
    let out = rclick(&["-C", &dir, "-e", COUNT_CONF, "-h", "c.count"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "7");
    // CLICKPATH, with a directory before it that has no package.
    let path = format!("/nonexistent:{dir}");
    let out = rclick(
        &["-e", COUNT_CONF, "-h", "c.count", "-h", "packages"],
        &[("CLICKPATH", &path)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("c.count:\n7\n"), "{stdout}");
    assert!(
        stdout.contains("hello\t") && stdout.contains("HelloCounter HelloTee"),
        "{stdout}"
    );
    // `-C` replaces CLICKPATH, as in Click.
    let out = rclick(
        &["-C", "/nonexistent", "-q", "-e", COUNT_CONF],
        &[("CLICKPATH", &dir)],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("can't find package 'hello'"), "{err}");
    assert!(err.contains("requirement 'hello' not available"), "{err}");
    // Without a path: not available, as in Click.
    let out = rclick(&["-q", "-e", COUNT_CONF], &[]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("requirement 'hello' not available"));
}

/// A file that is a link to a package already loaded is that package:
/// `require(package "alias")` through `libalias.so -> libhello.so` is
/// refused for naming another package, whether or not hello came first.
#[test]
fn a_link_to_a_loaded_package_does_not_provide_another_name() {
    let dir = hello().to_str().unwrap().to_string();
    let links = target_dir().join(format!("alias-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&links);
    std::fs::create_dir_all(&links).unwrap();
    std::os::unix::fs::symlink(
        Path::new(&dir).join("libhello.so"),
        links.join("libalias.so"),
    )
    .unwrap();
    let path = format!("{}:{dir}", links.display());
    for conf in [
        "require(package \"hello\"); require(package \"alias\"); Idle -> HelloCounter -> Discard;",
        "require(package \"alias\"); Idle -> HelloCounter -> Discard;",
    ] {
        let out = rclick(&["-C", &path, "-q", "-e", conf], &[]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{conf}: accepted");
        assert!(
            err.contains("is package 'hello', not 'alias'"),
            "{conf}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&links);
}

#[test]
fn a_package_built_for_another_rclick_is_refused() {
    let out = rclick(
        &["-q", "-e", "Idle -> Discard", "-h", "package_fingerprint"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ours = text(&out.stdout).trim().to_string();
    assert!(
        ours.contains("rustc=") && ours.contains("core-src="),
        "{ours}"
    );
    // This rclick's fingerprint with one field changed: another compiler,
    // then other kit sources.
    for (field, value) in [
        ("rustc", "1.0.0 0000000 LLVM"),
        ("core-src", "0123456789abcdef"),
    ] {
        let theirs: Vec<String> = ours
            .split("; ")
            .map(|f| {
                if f.starts_with(&format!("{field}=")) {
                    format!("{field}={value}")
                } else {
                    f.to_string()
                }
            })
            .collect();
        let theirs = theirs.join("; ");
        let dir = cargo_build(
            &root().join("crates/cli/tests/packages/mismatch"),
            &[("RCLICK_TEST_FINGERPRINT", &theirs)],
        );
        let lib = dir.join("libmismatch.so");
        let conf = "require(package \"mismatch\"); Idle -> Discard;";
        let out = rclick(&["-q", "-C", dir.to_str().unwrap(), "-e", conf], &[]);
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "package '{}' was built for another rclick",
                lib.canonicalize().unwrap().display()
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!("{field}: package has '{value}', rclick has '")),
            "{err}"
        );
        assert_eq!(
            err.matches(": package has").count(),
            1,
            "only the differing field is named: {err}"
        );
        assert!(
            err.contains("requirement 'mismatch' not available"),
            "{err}"
        );
    }
}

/// A router in the background with a Unix control socket.
struct Running {
    child: Child,
    sock: PathBuf,
}

impl Running {
    fn start(args: &[&str], conf: &str, tag: &str) -> Running {
        Running::start_with(&[], args, conf, tag)
    }

    /// As [`Running::start`], with `rclick` run by `launcher` (for example
    /// `ip netns exec NS`).
    fn start_with(launcher: &[&str], args: &[&str], conf: &str, tag: &str) -> Running {
        let sock =
            std::env::temp_dir().join(format!("rclick-pkg-{tag}-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&sock);
        let mut cmd = match launcher.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(RCLICK);
                c
            }
            None => Command::new(RCLICK),
        };
        let mut child = cmd
            .args(args)
            .arg("-u")
            .arg(&sock)
            .arg("-e")
            .arg(conf)
            .env_remove("CLICKPATH")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rclick");
        // The socket file appears at bind, before the router listens:
        // wait until a connection is accepted.
        let t0 = Instant::now();
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("rclick exited before its control socket was up: {status}");
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "no control socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        Running { child, sock }
    }

    /// `rclick call SOCK HANDLER [VALUE]`: Ok(stdout) or Err(stderr).
    fn call(&self, handler: &str, value: Option<&str>) -> Result<String, String> {
        let mut cmd = Command::new(RCLICK);
        cmd.arg("call").arg(&self.sock).arg(handler);
        if let Some(v) = value {
            cmd.arg(v);
        }
        let out = cmd.output().expect("rclick call");
        if out.status.success() {
            Ok(text(&out.stdout))
        } else {
            Err(text(&out.stderr))
        }
    }

    fn read_u64(&self, handler: &str) -> u64 {
        let v = self
            .call(handler, None)
            .unwrap_or_else(|e| panic!("{handler}: {e}"));
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{handler}: '{v}'"))
    }

    /// Waits until `handler` reads more than `n`.
    fn wait_above(&self, handler: &str, n: u64) -> u64 {
        let t0 = Instant::now();
        loop {
            if let Ok(v) = self.call(handler, None) {
                if let Ok(x) = v.trim().parse::<u64>() {
                    if x > n {
                        return x;
                    }
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "{handler} stayed at or below {n}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.sock);
    }
}

#[test]
fn load_at_run_time_hot_swap_create_free_and_unload() {
    let dir = hello().to_str().unwrap().to_string();
    let conf = "src :: RatedSource(RATE 400) -> c0 :: Counter -> Discard;";
    let r = Running::start(&["-R", "-C", &dir], conf, "run");
    assert_eq!(r.call("packages", None).unwrap().trim(), "");
    let t0 = Instant::now();
    r.call("load_package", Some("hello")).unwrap();
    eprintln!("load_package over the control socket: {:?}", t0.elapsed());
    let listed = r.call("packages", None).unwrap();
    assert!(
        listed.starts_with("hello\t") && listed.contains("HelloCounter"),
        "{listed}"
    );
    // Loading again is a no-op.
    r.call("load_package", Some("hello")).unwrap();
    // A hot swap to a configuration using the package's class; c0 keeps
    // its count.
    let before = r.wait_above("c0.count", 10);
    let swapped = "src :: RatedSource(RATE 400) -> c0 :: Counter -> h :: HelloCounter -> Discard;";
    r.call("hotconfig", Some(swapped)).unwrap();
    r.wait_above("h.count", 5);
    assert!(r.read_u64("c0.count") >= before, "c0 kept its count");
    // Unloading is refused while h exists.
    let err = r.call("unload_package", Some("hello")).unwrap_err();
    assert!(
        err.contains("package 'hello' is in use by h :: HelloCounter"),
        "{err}"
    );
    // The control path: an instance spliced after c0, state kept.
    let h_before = r.read_u64("h.count");
    let t0 = Instant::now();
    r.call("create_instance", Some("i1 HelloCounter FROM c0[0]"))
        .unwrap();
    eprintln!(
        "create_instance over the control socket: {:?}",
        t0.elapsed()
    );
    let i1 = r.wait_above("i1.count", 5);
    let h_now = r.read_u64("h.count");
    assert!(
        h_now >= h_before + i1 - 2,
        "h kept its count ({h_before} then {h_now}, i1 {i1})"
    );
    let ports = r.call("i1.ports", None).unwrap();
    assert!(
        ports.contains("c0 [0]") && ports.contains("[0] h"),
        "{ports}"
    );
    // Not a gate upstream: registering is refused.
    let err = r
        .call("register_instance", Some("i1 dst 10.0.0.0/8"))
        .unwrap_err();
    assert!(err.contains("does not hang off a gate"), "{err}");
    let err = r
        .call("create_instance", Some("i1 HelloCounter FROM c0[0]"))
        .unwrap_err();
    assert!(err.contains("exists already"), "{err}");
    let err = r
        .call("create_instance", Some("i2 NoSuchClass FROM c0[0]"))
        .unwrap_err();
    assert!(err.contains("no element class 'NoSuchClass'"), "{err}");
    let inst = r.call("instances", None).unwrap();
    assert!(
        inst.contains("i1\t-\t-") && inst.contains("h\t-\t-"),
        "{inst}"
    );
    // Freed: c0 leads to h again, which goes on counting.
    r.call("free_instance", Some("i1")).unwrap();
    let t = r.read_u64("h.count");
    r.wait_above("h.count", t + 5);
    assert!(r.call("i1.count", None).is_err(), "i1 is gone");
    // Swapped back without h, the package can go.
    r.call("hotconfig", Some(conf)).unwrap();
    let t0 = Instant::now();
    while r.call("h.count", None).is_ok() {
        assert!(t0.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    r.call("unload_package", Some("hello")).unwrap();
    assert_eq!(r.call("packages", None).unwrap().trim(), "");
    let err = r
        .call("create_instance", Some("i3 HelloCounter FROM c0[0]"))
        .unwrap_err();
    assert!(err.contains("no element class 'HelloCounter'"), "{err}");
    // ... and come back, by file; only files on the package path load.
    let err = r
        .call("load_package", Some("/lib/x86_64-linux-gnu/libm.so.6"))
        .unwrap_err();
    assert!(
        err.contains("is not in a CLICKPATH directory") || err.contains("No such file"),
        "{err}"
    );
    r.call("load_package", Some(&format!("{dir}/libhello.so")))
        .unwrap();
    assert!(r.call("packages", None).unwrap().starts_with("hello\t"));
    // An element that is not between one input and one output cannot be
    // freed this way.
    let err = r.call("free_instance", Some("src")).unwrap_err();
    assert!(
        err.contains("not an instance between one input and one output"),
        "{err}"
    );
}

/// `unload_package` written right after a `create_instance` (two commands
/// in one read of the control socket, so both run before the swap is
/// installed) must be refused: the successor waiting to be installed holds
/// an element of the package that the running router has not yet.
#[test]
fn unload_is_refused_while_a_pending_hot_swap_holds_its_elements() {
    use std::io::{BufRead, BufReader, Write};
    let dir = hello().to_str().unwrap().to_string();
    let conf = "src :: RatedSource(RATE 400) -> c0 :: Counter -> Discard;";
    let r = Running::start(&["-R", "-C", &dir], conf, "pending");
    r.call("load_package", Some("hello")).unwrap();
    let mut s = std::os::unix::net::UnixStream::connect(&r.sock).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut rd = BufReader::new(s.try_clone().unwrap());
    let mut reply = || {
        // Lines `CODE-text` continue a reply, `CODE text` ends it.
        let mut all = String::new();
        loop {
            let mut line = String::new();
            assert!(rd.read_line(&mut line).unwrap() > 0, "socket closed");
            all.push_str(&line);
            if line.as_bytes().get(3) != Some(&b'-') {
                return all;
            }
        }
    };
    let greeting = reply();
    assert!(greeting.starts_with("Click::ControlSocket"), "{greeting}");
    s.write_all(
        b"WRITE create_instance i1 HelloCounter FROM c0[0]\r\nWRITE unload_package hello\r\n",
    )
    .unwrap();
    let created = reply();
    assert!(created.starts_with("200"), "{created}");
    let unloaded = reply();
    assert!(
        unloaded.starts_with("5") && unloaded.contains("hot swap"),
        "unload_package was accepted with i1 :: HelloCounter about to be installed: {unloaded}"
    );
    r.wait_above("i1.count", 3);
    assert!(r.call("packages", None).unwrap().starts_with("hello\t"));
    let err = r.call("unload_package", Some("hello")).unwrap_err();
    assert!(err.contains("in use by i1 :: HelloCounter"), "{err}");
}

#[test]
fn packets_cross_the_package_boundary_both_ways() {
    let dir = hello().to_str().unwrap().to_string();
    // HelloTee clones (shares) and copies every packet in the package;
    // the router frees both, and the package clones and frees packets
    // the router made.
    let conf = "require(package \"hello\");
        InfiniteSource(LENGTH 200, LIMIT 20000, BURST 64, STOP true)
            -> t :: HelloTee -> c0 :: Counter -> Discard;
        t[1] -> c1 :: Counter -> Discard;";
    let out = rclick(
        &[
            "-C", &dir, "-e", conf, "-h", "c0.count", "-h", "c1.count", "-h", "t.made",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("c0.count:\n20000\n"), "{s}");
    assert!(s.contains("c1.count:\n40000\n"), "{s}");
    assert!(s.contains("t.made:\n40000\n"), "{s}");
    // Across threads: packets the package made on thread 0 are freed on
    // thread 1, and the package's elements ask the router which thread
    // runs them.
    let conf = "require(package \"hello\");
        InfiniteSource(LENGTH 200, LIMIT 20000, BURST 64, STOP true)
            -> t :: HelloTee -> c0 :: Counter -> Discard;
        t[1] -> q :: ThreadSafeQueue(100000) -> u :: Unqueue -> c1 :: HelloCounter -> Discard;
        StaticThreadSched(u 1);";
    let out = rclick(
        &[
            "-j",
            "2",
            "-C",
            &dir,
            "-e",
            conf,
            "-h",
            "c0.count",
            "-h",
            "t.made",
            "-h",
            "c1.count",
            "-h",
            "c1.thread",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("c0.count:\n20000\n"), "{s}");
    assert!(s.contains("t.made:\n40000\n"), "{s}");
    // The router stops when the source does: what is still queued for
    // thread 1 then is not counted.
    let c1: u64 = s
        .split("c1.count:\n")
        .nth(1)
        .and_then(|x| x.lines().next())
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    assert!(c1 > 0 && c1 <= 40000, "{s}");
    // HelloCounter's copy of the kit asks the router which thread runs it.
    assert!(s.contains("c1.thread:\n1\n"), "{s}");
}

/// This test binary's allocator: the system's, with a tag before every
/// block it hands out, checked when the block comes back. A block that
/// some other allocator made (say, a package allocating from the system
/// allocator directly) fails the check when the router frees it.
struct Tagging;

const TAG: u64 = 0x7263_6c69_636b_5447;
static FOREIGN_FREES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static TAGGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn tag_offset(align: usize) -> usize {
    align.max(16)
}

unsafe impl std::alloc::GlobalAlloc for Tagging {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let off = tag_offset(layout.align());
        let Ok(outer) = std::alloc::Layout::from_size_align(layout.size() + off, off) else {
            return std::ptr::null_mut();
        };
        let p = std::alloc::System.alloc(outer);
        if p.is_null() {
            return p;
        }
        TAGGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let user = p.add(off);
        (user.sub(8) as *mut u64).write_unaligned(TAG);
        user
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        let off = tag_offset(layout.align());
        if (ptr.sub(8) as *const u64).read_unaligned() != TAG {
            // Not ours: leak it rather than free it wrongly.
            FOREIGN_FREES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        (ptr.sub(8) as *mut u64).write_unaligned(0);
        let outer = std::alloc::Layout::from_size_align_unchecked(layout.size() + off, off);
        std::alloc::System.dealloc(ptr.sub(off), outer);
    }
}

#[global_allocator]
static ALLOCATOR: Tagging = Tagging;

#[test]
fn a_package_loaded_in_process_allocates_through_the_host_allocator() {
    use rclick_core::package::PackageSet;
    use rclick_core::{Router, RouterOptions};
    let set = PackageSet::new(vec![hello().to_path_buf()]);
    let reg = rclick_elements::registry().with_packages(set);
    let conf = "require(package \"hello\");
        InfiniteSource(LENGTH 300, LIMIT 5000, BURST 32, STOP true)
            -> t :: HelloTee -> c0 :: Counter -> Discard;
        t[1] -> c1 :: Counter -> Discard;";
    let parsed = rclick_lang::parse_router(conf, "t", &reg, &Default::default());
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let before = TAGGED.load(std::sync::atomic::Ordering::Relaxed);
    let mut r = Router::new(parsed.spec.unwrap(), conf, &reg, &RouterOptions::default())
        .unwrap_or_else(|d| panic!("{d:?}"));
    r.run();
    assert_eq!(r.read_handler("c1.count", None).unwrap().trim(), "10000");
    assert_eq!(r.read_handler("t.made", None).unwrap().trim(), "10000");
    r.cleanup();
    drop(r);
    assert!(TAGGED.load(std::sync::atomic::Ordering::Relaxed) > before);
    assert_eq!(
        FOREIGN_FREES.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "every block freed here came from this program's allocator"
    );
}

/// `load_package` of a relative file takes it in the package path's
/// directories, not in the working directory; `..` cannot leave them.
#[test]
fn load_package_takes_a_relative_file_in_the_package_path() {
    use rclick_core::package::PackageSet;
    use rclick_core::{Router, RouterOptions};
    let dir = hello().to_path_buf();
    assert!(
        !Path::new("libhello.so").exists(),
        "run from another directory"
    );
    let reg = rclick_elements::registry().with_packages(PackageSet::new(vec![dir.clone()]));
    let conf = "Idle -> Discard;";
    let parsed = rclick_lang::parse_router(conf, "t", &reg, &Default::default());
    let mut r = Router::new(parsed.spec.unwrap(), conf, &reg, &RouterOptions::default())
        .unwrap_or_else(|d| panic!("{d:?}"));
    // target/packages/PROFILE/../../PROFILE/rclick: a file outside.
    let outside = format!("../../{}/rclick", profile());
    assert!(
        dir.join(&outside).is_file(),
        "{}",
        dir.join(&outside).display()
    );
    let err = r.write_handler("load_package", &outside).unwrap_err();
    assert!(err.contains("not in a CLICKPATH directory"), "{err}");
    r.write_handler("load_package", "libhello.so")
        .unwrap_or_else(|e| panic!("load_package libhello.so: {e}"));
    assert!(r
        .read_handler("packages", None)
        .unwrap()
        .starts_with("hello\t"));
    r.cleanup();
}

/// An instance of a package class created at run time makes the router's
/// configuration require the package, so that the `config` handler's text
/// runs again in a new rclick (it did not: unknown element class).
#[test]
fn create_instance_of_a_package_class_requires_its_package() {
    use rclick_core::package::PackageSet;
    use rclick_core::{Router, RouterOptions};
    let path = vec![hello().to_path_buf()];
    let reg = rclick_elements::registry().with_packages(PackageSet::new(path.clone()));
    let conf = "src :: RatedSource(RATE 10) -> c0 :: Counter -> Discard;";
    let parsed = rclick_lang::parse_router(conf, "t", &reg, &Default::default());
    let opts = RouterOptions {
        hotswap: true,
        ..Default::default()
    };
    let mut r =
        Router::new(parsed.spec.unwrap(), conf, &reg, &opts).unwrap_or_else(|d| panic!("{d:?}"));
    r.write_handler("load_package", "hello").unwrap();
    r.write_handler("create_instance", "h HelloCounter FROM c0")
        .unwrap();
    r.write_handler("create_instance", "h2 HelloCounter FROM h")
        .unwrap();
    let saved = r.read_handler("config", None).unwrap();
    let requires: Vec<&str> = saved
        .lines()
        .filter(|l| l.starts_with("require("))
        .collect();
    assert_eq!(requires.len(), 1, "{saved}");
    assert_eq!(requires[0].matches("hello").count(), 1, "{saved}");
    r.cleanup();
    // A new program (its own package set, nothing loaded) runs it.
    let reg = rclick_elements::registry().with_packages(PackageSet::new(path));
    let parsed = rclick_lang::parse_router(&saved, "saved", &reg, &Default::default());
    assert!(!parsed.has_errors(), "{:?}\n{saved}", parsed.diagnostics);
}

/// A link the operator put in a package directory loads by file as it
/// does by name, wherever it points; a link to a package directory's
/// file from elsewhere does not make that file loadable by its outside
/// name.
#[test]
fn load_package_by_file_takes_a_link_in_the_package_path() {
    use rclick_core::package::PackageSet;
    use rclick_core::{Router, RouterOptions};
    let real = hello().join("libhello.so");
    let links = target_dir().join(format!("links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&links);
    std::fs::create_dir_all(links.join("pkgs")).unwrap();
    std::os::unix::fs::symlink(&real, links.join("pkgs/libhello.so")).unwrap();
    std::os::unix::fs::symlink(&real, links.join("outside.so")).unwrap();
    let reg = rclick_elements::registry().with_packages(PackageSet::new(vec![links.join("pkgs")]));
    let conf = "Idle -> Discard;";
    let parsed = rclick_lang::parse_router(conf, "t", &reg, &Default::default());
    let mut r = Router::new(parsed.spec.unwrap(), conf, &reg, &RouterOptions::default())
        .unwrap_or_else(|d| panic!("{d:?}"));
    let err = r
        .write_handler("load_package", links.join("outside.so").to_str().unwrap())
        .unwrap_err();
    assert!(err.contains("not in a CLICKPATH directory"), "{err}");
    let err = r
        .write_handler("load_package", "../outside.so")
        .unwrap_err();
    assert!(err.contains("not in a CLICKPATH directory"), "{err}");
    r.write_handler(
        "load_package",
        links.join("pkgs/libhello.so").to_str().unwrap(),
    )
    .unwrap_or_else(|e| panic!("a link in the package path: {e}"));
    assert!(r
        .read_handler("packages", None)
        .unwrap()
        .starts_with("hello\t"));
    r.cleanup();
    let _ = std::fs::remove_dir_all(&links);
}

/// The cost of loading a package and of creating and freeing an instance,
/// in this process (no control socket): run by hand, in release, a few
/// times (`cargo test --release -p rclick --test packages measure --
/// --ignored --nocapture`); the numbers are in docs/benchmarks.md.
#[test]
#[ignore]
fn measure_load_and_instance_costs() {
    use rclick_core::package::PackageSet;
    use rclick_core::{Router, RouterOptions};
    let set = PackageSet::new(vec![hello().to_path_buf()]);
    let reg = rclick_elements::registry().with_packages(set);
    let conf = "src :: RatedSource(RATE 1000) -> c0 :: Counter -> q :: Queue(1000)
        -> u :: Unqueue -> Discard;";
    let parsed = rclick_lang::parse_router(conf, "t", &reg, &Default::default());
    let opts = RouterOptions {
        hotswap: true,
        ..Default::default()
    };
    let mut r = Router::new(parsed.spec.unwrap(), conf, &reg, &opts).unwrap();
    let t0 = Instant::now();
    r.write_handler("load_package", "hello").unwrap();
    let load = t0.elapsed();
    let mut create = Vec::new();
    let mut free = Vec::new();
    for i in 0..20 {
        let t0 = Instant::now();
        r.write_handler("create_instance", &format!("i{i} HelloCounter FROM c0[0]"))
            .unwrap();
        create.push(t0.elapsed());
        let t0 = Instant::now();
        r.write_handler("free_instance", &format!("i{i}")).unwrap();
        free.push(t0.elapsed());
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    eprintln!(
        "load_package (dlopen, fingerprint, init, register): {load:?}; \
         create_instance median {:?}; free_instance median {:?} (5-element router)",
        med(&mut create),
        med(&mut free)
    );
    r.cleanup();
    // A larger router: 200 counters in a chain.
    let chain: Vec<String> = (0..200).map(|k| format!("k{k} :: Counter")).collect();
    let conf = format!(
        "src :: RatedSource(RATE 1000) -> c0 :: Counter -> {} -> Discard;",
        chain.join(" -> ")
    );
    let parsed = rclick_lang::parse_router(&conf, "t", &reg, &Default::default());
    let mut r = Router::new(parsed.spec.unwrap(), &conf, &reg, &opts).unwrap();
    let mut create = Vec::new();
    for i in 0..10 {
        let t0 = Instant::now();
        r.write_handler("create_instance", &format!("i{i} HelloCounter FROM c0[0]"))
            .unwrap();
        create.push(t0.elapsed());
        r.write_handler("free_instance", &format!("i{i}")).unwrap();
    }
    eprintln!(
        "create_instance median {:?} (203-element router)",
        med(&mut create)
    );
    r.cleanup();
}

/// Runs a command, panicking with its output when it fails.
fn sh(cmd: &[&str]) -> String {
    let out = Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Network namespaces deleted on drop (with their devices).
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Why the namespace test cannot run here, if it cannot.
fn netns_skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    for (tool, why) in [("ip", "iproute2"), ("python3", "python3")] {
        let found = Command::new(tool)
            .arg(if tool == "ip" { "-V" } else { "--version" })
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!("{why} not installed"));
        }
    }
    None
}

/// A TCP sink on S: for each of `ports`, accepts one connection, reads it
/// to the end and writes `BYTES SHA256` to `DIR/PORT`.
const SINK_PY: &str = r#"
import hashlib, socket, sys, threading
d = sys.argv[1]
def serve(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(1)
    c, _ = s.accept(); h = hashlib.sha256(); n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        h.update(b); n += len(b)
    open(f"{d}/{port}", "w").write(f"{n} {h.hexdigest()}")
ts = [threading.Thread(target=serve, args=(int(p),)) for p in sys.argv[2:]]
[t.start() for t in ts]; [t.join() for t in ts]
"#;

/// A TCP source on A: sends CHUNKS chunks of 64 KiB (a seeded pattern) to
/// HOST:PORT, sleeping PAUSE seconds between them; prints `BYTES SHA256`.
const SOURCE_PY: &str = r#"
import hashlib, random, socket, sys, time
host, port, chunks, pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
rng = random.Random(port); h = hashlib.sha256(); n = 0
for attempt in range(100):
    try:
        c = socket.create_connection((host, port), timeout=10); break
    except OSError:
        time.sleep(0.1)
for _ in range(chunks):
    b = rng.randbytes(65536); c.sendall(b); h.update(b); n += len(b)
    time.sleep(pause)
c.close()
print(n, h.hexdigest())
"#;

/// Issue 19's end-to-end case, on real links: hosts A and S in network
/// namespaces, joined through rclick in a third (an Ethernet forwarder
/// whose A-to-S IPv4 path runs through a FlowTable, a FlowCounter and a
/// FlowGate). While a paced TCP transfer (flow 2, to port 5002) runs,
/// the hello package is loaded over the control socket, a HelloCounter
/// instance is created on a new gate output and registered for
/// `proto tcp dport 5001`; then flow 1 (to port 5001) runs. The instance
/// must count exactly flow 1's packets from A (as the FlowCounter counted
/// them) and none of flow 2's; both transfers arrive byte for byte, and
/// every frame that entered the router from A left it towards S.
#[test]
fn a_flow_is_bound_to_a_loaded_instance_while_traffic_flows() {
    if let Some(why) = netns_skip_reason() {
        println!("SKIP: {why}");
        return;
    }
    let dir = hello().to_str().unwrap().to_string();
    let tag = std::process::id() % 100_000;
    let (a, s, r) = (
        format!("pkA{tag}"),
        format!("pkS{tag}"),
        format!("pkR{tag}"),
    );
    let _namespaces = Namespaces(vec![a.clone(), s.clone(), r.clone()]);
    for ns in [&a, &s, &r] {
        sh(&["ip", "netns", "add", ns]);
        sh(&["ip", "-n", ns, "link", "set", "lo", "up"]);
        sh(&[
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.disable_ipv6=1",
        ]);
        sh(&[
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.default.disable_ipv6=1",
        ]);
    }
    for (host, addr, port) in [(&a, "10.77.0.1/24", "pa"), (&s, "10.77.0.2/24", "ps")] {
        sh(&[
            "ip", "link", "add", "eth0", "netns", host, "type", "veth", "peer", "name", port,
            "netns", &r,
        ]);
        sh(&["ip", "-n", host, "addr", "add", addr, "dev", "eth0"]);
        // One frame per packet: the router forwards frames as they come.
        let _ = Command::new("ip")
            .args([
                "netns", "exec", host, "ethtool", "-K", "eth0", "tso", "off", "gso", "off",
            ])
            .output();
        sh(&["ip", "-n", host, "link", "set", "eth0", "up"]);
        sh(&["ip", "-n", &r, "link", "set", port, "up"]);
    }
    let conf = "FromDevice(pa, PROMISC true) -> fromA :: Counter
           -> ca :: Classifier(12/0800, -);
         ca[0] -> MarkIPHeader(14) -> ft :: FlowTable -> fc :: FlowCounter
           -> gate :: FlowGate(-) -> toS :: Counter;
         ca[1] -> toS;
         toS -> qs :: Queue(10000) -> ToDevice(ps);
         FromDevice(ps, PROMISC true) -> qa :: Queue(10000) -> ToDevice(pa);";
    let netns_exec = ["ip", "netns", "exec", r.as_str()];
    let router = Running::start_with(&netns_exec, &["-R", "-C", &dir], conf, "bind");

    let out = std::env::temp_dir().join(format!("rclick-pkg-bind-{tag}"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let out_s = out.to_str().unwrap().to_string();
    let mut sink = Command::new("ip")
        .args([
            "netns", "exec", &s, "python3", "-c", SINK_PY, &out_s, "5001", "5002",
        ])
        .spawn()
        .expect("start the sink");
    let source = |port: &str, chunks: &str, pause: &str| {
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &a,
                "python3",
                "-c",
                SOURCE_PY,
                "10.77.0.2",
                port,
                chunks,
                pause,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a source")
    };
    // Flow 2: 48 chunks, 50 ms apart (about 2.4 s).
    let flow2 = source("5002", "48", "0.05");
    router.wait_above("toS.count", 100);

    // While flow 2 runs: load, create, register.
    router.call("load_package", Some("hello")).unwrap();
    router
        .call(
            "create_instance",
            Some("h HelloCounter FROM gate[1] TO toS[0]"),
        )
        .unwrap();
    router
        .call("register_instance", Some("h proto tcp dport 5001"))
        .unwrap();
    let filters = router.call("gate.filters", None).unwrap();
    assert!(filters.contains("1 proto tcp dport 5001"), "{filters}");
    assert_eq!(router.read_u64("h.count"), 0, "nothing bound yet reached h");

    // Flow 1: 32 chunks, unpaced.
    let flow1 = source("5001", "32", "0");
    let sent1 = text(&flow1.wait_with_output().unwrap().stdout);
    let sent2 = text(&flow2.wait_with_output().unwrap().stdout);
    let t0 = Instant::now();
    while sink.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the sink did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for (port, sent) in [("5001", &sent1), ("5002", &sent2)] {
        let got = std::fs::read_to_string(out.join(port)).unwrap_or_default();
        assert_eq!(
            got.trim(),
            sent.trim(),
            "flow to port {port}: received vs sent"
        );
    }

    // Exactly flow 1's packets from A went through h.
    let h = router.read_u64("h.count");
    let flows = router.call("fc.flows", None).unwrap();
    let flow1_packets: u64 = flows
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[0].starts_with("10.77.0.1") && f[4] == "5001")
        .and_then(|f| f[6].parse().ok())
        .unwrap_or_else(|| panic!("no flow to 5001 in fc.flows:\n{flows}"));
    assert!(h > 0);
    assert_eq!(h, flow1_packets, "h counted flow 1 only\n{flows}");
    assert_eq!(router.read_u64("gate.nomatch"), 0);
    assert_eq!(router.read_u64("gate.bad"), 0);
    // Nothing lost inside the router, through the hot swap and the new
    // binding: every frame from A was sent on towards S.
    let (from_a, to_s) = (router.read_u64("fromA.count"), router.read_u64("toS.count"));
    assert_eq!(from_a, to_s, "frames from A {from_a}, towards S {to_s}");
    assert_eq!(router.read_u64("qs.drops"), 0);
    let _ = sink.kill();
    let _ = std::fs::remove_dir_all(&out);
}
