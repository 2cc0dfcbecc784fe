//! # CheckIP6Header
//!
//! Checks IPv6 headers.
//!
//! ## Synopsis
//! `CheckIP6Header([BADADDRS, OFFSET])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for bad
//! packets. Processing `a/ah`.
//!
//! ## Description
//! Input packets should have an IPv6 header starting OFFSET bytes in (0 by
//! default). A packet passes when it holds the 40-byte fixed header, its
//! version is 6, its payload length fits in the packet, and its source
//! address is not one of the bad addresses. A passing packet gets its
//! network header annotation (40 bytes long) and loses any bytes past the
//! payload length (Ethernet padding, say). Bad packets are counted and
//! sent to output 1, or dropped when output 1 is absent; the first bad
//! packet prints `IP6 header check failed`.
//!
//! BADADDRS is a space-separated list of IPv6 addresses (or AddressInfo
//! names) that are not valid sources, typically the router's own
//! addresses; `ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff` is always bad.
//! Click 2.1 reads BADADDRS as one word and refuses a list of two or more
//! addresses ("BADADDRS: parse error"), which stops several of its own
//! conf/ files (ip6ndsolicitor.click, ip64-nat.click) from initialising;
//! rclick reads the list, as the argument's name promises.
//!
//! ## Keywords
//! - **BADADDRS** (IPv6 addresses): bad source addresses.
//! - **OFFSET** (unsigned): where the IPv6 header starts. Default 0.
//!
//! ## Handlers
//! - `drops` (read): packets that failed the check.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14) -> CheckIP6Header(3ffe:1ce1:2::ffff)
//!   -> GetIP6Address(24) -> rt :: LookupIP6Route(...);
//! ```

use std::net::Ipv6Addr;

use rclick_core::conf::{split_words, Args};
use rclick_core::element::Filter;
use rclick_core::wire::ipv6::HEADER_LEN;
use rclick_core::wire::Ipv6Header;
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::common::parse_ipv6_arg;

pub struct CheckIP6Header {
    bad_src: Vec<Ipv6Addr>,
    offset: usize,
    drops: u64,
}

impl Default for CheckIP6Header {
    fn default() -> Self {
        CheckIP6Header {
            bad_src: vec![Ipv6Addr::from(u128::MAX)],
            offset: 0,
            drops: 0,
        }
    }
}

impl CheckIP6Header {
    /// The payload length of a good packet, `None` for a bad one.
    #[inline]
    fn check(&self, p: &Packet) -> Option<usize> {
        let h = Ipv6Header::new_checked(p.data().get(self.offset..)?).ok()?;
        let plen = h.payload_len() as usize;
        if plen > p.len() - self.offset - HEADER_LEN {
            return None;
        }
        let src = h.src();
        (!self.bad_src.contains(&src)).then_some(plen)
    }
}

impl Filter for CheckIP6Header {
    #[inline]
    fn filter(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        match self.check(&p) {
            Some(plen) => {
                p.set_network_header(self.offset, HEADER_LEN);
                let end = self.offset + HEADER_LEN + plen;
                if p.len() > end {
                    p.take(p.len() - end);
                }
                Ok(p)
            }
            None => {
                if self.drops == 0 {
                    ctx.chatter("IP6 header check failed");
                }
                self.drops += 1;
                Err(p)
            }
        }
    }
}

const HANDLERS: &[Handler<CheckIP6Header>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(CheckIP6Header);

impl Element for CheckIP6Header {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let bad: Option<Vec<Ipv6Addr>> = args.read_p_with("BADADDRS", |s| {
            split_words(s)
                .iter()
                .map(|w| parse_ipv6_arg(w, ictx))
                .collect::<Result<Vec<_>, _>>()
        });
        let offset: usize = args.read_p_or("OFFSET", 0);
        args.complete()?;
        let mut bad_src = vec![Ipv6Addr::from(u128::MAX)];
        for a in bad.unwrap_or_default() {
            if !bad_src.contains(&a) {
                bad_src.push(a);
            }
        }
        self.bad_src = bad_src;
        self.offset = offset;
        Ok(())
    }

    rclick_core::element_kind!(filter);
    rclick_core::handlers!(HANDLERS);
}
