//! The IPv4 header elements on the element kit: the filter paths (output 1
//! present or not, push and pull), handler tables (names, flags, dynamic
//! `drop_details`), and the headers they rewrite through wire views,
//! compared with headers recomputed from scratch.

use std::net::Ipv4Addr;

use rclick_core::packet::PacketType;
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::{
    checksum, EtherAddr, EtherFrame, EthernetRepr, IcmpHeader, IcmpRepr, Ipv4Header, Ipv4Repr,
    TcpHeader, TcpRepr, UdpHeader, UdpRepr, ETHERTYPE_IP,
};
use rclick_core::{Packet, Router};
use rclick_elements::testing::{from_config, read};

const SRC: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const DST: Ipv4Addr = Ipv4Addr::new(192, 168, 7, 9);

/// An IPv4 datagram carrying `proto` (TCP, UDP with `udp_sum` or ICMP
/// echo) with `n` data bytes, every checksum correct.
fn datagram(proto: u8, frag_offset: u16, udp_sum: bool, n: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
    let l4_len = match proto {
        PROTO_TCP => 20 + n,
        _ => 8 + n,
    };
    let ip = Ipv4Repr {
        src: SRC,
        dst: DST,
        protocol: proto,
        payload_len: l4_len,
        ident: 0x4321,
        frag_offset,
        ..Default::default()
    };
    let mut buf = vec![0u8; 20 + l4_len];
    ip.emit(&mut Ipv4Header::new_unchecked(&mut buf[..]));
    let l4 = &mut buf[20..];
    match proto {
        PROTO_TCP => {
            let repr = TcpRepr {
                src_port: 1234,
                dst_port: 80,
                seq: 7,
                ack: 9,
                flags: 0x18,
                window: 512,
                urgent: 0,
                options: &[],
                payload_len: n,
            };
            let mut t = TcpHeader::new_unchecked(&mut l4[..]);
            repr.emit(&mut t);
            t.payload_mut().copy_from_slice(&data);
            t.fill_checksum(SRC, DST);
        }
        PROTO_UDP => {
            let mut u = UdpHeader::new_unchecked(&mut l4[..]);
            UdpRepr {
                src_port: 53,
                dst_port: 5353,
                payload_len: n,
            }
            .emit(&mut u);
            u.payload_mut().copy_from_slice(&data);
            if udp_sum {
                u.fill_checksum(SRC, DST);
            }
        }
        _ => IcmpRepr::EchoRequest {
            ident: 1,
            seq: 2,
            data: &data,
        }
        .emit(&mut IcmpHeader::new_unchecked(&mut l4[..])),
    }
    buf
}

/// `decl` as element `x` with outputs 0 and 1 on queues; each packet is
/// pushed in and the queues drained.
struct Bench {
    r: Router,
}

impl Bench {
    fn new(decl: &str) -> Self {
        Self::with(decl, "x[1] -> bad :: Queue(500) -> Discard;")
    }

    /// With one output.
    fn one(decl: &str) -> Self {
        Self::with(decl, "")
    }

    fn with(decl: &str, extra: &str) -> Self {
        Bench {
            r: from_config(&format!(
                "x :: {decl}; Idle -> x; x[0] -> good :: Queue(500) -> Discard; {extra}"
            )),
        }
    }

    fn push(&mut self, p: Packet) -> &mut Self {
        let x = self.r.find_element("x").unwrap();
        self.r.inject_packet(x, 0, p);
        self
    }

    fn take(&mut self, queue: &str) -> Vec<Packet> {
        let q = self.r.find_element(queue).unwrap();
        let mut got = Vec::new();
        while let Some(b) = self.r.pull_from(q, 0, 100).filter(|b| !b.is_empty()) {
            got.extend(b);
        }
        got
    }

    fn read(&mut self, h: &str) -> String {
        read(&mut self.r, &format!("x.{h}"))
    }
}

fn ip_marked(bytes: &[u8]) -> Packet {
    let mut p = Packet::from_slice(bytes);
    let hl = Ipv4Header::new_checked(bytes).map_or(20, |h| h.header_len());
    p.set_network_header(0, hl);
    p
}

// ------------------------------------------------------------ checkers

