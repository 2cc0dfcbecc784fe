//! Router tests: context searches, dispatch order, descriptors.

use std::cell::RefCell;

use rclick_lang::RouterSpec;

use super::{Router, RouterOptions, StopReason};
use crate::ctx::{Ctx, InitCtx};
use crate::element::{ConfigResult, Element, Registry};
use crate::packet::Packet;
use crate::ports::FlowCode;

/// Test elements: a push source, a 2-in merge, a pass-through, a
/// 1-to-2 splitter, a Storage, and a sink. `found` records what a
/// context search from `initialize` returned.
struct T {
    ports: &'static str,
    proc_: &'static str,
    storage: bool,
    search: Option<(bool, usize)>,
}

thread_local! {
    static FOUND: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

impl Element for T {
    fn port_count(&self) -> &'static str {
        self.ports
    }
    fn processing(&self) -> &'static str {
        self.proc_
    }
    fn has_interface(&self, name: &str) -> bool {
        self.storage && name == "Storage"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if let Some((down, port)) = self.search {
            let f = |e: &dyn Element| e.has_interface("Storage");
            let r = if down {
                ctx.downstream(Some(port), &f)
            } else {
                ctx.upstream(Some(port), &f)
            };
            FOUND.with(|x| x.borrow_mut().extend(r));
        }
        Ok(())
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.add("Src", || {
        Box::new(T {
            ports: "0/1",
            proc_: "h/h",
            storage: false,
            search: Some((true, 0)),
        })
    });
    r.add("Merge", || {
        Box::new(T {
            ports: "2/1",
            proc_: "h/h",
            storage: false,
            search: None,
        })
    });
    r.add("Pass", || {
        Box::new(T {
            ports: "1/1",
            proc_: "a/a",
            storage: false,
            search: None,
        })
    });
    r.add("Split", || {
        Box::new(T {
            ports: "1/2",
            proc_: "h/h",
            storage: false,
            search: None,
        })
    });
    r.add("Store", || {
        Box::new(T {
            ports: "1/1",
            proc_: "h/l",
            storage: true,
            search: None,
        })
    });
    r.add("Sink", || {
        Box::new(T {
            ports: "1/0",
            proc_: "l/l",
            storage: false,
            search: Some((false, 0)),
        })
    });
    r
}

