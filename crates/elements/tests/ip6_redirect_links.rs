//! ICMPv6 redirects (RFC 4861 section 8) from rclick to a Linux host: a
//! one-interface router whose table sends 2001:db8:a::/64 back out the
//! interface a packet came in on; a PaintTee notices, and ICMP6Error(...,
//! 137, 0) tells the sender, from the router's link-local address, that
//! the destination is on its link (target = destination). Host A, whose
//! own address is a /128 (so it sends everything to its default router
//! fe80::a01), accepts the redirect: its route to the destination no
//! longer goes via the router.
//!
//! Needs root, iproute2, iputils-ping and coreutils' `timeout`; skips with
//! the reason otherwise.

mod common;

use common::netns::*;

const A: &str = "2001:db8:a::2";
const C: &str = "2001:db8:a::5";
const R: &str = "2001:db8:a::1";
const LL_R: &str = "fe80::a01";
const MAC_R: &str = "02:00:00:00:0a:01";

fn skip_reason() -> Option<String> {
    ping_namespace_skip_reason()
}

fn router_config(dev: &str) -> String {
    format!(
        "FromDevice({dev}) -> c :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, 12/86dd, -);
         out :: Queue(1000) -> ToDevice({dev});
         nds :: IP6NDSolicitor({LL_R}, {MAC_R}) -> out;
         c[0] -> t :: Tee -> nda :: IP6NDAdvertiser({R} {LL_R} {MAC_R}) -> out;
         t[1] -> [1]nds;
         c[1] -> [1]nds;
         c[2] -> Paint(0) -> Strip(14) -> CheckIP6Header -> GetIP6Address(24)
           -> rt :: LookupIP6Route({R}/128 1, {LL_R}/128 1, 2001:db8:a::/64 0);
         rt[1] -> Discard;
         // Out the interface it came in on: a redirect to the sender.
         rt[0] -> pt :: PaintTee(0) -> dh :: DecIP6HLIM -> nds;
         pt[1] -> redirects :: Counter -> ICMP6Error({LL_R}, 137, 0) -> nds;
         dh[1] -> Discard; c[3] -> Discard;"
    )
}

#[test]
fn linux_accepts_rclicks_redirect() {
    skip_if!(skip_reason());
    let t = tag();
    let (a, r) = (Netns::new("i6ra"), Netns::new("i6rr"));
    r.disable_ipv6();
    let (a_dev, r_dev) = (format!("i6ra{t}"), format!("i6rr{t}"));
    must(&[
        "ip", "link", "add", &a_dev, "netns", &a.name, "type", "veth", "peer", "name", &r_dev,
        "netns", &r.name,
    ]);
    r.exec(&["ip", "link", "set", &r_dev, "address", MAC_R]);
    r.exec(&["ip", "link", "set", &r_dev, "up"]);
    a.exec(&[
        "sysctl",
        "-qw",
        &format!("net.ipv6.conf.{a_dev}.accept_redirects=1"),
    ]);
    a.exec(&["ip", "link", "set", &a_dev, "up"]);
    a.exec(&[
        "ip",
        "-6",
        "addr",
        "add",
        &format!("{A}/128"),
        "dev",
        &a_dev,
        "nodad",
    ]);
    a.exec(&[
        "ip", "-6", "route", "add", "default", "via", LL_R, "dev", &a_dev,
    ]);
    let router = Running::start(&r, &router_config(&r_dev));

    let (_, before) = a.run(5, &["ip", "-6", "route", "get", C]);
    assert!(before.contains(&format!("via {LL_R}")), "before: {before}");
    // C does not exist: the pings fail, but the first goes to the router,
    // which redirects.
    let _ = a.run(10, &["ping", "-6", "-n", "-c", "2", "-W", "1", C]);
    assert!(router.read_u64("redirects.count") >= 1);
    let (_, after) = a.run(5, &["ip", "-6", "route", "get", C]);
    assert!(
        !after.contains("via"),
        "after the redirect A should reach {C} directly: {after}"
    );
    drop(router);
}
