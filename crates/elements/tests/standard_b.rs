//! Script, DriverManager, Print, Message and Error; the quiet observers
//! (Null, the print elements, the dump writers, ...) in one chain.

use rclick_core::{Packet, StopReason};
use rclick_elements::standard::script::{capture_stdout, take_stdout};
use rclick_elements::testing::{build, from_config, read, spec, try_build, try_from_config};

/// Builds `text`, runs it to the end, and returns (stdout, stderr lines).
fn run(text: &str) -> (String, Vec<String>, StopReason) {
    capture_stdout();
    let mut r = from_config(text);
    let reason = r.run_limited(100_000);
    (take_stdout(), r.take_chatter(), reason)
}

#[test]
fn script_arithmetic_and_functions() {
    let (out, err, reason) = run("s0 :: Script(
        print $(add 1 2 3), print $(sub 10 2 2), print $(min 10 6 20), print $(max -1 6 3),
        print $(mul 1 2 3), print $(div 75 2.5 5), print $(idiv 60 2 5), print $(div 7 2),
        print $(htonl $(ntohl 6)), print $(htons $(ntohs 6)), print $(mod 7 3), print $(neg 4),
        print $(abs -2.5), print $(eq 10 0xA), print $(le 9 8), print $(eq 10x 10x), print $(lt abc abd),
        print $(not true), print $(and true false), print $(or false true), print $(if $(gt 2 1) yes no),
        print $(in foo bar foo), print $(length abcdef), print $(unquote \"a b\"), print $(first x y),
        print $(sprintf \"%05x|%-3d|%s\" 127 7 hi),
        write set foovar foo bar baz, print $(shift foovar), print $(shift foovar), print $(get foovar),
        stop)");
    assert_eq!(reason, StopReason::Stopped);
    assert!(err.is_empty(), "{err:?}");
    let want = [
        "6",
        "6",
        "6",
        "6",
        "6",
        "6",
        "6",
        "3.5",
        "6",
        "6",
        "1",
        "-4",
        "2.5",
        "true",
        "false",
        "true",
        "true",
        "false",
        "false",
        "true",
        "yes",
        "true",
        "6",
        "a b",
        "x",
        "0007f|7  |hi",
        "foo",
        "bar",
        "baz",
    ];
    assert_eq!(
        out,
        want.iter().map(|l| format!("{l}\n")).collect::<String>()
    );
}

#[test]
fn script_handlers_are_readable_from_outside() {
    let mut r = build(spec(
        &[("s", "Script", "TYPE PASSIVE, return $(add $1 $2)")],
        &[],
    ));
    assert_eq!(r.read_handler("s.add", Some("1 2 3")).unwrap(), "6");
    assert_eq!(
        r.read_handler("s.sprintf", Some("\"%d-%s\" 5 x")).unwrap(),
        "5-x"
    );
    assert_eq!(r.read_handler("s.run", Some("4 5")).unwrap(), "9");
    assert!(r.read_handler("s.add", Some("1 x")).is_err());
    let hs: Vec<String> = r
        .element_handlers(0)
        .iter()
        .map(|h| format!("{}\t{}", h.name, h.flag_string()))
        .collect();
    assert!(hs.contains(&"run\trw+".to_string()), "{hs:?}");
    assert!(hs.contains(&"add\tr+".to_string()));
    assert!(hs.contains(&"now\tr".to_string()));
}

#[test]
fn goto_loop_and_labels() {
    let (out, _, _) = run("Script(set x 0, label top, print $x, set x $(add $x 1), goto top $(lt $x 5), print \"done\", stop)");
    assert_eq!(out, "0\n1\n2\n3\n4\ndone\n");
    // print's handler vs. text forms, quoting, and goto end.
    let (out, _, _) = run("c :: Counter; InfiniteSource(ACTIVE false) -> c -> Discard; Script(print c.count, print \"c.count\", print '\"q\"', set x c.count, print $x, print $($x), goto end, print never)");
    assert_eq!(out, "0\nc.count\n\"q\"\nc.count\n0\n");
}

#[test]
fn too_many_jumps_disables_the_script() {
    let (_, err, reason) = run("s0 :: Script(label a, goto a); s1 :: Script(wait 1, stop);");
    assert_eq!(err, ["s0 :: Script: too many jumps, giving up"]);
    assert_eq!(reason, StopReason::Stopped);
}

#[test]
fn wait_uses_the_router_clock() {
    // Simulated time starts at 1e9 s; each wait jumps the clock.
    let (out, _, reason) =
        run("Script(print $(now), wait 1, print $(now), wait 0.5s, print $(now), stop)");
    assert_eq!(reason, StopReason::Stopped);
    assert_eq!(
        out,
        "1000000000.000000\n1000000001.000000\n1000000001.500000\n"
    );
}

#[test]
fn stop_and_write_handlers_on_other_elements() {
    let (out, err, reason) = run(
        "src :: InfiniteSource(LIMIT 5, ACTIVE false) -> c :: Counter -> Discard;
         Script(write src.active true, wait 0.1, read c.count, write c.reset, print $(c.count), print $?, write nosuch.h, print $?, stop)",
    );
    assert_eq!(reason, StopReason::Stopped);
    // A handler that cannot be found is reported and leaves $? as it was
    // (Click's Script).
    assert_eq!(out, "0\n0\n0\n");
    assert_eq!(err[..2], ["c.count:".to_string(), "5".to_string()]);
    assert_eq!(err[2], "While executing 'Script@4 :: Script':", "{err:?}");
    assert!(err[3].starts_with("  "), "{err:?}");
}

#[test]
fn passive_script_run_and_step() {
    capture_stdout();
    let mut r =
        from_config("s :: Script(TYPE PASSIVE, print \"a\", pause, print \"b\", return $args)");
    assert_eq!(r.run_limited(1000), StopReason::Quiescent);
    assert_eq!(take_stdout(), "");
    r.write_handler("s.run", "x y").unwrap();
    assert_eq!(take_stdout(), "a\n");
    r.write_handler("s.step", "").unwrap();
    assert_eq!(take_stdout(), "b\n");
    // As in Click, `run` restarts at the top but a `pause` already passed
    // stays passed (only `goto` resets it).
    assert_eq!(r.read_handler("s.run", Some("p q")).unwrap(), "p q");
    assert_eq!(take_stdout(), "a\nb\n");
    r.write_handler("s.goto", "begin").unwrap();
    assert_eq!(take_stdout(), "a\n");
    assert!(r.write_handler("s.goto", "nowhere").is_err());
}

#[test]
fn packet_scripts_choose_outputs() {
    let mut r = from_config(
        "ps :: Script(TYPE PACKET, init i 0, set j $i, set i $(add $i 1), set i $(if $(eq $i 3) 0 $i), return $j);
         a :: Counter; b :: Counter; c :: Counter; d :: Discard;
         InfiniteSource(ACTIVE false) -> ps; ps[0] -> a -> d; ps[1] -> b -> d; ps[2] -> c -> d;
         e :: Script(exit); n :: Script(TYPE PACKET); x :: Counter;
         InfiniteSource(ACTIVE false) -> e -> Discard; InfiniteSource(ACTIVE false) -> n -> x -> Discard;",
    );
    let ps = r.find_element("ps").unwrap();
    for _ in 0..7 {
        r.inject_packet(ps, 0, Packet::from_slice(b"abc"));
    }
    assert_eq!(read(&mut r, "a.count"), "3");
    assert_eq!(read(&mut r, "b.count"), "2");
    assert_eq!(read(&mut r, "c.count"), "2");
    let e = r.find_element("e").unwrap();
    r.inject_packet(e, 0, Packet::from_slice(b"abc"));
    let n = r.find_element("n").unwrap();
    r.inject_packet(n, 0, Packet::from_slice(b"abc"));
    assert_eq!(read(&mut r, "x.count"), "1");
    // A Script with ports and no TYPE is a PACKET script; $input is the port.
    let mut r = from_config(
        "s :: Script(return $input); a :: Counter; b :: Counter;
         InfiniteSource(ACTIVE false) -> [0] s; InfiniteSource(ACTIVE false) -> [1] s; s[0] -> a -> Discard; s[1] -> b -> Discard;",
    );
    let s = r.find_element("s").unwrap();
    r.inject_packet(s, 1, Packet::from_slice(b"x"));
    r.inject_packet(s, 1, Packet::from_slice(b"x"));
    r.inject_packet(s, 0, Packet::from_slice(b"x"));
    assert_eq!(read(&mut r, "a.count"), "1");
    assert_eq!(read(&mut r, "b.count"), "2");
}

#[test]
fn bad_scripts_fail_to_configure() {
    let e = try_from_config("Script(frob 1, label, goto nowhere, set x)")
        .err()
        .unwrap();
    let text = e.join("\n");
    assert!(text.contains("syntax error at 'frob'"), "{text}");
    assert!(text.contains("syntax error at 'label'"), "{text}");
    assert!(text.contains("syntax error at 'set'"), "{text}");
    assert!(text.contains("no such label 'nowhere'"), "{text}");
    let e = try_from_config("Script(TYPE BOGUS)").err().unwrap();
    assert!(e.join("\n").contains("bad TYPE"));
    let e = try_from_config("InfiniteSource(ACTIVE false) -> Script(TYPE PASSIVE) -> Discard")
        .err()
        .unwrap();
    assert!(e
        .join("\n")
        .contains("ports allowed only on PACKET scripts"));
}

#[test]
fn drivermanager_default_stops_at_first_stop_event() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 3, STOP true) -> c :: Counter -> Discard; DriverManager;",
    );
    assert_eq!(r.run_limited(1000), StopReason::Stopped);
    assert_eq!(read(&mut r, "c.count"), "3");
}

