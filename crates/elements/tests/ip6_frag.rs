//! IPv6 fragmentation and reassembly (RFC 8200 section 4.5): IP6Fragmenter
//! and IP6Reassembler on crafted packets in simulated time, each checked
//! against scapy (`fragment6`/`defragment6`, an independent implementation)
//! when python3 with scapy is present, and arbitrary bytes through both
//! without a panic.

use std::io::Write;
use std::net::Ipv6Addr;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use rclick_core::wire::ipv6::{
    HEADER_LEN, PROTO_FRAGMENT, PROTO_HOPOPTS, PROTO_ROUTING, PROTO_UDP,
};
use rclick_core::wire::{Ipv6ExtHeader, Ipv6FragHeader, Ipv6Header, Ipv6Repr};
use rclick_core::{Packet, Router, Timestamp};
use rclick_elements::testing::{from_config, read, try_from_config};

fn a6(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

fn ip6(nh: u8, payload: &[u8]) -> Vec<u8> {
    let r = Ipv6Repr {
        src: a6("2001:db8::1"),
        dst: a6("2001:db8:1::2"),
        next_header: nh,
        payload_len: payload.len(),
        hop_limit: 64,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut b = vec![0u8; HEADER_LEN + payload.len()];
    r.emit(&mut Ipv6Header::new_unchecked(&mut b[..]));
    b[HEADER_LEN..].copy_from_slice(payload);
    b
}

/// A UDP datagram of `n` data bytes (checksum left 0: nothing here checks
/// it).
fn udp(n: usize) -> Vec<u8> {
    let mut u = vec![0x30, 0x39, 0x00, 0x35];
    u.extend_from_slice(&((n + 8) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..n).map(|i| (i * 7) as u8));
    u
}

/// Hop-by-hop (router alert, PadN) then a type-4 routing header with one
/// segment, 0 left, then `rest` (whose type is `nh`).
fn with_unfragmentable(nh: u8, rest: &[u8]) -> Vec<u8> {
    let mut b = vec![PROTO_ROUTING, 0, 5, 2, 0, 0, 1, 0];
    b.extend_from_slice(&[nh, 2, 4, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&[0x20; 16]);
    b.extend_from_slice(rest);
    ip6(PROTO_HOPOPTS, &b)
}

fn net(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, HEADER_LEN.min(bytes.len()));
    p
}

fn inject(r: &mut Router, elem: &str, p: Packet) {
    let i = r.find_element(elem).unwrap();
    r.inject_packet(i, 0, p);
}

fn drain(r: &mut Router, q: &str) -> Vec<Vec<u8>> {
    let i = r.find_element(q).unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        out.extend(b.into_iter().map(|p| p.data().to_vec()));
    }
    out
}

const BUSY: &str = "InfiniteSource -> Discard;";

fn advance(r: &mut Router, secs: f64) {
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_secs_f64(secs));
    r.run_limited(2);
}

fn fragmenter(args: &str) -> Router {
    from_config(&format!(
        "Idle -> f :: IP6Fragmenter({args}) -> q0 :: Queue(1000) -> Idle; f[1] -> q1 :: Queue -> Idle;"
    ))
}

fn fragment(args: &str, pkt: &[u8]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut r = fragmenter(args);
    inject(&mut r, "f", net(pkt));
    (drain(&mut r, "q0"), drain(&mut r, "q1"))
}

fn reassembler() -> Router {
    from_config(&format!(
        "Idle -> ra :: IP6Reassembler(TIMEOUT 60) -> q0 :: Queue(1000) -> Idle; ra[1] -> q1 :: Queue -> Idle; {BUSY}"
    ))
}

fn reassemble(frags: &[Vec<u8>]) -> (Router, Vec<Vec<u8>>) {
    let mut r = reassembler();
    for f in frags {
        inject(&mut r, "ra", net(f));
    }
    let out = drain(&mut r, "q0");
    (r, out)
}

