//! The process-wide registry of Click-style IPsec SAs (ipsec/legacy.rs)
//! under configuration churn: routes that are refused take no SA, and once
//! the registry is full, running routers keep their tunnels while new SAs
//! are refused with a clear error, never a panic.
//!
//! Its own test binary (one test), since it fills the registry of its
//! process and counts registrations.

use rclick_core::{Packet, Router};
use rclick_elements::ipsec::legacy::{self, LegacySa, MAX_SAS};
use rclick_elements::testing::{read, try_from_config};

const ROUTE: &str = "10.9.0.0/16 10.0.0.1 1 4660 0123456789abcdef fedcba9876543210 1 32";

fn config(route: &str) -> String {
    format!(
        "rt :: RadixIPsecLookup(10.0.0.1/32 0, {route}, 0.0.0.0/0 2);
         Idle -> rt; rt[0] -> Discard; rt[2] -> Discard;
         rt[1] -> e :: IPsecESPEncap -> c :: Counter -> Discard;"
    )
}

/// A 28-byte UDP packet to 10.9.1.2 as RadixIPsecLookup receives it.
fn packet() -> Packet {
    let mut b = vec![0u8; 28];
    b[0] = 0x45;
    b[3] = 28;
    b[9] = 17;
    b[16..20].copy_from_slice(&[10, 9, 1, 2]);
    let mut p = Packet::from_slice(&b);
    p.set_network_header(0, 20);
    p.set_dst_ip_anno(std::net::Ipv4Addr::new(10, 9, 1, 2));
    p
}

fn send(r: &mut Router) {
    let rt = r.find_element("rt").unwrap();
    r.inject_packet(rt, 0, packet());
}

fn write(r: &mut Router, h: &str, v: &str) -> Result<(), String> {
    r.write_handler(h, v)
}

#[test]
fn registry_churn_and_exhaustion() {
    let mut r = try_from_config(&config(ROUTE)).unwrap();
    let base = legacy::registered();
    assert!(base >= 1);

    // Refused handler writes take no SA: a bad output, a route that
    // conflicts with an existing one, a removal that names an SA.
    let sa_words = "4661 0123456789abcdef fedcba9876543210 1 32";
    assert!(write(
        &mut r,
        "rt.add",
        &format!("10.8.0.0/16 10.0.0.1 7 {sa_words}")
    )
    .is_err());
    assert!(write(
        &mut r,
        "rt.add",
        &format!("10.9.0.0/16 10.0.0.1 1 {sa_words}")
    )
    .is_err());
    assert!(write(
        &mut r,
        "rt.remove",
        &format!("10.7.0.0/16 10.0.0.1 1 {sa_words}")
    )
    .is_err());
    assert_eq!(legacy::registered(), base, "refused routes registered SAs");
    // An accepted one takes one.
    write(
        &mut r,
        "rt.add",
        &format!("10.8.0.0/16 10.0.0.1 1 {sa_words}"),
    )
    .unwrap();
    assert_eq!(legacy::registered(), base + 1);

    // Fill the registry.
    let mut n = legacy::registered();
    while legacy::register(LegacySa::new(9, [1; 16], [2; 16], 1, 32)).is_ok() {
        n += 1;
    }
    assert_eq!(n, MAX_SAS);
    let err = legacy::register(LegacySa::new(9, [1; 16], [2; 16], 1, 32)).unwrap_err();
    assert!(
        err.contains("too many IPsec security associations"),
        "{err}"
    );

    // The running router keeps its tunnels.
    send(&mut r);
    assert_eq!(read(&mut r, "c.count"), "1");
    assert_eq!(read(&mut r, "e.drops"), "0");

    // A new SA through a handler is refused with the registry's message
    // (not the generic syntax error), and the table is unchanged.
    let table = read(&mut r, "rt.table");
    let e = write(
        &mut r,
        "rt.add",
        &format!("10.6.0.0/16 10.0.0.1 1 {sa_words}"),
    )
    .unwrap_err();
    assert!(e.contains("too many IPsec security associations"), "{e}");
    let e = write(
        &mut r,
        "rt.set",
        &format!("10.9.0.0/16 10.0.0.1 1 {sa_words}"),
    )
    .unwrap_err();
    assert!(e.contains("too many IPsec security associations"), "{e}");
    assert_eq!(read(&mut r, "rt.table"), table);
    // Routes without an SA are still taken.
    write(&mut r, "rt.add", "10.5.0.0/16 2").unwrap();
    send(&mut r);
    assert_eq!(read(&mut r, "c.count"), "2");

    // A new configuration with an SA fails to configure, with the reason.
    let errs = try_from_config(&config(ROUTE))
        .err()
        .expect("configured past the limit");
    assert!(
        errs.iter()
            .any(|e| e.contains("argument 2: too many IPsec security associations")),
        "{errs:?}"
    );
}
