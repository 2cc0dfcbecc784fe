//! The one-packet and nothing-to-do paths of the elements on the IP
//! router's forwarding path (Paint, Strip, FixIPSrc, PaintTee,
//! DropBroadcasts, IPGWOptions, IPFragmenter, CheckIPHeader, DecIPTTL,
//! Classifier): a packet mix pushed one packet per batch (the BURST 1
//! path) must leave every output exactly as the same mix pushed as one
//! batch (the general path), and as each element's rule says.

use rclick_core::packet::PacketType;
use rclick_core::wire::checksum;
use rclick_core::{Batch, Packet, Router};
use rclick_elements::testing::from_config;

/// What a test looks at in an output packet: its bytes and annotations.
#[derive(Debug, PartialEq)]
struct Seen {
    data: Vec<u8>,
    anno: Vec<u8>,
    network: Option<isize>,
}

fn seen(p: &Packet) -> Seen {
    Seen {
        data: p.data().to_vec(),
        anno: p.anno().to_vec(),
        network: p.network_offset(),
    }
}

/// `x :: DECL` fed from nowhere, with each output into a queue `o<i>`.
fn harness(decl: &str, noutputs: usize) -> Router {
    let mut conf = format!("x :: {decl}; Idle -> x;");
    for i in 0..noutputs {
        conf.push_str(&format!(" x[{i}] -> o{i} :: Queue(1000) -> Discard;"));
    }
    from_config(&conf)
}

fn drain(r: &mut Router, q: &str) -> Vec<Seen> {
    let i = r.find_element(q).unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(i, 0, 64) {
        if b.is_empty() {
            break;
        }
        out.extend(b.packets().iter().map(seen));
    }
    out
}

/// Pushes `mix` into `x` one packet per batch and, in a second router, as
/// one batch; checks both leave the same packets on every output, and
/// returns them.
fn one_by_one_as_batch(
    decl: &str,
    noutputs: usize,
    mix: impl Fn() -> Vec<Packet>,
) -> Vec<Vec<Seen>> {
    let mut single = harness(decl, noutputs);
    let x = single.find_element("x").unwrap();
    for p in mix() {
        single.inject(x, 0, Batch::single(p));
    }
    let mut whole = harness(decl, noutputs);
    let x = whole.find_element("x").unwrap();
    let mut batch = Batch::new();
    for p in mix() {
        batch.push(p);
    }
    whole.inject(x, 0, batch);
    (0..noutputs)
        .map(|i| {
            let q = format!("o{i}");
            let a = drain(&mut single, &q);
            assert_eq!(a, drain(&mut whole, &q), "{decl}: output {i}");
            a
        })
        .collect()
}

