//! IPv4 route lookup: LookupIPRoute, StaticIPLookup, LinearIPLookup,
//! RadixIPLookup and DirectIPLookup on crafted tables (default routes,
//! overlapping prefixes, host routes, gateways in the annotation, drops),
//! their handlers and errors, hot swap; the lookup structures against a
//! reference on random tables (proptest) and on the full Internet table.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use proptest::prelude::*;
use rclick_core::time::DEFAULT_SIMTIME_START;
use rclick_core::{Packet, Router, RouterOptions};
use rclick_elements::ip::lpmbench::{load_prefixes, mix64, random_addresses, route_for};
use rclick_elements::ip::routetable::{
    len_mask, parse_route, Dir24_8, Hop, LinearLpm, Lpm, Radix16_4, Route, RouteTable, StrideTrie,
    TableError, NO_ROUTE,
};
use rclick_elements::testing::{from_config, read, try_from_config};

const DYNAMIC: [&str; 3] = ["LinearIPLookup", "RadixIPLookup", "DirectIPLookup"];
const ALL: [&str; 5] = [
    "LookupIPRoute",
    "StaticIPLookup",
    "LinearIPLookup",
    "RadixIPLookup",
    "DirectIPLookup",
];

/// `rt :: CLASS(routes)` with outputs 0..3 each into a Queue `qN`.
fn router(class: &str, routes: &str) -> Router {
    from_config(&format!(
        "rt :: {class}({routes});
         Idle -> rt;
         rt[0] -> q0 :: Queue(100) -> Idle; rt[1] -> q1 :: Queue(100) -> Idle;
         rt[2] -> q2 :: Queue(100) -> Idle; rt[3] -> q3 :: Queue(100) -> Idle;"
    ))
}

/// Sends a packet with destination annotation `dst` into `rt`; returns the
/// output it came out of and its annotation there, or `None` if dropped.
fn route(r: &mut Router, dst: &str) -> Option<(usize, Ipv4Addr)> {
    let rt = r.find_element("rt").unwrap();
    let mut p = Packet::zeroed(64);
    p.set_dst_ip_anno(dst.parse().unwrap());
    r.inject_packet(rt, 0, p);
    for port in 0..4 {
        let q = r.find_element(&format!("q{port}")).unwrap();
        if let Some(mut b) = r.pull_from(q, 0, 10) {
            assert_eq!(b.len(), 1);
            let p = b.pop().unwrap();
            return Some((port, p.dst_ip_anno()));
        }
    }
    None
}

fn lookup(r: &mut Router, a: &str) -> String {
    r.read_handler("rt.lookup", Some(a)).unwrap()
}

const CRAFTED: &str = "0.0.0.0/0 18.26.4.1 1, 18.26.4.0/24 0, 18.26.4.24/32 2, \
                       18.26.4.128/25 - 3, 10.0.0.0/255.0.0.0 10.0.0.1 1, 10.1.0.0/16 2";

