//! IPClassifier and IPFilter Ethernet primitives: `ether src`, `ether dst`,
//! `ether host` (and Click's `[SRCORDST] ether host ETH`) on the 14 bytes
//! before the IP header, combined with IP tests, on packets with and
//! without an Ethernet header, with AddressInfo names, and their errors.

use rclick_core::Packet;
use rclick_elements::ip::ipfilter_compile::{
    parse_classifier, reference_classify_ether, CompileOptions, Compiled, StaticNames,
};
use rclick_elements::testing::{config_errors, from_config, ipfilter_compile_variants, read};

const A: [u8; 6] = [0x00, 0x0a, 0x0b, 0x0c, 0x0d, 0x01];
const B: [u8; 6] = [0x00, 0x0a, 0x0b, 0x0c, 0x0d, 0x02];

/// A 20-byte IPv4 header with a TCP header: 1.0.0.1:1000 -> 2.0.0.2:80.
fn ip_tcp() -> Vec<u8> {
    let mut v = vec![0u8; 40];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&40u16.to_be_bytes());
    v[8] = 64;
    v[9] = 6;
    v[12..16].copy_from_slice(&[1, 0, 0, 1]);
    v[16..20].copy_from_slice(&[2, 0, 0, 2]);
    v[20..22].copy_from_slice(&1000u16.to_be_bytes());
    v[22..24].copy_from_slice(&80u16.to_be_bytes());
    v[32] = 0x50;
    v
}

fn ether(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut v = dst.to_vec();
    v.extend_from_slice(&src);
    v.extend_from_slice(&[0x08, 0x00]);
    v
}

/// The frame `dst src 0800 IP` after Strip(14), IP header annotated.
fn stripped(dst: [u8; 6], src: [u8; 6]) -> Packet {
    let mut f = ether(dst, src);
    f.extend_from_slice(&ip_tcp());
    let mut p = Packet::from_slice(&f);
    p.pull(14);
    p.set_network_header(0, 20);
    p
}

/// An IP packet with no Ethernet header before it.
fn bare() -> Packet {
    let mut p = Packet::from_slice(&ip_tcp());
    p.set_network_header(0, 20);
    p
}

/// Whether `pattern` matches the frame from `dst` to `src` (None: no
/// Ethernet header); checks every compile variant against the reference.
fn m(pattern: &str, eth: Option<([u8; 6], [u8; 6])>) -> bool {
    let parsed = parse_classifier(&[pattern.to_string()], &StaticNames)
        .unwrap_or_else(|e| panic!("{pattern}: {e:?}"));
    let ip = ip_tcp();
    let eb = eth.map(|(d, s)| ether(d, s)).unwrap_or_default();
    let want = reference_classify_ether(&parsed.rules, &eb, &ip, &ip[20..]);
    for o in ipfilter_compile_variants() {
        let c = Compiled::new(&parsed.rules, o);
        assert_eq!(
            c.classify_ether(&eb, &ip, &ip[20..]),
            want,
            "{pattern} {o:?}"
        );
        let p = match eth {
            Some((d, s)) => stripped(d, s),
            None => bare(),
        };
        assert_eq!(c.classify_packet(&p), want, "{pattern} packet {o:?}");
    }
    want == Some(0)
}

