//! # ARPResponder
//!
//! Answers ARP queries, for its own addresses or by proxy for prefixes.
//!
//! ## Synopsis
//! `ARPResponder(IP/MASK1 [IP/MASK...] ETH1, IP/MASK2 ETH2, ...)`
//!
//! ## Ports and processing
//! One agnostic input; agnostic output 0 for replies; optional push output
//! 1 for packets not answered. Processing `a/ah`.
//!
//! ## Description
//! Input packets are Ethernet frames. Each ARP request (Ethernet/IPv4,
//! operation 1) whose target protocol address matches an entry is answered
//! with an ARP reply from that entry's Ethernet address: the reply goes to
//! the requester's Ethernet address, with sender = (entry Ethernet, target
//! IP) and target = (requester Ethernet, requester IP). The request is
//! consumed. Other packets, and requests for unknown addresses, go to
//! output 1 (dropped if absent).
//!
//! Each argument is a space-separated list of IP addresses or prefixes and
//! exactly one Ethernet address (AddressInfo names work for both). A
//! prefix makes ARPResponder answer for every address in it (proxy ARP).
//! The most specific matching entry wins; of two entries for the same
//! prefix, the later one is kept (with a warning).
//!
//! Under hot swap, a successor with the same configuration takes its
//! predecessor's table, including entries changed through handlers.
//!
//! ## Keywords
//! None.
//!
//! ## Handlers
//! - `table` (read): one `PREFIX ETH` line per entry, most specific first.
//! - `lookup` (read with parameter `IP`): the Ethernet address answered
//!   for IP, or empty.
//! - `add` (write): adds entries, in the configuration argument syntax
//!   (AddressInfo names included); an entry for a prefix already present
//!   replaces it.
//! - `remove` (write): `IP/MASK` removes that entry.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/0806 20/0001, -);
//! c[0] -> ARPResponder(18.26.4.24 18.26.7.0/24 00:00:C0:AE:67:EF) -> ToDevice(eth0);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{split_args, split_words, Ipv4Prefix};
use rclick_core::ctx::ElementView;
use rclick_core::element::Filter;
use rclick_core::packet::anno::VLAN_TCI;
use rclick_core::router::AddressEntry;
use rclick_core::wire::arp::{ARPHRD_ETHER, ARPOP_REPLY, ARPOP_REQUEST, ARP_LEN};
use rclick_core::wire::ether::{ETHERTYPE_ARP, ETHERTYPE_IP, HEADER_LEN};
use rclick_core::wire::{ArpPacket, ArpRepr, EtherAddr, EtherFrame, EthernetRepr};
use rclick_core::{ConfigResult, Ctx, Element, Handler, InitCtx, Packet};

use super::address::{parse_ether_arg, parse_ipv4_addr_or_prefix_arg, parse_ipv4_arg, scopes};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    dst: u32,
    mask: u32,
    eth: EtherAddr,
}

impl Entry {
    fn prefix(&self) -> Ipv4Prefix {
        Ipv4Prefix {
            addr: Ipv4Addr::from(self.dst),
            mask: Ipv4Addr::from(self.mask),
        }
    }
}

#[derive(Default)]
pub struct ARPResponder {
    entries: Vec<Entry>,
    config: String,
    /// Configured once already: a later `configure` is a write to
    /// `config`.
    configured: bool,
}

/// Word parsers: during configuration AddressInfo names are visible; in
/// handlers only literal addresses.
type IpParse<'a> = &'a dyn Fn(&str) -> Result<Ipv4Prefix, String>;
type EthParse<'a> = &'a dyn Fn(&str) -> Result<EtherAddr, String>;

fn parse_entry(arg: &str, ip: IpParse, eth: EthParse, out: &mut Vec<Entry>) -> Result<(), String> {
    let words = split_words(arg);
    let mut prefixes = Vec::new();
    let mut ena: Option<EtherAddr> = None;
    for w in &words {
        if let Ok(p) = ip(w) {
            prefixes.push(p);
        } else if let Ok(e) = eth(w) {
            if ena.is_some() {
                return Err("more than one ETH".into());
            }
            ena = Some(e);
        } else {
            return Err("expected IP/MASK ETH".into());
        }
    }
    // A word that is both an IP address and an Ethernet address (an
    // AddressInfo name) supplies the Ethernet address if none was given.
    if ena.is_none() {
        ena = words.iter().find_map(|w| eth(w).ok());
    }
    if prefixes.is_empty() {
        return Err("missing IP/MASK".into());
    }
    let Some(ena) = ena else {
        return Err("missing ETH".into());
    };
    for p in prefixes {
        let mask = u32::from(p.mask);
        out.push(Entry {
            dst: u32::from(p.addr) & mask,
            mask,
            eth: ena,
        });
    }
    Ok(())
}

