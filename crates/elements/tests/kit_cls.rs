//! The classifiers on the element kit: IPClassifier is IPFilter with one
//! pattern per output, the three classifiers' handler tables, and the
//! matcher they share.

use rclick_core::{Packet, Router};
use rclick_elements::ip::ipfilter_compile::{
    parse_classifier, parse_filter, CompileOptions, Compiled, StaticNames,
};
use rclick_elements::standard::classifier_program::Program;
use rclick_elements::testing::{from_config, read, try_from_config};

/// An IPv4 packet of protocol `proto` whose transport header starts with
/// ports 1000 and `dport`; `first` replaces the version/IHL byte.
fn ip(first: u8, proto: u8, dport: u16) -> Packet {
    let mut d = vec![0u8; 40];
    d[0] = first;
    d[2..4].copy_from_slice(&40u16.to_be_bytes());
    d[8] = 64;
    d[9] = proto;
    d[20..22].copy_from_slice(&1000u16.to_be_bytes());
    d[22..24].copy_from_slice(&dport.to_be_bytes());
    let mut p = Packet::from_slice(&d);
    p.set_network_header(0, 20);
    p
}

fn three_way(class: &str, args: &str) -> Router {
    from_config(&format!(
        "Idle -> c :: {class}({args});\n\
         c[0] -> c0 :: Counter -> Discard;\n\
         c[1] -> c1 :: Counter -> Discard;\n\
         c[2] -> c2 :: Counter -> Discard;"
    ))
}

fn config_errors(text: &str) -> Vec<String> {
    match try_from_config(text) {
        Ok(_) => panic!("{text}: no error"),
        Err(e) => e,
    }
}

fn counts(r: &mut Router) -> [String; 3] {
    ["c0", "c1", "c2"].map(|c| read(r, &format!("{c}.count")))
}

fn push_all(r: &mut Router, packets: &[Packet]) {
    let c = r.find_element("c").expect("c");
    for p in packets {
        r.inject_packet(c, 0, p.clone());
    }
}

#[test]
fn ipclassifier_is_ipfilter_with_one_output_per_pattern() {
    let packets = [
        ip(0x45, 6, 80),
        ip(0x45, 17, 53),
        ip(0x45, 17, 54),
        ip(0x45, 1, 0),
        ip(0x46, 6, 80),
        ip(0x4f, 17, 53),
    ];
    let mut c = three_way("IPClassifier", "tcp, udp port 53, -");
    let mut f = three_way("IPFilter", "0 tcp, 1 udp port 53, 2 -");
    push_all(&mut c, &packets);
    push_all(&mut f, &packets);
    assert_eq!(counts(&mut c), ["2", "2", "2"].map(String::from));
    assert_eq!(counts(&mut c), counts(&mut f));
    assert_eq!(read(&mut c, "c.program"), read(&mut f, "c.program"));
}

#[test]
fn ipclassifier_needs_one_pattern_per_output_ipfilter_does_not() {
    let e = config_errors("Idle -> c :: IPClassifier(tcp, -) -> Discard;");
    assert!(
        e.iter()
            .any(|m| m.contains("need 1 arguments, one per output port")),
        "{e:?}"
    );
    let e = config_errors("Idle -> c :: Classifier(12/0800, -) -> Discard;");
    assert!(
        e.iter()
            .any(|m| m.contains("need 1 arguments, one per output port")),
        "{e:?}"
    );
    assert!(try_from_config("Idle -> c :: IPFilter(allow tcp, drop all) -> Discard;").is_ok());
    // IPFilter keeps its actions: 'allow' means output 0 for IPFilter only.
    let e = config_errors("Idle -> c :: IPClassifier(allow tcp) -> Discard;");
    assert!(e.iter().any(|m| m.contains("pattern 0")), "{e:?}");
}

