//! The domain routers (IPv6, NAT, switching, QoS) under arbitrary
//! packets, on stable: the committed corpus of the `domain_traffic` fuzz
//! target (fuzz/corpus/domain_traffic), then generated inputs: random
//! bytes, and valid frames of each protocol with random bytes flipped.
//! No input may panic or lose a packet (tests/domain_traffic).

mod domain_traffic;

use std::path::PathBuf;

use domain_traffic::{domain_traffic, ROUTERS};

#[test]
fn the_committed_corpus_replays_clean() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/domain_traffic");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= ROUTERS.len(), "a seed per router at least");
    for f in &files {
        let data = std::fs::read(f).expect("corpus file");
        if std::panic::catch_unwind(|| domain_traffic(&data)).is_err() {
            panic!("{} failed", f.display());
        }
    }
    println!("domain_traffic: replayed {} inputs", files.len());
}

/// xorshift64*: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
}

#[test]
fn generated_inputs_lose_nothing() {
    let seeds = seed_frames();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for round in 0..600u32 {
        let mut data = vec![(round as usize % ROUTERS.len()) as u8];
        for _ in 0..(1 + rng.next() % 6) {
            let flow = ROUTERS[round as usize % ROUTERS.len()].0 == "flow";
            let mut frame = if flow && rng.next().is_multiple_of(3) {
                // A filter for the gates' handlers (port bit 6 below).
                const SPECS: &[&str] = &[
                    "0 src 10.0.0.2 proto udp",
                    "1 dst 198.51.100.0/24 dport 53-80",
                    "2 -",
                    "0 iif 1 sport 1024-65535",
                    "1 proto icmp",
                    "0 src 10.0.0.0/8",
                ];
                SPECS[(rng.next() as usize) % SPECS.len()]
                    .as_bytes()
                    .to_vec()
            } else if rng.next().is_multiple_of(4) {
                (0..rng.next() % 120).map(|_| rng.byte()).collect()
            } else {
                seeds[(rng.next() as usize) % seeds.len()].clone()
            };
            for _ in 0..rng.next() % 4 {
                if !frame.is_empty() {
                    let i = (rng.next() as usize) % frame.len();
                    frame[i] ^= rng.byte();
                }
            }
            if rng.next().is_multiple_of(5) {
                let keep = (rng.next() as usize) % (frame.len() + 1);
                frame.truncate(keep);
            }
            frame.truncate(255);
            data.push(rng.byte() & 0x7f);
            data.push(frame.len() as u8);
            data.extend_from_slice(&frame);
        }
        if std::panic::catch_unwind(|| domain_traffic(&data)).is_err() {
            panic!("round {round} failed on input {data:02x?}");
        }
    }
}

/// Valid frames of the protocols the routers handle (the seeds the
/// mutations start from; also the committed corpus's content).
pub fn seed_frames() -> Vec<Vec<u8>> {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    };
    vec![
        // Ethernet/IPv6/UDP to 2001:db8:1::2 (forwarded), hop limit 64.
        hex("000000c0000100000000000286dd60000000000e114020010db800000000000000000000000220010db800010000000000000000000204d2162e000e0000000000000000"),
        // The same with hop limit 1 (expires).
        hex("000000c0000100000000000286dd60000000000e110120010db800000000000000000000000220010db800010000000000000000000204d2162e000e0000000000000000"),
        // IPv4/UDP 10.0.0.2:1234 -> 198.51.100.7:53.
        hex("4500001c0001000040117e8c0a000002c633640704d20035000800000000"),
        // IPv4/TCP SYN 10.0.0.2:40000 -> 198.51.100.7:80.
        hex("45000028000100004006ff790a000002c63364079c40005000000000000000005002200000000000"),
        // IPv4/ICMP echo 10.0.0.2 -> 198.51.100.7, id 7.
        hex("4500001c000100004001ff8a0a000002c63364070800f7f700070001"),
        // Ethernet with an 802.1Q tag (VLAN 10), carrying IPv4.
        hex("000000c00001000000000002810000640800450000140001000040010000"),
        // Ethernet broadcast ARP request.
        hex("ffffffffffff0000000000020806000108000604000100000000000200000000ffffffffffff0a000001"),
        // Ethernet/IPv6/ICMPv6 neighbour solicitation for fe80::1 (hop limit 255).
        hex("3333ff00000100000000000286dd6000000000203aff fe800000000000000000000000000002ff0200000000000000000001ff0000018700000000000000fe800000000000000000000000000001010100000000000002".replace(' ', "").as_str()),
    ]
}
