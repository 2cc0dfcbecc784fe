//! Hostile numbers in configurations and packets that would grow past the
//! longest packet: a clear configuration error or a dropped packet, never
//! a panic or an unbounded allocation (issue 13).

use rclick_elements::testing::{from_config, read, try_from_config};

fn config_error(conf: &str) -> String {
    match try_from_config(conf) {
        Ok(_) => panic!("{conf}: initialized"),
        Err(errors) => errors.join("\n"),
    }
}

#[test]
fn unstrip_longer_than_any_packet_is_refused() {
    let err = config_error("InfiniteSource(LIMIT 1) -> Unstrip(4294967295) -> Discard;");
    assert!(err.contains("longer than any packet"), "{err}");
}

#[test]
fn unstrip_past_the_longest_packet_drops_instead_of_panicking() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 3, STOP true) -> Unstrip(262144) -> c :: Counter -> Discard;",
    );
    r.run_limited(100);
    assert_eq!(read(&mut r, "c.count"), "0");

    let mut r = from_config(
        "InfiniteSource(LIMIT 3, STOP true) -> Unstrip(262075) -> c :: Counter -> Discard;",
    );
    r.run_limited(100);
    // 69 bytes of default data plus 262075 is exactly the longest packet.
    assert_eq!(read(&mut r, "c.count"), "3");
}
