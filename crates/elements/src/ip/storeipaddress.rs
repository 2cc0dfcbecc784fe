//! # StoreIPAddress
//!
//! Stores an IP address (the destination annotation, or a fixed one) into
//! the packet.
//!
//! ## Synopsis
//! `StoreIPAddress(OFFSET)`
//!
//! `StoreIPAddress(ADDR, OFFSET)`
//!
//! ## Ports and processing
//! One agnostic input, one agnostic output.
//!
//! ## Description
//! With one argument, writes the destination IP address annotation into
//! the packet at byte OFFSET; packets whose annotation is 0.0.0.0 pass
//! unchanged. With two, writes ADDR. Packets too short pass unchanged.
//!
//! OFFSET may be `src` or `dst`: the address is then written into the IP
//! header's source or destination field (at the network header), and the IP
//! header checksum, and the TCP or UDP checksum of a first fragment, are
//! updated incrementally (RFC 1624). A zero UDP checksum (none) stays zero.
//!
//! ## Keywords
//! Positional only: ADDR (IP address, or AddressInfo name) and OFFSET
//! (unsigned, `src` or `dst`).
//!
//! ## Handlers
//! None beyond the standard ones.
//!
//! ## Example
//! ```click
//! ... -> StoreIPAddress(10.0.0.1, src) -> ...;
//! ```

use std::net::Ipv4Addr;

use rclick_core::conf::split_args;
use rclick_core::wire::checksum::update16;
use rclick_core::wire::ipv4::{IP_OFFMASK, MIN_HEADER_LEN, PROTO_TCP, PROTO_UDP};
use rclick_core::wire::{tcp, Ipv4Header, TcpHeader, UdpHeader};
use rclick_core::{ConfigResult, Ctx, Element, InitCtx, Packet, SimpleAction};

use super::address::parse_ipv4_arg;
use super::ipcommon::{net_off, parse_ip_field, IpField};

pub struct StoreIPAddress {
    addr: Option<Ipv4Addr>,
    field: IpField,
}

impl Default for StoreIPAddress {
    fn default() -> Self {
        StoreIPAddress {
            addr: None,
            field: IpField::Offset(0),
        }
    }
}

/// `check` after an address in the summed data changed from `old` to `new`
/// (RFC 1624, one 16-bit word at a time).
fn update_addr(check: u16, old: Ipv4Addr, new: Ipv4Addr) -> u16 {
    let (o, n) = (u32::from(old), u32::from(new));
    let c = update16(check, (o >> 16) as u16, (n >> 16) as u16);
    update16(c, o as u16, n as u16)
}

/// Writes `new` as the source (`src`) or destination of the IP header at
/// `ip_off` and updates the IP and transport checksums incrementally.
fn store_in_header(data: &mut [u8], ip_off: usize, src: bool, new: Ipv4Addr) {
    let Some(bytes) = data.get_mut(ip_off..) else {
        return;
    };
    // Like Click, the version field is not checked: the address and the
    // header checksum are updated whatever the header says, so the view
    // is an unchecked one over at least the fixed header.
    if bytes.len() < MIN_HEADER_LEN {
        return;
    }
    let mut ip = Ipv4Header::new_unchecked(bytes);
    let old = if src { ip.src() } else { ip.dst() };
    if src {
        ip.set_src(new);
    } else {
        ip.set_dst(new);
    }
    ip.set_checksum(update_addr(ip.checksum(), old, new));
    let hlen = ip.header_len();
    let first_frag = ip.frag_word() & IP_OFFMASK == 0;
    if hlen < MIN_HEADER_LEN || !first_frag {
        return;
    }
    let proto = ip.protocol();
    let Some(t) = ip.into_inner().get_mut(hlen..) else {
        return;
    };
    match proto {
        // Only the fixed header is needed: a bad data offset does not stop
        // the update.
        PROTO_TCP if t.len() >= tcp::MIN_HEADER_LEN => {
            let mut th = TcpHeader::new_unchecked(t);
            th.set_checksum(update_addr(th.checksum(), old, new));
        }
        PROTO_UDP => {
            let Ok(mut u) = UdpHeader::new_checked(t) else {
                return;
            };
            // Zero means no checksum; a computed zero is sent as all ones.
            if u.checksum() != 0 {
                let c = update_addr(u.checksum(), old, new);
                u.set_checksum(if c == 0 { 0xffff } else { c });
            }
        }
        _ => {}
    }
}

impl SimpleAction for StoreIPAddress {
    #[inline]
    fn action(&mut self, mut p: Packet, _ctx: &mut Ctx) -> Option<Packet> {
        let a = self.addr.unwrap_or_else(|| p.dst_ip_anno());
        match self.field {
            IpField::Offset(o) => {
                if (self.addr.is_some() || !a.is_unspecified()) && o + 4 <= p.len() {
                    p.writable()[o..o + 4].copy_from_slice(&a.octets());
                }
            }
            IpField::Src | IpField::Dst => {
                if let Some(off) = net_off(&p) {
                    store_in_header(p.writable(), off, self.field == IpField::Src, a);
                }
            }
        }
        Some(p)
    }
}

rclick_core::element_class!(StoreIPAddress);

impl Element for StoreIPAddress {
    fn configure(&mut self, conf: &str, ctx: &mut InitCtx) -> ConfigResult {
        let args: Vec<String> = split_args(conf);
        let (addr, off) = match args.as_slice() {
            [off] => (None, off),
            [addr, off] => (
                Some(
                    parse_ipv4_arg(addr, ctx)
                        .map_err(|_| "first argument should be IP address".to_string())?,
                ),
                off,
            ),
            _ => return Err("expected [IP address, ] byte offset".into()),
        };
        self.field = parse_ip_field(off)
            .map_err(|_| "last argument should be byte offset of IP address".to_string())?;
        self.addr = addr;
        Ok(())
    }

    rclick_core::element_kind!(action);
}
