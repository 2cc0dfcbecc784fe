//! Tests of `Args` and cross-module properties.

use super::*;
use crate::wire::EtherAddr;
use std::net::Ipv4Addr;
use std::time::Duration;

fn errs(a: Args) -> Vec<String> {
    a.complete().unwrap_err()
}

#[test]
fn doc_example() {
    let mut args = Args::new("14, BURST 2, STOP true");
    let len: u32 = args.read_mp("LENGTH");
    let burst: Option<u32> = args.read_p("BURST");
    let stop = args.read_or("STOP", false);
    assert!(args.complete().is_ok());
    assert_eq!((len, burst, stop), (14, Some(2), true));
}

#[test]
fn positional_in_call_order() {
    let mut a = Args::new("1, 2, 3");
    let x: u32 = a.read_mp("A");
    let y: Option<u32> = a.read_p("B");
    let z = a.read_p_or("C", 0u32);
    assert_eq!((x, y, z), (1, Some(2), 3));
    assert!(a.complete().is_ok());
}

#[test]
fn keyword_instead_of_positional() {
    let mut a = Args::new("LENGTH 14");
    assert_eq!(a.read_mp::<u32>("LENGTH"), 14);
    assert_eq!(a.read_p::<u32>("BURST"), None);
    assert!(a.complete().is_ok());

    let mut a = Args::new("BURST 5, LENGTH 14");
    assert_eq!(a.read_mp::<u32>("LENGTH"), 14);
    assert_eq!(a.read_p::<u32>("BURST"), Some(5));
    assert!(a.complete().is_ok());
}

#[test]
fn positionals_stop_after_keyword() {
    // A positional after a keyword is not taken positionally.
    let mut a = Args::new("LENGTH 14, 5");
    assert_eq!(a.read_mp::<u32>("LENGTH"), 14);
    assert_eq!(a.read_p::<u32>("BURST"), None);
    assert_eq!(errs(a), vec!["too many arguments"]);
}

#[test]
fn later_keyword_wins_over_position() {
    let mut a = Args::new("5, LENGTH 10");
    assert_eq!(a.read_mp::<u32>("LENGTH"), 10);
    assert!(a.complete().is_ok());
}

#[test]
fn repeated_keyword_last_wins() {
    let mut a = Args::new("DATA a, LIMIT 10, DATA b");
    assert_eq!(a.read_p::<String>("DATA").as_deref(), Some("b"));
    assert_eq!(a.read_p::<u32>("LIMIT"), Some(10));
    assert!(a.complete().is_ok());
}

#[test]
fn keyword_only_is_not_positional() {
    let mut a = Args::new("\"blah\", 10, true");
    let _: String = a.read_mp("DATA");
    let _: Option<u32> = a.read_p("LIMIT");
    let _: Option<bool> = a.read("STOP");
    assert_eq!(errs(a), vec!["too many arguments"]);
}

#[test]
fn unknown_keyword_and_too_many() {
    let mut a = Args::new("1, 2, BOGUS 3, OTHER x");
    let _: u32 = a.read_mp("A");
    assert_eq!(
        errs(a),
        vec![
            "BOGUS: unknown argument",
            "OTHER: unknown argument",
            "too many arguments"
        ]
    );
}

#[test]
fn missing_mandatory() {
    let mut a = Args::new("");
    let v: u32 = a.read_mp("LENGTH");
    assert_eq!(v, 0);
    let ip: Ipv4Addr = a.read_m("ADDR");
    assert_eq!(ip, Ipv4Addr::UNSPECIFIED);
    assert_eq!(
        errs(a),
        vec![
            "LENGTH: required argument missing",
            "ADDR: required argument missing"
        ]
    );
}

#[test]
fn errors_accumulate() {
    let mut a = Args::new("x, LIMIT 99999999999, STOP maybe, EXTRA 1, 7");
    let _: u32 = a.read_mp("LENGTH");
    let _: Option<u32> = a.read("LIMIT");
    let _: Option<bool> = a.read("STOP");
    let _: Ipv4Addr = a.read_m("ADDR");
    assert!(!a.is_ok());
    assert_eq!(
        errs(a),
        vec![
            "LENGTH: invalid number",
            "LIMIT: out of range, bound 4294967295",
            "STOP: parse error",
            "ADDR: required argument missing",
            "EXTRA: unknown argument",
            "too many arguments",
        ]
    );
}

