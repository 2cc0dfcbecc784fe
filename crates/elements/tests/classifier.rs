//! Classifier: pattern syntax, first-match semantics, short packets, the
//! `program` handler, and a property test of the compiled program against a
//! naive matcher.

use proptest::prelude::*;
use rclick_core::{Packet, StopReason};
use rclick_elements::standard::classifier_program::Program;
use rclick_elements::testing::{build, spec, try_build};

fn ether(ethertype: u16, extra: &[(usize, u8)]) -> Vec<u8> {
    let mut p = vec![0u8; 60];
    p[12..14].copy_from_slice(&ethertype.to_be_bytes());
    for &(o, v) in extra {
        p[o] = v;
    }
    p
}

/// Classifier with four outputs, each into a Counter then Discard.
fn four_way(patterns: &str) -> rclick_core::Router {
    build(spec(
        &[
            ("c", "Classifier", patterns),
            ("a", "Counter", ""),
            ("b", "Counter", ""),
            ("i", "Counter", ""),
            ("o", "Counter", ""),
            ("d", "Discard", ""),
            ("idle", "InfiniteSource", "ACTIVE false"),
        ],
        &[
            (6, 0, 0, 0),
            (0, 0, 1, 0),
            (0, 1, 2, 0),
            (0, 2, 3, 0),
            (0, 3, 4, 0),
            (1, 0, 5, 0),
            (2, 0, 5, 0),
            (3, 0, 5, 0),
            (4, 0, 5, 0),
        ],
    ))
}

fn counts(r: &mut rclick_core::Router) -> Vec<String> {
    ["a", "b", "i", "o"]
        .iter()
        .map(|n| r.read_handler(&format!("{n}.count"), None).unwrap())
        .collect()
}

#[test]
fn arp_ip_other() {
    let mut r = four_way("12/0806 20/0001, 12/0806 20/0002, 12/0800, -");
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x0806, &[(21, 1)])));
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x0806, &[(21, 2)])));
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x0806, &[(21, 2)])));
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x0800, &[])));
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x0806, &[(21, 3)])));
    r.inject_packet(0, 0, Packet::from_slice(&ether(0x86dd, &[])));
    assert_eq!(counts(&mut r), ["1", "2", "1", "2"]);
    assert_eq!(
        r.read_handler("c.program", None).unwrap(),
        " 0  12/08060000%ffff0000  yes->step 1  no->step 3\n \
         1  20/00010000%ffff0000  yes->[0]  no->step 2\n \
         2  20/00020000%ffff0000  yes->[1]  no->[3]\n \
         3  12/08000000%ffff0000  yes->[2]  no->[3]\n\
         safe length 22\nalignment offset 0\n"
    );
}

#[test]
fn unmatched_packets_are_dropped_and_batches_split() {
    let mut r = four_way("0/01, 0/02, 0/03, 0/04");
    let mut batch = rclick_core::Batch::new();
    for b in [1u8, 2, 5, 3, 4, 4, 1, 9] {
        batch.push(Packet::from_slice(&[b, 0, 0, 0]));
    }
    r.inject(0, 0, batch);
    assert_eq!(counts(&mut r), ["2", "1", "1", "2"]);
    assert_eq!(r.read_handler("d.count", None).unwrap(), "6");
}

