//! FromIPSummaryDump and ToIPSummaryDump: round trips of every field,
//! synthesized packets passing the header checkers, options, fragments,
//! payload quoting, malformed lines, STOP, push and pull.

use std::path::PathBuf;

use rclick_core::StopReason;
use rclick_elements::testing::{from_config, read, try_from_config};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rclick-ipsumdump-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Writes `input`, runs `FromIPSummaryDump(IN, STOP true, EXTRA) ->
/// ToIPSummaryDump(OUT, CONTENTS FIELDS)`, returns the output file and the
/// router's chatter.
fn round_trip_with(name: &str, input: &str, fields: &str, extra: &str) -> (String, Vec<String>) {
    let inp = tmp(&format!("{name}.in"));
    let out = tmp(&format!("{name}.out"));
    std::fs::write(&inp, input).unwrap();
    let conf = format!(
        "f :: FromIPSummaryDump({}, STOP true{extra}) -> t :: ToIPSummaryDump({}, CONTENTS {fields});",
        inp.display(),
        out.display()
    );
    let mut r = from_config(&conf);
    assert_eq!(r.run(), StopReason::Stopped);
    let chatter = r.take_chatter();
    r.cleanup();
    (std::fs::read_to_string(&out).unwrap(), chatter)
}

/// The data lines (not `!` lines) of a dump.
fn data_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('!')).collect()
}

/// Asserts that reading `lines` under `!data FIELDS` and writing the same
/// fields reproduces them exactly.
fn assert_round_trip(name: &str, fields: &str, lines: &[&str]) {
    let input = format!("!IPSummaryDump 1.3\n!data {fields}\n{}\n", lines.join("\n"));
    let (out, chatter) = round_trip_with(name, &input, fields, "");
    assert!(chatter.is_empty(), "{name}: chatter {chatter:?}");
    assert_eq!(data_lines(&out), lines, "{name}: output\n{out}");
}

#[test]
fn header_lines() {
    let (out, _) = round_trip_with(
        "header",
        "!data src dst\n1.0.0.1 2.0.0.2\n",
        "src dst 'tcp seq' \"ts sec\" len",
        ", CHECKSUM false",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "!IPSummaryDump 1.3");
    assert_eq!(lines[1], "!data ip_src ip_dst tcp_seq ts_sec ip_len");
    // As in Click, a TCP packet always gets a TCP header (zero fields).
    assert_eq!(lines[2], "1.0.0.1 2.0.0.2 0 0 40");
}

#[test]
fn banner_and_default_contents() {
    let inp = tmp("banner.in");
    let out = tmp("banner.out");
    std::fs::write(&inp, "!data src\n3.3.3.3\n").unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump({}, BANNER \"my \\\"tool\\\"\");",
        inp.display(),
        out.display()
    ));
    r.run();
    r.cleanup();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text,
        "!IPSummaryDump 1.3\n!creator \"my \\\"tool\\\"\"\n!data timestamp ip_src\n0.000000 3.3.3.3\n"
    );
}

#[test]
fn round_trip_tcp_fields() {
    assert_round_trip(
        "tcp",
        "timestamp ip_src ip_dst sport dport ip_proto ip_len ip_id ip_ttl ip_tos ip_fragoff tcp_seq tcp_ack tcp_flags tcp_window tcp_urp payload_len",
        &[
            "1000000000.000001 1.0.0.1 2.0.0.2 1234 80 T 40 17 64 0 0! 1 2 SA 65535 0 0",
            "1000000001.500000 10.0.0.1 10.0.0.2 65535 1 T 1040 65535 1 255 0 4294967295 0 PA 100 7 1000",
            "1000000002.000000 10.0.0.1 10.0.0.2 5 6 T 52 0 255 3 0 9 9 . 1 0 12",
            "1000000003.999999 10.0.0.1 10.0.0.2 5 6 T 40 0 255 3 0 9 9 FSRPAUECN 1 0 0",
        ],
    );
}