/// Most specific first; for equal prefixes the later entry wins. Returns
/// the duplicated prefixes.
fn normalize(v: &mut Vec<Entry>) -> Vec<Ipv4Prefix> {
    let mut idx: Vec<(usize, Entry)> = v.iter().copied().enumerate().collect();
    // Longer masks first; among equal prefixes, later first.
    idx.sort_by(|(ia, a), (ib, b)| {
        b.mask
            .count_ones()
            .cmp(&a.mask.count_ones())
            .then(a.mask.cmp(&b.mask))
            .then(a.dst.cmp(&b.dst))
            .then(ib.cmp(ia))
    });
    let mut dups = Vec::new();
    let mut out: Vec<Entry> = Vec::with_capacity(idx.len());
    for (_, e) in idx {
        match out.last() {
            Some(l) if l.dst == e.dst && l.mask == e.mask => dups.push(e.prefix()),
            _ => out.push(e),
        }
    }
    *v = out;
    dups
}

impl ARPResponder {
    fn lookup(&self, ip: Ipv4Addr) -> Option<EtherAddr> {
        let a = u32::from(ip);
        self.entries
            .iter()
            .find(|e| a & e.mask == e.dst)
            .map(|e| e.eth)
    }

    fn literal_ip(s: &str) -> Result<Ipv4Prefix, String> {
        rclick_core::conf::parse_ipv4_addr_or_prefix(s)
    }
}

/// The AddressInfo entry `name` as seen from the element (compound
/// scopes first), as handlers see it after configuration.
fn view_entry(name: &str, view: &ElementView) -> Option<AddressEntry> {
    scopes(view.element_name()).find_map(|p| view.address_entry(&format!("{p}{name}")))
}

/// An IP address or prefix in a handler's argument, AddressInfo names
/// included (Click's handlers see them too): `name` is the name's
/// address (/32), `name:ipnet` its prefix.
fn view_ip(s: &str, view: &ElementView) -> Result<Ipv4Prefix, String> {
    if let Ok(p) = rclick_core::conf::parse_ipv4_addr_or_prefix(s) {
        return Ok(p);
    }
    let (name, suffix) = match s.rsplit_once(':') {
        Some((n, x)) => (n, Some(x)),
        None => (s, None),
    };
    let e = view_entry(name, view);
    match suffix {
        None | Some("ip") | Some("ip4") => e
            .and_then(|e| e.ipv4)
            .map(|a| Ipv4Prefix::new(a, 32))
            .or_else(|| view_entry(name, view).and_then(|e| e.ipv4_prefix)),
        Some("ipnet") | Some("ip4net") => e.and_then(|e| e.ipv4_prefix),
        _ => None,
    }
    .ok_or_else(|| "expected IP address or prefix".to_string())
}

/// An Ethernet address in a handler's argument, AddressInfo names included.
fn view_eth(s: &str, view: &ElementView) -> Result<EtherAddr, String> {
    if let Ok(e) = rclick_core::conf::parse_ether(s) {
        return Ok(e);
    }
    let name = match s.rsplit_once(':') {
        Some((n, "eth")) | Some((n, "ethernet")) => n,
        _ => s,
    };
    view_entry(name, view)
        .and_then(|e| e.ether)
        .ok_or_else(|| "expected Ethernet address".to_string())
}

impl ARPResponder {}

impl ARPResponder {
    /// The reply to `p` if it is an ARP request for an address we answer.
    fn reply(&self, p: &Packet) -> Option<Packet> {
        let eh = EtherFrame::new_checked(p.data()).ok()?;
        let a = ArpPacket::new_checked(eh.payload()).ok()?;
        if eh.ethertype() != ETHERTYPE_ARP
            || a.hardware() != ARPHRD_ETHER
            || a.protocol() != ETHERTYPE_IP
            || a.op() != ARPOP_REQUEST
        {
            return None;
        }
        let tpa = a.tpa();
        let ena = self.lookup(tpa)?;
        let ether = EthernetRepr {
            src: ena,
            dst: a.sha(),
            ethertype: ETHERTYPE_ARP,
        };
        let arp = ArpRepr {
            op: ARPOP_REPLY,
            sha: ena,
            spa: tpa,
            tha: a.sha(),
            tpa: a.spa(),
        };
        let mut b = [0u8; HEADER_LEN + ARP_LEN];
        let (eb, ab) = b.split_at_mut(HEADER_LEN);
        ether.emit(&mut EtherFrame::new_unchecked(eb));
        arp.emit(&mut ArpPacket::new_unchecked(ab));
        let mut q = Packet::from_slice(&b);
        q.set_anno_bytes(VLAN_TCI, &p.anno_bytes::<2>(VLAN_TCI));
        Some(q)
    }

