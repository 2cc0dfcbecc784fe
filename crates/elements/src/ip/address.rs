//! Address, protocol and port arguments that understand AddressInfo and
//! PortInfo names, for every IPv4 element's configuration.
//!
//! Click resolves names through its NameInfo databases; rclick keeps
//! AddressInfo names in the router's address table (see
//! `InitCtx::address_entry`) and finds PortInfo elements by class. Names
//! declared inside a compound element are visible to elements of that
//! compound (and its sub-compounds) first, then outward, as in Click.
//!
//! Accepted forms:
//! - IPv4 address: dotted quad, or `name`, `name:ip`, `name:ip4` (the
//!   address), `name:bcast` (broadcast address of the name's prefix),
//!   `name:gw` (first host address of the name's prefix).
//! - IPv4 prefix: `a.b.c.d/len`, `a.b.c.d/mask`, or `name`, `name:net`,
//!   `name:ipnet`, `name:ip4net`.
//! - Ethernet address: `00:01:02:03:04:05` (or dashes), or `name`,
//!   `name:eth`, `name:ether`, `name:ethernet`.
//!
//! A name no AddressInfo declares may name a network device of the host,
//! as in Click: `eth0` (or `eth0:ip`) is the device's first IPv4 address,
//! `eth0:net` its address and netmask, `eth0:eth` its Ethernet address and
//! `eth0:gw` the gateway of its default route (or else the first host
//! address of its network). See [`netdevice`].
//! - IP protocol: a number 0-255 or `tcp`, `udp`, `icmp`, ... (Click's
//!   static protocol names).
//! - TCP/UDP port: a number 0-65535, a PortInfo name, or a well-known
//!   service name (`www`, `dns`, `ssh`, ...).

use std::net::Ipv4Addr;

use rclick_core::conf::{
    parse_ether, parse_ipv4, parse_ipv4_addr_or_prefix, parse_ipv4_prefix, split_args, split_words,
    Ipv4Prefix,
};
use rclick_core::router::AddressEntry;
use rclick_core::wire::ipv4::{PROTO_ICMP, PROTO_IGMP, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::EtherAddr;
use rclick_core::{ConfigResult, Errors, InitCtx};

use super::netdevice;

/// Splits `name:suffix` into the name and the lower-cased suffix.
fn split_suffix(s: &str) -> (&str, Option<String>) {
    match s.rfind(':') {
        Some(i) if i > 0 => (&s[..i], Some(s[i + 1..].to_ascii_lowercase())),
        _ => (s, None),
    }
}

/// The compound prefix of element `name`, under which the names it
/// declares live: `a/b/` for `a/b/c`, empty at the top level.
pub fn compound_prefix(name: &str) -> &str {
    match name.rfind('/') {
        Some(i) => &name[..=i],
        None => "",
    }
}

/// The prefixes a name used by element `element` is looked up under, as in
/// Click: its own compound's, then each enclosing one's, then the top
/// level's (empty).
pub fn scopes(element: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(compound_prefix(element)), |p| {
        // "a/b/" -> "a/"
        (!p.is_empty()).then(|| compound_prefix(&p[..p.len() - 1]))
    })
}

/// Reads the declarations of an information element (AddressInfo,
/// PortInfo): `each` gets the words of every argument, a name and at least
/// one value, in order. Empty arguments are skipped and a lone name is an
/// error; with `comments`, a word starting with `#` ends its argument.
pub fn declarations(
    conf: &str,
    usage: &str,
    comments: bool,
    mut each: impl FnMut(&[String], &mut Errors),
) -> ConfigResult {
    let mut errors = Errors::new();
    for arg in split_args(conf) {
        let mut words = split_words(&arg);
        if comments {
            if let Some(c) = words.iter().position(|w| w.starts_with('#')) {
                words.truncate(c);
            }
        }
        match words.len() {
            0 => {}
            1 => errors.push(format!("expected '{usage}', got '{arg}'")),
            _ => each(&words, &mut errors),
        }
    }
    errors.into_result()
}

/// Looks up an AddressInfo name as seen from the current element (see
/// [`scopes`]). `want` says which kind of address the entry must have.
pub fn lookup_entry(
    name: &str,
    ctx: &InitCtx,
    want: impl Fn(&AddressEntry) -> bool,
) -> Option<AddressEntry> {
    if name.is_empty() {
        return None;
    }
    scopes(ctx.element_name())
        .find_map(|prefix| ctx.address_entry(&format!("{prefix}{name}")).filter(&want))
}

