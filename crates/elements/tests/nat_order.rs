//! Packet order through the rewriters when a batch splits over several
//! outputs that meet again downstream. Click pushes packet by packet, so
//! two outputs merging into one element see the packets in arrival order;
//! a rewriter that sent its batch whole by the first packet's output and
//! the others one by one reordered them (forward packets of a flow ahead
//! of the replies that arrived before them). Checked against the expected
//! arrival order and, when present, against the reference Click
//! (`../shared/reference/click/bin/click` or `RCLICK_REFERENCE_CLICK`).

#[path = "common/reference.rs"]
mod reference;
use std::path::{Path, PathBuf};
use std::process::Command;

use rclick_elements::testing::from_config;

/// Forward and reverse packets of one TCP and one UDP flow, interleaved,
/// so that a `keep 0 1` spec sends them to outputs 0 and 1 alternately.
const DUMP: &str = "!data ip_src sport ip_dst dport ip_proto
1.1.1.1 1 2.2.2.2 2 T
2.2.2.2 2 1.1.1.1 1 T
1.1.1.1 1 2.2.2.2 2 T
3.3.3.3 3 4.4.4.4 4 U
4.4.4.4 4 3.3.3.3 3 U
2.2.2.2 2 1.1.1.1 1 T
5.5.5.5 5 6.6.6.6 6 T
";

fn reference_click() -> Option<PathBuf> {
    reference::reference_click_for_part()
}

fn data_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.starts_with('!') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// The packets a rewriter (`decl`, two outputs merged into one dump) lets
/// through, in the order the dump saw them, under rclick (batches of 32)
/// and, if present, under the reference Click.
fn run(name: &str, decl: &str, mapping: Option<&str>) -> (Vec<String>, Option<Vec<String>>) {
    let dir = std::env::temp_dir().join(format!("rclick-nat-order-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.txt");
    std::fs::write(&input, DUMP).unwrap();
    let body = |burst: &str, out: &Path| {
        format!(
            "FromIPSummaryDump({}, STOP true{burst}) -> rw :: {decl};
             t :: ToIPSummaryDump({}, FIELDS ip_src sport ip_dst dport ip_proto);
             rw[0] -> t; rw[1] -> t;",
            input.display(),
            out.display()
        )
    };
    let ours = dir.join("rclick.txt");
    let mut r = from_config(&body(", BURST 32", &ours));
    if let Some(m) = mapping {
        r.write_handler("rw.add_mapping", m).expect("add_mapping");
    }
    r.run();
    drop(r);
    let got = data_lines(&std::fs::read_to_string(&ours).unwrap());
    let theirs = reference_click()
        .filter(|_| mapping.is_none())
        .map(|click| {
            let out = dir.join("click.txt");
            let st = Command::new(click)
                .arg("-e")
                .arg(body("", &out))
                .status()
                .expect("run reference click");
            assert!(st.success());
            data_lines(&std::fs::read_to_string(&out).unwrap())
        });
    let _ = std::fs::remove_dir_all(&dir);
    (got, theirs)
}

#[test]
fn a_batch_split_over_merging_outputs_keeps_arrival_order() {
    let (got, click) = run("keep", "IPRewriter(keep 0 1)", None);
    assert_eq!(got, data_lines(DUMP), "rclick reordered the batch");
    if let Some(c) = click {
        assert_eq!(got, c, "differs from Click");
    }
}

#[test]
fn tcp_and_udp_rewriters_keep_arrival_order() {
    for (name, decl, want) in [
        (
            "tcp",
            "TCPRewriter(keep 0 1)",
            data_lines(DUMP)
                .into_iter()
                .filter(|l| l.ends_with('T'))
                .collect::<Vec<_>>(),
        ),
        ("udp", "UDPRewriter(keep 0 1)", data_lines(DUMP)),
    ] {
        let (got, click) = run(name, decl, None);
        assert_eq!(got, want, "{decl}: reordered the batch");
        if let Some(c) = click {
            assert_eq!(got, c, "{decl}: differs from Click");
        }
    }
}

/// Packets of a mapping added by `add_mapping` (to output 0) between
/// packets the `pass 1` spec lets through unchanged: the two outputs
/// merge, and the packets keep their arrival order.
#[test]
fn pass_packets_stay_between_mapped_ones() {
    let (got, _) = run(
        "pass",
        "IPRewriter(pass 1)",
        Some("tcp 1.1.1.1 1 2.2.2.2 2 => 9.9.9.9 1000 2.2.2.2 2 0 0"),
    );
    let want: Vec<String> = data_lines(DUMP)
        .into_iter()
        .map(|l| l.replace("1.1.1.1 1 2.2.2.2 2", "9.9.9.9 1000 2.2.2.2 2"))
        .collect();
    assert_eq!(got, want, "rclick reordered the batch");
}
