//! Standard-domain elements that Click's regression suite exercises:
//! PushNull, PullNull, Hub, Clipboard, Pad, Resize, SetTimestampDelta,
//! LinkUnqueue, Bypass, InputSwitch, FullNoteQueue (and the queue kinds'
//! notifiers), PullSwitch, SimplePullSwitch, NotifierDebug. Packets are
//! injected into the element under test and what leaves is read back from
//! Print's output, pulls, or counters; handlers are read and written.

use rclick_core::{Packet, StopReason, Timestamp};
use rclick_elements::testing::{config_errors, from_config, read};

/// What Print elements printed, as (label, data bytes) pairs. Print's
/// format is `LABEL: LEN | HEX...` with CONTENTS HEX (the default).
fn printed(r: &mut rclick_core::Router) -> Vec<(String, Vec<u8>)> {
    r.take_chatter()
        .iter()
        .filter_map(|l| {
            let (head, hex) = l.split_once(" | ").unwrap_or((l.as_str(), ""));
            let label = head.split(':').next()?.trim().to_string();
            let hex: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some((label, bytes))
        })
        .collect()
}

fn elem(r: &rclick_core::Router, name: &str) -> usize {
    r.find_element(name)
        .unwrap_or_else(|| panic!("no element {name}"))
}

fn push(r: &mut rclick_core::Router, name: &str, port: usize, data: &[u8]) {
    let e = elem(r, name);
    r.inject_packet(e, port, Packet::from_slice(data));
}

fn count(r: &mut rclick_core::Router, h: &str) -> u64 {
    read(r, h).trim().parse().unwrap()
}

#[test]
fn pushnull_and_pullnull_forward_in_their_mode_only() {
    let mut r = from_config("Idle -> n :: PushNull -> c :: Counter -> Discard;");
    push(&mut r, "n", 0, b"abc");
    push(&mut r, "n", 0, b"de");
    assert_eq!(count(&mut r, "c.count"), 2);
    assert_eq!(count(&mut r, "c.byte_count"), 5);

    let mut r =
        from_config("Idle -> q :: Queue -> n :: PullNull -> c :: Counter -> Unqueue -> Discard;");
    push(&mut r, "q", 0, b"abc");
    let n = elem(&r, "n");
    let got = r.pull_from(n, 0, 8).expect("a packet through PullNull");
    assert_eq!(got.packets()[0].data(), b"abc");
    assert!(r.pull_from(n, 0, 8).is_none(), "the queue is empty");

    // Wrong modes are configuration errors.
    let e = config_errors("Idle -> q :: Queue -> PushNull -> Discard;");
    assert!(e.contains("pull") || e.contains("push"), "{e}");
    let e = config_errors("Idle -> PushNull -> PullNull -> Discard;");
    assert!(e.contains("pull") || e.contains("push"), "{e}");
    // No arguments.
    let e = config_errors("InfiniteSource -> PushNull(3) -> Discard;");
    assert!(e.contains("too many arguments"), "{e}");
}

#[test]
fn hub_sends_to_every_other_port() {
    let mut r = from_config(
        "h :: Hub; h[0] -> c0 :: Counter -> Discard; h[1] -> c1 :: Counter -> Discard;
         h[2] -> c2 :: Counter -> Discard; Idle -> [0]h; Idle -> [1]h; Idle -> [2]h;",
    );
    push(&mut r, "h", 1, b"x");
    assert_eq!(
        [
            count(&mut r, "c0.count"),
            count(&mut r, "c1.count"),
            count(&mut r, "c2.count")
        ],
        [1, 0, 1]
    );
    push(&mut r, "h", 0, b"y");
    push(&mut r, "h", 2, b"z");
    assert_eq!(
        [
            count(&mut r, "c0.count"),
            count(&mut r, "c1.count"),
            count(&mut r, "c2.count")
        ],
        [2, 2, 2]
    );
    // A one-port hub drops; inputs and outputs must match.
    let mut r = from_config("Idle -> h :: Hub -> c :: Counter -> Discard;");
    push(&mut r, "h", 0, b"x");
    assert_eq!(count(&mut r, "c.count"), 0);
    let e = config_errors("h :: Hub; Idle -> h; h[0] -> Discard; h[1] -> Discard;");
    assert!(!e.is_empty());
    // Hub is push only.
    let e = config_errors("Idle -> q :: Queue -> Hub -> Discard;");
    assert!(!e.is_empty());
}

