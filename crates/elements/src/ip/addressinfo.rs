//! # AddressInfo
//!
//! Gives names to addresses, for use in other elements' arguments.
//!
//! ## Synopsis
//! `AddressInfo(NAME ADDRESS [ADDRESS...], ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each argument gives a NAME and one or more addresses: IPv4 addresses,
//! IPv4 prefixes (`18.26.4.24/24`), IPv6 addresses or prefixes, and
//! Ethernet addresses. Other elements may then use the name wherever they
//! take an address: `NAME` or `NAME:ip` for the IPv4 address, `NAME:ipnet`
//! for the IPv4 prefix, `NAME:bcast` for the prefix's broadcast address,
//! `NAME:gw` for its first host address, `NAME:eth` for the Ethernet
//! address. A prefix with host bits (`18.26.4.24/24`) also defines the
//! address (18.26.4.24). AddressInfo is configured before every other
//! element, so its position in the configuration does not matter. Names
//! given inside a compound element are local to that compound (and the
//! compounds inside it); a name defined twice merges the two definitions.
//!
//! ## Keywords
//! None: every argument is `NAME ADDRESS...`.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! AddressInfo(eth0 18.26.4.24/24 00:0a:95:9d:68:16);
//! ... -> CheckIPHeader(INTERFACES eth0) -> ... -> EtherEncap(0x0800, eth0, 00:0a:95:9d:68:17);
//! ```

use rclick_core::conf::{
    parse_ether, parse_ipv4, parse_ipv4_prefix, parse_ipv6, parse_ipv6_prefix,
};
use rclick_core::router::AddressEntry;
use rclick_core::{ConfigResult, Element, InitCtx};

use super::address::{compound_prefix, declarations};

#[derive(Default)]
pub struct AddressInfo;

fn add_address(e: &mut AddressEntry, name: &str, a: &str) -> Result<(), String> {
    if let Ok(ip) = parse_ipv4(a) {
        e.ipv4 = Some(ip);
    } else if let Ok(p) = parse_ipv4_prefix(a) {
        p.prefix_len()
            .ok_or_else(|| format!("\"{name}\" '{a}' is not a contiguous prefix"))?;
        if e.ipv4.is_none() && p.addr != p.network() {
            e.ipv4 = Some(p.addr);
        }
        e.ipv4_prefix = Some(p);
    } else if let Ok(ip6) = parse_ipv6(a) {
        e.ipv6 = Some(ip6);
    } else if let Ok(p6) = parse_ipv6_prefix(a) {
        p6.prefix_len()
            .ok_or_else(|| format!("\"{name}\" '{a}' is not a contiguous prefix"))?;
        if e.ipv6.is_none() {
            e.ipv6 = Some(p6.addr);
        }
        e.ipv6_prefix = Some(p6);
    } else if let Ok(eth) = parse_ether(a) {
        e.ether = Some(eth);
    } else {
        return Err(format!("\"{name}\" '{a}' is not a recognizable address"));
    }
    Ok(())
}

rclick_core::element_class!(AddressInfo);

impl Element for AddressInfo {
    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::FIRST
    }

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let prefix = compound_prefix(ctx.element_name()).to_string();
        declarations(conf, "NAME [ADDRS]", false, |words, errors| {
            let name = format!("{prefix}{}", words[0]);
            let mut entry = ctx.address_entry(&name).unwrap_or_default();
            for a in &words[1..] {
                if let Err(e) = add_address(&mut entry, &words[0], a) {
                    errors.push(e);
                }
            }
            ctx.set_address_entry(&name, entry);
        })
    }
}
