//! FromDump and ToDump: round trips, truncated and malformed files, pcapng
//! input, link types and FORCE_IP, timing under simulated time, stopping.

use std::path::PathBuf;

use rclick_core::packet::anno;
use rclick_core::{Packet, Router, StopReason, Timestamp};
use rclick_elements::testing::{build, spec, try_build};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rclick-dump-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn ts(sec: i64, usec: i64) -> Timestamp {
    Timestamp::from_sec_nsec(sec, usec * 1000)
}

/// Packets with distinct contents, lengths and timestamps.
fn sample_packets() -> Vec<(Vec<u8>, Timestamp, u32)> {
    (0..20u32)
        .map(|i| {
            let len = 14 + (i as usize * 37) % 120;
            let data: Vec<u8> = (0..len).map(|k| (k as u32 * 7 + i) as u8).collect();
            (
                data,
                ts(1_600_000_000 + i as i64, (i as i64 * 12345) % 1_000_000),
                i % 3,
            )
        })
        .collect()
}

/// Writes packets through a ToDump with `config`; returns its count.
fn write_dump(config: &str, packets: &[(Vec<u8>, Timestamp, u32)]) -> String {
    let mut r = build(spec(
        &[
            ("td", "ToDump", config),
            ("idle", "InfiniteSource", "ACTIVE false"),
        ],
        &[(1, 0, 0, 0)],
    ));
    for (data, t, extra) in packets {
        let mut p = Packet::from_slice(data);
        p.set_timestamp_anno(*t);
        p.set_anno_bytes(anno::EXTRA_LENGTH, &extra.to_ne_bytes());
        r.inject_packet(0, 0, p);
    }
    let count = r.read_handler("td.count", None).unwrap();
    r.cleanup();
    count
}

