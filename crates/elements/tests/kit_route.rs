//! The route tables and the address helpers on the element kit: each
//! class's handler table (names, flags, the read-only static tables), the
//! lookup cache kept across batches and dropped on every change, the change
//! counter, and AddressInfo/PortInfo names seen through nested compounds.

use std::net::Ipv4Addr;
use std::sync::atomic::Ordering;

use rclick_core::wire::ipv4::Ipv4Header;
use rclick_core::wire::udp::UdpHeader;
use rclick_core::{Packet, Router};
use rclick_elements::ip::address::{
    compound_prefix, ip_proto_name, parse_ip_proto, parse_known_port, scopes,
};
use rclick_elements::ip::directiplookup::DirectIPLookup;
use rclick_elements::ip::lineariplookup::LinearIPLookup;
use rclick_elements::ip::radixiplookup::RadixIPLookup;
use rclick_elements::testing::{from_config, read, try_from_config};

const DYNAMIC: [&str; 3] = ["LinearIPLookup", "RadixIPLookup", "DirectIPLookup"];
const STATIC: [&str; 2] = ["LookupIPRoute", "StaticIPLookup"];

/// `rt :: CLASS(routes)` whose outputs 0..3 paint their packets with the
/// output number and meet in Queue `q`.
fn router(class: &str, routes: &str) -> Router {
    from_config(&format!(
        "rt :: {class}({routes}); Idle -> rt; q :: Queue(100) -> Idle;
         rt[0] -> Paint(0) -> q; rt[1] -> Paint(1) -> q;
         rt[2] -> Paint(2) -> q; rt[3] -> Paint(3) -> q;"
    ))
}

/// Routes one packet for `dst` (a batch of its own); returns its output and
/// destination annotation there, or `None` if it was dropped.
fn route(r: &mut Router, dst: &str) -> Option<(usize, Ipv4Addr)> {
    let (rt, q) = (r.find_element("rt").unwrap(), r.find_element("q").unwrap());
    let mut p = Packet::zeroed(64);
    p.set_dst_ip_anno(dst.parse().unwrap());
    r.inject_packet(rt, 0, p);
    let mut out = r.pull_from(q, 0, 10)?;
    assert_eq!(out.len(), 1);
    let p = out.pop().unwrap();
    Some((usize::from(p.paint_anno()), p.dst_ip_anno()))
}

