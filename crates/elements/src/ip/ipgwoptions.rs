//! # IPGWOptions
//!
//! Processes the IP Record Route and Timestamp options of forwarded
//! packets.
//!
//! ## Synopsis
//! `IPGWOptions(MYADDR [, OTHERADDRS])`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0; optional push output 1 for
//! packets with bad options. Processing `a/ah`.
//!
//! ## Description
//! Expects IP packets with the network header set. Packets without options
//! pass untouched. Otherwise each option is examined (RFC 791, RFC 1812
//! section 5.2.4):
//!
//! - Record Route (7): if the pointer leaves room, MYADDR is recorded at the
//!   pointer and the pointer advanced by 4. A full option (pointer just past
//!   the end) is left alone.
//! - Timestamp (68): flag 0 records a timestamp; flag 1 records MYADDR and
//!   a timestamp; flag 3 records a timestamp only if the pre-specified
//!   address at the pointer is MYADDR or one of OTHERADDRS. When a flag 0/1
//!   option is full, its overflow count is incremented. Timestamps are
//!   milliseconds since midnight UT (from the router clock), in network
//!   byte order.
//! - Other options are skipped; End of Option List stops the scan.
//!
//! After a change the header checksum is recomputed. A malformed option (a
//! length below 2 or past the header, a pointer out of range, an unknown
//! timestamp flag, an overflow count that would pass 15) sends the packet to
//! output 1 (or drops it) with the ICMP parameter-problem annotation set to
//! the offset of the offending byte from the start of the IP header, ready
//! for `ICMPError(..., parameterproblem)`.
//!
//! ## Keywords
//! - **MYADDR** (IP address, or AddressInfo name): this interface's address.
//! - **OTHERADDRS** (list of IP addresses): the router's other addresses,
//!   for pre-specified timestamps.
//!
//! ## Handlers
//! - `drops` (read): packets with bad options.
//!
//! ## Example
//! ```click
//! ... -> gio :: IPGWOptions(18.26.4.24) -> FixIPSrc(18.26.4.24) -> ...;
//! gio[1] -> ICMPError(18.26.4.24, parameterproblem) -> rt;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::Args;
use rclick_core::element::Filter;
use rclick_core::wire::ipv4::{IPOPT_EOL, IPOPT_NOP, IPOPT_RR, IPOPT_TS, MIN_HEADER_LEN};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::{parse_ipv4_arg, parse_ipv4_list_arg};
use super::ipcommon::{ip_hdr, ip_hdr_mut};

#[derive(Default)]
pub struct IPGWOptions {
    my_addr: [u8; 4],
    addrs: Vec<[u8; 4]>,
    pub(crate) drops: u64,
}

/// Header bytes plus a little of what follows, on the stack: options are
/// rewritten here, then copied back if anything changed.
struct Scratch {
    buf: [u8; 64],
    /// Bytes copied in from the packet.
    avail: usize,
}

impl Scratch {
    /// The first 64 bytes from the IP header on.
    fn of(from_header: &[u8]) -> Self {
        let mut s = Scratch {
            buf: [0; 64],
            avail: from_header.len().min(64),
        };
        s.buf[..s.avail].copy_from_slice(&from_header[..s.avail]);
        s
    }

    fn get(&self, i: usize) -> u8 {
        if i < self.avail {
            self.buf[i]
        } else {
            0
        }
    }
}

impl IPGWOptions {
    // The scan reads the pointer and flags bytes at fixed places from each
    // option's start even when the option is too short to hold them (they
    // then belong to what follows, and may be rewritten, as in Click), so
    // it walks the scratch copy rather than the options iterator, whose
    // options end at their length.
    /// Runs the option scan. `Ok(true)` when the options changed; `Err(at)`
    /// with the offending byte's offset.
    fn process(&self, s: &mut Scratch, hlen: usize, ms: [u8; 4]) -> Result<bool, usize> {
        let mut changed = false;
        let mut oi = MIN_HEADER_LEN;
        while oi < hlen {
            let ty = s.get(oi);
            if ty == IPOPT_NOP {
                oi += 1;
                continue;
            } else if ty == IPOPT_EOL {
                break;
            }
            let xlen = s.get(oi + 1) as usize;
            if xlen < 2 || oi + xlen > hlen {
                return Err(oi + 1);
            }
            if ty != IPOPT_RR && ty != IPOPT_TS {
                oi += xlen;
                continue;
            }
            // Zero-origin pointer within the option.
            let p = (s.get(oi + 2) as usize).wrapping_sub(1) as isize;
            if ty == IPOPT_RR {
                if p >= 3 && p as usize + 4 <= xlen {
                    let at = oi + p as usize;
                    s.buf[at..at + 4].copy_from_slice(&self.my_addr);
                    s.buf[oi + 2] = s.buf[oi + 2].wrapping_add(4);
                    changed = true;
                } else if p != xlen as isize {
                    return Err(oi + 2);
                }
            } else {
                let oflw = s.get(oi + 3) >> 4;
                let flg = s.get(oi + 3) & 0x0f;
                let mut overflowed = false;
                if p < 4 {
                    return Err(oi + 2);
                }
                let p = p as usize;
                if flg == 0 {
                    if p + 4 <= xlen {
                        let at = oi + p;
                        s.buf[at..at + 4].copy_from_slice(&ms);
                        s.buf[oi + 2] = s.buf[oi + 2].wrapping_add(4);
                        changed = true;
                    } else {
                        overflowed = true;
                    }
                } else if flg == 1 {
                    if p + 8 <= xlen {
                        let at = oi + p;
                        s.buf[at..at + 4].copy_from_slice(&self.my_addr);
                        s.buf[at + 4..at + 8].copy_from_slice(&ms);
                        s.buf[oi + 2] = s.buf[oi + 2].wrapping_add(8);
                        changed = true;
                    } else {
                        overflowed = true;
                    }
                } else if flg == 3 && p + 8 <= xlen {
                    let at = oi + p;
                    let addr = [s.buf[at], s.buf[at + 1], s.buf[at + 2], s.buf[at + 3]];
                    if addr == self.my_addr || self.addrs.contains(&addr) {
                        s.buf[at + 4..at + 8].copy_from_slice(&ms);
                        s.buf[oi + 2] = s.buf[oi + 2].wrapping_add(8);
                        changed = true;
                    }
                } else {
                    return Err(oi + 3);
                }
                if overflowed {
                    if oflw < 15 {
                        // Only inside the header (a 2-byte option has no
                        // flags byte of its own).
                        if oi + 3 < hlen {
                            s.buf[oi + 3] = ((oflw + 1) << 4) | flg;
                            changed = true;
                        }
                    } else {
                        return Err(oi + 3);
                    }
                }
            }
            oi += xlen;
        }
        Ok(changed)
    }
}

