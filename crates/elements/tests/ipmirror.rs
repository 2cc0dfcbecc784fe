//! IPMirror on the edges of its fixed-offset header reads: options (the
//! ports after them), headers the data cannot hold or that are not IPv4
//! (dropped and counted), later fragments (addresses only), transport
//! headers too short for the ports or for TCP's sequence numbers.

use rclick_core::{Batch, Packet};
use rclick_elements::testing::{from_config, ipv4_packet, read};

const A: [u8; 4] = [10, 0, 0, 2];
const B: [u8; 4] = [10, 0, 1, 5];

/// The packets out of IPMirror for `frames` (network header at 0, of
/// the length its IHL says, as MarkIPHeader sets it), and its drops.
fn mirror(frames: &[Vec<u8>]) -> (Vec<(Vec<u8>, std::net::Ipv4Addr)>, String) {
    let mut r = from_config("Idle -> m :: IPMirror -> q :: Queue(100) -> Discard;");
    let mut b = Batch::new();
    for f in frames {
        let mut p = Packet::from_slice(f);
        let hl = (usize::from(f[0] & 15) * 4).min(f.len());
        p.set_network_header(0, hl);
        b.push(p);
    }
    let m = r.find_element("m").unwrap();
    r.inject(m, 0, b);
    let q = r.find_element("q").unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(q, 0, 64) {
        if b.is_empty() {
            break;
        }
        out.extend(
            b.packets()
                .iter()
                .map(|p| (p.data().to_vec(), p.dst_ip_anno())),
        );
    }
    let drops = read(&mut r, "m.drops");
    (out, drops)
}

fn swapped(mut f: Vec<u8>, hl: usize, ports: bool, seq: bool) -> Vec<u8> {
    let (s, d) = (f[12..16].to_vec(), f[16..20].to_vec());
    f[12..16].copy_from_slice(&d);
    f[16..20].copy_from_slice(&s);
    if ports {
        let (a, b) = (f[hl..hl + 2].to_vec(), f[hl + 2..hl + 4].to_vec());
        f[hl..hl + 2].copy_from_slice(&b);
        f[hl + 2..hl + 4].copy_from_slice(&a);
    }
    if seq {
        let (a, b) = (f[hl + 4..hl + 8].to_vec(), f[hl + 8..hl + 12].to_vec());
        f[hl + 4..hl + 8].copy_from_slice(&b);
        f[hl + 8..hl + 12].copy_from_slice(&a);
    }
    f
}

#[test]
fn mirror_edges() {
    let l4: Vec<u8> = (1..=20).collect();
    let udp = ipv4_packet(A, B, 17, 64, 0, &[], &l4[..8]);
    let tcp_opts = ipv4_packet(A, B, 6, 64, 0, &[1, 1, 1, 1], &l4);
    let tcp_short = ipv4_packet(A, B, 6, 64, 0, &[], &l4[..10]);
    let udp_short = ipv4_packet(A, B, 17, 64, 0, &[], &l4[..6]);
    let later_frag = ipv4_packet(A, B, 17, 64, 3, &[], &l4);
    let mut v6 = udp.clone();
    v6[0] = 0x65;
    let mut too_long_header = ipv4_packet(A, B, 17, 64, 0, &[], &l4[..4]);
    too_long_header[0] = 0x47;
    // A header length below 20 (IHL 4, and 0 on a 0x45-like byte of
    // another version) is no IPv4 header, whatever follows.
    let mut short_header = udp.clone();
    short_header[0] = 0x44;
    let mut zero_ihl = udp.clone();
    zero_ihl[0] = 0x40;
    let mut v5 = udp.clone();
    v5[0] = 0x55;
    let (out, drops) = mirror(&[
        udp.clone(),
        tcp_opts.clone(),
        tcp_short.clone(),
        udp_short.clone(),
        later_frag.clone(),
        v6,
        too_long_header,
        vec![0x45; 12],
        short_header,
        zero_ihl,
        v5,
    ]);
    let want = [
        swapped(udp, 20, true, false),
        swapped(tcp_opts, 24, true, true),
        swapped(tcp_short, 20, true, false),
        swapped(udp_short, 20, false, false),
        swapped(later_frag, 20, false, false),
    ];
    let got: Vec<Vec<u8>> = out.iter().map(|(d, _)| d.clone()).collect();
    assert_eq!(got, want);
    for (_, anno) in &out {
        assert_eq!(anno.octets(), A);
    }
    assert_eq!(drops.trim(), "6");
}

