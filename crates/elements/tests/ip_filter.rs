//! IPClassifier and IPFilter: every syntax element on crafted packets,
//! configuration errors, the elements in a router, a property test of the
//! compiled classifier against a direct interpreter of the parsed
//! expressions, and the ClassBench rule sets against a linear first-match
//! reference.

use std::path::PathBuf;

use proptest::prelude::*;
use rclick_core::Packet;
use rclick_elements::ip::ipfilter_compile::{
    parse_classifier, parse_filter, reference_classify_ether, tokenize, CompileOptions, Compiled,
    Rule, StaticNames, VectorForm,
};
use rclick_elements::testing::{
    classbench_pattern as cb_pattern, config_errors, from_config, ipfilter_compile_variants, read,
    ClassBenchRule as CbRule, Rng,
};

// ------------------------------------------------------------- packets

/// A crafted IPv4 packet: 20-byte header (or more with options) and a
/// transport header, optionally after an Ethernet header.
#[derive(Clone, Debug)]
struct Pkt {
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    sport: u16,
    dport: u16,
    tos: u8,
    ttl: u8,
    id: u16,
    frag: u16,
    flags: u8,
    win: u16,
    icmp_type: u8,
    opts: usize,
    /// Bytes of transport header kept (truncation).
    tlen: usize,
    /// Ethernet (destination, source) before the IP header, if any.
    ether: Option<([u8; 6], [u8; 6])>,
}

impl Default for Pkt {
    fn default() -> Self {
        Pkt {
            src: [1, 0, 0, 1],
            dst: [2, 0, 0, 2],
            proto: 6,
            sport: 1000,
            dport: 80,
            tos: 0,
            ttl: 64,
            id: 7,
            frag: 0,
            flags: 0,
            win: 1024,
            icmp_type: 8,
            opts: 0,
            tlen: 20,
            ether: None,
        }
    }
}

impl Pkt {
    fn bytes(&self) -> Vec<u8> {
        let hl = 20 + self.opts * 4;
        let mut v = vec![0u8; hl + 20];
        v[0] = 0x40 | (hl / 4) as u8;
        v[1] = self.tos;
        let total = (hl + self.tlen) as u16;
        v[2..4].copy_from_slice(&total.to_be_bytes());
        v[4..6].copy_from_slice(&self.id.to_be_bytes());
        v[6..8].copy_from_slice(&self.frag.to_be_bytes());
        v[8] = self.ttl;
        v[9] = self.proto;
        v[12..16].copy_from_slice(&self.src);
        v[16..20].copy_from_slice(&self.dst);
        for b in &mut v[20..hl] {
            *b = 1; // NOP options
        }
        let t = &mut v[hl..];
        if self.proto == 1 {
            t[0] = self.icmp_type;
        } else {
            t[0..2].copy_from_slice(&self.sport.to_be_bytes());
            t[2..4].copy_from_slice(&self.dport.to_be_bytes());
            t[12] = 0x50;
            t[13] = self.flags;
            t[14..16].copy_from_slice(&self.win.to_be_bytes());
        }
        v.truncate(hl + self.tlen);
        v
    }

    /// The 14-byte Ethernet header, or nothing.
    fn ether_bytes(&self) -> Vec<u8> {
        match self.ether {
            Some((dst, src)) => {
                let mut v = dst.to_vec();
                v.extend_from_slice(&src);
                v.extend_from_slice(&[0x08, 0x00]);
                v
            }
            None => Vec::new(),
        }
    }

    /// The packet as IPClassifier sees it: with an Ethernet header, the
    /// frame after Strip(14) (the header in the headroom).
    fn packet(&self) -> Packet {
        let mut frame = self.ether_bytes();
        let eth = frame.len();
        frame.extend_from_slice(&self.bytes());
        let mut p = Packet::from_slice(&frame);
        p.pull(eth);
        p.set_network_header(0, 20 + self.opts * 4);
        p
    }
}

fn compile(patterns: &[&str]) -> (Vec<Rule>, Compiled) {
    let pats: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
    let parsed = parse_classifier(&pats, &StaticNames).unwrap_or_else(|e| panic!("{e:?}"));
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    (parsed.rules, c)
}

/// Whether the single pattern matches the packet; checks the compiled
/// form, the bit-vector form and the reference agree.
fn m(pattern: &str, p: &Pkt) -> bool {
    let (rules, c) = compile(&[pattern]);
    let bytes = p.bytes();
    let eth = p.ether_bytes();
    let hl = 20 + p.opts * 4;
    let (ip, tp) = (&bytes[..], &bytes[hl.min(bytes.len())..]);
    let r = reference_classify_ether(&rules, &eth, ip, tp);
    assert_eq!(
        c.classify_ether(&eth, ip, tp),
        r,
        "compiled vs reference: {pattern}"
    );
    let bv = Compiled::new(
        &rules,
        CompileOptions {
            box_threshold: 1,
            optimize: true,
            ..CompileOptions::default()
        },
    );
    assert_eq!(
        bv.classify_ether(&eth, ip, tp),
        r,
        "bit vector vs reference: {pattern}"
    );
    assert_eq!(c.classify_packet(&p.packet()), r, "packet: {pattern}");
    r == Some(0)
}

fn err(pattern: &str) -> String {
    match parse_classifier(&[pattern.to_string()], &StaticNames) {
        Ok(_) => panic!("'{pattern}' should not parse"),
        Err(e) => e.join("\n"),
    }
}

fn d() -> Pkt {
    Pkt::default()
}