#[test]
fn round_trip_udp_icmp_and_misc_fields() {
    assert_round_trip(
        "udp",
        "timestamp src dst sport dport proto udp_len ip_len payload_len ip_dscp ip_ecn ip_hl",
        &[
            "1.000001 1.1.1.1 2.2.2.2 53 5353 U 16 36 8 46 ce 20",
            "2.123456 1.1.1.1 2.2.2.2 0 0 U 8 28 0 0 no 20",
            "3.000000 1.1.1.1 2.2.2.2 7 7 U 8 28 0 10 ect1 20",
            "4.000000 1.1.1.1 2.2.2.2 7 7 U 8 32 0 10 ect2 24",
        ],
    );
    assert_round_trip(
        "icmp",
        "ts_sec ts_usec src dst proto icmp_type icmp_code icmp_flowid icmp_seq ip_len",
        &[
            "5 6 1.1.1.1 2.2.2.2 I 8 0 77 1 28",
            "5 7 1.1.1.1 2.2.2.2 I 0 0 77 2 28",
            "5 8 1.1.1.1 2.2.2.2 I 3 3 - - 28",
            "5 9 1.1.1.1 2.2.2.2 I 11 1 - - 28",
        ],
    );
    assert_round_trip(
        "icmpnames",
        "ts_usec1 src proto icmp_type_name icmp_code_name icmp_nextmtu",
        &[
            "1000000 1.1.1.1 I echo 0 -",
            "2000001 1.1.1.1 I unreachable needfrag 1400",
            "3000002 1.1.1.1 I timeexceeded reassembly -",
            "4000003 1.1.1.1 I 200 9 -",
        ],
    );
    assert_round_trip(
        "annos",
        "timestamp src count link aggregate ip_sum ip_proto",
        &[
            "7.000007 1.1.1.1 1 0 0 1234 47",
            "7.000008 1.1.1.1 3 2 99 65535 T",
        ],
    );
    assert_round_trip(
        "direction",
        "src direction",
        &["1.1.1.1 >", "1.1.1.1 <", "1.1.1.1 7"],
    );
}

#[test]
fn round_trip_fragments() {
    assert_round_trip(
        "fragoff",
        "src dst ip_id ip_fragoff ip_len proto",
        &[
            "1.0.0.1 2.0.0.2 5 0 20 U",
            "1.0.0.1 2.0.0.2 5 0+ 1500 U",
            "1.0.0.1 2.0.0.2 5 1480+ 1500 U",
            "1.0.0.1 2.0.0.2 5 2960 100 U",
            "1.0.0.1 2.0.0.2 5 0! 20 U",
            "1.0.0.1 2.0.0.2 5 8+! 20 U",
        ],
    );
    assert_round_trip(
        "frag",
        "src dst ip_frag",
        &[
            "1.0.0.1 2.0.0.2 .",
            "1.0.0.1 2.0.0.2 !",
            "1.0.0.1 2.0.0.2 F",
            "1.0.0.1 2.0.0.2 f",
        ],
    );
    // Non-first fragments have no transport header: ports print `-`.
    let (out, _) = round_trip_with(
        "fragports",
        "!data src dst proto sport dport ip_fragoff\n1.0.0.1 2.0.0.2 T 1 2 0+\n1.0.0.1 2.0.0.2 T 1 2 1480\n",
        "sport dport ip_frag payload_len",
        "",
    );
    assert_eq!(data_lines(&out), vec!["1 2 F 0", "- - f 0"]);
}

#[test]
fn round_trip_options() {
    assert_round_trip(
        "tcpopt",
        "src proto tcp_flags tcp_opt",
        &[
            "1.1.1.1 T S mss1460",
            "1.1.1.1 T S mss1460;wscale7;sackok;ts100:200",
            "1.1.1.1 T A ts4294967295:0",
            "1.1.1.1 T A sack1-2;sack3-4",
            "1.1.1.1 T A 99=1:2:3;mss536",
            "1.1.1.1 T A .",
        ],
    );
    assert_round_trip(
        "ipopt",
        "src dst ip_opt",
        &[
            "1.1.1.1 2.2.2.2 .",
            "1.1.1.1 2.2.2.2 rr{1.2.3.4}+2",
            "1.1.1.1 2.2.2.2 rr{}+9",
            "1.1.1.1 2.2.2.2 lsrr{1.0.0.1^2.0.0.2}",
            "1.1.1.1 2.2.2.2 ssrr{1.0.0.1,2.0.0.2^}",
            "1.1.1.1 2.2.2.2 148=0:0",
        ],
    );
    // tcp_sack shows only SACK options; tcp_ntopt drops timestamps.
    let (out, _) = round_trip_with(
        "sackonly",
        "!data src tcp_opt\n1.1.1.1 mss1460;sackok;sack5-6;ts1:2\n",
        "tcp_sack tcp_ntopt ip_hl",
        "",
    );
    assert_eq!(
        data_lines(&out),
        vec!["sackok;sack5-6 mss1460;sackok;sack5-6 20"]
    );
}

