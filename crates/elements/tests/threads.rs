//! One router on several threads (`-j N`): the thread-safety proof at
//! initialization, packets crossing threads through ThreadSafeQueue with
//! every packet accounted for, wakes across threads, handlers of other
//! threads' elements, quiescence and hot swap with the threads running.

use rclick_core::{RouterOptions, StopReason};
use rclick_elements::testing::{config_errors_with, from_config_with, read, try_from_config_with};

fn threads(n: usize) -> RouterOptions {
    RouterOptions {
        threads: n,
        capture_chatter: true,
        ..RouterOptions::default()
    }
}

fn num(r: &mut rclick_core::Router, h: &str) -> u64 {
    read(r, h)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{h} is not a number"))
}

#[test]
fn a_queue_reached_from_two_threads_is_refused_naming_both() {
    let errs = config_errors_with(
        "src :: InfiniteSource(LIMIT 10) -> q :: Queue -> uq :: Unqueue -> Discard;
         StaticThreadSched(uq 1);",
        &threads(2),
    );
    assert!(
        errs.contains("'q :: Queue' is reached by thread 0 (from 'src :: InfiniteSource') and thread 1 (from 'uq :: Unqueue')"),
        "{errs}"
    );
    assert!(
        errs.contains("put a ThreadSafeQueue between the threads"),
        "{errs}"
    );
    assert!(errs.contains("Router could not be initialized!"), "{errs}");
    // The same configuration on one thread is fine; and with a
    // ThreadSafeQueue it is fine on two.
    assert!(try_from_config_with(
        "src :: InfiniteSource(LIMIT 10) -> q :: Queue -> uq :: Unqueue -> Discard;
         StaticThreadSched(uq 0);",
        &threads(2),
    )
    .is_ok());
    assert!(try_from_config_with(
        "src :: InfiniteSource(LIMIT 10) -> q :: ThreadSafeQueue -> uq :: Unqueue -> Discard;
         StaticThreadSched(uq 1);",
        &threads(2),
    )
    .is_ok());
}

/// Click's idiom of an Idle feeding a queue a worker drains is accepted:
/// Idle acts through nothing, so it takes its neighbour's thread.
#[test]
fn an_idle_feeding_a_workers_queue_is_accepted() {
    let mut r = from_config_with(
        "Idle -> q :: Queue -> uq :: Unqueue -> Discard; StaticThreadSched(uq 1);",
        &threads(2),
    );
    assert_eq!(r.nthreads(), 2);
    assert_eq!(read(&mut r, "uq.home_thread"), "1");
}

/// Preference -1 is Click's quiescent thread: the task never runs, with one
/// thread as with several.
#[test]
fn preference_minus_one_never_runs_the_task() {
    for n in [1, 2] {
        let mut r = from_config_with(
            "i :: InfiniteSource(LIMIT 3) -> c :: Counter -> Discard;
             StaticThreadSched(i -1);
             Script(wait 0.05s, stop);",
            &threads(n),
        );
        assert_eq!(r.run(), StopReason::Stopped);
        assert_eq!(read(&mut r, "c.count"), "0", "-j {n}");
        assert_eq!(read(&mut r, "i.scheduled"), "false", "-j {n}");
    }
}

/// Elements between the threads are refused too, not only queues: a
/// Paint pushed to from two sources on two threads, and a Counter whose
/// COUNT_CALL must see every packet (so it cannot run as a copy per
/// thread).
#[test]
fn an_element_pushed_to_from_two_threads_is_refused() {
    let errs = config_errors_with(
        "a :: InfiniteSource -> p :: Paint(1) -> Discard;
         b :: InfiniteSource -> p;
         StaticThreadSched(b 1);",
        &threads(2),
    );
    assert!(
        errs.contains("'p :: Paint' is reached by thread 0"),
        "{errs}"
    );
    let errs = config_errors_with(
        "a :: InfiniteSource -> c :: Counter(COUNT_CALL 5 a.active false) -> Discard;
         b :: InfiniteSource -> c;
         StaticThreadSched(b 1);",
        &threads(2),
    );
    assert!(
        errs.contains("'c :: Counter' is reached by thread 0"),
        "{errs}"
    );
}