// ------------------------------------------------------ syntax elements

#[test]
fn tokenizer() {
    assert_eq!(
        tokenize("src host 1.0.0.1&&!(tcp[13:1]&2!=0)||a ? b : c"),
        [
            "src", "host", "1.0.0.1", "&&", "!", "(", "tcp", "[", "13:1", "]", "&", "2", "!=", "0",
            ")", "||", "a", "?", "b", ":", "c"
        ]
    );
}

#[test]
fn hosts_and_nets() {
    let p = d();
    assert!(m("src host 1.0.0.1", &p));
    assert!(!m("dst host 1.0.0.1", &p));
    assert!(m("host 1.0.0.1", &p));
    assert!(m("host 2.0.0.2", &p));
    assert!(m("src or dst host 2.0.0.2", &p));
    assert!(!m("src and dst host 2.0.0.2", &p));
    let same = Pkt {
        dst: [1, 0, 0, 1],
        ..d()
    };
    assert!(m("src and dst host 1.0.0.1", &same));
    assert!(m("1.0.0.1", &p));
    assert!(m("src 1.0.0.1", &p));
    assert!(m("src net 1.0.0.0/8", &p));
    assert!(!m("src net 1.0.0.0/16 and dst net 1.0.0.0/8", &p));
    assert!(!m("src net 1.0.0.0 mask 255.0.0.255", &p));
    assert!(m(
        "src net 1.0.0.1 mask 255.0.0.255",
        &Pkt {
            src: [1, 7, 7, 1],
            ..d()
        }
    ));
    assert!(!m("src net 1.0.0.0 mask 255.0.0.0 and src net 0.0.0.0 mask 0.0.0.255 and src net 0.0.0.2/0.0.0.255", &p));
    assert!(m("2.0.0.0/8", &p));
    assert!(m("dst 2.0.0.0/255.0.0.0", &p));
    assert!(m("src host != 9.9.9.9", &p));
    assert!(!m("src host != 1.0.0.1", &p));
    assert!(m(
        "src host & 0xff000000 1.0.0.1",
        &Pkt {
            src: [1, 9, 9, 9],
            ..d()
        }
    ));
    // Qualifier inheritance.
    assert!(m("src host 9.9.9.9 or 1.0.0.1", &p));
    assert!(!m("dst host 9.9.9.9 or 1.0.0.1", &p));
}

#[test]
fn protocols() {
    let p = d();
    assert!(m("tcp", &p));
    assert!(m("ip proto tcp", &p));
    assert!(m("ip proto 6", &p));
    assert!(m("proto 6", &p));
    assert!(!m("udp", &p));
    assert!(m("not udp", &p));
    assert!(m("proto 17 or 6", &p));
    assert!(m("ip proto != 17", &p));
    assert!(m("ip proto > 5 and ip proto < 7", &p));
    assert!(m("ip proto >= 6 && ip proto <= 6", &p));
    assert!(m("icmp", &Pkt { proto: 1, ..d() }));
    assert!(m("igmp", &Pkt { proto: 2, ..d() }));
    assert!(m("ip proto & 0xf0 == 0", &p));
}

#[test]
fn ports() {
    let p = d(); // tcp 1000 -> 80
    assert!(m("port 80", &p));
    assert!(m("port www", &p));
    assert!(m("www", &p));
    assert!(m("tcp port www", &p));
    assert!(!m("udp port www", &p));
    assert!(m("dst port 80", &p));
    assert!(!m("src port 80", &p));
    assert!(m("src port 1000", &p));
    assert!(m("dst tcp port 80", &p));
    assert!(m("dst port 22 or 80", &p));
    assert!(m("src port 999 or dst port 79 or 80", &p));
    assert!(m("port > 1023 or dst port < 100", &p));
    assert!(!m("port > 1023 or port < 100", &p));
    assert!(m("dst port >= 80 and dst port <= 80", &p));
    assert!(!m("dst port > 80", &p));
    assert!(m("src port > 999", &p));
    assert!(m("src port != 5", &p));
    assert!(!m("src port != 1000", &p));
    assert!(!m("port != 80", &p)); // neither src nor dst may be 80
    assert!(m("src and dst port < 1001", &p));
    assert!(m("dst port & 0xff00 == 0", &p));
    assert!(m("dst port ssh or dst port www", &p));
    let u = Pkt {
        proto: 17,
        dport: 53,
        ..d()
    };
    assert!(m("udp port 53", &u));
    assert!(m("port domain", &u));
    assert!(m("udp dst port dns", &u));
    assert!(!m("tcp port 53", &u));
    // `!=` only matches TCP/UDP; `not` matches everything else too.
    let icmp = Pkt { proto: 1, ..d() };
    assert!(!m("src port != 5", &icmp));
    assert!(m("not src port 5", &icmp));
    // Non-first fragments never match transport fields.
    let frag = Pkt { frag: 100, ..d() };
    assert!(!m("dst port 80", &frag));
    assert!(m("not dst port 80", &frag));
    let first = Pkt {
        frag: 0x2000,
        ..d()
    }; // MF set, offset 0
    assert!(m("dst port 80", &first));
    // IP options move the transport header.
    let opt = Pkt { opts: 2, ..d() };
    assert!(m("dst port 80 and src port 1000", &opt));
    // Truncated transport header: the port test fails.
    let short = Pkt { tlen: 3, ..d() };
    assert!(m("src port 1000", &short));
    assert!(!m("dst port 80", &short));
    assert!(m("not dst port 80", &short));
    assert!(m("tcp", &short));
}