#[test]
fn clipboard_copies_ranges_and_pastes_them() {
    let mut r = from_config(
        "cb :: Clipboard(0/1, 2/1, 9/1);
         Idle -> [0]cb[0] -> Print(A) -> Discard;
         Idle -> [1]cb[1] -> Print(B) -> Discard;",
    );
    // Before any copy, the clipboard is zero.
    push(&mut r, "cb", 1, b".a. is a .at,");
    push(&mut r, "cb", 0, b"Simplistic");
    push(&mut r, "cb", 1, b".a. is a .at,");
    // Too short to paste on (the farthest range ends at 10): unchanged.
    push(&mut r, "cb", 1, b"short");
    // A short copy source copies only the bytes it has.
    push(&mut r, "cb", 0, b"Da");
    push(&mut r, "cb", 1, b".a. is a .at,");
    let got = printed(&mut r);
    let want: Vec<(String, Vec<u8>)> = vec![
        ("B".into(), b"\0a\0 is a \0at,".to_vec()),
        ("A".into(), b"Simplistic".to_vec()),
        ("B".into(), b"Sam is a cat,".to_vec()),
        ("B".into(), b"short".to_vec()),
        ("A".into(), b"Da".to_vec()),
        ("B".into(), b"Dam is a cat,".to_vec()),
    ];
    assert_eq!(got, want);

    // Pull on both pairs.
    let mut r = from_config(
        "cb :: Clipboard(1/2);
         Idle -> q0 :: Queue -> [0]cb[0] -> Discard;
         Idle -> q1 :: Queue -> [1]cb[1] -> Discard;",
    );
    push(&mut r, "q0", 0, b"xYZx");
    push(&mut r, "q1", 0, b"abcd");
    let cb = elem(&r, "cb");
    let p0 = r.pull_from(cb, 0, 1).unwrap();
    assert_eq!(p0.packets()[0].data(), b"xYZx");
    let p1 = r.pull_from(cb, 1, 1).unwrap();
    assert_eq!(p1.packets()[0].data(), b"aYZd");

    // Errors, worded as Click's.
    let e = config_errors("Idle -> cb :: Clipboard(3) -> Discard; Idle -> [1]cb[1] -> Discard;");
    assert!(
        e.contains("range 0: expected '/' between offset and length"),
        "{e}"
    );
    let e =
        config_errors("Idle -> cb :: Clipboard(0/1, a/3) -> Discard; Idle -> [1]cb[1] -> Discard;");
    assert!(e.contains("range 1: invalid offset or length"), "{e}");
}

fn set_extra_length(p: &mut Packet, n: u32) {
    p.set_anno_bytes(rclick_core::packet::anno::EXTRA_LENGTH, &n.to_ne_bytes());
}

#[test]
fn pad_extends_to_length_or_by_the_extra_length_annotation() {
    let mut r = from_config(
        "Idle -> a :: Pad -> Print(A) -> Discard;
         Idle -> b :: Pad(6) -> Print(B) -> Discard;
         Idle -> c :: Pad(6, ZERO false) -> Print(C) -> Discard;",
    );
    let a = elem(&r, "a");
    let mut p = Packet::from_slice(b"ab");
    set_extra_length(&mut p, 3);
    r.inject_packet(a, 0, p);
    push(&mut r, "a", 0, b"xyz"); // no annotation: unchanged
    push(&mut r, "b", 0, b"ab");
    push(&mut r, "b", 0, b"abcdefgh"); // longer: unchanged
    push(&mut r, "c", 0, b"abcdef");
    let got = printed(&mut r);
    assert_eq!(
        got,
        vec![
            ("A".into(), b"ab\0\0\0".to_vec()),
            ("A".into(), b"xyz".to_vec()),
            ("B".into(), b"ab\0\0\0\0".to_vec()),
            ("B".into(), b"abcdefgh".to_vec()),
            ("C".into(), b"abcdef".to_vec()),
        ]
    );
    // The annotation is cleared.
    let mut r = from_config("Idle -> p :: Pad -> q :: Queue -> Discard;");
    let pe = elem(&r, "p");
    let mut pk = Packet::from_slice(b"ab");
    set_extra_length(&mut pk, 2);
    r.inject_packet(pe, 0, pk);
    let q = elem(&r, "q");
    let out = r.pull_from(q, 0, 1).unwrap();
    let pk = &out.packets()[0];
    assert_eq!(pk.len(), 4);
    assert_eq!(
        pk.anno_bytes::<4>(rclick_core::packet::anno::EXTRA_LENGTH),
        [0; 4]
    );
    let e = config_errors("Idle -> Pad(-1) -> Discard;");
    assert!(e.contains("LENGTH"), "{e}");
}