/// FromDump(config) -> Queue; runs; returns the router (queue index 1).
fn read_dump(config: &str) -> (Router, StopReason) {
    let mut r = build(spec(
        &[
            ("fd", "FromDump", config),
            ("q", "Queue", "10000"),
            ("u", "Unqueue", "ACTIVE false"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    let why = r.run();
    (r, why)
}

fn drain(r: &mut Router, q: usize) -> Vec<Packet> {
    let mut out = Vec::new();
    while let Some(b) = r.pull_from(q, 0, 64) {
        out.extend(b);
    }
    out
}

#[test]
fn round_trip_bytes_timestamps_extra_length() {
    let f = tmp("roundtrip.pcap");
    let pkts = sample_packets();
    assert_eq!(write_dump(&format!("{}", f.display()), &pkts), "20");
    let (mut r, why) = read_dump(&format!("{}, STOP true", f.display()));
    assert_eq!(why, StopReason::Stopped);
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "20");
    assert_eq!(r.read_handler("fd.encap", None).unwrap(), "ETHER");
    let size = std::fs::metadata(&f).unwrap().len();
    assert_eq!(
        r.read_handler("fd.filesize", None).unwrap(),
        size.to_string()
    );
    assert_eq!(
        r.read_handler("fd.filepos", None).unwrap(),
        size.to_string()
    );
    let got = drain(&mut r, 1);
    assert_eq!(got.len(), pkts.len());
    for (p, (data, t, extra)) in got.iter().zip(&pkts) {
        assert_eq!(p.data(), &data[..]);
        assert_eq!(p.timestamp_anno(), *t);
        assert_eq!(
            u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH)),
            *extra
        );
        // No FORCE_IP on Ethernet: no network header.
        assert_eq!(p.network_offset(), None);
    }
}

#[test]
fn snaplen_truncates_and_records_wire_length() {
    let f = tmp("snaplen.pcap");
    let pkts = sample_packets();
    write_dump(&format!("{}, 20, EXTRA_LENGTH false", f.display()), &pkts);
    let (mut r, _) = read_dump(&format!("{}, STOP true", f.display()));
    for (p, (data, _, _)) in drain(&mut r, 1).iter().zip(&pkts) {
        assert_eq!(p.data(), &data[..data.len().min(20)]);
        let extra = u32::from_ne_bytes(p.anno_bytes::<4>(anno::EXTRA_LENGTH));
        assert_eq!(p.len() + extra as usize, data.len());
    }
}

#[test]
fn nanosecond_files_keep_nanoseconds() {
    let f = tmp("nano.pcap");
    let t = Timestamp::from_sec_nsec(1_700_000_000, 123_456_789);
    write_dump(
        &format!("{}, NANO true", f.display()),
        &[(vec![1; 30], t, 0)],
    );
    let (mut r, _) = read_dump(&format!("{}, STOP true", f.display()));
    assert_eq!(drain(&mut r, 1)[0].timestamp_anno(), t);
}

#[test]
fn truncated_file_reports_and_stops() {
    let f = tmp("truncated.pcap");
    write_dump(&format!("{}", f.display()), &sample_packets());
    let bytes = std::fs::read(&f).unwrap();
    // Cut inside the fifth packet's data, then inside a record header.
    let first_four: usize = 24
        + sample_packets()[..4]
            .iter()
            .map(|p| 16 + p.0.len())
            .sum::<usize>();
    for (cut, msg) in [
        (first_four + 20, "short packet"),
        (first_four + 7, "short packet header"),
    ] {
        let g = tmp(&format!("truncated-{cut}.pcap"));
        std::fs::write(&g, &bytes[..cut]).unwrap();
        let (mut r, why) = read_dump(&format!("{}, STOP true", g.display()));
        assert_eq!(why, StopReason::Stopped);
        assert_eq!(r.read_handler("fd.count", None).unwrap(), "4");
        let chatter = r.take_chatter().join("\n");
        assert!(chatter.contains(msg), "{chatter}");
    }
}

#[test]
fn malformed_files_fail_or_stop_without_panicking() {
    let bad = tmp("bad.pcap");
    std::fs::write(&bad, b"this is not a pcap file at all").unwrap();
    let e = try_build(spec(
        &[
            ("fd", "FromDump", &bad.display().to_string()),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0)],
    ))
    .err()
    .unwrap_or_default()
    .join("\n");
    assert!(e.contains("not a tcpdump file (bad magic number)"), "{e}");
    let missing = try_build(spec(
        &[
            ("fd", "FromDump", "/nonexistent/x.pcap"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0)],
    ));
    assert!(missing.is_err());
    // A huge caplen is rejected, not allocated.
    let mut h = pcap_header(1);
    h.extend_from_slice(&[
        0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
    ]);
    let g = tmp("hugecaplen.pcap");
    std::fs::write(&g, &h).unwrap();
    let (r, why) = read_dump(&format!("{}, STOP true", g.display()));
    assert_eq!(why, StopReason::Stopped);
    assert!(r.take_chatter().join("\n").contains("bad packet header"));
    // Random garbage after a valid header, and garbage pcapng blocks.
    let mut seed = 12345u64;
    for i in 0..40 {
        let mut bytes = if i % 2 == 0 {
            pcap_header(1)
        } else {
            pcapng_prefix(9)
        };
        for _ in 0..(i * 13 % 200) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            bytes.push((seed >> 56) as u8);
        }
        let g = tmp(&format!("garbage-{i}.pcap"));
        std::fs::write(&g, &bytes).unwrap();
        let (_, why) = read_dump(&format!("{}, STOP true", g.display()));
        assert_eq!(why, StopReason::Stopped);
    }
}

/// A little-endian microsecond pcap header.
fn pcap_header(linktype: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&[0; 8]);
    h.extend_from_slice(&65535u32.to_le_bytes());
    h.extend_from_slice(&linktype.to_le_bytes());
    h
}

fn block(btype: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    while body.len() & 3 != 0 {
        body.push(0);
    }
    let total = (body.len() + 12) as u32;
    let mut b = btype.to_le_bytes().to_vec();
    b.extend_from_slice(&total.to_le_bytes());
    b.extend_from_slice(&body);
    b.extend_from_slice(&total.to_le_bytes());
    b
}

/// Section header plus one interface with `tsresol` (10^-n).
fn pcapng_prefix(tsresol: u8) -> Vec<u8> {
    let mut shb = 0x1a2b3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut out = block(0x0a0d0d0a, &shb);
    let mut idb = 1u16.to_le_bytes().to_vec();
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&65535u32.to_le_bytes());
    idb.extend_from_slice(&9u16.to_le_bytes()); // if_tsresol
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&[tsresol, 0, 0, 0]);
    idb.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    out.extend(block(1, &idb));
    out
}

