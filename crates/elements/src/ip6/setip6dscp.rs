//! # SetIP6DSCP
//!
//! Sets the IPv6 differentiated services code point.
//!
//! ## Synopsis
//! `SetIP6DSCP(DSCP)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Expects IPv6 packets with the network header set. Sets the DSCP, the
//! top six bits of the traffic class, to DSCP (0 to 63), keeping the two
//! ECN bits and the flow label. Packets without an IPv6 header at the
//! network header (Click asserts) are dropped and counted.
//!
//! ## Keywords
//! - **DSCP** (unsigned, 0-63): the code point.
//!
//! ## Handlers
//! - `dscp` (read/write): the code point.
//! - `drops` (read): packets dropped for lack of an IPv6 header (rclick
//!   extension).
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> SetIP6DSCP(46) -> ...;
//! ```

use rclick_core::conf::{parse_u32, Args};
use rclick_core::element::hflags;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::ip6_hdr_mut;

#[derive(Default)]
pub struct SetIP6DSCP {
    dscp: u8,
    drops: u64,
}

fn parse_dscp(s: &str) -> Result<u8, String> {
    match parse_u32(s.trim()) {
        Ok(n) if n <= 63 => Ok(n as u8),
        Ok(_) => Err("diffserv code point out of range".into()),
        Err(_) => Err("DSCP: expected unsigned integer".into()),
    }
}

impl SimpleAction for SetIP6DSCP {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if super::common::ip6_hdr(&p).is_none() {
            self.drops += 1;
            return None;
        }
        if let Some(mut h) = ip6_hdr_mut(&mut p) {
            let tc = (self.dscp << 2) | h.ecn();
            h.set_traffic_class(tc);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<SetIP6DSCP>] = &[
    // rclick's addition, listed after Click's.
    Handler::data("drops", |e| &e.drops),
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "dscp",
            |e, _| e.dscp.to_string(),
            |e, v, _| {
                e.dscp = parse_dscp(v)?;
                Ok(())
            },
        ),
    ),
];

rclick_core::element_class!(SetIP6DSCP);

impl Element for SetIP6DSCP {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let dscp: u32 = args.read_mp("DSCP");
        args.complete()?;
        self.dscp = parse_dscp(&dscp.to_string())?;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