#[test]
fn resize_adds_and_removes_at_both_ends() {
    let mut r = from_config(
        "Idle -> a :: Resize(HEAD -2) -> Print(A) -> b :: Resize(+4, -2) -> Print(B)
         -> c :: Resize -> d :: Resize(HEAD -8) -> Print(D) -> e :: Resize(0, 3) -> Print(E) -> Discard;",
    );
    push(&mut r, "a", 0, b"ABCD");
    let got = printed(&mut r);
    assert_eq!(got[0], ("A".into(), b"CD".to_vec()));
    // Bytes added in front are the headroom: the two stripped bytes come back.
    assert_eq!(got[1].1.len(), 4);
    assert_eq!(&got[1].1[2..], b"AB");
    // Removing more than the packet leaves it empty; adding at the end adds zeros.
    assert_eq!(got[2], ("D".into(), vec![]));
    assert_eq!(got[3], ("E".into(), vec![0, 0, 0]));
    assert_eq!(read(&mut r, "b.head"), "4");
    assert_eq!(read(&mut r, "b.tail"), "-2");
    r.write_handler("c.tail", "-1").unwrap();
    assert_eq!(read(&mut r, "c.tail"), "-1");
    assert!(r.write_handler("c.head", "x").is_err());
}

#[test]
fn settimestampdelta_subtracts_the_first_timestamp() {
    let mut r = from_config("Idle -> s :: SetTimestampDelta -> q :: Queue -> Discard;");
    let s = elem(&r, "s");
    for t in [0i64, 5_000_000_000, 5_250_000_000, 7_000_000_000] {
        let mut p = Packet::from_slice(b"x");
        p.set_timestamp_anno(Timestamp(t));
        r.inject_packet(s, 0, p);
    }
    let q = elem(&r, "q");
    let ts: Vec<i64> = (0..4)
        .map(|_| {
            r.pull_from(q, 0, 1).unwrap().packets()[0]
                .timestamp_anno()
                .nanos()
        })
        .collect();
    // A zero timestamp passes unchanged and does not count as first.
    assert_eq!(ts, vec![0, 0, 250_000_000, 2_000_000_000]);
    assert_eq!(read(&mut r, "s.first"), "5.000000");
    r.write_handler("s.reset", "").unwrap();
    assert_eq!(read(&mut r, "s.first"), "0.000000");
    let e = config_errors("Idle -> SetTimestampDelta(TYPE FOO) -> Discard;");
    assert!(e.contains("bad TYPE"), "{e}");
}

#[test]
fn linkunqueue_spaces_packets_by_latency_and_bandwidth() {
    // 100 kbit/s = 12500 bytes/s: 20 bytes take 1.6 ms, 1600 bytes 128 ms.
    let mut r = from_config(
        "Idle -> q :: Queue -> l :: LinkUnqueue(5ms, 100kbps) -> s :: SetTimestampDelta -> Print(L, TIMESTAMP true) -> Discard;",
    );
    for len in [20usize, 20, 1600, 20] {
        push(&mut r, "q", 0, &vec![0u8; len]);
    }
    assert_eq!(r.run_limited(100_000), StopReason::Quiescent);
    let stamps: Vec<String> = r
        .take_chatter()
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    assert_eq!(stamps, ["0.000000:", "0.001600:", "0.129600:", "0.131200:"]);
    assert_eq!(read(&mut r, "l.latency"), "5ms");
    assert_eq!(read(&mut r, "l.bandwidth"), "12500");
    assert_eq!(read(&mut r, "l.size"), "0");
    let e = config_errors("Idle -> Queue -> LinkUnqueue(2, 99) -> Discard;");
    assert!(e.contains("bandwidth too small, minimum 100Bps"), "{e}");
    let e = config_errors("Idle -> Queue -> LinkUnqueue(2) -> Discard;");
    assert!(e.contains("BANDWIDTH"), "{e}");
    // Push input is an error.
    let e = config_errors("Idle -> PushNull -> LinkUnqueue(2, 1000) -> Discard;");
    assert!(!e.is_empty());
}

