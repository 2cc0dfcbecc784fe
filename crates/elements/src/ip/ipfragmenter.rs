//! # IPFragmenter
//!
//! Fragments IP packets larger than the MTU.
//!
//! ## Synopsis
//! `IPFragmenter(MTU [, HONOR_DF, VERBOSE, *keywords* HEADROOM])`
//!
//! ## Ports and processing
//! One push input; push output 0 for packets that fit and for fragments;
//! optional push output 1 for packets that cannot be fragmented. Processing
//! `h/h`.
//!
//! ## Description
//! Expects IP packets with the network header set. A packet whose length
//! from the network header on is at most MTU passes unchanged to output 0.
//! A larger packet is split into fragments (RFC 791): the first keeps the
//! original header with every option (and any link header before the IP
//! header); later fragments get a new header with only the options whose
//! copy flag (bit 0x80) is set, padded with end-of-option bytes to a
//! multiple of 4. Every fragment's data length is a multiple of 8 bytes
//! except the last one's; fragment offsets are relative to the original
//! packet's own offset (fragments of fragments work); MF is set on all but
//! the last fragment, which keeps the original MF flag. Each fragment has a
//! correct header checksum and a copy of the original's annotations.
//!
//! A too-large packet with the don't-fragment flag set (when HONOR_DF is
//! true), or whose header leaves fewer than 8 data bytes under the MTU, is
//! counted as a drop and sent to output 1 (dropped if output 1 is absent)
//! unchanged; connect it to `ICMPError(..., unreachable, needfrag)`. The
//! first five such drops (or every one with VERBOSE) are reported as
//! `IPFragmenter(MTU) DF SRC DST len=LEN`. With HONOR_DF false, DF packets
//! are fragmented anyway, with the DF bit cleared and a new IP ID.
//!
//! Packets whose IP header is malformed also go to output 1 and are
//! counted as drops.
//!
//! ## Keywords
//! - **MTU** (unsigned, at least 8): the maximum IP packet length.
//! - **HONOR_DF** (boolean): obey the DF flag. Default true.
//! - **VERBOSE** (boolean): report every DF drop. Default false.
//! - **HEADROOM** (unsigned): headroom of new fragment packets. Default 64.
//!
//! ## Handlers
//! - `drops` (read): packets sent to output 1.
//! - `fragments` (read): fragments emitted.
//!
//! ## Example
//! ```click
//! frag :: IPFragmenter(1500);
//! rt[1] -> frag -> ARPQuerier(18.26.4.24, 00:00:C0:AE:67:EF) -> Queue -> ToDevice(eth0);
//! frag[1] -> ICMPError(18.26.4.24, unreachable, needfrag, PMTU 1500) -> rt;
//! ```