/// A Counter, Null and Discard reached from several threads run as one
/// copy per thread (nothing shared, nothing locked); reads add the copies
/// up, a reset clears them all, and a hot swap hands on the whole count.
#[test]
fn per_thread_copies_are_counted_together() {
    const N: u64 = 200_000;
    for n in [2usize, 3] {
        let sources: String = (0..n)
            .map(|t| format!("s{t} :: InfiniteSource(LIMIT {N}, BURST 16, LENGTH 60) -> c;\n"))
            .collect();
        let prefs: Vec<String> = (0..n).map(|t| format!("s{t} {t}")).collect();
        let config = format!(
            "c :: Counter -> Null -> d :: Discard;
             {sources} StaticThreadSched({});",
            prefs.join(", ")
        );
        let mut r = from_config_with(&config, &threads(n));
        assert_eq!(r.run(), StopReason::Quiescent);
        let total = n as u64 * N;
        assert_eq!(num(&mut r, "c.count"), total, "-j {n}");
        assert_eq!(num(&mut r, "c.byte_count"), total * 60, "-j {n}");
        assert_eq!(num(&mut r, "d.count"), total, "-j {n}");
        // Every copy saw packets: each thread pushed into its own.
        r.write_handler("c.reset", "").unwrap();
        assert_eq!(
            num(&mut r, "c.count"),
            0,
            "-j {n}: reset reaches every copy"
        );
        assert_eq!(num(&mut r, "d.count"), total, "-j {n}");
        // The new router's Discard starts from every thread's count.
        r.hotswap(&config).map_err(|d| format!("{d:?}")).unwrap();
        assert_eq!(num(&mut r, "d.count"), total, "-j {n}: after hot swap");
    }
}

/// A chain on each thread (Counter chains: its output 0 is handed on
/// without a batch handoff) leading into elements copied per thread:
/// each chain's last step must find the running thread's copy.
#[test]
fn chains_on_two_threads_lead_into_per_thread_copies() {
    const N: u64 = 100_000;
    let config = format!(
        "s0 :: InfiniteSource(LIMIT {N}, BURST 16, LENGTH 60) -> a0 :: Counter -> c :: Counter -> Null -> d :: Discard;
         s1 :: InfiniteSource(LIMIT {N}, BURST 1, LENGTH 60) -> a1 :: Counter -> c;
         StaticThreadSched(s0 0, s1 1);"
    );
    let mut r = from_config_with(&config, &threads(2));
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!((num(&mut r, "a0.count"), num(&mut r, "a1.count")), (N, N));
    assert_eq!(num(&mut r, "c.count"), 2 * N);
    assert_eq!(num(&mut r, "d.count"), 2 * N);
}

/// Two flows on two threads, each a whole pipeline of its own, meeting
/// at one ThreadSafeQueue that a third task drains.
#[test]
fn a_flow_split_meets_at_a_thread_safe_queue() {
    const N: u64 = 300_000;
    let mut r = from_config_with(
        &format!(
            "a :: InfiniteSource(LIMIT {N}, BURST 16) -> ca :: Counter -> q :: ThreadSafeQueue(100000);
             b :: InfiniteSource(LIMIT {N}, BURST 16) -> cb :: Counter -> q;
             q -> uq :: Unqueue(BURST 64) -> c :: Counter -> Discard;
             StaticThreadSched(a 0, b 1, uq 2);"
        ),
        &threads(3),
    );
    // Nothing stops the sources: the run ends when nothing is left to do.
    assert_eq!(r.run(), StopReason::Quiescent);
    let (ca, cb, c, drops) = (
        num(&mut r, "ca.count"),
        num(&mut r, "cb.count"),
        num(&mut r, "c.count"),
        num(&mut r, "q.drops"),
    );
    assert_eq!((ca, cb), (N, N));
    assert_eq!(c + drops, 2 * N, "delivered {c}, dropped {drops}");
    assert_eq!(num(&mut r, "q.length"), 0);
}

