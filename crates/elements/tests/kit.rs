//! The element kit: link-time registration, handler tables and the
//! generated batch code of element kinds.

use rclick_core::{Registry, StopReason};
use rclick_elements::testing::{from_config, read, try_from_config};

#[test]
fn every_class_registers_once_and_constructs() {
    assert_eq!(Registry::duplicates(), Vec::<&str>::new());
    let reg = rclick_elements::registry();
    assert!(reg.len() >= 90, "only {} classes registered", reg.len());
    for name in [
        "Counter",
        "Queue",
        "NotifierQueue",
        "SimpleQueue",
        "DriverManager",
        "IPFilter",
    ] {
        assert!(reg.get(name).is_some(), "{name} missing");
    }
    for name in reg.names() {
        let e = (reg.get(name).unwrap().create)();
        assert!(!e.port_count().is_empty(), "{name}");
    }
}

/// Info elements configure first (Click's CONFIGURE_PHASE_FIRST), whatever
/// their place in the file: an address named by AddressInfo is usable by an
/// element declared before it.
#[test]
fn address_info_configures_before_earlier_elements() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 1, STOP true) -> a :: SetIPAddress(me) -> Discard;\n\
         AddressInfo(me 10.0.0.9);",
    );
    assert_eq!(r.run_limited(1_000), StopReason::Stopped);
    assert_eq!(read(&mut r, "a.config"), "me");
}

/// Counter's COUNT_CALL fires when packets are pulled through it, as when
/// they are pushed (it did not in pull before the observe kind).
#[test]
fn counter_count_call_fires_in_pull_and_push() {
    for (name, conf) in [
        (
            "pull",
            "src :: InfiniteSource(LIMIT 100) -> Queue -> c :: Counter(COUNT_CALL 4 src.active false) -> Discard;",
        ),
        (
            "push",
            "src :: InfiniteSource(LIMIT 100) -> c :: Counter(COUNT_CALL 4 src.active false) -> Discard;",
        ),
    ] {
        let mut r = from_config(conf);
        r.run_limited(2_000);
        let count: u64 = read(&mut r, "c.count").parse().unwrap();
        assert_eq!(read(&mut r, "src.active"), "false", "{name}");
        assert!((4..10).contains(&count), "{name}: count {count}");
    }
}

#[test]
fn handler_tables_list_read_write_and_reject() {
    let mut r =
        from_config("InfiniteSource(LIMIT 0) -> s :: Switch(0) -> d :: Discard; s[1] -> Discard;");
    let listing = read(&mut r, "d.handlers");
    assert!(listing.lines().any(|l| l == "count\tr"), "{listing}");
    assert!(listing.lines().any(|l| l == "active\trw"), "{listing}");
    assert!(listing.lines().any(|l| l == "reset_counts\tw"), "{listing}");
    // A data handler writes through the field type's Click parser.
    r.write_handler("s.switch", "1").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "1");
    assert!(r.write_handler("s.switch", "x").is_err());
    let err = r.read_handler("d.nonesuch", None).unwrap_err();
    assert!(err.contains("nonesuch"), "{err}");
    assert!(try_from_config("Discard(ACTIVE maybe)").is_err());
}
