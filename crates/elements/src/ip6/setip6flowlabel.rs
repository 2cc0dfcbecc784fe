//! # SetIP6FlowLabel
//!
//! Sets the IPv6 flow label.
//!
//! ## Synopsis
//! `SetIP6FlowLabel(FLOW)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IPv6 packets with the network header set. Sets the 20-bit flow
//! label (RFC 8200 section 6, RFC 6437) to FLOW, keeping the version and
//! the traffic class. Packets without an IPv6 header at the network header
//! are dropped and counted. (SetIP6DSCP sets the traffic class's DSCP
//! bits.) Click 2.1 has no flow label setter; the IPv6 elements report
//! names one.
//!
//! ## Keywords
//! - **FLOW** (unsigned, 0 to 0xFFFFF): the flow label.
//!
//! ## Handlers
//! - `flow` (read/write): the flow label.
//! - `drops` (read): packets dropped for lack of an IPv6 header.
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> SetIP6FlowLabel(0x12345) -> ...;
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::ip6_hdr_mut;

#[derive(Default)]
pub struct SetIP6FlowLabel {
    flow: u32,
    drops: u64,
}

fn parse_flow(s: &str) -> Result<u32, String> {
    match parse_u32(s.trim()) {
        Ok(n) if n <= 0xfffff => Ok(n),
        Ok(_) => Err("flow label out of range".into()),
        Err(_) => Err("FLOW: expected unsigned integer".into()),
    }
}

impl SimpleAction for SetIP6FlowLabel {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        match ip6_hdr_mut(&mut p) {
            Some(mut h) => h.set_flow_label(self.flow),
            None => {
                self.drops += 1;
                return None;
            }
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<SetIP6FlowLabel>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "flow",
            |e, _| e.flow.to_string(),
            |e, v, _| {
                e.flow = parse_flow(v)?;
                Ok(())
            },
        ),
    ),
];

rclick_core::element_class!(SetIP6FlowLabel);

impl Element for SetIP6FlowLabel {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let flow: String = args.read_mp("FLOW");
        args.complete()?;
        self.flow = parse_flow(&flow)?;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
