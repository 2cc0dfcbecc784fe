//! ESP on several threads (`-j 2`, issue 20): ESPTunnelEncap and
//! ESPTunnelDecap reached from two threads run as one copy per thread
//! sharing their SAs. Sequence numbers must stay unique within the SA
//! (RFC 4303 §3.3.3) however the threads interleave, and the inbound
//! anti-replay window must accept each sequence number once even when the
//! same packet arrives on both threads at the same moment. (The unit tests
//! of `ipsec::sa` race the sequence counter and the window directly; these
//! race them through whole routers.)

use std::collections::HashSet;
use std::path::PathBuf;

use rclick_core::{Router, RouterOptions, StopReason};
use rclick_elements::testing::pcap_records;
use rclick_elements::testing::{from_config_with, ipv4_packet, read};

const KEY: &str = "0x4c80cdefbb5d10da906ac73c3613a6342e443b68";

fn threads(n: usize) -> RouterOptions {
    RouterOptions {
        threads: n,
        capture_chatter: true,
        ..RouterOptions::default()
    }
}

fn num(r: &mut Router, h: &str) -> u64 {
    read(r, h)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{h} is not a number"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rclick-ipsec-j2-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An inner packet as a Click string (`\<hex>`).
fn inner_data(len: usize) -> String {
    let payload = vec![0x5au8; len - 28];
    let p = ipv4_packet([10, 1, 0, 5], [10, 2, 0, 7], 17, 64, 0, &[], &payload);
    let hex: String = p.iter().map(|b| format!("{b:02x}")).collect();
    format!("\\<{hex}>")
}

/// Two sources on two threads feed one ESPTunnelEncap; its ESP packets
/// meet at a ThreadSafeQueue and are written down. Every sequence number
/// from 1 to the total appears exactly once (an SA's counter read and
/// written in two steps by the threads hands some numbers out twice), the
/// IVs are unique, and a decapsulator with a window wider than the run
/// accepts every packet and sees no replay. A hot swap with the threads
/// running keeps the sequence number.
#[test]
fn encap_on_two_threads_hands_out_each_sequence_number_once() {
    const N: u64 = 20_000;
    let dir = scratch("enc");
    let dump = dir.join("esp.pcap");
    let data = inner_data(64);
    let config = format!(
        "enc :: ESPTunnelEncap(0x1001, {KEY}, 192.0.2.1, 198.51.100.1)
           -> q :: ThreadSafeQueue({cap});
         s0 :: InfiniteSource(DATA {data}, LIMIT {N}, BURST 32) -> enc;
         s1 :: InfiniteSource(DATA {data}, LIMIT {N}, BURST 32) -> enc;
         q -> uq :: Unqueue(BURST 64) -> t :: Tee(2);
         t[0] -> ToDump({dump}, ENCAP IP, SNAPLEN 0, UNBUFFERED true) -> Discard;
         t[1] -> dec :: ESPTunnelDecap(0x1001, {KEY}, WINDOW 65536) -> Discard;
         StaticThreadSched(s0 0, s1 1, uq 0);",
        cap = 2 * N,
        dump = dump.display()
    );
    let mut r = from_config_with(&config, &threads(2));
    assert_eq!(r.run(), StopReason::Quiescent);
    let total = 2 * N;
    assert_eq!(num(&mut r, "enc.packets"), total, "copies summed");
    assert_eq!(num(&mut r, "enc.seq"), total);
    assert_eq!(num(&mut r, "q.drops"), 0);
    assert!(
        read(&mut r, "enc.sa").contains(&format!(" packets {total} ")),
        "{}",
        read(&mut r, "enc.sa")
    );
    let recs = pcap_records(&dump);
    assert_eq!(recs.len() as u64, total);
    let mut seqs = HashSet::new();
    let mut ivs = HashSet::new();
    let mut idents = HashSet::new();
    let mut out_of_order = 0;
    let mut last = 0u32;
    for p in &recs {
        let seq = u32::from_be_bytes(p[24..28].try_into().unwrap());
        assert!(seqs.insert(seq), "sequence number {seq} sent twice");
        assert!(ivs.insert(p[28..36].to_vec()), "IV repeated");
        idents.insert(u16::from_be_bytes([p[4], p[5]]));
        if seq < last {
            out_of_order += 1;
        }
        last = seq;
    }
    assert_eq!(seqs.len() as u64, total);
    assert_eq!(*seqs.iter().max().unwrap() as u64, total, "numbers skipped");
    assert_eq!(
        idents.len(),
        65536.min(total as usize),
        "outer IDs repeat early"
    );
    eprintln!("{out_of_order} of {total} ESP packets left behind a higher sequence number");
    assert_eq!(num(&mut r, "dec.packets"), total);
    assert_eq!(num(&mut r, "dec.replay_drops"), 0);
    r.hotswap(&config).map_err(|d| format!("{d:?}")).unwrap();
    assert_eq!(num(&mut r, "enc.seq"), total, "after hot swap");
    assert!(
        read(&mut r, "enc.sa").contains(&format!(" packets {total} ")),
        "after hot swap: {}",
        read(&mut r, "enc.sa")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same ESP packets arrive on two threads at once (a replay racing
/// the original): ESPTunnelDecap accepts each sequence number exactly
/// once and counts every other copy as a replay. A window checked before
/// and updated after the integrity check in two unguarded steps lets both
/// threads accept the same number.
#[test]
fn decap_on_two_threads_accepts_each_sequence_number_once() {
    const N: u64 = 20_000;
    let dir = scratch("dec");
    let esp = dir.join("esp.pcap");
    let data = inner_data(64);
    let mut r = from_config_with(
        &format!(
            "InfiniteSource(DATA {data}, LIMIT {N}, BURST 32)
               -> ESPTunnelEncap(0x1001, {KEY}, 192.0.2.1, 198.51.100.1)
               -> ToDump({}, ENCAP IP, SNAPLEN 0, UNBUFFERED true) -> Discard;",
            esp.display()
        ),
        &threads(1),
    );
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(pcap_records(&esp).len() as u64, N);
    for window in [65536, 1024] {
        let mut r = from_config_with(
            &format!(
                "dec :: ESPTunnelDecap(0x1001, {KEY}, WINDOW {window}) -> ok :: Counter -> Discard;
                 f0 :: FromDump({esp}, FORCE_IP true) -> dec;
                 f1 :: FromDump({esp}, FORCE_IP true) -> dec;
                 dec[1] -> bad :: Counter -> Discard;
                 StaticThreadSched(f0 0, f1 1);",
                esp = esp.display()
            ),
            &threads(2),
        );
        assert_eq!(r.run(), StopReason::Quiescent);
        let (ok, bad, replays) = (
            num(&mut r, "ok.count"),
            num(&mut r, "bad.count"),
            num(&mut r, "dec.replay_drops"),
        );
        assert_eq!(ok + bad, 2 * N, "window {window}: every packet counted");
        assert_eq!(replays, bad, "window {window}: only replays refused");
        assert_eq!(num(&mut r, "dec.packets"), ok);
        if window == 65536 {
            // Nothing can fall below a window wider than the run: each
            // number is accepted exactly once.
            assert_eq!(ok, N, "window {window}");
        } else {
            // A thread that falls more than a window behind finds its
            // numbers too old; still no number is accepted twice.
            assert!((N / 2..=N).contains(&ok), "window {window}: {ok} accepted");
        }
        let sa = r.read_handler("dec.sa", Some("0x1001")).unwrap();
        assert!(sa.contains(&format!(" packets {ok} ")), "{sa}");
        assert!(sa.contains(&format!(" replay_drops {replays} ")), "{sa}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Handlers on copied elements: a rekey written while two threads run
/// reaches both copies (they share the SA), and the decapsulator on the
/// far side accepts what either thread sends under the new SA. (Its
/// window is wide: the two threads' packets meet out of order, by as much
/// as a thread's time slice when they share a core.)
#[test]
fn rekey_reaches_every_thread() {
    let data = inner_data(100);
    let config = format!(
        "enc :: ESPTunnelEncap(0x1001, {KEY}, 192.0.2.1, 198.51.100.1) -> q :: ThreadSafeQueue(5000);
         s0 :: InfiniteSource(DATA {data}, LIMIT 1000, BURST 8, ACTIVE false) -> enc;
         s1 :: InfiniteSource(DATA {data}, LIMIT 1000, BURST 8, ACTIVE false) -> enc;
         q -> uq :: Unqueue
           -> dec :: ESPTunnelDecap(0x2002, 0x0102030405060708090a0b0c0d0e0f1011121314, WINDOW 65536)
           -> ok :: Counter -> Discard;
         dec[1] -> bad :: Counter -> Discard;
         StaticThreadSched(s0 0, s1 1, uq 0);"
    );
    let mut r = from_config_with(&config, &threads(2));
    r.write_handler(
        "enc.replace_sa",
        "0x2002 0102030405060708090a0b0c0d0e0f1011121314",
    )
    .unwrap();
    assert_eq!(read(&mut r, "enc.spi"), "0x00002002");
    r.write_handler("s0.active", "true").unwrap();
    r.write_handler("s1.active", "true").unwrap();
    assert_eq!(r.run(), StopReason::Quiescent);
    assert_eq!(num(&mut r, "ok.count"), 2000);
    assert_eq!(num(&mut r, "bad.count"), 0);
    assert_eq!(num(&mut r, "enc.seq"), 2000);
}
