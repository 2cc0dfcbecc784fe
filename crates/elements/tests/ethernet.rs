//! Ethernet switching and VLAN elements: learning and flooding from timed
//! traces, aging, ports blocked by Suppressors, spanning tree root election
//! among simulated bridges wired in one configuration, malformed BPDUs, and
//! VLAN tagging edge cases.

use std::path::{Path, PathBuf};

use rclick_core::StopReason;
use rclick_elements::testing::{from_config, read};

/// A scratch directory for this test process.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rclick-ethernet-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Writes a pcap (Ethernet link type) of `(time in µs, frame)` records.
fn write_pcap(path: &Path, frames: &[(u64, Vec<u8>)]) {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes());
    for (t, d) in frames {
        f.extend_from_slice(&((t / 1_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&((t % 1_000_000) as u32).to_le_bytes());
        f.extend_from_slice(&(d.len() as u32).to_le_bytes());
        f.extend_from_slice(&(d.len() as u32).to_le_bytes());
        f.extend_from_slice(d);
    }
    std::fs::write(path, f).expect("write pcap");
}

fn mac(n: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, n]
}

/// A 60-byte frame from host `src` to host `dst` (255: broadcast) that
/// enters the switch on `port` (the port number rides in byte 14, where
/// the test's Classifier reads it).
fn frame(port: u8, src: u8, dst: u8) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    let d = if dst == 255 { [0xff; 6] } else { mac(dst) };
    f[0..6].copy_from_slice(&d);
    f[6..12].copy_from_slice(&mac(src));
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = port;
    f
}

/// A four-port switch fed from a trace; output N is counted by cN.
fn switch_config(pcap: &Path, switch: &str, extra: &str) -> String {
    format!(
        "FromDump({}, STOP true, TIMING false)
           -> cl :: Classifier(14/00, 14/01, 14/02, 14/03);
         sw :: {switch};
         cl[0] -> [0]sw; cl[1] -> [1]sw; cl[2] -> [2]sw; cl[3] -> [3]sw;
         sw[0] -> c0 :: Counter -> Discard; sw[1] -> c1 :: Counter -> Discard;
         sw[2] -> c2 :: Counter -> Discard; sw[3] -> c3 :: Counter -> Discard;
         {extra}",
        pcap.display()
    )
}

fn counts(r: &mut rclick_core::Router) -> [u64; 4] {
    let mut c = [0; 4];
    for (i, x) in c.iter_mut().enumerate() {
        *x = read(r, &format!("c{i}.count"))
            .trim()
            .parse()
            .expect("count");
    }
    c
}

fn run(r: &mut rclick_core::Router) {
    assert_eq!(r.run_limited(10_000_000), StopReason::Stopped);
}

#[test]
fn learning_stops_flooding() {
    let d = scratch("learn");
    let p = d.join("in.pcap");
    // Host 1 on port 0, host 2 on port 1, host 3 on port 2.
    write_pcap(
        &p,
        &[
            (1_000_000, frame(0, 1, 2)),   // unknown: flooded to 1, 2, 3
            (1_100_000, frame(1, 2, 1)),   // 1 known: to port 0 only
            (1_200_000, frame(0, 1, 2)),   // 2 known: to port 1 only
            (1_300_000, frame(2, 3, 255)), // broadcast: flooded to 0, 1, 3
            (1_400_000, frame(0, 1, 1)),   // back to its own port: dropped
        ],
    );
    let mut r = from_config(&switch_config(&p, "EtherSwitch", ""));
    run(&mut r);
    assert_eq!(counts(&mut r), [1 + 1, 1 + 1 + 1, 1, 1 + 1]);
    let table = read(&mut r, "sw.table");
    let mut lines: Vec<&str> = table.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "02-00-00-00-00-01 0",
            "02-00-00-00-00-02 1",
            "02-00-00-00-00-03 2"
        ]
    );
}

