//! Handlers that change an element while the router runs, against the
//! reference Click: writing `config` (live reconfiguration, for the classes
//! Click reconfigures live), Click's keyword handlers (`src`, `dst`,
//! `ethertype`, ... rewrite the configuration and reconfigure), the
//! `config` handlers that read the element's state (Switch, StrideSched,
//! RatedUnqueue), and the handlers the handler-listing work added (`etht`,
//! `ether`, `addr`, `nbytes`, Unqueue's `reset_counts`, ...).
//!
//! Each case is a configuration (the element is `x`) and a sequence of
//! handler reads and writes. Under Click they go through a ControlSocket;
//! under rclick through the Router API. Read values must be identical and
//! writes must succeed or fail alike (error wording is the parsers' and
//! is not compared). Needs the reference Click (`../shared/reference/
//! click/bin/click` from the project root, or `RCLICK_REFERENCE_CLICK`);
//! skips with a message without it. The cases where rclick deliberately
//! differs are asserted in-process at the end, with the reason.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rclick_core::Router;
use rclick_elements::testing::{from_config, read};

#[derive(Clone, Copy, Debug)]
enum Step {
    Read(&'static str),
    Write(&'static str, &'static str),
}
use Step::{Read as R, Write as W};

#[path = "common/reference.rs"]
mod reference;
use reference::reference_click;

/// What one step gave: a read's value, or whether a write succeeded.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Value(String),
    ReadFailed,
    Written,
    WriteFailed,
}