/// A fragment of `orig` (a packet without extension headers): data
/// [start, end) of its payload, with M and identification `id`.
fn frag_of(orig: &[u8], start: usize, end: usize, more: bool, id: u32) -> Vec<u8> {
    let h = Ipv6Header::new_checked(orig).unwrap();
    let mut f = vec![h.next_header(), 0, 0, 0, 0, 0, 0, 0];
    let mut fh = Ipv6FragHeader::new_unchecked(&mut f[..]);
    fh.set_offset_and_more(start, more);
    fh.set_ident(id);
    f.extend_from_slice(&orig[HEADER_LEN + start..HEADER_LEN + end]);
    ip6(PROTO_FRAGMENT, &f)
}

// ------------------------------------------------------------ IP6Fragmenter

#[test]
fn fragmenter_splits_after_the_unfragmentable_part() {
    let orig = with_unfragmentable(PROTO_UDP, &udp(3000));
    let (frags, rejected) = fragment("1280", &orig);
    assert!(rejected.is_empty());
    assert_eq!(frags.len(), 3);
    let unfrag = HEADER_LEN + 32;
    let mut data = Vec::new();
    let mut ids = Vec::new();
    for (i, f) in frags.iter().enumerate() {
        assert!(f.len() <= 1280, "fragment {i} is {} bytes", f.len());
        let h = Ipv6Header::new_checked(&f[..]).unwrap();
        assert_eq!(h.payload_len() as usize, f.len() - HEADER_LEN);
        assert_eq!(h.next_header(), PROTO_HOPOPTS);
        // The unfragmentable part is copied, its last next header now 44.
        assert_eq!(
            f[HEADER_LEN..HEADER_LEN + 8],
            orig[HEADER_LEN..HEADER_LEN + 8]
        );
        let rh = Ipv6ExtHeader::new_checked(&f[HEADER_LEN + 8..]).unwrap();
        assert_eq!(rh.next_header(), PROTO_FRAGMENT);
        assert_eq!(f[HEADER_LEN + 9..unfrag], orig[HEADER_LEN + 9..unfrag]);
        let fh = Ipv6FragHeader::new_checked(&f[unfrag..]).unwrap();
        assert_eq!(fh.next_header(), PROTO_UDP);
        assert_eq!(fh.frag_offset(), data.len());
        assert_eq!(fh.more_frags(), i < 2);
        if i < 2 {
            assert_eq!(fh.payload().len() % 8, 0);
        }
        ids.push(fh.ident());
        data.extend_from_slice(fh.payload());
    }
    assert!(ids.iter().all(|&x| x == ids[0]));
    assert_eq!(data, orig[unfrag..]);
    // Another packet gets another identification.
    let mut r = fragmenter("1280");
    inject(&mut r, "f", net(&orig));
    inject(&mut r, "f", net(&orig));
    let out = drain(&mut r, "q0");
    let id = |f: &Vec<u8>| Ipv6FragHeader::new_checked(&f[unfrag..]).unwrap().ident();
    assert_ne!(id(&out[0]), id(&out[3]));
    assert_eq!(read(&mut r, "f.fragments"), "6");
    // The reassembler undoes it.
    let (_, back) = reassemble(&frags);
    assert_eq!(back, vec![orig]);
}