impl Filter for IPGWOptions {
    /// Processes the options of `p`: `Ok` with the (possibly rewritten)
    /// packet, or `Err` with a bad packet whose parameter-problem
    /// annotation is set (counted in `drops`). IPOutputCombo runs it too.
    ///
    /// Only a header whose length field says more than 20 bytes can have
    /// options; every other packet (no network header, or an IHL of 5 or
    /// less) passes unchanged after a look at one byte.
    #[inline(always)]
    fn filter(&mut self, p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        if may_have_options(&p) {
            self.filter_options(p, ctx)
        } else {
            Ok(p)
        }
    }
}

/// Whether the IP header of `p` has a length field above 20 bytes: only
/// then is there anything for IPGWOptions to do.
#[inline(always)]
fn may_have_options(p: &Packet) -> bool {
    let off = p.network_offset().and_then(|o| usize::try_from(o).ok());
    let ihl = off.and_then(|off| p.data().get(off)).map(|b| b & 0x0f);
    matches!(ihl, Some(ihl) if ihl > 5)
}

impl IPGWOptions {
    /// The kit's batch path, out of line so that the fast path in
    /// `push_in_chain` saves no registers for it.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        rclick_core::element::kinds::filter_push_in_chain(self, batch, ctx)
    }

    /// [`Filter::filter`] for a header that may have options.
    #[inline(never)]
    fn filter_options(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        let Some(ip) = ip_hdr(&p) else {
            return Ok(p);
        };
        let hlen = ip.header_len();
        if hlen <= MIN_HEADER_LEN {
            return Ok(p);
        }
        // Only packets with options pay for the scratch copy.
        let mut s = Scratch::of(ip.into_inner());
        let now = ctx.now();
        let ms = ((now.sec().rem_euclid(86400) as u64) * 1000
            + (now.subsec_nanos() / 1_000_000) as u64) as u32;
        match self.process(&mut s, hlen, ms.to_be_bytes()) {
            Ok(false) => Ok(p),
            Ok(true) => {
                if let Some(mut ip) = ip_hdr_mut(&mut p) {
                    ip.options_mut()
                        .copy_from_slice(&s.buf[MIN_HEADER_LEN..hlen]);
                    ip.fill_checksum();
                }
                Ok(p)
            }
            Err(at) => {
                self.drops += 1;
                p.set_icmp_param_prob_anno(at.min(255) as u8);
                Err(p)
            }
        }
    }
}

const HANDLERS: &[Handler<IPGWOptions>] = &[Handler::data("drops", |e| &e.drops)];

rclick_core::element_class!(IPGWOptions);

impl Element for IPGWOptions {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let me: Ipv4Addr = args.read_mp_with("MYADDR", |s| parse_ipv4_arg(s, ictx));
        let others = args
            .read_p_with("OTHERADDRS", |s| parse_ipv4_list_arg(s, ictx))
            .unwrap_or_default();
        args.complete()?;
        self.my_addr = me.octets();
        self.addrs = others.iter().map(|a| a.octets()).collect();
        Ok(())
    }

    rclick_core::element_kind!(filter, own_chain);

    // The filter kind's push, after a look that usually finds no options
    // in any packet: then the batch passes as it is.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        !batch.packets().iter().any(may_have_options) || self.push_in_chain_general(batch, ctx)
    }
    rclick_core::handlers!(HANDLERS);
}