#[test]
fn payload_quoting() {
    assert_round_trip(
        "payload",
        "src proto payload",
        &[
            "1.1.1.1 U \"hello world\"",
            "1.1.1.1 U \"a\\\"b\\\\c\\n\\t\\r\\001\\377\\$\"",
            "1.1.1.1 T \"GET / HTTP/1.0\"",
            "1.1.1.1 U \"\"",
            "1.1.1.1 47 \"raw\"",
        ],
    );
    // The IP length follows the payload; payload_len agrees.
    let (out, _) = round_trip_with(
        "payloadlen",
        "!data proto payload\nU \"abcd\"\nT \"abcd\"\n",
        "ip_len payload_len udp_len",
        "",
    );
    assert_eq!(data_lines(&out), vec!["32 4 12", "44 4 -"]);
}

#[test]
fn packets_pass_header_checks_with_checksums() {
    let inp = tmp("checks.in");
    std::fs::write(
        &inp,
        "!IPSummaryDump 1.3\n!data src dst proto sport dport ip_ttl tcp_flags tcp_opt payload\n\
         1.0.0.1 2.0.0.2 T 1 2 64 S mss1460;sackok \"x\"\n\
         1.0.0.1 2.0.0.2 T 1 2 64 PA . \"hello\"\n\
         1.0.0.1 2.0.0.2 T 1 2 64 A ts1:2 \"odd\"\n",
    )
    .unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> ci :: CheckIPHeader -> ct :: CheckTCPHeader -> c :: Counter -> Discard;",
        inp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "c.count"), "3");
    assert_eq!(read(&mut r, "ci.drops"), "0");
    assert_eq!(read(&mut r, "ct.drops"), "0");

    std::fs::write(
        &inp,
        "!data src dst proto sport dport udp_len payload_len ip_opt\n\
         1.0.0.1 2.0.0.2 U 53 53 - 5 .\n\
         1.0.0.1 2.0.0.2 U 53 53 - 0 rr{}+3\n",
    )
    .unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> ci :: CheckIPHeader -> cu :: CheckUDPHeader -> c :: Counter -> Discard;",
        inp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "c.count"), "2");
    assert_eq!(read(&mut r, "cu.drops"), "0");

    std::fs::write(
        &inp,
        "!data src dst proto icmp_type icmp_flowid icmp_seq payload_len\n1.0.0.1 2.0.0.2 I 8 1 2 56\n",
    )
    .unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> CheckIPHeader -> ck :: CheckICMPHeader -> c :: Counter -> Discard;",
        inp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "c.count"), "1");
    assert_eq!(read(&mut r, "ck.drops"), "0");

    // Without CHECKSUM, as in Click, the IP checksum is zero and the
    // packet holds only its headers (the payload is extra length), so
    // CheckIPHeader drops it.
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true) -> ci :: CheckIPHeader -> c :: Counter -> Discard;",
        inp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "c.count"), "0");
    assert_eq!(read(&mut r, "ci.drops"), "1");
}

#[test]
fn decipttl_example() {
    let inp = tmp("ttl.in");
    std::fs::write(
        &inp,
        "!data src dst ip_ttl proto\n1.0.0.1 2.0.0.2 64 U\n1.0.0.1 2.0.0.2 1 U\n",
    )
    .unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> CheckIPHeader -> d :: DecIPTTL -> ok :: Counter -> Discard;
         d[1] -> expired :: Counter -> Discard;",
        inp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "ok.count"), "1");
    assert_eq!(read(&mut r, "expired.count"), "1");
    assert!(r.take_chatter().is_empty());
}