#[test]
fn checkipheader_reasons_and_drop_details_listing() {
    let good = datagram(PROTO_UDP, 0, true, 12);
    let mut short_ihl = good.clone();
    short_ihl[0] = 0x44;
    let mut long_ihl = good.clone();
    long_ihl[0] = 0x4f;
    let mut bad_len = good.clone();
    Ipv4Header::new_checked(&mut bad_len[..])
        .unwrap()
        .set_total_len(400);
    let mut b = Bench::new("CheckIPHeader(DETAILS true)");
    for p in [&good, &short_ihl, &long_ihl, &bad_len, &good[..12]] {
        b.push(Packet::from_slice(p));
    }
    let ok = b.take("good");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].dst_ip_anno(), DST);
    assert_eq!(ok[0].network_offset(), Some(0));
    assert_eq!(b.take("bad").len(), 4);
    assert_eq!(b.read("drops"), "4");
    assert_eq!(
        b.read("drop_details"),
        "1\ttiny packet\n0\tbad IP version\n1\tbad IP header length\n2\tbad IP length\n\
         0\tbad IP checksum\n0\tbad source address"
    );
    assert!(b.read("handlers").contains("drop_details\tr\ndrops\tr\n"));

    // Without DETAILS there is no drop_details handler at all.
    let mut b = Bench::new("CheckIPHeader");
    assert!(!b.read("handlers").contains("drop_details"));
    let err = b.r.read_handler("x.drop_details", None).unwrap_err();
    assert!(err.contains("no 'x.drop_details' handler"), "{err}");
    assert!(b.r.write_handler("x.drops", "0").is_err());
}

#[test]
fn transport_checkers_count_each_reason() {
    let tcp = datagram(PROTO_TCP, 0, true, 10);
    let mut tcp_doff = tcp.clone();
    tcp_doff[20 + 12] = 0x40; // data offset 16 bytes
    let mut tcp_sum = tcp.clone();
    *tcp_sum.last_mut().unwrap() ^= 1;
    let mut b = Bench::new("CheckTCPHeader(DETAILS true)");
    for p in [&tcp, &tcp_doff, &tcp_sum, &datagram(PROTO_UDP, 0, true, 4)] {
        b.push(ip_marked(p));
    }
    assert_eq!(b.take("good").len(), 1);
    assert_eq!(b.take("bad").len(), 3);
    assert_eq!(
        b.read("drop_details"),
        "1\tnot TCP\n1\tbad packet length\n1\tbad TCP checksum"
    );

    let udp = datagram(PROTO_UDP, 0, true, 10);
    let no_sum = datagram(PROTO_UDP, 0, false, 10);
    let mut udp_long = udp.clone();
    udp_long[20 + 5] = 200; // UDP length past the data
    let mut udp_sum = udp.clone();
    *udp_sum.last_mut().unwrap() ^= 0x80;
    let mut b = Bench::new("CheckUDPHeader(DETAILS true)");
    for p in [&udp, &no_sum, &udp_long, &udp_sum] {
        b.push(ip_marked(p));
    }
    assert_eq!(b.take("good").len(), 2, "a zero UDP checksum is none");
    assert_eq!(
        b.read("drop_details"),
        "0\tnot UDP\n1\tbad packet length\n1\tbad UDP checksum"
    );

    let icmp = datagram(PROTO_ICMP, 0, true, 6);
    let mut icmp_short = icmp.clone();
    Ipv4Header::new_checked(&mut icmp_short[..])
        .unwrap()
        .set_total_len(26); // 6 bytes of ICMP
    let mut icmp_sum = icmp.clone();
    icmp_sum[20 + 4] ^= 1;
    // Without output 1 the rejects are dropped, and still counted.
    let mut r = from_config(
        "x :: CheckICMPHeader(DETAILS true); Idle -> x -> good :: Queue(10) -> Discard;",
    );
    let x = r.find_element("x").unwrap();
    for p in [&icmp, &icmp_short, &icmp_sum] {
        r.inject_packet(x, 0, ip_marked(p));
    }
    assert_eq!(read(&mut r, "good.length"), "1");
    assert_eq!(
        read(&mut r, "x.drop_details"),
        "0\tnot ICMP\n1\tbad packet length\n1\tbad ICMP checksum"
    );
}