#[test]
fn context_search_stops_at_first_match_and_survives_cycles() {
    let names = [
        ("src", "Src", ""),
        ("m", "Merge", ""),
        ("p", "Pass", ""),
        ("t", "Split", ""),
        ("s", "Store", ""),
        ("k", "Sink", ""),
        ("s2", "Store", ""),
        ("k2", "Sink", ""),
        ("src2", "Src", ""),
    ];
    // src -> m -> p -> t; t[0] -> [1] m (a cycle); t[1] -> s -> k.
    // src2 -> s2 -> k2 is unreachable from src.
    let conns = [
        (0, 0, 1, 0),
        (1, 0, 2, 0),
        (2, 0, 3, 0),
        (3, 0, 1, 1),
        (3, 1, 4, 0),
        (4, 0, 5, 0),
        (6, 0, 7, 0),
        (8, 0, 6, 0),
    ];
    let spec = RouterSpec::from_lists("t", &names, &conns);
    FOUND.with(|x| x.borrow_mut().clear());
    let r = Router::new(spec, "", &registry(), &RouterOptions::default());
    assert!(
        r.is_ok(),
        "{:?}",
        r.err()
            .map(|d| d.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    );
    let mut found = FOUND.with(|x| x.borrow().clone());
    found.sort();
    // src finds s downstream (through the cycle, once); k finds s
    // upstream; src2 finds s2; k2 finds s2.
    assert_eq!(found, vec![4, 4, 6, 6]);
}

thread_local! {
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Logs each packet it sees as `name:byte0`, then: a Loop element
/// decrements byte 0 and sends the packet to output 0 while it is
/// positive, else to output 1; a Fan element sends clones to outputs 0
/// and 1 in that order; a Log element forwards to output 0 if it has one.
struct Act {
    kind: &'static str,
}

impl Element for Act {
    fn port_count(&self) -> &'static str {
        match self.kind {
            "Loop" => "1/2",
            "Fan" => "0-1/2",
            "Chain" => "1/1",
            "ChainTee" => "1/2",
            _ => "0-1/0-1",
        }
    }
    fn processing(&self) -> &'static str {
        "h/h"
    }
    fn chains(&self) -> bool {
        self.kind.starts_with("Chain") || self.kind == "Quiet"
    }
    fn chain_quiet(&self) -> bool {
        self.kind == "Quiet"
    }
    fn push_in_chain(&mut self, batch: &mut crate::Batch, ctx: &mut Ctx) -> bool {
        // Chain logs each packet and drops those whose byte 0 is 0;
        // ChainTee also sends a copy of each packet to output 1 first;
        // Quiet logs each packet and keeps it.
        let name = ctx.element_name().to_string();
        batch.retain_map(|p| {
            LOG.with(|l| l.borrow_mut().push(format!("{name}:{}", p.data()[0])));
            if self.kind == "ChainTee" {
                ctx.emit(1, p.clone());
            }
            (self.kind == "Quiet" || p.data()[0] != 0).then_some(p)
        });
        true
    }
    fn push(&mut self, _port: usize, mut batch: crate::Batch, ctx: &mut Ctx) {
        if self.chains() {
            if self.push_in_chain(&mut batch, ctx) {
                ctx.emit_batch(0, batch);
            }
            return;
        }
        if self.kind == "Stamp" {
            let t = ctx.recent().as_secs_f64();
            LOG.with(|l| l.borrow_mut().push(format!("{t}")));
            return;
        }
        if self.kind == "Size" {
            let name = ctx.element_name().to_string();
            LOG.with(|l| l.borrow_mut().push(format!("{name}:{}", batch.len())));
            return;
        }
        if self.kind == "BatchThenOne" {
            // The whole batch but its last packet, then that packet alone.
            let last = batch.pop();
            ctx.emit_batch(0, batch);
            if let Some(p) = last {
                ctx.emit(0, p);
            }
            return;
        }
        for mut p in batch {
            let name = ctx.element_name().to_string();
            LOG.with(|l| l.borrow_mut().push(format!("{name}:{}", p.data()[0])));
            match self.kind {
                "Loop" => {
                    let v = p.data()[0];
                    if v > 0 {
                        p.writable()[0] = v - 1;
                        ctx.emit(0, p);
                    } else {
                        ctx.emit(1, p);
                    }
                }
                "Fan" => {
                    ctx.emit(0, p.clone());
                    ctx.emit(1, p);
                }
                _ => {
                    if ctx.noutputs() > 0 {
                        ctx.emit(0, p);
                    }
                }
            }
        }
    }
}

/// The router of `names` (name, class, configuration) and `conns` from the
/// classes in `reg`, panicking with every error.
fn build_router(
    reg: &Registry,
    names: &[(&str, &str, &str)],
    conns: &[(usize, usize, usize, usize)],
) -> Router {
    let spec = RouterSpec::from_lists("t", names, conns);
    match Router::new(spec, "", reg, &RouterOptions::default()) {
        Ok(r) => r,
        Err(d) => panic!("{:?}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
    }
}

fn act_router(names: &[(&str, &str)], conns: &[(usize, usize, usize, usize)]) -> Router {
    let mut reg = Registry::new();
    reg.add("Loop", || Box::new(Act { kind: "Loop" }));
    reg.add("Fan", || Box::new(Act { kind: "Fan" }));
    reg.add("Log", || Box::new(Act { kind: "Log" }));
    reg.add("Size", || Box::new(Act { kind: "Size" }));
    reg.add("Stamp", || Box::new(Act { kind: "Stamp" }));
    reg.add("Chain", || Box::new(Act { kind: "Chain" }));
    reg.add("ChainTee", || Box::new(Act { kind: "ChainTee" }));
    reg.add("Quiet", || Box::new(Act { kind: "Quiet" }));
    reg.add("BatchThenOne", || {
        Box::new(Act {
            kind: "BatchThenOne",
        })
    });
    let names: Vec<(&str, &str, &str)> = names.iter().map(|(n, c)| (*n, *c, "")).collect();
    build_router(&reg, &names, conns)
}

/// A packet injected from outside the driver sees the time of the call in
/// `recent()`, not the time the clock was last read.
#[test]
fn inject_refreshes_the_recent_time() {
    let mut r = act_router(&[("s", "Stamp")], &[]);
    let built = r.core.rt.clock.recent().as_secs_f64();
    std::thread::sleep(std::time::Duration::from_millis(30));
    LOG.with(|l| l.borrow_mut().clear());
    r.inject_packet(0, 0, Packet::from_slice(&[1]));
    let seen: f64 = LOG.with(|l| l.borrow()[0].parse().unwrap());
    assert!(seen - built >= 0.025, "recent() {seen}, built at {built}");
}

#[test]
fn push_cycles_run_without_reentry() {
    // in -> l :: Loop; l[0] -> back :: Log -> l (a cycle); l[1] -> out.
    let mut r = act_router(
        &[
            ("in", "Log"),
            ("l", "Loop"),
            ("back", "Log"),
            ("out", "Log"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 1, 0), (1, 1, 3, 0)],
    );
    LOG.with(|l| l.borrow_mut().clear());
    r.inject_packet(0, 0, Packet::from_slice(&[3]));
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        ["in:3", "l:3", "back:2", "l:2", "back:1", "l:1", "back:0", "l:0", "out:0"]
    );
}