#[test]
fn malformed_lines_are_counted_and_skipped() {
    let input = "!data src dst ip_ttl proto tcp_flags\n\
                 1.0.0.1 2.0.0.2 64 T S\n\
                 not-an-address 2.0.0.2 64 T S\n\
                 1.0.0.1 2.0.0.2 300 T S\n\
                 1.0.0.1 2.0.0.2 64 Q S\n\
                 1.0.0.1 2.0.0.2 64 T SZ\n\
                 # a comment\n\
                 \n\
                 1.0.0.2 2.0.0.2 64 T\n\
                 1.0.0.3 2.0.0.2\n";
    let inp = tmp("bad.in");
    let out = tmp("bad.out");
    std::fs::write(&inp, input).unwrap();
    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump({}, CONTENTS src ip_ttl tcp_flags);",
        inp.display(),
        out.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "f.count"), "3");
    assert_eq!(read(&mut r, "f.bad_lines"), "4");
    let chatter = r.take_chatter().join("\n");
    assert!(
        chatter.contains(":3: bad line (ip_src: bad IP address 'not-an-address')"),
        "{chatter}"
    );
    assert!(chatter.contains(":4: bad line (ip_ttl:"), "{chatter}");
    assert!(chatter.contains(":5: bad line (ip_proto:"), "{chatter}");
    assert!(chatter.contains(":6: bad line (tcp_flags:"), "{chatter}");
    r.cleanup();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        data_lines(&text),
        // Lines without flags or TTL: Click's zero TCP header and TTL 100.
        vec!["1.0.0.1 64 S", "1.0.0.2 64 .", "1.0.0.3 100 ."]
    );
}

#[test]
fn garbage_never_panics() {
    let inp = tmp("garbage.in");
    let junk = [
        "!data tcp_opt ip_opt payload ip_fragoff ts icmp_code_name\n",
        "sack1 rr{ \"unterminated - -\n",
        "mss99999999 lsrr{1.2.3.4,^,^} \\ 99999999999999999999+ 1.2.3.4.5 -\n",
        "sack1-2;sack1-2;sack1-2;sack1-2;sack1-2 rr{}+99 \"\\777\" ! 1. x\n",
        "255=1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20:21:22:23:24:25:26:27:28:29:30:31:32:33:34:35:36:37:38:39:40 . . . .\n",
        "nop,nop,eol . - 65535+ 99999999999.9999999999 bogus\n",
        "!binary\n",
        "after binary\n",
    ];
    std::fs::write(&inp, junk.concat()).unwrap();
    let out = tmp("garbage.out");
    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump({}, CONTENTS tcp_opt ip_opt payload ip_fragoff);",
        inp.display(),
        out.display()
    ));
    r.run();
    let chatter = r.take_chatter().join("\n");
    assert!(
        chatter.contains("binary IP summary dumps are not supported"),
        "{chatter}"
    );
    r.cleanup();
}

#[test]
fn unknown_fields() {
    let e = try_from_config("Idle -> ToIPSummaryDump(/dev/null, CONTENTS src bogus);")
        .err()
        .expect("configuration error");
    assert!(
        e.join("\n").contains("unknown content type 'bogus'"),
        "{e:?}"
    );
    let e = try_from_config("FromIPSummaryDump(/dev/null, CONTENTS src wat) -> Discard;")
        .err()
        .expect("configuration error");
    assert!(e.join("\n").contains("unknown content type 'wat'"), "{e:?}");

    // In a file: warned about, the column ignored.
    let (out, chatter) = round_trip_with(
        "unknowncol",
        "!data src whatever dst\n1.0.0.1 zzz 2.0.0.2\n",
        "src dst",
        "",
    );
    assert!(
        chatter
            .join("\n")
            .contains("unknown content type 'whatever'"),
        "{chatter:?}"
    );
    assert_eq!(data_lines(&out), vec!["1.0.0.1 2.0.0.2"]);
}

#[test]
fn annotations_and_headers() {
    let inp = tmp("annos.in");
    std::fs::write(
        &inp,
        "!data timestamp src dst proto sport\n12.000034 1.2.3.4 5.6.7.8 U 9\n",
    )
    .unwrap();
    let out = tmp("annos.out");
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true) -> SetIPAddress(9.9.9.9) -> ToIPSummaryDump({}, CONTENTS timestamp ip_dst sport ip_len);",
        inp.display(),
        out.display()
    ));
    r.run();
    r.cleanup();
    // The destination annotation was set (SetIPAddress overwrote it); the
    // header is unchanged.
    assert_eq!(
        data_lines(&std::fs::read_to_string(&out).unwrap()),
        vec!["12.000034 5.6.7.8 9 28"]
    );
}