#[test]
fn tcp_flags_and_window() {
    let syn = Pkt { flags: 0x02, ..d() };
    let synack = Pkt { flags: 0x12, ..d() };
    assert!(m("tcp opt syn", &syn));
    assert!(m("syn", &syn));
    assert!(!m("ack", &syn));
    assert!(m("syn and not ack", &syn));
    assert!(!m("syn and not ack", &synack));
    assert!(m("syn ack", &synack));
    assert!(m("fin or rst or psh or urg or ack", &synack));
    assert!(!m("fin or rst or psh or urg", &synack));
    assert!(m("tcp win 1024", &syn));
    assert!(m("tcp win > 1000", &syn));
    assert!(!m(
        "syn",
        &Pkt {
            flags: 0x02,
            proto: 17,
            ..d()
        }
    ));
    assert!(m("tcp[13] & 2 != 0", &syn));
    assert!(m("tcp[13:1] == 0x12", &synack));
    assert!(m("tcp[12:2] & 0x3f == 0x12", &synack));
    assert!(m("transp[2:2] == 80", &syn));
    assert!(m("udp[2:2] == 80", &Pkt { proto: 17, ..d() }));
    assert!(!m("udp[2:2] == 80", &syn));
}

#[test]
fn icmp_types() {
    let echo = Pkt {
        proto: 1,
        icmp_type: 8,
        ..d()
    };
    assert!(m("icmp type echo", &echo));
    assert!(m("icmp type 8", &echo));
    assert!(m("icmp echo", &echo));
    assert!(!m("icmp type echo-reply", &echo));
    assert!(m(
        "icmp type echo-reply",
        &Pkt {
            icmp_type: 0,
            ..echo.clone()
        }
    ));
    assert!(m("icmp type 3 or 8", &echo));
    assert!(m("icmp type != 0", &echo));
    assert!(!m("icmp type != 0", &d()));
    assert!(m("icmp type > 5", &echo));
    assert!(m(
        "icmp type timeexceeded",
        &Pkt {
            icmp_type: 11,
            ..echo.clone()
        }
    ));
    assert!(m("icmp[0] == 8", &echo));
}

#[test]
fn ip_fields() {
    let p = Pkt {
        tos: 0xb9,
        ttl: 3,
        id: 0x1234,
        ..d()
    };
    assert!(m("ip vers 4", &p));
    assert!(!m("ip vers 6", &p));
    assert!(m("ip hl 5", &p));
    assert!(m("ip hl 7", &Pkt { opts: 2, ..d() }));
    assert!(m("ip id 0x1234", &p));
    assert!(m("ip tos 0xb9", &p));
    assert!(m("ip dscp 46", &p));
    assert!(m("ip ect", &p));
    assert!(!m("ip ce", &p));
    assert!(m("ip ce", &Pkt { tos: 3, ..d() }));
    assert!(!m("ip ect", &Pkt { tos: 0xb8, ..d() }));
    assert!(m("ip ect 1", &p));
    assert!(m("ip ttl 3", &p));
    assert!(m("ip ttl < 4", &p));
    assert!(m("ttl 2 or 3", &p));
    assert!(m("ip len 40", &p));
    assert!(m("ip len > 39 and ip len < 41", &p));
    assert!(m("ip[8] == 3", &p));
    assert!(m("ip[9:1] = 6", &p));
    assert!(m("ip[12:4] == 0x01000001", &p));
    assert!(m("ip[4:2] == 0x1234", &p));
    assert!(m("ip[1] & 0xf0 == 0xb0", &p));
    assert!(m("ip[1] & 0xf0 > 0xa0", &p));
    // Fragments.
    assert!(m("ip unfrag", &p));
    assert!(m("unfrag", &p));
    assert!(!m("ip frag", &p));
    assert!(m(
        "ip frag",
        &Pkt {
            frag: 0x2000,
            ..d()
        }
    ));
    assert!(m("frag", &Pkt { frag: 5, ..d() }));
    assert!(!m(
        "ip frag",
        &Pkt {
            frag: 0x4000,
            ..d()
        }
    )); // DF only
}

#[test]
fn connectives() {
    let p = d();
    assert!(m("true", &p));
    assert!(!m("false", &p));
    assert!(m("-", &p));
    assert!(m("any", &p));
    assert!(m("all", &p));
    assert!(m("tcp and src host 1.0.0.1", &p));
    assert!(m("tcp && src host 1.0.0.1", &p));
    assert!(m("tcp src host 1.0.0.1", &p));
    assert!(m("udp or tcp", &p));
    assert!(m("udp || tcp", &p));
    assert!(!m("not tcp", &p));
    assert!(!m("! tcp", &p));
    assert!(m("!udp", &p));
    assert!(m("!(udp or icmp)", &p));
    assert!(m("(udp or tcp) and (dst port 80)", &p));
    assert!(m("not not tcp", &p));
    assert!(m("tcp ? dst port 80 : udp", &p));
    assert!(!m("udp ? true : dst port 81", &p));
    assert!(m("udp ? false : tcp ? dst port 80 : false", &p));
    assert!(m("true and not false", &p));
    assert!(m("(ip src 1.0.0.1 and dst tcp port www)", &p));
    // Precedence: and binds tighter than or.
    assert!(m("udp and false or tcp", &p));
    assert!(!m("udp and (false or tcp)", &p));
}