#[test]
fn one_packet_sees_clicks_depth_first_order() {
    // f :: Fan; f[0] -> a :: Fan; a[0] -> a0; a[1] -> a1; f[1] -> b.
    // Click: f, a, a0, a1, b (output 0's whole subtree before output 1).
    let mut r = act_router(
        &[
            ("f", "Fan"),
            ("a", "Fan"),
            ("a0", "Log"),
            ("a1", "Log"),
            ("b", "Log"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0), (0, 1, 4, 0)],
    );
    LOG.with(|l| l.borrow_mut().clear());
    r.inject_packet(0, 0, Packet::from_slice(&[9]));
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(log, ["f:9", "a:9", "a0:9", "a1:9", "b:9"]);
}

#[test]
fn a_packet_after_a_batch_to_the_same_input_joins_it() {
    // b :: BatchThenOne -> s :: Size: the batch waits in the dispatcher's
    // tail slot, and the single packet after it must join it there, as it
    // joined the batch on the work stack.
    let mut r = act_router(&[("b", "BatchThenOne"), ("s", "Size")], &[(0, 0, 1, 0)]);
    LOG.with(|l| l.borrow_mut().clear());
    let mut batch = crate::Batch::new();
    for i in 0..5u8 {
        batch.push(Packet::from_slice(&[i]));
    }
    r.inject(0, 0, batch);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(log, ["s:5"]);
}

#[test]
fn chains_run_from_the_element_table_in_order() {
    // in -> c1 :: Chain -> t :: ChainTee -> c2 :: Chain -> out; t[1] -> side.
    let mut r = act_router(
        &[
            ("in", "Log"),
            ("c1", "Chain"),
            ("t", "ChainTee"),
            ("c2", "Chain"),
            ("out", "Log"),
            ("side", "Log"),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (2, 0, 3, 0),
            (3, 0, 4, 0),
            (2, 1, 5, 0),
        ],
    );
    // Each chaining element's cell names where its output 0 leads; the
    // others name nothing.
    let targets: Vec<(usize, usize)> = r.core.elements.iter().map(|c| c.chain_next()).collect();
    let none = (super::NO_CHAIN, super::NO_CHAIN);
    assert_eq!(targets, [none, (2, 0), (3, 0), (4, 0), none, none]);
    LOG.with(|l| l.borrow_mut().clear());
    // Byte 0 of 0 is dropped by c1: the chain stops there.
    for v in [7u8, 0, 5] {
        r.inject_packet(0, 0, Packet::from_slice(&[v]));
    }
    let log = LOG.with(|l| l.borrow().clone());
    // t's copy to output 1 was emitted before its batch went on output 0,
    // so it runs first, as in Click.
    assert_eq!(
        log,
        [
            "in:7", "c1:7", "t:7", "side:7", "c2:7", "out:7", "in:0", "c1:0", "in:5", "c1:5",
            "t:5", "side:5", "c2:5", "out:5",
        ]
    );
}

