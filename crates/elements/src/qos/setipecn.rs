//! # SetIPECN
//!
//! Sets the ECN field of IP packets.
//!
//! ## Synopsis
//! `SetIPECN(ECN)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets the two low bits of each IP packet's TOS byte (the ECN field) to
//! ECN and updates the header checksum incrementally. The packet must have
//! its network header annotation set (CheckIPHeader, MarkIPHeader). A
//! packet without a complete IP header is dropped and counted (Click
//! asserts on it).
//!
//! ECN is `0`-`3`, `no` or `-` (Not-ECT, 0), `ect1` or `ECT(1)` (1),
//! `ect2` or `ECT(0)` (2), or `ce` or `CE` (3), as Click spells them.
//!
//! ## Handlers
//! - `ecn` (read/write): the ECN argument as configured (`CE`, `3`);
//!   writing it reconfigures the element.
//! - `drops` (read): packets dropped for lacking an IP header (an rclick
//!   addition).
//!
//! ## Example
//! ```click
//! FromDump(in.pcap) -> Strip(14) -> CheckIPHeader -> SetIPECN(CE) -> Discard;
//! ```

use rclick_core::conf::Args;
use rclick_core::element::handlers::reconfigure_keyword;
use rclick_core::element::hflags;
use rclick_core::wire::checksum::update16;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::keyword_arg;
use crate::ip::ipcommon::{ip_hdr, ip_hdr_mut};

#[derive(Default)]
pub struct SetIPECN {
    ecn: u8,
    drops: u64,
}

/// Click's ECN spellings.
fn parse_ecn(s: &str) -> Result<u8, String> {
    match s.trim() {
        "0" | "no" | "-" => Ok(0),
        "1" | "ect1" | "ECT(1)" => Ok(1),
        "2" | "ect2" | "ECT(0)" => Ok(2),
        "3" | "ce" | "CE" => Ok(3),
        _ => Err("bad ECN argument".into()),
    }
}

impl SimpleAction for SetIPECN {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if ip_hdr(&p).is_none() {
            self.drops += 1;
            return None;
        }
        if let Some(mut ip) = ip_hdr_mut(&mut p) {
            let old = u16::from_be_bytes([ip.header()[0], ip.tos()]);
            ip.set_ecn(self.ecn);
            let new = u16::from_be_bytes([ip.header()[0], ip.tos()]);
            let c = update16(ip.checksum(), old, new);
            ip.set_checksum(c);
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<SetIPECN>] = &[
    // rclick's addition, listed after Click's.
    Handler::data("drops", |e| &e.drops),
    // Click's keyword handler: reads ECN as configured, writing
    // reconfigures.
    Handler::flagged(
        hflags::CALM,
        Handler::read_write(
            "ecn",
            |_, ctx| {
                let conf = ctx
                    .element_config_at(ctx.element_index())
                    .unwrap_or_default();
                keyword_arg(&conf, "ECN", 0)
            },
            |e, v, ctx| reconfigure_keyword(e, "ECN", Some(0), v, ctx),
        ),
    ),
];

rclick_core::element_class!(SetIPECN);

impl Element for SetIPECN {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let ecn: String = args.read_mp_with("ECN", |s| Ok(s.to_string()));
        args.complete()?;
        self.ecn = parse_ecn(&ecn)?;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }
}
