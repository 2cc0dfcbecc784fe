//! # RadixIPsecLookup
//!
//! IP routing table that also holds Click's IPsec security policies and
//! security associations.
//!
//! ## Synopsis
//! `RadixIPsecLookup(ROUTE1, ROUTE2, ...)`, each route
//! `ADDR/MASK [GW] OUT [SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE]`
//!
//! ## Ports and processing
//! One push input; as many push outputs as the routes use (`1/-`).
//! Outputs 0, 1 and 2 have fixed meanings (below); ordinary routes use
//! outputs 3 and up.
//!
//! ## Description
//! Click's IPsec gateway lookup (Click's `elements/ipsec`). Looks up each
//! packet's destination address annotation by longest-prefix match, like
//! RadixIPLookup, sets the annotation to the route's gateway when it has
//! one, and emits the packet on the route's output, with IPsec processing
//! for three outputs:
//!
//! - output 1: packets to be sent through a tunnel. The route carries a
//!   security association (the five IPsec words): SPI, a 16-byte
//!   encryption key and a 16-byte authentication key (strings of exactly
//!   16 bytes, e.g. `0123456789abcdef`; quote them for escapes), the
//!   first sequence number REPLAY and the anti-replay window OOSIZE (0 to
//!   255 packets; IPsecESPUnencap's bitmap remembers 32, so wider windows
//!   act as 32). The packet gets the SPI annotation (`IPSEC_SPI`, bytes
//!   32-35) and the SA annotation (`IPSEC_SA_DATA_REFERENCE`, bytes
//!   36-39) that IPsecESPEncap, IPsecAuthHMACSHA1, IPsecAES and IPsecDES
//!   read. A route to output 1 without an SA prints `No Ipsec tunnel for
//!   ADDR. Wrong tunnel setup` and the packet goes on without one.
//! - output 0: packets for this gateway, which start with their IP
//!   header. ESP packets (protocol 50) get the SA annotation of the SA
//!   whose SPI is in their ESP header (any route's SA; the first route
//!   with that SPI, in configuration order, as in Click); an unknown SPI prints `Invalid SPI N,
//!   Dropping packet` and drops the packet. Other packets leave by
//!   output 2 (for the host).
//! - output 2: packets for the host.
//!
//! Packets without a route are dropped and counted; the first five print
//! `IPsecRouteTable: no route for ADDR`.
//!
//! rclick's SA annotation is a handle, not Click's raw pointer; see
//! `crates/elements/src/ipsec/legacy.rs` and the `IPsecESPEncap` docs for
//! the whole scheme.
//!
//! Differences from Click, on purpose:
//! - Click sends non-ESP packets of a route to output 0 on to output 2
//!   only if bytes 20 to 23 of the packet happen to be a known SPI, and
//!   otherwise drops them as `Invalid SPI` (its own comment says they go
//!   to the host). rclick sends them to output 2 (tests/diff/cases/
//!   ipsec-radixipseclookup-host.case).
//! - Click reads the ESP header at byte 20 whatever the IP header length
//!   and however short the packet; rclick reads it after the IP header and
//!   drops (counts in `drops`) packets too short to hold it.
//! - A default route (`0.0.0.0/0`) in Click's configuration frees itself:
//!   it works until the `table` handler is read, which then lists it as
//!   `0.0.0.0/32 ... -1` and kills it. rclick keeps and lists it.
//! - A packet for an output the element lacks crashes Click (an
//!   assertion); rclick drops it.
//! - Removing a route through a handler also forgets its SA for arriving
//!   packets, and `set` on a route replaces its SA for them too; Click
//!   keeps the first SA it saw for an SPI in its SPI table for good.
//! - Each SA a route takes (configured, or written with `add`, `set` or
//!   `ctrl`) stays registered for the life of the process, which holds at
//!   most 65536; routes that are refused take none. Past the limit, a new
//!   SA is refused with `too many IPsec security associations (at most
//!   65536 per process)` (a configuration fails, a handler write returns
//!   the error) while the routers running keep their tunnels
//!   (tests/ipsec_legacy_registry.rs).
//!
//! ## Handlers
//! - `table` (read): the routes, in Click's format; a tunneled route is
//!   followed by its SPI and keys in hex.
//! - `lookup` (read with parameter `ADDR`): `OUT` or `OUT GW`; `-1` if no
//!   route matches.
//! - `add`, `set` (write): adds a route (`set` replaces one for the same
//!   prefix), with or without an SA.
//! - `remove` (write): `ADDR/MASK [GW OUT]`.
//! - `ctrl` (write): lines of `add ...`, `set ...`, `remove ...`, applied
//!   as one atomic operation.
//! - `drops` (read): packets dropped: no route, unknown SPI, too short
//!   (rclick extension).
//!
//! ## Example
//! ```click
//! rt :: RadixIPsecLookup(18.26.4.24/32 0, 18.26.4.1/32 3, 18.26.7.1/32 2,
//!     18.26.7.0/24 4,
//!     18.26.8.0/24 18.26.4.1 1 234 0123456789abcdef fedcba9876543210 300 64);
//! ```

