//! # CheckIPHeader
//!
//! Checks IP headers (RFC 791, RFC 1812 section 5.2.2).
//!
//! ## Synopsis
//! `CheckIPHeader([OFFSET, keywords OFFSET, INTERFACES, BADSRC, GOODDST, CHECKSUM, VERBOSE, DETAILS])`
//!
//! `CheckIPHeader(BADSRC2 [, OFFSET, keywords])` (old syntax)
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for valid packets; optional push
//! output 1 for invalid ones. Processing `a/ah`.
//!
//! ## Description
//! Input packets should have IP headers starting OFFSET bytes in (default
//! 0). Checks that the packet is at least 20 bytes past OFFSET, that the
//! version is 4, the header length at least 20 bytes, the total length at
//! least the header length and no more than the packet, and (unless
//! CHECKSUM is false) that the header checksum is valid. If BADSRC or
//! INTERFACES is given, packets whose source address is one of the bad
//! addresses are dropped, unless their destination is one of the GOODDST
//! addresses (RFC 1812 5.3.7: no broadcast or invalid sources).
//!
//! Valid packets get their network header set (at OFFSET, with the IP header
//! length), are shortened to the IP total length (removing link-level
//! padding) and get the destination IP address annotation set to the IP
//! destination. Invalid packets go to output 1 if it is connected, else
//! they are dropped. The first invalid packet (every one with VERBOSE) is
//! reported as `NAME: IP header check failed: REASON`.
//!
//! The old syntax takes a space-separated list of bad source addresses as
//! the first positional argument; 0.0.0.0 and 255.255.255.255 are then bad
//! too.
//!
//! ## Keywords
//! - **OFFSET** (unsigned): where the IP header starts. Default 0.
//! - **INTERFACES** (list of `ADDR/PREFIX`): this router's interfaces. Acts
//!   as BADSRC = each interface's broadcast address plus 0.0.0.0 and
//!   255.255.255.255, and GOODDST = each interface address.
//! - **BADSRC** (list of addresses): drop packets from these sources.
//! - **GOODDST** (list of addresses): exempt packets to these destinations
//!   from the BADSRC check.
//! - **CHECKSUM** (bool): check the header checksum. Default true.
//! - **VERBOSE** (bool): report every invalid packet. Default false.
//! - **DETAILS** (bool): keep per-reason counts (`drop_details`). Default
//!   false.
//!
//! Addresses may be AddressInfo names.
//!
//! ## Handlers
//! - `drops` (read): invalid packets seen.
//! - `drop_details` (read, with DETAILS): one line per reason,
//!   `COUNT<TAB>REASON`, for tiny packet, bad IP version, bad IP header
//!   length, bad IP length, bad IP checksum, bad source address.
//!
//! ## Example
//! ```click
//! FromDevice(eth0) -> Strip(14)
//!   -> CheckIPHeader(INTERFACES 18.26.4.1/24, DETAILS true)
//!   -> GetIPAddress(16) -> rt :: LookupIPRoute(...);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{parse_usize, split_words, Args};
use rclick_core::element::Filter;
use rclick_core::packet::anno;
use rclick_core::wire::checksum::verify_header20;
use rclick_core::wire::ipv4::MIN_HEADER_LEN;
use rclick_core::wire::{Ipv4Header, WireError};
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::{parse_ipv4_addr_or_prefix_arg, parse_ipv4_list_arg};
use super::ipcommon::{checker_handlers, DropStats, DROP_DETAILS};

pub(crate) const REASONS: [&str; 6] = [
    "tiny packet",
    "bad IP version",
    "bad IP header length",
    "bad IP length",
    "bad IP checksum",
    "bad source address",
];
const TINY: usize = 0;
const BAD_VERSION: usize = 1;
const BAD_HLEN: usize = 2;
const BAD_IP_LEN: usize = 3;
const BAD_CHECKSUM: usize = 4;
const BAD_SADDR: usize = 5;

/// CheckIPHeader, and CheckIPHeader2 when built with
/// [`CheckIPHeader::without_checksum`].
pub struct CheckIPHeader {
    offset: usize,
    bad_src: Vec<u32>,
    good_dst: Vec<u32>,
    /// The last source address found not to be in `bad_src`: a run of
    /// packets from one source is checked against the list once.
    last_good_src: Option<u32>,
    checksum: bool,
    /// Whether the class checks checksums at all (false for CheckIPHeader2).
    class_checksum: bool,
    pub(crate) stats: DropStats,
}