#[test]
fn filters_in_pull_push_rejects_to_output_1() {
    let mut r = from_config(
        "Idle -> q :: Queue(50) -> x :: DecIPTTL -> Discard;\n\
         x[1] -> dead :: Queue(50) -> Discard;\n\
         Idle -> q2 :: Queue(50) -> y :: CheckIPHeader -> Discard;\n\
         y[1] -> bad :: Queue(50) -> Discard;",
    );
    let [q, x, q2, y] = ["q", "x", "q2", "y"].map(|n| r.find_element(n).unwrap());
    let mut old = datagram(PROTO_UDP, 0, true, 0);
    Ipv4Header::new_checked(&mut old[..]).unwrap().set_ttl(1);
    for p in [datagram(PROTO_UDP, 0, true, 0), old] {
        r.inject_packet(q, 0, ip_marked(&p));
    }
    // No network header: DecIPTTL drops and counts it, output 1 gets nothing.
    r.inject_packet(q, 0, Packet::from_slice(&[0x45; 30]));
    r.inject_packet(q2, 0, Packet::from_slice(&datagram(PROTO_TCP, 0, true, 0)));
    r.inject_packet(q2, 0, Packet::from_slice(&[0x55; 30]));
    let pulled = r.pull_from(x, 0, 10).unwrap();
    assert_eq!(pulled.len(), 1);
    assert_eq!(pulled.packets()[0].data()[8], 63);
    assert_eq!(read(&mut r, "dead.length"), "1");
    assert_eq!(read(&mut r, "x.drops"), "2");
    assert_eq!(r.pull_from(y, 0, 10).unwrap().len(), 1);
    assert_eq!(read(&mut r, "bad.length"), "1");
}

// ------------------------------------------------------------ handlers

#[test]
fn handler_tables_keep_names_flags_and_values() {
    let mut b = Bench::new("DecIPTTL");
    assert!(b.read("handlers").contains("active\trwc\ndrops\tr\n"));
    b.r.write_handler("x.active", " no ").unwrap();
    assert_eq!(b.read("active"), "false");
    assert!(b.r.write_handler("x.active", "maybe").is_err());
    assert!(b.r.write_handler("x.drops", "1").is_err());

    let mut r = from_config(
        "Idle -> d :: DropBroadcasts -> Discard; Idle -> g :: IPGWOptions(1.2.3.4) -> Discard;",
    );
    let d = r.find_element("d").unwrap();
    let mut p = Packet::from_slice(&[0; 20]);
    p.set_packet_type_anno(PacketType::Broadcast);
    r.inject_packet(d, 0, p);
    assert_eq!(read(&mut r, "d.drops"), "1");
    assert_eq!(read(&mut r, "g.drops"), "0");
    assert!(read(&mut r, "d.handlers").contains("drops\tr\n"));
}

#[test]
fn combos_report_their_parts() {
    let mut r = from_config(
        "Idle -> i :: IPInputCombo(3, DETAILS true) -> Discard; i[1] -> Discard;\n\
         Idle -> o :: IPOutputCombo(2, 1.0.0.1, 40) -> Discard;\n\
         o[1] -> Discard; o[2] -> Discard; o[3] -> t :: Queue(9) -> Discard; o[4] -> big :: Queue(9) -> Discard;",
    );
    let frame = |ip: &[u8]| {
        let mut f = vec![0u8; 14];
        EthernetRepr {
            src: EtherAddr([2, 0, 0, 0, 0, 1]),
            dst: EtherAddr([2, 0, 0, 0, 0, 2]),
            ethertype: ETHERTYPE_IP,
        }
        .emit(&mut EtherFrame::new_unchecked(&mut f[..]));
        f.extend_from_slice(ip);
        Packet::from_slice(&f)
    };
    let i = r.find_element("i").unwrap();
    r.inject_packet(i, 0, frame(&datagram(PROTO_UDP, 0, true, 3)));
    r.inject_packet(i, 0, frame(&[0x45; 10]));
    assert_eq!(read(&mut r, "i.drops"), "1");
    assert!(read(&mut r, "i.drop_details").starts_with("1\ttiny packet\n"));
    assert_eq!(read(&mut r, "i.color"), "3");
    // Click's `drops` first, then rclick's additions.
    assert!(read(&mut r, "i.handlers").starts_with("drops\tr\ncolor\tr\ndrop_details\tr\n"));

    let o = r.find_element("o").unwrap();
    let mut bcast = ip_marked(&datagram(PROTO_UDP, 0, true, 0));
    bcast.set_packet_type_anno(PacketType::Broadcast);
    r.inject_packet(o, 0, bcast);
    let mut old = datagram(PROTO_UDP, 0, true, 0);
    Ipv4Header::new_checked(&mut old[..]).unwrap().set_ttl(1);
    r.inject_packet(o, 0, ip_marked(&old));
    r.inject_packet(o, 0, ip_marked(&datagram(PROTO_UDP, 0, true, 30)));
    r.inject_packet(o, 0, Packet::from_slice(&[1; 30]));
    assert_eq!(read(&mut r, "t.length"), "1");
    assert_eq!(read(&mut r, "big.length"), "1");
    assert_eq!(read(&mut r, "o.drops"), "2");
    assert_eq!(read(&mut r, "o.ttl_drops"), "1");
    assert_eq!(read(&mut r, "o.option_drops"), "0");
    assert_eq!(read(&mut r, "o.color"), "2");
    assert_eq!(read(&mut r, "o.mtu"), "40");
}