#[test]
fn aging_forgets_after_timeout() {
    let d = scratch("aging");
    let p = d.join("in.pcap");
    write_pcap(
        &p,
        &[
            (1_000_000, frame(1, 2, 255)), // learn host 2 on port 1 at t=1
            (5_000_000, frame(0, 1, 2)),   // t=5 < 1+10: to port 1 only
            (11_000_000, frame(0, 1, 2)),  // t=11 = 1+10: expired, flooded
            (11_500_000, frame(0, 1, 2)),  // still unknown: flooded
        ],
    );
    let mut r = from_config(&switch_config(&p, "EtherSwitch(TIMEOUT 10)", ""));
    run(&mut r);
    // Broadcast: 0, 2, 3; then 1; then two floods to 1, 2, 3.
    assert_eq!(counts(&mut r), [1, 1 + 2, 1 + 2, 1 + 2]);
    assert_eq!(read(&mut r, "sw.timeout").trim(), "10");
    // TIMEOUT 0: a hub, nothing learned.
    let mut r = from_config(&switch_config(&p, "EtherSwitch(TIMEOUT 0)", ""));
    run(&mut r);
    assert_eq!(counts(&mut r), [1, 3, 4, 4]);
    assert_eq!(read(&mut r, "sw.table"), "");
}

#[test]
fn suppressed_ports_are_skipped_by_floods() {
    let d = scratch("suppress");
    let p = d.join("in.pcap");
    write_pcap(
        &p,
        &[
            (1_000_000, frame(0, 1, 255)),
            (1_100_000, frame(2, 3, 1)), // from a suppressed port: never learned
            (1_200_000, frame(0, 1, 3)), // 3 unknown: flooded (not to port 2)
        ],
    );
    let conf = "fd :: FromDump(@P@, STOP true, TIMING false, ACTIVE false)
           -> cl :: Classifier(14/00, 14/01, 14/02, 14/03);
         in :: Suppressor; out :: Suppressor; sw :: EtherSwitch;
         cl[0] -> [0]in[0] -> [0]sw[0] -> [0]out[0] -> c0 :: Counter -> Discard;
         cl[1] -> [1]in[1] -> [1]sw[1] -> [1]out[1] -> c1 :: Counter -> Discard;
         cl[2] -> [2]in[2] -> [2]sw[2] -> [2]out[2] -> c2 :: Counter -> Discard;
         cl[3] -> [3]in[3] -> [3]sw[3] -> [3]out[3] -> c3 :: Counter -> Discard;
         Script(write in.active2 false, write out.active2 false, write fd.active true);"
        .replace("@P@", &p.display().to_string());
    let mut r = from_config(&conf);
    run(&mut r);
    assert_eq!(counts(&mut r), [0, 2, 0, 2]);
    assert_eq!(read(&mut r, "in.active2").trim(), "false");
    assert_eq!(read(&mut r, "in.active1").trim(), "true");
    assert!(!read(&mut r, "sw.table").contains("02-00-00-00-00-03"));
}

#[test]
fn listen_port_sees_every_frame() {
    let d = scratch("listen");
    let p = d.join("in.pcap");
    write_pcap(
        &p,
        &[
            (1_000_000, frame(0, 1, 2)), // flooded: 1, 2, listen
            (1_100_000, frame(1, 2, 1)), // forwarded: 0, and listen
            (1_200_000, frame(1, 2, 2)), // its own port: listen only
        ],
    );
    let conf = format!(
        "FromDump({}, STOP true, TIMING false) -> cl :: Classifier(14/00, 14/01, 14/02);
         sw :: ListenEtherSwitch;
         cl[0] -> [0]sw; cl[1] -> [1]sw; cl[2] -> [2]sw;
         sw[0] -> c0 :: Counter -> Discard; sw[1] -> c1 :: Counter -> Discard;
         sw[2] -> c2 :: Counter -> Discard; sw[3] -> c3 :: Counter -> Discard;",
        p.display()
    );
    let mut r = from_config(&conf);
    run(&mut r);
    assert_eq!(counts(&mut r), [1, 1, 1, 3]);
}

#[test]
fn short_frames_are_counted_not_forwarded() {
    let d = scratch("short");
    let p = d.join("in.pcap");
    write_pcap(&p, &[(1_000_000, vec![0u8; 13]), (1_000_100, vec![0u8; 0])]);
    let conf = format!(
        "FromDump({}, STOP true, TIMING false) -> sw :: EtherSwitch;
         Idle -> [1]sw; sw[0] -> c0 :: Counter -> Discard; sw[1] -> c1 :: Counter -> Discard;",
        p.display()
    );
    let mut r = from_config(&conf);
    run(&mut r);
    assert_eq!(read(&mut r, "sw.drops").trim(), "2");
    assert_eq!(read(&mut r, "c1.count").trim(), "0");
}