/// The element's own handlers (the router's standard ones left out), as
/// `name flags`.
fn own_handlers(r: &Router) -> Vec<String> {
    const STANDARD: [&str; 5] = ["name", "class", "config", "ports", "handlers"];
    let rt = r.find_element("rt").unwrap();
    r.element_handlers(rt)
        .into_iter()
        .filter(|h| !STANDARD.contains(&h.name.as_str()))
        .map(|h| format!("{} {}", h.name, h.flag_string()))
        .collect()
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

#[test]
fn handler_tables_per_class() {
    // In table order (Click lists them newest first): rclick's `drops` and
    // `memory` (and LinearIPLookup's `flush`, which Click's lacks) first, so
    // that they are listed after Click's, which keep Click's order.
    for class in STATIC {
        let r = router(class, "10.0.0.0/8 1");
        assert_eq!(
            own_handlers(&r),
            ["drops r", "memory r", "table r", "lookup r+"],
            "{class}"
        );
    }
    let click = [
        "add w",
        "set w",
        "remove w",
        "ctrl w",
        "table r$",
        "lookup r+",
    ];
    for class in DYNAMIC {
        let r = router(class, "10.0.0.0/8 1");
        let want: Vec<&str> = if class == "LinearIPLookup" {
            ["drops r", "memory r", "flush wb"]
                .iter()
                .chain(&click)
                .copied()
                .collect()
        } else {
            ["drops r", "memory r"]
                .iter()
                .chain(&click)
                .chain(&["flush wb"])
                .copied()
                .collect()
        };
        assert_eq!(own_handlers(&r), want, "{class}");
    }
}

#[test]
fn unknown_and_read_only_handlers_fail_alike() {
    for class in STATIC.iter().chain(&DYNAMIC) {
        let mut r = router(class, "10.0.0.0/8 1");
        // `drops` is a data handler: read-only, printed with Display.
        route(&mut r, "11.0.0.1");
        assert_eq!(read(&mut r, "rt.drops"), "1", "{class}");
        assert!(r.write_handler("rt.drops", "0").is_err(), "{class}");
        assert_eq!(read(&mut r, "rt.drops"), "1", "{class}");
        assert!(r.write_handler("rt.frob", "1").is_err(), "{class}");
        assert!(r.read_handler("rt.frob", None).is_err(), "{class}");
        assert!(r.read_handler("rt.add", None).is_err(), "{class}");
        // A lookup without its parameter.
        assert_eq!(
            r.read_handler("rt.lookup", None).unwrap_err(),
            "expected IP address",
            "{class}"
        );
    }
    for class in STATIC {
        let mut r = router(class, "10.0.0.0/8 1");
        let before = read(&mut r, "rt.table");
        assert!(r.write_handler("rt.flush", "").is_err(), "{class}");
        assert!(r.write_handler("rt.add", "20.0.0.0/8 1").is_err());
        assert_eq!(read(&mut r, "rt.table"), before, "{class}");
        assert_eq!(route(&mut r, "10.1.1.1"), Some((1, ip("10.1.1.1"))));
    }
}

/// The table caches the last destination's next hop from one batch to the
/// next: every kind of change must show in the very next packet for that
/// destination.
#[test]
fn lookup_cache_follows_every_change() {
    for class in DYNAMIC {
        let mut r = router(class, "0.0.0.0/0 9.9.9.9 1");
        let d = "20.1.1.1";
        assert_eq!(route(&mut r, d), Some((1, ip("9.9.9.9"))), "{class}");
        assert_eq!(route(&mut r, d), Some((1, ip("9.9.9.9"))), "{class}");

        r.write_handler("rt.add", "20.0.0.0/8 2").unwrap();
        assert_eq!(route(&mut r, d), Some((2, ip(d))), "{class} add");

        r.write_handler("rt.set", "20.0.0.0/8 20.0.0.1 3").unwrap();
        assert_eq!(route(&mut r, d), Some((3, ip("20.0.0.1"))), "{class} set");

        r.write_handler("rt.remove", "20.0.0.0/8").unwrap();
        assert_eq!(route(&mut r, d), Some((1, ip("9.9.9.9"))), "{class} remove");

        r.write_handler("rt.ctrl", "add 20.1.0.0/16 0").unwrap();
        assert_eq!(route(&mut r, d), Some((0, ip(d))), "{class} ctrl");

        // A failed transaction leaves the table, and the routing, as it was.
        assert!(r
            .write_handler("rt.ctrl", "remove 20.1.0.0/16\nadd 0.0.0.0/0 1")
            .is_err());
        assert_eq!(route(&mut r, d), Some((0, ip(d))), "{class} failed ctrl");

        r.write_handler("rt.flush", "").unwrap();
        assert_eq!(route(&mut r, d), None, "{class} flush");
        assert_eq!(read(&mut r, "rt.drops"), "1", "{class}");

        r.write_handler("rt.add", "20.1.1.1/32 2").unwrap();
        assert_eq!(route(&mut r, d), Some((2, ip(d))), "{class} re-add");
    }
}

/// A cached hop is the hop of its destination only: interleaved
/// destinations are each routed by their own route.
#[test]
fn lookup_cache_keys_on_the_destination() {
    for class in DYNAMIC {
        let mut r = router(class, "10.0.0.0/8 10.0.0.1 1, 10.2.0.0/16 2, 0/0 3");
        for _ in 0..2 {
            assert_eq!(route(&mut r, "10.1.1.1"), Some((1, ip("10.0.0.1"))));
            assert_eq!(route(&mut r, "10.2.1.1"), Some((2, ip("10.2.1.1"))));
            assert_eq!(route(&mut r, "10.2.1.1"), Some((2, ip("10.2.1.1"))));
            assert_eq!(route(&mut r, "11.0.0.0"), Some((3, ip("11.0.0.0"))));
        }
    }
}

/// Writes count as changes whether or not they succeed (a failed `ctrl`
/// may have touched the table before undoing); reads do not.
#[test]
fn change_counter_counts_writes() {
    fn changes<T: rclick_core::Element + 'static>(r: &Router, f: impl Fn(&T) -> u64) -> u64 {
        r.with_element::<T, _>("rt", f).unwrap()
    }
    fn check<T: rclick_core::Element + 'static>(class: &str, count: impl Fn(&T) -> u64 + Copy) {
        let mut r = router(class, "10.0.0.0/8 1");
        let c0 = changes(&r, count);
        read(&mut r, "rt.table");
        r.read_handler("rt.lookup", Some("10.0.0.1")).unwrap();
        assert_eq!(changes(&r, count), c0, "{class}");
        r.write_handler("rt.add", "20.0.0.0/8 1").unwrap();
        assert_eq!(changes(&r, count), c0 + 1, "{class}");
        assert!(r.write_handler("rt.add", "20.0.0.0/8 1").is_err());
        assert_eq!(changes(&r, count), c0 + 2, "{class}");
        r.write_handler("rt.flush", "").unwrap();
        assert_eq!(changes(&r, count), c0 + 3, "{class}");
    }
    check::<LinearIPLookup>("LinearIPLookup", |e| e.changes().load(Ordering::Acquire));
    check::<RadixIPLookup>("RadixIPLookup", |e| e.changes().load(Ordering::Acquire));
    check::<DirectIPLookup>("DirectIPLookup", |e| e.changes().load(Ordering::Acquire));
}

#[test]
fn scopes_run_from_the_innermost_compound_out() {
    assert_eq!(compound_prefix("a/b/c"), "a/b/");
    assert_eq!(compound_prefix("c"), "");
    assert_eq!(scopes("a/b/c").collect::<Vec<_>>(), ["a/b/", "a/", ""]);
    assert_eq!(scopes("c").collect::<Vec<_>>(), [""]);
}