/// A pulling task remembers which element answers its pulls, but not
/// through a pull forwarder: once the Bypass is switched off, Unqueue's
/// pulls must leave the detour (and its Counter) out.
#[test]
fn unqueue_pulling_through_bypass_follows_its_switch() {
    let mut r = from_config(
        "Idle -> q :: Queue -> b :: Bypass(true) -> u :: Unqueue(LIMIT 1) -> Discard;
         b[1] -> c :: Counter -> [1]b;",
    );
    push(&mut r, "q", 0, b"x");
    push(&mut r, "q", 0, b"y");
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(count(&mut r, "u.count"), 1);
    assert_eq!(count(&mut r, "c.count"), 1);
    r.write_handler("b.active", "false").unwrap();
    r.write_handler("u.limit", "2").unwrap();
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(count(&mut r, "u.count"), 2);
    assert_eq!(count(&mut r, "c.count"), 1, "the detour is switched off");
}

#[test]
fn bypass_takes_the_detour_while_active_in_push_and_pull() {
    let mut r =
        from_config("Idle -> b :: Bypass -> Print(A) -> Discard; b[1] -> Print(B) -> [1]b;");
    push(&mut r, "b", 0, b"\x01");
    r.write_handler("b.active", "true").unwrap();
    push(&mut r, "b", 0, b"\x02");
    assert_eq!(read(&mut r, "b.active"), "true");
    r.write_handler("b.active", "false").unwrap();
    push(&mut r, "b", 0, b"\x03");
    let labels: Vec<(String, u8)> = printed(&mut r)
        .into_iter()
        .map(|(l, d)| (l, d[0]))
        .collect();
    assert_eq!(
        labels,
        [
            ("A".to_string(), 1),
            ("B".to_string(), 2),
            ("A".to_string(), 2),
            ("A".to_string(), 3)
        ]
    );
    assert_eq!(
        r.write_handler("b.active", "maybe").unwrap_err(),
        "syntax error"
    );

    // Pull: an active Bypass answers pulls from input 1, which pulls
    // through output 1 from input 0 (through the Bypass again).
    let mut r = from_config(
        "Idle -> q :: Queue -> b :: Bypass(true) -> n :: PullNull -> Discard;
         b[1] -> c :: Counter -> [1]b;",
    );
    for d in [b"x", b"y", b"z"] {
        push(&mut r, "q", 0, d);
    }
    let n = elem(&r, "n");
    assert_eq!(r.pull_from(n, 0, 1).unwrap().packets()[0].data(), b"x");
    assert_eq!(count(&mut r, "c.count"), 1);
    r.write_handler("b.active", "false").unwrap();
    assert_eq!(r.pull_from(n, 0, 1).unwrap().packets()[0].data(), b"y");
    assert_eq!(count(&mut r, "c.count"), 1);
    // Pulled directly, too.
    r.write_handler("b.active", "true").unwrap();
    let b = elem(&r, "b");
    assert_eq!(r.pull_from(b, 1, 1).unwrap().packets()[0].data(), b"z");

    // A Counter's COUNT_CALL on the pull path switches the Bypass for the
    // next packet (Click's Bypass-01).
    let mut r = from_config(
        "InfiniteSource(\\<11>, LIMIT 4, STOP true) -> PullNull
         -> Counter(COUNT_CALL 3 b.active true) -> b :: Bypass -> Print(C) -> Discard;
         b[1] -> Print(D) -> [1]b;",
    );
    assert_eq!(r.run_limited(10_000), StopReason::Stopped);
    let labels: Vec<String> = printed(&mut r).into_iter().map(|x| x.0).collect();
    assert_eq!(labels, ["C", "C", "C", "D", "C"]);

    // One port each: nothing to detour to.
    let mut r =
        from_config("Idle -> b :: Bypass(ACTIVE true, INLINE true) -> c :: Counter -> Discard;");
    push(&mut r, "b", 0, b"x");
    assert_eq!(count(&mut r, "c.count"), 1);
}

#[test]
fn inputswitch_accepts_one_input() {
    let mut r =
        from_config("s :: InputSwitch(1) -> c :: Counter -> Discard; Idle -> [0]s; Idle -> [1]s;");
    push(&mut r, "s", 0, b"x");
    push(&mut r, "s", 1, b"y");
    assert_eq!(count(&mut r, "c.count"), 1);
    r.write_handler("s.switch", "0").unwrap();
    push(&mut r, "s", 0, b"x");
    assert_eq!(count(&mut r, "c.count"), 2);
    r.write_handler("s.switch", "5").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "-1");
    push(&mut r, "s", 0, b"x");
    push(&mut r, "s", 1, b"x");
    assert_eq!(count(&mut r, "c.count"), 2);
    assert!(r.write_handler("s.switch", "z").is_err());
    let e = config_errors("s :: InputSwitch(2) -> Discard; Idle -> [0]s; Idle -> [1]s;");
    assert!(e.contains("input must be < 2"), "{e}");
}