/// Parses an IPv4 address argument: a dotted quad or an AddressInfo name
/// (`name`, `name:ip`, `name:ip4`, `name:bcast`, `name:gw`).
pub fn parse_ipv4_arg(s: &str, ctx: &InitCtx) -> Result<Ipv4Addr, String> {
    if let Ok(a) = parse_ipv4(s) {
        return Ok(a);
    }
    let (name, suffix) = split_suffix(s);
    let named_ip = |n: &str| {
        lookup_entry(n, ctx, |e| e.ipv4.is_some())
            .and_then(|e| e.ipv4)
            .or_else(|| netdevice::device_ipv4(n))
    };
    let found = match suffix.as_deref() {
        None => named_ip(s),
        Some("ip") | Some("ip4") => named_ip(name),
        Some("bcast") => {
            named_prefix(name, ctx).map(|p| Ipv4Addr::from(u32::from(p.addr) | !u32::from(p.mask)))
        }
        Some("gw") => lookup_entry(name, ctx, |e| e.ipv4_prefix.is_some())
            .and_then(|e| e.ipv4_prefix)
            .map(|p| Ipv4Addr::from(u32::from(p.network()) | 1))
            .or_else(|| netdevice::device_gateway(name)),
        _ => None,
    };
    found.ok_or_else(|| "expected IP address".to_string())
}

/// Parses a space-separated list of IPv4 addresses or names.
pub fn parse_ipv4_list_arg(s: &str, ctx: &InitCtx) -> Result<Vec<Ipv4Addr>, String> {
    split_words(s)
        .iter()
        .map(|w| parse_ipv4_arg(w, ctx).map_err(|_| "expected list of IP addresses".to_string()))
        .collect()
}

/// Parses an IPv4 prefix argument (`a.b.c.d/len`, `a.b.c.d/mask`, or an
/// AddressInfo name with a prefix: `name`, `name:ipnet`, `name:ip4net`).
pub fn parse_ipv4_prefix_arg(s: &str, ctx: &InitCtx) -> Result<Ipv4Prefix, String> {
    if let Ok(p) = parse_ipv4_prefix(s) {
        return Ok(p);
    }
    let (name, suffix) = split_suffix(s);
    let found = match suffix.as_deref() {
        None => named_prefix(s, ctx),
        Some("net") | Some("ipnet") | Some("ip4net") => named_prefix(name, ctx),
        _ => None,
    };
    found.ok_or_else(|| "expected IP prefix".to_string())
}

/// The IPv4 prefix an AddressInfo name declares, or else the address and
/// netmask of the network device so named.
fn named_prefix(name: &str, ctx: &InitCtx) -> Option<Ipv4Prefix> {
    lookup_entry(name, ctx, |e| e.ipv4_prefix.is_some())
        .and_then(|e| e.ipv4_prefix)
        .or_else(|| netdevice::device_ipv4_prefix(name))
}

/// Like [`parse_ipv4_prefix_arg`], but a bare address (or a name with only
/// an address) means a /32 prefix.
pub fn parse_ipv4_addr_or_prefix_arg(s: &str, ctx: &InitCtx) -> Result<Ipv4Prefix, String> {
    if let Ok(p) = parse_ipv4_addr_or_prefix(s) {
        return Ok(p);
    }
    if let Ok(p) = parse_ipv4_prefix_arg(s, ctx) {
        return Ok(p);
    }
    parse_ipv4_arg(s, ctx)
        .map(|a| Ipv4Prefix::new(a, 32))
        .map_err(|_| "expected IP address or prefix".to_string())
}

/// Parses an Ethernet address argument: colon or dash notation, or an
/// AddressInfo name (`name`, `name:eth`, `name:ethernet`).
pub fn parse_ether_arg(s: &str, ctx: &InitCtx) -> Result<EtherAddr, String> {
    if let Ok(a) = parse_ether(s) {
        return Ok(a);
    }
    let (name, suffix) = split_suffix(s);
    let name = match suffix.as_deref() {
        Some("eth") | Some("ether") | Some("ethernet") => name,
        _ => s,
    };
    lookup_entry(name, ctx, |e| e.ether.is_some())
        .and_then(|e| e.ether)
        .or_else(|| netdevice::device_ether(name))
        .ok_or_else(|| "expected Ethernet address".to_string())
}