#[test]
fn invalid_value_uses_default_but_reports() {
    let mut a = Args::new("BURST x");
    assert_eq!(a.read_or("BURST", 7u32), 7);
    assert_eq!(errs(a), vec!["BURST: invalid number"]);
}

#[test]
fn quoted_commas_in_values() {
    let mut a = Args::new("\"a, b\", LABEL 'c, d', 3");
    assert_eq!(a.read_mp::<String>("DATA"), "a, b");
    assert_eq!(a.read::<String>("LABEL").as_deref(), Some("c, d"));
    assert_eq!(errs(a), vec!["too many arguments"]);
}

#[test]
fn keyword_with_empty_value() {
    // `LABEL ""` is the keyword form of an empty string.
    let mut a = Args::new("LABEL \"\"");
    assert_eq!(a.read_p::<String>("LABEL").as_deref(), Some(""));
    assert!(a.complete().is_ok());
    // A bare word is not a keyword argument: it is positional.
    let mut a = Args::new("STOP");
    assert_eq!(a.read::<bool>("STOP"), None);
    assert_eq!(errs(a), vec!["too many arguments"]);
    let mut a = Args::new("STOP   ");
    assert_eq!(a.read::<bool>("STOP"), None);
    assert_eq!(errs(a), vec!["too many arguments"]);
}

#[test]
fn empty_positional_means_absent() {
    let mut a = Args::new(", 5");
    assert_eq!(a.read_p::<u32>("A"), None);
    assert_eq!(a.read_p::<u32>("B"), Some(5));
    assert!(a.complete().is_ok());
    let mut a = Args::new(", 5");
    let _: u32 = a.read_mp("A");
    assert_eq!(
        errs(a),
        vec!["A: required argument missing", "too many arguments"]
    );
}

#[test]
fn keyword_looking_positional() {
    // Optional positional reads skip keyword-looking arguments...
    let mut a = Args::new("hello world");
    assert_eq!(a.read_p::<String>("LABEL"), None);
    assert_eq!(errs(a), vec!["hello: unknown argument"]);
    // ...but a mandatory read takes it when its keyword is absent.
    let mut a = Args::new("hello world");
    assert_eq!(a.read_mp_with("PATTERN", parse_any), "hello world");
    assert!(a.complete().is_ok());
    // Lower-case keywords match exactly.
    let mut a = Args::new("x 1");
    assert_eq!(a.read::<u32>("x"), Some(1));
    assert!(a.complete().is_ok());
}

#[test]
fn keyword_detection() {
    let mut a = Args::from_vec(vec![
        "A.B:C?! 1".into(),
        "_X 2".into(),
        "1A 3".into(),
        "A\t\t4".into(),
        "A-B 5".into(),
    ]);
    assert_eq!(a.read::<u32>("A.B:C?!"), Some(1));
    assert_eq!(a.read::<u32>("_X"), Some(2));
    assert_eq!(a.read::<u32>("1A"), None);
    assert_eq!(a.read::<u32>("A"), Some(4));
    assert_eq!(a.read::<u32>("A-B"), None);
    assert_eq!(a.take_rest(), vec!["1A 3", "A-B 5"]);
    assert!(a.complete().is_ok());
}

#[test]
fn keyword_prefix_does_not_match() {
    let mut a = Args::new("LENGTHS 4");
    assert_eq!(a.read::<u32>("LENGTH"), None);
    assert!(a.has_keyword("LENGTHS"));
    assert!(!a.has_keyword("LENGTH"));
    assert_eq!(errs(a), vec!["LENGTHS: unknown argument"]);
}