fn epb(units: u64, data: &[u8], wire: u32) -> Vec<u8> {
    let mut b = 0u32.to_le_bytes().to_vec();
    b.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
    b.extend_from_slice(&(units as u32).to_le_bytes());
    b.extend_from_slice(&(data.len() as u32).to_le_bytes());
    b.extend_from_slice(&wire.to_le_bytes());
    b.extend_from_slice(data);
    block(6, &b)
}

#[test]
fn pcapng_input() {
    let mut f = pcapng_prefix(9);
    f.extend(epb(1_600_000_000_123_456_789, &[1, 2, 3, 4, 5], 5));
    // A name resolution block to skip.
    f.extend(block(4, &[0, 0, 0, 0]));
    f.extend(epb(1_600_000_001_000_000_000, &[6, 7, 8], 60));
    // A simple packet block.
    let mut spb = 3u32.to_le_bytes().to_vec();
    spb.extend_from_slice(&[9, 9, 9]);
    f.extend(block(3, &spb));
    let g = tmp("input.pcapng");
    std::fs::write(&g, &f).unwrap();
    let (mut r, why) = read_dump(&format!("{}, STOP true", g.display()));
    assert_eq!(why, StopReason::Stopped);
    assert_eq!(r.read_handler("fd.encap", None).unwrap(), "ETHER");
    let got = drain(&mut r, 1);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].data(), &[1, 2, 3, 4, 5]);
    assert_eq!(
        got[0].timestamp_anno(),
        Timestamp::from_sec_nsec(1_600_000_000, 123_456_789)
    );
    assert_eq!(got[1].data(), &[6, 7, 8]);
    assert_eq!(
        got[1].timestamp_anno(),
        Timestamp::from_sec_nsec(1_600_000_001, 0)
    );
    assert_eq!(
        u32::from_ne_bytes(got[1].anno_bytes::<4>(anno::EXTRA_LENGTH)),
        57
    );
    assert_eq!(got[2].data(), &[9, 9, 9]);
    // Default microsecond resolution and a big-endian section.
    let mut be = Vec::new();
    let bblock = |t: u32, body: &[u8]| {
        let total = (body.len() + 12) as u32;
        let mut b = t.to_be_bytes().to_vec();
        b.extend_from_slice(&total.to_be_bytes());
        b.extend_from_slice(body);
        b.extend_from_slice(&total.to_be_bytes());
        b
    };
    let mut shb = 0x1a2b3c4du32.to_be_bytes().to_vec();
    shb.extend_from_slice(&[0, 1, 0, 0]);
    shb.extend_from_slice(&[0xff; 8]);
    be.extend(bblock(0x0a0d0d0a, &shb));
    be.extend(bblock(1, &[0, 101, 0, 0, 0, 0, 0xff, 0xff]));
    let mut e = vec![0, 0, 0, 0];
    let units: u64 = 1_500_000_000_250_000;
    e.extend_from_slice(&((units >> 32) as u32).to_be_bytes());
    e.extend_from_slice(&(units as u32).to_be_bytes());
    e.extend_from_slice(&20u32.to_be_bytes());
    e.extend_from_slice(&20u32.to_be_bytes());
    e.extend_from_slice(&ipv4_header([10, 0, 0, 1], [10, 0, 0, 2]));
    be.extend(bblock(6, &e));
    let g = tmp("bigendian.pcapng");
    std::fs::write(&g, &be).unwrap();
    let (mut r, _) = read_dump(&format!("{}, STOP true", g.display()));
    assert_eq!(r.read_handler("fd.encap", None).unwrap(), "IP");
    let got = drain(&mut r, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].timestamp_anno(),
        Timestamp::from_sec_nsec(1_500_000_000, 250_000_000)
    );
    assert_eq!(got[0].network_offset(), Some(0));
}

fn ipv4_header(src: [u8; 4], dst: [u8; 4]) -> [u8; 20] {
    let mut h = [0u8; 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&20u16.to_be_bytes());
    h[8] = 64;
    h[9] = 17;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    h
}