/// Three bridges in a triangle, each a two-port Figure 16 switch.
fn triangle(prio_a: u32, prio_b: u32, prio_c: u32, extra: &str) -> String {
    format!(
        "elementclass Bridge {{ ADDR $a, PRIO $p |
           c0 :: Classifier(14/4242, -); c1 :: Classifier(14/4242, -);
           s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
           st :: EtherSpanTree($a, in, out, s, PRIORITY $p);
           input[0] -> c0; input[1] -> c1;
           c0[0] -> [0]st[0] -> [0]output; c1[0] -> [1]st[1] -> [1]output;
           c0[1] -> [0]in[0] -> [0]s[0] -> [0]out[0] -> [0]output;
           c1[1] -> [1]in[1] -> [1]s[1] -> [1]out[1] -> [1]output;
         }}
         a :: Bridge(ADDR 02:00:00:00:00:0a, PRIO {prio_a});
         b :: Bridge(ADDR 02:00:00:00:00:0b, PRIO {prio_b});
         c :: Bridge(ADDR 02:00:00:00:00:0c, PRIO {prio_c});
         a[0] -> [1]b; b[1] -> [0]a;
         b[0] -> [1]c; c[1] -> [0]b;
         c[0] -> [1]a; a[1] -> [0]c;
         {extra}"
    )
}

fn bridge_field(r: &mut rclick_core::Router, b: &str, field: &str) -> String {
    let text = read(r, &format!("{b}/st.bridge"));
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field} ")))
        .unwrap_or_else(|| panic!("{b}: no {field} in {text}"))
        .to_string()
}

fn blocked_ports(r: &mut rclick_core::Router) -> Vec<String> {
    let mut v = Vec::new();
    for b in ["a", "b", "c"] {
        for line in read(r, &format!("{b}/st.port_states")).lines() {
            if line.contains("blocked") {
                v.push(format!("{b}:{line}"));
            }
        }
    }
    v
}

#[test]
fn spanning_tree_elects_lowest_bridge_id_and_blocks_one_port() {
    for (prios, root) in [
        ((0x8000, 0x8000, 0x8000), "a"), // equal priorities: lowest address
        ((0x9000, 0x1000, 0x8000), "b"),
        ((0x9000, 0x9000, 0x8000), "c"),
    ] {
        let conf = triangle(prios.0, prios.1, prios.2, "DriverManager(wait 60s, stop);");
        let mut r = from_config(&conf);
        run(&mut r);
        let root_id = bridge_field(&mut r, root, "bridge_id");
        for b in ["a", "b", "c"] {
            assert_eq!(
                bridge_field(&mut r, b, "root_id"),
                root_id,
                "root seen by {b}"
            );
            let rp = bridge_field(&mut r, b, "root_port");
            assert_eq!(rp == "-1", b == root, "{b} root port {rp}");
        }
        let blocked = blocked_ports(&mut r);
        assert_eq!(blocked.len(), 1, "exactly one blocked port: {blocked:?}");
        // The blocked port is on the link between the two non-root bridges,
        // at the bridge with the higher ID.
        assert!(!blocked[0].starts_with(root), "{blocked:?}");
        // Its suppressors stop traffic both ways; every other port forwards.
        let (b, line) = blocked[0].split_once(':').expect("bridge:line");
        let port = line.split(' ').next().expect("port");
        assert_eq!(
            read(&mut r, &format!("{b}/in.active{port}")).trim(),
            "false"
        );
        assert_eq!(
            read(&mut r, &format!("{b}/out.active{port}")).trim(),
            "false"
        );
        for x in ["a", "b", "c"] {
            for line in read(&mut r, &format!("{x}/st.port_states")).lines() {
                if !line.contains("blocked") {
                    assert!(line.contains("forwarding"), "{x}: {line}");
                }
            }
        }
    }
}