/// Queue takes a one-packet push without its general loop while there is
/// room: packets beyond the capacity (also after the `capacity` handler
/// lowered it with packets queued) are still dropped and counted, the
/// high-water mark and the nonempty signal follow, and the order holds.
#[test]
fn queue_single_packet_pushes_respect_capacity_changes() {
    let mut r = from_config("Idle -> q :: Queue(2) -> Print(p) -> d :: Discard;");
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    push(&mut r, "q", 0, &[1]);
    assert_eq!(
        read(&mut r, "d.scheduled"),
        "true",
        "nonempty wakes the puller"
    );
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    for b in 2..=4u8 {
        push(&mut r, "q", 0, &[b]);
    }
    assert_eq!(count(&mut r, "q.length"), 2);
    assert_eq!(count(&mut r, "q.drops"), 1);
    assert_eq!(count(&mut r, "q.highwater_length"), 2);
    // Lowered below its length: the newest queued packet goes, and the
    // next push finds the queue full.
    r.write_handler("q.capacity", "1").unwrap();
    assert_eq!(count(&mut r, "q.length"), 1);
    push(&mut r, "q", 0, &[5]);
    assert_eq!(count(&mut r, "q.length"), 1);
    assert_eq!(count(&mut r, "q.drops"), 2);
    r.write_handler("q.capacity", "3").unwrap();
    for b in 6..=8u8 {
        push(&mut r, "q", 0, &[b]);
    }
    assert_eq!(count(&mut r, "q.length"), 3);
    assert_eq!(count(&mut r, "q.drops"), 3);
    assert_eq!(count(&mut r, "q.highwater_length"), 3);
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(count(&mut r, "d.count"), 4);
    let got: Vec<u8> = printed(&mut r)
        .into_iter()
        .filter(|(label, _)| label == "p")
        .flat_map(|(_, data)| data)
        .collect();
    assert_eq!(got, [1, 2, 6, 7]);
}

/// Queue's one-packet pull (BURST 1, into the buffer the last push
/// left): a pull from a full queue raises the full notifier, so the
/// source asleep on it wakes; the pull that empties the queue lowers the
/// nonempty signal, so the puller sleeps; every packet arrives, in order.
#[test]
fn queue_single_packet_pulls_wake_the_source_and_sleep_the_puller() {
    let mut r = from_config(
        "s :: InfiniteSource(LIMIT 6, BURST 1, STOP false) -> q :: Queue(2) \
         -> u :: Unqueue(BURST 1, ACTIVE false) -> n :: Counter -> Print(p) -> Discard;",
    );
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(count(&mut r, "q.length"), 2);
    assert_eq!(
        read(&mut r, "s.scheduled"),
        "false",
        "asleep on a full queue"
    );
    assert_eq!(count(&mut r, "q.drops"), 0);
    r.write_handler("u.active", "true").unwrap();
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(count(&mut r, "n.count"), 6);
    assert_eq!(count(&mut r, "s.count"), 6);
    assert_eq!(count(&mut r, "q.drops"), 0);
    assert_eq!(count(&mut r, "q.highwater_length"), 2);
    assert_eq!(
        read(&mut r, "u.scheduled"),
        "false",
        "asleep on an empty queue"
    );
    assert_eq!(printed(&mut r).len(), 6);
}

#[test]
fn queue_kinds_differ_in_their_full_notifier() {
    // NotifierQueue has no full notifier: the source overflows it, and
    // the first overflow is reported.
    for (class, counted, drops) in [
        ("NotifierQueue", "15", "10"),
        ("SimpleQueue", "15", "10"),
        ("FullNoteQueue", "5", "0"),
        ("Queue", "5", "0"),
    ] {
        let mut r = from_config(&format!(
            "i :: InfiniteSource(LIMIT 15) -> c :: Counter -> q :: {class}(5) -> Idle;"
        ));
        r.run_limited(10_000);
        assert_eq!(read(&mut r, "c.count"), counted, "{class}");
        assert_eq!(read(&mut r, "q.drops"), drops, "{class}");
        let chatter = r.take_chatter();
        if drops == "0" {
            assert!(chatter.is_empty(), "{class}: {chatter:?}");
        } else {
            let what = if class == "SimpleQueue" {
                "SimpleQueue"
            } else {
                "NotifierQueue"
            };
            assert_eq!(chatter, [format!("q :: {what}: overflow")], "{class}");
        }
        assert_eq!(read(&mut r, "q.length"), "5");
    }
}