/// A 20-byte-header UDP packet (or with `opts` appended to the header)
/// with TTL `ttl`, in an Ethernet frame when `ether`.
fn ip(ttl: u8, opts: &[u8], ether: bool) -> Vec<u8> {
    let hl = 20 + opts.len();
    let total = hl + 8 + 4;
    let mut h = vec![0u8; total];
    h[0] = 0x40 | (hl / 4) as u8;
    h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    h[8] = ttl;
    h[9] = 17;
    h[12..16].copy_from_slice(&[10, 0, 0, 2]);
    h[16..20].copy_from_slice(&[10, 0, 1, 2]);
    h[20..hl].copy_from_slice(opts);
    let c = checksum::checksum(&h[..hl]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    if !ether {
        return h;
    }
    let mut f = vec![0, 0, 0xc0, 0, 0, 1, 0, 0, 0x0a, 0, 0, 2, 0x08, 0x00];
    f.extend(h);
    f
}

/// An IP packet with its network header marked, as CheckIPHeader leaves it.
fn marked(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    p.set_network_header(0, ((bytes[0] & 0x0f) as usize) * 4);
    p
}

#[test]
fn paint_strip_and_fixipsrc_act_in_place() {
    let mix = || {
        (0..3)
            .map(|i| {
                let mut p = Packet::from_slice(&ip(64, &[], true));
                p.anno_mut()[0] = i;
                p
            })
            .collect()
    };
    let out = one_by_one_as_batch("Paint(7, 0)", 1, mix);
    assert_eq!(out[0].len(), 3);
    assert!(out[0].iter().all(|s| s.anno[0] == 7));

    let out = one_by_one_as_batch("Strip(14)", 1, mix);
    assert_eq!(out[0].len(), 3);
    assert!(out[0].iter().all(|s| s.data == ip(64, &[], false)));
    // Strip takes at most what there is.
    let out = one_by_one_as_batch("Strip(100)", 1, mix);
    assert!(out[0].iter().all(|s| s.data.is_empty()));

    // Only the packets with the Fix IP Source annotation are rewritten.
    let fix_mix = || {
        (0..4)
            .map(|i| {
                let mut p = marked(&ip(64, &[], false));
                p.set_fix_ip_src_anno(i % 2 == 1);
                p
            })
            .collect()
    };
    let out = one_by_one_as_batch("FixIPSrc(18.26.4.24)", 1, fix_mix);
    assert_eq!(out[0].len(), 4);
    for (i, s) in out[0].iter().enumerate() {
        let src = if i % 2 == 1 {
            [18, 26, 4, 24]
        } else {
            [10, 0, 0, 2]
        };
        assert_eq!(s.data[12..16], src, "packet {i}");
        assert!(checksum::verify(&s.data[..20]));
        assert_eq!(s.anno[rclick_core::packet::anno::FIX_IP_SRC], 0);
    }
}

#[test]
fn painttee_copies_only_painted_packets() {
    let mix = |colors: &'static [u8]| {
        move || {
            colors
                .iter()
                .map(|&c| {
                    let mut p = Packet::from_slice(&[c; 8]);
                    p.anno_mut()[rclick_core::packet::anno::PAINT] = c;
                    p
                })
                .collect()
        }
    };
    // Nothing painted: every packet passes on output 0 alone.
    let out = one_by_one_as_batch("PaintTee(2)", 2, mix(&[0, 1, 3]));
    assert_eq!(out[0].len(), 3);
    assert!(out[1].is_empty());
    // Painted packets are copied to output 1 as well, in order.
    let out = one_by_one_as_batch("PaintTee(2)", 2, mix(&[2, 1, 2]));
    let firsts = |v: &[Seen]| v.iter().map(|s| s.data[0]).collect::<Vec<_>>();
    assert_eq!(firsts(&out[0]), [2, 1, 2]);
    assert_eq!(firsts(&out[1]), [2, 2]);
}

#[test]
fn dropbroadcasts_drops_only_link_broadcasts() {
    let mix = || {
        [PacketType::Host, PacketType::Broadcast, PacketType::Host]
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let mut p = Packet::from_slice(&[i as u8; 4]);
                p.set_packet_type_anno(t);
                p
            })
            .collect()
    };
    let out = one_by_one_as_batch("DropBroadcasts", 1, mix);
    assert_eq!(out[0].iter().map(|s| s.data[0]).collect::<Vec<_>>(), [0, 2]);
    let all_host = || vec![Packet::from_slice(&[9; 4])];
    assert_eq!(
        one_by_one_as_batch("DropBroadcasts", 1, all_host)[0].len(),
        1
    );
}

