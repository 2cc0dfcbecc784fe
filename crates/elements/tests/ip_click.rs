//! IP, ICMP and Ethernet/ARP elements measured against Click 2.1: the
//! classes added for Click's regression suite (ICMPIPEncap, MarkIPCE,
//! RangeIPLookup) and the behaviours fixed where rclick differed from Click
//! (ICMPError's process-wide IP ID, UDPIPEncap's checksum default, IPFilter
//! semantics and its `program` listing, ARPResponder's table). Expected
//! bytes were taken from the reference Click driver; where it is present
//! (`../shared/reference/click/bin/click` or `RCLICK_REFERENCE_CLICK`) the
//! same configurations are also run under it and compared live.

#[path = "common/reference.rs"]
mod reference;
use std::path::PathBuf;
use std::process::Command;

use rclick_core::router::StopReason;
use rclick_core::Router;
use rclick_elements::testing::{from_config, read, try_from_config};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn drain(r: &mut Router, q: &str) -> Vec<String> {
    let i = r.find_element(q).unwrap_or_else(|| panic!("no {q}"));
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        out.extend(b.into_iter().map(|p| hex(p.data())));
    }
    out
}

/// Runs `chain -> q :: Queue -> Idle` (chain starts with a stopping
/// source) on a thread of its own, as a fresh process would, and returns
/// the queued packets in hex.
fn run_chain(chain: &str) -> Vec<String> {
    let conf = format!("{chain} -> q :: Queue(1000) -> Idle;");
    std::thread::spawn(move || {
        let mut r = from_config(&conf);
        assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
        drain(&mut r, "q")
    })
    .join()
    .unwrap()
}

fn reference_click() -> Option<PathBuf> {
    reference::reference_click_for_part()
}

/// The packets `chain -> Print -> Discard` prints under the reference
/// Click, in hex; `None` when the reference is absent.
fn click_chain(chain: &str) -> Option<Vec<String>> {
    let click = reference_click()?;
    let out = Command::new(click)
        .arg("-e")
        .arg(format!("{chain} -> Print(MAXLENGTH -1) -> Discard;"))
        .output()
        .expect("run reference click");
    let err = String::from_utf8_lossy(&out.stderr);
    Some(
        err.lines()
            .filter_map(|l| l.split_once('|'))
            .map(|(_, h)| h.split_whitespace().collect::<String>())
            .collect(),
    )
}

/// Checks `chain` against bytes recorded from Click, and against the live
/// reference when present.
fn same_as_click(chain: &str, want: &[&str]) {
    let got = run_chain(chain);
    assert_eq!(got, want, "{chain}");
    if let Some(c) = click_chain(chain) {
        assert_eq!(got, c, "live reference Click: {chain}");
    }
}

// ----------------------------------------------------------- ICMPIPEncap

#[test]
fn icmpipencap_echo_counts_sequence_and_ip_id() {
    same_as_click(
        "InfiniteSource(DATA \"abcdefgh\", LIMIT 2, STOP true) -> ICMPIPEncap(1.0.0.1, 2.0.0.2, echo, IDENTIFIER 5)",
        &[
            "4500002400010000ff01b8d5010000010200000208006664000500016162636465666768",
            "4500002400020000ff01b8d4010000010200000208006663000500026162636465666768",
        ],
    );
}

#[test]
fn icmpipencap_header_shapes_by_type() {
    // Unreachable: no identifier or sequence, code by name.
    same_as_click(
        "InfiniteSource(DATA \"x\", LIMIT 1, STOP true) -> ICMPIPEncap(1.0.0.1, 2.0.0.2, unreachable, needfrag)",
        &["4500001d00010000ff01b8dc0100000102000002030484fb0000000078"],
    );
    // Timestamp: a 20-byte header with zero timestamps.
    same_as_click(
        "InfiniteSource(DATA \"\", LIMIT 1, STOP true) -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 13, 7, IDENTIFIER 5)",
        &["4500002800010000ff01b8d101000001020000020d07f2f200050001000000000000000000000000"],
    );
    // Mask request: Click gives it an 8-byte header without sequence.
    same_as_click(
        "InfiniteSource(DATA \"\", LIMIT 1, STOP true) -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 17, 7, IDENTIFIER 5)",
        &["4500001c00010000ff01b8dd01000001020000021107eef800000000"],
    );
}