use std::collections::HashMap;
use std::net::Ipv4Addr;

use rclick_core::conf::{
    parse_bytes, parse_i32, parse_ipv4, parse_ipv4_addr_or_prefix, split_args, split_words,
    uncomment, Args,
};
use rclick_core::ctx::ElementView;
use rclick_core::element::Dispatch;
use rclick_core::{ConfigResult, Ctx, Element, Errors, Handler, InitCtx, Packet};

use super::legacy::{self, LegacySa, KEY_LEN};
use crate::ip::routetable::Route;

/// One route with its IPsec part.
#[derive(Clone, Copy, Debug)]
struct Entry {
    route: Route,
    /// The SA handle (0: none) and its SPI.
    sa: u32,
    spi: u32,
}

/// The first few packets without a route are reported.
const MAX_COMPLAINTS: u32 = 5;

#[derive(Default)]
pub struct RadixIPsecLookup {
    /// Routes in configuration order (for `table`).
    entries: Vec<Entry>,
    /// Indexes into `entries`, longest prefix first.
    order: Vec<usize>,
    /// SPI to SA handle, for packets arriving from tunnels.
    by_spi: HashMap<u32, u32>,
    noutputs: usize,
    drops: u64,
    complaints: u32,
}

/// Parses a route and its optional SA (Click's `cp_ipsec_route`). The SA
/// is not registered yet (the entry's `sa` is 0): callers register it with
/// [`commit`] once the route is known to be taken, so that refused routes
/// do not use up the process's SA registry. `Err` carries a message Click
/// prints before its generic error, if any.
fn parse_entry(
    s: &str,
    remove: bool,
    ctx: &ElementView,
) -> Result<(Entry, Option<LegacySa>), Option<String>> {
    let words = split_words(s);
    let mut it = words.iter().map(String::as_str).peekable();
    let first = it.next().ok_or(None)?;
    let p = match parse_ipv4_addr_or_prefix(first) {
        Ok(p) => p,
        Err(_) => {
            let a = ctx.lookup_ipv4(first).ok_or(None)?;
            rclick_core::conf::Ipv4Prefix {
                addr: a,
                mask: Ipv4Addr::BROADCAST,
            }
        }
    };
    let mask = u32::from(p.mask);
    let mut r = Route {
        addr: u32::from(p.addr) & mask,
        mask,
        gw: 0,
        port: -1,
    };
    let mut word = it.next();
    if let Some(w) = word {
        if w == "-" {
            word = it.next();
        } else if let Some(gw) = parse_ipv4(w).ok().or_else(|| ctx.lookup_ipv4(w)) {
            r.gw = u32::from(gw);
            word = it.next();
        }
    }
    match word {
        Some(w) => r.port = parse_i32(w).map_err(|_| None)?,
        None if remove => {}
        None => return Err(None),
    }
    let rest: Vec<String> = it.map(str::to_string).collect();
    if rest.is_empty() {
        return Ok((
            Entry {
                route: r,
                sa: 0,
                spi: 0,
            },
            None,
        ));
    }
    let mut args = Args::from_vec(rest);
    let spi: u32 = args.read_mp("SPI");
    let enc = args.read_mp_with("ENCRYPT_KEY", parse_bytes);
    let auth = args.read_mp_with("AUTH_KEY", parse_bytes);
    let replay: u32 = args.read_mp("REPLAY");
    let window: u8 = args.read_mp("OOSIZE");
    args.complete().map_err(|e| Some(e.join("\n")))?;
    let (Ok(enc), Ok(auth)) = (
        <[u8; KEY_LEN]>::try_from(enc.as_slice()),
        <[u8; KEY_LEN]>::try_from(auth.as_slice()),
    ) else {
        return Err(Some("key has bad length".into()));
    };
    let sa = LegacySa::new(spi, enc, auth, replay, window);
    Ok((
        Entry {
            route: r,
            sa: 0,
            spi,
        },
        Some(sa),
    ))
}

/// Registers a parsed entry's SA, if it has one, and gives the entry its
/// handle; `Err` when the registry is full.
fn commit(mut e: Entry, sa: Option<LegacySa>) -> Result<Entry, String> {
    if let Some(sa) = sa {
        e.sa = legacy::register(sa)?;
    }
    Ok(e)
}