#[test]
fn read_all_repeated() {
    let mut a = Args::new("ADDR 1.2.3.4, 9, ADDR 5.6.7.8, ADDR bad, X 1");
    let v: Vec<Ipv4Addr> = a.read_all("ADDR");
    assert_eq!(
        v,
        vec![Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8)]
    );
    assert_eq!(a.read_all::<u32>("NONE"), Vec::<u32>::new());
    // The first argument was consumed as a keyword, so positional reading
    // is over and the 9 is left over.
    let x: Option<u32> = a.read_p("POS");
    assert_eq!(x, None);
    assert_eq!(
        errs(a),
        vec![
            "ADDR: parse error",
            "X: unknown argument",
            "too many arguments"
        ]
    );
}

#[test]
fn take_rest_for_patterns() {
    let mut a = Args::new("12/0800, 12/0806 20/0002, -");
    assert_eq!(a.take_rest(), vec!["12/0800", "12/0806 20/0002", "-"]);
    assert!(a.complete().is_ok());

    let mut a = Args::new("NAME x, allow src host 1.2.3.4, deny all");
    assert_eq!(a.read::<String>("NAME").as_deref(), Some("x"));
    assert_eq!(
        a.consume().unwrap(),
        vec!["allow src host 1.2.3.4", "deny all"]
    );
}

#[test]
fn explicit_parsers() {
    let mut a = Args::new("10Mbps, INTERVAL 10ms, PFX 10/8, MAC 0:1:2:3:4:5, D \\<0800>");
    let rate: u64 = a.read_mp_with("RATE", parse_bandwidth);
    let iv = a.read_or_with("INTERVAL", parse_seconds, Duration::from_secs(1));
    let p = a.read_m_with("PFX", parse_ipv4_addr_or_prefix);
    let mac: EtherAddr = a.read_m("MAC");
    let d: Option<Vec<u8>> = a.read("D");
    assert!(a.complete().is_ok());
    assert_eq!(rate, 1_250_000);
    assert_eq!(iv, Duration::from_millis(10));
    assert_eq!(p.prefix_len(), Some(8));
    assert_eq!(mac, EtherAddr([0, 1, 2, 3, 4, 5]));
    assert_eq!(d, Some(vec![8, 0]));

    let mut a = Args::new("");
    assert_eq!(
        a.read_or_with("INTERVAL", parse_seconds, Duration::from_secs(1)),
        Duration::from_secs(1)
    );
    assert_eq!(
        a.read_p_or_with("X", parse_word, "dflt".to_string()),
        "dflt"
    );
    assert_eq!(a.read_p_with("Y", parse_word), None);
    assert_eq!(a.read_with("Z", parse_word), None);
    assert!(a.complete().is_ok());
}

#[test]
fn default_types() {
    let mut a = Args::new(
        "A true, B -3, C 2.5, D 1.5s, E ::1, F fe80::/10, G 1.2.3.0/24, H 1kbps, I 0x10, J 'x y'",
    );
    assert_eq!(a.read::<bool>("A"), Some(true));
    assert_eq!(a.read::<i64>("B"), Some(-3));
    assert_eq!(a.read::<f64>("C"), Some(2.5));
    assert_eq!(a.read::<Duration>("D"), Some(Duration::from_millis(1500)));
    assert_eq!(
        a.read::<std::net::Ipv6Addr>("E"),
        Some(std::net::Ipv6Addr::LOCALHOST)
    );
    assert_eq!(a.read::<Ipv6Prefix>("F").unwrap().prefix_len(), Some(10));
    assert_eq!(a.read::<Ipv4Prefix>("G").unwrap().prefix_len(), Some(24));
    assert_eq!(a.read::<Bandwidth>("H"), Some(Bandwidth(125)));
    assert_eq!(a.read::<u8>("I"), Some(16));
    assert_eq!(a.read::<String>("J").as_deref(), Some("x y"));
    assert!(a.complete().is_ok());
}

#[test]
fn custom_errors() {
    let mut a = Args::new("0");
    let n: u32 = a.read_mp("N");
    if n == 0 {
        a.error_for("N", "must be positive");
        a.error("bad configuration");
    }
    assert_eq!(a.errors().len(), 2);
    assert_eq!(errs(a), vec!["N: must be positive", "bad configuration"]);
}

#[test]
fn comments_in_config() {
    let mut a = Args::new("LENGTH /* bytes */ 14, // trailing\n BURST 3");
    assert_eq!(a.read_mp::<u32>("LENGTH"), 14);
    assert_eq!(a.read_p::<u32>("BURST"), Some(3));
    assert!(a.complete().is_ok());
}