#[test]
fn spanning_tree_ports_move_through_listening_and_learning() {
    // FORWARD_DELAY 15 s, checked every 2 s hello: listening until 16 s,
    // learning until 32 s, then forwarding.
    for (secs, state) in [(10, "listening"), (20, "learning"), (35, "forwarding")] {
        let conf = triangle(
            0x8000,
            0x8000,
            0x8000,
            &format!("DriverManager(wait {secs}s, stop);"),
        );
        let mut r = from_config(&conf);
        run(&mut r);
        // The root (a) keeps both ports; their state depends only on time.
        let states = read(&mut r, "a/st.port_states");
        assert_eq!(
            states,
            format!("0 {state} designated\n1 {state} designated\n"),
            "at {secs} s"
        );
        let want_in = if state == "listening" {
            "false"
        } else {
            "true"
        };
        let want_out = if state == "forwarding" {
            "true"
        } else {
            "false"
        };
        assert_eq!(read(&mut r, "a/in.active0").trim(), want_in, "at {secs} s");
        assert_eq!(
            read(&mut r, "a/out.active0").trim(),
            want_out,
            "at {secs} s"
        );
    }
}

#[test]
fn root_failure_reconverges() {
    // a is the root; after 40 s its links are cut (Suppressors on the
    // wires drop everything) and b and c must elect b.
    let conf = "elementclass Bridge { ADDR $a, PRIO $p |
           c0 :: Classifier(14/4242, -); c1 :: Classifier(14/4242, -);
           s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
           st :: EtherSpanTree($a, in, out, s, PRIORITY $p);
           input[0] -> c0; input[1] -> c1;
           c0[0] -> [0]st[0] -> [0]output; c1[0] -> [1]st[1] -> [1]output;
           c0[1] -> [0]in[0] -> [0]s[0] -> [0]out[0] -> [0]output;
           c1[1] -> [1]in[1] -> [1]s[1] -> [1]out[1] -> [1]output;
         }
         a :: Bridge(ADDR 02:00:00:00:00:0a, PRIO 0x1000);
         b :: Bridge(ADDR 02:00:00:00:00:0b, PRIO 0x2000);
         c :: Bridge(ADDR 02:00:00:00:00:0c, PRIO 0x3000);
         cut :: Suppressor;
         a[0] -> [0]cut[0] -> [1]b; b[1] -> [1]cut[1] -> [0]a;
         b[0] -> [1]c; c[1] -> [0]b;
         c[0] -> [2]cut[2] -> [1]a; a[1] -> [3]cut[3] -> [0]c;
         DriverManager(wait 40s, write cut.active0 false, write cut.active1 false,
           write cut.active2 false, write cut.active3 false, wait 80s, stop);";
    let mut r = from_config(conf);
    run(&mut r);
    let b_id = bridge_field(&mut r, "b", "bridge_id");
    assert_eq!(bridge_field(&mut r, "c", "root_id"), b_id);
    assert_eq!(bridge_field(&mut r, "b", "root_port"), "-1");
    assert_eq!(bridge_field(&mut r, "c", "root_port"), "1");
}

#[test]
fn designated_bridge_answers_even_when_its_upstream_id_is_high() {
    // A ring of five bridges: r (root) - u - a - n - m - r. a and n both
    // reach the root at cost 2; a has the lower ID, so a is the designated
    // bridge of the a-n link and n must block its port there. a's own
    // upstream u has the highest ID of all. For the first 40 s the a -> n
    // direction of the link drops everything, so a hears n's (worse)
    // advertisement before n hears a's. From then on a must still
    // advertise on the a-n link (what it sends carries a's ID, not u's):
    // if it compares u's ID with n's and stays silent, n believes itself
    // designated too and the ring has no blocked port (a loop).
    let conf = "elementclass Bridge { ADDR $a, PRIO $p |
           c0 :: Classifier(14/4242, -); c1 :: Classifier(14/4242, -);
           s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
           st :: EtherSpanTree($a, in, out, s, PRIORITY $p);
           input[0] -> c0; input[1] -> c1;
           c0[0] -> [0]st[0] -> [0]output; c1[0] -> [1]st[1] -> [1]output;
           c0[1] -> [0]in[0] -> [0]s[0] -> [0]out[0] -> [0]output;
           c1[1] -> [1]in[1] -> [1]s[1] -> [1]out[1] -> [1]output;
         }
         r :: Bridge(ADDR 02:00:00:00:00:01, PRIO 0x1000);
         a :: Bridge(ADDR 02:00:00:00:00:0a, PRIO 0x2000);
         n :: Bridge(ADDR 02:00:00:00:00:0e, PRIO 0x3000);
         m :: Bridge(ADDR 02:00:00:00:00:0d, PRIO 0x4000);
         u :: Bridge(ADDR 02:00:00:00:00:0b, PRIO 0x9000);
         cut :: Suppressor;
         r[0] -> [0]u; u[0] -> [0]r;
         u[1] -> [0]a; a[0] -> [1]u;
         a[1] -> cut -> [1]n; n[1] -> [1]a;
         n[0] -> [1]m; m[1] -> [0]n;
         m[0] -> [1]r; r[1] -> [0]m;
         DriverManager(write cut.active0 false, wait 40s, write cut.active0 true,
           wait 110s, stop);";
    let mut r = from_config(conf);
    run(&mut r);
    let mut not_forwarding = Vec::new();
    for b in ["r", "u", "a", "n", "m"] {
        for line in read(&mut r, &format!("{b}/st.port_states")).lines() {
            if !line.contains("forwarding") {
                not_forwarding.push(format!("{b}:{line}"));
            }
        }
    }
    assert_eq!(not_forwarding, vec!["n:1 blocking blocked".to_string()]);
}