// ------------------------------------------------------------ header writers

/// What StoreIPAddress must leave: the address in place and every checksum
/// as a full recomputation gives it.
fn expected_store(orig: &[u8], src: bool, a: Ipv4Addr, transport: bool) -> Vec<u8> {
    let mut want = orig.to_vec();
    let mut ip = Ipv4Header::new_checked(&mut want[..]).unwrap();
    let (s, d) = if src { (a, ip.dst()) } else { (ip.src(), a) };
    ip.set_src(s);
    ip.set_dst(d);
    ip.fill_checksum();
    let proto = ip.protocol();
    let l4 = &mut want[20..];
    if transport && proto == PROTO_TCP {
        TcpHeader::new_checked(&mut l4[..])
            .unwrap()
            .fill_checksum(s, d);
    }
    if transport && proto == PROTO_UDP {
        UdpHeader::new_checked(&mut l4[..])
            .unwrap()
            .fill_checksum(s, d);
    }
    want
}

#[test]
fn storeipaddress_updates_ip_and_transport_checksums() {
    let a = Ipv4Addr::new(9, 8, 7, 6);
    for field in ["src", "dst"] {
        let mut b = Bench::one(&format!("StoreIPAddress({a}, {field})"));
        let cases = [
            (datagram(PROTO_TCP, 0, true, 9), true),
            (datagram(PROTO_UDP, 0, true, 9), true),
            (datagram(PROTO_UDP, 0, false, 9), false),
            (datagram(PROTO_TCP, 16, true, 9), false),
            (datagram(PROTO_ICMP, 0, true, 9), false),
        ];
        for (p, _) in &cases {
            b.push(ip_marked(p));
        }
        let got = b.take("good");
        for ((orig, transport), p) in cases.iter().zip(&got) {
            let want = expected_store(orig, field == "src", a, *transport);
            assert_eq!(p.data(), &want[..], "{field} {orig:?}");
        }
    }
    // The version is not checked: a version-6 nibble still gets the
    // address and a header checksum that sums right.
    let mut v6ish = datagram(PROTO_UDP, 0, true, 2);
    v6ish[0] = 0x65;
    Ipv4Header::new_unchecked(&mut v6ish[..]).fill_checksum();
    let mut b = Bench::one(&format!("StoreIPAddress({a}, dst)"));
    let mut p = Packet::from_slice(&v6ish);
    p.set_network_header(0, 20);
    b.push(p);
    let out = b.take("good");
    assert_eq!(&out[0].data()[16..20], &a.octets());
    assert!(checksum::verify(&out[0].data()[..20]));
}

#[test]
fn markipheader_takes_the_header_length_whatever_the_version() {
    let mut b = Bench::one("MarkIPHeader(2)");
    let mut bytes = vec![0u8; 40];
    bytes[2] = 0x66;
    b.push(Packet::from_slice(&bytes));
    b.push(Packet::from_slice(&[7, 7]));
    let out = b.take("good");
    assert_eq!(out[0].network_offset(), Some(2));
    assert_eq!(out[0].transport_offset(), Some(26));
    assert_eq!(out[1].network_offset(), Some(2));
}

// ------------------------------------------------------------ Ethernet

fn ether(dst: [u8; 6], src: [u8; 6], len: usize) -> Packet {
    let mut f = vec![0u8; len.max(14)];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f.truncate(len);
    Packet::from_slice(&f)
}

