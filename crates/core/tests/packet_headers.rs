//! `Packet::network_and_transport_headers` agrees with
//! `network_header`, `transport_header` and `network_header_length`:
//! the network header when set and not past the data, the transport
//! header when also set, not before the network header and not past the
//! data.

use rclick_core::Packet;

fn expected(p: &Packet) -> Option<(&[u8], Option<&[u8]>)> {
    let ip = p.network_header()?;
    let tp = match (p.transport_header(), p.network_header_length()) {
        (Some(t), Some(_)) => Some(t),
        _ => None,
    };
    Some((ip, tp))
}

#[test]
fn network_and_transport_headers_agree_with_the_separate_getters() {
    let data: Vec<u8> = (0..60u8).collect();
    let mut checked = 0;
    let mut some_transport = 0;
    for net in [None, Some(0), Some(14), Some(40), Some(60)] {
        for hl in [0usize, 8, 20, 46, 47, 80] {
            for transport_at in [None, Some(0), Some(10), Some(34), Some(59)] {
                // Each packet also with bytes pulled from the front (the
                // network header may then lie in the headroom) and taken
                // from the end (the headers may lie past the data).
                for (pull, take) in [(0, 0), (14, 0), (20, 0), (0, 30), (14, 40), (0, 60)] {
                    let mut p = Packet::from_slice(&data);
                    if let Some(n) = net {
                        p.set_network_header(n, hl);
                    }
                    if let Some(t) = transport_at {
                        p.set_transport_header(t);
                    }
                    p.pull(pull);
                    p.take(take);
                    let got = p.network_and_transport_headers();
                    assert_eq!(
                        got,
                        expected(&p),
                        "net {net:?} hl {hl} transport {transport_at:?} pull {pull} take {take}"
                    );
                    checked += 1;
                    some_transport += got.is_some_and(|(_, t)| t.is_some()) as usize;
                }
            }
        }
    }
    assert!(
        checked > 500 && some_transport > 50,
        "{checked} {some_transport}"
    );
}