#[test]
fn ip_checkers_pass_plain_packets_in_place_and_reject_the_rest() {
    // CheckIPHeader: a good header passes with its network header set; a
    // bad checksum is rejected on output 1.
    let mix = || {
        let good = ip(64, &[], false);
        let mut bad = good.clone();
        bad[10] ^= 1;
        vec![
            Packet::from_slice(&good),
            Packet::from_slice(&bad),
            Packet::from_slice(&good),
        ]
    };
    let out = one_by_one_as_batch("CheckIPHeader", 2, mix);
    assert_eq!(out[0].len(), 2);
    assert!(out[0].iter().all(|s| s.network == Some(0)));
    assert_eq!(out[1].len(), 1);

    // DecIPTTL: TTL above 1 decremented with a valid checksum; TTL 1 out
    // of output 1, unchanged.
    let ttls = || {
        [64u8, 1, 2]
            .iter()
            .map(|&t| marked(&ip(t, &[], false)))
            .collect()
    };
    let out = one_by_one_as_batch("DecIPTTL", 2, ttls);
    assert_eq!(
        out[0].iter().map(|s| s.data[8]).collect::<Vec<_>>(),
        [63, 1]
    );
    for s in &out[0] {
        assert!(checksum::verify(&s.data[..20]));
    }
    assert_eq!(out[1].len(), 1);
    assert_eq!(out[1][0].data, ip(1, &[], false));
    // A packet whose buffer a clone shares leaves the one-packet path for
    // the general one, which copies: the clone keeps its TTL.
    let mut r = harness("DecIPTTL", 2);
    let x = r.find_element("x").unwrap();
    let p = marked(&ip(64, &[], false));
    let kept = p.clone();
    r.inject(x, 0, Batch::single(p));
    let out = drain(&mut r, "o0");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].data[8], 63);
    assert!(checksum::verify(&out[0].data[..20]));
    assert_eq!(kept.data(), &ip(64, &[], false)[..]);

    // IPGWOptions: option-less packets pass untouched; a Record Route
    // option gets the address, with the checksum fixed.
    let opts = || {
        vec![
            marked(&ip(64, &[], false)),
            marked(&ip(64, &[7, 7, 4, 0, 0, 0, 0, 0], false)),
            marked(&ip(64, &[], false)),
        ]
    };
    let out = one_by_one_as_batch("IPGWOptions(10.0.1.1)", 2, opts);
    assert_eq!(out[0].len(), 3);
    assert_eq!(out[0][0].data, ip(64, &[], false));
    assert_eq!(out[0][1].data[23..27], [10, 0, 1, 1]);
    assert!(checksum::verify(&out[0][1].data[..28]));
    assert!(out[1].is_empty());
}

#[test]
fn ipfragmenter_passes_fitting_packets_and_fragments_the_rest_in_order() {
    let mix = || {
        let mut big = ip(64, &[], false);
        big.resize(20 + 100, 0xab);
        big[2..4].copy_from_slice(&120u16.to_be_bytes());
        big[10..12].fill(0);
        let c = checksum::checksum(&big[..20]);
        big[10..12].copy_from_slice(&c.to_be_bytes());
        vec![
            marked(&ip(64, &[], false)),
            marked(&big),
            marked(&ip(63, &[], false)),
        ]
    };
    // Everything fits: passes whole.
    let out = one_by_one_as_batch("IPFragmenter(1500)", 1, mix);
    assert_eq!(out[0].len(), 3);
    // The big one is cut in three (48 + 48 + 4 bytes of payload), between
    // the two small ones.
    let out = one_by_one_as_batch("IPFragmenter(68)", 1, mix);
    let lens: Vec<usize> = out[0].iter().map(|s| s.data.len()).collect();
    assert_eq!(lens, [32, 68, 68, 24, 32]);
    assert_eq!(out[0][4].data[8], 63);
}

#[test]
fn classifier_sends_a_one_packet_batch_where_its_packet_belongs() {
    let mix = || {
        let arp = {
            let mut f = vec![0u8; 42];
            f[12..14].copy_from_slice(&[0x08, 0x06]);
            f[20..22].copy_from_slice(&[0, 1]);
            f
        };
        vec![
            Packet::from_slice(&ip(64, &[], true)),
            Packet::from_slice(&arp),
            Packet::from_slice(&[0u8; 20]),
            Packet::from_slice(&ip(63, &[], true)),
        ]
    };
    let out = one_by_one_as_batch("Classifier(12/0806 20/0001, 12/0800, -)", 3, mix);
    let lens = |v: &[Seen]| v.iter().map(|s| s.data.len()).collect::<Vec<_>>();
    assert_eq!(lens(&out[0]), [42]);
    assert_eq!(lens(&out[1]), [46, 46]);
    assert_eq!(out[1][1].data[14 + 8], 63);
    assert_eq!(lens(&out[2]), [20]);
    // A packet no pattern takes is dropped.
    let out = one_by_one_as_batch("Classifier(12/0800)", 1, mix);
    assert_eq!(out[0].len(), 2);
}

