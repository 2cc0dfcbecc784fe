//! # PortInfo
//!
//! Gives names to TCP and UDP ports, for use in other elements' arguments.
//!
//! ## Synopsis
//! `PortInfo(NAME PORT[/PROTOCOL] [NAME...], ...)`
//!
//! ## Ports and processing
//! No ports.
//!
//! ## Description
//! Each argument names a port number. PROTOCOL is `tcp` or `udp`; without
//! it the name applies to both. Further words after the port are more names
//! for the same port (`PortInfo(http 80/tcp www)`), and a word starting with
//! `#` starts a comment that runs to the end of the argument. Elements taking port arguments (such as
//! UDPIPEncap) accept the names; they are looked up before the built-in
//! service names (`www`, `dns`, ...). PortInfo is configured before other
//! elements. Names given inside a compound element are local to it, as with
//! AddressInfo.
//!
//! ## Keywords
//! None: every argument is `NAME PORT[/PROTOCOL]`.
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! PortInfo(myservice 4000/udp);
//! ... -> UDPIPEncap(1.0.0.1, myservice, 2.0.0.2, myservice) -> ...;
//! ```

use rclick_core::conf::parse_u16;
use rclick_core::wire::ipv4::{PROTO_TCP, PROTO_UDP};
use rclick_core::{ConfigResult, Element, InitCtx};

use super::address::{compound_prefix, declarations, scopes};

/// (scoped name, port, protocol or 0 for both)
#[derive(Default)]
pub struct PortInfo {
    entries: Vec<(String, u16, u8)>,
}

impl PortInfo {
    fn get(&self, name: &str, proto: u8) -> Option<u16> {
        self.entries
            .iter()
            .find(|(n, _, p)| n == name && (*p == 0 || *p == proto))
            .map(|&(_, port, _)| port)
    }
}

/// Looks `name` up in every PortInfo of the router, trying the current
/// element's compound prefixes from the innermost out.
pub fn lookup(name: &str, proto: u8, ctx: &InitCtx) -> Option<u16> {
    let mut infos = Vec::new();
    let mut i = 0;
    while let Some(class) = ctx.element_class_of(i) {
        if class == "PortInfo" {
            infos.push(i);
        }
        i += 1;
    }
    if infos.is_empty() {
        return None;
    }
    for prefix in scopes(ctx.element_name()) {
        let full = format!("{prefix}{name}");
        for &idx in &infos {
            let found = ctx.with_element(idx, |e| {
                e.as_any()
                    .downcast_ref::<PortInfo>()
                    .and_then(|pi| pi.get(&full, proto))
            });
            if let Some(Some(port)) = found {
                return Some(port);
            }
        }
    }
    None
}

rclick_core::element_class!(PortInfo);

impl Element for PortInfo {
    fn configure_phase(&self) -> i32 {
        rclick_core::element::configure_phase::FIRST
    }

    fn port_count(&self) -> &'static str {
        "0/0"
    }

    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let prefix = compound_prefix(ctx.element_name());
        declarations(conf, "NAME PORT[/PROTOCOL]", true, |words, errors| {
            let (port_s, proto_s) = match words[1].split_once('/') {
                Some((a, b)) => (a, Some(b.to_ascii_lowercase())),
                None => (words[1].as_str(), None),
            };
            let proto = match proto_s.as_deref() {
                None => 0,
                Some("tcp") => PROTO_TCP,
                Some("udp") => PROTO_UDP,
                Some(p) => {
                    errors.push(format!("\"{}\": bad protocol '{p}'", words[0]));
                    return;
                }
            };
            match parse_u16(port_s) {
                Ok(port) => {
                    // Words after the port are more names for it.
                    for name in std::iter::once(&words[0]).chain(&words[2..]) {
                        self.entries.push((format!("{prefix}{name}"), port, proto));
                    }
                }
                Err(_) => errors.push(format!("\"{}\": bad port '{port_s}'", words[0])),
            }
        })
    }
}