#[test]
fn errors_name_the_bad_token() {
    assert!(err("foo").contains("'foo'"), "{}", err("foo"));
    assert!(err("tcp and").contains("missing term"));
    assert!(err("(tcp").contains("missing ')'"));
    assert!(err("tcp )").contains("garbage after expression at ')'"));
    assert!(err("echo").contains("ambiguous"));
    assert!(err("host 10.0.0.0/8").contains("IP address missing"));
    assert!(err("net 10").contains("IP prefix missing"));
    assert!(err("port 70000").contains("out of range"));
    assert!(err("ip ttl 300").contains("out of range"));
    assert!(err("icmp port 5").contains("bad protocol"));
    assert!(err("host > 1.0.0.1").contains("relational"));
    assert!(err("tcp opt != syn").contains("tcp opt"));
    assert!(err("ip[3:2] == 1").contains("does not fit"));
    assert!(err("ip[0:5] == 1").contains("LEN"));
    assert!(err("ip[x] == 1").contains("'x'"));
    assert!(err("ip").contains("partial"));
    assert!(err("5").contains("specify header field"));
    assert!(err("tcp ? udp").contains("':' missing"));
    assert!(err("ttl > foo").contains("'foo'"));
    assert!(err("port & 0x1ffff == 1").contains("mask"));
    assert!(err("ip[1] & 0 == 0").contains("bitmask of 0"));
    assert!(err("src src host 1.0.0.1").contains("twice"));
    assert!(err("ip ce 3").contains("no data"));
    // IPFilter actions.
    let e = parse_filter(&["5 tcp".into()], 2, &StaticNames).unwrap_err();
    assert!(e[0].contains("slot '5' out of range"), "{e:?}");
    let e = parse_filter(&["forward tcp".into()], 2, &StaticNames).unwrap_err();
    assert!(e[0].contains("unknown slot ID 'forward'"), "{e:?}");
    let e = parse_filter(&["allow tcp".into()], 0, &StaticNames).unwrap_err();
    assert!(e[0].contains("zero outputs"), "{e:?}");
    let w = parse_filter(&["deny tcp".into()], 2, &StaticNames).unwrap();
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
}

#[test]
fn first_match_and_drop_actions() {
    let pats: Vec<String> = [
        "drop src net 1.0.0.0/8 and udp",
        "1 dst port 80",
        "allow tcp",
        "deny all",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let parsed = parse_filter(&pats, 2, &StaticNames).unwrap();
    for opts in ipfilter_compile_variants() {
        let c = Compiled::new(&parsed.rules, opts);
        let k = |p: &Pkt| c.classify_packet(&p.packet());
        assert_eq!(k(&Pkt { proto: 17, ..d() }), None);
        assert_eq!(k(&d()), Some(1));
        assert_eq!(k(&Pkt { dport: 81, ..d() }), Some(0));
        assert_eq!(k(&Pkt { proto: 1, ..d() }), None);
        assert_eq!(
            k(&Pkt {
                proto: 17,
                src: [3, 0, 0, 0],
                ..d()
            }),
            Some(1)
        );
    }
}

// --------------------------------------------------------- in a router

fn counts(r: &mut rclick_core::Router, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| read(r, &format!("c{i}.count")).trim().parse().unwrap())
        .collect()
}

#[test]
fn ipclassifier_element() {
    let mut r = from_config(
        "src :: InfiniteSource(ACTIVE false);
         f :: IPClassifier(dst tcp port www or dst tcp port ssh, icmp type echo, -);
         src -> f;
         f[0] -> c0 :: Counter -> Discard;
         f[1] -> c1 :: Counter -> Discard;
         f[2] -> c2 :: Counter -> Discard;",
    );
    let mut batch = rclick_core::Batch::new();
    batch.push(d().packet());
    batch.push(Pkt { dport: 22, ..d() }.packet());
    batch.push(Pkt { proto: 1, ..d() }.packet());
    batch.push(Pkt { proto: 17, ..d() }.packet());
    batch.push(Pkt { dport: 23, ..d() }.packet());
    let f = r.find_element("f").unwrap();
    r.inject(f, 0, batch);
    r.inject_packet(f, 0, d().packet());
    assert_eq!(counts(&mut r, 3), [3, 1, 2]);
    let prog = read(&mut r, "f.program");
    assert!(prog.contains("yes->[0]"), "{prog}");
    // Click's coordinates: the IP header at 256 (protocol word at 264).
    assert!(prog.contains(" 264/00060000%00ff0000"), "{prog}");
}

#[test]
fn ipfilter_element() {
    let mut r = from_config(
        "src :: InfiniteSource(ACTIVE false);
         AddressInfo(inside 10.0.0.0/8);
         PortInfo(myport 4000);
         f :: IPFilter(drop src inside, allow dst port myport, 1 icmp, deny all);
         src -> f;
         f[0] -> c0 :: Counter -> Discard;
         f[1] -> c1 :: Counter -> Discard;",
    );
    let f = r.find_element("f").unwrap();
    r.inject_packet(
        f,
        0,
        Pkt {
            src: [10, 1, 1, 1],
            dport: 4000,
            ..d()
        }
        .packet(),
    );
    r.inject_packet(f, 0, Pkt { dport: 4000, ..d() }.packet());
    r.inject_packet(f, 0, Pkt { proto: 1, ..d() }.packet());
    r.inject_packet(f, 0, d().packet());
    assert_eq!(counts(&mut r, 2), [1, 1]);
}