#[test]
fn fragmenter_passes_small_and_rejects_what_it_cannot_fragment() {
    let small = ip6(PROTO_UDP, &udp(100));
    assert_eq!(fragment("1280", &small), (vec![small.clone()], vec![]));
    let big = ip6(PROTO_UDP, &udp(2000));
    // Routers do not fragment.
    assert_eq!(
        fragment("1280, FORWARDING true", &big),
        (vec![], vec![big.clone()])
    );
    // Already a fragment.
    let f = frag_of(&big, 0, 1600, true, 9);
    assert_eq!(fragment("1280", &f), (vec![], vec![f.clone()]));
    // A jumbogram (payload length 0) and a truncated packet.
    let mut jumbo = big.clone();
    jumbo[4..6].copy_from_slice(&[0, 0]);
    assert_eq!(fragment("1280", &jumbo), (vec![], vec![jumbo.clone()]));
    let trunc = big[..1500].to_vec();
    assert_eq!(fragment("1280", &trunc), (vec![], vec![trunc.clone()]));
    // The header chain would not fit in the first fragment (RFC 7112).
    let mut long_dst = vec![PROTO_UDP, 100];
    long_dst.resize(808, 1);
    long_dst[2] = 1;
    long_dst[3] = 255;
    long_dst[259] = 1;
    long_dst[260] = 255;
    long_dst[516] = 1;
    long_dst[517] = 255;
    long_dst[773] = 1;
    long_dst[774] = 32;
    long_dst.extend_from_slice(&udp(2000));
    let chain = ip6(60, &long_dst);
    assert_eq!(fragment("600", &chain).0.len(), 0);
    assert_eq!(fragment("1280", &chain).0.len(), 3);
    // With MTU 64 a first fragment has 16 bytes of data: a UDP header fits,
    // a TCP header (20 bytes) does not, and a first fragment without it
    // would be dropped by reassemblers (RFC 7112; ours included).
    let (frags, rejected) = fragment("64", &ip6(PROTO_UDP, &udp(100)));
    assert_eq!((frags.len(), rejected.len()), (7, 0));
    assert_eq!(reassemble(&frags).1, vec![ip6(PROTO_UDP, &udp(100))]);
    let mut tcp = vec![0u8; 100];
    tcp[12] = 0x50;
    let tcp = ip6(6, &tcp);
    assert_eq!(fragment("64", &tcp), (vec![], vec![tcp.clone()]));
    assert_eq!(fragment("72", &tcp).0.len(), 5);
    // Padding beyond the payload length is not data.
    let mut padded = small.clone();
    padded.resize(1400, 0);
    assert_eq!(fragment("1280", &padded), (vec![padded.clone()], vec![]));
}

/// The identification of a fragment.
fn ident_of(frag: &[u8]) -> u32 {
    Ipv6FragHeader::new_checked(&frag[HEADER_LEN..])
        .unwrap()
        .ident()
}

/// RFC 7739: identifications must not be predictable from those seen. A
/// generator whose output is its state (the xorshift this element had)
/// gives every next identification to whoever sees one; RFC 7739 section
/// 5.3's hash and counters give one destination's packets successive
/// identifications (no repeat) and another destination's unrelated ones.
#[test]
fn fragmenter_identifications_are_not_predictable() {
    let mut r = fragmenter("1280");
    let big = ip6(PROTO_UDP, &udp(2000));
    let mut other = big.clone();
    other[24..40].copy_from_slice(&a6("2001:db8:2::7").octets());
    for p in [&big, &big, &other] {
        inject(&mut r, "f", net(p));
    }
    let frags = drain(&mut r, "q0");
    assert_eq!(frags.len(), 6);
    let ids: Vec<u32> = frags.iter().map(|f| ident_of(f)).collect();
    assert_eq!((ids[0], ids[2], ids[4]), (ids[1], ids[3], ids[5]));
    let xorshift = |mut x: u32| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    assert_ne!(ids[2], xorshift(ids[0]), "the state is the output");
    assert_eq!(ids[2], ids[0].wrapping_add(1));
    assert_ne!(ids[4], ids[2].wrapping_add(1), "one global sequence");
    // Another element's key is another secret.
    let mut r2 = fragmenter("1280");
    inject(&mut r2, "f", net(&big));
    assert_ne!(ident_of(&drain(&mut r2, "q0")[0]), ids[0]);
}

// ------------------------------------------------------------ IP6Reassembler

#[test]
fn reassembler_any_order_duplicates_and_atomic_fragments() {
    let orig = ip6(PROTO_UDP, &udp(2992));
    let frags = [
        frag_of(&orig, 2000, 3000, false, 7),
        frag_of(&orig, 0, 1000, true, 7),
        frag_of(&orig, 1000, 2000, true, 7),
    ];
    let (mut r, out) = reassemble(&frags[..2]);
    assert!(out.is_empty());
    // An exact duplicate is dropped, the datagram kept.
    inject(&mut r, "ra", net(&frags[1]));
    assert_eq!(read(&mut r, "ra.drops"), "1");
    assert!(read(&mut r, "ra.dump").contains("2001:db8::1 > 2001:db8:1::2 7 (0,1000) (2000,3000)"));
    // Another datagram interleaved (another id).
    let other = frag_of(&orig, 0, 1000, true, 8);
    inject(&mut r, "ra", net(&other));
    inject(&mut r, "ra", net(&frags[2]));
    assert_eq!(drain(&mut r, "q0"), vec![orig.clone()]);
    // An atomic fragment leaves at once, its fragment header removed.
    let atomic = frag_of(&orig, 0, 3000, false, 8);
    inject(&mut r, "ra", net(&atomic));
    assert_eq!(drain(&mut r, "q0"), vec![orig.clone()]);
    assert!(read(&mut r, "ra.dump").contains(" 8 (0,1000)"));
    // Non-fragments pass.
    inject(&mut r, "ra", net(&orig));
    assert_eq!(drain(&mut r, "q0"), vec![orig.clone()]);
}