#[test]
fn icmpipencap_rejects_bad_type_and_code() {
    assert!(try_from_config("Idle -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 300) -> Idle;").is_err());
    assert!(try_from_config("Idle -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 3, 300) -> Idle;").is_err());
    assert!(
        try_from_config("Idle -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 8, IDENTIFIER 70000) -> Idle;")
            .is_err()
    );
    let mut r = from_config("Idle -> e :: ICMPIPEncap(1.0.0.1, 2.0.0.2, 8) -> Idle;");
    r.write_handler("e.src", "5.5.5.5").unwrap();
    assert_eq!(read(&mut r, "e.src"), "5.5.5.5");
    assert_eq!(read(&mut r, "e.dst"), "2.0.0.2");
}

// -------------------------------------------------------------- MarkIPCE

const NOT_ECT: &str = "\\<45000014 00000000 40110000 02000002 09000001>";
const ECT1: &str = "\\<45010014 00000000 40110000 02000002 09000001>";

#[test]
fn markipce_marks_ect_and_drops_not_ect() {
    same_as_click(
        &format!(
            "InfiniteSource(DATA {ECT1}, LIMIT 1, STOP true) -> MarkIPHeader -> SetIPChecksum -> MarkIPCE"
        ),
        &["450300140000000040116fd40200000209000001"],
    );
    // Not ECN-capable: dropped, unless FORCE.
    same_as_click(
        &format!("InfiniteSource(DATA {NOT_ECT}, LIMIT 1, STOP true) -> MarkIPHeader -> MarkIPCE"),
        &[],
    );
    same_as_click(
        &format!(
            "InfiniteSource(DATA {NOT_ECT}, LIMIT 1, STOP true) -> MarkIPHeader -> SetIPChecksum -> MarkIPCE(FORCE true)"
        ),
        &["450300140000000040116fd40200000209000001"],
    );
}

#[test]
fn markipce_checksum_stays_valid_and_drops_count() {
    let mut r = from_config(&format!(
        "InfiniteSource(DATA {NOT_ECT}, LIMIT 3, STOP true) -> MarkIPHeader -> m :: MarkIPCE -> Discard;"
    ));
    assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
    assert_eq!(read(&mut r, "m.drops"), "3");
    for tos in 0..=255u8 {
        if tos & 3 == 0 {
            continue;
        }
        let data = format!("\\<45{tos:02x}0014 00000000 40110000 02000002 09000001>");
        let out = run_chain(&format!(
            "InfiniteSource(DATA {data}, LIMIT 1, STOP true) -> MarkIPHeader -> SetIPChecksum -> MarkIPCE -> CheckIPHeader"
        ));
        assert_eq!(out.len(), 1, "tos {tos:#x}");
        assert_eq!(&out[0][2..4], format!("{:02x}", tos | 3), "tos {tos:#x}");
    }
}

// --------------------------------------------------------- RangeIPLookup