#[test]
fn element_configuration_errors() {
    let e =
        config_errors("InfiniteSource(ACTIVE false) -> f :: IPClassifier(tcp, udp) -> Discard;");
    assert!(e.contains("need 1 arguments"), "{e}");
    let e = config_errors(
        "InfiniteSource(ACTIVE false) -> f :: IPClassifier(tcp port bogus) -> Discard;",
    );
    assert!(e.contains("'bogus'"), "{e}");
}

#[test]
fn no_network_header_matches_only_constant_tests() {
    let (_, c) = compile(&["tcp", "not udp"]);
    let p = Packet::from_slice(&d().bytes());
    assert_eq!(c.classify_packet(&p), Some(1));
}

#[test]
fn program_handler_shares_tests() {
    let (_, c) = compile(&["src host 1.0.0.1 and tcp", "src host 1.0.0.1 and udp", "-"]);
    let text = c.unparse();
    // The source test is made once: the second pattern's copy is skipped
    // on the path where it is already known.
    assert_eq!(text.matches(" 268/").count(), 1, "{text}");
    let (_, c) = compile(&["-"]);
    assert!(c.unparse().starts_with("all->[0]"));
}

// ---------------------------------------------- property: compiled == ref

fn arb_primitive() -> impl Strategy<Value = String> {
    let addr = prop::sample::select(vec!["1.0.0.1", "2.0.0.2", "1.0.0.2", "10.0.0.1"]);
    let net = prop::sample::select(vec![
        "1.0.0.0/8",
        "2.0.0.0/24",
        "0.0.0.0/0",
        "1.0.0.0/31",
        "1.0.0.0 mask 255.0.0.255",
    ]);
    let sd = prop::sample::select(vec!["", "src ", "dst ", "src or dst ", "src and dst "]);
    let rel = prop::sample::select(vec!["", "== ", "!= ", "< ", "> ", "<= ", ">= "]);
    let tu = prop::sample::select(vec!["", "tcp ", "udp "]);
    let port = prop::sample::select(vec!["0", "1", "53", "80", "1000", "1023", "65535", "www"]);
    let eth = prop::sample::select(vec![
        "00:00:00:00:00:01",
        "00-00-00-00-00-02",
        "00:00:00:01:00:01",
        "02:00:00:00:00:01",
        "ff:ff:ff:ff:ff:ff",
    ]);
    let eth_form = prop::sample::select(vec![
        "ether host",
        "ether src",
        "ether dst",
        "ether src host",
        "ether dst host",
        "src ether host",
        "dst ether host",
        "src and dst ether host",
        "src or dst ether host",
        "ether host !=",
        "or",
    ]);
    prop_oneof![
        (eth_form, eth).prop_map(|(f, a)| format!("{f} {a}")),
        (sd.clone(), addr).prop_map(|(s, a)| format!("{s}host {a}")),
        (sd.clone(), net).prop_map(|(s, a)| format!("{s}net {a}")),
        (sd.clone(), tu, rel.clone(), port).prop_map(|(s, t, r, p)| {
            let r = if p == "www" { "" } else { r };
            format!("{s}{t}port {r}{p}")
        }),
        prop::sample::select(vec![
            "tcp",
            "udp",
            "icmp",
            "ip proto 2",
            "ip frag",
            "ip unfrag",
            "syn",
            "ack",
            "fin",
            "tcp opt rst",
            "icmp type echo",
            "icmp type 0",
            "ip ect",
            "ip ce",
            "true",
            "false",
            "ip[9] == 17",
            "transp[0:2] > 100",
            "tcp[13] & 0x12 == 0x12",
            "ip ttl > 10",
            "ip tos & 0xfc == 0",
            "ip id 7",
            "tcp win < 2000",
            "ip hl 5",
            "ip len > 30",
            "or 81",
            "dscp 2",
        ])
        .prop_map(|s| s.to_string()),
        (
            prop::sample::select(vec!["ip ttl", "ip proto", "icmp type", "ip dscp"]),
            rel,
            0u32..70
        )
            .prop_map(|(f, r, v)| format!("{f} {r}{v}")),
    ]
}

fn arb_expr() -> impl Strategy<Value = String> {
    arb_primitive().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} and {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} {b}")),
            inner.clone().prop_map(|a| format!("not ({a})")),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| format!("({a}) ? ({b}) : ({c})")),
        ]
    })
}

/// Ethernet addresses of random packets: the generator's addresses and
/// near misses in each half of the address.
const ETHERS: [[u8; 6]; 6] = [
    [0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 2],
    [0, 0, 0, 1, 0, 1],
    [2, 0, 0, 0, 0, 1],
    [0xff; 6],
    [0, 0, 0, 0, 1, 1],
];