#[test]
fn raw_ip_link_type_sets_ip_header() {
    let f = tmp("rawip.pcap");
    let pkts: Vec<_> = (0..3u8)
        .map(|i| {
            (
                ipv4_header([1, 2, 3, i], [9, 8, 7, i]).to_vec(),
                ts(100, i as i64),
                0,
            )
        })
        .collect();
    write_dump(&format!("{}, ENCAP IP", f.display()), &pkts);
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101);
    let (mut r, _) = read_dump(&format!("{}, STOP true", f.display()));
    assert_eq!(r.read_handler("fd.encap", None).unwrap(), "IP");
    let got = drain(&mut r, 1);
    assert_eq!(got.len(), 3);
    for (i, p) in got.iter().enumerate() {
        assert_eq!(p.network_offset(), Some(0));
        assert_eq!(p.network_header_length(), Some(20));
        assert_eq!(p.dst_ip_anno(), std::net::Ipv4Addr::new(9, 8, 7, i as u8));
    }
}

#[test]
fn ethernet_force_ip_splits_non_ip_to_output_1() {
    let f = tmp("ether.pcap");
    let mut ip = vec![0u8; 12];
    ip.extend_from_slice(&[0x08, 0x00]);
    ip.extend_from_slice(&ipv4_header([1, 1, 1, 1], [2, 2, 2, 2]));
    let mut arp = vec![0u8; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    write_dump(
        &format!("{}", f.display()),
        &[
            (ip.clone(), ts(5, 0), 0),
            (arp.clone(), ts(6, 0), 0),
            (ip, ts(7, 0), 0),
        ],
    );
    let mut r = build(spec(
        &[
            (
                "fd",
                "FromDump",
                &format!("{}, STOP true, FORCE_IP true", f.display()),
            ),
            ("q", "Queue", ""),
            ("other", "Queue", ""),
            ("u", "Unqueue", "ACTIVE false"),
            ("u2", "Unqueue", "ACTIVE false"),
            ("d", "Discard", ""),
        ],
        &[
            (0, 0, 1, 0),
            (0, 1, 2, 0),
            (1, 0, 3, 0),
            (2, 0, 4, 0),
            (3, 0, 5, 0),
            (4, 0, 5, 0),
        ],
    ));
    assert_eq!(r.run(), StopReason::Stopped);
    let ips = drain(&mut r, 1);
    let others = drain(&mut r, 2);
    assert_eq!((ips.len(), others.len()), (2, 1));
    assert_eq!(ips[0].network_offset(), Some(14));
    assert_eq!(ips[0].dst_ip_anno(), std::net::Ipv4Addr::new(2, 2, 2, 2));
    assert_eq!(others[0].data(), &arp[..]);
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "2");
}