/// The route changes and lookups of Click's test ip/iplookups-01, for
/// every dynamic lookup class.
#[test]
fn rangeiplookup_follows_route_changes_like_the_others() {
    let steps: &[(&str, &str)] = &[
        ("add", "18.26/16 1.0.0.1 0"),
        ("", "0 1.0.0.1"),
        ("add", "18.26.0/18 2.0.0.2 1"),
        ("", "1 2.0.0.2"),
        ("add", "18.26.0/17 3.0.0.3 2"),
        ("", "1 2.0.0.2"),
        ("remove", "18.26.0/18 2.0.0.2 1"),
        ("", "2 3.0.0.3"),
        ("remove", "18.26.0/16 1.0.0.1 0"),
        ("", "2 3.0.0.3"),
        ("add", "18.26.0/12 4.0.0.4 0"),
        ("", "2 3.0.0.3"),
        ("remove", "18.26.0/17 3.0.0.3 2"),
        ("", "0 4.0.0.4"),
        ("add", "0.0.0.0/32 99.99.99.99 0"),
        ("add", "18.26.4.9/32 5.0.0.5 0"),
        ("", "0 5.0.0.5"),
        ("remove", "18.26.4.9/32 5.0.0.5 0"),
        ("", "0 4.0.0.4"),
        ("", "0 4.0.0.4"),
        ("set", "18.26.0/12 7.0.0.7 0"),
        ("", "0 7.0.0.7"),
        ("remove", "18.26.0/12 7.0.0.7 0"),
        ("", "-1"),
    ];
    for class in ["RangeIPLookup", "RadixIPLookup", "LinearIPLookup"] {
        let mut r = from_config(&format!(
            "i :: Idle -> r :: {class}() -> i; r[1] -> i; r[2] -> i;"
        ));
        for (h, v) in steps {
            if h.is_empty() {
                let got = r.read_handler("r.lookup", Some("18.26.4.9")).unwrap();
                assert_eq!(got.trim(), *v, "{class}");
            } else {
                r.write_handler(&format!("r.{h}"), v).unwrap();
            }
        }
        // A conflicting add fails and names the existing route.
        r.write_handler("r.add", "18.26.0/12 4.0.0.4 0").unwrap();
        let e = r
            .write_handler("r.add", "18.26.0/12 6.0.0.6 0")
            .unwrap_err();
        assert!(
            e.contains("conflict with existing route '18.16.0.0/12 4.0.0.4 0'"),
            "{class}: {e}"
        );
    }
}

/// Random route sets: RangeIPLookup answers every lookup as the linear
/// reference does, after adds and after removes.
#[test]
fn rangeiplookup_agrees_with_linear_search() {
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut range = from_config("i :: Idle -> r :: RangeIPLookup() -> i; r[1] -> i; r[2] -> i;");
    let mut linear = from_config("i :: Idle -> r :: LinearIPLookup() -> i; r[1] -> i; r[2] -> i;");
    let mut routes = Vec::new();
    // Addresses near a few bases so that prefixes nest and split /16s.
    let bases = [0x0a00_0000u32, 0x0a01_0000, 0x1234_5600, 0xc0a8_0000];
    let addr = move |rnd: &mut dyn FnMut() -> u64| {
        let b = bases[(rnd() % 4) as usize];
        b ^ ((rnd() as u32) & 0x0003_ffff)
    };
    for round in 0..3 {
        for _ in 0..60 {
            let a = addr(&mut rnd);
            let len = [0u32, 8, 12, 15, 16, 17, 20, 24, 28, 31, 32][(rnd() % 11) as usize];
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            let route = format!("{}/{len} {}", std::net::Ipv4Addr::from(a & mask), rnd() % 3);
            if range.write_handler("r.add", &route).is_ok() {
                linear.write_handler("r.add", &route).unwrap();
                routes.push(route);
            }
        }
        if round > 0 {
            for _ in 0..40 {
                if routes.is_empty() {
                    break;
                }
                let i = (rnd() as usize) % routes.len();
                let route = routes.swap_remove(i);
                range.write_handler("r.remove", &route).unwrap();
                linear.write_handler("r.remove", &route).unwrap();
            }
        }
        for _ in 0..2000 {
            let a = std::net::Ipv4Addr::from(addr(&mut rnd)).to_string();
            assert_eq!(
                range.read_handler("r.lookup", Some(&a)).unwrap(),
                linear.read_handler("r.lookup", Some(&a)).unwrap(),
                "lookup {a} in round {round}"
            );
        }
    }
}

// ------------------------------------------------------------- ICMPError

/// Click numbers ICMPError packets with one counter for every ICMPError of
/// the process: two elements alternate IDs 1, 2, 3, ...
#[test]
fn icmperror_ip_id_counts_across_elements() {
    let chain = "InfiniteSource(DATA \\<45000014 00000000 40110000 02000002 01000001>, LIMIT 3, STOP true) \
        -> MarkIPHeader -> t :: Tee; \
        t[0] -> ICMPError(9.9.9.9, unreachable, host) -> a :: Queue(100) -> Idle; \
        t[1] -> ICMPError(8.8.8.8, timeexceeded) -> b :: Queue(100) -> Idle";
    let conf = format!("{chain};");
    let (a, b) = std::thread::spawn(move || {
        let mut r = from_config(&conf);
        assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
        (drain(&mut r, "a"), drain(&mut r, "b"))
    })
    .join()
    .unwrap();
    let ids = |v: &[String]| v.iter().map(|h| h[8..12].to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&a), ["0001", "0003", "0005"]);
    assert_eq!(ids(&b), ["0002", "0004", "0006"]);
}