#[test]
fn quiet_elements_in_a_chain_pass_their_batch_straight_on() {
    // in -> q1 :: Quiet -> q2 :: Quiet -> c :: Chain -> q3 :: Quiet, with
    // q3's output unconnected: only a quiet element with a chain target
    // is flagged, and the packets go down the chain in order (c drops a
    // byte 0 of 0). Debug builds also assert that the quiet hop skips no
    // output.
    let mut r = act_router(
        &[
            ("in", "Log"),
            ("q1", "Quiet"),
            ("q2", "Quiet"),
            ("c", "Chain"),
            ("q3", "Quiet"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0), (3, 0, 4, 0)],
    );
    let quiet: Vec<bool> = r.core.elements.iter().map(|c| c.chain_quiet()).collect();
    assert_eq!(quiet, [false, true, true, false, false]);
    LOG.with(|l| l.borrow_mut().clear());
    for v in [7u8, 0, 5] {
        r.inject_packet(0, 0, Packet::from_slice(&[v]));
    }
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        [
            "in:7", "q1:7", "q2:7", "c:7", "q3:7", "in:0", "q1:0", "q2:0", "c:0", "in:5", "q1:5",
            "q2:5", "c:5", "q3:5",
        ]
    );
}

#[test]
fn marking_an_element_shared_flags_the_chain_targets_into_it() {
    let mut r = act_router(
        &[
            ("in", "Log"),
            ("c1", "Chain"),
            ("c2", "Chain"),
            ("out", "Log"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    );
    let core = &mut r.core;
    super::mark_shared(&mut core.graph, &mut core.elements, 3, super::SHARED_BIT);
    assert_eq!(core.elements[1].chain_next(), (2, 0));
    assert_eq!(
        core.elements[2].chain_next(),
        (3 | super::SHARED_BIT as usize, 0)
    );
    assert_eq!(
        core.graph.push_target(2, 0),
        Some(((3 | super::SHARED_BIT) as usize, 0))
    );
    // Output 0's target is flagged for every element, chaining or not.
    assert_eq!(core.elements[0].out0(), (1, 0));
    assert_eq!(core.elements[2].out0(), core.elements[2].chain_next());
    assert_eq!(core.elements[3].out0(), (super::NO_CHAIN, super::NO_CHAIN));
}

/// A BURST 1 source: one packet a run, bytes 1, 2, 3, then none.
struct OneAtATime {
    task: crate::element::SourceTask,
    next: u8,
}

impl crate::element::Source for OneAtATime {
    fn generate(&mut self, _max: usize, _ctx: &mut Ctx) -> Option<crate::Batch> {
        if self.next > 3 {
            return None;
        }
        let mut batch = crate::Batch::new();
        batch.push(Packet::from_slice(&[self.next]));
        self.next += 1;
        Some(batch)
    }
    fn source_task(&self) -> &crate::element::SourceTask {
        &self.task
    }
}

impl Element for OneAtATime {
    fn port_count(&self) -> &'static str {
        "0/1"
    }
    fn processing(&self) -> &'static str {
        "h/h"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.task.initialize(ctx, 0, true);
        Ok(())
    }
    fn run_task(&mut self, _task: crate::TaskId, ctx: &mut Ctx) -> bool {
        crate::element::kinds::source_run_one(self, ctx)
    }
}

/// A registry with the one-packet source (`One`) and the chaining and
/// logging test elements.
fn one_at_a_time_registry() -> Registry {
    let mut reg = Registry::new();
    reg.add("One", || {
        Box::new(OneAtATime {
            task: Default::default(),
            next: 1,
        })
    });
    reg.add("Chain", || Box::new(Act { kind: "Chain" }));
    reg.add("ChainTee", || Box::new(Act { kind: "ChainTee" }));
    reg.add("Log", || Box::new(Act { kind: "Log" }));
    reg
}

#[test]
fn a_burst_one_source_emits_through_its_cached_output_target() {
    // src -> c :: Chain -> out; the source's emissions take output 0's
    // target from its table entry, and must reach the chain in order.
    let reg = one_at_a_time_registry();
    let names = [("src", "One", ""), ("c", "Chain", ""), ("out", "Log", "")];
    let mut r = build_router(&reg, &names, &[(0, 0, 1, 0), (1, 0, 2, 0)]);
    assert_eq!(r.core.elements[0].out0(), (1, 0));
    LOG.with(|l| l.borrow_mut().clear());
    r.run_limited(20);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(log, ["c:1", "out:1", "c:2", "out:2", "c:3", "out:3"]);
}