#[test]
fn malformed_bpdus_are_counted_not_fatal() {
    let d = scratch("bpdu");
    let p = d.join("in.pcap");
    let mut good = vec![0u8; 60];
    good[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0]);
    good[6..12].copy_from_slice(&mac(9));
    good[12..14].copy_from_slice(&38u16.to_be_bytes());
    good[14..17].copy_from_slice(&[0x42, 0x42, 0x03]);
    // Root 0x1000/02-00-00-00-00-09, cost 4, bridge the same, port 0x8001.
    let id: u64 = (0x1000 << 48) | 0x0200_0000_0009;
    good[22..30].copy_from_slice(&id.to_be_bytes());
    good[30..34].copy_from_slice(&4u32.to_be_bytes());
    good[34..42].copy_from_slice(&id.to_be_bytes());
    good[42..44].copy_from_slice(&0x8001u16.to_be_bytes());
    good[46..48].copy_from_slice(&(20u16 * 256).to_be_bytes());
    good[48..50].copy_from_slice(&(2u16 * 256).to_be_bytes());
    good[50..52].copy_from_slice(&(15u16 * 256).to_be_bytes());
    let mut frames = vec![];
    for n in [0usize, 14, 17, 20, 21, 40, 51] {
        frames.push((1_000_000 + n as u64, good[..n].to_vec()));
    }
    let mut bad_llc = good.clone();
    bad_llc[16] = 0x13;
    frames.push((1_100_000, bad_llc));
    let mut rst = good.clone();
    rst[20] = 0x02;
    frames.push((1_100_001, rst));
    frames.push((1_200_000, good.clone()));
    write_pcap(&p, &frames);
    let conf = format!(
        "s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
         st :: EtherSpanTree(02:00:00:00:00:02, in, out, s);
         FromDump({}, STOP true, TIMING false) -> [0]st[0] -> Discard;
         Idle -> [1]st[1] -> Discard;
         Idle -> in -> s -> out -> Discard; Idle -> [1]in[1] -> [1]s[1] -> [1]out[1] -> Discard;",
        p.display()
    );
    let mut r = from_config(&conf);
    run(&mut r);
    // Every prefix shorter than a configuration BPDU (52 bytes), the bad
    // LLC header and the unknown (RST) type are bad; the good BPDU wins.
    assert_eq!(read(&mut r, "st.bad").trim(), "9");
    assert_eq!(bridge_field_single(&mut r, "root_id"), format!("{id:016x}"));
    assert_eq!(bridge_field_single(&mut r, "root_port"), "0");
    assert_eq!(bridge_field_single(&mut r, "root_cost"), "5");
}

fn bridge_field_single(r: &mut rclick_core::Router, field: &str) -> String {
    let text = read(r, "st.bridge");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field} ")))
        .unwrap_or_else(|| panic!("no {field} in {text}"))
        .to_string()
}

/// Runs `chain` on one frame and returns what Print shows (its data).
fn through(data: &str, chain: &str) -> Vec<String> {
    let conf = format!(
        "InfiniteSource(DATA \\<{data}>, LIMIT 1, STOP true) {chain} -> Print(out, 80) -> Discard;"
    );
    let mut r = from_config(&conf);
    run(&mut r);
    r.take_chatter()
        .into_iter()
        .filter_map(|l| l.strip_prefix("out: ").map(|s| s.trim().to_string()))
        .collect()
}