#[test]
fn reassembler_discards_overlapping_datagrams() {
    let orig = ip6(PROTO_UDP, &udp(2992));
    let (mut r, out) = reassemble(&[
        frag_of(&orig, 0, 1000, true, 7),
        frag_of(&orig, 992, 2000, true, 7),
        frag_of(&orig, 2000, 3000, false, 7),
        frag_of(&orig, 1000, 2000, true, 7),
    ]);
    assert!(out.is_empty(), "RFC 5722: the datagram is discarded");
    assert_eq!(read(&mut r, "ra.drops"), "3");
    assert!(read(&mut r, "ra.dump").contains(" 7 discarded\n"));
    // Discarded silently on timeout: no time exceeded.
    advance(&mut r, 61.0);
    assert!(drain(&mut r, "q1").is_empty());
    assert_eq!(read(&mut r, "ra.mem_used"), "0");
}

#[test]
fn reassembler_times_out_with_the_first_fragment() {
    let orig = ip6(PROTO_UDP, &udp(2992));
    let first = frag_of(&orig, 0, 1000, true, 1);
    let (mut r, _) = reassemble(&[first.clone(), frag_of(&orig, 1000, 2000, true, 2)]);
    advance(&mut r, 30.0);
    assert!(drain(&mut r, "q1").is_empty());
    advance(&mut r, 31.0);
    // Only datagram 1 had its first fragment.
    assert_eq!(drain(&mut r, "q1"), vec![first]);
    assert_eq!(read(&mut r, "ra.mem_used"), "0");
    assert!(read(&mut r, "ra.dump").contains("failed reassemblies: 2"));
}

#[test]
fn reassembler_drops_malformed_fragments() {
    let orig = ip6(PROTO_UDP, &udp(2992));
    let mut bad = vec![
        // M set, data not a multiple of 8.
        frag_of(&orig, 0, 1001, true, 1),
        // Empty.
        frag_of(&orig, 8, 8, true, 1),
        // Truncated below its payload length.
        frag_of(&orig, 0, 1000, true, 1)[..500].to_vec(),
        // A first fragment without the UDP header (RFC 7112).
        frag_of(&orig, 0, 0, true, 1),
    ];
    // Beyond 65535.
    let mut far = frag_of(&orig, 0, 16, true, 1);
    Ipv6FragHeader::new_unchecked(&mut far[HEADER_LEN..]).set_offset_and_more(65528, false);
    bad.push(far);
    // A truncated fragment header.
    bad.push(ip6(PROTO_FRAGMENT, &[17, 0, 0]));
    let (mut r, out) = reassemble(&bad);
    assert!(out.is_empty());
    assert_eq!(read(&mut r, "ra.drops"), bad.len().to_string());
    assert_eq!(read(&mut r, "ra.mem_used"), "0");
    // A last fragment ending before data already held.
    let (mut r, _) = reassemble(&[
        frag_of(&orig, 1000, 2000, true, 3),
        frag_of(&orig, 504, 600, false, 3),
    ]);
    assert_eq!(read(&mut r, "ra.drops"), "1");
}