/// Click's static IP protocol names (ipnameinfo.cc).
const IP_PROTOS: &[(&str, u8)] = &[
    ("dccp", 33),
    ("gre", 47),
    ("icmp", PROTO_ICMP),
    ("igmp", PROTO_IGMP),
    ("ipip", 4),
    ("sctp", 132),
    ("tcp", PROTO_TCP),
    ("udp", PROTO_UDP),
];

/// The value of a name in one of Click's static name tables; names are
/// case-insensitive.
/// The value written to an IP address data handler (Click's
/// `add_data_handlers` on an IPAddress): an address or a name the
/// element's AddressInfo knows.
pub fn ipv4_handler_value(s: &str, ctx: &rclick_core::Ctx) -> Result<Ipv4Addr, String> {
    parse_ipv4_arg(s.trim(), &ctx.init_ctx()).map_err(|_| "expected IP address".to_string())
}

/// The value written to an Ethernet address data handler, names included.
pub fn ether_handler_value(s: &str, ctx: &rclick_core::Ctx) -> Result<EtherAddr, String> {
    parse_ether_arg(s.trim(), &ctx.init_ctx()).map_err(|_| "expected Ethernet address".to_string())
}

fn named<T: Copy>(table: &[(&str, T)], s: &str) -> Option<T> {
    let lower = s.to_ascii_lowercase();
    table.iter().find(|(n, _)| *n == lower).map(|&(_, v)| v)
}

/// Parses an IP protocol: a number 0-255 or a protocol name.
pub fn parse_ip_proto(s: &str) -> Result<u8, String> {
    if let Ok(n) = rclick_core::conf::parse_u32(s) {
        return u8::try_from(n).map_err(|_| "bad IP protocol".to_string());
    }
    named(IP_PROTOS, s).ok_or_else(|| "expected IP protocol".to_string())
}

/// The name of an IP protocol, if Click knows one.
pub fn ip_proto_name(p: u8) -> Option<&'static str> {
    IP_PROTOS.iter().find(|&&(_, v)| v == p).map(|&(n, _)| n)
}

/// Click's static well-known TCP/UDP port names (ipnameinfo.cc).
const KNOWN_PORTS: &[(&str, u16)] = &[
    ("auth", 113),
    ("bootpc", 68),
    ("bootps", 67),
    ("chargen", 19),
    ("daytime", 13),
    ("discard", 9),
    ("dns", 53),
    ("domain", 53),
    ("echo", 7),
    ("finger", 79),
    ("ftp", 21),
    ("ftp-data", 20),
    ("https", 443),
    ("imap3", 220),
    ("imaps", 993),
    ("irc", 194),
    ("netbios-dgm", 138),
    ("netbios-ns", 137),
    ("netbios-ssn", 139),
    ("nntp", 119),
    ("ntp", 123),
    ("pop3", 110),
    ("pop3s", 995),
    ("pptp", 1723),
    ("rip", 520),
    ("route", 520),
    ("smtp", 25),
    ("snmp", 161),
    ("snmp-trap", 162),
    ("ssh", 22),
    ("sunrpc", 111),
    ("telnet", 23),
    ("tftp", 69),
    ("www", 80),
];

/// Parses a TCP or UDP port (`proto` 6 or 17): a number, a PortInfo name
/// visible from the current element, or a well-known service name.
pub fn parse_port_arg(s: &str, proto: u8, ctx: &InitCtx) -> Result<u16, String> {
    if rclick_core::conf::parse_u32(s).is_err() {
        if let Some(p) = crate::ip::portinfo::lookup(s, proto, ctx) {
            return Ok(p);
        }
    }
    parse_known_port(s)
}

/// Parses a port without a PortInfo context (well-known names only).
pub fn parse_known_port(s: &str) -> Result<u16, String> {
    if let Ok(n) = rclick_core::conf::parse_u32(s) {
        return u16::try_from(n).map_err(|_| "port out of range".to_string());
    }
    named(KNOWN_PORTS, s).ok_or_else(|| "expected port number".to_string())
}