const ETH: &str = "02020202 02020101 01010101 0800 aaab";

#[test]
fn vlan_priority_bits_and_vlan_zero() {
    // PCP 5 on VLAN 7: TCI 0xa007.
    let out = through(ETH, "-> VLANEncap(VLAN_ID 7, VLAN_PCP 5)");
    assert_eq!(out, ["20 | 02020202 02020101 01010101 8100a007 0800aaab"]);
    // VLAN 0 is the native VLAN by default: untagged, even with a priority.
    let out = through(ETH, "-> VLANEncap(VLAN_ID 0, VLAN_PCP 5)");
    assert_eq!(out, ["16 | 02020202 02020101 01010101 0800aaab"]);
    // NATIVE_VLAN -1: a priority-only tag.
    let out = through(ETH, "-> VLANEncap(VLAN_ID 0, VLAN_PCP 5, NATIVE_VLAN -1)");
    assert_eq!(out, ["20 | 02020202 02020101 01010101 8100a000 0800aaab"]);
    // VLAN_TCI with PCP ORed on top; DEI kept.
    let out = through(ETH, "-> VLANEncap(0x1234, 4)");
    assert_eq!(out, ["20 | 02020202 02020101 01010101 81009234 0800aaab"]);
}

#[test]
fn vlan_double_tags() {
    // Outer 802.1ad tag over an inner 802.1Q tag; VLANDecap removes only
    // the outer one, and a second VLANDecap the inner one.
    let out = through(
        ETH,
        "-> VLANEncap(VLAN_ID 10) -> VLANEncap(VLAN_ID 20, ETHERTYPE 0x88a8) -> Print(a, 80)
         -> VLANDecap(ETHERTYPE 0x88a8) -> Print(b, 80) -> VLANDecap -> SetVLANAnno(0) -> VLANEncap(ANNO, NATIVE_VLAN -1)",
    );
    assert_eq!(out, ["20 | 02020202 02020101 01010101 81000000 0800aaab"]);
    let conf = format!(
        "InfiniteSource(DATA \\<{ETH}>, LIMIT 1, STOP true)
           -> VLANEncap(VLAN_ID 10) -> VLANEncap(VLAN_ID 20, ETHERTYPE 0x88a8) -> Print(a, 80)
           -> VLANDecap(ETHERTYPE 0x88a8) -> Print(b, 80) -> VLANDecap -> Print(c, 80)
           -> VLANEncap(ANNO) -> Print(d, 80) -> Discard;"
    );
    let mut r = from_config(&conf);
    run(&mut r);
    let lines: Vec<String> = r.take_chatter();
    let want = [
        "a:   24 | 02020202 02020101 01010101 88a80014 8100000a 0800aaab",
        "b:   20 | 02020202 02020101 01010101 8100000a 0800aaab",
        "c:   16 | 02020202 02020101 01010101 0800aaab",
        // The annotation holds the last removed tag (VLAN 10).
        "d:   20 | 02020202 02020101 01010101 8100000a 0800aaab",
    ];
    for w in want {
        assert!(
            lines.iter().any(|l| l.trim_end() == w),
            "{w} not in {lines:?}"
        );
    }
}

#[test]
fn vlan_truncated_frames_dropped() {
    // A tagged EtherType with no room for the tag: VLANDecap and
    // StripEtherVLANHeader drop it; VLANEncap drops non-Ethernet frames.
    assert!(through("02020202 02020101 01010101 8100", "-> VLANDecap").is_empty());
    assert!(through(
        "02020202 02020101 01010101 8100 00",
        "-> StripEtherVLANHeader"
    )
    .is_empty());
    assert!(through("0001020304", "-> VLANEncap(5)").is_empty());
    // Untagged with a negative NATIVE_VLAN: to output 1.
    let out = through(ETH, "-> s :: StripEtherVLANHeader(-1) -> Discard; s[1]");
    assert_eq!(out, ["16 | 02020202 02020101 01010101 0800aaab"]);
}