#[test]
fn a_lone_sources_reruns_run_what_its_chain_left_on_the_stack() {
    // src -> ct :: ChainTee; ct[0] -> a :: Log; ct[1] -> b :: Log. The
    // source is the only task, so every run after its first takes the
    // task loop's lone path (`Ctx::rerun_task`); the tee's copy is left on
    // the work stack by the chain, and must run, in Click's order (output
    // 1's copy first), before the next packet is made.
    let reg = one_at_a_time_registry();
    let names = [
        ("src", "One", ""),
        ("ct", "ChainTee", ""),
        ("a", "Log", ""),
        ("b", "Log", ""),
    ];
    let conns = [(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0)];
    let mut r = build_router(&reg, &names, &conns);
    LOG.with(|l| l.borrow_mut().clear());
    r.run_limited(20);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        ["ct:1", "b:1", "a:1", "ct:2", "b:2", "a:2", "ct:3", "b:3", "a:3"]
    );
}

/// A source on the thread its name ends with (`Src0`, `Src1`), or an
/// element that runs as one copy per thread (`Copied`).
struct OnThread {
    kind: &'static str,
}

impl Element for OnThread {
    fn port_count(&self) -> &'static str {
        if self.kind == "Copied" {
            "1/0"
        } else {
            "0/1"
        }
    }
    fn processing(&self) -> &'static str {
        "h/h"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        if let Some(t) = self.kind.strip_prefix("Src") {
            ctx.new_task(false);
            ctx.set_thread_preference(ctx.element_index(), t.parse().unwrap());
        }
        Ok(())
    }
    fn per_thread_copy(&self) -> Option<Box<dyn Element>> {
        (self.kind == "Copied").then(|| Box::new(OnThread { kind: "Copied" }) as Box<dyn Element>)
    }
}

#[test]
fn installing_on_two_threads_flags_chain_targets_into_a_copied_element() {
    // s0 -> a0 :: Chain -> c; s1 -> a1 :: Chain -> c; s0 on thread 0,
    // s1 on thread 1, so c runs as one copy per thread and each chain
    // must hand its batch to the running thread's copy.
    let mut reg = Registry::new();
    reg.add("Src0", || Box::new(OnThread { kind: "Src0" }));
    reg.add("Src1", || Box::new(OnThread { kind: "Src1" }));
    reg.add("Copied", || Box::new(OnThread { kind: "Copied" }));
    reg.add("Chain", || Box::new(Act { kind: "Chain" }));
    let names = [
        ("s0", "Src0", ""),
        ("s1", "Src1", ""),
        ("a0", "Chain", ""),
        ("a1", "Chain", ""),
        ("c", "Copied", ""),
    ];
    let conns = [(0, 0, 2, 0), (1, 0, 3, 0), (2, 0, 4, 0), (3, 0, 4, 0)];
    let spec = RouterSpec::from_lists("t", &names, &conns);
    let opts = RouterOptions {
        threads: 2,
        ..RouterOptions::default()
    };
    let r = match Router::new(spec, "", &reg, &opts) {
        Ok(r) => r,
        Err(d) => panic!("{:?}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
    };
    assert!(r.core.has_thread_copies(4));
    let flagged = (4 | super::SHARED_BIT as usize, 0);
    for a in [2, 3] {
        assert_eq!(r.core.elements[a].chain_next(), flagged, "element {a}");
        assert_eq!(r.core.graph.push_target(a, 0), Some((flagged.0, 0)));
        assert_eq!(r.core.elements[a].out0(), flagged, "element {a}");
    }
}

thread_local! {
    static SELECT_FD: std::cell::Cell<i32> = const { std::cell::Cell::new(-1) };
    static SELECTED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Registers the descriptor in SELECT_FD; when it is readable, reads
/// it, records the bytes and stops the driver.
struct Sel;

impl Element for Sel {
    fn port_count(&self) -> &'static str {
        "0/0"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        ctx.add_select(SELECT_FD.with(|f| f.get()), crate::select::Interest::READ);
        Ok(())
    }
    fn selected(&mut self, fd: std::os::fd::RawFd, readable: bool, _w: bool, ctx: &mut Ctx) {
        assert!(readable);
        let mut buf = [0u8; 16];
        // SAFETY: reading into a valid buffer from a descriptor the test owns.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        SELECTED.with(|s| s.borrow_mut().extend_from_slice(&buf[..n.max(0) as usize]));
        ctx.please_stop();
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot call poll(2)")]
fn idle_router_wakes_on_ready_descriptor() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let (mut a, b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    SELECT_FD.with(|f| f.set(b.as_raw_fd()));
    let mut reg = Registry::new();
    reg.add("Sel", || Box::new(Sel));
    let spec = RouterSpec::from_lists("t", &[("s", "Sel", "")], &[]);
    let mut r =
        Router::new(spec, "", &reg, &RouterOptions::default()).unwrap_or_else(|_| panic!("router"));
    // Nothing is ready: the router waits (it is not quiescent while a
    // descriptor is registered) until the iteration limit.
    assert_eq!(r.run_limited(3), StopReason::Limit);
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        a.write_all(b"hi").expect("write");
        a
    });
    let started = std::time::Instant::now();
    assert_eq!(r.run(), StopReason::Stopped);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    drop(writer.join());
    assert_eq!(SELECTED.with(|s| s.borrow().clone()), b"hi");
}

#[test]
fn flow_codes_limit_the_search() {
    let f = FlowCode::parse("xy/x").expect("valid");
    assert!(f.flows(0, 0) && !f.flows(1, 0));
}

/// A pull source that, on each pull, also pushes a copy of the packet it
/// returns out of its push output 1: bytes 1, 2, 3, then none.
struct Tap {
    next: u8,
}

impl Element for Tap {
    fn port_count(&self) -> &'static str {
        "0/2"
    }
    fn processing(&self) -> &'static str {
        "h/lh"
    }
    fn pull(&mut self, _port: usize, _max: usize, ctx: &mut Ctx) -> Option<crate::Batch> {
        if self.next > 3 {
            return None;
        }
        let p = Packet::from_slice(&[self.next]);
        self.next += 1;
        ctx.emit(1, p.clone());
        Some(crate::Batch::single(p))
    }
}