/// A route table two compounds deep sees the innermost declaration of a
/// name, and names declared further out when no inner one exists.
#[test]
fn address_names_resolve_through_nested_compounds() {
    let mut r = from_config(
        "AddressInfo(net 1.0.0.0/8, far 3.0.0.0/8);
         elementclass Inner {
             AddressInfo(net 2.0.0.0/8);
             input -> rt :: RadixIPLookup(net:ipnet 0, far:ipnet 1) -> output;
             rt[1] -> [1] output;
         }
         elementclass Outer {
             AddressInfo(far 4.0.0.0/8);
             input -> i :: Inner -> output; i[1] -> [1] output;
         }
         Idle -> o :: Outer -> Discard; o[1] -> Discard;",
    );
    assert_eq!(
        read(&mut r, "o/i/rt.table"),
        "2.0.0.0/8\t\t-\t\t0\n4.0.0.0/8\t\t-\t\t1\n"
    );
}

#[test]
fn static_name_tables() {
    let protos = "TCP 6, icmp 1, igmp 2, Udp 17, 47 47, 256 bad IP protocol, \
                  nope expected IP protocol";
    let ports = "WWW 80, 443 443, 65536 port out of range, nope expected port number";
    type Parse = fn(&str) -> Result<u32, String>;
    let by_proto: Parse = |s| parse_ip_proto(s).map(u32::from);
    let by_port: Parse = |s| parse_known_port(s).map(u32::from);
    for (table, parse) in [(protos, by_proto), (ports, by_port)] {
        for case in table.split(", ") {
            let (input, want) = case.split_once(' ').unwrap();
            let want = want.parse::<u32>().map_err(|_| want.to_string());
            assert_eq!(parse(input), want, "{input}");
        }
    }
    assert_eq!(ip_proto_name(17), Some("udp"));
    assert_eq!(ip_proto_name(132), Some("sctp"));
    assert_eq!(ip_proto_name(200), None);
}

/// PortInfo names come before the well-known service names, and numbers
/// before both; a PortInfo inside a compound shadows an outer one.
#[test]
fn port_names_resolve_by_scope_then_well_known() {
    fn udp_ports(config: &str) -> (u16, u16) {
        let mut r = from_config(config);
        let x = r.find_element("c/x").unwrap();
        r.inject_packet(x, 0, Packet::from_slice(b"p"));
        let q = r.find_element("q").unwrap();
        let p = r.pull_from(q, 0, 1).unwrap().pop().unwrap();
        let ip = Ipv4Header::new_checked(p.data()).unwrap();
        let udp = UdpHeader::new_checked(ip.payload()).unwrap();
        (udp.src_port(), udp.dst_port())
    }
    let inner = "elementclass C { PortInfo(svc 2222); input -> x :: UDPIPEncap(1.0.0.1, svc, 2.0.0.2, www) -> output }";
    assert_eq!(
        udp_ports(&format!(
            "PortInfo(svc 1111, www 8080); {inner}\nIdle -> c :: C -> q :: Queue -> Discard;"
        )),
        (2222, 8080)
    );
    assert_eq!(
        udp_ports(&format!(
            "{inner}\nIdle -> c :: C -> q :: Queue -> Discard;"
        )),
        (2222, 80)
    );
    let outer_only =
        "elementclass C { input -> x :: UDPIPEncap(1.0.0.1, svc, 2.0.0.2, 53) -> output }";
    assert_eq!(
        udp_ports(&format!(
            "PortInfo(svc 1111, 53 9); {outer_only}\nIdle -> c :: C -> q :: Queue -> Discard;"
        )),
        (1111, 53)
    );
}

/// AddressInfo and PortInfo read their arguments alike: empty ones are
/// skipped, a lone name is an error, messages keep the arguments' order;
/// only PortInfo takes `#` comments.
#[test]
fn info_declarations() {
    fn errors(config: &str) -> Vec<String> {
        try_from_config(&format!("{config}; Idle -> Discard;"))
            .err()
            .unwrap_or_default()
    }
    /// Each of `expected` is in `config`'s errors, in this order.
    fn in_order(config: &str, expected: &[&str]) {
        let e = errors(config);
        let at: Vec<Option<usize>> = expected
            .iter()
            .map(|want| e.iter().position(|m| m.contains(want)))
            .collect();
        assert!(at.iter().all(Option::is_some), "{config}: {e:?}");
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{config}: {e:?}");
    }
    in_order(
        "AddressInfo(a, b 1.2.3.4.5, , c)",
        &[
            "expected 'NAME [ADDRS]', got 'a'",
            "\"b\" '1.2.3.4.5' is not a recognizable address",
            "expected 'NAME [ADDRS]', got 'c'",
        ],
    );
    in_order(
        "PortInfo(p 1/sctp, lonely, q 99999)",
        &[
            "\"p\": bad protocol 'sctp'",
            "expected 'NAME PORT[/PROTOCOL]', got 'lonely'",
            "\"q\": bad port '99999'",
        ],
    );
    assert!(!errors("AddressInfo(x 1.2.3.4 # note)").is_empty());
    assert!(errors("PortInfo(x 80 # www, # nothing but a note)").is_empty());
}
