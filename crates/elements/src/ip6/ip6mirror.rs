//! # IP6Mirror
//!
//! Swaps an IPv6 packet's source and destination.
//!
//! ## Synopsis
//! `IP6Mirror()`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Swaps the source and destination addresses of the IPv6 header at the
//! network header and, when the fixed header's next header is TCP or UDP
//! and 8 bytes of transport header are present, the source and
//! destination ports. No checksum changes: the pseudo-header sum is the
//! same either way. A packet without an IPv6 header at its network header
//! (Click crashes on one) passes unchanged and is counted in `drops`.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `drops` (read): packets without an IPv6 header (rclick extension).
//!
//! ## Example
//! ```click
//! ... -> CheckIP6Header -> IP6Mirror -> ...;
//! ```

use rclick_core::conf::Args;
use rclick_core::wire::ipv6::{HEADER_LEN, PROTO_TCP, PROTO_UDP};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::ip6_hdr_mut;

#[derive(Default)]
pub struct IP6Mirror {
    drops: u64,
}

impl SimpleAction for IP6Mirror {
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        if super::common::ip6_hdr(&p).is_none() {
            self.drops += 1;
            return Some(p);
        }
        if let Some(mut h) = ip6_hdr_mut(&mut p) {
            let (src, dst) = (h.src(), h.dst());
            h.set_src(dst);
            h.set_dst(src);
            let nh = h.next_header();
            let b = h.into_inner();
            if nh == PROTO_TCP || nh == PROTO_UDP {
                if let Some(ports) = b.get_mut(HEADER_LEN..HEADER_LEN + 8) {
                    let (s, d) = ports.split_at_mut(2);
                    s.swap_with_slice(&mut d[..2]);
                }
            }
        }
        Some(p)
    }
}

const HANDLERS: &[Handler<IP6Mirror>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IP6Mirror);

impl Element for IP6Mirror {
    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        Args::new(conf).complete()?;
        Ok(())
    }

    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);
}