fn arb_packet() -> impl Strategy<Value = Pkt> {
    (
        (
            prop::sample::select(vec![
                [1u8, 0, 0, 1],
                [2, 0, 0, 2],
                [1, 0, 0, 2],
                [10, 0, 0, 1],
                [1, 9, 0, 0],
            ]),
            prop::sample::select(vec![
                [1u8, 0, 0, 1],
                [2, 0, 0, 2],
                [2, 0, 0, 9],
                [1, 0, 0, 0],
            ]),
            prop::sample::select(vec![1u8, 2, 6, 6, 17, 17, 47]),
            prop::sample::select(vec![0u16, 1, 53, 80, 81, 1000, 1023, 1024, 65535]),
            prop::sample::select(vec![0u16, 1, 53, 80, 81, 1000, 1023, 1024, 65535]),
        ),
        (
            any::<u8>(),
            0u8..20,
            prop::sample::select(vec![0u16, 0x2000, 0x4000, 5, 0x2005]),
            any::<u8>(),
            prop::sample::select(vec![0u8, 3, 8, 11]),
            0usize..3,
            prop::sample::select(vec![0usize, 1, 2, 3, 4, 13, 14, 20]),
        ),
        prop::option::weighted(
            0.8,
            (
                prop::sample::select(ETHERS.to_vec()),
                prop::sample::select(ETHERS.to_vec()),
            ),
        ),
    )
        .prop_map(
            |(
                (src, dst, proto, sport, dport),
                (tos, ttl, frag, flags, icmp_type, opts, tlen),
                ether,
            )| {
                Pkt {
                    src,
                    dst,
                    proto,
                    sport,
                    dport,
                    tos,
                    ttl,
                    frag,
                    flags,
                    icmp_type,
                    opts,
                    tlen,
                    win: sport ^ dport,
                    id: 7,
                    ether,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn compiled_matches_reference(
        pats in prop::collection::vec(arb_expr(), 1..6),
        pkts in prop::collection::vec(arb_packet(), 20),
    ) {
        let parsed = match parse_classifier(&pats, &StaticNames) {
            Ok(p) => p,
            // Random text may be ill-typed ("or 81" first); skip those.
            Err(_) => return Ok(()),
        };
        let variants = [
            CompileOptions::default(),
            CompileOptions { box_threshold: 1, optimize: true, ..CompileOptions::default() },
            CompileOptions { box_threshold: usize::MAX, optimize: true, ..CompileOptions::default() },
            CompileOptions { box_threshold: usize::MAX, optimize: false, ..CompileOptions::default() },
            // Bit-vector runs split into segments of a rule or a few.
            CompileOptions { box_threshold: 1, box_words_per_rule: 1, box_words_floor: 0, ..CompileOptions::default() },
            CompileOptions { box_threshold: 1, box_words_per_rule: 4, box_words_floor: 8, ..CompileOptions::default() },
            // Both vector forms.
            CompileOptions { box_threshold: 1, box_vectors: VectorForm::Dense, ..CompileOptions::default() },
            CompileOptions { box_threshold: 1, box_vectors: VectorForm::Compressed, ..CompileOptions::default() },
        ];
        let compiled: Vec<Compiled> = variants.iter().map(|o| Compiled::new(&parsed.rules, *o)).collect();
        for p in &pkts {
            let bytes = p.bytes();
            let eth = p.ether_bytes();
            let hl = (20 + p.opts * 4).min(bytes.len());
            let (ip, tp) = (&bytes[..], &bytes[hl..]);
            let want = reference_classify_ether(&parsed.rules, &eth, ip, tp);
            for (c, o) in compiled.iter().zip(&variants) {
                prop_assert_eq!(c.classify_ether(&eth, ip, tp), want, "{:?} {:?}\n{}", pats, o, c.unparse());
            }
            // The packet path reads the Ethernet header from the headroom.
            prop_assert_eq!(compiled[0].classify_packet(&p.packet()), want, "{:?} packet", pats);
            // Truncated IP headers too.
            for cut in [0usize, 3, 9, 13, 19] {
                let ip = &bytes[..cut.min(bytes.len())];
                let want = reference_classify_ether(&parsed.rules, &eth, ip, &[]);
                for c in &compiled {
                    prop_assert_eq!(c.classify_ether(&eth, ip, &[]), want, "{:?} cut {}", pats, cut);
                }
            }
        }
    }
}

// ------------------------------------------------------------ ClassBench

fn load(name: &str) -> Option<Vec<CbRule>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/classbench");
    let path = dir.join(name);
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("SKIP: ClassBench {name}: {} not found", path.display());
        return None;
    };
    let rules = rclick_elements::testing::parse_classbench(&text)
        .unwrap_or_else(|| panic!("{}: malformed ClassBench rule", path.display()));
    Some(rules)
}

/// Linear first-match over the ClassBench rules. A port range other than
/// 0:65535 requires an unfragmented-offset TCP or UDP packet, as `port`
/// does in IPFilter.
fn cb_reference(rules: &[CbRule], p: &Pkt) -> Option<usize> {
    let src = u32::from_be_bytes(p.src);
    let dst = u32::from_be_bytes(p.dst);
    let l4 = (p.proto == 6 || p.proto == 17) && p.frag & 0x1FFF == 0 && p.tlen >= 4;
    rules.iter().position(|r| {
        let port_ok =
            |(lo, hi): (u16, u16), v: u16| (lo, hi) == (0, 65535) || (l4 && lo <= v && v <= hi);
        src & r.src.1 == r.src.0
            && dst & r.dst.1 == r.dst.0
            && p.proto & r.proto.1 == r.proto.0 & r.proto.1
            && port_ok(r.sport, p.sport)
            && port_ok(r.dport, p.dport)
    })
}

/// Packets derived from the rules: each rule's corner points and random
/// points inside it, plus a few random packets.
fn cb_packets(rules: &[CbRule], n: usize, rng: &mut Rng) -> Vec<Pkt> {
    let mut out = Vec::with_capacity(n);
    let protos = [1u8, 6, 17, 47, 6, 17];
    while out.len() < n {
        let r = &rules[rng.below(rules.len() as u64) as usize];
        let corner = rng.below(3);
        let pick = |net: (u32, u32), rng: &mut Rng| match corner {
            0 => net.0,
            1 => net.0 | !net.1,
            _ => net.0 | (rng.next_u64() as u32 & !net.1),
        };
        let port = |(lo, hi): (u16, u16), rng: &mut Rng| match rng.below(4) {
            0 => lo,
            1 => hi,
            2 => lo.wrapping_sub(1),
            _ => lo + (rng.below(hi as u64 - lo as u64 + 1) as u16),
        };
        let proto = if r.proto.1 == 0xFF && rng.below(8) != 0 {
            r.proto.0
        } else {
            protos[rng.below(protos.len() as u64) as usize]
        };
        let mut p = Pkt {
            src: pick(r.src, rng).to_be_bytes(),
            dst: pick(r.dst, rng).to_be_bytes(),
            proto,
            sport: port(r.sport, rng),
            dport: port(r.dport, rng),
            frag: if rng.below(20) == 0 { 8 } else { 0 },
            ..Pkt::default()
        };
        if rng.below(10) == 0 {
            p.src = (rng.next_u64() as u32).to_be_bytes();
            p.dst = (rng.next_u64() as u32).to_be_bytes();
        }
        out.push(p);
    }
    out
}

fn check_classbench(name: &str, npackets: usize, linear_too: bool) {
    let Some(rules) = load(name) else {
        return;
    };
    let args: Vec<String> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{i} {}", cb_pattern(r)))
        .collect();
    let parsed = parse_filter(&args, rules.len(), &StaticNames).unwrap_or_else(|e| panic!("{e:?}"));
    let c = Compiled::new(&parsed.rules, CompileOptions::default());
    assert!(
        c.segment_kinds().contains(&"bitvector"),
        "{name}: {:?}",
        c.segment_kinds()
    );
    let linear = linear_too.then(|| {
        Compiled::new(
            &parsed.rules,
            CompileOptions {
                box_threshold: usize::MAX,
                optimize: true,
                ..CompileOptions::default()
            },
        )
    });
    // Bit vectors on a small budget: the run splits into many segments
    // searched in order (the structure very large filters get).
    let split = Compiled::new(
        &parsed.rules,
        CompileOptions {
            box_words_per_rule: 2,
            box_words_floor: 64,
            box_vectors: VectorForm::Compressed,
            ..CompileOptions::default()
        },
    );
    // Both vector forms, unsplit.
    let forms = [VectorForm::Dense, VectorForm::Compressed].map(|f| {
        Compiled::new(
            &parsed.rules,
            CompileOptions {
                box_vectors: f,
                box_words_per_rule: usize::MAX / 4,
                ..CompileOptions::default()
            },
        )
    });
    let nsplit = split.segment_kinds().len();
    assert!(nsplit >= 4, "{name}: split into {nsplit} segments only");
    assert!(
        split.heap_bytes() < c.heap_bytes().max(1 << 20),
        "{name}: split {} bytes, unsplit {}",
        split.heap_bytes(),
        c.heap_bytes()
    );
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ rules.len() as u64);
    let pkts = cb_packets(&rules, npackets, &mut rng);
    let mut matched = 0;
    for p in &pkts {
        let want = cb_reference(&rules, p);
        matched += want.is_some() as usize;
        let got = c.classify_packet(&p.packet());
        assert_eq!(got, want, "{name}: {p:?}");
        assert_eq!(
            split.classify_packet(&p.packet()),
            want,
            "{name} split: {p:?}"
        );
        for (f, c) in forms.iter().enumerate() {
            assert_eq!(
                c.classify_packet(&p.packet()),
                want,
                "{name} form {f}: {p:?}"
            );
        }
        if let Some(l) = &linear {
            let bytes = p.bytes();
            assert_eq!(
                l.classify(&bytes, &bytes[20..]),
                want,
                "{name} linear: {p:?}"
            );
        }
    }
    println!(
        "{name}: {} rules, {} packets, {matched} matched; {} segments, {} bytes ({} segments, {} bytes split)",
        rules.len(),
        pkts.len(),
        c.segment_kinds().len(),
        c.heap_bytes(),
        nsplit,
        split.heap_bytes()
    );
    assert!(matched > npackets / 2, "{name}: too few packets matched");
}