fn err(pattern: &str) -> String {
    match parse_classifier(&[pattern.to_string()], &StaticNames) {
        Ok(_) => panic!("'{pattern}' should not parse"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn src_dst_and_host() {
    let ab = Some((A, B)); // to A from B
    assert!(m("ether dst 00:0a:0b:0c:0d:01", ab));
    assert!(!m("ether dst 00:0a:0b:0c:0d:02", ab));
    assert!(m("ether src 00-0a-0b-0c-0d-02", ab));
    assert!(!m("ether src 00-0a-0b-0c-0d-01", ab));
    assert!(m("ether host 00:0a:0b:0c:0d:01", ab));
    assert!(m("ether host 00:0a:0b:0c:0d:02", ab));
    assert!(!m("ether host 00:0a:0b:0c:0d:03", ab));
    // Click's order, and tcpdump's with `host`.
    assert!(m("src ether host 00:0a:0b:0c:0d:02", ab));
    assert!(!m("dst ether host 00:0a:0b:0c:0d:02", ab));
    assert!(m("ether dst host 00:0a:0b:0c:0d:01", ab));
    assert!(m("src or dst ether host 00:0a:0b:0c:0d:01", ab));
    assert!(!m("src and dst ether host 00:0a:0b:0c:0d:01", ab));
    assert!(m("src and dst ether host 00:0a:0b:0c:0d:01", Some((A, A))));
    // Near misses in either half of the address.
    assert!(!m("ether dst 01:0a:0b:0c:0d:01", ab));
    assert!(!m("ether src 00:0a:0b:0c:0e:02", ab));
    assert!(!m("ether src 00:0b:0b:0c:0d:02", ab));
    // `!=` and negation.
    assert!(m("ether src != 00:0a:0b:0c:0d:01", ab));
    assert!(!m("ether src != 00:0a:0b:0c:0d:02", ab));
    assert!(m("not ether dst 00:0a:0b:0c:0d:02", ab));
    // Qualifier inheritance: `ether src A or B`.
    assert!(m("ether src 00:0a:0b:0c:0d:09 or 00:0a:0b:0c:0d:02", ab));
    assert!(!m("ether dst 00:0a:0b:0c:0d:09 or 00:0a:0b:0c:0d:02", ab));
}

#[test]
fn combined_with_ip_terms() {
    let ab = Some((A, B));
    assert!(m("ether src 00:0a:0b:0c:0d:02 and tcp dst port 80", ab));
    assert!(!m("ether src 00:0a:0b:0c:0d:02 and udp", ab));
    assert!(m("udp or ether dst 00:0a:0b:0c:0d:01", ab));
    assert!(m("src host 1.0.0.1 && ether host 00:0a:0b:0c:0d:01", ab));
    assert!(m(
        "(ether src 00:0a:0b:0c:0d:01 or tcp) and not ether dst 00:0a:0b:0c:0d:02",
        ab
    ));
    assert!(m("ether dst 00:0a:0b:0c:0d:01 ? dst port 80 : false", ab));
    assert!(!m("ether dst 00:0a:0b:0c:0d:02 ? true : dst port 81", ab));
}

#[test]
fn packets_without_an_ethernet_header() {
    // The test fails, so its negation matches, as for short packets.
    assert!(!m("ether host 00:00:00:00:00:00", None));
    assert!(!m("ether src 00:0a:0b:0c:0d:02", None));
    assert!(m("not ether src 00:0a:0b:0c:0d:02", None));
    assert!(m("ether src 00:0a:0b:0c:0d:02 or tcp", None));
    // `!=` holds only where the header is there to compare, as on short
    // packets in Click 2.1 (`port != 80` does not match a packet cut
    // before its ports; `not port 80` does).
    assert!(!m("ether src != 00:0a:0b:0c:0d:02", None));
    // Headroom that never held the frame is not an Ethernet header, even
    // though it is there (zeros or stale bytes).
    let parsed = parse_classifier(&["ether host 00:00:00:00:00:00".into()], &StaticNames).unwrap();
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    let p = bare();
    assert!(p.headroom() >= 14);
    assert_eq!(c.classify_packet(&p), None);
    // Nor does a packet without an IP header annotation match.
    let mut f = ether(A, B);
    f.extend_from_slice(&ip_tcp());
    let parsed =
        parse_classifier(&["not ether dst 00:0a:0b:0c:0d:01".into()], &StaticNames).unwrap();
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    assert_eq!(c.classify_packet(&Packet::from_slice(&f)), Some(0));
    // With MarkIPHeader(14) instead of Strip(14) the header is in the data.
    let mut p = Packet::from_slice(&f);
    p.set_network_header(14, 20);
    assert_eq!(c.classify_packet(&p), None);
}

#[test]
fn program_handler_shows_ethernet_words() {
    let parsed = parse_classifier(&["ether src 00:0a:0b:0c:0d:02".into()], &StaticNames).unwrap();
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    let text = c.unparse();
    // Click's coordinates and words: the Ethernet header starts at 2, so
    // the source address is the word at 8 and the half word at 12.
    assert!(text.contains("   8/000a0b0c%ffffffff"), "{text}");
    assert!(text.contains("  12/0d020000%ffff0000"), "{text}");
    assert!(
        text.ends_with("safe length 14\nalignment offset 0\n"),
        "{text}"
    );
}

#[test]
fn errors_name_the_bad_token() {
    let e = err("ether src 00:0a:0b:0c:0d");
    assert!(
        e.contains("'00:0a:0b:0c:0d'") && e.contains("Ethernet address"),
        "{e}"
    );
    let e = err("ether host zz:00:00:00:00:00 and tcp");
    assert!(e.contains("'zz:00:00:00:00:00'"), "{e}");
    let e = err("ether dst 1.0.0.1");
    assert!(e.contains("'1.0.0.1'"), "{e}");
    assert!(err("ether host").contains("Ethernet address missing"));
    assert!(err("ether src or tcp").contains("Ethernet address missing"));
    assert!(err("ether host > 00:00:00:00:00:01").contains("relational"));
    assert!(err("ether host & 0xff 00:00:00:00:00:01").contains("mask"));
    assert!(err("ether port 80").contains("'ether'"));
    assert!(err("tcp ether host 00:00:00:00:00:01").contains("'ether'"));
    assert!(err("ether ether host 00:00:00:00:00:01").contains("twice"));
    assert!(err("ether src src 00:00:00:00:00:01").contains("twice"));
    // A bare Ethernet address is an Ethernet host test (Click 2.1 too;
    // this used to be an error here).
    let parsed = parse_classifier(&["00:00:00:00:00:01".into()], &StaticNames).unwrap();
    let text = Compiled::new(&parsed.rules, CompileOptions::default()).unparse();
    assert!(text.contains("   4/00000001%ffffffff"), "{text}");
}

fn counts(r: &mut rclick_core::Router, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| read(r, &format!("c{i}.count")).trim().parse().unwrap())
        .collect()
}

/// Injects the unstripped frame `dst src 0800 IP` into element `s`.
fn inject_frame(r: &mut rclick_core::Router, s: usize, dst: [u8; 6], src: [u8; 6]) {
    let mut f = ether(dst, src);
    f.extend_from_slice(&ip_tcp());
    r.inject_packet(s, 0, Packet::from_slice(&f));
}

#[test]
fn ipclassifier_after_strip_with_addressinfo_names() {
    let mut r = from_config(
        "AddressInfo(gw 10.0.0.1 00:0a:0b:0c:0d:01, peer 00:0a:0b:0c:0d:02);
         Idle -> s :: Strip(14) -> MarkIPHeader -> f :: IPClassifier(ether src gw, ether dst peer and tcp, -);
         f[0] -> c0 :: Counter -> Discard;
         f[1] -> c1 :: Counter -> Discard;
         f[2] -> c2 :: Counter -> Discard;",
    );
    let s = r.find_element("s").unwrap();
    inject_frame(&mut r, s, B, A); // from gw
    inject_frame(&mut r, s, B, B); // to peer
    inject_frame(&mut r, s, A, B); // neither
    assert_eq!(counts(&mut r, 3), [1, 1, 1]);
    let f = r.find_element("f").unwrap();
    r.inject_packet(f, 0, bare());
    assert_eq!(counts(&mut r, 3), [1, 1, 2]);
    let prog = read(&mut r, "f.program");
    assert!(prog.contains("  12/0d010000%ffff0000"), "{prog}");
}

#[test]
fn ipfilter_element() {
    let mut r = from_config(
        "AddressInfo(gw 00:0a:0b:0c:0d:01);
         Idle -> s :: Strip(14) -> MarkIPHeader
           -> f :: IPFilter(drop ether host gw:eth and udp, allow src ether host gw, 1 not ether src gw);
         f[0] -> c0 :: Counter -> Discard;
         f[1] -> c1 :: Counter -> Discard;",
    );
    let s = r.find_element("s").unwrap();
    inject_frame(&mut r, s, B, A);
    inject_frame(&mut r, s, A, B);
    inject_frame(&mut r, s, B, B);
    assert_eq!(counts(&mut r, 2), [1, 2]);
}

#[test]
fn element_configuration_errors_name_the_token() {
    let e = config_errors(
        "InfiniteSource(ACTIVE false) -> f :: IPClassifier(ether src nosuchhost) -> Discard;",
    );
    assert!(e.contains("'nosuchhost'"), "{e}");
    let e = config_errors(
        "InfiniteSource(ACTIVE false) -> f :: IPFilter(allow ether dst 00:01:02:03:04) -> Discard;",
    );
    assert!(e.contains("'00:01:02:03:04'"), "{e}");
}
