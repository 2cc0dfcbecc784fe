//! # SetRandIP6Address
//!
//! Sets the destination IPv6 address annotation to a random address.
//!
//! ## Synopsis
//! `SetRandIP6Address(PREFIX [, LIMIT, *keywords* SEED])`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! Sets each packet's destination IPv6 address annotation to a random
//! address within PREFIX: the prefix's bits, random bits elsewhere. With
//! LIMIT, LIMIT such addresses are drawn at configuration time and each
//! packet gets one of them at random. The packet's bytes do not change
//! (SetIP6Address and GetIP6Address move addresses between the annotation
//! and the header). The IPv6 twin of Click's SetRandIPAddress, named in the
//! IPv6 elements report; Click 2.1 has no SetRandIP6Address.
//!
//! ## Keywords
//! - **PREFIX** (IPv6 prefix or address): where the addresses lie.
//! - **LIMIT** (integer, at most 65536): how many addresses to draw; a
//!   negative LIMIT or none draws a fresh address per packet.
//! - **SEED** (unsigned): the random generator's seed, for repeatable runs
//!   (rclick extension). Default: from the clock at configuration.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! InfiniteSource -> SetRandIP6Address(2001:db8::/32) -> rt :: LookupIP6Route(...);
//! ```

use std::net::Ipv6Addr;
use std::time::{SystemTime, UNIX_EPOCH};

use rclick_core::conf::{parse_i32, parse_u64, Args};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet, SimpleAction};

use super::common::parse_ipv6_prefix_arg;

#[derive(Default)]
pub struct SetRandIP6Address {
    prefix: u128,
    mask: u128,
    addrs: Vec<Ipv6Addr>,
    state: u64,
}

impl SetRandIP6Address {
    /// splitmix64.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn pick(&mut self) -> Ipv6Addr {
        let r = (u128::from(self.next()) << 64) | u128::from(self.next());
        Ipv6Addr::from((r & !self.mask) | (self.prefix & self.mask))
    }
}

impl SimpleAction for SetRandIP6Address {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let a = if self.addrs.is_empty() {
            self.pick()
        } else {
            let i = (self.next() % self.addrs.len() as u64) as usize;
            self.addrs[i]
        };
        p.set_dst_ip6_anno(a);
        Some(p)
    }
}

const HANDLERS: &[Handler<SetRandIP6Address>] = &[];

rclick_core::element_class!(SetRandIP6Address);

impl Element for SetRandIP6Address {
    rclick_core::element_kind!(action);
    rclick_core::handlers!(HANDLERS);

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let prefix = args.read_mp_with("PREFIX", |s| parse_ipv6_prefix_arg(s, ictx));
        let limit = args.read_p_or_with("LIMIT", parse_i32, -1);
        let seed = args.read_with("SEED", parse_u64);
        args.complete()?;
        if limit > 65536 {
            return Err("LIMIT must be at most 65536".into());
        }
        self.prefix = u128::from(prefix.addr);
        self.mask = u128::from(prefix.mask);
        self.state = seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
        self.addrs.clear();
        for _ in 0..limit.max(0) {
            let a = self.pick();
            self.addrs.push(a);
        }
        Ok(())
    }
}