#[test]
fn timing_replays_against_the_router_clock() {
    let f = tmp("timing.pcap");
    let pkts: Vec<_> = (0..4)
        .map(|i| (vec![i as u8; 20], ts(1000 + i * 2, 500_000), 0))
        .collect();
    write_dump(&format!("{}", f.display()), &pkts);
    let mut r = build(spec(
        &[
            (
                "fd",
                "FromDump",
                &format!("{}, TIMING true, STOP true", f.display()),
            ),
            ("q", "Queue", ""),
            ("u", "Unqueue", "ACTIVE false"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    let start = r.clock().now();
    assert_eq!(r.run(), StopReason::Stopped);
    let elapsed = r.clock().now() - start;
    // Last packet 6 s after the first.
    assert_eq!(elapsed, Timestamp::from_sec_nsec(6, 0));
    assert_eq!(drain(&mut r, 1).len(), 4);
}

#[test]
fn pull_mode_and_pulling_todump() {
    let f = tmp("pull-in.pcap");
    let pkts = sample_packets();
    write_dump(&format!("{}", f.display()), &pkts);
    let out = tmp("pull-out.pcap");
    // FromDump pulled by Unqueue; Queue pulled by ToDump's task.
    let mut r = build(spec(
        &[
            ("fd", "FromDump", &format!("{}, STOP true", f.display())),
            ("u", "Unqueue", "BURST 4"),
            ("q", "Queue", "100"),
            ("td", "ToDump", &format!("{}", out.display())),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    assert_eq!(r.run(), StopReason::Stopped);
    // As in Click 2.1 (`-h td.count -h q.length`): ToDump's task pulls one
    // packet a run, so when FromDump stops the driver (on the run that
    // finds the file ended, after 5 runs of 4) ToDump has written 5.
    assert_eq!(r.read_handler("td.count", None).unwrap(), "5");
    assert_eq!(r.read_handler("q.length", None).unwrap(), "15");
    // Let ToDump drain the queue: with the run count at zero, each driver
    // iteration runs one task.
    for _ in 0..200 {
        r.run_limited(1);
    }
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "20");
    assert_eq!(r.read_handler("td.count", None).unwrap(), "20");
    r.cleanup();
    let (mut r2, _) = read_dump(&format!("{}, STOP true", out.display()));
    let got = drain(&mut r2, 1);
    assert_eq!(got.len(), 20);
    for (p, (data, t, _)) in got.iter().zip(&pkts) {
        assert_eq!((p.data(), p.timestamp_anno()), (&data[..], *t));
    }
}

#[test]
fn start_end_sample_and_handlers() {
    let f = tmp("window.pcap");
    write_dump(&format!("{}", f.display()), &sample_packets());
    // Packets are 1 s apart from 1_600_000_000.
    let (r, _) = read_dump(&format!(
        "{}, START_AFTER 3, END_AFTER 8, STOP true",
        f.display()
    ));
    let mut r = r;
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "5");
    assert_eq!(r.read_handler("fd.sampling_prob", None).unwrap(), "1");
    let (mut r, why) = read_dump(&format!("{}, END 1600000010, ACTIVE true", f.display()));
    // No STOP: reaching END deactivates; the router goes quiet.
    assert_eq!(why, StopReason::Quiescent);
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "10");
    assert_eq!(r.read_handler("fd.active", None).unwrap(), "false");
    let (mut r, _) = read_dump(&format!("{}, SAMPLE 0.5, STOP true", f.display()));
    assert_eq!(r.read_handler("fd.sampling_prob", None).unwrap(), "0.5");
    let n: u32 = r.read_handler("fd.count", None).unwrap().parse().unwrap();
    assert!(n < 20, "{n}");
    let (mut r, _) = read_dump(&format!("{}, ACTIVE false", f.display()));
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "0");
    r.write_handler("fd.active", "true").unwrap();
    r.run();
    assert_eq!(r.read_handler("fd.count", None).unwrap(), "20");
    assert_eq!(
        r.read_handler("fd.filename", None).unwrap(),
        f.display().to_string()
    );
}

#[test]
fn todump_configuration() {
    let f = tmp("cfg.pcap");
    let e = |cfg: &str| {
        try_build(spec(
            &[
                ("td", "ToDump", cfg),
                ("idle", "InfiniteSource", "ACTIVE false"),
            ],
            &[(1, 0, 0, 0)],
        ))
        .err()
        .unwrap_or_default()
        .join("\n")
    };
    assert!(e(&format!("{}, ENCAP BOGUS", f.display())).contains("bad encapsulation type"));
    assert!(e(&format!("{}, ENCAP IP, USE_ENCAP_FROM x", f.display()))
        .contains("specify at most one of 'ENCAP' and 'USE_ENCAP_FROM'"));
    assert!(e("").contains("FILENAME: required argument missing"));
    // USE_ENCAP_FROM takes FromDump's link type.
    let raw = tmp("encap-from.pcap");
    write_dump(
        &format!("{}, ENCAP IP", raw.display()),
        &[(ipv4_header([1; 4], [2; 4]).to_vec(), ts(1, 0), 0)],
    );
    let out = tmp("encap-to.pcap");
    let mut r = build(spec(
        &[
            (
                "td",
                "ToDump",
                &format!("{}, USE_ENCAP_FROM fd", out.display()),
            ),
            ("fd", "FromDump", &format!("{}, STOP true", raw.display())),
        ],
        &[(1, 0, 0, 0)],
    ));
    r.run();
    r.cleanup();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101);
}