#[test]
fn every_class_routes_by_longest_prefix() {
    for class in ALL {
        let mut r = router(class, CRAFTED);
        let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        assert_eq!(
            route(&mut r, "18.26.4.9"),
            Some((0, a("18.26.4.9"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "18.26.4.24"),
            Some((2, a("18.26.4.24"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "18.26.4.200"),
            Some((3, a("18.26.4.200"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "18.26.4.127"),
            Some((0, a("18.26.4.127"))),
            "{class}"
        );
        // Default route with a gateway: the annotation becomes the gateway.
        assert_eq!(
            route(&mut r, "1.2.3.4"),
            Some((1, a("18.26.4.1"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "10.9.9.9"),
            Some((1, a("10.0.0.1"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "10.1.255.255"),
            Some((2, a("10.1.255.255"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "0.0.0.0"),
            Some((1, a("18.26.4.1"))),
            "{class}"
        );
        assert_eq!(
            route(&mut r, "255.255.255.255"),
            Some((1, a("18.26.4.1"))),
            "{class}"
        );
        assert_eq!(lookup(&mut r, "18.26.4.24"), "2", "{class}");
        assert_eq!(lookup(&mut r, "99.0.0.1"), "1 18.26.4.1", "{class}");
        assert_eq!(read(&mut r, "rt.drops"), "0");
    }
}

#[test]
fn no_route_drops_and_counts() {
    for class in ALL {
        let mut r = router(class, "10.0.0.0/8 1");
        assert_eq!(route(&mut r, "11.0.0.1"), None, "{class}");
        assert_eq!(route(&mut r, "9.255.255.255"), None, "{class}");
        assert!(route(&mut r, "10.255.0.1").is_some());
        assert_eq!(read(&mut r, "rt.drops"), "2", "{class}");
        assert_eq!(lookup(&mut r, "11.0.0.1"), "-1", "{class}");
        let chatter = r.take_chatter().join("\n");
        match class {
            "DirectIPLookup" => assert!(!chatter.contains("no "), "{chatter}"),
            "RadixIPLookup" => {
                assert!(
                    chatter.contains("IPRouteTable: no route for 11.0.0.1"),
                    "{chatter}"
                )
            }
            // Click prints the address word as a little-endian host sees it.
            _ => assert!(
                chatter.contains(&format!("{class}: no gw for 100000b")),
                "{chatter}"
            ),
        }
    }
}

/// A batch is routed as a whole: packets keep their order on each output,
/// gateways land in each packet's annotation, unroutable packets are
/// dropped from the middle of the batch, and a batch bound for one output
/// arrives there complete.
#[test]
fn mixed_batch_keeps_order_per_output() {
    use rclick_core::Batch;
    for class in ALL {
        let mut r = router(class, "10.0.0.0/8 1, 20.0.0.0/8 30.0.0.1 2");
        let rt = r.find_element("rt").unwrap();
        let mut batch = Batch::new();
        let dsts = [
            "10.0.0.1", "20.0.0.1", "10.0.0.2", "99.0.0.1", "10.0.0.2", "20.0.0.2",
        ];
        for (i, d) in dsts.iter().enumerate() {
            let mut p = Packet::zeroed(64);
            p.set_dst_ip_anno(d.parse().unwrap());
            p.writable()[0] = i as u8;
            batch.push(p);
        }
        r.inject(rt, 0, batch);
        let seen = |r: &mut Router, port: usize| -> Vec<(u8, Ipv4Addr)> {
            let q = r.find_element(&format!("q{port}")).unwrap();
            let b = r.pull_from(q, 0, 64);
            b.map(|b| {
                b.packets()
                    .iter()
                    .map(|p| (p.data()[0], p.dst_ip_anno()))
                    .collect()
            })
            .unwrap_or_default()
        };
        let a = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        assert_eq!(
            seen(&mut r, 1),
            vec![(0, a("10.0.0.1")), (2, a("10.0.0.2")), (4, a("10.0.0.2"))],
            "{class}"
        );
        assert_eq!(
            seen(&mut r, 2),
            vec![(1, a("30.0.0.1")), (5, a("30.0.0.1"))],
            "{class}"
        );
        assert_eq!(read(&mut r, "rt.drops"), "1", "{class}");

        let mut batch = Batch::new();
        for i in 0..40u8 {
            let mut p = Packet::zeroed(64);
            p.set_dst_ip_anno(Ipv4Addr::new(10, 0, 0, i));
            p.writable()[0] = i;
            batch.push(p);
        }
        r.inject(rt, 0, batch);
        let got = seen(&mut r, 1);
        assert_eq!(got.len(), 40, "{class}");
        assert!(
            got.iter().enumerate().all(|(i, (k, _))| *k as usize == i),
            "{class}"
        );
    }
}

#[test]
fn table_output_matches_click() {
    let routes = "10.0.0.0/8 1, 0.0.0.0/0 18.26.4.1 0, 192.168.100.128/25 - 2, 1.2.3.4/32 3";
    for class in ["LookupIPRoute", "StaticIPLookup", "LinearIPLookup"] {
        let mut r = router(class, routes);
        assert_eq!(
            read(&mut r, "rt.table"),
            "10.0.0.0/8 - 1\n0.0.0.0/0 18.26.4.1 0\n192.168.100.128/25 - 2\n1.2.3.4/32 - 3\n",
            "{class}"
        );
    }
    for class in ["RadixIPLookup", "DirectIPLookup"] {
        let mut r = router(class, routes);
        assert_eq!(
            read(&mut r, "rt.table"),
            "10.0.0.0/8\t\t-\t\t1\n0.0.0.0/0\t\t18.26.4.1\t0\n\
             192.168.100.128/25\t-\t\t2\n1.2.3.4/32\t\t-\t\t3\n",
            "{class}"
        );
    }
    // Host bits are cleared; a bare address is a /32.
    let mut r = router("LinearIPLookup", "10.1.2.3/8 1, 4.4.4.4 0");
    assert_eq!(read(&mut r, "rt.table"), "10.0.0.0/8 - 1\n4.4.4.4/32 - 0\n");
}

#[test]
fn configuration_errors() {
    for class in ALL {
        let e = try_from_config(&format!("rt :: {class}(10.0.0.0/8 1, bogus 0, 1.0.0.0/8 1 2 3); Idle -> rt; rt[0] -> Discard; rt[1] -> Discard;"))
            .err()
            .unwrap_or_else(|| panic!("{class} accepted bad routes"))
            .join("\n");
        assert!(
            e.contains("argument 2 should be 'ADDR/MASK [GATEWAY] OUTPUT'"),
            "{class}: {e}"
        );
        assert!(e.contains("argument 3 should be"), "{class}: {e}");
        let e = try_from_config(&format!(
            "rt :: {class}(10.0.0.0/8 5); Idle -> rt; rt[0] -> Discard;"
        ))
        .err()
        .unwrap()
        .join("\n");
        assert!(e.contains("argument 1 bad OUTPUT"), "{class}: {e}");
    }
    for class in ["RadixIPLookup", "DirectIPLookup"] {
        let e = try_from_config(&format!(
            "rt :: {class}(10.0.0.0/255.0.255.0 0); Idle -> rt; rt[0] -> Discard;"
        ))
        .err()
        .unwrap()
        .join("\n");
        assert!(e.contains("non-contiguous mask"), "{class}: {e}");
    }
    // LinearIPLookup takes non-contiguous masks.
    let mut r = router("LinearIPLookup", "10.0.0.0/255.0.255.0 1, 0/0 0");
    assert_eq!(lookup(&mut r, "10.77.0.5"), "1");
    assert_eq!(lookup(&mut r, "10.77.1.5"), "0");
    // Duplicate prefixes: the first is kept, with a warning.
    for class in ALL {
        let mut r = router(class, "10.0.0.0/8 1, 10.0.0.0/8 2");
        assert_eq!(lookup(&mut r, "10.0.0.1"), "1", "{class}");
        let warnings: Vec<String> = r.take_warnings().iter().map(|d| d.to_string()).collect();
        assert_eq!(
            warnings[1..],
            ["  warning: 1 duplicate route ignored (the first route for a prefix is kept)"],
            "{class}"
        );
        assert!(
            warnings[0].ends_with(&format!(":: {class}':")),
            "{warnings:?}"
        );
    }
}

#[test]
fn add_set_remove_handlers() {
    for class in DYNAMIC {
        let mut r = router(class, "10.0.0.0/8 1");
        r.write_handler("rt.add", "10.1.0.0/16 10.1.0.1 2").unwrap();
        assert_eq!(lookup(&mut r, "10.1.2.3"), "2 10.1.0.1", "{class}");
        let e = r.write_handler("rt.add", "10.1.0.0/16 3").unwrap_err();
        assert!(
            e.contains("conflict with existing route '10.1.0.0/16 10.1.0.1 2'"),
            "{class}: {e}"
        );
        r.write_handler("rt.set", "10.1.0.0/16 3").unwrap();
        assert_eq!(lookup(&mut r, "10.1.2.3"), "3", "{class}");
        r.write_handler("rt.set", "0.0.0.0/0 1.1.1.1 0").unwrap();
        assert_eq!(lookup(&mut r, "11.0.0.0"), "0 1.1.1.1", "{class}");
        // Remove with gateway and output must match exactly.
        let e = r
            .write_handler("rt.remove", "10.1.0.0/16 9.9.9.9 3")
            .unwrap_err();
        assert!(
            e.contains("route '10.1.0.0/16 9.9.9.9 3' not found"),
            "{class}: {e}"
        );
        r.write_handler("rt.remove", "10.1.0.0/16 3").unwrap();
        assert_eq!(lookup(&mut r, "10.1.2.3"), "1", "{class}");
        r.write_handler("rt.remove", "10.0.0.0/8").unwrap();
        assert_eq!(lookup(&mut r, "10.1.2.3"), "0 1.1.1.1", "{class}");
        r.write_handler("rt.remove", "0.0.0.0/0").unwrap();
        assert_eq!(lookup(&mut r, "10.1.2.3"), "-1", "{class}");
        assert_eq!(read(&mut r, "rt.table"), "", "{class}");
        let e = r.write_handler("rt.remove", "10.0.0.0/8").unwrap_err();
        assert!(
            e.contains("route '10.0.0.0/8 - -1' not found"),
            "{class}: {e}"
        );
        // Syntax and output errors.
        let e = r.write_handler("rt.add", "10.0.0.0/8").unwrap_err();
        assert_eq!(e, "expected 'ADDR/MASK [GATEWAY] OUTPUT'");
        let e = r
            .write_handler("rt.remove", "10.0.0.0/8 1 2 3")
            .unwrap_err();
        assert_eq!(e, "expected 'ADDR/MASK [GATEWAY OUTPUT]'");
        let e = r.write_handler("rt.add", "10.0.0.0/8 4").unwrap_err();
        assert_eq!(e, "bad OUTPUT");
        let e = r.write_handler("rt.add", "10.0.0.0/8 -1").unwrap_err();
        assert_eq!(e, "bad OUTPUT");
        let e = r.read_handler("rt.lookup", Some("ten")).unwrap_err();
        assert!(e.contains("expected IP address"), "{e}");
        // Host routes and flush.
        r.write_handler("rt.add", "1.2.3.4/32 2").unwrap();
        r.write_handler("rt.add", "1.2.3.0/24 1").unwrap();
        assert_eq!(route(&mut r, "1.2.3.4").map(|x| x.0), Some(2));
        assert_eq!(route(&mut r, "1.2.3.5").map(|x| x.0), Some(1));
        r.write_handler("rt.flush", "").unwrap();
        assert_eq!(read(&mut r, "rt.table"), "");
        assert_eq!(lookup(&mut r, "1.2.3.4"), "-1");
    }
}

#[test]
fn static_tables_are_read_only() {
    for class in ["LookupIPRoute", "StaticIPLookup"] {
        let mut r = router(class, "10.0.0.0/8 1");
        for h in ["add", "set", "remove", "ctrl", "flush"] {
            assert!(
                r.write_handler(&format!("rt.{h}"), "1.0.0.0/8 1").is_err(),
                "{class}.{h}"
            );
        }
        assert_eq!(lookup(&mut r, "1.0.0.1"), "-1");
    }
}

#[test]
fn ctrl_is_atomic() {
    for class in DYNAMIC {
        let mut r = router(class, "10.0.0.0/8 1, 20.0.0.0/8 2");
        r.write_handler(
            "rt.ctrl",
            "add 30.0.0.0/8 3\n\n  set 10.0.0.0/8 10.0.0.1 0\nremove 20.0.0.0/8 // gone\n",
        )
        .unwrap();
        assert_eq!(lookup(&mut r, "30.1.1.1"), "3", "{class}");
        assert_eq!(lookup(&mut r, "10.1.1.1"), "0 10.0.0.1", "{class}");
        assert_eq!(lookup(&mut r, "20.1.1.1"), "-1", "{class}");
        let before = read(&mut r, "rt.table");
        // Fails on the last line: nothing changes.
        let e = r
            .write_handler(
                "rt.ctrl",
                "add 40.0.0.0/8 1\nset 10.0.0.0/8 2\nremove 30.0.0.0/8\nadd 40.0.0.0/8 2",
            )
            .unwrap_err();
        assert!(
            e.contains("conflict with existing route '40.0.0.0/8 - 1'"),
            "{class}: {e}"
        );
        assert_eq!(read(&mut r, "rt.table"), before, "{class}");
        assert_eq!(lookup(&mut r, "40.1.1.1"), "-1", "{class}");
        assert_eq!(lookup(&mut r, "30.1.1.1"), "3", "{class}");
        assert_eq!(lookup(&mut r, "10.1.1.1"), "0 10.0.0.1", "{class}");
        let e = r
            .write_handler("rt.ctrl", "add 50.0.0.0/8 1\nfrobnicate 1")
            .unwrap_err();
        assert_eq!(e, "bad command 'frobnicate'");
        assert_eq!(lookup(&mut r, "50.1.1.1"), "-1", "{class}");
        let e = r.write_handler("rt.ctrl", "remove 60.0.0.0/8").unwrap_err();
        assert!(e.contains("not found"), "{e}");
    }
}

#[test]
fn memory_handler_reports_sizes() {
    for class in ALL {
        let mut r = router(class, "10.0.0.0/8 1, 10.0.0.0/25 2");
        let m = read(&mut r, "rt.memory");
        assert!(m.contains("routes 2\n"), "{class}: {m}");
        assert!(m.contains("lookup_bytes "), "{class}: {m}");
    }
}

fn build_hotswap(text: &str) -> Router {
    let opts = RouterOptions {
        simtime: Some(DEFAULT_SIMTIME_START),
        hotswap: true,
        capture_chatter: true,
        ..Default::default()
    };
    rclick_elements::testing::from_config_with(text, &opts)
}

#[test]
fn hot_swap_keeps_dynamic_routes() {
    for class in DYNAMIC {
        let conf = |routes: &str| {
            format!("rt :: {class}({routes}); Idle -> rt; rt[0] -> Discard; rt[1] -> Discard;")
        };
        let mut r = build_hotswap(&conf("10.0.0.0/8 0"));
        r.write_handler("rt.add", "20.0.0.0/8 1").unwrap();
        r.hotswap(&conf("30.0.0.0/8 1")).unwrap();
        assert_eq!(
            r.read_handler("rt.lookup", Some("20.1.1.1")).unwrap(),
            "1",
            "{class}"
        );
        assert_eq!(
            r.read_handler("rt.lookup", Some("10.1.1.1")).unwrap(),
            "0",
            "{class}"
        );
        // Fewer outputs: routes to missing outputs are dropped.
        r.hotswap(&format!("rt :: {class}(); Idle -> rt; rt[0] -> Discard;"))
            .unwrap();
        assert_eq!(r.read_handler("rt.lookup", Some("20.1.1.1")).unwrap(), "-1");
        assert_eq!(r.read_handler("rt.lookup", Some("10.1.1.1")).unwrap(), "0");
    }
    // Static tables follow the new configuration.
    let mut r = build_hotswap("rt :: StaticIPLookup(10.0.0.0/8 0); Idle -> rt -> Discard;");
    r.hotswap("rt :: StaticIPLookup(20.0.0.0/8 0); Idle -> rt -> Discard;")
        .unwrap();
    assert_eq!(r.read_handler("rt.lookup", Some("10.1.1.1")).unwrap(), "-1");
    assert_eq!(r.read_handler("rt.lookup", Some("20.1.1.1")).unwrap(), "0");
}

#[test]
fn route_syntax() {
    let none = |_: &str| None;
    let r = parse_route("10.0.0.0/8 10.0.0.1 2", false, &none).unwrap();
    assert_eq!(
        r,
        Route::new(Ipv4Addr::new(10, 0, 0, 0), 8, Ipv4Addr::new(10, 0, 0, 1), 2)
    );
    assert_eq!(parse_route("10.0.0.0/8 - 2", false, &none).unwrap().gw, 0);
    assert_eq!(parse_route("10.0.0.0/8", true, &none).unwrap().port, -1);
    assert_eq!(
        parse_route("10.0.0.0/8 1.1.1.1", true, &none).unwrap().port,
        -1
    );
    assert!(parse_route("10.0.0.0/8", false, &none).is_none());
    assert!(parse_route("10.0.0.0/8 x", false, &none).is_none());
    assert!(parse_route("10.0.0.0/33 1", false, &none).is_none());
    assert!(parse_route("", true, &none).is_none());
    let names = |n: &str| (n == "gw").then(|| Ipv4Addr::new(1, 2, 3, 4));
    let r = parse_route("gw/24 gw 1", false, &names).unwrap();
    assert_eq!(
        (r.addr, r.mask, r.gw),
        (0x0102_0300, 0xffff_ff00, 0x0102_0304)
    );
}

#[test]
fn address_info_names_in_configuration() {
    if rclick_elements::registry().get("AddressInfo").is_none() {
        println!("SKIP: no AddressInfo element class yet");
        return;
    }
    let mut r = from_config(
        "AddressInfo(net 10.5.0.0, gw 10.5.0.1);
         rt :: RadixIPLookup(net/16 gw 1, gw 0); Idle -> rt; rt[0] -> Discard; rt[1] -> Discard;",
    );
    assert_eq!(lookup(&mut r, "10.5.9.9"), "1 10.5.0.1");
    assert_eq!(lookup(&mut r, "10.5.0.1"), "0");
}

// ------------------------------------------------------- structure tests

/// Reference longest-prefix match: a hash map per prefix length, tried
/// from /32 down.
#[derive(Default)]
struct Reference {
    by_len: Vec<HashMap<u32, Hop>>,
}

impl Reference {
    fn new() -> Self {
        Reference {
            by_len: (0..=32).map(|_| HashMap::new()).collect(),
        }
    }
    fn set(&mut self, r: &Route) {
        let l = r.prefix_len().unwrap() as usize;
        self.by_len[l].insert(
            r.addr,
            Hop {
                gw: r.gw,
                port: r.port,
            },
        );
    }
    fn remove(&mut self, r: &Route) {
        let l = r.prefix_len().unwrap() as usize;
        self.by_len[l].remove(&r.addr);
    }
    fn lookup(&self, a: u32) -> Hop {
        for l in (0..=32u32).rev() {
            if let Some(h) = self.by_len[l as usize].get(&(a & len_mask(l))) {
                return *h;
            }
        }
        NO_ROUTE
    }
}

/// Addresses at and around each route's boundaries, plus the extremes.
fn boundary_addresses(routes: impl Iterator<Item = (u32, u8)>) -> Vec<u32> {
    let mut v = vec![0, 1, u32::MAX, u32::MAX - 1, 0x8000_0000, 0x7fff_ffff];
    for (a, l) in routes {
        let last = a | !len_mask(u32::from(l));
        v.extend([a, a.wrapping_sub(1), last, last.wrapping_add(1)]);
    }
    v
}

#[derive(Debug, Clone)]
enum Op {
    Add(Route),
    Set(Route),
    Remove(u32, u8),
}

fn arb_route() -> impl Strategy<Value = Route> {
    // Few distinct networks so that prefixes overlap and nest.
    (
        prop_oneof![
            Just(0x0a00_0000u32),
            Just(0x0a01_0200),
            Just(0xc0a8_0180),
            any::<u32>()
        ],
        any::<u32>(),
        prop_oneof![0u8..=32, 20u8..=32, 6u8..=26],
        0i32..4,
        prop_oneof![Just(0u32), Just(0x0101_0101), Just(0x0202_0202)],
    )
        .prop_map(|(base, noise, len, port, gw)| {
            // Mostly near `base`: flip a few low bits.
            let a = base ^ (noise & 0x0003_0fff) ^ ((noise >> 31) << 20);
            Route::new(Ipv4Addr::from(a), len, Ipv4Addr::from(gw), port)
        })
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => arb_route().prop_map(Op::Add),
        2 => arb_route().prop_map(Op::Set),
        2 => arb_route().prop_map(|r| Op::Remove(r.addr, r.prefix_len().unwrap())),
    ]
}

fn check_ops<L: Lpm>(ops: &[Op], probes: &[u32]) -> Result<(), TestCaseError> {
    let mut t = RouteTable::<L>::new();
    let mut reference = Reference::new();
    let mut present: HashMap<(u32, u8), Route> = HashMap::new();
    for op in ops {
        match op {
            Op::Add(r) | Op::Set(r) => {
                let set = matches!(op, Op::Set(_));
                let key = (r.addr, r.prefix_len().unwrap());
                let res = t.add(*r, set);
                if present.contains_key(&key) && !set {
                    prop_assert!(matches!(res, Err(TableError::Exists(_))));
                } else {
                    prop_assert_eq!(res.unwrap(), present.get(&key).copied());
                    present.insert(key, *r);
                    reference.set(r);
                }
            }
            Op::Remove(a, l) => {
                let r = Route::new(Ipv4Addr::from(*a), *l, Ipv4Addr::UNSPECIFIED, -1);
                let res = t.remove(&r);
                match present.remove(&(*a, *l)) {
                    Some(old) => {
                        prop_assert_eq!(res.unwrap(), old);
                        reference.remove(&old);
                    }
                    None => prop_assert!(res.is_err()),
                }
            }
        }
    }
    prop_assert_eq!(t.len(), present.len());
    let mut addrs = boundary_addresses(present.keys().copied());
    addrs.extend_from_slice(probes);
    for a in addrs {
        prop_assert_eq!(
            t.lookup(a),
            reference.lookup(a),
            "address {}",
            Ipv4Addr::from(a)
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn structures_match_reference(ops in prop::collection::vec(arb_op(), 1..60), seed in any::<u64>()) {
        let probes = random_addresses(64, seed);
        check_ops::<LinearLpm>(&ops, &probes)?;
        check_ops::<Radix16_4>(&ops, &probes)?;
        check_ops::<StrideTrie<8, 4>>(&ops, &probes)?;
        check_ops::<StrideTrie<16, 8>>(&ops, &probes)?;
        check_ops::<Dir24_8>(&ops, &probes)?;
    }
}

/// Removing every route leaves the tries with no child nodes.
#[test]
fn tries_fold_back_when_emptied() {
    let mut t = RouteTable::<Radix16_4>::new();
    let routes: Vec<Route> = (0..2000u64)
        .map(|i| {
            let h = mix64(i);
            Route::new(
                Ipv4Addr::from(h as u32),
                16 + (h >> 40) as u8 % 17,
                Ipv4Addr::UNSPECIFIED,
                (h >> 50) as i32 & 3,
            )
        })
        .collect();
    for r in &routes {
        let _ = t.add(*r, false);
    }
    assert!(t.lpm().nodes() > 0);
    for r in &routes {
        let _ = t.remove(&Route { port: -1, ..*r });
    }
    assert_eq!(t.len(), 0);
    assert_eq!(t.lpm().nodes(), 0);
    assert_eq!(t.hop_count(), 0);
}

// ------------------------------------------------------- full table

fn full_table_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/routes/internet-prefixes.txt.gz")
}

#[test]
fn full_internet_table_matches_reference() {
    let path = full_table_path();
    if !path.exists() {
        println!("SKIP: {} not found", path.display());
        return;
    }
    let mut prefixes = load_prefixes(&path).expect("read prefix list");
    assert!(prefixes.len() > 800_000, "{} prefixes", prefixes.len());
    if cfg!(debug_assertions) {
        // Unoptimised builds are ~30x slower: use an eighth of the table.
        println!("debug build: using every 8th prefix of {}", prefixes.len());
        prefixes = prefixes.into_iter().step_by(8).collect();
    }
    let mut reference = Reference::new();
    for &(a, l) in &prefixes {
        reference.set(&route_for(a, l));
    }
    let n_random = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let mut addrs = random_addresses(n_random, 42);
    // Boundaries of a sample of prefixes, and everything at the extremes.
    addrs.extend(boundary_addresses(prefixes.iter().copied().filter(
        |&(a, l)| mix64(u64::from(a) ^ u64::from(l)).is_multiple_of(8),
    )));
    let expected: Vec<Hop> = addrs.iter().map(|&a| reference.lookup(a)).collect();

    fn check<L: Lpm>(name: &str, prefixes: &[(u32, u8)], addrs: &[u32], expected: &[Hop]) {
        let t0 = std::time::Instant::now();
        let mut t = RouteTable::<L>::new();
        for &(a, l) in prefixes {
            t.add(route_for(a, l), false).expect("unique prefixes");
        }
        let built = t0.elapsed();
        for (a, e) in addrs.iter().zip(expected) {
            assert_eq!(t.lookup(*a), *e, "{name}: {}", Ipv4Addr::from(*a));
        }
        // Remove a sixteenth of the routes and check again.
        let mut reference = Reference::new();
        for (i, &(a, l)) in prefixes.iter().enumerate() {
            let r = route_for(a, l);
            if i % 16 == 5 {
                t.remove(&Route { port: -1, ..r }).expect("present");
            } else {
                reference.set(&r);
            }
        }
        for a in addrs.iter().step_by(3) {
            assert_eq!(
                t.lookup(*a),
                reference.lookup(*a),
                "{name} after removals: {}",
                Ipv4Addr::from(*a)
            );
        }
        let m = t.memory();
        println!(
            "{name}: {} routes in {:.2?}, lookup {:.1} MiB, route list {:.1} MiB",
            prefixes.len(),
            built,
            m.lookup as f64 / 1048576.0,
            m.control as f64 / 1048576.0
        );
    }
    check::<Dir24_8>("DIR-24-8", &prefixes, &addrs, &expected);
    check::<Radix16_4>("Radix 16-4", &prefixes, &addrs, &expected);
}