/// RFC 8200 section 4.5: a fragment is refused when the reassembled
/// payload (unfragmentable headers and data, no fragment header) would
/// exceed 65535 bytes; a datagram of exactly 65535 bytes of payload, as
/// `ping -s 65527` sends, is whole again.
#[test]
fn largest_datagram_fragmented_and_reassembled() {
    let orig = ip6(PROTO_UDP, &udp(65535 - 8));
    let (frags, rejected) = fragment("1280", &orig);
    assert!(rejected.is_empty());
    assert_eq!(frags.len(), 54);
    let (mut r, out) = reassemble(&frags);
    assert_eq!(read(&mut r, "ra.drops"), "0");
    assert_eq!(out, vec![orig.clone()]);
    // A last fragment ending at 65535 is held; one ending at 65536 is
    // refused.
    let tail = |n: usize| {
        let mut f = frag_of(&orig, 0, n, false, 5);
        Ipv6FragHeader::new_unchecked(&mut f[HEADER_LEN..]).set_offset_and_more(65528, false);
        f
    };
    let (mut r, _) = reassemble(&[tail(7)]);
    assert_eq!(read(&mut r, "ra.drops"), "0");
    assert!(read(&mut r, "ra.dump").contains(" 5 (65528,65535)"));
    let (mut r, _) = reassemble(&[tail(8)]);
    assert_eq!(read(&mut r, "ra.drops"), "1");
}

#[test]
fn reassembler_memory_is_bounded() {
    let mut r = from_config(&format!(
        "Idle -> ra :: IP6Reassembler(HIMEM 20000) -> q0 :: Queue(1000) -> Idle; ra[1] -> q1 :: Queue -> Idle; {BUSY}"
    ));
    let orig = ip6(PROTO_UDP, &udp(2992));
    for id in 0..100 {
        inject(&mut r, "ra", net(&frag_of(&orig, 1000, 2000, true, id)));
        let used: usize = read(&mut r, "ra.mem_used").parse().unwrap();
        assert!(used <= 20000 + 1100, "{used}");
    }
    // Evictions are silent.
    assert!(drain(&mut r, "q1").is_empty());
}

/// The work per fragment does not grow with the datagrams held: the
/// reassembler once scanned every pending datagram twice per fragment
/// (expiry and timer), so with HIMEM large a fragment flood cost O(n)
/// each. Compares the time per fragment with few and with 30000
/// datagrams pending (the best of several rounds each, to ride out a
/// busy machine); the scan made the second some 15 times the first.
#[test]
fn reassembler_work_per_fragment_does_not_grow() {
    let mut r = from_config(&format!(
        "Idle -> ra :: IP6Reassembler(HIMEM 100000000) -> q0 :: Queue(1000) -> Idle; ra[1] -> q1 :: Queue -> Idle; {BUSY}"
    ));
    let orig = ip6(PROTO_UDP, &udp(2992));
    let frags: Vec<Vec<u8>> = (0..30000)
        .map(|id| frag_of(&orig, 8, 16, true, id))
        .collect();
    let i = r.find_element("ra").unwrap();
    let mut round = |from: usize| {
        let t = std::time::Instant::now();
        for f in &frags[from..from + 200] {
            r.inject_packet(i, 0, net(f));
        }
        t.elapsed()
    };
    let early = (0..5).map(|k| round(k * 200)).min().unwrap();
    for k in 5..140 {
        round(k * 200);
    }
    let late = (140..150).map(|k| round(k * 200)).min().unwrap();
    assert_eq!(read(&mut r, "ra.dump").lines().count(), 30000 + 5);
    assert!(
        late < early * 5 + std::time::Duration::from_millis(20),
        "{late:?} per 200 fragments with 30000 pending, {early:?} with few"
    );
}

// ------------------------------------------------------------ against scapy

fn scapy() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import scapy.all"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIP: python3 with scapy is not available");
    }
    ok
}