#[test]
fn ensure_ether_adds_or_keeps_headers() {
    let ip = "45000014 00000000 40110000 0a000001 0a000002";
    // Network header at 0 with no Ethernet before it: a new header.
    let out = through(
        ip,
        "-> MarkIPHeader -> EnsureEther(0x0800, 0:1:2:3:4:5, 0:6:7:8:9:a)",
    );
    assert_eq!(
        out,
        ["34 | 00060708 090a0001 02030405 08004500 00140000 00004011 00000a00 00010a00 0002"]
    );
    // A stripped Ethernet header is put back.
    let eth_ip = format!("02020202 02020101 01010101 0800 {ip}");
    let out = through(&eth_ip, "-> Strip(14) -> MarkIPHeader -> EnsureEther");
    assert_eq!(
        out,
        ["34 | 02020202 02020101 01010101 08004500 00140000 00004011 00000a00 00010a00 0002"]
    );
}

#[test]
fn switch_configurations_in_conf_parse() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let reg = rclick_elements::registry();
    for f in ["conf/switch-stp.click", "conf/switch-vlan.click"] {
        let text = std::fs::read_to_string(root.join(f)).expect("conf file");
        let outcome =
            rclick_lang::parse_router(&text, f, &reg, &rclick_lang::ParseOptions::default());
        let errors: Vec<String> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.to_string())
            .collect();
        assert!(errors.is_empty(), "{f}: {errors:?}");
        assert!(outcome.spec.is_some(), "{f}");
    }
}

/// A configuration BPDU frame (times in whole seconds).
fn config_bpdu(root: u64, cost: u32, bridge: u64, port: u16, age: u16, max_age: u16) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0]);
    f[6..12].copy_from_slice(&bridge.to_be_bytes()[2..]);
    f[12..14].copy_from_slice(&38u16.to_be_bytes());
    f[14..17].copy_from_slice(&[0x42, 0x42, 0x03]);
    f[22..30].copy_from_slice(&root.to_be_bytes());
    f[30..34].copy_from_slice(&cost.to_be_bytes());
    f[34..42].copy_from_slice(&bridge.to_be_bytes());
    f[42..44].copy_from_slice(&port.to_be_bytes());
    f[44..46].copy_from_slice(&(age * 256).to_be_bytes());
    f[46..48].copy_from_slice(&(max_age * 256).to_be_bytes());
    f[48..50].copy_from_slice(&(2u16 * 256).to_be_bytes());
    f[50..52].copy_from_slice(&(15u16 * 256).to_be_bytes());
    f
}

/// A two-port bridge (ID 0xdead/02:00:00:00:00:02) that hears `port0`
/// on port 0 and `port1` on port 1, all before its first hello.
fn bridge_hearing(name: &str, port0: &[Vec<u8>], port1: &[Vec<u8>]) -> rclick_core::Router {
    let d = scratch(name);
    let (p0, p1) = (d.join("p0.pcap"), d.join("p1.pcap"));
    let stamp = |v: &[Vec<u8>]| -> Vec<(u64, Vec<u8>)> {
        v.iter()
            .enumerate()
            .map(|(i, f)| (1_000_000 + i as u64, f.clone()))
            .collect()
    };
    write_pcap(&p0, &stamp(port0));
    write_pcap(&p1, &stamp(port1));
    let conf = format!(
        "s :: EtherSwitch; in :: Suppressor; out :: Suppressor;
         st :: EtherSpanTree(02:00:00:00:00:02, in, out, s);
         FromDump({}, STOP true, TIMING false) -> [0]st[0] -> Discard;
         FromDump({}, TIMING false) -> [1]st[1] -> Discard;
         Idle -> in -> s -> out -> Discard; Idle -> [1]in[1] -> [1]s[1] -> [1]out[1] -> Discard;",
        p0.display(),
        p1.display()
    );
    let mut r = from_config(&conf);
    run(&mut r);
    r
}

#[test]
fn root_path_cost_does_not_wrap() {
    // The same root heard at cost 0xffffffff on port 0 and at cost 5 on
    // port 1: adding the port's cost must not turn the first into 0.
    let root: u64 = (0x1000 << 48) | 0x0200_0000_0009;
    let far: u64 = (0x8000 << 48) | 0x0200_0000_0007;
    let near: u64 = (0x8000 << 48) | 0x0200_0000_0008;
    let mut r = bridge_hearing(
        "costwrap",
        &[config_bpdu(root, u32::MAX, far, 0x8001, 1, 20)],
        &[config_bpdu(root, 5, near, 0x8001, 1, 20)],
    );
    assert_eq!(
        bridge_field_single(&mut r, "root_id"),
        format!("{root:016x}")
    );
    assert_eq!(bridge_field_single(&mut r, "root_port"), "1");
    assert_eq!(bridge_field_single(&mut r, "root_cost"), "6");
}

