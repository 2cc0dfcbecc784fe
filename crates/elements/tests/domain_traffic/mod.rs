//! Arbitrary packets through the domain routers (IPv6 forwarding, NAT,
//! the learning switch with VLANs, QoS queueing and scheduling, flow
//! gates on a flow table with per-flow state): none may
//! panic, and where the elements count what they drop, every packet must
//! be accounted for. Shared by the `domain_traffic` fuzz target
//! (fuzz/fuzz_targets/domain_traffic.rs, nightly) and the stable tests in
//! tests/domain_fuzz.rs, which replay its committed corpus
//! (fuzz/corpus/domain_traffic) and a run of generated inputs.
//!
//! Input format: byte 0 picks the router; then records `[port][len][len
//! bytes]`: `port` picks the injected input (`in0`..), `len` the frame
//! length (bit 7 of `port` multiplies it by 8, for long frames). In the
//! `flow` router, a record whose `port` has bit 6 set is a handler write
//! instead (its bytes, as text, to the gates' `add_filter`,
//! `remove_filter` or `filters`): the filter SPEC parser is fuzzed too.
#![allow(dead_code)]

use rclick_core::{Packet, Router};
use rclick_elements::testing::{from_config, read_every_handler, read_number as num};

/// The routers, each with Counter inputs `in0`.. fed from Idle (packets
/// are injected into them) and counters on every exit.
pub const ROUTERS: &[(&str, usize, &str)] = &[
    (
        "ip6",
        1,
        "Idle -> in0 :: Counter -> Strip(14) -> chk :: CheckIP6Header -> ok :: Counter
           -> GetIP6Address(24)
           -> rt :: LookupIP6Route(2001:db8::1/128 ::0 0, 2001:db8::/48 ::0 1,
                                   2001:db8:1::/48 fe80::1 1, ::ffff:0:0/96 ::0 2, ::0/0 fe80::2 1);
         rt[0] -> local :: Counter -> Discard;
         rt[2] -> mapped :: Counter -> Discard;
         rt[1] -> fwd :: Counter -> dh :: DecIP6HLIM -> out :: Counter -> Discard;
         dh[1] -> exp :: Counter -> ICMP6Error(2001:db8::1, 3, 0) -> icmp :: Counter -> Discard;",
    ),
    (
        "ip6-nd",
        2,
        "Idle -> in0 :: Counter -> nds :: IP6NDSolicitor(fe80::1, 00:00:c0:00:00:01) -> o0 :: Counter -> Discard;
         Idle -> in1 :: Counter -> c :: Classifier(12/86dd 20/3aff 54/87, 12/86dd 20/3aff 54/88, -);
         c[0] -> nda :: IP6NDAdvertiser(fe80::1 00:00:c0:00:00:01, 2001:db8::/64 00:00:c0:00:00:01) -> o1 :: Counter -> Discard;
         c[1] -> [1]nds;
         c[2] -> o2 :: Counter -> Discard;",
    ),
    (
        "nat",
        2,
        "Idle -> in0 :: Counter -> [0]rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop, CAPACITY 64);
         Idle -> in1 :: Counter -> [1]rw;
         rw[0] -> o0 :: Counter -> Discard;
         rw[1] -> o1 :: Counter -> Discard;",
    ),
    (
        "nat-icmp",
        2,
        "Idle -> in0 :: Counter -> [0]rw :: UDPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop);
         Idle -> in1 :: Counter -> [1]rw;
         rw[0] -> o0 :: Counter -> Discard;
         rw[1] -> o1 :: Counter -> Discard;
         Idle -> in2 :: Counter -> [0]pr :: ICMPPingRewriter(pattern 192.0.2.1 - - - 0 1);
         pr[0] -> o2 :: Counter -> Discard;
         pr[1] -> o3 :: Counter -> Discard;
         Idle -> in3 :: Counter -> icr :: ICMPRewriter(rw pr) -> o4 :: Counter -> Discard;",
    ),
    (
        "switch",
        3,
        "Idle -> in0 :: Counter -> [0]sw :: EtherSwitch(TIMEOUT 300);
         Idle -> in1 :: Counter -> VLANDecap -> [1]sw;
         Idle -> in2 :: Counter -> StripEtherVLANHeader -> [2]sw;
         sw[0] -> o0 :: Counter -> Discard;
         sw[1] -> VLANEncap(VLAN_TCI 10) -> o1 :: Counter -> Discard;
         sw[2] -> EnsureEther -> o2 :: Counter -> Discard;",
    ),
    (
        "qos",
        2,
        "Idle -> in0 :: Counter -> red :: RED(5, 50, 0.02) -> q0 :: Queue(100);
         Idle -> in1 :: Counter -> Strip(14) -> m :: Meter(1000) -> q1 :: FrontDropQueue(50);
         m[1] -> SetIPECN(CE) -> q1;
         q0 -> CoDel -> [0]drr :: DRRSched;
         q1 -> ared :: AdaptiveRED(10, 0.1) -> [1]drr;
         drr -> Shaper(100000) -> Unqueue(BURST 8) -> out :: Counter -> Discard;",
    ),
    (
        "flow",
        2,
        "Idle -> in0 :: Counter -> Strip(14) -> ft :: FlowTable(CAPACITY 8, TIMEOUT 1)
           -> fc :: FlowCounter -> g :: FlowGate(src 10.0.0.0/8, proto udp dport 53, -);
         g[0] -> o0 :: Counter -> Discard;
         g[1] -> q :: FlowDRRQueue(QUANTUM 100, CAPACITY 4, TOTAL 16) -> Unqueue(BURST 8) -> o1 :: Counter -> Discard;
         g[2] -> o2 :: Counter -> Discard;
         Idle -> in1 :: Counter -> Paint(1) -> g2 :: FlowGate(iif 1 proto tcp, -, TABLE ft);
         g2[0] -> o3 :: Counter -> Discard; g2[1] -> o4 :: Counter -> Discard;",
    ),
    (
        "ip6-ext",
        1,
        "Idle -> in0 :: Counter -> Strip(14) -> chk :: CheckIP6Header -> ok :: Counter
           -> hbh :: IP6HopByHop -> n0 :: Counter -> rh :: IP6Routing -> n1 :: Counter
           -> ra :: IP6Reassembler(HIMEM 65536) -> whole :: Counter -> fr :: IP6Fragmenter(1280)
           -> fo :: Counter -> ci :: CheckICMP6Header -> io :: Counter
           -> pt :: ProtocolTranslator64 -> p4 :: Counter -> Discard;
         hbh[1] -> h1 :: Counter -> Discard; hbh[2] -> h2 :: Counter -> Discard;
         hbh[3] -> h3 :: Counter -> Discard;
         hbh[4] -> h4 :: Counter -> ICMP6Error(2001:db8::1, 4, 2) -> Discard;
         rh[1] -> r1 :: Counter -> ICMP6Error(2001:db8::1, 4, 0) -> Discard;
         ra[1] -> ICMP6Error(2001:db8::1, 3, 1) -> Discard;
         fr[1] -> f1 :: Counter -> Discard; ci[1] -> c1 :: Counter -> Discard;",
    ),
];