#[test]
fn program_handlers_are_read_only_with_the_core_error_for_others() {
    for (class, args) in [
        ("Classifier", "12/0800, 12/0806, -"),
        ("IPClassifier", "tcp, udp, -"),
        ("IPFilter", "0 tcp, 1 udp, 2 all"),
    ] {
        let mut r = three_way(class, args);
        assert!(!read(&mut r, "c.program").is_empty(), "{class}");
        assert!(r.write_handler("c.program", "x").is_err(), "{class}");
        assert_eq!(
            r.read_handler("c.nosuch", None).unwrap_err(),
            r.read_handler("c0.nosuch", None)
                .unwrap_err()
                .replace("c0.", "c."),
            "{class}"
        );
        // Classifier's program is calm in Click, the others' are not.
        let flags = if class == "Classifier" { "r." } else { "r" };
        let hs = read(&mut r, "c.handlers");
        assert!(
            hs.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["program", flags]),
            "{class}: {hs}"
        );
    }
}

/// Classifier and IPFilter programs agree with first-match semantics on
/// short data, where the matcher reads partial words.
#[test]
fn shared_matcher_partial_words() {
    let texts: Vec<String> = ["0/0102 3/04", "!2/ff", "-"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let p = Program::compile(&texts).unwrap();
    assert_eq!(p.classify(&[1, 2, 0, 4]), Some(0));
    assert_eq!(p.classify(&[1, 2, 0]), Some(1));
    assert_eq!(p.classify(&[1, 2, 0xff]), Some(2));
    assert_eq!(p.classify(&[1]), Some(1));
    assert_eq!(p.classify(&[]), Some(1));

    let parsed = parse_filter(
        &["1 ip[1] == 7".to_string(), "2 ip ttl > 3".to_string()],
        3,
        &StaticNames,
    )
    .unwrap();
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    assert_eq!(c.classify(&[0x45, 7], &[]), Some(1));
    assert_eq!(c.classify(&[0x45, 6], &[]), None);
    assert_eq!(c.classify(&[0x45, 6, 0, 0, 0, 0, 0, 0, 4], &[]), Some(2));
    assert_eq!(c.classify(&[0x45, 6, 0, 0, 0, 0, 0, 0, 3], &[]), None);
}

/// A negated clause with an empty mask past the end of the data: the test
/// reads nothing, so it holds and the negation fails, with or without
/// optimization.
#[test]
fn empty_mask_past_the_data() {
    let texts: Vec<String> = ["!8/??", "-"].iter().map(|s| s.to_string()).collect();
    for p in [
        Program::compile(&texts).unwrap(),
        Program::compile_unoptimized(&texts).unwrap(),
    ] {
        assert_eq!(p.classify(&[1, 2]), Some(1));
        assert_eq!(p.classify(&[]), Some(1));
    }
}

/// IPFilter's action words, with IPClassifier's rule loop shared: each bad
/// argument is reported, and warnings keep their order.
#[test]
fn ipfilter_actions_errors_and_warnings() {
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let e = parse_filter(
        &args(&["", "5 tcp", "forward tcp", "allow tcp and", "1 src port 80"]),
        2,
        &StaticNames,
    )
    .unwrap_err();
    assert_eq!(e.len(), 4, "{e:?}");
    assert_eq!(e[0], "empty pattern 0");
    assert_eq!(e[1], "pattern 1: slot '5' out of range");
    assert_eq!(e[2], "pattern 2: unknown slot ID 'forward'");
    assert!(e[3].starts_with("pattern 3: "), "{e:?}");
    let e = parse_filter(&args(&["allow all"]), 0, &StaticNames).unwrap_err();
    assert_eq!(
        e,
        ["pattern 0: 'allow' is meaningless, element has zero outputs"]
    );
    let p = parse_filter(
        &args(&["deny src tcp opt syn", "deny all"]),
        2,
        &StaticNames,
    )
    .unwrap();
    // Click 2.1 takes `deny` as `drop` silently; `src` on a TCP option
    // is ignored, with a warning naming the directive.
    assert_eq!(
        p.warnings,
        [(0, "'src tcp opt': 'src' or 'dst' ignored".to_string())]
    );
    assert_eq!(p.rules.len(), 2);
    // IPClassifier's patterns take no action word.
    let p = parse_classifier(&args(&["tcp", "-"]), &StaticNames).unwrap();
    assert_eq!(p.rules.len(), 2);
    assert!(parse_classifier(&args(&["allow tcp"]), &StaticNames).is_err());
}