#[test]
fn pullswitch_selects_an_input_and_notifies() {
    let mut r = from_config(
        "q0 :: Queue; q1 :: Queue; Idle -> q0; Idle -> q1;
         q0 -> [0]ps :: PullSwitch(1) -> d :: Discard; q1 -> [1]ps; Idle -> [2]ps;",
    );
    push(&mut r, "q0", 0, b"a");
    push(&mut r, "q1", 0, b"b");
    push(&mut r, "q1", 0, b"c");
    r.run_limited(1000);
    assert_eq!(read(&mut r, "d.count"), "2");
    assert_eq!(read(&mut r, "q0.length"), "1");
    // Its input has nothing: the puller sleeps.
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    // Switching to an input that has packets wakes it.
    r.write_handler("ps.switch", "0").unwrap();
    assert_eq!(read(&mut r, "d.scheduled"), "true");
    assert_eq!(read(&mut r, "ps.config"), "0");
    r.run_limited(1000);
    assert_eq!(read(&mut r, "d.count"), "3");
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    // An idle input does not wake it; a queue upstream filling does.
    r.write_handler("ps.switch", "2").unwrap();
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    r.write_handler("ps.switch", "1").unwrap();
    assert_eq!(read(&mut r, "d.scheduled"), "false");
    push(&mut r, "q1", 0, b"d");
    r.run_limited(1000);
    assert_eq!(read(&mut r, "d.count"), "4");
    // Out of range and negative select nothing.
    r.write_handler("ps.switch", "7").unwrap();
    assert_eq!(read(&mut r, "ps.switch"), "-1");
    push(&mut r, "q1", 0, b"e");
    r.run_limited(1000);
    assert_eq!(read(&mut r, "d.count"), "4");
    assert_eq!(
        r.write_handler("ps.switch", "x").unwrap_err(),
        "PullSwitch input must be integer"
    );
    // Push inputs are an error.
    assert!(!config_errors("Idle -> PushNull -> PullSwitch -> Discard;").is_empty());
}

#[test]
fn simplepullswitch_selects_without_notifying() {
    let mut r = from_config(
        "q0 :: Queue; q1 :: Queue; Idle -> q0; Idle -> q1; q0 -> [0]s :: SimplePullSwitch(-1) -> Discard; q1 -> [1]s;",
    );
    push(&mut r, "q0", 0, b"a");
    push(&mut r, "q1", 0, b"b");
    let s = elem(&r, "s");
    assert!(r.pull_from(s, 0, 1).is_none());
    r.write_handler("s.switch", "1").unwrap();
    assert_eq!(r.pull_from(s, 0, 1).unwrap().packets()[0].data(), b"b");
    r.write_handler("s.switch", "2").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "-1");
    assert_eq!(
        r.write_handler("s.switch", "x").unwrap_err(),
        "syntax error"
    );
}

#[test]
fn notifierdebug_shows_the_signal_in_clicks_format() {
    let mut r = from_config(
        "q0 :: NotifierQueue(5); q1 :: NotifierQueue(5);
         q0 -> s :: RoundRobinSched -> n :: NotifierDebug -> Discard; q1 -> [1]s;
         Idle -> q0; Idle -> q1;
         i :: InfiniteSource -> pn :: NotifierDebug -> q2 :: Queue(2) -> Idle;",
    );
    r.run_limited(10);
    assert_eq!(read(&mut r, "n.signal"), "empty.0/3:0");
    push(&mut r, "q1", 0, b"x");
    assert_eq!(read(&mut r, "n.signal"), "empty.0/3:2*");
    // In push, the full signal downstream: q2 fills up.
    r.run_limited(100);
    assert_eq!(read(&mut r, "pn.signal"), "full.0/1:0");
    // In push with Discard downstream (always room): busy, as in Click.
    let mut r = from_config(
        "Idle -> n :: NotifierDebug -> Discard; i :: InfiniteSource -> m :: NotifierDebug -> Discard;",
    );
    assert_eq!(read(&mut r, "n.signal"), "busy*");
    assert_eq!(read(&mut r, "m.signal"), "busy*");
}