#[test]
fn multipacket_and_count() {
    let (out, _) = round_trip_with(
        "multi",
        "!data src count\n1.1.1.1 3\n2.2.2.2 1\n",
        "src count",
        ", MULTIPACKET true",
    );
    assert_eq!(
        data_lines(&out),
        vec!["1.1.1.1 1", "1.1.1.1 1", "1.1.1.1 1", "2.2.2.2 1"]
    );
    // ToIPSummaryDump MULTIPACKET expands the count annotation.
    let inp = tmp("multi2.in");
    let outp = tmp("multi2.out");
    std::fs::write(&inp, "!data src count\n1.1.1.1 2\n").unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true) -> t :: ToIPSummaryDump({}, CONTENTS src, MULTIPACKET true);",
        inp.display(),
        outp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "t.count"), "2");
    r.cleanup();
    assert_eq!(
        data_lines(&std::fs::read_to_string(&outp).unwrap()),
        vec!["1.1.1.1", "1.1.1.1"]
    );
}

#[test]
fn bad_packets_lines() {
    let inp = tmp("badpk.in");
    let outp = tmp("badpk.out");
    std::fs::write(
        &inp,
        "!data src proto ip_fragoff ip_len\n1.1.1.1 T 0 -\n1.1.1.1 T 0+ -\n1.1.1.1 T 8 -\n1.1.1.1 T 0 22\n",
    )
    .unwrap();
    let mut r = from_config(&format!(
        "FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump({}, CONTENTS src sport dport, BAD_PACKETS true);",
        inp.display(),
        outp.display()
    ));
    r.run();
    r.cleanup();
    // As in Click: a `!bad` line names the first field the packet is too
    // short for, and the line follows with `-` for the missing fields.
    let text = std::fs::read_to_string(&outp).unwrap();
    let body: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(
        body,
        vec![
            "1.1.1.1 0 0",
            "1.1.1.1 0 0",
            "!bad fragmented TCP/UDP header",
            "1.1.1.1 - -",
            "!bad truncated TCP/UDP header",
            "1.1.1.1 0 -",
        ],
        "{text}"
    );
}

#[test]
fn pull_source_and_pull_sink() {
    let inp = tmp("pull.in");
    let outp = tmp("pull.out");
    let mut input = String::from("!data src ip_id\n");
    for i in 0..50 {
        input.push_str(&format!("1.1.1.1 {i}\n"));
    }
    std::fs::write(&inp, &input).unwrap();
    // Pulled source (Unqueue pulls), pushed sink.
    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}, STOP true) -> Unqueue -> ToIPSummaryDump({}, CONTENTS src ip_id);",
        inp.display(),
        outp.display()
    ));
    r.run();
    assert_eq!(read(&mut r, "f.count"), "50");
    r.cleanup();
    let out = std::fs::read_to_string(&outp).unwrap();
    assert_eq!(data_lines(&out).len(), 50);
    assert_eq!(data_lines(&out)[49], "1.1.1.1 49");

    // Pushed source into a Queue, pulling sink task.
    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}) -> Queue(1000) -> t :: ToIPSummaryDump({}, CONTENTS src ip_id);",
        inp.display(),
        outp.display()
    ));
    r.run_limited(10_000);
    assert_eq!(read(&mut r, "t.count"), "50");
    r.cleanup();
    let out = std::fs::read_to_string(&outp).unwrap();
    assert_eq!(data_lines(&out)[0], "1.1.1.1 0");
    assert_eq!(data_lines(&out).len(), 50);
}

#[test]
fn stop_and_active() {
    let inp = tmp("stop.in");
    std::fs::write(&inp, "!data src\n1.1.1.1\n1.1.1.2\n").unwrap();
    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}, STOP true) -> c :: Counter -> Discard;",
        inp.display()
    ));
    assert_eq!(r.run(), StopReason::Stopped);
    assert_eq!(read(&mut r, "c.count"), "2");
    assert_eq!(read(&mut r, "f.encap"), "IP");

    let mut r = from_config(&format!(
        "f :: FromIPSummaryDump({}, STOP true, ACTIVE false) -> c :: Counter -> Discard;",
        inp.display()
    ));
    r.run_limited(100);
    assert_eq!(read(&mut r, "c.count"), "0");
    r.write_handler("f.active", "true").unwrap();
    r.run();
    assert_eq!(read(&mut r, "c.count"), "2");
}