#[test]
fn utf8_keyword_neighbours() {
    let mut a = Args::new("É 1, LABEL é x");
    assert_eq!(a.read::<String>("LABEL"), None);
    assert_eq!(errs(a), vec!["LABEL: parse error", "too many arguments"]);
}

mod props {
    use super::super::*;
    use crate::wire::EtherAddr;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;
    use std::time::Duration;

    fn config_chars() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[a-zA-Z0-9 ,\"'\\\\<>/*\n_.:-]{0,40}").unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn no_panics_anywhere(s in config_chars()) {
            let parts = split_args(&s);
            for p in &parts {
                let _ = unquote(p);
                let _ = parse_string(p);
                let _ = parse_word(p);
                let _ = parse_u32(p);
                let _ = parse_i64(p);
                let _ = parse_f64(p);
                let _ = parse_seconds(p);
                let _ = parse_bandwidth(p);
                let _ = parse_ipv4_addr_or_prefix(p);
                let _ = parse_ipv6_addr_or_prefix(p);
                let _ = parse_ether(p);
                let _ = parse_hex(p);
            }
            let _ = split_words(&s);
            let _ = uncomment(&s);
            let mut a = Args::new(&s);
            let _: u32 = a.read_mp("A");
            let _: Option<String> = a.read_p("B");
            let _: Vec<u32> = a.read_all("C");
            let _ = a.complete();
        }

        #[test]
        fn no_panics_arbitrary_unicode(s in any::<String>()) {
            let _ = split_args(&s);
            let _ = unquote(&s);
            let _ = parse_string(&s);
            let _ = parse_seconds(&s);
            let _ = parse_bandwidth(&s);
            let _ = parse_ipv4_prefix(&s);
            let _ = parse_ether(&s);
            let mut a = Args::new(&s);
            let _: Option<u32> = a.read_p("A");
            let _ = a.take_rest();
            let _ = a.complete();
        }

        #[test]
        fn u64_roundtrip(n in any::<u64>()) {
            prop_assert_eq!(parse_u64(&n.to_string()), Ok(n));
            prop_assert_eq!(parse_u64(&format!("{n:#x}")), Ok(n));
            prop_assert_eq!(parse_u64(&format!("{n:#b}")), Ok(n));
            if n > 0 {
                prop_assert_eq!(parse_u64(&format!("0{n:o}")), Ok(n));
            }
        }

        #[test]
        fn i32_range(n in any::<i64>()) {
            let r = parse_i32(&n.to_string());
            prop_assert_eq!(r.is_ok(), i32::try_from(n).is_ok());
        }

        #[test]
        fn ipv4_roundtrip(a in any::<[u8; 4]>(), len in 0u8..=32) {
            let ip = Ipv4Addr::from(a);
            prop_assert_eq!(parse_ipv4(&ip.to_string()), Ok(ip));
            let p = parse_ipv4_prefix(&format!("{ip}/{len}")).unwrap();
            prop_assert_eq!(p.prefix_len(), Some(len));
            prop_assert_eq!(parse_ipv4_prefix(&p.to_string()), Ok(p));
        }

        #[test]
        fn ether_roundtrip(b in any::<[u8; 6]>()) {
            let e = EtherAddr(b);
            prop_assert_eq!(parse_ether(&e.to_string()), Ok(e));
            prop_assert_eq!(parse_ether(&e.to_string().replace('-', ":")), Ok(e));
        }

        #[test]
        fn seconds_millis(ms in 0u64..10_000_000_000) {
            let s = format!("{}.{:03}", ms / 1000, ms % 1000);
            prop_assert_eq!(parse_seconds(&s), Ok(Duration::from_millis(ms)));
            prop_assert_eq!(parse_seconds(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        }

        #[test]
        fn split_single_quoted_roundtrip(s in "[a-z ,/*]{0,20}") {
            let quoted = format!("'{s}'");
            let parts = split_args(&quoted);
            prop_assert_eq!(parts.len(), 1);
            prop_assert_eq!(unquote_string(&parts[0]), s);
        }
    }
}