// ------------------------------------------------------------ UDPIPEncap

#[test]
fn udpipencap_checksum_is_off_by_default() {
    same_as_click(
        "InfiniteSource(DATA \"abcd\", LIMIT 2, STOP true) -> UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 53)",
        &[
            "4500002000000000fa11bdca010000010200000204d20035000c000061626364",
            "4500002000010000fa11bdc9010000010200000204d20035000c000061626364",
        ],
    );
    same_as_click(
        "InfiniteSource(DATA \"abcd\", LIMIT 1, STOP true) -> UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 53, true)",
        &["4500002000000000fa11bdca010000010200000204d20035000c330661626364"],
    );
}

#[test]
fn udpipencap_fields_are_writable() {
    let mut r = from_config("Idle -> u :: UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 53) -> Idle;");
    r.write_handler("u.src", "3.3.3.3").unwrap();
    r.write_handler("u.sport", "99").unwrap();
    r.write_handler("u.dst", "DST_ANNO").unwrap();
    r.write_handler("u.dport", "dns").unwrap();
    assert!(r.write_handler("u.dport", "70000").is_err());
    assert_eq!(read(&mut r, "u.src"), "3.3.3.3");
    assert_eq!(read(&mut r, "u.sport"), "99");
    assert_eq!(read(&mut r, "u.dst"), "DST_ANNO");
    assert_eq!(read(&mut r, "u.dport"), "53");
}

// ---------------------------------------------------------- ARPResponder

/// Click's test ethernet/ARPResponder-01: the `add` handler knows
/// AddressInfo names and replaces an entry for a prefix already present.
#[test]
fn arpresponder_add_takes_names_and_replaces() {
    let mut r = from_config(
        "AddressInfo(a 1.0.0.2/24 00:01:02:03:04:05, b 00:01:02:03:04:06);
         i :: Idle -> ar :: ARPResponder(a, a:ipnet b:eth) -> i;",
    );
    assert_eq!(
        read(&mut r, "ar.table"),
        "1.0.0.2/32 00-01-02-03-04-05\n1.0.0.0/24 00-01-02-03-04-06\n"
    );
    r.write_handler("ar.remove", "1.0.0.2").unwrap();
    r.write_handler("ar.add", "a:ipnet a:eth").unwrap();
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.0/24 00-01-02-03-04-05\n");
    let l = r.read_handler("ar.lookup", Some("1.0.0.9")).unwrap();
    assert_eq!(l.trim(), "00-01-02-03-04-05");
    assert!(r.write_handler("ar.add", "nosuchname 1:2:3:4:5:6").is_err());
    // Of two entries for one prefix the later wins (Click 2.1 too).
    r.write_handler("ar.config", "1.0.0.2 0:1:2:3:4:5, 1.0.0.2 0:1:2:3:4:6")
        .unwrap();
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.2/32 00-01-02-03-04-06\n");
}

// -------------------------------------------------------------- IPFilter

/// A TCP packet 1.0.0.1:80 -> 2.0.0.2:80, flags SYN|ACK, window 0 (40
/// bytes), cut to `len` bytes (the IP length still says 40).
const TCP40: &str =
    "45000028 00000000 40060000 01000001 02000002 00500050 00000001 00000002 50120000 00000000";

