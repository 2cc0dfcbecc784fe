//! Small helpers shared by the IPv4 header elements: header views at the
//! packet's network header, and the drop bookkeeping of the Check*Header
//! elements.

use rclick_core::element::handlers::{read_from, specs_of};
use rclick_core::element::{no_handler, Filter};
use rclick_core::wire::Ipv4Header;
use rclick_core::{ConfigResult, Ctx, Element, Handler, HandlerSpec, InitCtx, Packet};

/// Offset of the network header from the start of the data, when it is set
/// and lies inside the data.
#[inline]
pub fn net_off(p: &Packet) -> Option<usize> {
    let off = p.network_offset()?;
    if off < 0 || off as usize > p.len() {
        None
    } else {
        Some(off as usize)
    }
}

/// A read-only view of the IPv4 header at the network header, if it is set
/// and holds a structurally valid header (version 4, header length within
/// the data).
#[inline]
pub fn ip_hdr(p: &Packet) -> Option<Ipv4Header<&[u8]>> {
    let off = net_off(p)?;
    Ipv4Header::new_checked(&p.data()[off..]).ok()
}

/// A writable view of the IPv4 header at the network header (copying the
/// data first if it is shared).
#[inline]
pub fn ip_hdr_mut(p: &mut Packet) -> Option<Ipv4Header<&mut [u8]>> {
    let off = net_off(p)?;
    Ipv4Header::new_checked(&mut p.writable()[off..]).ok()
}

/// The fast path of the IPv4 elements that write the header: the 20
/// bytes of an option-less IPv4 header (first byte 0x45) at the network
/// header, writable, as a fixed-size array (one bounds check). `None` for
/// anything else (network header unset, in the headroom or too close to
/// the end, options, another version, a buffer shared with a clone):
/// callers then take their general path, which handles every case (and
/// copies a shared buffer). Where this is `Some`, [`ip_hdr_mut`] is `Some`
/// too, with header length 20. Leaving the copy to the general path keeps
/// the fast path free of a call, and of the registers saved around it.
#[inline(always)]
pub fn plain_ip_hdr_mut(p: &mut Packet) -> Option<&mut [u8; 20]> {
    let off = usize::try_from(p.network_offset()?).ok()?;
    let h = p
        .writable_if_unique()?
        .get_mut(off..)?
        .first_chunk_mut::<20>()?;
    (h[0] == 0x45).then_some(h)
}

/// The bytes after an IPv4 header, to the end of the data whatever the
/// total length says.
#[inline]
pub fn after_header<'a>(ip: &Ipv4Header<&'a [u8]>) -> &'a [u8] {
    let hl = ip.header_len();
    &ip.clone().into_inner()[hl..]
}

/// The payload of an IPv4 header up to its total length, when that length
/// covers the header and fits in the data (the checkers' length test).
#[inline]
pub fn exact_payload<'a>(ip: &Ipv4Header<&'a [u8]>) -> Option<&'a [u8]> {
    let total = ip.total_len() as usize;
    ip.clone().into_inner().get(ip.header_len()..total)
}

/// Bytes from the transport header to the end of the data.
#[inline]
pub fn transport_len(p: &Packet) -> usize {
    p.transport_header().map_or(0, |t| t.len())
}

/// A hasher for tables keyed by addresses (ARPQuerier's table), a few
/// instructions per key instead of SipHash's hundred or so: the key's
/// bytes are gathered into a word, which is multiplied by a per-table
/// random odd factor after adding a per-table random offset, and the two
/// halves of the 128-bit product are folded together (a seeded "folded
/// multiply", as in foldhash). Not cryptographic, but the seeds are secret
/// and every key bit reaches the bits the table uses, so traffic cannot
/// aim many addresses at one bucket without knowing them; the tables it
/// serves are bounded anyway (ENTRY_CAPACITY).
#[derive(Clone)]
pub struct AddrHashBuilder {
    add: u64,
    mul: u64,
}

impl Default for AddrHashBuilder {
    fn default() -> Self {
        use std::hash::BuildHasher;
        let seeds = std::collections::hash_map::RandomState::new();
        AddrHashBuilder {
            add: seeds.hash_one(0x5eed_u64),
            mul: seeds.hash_one(0xfac7_u64) | 1,
        }
    }
}

impl std::hash::BuildHasher for AddrHashBuilder {
    type Hasher = AddrHasher;

    #[inline]
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher {
            acc: self.add,
            mul: self.mul,
        }
    }
}

/// The hasher of [`AddrHashBuilder`].
pub struct AddrHasher {
    acc: u64,
    mul: u64,
}