    fn read_table(&self, _ctx: &Ctx) -> String {
        self.entries
            .iter()
            .map(|e| format!("{} {}\n", e.prefix(), e.eth))
            .collect()
    }

    fn read_lookup(&self, param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        let ip = rclick_core::conf::parse_ipv4(param.unwrap_or("").trim())
            .map_err(|_| "expected IP address".to_string())?;
        Ok(self.lookup(ip).map(|e| e.to_string()).unwrap_or_default())
    }

    fn write_add(&mut self, value: &str, ctx: &mut Ctx) -> Result<(), String> {
        let view: &ElementView = ctx;
        let mut v = self.entries.clone();
        // An entry for a prefix already present replaces it, silently.
        parse_entry(value, &|w| view_ip(w, view), &|w| view_eth(w, view), &mut v)?;
        normalize(&mut v);
        self.entries = v;
        Ok(())
    }

    fn write_remove(&mut self, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        let p = Self::literal_ip(value.trim()).map_err(|_| "expected IP/MASK".to_string())?;
        let mask = u32::from(p.mask);
        let dst = u32::from(p.addr) & mask;
        match self
            .entries
            .iter()
            .position(|e| e.dst == dst && e.mask == mask)
        {
            Some(i) => {
                self.entries.remove(i);
                Ok(())
            }
            None => Err(format!(
                "{} not found",
                Ipv4Prefix {
                    addr: Ipv4Addr::from(dst),
                    mask: p.mask
                }
            )),
        }
    }
}

impl Filter for ARPResponder {
    fn filter(&mut self, p: Packet, _ctx: &mut Ctx) -> Result<Packet, Packet> {
        self.reply(&p).ok_or(p)
    }
}

const HANDLERS: &[Handler<ARPResponder>] = &[
    Handler::read("table", ARPResponder::read_table),
    Handler::read_param("lookup", ARPResponder::read_lookup),
    Handler::write("add", ARPResponder::write_add),
    Handler::write("remove", ARPResponder::write_remove),
];

rclick_core::element_class!(ARPResponder);

impl Element for ARPResponder {
    rclick_core::filter_ports!();

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let ictx: &InitCtx = ctx;
        // As in Click, a bare AddressInfo name stands for its address (a /32
        // entry); `name:ipnet` gives its prefix.
        let ip = |s: &str| {
            if !s.contains(['/', ':']) {
                if let Ok(a) = parse_ipv4_arg(s, ictx) {
                    return Ok(rclick_core::conf::Ipv4Prefix::new(a, 32));
                }
            }
            parse_ipv4_addr_or_prefix_arg(s, ictx)
        };
        let eth = |s: &str| parse_ether_arg(s, ictx);
        let mut v = Vec::new();
        let mut errors = Vec::new();
        for (i, arg) in split_args(conf).iter().enumerate() {
            if let Err(e) = parse_entry(arg, &ip, &eth, &mut v) {
                errors.push(format!("argument {i}: {e}"));
            }
        }
        if !errors.is_empty() {
            return Err(errors.into());
        }
        let dups = normalize(&mut v);
        for d in dups {
            ctx.warning(format_args!("multiple entries for {d}"));
        }
        self.entries = v;
        self.config = conf.to_string();
        self.configured = true;
        Ok(())
    }

    fn can_live_reconfigure(&self) -> bool {
        true
    }

    fn take_state(&mut self, old: &mut dyn Element, _ctx: &mut InitCtx) -> bool {
        let Some(old) = old.as_any_mut().downcast_mut::<ARPResponder>() else {
            return false;
        };
        if old.config != self.config {
            return false;
        }
        self.entries = std::mem::take(&mut old.entries);
        true
    }

    rclick_core::handlers!(HANDLERS);
    rclick_core::element_kind!(filter);
}
