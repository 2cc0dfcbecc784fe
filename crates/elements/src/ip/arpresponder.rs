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
//! - `add` (write): adds entries, in the configuration argument syntax.
//! - `remove` (write): `IP/MASK` removes that entry.
//!
//! ## Example
//! ```click
//! c :: Classifier(12/0806 20/0001, -);
//! c[0] -> ARPResponder(18.26.4.24 18.26.7.0/24 00:00:C0:AE:67:EF) -> ToDevice(eth0);
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::{split_args, split_words, Ipv4Prefix};
use rclick_core::element::{processing, HandlerSpec};
use rclick_core::wire::arp::{ArpPacket, ARPOP_REPLY, ARPOP_REQUEST, ARP_LEN};
use rclick_core::wire::ether::{EtherAddr, EtherFrame, ETHERTYPE_ARP, ETHERTYPE_IP, HEADER_LEN};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::{parse_ether_arg, parse_ipv4_addr_or_prefix_arg, parse_ipv4_arg};

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

    fn literal_eth(s: &str) -> Result<EtherAddr, String> {
        rclick_core::conf::parse_ether(s)
    }
}

impl SimpleAction for ARPResponder {
    fn action(&mut self, p: Packet, ctx: &mut Ctx) -> Option<Packet> {
        let d = p.data();
        let reply = (|| {
            let eh = EtherFrame::new_checked(d).ok()?;
            let a = ArpPacket::new_checked(&d[HEADER_LEN..]).ok()?;
            if eh.ethertype() != ETHERTYPE_ARP
                || a.hardware() != 1
                || a.protocol() != ETHERTYPE_IP
                || a.op() != ARPOP_REQUEST
            {
                return None;
            }
            let tpa = a.tpa();
            let ena = self.lookup(tpa)?;
            let mut b = [0u8; HEADER_LEN + ARP_LEN];
            let (eb, ab) = b.split_at_mut(HEADER_LEN);
            let mut e = EtherFrame::new_checked(&mut eb[..]).ok()?;
            e.set_dst(a.sha());
            e.set_src(ena);
            e.set_ethertype(ETHERTYPE_ARP);
            let mut r = ArpPacket::new_checked(&mut ab[..]).ok()?;
            r.fill_header(ARPOP_REPLY);
            r.set_sha(ena);
            r.set_spa(tpa);
            r.set_tha(a.sha());
            r.set_tpa(a.spa());
            let mut q = Packet::from_slice(&b);
            let vlan = p.anno_bytes::<2>(rclick_core::packet::anno::VLAN_TCI);
            q.set_anno_bytes(rclick_core::packet::anno::VLAN_TCI, &vlan);
            Some(q)
        })();
        match reply {
            Some(q) => Some(q),
            None => {
                ctx.emit(1, p);
                None
            }
        }
    }
}

rclick_core::element_class!(ARPResponder);

impl Element for ARPResponder {
    fn port_count(&self) -> &'static str {
        "1/1-2"
    }

    fn processing(&self) -> &'static str {
        processing::AGNOSTIC_PUSH_ERROR
    }

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
        for d in normalize(&mut v) {
            ctx.chatter(&format!(
                "{}: warning: multiple entries for {d}",
                ctx.element_name()
            ));
        }
        self.entries = v;
        self.config = conf.to_string();
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

    fn handlers(&self) -> Vec<HandlerSpec> {
        vec![
            HandlerSpec::read("table"),
            HandlerSpec::read_param("lookup"),
            HandlerSpec::write("add"),
            HandlerSpec::write("remove"),
        ]
    }

    fn read_handler(&self, name: &str, param: Option<&str>, _ctx: &Ctx) -> Result<String, String> {
        match name {
            "table" => Ok(self
                .entries
                .iter()
                .map(|e| format!("{} {}\n", e.prefix(), e.eth))
                .collect()),
            "lookup" => {
                let ip = rclick_core::conf::parse_ipv4(param.unwrap_or("").trim())
                    .map_err(|_| "expected IP address".to_string())?;
                Ok(self.lookup(ip).map(|e| e.to_string()).unwrap_or_default())
            }
            _ => Err(format!("no '{name}' handler")),
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _ctx: &mut Ctx) -> Result<(), String> {
        match name {
            "add" => {
                let mut v = self.entries.clone();
                parse_entry(value, &Self::literal_ip, &Self::literal_eth, &mut v)?;
                normalize(&mut v);
                self.entries = v;
                Ok(())
            }
            "remove" => {
                let p =
                    Self::literal_ip(value.trim()).map_err(|_| "expected IP/MASK".to_string())?;
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
            _ => Err(format!("no '{name}' handler")),
        }
    }

    rclick_core::element_kind!(action);
}