/// Runs a scapy script reading hex packets (one per line) on stdin and
/// printing hex packets.
fn run_scapy(script: &str, input: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut c = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let text: String = input.iter().map(|p| hex(p) + "\n").collect();
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            (0..l.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn scapy_reassembles_our_fragments() {
    if !scapy() {
        return;
    }
    let orig = with_unfragmentable(PROTO_UDP, &udp(4000));
    let (frags, _) = fragment("1280", &orig);
    assert_eq!(frags.len(), 4);
    let script = "import sys\nfrom scapy.all import IPv6, defragment6\n\
        ps=[IPv6(bytes.fromhex(l.strip())) for l in sys.stdin if l.strip()]\n\
        print(bytes(defragment6(ps)).hex())";
    assert_eq!(run_scapy(script, &frags), vec![orig]);
}

#[test]
fn we_reassemble_scapys_fragments() {
    if !scapy() {
        return;
    }
    let orig = with_unfragmentable(PROTO_UDP, &udp(5000));
    // A fragment header inserted after the routing header (fragment6
    // splits after it), then scapy's fragments, last first.
    let script = "import sys\nfrom scapy.all import IPv6, fragment6\n\
        raw=bytearray(bytes.fromhex(sys.stdin.readline().strip()))\n\
        raw[48]=44\n\
        raw=raw[:72]+bytearray([17,0,0,0,0,0,0,0])+raw[72:]\n\
        n=len(raw)-40; raw[4]=n>>8; raw[5]=n&255\n\
        fs=fragment6(IPv6(bytes(raw)), 1280)\n\
        fs.reverse()\n\
        [print(bytes(f).hex()) for f in fs]";
    let frags = run_scapy(script, std::slice::from_ref(&orig));
    assert!(frags.len() >= 4, "{}", frags.len());
    assert!(frags.iter().all(|f| f.len() <= 1280));
    let (_, back) = reassemble(&frags);
    assert_eq!(back, vec![orig]);
}

// ------------------------------------------------------------ robustness

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..200),
        nh in prop_oneof![Just(0u8), Just(43), Just(44), Just(60), any::<u8>()],
        plen in any::<u16>(),
    ) {
        let mut pkt = ip6(nh, &body);
        if plen % 3 == 0 {
            pkt[4..6].copy_from_slice(&plen.to_be_bytes());
        }
        let mut r = try_from_config(&format!(
            "Idle -> f :: IP6Fragmenter(56) -> ra :: IP6Reassembler -> q0 :: Queue(1000) -> Idle;
             f[1] -> Discard; ra[1] -> Discard; Idle -> ra2 :: IP6Reassembler -> Discard; {BUSY}"
        )).unwrap();
        inject(&mut r, "f", net(&pkt));
        inject(&mut r, "ra2", net(&pkt));
        inject(&mut r, "ra2", net(&pkt[..pkt.len() / 2]));
        let _ = drain(&mut r, "q0");
        advance(&mut r, 61.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Hostile fragment sequences (any offsets, lengths, M flags, a few
    /// identifications, time passing, a small HIMEM): no panic; whatever
    /// comes out whole is a consistent IPv6 packet holding the original's
    /// bytes; held memory stays near HIMEM and is all given back once
    /// everything timed out.
    #[test]
    fn hostile_fragment_sequences(
        frags in proptest::collection::vec(
            (0usize..400, 0usize..300, any::<bool>(), 0u32..4, 0u8..3),
            1..60,
        ),
    ) {
        let orig = ip6(PROTO_UDP, &udp(800));
        let mut r = from_config(&format!(
            "Idle -> ra :: IP6Reassembler(HIMEM 3000, TIMEOUT 10) -> q0 :: Queue(1000) -> Idle; ra[1] -> q1 :: Queue(1000) -> Idle; {BUSY}"
        ));
        for (start, len, more, id, wait) in frags {
            let start = start * 8 % 808;
            let end = (start + len).min(808);
            inject(&mut r, "ra", net(&frag_of(&orig, start, end, more, id)));
            if wait > 0 {
                advance(&mut r, f64::from(wait) * 4.0);
            }
            let used: usize = read(&mut r, "ra.mem_used").parse().unwrap();
            prop_assert!(used <= 3000 + 1200, "{}", used);
        }
        for p in drain(&mut r, "q0") {
            let h = Ipv6Header::new_checked(&p[..]).unwrap();
            prop_assert_eq!(h.payload_len() as usize + HEADER_LEN, p.len());
            prop_assert_eq!(h.next_header(), PROTO_UDP);
            prop_assert_eq!(&p[HEADER_LEN..], &orig[HEADER_LEN..p.len()]);
        }
        advance(&mut r, 11.0);
        prop_assert_eq!(read(&mut r, "ra.mem_used"), "0");
        // A time exceeded only ever carries a first fragment.
        for p in drain(&mut r, "q1") {
            let f = Ipv6FragHeader::new_checked(&p[HEADER_LEN..]).unwrap();
            prop_assert_eq!(f.frag_offset(), 0);
        }
    }
}