/// A task that pulls one packet a run from input 0 and logs it
/// (`pulled:N`); packets pushed into input 1 are logged as `pushed:N`.
struct Echo {
    task: Option<crate::TaskId>,
}

impl Element for Echo {
    fn port_count(&self) -> &'static str {
        "2/0"
    }
    fn processing(&self) -> &'static str {
        "lh/h"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.task = Some(ctx.new_task(true));
        Ok(())
    }
    fn push(&mut self, _port: usize, batch: crate::Batch, _ctx: &mut Ctx) {
        for p in batch {
            LOG.with(|l| l.borrow_mut().push(format!("pushed:{}", p.data()[0])));
        }
    }
    fn run_task(&mut self, _task: crate::TaskId, ctx: &mut Ctx) -> bool {
        let Some(batch) = ctx.pull(0, 1) else {
            return false;
        };
        for p in batch {
            LOG.with(|l| l.borrow_mut().push(format!("pulled:{}", p.data()[0])));
        }
        ctx.fast_reschedule();
        true
    }
}

#[test]
fn a_lone_tasks_reruns_run_the_work_deferred_by_its_last_run() {
    // tap[0] -> [0] echo (pulled by echo's task); tap[1] -> [1] echo
    // (pushed while echo is busy pulling, so deferred until its run
    // returns). Echo's task is the only one: its runs after the first
    // take the task loop's lone path, and each run's deferred push must
    // be delivered before the next run.
    let mut reg = Registry::new();
    reg.add("Tap", || Box::new(Tap { next: 1 }));
    reg.add("Echo", || Box::new(Echo { task: None }));
    let names = [("tap", "Tap", ""), ("echo", "Echo", "")];
    let conns = [(0, 0, 1, 0), (0, 1, 1, 1)];
    let mut r = build_router(&reg, &names, &conns);
    LOG.with(|l| l.borrow_mut().clear());
    r.run_limited(20);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        ["pulled:1", "pushed:1", "pulled:2", "pushed:2", "pulled:3", "pushed:3"]
    );
}