fn release() -> bool {
    !cfg!(debug_assertions)
}

#[test]
fn classbench_acl1_1k() {
    check_classbench("acl1_1k", if release() { 20_000 } else { 3_000 }, true);
}

#[test]
fn classbench_fw1_1k() {
    check_classbench("fw1_1k", if release() { 20_000 } else { 3_000 }, true);
}

#[test]
fn classbench_ipc1_1k() {
    check_classbench("ipc1_1k", if release() { 20_000 } else { 3_000 }, true);
}

#[test]
fn classbench_acl1_10k() {
    check_classbench("acl1_10k", if release() { 10_000 } else { 1_000 }, false);
}

#[test]
fn classbench_fw1_10k() {
    check_classbench("fw1_10k", if release() { 10_000 } else { 1_000 }, false);
}

#[test]
fn classbench_ipc1_10k() {
    check_classbench("ipc1_10k", if release() { 10_000 } else { 1_000 }, false);
}

/// The other seeds (acl2-5, fw2-5, ipc2), 1k and 10k rules.
#[test]
fn classbench_other_seeds() {
    for seed in [
        "acl2", "acl3", "acl4", "acl5", "fw2", "fw3", "fw4", "fw5", "ipc2",
    ] {
        check_classbench(
            &format!("{seed}_1k"),
            if release() { 5_000 } else { 500 },
            release(),
        );
        check_classbench(
            &format!("{seed}_10k"),
            if release() { 3_000 } else { 300 },
            false,
        );
    }
}