impl AddrHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        let m = (self.acc.wrapping_add(word) as u128) * (self.mul as u128);
        self.acc = (m as u64) ^ ((m >> 64) as u64);
    }
}

impl std::hash::Hasher for AddrHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    /// The folded multiply alone spreads badly for some seeds (4096
    /// addresses landing in 601 of 65536 low-bit buckets in a simulation
    /// of 300 seeds; the test below failed 4% of runs): a finalizer
    /// (MurmurHash3's fmix64 first half) mixes high bits into the low.
    #[inline]
    fn finish(&self) -> u64 {
        let mut x = self.acc;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 33)
    }
}

/// Drop counters of CheckIPHeader, CheckUDPHeader, ...: the total, and
/// optional per-reason counts (DETAILS).
#[derive(Default)]
pub struct DropStats {
    pub drops: u64,
    pub details: Option<Vec<u64>>,
    pub verbose: bool,
}

impl DropStats {
    pub fn new(verbose: bool, details: bool, nreasons: usize) -> Self {
        DropStats {
            drops: 0,
            details: details.then(|| vec![0; nreasons]),
            verbose,
        }
    }

    /// Counts a rejected packet for `reason` and prints the first (or
    /// every, if VERBOSE) as `NAME: WHAT header check failed: REASON`; the
    /// filter kind then sends the packet to output 1.
    #[cold]
    pub fn reject(&mut self, what: &str, reason: usize, texts: &[&str], ctx: &mut Ctx) {
        if self.drops == 0 || self.verbose {
            let text = texts.get(reason).copied().unwrap_or("?");
            let msg = format!("{}: {what} header check failed: {text}", ctx.element_name());
            ctx.chatter(&msg);
        }
        self.drops += 1;
        if let Some(d) = self.details.as_mut().and_then(|d| d.get_mut(reason)) {
            *d += 1;
        }
    }

    /// The `drop_details` text: one `COUNT<TAB>REASON` line per reason.
    pub fn details_text(&self, texts: &[&str]) -> String {
        let Some(d) = self.details.as_ref() else {
            return String::new();
        };
        let lines: Vec<String> = d
            .iter()
            .zip(texts)
            .map(|(n, t)| format!("{n}\t{t}"))
            .collect();
        lines.join("\n")
    }
}

/// The handler listing of a checker's table: `drop_details` exists only
/// with DETAILS, so it is left out without.
pub fn checker_specs<E>(table: &[Handler<E>], details: bool) -> Vec<HandlerSpec> {
    let mut specs = specs_of(table);
    if !details {
        specs.retain(|h| h.name != DROP_DETAILS);
    }
    specs
}

/// Reads a checker's handler through its table, as [`checker_specs`]
/// lists them.
pub fn checker_read<E>(
    table: &[Handler<E>],
    e: &E,
    details: bool,
    name: &str,
    param: Option<&str>,
    ctx: &Ctx,
) -> Result<String, String> {
    if name == DROP_DETAILS && !details {
        return Err(no_handler(name));
    }
    read_from(table, e, name, param, ctx)
}

/// The per-reason drop counts handler of the checkers.
pub const DROP_DETAILS: &str = "drop_details";

/// Writes `handlers` and `read_handler` from a checker's handler table;
/// `$details` tells whether an element keeps per-reason counts.
macro_rules! checker_handlers {
    ($table:expr, $details:expr) => {
        fn handlers(&self) -> Vec<rclick_core::HandlerSpec> {
            $crate::ip::ipcommon::checker_specs($table, $details(self))
        }

        fn read_handler(
            &self,
            name: &str,
            param: Option<&str>,
            ctx: &rclick_core::Ctx,
        ) -> Result<String, String> {
            $crate::ip::ipcommon::checker_read($table, self, $details(self), name, param, ctx)
        }
    };
}
pub(crate) use checker_handlers;

/// Parses an offset argument that may also be `src` or `dst`, meaning the
/// IP source or destination field relative to the network header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpField {
    Offset(usize),
    Src,
    Dst,
}

pub fn parse_ip_field(s: &str) -> Result<IpField, String> {
    match s.to_ascii_lowercase().as_str() {
        "src" => Ok(IpField::Src),
        "dst" => Ok(IpField::Dst),
        _ => rclick_core::conf::parse_usize(s)
            .map_err(|_| "expected byte offset, 'src' or 'dst'".to_string())
            .and_then(checked_offset)
            .map(IpField::Offset),
    }
}