/// A global read handler given a parameter it does not take is an error,
/// in Click's words, as an element's is (Script's `read version x`).
#[test]
fn global_read_handler_refuses_a_parameter() {
    let mut r = act_router(&[("s", "Stamp")], &[]);
    assert_eq!(
        r.read_handler("version", Some("x")),
        Err("read handler 'version' does not take parameters".to_string())
    );
    assert!(r.read_handler("version", Some("")).is_ok());
    assert!(r.read_handler("version", None).is_ok());
}

/// A task that runs `runs` times, asking to run again on every run but
/// the last, and logs whether its task counts as scheduled as each run
/// starts (`name:start:BOOL`) and after `fast_reschedule` (`name:asked:BOOL`).
struct Again {
    name: &'static str,
    runs: u32,
    task: Option<crate::TaskId>,
}

impl Element for Again {
    fn port_count(&self) -> &'static str {
        "0/0"
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        self.task = Some(ctx.new_task(true));
        Ok(())
    }
    fn run_task(&mut self, task: crate::TaskId, ctx: &mut Ctx) -> bool {
        let name = self.name;
        let log =
            |what: &str, v: bool| LOG.with(|l| l.borrow_mut().push(format!("{name}:{what}:{v}")));
        log("start", ctx.task_scheduled(task));
        self.runs = self.runs.saturating_sub(1);
        if self.runs == 0 {
            return false;
        }
        ctx.fast_reschedule();
        log("asked", ctx.task_scheduled(task));
        true
    }
}

#[test]
fn a_lone_tasks_rerun_does_not_count_as_scheduled_before_it_asks() {
    // As Click's `scheduled()` in `run_task`: a running task is not
    // scheduled until it calls `fast_reschedule` in this run; the request
    // of its previous run (which the task loop honoured) does not carry
    // over, on the lone rerun path (one task) or the queue's (two).
    for two in [false, true] {
        let mut reg = Registry::new();
        reg.add("A", || {
            Box::new(Again {
                name: "a",
                runs: 3,
                task: None,
            })
        });
        reg.add("B", || {
            Box::new(Again {
                name: "b",
                runs: 2,
                task: None,
            })
        });
        let names: &[(&str, &str, &str)] = if two {
            &[("a", "A", ""), ("b", "B", "")]
        } else {
            &[("a", "A", "")]
        };
        let mut r = build_router(&reg, names, &[]);
        LOG.with(|l| l.borrow_mut().clear());
        r.run_limited(20);
        let log = LOG.with(|l| l.borrow().clone());
        let want: Vec<&str> = if two {
            vec![
                "a:start:false",
                "a:asked:true",
                "b:start:false",
                "b:asked:true",
                "a:start:false",
                "a:asked:true",
                "b:start:false",
                "a:start:false",
            ]
        } else {
            vec![
                "a:start:false",
                "a:asked:true",
                "a:start:false",
                "a:asked:true",
                "a:start:false",
            ]
        };
        assert_eq!(log, want, "two tasks: {two}");
    }
}

thread_local! {
    /// The signal Turn "a" raises, for Turn "c" to listen to.
    static TURN_SIGNAL: std::cell::Cell<Option<crate::SignalId>> = const { std::cell::Cell::new(None) };
}

/// A task that logs `NAME:TASK` at each run and runs RUNS times. With
/// `raise`, it creates a signal and raises it at its third run; with
/// `listen`, its task starts asleep and listens to that signal (its only
/// listener).
struct Turn {
    task: Option<crate::TaskId>,
    runs: u32,
    raise: bool,
    listen: bool,
}

impl Element for Turn {
    fn port_count(&self) -> &'static str {
        "0/0"
    }
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut words = conf.split_whitespace();
        self.runs = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        match words.next() {
            Some("raise") => self.raise = true,
            Some("listen") => self.listen = true,
            _ => {}
        }
        Ok(())
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(!self.listen);
        if self.raise {
            TURN_SIGNAL.with(|s| s.set(Some(ctx.new_signal(false))));
        }
        if self.listen {
            let s = TURN_SIGNAL
                .with(|s| s.get())
                .expect("the raiser comes first");
            ctx.core.rt.add_listener(s, t);
        }
        self.task = Some(t);
        Ok(())
    }
    fn run_task(&mut self, task: crate::TaskId, ctx: &mut Ctx) -> bool {
        assert_eq!(
            Some(task),
            self.task,
            "{} ran another's task",
            ctx.element_name()
        );
        LOG.with(|l| {
            l.borrow_mut()
                .push(format!("{}:{}", ctx.element_name(), task.0))
        });
        self.runs -= 1;
        if self.raise && self.runs == 3 {
            if let Some(s) = TURN_SIGNAL.with(|s| s.get()) {
                ctx.wake_signal(s);
            }
        }
        if self.runs == 0 {
            return false;
        }
        ctx.fast_reschedule();
        true
    }
}