/// A consumer asleep on an empty queue is woken from the producer's
/// thread, packet after packet, and stops when a Script says so.
#[test]
fn a_sleeping_consumer_is_woken_from_another_thread() {
    let mut r = from_config_with(
        "src :: RatedSource(RATE 200) -> q :: ThreadSafeQueue -> uq :: Unqueue -> c :: Counter -> Discard;
         StaticThreadSched(src 0, uq 1);
         Script(wait 0.5s, stop);",
        &threads(2),
    );
    assert_eq!(r.run(), StopReason::Stopped);
    let c = num(&mut r, "c.count");
    let made = num(&mut r, "src.count");
    let queued = num(&mut r, "q.length");
    // Each packet wakes the consumer on the other thread, so at most the
    // last one or two can still wait in the queue. How many the source made
    // depends on the CPU time this machine gave it (about 100 in 0.5 s);
    // a starved machine makes fewer, never more.
    assert!(
        (10..=140).contains(&made),
        "source made {made} after half a second at 200/s"
    );
    assert_eq!(
        c + queued,
        made,
        "counted {c}, queued {queued}, made {made}"
    );
    assert!(
        queued <= 2,
        "{queued} packets left waiting for the consumer"
    );
}

/// A Script on thread 0 reads a handler of an element at home on thread
/// 1 while it runs (the other threads park for each call), and stops the
/// router only once the count it read has passed 1000.
#[test]
fn thread_zero_reads_another_threads_handlers_while_it_runs() {
    let mut r = from_config_with(
        "src :: InfiniteSource(BURST 8) -> q :: ThreadSafeQueue -> uq :: Unqueue(BURST 8) -> c :: Counter -> Discard;
         StaticThreadSched(src 0, uq 1);
         Script(label l, wait 0.01s, goto l $(lt $(c.count) 1000), stop);",
        &threads(2),
    );
    assert_eq!(r.run(), StopReason::Stopped);
    let c = num(&mut r, "c.count");
    assert!(c >= 1000, "stopped at count {c}");
}

/// A Script on thread 1 cannot stop the world: its call to a handler of
/// thread 0's element is refused with an error, and the router goes on.
#[test]
fn a_worker_cannot_call_another_threads_handler() {
    let mut r = from_config_with(
        "c :: Counter; Idle -> c -> Discard;
         s :: Script(wait 0.05s, write c.reset, wait 0.05s, stop);
         StaticThreadSched(s 1);",
        &threads(2),
    );
    // Script has a timer, not a task: put it on thread 1 by its
    // preference.
    assert_eq!(r.run(), StopReason::Stopped);
    let chatter = r.take_chatter().join("\n");
    assert!(
        chatter.contains("'c.reset' (thread 0) cannot be called from thread 1"),
        "{chatter}"
    );
}

