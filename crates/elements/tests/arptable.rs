//! ARPTable shared between ARPQueriers (ARPQuerier's TABLE keyword).

use std::sync::mpsc;
use std::time::Duration;

use rclick_core::StopReason;
use rclick_elements::testing::{from_config, read};

/// Runs `config` to its end on a thread of its own and returns the
/// handlers' values, or fails if the run does not end within 20 s (a
/// querier that kept the shared table locked while its packets went on
/// to another querier of the same table would hang).
fn run_reading(config: &'static str, handlers: &'static [&'static str]) -> Vec<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = from_config(config);
        let stop = r.run_limited(1_000_000);
        let values: Vec<String> = handlers.iter().map(|h| read(&mut r, h)).collect();
        let _ = tx.send((stop, values));
    });
    let (stop, values) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the router hung (the shared ARP table stayed locked downstream?)");
    assert_eq!(stop, StopReason::Stopped);
    values
}

/// Two queriers of one table on one wire: q0's ARP query reaches q1's
/// input synchronously (through an ARPResponder playing the host), and
/// q1's reply handling must find the table free. The entry q1 records
/// is q0's too: q1 sends the packet q0 held (as Click's ARPTable hands
/// held packets to the querier that inserts), and q0 addresses its
/// second packet from the shared entry.
#[test]
fn queriers_sharing_a_table_can_feed_each_other() {
    let v = run_reading(
        "t :: ARPTable;
         q0 :: ARPQuerier(10.0.0.1, 00:00:00:00:00:01, TABLE t);
         q1 :: ARPQuerier(10.0.0.2, 00:00:00:00:00:02, TABLE t);
         InfiniteSource(LIMIT 2, STOP true) -> SetIPAddress(10.0.0.9) -> q0;
         q0 -> c :: Classifier(12/0806, -);
         c[0] -> ARPResponder(10.0.0.9 00:00:00:00:00:09) -> [1]q1;
         c[1] -> ip :: Counter -> Discard;
         Idle -> [1]q0;
         Idle -> q1 -> Discard;",
        &["q1.responses", "t.count", "t.table", "ip.count"],
    );
    assert_eq!(v[0], "1", "q1 got the reply: {v:?}");
    assert_eq!(v[1], "1", "{v:?}");
    assert!(v[2].starts_with("10.0.0.9 1 00-00-00-00-00-09"), "{v:?}");
    // The first packet waits for a reply to q0 (held in the shared table),
    // the second goes out addressed at once.
    assert_eq!(v[3], "1", "{v:?}");
}