impl Default for CheckIPHeader {
    fn default() -> Self {
        CheckIPHeader {
            offset: 0,
            bad_src: Vec::new(),
            good_dst: Vec::new(),
            last_good_src: None,
            checksum: true,
            class_checksum: true,
            stats: DropStats::default(),
        }
    }
}

fn interfaces(s: &str, ctx: &InitCtx) -> Result<(Vec<u32>, Vec<u32>), String> {
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for w in split_words(s) {
        let p = parse_ipv4_addr_or_prefix_arg(&w, ctx)
            .map_err(|_| "expected list of IP addresses with prefixes".to_string())?;
        let (a, m) = (u32::from(p.addr), u32::from(p.mask));
        bad.push((a & m) | !m);
        good.push(a);
    }
    bad.push(0);
    bad.push(u32::MAX);
    Ok((bad, good))
}

fn addr_list(s: &str, ctx: &InitCtx) -> Result<Vec<u32>, String> {
    parse_ipv4_list_arg(s, ctx).map(|v| v.into_iter().map(u32::from).collect())
}

impl CheckIPHeader {
    /// CheckIPHeader2's behaviour: never checks checksums.
    pub fn without_checksum() -> Self {
        CheckIPHeader {
            checksum: false,
            class_checksum: false,
            ..Default::default()
        }
    }

    /// Whether per-reason counts are kept (DETAILS), and so `drop_details`
    /// exists.
    pub(crate) fn details(&self) -> bool {
        self.stats.details.is_some()
    }

    /// Validates the header; returns the failure reason or the header
    /// length, total length and destination.
    fn check(&mut self, data: &[u8]) -> Result<(usize, usize, Ipv4Addr), usize> {
        let Some(bytes) = data.get(self.offset..) else {
            return Err(TINY);
        };
        let ip = match Ipv4Header::new_checked(bytes) {
            Ok(ip) => ip,
            Err(WireError::Truncated) => return Err(TINY),
            Err(WireError::BadVersion) => return Err(BAD_VERSION),
            // A header length past the data makes the total length bad too.
            Err(_) if Ipv4Header::new_unchecked(bytes).header_len() < MIN_HEADER_LEN => {
                return Err(BAD_HLEN)
            }
            Err(_) => return Err(BAD_IP_LEN),
        };
        let hlen = ip.header_len();
        let len = ip.total_len() as usize;
        if len > bytes.len() || len < hlen {
            return Err(BAD_IP_LEN);
        }
        if self.checksum && !ip.verify_checksum() {
            return Err(BAD_CHECKSUM);
        }
        let dst = ip.dst();
        if !self.bad_src.is_empty() {
            let src = u32::from(ip.src());
            if self.last_good_src != Some(src) {
                if !self.bad_src.contains(&src) {
                    self.last_good_src = Some(src);
                } else if !self.good_dst.contains(&u32::from(dst)) {
                    return Err(BAD_SADDR);
                }
            }
        }
        Ok((hlen, len, dst))
    }
}

impl Filter for CheckIPHeader {
    /// The common packet (an option-less header, first byte 0x45, whose
    /// total length fits, from the last source found good, with a good
    /// checksum) is checked on a fixed 20-byte array in a few
    /// instructions; anything else goes to
    /// [`CheckIPHeader::filter_general`], which decides every case. The
    /// fast path only accepts packets the general one accepts, and does to
    /// them what it does.
    #[inline(always)]
    fn filter(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        if self.accept_plain(&mut p) {
            return Ok(p);
        }
        self.filter_general(p, ctx)
    }
}

