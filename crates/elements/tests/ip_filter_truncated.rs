//! Transport-header tests on packets too short to hold the field do not
//! match (Click's IPFilter and IPClassifier behaviour; found by running
//! Click's own IPFilter tests).

use rclick_core::Packet;
use rclick_elements::testing::{from_config, read};

/// An IPv4 UDP packet from 10.0.0.1 port 1234 to 10.0.0.2 port 53,
/// truncated to `len` bytes (the IP total length still says 28).
fn udp(len: usize) -> Packet {
    let mut b = vec![
        0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    let c = rclick_core::wire::checksum::checksum(&b);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    b.extend_from_slice(&[0x04, 0xd2, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00]);
    b.truncate(len);
    let mut p = Packet::from_slice(&b);
    p.set_network_header(0, 20);
    p
}

/// Counts on outputs 0 and 1 after one packet; `args` must give two
/// outputs (IPClassifier: `PATTERN, -`; IPFilter: `0 PATTERN, 1 all`).
fn outputs(class: &str, args: &str, len: usize) -> (String, String) {
    let mut r = from_config(&format!(
        "f :: {class}({args}); Idle -> f; f[0] -> a :: Counter -> Discard; f[1] -> b :: Counter -> Discard;"
    ));
    let f = r.find_element("f").unwrap();
    r.inject_packet(f, 0, udp(len));
    (read(&mut r, "a.count"), read(&mut r, "b.count"))
}

#[test]
fn whole_packet_matches_port_test() {
    assert_eq!(
        outputs("IPClassifier", "dst port 53, -", 28),
        ("1".into(), "0".into())
    );
    assert_eq!(
        outputs("IPFilter", "0 dst port 53, 1 all", 28),
        ("1".into(), "0".into())
    );
}

#[test]
fn truncated_transport_header_does_not_match() {
    // 22 bytes: the source port is there, the destination port is not.
    assert_eq!(
        outputs("IPClassifier", "dst port 53, -", 22),
        ("0".into(), "1".into())
    );
    assert_eq!(
        outputs("IPFilter", "0 dst port 53, 1 all", 22),
        ("0".into(), "1".into())
    );
    assert_eq!(
        outputs("IPClassifier", "src port 1234, -", 22),
        ("1".into(), "0".into())
    );
}