#[test]
fn drivermanager_wait_stop_and_sequencing() {
    // Two stop events are needed; the second source's stop is the second.
    let (out, err, reason) = run(
        "a :: InfiniteSource(LIMIT 2, STOP true) -> ca :: Counter -> Discard;
         b :: InfiniteSource(LIMIT 50, STOP true) -> cb :: Counter -> Discard;
         DriverManager(wait_stop 2, read cb.count, print $(now), wait_time 2s, print $(now), stop, print never);",
    );
    assert_eq!(reason, StopReason::Stopped);
    assert_eq!(err, ["cb.count:", "50"]);
    assert_eq!(out, "1000000000.000000\n1000000002.000000\n");
}

#[test]
fn drivermanager_without_blocking_start_runs_immediately() {
    let (out, _, reason) = run("DriverManager(print \"start\", wait 1, print \"end\")");
    assert_eq!(reason, StopReason::Stopped);
    assert_eq!(out, "start\nend\n");
    // A stop event during a wait steps past it.
    // Then it blocks at `pause` and restores the run count; nothing else
    // can happen, so the run ends quiescent (Click would idle forever).
    let (out, _, reason) =
        run("DriverManager(wait 10, print $(now), pause, print \"never\"); Script(wait 1, stop)");
    assert_eq!(reason, StopReason::Quiescent);
    assert_eq!(out, "1000000001.000000\n");
}