/// Two tasks taking turns, and a third woken into them through a signal
/// it alone listens to: each run is its own element's (the task loop
/// keeps the element of the task that ran before, for two tasks taking
/// turns), and the woken task joins at the global pass, in the order
/// stride scheduling gives (equal passes in queueing order).
#[test]
fn tasks_taking_turns_run_their_own_elements_and_a_woken_one_joins() {
    let mut reg = Registry::new();
    reg.add("Turn", || {
        Box::new(Turn {
            task: None,
            runs: 0,
            raise: false,
            listen: false,
        })
    });
    let names = [
        ("a", "Turn", "6 raise"),
        ("b", "Turn", "6"),
        ("c", "Turn", "2 listen"),
    ];
    let mut r = build_router(&reg, &names, &[]);
    LOG.with(|l| l.borrow_mut().clear());
    r.run_limited(10);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        [
            "a:0", "b:1", "a:0", "b:1", "a:0", "b:1", "c:2", "a:0", "b:1", "c:2", "a:0", "b:1",
            "a:0", "b:1"
        ]
    );
}

/// A task that logs `NAME:TASK` at each run; each of its element's tasks
/// runs RUNS times. With `spawn`, the element adds a second task of its
/// own (scheduled) at its first task's second run, as a live
/// reconfiguration that creates a task would: the task table grows while
/// the task loop runs.
struct Spawn {
    tasks: Vec<(crate::TaskId, u32)>,
    runs: u32,
    spawn: bool,
}

impl Element for Spawn {
    fn port_count(&self) -> &'static str {
        "0/0"
    }
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut words = conf.split_whitespace();
        self.runs = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        self.spawn = words.next() == Some("spawn");
        Ok(())
    }
    fn initialize(&mut self, ctx: &mut InitCtx) -> ConfigResult {
        let t = ctx.new_task(true);
        self.tasks.push((t, self.runs));
        Ok(())
    }
    fn run_task(&mut self, task: crate::TaskId, ctx: &mut Ctx) -> bool {
        let name = ctx.element_name().to_string();
        let Some(i) = self.tasks.iter().position(|&(t, _)| t == task) else {
            panic!("{name} ran task {} of another element", task.0);
        };
        LOG.with(|l| l.borrow_mut().push(format!("{name}:{}", task.0)));
        self.tasks[i].1 -= 1;
        if self.spawn && i == 0 && self.tasks[0].1 == self.runs - 2 {
            let t = ctx.init_ctx().new_task(true);
            self.tasks.push((t, self.runs));
        }
        if self.tasks[i].1 == 0 {
            return false;
        }
        ctx.fast_reschedule();
        true
    }
}

/// A task added while the task loop runs (the task table grows under
/// it) joins two tasks taking turns: the loop's memory of the task that
/// ran before (its element and cell) never hands a run to the wrong
/// element, and every task runs its count, in stride order.
#[test]
fn a_task_added_while_two_take_turns_runs_its_own_element() {
    let mut reg = Registry::new();
    reg.add("Spawn", || {
        Box::new(Spawn {
            tasks: Vec::new(),
            runs: 0,
            spawn: false,
        })
    });
    let names = [("a", "Spawn", "4 spawn"), ("b", "Spawn", "4")];
    let mut r = build_router(&reg, &names, &[]);
    LOG.with(|l| l.borrow_mut().clear());
    r.run_limited(10);
    let log = LOG.with(|l| l.borrow().clone());
    assert_eq!(
        log,
        ["a:0", "b:1", "a:0", "b:1", "a:2", "a:0", "b:1", "a:2", "a:0", "b:1", "a:2", "a:2"]
    );
}