#[test]
fn masks_wildcards_and_negation() {
    let p = |pats: &[&str]| {
        Program::compile(&pats.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    };
    let m = p(&["0/0?%f0", "1/a5%0f", "!2/ff", "-"]);
    assert_eq!(m.classify(&[0x07, 0, 0xff]), Some(0));
    assert_eq!(m.classify(&[0x17, 0x35, 0xff]), Some(1));
    assert_eq!(m.classify(&[0x17, 0x36, 0xfe]), Some(2));
    assert_eq!(m.classify(&[0x17, 0x36, 0xff]), Some(3));
    // Multi-word values crossing a word boundary.
    let m = p(&["2/0102030405"]);
    assert_eq!(m.classify(&[9, 9, 1, 2, 3, 4, 5]), Some(0));
    assert_eq!(m.classify(&[9, 9, 1, 2, 3, 4, 6]), None);
    // Uppercase hex and spaces after '!'.
    let m = p(&["! 0/AB"]);
    assert_eq!(m.classify(&[0xab]), None);
    assert_eq!(m.classify(&[0xac]), Some(0));
}

#[test]
fn short_packets_fail_clauses() {
    let p = |pats: &[&str]| {
        Program::compile(&pats.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    };
    let m = p(&["12/0800", "!12/0800", "-"]);
    // Too short: the clause fails, so the negated clause matches.
    assert_eq!(m.classify(&[0u8; 13]), Some(1));
    assert_eq!(m.classify(&ether(0x0800, &[])[..14]), Some(0));
    // A masked-out trailing byte need not be present.
    let m = p(&["12/08??"]);
    assert_eq!(m.classify(&ether(0x0800, &[])[..13]), Some(0));
    assert_eq!(m.classify(&ether(0x0800, &[])[..12]), None);
    // An all-wildcard clause matches even an empty packet.
    let m = p(&["40/????"]);
    assert_eq!(m.classify(&[]), Some(0));
}

#[test]
fn configuration_errors() {
    let one = |pat: &str| {
        try_build(spec(
            &[
                ("c", "Classifier", pat),
                ("d", "Discard", ""),
                ("idle", "InfiniteSource", "ACTIVE false"),
            ],
            &[(2, 0, 0, 0), (0, 0, 1, 0)],
        ))
        .err()
        .unwrap_or_default()
        .join("\n")
    };
    assert!(
        one("x/08").contains("pattern 0: expected a digit"),
        "{}",
        one("x/08")
    );
    assert!(one("12").contains("pattern 0: expected '/'"));
    assert!(one("12/0").contains("pattern 0: value has less than 2 hex digits"));
    assert!(one("12/080").contains("pattern 0: value has odd number of hex digits"));
    assert!(one("12/0800%ff").contains("pattern 0: mask has too few hex digits"));
    assert!(one("12/08%ffff").contains("pattern 0: mask has too many hex digits"));
    assert!(one("12/08, -").contains("need 1 arguments, one per output port"));
    assert_eq!(one("12/08"), "");
}

#[test]
fn unreachable_output_warns() {
    let r = build(spec(
        &[
            ("c", "Classifier", "-, 12/0800"),
            ("d", "Discard", ""),
            ("e", "Discard", ""),
            ("idle", "InfiniteSource", "ACTIVE false"),
        ],
        &[(3, 0, 0, 0), (0, 0, 1, 0), (0, 1, 2, 0)],
    ));
    let mut r = r;
    let warnings: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "test:1: While configuring 'c :: Classifier':",
            "  warning: output 1 matches no packets"
        ]
    );
}

#[test]
fn classifier_in_a_running_router() {
    let mut r = build(spec(
        &[
            (
                "src",
                "InfiniteSource",
                "DATA \\<00010203>, LIMIT 10, STOP true",
            ),
            ("c", "Classifier", "0/0001, -"),
            ("a", "Counter", ""),
            ("b", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 1, 3, 0),
            (2, 0, 4, 0),
            (3, 0, 4, 0),
        ],
    ));
    assert_eq!(r.run(), StopReason::Stopped);
    assert_eq!(r.read_handler("a.count", None).unwrap(), "10");
    assert_eq!(r.read_handler("b.count", None).unwrap(), "0");
}

// ---------------------------------------------------------------- property

/// A clause for the reference matcher: offset, per-byte (value, mask),
/// negation, and its text form.
#[derive(Clone, Debug)]
struct Clause {
    offset: usize,
    bytes: Vec<(u8, u8)>,
    negated: bool,
    text: String,
}

#[derive(Clone, Debug)]
enum Pattern {
    All,
    Clauses(Vec<Clause>),
}