const CASES: &[(&str, &[Step])] = &[
    (
        "Idle -> x :: Switch(OUTPUT 1) -> Idle; x[1] -> Idle",
        &[
            R("x.config"),
            W("x.switch", "0"),
            R("x.config"),
            W("x.switch", "5"),
            R("x.switch"),
            W("x.config", "5"),
            R("x.config"),
            W("x.config", "0"),
            R("x.switch"),
            W("x.config", "OUTPUT 1"),
            R("x.switch"),
            W("x.switch", "x"),
            R("x.config"),
        ],
    ),
    (
        "Idle -> Queue -> x :: StrideSched(1, 5 ) -> Discard; Idle -> Queue -> [1] x",
        &[
            R("x.config"),
            W("x.tickets0", "7"),
            R("x.config"),
            W("x.config", "3, a"),
            R("x.config"),
            W("x.config", "9, 40000"),
            R("x.config"),
            R("x.tickets1"),
            W("x.config", "4"),
            R("x.config"),
        ],
    ),
    (
        "Idle -> Queue -> x :: RatedUnqueue(10, BURST_SIZE 5) -> Discard",
        &[
            R("x.config"),
            W("x.rate", "20"),
            R("x.config"),
            W("x.config", "30, BURST_DURATION 1"),
            R("x.config"),
            W("x.config", "40, BURST_SIZE 3, BURST_DURATION 1"),
            R("x.config"),
            R("x.rate"),
            W("x.active", "false"),
            W("x.config", "50"),
            R("x.active"),
            R("x.rate"),
            W("x.config", "x"),
            R("x.rate"),
        ],
    ),
    (
        "Idle -> x :: Print(a) -> Idle",
        &[
            W("x.active", "false"),
            W("x.config", "b"),
            R("x.active"),
            R("x.config"),
            W("x.config", "b, FOO 1"),
            R("x.config"),
            W("x.config", "c, ACTIVE false"),
            R("x.active"),
        ],
    ),
    (
        "Idle -> x :: Paint(1) -> Idle",
        &[
            W("x.color", "5"),
            W("x.config", "3"),
            R("x.color"),
            W("x.config", "300"),
            R("x.color"),
            R("x.config"),
        ],
    ),
    (
        "Idle -> x :: EtherEncap(0x800, 0:1:2:3:4:5, 0:1:2:3:4:6) -> Idle",
        &[
            R("x.ethertype"),
            R("x.etht"),
            R("x.src"),
            R("x.dst"),
            W("x.etht", "0x86dd"),
            R("x.ethertype"),
            R("x.config"),
            W("x.ethertype", "300000"),
            W("x.src", "foo"),
            R("x.config"),
            W("x.config", "0x806, 1:1:1:1:1:1, 2:2:2:2:2:2"),
            R("x.src"),
            R("x.ethertype"),
            W("x.config", "0x806, 1:1:1:1:1:1"),
            R("x.config"),
            W("x.config", "ETHERTYPE 1, DST 1:1:1:1:1:1, SRC 2:2:2:2:2:2"),
            W("x.dst", "3:3:3:3:3:3"),
            R("x.config"),
            W("x.ethertype", "2"),
            R("x.config"),
            R("x.dst"),
            W("x.src", "4:4:4:4:4:4"),
            R("x.config"),
        ],
    ),
    // EtherRewrite with keywords only: Click's `src` handler is broken on
    // positional configurations (see the end of this file).
    (
        "Idle -> x :: EtherRewrite(SRC 0:1:2:3:4:5, DST 0:1:2:3:4:6) -> Idle",
        &[
            R("x.src"),
            W("x.src", "1:1:1:1:1:1"),
            R("x.config"),
            R("x.src"),
            W("x.dst", "foo"),
            W("x.dst", "2:2:2:2:2:2"),
            R("x.config"),
            R("x.dst"),
            W("x.config", "1:1:1:1:1:1"),
            R("x.config"),
            W("x.config", "DST 5:5:5:5:5:5, SRC 6:6:6:6:6:6"),
            R("x.src"),
        ],
    ),
    (
        "AddressInfo(a 1.0.0.9 0:1:1:1:1:1); \
         Idle -> x :: HostEtherFilter(0:1:2:3:4:5, true) -> Idle",
        &[
            R("x.ether"),
            W("x.ether", "1:1:1:1:1:1"),
            R("x.config"),
            R("x.ether"),
            W("x.ether", "a"),
            R("x.ether"),
            W("x.ether", "foo"),
            W("x.config", "2:2:2:2:2:2, OFFSET 2"),
            R("x.ether"),
            W("x.ether", "3:3:3:3:3:3"),
            R("x.config"),
            W("x.config", "2:2:2:2:2:2, FOO 3"),
            R("x.config"),
            R("x.ether"),
        ],
    ),
    (
        "Idle -> x :: IPEncap(4, 1.0.0.1, 1.0.0.2) -> Idle",
        &[
            R("x.src"),
            R("x.dst"),
            W("x.src", "2.2.2.2"),
            R("x.config"),
            W("x.dst", "DST_ANNO"),
            R("x.dst"),
            R("x.config"),
            W("x.src", "foo"),
            W("x.dst", "b"),
            W("x.config", "4, 3.3.3.3, 4.4.4.4, TTL 3"),
            R("x.src"),
            W("x.dst", "5.5.5.5"),
            R("x.config"),
            W("x.config", "4, 3.3.3.3"),
            R("x.config"),
        ],
    ),
    (
        "AddressInfo(a 1.0.0.9); Idle -> x :: SetIPAddress(1.0.0.1) -> Idle",
        &[
            R("x.addr"),
            W("x.addr", "2.2.2.2"),
            R("x.config"),
            R("x.addr"),
            W("x.addr", "a"),
            R("x.addr"),
            W("x.addr", "foo"),
            W("x.config", "3.3.3.3, ANNO 4"),
            R("x.addr"),
            W("x.config", "3.3.3.3, ANNO 60"),
            R("x.config"),
            W("x.config", "IPADDR 5.5.5.5"),
            R("x.addr"),
        ],
    ),
    (
        "AddressInfo(a 1.0.0.9 0:1:1:1:1:1); \
         Idle -> x :: StoreEtherAddress(0:1:2:3:4:5, src) -> Idle",
        &[
            R("x.addr"),
            W("x.addr", "a"),
            R("x.addr"),
            W("x.addr", "1:2:3:4:5:6"),
            R("x.config"),
            R("x.addr"),
            W("x.addr", "bar"),
            W("x.config", "3:3:3:3:3:3, dst"),
            R("x.addr"),
        ],
    ),
    (
        "Idle -> x :: Truncate(10) -> Idle",
        &[
            R("x.nbytes"),
            W("x.nbytes", "20"),
            R("x.config"),
            R("x.nbytes"),
            W("x.nbytes", "-1"),
            W("x.nbytes", "x"),
            W("x.config", "30, EXTRA_LENGTH false"),
            R("x.nbytes"),
            W("x.config", "3, FOO 1"),
            R("x.nbytes"),
            W("x.config", "70000"),
            R("x.nbytes"),
        ],
    ),
    (
        "InfiniteSource(LIMIT 10) -> Queue -> x :: Unqueue(LIMIT 3) -> Discard",
        &[
            R("x.count"),
            R("x.burst"),
            W("x.limit", "-7"),
            R("x.limit"),
            R("x.count"),
            W("x.reset_counts", ""),
            R("x.count"),
            W("x.limit", "2.5"),
            W("x.limit", "99999999999"),
            W("x.burst", "-3"),
            R("x.burst"),
            W("x.burst", "0"),
            R("x.burst"),
            W("x.active", "x"),
            W("x.active", "no"),
            R("x.active"),
            W("x.config", "BURST 2"),
        ],
    ),
    (
        "Idle -> x :: Discard; Idle -> Queue -> y :: Discard",
        &[
            R("x.count"),
            R("x.active"),
            W("x.reset_counts", ""),
            R("y.active"),
            W("y.active", "false"),
            R("y.active"),
        ],
    ),
    (
        "x :: RatedSource(LENGTH 20, ACTIVE false) -> Discard",
        &[
            R("x.data"),
            R("x.rate"),
            R("x.limit"),
            R("x.active"),
            R("x.length"),
            R("x.datasize"),
            W("x.datasize", "30"),
            R("x.length"),
            R("x.config"),
            W("x.rate", "5000"),
            R("x.rate"),
            W("x.limit", "x"),
            W("x.length", "y"),
            W("x.data", "abc"),
            R("x.data"),
        ],
    ),
    (
        "x :: TimedSource(0.5, ACTIVE false) -> Discard",
        &[
            R("x.data"),
            R("x.limit"),
            R("x.interval"),
            R("x.active"),
            R("x.count"),
            W("x.interval", "0.25"),
            R("x.interval"),
            W("x.headroom", "3"),
            R("x.headroom"),
            W("x.headroom", "-1"),
            W("x.limit", "-2"),
            R("x.limit"),
            W("x.interval", "x"),
            W("x.active", "maybe"),
        ],
    ),
    ("Idle -> x :: IPReassembler -> Idle", &[R("x.dump")]),
];