/// A byte offset into a packet, bounded as Click's `int` offsets are (so
/// `offset + len` cannot overflow).
pub fn parse_byte_offset(s: &str) -> Result<usize, String> {
    match rclick_core::conf::parse_usize(s) {
        // Past usize too: still Click's bound in the message.
        Err(e) if e.starts_with("out of range") => checked_offset(usize::MAX),
        r => r.and_then(checked_offset),
    }
}

fn checked_offset(v: usize) -> Result<usize, String> {
    if v > i32::MAX as usize {
        Err(format!("out of range, bound {}", i32::MAX))
    } else {
        Ok(v)
    }
}

/// Parses a 4-byte annotation: a Click annotation name (`DST_IP`, ...) of
/// size 4, or a byte offset into the annotation area.
pub fn parse_anno4(s: &str) -> Result<usize, String> {
    if let Some((off, size)) = rclick_core::packet::anno::by_name(s) {
        return if size == 4 {
            Ok(off)
        } else {
            Err(format!("annotation '{s}' is not 4 bytes"))
        };
    }
    match rclick_core::conf::parse_usize(s) {
        Ok(off) if off <= rclick_core::packet::ANNO_SIZE - 4 => Ok(off),
        _ => Err("expected annotation".to_string()),
    }
}

/// The check of one Check*Header element (CheckUDPHeader, CheckTCPHeader,
/// CheckICMPHeader): the protocol's name for messages, the failure reasons
/// (indices into which `check` returns), and the check itself.
pub trait HeaderCheck: Send + 'static {
    const PROTO: &'static str;
    const REASONS: &'static [&'static str];
    fn check(p: &Packet) -> Result<(), usize>;
}

/// Click's Check*Header shape: valid packets to output 0; invalid ones to
/// output 1 if present, else dropped; counted in `drops` (and per reason in
/// `drop_details` with DETAILS); the first (every one with VERBOSE)
/// reported.
pub struct CheckHeader<C: HeaderCheck> {
    stats: DropStats,
    check: std::marker::PhantomData<fn() -> C>,
}

impl<C: HeaderCheck> Default for CheckHeader<C> {
    fn default() -> Self {
        CheckHeader {
            stats: DropStats::default(),
            check: std::marker::PhantomData,
        }
    }
}

impl<C: HeaderCheck> Filter for CheckHeader<C> {
    #[inline]
    fn filter(&mut self, p: Packet, ctx: &mut Ctx) -> Result<Packet, Packet> {
        match C::check(&p) {
            Ok(()) => Ok(p),
            Err(r) => {
                self.stats.reject(C::PROTO, r, C::REASONS, ctx);
                Err(p)
            }
        }
    }
}

impl<C: HeaderCheck> CheckHeader<C> {
    const HANDLERS: &'static [Handler<Self>] = &[
        Handler::data("drops", |e| &e.stats.drops),
        Handler::read(DROP_DETAILS, |e, _| e.stats.details_text(C::REASONS)),
    ];

    fn details(&self) -> bool {
        self.stats.details.is_some()
    }
}

impl<C: HeaderCheck> Element for CheckHeader<C> {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, _ctx: &mut InitCtx) -> ConfigResult {
        let mut args = rclick_core::conf::Args::new(conf);
        let verbose = args.read_or("VERBOSE", false);
        let details = args.read_or("DETAILS", false);
        args.complete()?;
        self.stats = DropStats::new(verbose, details, C::REASONS.len());
        Ok(())
    }

    rclick_core::element_kind!(filter);
    checker_handlers!(Self::HANDLERS, Self::details);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;
    use std::net::Ipv4Addr;

    #[test]
    fn addr_hash_spreads_every_key_bit_to_the_low_bits() {
        // Hash tables index buckets by the low bits: addresses that differ
        // only in their high bits, or only in their low bits, must still
        // spread there, whatever the seeds (many tables' worth of them).
        for _ in 0..64 {
            spreads(&AddrHashBuilder::default());
        }
        // Seeds differ between tables.
        let (b, c) = (AddrHashBuilder::default(), AddrHashBuilder::default());
        let a = Ipv4Addr::new(10, 0, 0, 1);
        assert_ne!(b.hash_one(a), c.hash_one(a));
    }

    fn spreads(b: &AddrHashBuilder) {
        for shift in [0, 20] {
            let mut low: Vec<u64> = (0..4096u32)
                .map(|i| b.hash_one(Ipv4Addr::from(0x0a00_0001 ^ (i << shift))) & 0xffff)
                .collect();
            low.sort_unstable();
            low.dedup();
            assert!(low.len() > 3800, "shift {shift}: {} distinct", low.len());
        }
    }
}
