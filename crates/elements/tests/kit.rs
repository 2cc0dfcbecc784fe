//! The element kit: link-time registration, handler tables and the
//! generated batch code of element kinds.

use rclick_core::element::{Filter, Observe};
use rclick_core::{Ctx, Element, Handler, Packet, Registry, StopReason};
use rclick_elements::testing::{from_config, read, try_from_config};

/// Numbers the packets it sees (first byte) and rejects the odd ones: a
/// filter-kind element for these tests.
#[derive(Default)]
struct RejectOdd {
    seen: u8,
    limit: u32,
}

impl Filter for RejectOdd {
    fn filter(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        p.writable()[0] = self.seen;
        self.seen += 1;
        if self.seen.is_multiple_of(2) {
            Err(p)
        } else {
            Ok(p)
        }
    }
}

const REJECT_ODD_HANDLERS: &[Handler<RejectOdd>] =
    &[Handler::data_rw("limit", |e| &e.limit, |e| &mut e.limit)];

rclick_core::element_class!(RejectOdd);

impl Element for RejectOdd {
    rclick_core::element_kind!(filter);
    rclick_core::handlers!(REJECT_ODD_HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::AGNOSTIC_PUSH_ERROR
    }
}

/// Records the first byte of every packet it sees.
#[derive(Default)]
struct Record {
    seen: Vec<u8>,
}

impl Observe for Record {
    fn observe(&mut self, p: &Packet, _ctx: &mut Ctx) {
        self.seen.push(p.data()[0]);
    }
}

const RECORD_HANDLERS: &[Handler<Record>] = &[Handler::read("seen", |e, _| {
    let seen: Vec<String> = e.seen.iter().map(|b| b.to_string()).collect();
    seen.join(" ")
})];

rclick_core::element_class!(Record);

impl Element for Record {
    rclick_core::element_kind!(observe);
    rclick_core::handlers!(RECORD_HANDLERS);
}

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
/// element declared before it (the router fails to configure otherwise).
#[test]
fn address_info_configures_before_earlier_elements() {
    let r = try_from_config(
        "InfiniteSource(LIMIT 1, STOP true) -> a :: SetIPAddress(me) -> Discard;\n\
         AddressInfo(me 10.0.0.9);",
    );
    assert!(r.is_ok(), "{:?}", r.err());
}

/// A filter's two outputs that meet again keep the packets' arrival order,
/// as Click's per-packet `checked_output_push` does.
#[test]
fn filter_kind_keeps_order_across_its_outputs() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 8, BURST 8, STOP true) -> f :: RejectOdd -> rec :: Record -> Discard;\n\
         f[1] -> rec;",
    );
    assert_eq!(r.run_limited(1_000), StopReason::Stopped);
    assert_eq!(read(&mut r, "rec.seen"), "0 1 2 3 4 5 6 7");
    // Without output 1 the rejected packets are dropped.
    let mut r = from_config(
        "InfiniteSource(LIMIT 8, BURST 8, STOP true) -> RejectOdd -> rec :: Record -> Discard;",
    );
    assert_eq!(r.run_limited(1_000), StopReason::Stopped);
    assert_eq!(read(&mut r, "rec.seen"), "0 2 4 6");
    // In pull, output 0 is pulled and output 1 pushed.
    let mut r = from_config(
        "InfiniteSource(LIMIT 8, BURST 8) -> Queue -> f :: RejectOdd -> good :: Record -> Discard;\n\
         f[1] -> bad :: Record -> Discard;",
    );
    r.run_limited(1_000);
    assert_eq!(read(&mut r, "good.seen"), "0 2 4 6");
    assert_eq!(read(&mut r, "bad.seen"), "1 3 5 7");
}

/// `Handler::data_rw` reads with Display and writes with the field's Click
/// parser, rejecting what does not parse.
#[test]
fn data_rw_handler_round_trip() {
    let mut r = from_config("Idle -> f :: RejectOdd -> Discard;");
    assert_eq!(read(&mut r, "f.limit"), "0");
    r.write_handler("f.limit", " 17 ").unwrap();
    assert_eq!(read(&mut r, "f.limit"), "17");
    assert!(r.write_handler("f.limit", "-1").is_err());
    assert_eq!(read(&mut r, "f.limit"), "17");
    assert!(read(&mut r, "f.handlers").lines().any(|l| l == "limit\trw"));
}

/// A COUNT_CALL writing a handler of an element that is running (up the
/// call stack: the Discard pulling through the Counter) cannot run at
/// once; it runs as soon as that element returns, so the Discard stops
/// pulling as in Click (the call failed, and was chattered, though Click
/// is silent about failed calls).
#[test]
fn count_call_to_a_running_element_runs_when_it_returns() {
    let mut r = from_config(
        "InfiniteSource(LIMIT 10) -> Queue -> c :: Counter(COUNT_CALL 4 d.active false) -> d :: Discard;",
    );
    r.run_limited(2_000);
    assert!(r.take_chatter().is_empty());
    assert_eq!(read(&mut r, "d.active"), "false");
    assert_eq!(read(&mut r, "c.count"), "4");
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
    // As in Click: newest first, the standard handlers last; a push
    // Discard has no `active`.
    let listing = read(&mut r, "d.handlers");
    assert_eq!(
        listing,
        "reset_counts\twb\ncount\tr\nhandlers\tr.\nports\tr.\nconfig\tr.\nclass\tr.\nname\tr.\n"
    );
    let mut pull = from_config("Idle -> Queue -> d :: Discard;");
    let listing = read(&mut pull, "d.handlers");
    assert!(
        listing.starts_with("tickets\trw\nscheduled\tr\nactive\trwc\nreset_counts\twb\ncount\tr\n"),
        "{listing}"
    );
    pull.write_handler("d.active", "false").unwrap();
    assert_eq!(read(&mut pull, "d.active"), "false");
    assert!(r.read_handler("d.active", None).is_err());
    r.write_handler("s.switch", "1").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "1");
    assert!(r.write_handler("s.switch", "x").is_err());
    let err = r.read_handler("d.nonesuch", None).unwrap_err();
    assert!(err.contains("nonesuch"), "{err}");
    assert!(try_from_config("Discard(ACTIVE maybe)").is_err());
}