impl RadixIPsecLookup {
    fn rebuild(&mut self) {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.entries[i].route.mask.count_ones()));
        self.order = order;
        self.by_spi.clear();
        // Like Click's SA table, the first route configured for an SPI
        // gives its SA.
        for e in &self.entries {
            if e.sa != 0 {
                self.by_spi.entry(e.spi).or_insert(e.sa);
            }
        }
    }

    #[inline]
    fn find(&self, addr: u32) -> Option<&Entry> {
        self.order
            .iter()
            .map(|&i| &self.entries[i])
            .find(|e| e.route.contains(addr))
    }

    fn index_of(&self, r: &Route) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.route.addr == r.addr && e.route.mask == r.mask)
    }

    /// Adds a route; with `set`, replaces one for the same prefix.
    fn add(&mut self, e: Entry, set: bool) -> Result<(), String> {
        match self.index_of(&e.route) {
            Some(i) if set => self.entries[i] = e,
            Some(i) => {
                return Err(format!(
                    "conflict with existing route '{}'",
                    self.entries[i].route.unparse()
                ));
            }
            None => self.entries.push(e),
        }
        self.rebuild();
        Ok(())
    }

    fn remove(&mut self, r: &Route) -> Result<Entry, String> {
        let found = self.entries.iter().position(|e| {
            e.route.addr == r.addr
                && e.route.mask == r.mask
                && (r.port < 0 || (e.route.gw == r.gw && e.route.port == r.port))
        });
        match found {
            Some(i) => {
                let e = self.entries.remove(i);
                self.rebuild();
                Ok(e)
            }
            None => Err(format!("route '{}' not found", r.unparse())),
        }
    }

    fn table(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            e.route.unparse_into(&mut out, true);
            if e.spi != 0 {
                out.push_str("  |TUNNELED CONNECTION| \n|SPI| |ENC KEY| |AUTH KEY| ||\n");
                out.push_str(&format!(" |{}|", e.spi));
                if let Some(sa) = legacy::lookup(e.sa) {
                    out.push_str(&sa.unparse_keys());
                }
                out.push('\n');
            }
            out.push('\n');
        }
        out
    }

    fn lookup_handler(&self, param: Option<&str>) -> Result<String, String> {
        let a = param
            .map(uncomment)
            .and_then(|p| parse_ipv4(p.trim()).ok())
            .ok_or_else(|| "expected IP address".to_string())?;
        Ok(match self.find(u32::from(a)) {
            Some(e) if e.route.gw != 0 => {
                format!("{} {}", e.route.port, Ipv4Addr::from(e.route.gw))
            }
            Some(e) => e.route.port.to_string(),
            None => "-1".into(),
        })
    }

    /// One add/set/remove command; returns how to undo it.
    fn run(&mut self, cmd: &str, text: &str, ctx: &Ctx) -> Result<Undo, String> {
        let remove = cmd == "remove";
        let expected = || {
            if remove {
                "expected 'ADDR/MASK [GATEWAY OUTPUT]'".to_string()
            } else {
                "expected 'ADDR/MASK [GATEWAY] OUTPUT'".to_string()
            }
        };
        let (e, sa) = parse_entry(text, remove, ctx).map_err(|_| expected())?;
        if e.route.port < if remove { -1 } else { 0 }
            || (e.route.port >= 0 && e.route.port as usize >= self.noutputs)
        {
            return Err(expected());
        }
        let e = match cmd {
            "add" if self.index_of(&e.route).is_some() => e,
            "add" | "set" => commit(e, sa)?,
            _ => e,
        };
        match cmd {
            "add" => self.add(e, false).map(|_| Undo::Remove(e.route)),
            "set" => {
                let old = self.index_of(&e.route).map(|i| self.entries[i]);
                self.add(e, true).map(|_| match old {
                    Some(o) => Undo::Restore(o),
                    None => Undo::Remove(e.route),
                })
            }
            _ => self.remove(&e.route).map(Undo::Readd),
        }
    }

    fn ctrl(&mut self, text: &str, ctx: &Ctx) -> Result<(), String> {
        let text = uncomment(text);
        let mut undo = Vec::new();
        let mut result = Ok(());
        for line in text.lines() {
            let line = line.trim_start();
            let (cmd, rest) = line
                .split_once(|c: char| c.is_ascii_whitespace())
                .unwrap_or((line, ""));
            match cmd {
                "" => continue,
                "add" | "set" | "remove" => match self.run(cmd, rest, ctx) {
                    Ok(u) => undo.push(u),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
                other => {
                    result = Err(format!("bad command '{other}'"));
                    break;
                }
            }
        }
        if result.is_err() {
            for u in undo.into_iter().rev() {
                let _ = match u {
                    Undo::Remove(r) => self.remove(&Route { port: -1, ..r }).map(drop),
                    Undo::Restore(e) => self.add(e, true),
                    Undo::Readd(e) => self.add(e, false),
                };
            }
        }
        result
    }

    #[cold]
    fn no_route(&mut self, dst: Ipv4Addr, ctx: &mut Ctx) {
        self.drops += 1;
        if self.complaints < MAX_COMPLAINTS {
            self.complaints += 1;
            ctx.chatter(&format!("IPsecRouteTable: no route for {dst}"));
        }
    }
}