/// Queue's one-packet push and pull paths (taken or not by whether the
/// spare buffer is kept) against a model of the general ones, over a
/// pseudo-random run of one-packet and larger pushes, pulls of 0, 1, 2
/// and 40 packets, and capacity writes: what is pulled and dropped to
/// output 1 and in what order, the length, drops, high-water mark, and
/// both notifier signals after every step, for every Queue kind.
#[test]
fn queue_one_packet_paths_agree_with_a_model_of_the_general_ones() {
    use std::collections::VecDeque;
    for (class, has_empty, has_full) in [
        ("Queue", true, true),
        ("FullNoteQueue", true, true),
        ("QuickNoteQueue", true, true),
        ("NotifierQueue", true, false),
        ("SimpleQueue", false, false),
    ] {
        let mut r = from_config(&format!(
            "Idle -> pn :: NotifierDebug -> q :: {class}(3) -> nn :: NotifierDebug -> Idle; \
             q[1] -> Print(d) -> Discard;"
        ));
        let q = elem(&r, "q");
        let (mut fifo, mut cap, mut drops, mut high) = (VecDeque::<u8>::new(), 3usize, 0u64, 0);
        let (mut nonempty, mut nonfull) = (false, true);
        let mut dropped = Vec::new();
        let mut seed = 0x2545_f491_u32;
        let mut next = 0u8;
        for step in 0..3000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let roll = (seed >> 16) % 16;
            let what = format!("{class} step {step} roll {roll}");
            match roll {
                0..=5 => {
                    // One packet, or a batch of two to five.
                    let n = if roll < 4 {
                        1
                    } else {
                        2 + (seed >> 8) as usize % 4
                    };
                    let mut b = rclick_core::Batch::new();
                    let was_empty = fifo.is_empty();
                    for _ in 0..n {
                        b.push(Packet::from_slice(&[next]));
                        if fifo.len() < cap {
                            fifo.push_back(next);
                        } else {
                            drops += 1;
                            dropped.push(next);
                        }
                        next = next.wrapping_add(1);
                    }
                    r.inject(q, 0, b);
                    high = high.max(fifo.len());
                    if was_empty && !fifo.is_empty() {
                        nonempty = true;
                    }
                    if fifo.len() >= cap {
                        nonfull = false;
                    }
                }
                6..=12 => {
                    let max = [1, 1, 1, 1, 2, 0, 40][roll as usize - 6];
                    let got = r.pull_from(q, 0, max);
                    if fifo.is_empty() {
                        assert!(got.is_none(), "{what}");
                        nonempty = false;
                    } else {
                        if fifo.len() >= cap {
                            nonfull = true;
                        }
                        let want: Vec<u8> = fifo.drain(..max.min(fifo.len())).collect();
                        let got: Vec<u8> = got
                            .expect("a packet")
                            .packets()
                            .iter()
                            .map(|p| p.data()[0])
                            .collect();
                        assert_eq!(got, want, "{what}");
                        if fifo.is_empty() {
                            nonempty = false;
                        }
                    }
                }
                _ => {
                    cap = 1 + (seed >> 4) as usize % 4;
                    r.write_handler("q.capacity", &cap.to_string()).unwrap();
                    fifo.truncate(cap);
                    nonfull = fifo.len() < cap;
                }
            }
            assert_eq!(count(&mut r, "q.length"), fifo.len() as u64, "{what}");
            assert_eq!(count(&mut r, "q.drops"), drops, "{what}");
            assert_eq!(count(&mut r, "q.highwater_length"), high as u64, "{what}");
            if has_empty {
                let s = read(&mut r, "nn.signal");
                assert_eq!(s.contains('*'), nonempty, "{what}: empty signal {s}");
            }
            if has_full {
                let s = read(&mut r, "pn.signal");
                assert_eq!(s.contains('*'), nonfull, "{what}: full signal {s}");
            }
        }
        let got: Vec<u8> = printed(&mut r)
            .into_iter()
            .filter(|(label, _)| label == "d")
            .flat_map(|(_, data)| data)
            .collect();
        assert_eq!(got, dropped, "{class}: dropped to output 1");
        assert!(drops > 100, "{class}: {drops} drops");
    }
}