/// The element itself on a ClassBench set, with four outputs and drops.
#[test]
fn classbench_through_ipfilter_element() {
    let Some(rules) = load("acl1_1k") else {
        return;
    };
    let args: Vec<String> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let action = if i % 5 == 4 {
                "drop".to_string()
            } else {
                (i % 4).to_string()
            };
            format!("{action} {}", cb_pattern(r))
        })
        .collect();
    let conf = format!(
        "src :: InfiniteSource(ACTIVE false);
         f :: IPFilter({});
         src -> f;
         f[0] -> c0 :: Counter -> Discard; f[1] -> c1 :: Counter -> Discard;
         f[2] -> c2 :: Counter -> Discard; f[3] -> c3 :: Counter -> Discard;",
        args.join(",\n")
    );
    let mut r = from_config(&conf);
    let f = r.find_element("f").unwrap();
    let mut rng = Rng(42);
    let pkts = cb_packets(&rules, 2000, &mut rng);
    let mut want = [0u64; 4];
    for chunk in pkts.chunks(32) {
        let mut b = rclick_core::Batch::new();
        for p in chunk {
            if let Some(i) = cb_reference(&rules, p) {
                if i % 5 != 4 {
                    want[i % 4] += 1;
                }
            }
            b.push(p.packet());
        }
        r.inject(f, 0, b);
    }
    assert_eq!(counts(&mut r, 4), want);
}

/// Random ACL-style rule lists long enough for bit vectors of several
/// summary words (up to 600 rules, 10 words), over small value domains so
/// that rules overlap: every structure (one bit-vector segment in either
/// vector form, runs split on tiny budgets into many segments, decision
/// programs alone) decides as the linear first-match reference does.
#[test]
fn random_rule_lists_every_structure_agrees() {
    let mut rng = Rng(0xC0FF_EE12_3456_789B);
    let cases = if release() { 40 } else { 8 };
    let mut split_cases = 0;
    for case in 0..cases {
        let n = 20 + rng.below(580) as usize;
        let mut args = Vec::with_capacity(n);
        for i in 0..n {
            let mut parts = Vec::new();
            if rng.below(3) != 0 {
                let len = [8, 16, 24, 30, 32][rng.below(5) as usize];
                parts.push(format!(
                    "src net 10.{}.0.{}/{len}",
                    rng.below(4),
                    rng.below(8)
                ));
            }
            if rng.below(2) == 0 {
                parts.push(format!("dst host 20.0.0.{}", rng.below(16)));
            }
            match rng.below(4) {
                0 => parts.push(format!("dst port {}", rng.below(40))),
                1 => {
                    let lo = rng.below(40);
                    parts.push(format!(
                        "src port >= {lo} && src port <= {}",
                        lo + rng.below(20)
                    ));
                }
                2 => parts.push(["tcp", "udp", "icmp"][rng.below(3) as usize].to_string()),
                _ => {}
            }
            if parts.is_empty() || rng.below(50) == 0 {
                parts.push(format!("ip ttl {}", 60 + rng.below(8)));
            }
            let action = match i % 4 {
                3 => "drop".to_string(),
                k => k.to_string(),
            };
            args.push(format!("{action} {}", parts.join(" && ")));
        }
        let parsed = parse_filter(&args, 3, &StaticNames).unwrap_or_else(|e| panic!("{e:?}"));
        let variants = [
            CompileOptions::default(),
            CompileOptions {
                box_vectors: VectorForm::Dense,
                ..CompileOptions::default()
            },
            CompileOptions {
                box_vectors: VectorForm::Compressed,
                ..CompileOptions::default()
            },
            CompileOptions {
                box_words_per_rule: 1,
                box_words_floor: 16,
                box_vectors: VectorForm::Compressed,
                ..CompileOptions::default()
            },
            CompileOptions {
                box_words_per_rule: 2,
                box_words_floor: 0,
                box_vectors: VectorForm::Dense,
                ..CompileOptions::default()
            },
            CompileOptions {
                box_threshold: usize::MAX,
                ..CompileOptions::default()
            },
        ];
        let compiled: Vec<Compiled> = variants
            .iter()
            .map(|o| Compiled::new(&parsed.rules, *o))
            .collect();
        // A short list may fit the tiny budget whole; most must split, or
        // the split structure goes untested.
        if compiled[3].segment_kinds().len() > 1 {
            split_cases += 1;
        }
        for _ in 0..300 {
            let p = Pkt {
                src: [
                    10,
                    rng.below(4) as u8,
                    rng.below(2) as u8,
                    rng.below(10) as u8,
                ],
                dst: [20, 0, 0, rng.below(18) as u8],
                proto: [6u8, 17, 1, 47][rng.below(4) as usize],
                sport: rng.below(64) as u16,
                dport: rng.below(44) as u16,
                ttl: 58 + rng.below(12) as u8,
                frag: if rng.below(10) == 0 { 8 } else { 0 },
                ..Pkt::default()
            };
            let bytes = p.bytes();
            let want = reference_classify_ether(&parsed.rules, &[], &bytes, &bytes[20..]);
            for (c, o) in compiled.iter().zip(&variants) {
                assert_eq!(
                    c.classify(&bytes, &bytes[20..]),
                    want,
                    "case {case} ({n} rules), {o:?}: {p:?}"
                );
            }
        }
    }
    assert!(
        split_cases * 2 > cases,
        "only {split_cases} of {cases} rule lists split on the tiny budget"
    );
}