impl CheckIPHeader {
    /// The fast path of [`Filter::filter`] in place: accepts (and sets
    /// up) the common packet and says so, or leaves `p` untouched.
    #[inline(always)]
    fn accept_plain(&self, p: &mut Packet) -> bool {
        let off = self.offset;
        let data = p.data();
        if let Some(h) = data.get(off..).and_then(|b| b.first_chunk::<20>()) {
            let avail = data.len() - off;
            let len = u16::from_be_bytes([h[2], h[3]]) as usize;
            let src = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
            if h[0] == 0x45
                && (MIN_HEADER_LEN..=avail).contains(&len)
                && (self.bad_src.is_empty() || self.last_good_src == Some(src))
                && (!self.checksum || verify_header20(h))
            {
                // Taken as one 4-byte chunk, the destination is stored in
                // the annotation with one write.
                let dst = *h.last_chunk::<4>().unwrap_or(&[0; 4]);
                p.set_network_header(off, MIN_HEADER_LEN);
                if avail > len {
                    p.take(avail - len);
                }
                if let Some(a) = p.anno_mut()[anno::DST_IP..].first_chunk_mut::<4>() {
                    *a = dst;
                }
                return true;
            }
        }
        false
    }
}

impl CheckIPHeader {
    /// The kit's batch path, out of line so that the fast path in
    /// `push_in_chain` saves no registers for it.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        rclick_core::element::kinds::filter_push_in_chain(self, batch, ctx)
    }

    /// Every case of [`Filter::filter`].
    #[inline(never)]
    fn filter_general(&mut self, mut p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        match self.check(p.data()) {
            Ok((hlen, len, dst)) => {
                let off = self.offset;
                p.set_network_header(off, hlen);
                let plen = p.len() - off;
                if plen > len {
                    p.take(plen - len);
                }
                p.set_dst_ip_anno(dst);
                Ok(p)
            }
            Err(reason) => {
                self.stats.reject("IP", reason, &REASONS, ctx);
                Err(p)
            }
        }
    }
}

const HANDLERS: &[Handler<CheckIPHeader>] = &[
    Handler::data("drops", |e| &e.stats.drops),
    Handler::read(DROP_DETAILS, |e, _| e.stats.details_text(&REASONS)),
];

rclick_core::element_class!(CheckIPHeader);

impl Element for CheckIPHeader {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        let mut args = Args::new(conf);
        let mut bad_src = Vec::new();
        let mut good_dst = Vec::new();
        if let Some((b, g)) = args.read_with("INTERFACES", |s| interfaces(s, ictx)) {
            bad_src = b;
            good_dst = g;
        }
        if let Some(b) = args.read_with("BADSRC", |s| addr_list(s, ictx)) {
            bad_src = b;
        }
        if let Some(g) = args.read_with("GOODDST", |s| addr_list(s, ictx)) {
            good_dst = g;
        }
        let mut offset: usize = args.read_or("OFFSET", 0);
        let verbose = args.read_or("VERBOSE", false);
        let details = args.read_or("DETAILS", false);
        let mut checksum = args.read_or("CHECKSUM", true);
        if !self.class_checksum {
            checksum = false;
        }
        let rest = args.consume()?;
        let rest: Vec<String> = rest.into_iter().filter(|s| !s.is_empty()).collect();
        if rest.len() == 1 && parse_usize(&rest[0]).is_ok() {
            offset = parse_usize(&rest[0]).unwrap_or(0);
        } else if !rest.is_empty() {
            // Old syntax: CheckIPHeader(BADSRC2 [, OFFSET]).
            let mut old = Args::from_vec(rest);
            if let Some(mut b) = old.read_p_with("BADSRC", |s| addr_list(s, ictx)) {
                b.push(0);
                b.push(u32::MAX);
                bad_src = b;
            }
            if let Some(o) = old.read_p::<usize>("OFFSET") {
                offset = o;
            }
            old.complete()?;
        }
        self.offset = offset;
        self.bad_src = bad_src;
        self.last_good_src = None;
        self.good_dst = good_dst;
        self.checksum = checksum;
        self.stats = DropStats::new(verbose, details, REASONS.len());
        Ok(())
    }

    rclick_core::element_kind!(filter, own_chain);

    // The filter kind's push, but a batch of one common packet (BURST 1)
    // is checked where it lies and passes as it is.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        if let [p] = batch.packets_mut() {
            if self.accept_plain(p) {
                return true;
            }
        }
        self.push_in_chain_general(batch, ctx)
    }
    checker_handlers!(HANDLERS, CheckIPHeader::details);
}