/// The handlers the `flow` router's handler-write records go to.
const FLOW_WRITES: &[&str] = &[
    "g.add_filter",
    "g.remove_filter",
    "g.filters",
    "g2.add_filter",
    "g2.remove_filter",
    "ft.clear",
];

/// Runs one input; panics (the fuzzer's failure) on a lost packet.
pub fn domain_traffic(data: &[u8]) {
    let Some((&which, mut rest)) = data.split_first() else {
        return;
    };
    let (name, ninputs, config) = ROUTERS[which as usize % ROUTERS.len()];
    let mut r = from_config(config);
    let inputs: Vec<usize> = (0..ninputs)
        .map(|i| {
            r.find_element(&format!("in{i}"))
                .unwrap_or_else(|| panic!("{name}: no in{i}"))
        })
        .collect();
    let mut injected = 0;
    while rest.len() >= 2 && injected < 64 {
        let (port, len) = (rest[0], rest[1] as usize);
        let len = if port & 0x80 != 0 { len * 8 } else { len }.min(rest.len() - 2);
        let frame = &rest[2..2 + len];
        rest = &rest[2 + len..];
        if name == "flow" && port & 0x40 != 0 {
            let h = FLOW_WRITES[usize::from(port & 0x3f) % FLOW_WRITES.len()];
            let _ = r.write_handler(h, &String::from_utf8_lossy(frame));
            continue;
        }
        let elem = inputs[(port & 0x7f) as usize % inputs.len()];
        r.inject_packet(elem, 0, Packet::from_slice(frame));
        injected += 1;
    }
    r.run_limited(16);
    if let Err(e) = check(&mut r, name) {
        panic!("{name}: {e}");
    }
    // Every handler reads without a panic.
    read_every_handler(&mut r);
    let _ = r.take_chatter();
}