/// Which output of `IPFilter(0 PATTERN, 1 -)` takes the cut packet, for
/// each cut length: `Y` (0) or `N` (1), as the Click 2.1 driver answered.
/// One difference is kept: Click tests `port <= 1023` with a bit mask on
/// the port's high byte only, so it answers a packet holding just that byte
/// (cut at 23: `Y`); rclick compares whole ports and needs both bytes
/// (`N`).
const TRUNCATED: &[(&str, &str)] = &[
    (
        "transp[1]&128!=0",
        "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N",
    ),
    (
        "not (transp[1]&128==0)",
        "20Y 21Y 22N 23N 24N 26N 30N 33N 34N 40N",
    ),
    (
        "not transp[1]&128==0",
        "20Y 21Y 22N 23N 24N 26N 30N 33N 34N 40N",
    ),
    (
        "! transp[1]&128==0",
        "20Y 21Y 22N 23N 24N 26N 30N 33N 34N 40N",
    ),
    (
        "transp[1]&128==0",
        "20N 21N 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    ("src port != 80", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N"),
    ("src port 80", "20N 21N 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y"),
    ("dst port != 80", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N"),
    ("not dst port 80", "20Y 21Y 22Y 23Y 24N 26N 30N 33N 34N 40N"),
    ("dst port > 1023", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N"),
    ("dst port < 1023", "20N 21N 22N 23N 24Y 26Y 30Y 33Y 34Y 40Y"),
    (
        "dst port <= 1023",
        "20N 21N 22N 23N 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    (
        "not dst port > 1023",
        "20Y 21Y 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    ("syn", "20N 21N 22N 23N 24N 26N 30N 33N 34Y 40Y"),
    ("not syn", "20Y 21Y 22Y 23Y 24Y 26Y 30Y 33Y 34N 40N"),
    ("tcp opt syn", "20N 21N 22N 23N 24N 26N 30N 33N 34Y 40Y"),
    ("ack", "20N 21N 22N 23N 24N 26N 30N 33N 34Y 40Y"),
    ("tcp win != 5", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40Y"),
    ("tcp win 0", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40Y"),
    ("tcp win < 5", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40Y"),
    ("tcp[13] != 0", "20N 21N 22N 23N 24N 26N 30N 33N 34Y 40Y"),
    (
        "transp[12:2] != 0",
        "20N 21N 22N 23N 24N 26N 30N 33N 34Y 40Y",
    ),
    ("ip len != 5", "20Y 21Y 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y"),
    ("port 80", "20N 21N 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y"),
    ("not port 80", "20Y 21Y 22N 23N 24N 26N 30N 33N 34N 40N"),
    (
        "src port 80 or dst port 81",
        "20N 21N 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    (
        "src port 80 and dst port 80",
        "20N 21N 22N 23N 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    ("tcpudp port 80", "20N 21N 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y"),
    ("icmp type echo", "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N"),
    (
        "not icmp type echo",
        "20Y 21Y 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
    (
        "src 10.0.0.0 & 8.0.0.0 = 8.0.0.0",
        "20N 21N 22N 23N 24N 26N 30N 33N 34N 40N",
    ),
    (
        "src & 255.0.0.0 = 1.0.0.0",
        "20Y 21Y 22Y 23Y 24Y 26Y 30Y 33Y 34Y 40Y",
    ),
];

const CUTS: [usize; 10] = [20, 21, 22, 23, 24, 26, 30, 33, 34, 40];

fn cut_outputs(pattern: &str) -> String {
    let conf = format!(
        "InfiniteSource(DATA \\<{TCP40}>, LIMIT 1, STOP true) -> t :: Truncate(40) -> MarkIPHeader \
         -> f :: IPFilter(0 {pattern}, 1 -); f[0] -> y :: Counter -> Discard; f[1] -> n :: Counter -> Discard;"
    );
    let mut out = Vec::new();
    for len in CUTS {
        let conf = conf.replace("Truncate(40)", &format!("Truncate({len})"));
        let mut r = from_config(&conf);
        assert_eq!(r.run_limited(1_000_000), StopReason::Stopped);
        let y = read(&mut r, "y.count");
        let n = read(&mut r, "n.count");
        out.push(match (y.as_str(), n.as_str()) {
            ("1", "0") => format!("{len}Y"),
            ("0", "1") => format!("{len}N"),
            _ => format!("{len}?"),
        });
    }
    out.join(" ")
}

/// Click's IPFilter-02/-03 semantics, widened: a relation's negation
/// (`!=`, `<`, `<=`, `>=`) fails on a packet too short for its field, a
/// `not` in the pattern succeeds on it; `tcpudp` and address masks parse.
#[test]
fn ipfilter_on_cut_packets_answers_as_click() {
    for (pattern, want) in TRUNCATED {
        assert_eq!(cut_outputs(pattern), *want, "{pattern}");
    }
}

/// The table above, asked of the reference Click live (except the one kept
/// difference).
#[test]
fn ipfilter_cut_table_is_clicks() {
    let Some(click) = reference_click() else {
        return;
    };
    for (pattern, want) in TRUNCATED {
        if *pattern == "dst port <= 1023" {
            continue;
        }
        let mut got = Vec::new();
        for len in CUTS {
            let out = Command::new(&click)
                .arg("-e")
                .arg(format!(
                    "InfiniteSource(DATA \\<{TCP40}>, LIMIT 1, STOP true) -> Truncate({len}) -> MarkIPHeader \
                     -> f :: IPFilter(0 {pattern}, 1 -); f[0] -> Print(Y, MAXLENGTH 0) -> Discard; \
                     f[1] -> Print(N, MAXLENGTH 0) -> Discard;"
                ))
                .output()
                .expect("run reference click");
            let err = String::from_utf8_lossy(&out.stderr);
            let which = err
                .lines()
                .filter_map(|l| l.split(':').next())
                .find(|w| *w == "Y" || *w == "N");
            got.push(format!("{len}{}", which.unwrap_or("?")));
        }
        assert_eq!(got.join(" "), *want, "{pattern}");
    }
}

fn program(conf: &str) -> String {
    let mut r = from_config(conf);
    read(&mut r, "c.program")
}

/// Click's IPFilter-05 and -07: the `program` listing's form.
#[test]
fn ipfilter_program_listing_has_clicks_form() {
    assert_eq!(
        program("Idle -> c :: IPFilter(allow src 10.0.0.1) -> Idle;"),
        " 0 268/0a000001%ffffffff  yes->[0]  no->[X]\nsafe length 272\nalignment offset 0\n"
    );
    assert_eq!(
        program("Idle -> c :: IPFilter(allow false) -> Idle;"),
        "all->[2147483647]\nsafe length 0\nalignment offset 0\n"
    );
    assert_eq!(
        program("Idle -> c :: IPFilter(allow false, allow false, allow true) -> Idle;"),
        "all->[0]\nsafe length 0\nalignment offset 0\n"
    );
    assert_eq!(
        program(
            "Idle -> c :: IPFilter(allow tcp && dst 10.0.0.0/32 && src 2.0.0.0/32, \
             allow tcp && dst 10.0.0.0/32 && dst port 80 && src 2.0.0.0/32, allow all) -> Idle;"
        ),
        "all->[0]\nsafe length 0\nalignment offset 0\n"
    );
}

/// Click's IPFilter-06: Ethernet addresses without `ether`, words in
/// Click's alignment, and a masked address test that the optimizer knows
/// from an exact one.
#[test]
fn ipfilter_ethernet_words_and_masks_as_click() {
    let want = " 0   8/00010203%ffffffff  yes->step 1  no->step 2
 1  12/04050000%ffff0000  yes->[0]  no->step 2
 2 268/0a000000%ffffffff  yes->[0]  no->step 3
 3   0/00001020%0000ffff  yes->step 4  no->step 5
 4   4/30405060%ffffffff  yes->[0]  no->step 5
 5   8/090a0b0c%ffffffff  yes->step 6  no->step 7
 6  12/0d0e0000%ffff0000  yes->[0]  no->step 7
 7   0/0000090a%0000ffff  yes->step 8  no->[X]
 8   4/0b0c0d0e%ffffffff  yes->[0]  no->[X]
safe length 272
alignment offset 0
";
    assert_eq!(
        program(
            "i :: Idle -> c :: IPFilter(allow src 0:1:2:3:4:5, allow src 10.0.0.0 & 8.0.0.0 = 8.0.0.0, \
             allow dst 10:20:30:40:50:60, allow host 9:A:B:C:D:E, deny all) -> i;"
        ),
        want
    );
}

/// `tcpudp` is a protocol qualifier meaning TCP or UDP.
#[test]
fn ipfilter_tcpudp_word() {
    let mut r = from_config(
        "f :: IPFilter(0 tcpudp port 53, 1 -); Idle -> f; f[0] -> y :: Counter -> Discard; f[1] -> n :: Counter -> Discard;",
    );
    let f = r.find_element("f").unwrap();
    for proto in [6u8, 17, 1, 132] {
        let mut b = vec![
            0x45, 0, 0, 28, 0, 0, 0, 0, 64, proto, 0, 0, 1, 0, 0, 1, 2, 0, 0, 2,
        ];
        b.extend_from_slice(&[0x04, 0xd2, 0x00, 0x35, 0, 8, 0, 0]);
        let mut p = rclick_core::Packet::from_slice(&b);
        p.set_network_header(0, 20);
        r.inject_packet(f, 0, p);
    }
    assert_eq!(read(&mut r, "y.count"), "2");
    assert_eq!(read(&mut r, "n.count"), "2");
}

// ----------------------------------------------------------- McastSocket

/// McastSocket sends to the group and, with LOOP (the default), receives
/// its own datagrams back; with LOOP false it does not. Skips with a
/// reason where the host has no multicast route.
#[test]
fn mcastsocket_loops_its_datagrams_back() {
    let port = 20000 + (std::process::id() % 20000) as u16;
    let run = |lp: bool, port: u16| {
        let conf = format!(
            "InfiniteSource(DATA \"hello\", LIMIT 3, STOP false) \
             -> m :: McastSocket(233.252.0.7, {port}, LOOP {lp}) \
             -> c :: Counter -> q :: Queue(100) -> Idle; \
             Script(wait 0.4s, stop);"
        );
        std::thread::spawn(move || {
            let mut r = from_config(&conf);
            r.run_limited(u64::MAX);
            let q = drain(&mut r, "q");
            (read(&mut r, "m.sent"), read(&mut r, "m.drops"), q)
        })
        .join()
        .unwrap()
    };
    let (sent, drops, got) = run(true, port);
    if sent != "3" {
        println!("SKIP: multicast sending does not work here (sent {sent}, drops {drops})");
        return;
    }
    assert_eq!(got, vec![hex(b"hello"); 3]);
    let (sent, _, got) = run(false, port + 1);
    assert_eq!(sent, "3");
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn mcastsocket_configuration_errors() {
    assert!(try_from_config("Idle -> McastSocket(10.0.0.1, 1234);").is_err());
    assert!(try_from_config("Idle -> McastSocket(233.252.0.7, 1234, SNAPLEN 0);").is_err());
}

// ------------------------------------------------------------ ARPQuerier

/// Click's ethernet/ARPQuerier-04 before its hot swap (with RatedUnqueue
/// standing in for DelayUnqueue): the table lists entries oldest first,
/// and an entry a query keeps just short of expiring goes ahead of the
/// entries of the same age, as in Click's age list.
#[test]
fn arpquerier_table_order_as_click() {
    let dir = std::env::temp_dir().join(format!("ip_click_arpq_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dump = dir.join("DUMP");
    std::fs::write(
        &dump,
        "!data timestamp ip_dst ip_tos\n0 1.0.0.1 1\n0 1.0.0.2 2\n0 1.0.0.3 3\n\
         0.12 1.0.0.1 4\n0.12 1.0.0.2 5\n0.12 1.0.0.3 6\n",
    )
    .unwrap();
    let conf = format!(
        "d :: FromIPSummaryDump({}, TIMING true, ACTIVE false, STOP true)
           -> arpq :: ARPQuerier(TIMEOUT 0.1s, 1.0.10.10, 2:1:0:a:a:f)
           -> q :: Queue(100) -> Idle;
         arpq[1] -> Queue -> RatedUnqueue(30) -> ARPResponder(1.0.0.1/32 2:1:0:0:1:d) -> [1]arpq;
         Script(write arpq.insert 1.0.0.1 2:1:0:0:1:f,
                write arpq.insert 1.0.0.2 2:1:0:0:2:f,
                write d.active true);
         DriverManager(pause, wait 0.05s, stop);",
        dump.display()
    );
    let table = std::thread::spawn(move || {
        let mut r = from_config(&conf);
        r.run_limited(u64::MAX);
        read(&mut r, "arpq.table")
    })
    .join()
    .unwrap();
    let got: Vec<(String, String, String)> = table
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[1].to_string(), w[2].to_string())
        })
        .collect();
    let want = [
        ("1.0.0.3", "0", "FF-FF-FF-FF-FF-FF"),
        ("1.0.0.2", "0", "02-01-00-00-02-0F"),
        ("1.0.0.1", "1", "02-01-00-00-01-0D"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(got, want, "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Click's IPFilter-04, first two programs: the protocol test before the
/// fragment test, tests whose branches meet skipped, prefixes listed as
/// masked words. (The third program, with `tcpudp port >= 1024` and
/// `!(syn and !ack)`, still lists differently: Click merges tests on one
/// word and decomposes `>=` into bit tests.)
#[test]
fn ipfilter_programs_of_click_test_04() {
    let c = program(
        "i :: Idle; i -> c :: IPClassifier(dst port 7777, dst port 8888, dst port 7000, icmp type echo, icmp, -) [0,1,2,3,4,5] -> i;",
    );
    assert_eq!(
        c,
        " 0 264/00060000%00ff0000  yes->step 2  no->step 1
 1 264/00110000%00ff0000  yes->step 2  no->step 6
 2 260/00000000%00001fff  yes->step 3  no->[5]
 3 512/00001e61%0000ffff  yes->[0]  no->step 4
 4 512/000022b8%0000ffff  yes->[1]  no->step 5
 5 512/00001b58%0000ffff  yes->[2]  no->[5]
 6 264/00010000%00ff0000  yes->step 7  no->[5]
 7 260/00000000%00001fff  yes->step 8  no->[4]
 8 512/08000000%ff000000  yes->[3]  no->[4]
safe length 516
alignment offset 0
"
    );
    let d = program(
        "i :: Idle; i -> c :: IPFilter(0 udp dst port netbios-ns, 1 udp dst port 5353, 2 udp src port bootpc, 3 128.230.206.0/24, 4 -) [0,1,2,3,4] -> i;",
    );
    assert_eq!(
        d,
        " 0 264/00110000%00ff0000  yes->step 1  no->step 5
 1 260/00000000%00001fff  yes->step 2  no->step 5
 2 512/00000089%0000ffff  yes->[0]  no->step 3
 3 512/000014e9%0000ffff  yes->[1]  no->step 4
 4 512/00440000%ffff0000  yes->[2]  no->step 5
 5 268/80e6ce00%ffffff00  yes->[3]  no->step 6
 6 272/80e6ce00%ffffff00  yes->[3]  no->[4]
safe length 516
alignment offset 0
"
    );
}

// ------------------------------------------------ ICMPPingEncap, SetIPDSCP

#[test]
fn icmppingencap_is_an_echo_encap() {
    same_as_click(
        "InfiniteSource(DATA \"ab\", LIMIT 2, STOP true) -> ICMPPingEncap(1.0.0.1, 2.0.0.2, IDENTIFIER 3)",
        &[
            "4500001e00010000ff01b8db010000010200000208009699000300016162",
            "4500001e00020000ff01b8da010000010200000208009698000300026162",
        ],
    );
}

#[test]
fn setipdscp_keeps_ecn_and_checksum() {
    same_as_click(
        "InfiniteSource(DATA \\<45030014 00000000 40110000 02000002 09000001>, LIMIT 1, STOP true) -> MarkIPHeader -> SetIPChecksum -> SetIPDSCP(63)",
        &["45ff00140000000040116ed80200000209000001"],
    );
    let mut r = from_config("Idle -> s :: SetIPDSCP(DSCP 10) -> Idle;");
    assert_eq!(read(&mut r, "s.dscp"), "10");
    r.write_handler("s.dscp", "2").unwrap();
    assert_eq!(read(&mut r, "s.dscp"), "2");
    assert!(r.write_handler("s.dscp", "64").is_err());
    assert!(try_from_config("Idle -> SetIPDSCP(64) -> Idle;").is_err());
}