use rclick_core::conf::{parse_bool, parse_u32, parse_usize, Args};
use rclick_core::packet::DEFAULT_HEADROOM;
use rclick_core::wire::ipv4::{
    IPOPT_COPIED, IPOPT_EOL, IP_DF, IP_MF, IP_OFFMASK, MAX_HEADER_LEN, MIN_HEADER_LEN,
};
use rclick_core::wire::Ipv4Header;
use rclick_core::{Batch, ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::ipcommon::{ip_hdr, ip_hdr_mut, net_off};

#[derive(Default)]
pub struct IPFragmenter {
    mtu: usize,
    honor_df: bool,
    verbose: bool,
    headroom: usize,
    drops: u64,
    fragments: u64,
    rand: u32,
}

/// The options of `h` whose copy flag is set, padded to a multiple of 4
/// with end-of-option bytes, into `out`; returns their length. A malformed
/// option ends the list.
fn copied_options(h: &Ipv4Header<&[u8]>, out: &mut [u8; MAX_HEADER_LEN - MIN_HEADER_LEN]) -> usize {
    let area = h.options();
    let mut n = 0;
    for o in h.options_iter() {
        let Ok(o) = o else { break };
        if o.kind == IPOPT_EOL {
            break;
        }
        let len = o.data.len() + 2;
        if o.kind & IPOPT_COPIED != 0 && n + len <= out.len() {
            out[n..n + len].copy_from_slice(&area[o.offset..o.offset + len]);
            n += len;
        }
    }
    let padded = n.next_multiple_of(4);
    out[n..padded].fill(IPOPT_EOL);
    padded
}

impl IPFragmenter {
    /// The batch of `push_in_chain` when some packet needs fragmenting,
    /// out of line so that the common check saves no registers for it:
    /// each packet leaves in order, whole or in fragments.
    #[inline(never)]
    fn push_in_chain_general(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        let mtu = self.mtu;
        for p in batch.drain() {
            if net_off(&p).is_some_and(|off| p.len() - off <= mtu) {
                ctx.emit(0, p);
            } else {
                self.fragment(p, ctx);
            }
        }
        false
    }

    fn next_rand(&mut self) -> u16 {
        // xorshift32: a fresh IP ID when the DF bit is overridden.
        let mut x = self.rand;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rand = x;
        (x >> 8) as u16
    }

    fn reject(&mut self, p: Packet, ctx: &mut Ctx) {
        if self.verbose || self.drops < 5 {
            let (src, dst) = match ip_hdr(&p) {
                Some(h) => (h.src().to_string(), h.dst().to_string()),
                None => ("?".to_string(), "?".to_string()),
            };
            ctx.chatter(&format!(
                "IPFragmenter({}) DF {src} {dst} len={}",
                self.mtu,
                p.len()
            ));
        }
        self.drops += 1;
        ctx.emit(1, p);
    }

    fn fragment(&mut self, mut p: Packet, ctx: &mut Ctx) {
        let Some(off) = net_off(&p) else {
            self.reject(p, ctx);
            return;
        };
        let (hlen, ip_len, frag) = match ip_hdr(&p) {
            Some(h) => (h.header_len(), h.total_len() as usize, h.frag_word()),
            None => {
                self.reject(p, ctx);
                return;
            }
        };
        let net_len = p.len() - off;
        if ip_len < hlen {
            self.reject(p, ctx);
            return;
        }
        // Data actually present, bounded by the IP length.
        let in_dlen = ip_len.min(net_len) - hlen;
        if hlen + in_dlen <= self.mtu {
            // Only link-level padding made it look too big.
            ctx.emit(0, p);
            return;
        }
        let first_dlen = self.mtu.saturating_sub(hlen) & !7;
        if (frag & IP_DF != 0 && self.honor_df) || first_dlen < 8 {
            self.reject(p, ctx);
            return;
        }
        let new_id = (frag & IP_DF != 0).then(|| self.next_rand());
        let had_mf = frag & IP_MF != 0;
        let base_word = (frag & !IP_DF) | IP_MF;
        if let Some(mut h) = ip_hdr_mut(&mut p) {
            if let Some(id) = new_id {
                h.set_ident(id);
            }
            h.set_frag_word(base_word);
            h.set_total_len((hlen + first_dlen) as u16);
            h.fill_checksum();
        }
        let base_off = base_word & IP_OFFMASK;
        let mut opts = [0u8; MAX_HEADER_LEN - MIN_HEADER_LEN];
        let mut fixed = [0u8; MIN_HEADER_LEN];
        let olen = match ip_hdr(&p) {
            Some(h) => {
                fixed.copy_from_slice(&h.header()[..MIN_HEADER_LEN]);
                copied_options(&h, &mut opts)
            }
            None => return,
        };
        let out_hlen = MIN_HEADER_LEN + olen;

        let mut first = p.clone();
        first.take(net_len - hlen - first_dlen);
        ctx.emit(0, first);
        self.fragments += 1;

        let out_dlen_max = self.mtu.saturating_sub(out_hlen) & !7;
        if out_dlen_max == 0 {
            return;
        }
        let data_start = off + hlen;
        let mut pos = first_dlen;
        while pos < in_dlen {
            let dlen = out_dlen_max.min(in_dlen - pos);
            let total = out_hlen + dlen;
            let mut q = Packet::with_room(self.headroom, &[], total);
            {
                // The first fragment's header with the copied options, then
                // this fragment's data; its own length, offset and flags.
                // MTU-sized: within MAX_PACKET_LEN.
                let Some(b) = q.put(total) else { break };
                b[..MIN_HEADER_LEN].copy_from_slice(&fixed);
                b[MIN_HEADER_LEN..out_hlen].copy_from_slice(&opts[..olen]);
                b[out_hlen..].copy_from_slice(&p.data()[data_start + pos..data_start + pos + dlen]);
                let mut word = (base_word & !IP_OFFMASK)
                    | (base_off.wrapping_add((pos / 8) as u16) & IP_OFFMASK);
                if pos + dlen >= in_dlen && !had_mf {
                    word &= !IP_MF;
                }
                let mut h = Ipv4Header::new_unchecked(b);
                h.set_version_and_header_len(out_hlen);
                h.set_frag_word(word);
                h.set_total_len(total as u16);
                h.fill_checksum();
            }
            q.set_network_header(0, out_hlen);
            q.copy_annotations(&p);
            ctx.emit(0, q);
            self.fragments += 1;
            pos += dlen;
        }
    }
}

const HANDLERS: &[Handler<IPFragmenter>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::data("fragments", |e| &e.fragments),
];

rclick_core::element_class!(IPFragmenter);

impl Element for IPFragmenter {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = Args::new(conf);
        let mtu: u32 = args.read_mp_with("MTU", parse_u32);
        let honor_df = args.read_p_or_with("HONOR_DF", parse_bool, true);
        let verbose = args.read_p_or_with("VERBOSE", parse_bool, false);
        let headroom = args.read_or_with("HEADROOM", parse_usize, DEFAULT_HEADROOM);
        args.complete()?;
        if mtu < 8 {
            return Err("MTU must be at least 8".into());
        }
        self.mtu = mtu as usize;
        self.honor_df = honor_df;
        self.verbose = verbose;
        self.headroom = headroom.min(4096);
        self.rand = 0x2545_f491;
        Ok(())
    }

    rclick_core::element_kind!(push_only, own_chain);

    // The usual batch needs no fragmenting and moves on whole: then the
    // dispatcher takes it straight on to output 0's element, as for the
    // one-packet kinds, instead of a handoff per batch.
    fn push_in_chain(&mut self, batch: &mut Batch, ctx: &mut Ctx) -> bool {
        let mtu = self.mtu;
        let fits = |p: &Packet| match net_off(p) {
            Some(off) => p.len() - off <= mtu,
            None => false,
        };
        if batch.packets().iter().all(fits) {
            return true;
        }
        self.push_in_chain_general(batch, ctx)
    }

    rclick_core::handlers!(HANDLERS);
}