#[test]
fn arpquerier_addresses_a_packet_in_place_or_through_its_general_path() {
    let setup = || {
        let mut r = from_config(
            "x :: ARPQuerier(10.0.1.1, 00:00:c0:00:01:01); Idle -> x; Idle -> [1]x; \
             x -> o0 :: Queue(1000) -> Discard;",
        );
        r.write_handler("x.insert", "10.0.1.2 00:00:0b:00:01:02")
            .unwrap();
        r
    };
    let to_b = |headroom: usize| {
        let mut p = Packet::with_room(headroom, &ip(64, &[], false), 0);
        p.set_dst_ip_anno([10, 0, 1, 2].into());
        p
    };
    let header = [0, 0, 0x0b, 0, 1, 2, 0, 0, 0xc0, 0, 1, 1, 0x08, 0x00];
    // The first packet finds the entry and makes it the remembered one;
    // the next ones take the one-packet path: in place, shared (the clone
    // keeps its bytes) and with no headroom (copied), alike.
    let mut r = setup();
    let x = r.find_element("x").unwrap();
    let kept = to_b(64);
    let shared = kept.clone();
    for p in [to_b(64), to_b(64), shared, to_b(0)] {
        r.inject(x, 0, Batch::single(p));
    }
    let out = drain(&mut r, "o0");
    assert_eq!(out.len(), 4);
    for s in &out {
        assert_eq!(s.data[..14], header);
        assert_eq!(s.data[14..], ip(64, &[], false)[..]);
    }
    assert_eq!(kept.data(), &ip(64, &[], false)[..]);
    assert_eq!(rclick_elements::testing::read(&mut r, "x.drops"), "0");
}

#[test]
fn arpqueriers_on_two_clones_of_one_packet_each_write_their_own_header() {
    // A Tee'd packet to two interfaces: each ARPQuerier, on its
    // one-packet path, prepends its own header. Were the shared buffer's
    // headroom written in place, the second header would land over the
    // first packet's.
    let mut r = from_config(
        "x1 :: ARPQuerier(10.0.1.1, 00:00:c0:00:01:01); Idle -> x1; Idle -> [1]x1; \
         x2 :: ARPQuerier(10.0.2.1, 00:00:c0:00:02:01); Idle -> x2; Idle -> [1]x2; \
         x1 -> o1 :: Queue(1000) -> Discard; x2 -> o2 :: Queue(1000) -> Discard;",
    );
    r.write_handler("x1.insert", "10.0.9.9 00:00:0b:00:01:02")
        .unwrap();
    r.write_handler("x2.insert", "10.0.9.9 00:00:0b:00:02:02")
        .unwrap();
    let to_next_hop = || {
        let mut p = Packet::with_room(64, &ip(64, &[], false), 0);
        p.set_dst_ip_anno([10, 0, 9, 9].into());
        p
    };
    let (x1, x2) = (r.find_element("x1").unwrap(), r.find_element("x2").unwrap());
    // The first packet to each makes the entry the remembered one.
    r.inject(x1, 0, Batch::single(to_next_hop()));
    r.inject(x2, 0, Batch::single(to_next_hop()));
    let p = to_next_hop();
    let tee = p.clone();
    r.inject(x1, 0, Batch::single(p));
    r.inject(x2, 0, Batch::single(tee));
    let h1 = [0, 0, 0x0b, 0, 1, 2, 0, 0, 0xc0, 0, 1, 1, 0x08, 0x00];
    let h2 = [0, 0, 0x0b, 0, 2, 2, 0, 0, 0xc0, 0, 2, 1, 0x08, 0x00];
    for (q, header) in [("o1", h1), ("o2", h2)] {
        let out = drain(&mut r, q);
        assert_eq!(out.len(), 2, "{q}");
        for s in &out {
            assert_eq!(s.data[..14], header, "{q}");
            assert_eq!(s.data[14..], ip(64, &[], false)[..], "{q}");
        }
    }
}