fn print_line(config: &str, data: &[u8]) -> Vec<String> {
    let mut r = build(spec(
        &[
            ("s", "InfiniteSource", "ACTIVE false"),
            ("p", "Print", config),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    r.inject_packet(1, 0, Packet::from_slice(data));
    r.take_chatter()
}

#[test]
fn print_formats_exactly_like_click() {
    let data: Vec<u8> = (0u8..30).collect();
    assert_eq!(
        print_line("", &data),
        ["  30 | 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617"]
    );
    assert_eq!(print_line("hi", &data[..5]), ["hi:    5 | 00010203 04"]);
    assert_eq!(print_line("x, 6", &data), ["x:   30 | 00010203 0405"]);
    assert_eq!(
        print_line("x, MAXLENGTH -1", &data[..9]),
        ["x:    9 | 00010203 04050607 08"]
    );
    assert_eq!(
        print_line("CONTENTS ASCII", b"Hello, world!\n"),
        ["  14 |  Hello, w orld!."]
    );
    assert_eq!(print_line("l, CONTENTS NONE", b"abc"), ["l:    3"]);
    assert_eq!(
        print_line("\"two words\", 2", b"abc"),
        ["two words:    3 | 6162"]
    );
    assert_eq!(print_line("ACTIVE false", b"abc"), Vec::<String>::new());
    assert!(try_build(spec(
        &[
            ("s", "InfiniteSource", "ACTIVE false"),
            ("p", "Print", "CONTENTS FOO"),
            ("d", "Discard", "")
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)]
    ))
    .is_err());
}

#[test]
fn print_timestamp_and_headroom() {
    let mut r = build(spec(
        &[
            ("s", "InfiniteSource", "ACTIVE false"),
            ("p", "Print", "t, TIMESTAMP true, HEADROOM true"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    let mut p = Packet::from_slice(b"ab");
    p.set_timestamp_anno(rclick_core::Timestamp::from_sec_nsec(5, 250_000_000));
    let (h, t) = (p.headroom(), p.tailroom());
    r.inject_packet(1, 0, p);
    assert_eq!(
        r.take_chatter(),
        [format!("t: 5.250000:    2 (h{h} t{t}) | 6162")]
    );
}

#[test]
fn message_and_error_elements() {
    // Every line of a warning is prefixed, as Click does; the lines are
    // configuration messages, kept in order with the others.
    let mut r =
        from_config("m :: Message(\"hello there\"); w :: Message(\"careful\\nnow\", WARNING);");
    let said: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
    assert_eq!(
        said,
        [
            "test:1: While configuring 'm :: Message':",
            "  hello there",
            "test:1: While configuring 'w :: Message':",
            "  warning: careful",
            "  warning: now",
        ]
    );
    assert!(r.take_chatter().is_empty());
    let e = try_from_config("Message(\"it broke\", ERROR)")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.contains("it broke")), "{e:?}");
    let e = try_from_config("Message(x, LOUD)").err().unwrap();
    assert!(
        e.iter().any(|l| l.contains("unrecognized message type")),
        "{e:?}"
    );
    let e = try_from_config("InfiniteSource(ACTIVE false) -> Error(whatever, 1 2 3) -> Discard")
        .err()
        .unwrap();
    // Error fails without a message, so (as in Click) no "While
    // initializing" context line is printed.
    assert!(!e.iter().any(|l| l.contains("While initializing")), "{e:?}");
    assert!(
        e.iter()
            .any(|l| l.contains("Router could not be initialized!")),
        "{e:?}"
    );
}

#[test]
fn quoted_forms_and_cross_script_run() {
    let dir = std::env::temp_dir().join(format!("rclick-b-{}", std::process::id()));
    let file = dir.with_extension("out");
    let conf = format!(
        "s0 :: Script(printn >{} $(s.run \"\\<0a 09 01>\"), readq length \"\\<0a 09 01>\", setq x \"$(s.run a)\", print $x, set y \"$(s.run a)\", print $y, stop)
         s :: Script(TYPE PASSIVE, returnq $1)",
        file.display()
    );
    let (out, err, _) = run(&conf);
    assert_eq!(std::fs::read(&file).unwrap(), b"\n\t\x01");
    let _ = std::fs::remove_file(&file);
    assert_eq!(err, ["s0.length:", "3"]);
    assert_eq!(out, "a\n\"a\"\n");
}

/// A live `config` write that warns and then fails reports both, the
/// warning first, as Click's handler call gives both to one error handler
/// (a Script prints them under one "While calling" line); a warning is not
/// lost because an error followed it.
#[test]
fn config_write_warning_then_error_reports_both() {
    let mut r = from_config(
        "Idle -> Queue -> [0]s :: StrideSched(10, 2) -> Unqueue -> Discard;
         Idle -> Queue -> [1]s;",
    );
    let e = r.write_handler("s.config", "100000000, x").unwrap_err();
    assert_eq!(
        e,
        "warning: input 0's tickets reduced to 32768\n\
         argument 1 should be number of tickets (integer)"
    );
    assert!(r.take_chatter().is_empty());
}

/// Every quiet observer class in one chain, behind a chaining element and
/// in front of a Counter, with the dump writers failing part way (their
/// files are /dev/full): each hop moves the whole batch on (debug builds
/// assert it emitted nothing else and kept its batch), every packet is
/// printed once by each print element, and the writers' errors are only
/// reported.
#[test]
fn quiet_observers_in_one_chain_pass_every_packet_on() {
    const N: usize = 5000;
    let (stdout, chatter, reason) = run(&format!(
        "s :: InfiniteSource(DATA \\<45000014 00000000 40110000 0a000001 0a000002>, LIMIT {N}, BURST 7, STOP true)
           -> Paint(1) -> MarkIPHeader -> Null -> NotifierDebug -> ac :: AverageCounter
           -> IPPrint(ip) -> ARPPrint(arp) -> IP6Print(ip6)
           -> td :: ToDump(/dev/full) -> ToIPSummaryDump(/dev/full, CONTENTS ip_src)
           -> c :: Counter -> Discard;
         DriverManager(wait, print c.count, print ac.count, print td.count);"
    ));
    assert_eq!(reason, StopReason::Stopped, "{stdout}");
    let counts: Vec<&str> = stdout.lines().collect();
    assert_eq!(counts[..2], [N.to_string(), N.to_string()], "{stdout}");
    assert!(counts[2].parse::<usize>().unwrap() < N, "{stdout}");
    let printed = |label: &str| {
        chatter
            .iter()
            .filter(|l| l.starts_with(&format!("{label}:")))
            .count()
    };
    assert_eq!((printed("ip"), printed("arp"), printed("ip6")), (N, N, N));
    assert!(
        chatter.iter().any(|l| l.starts_with("ToDump(/dev/full)")),
        "{:?}",
        &chatter[chatter.len().saturating_sub(5)..]
    );
}