/// Hot swap with both threads running, over a ControlSocket served by
/// thread 0: the new router takes the queue's packets and the counts, and
/// both of its threads run on.
#[test]
fn hot_swap_over_the_control_socket_keeps_every_thread_running() {
    use std::io::{BufRead, BufReader, Write};
    let base = 20000
        + (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
            % 30000) as u16;
    let traffic = "src :: InfiniteSource(BURST 32) -> q :: ThreadSafeQueue(4096)
           -> uq :: Unqueue(BURST 32) -> c :: Counter -> Discard;
         StaticThreadSched(src 0, uq 1);";
    let server = format!("cs :: ControlSocket(TCP, {base}+);");
    let config = format!("{server} {traffic}");
    let opts = RouterOptions {
        hotswap: true,
        ..threads(std::env::var("NT").map(|v| v.parse().unwrap()).unwrap_or(2))
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let runner = std::thread::spawn(move || {
        let mut r = from_config_with(&config, &opts);
        let port: u16 = read(&mut r, "cs.port").trim().parse().expect("port");
        tx.send((r.stop_flag(), port)).unwrap();
        let reason = r.run();
        (reason, r)
    });
    let (stop, port) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("router started");
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut w = stream.try_clone().unwrap();
    let mut rd = BufReader::new(stream);
    let mut line = String::new();
    let mut next_line = |rd: &mut BufReader<std::net::TcpStream>| {
        line.clear();
        rd.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    };
    assert!(next_line(&mut rd).starts_with("Click::ControlSocket/"));
    let read_count = |w: &mut std::net::TcpStream,
                      rd: &mut BufReader<std::net::TcpStream>,
                      next: &mut dyn FnMut(&mut BufReader<std::net::TcpStream>) -> String|
     -> u64 {
        if w.write_all(b"READ c.count\r\n").is_err() {
            return u64::MAX;
        }
        let status = next(rd);
        if !status.starts_with("200") {
            return u64::MAX;
        }
        let size: usize = next(rd).trim_start_matches("DATA ").parse().unwrap();
        let mut buf = vec![0u8; size];
        std::io::Read::read_exact(rd, &mut buf).unwrap();
        String::from_utf8_lossy(&buf).trim().parse().unwrap()
    };
    // Many handler lookups from thread 0's ControlSocket into thread 1's
    // Counter while it counts: each stops the world, none may race.
    let mut batch = String::new();
    for _ in 0..3000 {
        batch.push_str("CHECKREAD c.count\r\n");
    }
    w.write_all(batch.as_bytes()).unwrap();
    for i in 0..3000 {
        let l = next_line(&mut rd);
        assert!(l.starts_with("200"), "CHECKREAD {i}: {l}");
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    if runner.is_finished() {
        let (reason, r) = runner.join().expect("router thread");
        panic!("router stopped early: {reason:?} {:?}", r.take_chatter());
    }
    let before = read_count(&mut w, &mut rd, &mut next_line);
    if before == u64::MAX {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (reason, r) = runner.join().expect("router thread");
        panic!("READ failed: {reason:?} {:?}", r.take_chatter());
    }
    assert!(before > 0, "thread 1 counted nothing before the swap");
    let new_config = format!("{server} {traffic} Idle -> extra :: Counter -> Discard;");
    w.write_all(format!("WRITEDATA hotconfig {}\r\n{new_config}", new_config.len()).as_bytes())
        .unwrap();
    let answer = next_line(&mut rd);
    assert!(answer.starts_with("200"), "hotconfig: {answer}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let after = read_count(&mut w, &mut rd, &mut next_line);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let later = read_count(&mut w, &mut rd, &mut next_line);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (reason, mut r) = runner.join().expect("router thread");
    assert_eq!(reason, StopReason::Signalled);
    assert_eq!(r.hotswap_install_stats().count, 1);
    assert_eq!(r.nthreads(), 2);
    // The count carried over and thread 1 of the new router counts on.
    assert!(
        after >= before && later > after,
        "before {before} after {after} later {later}"
    );
    assert_eq!(read(&mut r, "uq.home_thread"), "1");
    assert_eq!(read(&mut r, "extra.count"), "0");
}

/// BalancedThreadSched spreads independent tasks over the threads, moves
/// a source and the Unqueue that share a plain Queue together (they must
/// stay on one thread), and leaves a StaticThreadSched placement alone.
#[test]
fn balanced_thread_sched_moves_whole_groups() {
    let mut r = from_config_with(
        "a :: InfiniteSource(BURST 8) -> Discard;
         b :: InfiniteSource(BURST 8) -> Discard;
         c :: InfiniteSource(BURST 8) -> q :: Queue(64) -> u :: Unqueue(BURST 8) -> Discard;
         pinned :: InfiniteSource(BURST 8) -> Discard;
         StaticThreadSched(pinned 0);
         bts :: BalancedThreadSched(50);
         Script(wait 0.4s, stop);",
        &threads(2),
    );
    assert_eq!(r.run(), StopReason::Stopped);
    let home = |r: &mut rclick_core::Router, e: &str| read(r, &format!("{e}.home_thread"));
    let history = read(&mut r, "bts.history");
    assert!(num(&mut r, "bts.steps") >= 3, "{history}");
    // The group of c and u moved (or stayed) as one.
    assert_eq!(home(&mut r, "c"), home(&mut r, "u"), "{history}");
    assert_eq!(home(&mut r, "pinned"), "0", "{history}");
    let on_one: usize = ["a", "b", "c"]
        .iter()
        .filter(|e| home(&mut r, e) == "1")
        .count();
    assert!(on_one >= 1, "nothing moved to thread 1:\n{history}");
    // Every group is listed in each step.
    let last = history.lines().last().unwrap_or_default();
    for e in ["a@", "b@", "c@", "pinned@0"] {
        assert!(last.contains(e), "{e} missing from {last}");
    }
}

/// MSQueue and CPUQueue take pushes from two threads at once and lose
/// nothing: every packet is delivered or counted as a drop.
#[test]
fn msqueue_and_cpuqueue_take_pushes_from_two_threads() {
    const N: u64 = 200_000;
    for q in ["MSQueue(1000)", "CPUQueue(1000)"] {
        let mut r = from_config_with(
            &format!(
                "a :: InfiniteSource(LIMIT {N}, BURST 16) -> q :: {q} -> u :: Unqueue(BURST 32) -> c :: Counter -> Discard;
                 b :: InfiniteSource(LIMIT {N}, BURST 16) -> q;
                 StaticThreadSched(a 0, b 1, u 1);
                 Script(label l, wait 0.02s, goto l $(lt $(add $(c.count) $(q.drops)) {}), stop);",
                2 * N
            ),
            &threads(2),
        );
        assert_eq!(r.run(), StopReason::Stopped, "{q}");
        let (c, drops) = (num(&mut r, "c.count"), num(&mut r, "q.drops"));
        assert_eq!(c + drops, 2 * N, "{q}: delivered {c}, dropped {drops}");
        assert!(c > 0, "{q}");
    }
}

/// `home_thread` is writable, as in Click: a task that shares nothing
/// with other tasks moves with the elements it alone reaches; one that
/// shares a one-thread element with another task is refused, naming it.
#[test]
fn home_thread_moves_a_task_or_says_why_not() {
    const N: u64 = 50_000;
    let mut r = from_config_with(
        &format!(
            "a :: InfiniteSource(LIMIT {N}, BURST 8) -> ca :: Counter -> Discard;
             b :: InfiniteSource(LIMIT {N}, BURST 8) -> cb :: Counter -> Discard;
             x :: InfiniteSource(LIMIT 5) -> q :: Queue -> uq :: Unqueue -> Discard;"
        ),
        &threads(2),
    );
    assert_eq!(read(&mut r, "b.home_thread"), "0");
    r.write_handler("b.home_thread", "1").unwrap();
    assert_eq!(read(&mut r, "b.home_thread"), "1");
    let err = r.write_handler("x.home_thread", "1").unwrap_err();
    assert!(err.contains("'uq :: Unqueue'"), "{err}");
    assert_eq!(read(&mut r, "x.home_thread"), "0");
    let err = r.write_handler("a.home_thread", "2").unwrap_err();
    assert!(err.contains("out of range"), "{err}");
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!((num(&mut r, "ca.count"), num(&mut r, "cb.count")), (N, N));
    assert_eq!(read(&mut r, "b.home_thread"), "1");
}

/// Quiet observers (Null, AverageCounter) on each thread whose chain
/// target is a copy per thread: the quiet hop moves the batch straight
/// on to a flagged target, which must still find the running thread's
/// copy (debug builds assert the hop emitted nothing else).
#[test]
fn quiet_observers_on_two_threads_lead_into_per_thread_copies() {
    const N: u64 = 50_000;
    let config = format!(
        "s0 :: InfiniteSource(LIMIT {N}, BURST 16, LENGTH 60) -> n0 :: Null -> c :: Counter -> d :: Discard;
         s1 :: InfiniteSource(LIMIT {N}, BURST 1, LENGTH 60) -> n1 :: AverageCounter -> c;
         StaticThreadSched(s0 0, s1 1);"
    );
    let mut r = from_config_with(&config, &threads(2));
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(num(&mut r, "n1.count"), N);
    assert_eq!(num(&mut r, "c.count"), 2 * N);
    assert_eq!(num(&mut r, "d.count"), 2 * N);
}