impl Pattern {
    fn text(&self) -> String {
        match self {
            Pattern::All => "-".into(),
            Pattern::Clauses(c) => c
                .iter()
                .map(|c| c.text.clone())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The naive definition: every clause holds; a clause holds when each
    /// byte it compares (nonzero mask) exists and matches.
    fn matches(&self, p: &[u8]) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Clauses(cs) => cs.iter().all(|c| {
                let pos = c.bytes.iter().enumerate().all(|(i, &(v, m))| {
                    m == 0 || p.get(c.offset + i).is_some_and(|&b| b & m == v & m)
                });
                pos != c.negated
            }),
        }
    }
}

/// Nibble text: a digit for the value or '?' for a wildcard.
fn nibble_strategy() -> impl Strategy<Value = Option<u8>> {
    prop_oneof![
        3 => prop::sample::select(vec![0u8, 8, 6, 0xf]).prop_map(Some),
        1 => Just(None),
    ]
}

fn clause_strategy() -> impl Strategy<Value = Clause> {
    (
        0usize..14,
        prop::collection::vec((nibble_strategy(), nibble_strategy()), 1..6),
        any::<bool>(),
        prop::option::weighted(
            0.3,
            prop::collection::vec(prop::sample::select(vec![0xffu8, 0xf0, 0x0f, 0x81, 0]), 6),
        ),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(offset, nibbles, negated, mask, _)| {
            let hex =
                |n: Option<u8>| n.map_or('?', |d| char::from_digit(d as u32, 16).unwrap_or('0'));
            let mut text = String::new();
            if negated {
                text.push('!');
            }
            text.push_str(&format!("{offset}/"));
            let mut bytes = Vec::new();
            for (i, (hi, lo)) in nibbles.iter().enumerate() {
                text.push(hex(*hi));
                text.push(hex(*lo));
                let v = (hi.unwrap_or(0) << 4) | lo.unwrap_or(0);
                let mut m =
                    (if hi.is_some() { 0xf0 } else { 0 }) | (if lo.is_some() { 0x0f } else { 0 });
                if let Some(mask) = &mask {
                    m &= mask[i];
                }
                bytes.push((v & m, m));
            }
            if let Some(mask) = &mask {
                text.push('%');
                for b in mask.iter().take(nibbles.len()) {
                    text.push_str(&format!("{b:02x}"));
                }
            }
            Clause {
                offset,
                bytes,
                negated,
                text,
            }
        })
}

fn pattern_strategy() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        1 => Just(Pattern::All),
        8 => prop::collection::vec(clause_strategy(), 1..4).prop_map(Pattern::Clauses),
    ]
}

fn packet_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(vec![0u8, 0x08, 0x06, 0x80, 0xff, 0x0f, 0x86]),
        0..24,
    )
}

fn reference(patterns: &[Pattern], p: &[u8]) -> Option<usize> {
    patterns.iter().position(|pat| pat.matches(p))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn compiled_program_matches_reference(
        patterns in prop::collection::vec(pattern_strategy(), 1..7),
        packets in prop::collection::vec(packet_strategy(), 1..40),
    ) {
        let texts: Vec<String> = patterns.iter().map(|p| p.text()).collect();
        let prog = Program::compile(&texts).map_err(|e| TestCaseError::fail(e.join("; ")))?;
        let plain = Program::compile_unoptimized(&texts).map_err(|e| TestCaseError::fail(e.join("; ")))?;
        // Packets derived from the patterns themselves make matches likely.
        let mut all = packets.clone();
        for pat in &patterns {
            if let Pattern::Clauses(cs) = pat {
                let mut p = [0u8; 20];
                for c in cs {
                    for (i, &(v, _)) in c.bytes.iter().enumerate() {
                        if let Some(b) = p.get_mut(c.offset + i) {
                            *b = v;
                        }
                    }
                }
                for cut in [20usize, 15, 13, 9, 4, 0] {
                    all.push(p[..cut].to_vec());
                }
            }
        }
        for p in &all {
            let want = reference(&patterns, p);
            prop_assert_eq!(prog.classify(p), want, "patterns {:?} packet {:?}\n{}", texts, p, prog.unparse());
            prop_assert_eq!(plain.classify(p), want, "unoptimized: patterns {:?} packet {:?}", texts, p);
        }
        // The optimized program is never longer than the linear one.
        prop_assert!(prog.insns().len() <= plain.insns().len());
    }
}
