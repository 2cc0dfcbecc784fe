//! Arbitrary Ethernet frames through the whole Figure 8 router (two
//! interfaces, merged or unmerged forwarding paths): it must never panic,
//! and every input packet must be accounted for (forwarded, answered,
//! delivered to the host, held for ARP or counted in a drop counter) —
//! the invariant of crates/elements/tests/ip_router_conservation.
//!
//! Input format: a sequence of records `[flags][len][len bytes]`; flags
//! bit 0 picks the interface, bit 1 the merged router for the whole input
//! (first record only). The seed corpus (fuzz/corpus/ip_router) holds the
//! frames of conf/ip-router/*.in.pcap in this format.
#![no_main]

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use libfuzzer_sys::fuzz_target;
use rclick_core::{Packet, Router};
use rclick_elements::testing::from_config;

#[path = "../../crates/elements/tests/ip_router_conservation/mod.rs"]
mod conservation;

struct State {
    routers: [Option<(Router, usize, usize)>; 2],
    uses: [u32; 2],
}

thread_local! {
    // Never dropped: at exit the packet pools' thread-local may already be
    // gone, and dropping the routers' packets would then panic.
    static STATE: RefCell<ManuallyDrop<State>> = const {
        RefCell::new(ManuallyDrop::new(State { routers: [None, None], uses: [0, 0] }))
    };
}

fn router(combo: bool) -> (Router, usize, usize) {
    let r = from_config(&conservation::config(combo));
    let i0 = r.find_element("in0").expect("in0");
    let i1 = r.find_element("in1").expect("in1");
    (r, i0, i1)
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let combo = data[0] & 2 != 0;
    let k = combo as usize;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        // Built once per process; rebuilt now and then to bound memory
        // (the output queues only fill).
        s.uses[k] += 1;
        if s.routers[k].is_none() || s.uses[k] % 512 == 0 {
            s.routers[k] = Some(router(combo));
        }
        let Some((r, i0, i1)) = s.routers[k].as_mut() else {
            return;
        };
        let mut rest = data;
        while rest.len() >= 2 {
            let flags = rest[0];
            let len = (rest[1] as usize).min(rest.len() - 2);
            let len = if flags & 4 != 0 {
                (len * 8).min(rest.len() - 2)
            } else {
                len
            };
            let frame = &rest[2..2 + len];
            rest = &rest[2 + len..];
            let elem = if flags & 1 != 0 { *i1 } else { *i0 };
            r.inject_packet(elem, 0, Packet::from_slice(frame));
        }
        if let Err(e) = conservation::check(r, combo) {
            panic!("packet conservation violated: {e}");
        }
    });
});