#[test]
fn expired_bpdus_are_ignored() {
    // A better root, but the BPDU's message age (21 s) is past its max age
    // (20 s): the information has already expired and must not be used
    // (Linux bridges discard such BPDUs too).
    let root: u64 = (0x1000 << 48) | 0x0200_0000_0009;
    let mut r = bridge_hearing(
        "expired",
        &[config_bpdu(root, 4, root, 0x8001, 21, 20)],
        &[],
    );
    assert_eq!(bridge_field_single(&mut r, "root_port"), "-1");
    assert_eq!(
        bridge_field_single(&mut r, "root_id"),
        bridge_field_single(&mut r, "bridge_id")
    );
}

/// conf/switch-stp.click with its devices replaced by traces: port 0
/// reads `in0.pcap`, each port N writes `outN.pcap`.
fn switch_stp_on_traces(d: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = std::fs::read_to_string(root.join("conf/switch-stp.click")).expect("conf");
    for n in 0..3 {
        let from = format!("FromDevice($DEV{n}, PROMISC true)");
        let to = format!("ToDevice($DEV{n})");
        assert!(text.contains(&from) && text.contains(&to), "{from} / {to}");
        let source = if n == 0 {
            format!("FromDump({}, TIMING true)", d.join("in0.pcap").display())
        } else {
            "Idle".to_string()
        };
        text = text.replace(&from, &source).replace(
            &to,
            &format!(
                "ToDump({}, ENCAP ETHER)",
                d.join(format!("out{n}.pcap")).display()
            ),
        );
    }
    format!("{text}\nDriverManager(wait 60s, stop);")
}

fn pcap_frames(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).expect("pcap");
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let caplen = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push(bytes[at + 16..at + 16 + caplen].to_vec());
        at += 16 + caplen;
    }
    out
}

#[test]
fn the_stp_switch_never_forwards_link_local_group_frames() {
    // Frames arrive at 40 s, when the ports (of a lone bridge, the root)
    // have been forwarding for a few seconds: a broadcast is flooded, but LLDP
    // (01:80:c2:00:00:0e), a pause frame (..:01) and a frame to ..:03
    // (802.1X) must stay on their link (802.1D 7.12.6).
    let d = scratch("linklocal");
    let mut lldp = frame(0, 1, 255);
    lldp[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    let mut pause = lldp.clone();
    pause[5] = 0x01;
    pause[12..14].copy_from_slice(&[0x88, 0x08]);
    let mut eapol = lldp.clone();
    eapol[5] = 0x03;
    eapol[12..14].copy_from_slice(&[0x88, 0x8e]);
    let broadcast = frame(0, 1, 255);
    // 01:80:c2:00:00:10 is outside the reserved block: flooded.
    let mut outside = lldp.clone();
    outside[5] = 0x10;
    write_pcap(
        &d.join("in0.pcap"),
        &[
            // FromDump's TIMING counts from the first frame: this one, at
            // 0 s, meets a listening port and goes nowhere.
            (0, frame(0, 9, 8)),
            (40_000_000, lldp),
            (40_000_001, pause),
            (40_000_002, eapol),
            (40_000_003, broadcast.clone()),
            (40_000_004, outside.clone()),
        ],
    );
    let mut r = from_config(&switch_stp_on_traces(&d));
    run(&mut r);
    assert_eq!(read(&mut r, "local.count").trim(), "3");
    // ToDump writes its file out at cleanup.
    drop(r);
    for n in [1, 2] {
        // Whatever else a port sent (its own BPDUs), the data frames it
        // forwarded are exactly the broadcast and the non-reserved group.
        let data: Vec<Vec<u8>> = pcap_frames(&d.join(format!("out{n}.pcap")))
            .into_iter()
            .filter(|f| !(f[0..6] == [0x01, 0x80, 0xc2, 0, 0, 0] && f[14..16] == [0x42, 0x42]))
            .collect();
        assert_eq!(data, vec![broadcast.clone(), outside.clone()], "port {n}");
    }
}
