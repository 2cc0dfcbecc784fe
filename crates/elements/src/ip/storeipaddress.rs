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
use rclick_core::wire::ipv4::{PROTO_TCP, PROTO_UDP};
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

fn word(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Writes `new` at `field_off` (12 or 16) of the IP header at `ip_off` and
/// updates the IP and transport checksums incrementally.
fn store_in_header(data: &mut [u8], ip_off: usize, field_off: usize, new: [u8; 4]) {
    let Some(ip) = data.get_mut(ip_off..) else {
        return;
    };
    // Like Click, the version field is not checked: the address and the
    // header checksum are updated whatever the header says.
    if ip.len() < 20 {
        return;
    }
    let hlen = ((ip[0] & 0x0f) as usize) * 4;
    let at = field_off;
    let old = [word(ip, at), word(ip, at + 2)];
    ip[at..at + 4].copy_from_slice(&new);
    let neww = [word(ip, at), word(ip, at + 2)];
    let mut sum = word(ip, 10);
    for i in 0..2 {
        sum = update16(sum, old[i], neww[i]);
    }
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let first_frag = word(ip, 6) & 0x1fff == 0;
    if hlen < 20 || !first_frag {
        return;
    }
    let proto = ip[9];
    let Some(t) = ip.get_mut(hlen..) else {
        return;
    };
    let csum_at = match proto {
        PROTO_TCP if t.len() >= 20 => 16,
        PROTO_UDP if t.len() >= 8 && word(t, 6) != 0 => 6,
        _ => return,
    };
    let mut c = word(t, csum_at);
    for i in 0..2 {
        c = update16(c, old[i], neww[i]);
    }
    if proto == PROTO_UDP && c == 0 {
        c = 0xffff;
    }
    t[csum_at..csum_at + 2].copy_from_slice(&c.to_be_bytes());
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
                let f = if self.field == IpField::Src { 12 } else { 16 };
                if let Some(off) = net_off(&p) {
                    store_in_header(p.writable(), off, f, a.octets());
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