/// A Tee's outputs share one buffer, so IPMirror must mirror a copy and
/// leave the other branch's packet as it came: whichever branch it is on,
/// the clone's (Tee's first outputs) or the original's (its last, whose
/// header the clone made shared too).
#[test]
fn a_packet_a_tee_shares_is_mirrored_in_a_copy() {
    let l4: Vec<u8> = (1..=20).collect();
    let frames = [
        ipv4_packet(A, B, 17, 64, 0, &[], &l4[..8]),
        ipv4_packet(A, B, 6, 64, 0, &[], &l4),
    ];
    for mirrored in 0..2 {
        let mut r = from_config(&format!(
            "Idle -> t :: Tee(2); \
             t[{mirrored}] -> m :: IPMirror -> qm :: Queue(10) -> Discard; \
             t[{}] -> qp :: Queue(10) -> Discard;",
            1 - mirrored
        ));
        let mut b = Batch::new();
        for f in &frames {
            let mut p = Packet::from_slice(f);
            p.set_network_header(0, 20);
            b.push(p);
        }
        let t = r.find_element("t").unwrap();
        r.inject(t, 0, b);
        let mut data_of = |q: &str| -> Vec<Vec<u8>> {
            let q = r.find_element(q).unwrap();
            let b = r.pull_from(q, 0, 64).expect("queued packets");
            b.packets().iter().map(|p| p.data().to_vec()).collect()
        };
        let want = vec![
            swapped(frames[0].clone(), 20, true, false),
            swapped(frames[1].clone(), 20, true, true),
        ];
        assert_eq!(data_of("qm"), want, "mirrored on Tee output {mirrored}");
        assert_eq!(
            data_of("qp"),
            frames.to_vec(),
            "mirrored on Tee output {mirrored}"
        );
        assert_eq!(read(&mut r, "m.drops").trim(), "0");
    }
}

/// Click's IP_FIRSTFRAG tests the fragment offset alone: a first fragment
/// with MF set (DF too or not) gets its ports, and TCP its sequence
/// numbers, exchanged like an unfragmented packet. The expected bytes are
/// Click 2.1's output for these inputs (MarkIPHeader -> IPMirror ->
/// Print). Both of rclick's paths agreeing is not enough: the fast path
/// and the general one could both skip MF packets and their proptest
/// would still pass.
#[test]
fn first_fragments_with_more_fragments_set_mirror_their_ports() {
    let hex = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let tcp = "0a000002 0a000105 01020304 05060708 090a0b0c 50100000 00000000";
    let cases = [
        // TCP, MF, offset 0.
        (
            format!("45000028 00012000 40060000 {tcp}"),
            "45000028 00012000 40060000 0a000105 0a000002 03040102 090a0b0c 05060708 50100000 00000000",
        ),
        // TCP, DF and MF, offset 0.
        (
            format!("45000028 00016000 40060000 {tcp}"),
            "45000028 00016000 40060000 0a000105 0a000002 03040102 090a0b0c 05060708 50100000 00000000",
        ),
        // UDP, MF, offset 0.
        (
            "4500001c 00012000 40110000 0a000002 0a000105 01020304 05060708".to_string(),
            "4500001c 00012000 40110000 0a000105 0a000002 03040102 05060708",
        ),
        // TCP, MF, offset 1 (8 bytes): the addresses only.
        (
            format!("45000028 00012001 40060000 {tcp}"),
            "45000028 00012001 40060000 0a000105 0a000002 01020304 05060708 090a0b0c 50100000 00000000",
        ),
    ];
    let frames: Vec<Vec<u8>> = cases.iter().map(|(i, _)| hex(i)).collect();
    let (out, drops) = mirror(&frames);
    let got: Vec<Vec<u8>> = out.iter().map(|(d, _)| d.clone()).collect();
    let want: Vec<Vec<u8>> = cases.iter().map(|(_, o)| hex(o)).collect();
    assert_eq!(got, want);
    assert_eq!(drops.trim(), "0");
}