fn sum(r: &mut Router, hs: &[&str]) -> Result<u64, String> {
    hs.iter().map(|h| num(r, h)).sum()
}

/// The accounting each router allows.
fn check(r: &mut Router, name: &str) -> Result<(), String> {
    let eq = |what: &str, a: u64, b: u64| {
        if a == b {
            Ok(())
        } else {
            Err(format!("{what}: {a} != {b}"))
        }
    };
    match name {
        "ip6" => {
            eq(
                "in = bad + ok",
                num(r, "in0.count")?,
                sum(r, &["chk.drops", "ok.count"])?,
            )?;
            eq(
                "ok = no route + local + mapped + forwarded",
                num(r, "ok.count")?,
                sum(r, &["rt.drops", "local.count", "mapped.count", "fwd.count"])?,
            )?;
            let (fwd, out, exp) = (
                num(r, "fwd.count")?,
                num(r, "out.count")?,
                num(r, "exp.count")?,
            );
            if out + exp > fwd {
                return Err(format!("DecIP6HLIM: {out} out + {exp} expired > {fwd} in"));
            }
            if num(r, "icmp.count")? > exp {
                return Err("ICMP6Error answered more than it got".into());
            }
        }
        "ip6-ext" => {
            eq(
                "in = bad + ok",
                num(r, "in0.count")?,
                sum(r, &["chk.drops", "ok.count"])?,
            )?;
            eq(
                "IP6HopByHop: in = drops + outputs",
                num(r, "ok.count")?,
                sum(
                    r,
                    &[
                        "hbh.drops",
                        "n0.count",
                        "h1.count",
                        "h2.count",
                        "h3.count",
                        "h4.count",
                    ],
                )?,
            )?;
            eq(
                "IP6Routing: in = drops + outputs",
                num(r, "n0.count")?,
                sum(r, &["rh.drops", "n1.count", "r1.count"])?,
            )?;
            if num(r, "whole.count")? > num(r, "n1.count")? {
                return Err("IP6Reassembler: more out than in".into());
            }
            eq(
                "IP6Fragmenter drops",
                num(r, "fr.drops")?,
                num(r, "f1.count")?,
            )?;
            if num(r, "fo.count")? + num(r, "f1.count")? < num(r, "whole.count")? {
                return Err("IP6Fragmenter lost packets".into());
            }
            eq(
                "CheckICMP6Header: in = good + bad",
                num(r, "fo.count")?,
                sum(r, &["io.count", "c1.count"])?,
            )?;
            eq(
                "CheckICMP6Header drops",
                num(r, "ci.drops")?,
                num(r, "c1.count")?,
            )?;
        }
        "nat" => {
            eq(
                "in = out + drops",
                sum(r, &["in0.count", "in1.count"])?,
                sum(r, &["o0.count", "o1.count", "rw.drops"])?,
            )?;
        }
        "switch" => {
            // A frame leaves by one port, is flooded to the other two, or
            // is dropped.
            let ins = sum(r, &["in0.count", "in1.count", "in2.count"])?;
            let outs = sum(r, &["o0.count", "o1.count", "o2.count"])?;
            if outs > 2 * ins {
                return Err(format!("{outs} frames out of {ins} in on 3 ports"));
            }
        }
        "qos" => {
            for q in ["q0", "q1"] {
                let len = num(r, &format!("{q}.length"))?;
                let cap = num(r, &format!("{q}.capacity"))?;
                if len > cap {
                    return Err(format!("{q} holds {len} > capacity {cap}"));
                }
            }
            if num(r, "out.count")? > sum(r, &["in0.count", "in1.count"])? {
                return Err("more out than in".into());
            }
        }
        "flow" => {
            eq(
                "in0 = bad + unmatched + out + queued + dropped",
                num(r, "in0.count")?,
                sum(
                    r,
                    &[
                        "g.bad",
                        "g.nomatch",
                        "o0.count",
                        "o2.count",
                        "o1.count",
                        "q.length",
                        "q.drops",
                        "q.bad",
                    ],
                )?,
            )?;
            eq(
                "in1 = bad + unmatched + out",
                num(r, "in1.count")?,
                sum(r, &["g2.bad", "g2.nomatch", "o3.count", "o4.count"])?,
            )?;
            let flows = r.read_handler("ft.size", None)?;
            if flows.trim().parse::<u64>().unwrap_or(99) > 8 {
                return Err(format!("the flow table holds {flows} flows > CAPACITY 8"));
            }
        }
        _ => {}
    }
    Ok(())
}