/// A reference Click running `config` with a ControlSocket on a Unix
/// socket.
struct ClickSession {
    child: Child,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl ClickSession {
    fn start(click: &Path, config: &str, n: usize) -> ClickSession {
        let path =
            std::env::temp_dir().join(format!("rclick-live-{}-{n}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let child = Command::new(click)
            .args([
                "-e",
                &format!("{config}; ControlSocket(unix, {});", path.display()),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run the reference Click");
        let start = Instant::now();
        let stream = loop {
            match UnixStream::connect(&path) {
                Ok(s) => break s,
                Err(e) if start.elapsed() < Duration::from_secs(10) => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!("Click's control socket for {config}: {e}"),
            }
        };
        let _ = std::fs::remove_file(&path);
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut banner = String::new();
        reader.read_line(&mut banner).unwrap();
        ClickSession {
            child,
            reader,
            writer: stream,
        }
    }

    /// The reply's status code (the last line's).
    fn status(&mut self) -> u32 {
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.as_bytes().get(3) != Some(&b'-') {
                return line.get(..3).and_then(|c| c.parse().ok()).unwrap_or(0);
            }
        }
    }

    fn step(&mut self, step: Step) -> Outcome {
        match step {
            Step::Read(h) => {
                writeln!(self.writer, "READ {h}").unwrap();
                if self.status() != 200 {
                    return Outcome::ReadFailed;
                }
                let mut line = String::new();
                self.reader.read_line(&mut line).unwrap();
                let n: usize = line.trim().strip_prefix("DATA ").unwrap().parse().unwrap();
                let mut data = vec![0; n];
                self.reader.read_exact(&mut data).unwrap();
                Outcome::Value(String::from_utf8(data).unwrap())
            }
            Step::Write(h, v) => {
                write!(self.writer, "WRITEDATA {h} {}\n{v}", v.len()).unwrap();
                if self.status() / 100 == 2 {
                    Outcome::Written
                } else {
                    Outcome::WriteFailed
                }
            }
        }
    }
}

impl Drop for ClickSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rclick_step(r: &mut Router, step: Step) -> (Outcome, String) {
    match step {
        Step::Read(h) => match r.read_handler(h, None) {
            Ok(v) => (Outcome::Value(v), String::new()),
            Err(e) => (Outcome::ReadFailed, e),
        },
        Step::Write(h, v) => match r.write_handler(h, v) {
            Ok(()) => (Outcome::Written, String::new()),
            Err(e) => (Outcome::WriteFailed, e),
        },
    }
}

#[test]
fn live_handlers_match_click() {
    let click = match reference_click() {
        Ok(p) => p,
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    let mut failures = Vec::new();
    for (n, (config, steps)) in CASES.iter().enumerate() {
        let mut session = ClickSession::start(&click, config, n);
        // Click runs between control-socket requests: so does rclick,
        // after building and after each write.
        let mut r = from_config(config);
        r.run_limited(1000);
        for step in *steps {
            let theirs = session.step(*step);
            let (ours, err) = rclick_step(&mut r, *step);
            if let Step::Write(..) = step {
                r.run_limited(1000);
            }
            if ours != theirs {
                failures.push(format!(
                    "{config}\n  {step:?}: Click {theirs:?}, rclick {ours:?} {err}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Click's EtherRewrite `src` handler names the second positional slot
/// (DST's): writing `src` to `EtherRewrite(A, B)` makes it `(A, NEW)` and
/// leaves the source as it was. rclick's changes SRC.
#[test]
fn etherrewrite_src_handler_sets_the_source() {
    let mut r = from_config("Idle -> x :: EtherRewrite(0:1:2:3:4:5, 0:1:2:3:4:6) -> Idle");
    r.write_handler("x.src", "1:1:1:1:1:1").unwrap();
    assert_eq!(read(&mut r, "x.src"), "01-01-01-01-01-01");
    assert_eq!(read(&mut r, "x.dst"), "00-01-02-03-04-06");
    assert_eq!(read(&mut r, "x.config"), "1:1:1:1:1:1, 0:1:2:3:4:6");
    r.write_handler("x.dst", "2:2:2:2:2:2").unwrap();
    assert_eq!(read(&mut r, "x.config"), "1:1:1:1:1:1, 2:2:2:2:2:2");
    assert_eq!(read(&mut r, "x.dst"), "02-02-02-02-02-02");
}

/// Without the reference: a live reconfiguration keeps what Click keeps.
#[test]
fn live_reconfiguration_keeps_and_resets_state_as_click() {
    // StrideSched keeps each input's pass: a reconfiguration with the same
    // tickets does not change the order inputs are served in.
    let conf = "a :: InfiniteSource(LIMIT 1000, BURST 100) -> Paint(0) -> qa :: Queue(1000); \
                b :: InfiniteSource(LIMIT 1000, BURST 100) -> Paint(1) -> qb :: Queue(1000); \
                qa -> [0] x :: StrideSched(1, 3); qb -> [1] x; x -> Idle;";
    let order = |reconf: bool| {
        let mut r = from_config(conf);
        r.run_limited(50);
        let x = r.find_element("x").unwrap();
        let mut colors = Vec::new();
        for i in 0..12 {
            if reconf && i == 5 {
                r.write_handler("x.config", "1, 3").unwrap();
            }
            let b = r.pull_from(x, 0, 1).unwrap();
            colors.extend(b.into_iter().map(|p| p.paint_anno()));
        }
        colors
    };
    assert_eq!(order(true), order(false));
    // Unqueue's count survives writes; Truncate's `nbytes` does not change
    // the configuration text, a `config` write does.
    let mut r = from_config("Idle -> x :: Truncate(10) -> Idle");
    r.write_handler("x.nbytes", "20").unwrap();
    assert_eq!(read(&mut r, "x.config"), "10");
    r.write_handler("x.config", "30").unwrap();
    assert_eq!(read(&mut r, "x.nbytes"), "30");
    assert!(r.write_handler("x.config", "40, FOO 1").is_err());
    assert_eq!(read(&mut r, "x.nbytes"), "30");
    assert_eq!(read(&mut r, "x.config"), "30");
}

/// Click's rewriting of a configuration by a keyword handler.
#[test]
fn config_with_keyword_rewrites_as_click() {
    use rclick_core::element::handlers::config_with_keyword as set;
    // The positional slot standing for the keyword.
    assert_eq!(
        set("0x800, A, B", "ETHERTYPE", Some(0), " 0x86dd "),
        "0x86dd, A, B"
    );
    assert_eq!(set("0x800, A, B", "DST", Some(2), "C"), "0x800, A, C");
    // A keyword argument is removed (every one) and the new one appended.
    assert_eq!(
        set("ETHERTYPE 1, DST X, SRC Y, DST Z", "DST", Some(2), "W"),
        "ETHERTYPE 1, SRC Y, DST W"
    );
    // No such slot, or a keyword in it: appended.
    assert_eq!(set("A", "DST", Some(1), "B"), "A, DST B");
    assert_eq!(set("A, TTL 3", "DST", Some(1), "B"), "A, TTL 3, DST B");
    assert_eq!(set("A, B", "DST", None, "C"), "A, B, DST C");
    assert_eq!(set("", "DST", Some(0), "C"), "DST C");
}

/// The handlers added to match Click, without the reference (the values
/// are those Click 2.1 gives, checked by `live_handlers_match_click`).
#[test]
fn added_handlers_read_and_write_their_state() {
    let mut r = from_config(
        "AddressInfo(a 1.0.0.9 0:1:1:1:1:1);
         Idle -> e :: EtherEncap(0x800, 0:1:2:3:4:5, 0:1:2:3:4:6) -> Idle;
         Idle -> h :: HostEtherFilter(0:1:2:3:4:5) -> Idle;
         Idle -> s :: SetIPAddress(1.0.0.1) -> Idle;
         Idle -> w :: StoreEtherAddress(0:1:2:3:4:5, src) -> Idle;
         Idle -> t :: Truncate(10) -> Idle;",
    );
    // etht: ethertype's deprecated twin, a keyword handler.
    assert_eq!(read(&mut r, "e.etht"), "2048");
    r.write_handler("e.etht", "0x86dd").unwrap();
    assert_eq!(read(&mut r, "e.ethertype"), "34525");
    assert_eq!(read(&mut r, "e.config"), "0x86dd, 0:1:2:3:4:5, 0:1:2:3:4:6");
    assert!(r.write_handler("e.etht", "70000").is_err());
    assert_eq!(read(&mut r, "e.etht"), "34525");
    // Data handlers on addresses take AddressInfo names; the configuration
    // text stays.
    for (elem, handler, before, name_value) in [
        ("h", "ether", "00-01-02-03-04-05", "00-01-01-01-01-01"),
        ("s", "addr", "1.0.0.1", "1.0.0.9"),
        ("w", "addr", "00-01-02-03-04-05", "00-01-01-01-01-01"),
    ] {
        let h = format!("{elem}.{handler}");
        let config = read(&mut r, &format!("{elem}.config"));
        assert_eq!(read(&mut r, &h), before);
        r.write_handler(&h, "a").unwrap();
        assert_eq!(read(&mut r, &h), name_value);
        assert!(r.write_handler(&h, "nonesuch").is_err());
        assert_eq!(read(&mut r, &h), name_value);
        assert_eq!(read(&mut r, &format!("{elem}.config")), config);
    }
    // Truncate's nbytes: unsigned.
    assert_eq!(read(&mut r, "t.nbytes"), "10");
    r.write_handler("t.nbytes", "70000").unwrap();
    assert_eq!(read(&mut r, "t.nbytes"), "70000");
    assert_eq!(
        r.write_handler("t.nbytes", "-1").unwrap_err(),
        "expected integer"
    );
}