#[test]
fn hostetherfilter_sets_packet_types_and_rejects_to_output_1() {
    let me = [0, 1, 2, 3, 4, 5];
    let other = [0, 9, 9, 9, 9, 9];
    let mut b = Bench::new("HostEtherFilter(00:01:02:03:04:05, DROP_OWN true)");
    b.push(ether(me, other, 60))
        .push(ether([0xff; 6], other, 60))
        .push(ether([0x01, 0, 0x5e, 0, 0, 1], other, 60))
        .push(ether(other, other, 60))
        .push(ether(me, me, 60))
        .push(ether(me, other, 13));
    let kinds: Vec<PacketType> = b
        .take("good")
        .iter()
        .map(|p| p.packet_type_anno())
        .collect();
    assert_eq!(
        kinds,
        [
            PacketType::Host,
            PacketType::Broadcast,
            PacketType::Multicast
        ]
    );
    let bad = b.take("bad");
    assert_eq!(bad.len(), 3);
    assert_eq!(bad[0].packet_type_anno(), PacketType::OtherHost);

    let mut b = Bench::new("HostEtherFilter(00:01:02:03:04:05, false, false, OFFSET 2)");
    let mut shifted = vec![0xaa, 0xbb];
    shifted.extend_from_slice(ether(other, me, 20).data());
    b.push(Packet::from_slice(&shifted));
    let out = b.take("good");
    assert_eq!(out[0].packet_type_anno(), PacketType::OtherHost);
}

#[test]
fn storeetheraddress_writes_or_rejects_short_packets() {
    let mut b = Bench::new("StoreEtherAddress(00:0a:95:9d:68:16, src)");
    b.push(ether([1; 6], [2; 6], 14))
        .push(ether([1; 6], [2; 6], 11));
    let out = b.take("good");
    assert_eq!(&out[0].data()[6..12], &[0, 0x0a, 0x95, 0x9d, 0x68, 0x16]);
    assert_eq!(&out[0].data()[..6], &[1; 6]);
    assert_eq!(b.take("bad")[0].len(), 11);
}

/// IPOutputCombo's PaintTee copy (output 1) leaves just before its packet
/// (output 0), as in Click: where the two outputs meet again the copies do
/// not overtake the originals (they did when the combo used the dispatch
/// kind, which sends output 0 at the end of the batch).
#[test]
fn ipoutputcombo_copies_keep_their_place_beside_the_originals() {
    let mut r = from_config(
        "Idle -> x :: IPOutputCombo(2, 1.0.0.1, 1500) -> q :: Queue(50) -> Discard;\n\
         x[1] -> q; x[2] -> Discard; x[3] -> Discard; x[4] -> Discard;",
    );
    let [x, q] = ["x", "q"].map(|n| r.find_element(n).unwrap());
    let mut batch = rclick_core::Batch::new();
    for _ in 0..3 {
        let mut p = ip_marked(&datagram(PROTO_UDP, 0, true, 0));
        p.set_paint_anno(2);
        batch.push(p);
    }
    r.inject(x, 0, batch);
    let out = r.pull_from(q, 0, 10).unwrap();
    let ttls: Vec<u8> = out.packets().iter().map(|p| p.data()[8]).collect();
    assert_eq!(ttls, [64, 63, 64, 63, 64, 63]);
}

/// IPOutputCombo keeps arrival order across its outputs where they meet
/// again, both for a batch with no packet of the redirect color (processed
/// whole) and for one with such a packet in the middle (processed packet
/// by packet): forwarded packets (TTL 63), the copy (TTL 64) just before
/// its original, and expired ones (TTL 1, output 3) in place.
#[test]
fn ipoutputcombo_keeps_order_across_outputs_with_and_without_copies() {
    let mut r = from_config(
        "Idle -> x :: IPOutputCombo(2, 1.0.0.1, 1500) -> q :: Queue(50) -> Discard;\n\
         x[1] -> q; x[2] -> Discard; x[3] -> q; x[4] -> Discard;",
    );
    let [x, q] = ["x", "q"].map(|n| r.find_element(n).unwrap());
    let packet = |ttl: u8, paint: u8| {
        let mut bytes = datagram(PROTO_UDP, 0, true, 0);
        bytes[8] = ttl;
        let mut p = ip_marked(&bytes);
        p.set_paint_anno(paint);
        p
    };
    for (input, want) in [
        (vec![(64, 0), (1, 0), (64, 0), (1, 0)], vec![63, 1, 63, 1]),
        (vec![(64, 0), (64, 2), (1, 0)], vec![63, 64, 63, 1]),
    ] {
        let mut batch = rclick_core::Batch::new();
        for (ttl, paint) in input {
            batch.push(packet(ttl, paint));
        }
        r.inject(x, 0, batch);
        let out = r.pull_from(q, 0, 10).unwrap();
        let ttls: Vec<u8> = out.packets().iter().map(|p| p.data()[8]).collect();
        assert_eq!(ttls, want);
    }
}