enum Undo {
    Remove(Route),
    Restore(Entry),
    Readd(Entry),
}

impl Dispatch for RadixIPsecLookup {
    #[inline]
    fn dispatch(&mut self, mut p: Packet, ctx: &mut Ctx) -> Option<(usize, Packet)> {
        let dst = p.dst_ip_anno();
        let Some(&e) = self.find(u32::from(dst)) else {
            self.no_route(dst, ctx);
            return None;
        };
        let mut port = e.route.port as usize;
        match port {
            1 => {
                if e.spi == 0 || e.sa == 0 {
                    ctx.chatter(&format!("No Ipsec tunnel for {dst}. Wrong tunnel setup"));
                }
                legacy::set_spi_anno(&mut p, e.spi);
                legacy::set_sa_anno(&mut p, e.sa);
            }
            0 => {
                let d = p.data();
                let hl = d.first().map_or(0, |b| usize::from(b & 0x0f) * 4);
                if d.len() < 20 || hl < 20 {
                    self.drops += 1;
                    return None;
                }
                if d[9] != 50 {
                    port = 2;
                } else {
                    let Some(spi) = d
                        .get(hl..hl + 4)
                        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
                    else {
                        self.drops += 1;
                        return None;
                    };
                    let Some(&sa) = self.by_spi.get(&spi) else {
                        self.drops += 1;
                        ctx.chatter(&format!("Invalid SPI {}, Dropping packet", spi as i32));
                        return None;
                    };
                    legacy::set_sa_anno(&mut p, sa);
                }
            }
            _ => {}
        }
        if port >= self.noutputs {
            self.drops += 1;
            return None;
        }
        if e.route.gw != 0 {
            p.set_dst_ip_anno(Ipv4Addr::from(e.route.gw));
        }
        Some((port, p))
    }
}

const HANDLERS: &[Handler<RadixIPsecLookup>] = &[
    Handler::data("drops", |e| &e.drops),
    Handler::write("add", |e, v, ctx| e.run("add", v, ctx).map(drop)),
    Handler::write("set", |e, v, ctx| e.run("set", v, ctx).map(drop)),
    Handler::write("remove", |e, v, ctx| e.run("remove", v, ctx).map(drop)),
    Handler::write("ctrl", |e, v, ctx| e.ctrl(v, ctx)),
    Handler::read("table", |e, _| e.table()),
    Handler::read_param("lookup", |e, param, _| e.lookup_handler(param)),
];

rclick_core::element_class!(RadixIPsecLookup);

impl Element for RadixIPsecLookup {
    rclick_core::element_kind!(dispatch);
    rclick_core::handlers!(HANDLERS);

    fn port_count(&self) -> &'static str {
        "1/-"
    }

    fn processing(&self) -> &'static str {
        rclick_core::element::processing::PUSH
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        self.noutputs = ctx.noutputs();
        let mut errors = Errors::new();
        for (i, arg) in split_args(conf).iter().enumerate() {
            match parse_entry(arg, false, ctx) {
                Ok((e, sa)) if e.route.port >= 0 && (e.route.port as usize) < self.noutputs => {
                    // Like Click, a second route for a prefix is ignored.
                    if self.index_of(&e.route).is_some() {
                        continue;
                    }
                    match commit(e, sa) {
                        Ok(e) => {
                            let _ = self.add(e, false);
                            continue;
                        }
                        Err(msg) => {
                            errors.push(format!("argument {}: {msg}", i + 1));
                            continue;
                        }
                    }
                }
                Ok(_) => {}
                Err(Some(msg)) => ctx.chatter(&msg),
                Err(None) => {}
            }
            errors.push(format!(
                "argument {} should be 'ADDR/MASK [GATEWAY] OUTPUT'",
                i + 1
            ));
        }
        errors.into_result()
    }
}
