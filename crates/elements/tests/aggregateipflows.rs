//! AggregateIPFlows where rclick departs from Click on purpose: a reply
//! that comes while its flow's first fragment is still held belongs to
//! that flow (Click renumbers the flow, then aborts on an assertion when
//! the held fragment leaves). Click's behaviour elsewhere is checked by
//! the differential cases analysis-aggregateipflows*.

use rclick_core::StopReason;
use rclick_elements::testing::from_config;

fn run(tag: &str, input: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("rclick-aggipflows-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inp = dir.join("in");
    let out = dir.join("out");
    std::fs::write(&inp, input).unwrap();
    let conf = format!(
        "FromIPSummaryDump({}, STOP true) -> a :: AggregateIPFlows(UDP_TIMEOUT 5) \
         -> ToIPSummaryDump({}, FIELDS aggregate link ip_id); \
         DriverManager(pause, write a.clear, stop)",
        inp.display(),
        out.display()
    );
    let mut r = from_config(&conf);
    assert_eq!(r.run(), StopReason::Stopped);
    drop(r);
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .filter(|l| !l.starts_with('!'))
        .map(str::to_string)
        .collect()
}

#[test]
fn reply_while_first_fragment_is_held_joins_its_flow() {
    let lines = run(
        "frag",
        "!data timestamp src sport dst dport proto ip_id ip_fragoff ip_len\n\
         24 2.0.0.1 7 2.0.0.2 9 U 12 24 80\n\
         25 2.0.0.1 7 2.0.0.2 9 U 12 0+ 24\n\
         26 2.0.0.2 9 2.0.0.1 7 U 13 0 100\n",
    );
    // The held fragments leave (with their datagram's flow) when the
    // first fragment comes; the reply is flow 1, direction 1.
    assert_eq!(lines, ["1 0 12", "1 0 12", "1 1 13"]);
}

#[test]
fn flows_renumber_after_timeout_and_reset() {
    let lines = run(
        "renumber",
        "!data timestamp src sport dst dport proto ip_id tcp_flags\n\
         1 1.0.0.1 5 1.0.0.2 6 U 1 .\n\
         2 1.0.0.2 6 1.0.0.1 5 U 2 .\n\
         9 1.0.0.1 5 1.0.0.2 6 U 3 .\n\
         10 1.0.0.1 5 1.0.0.2 6 T 4 S\n\
         11 1.0.0.2 6 1.0.0.1 5 T 5 R\n\
         12 1.0.0.2 6 1.0.0.1 5 T 6 S\n",
    );
    assert_eq!(
        lines,
        ["1 0 1", "1 1 2", "2 0 3", "3 0 4", "3 1 5", "4 0 6"]
    );
}

/// A host pair whose flows are all reaped is forgotten (Click keeps every
/// host pair until the router stops, so its table only grows over a long
/// trace). Seen through TRACEINFO: the flows still known at the end are
/// listed by host pair, oldest pair first, so a forgotten pair that comes
/// back is listed after the pairs that stayed.
#[test]
fn host_pairs_without_flows_are_forgotten() {
    let dir = std::env::temp_dir().join(format!("rclick-aggipflows-{}-pairs", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inp = dir.join("in");
    let info = dir.join("info.xml");
    std::fs::write(
        &inp,
        "!data timestamp src sport dst dport proto\n\
         1 1.0.0.1 5 1.0.0.2 6 U\n\
         2 2.0.0.1 5 2.0.0.2 6 U\n\
         100 2.0.0.1 5 2.0.0.2 6 U\n\
         101 1.0.0.1 5 1.0.0.2 6 U\n",
    )
    .unwrap();
    let conf = format!(
        "FromIPSummaryDump({}, STOP true) \
         -> AggregateIPFlows(UDP_TIMEOUT 5, REAP 10, TRACEINFO {}) -> Discard;",
        inp.display(),
        info.display()
    );
    let mut r = from_config(&conf);
    assert_eq!(r.run(), StopReason::Stopped);
    r.cleanup();
    drop(r);
    let text = std::fs::read_to_string(&info).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let aggs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("<flow aggregate='"))
        .filter_map(|l| l.split('\'').next())
        .collect();
    // At 100: 2.0.0.1's flow 2 has timed out and is renumbered 3; the
    // reap then finds 1.0.0.1's flow 1 dead. At 101 1.0.0.1 comes back as
    // flow 4, a new host pair, listed after 2.0.0.1's at the end.
    assert_eq!(aggs, ["2", "1", "3", "4"], "{text}");
}
