//! The user-level elements on the element kit: their handler tables (names,
//! flags, values, buttons, the generic error for what they lack) and the
//! push-only sinks' drops.

use rclick_core::{Router, StopReason};
use rclick_elements::testing::{from_config, read};

/// The element's own lines of its `handlers` listing, in table order.
fn own_handlers(r: &mut Router, elem: &str) -> Vec<String> {
    const STANDARD: &[&str] = &[
        "name",
        "class",
        "config",
        "ports",
        "handlers",
        "scheduled",
        "tickets",
        "home_thread",
    ];
    read(r, &format!("{elem}.handlers"))
        .lines()
        .rev() // table order (the listing is newest first)
        .filter(|l| !STANDARD.contains(&l.split('\t').next().unwrap_or("")))
        .map(str::to_string)
        .collect()
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Reads, writes and unknown names all fail the way the core says for
/// handlers the table does not have.
fn assert_generic_errors(r: &mut Router, elem: &str, read_only: &str) {
    let e = r.write_handler(&format!("{elem}.{read_only}"), "1");
    assert!(e.is_err(), "{elem}.{read_only} is read-only");
    assert!(r
        .read_handler(&format!("{elem}.reset_counts"), None)
        .is_err());
    assert!(r.read_handler(&format!("{elem}.no_such"), None).is_err());
}

/// Presses `reset_counts` and finds every counter back at zero.
fn check_reset(r: &mut Router, elem: &str, counters: &[&str]) {
    r.write_handler(&format!("{elem}.reset_counts"), "")
        .unwrap();
    for c in counters {
        assert_eq!(
            read(r, &format!("{elem}.{c}")),
            "0",
            "{elem}.{c} after reset"
        );
    }
}

#[test]
fn tohostsniffers_without_its_device_drops_and_resets() {
    let mut r = from_config(
        "InfiniteSource(DATASIZE 60, LIMIT 5, STOP true)
           -> ths :: ToHostSniffers(rkitdev9, TYPE IP, ALLOW_NONEXISTENT true);",
    );
    assert_eq!(r.run_limited(10_000), StopReason::Stopped);
    assert_eq!(
        own_handlers(&mut r, "ths"),
        lines(&[
            "dev_name\tr",
            "kind\tr",
            "count\tr",
            "drops\tr",
            "reset_counts\twb"
        ])
    );
    assert_eq!(read(&mut r, "ths.dev_name"), "rkitdev9");
    assert_eq!(read(&mut r, "ths.kind"), "");
    assert_eq!(read(&mut r, "ths.count"), "0");
    assert_eq!(read(&mut r, "ths.drops"), "5");
    assert_generic_errors(&mut r, "ths", "drops");
    check_reset(&mut r, "ths", &["count", "drops"]);
}

#[test]
fn tohost_drops_runts_and_resets() {
    let mut r = from_config(
        "fh :: FromHost(rkitdev8) -> Discard;
         InfiniteSource(DATASIZE 13, LIMIT 4, STOP true) -> th :: ToHost(rkitdev8);",
    );
    assert_eq!(r.run_limited(10_000), StopReason::Stopped);
    assert_eq!(
        own_handlers(&mut r, "th"),
        lines(&["dev_name\tr", "count\tr", "drops\tr", "reset_counts\twb"])
    );
    assert_eq!(read(&mut r, "th.dev_name"), "rkitdev8");
    assert_eq!(read(&mut r, "th.count"), "0");
    assert_eq!(read(&mut r, "th.drops"), "4");
    assert_generic_errors(&mut r, "th", "count");
    check_reset(&mut r, "th", &["count", "drops"]);
    assert_eq!(
        own_handlers(&mut r, "fh"),
        lines(&["dev_name\tr", "count\tr", "reset_counts\twb"])
    );
    assert_eq!(read(&mut r, "fh.dev_name"), "rkitdev8");
}

#[test]
fn devices_on_loopback_list_their_handlers() {
    let mut r = from_config(
        "fd :: FromDevice(lo) -> Discard;
         InfiniteSource(DATASIZE 60, LIMIT 5, STOP true) -> td :: ToDevice(lo);",
    );
    assert_eq!(r.run_limited(10_000), StopReason::Stopped);
    assert_eq!(
        own_handlers(&mut r, "fd"),
        lines(&[
            "count\tr",
            "ignored_outgoing\tr",
            "drops\tr",
            "kernel_drops\tr",
            "method\tr",
            "fanout\tr",
            "xdp_stats\tr",
            "encap\tr",
            "reset_counts\twb"
        ])
    );
    assert_eq!(read(&mut r, "fd.fanout"), "");
    assert_eq!(read(&mut r, "fd.method"), "LINUX");
    assert_eq!(read(&mut r, "fd.encap"), "ETHER");
    assert_eq!(read(&mut r, "fd.xdp_stats"), "");
    assert!(read(&mut r, "fd.kernel_drops").parse::<u64>().is_ok());
    assert_generic_errors(&mut r, "fd", "count");
    check_reset(&mut r, "fd", &["count", "drops"]);

    assert_eq!(
        own_handlers(&mut r, "td"),
        lines(&[
            "count\tr",
            "drops\tr",
            "pulls\tr",
            "signal\tr",
            "q\tr",
            "method\tr",
            "reset_counts\twb"
        ])
    );
    assert_eq!(read(&mut r, "td.count"), "5");
    assert_eq!(read(&mut r, "td.method"), "LINUX");
    assert_eq!(read(&mut r, "td.q"), "false");
    assert_eq!(read(&mut r, "td.pulls"), "0");
    assert_generic_errors(&mut r, "td", "pulls");
    check_reset(&mut r, "td", &["count", "drops", "pulls"]);
}

#[test]
fn socket_handlers() {
    let mut r = from_config("s :: Socket(UDP, 127.0.0.1, 0) -> Discard;");
    r.run_limited(100);
    assert_eq!(
        own_handlers(&mut r, "s"),
        lines(&[
            "received\tr",
            "sent\tr",
            "drops\tr",
            "connections\tr",
            "connected\tr",
            "local_address\tr",
            "remote_address\tr",
            "reset_counts\twb"
        ])
    );
    assert_eq!(read(&mut r, "s.connected"), "false");
    assert_eq!(read(&mut r, "s.remote_address"), "");
    assert!(read(&mut r, "s.local_address").starts_with("127.0.0.1"));
    assert_generic_errors(&mut r, "s", "received");
    check_reset(&mut r, "s", &["received", "sent", "drops", "connections"]);
}

#[test]
fn server_handlers() {
    let mut r = from_config(
        "cs :: ControlSocket(TCP, 0);
         http :: HTTPServer(0);",
    );
    r.run_limited(100);
    assert_eq!(
        own_handlers(&mut r, "cs"),
        lines(&[
            "clients\tr",
            "pending_output\tr",
            "max_pending_output\tr",
            "buffered\tr",
            "idle_closed\tr",
            "rejected\tr",
            "refused_replies\tr",
            "port\tr",
        ])
    );
    assert!(read(&mut r, "cs.port").parse::<u16>().unwrap() > 0);
    assert_eq!(read(&mut r, "cs.clients"), "0");
    assert_eq!(read(&mut r, "cs.pending_output"), "0");
    assert_eq!(read(&mut r, "cs.max_pending_output"), "0");
    assert!(r.write_handler("cs.max_pending_output", "5").is_err());
    assert!(r.read_handler("cs.no_such", None).is_err());

    assert_eq!(
        own_handlers(&mut r, "http"),
        lines(&[
            "port\tr",
            "url\tr",
            "clients\tr",
            "requests\tr",
            "writable\tr",
            "evicted\tr",
            "refused\tr",
            "head_timeouts\tr",
            "refused_responses\tr"
        ])
    );
    let port = read(&mut r, "http.port");
    assert!(port.parse::<u16>().unwrap() > 0);
    assert_eq!(
        read(&mut r, "http.url"),
        format!("http://127.0.0.1:{port}/")
    );
    assert_eq!(read(&mut r, "http.clients"), "0");
    assert_eq!(read(&mut r, "http.requests"), "0");
    assert!(r.write_handler("http.requests", "5").is_err());
}
